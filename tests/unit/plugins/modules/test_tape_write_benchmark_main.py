# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""tape_write_benchmark's main() in process (module_harness.run_module).

No st device exists on this machine, so the safety gate refuses every real path here (regular file, /dev/null,
directory, missing node: tested as they are). Past the gate, the module runs on a recorded lab drive
(tests/unit/fixtures/lab_runs/, played back by ``_lab_replay.ReplayDrive`` through TapeBenchmark's write / clock
seam, its gate's open / fstat and the st ioctls): check mode returns the write record with nothing measured and
nothing opened; a real run returns the write record the lab run recorded; a cartridge the media rule refuses, a
hung write and an unexpected error fail with ``reason`` and keep what was measured. The module on the real st
driver: tests/integration/test_tape_side.py (lab).
"""

from __future__ import annotations

import os
import threading

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils import _records
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_benchmark as B
from ansible_collections.tapeops.qualify.plugins.modules import tape_write_benchmark
from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._lab_replay import (
    ReplayDrive,
    lab_write_record,
)

from module_harness import run_module

LAB_MA3 = '20261124-quick-v2/lab-ma3'


def lab_args(record, **extra):
    """The module arguments of the recorded run (the quick profile of the qualify role)."""
    plan = record['plan']
    args = {'device': '/dev/nst0', 'block_sizes': ['64K', '256K', '1M'], 'patterns': plan['patterns'],
            'step_mb': plan['step_bytes'] // 1000000, 'step_seconds': plan['step_seconds'],
            'filemark_segments_mb': plan['filemark_segments_mb'], 'filemark_payload_mb': plan['filemark_payload_mb'],
            'filemark_block_size': '256K', 'allowed_barcodes': [plan['barcode']]}
    args.update(extra)
    return args


@pytest.fixture
def lab_drive(monkeypatch, tmp_path):
    """Every TapeBenchmark the module makes runs on the recorded drive of lab-ma3 (2026-11-24)."""
    drive = ReplayDrive(lab_write_record(LAB_MA3), str(tmp_path / 'sys')).install(monkeypatch)

    class OnTheLabDrive(B.TapeBenchmark):
        def __init__(self, *args, **kwargs):
            kwargs.update(sys_root=drive.sys_root, write=drive.write, clock=drive.clock)
            super().__init__(*args, **kwargs)
            drive.fit(self.gate)

    monkeypatch.setattr(tape_write_benchmark, 'TapeBenchmark', OnTheLabDrive)
    return drive


def assert_clean_failure(result, reason, words):
    assert result['failed'] is True and result['reason'] == reason, result
    assert words in result['msg'], result['msg']
    assert 'exception' not in result and 'Traceback' not in result['msg']


# ---------------------------------------------------------------- the gate, on this machine's real paths

@pytest.mark.parametrize('check_mode', [False, True], ids=['run', 'check_mode'])
@pytest.mark.parametrize('kind', ['regular_file', 'directory', 'memory_device', 'missing'])
def test_what_is_not_a_tape_is_refused_before_anything_is_opened(monkeypatch, tmp_path, kind, check_mode):
    paths = {'regular_file': tmp_path / 'tape.img', 'directory': tmp_path, 'memory_device': '/dev/null',
             'missing': tmp_path / 'nst9'}
    path = str(paths[kind])
    if kind == 'regular_file':
        paths[kind].write_bytes(b'backup data\n' * 100)
    before = os.stat(path) if os.path.exists(path) else None
    failed, result = run_module(tape_write_benchmark.main, {'device': path, 'overwrite': True}, monkeypatch,
                                check_mode=check_mode)
    words = {'regular_file': '%s is a regular file, not a tape drive.' % path,
             'directory': '%s is a directory, not a tape drive.' % path,
             'memory_device': '/dev/null is a memory device (null)',
             'missing': '%s does not exist.' % path}[kind]
    assert failed
    assert_clean_failure(result, 'missing' if kind == 'missing' else kind, words)
    assert 'sweep' not in result and 'plan' not in result
    if kind == 'regular_file':
        after = os.stat(path)
        assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
        assert paths[kind].read_bytes() == b'backup data\n' * 100


@pytest.mark.parametrize('args,reason,words', [
    ({'step_mb': 0}, None, 'step_mb must be a positive number, got 0.'),
    ({'op_timeout': -5}, None, 'op_timeout must be a positive number, got -5.'),
    ({'compression_probe_mb': -1}, None, 'compression_probe_mb must be 0 (no probe) or a positive number of MB, got -1.'),
    ({'block_sizes': ['64K', 'lots']}, None, "block_sizes: 'lots' is not a size"),
    ({'filemark_block_size': 'big'}, None, "filemark_block_size: 'big' is not a size"),
    ({'patterns': ['zeros', 'fast']}, 'bad_input', "Unknown data pattern 'fast': use zeros, random or a ratio"),
    ({'patterns': ['100:1']}, 'bad_input', "Compression ratio '100:1' is out of range (1:1 to 50:1)."),
])
def test_bad_arguments_fail_with_what_to_do_before_the_device_is_looked_at(monkeypatch, args, reason, words):
    failed, result = run_module(tape_write_benchmark.main, dict(args, device='/dev/nst0'), monkeypatch)
    assert failed and words in result['msg'], result
    assert 'exception' not in result
    if reason:
        assert result['reason'] == reason


# ---------------------------------------------------------------- past the gate, on the recorded lab drive

def test_check_mode_returns_the_write_record_with_nothing_measured_and_nothing_opened(monkeypatch, lab_drive):
    record = lab_drive.record
    failed, result = run_module(tape_write_benchmark.main, lab_args(record), monkeypatch, check_mode=True)
    assert not failed and result['changed'] is False
    # the WriteSweep record (RETURN), every key there, nothing measured (no contention counted, no compression
    # probe asked for: left out when None)
    assert set(result) - {'changed'} == set(_records.WriteSweep.__dataclass_fields__) - {
        'warnings', 'msg', 'reason', 'contention', 'compression_probe'}
    plan = dict(result['plan'], identity=None)
    assert plan == dict(record['plan'], identity=None)
    assert (result['sweep'], result['filemarks'], result['best'], result['media']) == (None, None, None, None)
    assert result['drive']['serial'] == record['drive']['serial'] and result['drive']['barcode'] == 'MA3001L8'
    assert result['mtweofi']['detail'] == 'check mode: no drive opened, the st driver version decides'
    # nothing opened, not even read-only; no ioctl, no write, no log page read
    assert lab_drive.opens == [] and lab_drive.ops == [] and lab_drive.writes == 0
    assert lab_drive.log_page_reads == []


def test_a_run_returns_the_write_record_the_lab_recorded(monkeypatch, lab_drive):
    record = lab_drive.record
    failed, result = run_module(tape_write_benchmark.main, lab_args(record), monkeypatch)
    assert not failed and result.pop('changed') is True
    # recorded before contention was counted; the replayed st counters moved by the run's own writes alone
    contention = result.pop('contention')
    assert contention['contended'] is False and contention['users'] == []
    assert contention['ours_written_bytes'] == sum(s['bytes'] for s in result['sweep']) + sum(
        f['bytes'] for f in result['filemarks']) > 0
    assert contention['others_written_bytes'] == 0 and contention['others_read_bytes'] == 0
    expected = _records.WriteSweep.from_dict(record).to_dict()
    for key in ('warnings', 'msg', 'reason'):
        assert expected.pop(key) is None  # the module drops them from a measurement (module.warn, fail_json)
    # what the replay cannot give back as recorded: the time the pattern pools took to make here, the
    # identity's sysfs paths here, the per-second series within each step (flat in the replay)
    # the recorded run predates basis: every run it made was written
    assert [run.pop('basis') for run in result['filemarks']] == ['measured'] * len(expected['filemarks'])
    for out in (result, expected):
        out['pool_seconds'] = None
        out['plan'] = dict(out['plan'], identity=None)
        out['sweep'] = [dict(step, series_mb_s=None) for step in out['sweep']]
        out['filemarks'] = [dict(run, mark_seconds=round(run['mark_seconds'], 5),
                                 seconds_lost_per_mark=run['seconds_lost_per_mark'] and
                                 round(run['seconds_lost_per_mark'], 3)) for run in out['filemarks']]
    assert result == expected
    assert result['best'] == {'block_size': 65536, 'pattern': 'random', 'mb_s': 14.8}
    assert lab_drive.opens == [os.O_RDONLY, os.O_WRONLY]


def test_a_cartridge_with_data_not_allowed_is_refused_with_what_was_read(monkeypatch, lab_drive):
    # lab-ma3's cartridge MA3001L8 could not be proven blank (EIO at BOT); without it in allowed_barcodes: refused
    args = lab_args(lab_drive.record, allowed_barcodes=['OTHER1L8'])
    failed, result = run_module(tape_write_benchmark.main, args, monkeypatch)
    assert failed
    assert_clean_failure(result, 'media_has_data', 'The cartridge MA3001L8 could not be proven blank (read at BOT '
                                                   'failed: [Errno 5] Input/output error). Refusing to overwrite it.')
    # the probe and the log pages read before the refusal go with it; nothing was opened for writing
    assert result['media'] == lab_drive.record['media']
    assert result['log_pages_before'] == lab_drive.record['log_pages_before']
    assert 'changed' not in result  # a refusal changed nothing; the module leaves the key out of the partial record
    assert lab_drive.opens == [os.O_RDONLY] and lab_drive.written_for_real() == [] and lab_drive.writes == 0


def test_no_block_size_that_fits_fails_before_the_drive_is_opened(monkeypatch, lab_drive):
    failed, result = run_module(tape_write_benchmark.main, lab_args(lab_drive.record, block_sizes=['2M']),
                                monkeypatch)
    assert failed
    assert_clean_failure(result, 'no_block_size', 'No requested block size fits this drive path')
    assert 'above READ BLOCK LIMITS maximum 1048576' in result['msg']
    assert lab_drive.opens == []


def test_a_hung_write_fails_with_timeout_and_the_drive_is_rewound(monkeypatch, lab_drive):
    release = threading.Event()
    hung = []

    def write(fd, buf):
        hung.append(len(buf))
        release.wait(30)  # a SCSI command that does not come back; the daemon thread is let go after the test
        raise OSError(5, 'Input/output error')
    monkeypatch.setattr(lab_drive, 'write', write)
    try:
        failed, result = run_module(tape_write_benchmark.main, lab_args(lab_drive.record, step_seconds=1,
                                                                        op_timeout=1), monkeypatch)
    finally:
        release.set()
    assert failed
    # step budget 1 s + op_timeout 1 s
    assert_clean_failure(result, 'timeout', 'Writing 65536-byte blocks did not finish within 2 seconds. Check '
                                            'the drive (dmesg, sg_logs) and the cabling, then retry.')
    assert hung == [65536] and lab_drive.ops[-1] == (B.W.MTREW, 1)
    # nothing was measured before the first write hung; what was read before it goes with the failure
    assert result['sweep'] == [] and result['rewound'] is True
    assert result['sweep_stopped'] == 'Writing 65536-byte blocks did not finish within 2 seconds.'
    assert result['media'] == lab_drive.record['media'] and 'changed' not in result


def test_a_write_that_hangs_mid_sweep_keeps_the_steps_measured_before_it(monkeypatch, lab_drive):
    release = threading.Event()
    real = lab_drive.write
    hung = []

    def write(fd, buf):
        if len(buf) == 262144:  # the third step (256K, random) does not come back
            hung.append(len(buf))
            release.wait(30)
            raise OSError(5, 'Input/output error')
        return real(fd, buf)
    monkeypatch.setattr(lab_drive, 'write', write)
    try:
        failed, result = run_module(tape_write_benchmark.main, lab_args(lab_drive.record, step_seconds=1,
                                                                        op_timeout=1), monkeypatch)
    finally:
        release.set()
    assert failed
    assert_clean_failure(result, 'timeout', 'Writing 262144-byte blocks did not finish within 2 seconds. Check '
                                            'the drive (dmesg, sg_logs) and the cabling, then retry.')
    assert hung == [262144] and result['rewound'] is True and lab_drive.ops[-1] == (B.W.MTREW, 1)
    # The two 64K steps done before the hang are in the failed result, as a BenchmarkError's partial record would
    # carry them. Their figures are the replay's first second of lab-ma3's recorded steps (step_seconds 1 here):
    # the replay spreads a recorded step's blocks but the last over the lab's 10-s budget, one ending on each whole
    # second, so 1 s holds ceil(2346 / 10) = 235 blocks of the random step and ceil(1313 / 10) = 132 of the 2.5:1.
    recorded = lab_drive.record['sweep']
    assert [(s['block_size'], s['pattern'], s['blocks']) for s in recorded[:2]] == [
        (65536, 'random', 2347), (65536, '2.5:1', 1314)]
    assert [(s['block_size'], s['pattern'], s['blocks'], s['bytes'], s['seconds'], s['mb_s'], s['error'])
            for s in result['sweep']] == [(65536, 'random', 235, 235 * 65536, 1.0, 15.4, None),
                                          (65536, '2.5:1', 132, 132 * 65536, 1.0, 8.7, None)]
    assert result['sweep_stopped'] == 'Writing 262144-byte blocks did not finish within 2 seconds.'
    assert 'filemarks' not in result and 'changed' not in result
    assert result['media'] == lab_drive.record['media'] and result['plan']['block_sizes'] == [65536, 262144, 1048576]


def test_an_unexpected_error_keeps_the_measurements_taken_before_it(monkeypatch, lab_drive):
    real = lab_drive.write

    def write(fd, buf):
        if len(buf) == 262144 and lab_drive.index == 2:
            raise RuntimeError('the emulated drive went away')
        return real(fd, buf)
    monkeypatch.setattr(lab_drive, 'write', write)
    failed, result = run_module(tape_write_benchmark.main, lab_args(lab_drive.record), monkeypatch)
    assert failed
    assert result['reason'] == 'internal_error' and 'the emulated drive went away' in result['msg']
    assert 'please report this with the traceback' in result['msg'] and 'RuntimeError' in result['exception']
    assert result['media'] == lab_drive.record['media'] and result['plan']['block_sizes'] == [65536, 262144, 1048576]
