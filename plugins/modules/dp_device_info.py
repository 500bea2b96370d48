#!/usr/bin/python
# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: dp_device_info
short_description: Recommend Data Protector tape device block and segment sizes per drive
version_added: 0.1.0
description:
  - Computes, for each drive, the block size and segment size to configure in the Data Protector
    device definition, from the drive model's native cartridge capacity (a segment size to set of native
    capacity / 50, the field notes' rule; Data Protector's own default for LTO is 2000 MB, and a segment also
    closes when its catalog reaches 12 MB) and the HBA path's maximum transfer.
  - Where a qualify run's verdict recommends a segment or block size for a drive (O(drives[].segment_size_mb),
    O(drives[].block_size_kb)), that is the recommendation, so the module never says something else than the
    verdict.
  - Device definitions live on the Cell Manager, so this module only reports; it changes nothing.
author:
  - tapeops.qualify contributors (@tapeops)
extends_documentation_fragment:
  - tapeops.qualify._attributes
  - tapeops.qualify._attributes.info_module
options:
  drives:
    description: Drives to compute for.
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description: A label for the drive (device path or DP device name).
        type: str
        required: true
      generation:
        description: Drive generation as C(LTO-6), C(LTO6) or C(6). Used with the drive model.
        type: str
      form_factor:
        description: C(FH) or C(HH); some generations differ in speed, not capacity.
        type: str
      vendor:
        description: Drive vendor (C(IBM), C(HPE), C(Quantum) ...), when the model needs it.
        type: str
      interface:
        description: The drive's interface (C(SAS), C(FC), C(SCSI)), as in C(tapeops_drives).
        type: str
      model:
        description: Drive model fields set per drive, as C(tapeops_drives[].model) (for example C(native_capacity_gb)).
        type: dict
      discovered:
        description:
          - This drive's entry from M(tapeops.qualify.tape_drive_info) (RV(tapeops.qualify.tape_drive_info#module:drives[])).
            Its INQUIRY strings and loaded cartridge identify the drive through the collection's drive resolver, as for
            the verdict; C(generation), C(form_factor), C(vendor), C(interface) and C(model) given here are the
            inventory's word and are applied on top. Its C(hba_max_transfer_bytes) is used when the drive gives none.
        type: dict
      native_capacity_gb:
        description:
          - Native capacity in decimal GB; overrides the drive model's (the same as C(model.native_capacity_gb)).
          - Enough on its own when the drive's generation is not known.
        type: float
      hba_max_transfer_bytes:
        description: Largest transfer the HBA path carries (from the st_tuning preflight facts).
        type: int
      segment_size_mb:
        description:
          - The verdict's segment size for this drive, MB (a C(segment_size) fix of a qualify run; the
            C(tapeops.qualify.apply_fixes) playbook passes it). Given, it is the recommendation instead of
            the native capacity / 50 rule, and O(drives[].generation) is not needed.
        type: int
      block_size_kb:
        description:
          - The verdict's block size for this drive, KB (a C(block_size) fix of a qualify run). Given, it is the
            recommendation instead of the largest power of two the limits allow; it must stay within them.
        type: int
  hba_max_transfer_bytes:
    description: HBA path maximum transfer for drives that do not give their own.
    type: int
  max_block_kb:
    description: Upper bound for the recommended block size in KB.
    type: int
    default: 1024
'''

EXAMPLES = r'''
- name: Recommend DP device settings
  tapeops.qualify.dp_device_info:
    drives:
      - name: /dev/nst0
        generation: LTO-6
        hba_max_transfer_bytes: 1048576
  register: dp_devices

- name: Discover the drives, then size each one as the verdict identifies it
  tapeops.qualify.tape_drive_info:
    log_pages: false
  register: tape

- name: Recommend DP device settings for the first discovered drive, with the capacity set in the inventory
  tapeops.qualify.dp_device_info:
    drives:
      - name: "{{ tape.drives[0].nst }}"
        discovered: "{{ tape.drives[0] }}"
        model:
          native_capacity_gb: 2400
  register: dp_devices
