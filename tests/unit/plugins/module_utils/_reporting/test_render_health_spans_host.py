# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The drives' health in the reports: host documents made by _host.assemble, rendered by _render and the index.

Four hosts, each with one drive: its TapeAlert page the real IBM LTO-10 capture with one flag set (``derived``)
and the other log pages and the cartridge's memory the real HP Ultrium 6 captures
(test_host_health.py says which); the fourth drive's health was not read (its log_pages empty, as the recorded
lab runs' inputs before the health pages).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import _render, _report, _report_index
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _host

from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._judge.test_host_health import (
    BACKUP, SETTINGS, log_pages, memory)
from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils.report_cases import (
    drive, source, write_result)

FLAGS = {'dirty': 'Cleaning required', 'worn': 'Media life', 'broken': 'Hardware A', 'unread': None}


def docs():
    out = []
    for host, flag in FLAGS.items():
        info = drive('/dev/nst0', 'IBM', 'ULT3580-TD5', host)
        if flag:
            info.update(log_pages=log_pages(flag), cartridge_memory=memory())
        out.append(_host.assemble(host, [info], source(mean=60.0, p5=55.0), [write_result('/dev/nst0')],
                                  SETTINGS, BACKUP, memory_total_mb=8192).to_dict())
    return out


def test_the_fleet_totals_count_cleaning_end_of_life_and_failing_drives():
    rows = _report.rows(docs())
    assert [_report.health_status(r) for r in rows] == ['CLEAN', 'DEGRADED', 'FAILING', 'UNKNOWN']
    totals = _report.health_totals(rows)
    # the worn cartridge (TapeAlert 7 Media life) counts as near its end of life, not as one more degraded drive
    assert totals == {'clean': 1, 'end_of_life': 1, 'failing': 1, 'degraded': 0, 'ok': 0, 'unknown': 1}


def test_summary_md_has_a_health_column_the_totals_and_each_drives_findings():
    text = _render.fleet_markdown(docs())
    assert ('**Drive health:** 1 drive needs cleaning, 1 cartridge near end of life, 1 drive failing (call '
            'service); 1 not read.') in text
    lines = text.splitlines()
    header = next(line for line in lines if line.startswith('| Host |'))
    assert header.startswith('| Host | Drive | Verdict | Health | Sources')
    cells = dict((line.split(' | ')[0][2:], line.split(' | ')[3]) for line in lines
                 if line.startswith('| ') and '/dev/nst0' in line)
    assert cells == {'dirty': 'CLEAN: clean the drive', 'worn': 'DEGRADED: retire the cartridge',
                     'broken': 'FAILING: call service for the drive', 'unread': 'not read'}
    assert '- Health: FAILING: The drive raised TapeAlert flag 30 "Hardware A" (page 0x2E, critical).' in text
    # the health fix is each slow drive's first
    assert text.count('1. **Clean the drive** (the drive and its cartridge, not a setting).') == 1


def test_junit_fails_a_failing_drive_and_warns_of_clean_and_degraded_ones():
    root = ET.fromstring(_render.junit_xml(docs()))
    (suite,) = [s for s in root.findall('testsuite') if s.get('name') == 'tapeops.qualify.health']
    assert (suite.get('tests'), suite.get('failures'), suite.get('skipped')) == ('4', '1', '1')
    cases = dict((c.get('classname'), c) for c in suite.findall('testcase'))
    assert cases['broken'].find('failure').get('type') == 'FAILING'
    for host in ('dirty', 'worn'):
        case = cases[host]
        assert case.find('failure') is None and case.find('system-err').text.startswith('WARNING ')
        props = dict((p.get('name'), p.get('value')) for p in case.find('properties'))
        assert props['severity'] == 'warning' and props['health'] in ('CLEAN', 'DEGRADED')
    assert cases['unread'].find('skipped') is not None
    # the suites' totals count the health cases
    main = [s for s in root.findall('testsuite') if s.get('name') == 'tapeops.qualify.qualify'][0]
    assert int(root.get('tests')) == int(main.get('tests')) + 4
    assert int(root.get('failures')) == int(main.get('failures')) + 1


def test_the_html_pages_and_the_index_show_health_and_filter_by_it():
    all_docs = docs()
    page = _render.fleet_html([all_docs[0]], charts=_report.ReportError('no charts here'), host='dirty')
    assert '<section class="health" id="health">' in page and '<h3>dirty /dev/nst0: CLEAN</h3>' in page
    assert 'Clean the drive with a cleaning cartridge: the drive asks for it.' in page
    index = _report_index.index_html(all_docs, _report.rows(all_docs), {}, lambda host: host + '.html', 'now')
    assert '<select id="filter-health">' in index
    for status in ('CLEAN', 'DEGRADED', 'FAILING', 'UNKNOWN'):
        assert '<option value="%s">' % status in index and 'data-health="%s"' % status in index
    assert '1 drive needs cleaning, 1 cartridge near end of life' in index


def test_a_fleet_whose_health_was_not_read_renders_as_before():
    unread = [d for d in docs() if d['host'] == 'unread']
    assert 'Health' not in _render.fleet_markdown(unread)
    assert 'tapeops.qualify.health' not in _render.junit_xml(unread)
    index = _report_index.index_html(unread, _report.rows(unread), {}, lambda host: host, 'now')
    assert '<select id="filter-health">' not in index and ' data-health="' not in index
