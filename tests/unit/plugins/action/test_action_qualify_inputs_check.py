# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The qualify_inputs_check action: run() as the qualify role's run entry point calls it, before any host is measured.

The directories are real (tmp_path); the earlier runs are the recorded lab runs of
tests/unit/fixtures/lab_runs/ laid out as the playbook leaves them, then damaged as the issue found them
(a truncated document, one of another schema version).
"""

from __future__ import annotations

import json
import os

from ansible_collections.tapeops.qualify.plugins.action import qualify_inputs_check

from action_harness import LAB_RUN_V2, recorded, run_action

HOSTS = ('lab-ma1', 'lab-ma2', 'lab-ma3')


def earlier_run(path):
    os.makedirs(os.path.join(path, 'hosts'))
    for host in HOSTS:
        with open(os.path.join(path, 'hosts', host + '.json'), 'w', encoding='utf-8') as handle:
            json.dump(recorded(LAB_RUN_V2, host), handle)
    return path


def test_good_inputs_pass_and_nothing_is_created(tmp_path):
    earlier = earlier_run(str(tmp_path / 'earlier'))
    hostvars = {'lab-ma1': {'tapeops_backup': {'software': 'bacula', 'block_size_bytes': 262144},
                            'tapeops_drives': [{'nst': '/dev/nst0', 'block_size_bytes': 1048576}]},
                'lab-ma2': {'ansible_host': 'ma2'}}
    failed, result = run_action(qualify_inputs_check, {
        'profile_overrides': {'source_seconds': 60, 'block_sizes': ['256K', '1M']}, 'hosts': ['lab-ma1', 'lab-ma2'],
        'settings': {'qualify_tool_timeout': 60, 'qualify_write_timeout': ''},
        'report_base': str(tmp_path / 'reports'), 'compare_to': earlier},
        {'inventory_hostname': 'lab-ma1', 'hostvars': hostvars})
    assert not failed, result
    assert result['changed'] is False and result['hosts_checked'] == 2
    assert result['checked'] == ['qualify_profile_overrides', 'tapeops_backup', 'tapeops_drives',
                                 'qualify_tool_timeout', 'qualify_write_timeout', 'qualify_report_base',
                                 'qualify_compare_to']
    assert not (tmp_path / 'reports').exists()


def test_every_problem_is_listed_at_once(tmp_path):
    blocker = tmp_path / 'file'
    blocker.write_text('')
    failed, result = run_action(qualify_inputs_check, {
        'profile_overrides': {'source_secs': 60, 'poll_seconds': 0}, 'hosts': ['lab-ma1', 'lab-ma2'],
        'run_dir': str(blocker)}, {'hostvars': {'lab-ma1': {'tapeops_backup': {'block_size_bytes': '256K'}},
                                                'lab-ma2': {'tapeops_backup': {'block_size_bytes': 262144}}}})
    assert failed
    assert result['msg'] == (
        '4 input(s) to fix before any host is measured: (1) qualify_profile_overrides.poll_seconds is 0: write a '
        'whole number of seconds from 1 to 600, for example poll_seconds: 10. (2) qualify_profile_overrides.'
        'source_secs is not a profile key: did you mean source_seconds? (3) tapeops_backup.block_size_bytes is '
        '"256K": write the block size in bytes, 262144 (host lab-ma1). (4) qualify_run_dir=%s is a file, not a '
        'directory: name a directory (a missing one is created).' % blocker)


def test_an_earlier_variable_name_is_refused_wherever_it_is_set(tmp_path):
    """An extra or play variable (the task's own variables) and one host's inventory variable."""
    failed, result = run_action(qualify_inputs_check, {
        'hosts': ['lab-ma1', 'lab-ma2'], 'report_base': str(tmp_path)}, {
        'inventory_hostname': 'lab-ma1', 'qualify_fail_on': ['SHOE-SHINING'],
        'hostvars': {'lab-ma1': {'qualify_fail_on': ['SHOE-SHINING']}, 'lab-ma2': {'target_drives': 2}}})
    assert failed
    assert result['msg'] == (
        '2 input(s) to fix before any host is measured: (1) qualify_fail_on is set, but the qualify role does not '
        'read it: write qualify_failing_classes instead. (2) target_drives is set, but the qualify role does not '
        'read it: write qualify_target_drives instead.')
    failed, result = run_action(qualify_inputs_check, {'hosts': ['lab-ma1'], 'report_base': str(tmp_path)},
                                {'qualify_failing_classes': ['SHOE-SHINING'], 'hostvars': {'lab-ma1': {}}})
    assert not failed, result


def test_a_report_base_that_is_a_file_is_refused_by_its_name(tmp_path):
    blocker = tmp_path / 'reports'
    blocker.write_text('')
    failed, result = run_action(qualify_inputs_check, {'report_base': str(blocker)})
    assert failed and result['msg'] == (
        '1 input(s) to fix before any host is measured: (1) qualify_report_base=%s is a file, not a directory: '
        'name a directory (a missing one is created).' % blocker)
    assert 'qualify_report_dir' not in result['msg']


def test_a_truncated_earlier_run_is_refused_before_the_run(tmp_path):
    earlier = earlier_run(str(tmp_path / 'earlier'))
    path = os.path.join(earlier, 'hosts', 'lab-ma3.json')
    with open(path, encoding='utf-8') as handle:
        text = handle.read()
    with open(path, 'w', encoding='utf-8') as handle:
        handle.write(text[:len(text) // 2])
    failed, result = run_action(qualify_inputs_check, {'report_base': str(tmp_path), 'compare_to': earlier})
    assert failed
    assert result['msg'] == (
        '1 input(s) to fix before any host is measured: (1) qualify_compare_to=%s is refused as a comparison: 1 of '
        'its 3 host document(s) cannot be read, so the drives on them could not be compared (%s cannot be read as '
        'JSON (truncated or damaged)). Give an earlier run whose documents are whole, or leave qualify_compare_to '
        'unset.' % (earlier, path))
    assert 'Expecting' not in result['msg'] and 'line 1 column' not in result['msg']


def test_an_earlier_run_of_another_schema_is_refused(tmp_path):
    earlier = earlier_run(str(tmp_path / 'earlier'))
    doc = recorded(LAB_RUN_V2, 'lab-ma1')
    doc['schema_version'] = 3
    with open(os.path.join(earlier, 'hosts', 'lab-ma1.json'), 'w', encoding='utf-8') as handle:
        json.dump(doc, handle)
    failed, result = run_action(qualify_inputs_check, {'report_base': str(tmp_path), 'compare_to': earlier})
    assert failed and 'qualify_compare_to=%s is refused as a comparison' % earlier in result['msg']
    assert 'lab-ma1.json has schema version 3, but this collection reads schema_version 2' in result['msg']
    # the layout before version 2 (a verdict in each drive entry, host_facts) is refused as any other schema
    with open(os.path.join(earlier, 'hosts', 'lab-ma1.json'), 'w', encoding='utf-8') as handle:
        json.dump({'schema': 'tapeops.qualify/host-report/v1', 'host': 'lab-ma1', 'status': 'ok', 'host_facts': {},
                   'drives': [{'id': '/dev/nst0', 'nst': '/dev/nst0', 'verdict': {'class': 'STREAMING'}}]}, handle)
    failed, result = run_action(qualify_inputs_check, {'report_base': str(tmp_path), 'compare_to': earlier})
    assert failed and 'qualify_compare_to=%s is refused as a comparison' % earlier in result['msg']
    assert ("lab-ma1.json has schema version 'tapeops.qualify/host-report/v1', but this collection reads "
            "schema_version 2: write it again with this collection (re-run the host)") in result['msg']


def test_a_missing_earlier_run_and_the_runs_own_directory_are_refused(tmp_path):
    failed, result = run_action(qualify_inputs_check, {'report_base': str(tmp_path),
                                                       'compare_to': str(tmp_path / 'nope')})
    assert failed and result['msg'] == (
        '1 input(s) to fix before any host is measured: (1) qualify_compare_to=%s/nope is not a run directory: give '
        'the directory of an earlier run (it holds hosts/<host>.json), e.g. reports/20261123T101500Z.' % tmp_path)
    run_dir = earlier_run(str(tmp_path / 'run'))
    failed, result = run_action(qualify_inputs_check, {'run_dir': run_dir, 'compare_to': run_dir})
    assert failed and "qualify_compare_to is this run's own directory (%s): give an earlier run." % run_dir \
        in result['msg']


def test_a_rebuild_needs_an_earlier_run(tmp_path):
    failed, result = run_action(qualify_inputs_check, {'report_only': True, 'report_base': str(tmp_path)})
    assert failed and 'qualify_report_only is true but qualify_run_dir is not set' in result['msg']
    failed, result = run_action(qualify_inputs_check, {'report_only': True, 'run_dir': str(tmp_path)})
    assert failed and 'qualify_run_dir=%s holds no host results (hosts/*.json)' % tmp_path in result['msg']
    failed, result = run_action(qualify_inputs_check, {'report_only': True,
                                                       'run_dir': earlier_run(str(tmp_path / 'run'))})
    assert not failed, result


def test_check_mode_checks_the_same(tmp_path):
    failed, result = run_action(qualify_inputs_check, {'profile_overrides': {'step_mb': -1},
                                                       'report_base': str(tmp_path)}, check_mode=True)
    assert failed and 'qualify_profile_overrides.step_mb is -1' in result['msg']
