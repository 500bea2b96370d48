#!/usr/bin/python
# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: st_preflight_info
short_description: What the kernel's tape path allows, before tuning a backup application
version_added: 0.1.0
description:
  - Reports whether the st driver has MTWEOFI (immediate file marks), read from the driver's version string
    (C(/sys/bus/scsi/drivers/st/version) 20100829 or later, so kernels that backported it are recognised), whether
    the st driver is loaded and its buffer parameters (fixed buffer size, max_sg_segs, direct I/O), and for
    every tape drive the largest transfer the HBA path carries (BLKSECTGET on the drive's sg node, the
    HBA driver's max_sectors), the host's sg_tablesize and the direct I/O limit.
  - For every tape drive, the link to its HBA from sysfs (SAS negotiated link rate of the ports between the HBA
    and the drive, or the FC HBA port speed) and what it carries in MB/s; null when it is not a SAS or FC link or
    the rate is unknown.
  - With O(block_size), says for each drive whether that block size fits and, when it does not, which
    setting limits it and what to change.
  - The host's memory and online CPUs, which the verdict's host capacity needs, from C(/proc/meminfo) and the
    kernel's online CPU count. The qualify role takes them from here, not from the C(hardware) fact subset, whose
    mounts and block devices a backup server may have by the hundred (and an unanswering NFS mount among them).
  - Reads sysfs and opens sg nodes read-only for one ioctl; writes nothing.
author:
  - tapeops.qualify contributors (@tapeops)
extends_documentation_fragment:
  - tapeops.qualify._attributes
  - tapeops.qualify._attributes.info_module
options:
  block_size:
    description: The tape block size, in bytes, the backup application should use.
    type: int
  devices:
    description: Non-rewinding nodes to report on; empty means every st drive.
    type: list
    elements: str
    default: []
'''

EXAMPLES = r'''
- name: Preflight for 1 MiB blocks
  tapeops.qualify.st_preflight_info:
    block_size: 1048576
  register: preflight
'''

RETURN = r'''
kernel:
  description: Running kernel release.
  returned: always
  type: str
  sample: 6.1.176
memory_total_mb:
  description: >-
    The host's memory in MiB (C(MemTotal) of C(/proc/meminfo), as Ansible's C(memtotal_mb) fact); null when it
    cannot be read.
  returned: always
  type: int
  sample: 15995
vcpus:
  description: The CPUs online (C(sysconf(_SC_NPROCESSORS_ONLN))); null when unknown.
  returned: always
  type: int
  sample: 8
