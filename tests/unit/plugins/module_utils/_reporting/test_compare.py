# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Comparing a run with an earlier one, on the host documents of a real lab qualify run.

The fixture tests/unit/fixtures/lab_runs/20261123-quick/ holds the three host
JSONs of a qualify run on the lab (lab-ma1 STREAMING, lab-ma2 SPEED-MATCHED,
lab-ma3 SHOE-SHINING; its README says how it was recorded). The "later" runs
here are that run with one thing changed, as an admin's change would change it.
"""

from __future__ import annotations

import copy
import json
import os
import xml.etree.ElementTree as ET

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils import _run
from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import _compare, _fleet, _render, _templates

FIXTURE = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'fixtures', 'lab_runs', '20261123-quick')
HOSTS = ('lab-ma1', 'lab-ma2', 'lab-ma3')


def recorded():
    docs = []
    for host in HOSTS:
        docs.append(_run.load(os.path.join(FIXTURE, host + '.json')))
    return docs


def verdict_of(docs, host):
    doc = next(d for d in docs if d['host'] == host)
    return doc['verdicts'][0]


def by_host(result):
    return dict((c['host'], c) for c in result['changes'])


def test_the_same_run_has_no_change():
    result = _compare.compare(recorded(), recorded())
    assert result['regressions'] == result['improvements'] == 0
    assert [c['status'] for c in result['changes']] == ['unchanged'] * 3
    assert sorted(c['host'] for c in result['changes']) == list(HOSTS)


def test_a_slower_drive_path_and_a_fallen_class_are_regressions():
    later = recorded()
    ma2 = verdict_of(later, 'lab-ma2')
    before_path = ma2['numbers']['drive_path_best_mb_s']
    # what CI saw once: lab-ma2's drive path at 6 MB/s, its class SHOE-SHINING
    ma2['numbers']['drive_path_best_mb_s'] = 6.1
    ma2['numbers']['feed_now_mb_s'] = 6.1
    ma2['class'] = 'SHOE-SHINING'
    result = _compare.compare(recorded(), later)
    change = by_host(result)['lab-ma2']
    assert change['status'] == 'regressed' and result['regressions'] == 1
    assert 'SPEED-MATCHED -> SHOE-SHINING' in change['reasons']
    assert any(r.startswith('best drive path %.1f -> 6.1 MB/s' % before_path) for r in change['reasons'])
    assert by_host(result)['lab-ma1']['status'] == 'unchanged'


def test_a_rate_within_the_tolerance_is_not_a_change_and_beyond_it_is():
    base = recorded()
    feed = verdict_of(base, 'lab-ma1')['numbers']['feed_now_mb_s']
    assert feed > 0
    for factor, status in ((0.95, 'unchanged'), (0.85, 'regressed'), (1.2, 'improved')):
        later = recorded()
        verdict_of(later, 'lab-ma1')['numbers']['feed_now_mb_s'] = feed * factor
        assert by_host(_compare.compare(base, later))['lab-ma1']['status'] == status, factor


def test_a_host_that_lost_its_verdict_regressed_and_new_or_absent_hosts_are_said_so():
    later = recorded()
    later[2] = {'host': 'lab-ma3', 'status': 'failed', 'drives': [], 'error': 'unreachable'}
    later.append(copy.deepcopy(later[0]))
    later[-1]['host'] = 'lab-ma4'
    earlier = recorded()[:3]
    result = _compare.compare(earlier, later)
    changes = by_host(result)
    assert changes['lab-ma3']['status'] == 'regressed'
    assert 'host failed' in changes['lab-ma3']['reasons'][0]
    assert changes['lab-ma4']['status'] == 'new'
    # a host the later run did not measure at all (-l) is not a regression
    partial = _compare.compare(recorded(), recorded()[:1])
    assert by_host(partial)['lab-ma2']['status'] == 'not compared'
    assert partial['regressions'] == 0


def test_inconclusive_is_not_compared():
    later = recorded()
    verdict_of(later, 'lab-ma2')['class'] = 'INCONCLUSIVE'
    change = by_host(_compare.compare(recorded(), later))['lab-ma2']
    assert change['status'] == 'not compared'


def test_bad_tolerance_is_a_clear_error():
    with pytest.raises(ValueError, match='fraction'):
        _compare.compare([], [], tolerance=10)


def write_run(path, docs):
    os.makedirs(os.path.join(path, 'hosts'))
    for doc in docs:
        _run.save(str(path), doc)


def test_reports_carry_the_comparison_and_junit_fails_a_regression_when_asked(tmp_path):
    earlier, now = tmp_path / 'earlier', tmp_path / 'now'
    write_run(earlier, recorded())
    later = recorded()
    verdict_of(later, 'lab-ma2')['class'] = 'SHOE-SHINING'
    write_run(now, later)
    out = _render.write_fleet(str(now), list(HOSTS), compare_to=str(earlier), fail_on_regression=True)
    assert out['comparison']['regressions'] == 1
    summary = (now / 'summary.md').read_text()
    assert '## Changes since' in summary and '| lab-ma2 | /dev/nst0 | **REGRESSED** |' in summary
    page = (now / 'report.html').read_text()
    assert '<section id="compare">' in page and page.rstrip().endswith('</body></html>')
    suites = ET.parse(str(now / 'junit.xml')).getroot()
    compare_suite = suites.find("testsuite[@name='tapeops.qualify.compare']")
    assert compare_suite.get('failures') == '1' and compare_suite.get('tests') == '3'
    failure = compare_suite.find('testcase/failure')
    assert failure.get('type') == 'REGRESSION' and 'SPEED-MATCHED -> SHOE-SHINING' in failure.get('message')
    assert int(suites.get('tests')) == 6
    # not asked: the regression is reported, not a JUnit failure
    _render.write_fleet(str(now), list(HOSTS), compare_to=str(earlier))
    suites = ET.parse(str(now / 'junit.xml')).getroot()
    assert suites.find("testsuite[@name='tapeops.qualify.compare']").get('failures') == '0'


def test_compare_to_that_is_not_a_run_is_said_and_the_reports_are_written(tmp_path):
    now = tmp_path / 'now'
    write_run(now, recorded())
    for earlier, says in ((tmp_path / 'nope', 'is not a run directory'), (tmp_path / 'empty', 'holds no host results'),
                          (now, 'own directory')):
        if earlier.name == 'empty':
            earlier.mkdir()
        out = _render.write_fleet(str(now), list(HOSTS), compare_to=str(earlier))
        assert out['comparison'] is None and says in out['comparison_error']
        summary = (now / 'summary.md').read_text()
        assert '**Not compared:** ' + _templates.md(out['comparison_error']) in summary
        assert '| lab-ma3 |' in summary     # the fleet table is there all the same
        os.remove(str(now / 'summary.md'))


def regressed_run(tmp_path):
    """An earlier run where lab-ma1 STREAMED and a later one where it SHOE-SHINES (the issue's hidden regression)."""
    earlier, now = tmp_path / 'earlier', tmp_path / 'now'
    write_run(earlier, recorded())
    later = recorded()
    assert verdict_of(later, 'lab-ma1')['class'] == 'STREAMING'
    verdict_of(later, 'lab-ma1')['class'] = 'SHOE-SHINING'
    write_run(now, later)
    return earlier, now


def test_the_regression_is_found_with_a_whole_earlier_run(tmp_path):
    earlier, now = regressed_run(tmp_path)
    out = _render.write_fleet(str(now), list(HOSTS), compare_to=str(earlier), fail_on_regression=True)
    assert out['comparison_error'] is None
    assert [(c['host'], c['status']) for c in out['comparison']['changes'] if c['status'] != 'unchanged'] == [
        ('lab-ma1', 'regressed')]


def _compare_suite(now):
    return ET.parse(str(now / 'junit.xml')).getroot().find("testsuite[@name='tapeops.qualify.compare']")


def test_a_truncated_earlier_document_refuses_the_comparison_instead_of_hiding_the_regression(tmp_path):
    earlier, now = regressed_run(tmp_path)
    path = earlier / 'hosts' / 'lab-ma1.json'
    text = path.read_text()
    path.write_text(text[:len(text) // 3])
    out = _render.write_fleet(str(now), list(HOSTS), compare_to=str(earlier), fail_on_regression=True)
    # before: lab-ma1 was 'new' ("not measured in the earlier run") and nothing regressed
    assert out['comparison'] is None
    assert out['comparison_error'] == (
        'qualify_compare_to=%s is refused as a comparison: 1 of its 3 host document(s) cannot be read, so the drives '
        'on them could not be compared (%s cannot be read as JSON (truncated or damaged)). Give an earlier run whose '
        'documents are whole, or leave qualify_compare_to unset.' % (earlier, path))
    suite = _compare_suite(now)
    assert (suite.get('tests'), suite.get('errors'), suite.get('failures')) == ('1', '1', '0')
    error = suite.find('testcase/error')
    assert error.get('type') == 'NOT_COMPARED' and error.get('message') == out['comparison_error']
    page = (now / 'report.html').read_text()
    assert '<b class="err">Not compared:</b> qualify_compare_to=' in page and page.rstrip().endswith('</body></html>')
    # not asked to fail on regressions: said, not an error
    _render.write_fleet(str(now), list(HOSTS), compare_to=str(earlier))
    suite = _compare_suite(now)
    assert suite.get('errors') == '0' and out['comparison_error'] in suite.find('testcase/system-out').text


def test_an_earlier_document_of_another_schema_refuses_the_comparison(tmp_path):
    earlier, now = regressed_run(tmp_path)
    path = earlier / 'hosts' / 'lab-ma1.json'
    doc = json.loads(path.read_text())
    doc['schema_version'] = 3
    path.write_text(json.dumps(doc))
    out = _render.write_fleet(str(now), list(HOSTS), compare_to=str(earlier), fail_on_regression=True)
    assert out['comparison'] is None
    assert ('%s has schema version 3, but this collection reads schema_version 2: it was written by a newer '
            'tapeops.qualify' % path) in out['comparison_error']
    with pytest.raises(_run.RunError) as raised:
        _run.load_earlier(str(earlier))
    assert raised.value.reason == 'compare_refused'


def test_fleet_settings_table_groups_by_generation_and_sorts_by_gain(tmp_path):
    docs = recorded()
    # a second LTO-6 whose block-size fix gains 10 MB/s: it comes first in its group
    extra = copy.deepcopy(docs[1])
    extra['host'] = 'lab-ma2b'
    numbers = verdict_of([extra], 'lab-ma2b')['numbers']
    numbers['feed_after_setting_fixes_mb_s'] = numbers['feed_now_mb_s'] + 10.0
    numbers['block_size_bytes'] = 65536
    docs.append(extra)
    rows = _fleet.settings_rows(docs)
    assert [(r['label'], r['host']) for r in rows] == [
        ('LTO-5', 'lab-ma1'), ('LTO-6', 'lab-ma2b'), ('LTO-6', 'lab-ma2'), ('LTO-8 FH', 'lab-ma3')]
    assert rows[1]['gain_mb_s'] == 10.0 and rows[1]['block_size'] == '64 KiB'
    # the recorded run: file marks synchronous, each costing what the write benchmark measured
    ma3 = rows[3]
    assert ma3['filemark_mode'] == 'sync' and ma3['filemark_seconds_sync'] == 4.3045
    assert _fleet.cells(ma3)[5] == 'sync (sync 4.30 s, immediate 0.41 s)'
    assert ma3['block_size'] is None and _fleet.cells(ma3)[4] == 'unknown / 64 KiB'
    lines = _fleet.settings_markdown(rows)
    assert lines.count('### LTO-6') == 1 and '## Settings across the fleet' in lines
    assert lines.index('### LTO-6') < next(i for i, line in enumerate(lines) if '| lab-ma2b |' in line) < next(
        i for i, line in enumerate(lines) if '| lab-ma2 |' in line)
    run = tmp_path / 'run'
    write_run(run, docs)
    _render.write_fleet(str(run), [d['host'] for d in docs])
    assert '## Settings across the fleet' in (run / 'summary.md').read_text()
    page = (run / 'report.html').read_text()
    assert page.count('<table class="settings">') == 3 and page.rstrip().endswith('</body></html>')
