"""Benchmark orchestration pieces that the lab cannot show: block-size plan,
and the classification of the read at BOT (blank / data / file mark / error),
with the st answers injected."""

import errno
import os

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _cli
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_benchmark as B
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_safety as S
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_writer as W

from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._tape_fixtures import FIXTURES


def test_plan_bounds_sizes_by_block_limits_granularity_and_hba():
    # The lab's IBM ULT3580-TD5 on tgt: limits 4..1048576, granularity 9, HBA 1310720.
    limits = {'min': 4, 'max': 1048576, 'granularity': 9}
    run, skipped = B.plan_block_sizes([65536, 131072, 1048576, 2097152, 1000], limits, 1310720)
    assert run == [65536, 131072, 1048576]
    assert [s['block_size'] for s in skipped] == [1000, 2097152]
    assert 'granularity' in skipped[0]['reason'] and 'READ BLOCK LIMITS' in skipped[1]['reason']
    run, skipped = B.plan_block_sizes([524288, 1048576], {'min': 1, 'max': 8388608, 'granularity': 0}, 524288)
    assert run == [524288] and 'HBA' in skipped[0]['reason']


def flags_to_gstat(*names):
    bits = dict((name, bit) for bit, name in __import__(
        'ansible_collections.tapeops.qualify.plugins.module_utils._tools._mt', fromlist=['GMT_BITS']).GMT_BITS)
    value = 0
    for name in names:
        value |= bits[name]
    return value


class FakeDrive:
    """st's answers for one probe: status before, the read, status after."""

    def __init__(self, before, read_result, after_flags, after_file=0):
        self.before = before
        self.read_result = read_result
        self.after = {'flags': list(after_flags), 'file_number': after_file}
        self.ops = []
        self.reads = 0

    def mtget(self, fd, timeout=None):
        return self.after if self.reads else {'flags': list(self.before), 'file_number': 0}

    def mtop(self, fd, op, count=1, timeout=None):
        self.ops.append(op)

    def read(self, fd, size):
        self.reads += 1
        if isinstance(self.read_result, OSError):
            raise self.read_result
        return self.read_result


@pytest.mark.parametrize('read_result,after,after_file,content', [
    (b'', ['EOD', 'ONLINE', 'BOT'], 0, 'blank'),
    (OSError(errno.EIO, 'Input/output error'), ['EOD', 'ONLINE'], 0, 'blank'),
    (b'x' * 65536, ['ONLINE'], 0, 'data'),
    (OSError(errno.ENOMEM, 'Cannot allocate memory'), ['ONLINE'], 0, 'data'),
    (b'', ['EOF', 'ONLINE'], 1, 'data'),
    (OSError(errno.EIO, 'Input/output error'), ['ONLINE'], 0, 'unknown'),
])
def test_probe_classifies_the_read_at_bot(read_result, after, after_file, content):
    drive = FakeDrive(['BOT', 'ONLINE'], read_result, after, after_file)
    probe = S.probe_media(3, 5, read_bytes=1048576, mtget=drive.mtget, mtop=drive.mtop, read=drive.read)
    assert probe['content'] == content, probe
    # Variable-block mode, rewind, read, rewind: the tape is left at BOT.
    assert drive.ops == [W.MTSETBLK, W.MTREW, W.MTREW]


def test_probe_without_media_does_not_touch_the_tape():
    drive = FakeDrive(['DR_OPEN', 'IM_REP_EN'], b'', [])
    probe = S.probe_media(3, 5, mtget=drive.mtget, mtop=drive.mtop, read=drive.read)
    assert probe['online'] is False and drive.ops == [] and drive.reads == 0
    with pytest.raises(S.TapeSafetyError) as info:
        S.media_verdict(probe)
    assert info.value.reason == 'no_media'


def test_probe_reports_write_protect_for_the_verdict():
    drive = FakeDrive(['BOT', 'ONLINE', 'WR_PROT'], b'', ['EOD', 'ONLINE', 'WR_PROT'])
    probe = S.probe_media(3, 5, mtget=drive.mtget, mtop=drive.mtop, read=drive.read)
    assert probe['write_protected'] is True and probe['content'] == 'blank'
    with pytest.raises(S.TapeSafetyError) as info:
        S.media_verdict(probe, overwrite=True)
    assert info.value.reason == 'write_protected'