mtweofi_supported:
  description: >-
    The st driver has MTWEOFI (needed for Data Protector OB2IMMEDFM and other immediate file marks), from the
    driver's version string; null when the driver exports none (st not loaded). This module opens no drive;
    RV(tapeops.qualify.tape_write_benchmark#module:mtweofi_supported) asks the driver itself with an ioctl.
  returned: always
  type: bool
mtweofi_basis:
  description: How RV(mtweofi_supported) was found out, or why it is unknown.
  returned: always
  type: str
  sample: st driver version 20160209
st_driver_version:
  description: The st driver's version string (C(verstr) in st.c), or null.
  returned: always
  type: str
  sample: '20160209'
st_driver:
  description: The st driver's parameters (C(loaded), C(fixed_buffer_size) bytes, C(max_sg_segs), C(try_direct_io)).
  returned: always
  type: dict
  sample: {"loaded": true, "fixed_buffer_size": 32768, "max_sg_segs": 256, "try_direct_io": true}
hba_max_transfer_bytes:
  description: The smallest HBA path maximum transfer over all drives (what a fleet-wide block size must fit), or null.
  returned: always
  type: int
block_size_fits:
  description: Whether O(block_size) fits every drive's HBA path (null when unknown or not asked).
  returned: always
  type: bool
drives:
  description: One entry per drive.
  returned: always
  type: list
  elements: dict
  contains:
    device:
      description: Non-rewinding node.
      type: str
    sg:
      description: The drive's SCSI generic node.
      type: str
    host:
      description: SCSI host (hostN).
      type: str
    hba_max_transfer_bytes:
      description: Largest transfer the HBA driver takes for this device (max_sectors), bytes.
      type: int
    host_sg_tablesize:
      description: Scatter-gather entries the HBA takes per command.
      type: int
    direct_io_max_bytes:
      description: Largest block st can send by direct I/O (min(max_sg_segs, sg_tablesize) pages).
      type: int
    limited_by:
      description: What caps the block size (C(HBA max_sectors)).
      type: str
    direct_io_limited_by:
      description: What caps direct I/O (C(st max_sg_segs) or C(HBA sg_tablesize)).
      type: str
    fits:
      description: Whether O(block_size) fits.
      type: bool
    message:
      description: A sentence saying whether it fits and which setting to change.
      type: str
    link:
      description: >-
        The drive's link to its HBA from sysfs (C(/sys/class/sas_phy/*/negotiated_linkrate) of the SAS ports on the
        drive's device path, or C(/sys/class/fc_host/hostN/speed)). C(transport) V(SAS), V(FC) or null (not a SAS
        or FC link, as on a virtual host), C(host), C(rate) (the kernel's text, V(6.0 Gbit)), C(lanes),
        C(usable_mb_s) (MB/s after the line encoding, null when unknown), C(encoding), C(hops) (one per SAS port)
        and C(text) (a sentence).
      type: dict
      sample: {"transport": "SAS", "host": "host0", "rate": "6.0 Gbit", "lanes": 1, "usable_mb_s": 600.0,
               "encoding": "8b/10b", "text": "SAS via host0: port-0:0 1x 6.0 Gbit = 600 MB/s; the drive gets at most 600 MB/s"}
'''

import os
import re

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.tapeops.qualify.plugins.module_utils import _records
from ansible_collections.tapeops.qualify.plugins.module_utils._tools._hba_link import device_link
from ansible_collections.tapeops.qualify.plugins.module_utils._config._stinit import st_driver_params, transfer_limits
from ansible_collections.tapeops.qualify.plugins.module_utils._measure._source_step import ram_bytes
from ansible_collections.tapeops.qualify.plugins.module_utils._measure._tape_discovery import (
    hba_max_transfer,
    mtweofi_from_st_driver,
    st_driver_version,
)

SYS_ROOT = '/sys'
MEMINFO = '/proc/meminfo'


def _host_of(scsi_dir):
    for part in scsi_dir.split(os.sep):
        if re.match(r'^host\d+$', part):
            return part
    return None


def _int(path):
    try:
        with open(path) as handle:
            return int(handle.read().strip())
    except (OSError, ValueError):
        return None


def main():
    module = AnsibleModule(
        argument_spec=dict(
            block_size=dict(type='int'),
            devices=dict(type='list', elements='str', default=[]),
        ),
        supports_check_mode=True,
    )
    wanted = module.params['devices']
    block = module.params['block_size']
    if block is not None and block <= 0:
        module.fail_json(msg='block_size must be a positive number of bytes, for example 1048576.')
    release = os.uname()[2]
    driver = st_driver_params(SYS_ROOT)
    base = os.path.join(SYS_ROOT, 'class', 'scsi_tape')
    try:
        names = sorted(n for n in os.listdir(base) if re.match(r'^nst\d+$', n))
    except OSError:
        names = []
    page = os.sysconf('SC_PAGE_SIZE')
    drives = []
    for name in names:
        if wanted and '/dev/%s' % name not in wanted and name not in wanted:
            continue
        scsi_dir = os.path.realpath(os.path.join(base, name, 'device'))
        try:
            sg_names = sorted(os.listdir(os.path.join(scsi_dir, 'scsi_generic')))
        except OSError:
            sg_names = []
        sg = '/dev/%s' % sg_names[0] if sg_names else None
        host = _host_of(scsi_dir)
        sg_tablesize = _int(os.path.join(SYS_ROOT, 'class', 'scsi_host', host, 'sg_tablesize')) if host else None
        hba = hba_max_transfer(sg)
        entry = {'device': '/dev/%s' % name, 'sg': sg, 'host': host, 'hba_max_transfer_bytes': hba,
                 'host_sg_tablesize': sg_tablesize}
        entry.update(transfer_limits(hba, sg_tablesize, driver['max_sg_segs'], page, block))
        entry.pop('max_block_bytes', None)
        entry['link'] = device_link(scsi_dir, SYS_ROOT)
        drives.append(entry)
    known = [d['hba_max_transfer_bytes'] for d in drives if d['hba_max_transfer_bytes']]
    weofi, weofi_basis = mtweofi_from_st_driver(SYS_ROOT)
    fits = [d.get('fits') for d in drives]
    record = _records.Preflight(
        kernel=release,
        mtweofi_supported=weofi,
        mtweofi_basis=weofi_basis,
        st_driver_version=st_driver_version(SYS_ROOT),
        st_driver=driver,
        hba_max_transfer_bytes=min(known) if known else None,
        block_size_fits=None if block is None or None in fits or not fits else all(fits),
        drives=drives,
    ).to_dict()
    record.pop('error')     # the controller's note for a preflight that failed, never the module's
    # the host's memory and CPUs: the role's host facts, not part of the preflight record
    ram = ram_bytes(MEMINFO)
    module.exit_json(changed=False, memory_total_mb=ram // 1048576 if ram else None, vcpus=os.cpu_count(),
                     **record)


if __name__ == '__main__':
    main()
