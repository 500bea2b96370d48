#!/usr/bin/python
# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: qualify_inputs_check
short_description: Check every input of a qualify run on the controller before any host is measured
version_added: 0.1.0
description:
  - Runs on the controller (action plugin) and changes nothing. The qualify role's run entry point calls it
    once, first, so that an input that would fail a run later, run it without a limit, or be silently ignored
    fails the run before any host is measured.
  - Fails listing every problem found, each naming the variable as it was written (with the hosts it is set
    on for host variables) and saying what to write instead.
  - Also fails when one of the role's variables is set under an earlier name (C(qualify_fail_on),
    C(qualify_fail_on_shoe_shining), C(target_generation) and the other C(target_*), C(upgrade_mechanics),
    C(upgrade_mechanics_repeats)), for the task's host or any of O(hosts), naming the variable to write instead.
  - The bounds are documented in roles/qualify/README.md ("Checked before the run").
author:
  - tapeops.qualify contributors (@tapeops)
extends_documentation_fragment:
  - tapeops.qualify._attributes
  - tapeops.qualify._attributes.info_module
  - tapeops.qualify._attributes.action_plugin
attributes:
  idempotent:
    description: When run twice with the same parameters, the second run changes nothing.
    support: full
    details:
      - It only reads (directories are stat'ed, an earlier run's documents read); nothing is created.
options:
  profile_overrides:
    description:
      - The role's C(qualify_profile_overrides). Only profile keys (a misspelt key is refused, naming the
        nearest one); whole numbers within their bounds (seconds from 1 to 3600 per step, sizes in MB from 1),
        the sweep's block sizes as the backup's (below, V(256K) and V(1M) allowed), data patterns C(zeros),
        C(random) or a ratio from C(1:1) to C(50:1), booleans for C(read_back) and C(mechanics).
    type: raw
  hosts:
    description:
      - The hosts whose own C(tapeops_backup) and C(tapeops_drives) (host and group variables, from C(hostvars))
        are checked; the role passes every host of the play.
      - Known keys only. Block sizes (C(block_size_bytes)) are whole numbers of bytes, multiples of 4 from 4096
        (4 KiB) to 16777216 (16 MiB); a size with a suffix (V(256K)) is refused, naming its bytes.
    type: list
    elements: str
    default: []
  settings:
    description:
      - The role's numeric variables to range-check, C({variable - value}) (C(qualify_tool_timeout),
        C(qualify_write_timeout), C(qualify_mechanics_timeout), C(qualify_target_drives),
        C(qualify_media_drives_kept), C(qualify_media_fill_fraction), C(qualify_observe_seconds),
        C(qualify_observe_until_idle)).
    type: dict
    default: {}
  run_dir:
    description:
      - The role's C(qualify_run_dir). An existing directory this user can write to, or one that can be created
        (its nearest existing parent a writable directory); a file is refused.
    type: path
  report_base:
    description: The role's C(qualify_report_base), checked as O(run_dir) when O(run_dir) is not set.
    type: path
  report_only:
    description: The role's C(qualify_report_only); O(run_dir) must then be an earlier run (it holds C(hosts/)).
    type: bool
    default: false
  compare_to:
    description:
      - The role's C(qualify_compare_to). An earlier run's directory whose every host document can be read and is
        of a schema this collection reads; not the run's own directory.
    type: path
  tape_ratio_from:
    description:
      - The role's C(qualify_tape_ratio_from). A file is refused; a directory that does not exist is not (each
        verdict then says why its drive's observed ratio was not used).
    type: path
seealso:
  - module: tapeops.qualify.qualify_report
'''

EXAMPLES = r'''
- name: Check every input before any host is measured
  run_once: true
  tapeops.qualify.qualify_inputs_check:
    profile_overrides: "{{ qualify_profile_overrides }}"
    hosts: "{{ ansible_play_hosts_all }}"
    run_dir: "{{ qualify_run_dir | default(omit, true) }}"
    report_base: "{{ qualify_report_base }}"
    compare_to: "{{ qualify_compare_to | default(omit, true) }}"
'''

RETURN = r'''
checked:
  description: The variables checked.
  returned: success
  type: list
  elements: str
  sample: [qualify_profile_overrides, tapeops_backup, tapeops_drives, qualify_report_base]
hosts_checked:
  description: How many hosts' settings were checked.
  returned: success
  type: int
  sample: 3
'''
