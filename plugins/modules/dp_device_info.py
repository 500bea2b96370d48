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
    device definition, from the drive model's native cartridge capacity (DP's rule, default segment
    size = native capacity / 50, and a segment also closes when its catalog reaches 12 MB) and the HBA
    path's maximum transfer.
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
      native_capacity_gb:
        description: Native capacity in decimal GB; overrides the drive model lookup.
        type: float
      hba_max_transfer_bytes:
        description: Largest transfer the HBA path carries (from the st_tuning preflight facts).
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
      description: Recommended segment size (native capacity / 50), MB.
      type: int
    catalog_segment_limit_mb:
      description: Catalog size at which DP closes a segment regardless of the segment size, MB.
      type: int
    block_size_kb:
      description: Recommended device block size, KB.
      type: int
    block_size_limited_by:
      description: C(dp) (Data Protector's maximum) or C(hba) (the HBA path's maximum transfer).
      type: str
  sample: [{"name": "/dev/nst0", "native_capacity_gb": 2500, "segment_size_mb": 50000,
            "catalog_segment_limit_mb": 12, "block_size_kb": 1024, "block_size_limited_by": "dp"}]
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.tapeops.qualify.plugins.module_utils._config._omnirc import OmnircError, recommend_device


def _capacity_from_model(drive):
    # The drive model is the single source of the numbers (written alongside
    # the verdict); import it lazily so a missing model gives a clear message.
    from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _drive_model

    generation, form_factor = _drive_model.parse_generation(drive['generation'])
    spec = _drive_model.lookup(generation, drive.get('form_factor') or form_factor, drive.get('vendor'))
    return spec.native_capacity_gb


def main():
    module = AnsibleModule(
        argument_spec=dict(
            drives=dict(type='list', elements='dict', required=True, options=dict(
                name=dict(type='str', required=True),
                generation=dict(type='str'),
                form_factor=dict(type='str'),
                vendor=dict(type='str'),
                native_capacity_gb=dict(type='float'),
                hba_max_transfer_bytes=dict(type='int'),
            )),
            hba_max_transfer_bytes=dict(type='int'),
            max_block_kb=dict(type='int', default=1024),
        ),
        supports_check_mode=True,
    )
    devices = []
    for drive in module.params['drives']:
        capacity = drive['native_capacity_gb']
        if capacity is None:
            if not drive['generation']:
                module.fail_json(msg='Drive %s: give its generation (for example LTO-6) or native_capacity_gb.'
                                 % drive['name'])
            try:
                capacity = _capacity_from_model(drive)
            except (ImportError, AttributeError) as exc:
                module.fail_json(msg='Drive %s: the drive model is not available (%s); give native_capacity_gb.'
                                 % (drive['name'], exc))
            except (KeyError, ValueError, LookupError) as exc:
                module.fail_json(msg='Drive %s: unknown generation %r (%s); give native_capacity_gb.'
                                 % (drive['name'], drive['generation'], exc))
        try:
            hba = drive['hba_max_transfer_bytes'] or module.params['hba_max_transfer_bytes']
            rec = recommend_device(capacity, hba, module.params['max_block_kb'])
        except OmnircError as exc:
            module.fail_json(msg='Drive %s: %s' % (drive['name'], exc))
        rec['name'] = drive['name']
        devices.append(rec)
    module.exit_json(changed=False, devices=devices)


if __name__ == '__main__':
    main()
