# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The qualify_verdict action given the tape_drive_lock task's registered result (roles/qualify/tasks/verdict.yml
passes it as ``locks``): a busy drive is BUSY in the result and the document. Measurements: the recorded
lab-ma1 run (tests/unit/fixtures/lab_runs/20261124-quick-v2)."""

from __future__ import annotations

from ansible_collections.tapeops.qualify.plugins.action import qualify_verdict

from action_harness import LAB_RUN_V2, recorded, run_action

HOLDER = {'run_id': '20261126T120000Z', 'controller': 'ctl-a', 'controller_pid': 4242,
          'started': '2026-11-26T12:00:05+00:00', 'expires': '2026-11-26T15:00:05+00:00'}


def busy_lock(device='/dev/nst0'):
    return {'device': device, 'address': '0:0:1:0', 'state': 'busy', 'reason': 'locked', 'holder': HOLDER,
            'users': [], 'replaced': None, 'lease_path': '/run/tapeops-qualify/drive-0_0_1_0.json'}


def test_the_verdict_action_takes_the_lock_task_as_registered(tmp_path):
    doc = recorded(LAB_RUN_V2, 'lab-ma1')
    drive = doc['drives'][0]
    args = {'report_dir': str(tmp_path), 'drives': [drive['identity']], 'source': doc['source'],
            'write_sweep': [], 'drive_settings': [dict(drive['settings'], nst=drive['nst'])],
            'memory_total_mb': doc['facts']['memory_total_mb'], 'host_facts': doc['facts'],
            'preflight': doc['preflight'], 'run': doc['run'],
            'locks': {'changed': True, 'locks': [busy_lock()], 'busy': ['/dev/nst0'],
                      'invocation': {'module_args': {}}}}
    failed, result = run_action(qualify_verdict, args, {'inventory_hostname': 'lab-ma1'})
    assert not failed and result['verdicts'] == [] and result['status'] == 'failed'
    assert result['busy'] == [{'id': '/dev/nst0', 'reason': 'locked'}]
    assert result['drive_errors'][0]['error'].startswith('BUSY: /dev/nst0')
    with open(result['path'], encoding='utf-8') as handle:
        assert '"reason": "locked"' in handle.read()


def test_locks_that_are_not_busy_change_nothing(tmp_path):
    doc = recorded(LAB_RUN_V2, 'lab-ma1')
    drive = doc['drives'][0]
    taken = dict(busy_lock(), state='taken', reason=None)
    args = {'report_dir': str(tmp_path), 'drives': [drive['identity']], 'source': doc['source'],
            'write_sweep': [drive['write_sweep']], 'drive_settings': [dict(drive['settings'], nst=drive['nst'])],
            'memory_total_mb': doc['facts']['memory_total_mb'], 'host_facts': doc['facts'],
            'preflight': doc['preflight'], 'run': doc['run'], 'locks': {'locks': [taken]}}
    failed, result = run_action(qualify_verdict, args, {'inventory_hostname': 'lab-ma1'})
    assert not failed and result['busy'] == [] and [v['class'] for v in result['verdicts']] == ['STREAMING']
