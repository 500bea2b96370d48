# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The mechanics section: host JSON, the verdict's size warning, Markdown and HTML.

The times are shaped like the lab's (lab-ma1, IBM LTO-5 FH at 1/50 of the mechanics: robot 0.2 s, load
0.24 s, unload 0.34 s; see tests/integration/test_lab_mechanics.py); the result is built by the same pure
functions the module uses, so only the report path is under test here.
"""

from __future__ import annotations

import json

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _drive_model as dm
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _mechanics as mech
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _mechanics as timed
from ansible_collections.tapeops.qualify.plugins.module_utils import _records, _run, _words
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _host, _verdict
from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import _render, _report_mechanics

from ansible_collections.tapeops.qualify.plugins.modules import tape_mechanics_benchmark

from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils.report_cases import drive, source, write_result

RUN = {'id': 'qualify-20261123T230000Z', 'mode': 'qualify', 'profile': 'full'}
SAMPLES = {'move_to_drive': [0.47, 0.46, 0.50], 'load_ready': [0.03, 0.02, 0.03], 'locate': [0.05, 0.04, 0.05],
           'space_eod': [0.06, 0.05, 0.06], 'rewind': [0.06, 0.06, 0.07], 'unload': [0.37, 0.38, 0.37],
           'move_to_slot': [0.22, 0.23, 0.22]}


def mechanics_section(registered):
    """The host document's mechanics section of a registered result: its records as data (None when none)."""
    records = _records.Mechanics.from_results(registered)
    return [r.to_dict() for r in records] if records else None


class Warnings:
    """What the module's ``returned`` hands to module.warn."""

    def __init__(self):
        self.said = []

    def warn(self, text):
        self.said.append(text)


def mechanics_result(backup, target='LTO-9 FH', restored=True, filemark_s=0.5, rate=7.0):
    """A tape_mechanics_benchmark result as the module returns it (its record, the plan and drive beside it)."""
    result = {'changed': True, 'device': '/dev/nst0', 'barcode': 'MA1001L5', 'slot': 1, 'warnings': [],
              'plan': {'barcode': 'MA1001L5'}, 'summary': timed.summarize(SAMPLES), 'restored': restored,
              'final_location': {'where': 'drive', 'element': 0},
              'filemarks': {'written': True, 'marks': 4, 'seconds_lost_per_mark': filemark_s, 'media': {}},
              'drive': {'nst': '/dev/nst0', 'vendor': 'IBM', 'product': 'ULT3580-TD5'}}   # lab-ma1's INQUIRY
    mech.analyse(result, target=dm.lookup(target, vendor='IBM') if target else None, rate_mb_s=rate, backup=backup)
    return tape_mechanics_benchmark.returned(Warnings(), result)


def test_section_lands_in_the_host_json_and_warns_in_the_verdict(tmp_path):
    backup = {'segment_size_mb': 10}
    registered = {'results': [mechanics_result(backup), {'skipped': True, 'item': {'nst': '/dev/nst1'}}]}
    doc = _host.assemble('lab-ma1', [drive('/dev/nst0', 'IBM', 'ULT3580-TD5', '1068000001')],
                         source(mean=60.0, p5=50.0, streams=2), write_sweep=[write_result('/dev/nst0')],
                         backup=backup, run=RUN, mechanics=registered).to_dict()
    section = doc['mechanics']
    assert len(section) == 1 and section[0]['status'] == 'ok'        # the skipped drive is left out
    entry = section[0]
    assert entry['summary']['move_to_drive']['median_s'] == 0.47 and entry['summary']['move_to_drive']['n'] == 3
    # file mark 0.5 s at 7 MB/s: 90 % at 7 * 0.5 * 9 = 31.5 MB; the 10 MB segment reaches (10/7)/(10/7 + 0.5) = 74 %
    rows = dict((r['object'], r) for r in entry['forecast']['current']['objects'])
    assert rows['filemark']['size_90_mb'] == 31.5
    verdict = doc['verdicts'][0]
    found = [f for f in verdict['findings'] if f['id'] == 'object_size_below_90']
    assert len(found) == 1 and found[0]['severity'] == 'warning'
    assert 'segment size' in found[0]['text'] and '74 %' in found[0]['text'] and '32 MB' in found[0]['text']
    back = json.load(open(_run.save(str(tmp_path), doc)))
    assert back['mechanics'][0]['forecast']['target']['label'] == 'LTO-9 FH'


def test_no_warning_when_the_segment_is_above_the_line():
    result = mechanics_result({'segment_size_mb': 50000})
    assert result['size_warnings'] == []
    verdict = _records.Verdict(findings=[])
    _host.attach_findings([(_records.DriveEntry(nst='/dev/nst0'), verdict)], _records.Mechanics.from_results(result))
    assert verdict.findings == []