def test_worm_flag_comes_from_volume_statistics_page():
    assert B.TapeBenchmark._worm_from_logs({'pages': {'0x17': {'worm': 1}}}) is True
    assert B.TapeBenchmark._worm_from_logs({'pages': {'0x17': {'worm': 0}}}) is False
    assert B.TapeBenchmark._worm_from_logs({'pages': {}, 'unsupported_reason': 'invalid opcode'}) is None


def test_unknown_pattern_is_rejected_before_anything_runs():
    with pytest.raises(ValueError, match='Unknown data pattern'):
        B.TapeBenchmark('/dev/nst0', patterns=['zeros', 'fast'])


def test_open_refuses_a_node_swapped_after_the_safety_check(tmp_path):
    # The identity says st 9:128; the path now is /dev/null: closed unused, refused.
    ident = S.TapeIdentity(path='/dev/null', major=9, minor=128, name='nst0')
    with pytest.raises(S.TapeSafetyError) as info:
        S.open_checked('/dev/null', os.O_WRONLY, 5, ident)
    assert info.value.reason == 'device_changed' and 'Nothing was written' in info.value.msg


def test_log_pages_after_writing_that_cannot_be_decoded_are_warnings(tmp_path):
    # sg_logs answering with a 2-byte dump for every page: the write result keeps everything, plus warnings.
    p0 = open(os.path.join(FIXTURES, 'sg_logs', 'sg_logs_p0x00__HP-Ultrium6-SCSI-35GD-nomedia__1.txt')).read()

    def runner(cmd):
        return _cli.CliResult(cmd, 0, p0 if cmd[-2] == '0x00' else ' 00     34 00\n', '')
    bench = B.TapeBenchmark('/dev/nst0', runner=runner, sys_root=str(tmp_path))
    result = {'warnings': [], 'sweep': [{'mb_s': 150.0}]}
    pages = bench._log_pages('/dev/sg0', result, 'after')
    assert pages['pages']['0x34']['complete'] is False
    assert any(w.startswith('after writing: log page 0x34:') for w in result['warnings'])
    assert result['sweep'] == [{'mb_s': 150.0}]


def test_log_pages_reader_failing_outright_is_a_warning(tmp_path, monkeypatch):
    def broken(sg, runner):
        raise RuntimeError('sg_logs vanished')
    monkeypatch.setattr(B._tape_discovery, 'read_log_pages', broken)
    bench = B.TapeBenchmark('/dev/nst0', runner=lambda cmd: None, sys_root=str(tmp_path))
    result = {'warnings': []}
    pages = bench._log_pages('/dev/sg0', result, 'after')
    assert pages['pages'] == {} and 'sg_logs vanished' in result['warnings'][0]


def test_inconclusive_probe_falls_back_to_the_st_driver_version(tmp_path, monkeypatch):
    drv = tmp_path / 'bus' / 'scsi' / 'drivers' / 'st'
    drv.mkdir(parents=True)
    (drv / 'version').write_text('[20160209]\n')
    monkeypatch.setattr(B._tape_discovery, 'probe_mtweofi', lambda fd, mtop, mtget, timeout: {
        'supported': None, 'basis': 'ioctl probe not run',
        'detail': 'write-protected media: st refuses file-mark ioctls (EACCES)'})
    bench = B.TapeBenchmark('/dev/nst0', sys_root=str(tmp_path))
    result = {'warnings': [], 'drive': {}}
    bench._probe_mtweofi(3, result)
    assert (result['mtweofi_supported'], result['mtweofi_basis']) == (True, 'st driver version 20160209')
    assert 'write-protected' in result['mtweofi']['detail']
    assert result['drive']['mtweofi_basis'] == 'st driver version 20160209'


