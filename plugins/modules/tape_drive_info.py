#!/usr/bin/python
# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: tape_drive_info
short_description: Discover tape drives and medium changers on a backup host
version_added: 0.1.0
description:
  - Lists every tape drive bound to the Linux st driver and every SCSI medium changer, with what the
    tape benchmark and the verdict need - INQUIRY identity and unit serial (VPD 0x80), LTO generation,
    READ BLOCK LIMITS, the HBA path's maximum transfer, current block size and density, whether media is
    loaded, the changer drive element it sits in (matched by device serial), the barcode loaded,
    st options and the kernel's per-drive counters.
  - Read-only. Drives are opened only for C(mt status) (read-only); sg nodes only for the
    C(BLKSECTGET) ioctl and SCSI commands that read (INQUIRY, READ BLOCK LIMITS, LOG SENSE,
    READ ELEMENT STATUS, READ ATTRIBUTE).
  - Reads what the drive says about its own and its loaded cartridge's health (docs/health.md), the TapeAlert flags,
    the error counter, device statistics, volume statistics, DT device status and data compression log pages, and,
    when a cartridge is loaded, its memory (MAM) with C(sg_read_attr --readonly). None of these reads moves the tape
    or resets a counter.
  - A device that does not support something (LOG SENSE on tgt answers "invalid opcode") is reported
    in C(log_pages.unsupported_reason), not as a failure. A drive held open by another process is
    reported with C(busy=true).
author:
  - tapeops.qualify contributors (@tapeops)
extends_documentation_fragment:
  - tapeops.qualify._attributes
  - tapeops.qualify._attributes.info_module
requirements:
  - mt-st, sg3-utils and mtx on the managed host (Debian/Ubuntu packages C(mt-st sg3-utils mtx)).
  - Linux 4.2 or later for the st statistics in sysfs.
options:
  devices:
    description:
      - Only report these drives (V(/dev/nst0) or V(nst0)). Default is all drives.
    type: list
    elements: str
    default: []
  log_pages:
    description:
      - Read the drive log pages 0x0C, 0x14, 0x17, 0x2E and HP 0x34, and the health pages 0x02, 0x03, 0x11, 0x1B,
        0x30 and 0x32, where the drive supports them.
    type: bool
    default: true
  cartridge_memory:
    description:
      - Read the loaded cartridge's memory (MAM) with C(sg_read_attr --readonly) (READ ATTRIBUTE, which moves no tape).
      - Only sent when C(mt status) says a cartridge is loaded. A drive or a C(sg_read_attr) that cannot read it
        leaves RV(drives[].cartridge_memory) unset with RV(drives[].cartridge_memory_reason) saying why; discovery
        does not fail.
    type: bool
    default: true
  tool_timeout:
    description:
      - Seconds each tool (C(mt), C(mtx), C(sg_logs), ...) gets before it is stopped.
      - A tool waiting on a drive that does not answer cannot be stopped (it sits in the kernel); it is left
        behind after a further 5 seconds, the drive is reported in RV(drives[].hung) and nothing more is sent
        to it, so discovery of a host ends within O(tool_timeout) + 5 seconds per hung device.
    type: int
    default: 60
  drive_settings:
    description:
      - The inventory's C(tapeops_drives). The entry of a drive (matched by C(nst)) is applied by the collection's
        drive resolver, as the verdict and the report apply it - C(generation), C(form_factor) and C(vendor) name the
        drive, C(interface), C(speed_floor_mb_s) and C(model) (drive model fields) go to its drive model; other keys
        are ignored here. RV(drives[].generation) says what came from where.
      - An entry the resolver cannot read costs the drive its inventory entry, with a warning; discovery goes on.
    type: list
    elements: dict
    default: []
notes:
  - Rates and sizes follow SCSI and st; block sizes are bytes.
seealso:
  - module: tapeops.qualify.tape_write_benchmark
'''

EXAMPLES = r'''
- name: Discover tape drives and changers
  tapeops.qualify.tape_drive_info:
  register: tape

- name: Discover with the inventory's drive settings applied, as the verdict applies them
  tapeops.qualify.tape_drive_info:
    drive_settings: "{{ tapeops_drives | default([]) }}"
  register: tape

- name: Show each drive with its generation and loaded barcode
  ansible.builtin.debug:
    msg: "{{ item.nst }} {{ item.vendor }} {{ item.product }} LTO-{{ item.generation.generation | default('?') }} {{ item.barcode }}"
  loop: "{{ tape.drives }}"
