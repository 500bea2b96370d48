# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Decisions apart from words: _verdict.evaluate decides as data, _words writes every sentence.

The inputs are those of the recorded lab run tests/unit/fixtures/lab_runs/20261123-quick/ (see its README.md):
each host document holds what the modules measured (source read, drive, write sweep) and the verdict the
qualify_verdict action wrote then; the decision is made again from the same inputs.
"""

from __future__ import annotations

import json
import os

from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _resolve, _verdict
from ansible_collections.tapeops.qualify.plugins.module_utils import _words

FIXTURE = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures', 'lab_runs', '20261123-quick')


def _lab(host, **config_changes):
    with open(os.path.join(FIXTURE, host + '.json'), encoding='utf-8') as handle:
        doc = json.load(handle)
    entry = doc['drives'][0]
    _identity, spec = _resolve.resolve(dict(entry['identity']), entry['settings'] or None)
    config = dict(doc['facts'].get('backup') or {})
    config.update(dict((k, v) for k, v in entry['settings'].items() if k in (
        'block_size_bytes', 'segment_size_mb', 'immediate_filemarks', 'concurrency') and v is not None))
    config.update(config_changes)
    decisions = _verdict.evaluate_host([{'spec': spec, 'drive': entry['identity'], 'tape': entry['write_sweep'],
                                         'config': config}], doc['source'],
                                       memory_total_mb=doc['facts'].get('memory_total_mb'))
    return doc, entry, decisions[0]


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


def test_the_decision_holds_no_sentence():
    _doc, _entry, decision = _lab('lab-ma3')
    assert decision['class'] == 'SHOE-SHINING'
    assert 'summary' not in decision and 'reasons' not in decision
    assert [f['id'] for f in decision['facts']][:3] == ['sources', 'file_sizes', 'need_full']
    for fix in decision['fixes']:
        assert not set(fix) & {'title', 'setting', 'why'}
    for finding in decision['findings']:
        assert 'text' not in finding or finding['id'] in ('small_file_bound', 'object_size_below_90')
    # the only strings left are ids, classes, labels, bases the measurements carry, and what a module reported
    words = [s for s in _strings({k: v for k, v in decision.items() if k not in ('numbers', 'forecast')})
             if ' ' in s]
    assert all(not s.startswith(('The ', 'Its ', 'Run ', 'Use ')) for s in words), words


def test_fixes_are_data_with_before_after_and_gain():
    # lab-ma2 (LTO-6 model, sources 19.8 MB/s) with Bacula writing a synchronous file mark every 64 MB: the
    # recorded write test measured 4.21 s lost per mark
    _doc, _entry, decision = _lab('lab-ma2', segment_size_mb=64, software='bacula')
    assert decision['class'] == 'MISCONFIGURED'
    first = decision['fixes'][0]
    assert (first['id'], first['rank'], first['value']) == ('segment_size', 1, 17000)
    assert (first['feed_before_mb_s'], first['feed_after_mb_s'], first['gain_mb_s']) == (11.2, 19.8, 8.6)
    assert first['forecast']['class'] == 'SPEED-MATCHED'
    assert first['data'] == {'software': 'bacula', 'segment_mb': 64.0, 'recommended_mb': 17000.0,
                             'loss_target': 0.01, 'segment_basis': 'inventory'}
    worded = _words.verdict(decision).to_dict()['fixes'][0]
    # in Bacula's own words: the setting that sets the marks apart
    assert worded['title'] == 'Set a larger Maximum File Size (17000 MB or more between file marks)'
    assert worded['setting'] == 'Bacula Device resource: Maximum File Size = 17000M'
    assert worded['why'] == (
        'A synchronous file mark every 64 MB: 630 back-hitches an hour (42 % of the time repositioning); at 17000 MB '
        'the marks cost under 1 % of the time (the forecast: SHOE-SHINING -> SPEED-MATCHED, 11.2 MB/s -> 19.8 MB/s).')
    assert set(worded) == {'id', 'rank', 'value', 'feed_after_mb_s', 'forecast', 'title', 'setting', 'why'}


def test_worded_facts_are_the_recorded_reasons_word_for_word():
    # the sentences the lab run recorded for what the code still judges the same way (the run predates the
    # file-size fact and the block-size rule of today, so not every reason is still the same)
    doc, _entry, decision = _lab('lab-ma3')
    [verdict] = doc['verdicts']
    recorded = verdict['reasons']
    worded = dict((fact['id'], _words.fact(fact)) for fact in decision['facts'])
    for fact_id in ('sources', 'need_full', 'need_floor', 'sweep', 'drive_backhitches'):
        assert worded[fact_id] in recorded, fact_id
    assert worded['sweep'] == ('The write sweep measured the drive path at 64 KiB 30.5 MB/s, 256 KiB 28.2 MB/s, '
                               '1 MiB 14.3 MB/s (incompressible data).')
    assert _words.verdict(decision).to_dict()['summary'] == (
        'LTO-8 FH would shoe-shine: 234 back-hitches an hour (20 % of the time repositioning); the backup gets '
        '3.0 MB/s (floor 11.4 MB/s). First fix: Make the host-to-drive path faster.')


def test_the_backup_software_names_its_own_setting():
    assert _words.setting('data_protector', 'block_size', 262144) == \
        'Data Protector device > Properties > Settings > Advanced > Sizes: Block size (kB) = 256'
    assert _words.setting('bareos', 'segment_size', 3200) == 'Bareos Device resource: Maximum File Size = 3200M'
    assert _words.setting(None, 'streams', 4) == '4 parallel backup streams into the drive'
