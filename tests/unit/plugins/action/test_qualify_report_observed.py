# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fleet reports of an observe run: qualify_verdict and qualify_report through run(), on recorded lab windows.

The run (observe_cases.FLEET): lab-ma1 watched while the lab's writer fed its LTO-5 from the page cache
(STREAMING), lab-ma2 idle all its window, lab-ma3 watched during a real Bacula job (SHOE-SHINING, the job's
record with it). Compared with the recorded qualify run tests/unit/fixtures/lab_runs/20261124-quick-v2 (lab-ma1
STREAMING at 7.1 MB/s, lab-ma2 SPEED-MATCHED, lab-ma3 SHOE-SHINING at 2.8 MB/s, 232.51 back-hitches an hour).

Every format shows per observed drive the observed class, the data phase's rate, the back-hitches counted and
replayed, the tape ratio and its source, the window and the job; the idle drive as idle (a skipped JUnit case);
with the qualify run, the forecast against observed per host x drive.
"""

from __future__ import annotations

import json
import os
import shutil
import xml.etree.ElementTree as ET

import pytest

from ansible_collections.tapeops.qualify.plugins.action import qualify_report, qualify_verdict
from ansible_collections.tapeops.qualify.plugins.module_utils import _run, _words
from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import (
    _charts, _report, _report_index, _templates)

from action_harness import LAB_RUN_V2, run_action
from observe_cases import FLEET, RUN, observe_args

HOSTS = sorted(FLEET)


def no_charts():
    raise _report.ReportError('charts are not drawn here')


@pytest.fixture
def observe_run(tmp_path, monkeypatch):
    """A run directory holding the observe run's three host documents, as qualify_verdict wrote them."""
    monkeypatch.setattr(_charts, 'Charts', no_charts)
    run_dir = tmp_path / 'observe-20261127T220000Z'
    for host in HOSTS:
        window, jobs = FLEET[host]
        failed, result = run_action(qualify_verdict, observe_args(host, str(run_dir), [window()], jobs()),
                                    {'inventory_hostname': host})
        assert not failed, result['msg']
    return run_dir


@pytest.fixture
def qualify_run(tmp_path):
    """The recorded qualify run 20261124-quick-v2 as a run directory."""
    run_dir = tmp_path / '20261124T021259Z'
    (run_dir / 'hosts').mkdir(parents=True)
    for host in HOSTS:
        shutil.copy(os.path.join(LAB_RUN_V2, host + '.json'), str(run_dir / 'hosts' / (host + '.json')))
    return run_dir


def report(run_dir, **extra):
    args = dict({'report_dir': str(run_dir), 'expected_hosts': list(HOSTS), 'run': RUN}, **extra)
    return run_action(qualify_report, args)


def test_summary_md_shows_each_observed_drive_and_no_verdict_table(observe_run):
    failed, result = report(observe_run)
    assert not failed, result['msg']
    text = (observe_run / 'summary.md').read_text()
    assert '| Host | Drive | Verdict |' not in text and 'drive verdict(s)' not in text
    assert '**3 host(s), 3 drive(s) watched:** IDLE 1, SHOE-SHINING 1, STREAMING 1' in text
    rows = [line for line in text.splitlines() if line.startswith('| lab-')]
    assert rows == [
        '| lab-ma1 | /dev/nst0 (LTO-5) | **STREAMING** | 7.1 | 0 / 0 | 1.00:1 (drive) | - | - |',
        '| lab-ma2 | /dev/nst0 (LTO-6) | **IDLE** | - | - | - | - | - |',
        '| lab-ma3 | /dev/nst0 (LTO-8 FH) | **SHOE-SHINING** | 3.0 | 4 / 4 | 1.21:1 (drive) | 87 s, ended idle '
        '| JobId 1 T, 230 MB, storage daemon 3.0 MB/s |',
    ]
    doc = _run.load(str(observe_run / 'hosts' / 'lab-ma3.json'))
    assert '## lab-ma3 /dev/nst0: SHOE-SHINING\n\n%s\n' % _words.observed_summary(doc['observed'][0]) in text
    assert '## lab-ma2 /dev/nst0: IDLE\n\nIDLE: the drive wrote nothing in its window: not judged.\n' in text
    # the run is named as the run entry point names it
    assert 'id observe-20261127T220000Z, mode observe, profile observe' in text


