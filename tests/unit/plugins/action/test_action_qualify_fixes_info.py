# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The qualify_fixes_info action through run(): a recorded run's fixes as the roles' variables.

On the recorded lab runs in tests/unit/fixtures/lab_runs/ (README.md there), laid out as the qualify
playbook leaves them. _judge/_fixes.py's table is tested in test_fixes.py; here the action's task: the
host from inventory_hostname, its message, and failures without a traceback.
"""

from __future__ import annotations

import os
import shutil

from ansible_collections.tapeops.qualify.plugins.action import qualify_fixes_info

from action_harness import LAB_RUN_1123, LAB_RUN_V2, run_action


def lay_out(run, target, hosts=('lab-ma1', 'lab-ma2', 'lab-ma3')):
    os.makedirs(os.path.join(target, 'hosts'))
    for host in hosts:
        shutil.copy(os.path.join(run, '%s.json' % host), os.path.join(target, 'hosts'))
    return target


def test_the_first_runs_block_size_goes_to_st_tuning(tmp_path):
    """lab-ma1 of 20261123-quick: 64 KiB blocks (its first fix there), the RAM by hand."""
    run_dir = lay_out(LAB_RUN_1123, str(tmp_path))
    failed, result = run_action(qualify_fixes_info, {'run_dir': run_dir}, {'inventory_hostname': 'lab-ma1'})
    assert not failed and result['changed'] is False and result['skipped'] is False
    assert result['roles'] == {'st_tuning': {'st_tuning_block_size': 65536, 'st_tuning_devices': ['/dev/nst0'],
                                             'st_tuning_fail_on_preflight': True, 'st_tuning_max_sg_segs': None}}
    assert [m['id'] for m in result['manual']] == ['block_size', 'memory']
    assert result['msg'] == (
        'lab-ma1: /dev/nst0: Use 64 KiB tape blocks -> st_tuning st_tuning_block_size = 65536 (checks st_tuning '
        'checks that each drive\'s HBA path carries it (st_tuning_fail_on_preflight) and keeps the drives in '
        'variable-block mode (its st options)); 2 fix(es) left to do by hand.')


def test_the_v2_runs_shoe_shining_host_has_only_fixes_by_hand(tmp_path):
    run_dir = lay_out(LAB_RUN_V2, str(tmp_path))
    failed, result = run_action(qualify_fixes_info, {'run_dir': run_dir, 'host': 'lab-ma3'})
    assert not failed and result['roles'] == {}
    assert [m['id'] for m in result['manual']] == ['drive_path', 'staging', 'memory']
    assert result['msg'] == 'lab-ma3: no fix a role applies; 3 fix(es) left to do by hand.'


def test_a_host_not_in_the_run_is_skipped_with_the_reason(tmp_path):
    run_dir = lay_out(LAB_RUN_V2, str(tmp_path), hosts=('lab-ma1',))
    failed, result = run_action(qualify_fixes_info, {'run_dir': run_dir}, {'inventory_hostname': 'lab-ma2'})
    assert not failed and result['skipped'] is True
    assert result['msg'] == ('Skipped: %s has no document for lab-ma2 (%s/hosts/lab-ma2.json): the host was not in '
                             'that run or did not get that far; qualify it first (-l lab-ma2).' % (run_dir, run_dir))


def test_a_run_dir_that_does_not_exist_and_missing_arguments_fail(tmp_path):
    failed, result = run_action(qualify_fixes_info, {'run_dir': str(tmp_path / 'nope')})
    assert failed and result['msg'] == (
        'The run directory %s/nope does not exist: give a directory the qualify playbook wrote, e.g. '
        '-e qualify_run_dir=reports/20261123T195725Z (it holds hosts/<host>.json).' % tmp_path)
    assert run_action(qualify_fixes_info, {}) == (True, {'failed': True, 'msg': 'missing required arguments: run_dir'})


def test_a_run_judged_for_other_software_fails(tmp_path):
    run_dir = str(tmp_path)
    os.makedirs(os.path.join(run_dir, 'hosts'))
    with open(os.path.join(LAB_RUN_V2, 'lab-ma1.json'), encoding='utf-8') as handle:
        text = handle.read()
    # the same document, judged for a Bareos host (facts.backup.software is what the run was told)
    assert '"facts": {' in text
    with open(os.path.join(run_dir, 'hosts', 'lab-ma1.json'), 'w', encoding='utf-8') as handle:
        handle.write(text.replace('"facts": {', '"facts": {"backup": {"software": "bareos"}, ', 1))
    failed, result = run_action(qualify_fixes_info, {'run_dir': run_dir, 'software': 'data_protector'},
                                {'inventory_hostname': 'lab-ma1'})
    assert failed and result['msg'].startswith(
        'The run judged lab-ma1 as a bareos host but the inventory now says data_protector')
