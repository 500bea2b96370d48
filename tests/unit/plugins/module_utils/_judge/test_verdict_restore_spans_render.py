# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The read-back on the one data path: tape_write_benchmark's read_back -> verdict numbers and reasons ->
Markdown and HTML, the restore rate beside the backup rate and the verification result; nothing when the run
did not read back."""

from __future__ import annotations

import copy

from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import _render, _report, _templates
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_reader as R
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _host, _verdict

from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils.report_cases import drive, source, write_result

RUN = {'id': '20261123T230000Z', 'mode': 'qualify', 'profile': 'full'}


def read_back(verified=True):
    """The read-back record as the benchmark builds it: per-step records summed by _tape_reader.summarize."""
    steps = []
    for bs, rate, write_rate in ((65536, 36.0, 40.0), (262144, 42.0, 45.0), (1048576, 47.5, 50.0)):
        steps.append({'block_size': bs, 'pattern': 'random', 'read_size': bs, 'bytes': int(rate * 1e7),
                      'blocks': int(rate * 1e7) // bs, 'seconds': 10.0, 'mb_s': rate, 'write_mb_s': write_rate,
                      'series_mb_s': [rate] * 10, 'verified': True, 'mismatched_blocks': 0, 'mismatches': [],
                      'verify_seconds': 0.01, 'error': None})
    if not verified:
        steps[1].update(verified=False, mismatched_blocks=2,
                        mismatches=[{'block': 7, 'expected_bytes': 262144, 'read_bytes': 262144,
                                     'first_difference': 4096}])
    record = {'block_size': None, 'verification': 'regenerated', 'steps': steps, 'rewound': True}
    record.update(R.summarize(steps, capacity_mb_s=9000.0))
    return record


def host(tape):
    return _host.assemble('lab-ma1', [drive('/dev/nst0', 'IBM', 'ULT3580-TD5', '1013000001')],
                          source(120.0, 100.0), [tape], [{'nst': '/dev/nst0', 'speed_floor_mb_s': 10.0}],
                          {'software': 'bacula', 'block_size_bytes': 262144}, memory_total_mb=4096, run=RUN).to_dict()


def verdict_of(doc):
    return doc['verdicts'][0]


def test_the_restore_rate_reaches_the_numbers_the_reasons_and_both_reports():
    tape = dict(write_result('/dev/nst0'), read_back=read_back())
    doc = host(tape)
    num = verdict_of(doc)['numbers']
    # 1255 MB read in 3 x 10 s; the same blocks were written in 360/40 + 420/45 + 475/50 = 27.8 s
    assert num['restore_mb_s'] == 41.8
    assert num['restore_write_mb_s'] == 45.1
    assert num['restore_verified'] is True
    reason = [r for r in verdict_of(doc)['reasons'] if r.startswith('Read-back (restore)')]
    assert reason == ["Read-back (restore) of the sweep's 1255 MB at the block sizes they were written with: "
                      "41.8 MB/s, against 45.1 MB/s writing the same blocks; every block verified against the "
                      "data written."]
    md = _render.fleet_markdown([doc], run=RUN)
    assert ('**Backup and restore:** restore (read-back) 41.8 MB/s beside backup 45.1 MB/s writing the same blocks '
            '(forecast feed now %s MB/s); verified.' % _templates.rate(num['feed_now_mb_s'])) in md
    page = _render.fleet_html([doc], charts=_report.ReportError('no charts in this test'))
    assert '<p class="restore"><b>Backup and restore:</b> restore (read-back) 41.8 MB/s beside backup 45.1 MB/s' \
        in page and 'verified.</p>' in page


def test_a_read_back_that_did_not_verify_is_an_error_finding():
    doc = host(dict(write_result('/dev/nst0'), read_back=read_back(verified=False)))
    verdict = verdict_of(doc)
    assert verdict['numbers']['restore_verified'] is False
    (finding,) = [f for f in verdict['findings'] if f['id'] == 'read_back_not_verified']
    assert finding['severity'] == 'error' and '2 block(s) differ' in finding['text']
    assert 'NOT verified' in _render.fleet_markdown([doc], run=RUN)


def test_no_read_back_no_restore_words():
    doc = host(write_result('/dev/nst0'))
    num = verdict_of(doc)['numbers']
    assert (num['restore_mb_s'], num['restore_write_mb_s'], num['restore_verified']) == (None, None, None)
    assert not [r for r in verdict_of(doc)['reasons'] if 'Read-back' in r]
    assert 'Backup and restore' not in _render.fleet_markdown([doc], run=RUN)
    assert _verdict.restore_numbers(None) is None
    assert _verdict.restore_numbers({'read_back': {'bytes': 0, 'error': 'nothing to read back'}}) is None


def test_a_requested_read_size_is_named():
    rb = read_back()
    rb['block_size'] = 1048576
    doc = host(dict(copy.deepcopy(write_result('/dev/nst0')), read_back=rb))
    assert any(r.startswith("Read-back (restore) of the sweep's 1255 MB at a 1 MiB read buffer: ")
               for r in verdict_of(doc)['reasons'])
