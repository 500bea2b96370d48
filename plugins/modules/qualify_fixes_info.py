#!/usr/bin/python
# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: qualify_fixes_info
short_description: Turn a qualify run's verdicts for a host into the variables of the roles that apply them
version_added: 0.1.0
description:
  - Runs on the controller (action plugin). Reads the host's document (C(hosts/<host>.json)) from the run
    directory M(tapeops.qualify.qualify_verdict) wrote and maps each fix of its verdicts to a role variable
    through one table (C(plugins/module_utils/_judge/_fixes.py), described in C(docs/roles.md)) - C(block_size)
    to C(st_tuning_block_size) (checked against each HBA path), Bacula/Bareos C(bacula_sd_maximum_block_size),
    NetBackup C(netbackup_buffers_size_data_buffers) (SIZE_DATA_BUFFERS) or the Data Protector device's block
    size in C(dp_omnirc_drives); C(immediate_filemarks) to
    C(dp_omnirc_immediate_filemarks); C(segment_size) to C(bacula_sd_maximum_file_size) or the Data Protector
    device's segment size in C(dp_omnirc_drives).
  - Fixes no role applies (C(streams), C(staging), C(drive_path), C(memory), Data Protector device settings
    that live on the Cell Manager, and anything for backup software the run did not name) are returned in
    RV(manual) with the verdict's words.
  - A fix the host's backup software cannot take (immediate file marks on Bacula, Bareos, NetBackup or Amanda,
    more streams on Amanda), or an application's own setting (immediate file marks, segment size) of a host whose
    backup application is unset or not known, is not offered at all; it is in RV(ignored) with the reason. Such a
    host's block size fix goes to C(st_tuning), as for any application.
  - A host without a document in the run, or whose document records a failed run, is skipped with the reason.
  - The C(tapeops.qualify.apply_fixes) playbook calls it before the roles.
author:
  - tapeops.qualify contributors (@tapeops)
extends_documentation_fragment:
  - tapeops.qualify._attributes
  - tapeops.qualify._attributes.action_plugin
  - tapeops.qualify._attributes.info_module
  - tapeops.qualify._qualify_run
options:
  host:
    description: The host whose fixes to read; default the inventory host the task runs for.
    type: str
  software:
    description:
      - The backup software of the host (C(tapeops_backup.software) of the inventory), used when the run did not
        record one. A run that recorded another one is an error (its fixes are worded for that software).
    type: str
seealso:
  - module: tapeops.qualify.qualify_verdict
'''

EXAMPLES = r'''
- name: Read this host's fixes from a run
  tapeops.qualify.qualify_fixes_info:
    run_dir: reports/20261123T195725Z
    software: "{{ tapeops_backup.software | default(omit) }}"
  register: fixes
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
software:
  description: The backup software the fixes are mapped for (the run's, else O(software)); null when unknown.
  returned: when not skipped
  type: str
roles:
  description:
    - The roles to run, in the order to run them (C(st_tuning), C(dp_omnirc), C(bacula_sd),
      C(netbackup_buffers)), each with the
      variables to give it. Variables without a fix have the value that leaves the setting as it is.
  returned: when not skipped
  type: dict
  sample: {"st_tuning": {"st_tuning_block_size": 65536, "st_tuning_devices": ["/dev/nst0"],
                         "st_tuning_fail_on_preflight": true},
           "bacula_sd": {"bacula_sd_flavor": "bacula", "bacula_sd_maximum_block_size": 65536,
                         "bacula_sd_maximum_file_size": "17000MB"}}
fixes:
  description:
    - Every fix of the host's verdicts, in the verdict's order, with C(drive), C(id), C(title), C(value),
      C(setting), C(why), C(applied_by) (list of C(role), C(variable), C(value), C(effect) - C(sets),
      C(checks) or C(recommends) - and C(what)), C(by_hand) and C(note).
  returned: when not skipped
  type: list
  elements: dict
applied:
  description: One line per fix and role variable it goes to (drive, fix, role, variable, value, what it does).
  returned: when not skipped
  type: list
  elements: str
manual:
  description: The fixes left to do by hand (no role sets them), each with C(drive), C(id) and C(text).
  returned: when not skipped
  type: list
  elements: dict
ignored:
  description:
    - Verdicts whose fixes are not applied (what-if verdicts for a drive not installed) and fixes the backup software
      cannot take (with their C(id)), each with the C(drive) and the reason.
  returned: when not skipped
  type: list
  elements: dict
'''
