# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The read-back's pure parts: verification against the regenerated patterns, the rate math, the verify's
share of the time, and the words for a read smaller than the block.

The tape here is a list of blocks that the collection's own writer (``_tape_writer.sweep``) put there through
an injected write(2), read back with the st driver's variable-block rules for read(2): a block no longer than
the buffer comes back whole (ILI for a shorter one is the driver's business), a longer one is ENOMEM. On the
real st driver and the lab's emulated drive: tests/integration/test_read_back.py.
"""

from __future__ import annotations

import errno
import os
import time

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_benchmark as B
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_reader as R
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_writer as W

KIB = 1024


class Tape:
    """Blocks as st in variable-block mode stores them: one write(2), one block."""

    def __init__(self):
        self.blocks = []
        self.pos = 0
        self.reads = []

    def write(self, fd, buf):
        self.blocks.append(bytes(buf))
        return len(buf)

    def readinto(self, buf):
        self.reads.append(len(buf))
        if self.pos >= len(self.blocks):
            return 0  # file mark / end of data: st returns 0
        block = self.blocks[self.pos]
        if len(block) > len(buf):
            self.pos += 1  # st has read the block; the overlength part is lost
            raise OSError(errno.ENOMEM, 'Cannot allocate memory')
        buf[:len(block)] = block
        self.pos += 1
        return len(block)


def written(patterns=('random', '2.5:1'), sizes=(64 * KIB, 256 * KIB), step=3 * W.MB):
    """A sweep written onto a Tape by the real writer; (tape, pools, steps)."""
    tape = Tape()
    pools = [(p, W.make_pool(p, size=4 * W.MIB, seed=i)) for i, p in enumerate(patterns)]
    steps, _ceiling, _stop = W.sweep(3, pools, list(sizes), step, write=tape.write)
    return tape, pools, steps


def read_all(tape, pools, steps, read_size=None):
    records = []
    for index, step in R.tape_steps(steps):
        pattern, pool = pools[index % len(pools)]
        assert pattern == step['pattern']
        views = W.block_views(pool, step['block_size'])
        records.append(R.read_step(step, views, read_size or step['block_size'], tape.readinto, step_index=index))
    return records


def test_every_block_the_writer_wrote_verifies_against_the_regenerated_pools():
    tape, pools, steps = written()
    assert len(steps) == 4 and all(s['error'] is None for s in steps)
    records = read_all(tape, pools, steps)
    assert [r['verified'] for r in records] == [True] * 4
    assert [(r['block_size'], r['pattern'], r['read_size']) for r in records] == [
        (65536, 'random', 65536), (65536, '2.5:1', 65536), (262144, 'random', 262144), (262144, '2.5:1', 262144)]
    assert sum(r['blocks'] for r in records) == len(tape.blocks) == sum(s['blocks'] for s in steps)
    assert sum(r['bytes'] for r in records) == sum(s['bytes'] for s in steps)
    # one read per block, each exactly the size the step was written with
    assert tape.reads == [s['block_size'] for s in steps for _block in range(s['blocks'])]
    # the pools regenerate the same bytes: a second generation with the same seeds is equal
    assert W.make_pool('2.5:1', size=4 * W.MIB, seed=1) == pools[1][1]


def test_a_flipped_byte_fails_verification_and_says_where():
    tape, pools, steps = written(patterns=('random',), sizes=(64 * KIB,))
    block = bytearray(tape.blocks[5])
    block[1000] ^= 0xFF
    tape.blocks[5] = bytes(block)
    (record,) = read_all(tape, pools, steps)
    assert record['verified'] is False and record['mismatched_blocks'] == 1
    assert record['mismatches'] == [{'block': 5, 'expected_bytes': 65536, 'read_bytes': 65536,
                                     'first_difference': 1000}]
    assert record['blocks'] == record['blocks_expected'] and record['error'] is None


def test_blocks_out_of_order_fail_verification():
    # the views differ block to block, so a block from elsewhere in the stream does not pass
    tape, pools, steps = written(patterns=('random',), sizes=(64 * KIB,))
    tape.blocks[2], tape.blocks[3] = tape.blocks[3], tape.blocks[2]
    (record,) = read_all(tape, pools, steps)
    assert record['mismatched_blocks'] == 2 and record['verified'] is False


def test_a_tape_that_ends_early_is_not_verified():
    tape, pools, steps = written(patterns=('random',), sizes=(64 * KIB,))
    expected = len(tape.blocks)
    del tape.blocks[-3:]
    (record,) = read_all(tape, pools, steps)
    assert record['verified'] is False and record['blocks'] == expected - 3
    assert record['error'] == 'a file mark or end of data after %d of %d blocks' % (expected - 3, expected)


def test_a_larger_buffer_reads_the_smaller_blocks_whole():
    tape, pools, steps = written()
    records = read_all(tape, pools, steps, read_size=1024 * KIB)
    assert all(r['verified'] for r in records) and set(tape.reads) == {1024 * KIB}
    assert [r['read_size'] for r in records] == [1024 * KIB] * 4


def test_the_last_short_block_after_end_of_media_is_verified_at_its_length():
    tape = Tape()
    calls = []

    def write(fd, buf):
        calls.append(1)
        n = len(buf) if len(calls) < 10 else 1000  # early warning: the 10th write is short
        tape.blocks.append(bytes(buf[:n]))
        return n
    pools = [('random', W.make_pool('random', size=4 * W.MIB, seed=0))]
    steps, _ceiling, stop = W.sweep(3, pools, [64 * KIB], 10 * W.MB, write=write)
    assert 'short write' in steps[0]['error'] and steps[0]['blocks'] == 10 and stop
    (record,) = read_all(tape, pools, steps)
    assert record['verified'] is True and record['bytes'] == 9 * 65536 + 1000


def test_a_buffer_smaller_than_the_block_gives_the_sentence_not_enomem():
    tape, pools, steps = written(patterns=('random',), sizes=(256 * KIB,))
    with pytest.raises(R.ReadBlockTooSmall) as caught:
        read_all(tape, pools, steps, read_size=64 * KIB)
    exc = caught.value
    assert 'the tape was written with 256 KiB blocks: read with at least that' in exc.msg
    assert 'read_back_block_size to 256 KiB or more' in exc.msg
    assert 'at block 0 of sweep step 0' in exc.msg
    assert (exc.written, exc.read_size) == (262144, 65536)
    assert exc.record['blocks'] == 0 and exc.record['read_size'] == 65536
    assert 'Traceback' not in exc.msg and 'Errno' not in exc.msg


def test_enomem_with_a_buffer_as_large_as_the_block_is_not_called_too_small():
    # a block on the tape larger than what this run wrote there: not the tape's block size at fault
    tape, pools, steps = written(patterns=('random',), sizes=(64 * KIB,))
    tape.blocks[0] = tape.blocks[0] * 2
    (record,) = read_all(tape, pools, steps)
    assert record['verified'] is False and record['error'].startswith('ENOMEM: Cannot allocate memory (block 0')


def test_an_io_error_stops_the_step_with_its_name():
    tape, pools, steps = written(patterns=('random',), sizes=(64 * KIB,))

    def broken(buf):
        raise OSError(errno.EIO, 'Input/output error')
    step = steps[0]
    record = R.read_step(step, W.block_views(pools[0][1], step['block_size']), 65536, broken)
    assert record['verified'] is False and record['error'] == 'EIO: Input/output error (block 0 of %d)' % step['blocks']


@pytest.mark.parametrize('nbytes,words', [
    (262144, '256 KiB'), (65536, '64 KiB'), (1048576, '1 MiB'), (1000, '1000 bytes'), (3 * 1048576, '3 MiB')])
def test_sizes_in_words(nbytes, words):
    assert R.fmt_size(nbytes) == words


def test_rate_math_and_the_per_second_series():
    # a clock that moves 0.1 s per block read plus 0.001 s per compare
    tape, pools, steps = written(patterns=('random',), sizes=(64 * KIB,), step=30 * 65536)
    now = [0.0]

    def readinto(buf):
        now[0] += 0.1
        return tape.readinto(buf)

    def clock():
        now[0] += 0.0005
        return now[0]
    step = steps[0]
    record = R.read_step(step, W.block_views(pools[0][1], 65536), 65536, readinto, clock=clock)
    assert record['blocks'] == 30 and record['verified'] is True
    assert record['mb_s'] == pytest.approx(30 * 65536 / record['seconds'] / 1e6, abs=0.05)
    # about 10 blocks of 65536 bytes per second
    assert 2 <= len(record['series_mb_s']) <= 3
    assert all(abs(x - 0.655) < 0.1 for x in record['series_mb_s']), record['series_mb_s']
    # the compare is timed by its own two clock reads: 0.0005 s of the 0.1015 s per block
    assert record['verify_seconds'] == pytest.approx(30 * 0.0005, rel=0.01)
    summary = R.summarize([record], capacity_mb_s=5000.0)
    assert summary['verify_share'] == pytest.approx(0.0005 / 0.1015, rel=0.05)
    assert summary['verify_capped'] is False and summary['verify_capacity_mb_s'] == 5000.0


def test_summary_weights_the_write_rate_by_bytes_and_flags_a_slow_verify():
    records = [
        {'block_size': 65536, 'pattern': 'random', 'read_size': 65536, 'bytes': 100 * W.MB, 'blocks': 1526,
         'seconds': 1.0, 'mb_s': 100.0, 'write_mb_s': 50.0, 'series_mb_s': [100.0], 'verified': True,
         'mismatched_blocks': 0, 'verify_seconds': 0.3, 'error': None},
        {'block_size': 262144, 'pattern': 'random', 'read_size': 262144, 'bytes': 300 * W.MB, 'blocks': 1145,
         'seconds': 1.0, 'mb_s': 300.0, 'write_mb_s': 300.0, 'series_mb_s': [300.0], 'verified': True,
         'mismatched_blocks': 0, 'verify_seconds': 0.1, 'error': None},
    ]
    summary = R.summarize(records)
    assert summary['mb_s'] == 200.0              # 400 MB in 2 s
    assert summary['write_mb_s'] == 133.3        # 400 MB written in 2 s + 1 s
    assert summary['series_mb_s'] == [100.0, 300.0]
    assert summary['verify_share'] == 0.2 and summary['verify_capped'] is True
    assert summary['verified'] is True and summary['best']['block_size'] == 262144
    assert R.summarize([])['verified'] is False and R.summarize([])['mb_s'] is None


def test_the_compare_capacity_is_far_above_tape_rates_here():
    # bytearray == memoryview is one memcmp: on any host this runs on, well above an LTO-9's 1000 MB/s compressed.
    # Timed by this process's CPU time, not the wall clock: on a loaded machine (the unit tests in tools/run's idle
    # CPU group) the wall clock gave 1370 MB/s once, the time the process waited for a CPU included.
    view = memoryview(bytearray(os.urandom(1024 * KIB)))
    assert R.compare_capacity(view, total=256 * W.MB, clock=time.process_time) > 2000


# ----------------------------------------------------------------- the benchmark's read-back step

class Drive(Tape):
    """The st ioctls and open of one drive, for TapeBenchmark's read-back (ReadBack)."""

    def __init__(self):
        super().__init__()
        self.ops = []
        self.opened = []

    def mtop(self, fd, op, count=1, timeout=None):
        self.ops.append(op)
        if op == W.MTREW:
            self.pos = 0

    def mtget(self, fd, timeout=None):
        return {'file_number': 0, 'block_number': self.pos, 'flags': ['ONLINE']}


@pytest.fixture
def drive(monkeypatch):
    d = Drive()
    monkeypatch.setattr(B.W, 'mtop', d.mtop)
    monkeypatch.setattr(B.W, 'mtget', d.mtget)

    def fake_open(path, flags, timeout, identity, **kwargs):
        d.opened.append((path, flags))
        return 7
    monkeypatch.setattr(B._tape_safety, 'open_checked', fake_open)
    monkeypatch.setattr(B.os, 'close', lambda fd: None)
    monkeypatch.setattr(B.R, 'file_readinto', lambda fd: d.readinto)
    return d


def bench(**kw):
    # the device as the safety gate cleared it (st 9:128): the read-back opens only a cleared device
    cleared = B._tape_safety.TapeIdentity(path='/dev/nst0', name='nst0', major=9, minor=128)
    return B.TapeBenchmark('/dev/nst0', read_back=True, step_seconds=10, op_timeout=10, identity=cleared, **kw)


def test_read_back_opens_read_only_rewinds_and_verifies_a_pattern_listed_twice(drive):
    # 'random' twice: two pools with two seeds; step k was written from pools[k % 2]
    pools = [(p, W.make_pool(p, size=4 * W.MIB, seed=i)) for i, p in enumerate(['random', 'random'])]
    steps, _c, _s = W.sweep(3, pools, [64 * KIB, 128 * KIB], 2 * W.MB, write=drive.write)
    result = {'sweep': steps, 'warnings': []}
    record = bench().read_back.run(pools, result)
    assert drive.opened == [('/dev/nst0', os.O_RDONLY)]
    assert drive.ops[:2] == [W.MTSETBLK, W.MTREW] and drive.ops[-1] == W.MTREW and record['rewound'] is True
    assert record['verified'] is True and len(record['steps']) == 4
    # (this "tape" is memory: a read is a memcpy, so the compare is a real share of the time and says so)
    assert not [w for w in result['warnings'] if 'did not verify' in w]
    assert bool([w for w in result['warnings'] if 'may be understated' in w]) == record['verify_capped']
    assert record['verification'] == 'regenerated' and record['verify_capacity_mb_s'] > 0
    assert record['bytes'] == sum(s['bytes'] for s in steps)


def test_read_back_too_small_fails_with_the_sentence_and_keeps_the_writes(drive):
    pools = [('random', W.make_pool('random', size=4 * W.MIB, seed=0))]
    steps, _c, _s = W.sweep(3, pools, [256 * KIB], 2 * W.MB, write=drive.write)
    result = {'sweep': steps, 'warnings': []}
    with pytest.raises(B.BenchmarkError) as caught:
        bench(read_back_block_size=64 * KIB).read_back.run(pools, result)
    exc = caught.value
    assert exc.reason == 'read_back_block_size_too_small'
    assert 'the tape was written with 256 KiB blocks: read with at least that' in exc.msg
    assert exc.partial['sweep'] == steps and exc.partial['read_back']['error'] == exc.msg
    assert exc.partial['read_back']['rewound'] is True and drive.ops[-1] == W.MTREW


def test_read_back_mismatch_is_a_warning_not_a_failure(drive):
    pools = [('2.5:1', W.make_pool('2.5:1', size=4 * W.MIB, seed=0))]
    steps, _c, _s = W.sweep(3, pools, [64 * KIB], 2 * W.MB, write=drive.write)
    drive.blocks[1] = bytes(len(drive.blocks[1]))
    result = {'sweep': steps, 'warnings': []}
    record = bench().read_back.run(pools, result)
    assert record['verified'] is False and record['mismatched_blocks'] == 1
    assert result['warnings'][0] == 'read-back did not verify: 1 block(s) differ from what was written.'


def test_read_back_with_nothing_written_reads_nothing(drive):
    record = bench().read_back.run([('random', bytearray(W.MIB))], {'sweep': [
        {'block_size': 65536, 'pattern': 'random', 'bytes': 0, 'blocks': 0, 'error': 'EINVAL: Invalid argument'}],
        'warnings': []})
    assert drive.opened == [] and record['verified'] is None and 'nothing to read back' in record['error']


@pytest.mark.parametrize('kwargs,words', [
    ({'read_back': False, 'read_back_block_size': 65536}, 'set read_back: true'),
    ({'read_back': True, 'read_back_block_size': 0}, 'must be a positive size'),
])
def test_read_back_arguments_are_checked_before_anything_runs(kwargs, words):
    with pytest.raises(ValueError) as caught:
        B.TapeBenchmark('/dev/nst0', **kwargs)
    assert words in str(caught.value)


def test_a_read_size_the_path_cannot_carry_is_refused_before_writing():
    b = bench(read_back_block_size=2 * 1024 * KIB)
    with pytest.raises(ValueError) as caught:
        b.read_back.check_size({'block_limits': {'min': 1, 'max': 1048576, 'granularity': 0}})
    assert 'read_back_block_size 2 MiB cannot be read on this path: above READ BLOCK LIMITS maximum 1048576' in \
        str(caught.value)
    bench(read_back_block_size=1024 * KIB).read_back.check_size({'block_limits': {'max': 1048576}})
