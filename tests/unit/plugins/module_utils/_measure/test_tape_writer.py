"""The writer core: pattern pools, the write loop, the sweep, file-mark runs.

These tests write to pipes and temporary files through the low-level
functions (an injected fd / write function). The modules never reach these
functions without the safety gate (_tape_safety.check_tape_device).
"""

import errno
import os
import struct
import threading
import time
import zlib

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_writer as W


def test_ioctl_numbers_match_linux_mtio_h():
    assert W.MTIOCTOP == 0x40086d01
    assert struct.calcsize('hi') == 8
    assert (W.MTWEOF, W.MTREW, W.MTWEOFI, W.MTSETBLK) == (5, 6, 35, 20)
    if struct.calcsize('l') == 8:
        assert W.MTIOCGET == 0x80306d02


@pytest.mark.parametrize('pattern,target', [('2:1', 2.0), ('2.5:1', 2.5), ('3:1', 3.0)])
def test_compressible_pool_hits_its_zlib_ratio(pattern, target):
    pool = W.make_pool(pattern, size=8 * W.MIB)
    assert len(pool) == 8 * W.MIB
    # Measured over several distinct regions, not just the calibration sample.
    for start in (0, 3 * W.MIB, 7 * W.MIB):
        chunk = bytes(pool[start:start + W.MIB])
        ratio = len(chunk) / float(len(zlib.compress(chunk, 6)))
        assert abs(ratio - target) / target < 0.05, (pattern, start, ratio)


def test_random_is_incompressible_and_zeros_compress():
    assert W.compression_ratio(W.make_pool('random', size=2 * W.MIB)) < 1.01
    assert W.compression_ratio(W.make_pool('zeros', size=2 * W.MIB)) > 500


def test_bad_pattern_says_what_to_use():
    with pytest.raises(ValueError, match='use zeros, random or a ratio'):
        W.make_pool('lots')
    with pytest.raises(ValueError, match='out of range'):
        W.make_pool('1:2')


def test_block_views_are_distinct_slices_of_the_pool_not_copies():
    pool = W.make_pool('random', size=4 * W.MIB)
    views = W.block_views(pool, 256 * 1024)
    assert 2 <= len(views) <= 64
    assert all(len(v) == 256 * 1024 for v in views)
    assert all(v.obj is pool for v in views)
    assert bytes(views[0][:64]) != bytes(views[1][:64])
    with pytest.raises(ValueError):
        W.block_views(pool, 8 * W.MIB)


def test_write_stream_to_a_pipe_writes_exact_bytes_and_series():
    pool = W.make_pool('2.5:1', size=4 * W.MIB)
    views = W.block_views(pool, 65536)
    read_fd, write_fd = os.pipe()
    got = []

    def drain():
        while True:
            data = os.read(read_fd, 1 << 20)
            if not data:
                break
            got.append(len(data))

    reader = threading.Thread(target=drain)
    reader.start()
    try:
        result = W.write_stream(write_fd, views, 64 * 65536)
    finally:
        os.close(write_fd)
        reader.join()
        os.close(read_fd)
    assert result['bytes'] == 64 * 65536 == sum(got)
    assert result['blocks'] == 64 and result['error'] is None
    assert result['mb_s'] > 0


def test_write_stream_series_has_one_rate_per_second():
    clock_values = iter([i * 0.25 for i in range(1000)])
    calls = []

    def write(fd, buf):
        calls.append(len(buf))
        return len(buf)

    result = W.write_stream(0, [memoryview(bytearray(10 ** 6))], 12 * 10 ** 6, write=write,
                            clock=lambda: next(clock_values))
    # 12 blocks of 1 MB, the clock advancing 0.25 s per reading: 4 MB per second.
    assert result['bytes'] == 12 * 10 ** 6 and len(calls) == 12
    assert result['series_mb_s'] == [4.0, 4.0]


def test_write_stream_stops_on_enospc_and_reports_it():
    budget = [3]

    def write(fd, buf):
        if budget[0] == 0:
            raise OSError(errno.ENOSPC, 'No space left on device')
        budget[0] -= 1
        return len(buf)

    result = W.write_stream(0, [memoryview(bytearray(4096))], 10 ** 9, write=write)
    assert result['bytes'] == 3 * 4096 and result['errno'] == errno.ENOSPC
    assert result['error'].startswith('ENOSPC')


def _einval_above(limit, sink):
    def write(fd, buf):
        if len(buf) > limit:
            raise OSError(errno.EINVAL, 'Invalid argument')
        return sink(fd, buf)
    return write


