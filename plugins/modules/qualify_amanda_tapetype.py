#!/usr/bin/python
# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: qualify_amanda_tapetype
short_description: Write an Amanda tapetype for each drive of a host from a qualify run
version_added: 0.1.0
description:
  - Runs on the controller (action plugin). Reads the host's document (C(hosts/<host>.json)) from the run
    directory M(tapeops.qualify.qualify_verdict) wrote and returns, for each drive with a verdict, a
    C(define tapetype) block for C(amanda.conf) in the layout C(amtapetype) prints, so that the hours-long
    C(amtapetype) pass that fills a cartridge twice can be left out.
  - C(length) is the native capacity of the cartridge that was loaded (its density code), else of the drive's own
    generation, in kbytes of 1024 bytes; without O(hardware_compression) no hardware compression is assumed
    (Amanda compresses in software, C(compress client fast) by default, as C(amtapetype) measures with random
    data).
  - C(blocksize) is the block size the verdict recommends (its C(block_size) fix), else the one it judged, else the
    write sweep's best. C(speed) is what the write sweep measured of incompressible data at that block size (Amanda
    does not use it). C(filemark) is the tape space a file mark uses, which the run does not measure, modelled as 4
    blocks; the time a synchronous mark costs is said beside it. C(docs/amanda.md) says where each number comes
    from, with Amanda's own documentation.
  - Nothing is written. The text is returned (RV(text), each tapetype's C(text)) to be put into C(amanda.conf) on
    the Amanda server by hand or by a task of the user's.
  - A host without a document in the run, or whose document records a failed run, is skipped with the reason.
author:
  - tapeops.qualify contributors (@tapeops)
extends_documentation_fragment:
  - tapeops.qualify._attributes
  - tapeops.qualify._attributes.action_plugin
  - tapeops.qualify._attributes.info_module
  - tapeops.qualify._qualify_run
options:
  host:
    description: The host whose drives to write tapetypes for; default the inventory host the task runs for.
    type: str
  drive:
    description:
      - One drive of the host (its id in the run, for example C(/dev/nst0)); default every drive with a verdict.
        A drive without a verdict is an error naming those that have one.
    type: str
  name:
    description:
      - The tapetype's name (a letter, then letters, digits, C(_) or C(-)); default the drive's generation, the host
        and the drive's node, for example C(LTO-6-ma01-nst0). Only with O(drive) when the host has several drives.
    type: str
  hardware_compression:
    description:
      - The drive compresses what Amanda writes (dumptypes with C(compress none) and the drive's compression on).
        C(length) is then the native capacity times the tape compression the run estimated for the sources.
    type: bool
    default: false
seealso:
  - module: tapeops.qualify.qualify_verdict
  - module: tapeops.qualify.qualify_fixes_info
'''

EXAMPLES = r'''
- name: Write the tapetypes of this Amanda server's drives from a qualify run
  tapeops.qualify.qualify_amanda_tapetype:
    run_dir: reports/20261123T195725Z
  register: tapetypes

- name: Show them, to put into amanda.conf
  ansible.builtin.debug:
    msg: "{{ tapetypes.text }}"
'''

RETURN = r'''
skipped:
  description: True when the run has no verdict for the host (no document, a failed run); RV(reason) says why.
  returned: always
  type: bool
reason:
  description: Why the host is skipped.
  returned: when skipped
  type: str
text:
  description: Every tapetype of the host, one after the other, as C(amanda.conf) takes them.
  returned: when not skipped
  type: str
tapetypes:
  description:
    - One per drive, with C(drive), C(name), C(text) (the C(define tapetype) block and the C(#) lines that say
      where each number comes from), C(length_kbytes), C(capacity_gb), C(cartridge), C(length_basis)
      (C(medium) or C(drive_generation)), C(hardware_compression), C(block_size) (bytes, null when not known),
      C(block_basis) (C(fix), C(judged), C(sweep_best), C(amanda_default)), C(speed_kps), C(speed_mb_s),
      C(speed_basis) (C(measured), C(verdict), C(not_measured)), C(speed_how) (the verdict's drive path basis),
      C(best_block_size), C(best_mb_s), C(filemark_kbytes), C(mark_seconds),
      C(mark_basis) (C(measured), C(modelled)), C(run), C(host), C(device), C(label) and C(product).
  returned: when not skipped
  type: list
  elements: dict
skipped_drives:
  description: The drives with a verdict that have no tapetype, each with C(drive) and the C(reason).
  returned: when not skipped
  type: list
  elements: dict
'''