'''

RETURN = r'''
devices:
  description: One entry per drive.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: The drive label given.
      type: str
    native_capacity_gb:
      description: Native capacity used, decimal GB.
      type: float
    segment_size_mb:
      description: Recommended segment size, MB (the verdict's when given, else native capacity / 50).
      type: int
    segment_size_basis:
      description: C(verdict) (O(drives[].segment_size_mb) given) or C(rule) (native capacity / 50).
      type: str
    catalog_segment_limit_mb:
      description: Catalog size at which DP closes a segment regardless of the segment size, MB.
      type: int
    block_size_kb:
      description: Recommended device block size, KB.
      type: int
    block_size_limited_by:
      description:
        - C(dp) (Data Protector's maximum) or C(hba) (the HBA path's maximum transfer), or C(verdict) when
          O(drives[].block_size_kb) gave the size.
      type: str
    drive_label:
      description: The drive model's label (V(LTO-6), V(LTO-9 HH)); null when only C(native_capacity_gb) was given.
      type: str
    identity:
      description: >-
        The drive's identity from the collection's drive resolver, as
        RV(tapeops.qualify.tape_drive_info#module:drives[].generation) (C(source), C(inventory), C(medium) ...).
      type: dict
  sample: [{"name": "/dev/nst0", "native_capacity_gb": 2500, "segment_size_mb": 50000, "segment_size_basis": "rule",
            "catalog_segment_limit_mb": 12, "block_size_kb": 1024, "block_size_limited_by": "dp",
            "drive_label": "LTO-6", "identity": {"generation": 6, "source": "inventory", "medium": null}}]
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.tapeops.qualify.plugins.module_utils._config._omnirc import OmnircError, recommend_device
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _resolve

_SETTING = ('generation', 'form_factor', 'vendor', 'interface')


def capacity_of(drive):
    """``(native capacity GB, drive label or None, identity record)`` of one ``drives[]`` entry.

    The drive is identified by the collection's resolver (INQUIRY and loaded
    cartridge of ``discovered``, the inventory's keys on top). Raises
    ``ResolveError`` with what to give when neither a generation nor a
    capacity is known.
    """
    setting = dict((k, drive[k]) for k in _SETTING if drive.get(k))
    model = dict(drive.get('model') or {})
    if drive.get('native_capacity_gb') is not None:
        model['native_capacity_gb'] = drive['native_capacity_gb']
    if model:
        setting['model'] = model
    identity, spec = _resolve.resolve(drive.get('discovered') or {}, setting)
    if spec is not None:
        return spec.native_capacity_gb, spec.label, identity.to_dict()
    if drive.get('native_capacity_gb') is not None:
        return drive['native_capacity_gb'], None, identity.to_dict()
    raise _resolve.ResolveError('give its generation (for example LTO-6), its tape_drive_info entry as discovered, '
                                'or native_capacity_gb (%s).' % identity.reason)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            drives=dict(type='list', elements='dict', required=True, options=dict(
                name=dict(type='str', required=True),
                generation=dict(type='str'),
                form_factor=dict(type='str'),
                vendor=dict(type='str'),
                interface=dict(type='str'),
                model=dict(type='dict'),
                discovered=dict(type='dict'),
                native_capacity_gb=dict(type='float'),
                hba_max_transfer_bytes=dict(type='int'),
                segment_size_mb=dict(type='int'),
                block_size_kb=dict(type='int'),
            )),
            hba_max_transfer_bytes=dict(type='int'),
            max_block_kb=dict(type='int', default=1024),
        ),
        supports_check_mode=True,
    )
    devices = []
    for drive in module.params['drives']:
        try:
            capacity, label, identity = capacity_of(drive)
        except _resolve.ResolveError as exc:
            # a verdict's segment size needs no capacity (the block size rule needs none either)
            if drive['segment_size_mb'] is None:
                module.fail_json(msg='Drive %s: %s' % (drive['name'], exc))
            capacity, label, identity = None, None, None
        discovered = drive['discovered'] or {}
        try:
            hba = drive['hba_max_transfer_bytes'] or discovered.get('hba_max_transfer_bytes') or \
                module.params['hba_max_transfer_bytes']
            rec = recommend_device(capacity, hba, module.params['max_block_kb'],
                                   segment_size_mb=drive['segment_size_mb'], block_size_kb=drive['block_size_kb'])
        except OmnircError as exc:
            module.fail_json(msg='Drive %s: %s' % (drive['name'], exc))
        rec.update(name=drive['name'], drive_label=label, identity=identity)
        devices.append(rec)
    module.exit_json(changed=False, devices=devices)


if __name__ == '__main__':
    main()
