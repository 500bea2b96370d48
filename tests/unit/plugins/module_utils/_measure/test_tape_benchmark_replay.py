# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The write benchmark's orchestration (``TapeBenchmark.run``) on the recorded lab drives.

Each lab run under tests/unit/fixtures/lab_runs/ recorded, per host, the benchmark's write record on the lab's
emulated drive (the real st driver underneath). The drive is played back to a new run (``_lab_replay.ReplayDrive``:
the recorded blocks and times per step, st counters, ioctls, the probe's read at BOT); the run must make the same
record: the plan, the order of the steps, where each step stopped (time limit or byte budget), the st counter
deltas and the device busy fraction, the best step, the ceiling, the file-mark runs and the seconds lost per mark,
the media decision - and open the drive read-only for the probe, then once for writing, nothing else.

The derived cases change one thing in a recorded drive (said where): a write error or end of media in the middle
of the sweep (no file-mark run after it), 1 MiB blocks rejected with EINVAL (the file-mark runs do run), check
mode.
"""

from __future__ import annotations

import copy
import errno
import os

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_benchmark as B
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_writer as W
from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._lab_replay import (
    ReplayDrive,
    lab_write_record,
    lab_write_records,
    plan_kwargs,
)

RECORDS = lab_write_records()


def replay(monkeypatch, tmp_path, record, fail=None, **options):
    """A TapeBenchmark with the recorded run's options on the recorded drive; (bench, drive)."""
    drive = ReplayDrive(record, str(tmp_path / 'sys'), fail=fail).install(monkeypatch)
    kwargs = dict(plan_kwargs(record), runner=lambda cmd: None, sys_root=drive.sys_root, write=drive.write,
                  clock=drive.clock)
    kwargs.update(options)
    bench = B.TapeBenchmark('/dev/nst0', **kwargs)
    drive.fit(bench.gate)
    return bench, drive


def without(record, *keys):
    return dict((k, v) for k, v in record.items() if k not in keys)


def expected_decision(run_id, record):
    # Runs of 2026-11-23 (layout 1) recorded "(read a 262144-byte block at BOT at BOT)": the doubled "at BOT"
    # was fixed in media_verdict before the 2026-11-24 run; the sentence is otherwise the same.
    return record['media_decision'].replace(' at BOT at BOT)', ' at BOT)')


@pytest.mark.parametrize('run_id,record', RECORDS, ids=[r[0] for r in RECORDS])
def test_the_recorded_drive_gives_the_recorded_write_record(monkeypatch, tmp_path, run_id, record):
    bench, drive = replay(monkeypatch, tmp_path, record)
    result = bench.run()

    # (the runs of 2026-11-23 predate read_back: their plans have no read_back entry)
    assert without(result['plan'], 'identity', *(() if 'read_back' in record['plan'] else ('read_back',))) == \
        without(record['plan'], 'identity')
    assert result['plan']['read_back']['enabled'] is False
    identity = result['plan']['identity']
    assert (identity['name'], identity['major'], identity['minor']) == ('nst0', 9, 128)
    assert result['drive'] == record['drive']
    assert result['media'] == record['media'] and result['media_decision'] == expected_decision(run_id, record)
    assert result['mtweofi'] == record['mtweofi'] == {'supported': True, 'basis': 'ioctl probe',
                                                      'detail': 'MTWEOFI with count 0 accepted'}
    assert (result['mtweofi_supported'], result['mtweofi_basis']) == (True, 'ioctl probe')
    assert result['log_pages_before'] == record['log_pages_before']
    assert result['log_pages_after'] == record['log_pages_after']

    # every step: the same blocks, bytes, time, rate, st counter deltas and busy fraction as in the lab
    assert len(result['sweep']) == len(record['sweep'])
    for got, lab in zip(result['sweep'], record['sweep']):
        assert without(got, 'series_mb_s') == without(lab, 'series_mb_s'), lab
        # the series is flat (one block either way per second) at the step's bytes over its time budget, the last
        # sample taking the rest; a step the time limit ended has a sample per second of its budget, the last one
        # at its end
        flat = lab['bytes'] / min(lab['seconds'], record['plan']['step_seconds']) / 1e6
        assert all(abs(v - flat) <= lab['block_size'] / 1e6 + 0.1 for v in got['series_mb_s'][:-1])
        if lab['bytes'] < record['plan']['step_bytes']:
            assert len(got['series_mb_s']) == record['plan']['step_seconds']
    assert (result['best'], result['ceiling_block_size'], result['sweep_stopped']) == (
        record['best'], record['ceiling_block_size'], record['sweep_stopped'])

    assert len(result['filemarks']) == len(record['filemarks']) == 3
    for got, lab in zip(result['filemarks'], record['filemarks']):
        # the recorded runs predate basis: every row they wrote was measured
        assert got.pop('basis') == 'measured'
        assert without(got, 'mark_seconds', 'seconds_lost_per_mark') == \
            without(lab, 'mark_seconds', 'seconds_lost_per_mark')
        assert got['mark_seconds'] == pytest.approx(lab['mark_seconds'], abs=2e-6)
        if lab['seconds_lost_per_mark'] is None:
            assert got['seconds_lost_per_mark'] is None
        else:
            assert got['seconds_lost_per_mark'] == pytest.approx(lab['seconds_lost_per_mark'], abs=1.5e-4)
    assert result['st_stats_delta'] == record['st_stats_delta']
    assert result['rewound'] is True and result['changed'] is True and result['warnings'] == []

    # read-only for the probe, once for writing; the probe's and the writer's ioctls in their order
    assert drive.opens == [os.O_RDONLY, os.O_WRONLY]
    marks = [(W.MTWEOF, 1)] * 4 + [(W.MTWEOFI, 1)] * 4
    assert drive.ops == [(W.MTSETBLK, 0), (W.MTREW, 1), (W.MTREW, 1),  # the gate's probe at BOT
                         (W.MTSETBLK, 0), (W.MTWEOFI, 0)] + marks + [(W.MTREW, 1)]
    assert drive.log_page_reads == [record['drive']['sg']] * 2
    assert drive.writes == sum(s['blocks'] for s in record['sweep']) + \
        sum(r['bytes'] // r['block_size'] for r in record['filemarks'])


def test_check_mode_plans_and_touches_nothing(monkeypatch, tmp_path):
    record = lab_write_record('20261124-quick-v2/lab-ma2')
    bench, drive = replay(monkeypatch, tmp_path, record)
    result = bench.run(check_mode=True)
    assert without(result['plan'], 'identity') == without(record['plan'], 'identity')
    assert result['plan']['max_bytes_written'] == 3168000000  # 3 sizes x 2 patterns x 400 MB + 5 x 256 MB
    assert result['changed'] is False and 'sweep' not in result and 'media' not in result
    assert result['mtweofi'] == {'supported': True, 'basis': 'st driver version 20160209',
                                 'detail': 'check mode: no drive opened, the st driver version decides'}
    assert drive.opens == [] and drive.ops == [] and drive.writes == 0 and drive.log_page_reads == []


def test_a_write_error_mid_sweep_stops_the_sweep_and_keeps_what_was_measured(monkeypatch, tmp_path):
    # Derived: lab-ma1's drive answers EIO from the 101st block of the third step (256 KiB, random) on.
    record = lab_write_record('20261124-quick-v2/lab-ma1')
    bench, drive = replay(monkeypatch, tmp_path, record, fail={'step': 2, 'after_blocks': 100, 'errno': errno.EIO})
    result = bench.run()
    sweep = result['sweep']
    assert [(s['block_size'], s['pattern']) for s in sweep] == [(65536, 'random'), (65536, '2.5:1'),
                                                                (262144, 'random')]
    for got, lab in zip(sweep[:2], record['sweep']):
        assert without(got, 'series_mb_s') == without(lab, 'series_mb_s')
    assert (sweep[2]['bytes'], sweep[2]['blocks']) == (100 * 262144, 100)
    assert (sweep[2]['error'], sweep[2]['errno']) == ('EIO: Input/output error', errno.EIO)
    # the size was carried (100 blocks went through): it is the ceiling; the sweep says why it stopped
    assert result['ceiling_block_size'] == 262144 and result['sweep_stopped'] == 'EIO: Input/output error'
    assert result['best'] == {'block_size': 65536, 'pattern': '2.5:1', 'mb_s': 10.0}
    # No more writes after a medium or hardware error: the file-mark runs do not start (before, the baseline and
    # the first sync run were started and failed with EIO too, writing to a drive that had just failed). Each
    # planned run is recorded with why it was not run.
    why = ('skipped: the sweep stopped on a write error (EIO: Input/output error); no more writes after a medium '
           'or hardware error')
    assert [(r['kind'], r['segment_mb'], r['bytes'], r['marks'], r['error']) for r in result['filemarks']] == [
        ('none', None, 0, 0, why), ('sync', 64, 0, 0, why), ('immediate', 64, 0, 0, why)]
    assert drive.index == 2 and not [op for op in drive.ops if op[0] in (W.MTWEOF, W.MTWEOFI) and op[1]]
    assert result['rewound'] is True and drive.ops[-1] == (W.MTREW, 1)
    assert drive.opens == [os.O_RDONLY, os.O_WRONLY]


def test_end_of_media_mid_sweep_writes_no_file_mark_run_after_it(monkeypatch, tmp_path):
    # Derived: lab-ma1's drive answers ENOSPC (end of media) from the 41st block of the second step (64 KiB, 2.5:1)
    record = lab_write_record('20261124-quick-v2/lab-ma1')
    bench, drive = replay(monkeypatch, tmp_path, record, fail={'step': 1, 'after_blocks': 40, 'errno': errno.ENOSPC})
    result = bench.run()
    assert [(s['block_size'], s['pattern'], s['errno']) for s in result['sweep']] == [
        (65536, 'random', None), (65536, '2.5:1', errno.ENOSPC)]
    assert result['ceiling_block_size'] == 65536 and result['sweep_stopped'] == 'ENOSPC: No space left on device'
    assert [r['error'] for r in result['filemarks']] == [
        'skipped: the sweep stopped on a write error (ENOSPC: No space left on device); no more writes after a '
        'medium or hardware error'] * 3
    assert drive.index == 1 and result['rewound'] is True


def test_a_block_size_the_path_rejects_is_the_ceiling(monkeypatch, tmp_path):
    # Derived: lab-ma1's drive rejects 1 MiB blocks outright (EINVAL, no byte written), as st does for a block
    # the HBA cannot carry; the recorded 64 KiB and 256 KiB steps and the file-mark runs are played as recorded.
    record = copy.deepcopy(lab_write_record('20261124-quick-v2/lab-ma1'))
    rejected = {'block_size': 1048576, 'pattern': 'random', 'bytes': 0, 'blocks': 0, 'seconds': 0.0,
                'errno': errno.EINVAL, 'st_stats_delta': {}}
    record['sweep'] = record['sweep'][:4] + [rejected]
    bench, drive = replay(monkeypatch, tmp_path, record)
    result = bench.run()
    sweep = result['sweep']
    assert len(sweep) == 5 and (sweep[4]['bytes'], sweep[4]['error']) == (0, 'EINVAL: Invalid argument')
    assert result['ceiling_block_size'] == 262144
    assert result['sweep_stopped'] == 'block size 1048576 rejected (EINVAL): ceiling is 262144'
    assert result['best'] == {'block_size': 262144, 'pattern': '2.5:1', 'mb_s': 12.5}
    assert [r['kind'] for r in result['filemarks']] == ['none', 'sync', 'immediate']
    assert [r['mb_s'] for r in result['filemarks']] == [r['mb_s'] for r in record['filemarks']]


def test_no_block_size_fits_the_path_and_nothing_is_opened(monkeypatch, tmp_path):
    # The lab drive's READ BLOCK LIMITS maximum is 1 MiB: a sweep of 2 MiB only has nothing to run.
    record = lab_write_record('20261124-quick-v2/lab-ma3')
    bench, drive = replay(monkeypatch, tmp_path, record, block_sizes=[2097152])
    with pytest.raises(B.BenchmarkError) as info:
        bench.run()
    assert info.value.reason == 'no_block_size'
    assert 'above READ BLOCK LIMITS maximum 1048576' in info.value.msg
    assert drive.opens == [] and drive.writes == 0


def test_a_sweep_without_file_marks_or_log_pages_on_the_recorded_drive(monkeypatch, tmp_path):
    # lab-ma2's drive, the 64 KiB steps only (2 MiB is above its READ BLOCK LIMITS), no file-mark runs, no log
    # pages around the writes: the gate reads the WORM flag itself (log page 0x17, recorded: not WORM)
    record = lab_write_record('20261124-quick-v2/lab-ma2')
    bench, drive = replay(monkeypatch, tmp_path, record, block_sizes=[65536, 2097152], filemark_segments=(),
                          log_pages=False)
    result = bench.run()
    assert result['plan']['block_sizes'] == [65536]
    assert result['plan']['skipped_block_sizes'] == [
        {'block_size': 2097152, 'reason': 'above READ BLOCK LIMITS maximum 1048576'}]
    assert result['plan']['max_bytes_written'] == 2 * 400000000 and result['plan']['filemark_payload_mb'] == 0
    for got, lab in zip(result['sweep'], record['sweep'][:2]):
        assert without(got, 'series_mb_s') == without(lab, 'series_mb_s')
    assert len(result['sweep']) == 2 and result['best'] == {'block_size': 65536, 'pattern': 'random', 'mb_s': 36.1}
    assert result['ceiling_block_size'] == 65536 and result['filemarks'] == []
    assert 'log_pages_before' not in result and 'log_pages_after' not in result
    assert result['media']['worm'] is False and drive.log_page_reads == [record['drive']['sg']]
    # the run's counters moved by the two steps' deltas
    steps = [s['st_stats_delta'] for s in record['sweep'][:2]]
    assert result['st_stats_delta']['write_byte_cnt'] == sum(d['write_byte_cnt'] for d in steps) == 529465344
    assert result['st_stats_delta']['write_cnt'] == 5576 + 2503
    assert drive.ops[-2:] == [(W.MTWEOFI, 0), (W.MTREW, 1)]