def test_immediate_runs_are_skipped_when_st_has_no_mtweofi(monkeypatch):
    runs = []

    def filemark_run(fd, views, payload, segment, marker, **seam):  # pylint: disable=unused-argument
        runs.append(segment)
        return {'bytes': payload, 'seconds': 1.0, 'marks': 1, 'mb_s': payload / 1e6, 'mark_seconds': 0.1,
                'error': None}
    monkeypatch.setattr(B.W, 'filemark_run', filemark_run)
    bench = B.TapeBenchmark('/dev/nst0', filemark_segments=[2 * W.MB], filemark_payload=4 * W.MB,
                            filemark_block_size=65536)
    out = bench.filemarks.run(3, mtweofi_supported=False)
    assert [(m['kind'], m['error']) for m in out] == [
        ('none', None), ('sync', None), ('immediate', 'skipped: the st driver has no MTWEOFI')]
    assert runs == [None, 2 * W.MB]


def _drive_of(rate_mb_s, cost_s):
    """filemark_run on a drive that writes ``rate_mb_s`` and loses ``cost_s`` per mark; the segments it was given."""
    runs = []

    def filemark_run(fd, views, payload, segment, marker, **seam):  # pylint: disable=unused-argument
        runs.append(segment)
        # the writer's rule: a mark after every whole segment, when the segment is smaller than the payload
        marks = payload // segment if segment and segment < payload else 0
        seconds = payload / (rate_mb_s * W.MB) + marks * cost_s
        return {'bytes': payload, 'seconds': seconds, 'marks': marks, 'mb_s': round(payload / seconds / W.MB, 1),
                'mark_seconds': marks * cost_s, 'error': None}
    return filemark_run, runs


def test_the_full_profiles_larger_segment_is_computed_not_written_without_marks(monkeypatch):
    # the full profile: 16000 MB runs at segments of 2000 and 20000 MB. A 20000 MB segment closes no mark in a
    # 16000 MB run: written, it measured nothing. Its rate now comes from the 2000 MB runs' cost per mark.
    filemark_run, runs = _drive_of(100.0, 5.0)
    monkeypatch.setattr(B.W, 'filemark_run', filemark_run)
    bench = B.TapeBenchmark('/dev/nst0', filemark_segments=[20000 * W.MB, 2000 * W.MB],
                            filemark_payload=16000 * W.MB, filemark_block_size=262144)
    out = bench.filemarks.run(3, mtweofi_supported=True)
    assert runs == [None, 2000 * W.MB, 2000 * W.MB]
    assert [(r['kind'], r['segment_mb'], r['basis'], r['marks']) for r in out] == [
        ('none', None, 'measured', 0), ('sync', 2000, 'measured', 8), ('immediate', 2000, 'measured', 8),
        ('sync', 20000, 'computed', 0), ('immediate', 20000, 'computed', 0)]
    sync_2000, computed = out[1], out[3]
    assert sync_2000['seconds_lost_per_mark'] == pytest.approx(5.0)
    # 20000 MB at 100 MB/s is 200 s, plus one mark of 5 s
    assert computed['mb_s'] == pytest.approx(20000 / 205.0, abs=0.05)
    assert (computed['computed_from_segment_mb'], computed['seconds_lost_per_mark'], computed['bytes']) == (
        2000, sync_2000['seconds_lost_per_mark'], 0)
    # and the plan promises only what is written: the baseline and the two 2000 MB runs
    plan = bench.plan({'block_limits': None})
    assert plan['max_bytes_written'] == bench.step_bytes * len(plan['block_sizes']) * len(bench.patterns) + \
        3 * 16000 * W.MB


def test_a_segment_with_nothing_smaller_measured_says_what_payload_it_needs(monkeypatch):
    filemark_run, runs = _drive_of(100.0, 5.0)
    monkeypatch.setattr(B.W, 'filemark_run', filemark_run)
    bench = B.TapeBenchmark('/dev/nst0', filemark_segments=[20000 * W.MB], filemark_payload=16000 * W.MB)
    out = bench.filemarks.run(3, mtweofi_supported=True)
    assert runs == [None]
    assert [(r['kind'], r['basis']) for r in out] == [('none', 'measured'), ('sync', None), ('immediate', None)]
    assert out[1]['error'] == ('skipped: a 20000 MB segment closes fewer than two in a 16000 MB run and no smaller '
                               'segment was measured to compute it from; give filemark_payload_mb of 40000 or more, '
                               'or a smaller segment beside it')