def test_junit_fails_a_failing_class_skips_the_idle_drive_and_passes_the_rest(observe_run):
    report(observe_run)
    root = ET.parse(str(observe_run / 'junit.xml')).getroot()
    [suite] = root.findall('testsuite')
    assert suite.get('name') == 'tapeops.qualify.observe'
    assert (suite.get('tests'), suite.get('failures'), suite.get('errors'), suite.get('skipped')) == ('3', '1', '0', '1')
    cases = dict((c.get('classname'), c) for c in suite.findall('testcase'))
    assert cases['lab-ma3'].find('failure').get('type') == 'SHOE-SHINING'
    assert cases['lab-ma2'].find('skipped') is not None and cases['lab-ma2'].find('failure') is None
    assert cases['lab-ma1'].find('failure') is None and 'STREAMING observed' in cases['lab-ma1'].find('system-out').text
    props = dict((p.get('name'), p.get('value')) for p in cases['lab-ma3'].iter('property'))
    assert props == {'observed_mb_s': '2.989', 'need_floor_mb_s': '13.586', 'need_full_mb_s': '43.668',
                     'backhitches_counted': '4', 'tape_ratio': '1.213', 'tape_ratio_source': 'drive',
                     'data_seconds': '78.999', 'backhitches_replayed': '4', 'window_seconds': '86.999',
                     'class': 'SHOE-SHINING'}
    # with the failing classes the run names, STREAMING fails too
    report(observe_run, failing_classes=['STREAMING', 'SHOE-SHINING'])
    suite = ET.parse(str(observe_run / 'junit.xml')).getroot().find('testsuite')
    assert suite.get('failures') == '2'


def test_the_task_s_fleet_failing_and_missing_read_the_observed_classes(observe_run):
    failed, result = report(observe_run)
    assert not failed
    assert [(f['host'], f['class'], f['status']) for f in result['fleet']] == [
        ('lab-ma1', 'STREAMING', 'ok'), ('lab-ma2', 'IDLE', 'ok'), ('lab-ma3', 'SHOE-SHINING', 'ok')]
    assert result['fleet'][1]['summary'] == 'IDLE: the drive wrote nothing in its window: not judged.'
    assert [(f['host'], f['class']) for f in result['failing']] == [('lab-ma3', 'SHOE-SHINING')]
    assert result['missing'] == [] and result['regressions'] == []
    failed, result = report(observe_run, fail_on_failing_drives=True)
    assert failed and result['msg'].startswith('1 drive(s) are SHOE-SHINING or MISCONFIGURED')


def test_the_html_pages_show_the_observed_drives(observe_run):
    report(observe_run)
    page = (observe_run / 'report.html').read_text()
    assert '<table id="observed-drives">' in page and '<table id="fleet">' not in page
    assert '<td>lab-ma3</td><td>/dev/nst0 (LTO-8 FH)</td>' in page and '<td>4 / 4</td>' in page
    assert '<td>1.21:1 (drive)</td><td>87 s, ended idle</td>' in page
    assert page.count('<tr data-class="IDLE">') == 1
    host_page = (observe_run / 'hosts' / 'lab-ma2.html').read_text()
    assert '<td>lab-ma2</td>' in host_page and '<td>lab-ma3</td>' not in host_page


def test_the_index_of_a_large_fleet_reads_the_observed_rows(observe_run):
    docs = _run.load_run(str(observe_run), list(HOSTS))
    items = _report_index.index_rows(_report.rows(docs), lambda host: 'hosts/%s.html' % host)
    assert [(i['host'], i['class'], i['feed'], i['floor']) for i in items] == [
        ('lab-ma1', 'STREAMING', 7.078, 2.0), ('lab-ma2', 'IDLE', None, None),
        ('lab-ma3', 'SHOE-SHINING', 2.989, 13.586)]


def test_the_forecast_against_observed_per_host_and_drive(observe_run, qualify_run):
    failed, result = report(observe_run, compare_to=str(qualify_run))
    assert not failed, result['msg']
    assert result['msg'].endswith('Forecast against observed (20261124T021259Z): 2 drive(s) compared, 2 with the '
                                  'class forecast')
    text = (observe_run / 'summary.md').read_text()
    # no "Changes since": an observe run has no verdict to compare
    assert '## Changes since' not in text and '## Forecast against observed: 20261124T021259Z' in text
    rows = [line for line in text.split('## Forecast against observed')[1].splitlines() if line.startswith('| lab-')]
    assert rows == [
        '| lab-ma1 | /dev/nst0 | STREAMING / STREAMING | yes | 7.1 -> 7.1 | +0.3 % | 0.0 / 0 | compared |',
        '| lab-ma2 | /dev/nst0 | SPEED-MATCHED / - | - | 15.6 -> - | - | - / - | observed idle: nothing to compare |',
        # 232.51 back-hitches an hour forecast for the 79 s of data the drive wrote: 5.1; it counted 4
        '| lab-ma3 | /dev/nst0 | SHOE-SHINING / SHOE-SHINING | yes | 2.8 -> 3.0 | -6.3 % | 5.1 / 4 | compared |',
    ]
    suites = ET.parse(str(observe_run / 'junit.xml')).getroot()
    against = [s for s in suites.findall('testsuite') if s.get('name') == 'tapeops.qualify.forecast_against_observed']
    assert len(against) == 1 and against[0].get('tests') == '3' and suites.get('tests') == '6'
    out = dict((c.get('classname'), c.find('system-out').text) for c in against[0].findall('testcase'))
    assert out['lab-ma3'].endswith('5.1 back-hitches predicted for the observed hours of data, 4 counted by the drive')
    page = (observe_run / 'report.html').read_text()
    assert '<section id="against-observed">' in page and '<td>-6.3 %</td><td>5.1 / 4</td>' in page


