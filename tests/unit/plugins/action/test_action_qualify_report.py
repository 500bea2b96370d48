# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The qualify_report action's main path: run() on the recorded lab runs' run directories.

A run directory is laid out as the qualify playbook leaves it (<run>/hosts/<host>.json) from the recorded
lab runs in tests/unit/fixtures/lab_runs/ (README.md there): 20261124-quick-v2 and 20261123-quick, the
run of the day before. The recorded runs hold the host documents, not the
rendered reports, so the reports are checked against the documents: each drive's class and numbers in
summary.md's table and in junit.xml are the recorded verdict's (the READMEs' tables), each summary the
recorded verdict's words.
"""

from __future__ import annotations

import json
import os
import shutil
import xml.etree.ElementTree as ET

import pytest

from ansible_collections.tapeops.qualify.plugins.action import qualify_report

from action_harness import LAB_RUN_1123, LAB_RUN_V2, recorded, run_action

HOSTS = ('lab-ma1', 'lab-ma2', 'lab-ma3')
CLASSES = {'lab-ma1': 'STREAMING', 'lab-ma2': 'SPEED-MATCHED', 'lab-ma3': 'SHOE-SHINING'}


def lay_out(run, target):
    """The recorded run as the qualify playbook leaves it: <target>/hosts/<host>.json."""
    os.makedirs(os.path.join(target, 'hosts'))
    for host in HOSTS:
        shutil.copy(os.path.join(run, '%s.json' % host), os.path.join(target, 'hosts'))
    return target


@pytest.fixture(scope='module')
def v2_report(tmp_path_factory):
    run_dir = lay_out(LAB_RUN_V2, str(tmp_path_factory.mktemp('v2')))
    failed, result = run_action(qualify_report, {'report_dir': run_dir, 'expected_hosts': list(HOSTS) + ['lab-ma4']})
    return run_dir, failed, result


def test_the_result_names_each_drive_with_the_recorded_verdict(v2_report):
    run_dir, failed, result = v2_report
    assert not failed and result['changed'] is True
    summaries = dict((h, recorded(LAB_RUN_V2, h)['verdicts'][0]['summary']) for h in HOSTS)
    assert result['fleet'] == [
        {'host': h, 'drive': '/dev/nst0', 'label': label, 'class': CLASSES[h], 'status': 'ok', 'summary': summaries[h]}
        for h, label in (('lab-ma1', 'LTO-5'), ('lab-ma2', 'LTO-6'), ('lab-ma3', 'LTO-8 FH'))] + [
        {'host': 'lab-ma4', 'drive': None, 'label': None, 'class': None, 'status': 'missing',
         'summary': 'No result: the host was unreachable or failed before its verdict (see the play output); '
                    're-run with -l lab-ma4.'}]
    assert result['failing'] == [{'host': 'lab-ma3', 'drive': '/dev/nst0', 'class': 'SHOE-SHINING',
                                  'summary': summaries['lab-ma3']}]
    assert result['missing'] == ['lab-ma4'] and result['regressions'] == []
    assert result['msg'] == ('Reports in %s. lab-ma1 /dev/nst0: STREAMING; lab-ma2 /dev/nst0: SPEED-MATCHED; '
                             'lab-ma3 /dev/nst0: SHOE-SHINING; lab-ma4 -: MISSING' % run_dir)
    assert result['paths']['markdown'] == os.path.join(run_dir, 'summary.md')
    assert sorted(os.listdir(run_dir)) == ['hosts', 'junit.xml', 'report.html', 'summary.md']
    assert sorted(os.listdir(os.path.join(run_dir, 'hosts'))) == sorted(
        ['%s.%s' % (h, ext) for h in HOSTS for ext in ('html', 'json')])


def test_summary_md_has_the_recorded_numbers(v2_report):
    run_dir = v2_report[0]
    with open(os.path.join(run_dir, 'summary.md'), encoding='utf-8') as handle:
        markdown = handle.read()
    # 20261124-quick-v2/README.md: sustained / mean, floor / full, drive path, feed now per host
    assert ('| lab-ma1 | /dev/nst0 (LTO-5) | **STREAMING** | 1.9 / 80.0 | 2.0 / 7.1 | 7.4 | 7.1 | '
            'Give the host at least 1024 MB of RAM |') in markdown
    assert ('| lab-ma2 | /dev/nst0 (LTO-6) | **SPEED-MATCHED** | 6.6 / 16.0 | 13.7 / 40.6 | 36.1 | 15.6 | '
            'Make the host-to-drive path faster |') in markdown
    assert ('| lab-ma3 | /dev/nst0 (LTO-8 FH) | **SHOE-SHINING** | 1.8 / 2.9 | 11.4 / 36.5 | 14.8 | 2.8 | '
            'Make the host-to-drive path faster |') in markdown
    assert '**4 host(s), 3 drive verdict(s):** MISSING 1, SHOE-SHINING 1, SPEED-MATCHED 1, STREAMING 1' in markdown
    assert 'id 20261124T021259Z, mode qualify, profile quick.' in markdown


def test_junit_fails_the_shoe_shining_drive_and_errs_the_missing_host(v2_report):
    run_dir = v2_report[0]
    suites = ET.parse(os.path.join(run_dir, 'junit.xml')).getroot()
    assert (suites.get('tests'), suites.get('failures'), suites.get('errors')) == ('4', '1', '1')
    cases = dict((c.get('classname'), c) for c in suites.iter('testcase'))
    assert sorted(cases) == sorted(HOSTS + ('lab-ma4',))
    for host in HOSTS:
        props = dict((p.get('name'), p.get('value')) for p in cases[host].iter('property'))
        numbers = recorded(LAB_RUN_V2, host)['verdicts'][0]['numbers']
        assert props['class'] == CLASSES[host]
        assert props['feed_now_mb_s'] == str(numbers['feed_now_mb_s'])
        assert props['need_floor_mb_s'] == str(numbers['need_floor_mb_s'])
    assert cases['lab-ma3'].find('failure') is not None and cases['lab-ma1'].find('failure') is None
    assert cases['lab-ma4'].find('error') is not None


def test_report_html_holds_every_drives_summary(v2_report):
    run_dir = v2_report[0]
    with open(os.path.join(run_dir, 'report.html'), encoding='utf-8') as handle:
        page = handle.read()
    for host in HOSTS:
        assert recorded(LAB_RUN_V2, host)['verdicts'][0]['summary'] in page
        assert 'hosts/%s.html' % host in page


def test_regressions_since_the_run_of_the_day_before_fail_the_task_when_asked(tmp_path):
    """The 20261124 run compared with the run of the day before: lab-ma2 and lab-ma3 got slower (both READMEs)."""
    earlier = lay_out(LAB_RUN_1123, str(tmp_path / 'earlier'))
    run_dir = lay_out(LAB_RUN_V2, str(tmp_path / 'now'))
    failed, result = run_action(qualify_report, {'report_dir': run_dir, 'compare_to': earlier,
                                                 'fail_on_regression': True})
    assert failed
    assert result['regressions'] == [
        {'host': 'lab-ma2', 'drive': '/dev/nst0',
         'reasons': ['backup rate (forecast) 19.8 -> 15.6 MB/s (-21.2 %)',
                     'sources sustained 18.7 -> 6.6 MB/s (-64.7 %)']},
        {'host': 'lab-ma3', 'drive': '/dev/nst0',
         'reasons': ['best drive path 30.5 -> 13.8 MB/s (-54.8 %)', 'sources sustained 2.8 -> 1.8 MB/s (-35.7 %)']}]
    assert result['msg'].startswith('2 drive(s) regressed since %s (reports written to %s): lab-ma2 /dev/nst0: '
                                    'backup rate (forecast) 19.8 -> 15.6 MB/s' % (earlier, run_dir))
    assert os.path.exists(os.path.join(run_dir, 'summary.md'))     # written before the task fails


def test_fail_on_failing_drives_names_the_shoe_shining_drive(tmp_path):
    run_dir = lay_out(LAB_RUN_1123, str(tmp_path))
    failed, result = run_action(qualify_report, {'report_dir': run_dir, 'fail_on_failing_drives': True})
    assert failed
    assert result['msg'] == (
        '1 drive(s) are SHOE-SHINING or MISCONFIGURED (reports written to %s): lab-ma3 /dev/nst0: %s' % (
            run_dir, recorded(LAB_RUN_1123, 'lab-ma3')['verdicts'][0]['summary']))


def test_check_mode_counts_the_hosts_and_writes_nothing(tmp_path):
    run_dir = lay_out(LAB_RUN_V2, str(tmp_path))
    failed, result = run_action(qualify_report, {'report_dir': run_dir}, check_mode=True)
    assert (failed, result['changed'], result['hosts']) == (False, False, 3)
    assert result['msg'] == 'Check mode: would write summary.md, report.html and junit.xml in %s.' % run_dir
    assert os.listdir(run_dir) == ['hosts']


# --------------------------------------------------------------- bad input

def test_a_run_dir_that_does_not_exist_fails(tmp_path):
    failed, result = run_action(qualify_report, {'report_dir': str(tmp_path / 'nope')})
    assert failed and result['msg'] == (
        'Run directory %s/nope does not exist: run the qualify playbook first, or point qualify_run_dir at an '
        'existing run.' % tmp_path)
    assert not os.path.exists(str(tmp_path / 'nope'))


def test_check_mode_without_a_run_directory_says_so_and_creates_none(tmp_path):
    # the qualify playbook in check mode writes no run directory (tests/integration/test_qualify.py
    # test_check_mode_measures_and_writes_nothing runs it on the lab): its report step must not fail
    failed, result = run_action(qualify_report, {'report_dir': str(tmp_path / 'nope')}, check_mode=True)
    assert (failed, result['changed'], result['hosts']) == (False, False, 0)
    assert result['msg'] == ('Check mode: no run directory %s/nope (a check run writes none); a real run writes '
                             'summary.md, report.html and junit.xml there.' % tmp_path)
    assert not os.path.exists(str(tmp_path / 'nope'))


def test_missing_and_wrong_arguments_fail_with_ansibles_message(tmp_path):
    assert run_action(qualify_report, {}) == (True, {'failed': True, 'msg': 'missing required arguments: report_dir'})
    failed, result = run_action(qualify_report, {'report_dir': str(tmp_path), 'failing_classes': ['SLOW']})
    assert failed and result['msg'].startswith('value of failing_classes must be one or more of: ')
    # the run's own directory: no comparison, said in the message; the reports are written
    failed, result = run_action(qualify_report, {'report_dir': str(tmp_path), 'compare_to': str(tmp_path)})
    assert not failed and result['comparison_error'] == (
        "qualify_compare_to is this run's own directory (%s): give an earlier run." % tmp_path)
    assert os.path.exists(os.path.join(str(tmp_path), 'summary.md'))


def test_a_missing_earlier_run_leaves_the_reports_written_and_says_how_to_rebuild_them(tmp_path):
    reports = tmp_path / 'reports'
    lay_out(LAB_RUN_1123, str(reports / '20261123T020000Z'))
    run_dir = lay_out(LAB_RUN_V2, str(reports / '20261124T021259Z'))
    typo = str(reports / '20261123T0200Z')
    failed, result = run_action(qualify_report, {'report_dir': run_dir, 'compare_to': typo,
                                                 'run': {'mode': 'qualify'}})
    assert not failed, result
    assert sorted(os.listdir(run_dir)) == ['hosts', 'junit.xml', 'report.html', 'summary.md']
    assert result['comparison_error'] == (
        'qualify_compare_to=%s is not a run directory: give the directory of an earlier run (it holds '
        'hosts/<host>.json), e.g. reports/20261123T101500Z.' % typo)
    assert result['msg'].endswith(
        '. NOT COMPARED: %s To compare, rebuild the reports with the right directory: ansible-playbook '
        'tapeops.qualify.qualify -e qualify_report_only=true -e qualify_run_dir=%s -e qualify_compare_to=<earlier '
        'run> (runs in %s: 20261123T020000Z).' % (result['comparison_error'], run_dir, reports))


def test_a_comparison_that_cannot_be_made_fails_the_run_with_fail_on_regression(tmp_path):
    """The issue's case: a truncated earlier run hid a STREAMING -> SHOE-SHINING regression and the run passed."""
    earlier = lay_out(LAB_RUN_V2, str(tmp_path / 'earlier'))
    now = recorded(LAB_RUN_V2, 'lab-ma1')
    assert now['verdicts'][0]['class'] == 'STREAMING'
    now['verdicts'][0]['class'] = 'SHOE-SHINING'
    run_dir = lay_out(LAB_RUN_V2, str(tmp_path / 'now'))
    with open(os.path.join(run_dir, 'hosts', 'lab-ma1.json'), 'w', encoding='utf-8') as handle:
        json.dump(now, handle)
    truncated = os.path.join(earlier, 'hosts', 'lab-ma1.json')
    with open(truncated, encoding='utf-8') as handle:
        text = handle.read()
    with open(truncated, 'w', encoding='utf-8') as handle:
        handle.write(text[:1000])
    failed, result = run_action(qualify_report, {'report_dir': run_dir, 'compare_to': earlier,
                                                 'fail_on_regression': True, 'run': {'mode': 'upgrade_check'}})
    assert failed and result['regressions'] == []
    assert result['msg'].startswith(
        'No comparison, and qualify_fail_on_regression is set (reports written to %s, without it): '
        'qualify_compare_to=%s is refused as a comparison: 1 of its 3 host document(s) cannot be read' % (
            run_dir, earlier))
    assert 'ansible-playbook tapeops.qualify.upgrade_check -e qualify_report_only=true' in result['msg']
    assert os.path.exists(os.path.join(run_dir, 'summary.md'))
    # the whole earlier run finds the regression and fails the run for it
    with open(truncated, 'w', encoding='utf-8') as handle:
        handle.write(text)
    failed, result = run_action(qualify_report, {'report_dir': run_dir, 'compare_to': earlier,
                                                 'fail_on_regression': True})
    assert failed and [r['host'] for r in result['regressions']] == ['lab-ma1']
    assert 'STREAMING -> SHOE-SHINING' in result['regressions'][0]['reasons']


def test_a_newer_and_a_truncated_document_are_failed_hosts_with_the_reason(tmp_path):
    """Neither stops the report: each host is a FAILED row saying why, the JUnit an error."""
    run_dir = lay_out(LAB_RUN_V2, str(tmp_path))
    newer = recorded(LAB_RUN_V2, 'lab-ma2')
    newer['schema_version'] = 3
    with open(os.path.join(run_dir, 'hosts', 'lab-ma2.json'), 'w', encoding='utf-8') as handle:
        json.dump(newer, handle)
    with open(os.path.join(LAB_RUN_V2, 'lab-ma3.json'), encoding='utf-8') as handle:
        text = handle.read()
    with open(os.path.join(run_dir, 'hosts', 'lab-ma3.json'), 'w', encoding='utf-8') as handle:
        handle.write(text[:len(text) // 2])      # cut off half-way, as a full disk would leave it
    failed, result = run_action(qualify_report, {'report_dir': run_dir})
    assert not failed
    by_host = dict((f['host'], f) for f in result['fleet'])
    assert by_host['lab-ma1']['class'] == 'STREAMING'
    assert by_host['lab-ma2']['status'] == 'failed' and by_host['lab-ma2']['summary'] == (
        '%s/hosts/lab-ma2.json has schema version 3, but this collection reads schema_version 2: it was written by '
        'a newer tapeops.qualify: report it with that version.' % run_dir)
    assert by_host['lab-ma3']['status'] == 'failed'
    assert by_host['lab-ma3']['summary'].startswith('Cannot read %s/hosts/lab-ma3.json (' % run_dir)
    assert by_host['lab-ma3']['summary'].endswith('): delete it and re-run this host.')
    assert result['missing'] == ['lab-ma2', 'lab-ma3']
    assert result['msg'].endswith('lab-ma1 /dev/nst0: STREAMING; lab-ma2 -: FAILED; lab-ma3 -: FAILED')