'''

RETURN = r'''
drives:
  description: One entry per tape drive (per C(nstN) node).
  returned: always
  type: list
  elements: dict
  contains:
    nst:
      description: Non-rewinding node, the one to benchmark.
      type: str
      sample: /dev/nst0
    st:
      description: Auto-rewinding node.
      type: str
      sample: /dev/st0
    sg:
      description: SCSI generic node (for sg_logs), or null when sg is not loaded.
      type: str
      sample: /dev/sg1
    hctl:
      description: SCSI host:channel:target:lun.
      type: str
    vendor:
      description: INQUIRY vendor.
      type: str
      sample: IBM
    product:
      description: INQUIRY product.
      type: str
      sample: ULT3580-TD5
    revision:
      description: Firmware revision.
      type: str
    serial:
      description: Unit serial number (VPD page 0x80); bytes that are not printable ASCII show as U+FFFD.
      type: str
    serial_hex:
      description: The serial's raw bytes in hex, set only when they are not all printable ASCII.
      type: str
    generation:
      description:
        - >-
          The drive's identity from the collection's one drive resolver: INQUIRY -> mechanism
          (C(mechanism), as C(_drive_model.identify_inquiry) reads the product ID) -> C(generation),
          C(form_factor), C(vendor) (the mechanism's maker), with the drive's C(tapeops_drives) entry applied
          (C(inventory): the keys used; C(interface)).
        - >-
          C(source) says where the generation came from - V(inventory), V(inquiry), or V(density) when the product ID
          names no LTO drive the model knows and the loaded cartridge's density code was used (the drive may then
          be a generation newer: C(notes) says so); null when unknown (C(reason) says what to set).
        - >-
          C(medium) is the loaded cartridge (C(code), C(generation) of its format, C(media), C(capacity_gb)), or null
          with no cartridge or density 0x00: an LTO-6 drive with an LTO-5 tape is C(generation=6) with
          C(medium.generation=5).
      type: dict
      sample: {"generation": 6, "form_factor": null, "vendor": "HPE", "source": "inquiry",
               "reason": "HP product ID ULTRIUM 6-SCSI = LTO-6; the ID does not tell the form factor",
               "interface": null, "inquiry": {"vendor": "HP", "product": "Ultrium 6-SCSI", "revision": "338D"},
               "mechanism": {"generation": 6, "form_factor": null, "vendor": "HPE", "inquiry_vendor": "HP",
                             "product": "ULTRIUM 6-SCSI", "reason": "HP product ID ULTRIUM 6-SCSI = LTO-6"},
               "medium": {"code": "0x58", "generation": 5, "media": "LTO-5", "capacity_gb": 1500, "note": null},
               "inventory": {},
               "notes": ["the loaded cartridge is LTO-5 (density 0x58), not LTO-6: recorded as the medium, not the drive"]}
    drive_model:
      description: >-
        The drive model the verdict uses for this drive (C(_drive_model.DriveSpec) as a dict: native rate, speed steps,
        buffer, capacity, sources, C(estimated) ...), with the C(tapeops_drives) fields applied. Null when the
        generation is unknown.
      type: dict
    block_limits:
      description: READ BLOCK LIMITS, decoded from its bytes (C(granularity) is a power of two).
      type: dict
      sample: {min: 4, max: 1048576, granularity: 9}
    hba_max_transfer_bytes:
      description: Largest transfer the host adapter path takes for this device (BLKSECTGET on sg).
      type: int
      sample: 1310720
    link:
      description: >-
        The drive's link to its HBA from sysfs, read-only (SAS negotiated link rate of the ports on the drive's
        device path, or the FC HBA port speed): C(transport) (V(SAS), V(FC) or null when it is neither, as on a
        virtual host), C(rate), C(lanes), C(usable_mb_s) (null when unknown), C(encoding), C(hops), C(text).
        The same as RV(tapeops.qualify.st_preflight_info#module:drives[].link).
      type: dict
      sample: {"transport": "FC", "host": "host5", "rate": "8 Gbit", "lanes": 1, "usable_mb_s": 800.0,
               "encoding": "8b/10b", "hops": [], "text": "FC via host5: HBA port 8 Gbit = 800 MB/s (8b/10b)"}
    block_size:
      description: Current block size from C(mt status); 0 is variable-block mode.
      type: int
    density_code:
      description: Density code of the loaded media, hex text (C(0x00) means none or unknown).
      type: str
    media_loaded:
      description: >-
        Whether the drive is online with a cartridge, from C(mt status). Null when unknown - the C(mt) on the
        host prints no status bits (GNU cpio's mt; then C(mt-st) is asked too if installed) or failed.
      type: bool
    write_protected:
      description: >-
        Whether the loaded cartridge is write-protected. Null when unknown (as for RV(drives[].media_loaded)); null never
        means "writable".
      type: bool
    busy:
      description: The drive is held open by another process.
      type: bool
    mt_status:
      description: The parsed C(mt status).
      type: dict
    mt_error:
      description: What C(mt status) printed when it failed.
      type: str
    hung:
      description: >-
        Set when a tool sent to this drive did not finish within its timeout and could not be stopped (it waits
        in the kernel for a drive that does not answer): the error. No further command is sent to the drive in
        this run, and the qualify playbook does not write to it. Null otherwise.
      type: str
      returned: always
    barcode:
      description: Barcode of the loaded cartridge, from the changer this drive sits in.
      type: str
    changer:
      description: >-
        The changer holding this drive: C(sg), C(element) (mtx's drive number), C(element_address) and
        C(matched_by) (C(serial), or C(serial_prefix) when the changer truncates the device identifier).
      type: dict
    mtweofi_supported:
      description: >-
        Whether the st driver has MTWEOFI (immediate file marks), from the driver's version string
        (C(/sys/bus/scsi/drivers/st/version), 20100829 or later), so distribution kernels that backported it are
        recognised. Null when the driver exports no version. Discovery opens no drive for writing, so it cannot
        probe; RV(tapeops.qualify.tape_write_benchmark#module:mtweofi_supported) asks the driver with an ioctl.
      type: bool
    mtweofi_basis:
      description: How RV(drives[].mtweofi_supported) was found out (V(st driver version 20160209)) or why it is unknown.
      type: str
    warnings:
      description: What could not be read fully (a cut C(mt status), a log page printed only in part).
      type: list
      elements: str
    st_options:
      description: The st driver options of this drive (sysfs C(options) decoded) and its defaults.
      type: dict
    stats:
      description: The st per-drive counters (sysfs C(stats)), null on kernels without them.
      type: dict
    log_pages:
      description: >-
        C(supported) (page codes), C(unsupported_reason) (set when the device has no LOG SENSE),
        C(pages) (decoded 0x0C, 0x14, 0x17, 0x2E, 0x02, 0x03, 0x11, 0x1B; 0x30, 0x32 and 0x34 as parameter codes),
        C(errors).
      type: dict
    cartridge_memory:
      description: >-
        The loaded cartridge's memory as READ ATTRIBUTE gives it (C(_records.CartridgeMemory): load count, MiB
        written and read over its life, remaining and maximum capacity, manufacturer, serial, density codes, medium
        type, the TapeAlert flags of its previous load, last written date ...); each attribute the cartridge did not
        give is null.
      type: dict
      returned: when read
    cartridge_memory_reason:
      description: >-
        Why RV(drives[].cartridge_memory) was not read (no cartridge loaded, no sg node, no READ ATTRIBUTE on the
        drive, C(sg_read_attr) not installed, ...).
      type: str
      returned: when the cartridge memory was not read
changers:
  description: One entry per SCSI medium changer.
  returned: always
  type: list
  elements: dict
  contains:
    sg:
      description: The changer's sg node.
      type: str
    vendor:
      description: INQUIRY vendor.
      type: str
    product:
      description: INQUIRY product.
      type: str
    status:
      description: The parsed C(mtx status) (drives, slots, barcodes).
      type: dict
    elements:
      description: Data transfer elements from READ ELEMENT STATUS with their device identifiers.
      type: list
    error:
      description: >-
        Why C(mtx status) failed, if it did (C(READ ELEMENT STATUS Command Failed),
        C(illegal Element Type Code 83 reported), mtx not installed, ...); C(status.error_hint) says what to try.
        Each error is also given as a warning.
      type: str
    warnings:
      description: >-
        What could not be read fully (a cut listing, a READ ELEMENT STATUS answer cut short); each is also
        given as a warning.
      type: list
      elements: str
'''

import traceback

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.tapeops.qualify.plugins.module_utils import _records
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _cli
from ansible_collections.tapeops.qualify.plugins.module_utils._measure._tape_discovery import TOOL_TIMEOUT, discover


def main():
    module = AnsibleModule(
        argument_spec=dict(
            devices=dict(type='list', elements='str', default=[]),
            log_pages=dict(type='bool', default=True),
            cartridge_memory=dict(type='bool', default=True),
            tool_timeout=dict(type='int', default=TOOL_TIMEOUT),
            drive_settings=dict(type='list', elements='dict', default=[]),
        ),
        supports_check_mode=True,
    )
    if module.params['tool_timeout'] <= 0:
        module.fail_json(msg='tool_timeout must be a positive number of seconds, got %d.' % module.params['tool_timeout'])

    def runner(cmd):
        return _cli.run(cmd, timeout=module.params['tool_timeout'])

    try:
        found = discover(runner=runner, log_pages=module.params['log_pages'], only=module.params['devices'] or None,
                         settings=module.params['drive_settings'],
                         cartridge_memory=module.params['cartridge_memory'])
    except _cli.CliError as exc:
        module.fail_json(**exc.as_fail_kwargs())
    except Exception as exc:  # pylint: disable=broad-except
        module.fail_json(msg='Discovery stopped on an unexpected error: %s. Please report it with the traceback and '
                             'the output of lsscsi -g, mt status and sg_logs -a for the drive.' % exc,
                         exception=traceback.format_exc())
    for drive in found['drives']:
        for warning in drive.get('warnings') or []:
            module.warn('%s: %s' % (drive['nst'], warning))
        if drive.get('hung'):
            module.warn('%s does not answer: %s' % (drive['nst'], drive['hung']))
    for changer in found['changers']:
        if changer.get('error'):
            hint = (changer.get('status') or {}).get('error_hint') or ''
            module.warn('changer %s: %s %s' % (changer.get('sg'), changer['error'], hint))
        for warning in changer.get('warnings') or []:
            module.warn('changer %s: %s' % (changer.get('sg'), warning))
    # each drive is a DriveIdentity record (module_utils/_records.py), the structure RETURN documents
    module.exit_json(changed=False, drives=[_records.DriveIdentity.from_dict(d).to_dict() for d in found['drives']],
                     changers=found['changers'])


if __name__ == '__main__':
    main()