def test_what_if_gets_the_target_side():
    # No measured rate: LTO-5's native 140 MB/s, 0.5 s per mark -> 90 % at 140*0.5*9 = 630 MB, the 1000 MB
    # segment is above it; LTO-9: 400 MB/s -> 90 % at 1800 MB, below it: only the target warns
    result = mechanics_result({'segment_size_mb': 1000}, rate=None)
    assert [w['drive'] for w in result['size_warnings']] == ['target']
    doc = _host.assemble('lab-ma1', [], source(mean=500.0, p5=450.0, streams=4), target_generation='LTO-9 FH',
                         options={'target_vendor': 'IBM'}, backup={'segment_size_mb': 1000}, mechanics=result).to_dict()
    what_if = doc['drives'][0]
    assert what_if['what_if']
    texts = [f['text'] for f in doc['verdicts'][0]['findings'] if f['id'] == 'object_size_below_90']
    assert len(texts) == 1 and 'target' in texts[0] and '1800 MB' in texts[0]


def test_a_cartridge_not_put_back_is_an_error_finding():
    result = mechanics_result({}, restored=False)
    findings = [_words.finding(f) for f in _verdict.mechanics_findings(_records.Mechanics.from_results(result)[0])]
    assert [f.id for f in findings] == ['mechanics_cartridge_not_restored']
    assert findings[0].severity == 'error' and 'MA1001L5' in findings[0].text


def test_the_notes_are_data_and_words_says_them():
    result = mechanics_result({}, restored=False)
    result['filemarks'] = {'written': False, 'refused': True, 'reason': 'media_has_data', 'msg': 'holds data'}
    result['locate_error'] = 'mt fsf 4 failed'
    mech = mechanics_section(result)[0]
    notes = _report_mechanics.notes(mech)
    assert [n['id'] for n in notes] == ['filemarks_refused', 'locate_not_measured', 'not_restored'] + [
        'target_scaling'] * 4
    # the target's times the drive model has a figure for (_judge/_mechanics.MODEL_FIELD), in name order
    assert [n['operation'] for n in notes[3:]] == ['load_ready', 'locate', 'rewind', 'unload']
    assert notes[2] == {'id': 'not_restored', 'barcode': 'MA1001L5', 'where': {'where': 'drive', 'element': 0}}
    assert [_words.mechanics_note(n) for n in notes[:3]] == [
        'No file marks were written (media_has_data): holds data', 'Locate not measured: mt fsf 4 failed',
        "The cartridge MA1001L5 is NOT back where it started ({'where': 'drive', 'element': 0}): put it back by hand."]


def test_failed_refused_and_check_mode_results_are_recorded():
    failed = mechanics_section({'failed': False, 'failed_when_result': False, 'reason': 'drive_full',
                                'msg': 'Drive 0 holds another cartridge', 'device': '/dev/nst0'})
    assert failed[0]['status'] == 'failed' and failed[0]['reason'] == 'drive_full'
    planned = mechanics_section({'changed': False, 'device': '/dev/nst0', 'plan': {}})
    assert planned[0]['status'] == 'planned'
    assert mechanics_section(None) is None
    assert mechanics_section({'skipped': True}) is None
    lines = _report_mechanics.markdown([{'host': 'h', 'mechanics': failed}])
    assert any('No mechanics: Drive 0 holds another cartridge' in line for line in lines)


def test_markdown_and_html_tables():
    doc = {'host': 'lab-ma1', 'mechanics': mechanics_section(
        mechanics_result({'maximum_file_size': '10M'}))}
    text = '\n'.join(_report_mechanics.markdown([doc]))
    assert '## Library and drive mechanics' in text
    assert '| changer move slot -> drive (mtx load) | 0.47 | 0.50 | 3 |' in text     # p95 of .46 .47 .50 = 0.497
    assert '| LTO-5 (current) | 7.00 | filemark | 0.50 | 3.5 MB | 32 MB |' in text
    assert '| LTO-9 FH (target) | 400 | mount |' in text
    assert 'Bacula Maximum File Size' in text                                         # 10M = 10.49 MB < 31.5 MB
    assert 'Target rewind: as measured' in text
    assert 'Target unload: scaled by unload_s: target 30 s (published) / current 17 s (published)' in text
    html = '\n'.join(_report_mechanics.html([doc]))
    assert '<table class="mechanics">' in html and '<td>0.47</td><td>0.50</td><td>3</td>' in html
    assert 'mechanics-objects' in html and 'S = R &times; T' in html
    # the chart: one bar per operation, the p95 tick of move_to_drive at its place on the scale
    assert html.count('<rect ') == 7 and 'data-chart="mechanics"' in html
    assert '0.47 / 0.50 s' in html
    fleet = _render.fleet_markdown([dict(doc, status='ok', drives=[], source=None, error=None)])
    assert '## Library and drive mechanics' in fleet


@pytest.mark.parametrize('bad', [{'results': 'x'}, ['x', None], {'summary': None, 'device': None}])
def test_odd_results_never_raise(bad):
    section = mechanics_section(bad)
    _report_mechanics.markdown([{'host': 'h', 'mechanics': section}])
    _report_mechanics.html([{'host': 'h', 'mechanics': section}])