def test_sweep_reports_einval_as_the_ceiling_not_a_crash(tmp_path):
    path = tmp_path / 'sink.bin'
    fd = os.open(str(path), os.O_WRONLY | os.O_CREAT)
    try:
        pools = [('random', W.make_pool('random', size=4 * W.MIB)), ('2:1', W.make_pool('2:1', size=4 * W.MIB))]
        steps, ceiling, stop = W.sweep(fd, pools, [1048576, 65536, 262144, 524288], 2 * 1048576,
                                       write=_einval_above(262144, os.write))
    finally:
        os.close(fd)
    assert ceiling == 262144
    assert [(s['block_size'], s['pattern']) for s in steps] == [
        (65536, 'random'), (65536, '2:1'), (262144, 'random'), (262144, '2:1'), (524288, 'random')]
    assert steps[-1]['errno'] == errno.EINVAL and steps[-1]['bytes'] == 0
    assert 'rejected (EINVAL)' in stop
    assert os.path.getsize(str(path)) == 4 * 2 * 1048576


def test_sweep_end_of_media_keeps_the_size_that_was_written_as_accepted():
    # A lab cartridge running full during the 1 MiB step: 1 MiB blocks were
    # written before ENOSPC, so the path accepted them; the sweep stops there.
    written = [0]

    def write(fd, buf):
        if written[0] + len(buf) > 3.5 * 1048576:
            raise OSError(errno.ENOSPC, 'No space left on device')
        written[0] += len(buf)
        return len(buf)

    pools = [('random', W.make_pool('random', size=4 * W.MIB))]
    steps, ceiling, stop = W.sweep(0, pools, [65536, 1048576, 2097152], 2 * 1048576, write=write)
    assert ceiling == 1048576
    assert [s['block_size'] for s in steps] == [65536, 1048576]
    assert steps[-1]['errno'] == errno.ENOSPC and steps[-1]['bytes'] == 1048576
    assert stop.startswith('ENOSPC')


def test_filemark_run_marks_every_segment_and_times_them():
    marks = []
    clock = [0.0]

    def fake_clock():
        return clock[0]

    def write(fd, buf):
        clock[0] += 0.001
        return len(buf)

    def mark(fd):
        clock[0] += 0.5
        marks.append(fd)

    views = [memoryview(bytearray(1000))]
    result = W.filemark_run(7, views, 10000, 2000, mark, write=write, clock=fake_clock)
    assert result['marks'] == 5 and marks == [7] * 5
    assert result['bytes'] == 10000
    assert result['mark_seconds'] == pytest.approx(2.5)
    baseline = W.filemark_run(7, views, 10000, None, mark, write=write, clock=fake_clock)
    assert baseline['marks'] == 0 and len(marks) == 5


def test_a_file_mark_the_drive_refuses_keeps_the_segment_written_before_it():
    # MTWEOFI refused by the kernel (EINVAL) after the first segment: its bytes are on the tape and counted, so
    # the st write counters (the contention check) and the run agree
    def write(fd, buf):
        return len(buf)

    def mark(fd):
        raise OSError(errno.EINVAL, 'Invalid argument')

    views = [memoryview(bytearray(1000))]
    result = W.filemark_run(7, views, 10000, 2000, mark, write=write)
    assert (result['bytes'], result['marks'], result['error']) == (2000, 0, 'EINVAL: Invalid argument')


def test_call_with_timeout_bounds_a_hung_operation():
    # The operation would hang 60 s; the bound is 0.2 s. The assertion leaves the rest of a minute between them,
    # as the unit tests may run in an idle CPU group that gets no CPU for seconds on a loaded machine.
    hung = threading.Event()
    start = time.monotonic()
    with pytest.raises(W.TapeTimeout, match='did not finish within 0.2 seconds'):
        W.call_with_timeout(lambda: hung.wait(60), 0.2, 'Rewind')
    assert time.monotonic() - start < 30
    hung.set()
    assert W.call_with_timeout(lambda: 42, 1, 'x') == 42
    with pytest.raises(OSError):
        W.call_with_timeout(lambda: os.close(-1), 1, 'x')


def test_mtop_packs_struct_mtop_for_the_ioctl():
    seen = []
    W.mtop(5, W.MTWEOFI, 1, timeout=2, ioctl=lambda fd, req, arg: seen.append((fd, req, arg)))
    assert seen == [(5, 0x40086d01, struct.pack('hi', 35, 1))]


def test_mtget_decodes_status():
    raw = struct.pack('lllllii', 0x72, 0, (0x5e << 24) | 0, 0x41010000, 0, 0, 0)
    status = W.mtget(3, ioctl=lambda fd, req, arg: raw)
    assert status['flags'] == ['BOT', 'ONLINE', 'IM_REP_EN']
    assert status['density_code'] == 0x5e and status['block_size'] == 0


def test_generation_is_not_in_the_loop_speed_to_dev_null():
    """Rough floor only (shared CPU): the bench/ script measures against dd."""
    pool = W.make_pool('2.5:1', size=32 * W.MIB)
    fd = os.open('/dev/null', os.O_WRONLY)
    try:
        result = W.write_stream(fd, W.block_views(pool, 1048576), 4 * 10 ** 9)
    finally:
        os.close(fd)
    assert result['bytes'] >= 4 * 10 ** 9
    assert result['mb_s'] > 2500