def test_the_forecast_against_observed_is_written_as_json_and_returned(observe_run, qualify_run):
    failed, result = report(observe_run, compare_to=str(qualify_run))
    assert not failed, result['msg']
    path = str(observe_run / 'against_observed.json')
    assert result['paths']['against_observed'] == path
    with open(path, encoding='utf-8') as handle:
        written = json.load(handle)
    assert written['run'] == RUN and written['earlier']['dir'] == str(qualify_run)
    assert (written['compared'], written['class_matches']) == (2, 2) == (result['against_observed']['compared'],
                                                                         result['against_observed']['class_matches'])
    pairs = dict((p['host'], p) for p in written['pairs'])
    # the same numbers as summary.md's rows (the test above): lab-ma3 SHOE-SHINING on both sides, -6.3 %, 5.1 / 4
    ma3 = pairs['lab-ma3']
    assert (ma3['status'], ma3['class_match'], ma3['rate_delta_pct'], ma3['backhitches_predicted'],
            ma3['backhitches_counted']) == ('compared', True, -6.3, 5.1, 4)
    assert (ma3['forecast']['class'], ma3['observed']['class']) == ('SHOE-SHINING', 'SHOE-SHINING')
    assert pairs['lab-ma2']['status'] == 'not compared' and pairs['lab-ma2']['observed'] is None
    assert [p['host'] for p in result['against_observed']['pairs']] == ['lab-ma1', 'lab-ma2', 'lab-ma3']
    # rebuilt without the comparison: no file says what the reports no longer do
    failed, result = report(observe_run)
    assert not failed and 'against_observed' not in result and 'against_observed' not in result['paths']
    assert not os.path.exists(path)


def test_a_qualify_run_that_cannot_be_read_is_said_in_the_observed_comparison(observe_run, tmp_path):
    broken = tmp_path / 'broken'
    (broken / 'hosts').mkdir(parents=True)
    (broken / 'hosts' / 'lab-ma1.json').write_text('{"schema_version": 3}')
    failed, result = report(observe_run, compare_to=str(broken))
    assert not failed and 'NOT COMPARED' in result['msg']
    assert 'tapeops.qualify.observe -e qualify_report_only=true' in result['msg']
    text = (observe_run / 'summary.md').read_text()
    assert '## Forecast against observed: %s\n\n**Not compared:** ' % _templates.mdtext(str(broken)) in text
    assert '## Changes since' not in text
    # the refused comparison as data too, with the reason
    with open(str(observe_run / 'against_observed.json'), encoding='utf-8') as handle:
        written = json.load(handle)
    assert written['pairs'] == [] and written['earlier']['dir'] == str(broken) and written['refused']
    assert 'against_observed' not in result and result['comparison_error'] == written['refused']


def test_a_failed_host_of_an_observe_run_is_a_row_of_the_observed_table(observe_run):
    error = 'Discover tape drives and changers failed: mt: command not found'
    failed, _result = run_action(qualify_verdict, observe_args('lab-ma2', str(observe_run), [], status='failed',
                                                               error=error, observed=[], drives=[]),
                                 {'inventory_hostname': 'lab-ma2'})
    assert not failed
    failed, result = report(observe_run)
    assert result['missing'] == ['lab-ma2']
    text = (observe_run / 'summary.md').read_text()
    assert '| lab-ma2 | - | **FAILED** | - | - | - | - | - |' in text
    case = [c for c in ET.parse(str(observe_run / 'junit.xml')).getroot().iter('testcase')
            if c.get('classname') == 'lab-ma2'][0]
    assert case.find('error').get('type') == 'FAILED' and case.find('error').get('message') == error
