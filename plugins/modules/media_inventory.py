#!/usr/bin/python
# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: media_inventory
short_description: List the cartridges a backup host sees and what a target LTO drive can do with them
version_added: 0.1.0
description:
  - Runs C(mtx -f <changer> status) on every SCSI medium changer the host sees (the discovery of
    M(tapeops.qualify.tape_drive_info)) and classifies each cartridge by its barcode (LTO media ID
    L1..L9, M8, WORM LT..LZ, CLN cleaning, DG diagnostic) or, when the label says nothing and the
    cartridge sits in a drive, by the density code C(mt status) prints for it.
  - Adds the cartridges given in O(media) (barcodes, optionally with their generation).
  - Given O(target_generation), says for every cartridge whether the target drive writes it, only
    reads it, or cannot read it at all (stranded), from the collection's drive model; counts and native
    capacity per class per library, the stranded cartridges' barcodes and slots, the hours a migration
    takes with O(drives_kept) old drives (with its assumptions) and whether an old drive must be kept
    in a library.
  - Read-only. It never moves a cartridge and never writes; changers are only asked READ ELEMENT STATUS
    (C(mtx status)), drives only C(mt status), INQUIRY-class commands and, for a loaded cartridge, READ ATTRIBUTE
    (C(sg_read_attr --readonly), the cartridge's memory, which moves no tape).
  - A loaded cartridge whose memory (MAM) was read and that is near the end of its life (its load count against
    its generation's load life, or the Media life flags of its last load; docs/health.md) is listed apart in its
    library's C(end_of_life), not among the stranded ones to migrate; the migration estimate takes the data its
    memory says is on it (maximum less remaining capacity) instead of its native capacity times O(fill_fraction).
  - The backup software's own media list (Data Protector C(omnimm), Bacula/Bareos C(list media)) is not
    read yet; list such cartridges in O(media).
author:
  - tapeops.qualify contributors (@tapeops)
extends_documentation_fragment:
  - tapeops.qualify._attributes
  - tapeops.qualify._attributes.info_module
requirements:
  - mtx, mt-st and sg3-utils on the managed host (Debian/Ubuntu packages C(mtx mt-st sg3-utils)).
options:
  target_generation:
    description:
      - The drive to judge the cartridges against, for example V(LTO-9 FH), V(LTO-10) or V(9).
      - Without it only the inventory is returned.
    type: str
  target_vendor:
    description:
      - Mechanism maker of the target drive (V(IBM), V(HPE)); only used to look the drive up.
    type: str
  target_form_factor:
    description:
      - V(FH) or V(HH) when O(target_generation) does not say.
    type: str
  target_interface:
    description:
      - V(SAS), V(FC) or V(SCSI); only used to look the drive up.
    type: str
  media:
    description:
      - Cartridges the changers do not show (on a shelf, in a vault, in another library), as barcodes
        or as dicts with C(barcode), optionally C(generation) (V(5), V(LTO-5), V(L5), V(M8), V(LA)) and
        C(location) (free text).
      - A given generation wins over the label.
    type: list
    elements: raw
    default: []
  changers:
    description:
      - Whether to read the changers the host sees. V(false) classifies only O(media).
    type: bool
    default: true
  drives_kept:
    description:
      - Old drives kept for the migration of the stranded cartridges (they copy in parallel).
    type: int
    default: 1
  fill_fraction:
    description:
      - How full the stranded cartridges are assumed to be, above 0 and at most 1.
      - The default 1 (full) gives an upper bound.
    type: float
    default: 1.0
notes:
  - Capacities are native (uncompressed) decimal GB; rates are the drive model's published native
    MB/s, not measured.
  - The LTO-10 media IDs LA and PA are the names IBM and FreeBSD give the media; no LTO-10 label
    specification was found, and the LTO-10 WORM media ID is not published in the sources consulted
    (an C(LR) label is treated as WORM of unknown generation).
seealso:
  - module: tapeops.qualify.tape_drive_info
'''

EXAMPLES = r'''
- name: What would LTO-9 full-height drives strand?
  tapeops.qualify.media_inventory:
    target_generation: LTO-9 FH
    media:
      - VAULT1L6
      - barcode: OFFSITE01
        generation: LTO-5
        location: vault B
  register: media

- name: Show the stranded cartridges and the migration estimate
  ansible.builtin.debug:
    msg: "{{ media.summary.totals.counts }} / {{ media.summary.migration }}"
'''

RETURN = r'''
libraries:
  description:
    - One entry per changer, per standalone drive with a loaded tape, and C(given) for O(media).
  returned: always
  type: list
  elements: dict
  contains:
    id:
      description: The changer's sg node, the standalone drive's nst node, or C(given).
      type: str
    source:
      description: Where the list came from (C(mtx status), C(standalone drive (mt status)), C(inventory list (media))).
      type: str
    error:
      description: Why the changer could not be read, if it could not.
      type: str
    complete:
      description: False when C(mtx status) listed fewer elements than it announced or was cut short.
      type: bool
    cartridges:
      description:
        - Each cartridge with C(barcode), C(kind) (data, worm, cleaning, diagnostic, unknown), C(media)
          (L1..L9, M8, LA, PA or None), C(generation) (of the format), C(capacity_gb), C(worm), C(basis)
          (label, density, given), C(cleaning), C(note), C(sources) and C(location) (kind, element).
      type: list
      elements: dict
summary:
  description:
    - The classification against O(target_generation), as docs/reports.md describes the C(media) section
      (the host document keeps it as it is).
    - None without O(target_generation).
  returned: always
  type: dict
  contains:
    status:
      description: C(ok) (a classification).
      type: str
    error:
      description: Null (a failure fails the module).
      type: str
    target:
      description: The target drive - C(label), C(generation), C(writes), C(reads_only) (LTO generations).
      type: dict
    libraries:
      description:
        - Per library C(id), C(counts), C(capacity_gb), C(by_generation), C(stranded), C(read_only),
          C(unknown), C(cleaning), C(keep_old_drive) and C(migration); C(cartridges) is a count here.
        - C(end_of_life) (only in a library where a cartridge's memory was read) lists the cartridges near the end of
          their life, each row with its C(class) and the C(findings) that say so, apart from C(stranded) and
          C(read_only); a row of a cartridge whose memory was read has C(written_gb).
      type: list
      elements: dict
    totals:
      description: C(cartridges), C(counts) and C(capacity_gb) per class over all libraries.
      type: dict
    migration:
      description: >-
        Hours to copy the stranded cartridges with O(drives_kept) old drives, with its assumptions; null when none is
        stranded. C(from_memory) (only when there is one): how many cartridges were counted by the data their memory
        says is on them.
      type: dict
    keep_old_drive_libraries:
      description: The libraries that must keep an old drive.
      type: list
      elements: str
    findings:
      description: What to act on, each with C(severity) and C(text).
      type: list
      elements: dict
    parameters:
      description: C(drives_kept) and C(fill_fraction) as used.
      type: dict
warnings_seen:
  description: What the changers' listings warned about (cut lines, unrecognised lines).
  returned: always
  type: list
  elements: str
'''

import traceback

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.tapeops.qualify.plugins.module_utils import _records
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _media

from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _cli
from ansible_collections.tapeops.qualify.plugins.module_utils._measure._tape_discovery import TOOL_TIMEOUT, discover


def main():
    module = AnsibleModule(
        argument_spec=dict(
            target_generation=dict(type='str'),
            target_vendor=dict(type='str'),
            target_form_factor=dict(type='str'),
            target_interface=dict(type='str'),
            media=dict(type='list', elements='raw', default=[]),
            changers=dict(type='bool', default=True),
            drives_kept=dict(type='int', default=1),
            fill_fraction=dict(type='float', default=1.0),
        ),
        supports_check_mode=True,
    )
    params = module.params
    spec = None
    if params['target_generation']:
        try:
            spec = _media.target_spec(params['target_generation'], params['target_vendor'],
                                      params['target_form_factor'], params['target_interface'])
        except ValueError as exc:
            module.fail_json(msg='target: %s' % exc)

    def runner(cmd):
        return _cli.run(cmd, timeout=TOOL_TIMEOUT)

    found = {'changers': [], 'drives': []}
    if params['changers']:
        try:
            found = discover(runner=runner, log_pages=False)
        except _cli.CliError as exc:
            module.fail_json(**exc.as_fail_kwargs())
        except Exception as exc:  # pylint: disable=broad-except
            module.fail_json(msg='Discovery stopped on an unexpected error: %s. Please report it with the traceback '
                                 'and the output of lsscsi -g and mtx -f <changer> status.' % exc,
                             exception=traceback.format_exc())
    try:
        libraries = _media.inventory_libraries(found['changers'], found['drives'], params['media'])
        summary = None
        if spec is not None:
            summary = _records.Media.summary(_media.summarize(
                libraries, spec, params['drives_kept'], params['fill_fraction'],
                _media.old_drive_specs(found['drives']))).to_dict()
    except _media.MediaInputError as exc:
        module.fail_json(msg=str(exc))
    warnings = []
    for changer in found['changers']:
        for warning in changer.get('warnings') or []:
            warnings.append('changer %s: %s' % (changer.get('sg'), warning))
        if changer.get('error'):
            hint = (changer.get('status') or {}).get('error_hint') or ''
            module.warn('changer %s: %s %s' % (changer.get('sg'), changer['error'], hint))
    module.exit_json(changed=False, libraries=libraries, summary=summary, warnings_seen=warnings)


if __name__ == '__main__':
    main()
