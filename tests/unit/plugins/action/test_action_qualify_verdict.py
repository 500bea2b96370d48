# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The qualify_verdict action's main path: run() on the recorded module results of the lab runs.

Inputs are the recorded lab runs in tests/unit/fixtures/lab_runs/ (their README.md: command, lab spread,
commit): tests/unit/fixtures/verdict_args/20261123-quick holds each host's module results as Ansible handed
them to the action in the first (async_status output with ``ansible_job_id``, ``results_file``,
``stdout_lines``, loop ``item``), and the runs' host documents the records the action keeps of them. The action is run as the qualify role's task
runs it (its arguments named as in roles/qualify/tasks/), and the verdicts it writes are pinned to the
ones the recorded run wrote (the READMEs' tables).
"""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.tapeops.qualify.plugins.action import qualify_verdict

from action_harness import LAB_RUN_V2, VERDICT_ARGS, recorded, run_action

HOSTS = ('lab-ma1', 'lab-ma2', 'lab-ma3')


def task_args(doc, report_dir):
    """The action's arguments from a recorded host document: the records of what the modules returned."""
    facts = doc['facts']
    drives = doc['drives']
    return {
        'report_dir': report_dir,
        'drives': [d['identity'] for d in drives],                          # tape_drive_info's drives
        'source': doc['source'],                                            # source_read_benchmark via async_status
        'write_sweep': [d['write_sweep'] for d in drives],
        'drive_settings': [dict(d['settings'], nst=d['nst']) for d in drives],   # tapeops_drives
        'memory_total_mb': facts['memory_total_mb'],
        'host_facts': facts,
        'preflight': doc['preflight'],
        'run': doc['run'],
    }


# class and numbers per host of 20261123-quick (its README, "Verdict numbers"): feed now, sustained and mean
# source, floor / full, drive path, back-hitches an hour
VERDICTS_1123 = {
    'lab-ma1': ('STREAMING', 7.1, 13.2, 153.0, 2.0, 7.1, 8.0, 0.0),
    'lab-ma2': ('SPEED-MATCHED', 19.8, 18.7, 19.8, 13.7, 40.6, 34.1, 0.0),
    'lab-ma3': ('SHOE-SHINING', 3.0, 2.8, 3.0, 11.4, 36.5, 30.5, 234.48),
}
NUMBERS = ('feed_now_mb_s', 'source_sustained_mb_s', 'source_mean_mb_s', 'need_floor_mb_s', 'need_full_mb_s',
           'drive_path_mb_s', 'backhitches_per_hour_now')


@pytest.mark.parametrize('host', HOSTS)
def test_ansibles_recorded_async_output_gives_the_recorded_verdict(tmp_path, host):
    args = dict(recorded(VERDICT_ARGS, host), report_dir=str(tmp_path))
    assert 'ansible_job_id' in args['write_sweep'][0]     # Ansible's transport, as handed over
    failed, result = run_action(qualify_verdict, args, {'inventory_hostname': host})
    assert not failed and result['changed'] is True
    [verdict] = result['verdicts']
    expected = VERDICTS_1123[host]
    assert (verdict['id'], verdict['class']) == ('/dev/nst0', expected[0])
    assert tuple(verdict['numbers'][k] for k in NUMBERS) == expected[1:]
    assert result['worst_class'] == expected[0] and result['status'] == 'ok' and result['drive_errors'] == []
    assert result['path'] == str(tmp_path / 'hosts' / ('%s.json' % host))
    assert result['msg'] == '/dev/nst0: %s' % verdict['summary']
    # the document written holds records only: no transport key anywhere in it
    with open(result['path'], encoding='utf-8') as handle:
        written = json.load(handle)
    assert written['schema_version'] == 2 and written['verdicts'][0]['class'] == expected[0]
    # the result is the document's verdict but the forecast's trace (the chart's points), which the document keeps
    kept = written['verdicts'][0]
    assert len(kept['forecast']['trace']) > 100 and 'trace' not in verdict['forecast']
    assert dict(verdict, forecast=dict(verdict['forecast'], trace=kept['forecast']['trace'])) == dict(
        kept, id='/dev/nst0')
    text = json.dumps(written)
    for key in ('ansible_job_id', 'results_file', 'stdout_lines', 'invocation'):
        assert '"%s"' % key not in text


@pytest.mark.parametrize('host', HOSTS)
def test_the_v2_runs_records_give_the_document_the_run_wrote(tmp_path, host, recorded_lab_run):
    """The same records judged again write the recorded document, all but its time stamp (and the drive
    model's sync_mark_s, which the run predates: tests/unit/conftest.py)."""
    doc = recorded_lab_run.doc(recorded(LAB_RUN_V2, host))
    failed, result = run_action(qualify_verdict, task_args(doc, str(tmp_path)), {'inventory_hostname': host})
    assert not failed
    with open(result['path'], encoding='utf-8') as handle:
        written = json.load(handle)
    assert written.pop('generated_at') != doc.pop('generated_at')
    # the run predates the verdict judging an application it does not know (none was set) without that
    # application's settings: one reason names it, and the forecast with the setting fixes keeps its synchronous
    # file marks where the run's assumed immediate ones (no marks were modelled: the classes and rates are the same)
    for verdict, then in zip(written['verdicts'], doc['verdicts']):
        said = [r for r in verdict['reasons'] if r.startswith('Backup application not known')]
        assert len(said) == 1
        verdict['reasons'].remove(said[0])
        fixed, fixed_then = verdict['forecast']['after_setting_fixes'], then['forecast']['after_setting_fixes']
        assert (fixed['inputs']['filemark_mode'], fixed_then['inputs']['filemark_mode']) == ('sync', 'immediate')
        assert fixed['inputs']['segment_size_mb'] is None and fixed['filemarks'] == fixed_then['filemarks'] == 0
        fixed['inputs'].update((k, fixed_then['inputs'][k]) for k in ('filemark_mode', 'filemark_seconds'))
    # the run predates the drives' health: judged now from the log pages it recorded (the lab drive's TapeAlert page
    # read, no flag set), the rest as written
    assert [d.pop('health')['status'] for d in written['drives']] == ['OK']
    assert recorded_lab_run.strip(written) == recorded_lab_run.strip(doc)
    # the README's table: lab-ma2 SPEED-MATCHED at 15.6 MB/s (floor 13.7), lab-ma3 232.51 back-hitches an hour
    assert [v['class'] for v in result['verdicts']] == [VERDICTS_1123[host][0]]


def test_check_mode_judges_and_writes_nothing(tmp_path):
    doc = recorded(LAB_RUN_V2, 'lab-ma3')
    failed, result = run_action(qualify_verdict, task_args(doc, str(tmp_path)), {'inventory_hostname': 'lab-ma3'},
                                check_mode=True)
    assert not failed and result['changed'] is False
    assert result['worst_class'] == 'SHOE-SHINING'
    assert result['verdicts'][0]['numbers']['backhitches_per_hour_now'] == 232.51
    assert result['msg'] == 'Check mode: would write %s/hosts/lab-ma3.json.' % tmp_path
    assert os.listdir(str(tmp_path)) == []


def test_a_failed_host_is_recorded_with_its_error(tmp_path):
    error = 'Discover tape drives and changers failed: no st driver'
    failed, result = run_action(qualify_verdict, {'report_dir': str(tmp_path), 'status': 'failed', 'error': error},
                                {'inventory_hostname': 'lab-ma4'})
    assert not failed and result['changed'] is True
    assert result['status'] == 'failed' and result['verdicts'] == [] and result['msg'] == error
    with open(str(tmp_path / 'hosts' / 'lab-ma4.json'), encoding='utf-8') as handle:
        written = json.load(handle)
    assert (written['status'], written['error'], written['host']) == ('failed', error, 'lab-ma4')


def test_a_drive_it_cannot_name_is_a_drive_error_not_a_traceback(tmp_path):
    # an INQUIRY the model does not know and no cartridge: the resolver's message, per drive
    failed, result = run_action(qualify_verdict, {'report_dir': str(tmp_path), 'drives': [
        {'nst': '/dev/nst0', 'vendor': 'QUANTUM', 'product': 'DLT-S4'}]}, check_mode=True)
    assert not failed and result['status'] == 'failed'
    [drive_error] = result['drive_errors']
    assert drive_error['id'] == '/dev/nst0'
    assert drive_error['error'].startswith('Cannot tell the LTO generation of /dev/nst0: ')
    assert drive_error['error'].endswith('set generation (e.g. "LTO-7") for it in tapeops_drives in the inventory.')


def test_missing_and_wrong_arguments_fail_with_ansibles_message(tmp_path):
    assert run_action(qualify_verdict, {}) == (True, {'failed': True, 'msg': 'missing required arguments: report_dir'})
    failed, result = run_action(qualify_verdict, {'report_dir': str(tmp_path), 'status': 'maybe'})
    assert failed and result['msg'] == 'value of status must be one of: ok, failed, got: maybe'
    failed, result = run_action(qualify_verdict, {'report_dir': str(tmp_path), 'verdict': 'STREAMING'})
    assert failed and result['msg'].startswith(
        'Unsupported parameters for (tapeops.qualify.qualify_verdict) module: verdict. Supported parameters include:')
    assert os.listdir(str(tmp_path)) == []


def test_a_report_dir_it_cannot_write_fails_saying_so(tmp_path):
    blocker = tmp_path / 'file'
    blocker.write_text('not a directory')
    doc = recorded(LAB_RUN_V2, 'lab-ma1')
    failed, result = run_action(qualify_verdict, task_args(doc, str(blocker / 'run')),
                                {'inventory_hostname': 'lab-ma1'})
    # the system's reason and the role's real variables (there is no qualify_report_dir); no exception text
    assert failed and result['msg'] == (
        'Cannot write %s/run/hosts/lab-ma1.json: Not a directory. Set qualify_run_dir to a directory this user can '
        'write to (or qualify_report_base, the directory each new run directory is made in).' % blocker)
