# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Read back what the write sweep wrote: verify every block, time the reads.

Private to this collection: may change without notice.

What is on the tape. ``_tape_writer.sweep`` writes its steps back to back
into the first file of the tape, from BOT, with no file mark between them
(st writes one when the benchmark rewinds after writing): step *i* is
``blocks`` blocks of ``block_size`` bytes, block *j* being
``block_views(pool, block_size)[j % len(views)]`` of the step's pattern pool
(the last block shorter only after a short write at end of media). The
file-mark runs follow in the same file; the read-back stops before them (they
repeat one block size and one pattern, and would double the time for nothing
new).

How it is verified: by regenerating, not by checksums. The pattern pools of
the write sweep are still in memory in the same module run, so the expected
bytes of every block are a memoryview away. Comparing the read buffer (a
``bytearray``) with that view is one ``memcmp`` (CPython compares a bytearray
with any buffer that way: tens of GB/s), whereas a checksum recorded while
writing would have put a hash on the writer's CPU in the middle of the write
measurement, and a running hash on the read side costs about 1 GB/s of one
core (SHA-1/SHA-256), which an LTO-9 at 1000 MB/s compressed would hit.
Never ``memoryview == memoryview``: CPython compares those element by element,
about 0.8 GB/s, slow enough to cap a fast drive.

How the measurement stays out of its own way: each read is one read(2) into
the same buffer (``readinto``: no allocation per block; in variable-block mode
st turns it into one READ of that many bytes and hands back the block, shorter
or equal), and the time spent comparing is measured separately
(``verify_seconds``). ``verify_share`` is that time over the read-back's wall
time: the reads and the compares take turns on one thread, so without the
verify the rate could be at most ``mb_s / (1 - verify_share)``. The benchmark
warns when the share exceeds ``VERIFY_SHARE_WARN``; ``compare_capacity``
measures the compare rate in memory before the reads, so the report also says
how far above the read rate the verify's own ceiling is.

A buffer smaller than the block: the Linux st driver answers a variable-block
read whose buffer is shorter than the block on tape with ENOMEM ("Cannot
allocate memory", drivers/scsi/st.c, the ILI case with a negative residue).
``read_step`` turns that into :class:`ReadBlockTooSmall`, whose message says
which block size the tape was written with and to read with at least that.
"""

from __future__ import annotations

import errno
import io
import time

from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError

MB = 1000 * 1000
VERIFY_SHARE_WARN = 0.10
MAX_MISMATCHES_KEPT = 5


def fmt_size(nbytes):
    """256 KiB, 1 MiB, 1000 bytes: block sizes as a person writes them."""
    nbytes = int(nbytes)
    if nbytes >= 1024 * 1024 and nbytes % (1024 * 1024) == 0:
        return '%d MiB' % (nbytes // (1024 * 1024))
    if nbytes >= 1024 and nbytes % 1024 == 0:
        return '%d KiB' % (nbytes // 1024)
    return '%d bytes' % nbytes


def too_small_words(written, read_size):
    """The sentence for a read buffer smaller than the block on tape."""
    return 'the tape was written with %s blocks: read with at least that (a read of %s got ENOMEM from ' \
           'the st driver, which is what a variable-block read smaller than the block gives)' % (
               fmt_size(written), fmt_size(read_size))


class ReadBlockTooSmall(TapeopsError):
    """A read(2) smaller than the block on tape (st: ENOMEM)."""

    reason = 'read_back_block_size_too_small'

    def __init__(self, written, read_size, step=None, block=None, record=None):
        self.written = int(written)
        self.read_size = int(read_size)
        self.step = step
        self.block = block
        self.record = record
        where = ''
        if step is not None:
            where = ' at block %d of sweep step %d' % (block, step)
        self.msg = 'Read-back stopped%s: %s. Set read_back_block_size to %s or more, or leave it unset to ' \
                   'read each step at the size it was written.' % (
                       where, too_small_words(self.written, self.read_size), fmt_size(self.written))
        super().__init__(self.msg)


def rate_mb_s(nbytes, seconds):
    """Decimal MB/s, one decimal; None when no time passed."""
    if not seconds or seconds <= 0:
        return None
    return round(nbytes / float(seconds) / MB, 1)


def block_length(step, index):
    """Bytes of block ``index`` of a sweep step (shorter only for the last block after a short write)."""
    size = int(step['block_size'])
    return min(size, int(step['bytes']) - index * size)


def tape_steps(sweep):
    """The sweep steps that put blocks on the tape, in tape order, with their index in the sweep."""
    return [(i, s) for i, s in enumerate(sweep or []) if s.get('blocks') and s.get('bytes')]


def file_readinto(fd):
    """``readinto(buf)`` for ``fd``: one read(2) of len(buf) bytes into ``buf`` (no copy, no allocation)."""
    raw = io.FileIO(fd, 'rb', closefd=False)
    return raw.readinto


def first_difference(got, want):
    """Offset of the first byte that differs (or the shorter length)."""
    n = min(len(got), len(want))
    lo, hi = 0, n
    # Binary search over slices compared with memcmp: cheap even for 1 MiB blocks.
    if bytes(got[:n]) == bytes(want[:n]):
        return n
    while hi - lo > 64:
        mid = (lo + hi) // 2
        if bytes(got[lo:mid]) != bytes(want[lo:mid]):
            hi = mid
        else:
            lo = mid
    for i in range(lo, hi):
        if got[i] != want[i]:
            return i
    return hi


def compare_capacity(view, total=64 * MB, clock=time.perf_counter):
    """MB/s at which this host compares a read buffer with an expected block (the verify's own ceiling)."""
    buf = bytearray(view)
    rounds = max(1, int(total // max(1, len(buf))))
    start = clock()
    same = True
    for _round in range(rounds):
        same = (buf == view) and same
    seconds = clock() - start
    if not same:
        raise AssertionError('a buffer did not compare equal to its own copy')
    return rate_mb_s(rounds * len(buf), seconds)


def _step_record(step, read_size, seconds, got_bytes, blocks, series, mismatched, mismatches, verify_seconds,
                 error, err_no):
    """The record ``read_step`` returns (``seconds``: the wall time of the step's reads so far)."""
    expected_blocks = int(step['blocks'])
    return {
        'block_size': int(step['block_size']),
        'pattern': step.get('pattern'),
        'read_size': read_size,
        'bytes': got_bytes,
        'blocks': blocks,
        'blocks_expected': expected_blocks,
        'seconds': round(seconds, 6),
        'mb_s': rate_mb_s(got_bytes, seconds),
        'write_mb_s': step.get('mb_s'),
        'series_mb_s': series,
        'verified': error is None and mismatched == 0 and blocks == expected_blocks,
        'mismatched_blocks': mismatched,
        'mismatches': mismatches,
        'verify_seconds': round(verify_seconds, 6),
        'error': error,
        'errno': err_no,
    }


def _mismatch(index, want_len, n, buf, want):
    return {'block': index, 'expected_bytes': want_len, 'read_bytes': n,
            'first_difference': first_difference(memoryview(buf)[:n], want)}


def read_step(step, views, read_size, readinto, clock=time.monotonic, step_index=None):
    """Read one sweep step back (``step['blocks']`` reads of ``read_size``) and verify each block.

    ``views`` are the step's expected blocks (``_tape_writer.block_views``),
    ``readinto(buf)`` one read(2) into ``buf`` returning the byte count.
    Returns ``_step_record``'s ``{block_size, pattern, read_size, bytes, blocks,
    seconds, mb_s, write_mb_s, series_mb_s, verified, mismatched_blocks,
    mismatches, verify_seconds, error, errno}``. A file mark or end of data
    before the last block, a block of the wrong length or content, and an I/O
    error make ``verified`` false; a buffer smaller than the block raises
    :class:`ReadBlockTooSmall` (with the record so far in ``record``).
    """
    expected_blocks = int(step['blocks'])
    buf, nviews = bytearray(read_size), len(views)
    got_bytes = blocks = mismatched = tick_bytes = 0
    mismatches, series = [], []
    verify_seconds = 0.0
    error = err_no = None
    start = clock()
    tick = start + 1.0
    for index in range(expected_blocks):
        want = views[index % nviews]
        want_len = block_length(step, index)
        if want_len != len(want):
            want = want[:want_len]
        try:
            n = readinto(buf)
        except OSError as exc:
            err_no = exc.errno
            if err_no == errno.ENOMEM and read_size < want_len:
                error = 'ENOMEM: %s' % too_small_words(want_len, read_size)
                raise ReadBlockTooSmall(want_len, read_size, step_index, index, _step_record(
                    step, read_size, clock() - start, got_bytes, blocks, series, mismatched, mismatches,
                    verify_seconds, error, err_no)) from None
            error = '%s: %s (block %d of %d)' % (errno.errorcode.get(err_no, err_no), exc.strerror, index,
                                                 expected_blocks)
            break
        if not n:
            error = 'a file mark or end of data after %d of %d blocks' % (index, expected_blocks)
            break
        blocks += 1
        got_bytes += n
        check = clock()
        # bytearray == memoryview is one memcmp; a slice of the bytearray (a short block) is a memcpy first.
        same = (buf == want) if n == read_size else (buf[:n] == want)
        now = clock()
        verify_seconds += now - check
        if not same:
            mismatched += 1
            if len(mismatches) < MAX_MISMATCHES_KEPT:
                mismatches.append(_mismatch(index, want_len, n, buf, want))
        if now >= tick:
            series.append(round((got_bytes - tick_bytes) / (now - tick + 1.0) / MB, 1))
            tick_bytes = got_bytes
            tick = now + 1.0
    return _step_record(step, read_size, clock() - start, got_bytes, blocks, series, mismatched, mismatches,
                        verify_seconds, error, err_no)


def summarize(records, capacity_mb_s=None):
    """The read-back's totals from its per-step records: rates, verification, the verify's share."""
    total = sum(r['bytes'] for r in records)
    seconds = sum(r['seconds'] for r in records)
    written_seconds = 0.0
    written_bytes = 0
    for r in records:
        if r.get('write_mb_s'):
            written_bytes += r['bytes']
            written_seconds += r['bytes'] / (r['write_mb_s'] * MB)
    verify_seconds = sum(r['verify_seconds'] for r in records)
    done = [r for r in records if r['blocks'] and r['mb_s']]
    best = max(done, key=lambda r: r['mb_s']) if done else None
    errors = [r['error'] for r in records if r['error']]
    share = round(verify_seconds / seconds, 4) if seconds else None
    return {
        'bytes': total,
        'blocks': sum(r['blocks'] for r in records),
        'seconds': round(seconds, 6),
        'mb_s': rate_mb_s(total, seconds),
        'write_mb_s': rate_mb_s(written_bytes, written_seconds),
        'series_mb_s': [x for r in records for x in r['series_mb_s']],
        'verified': bool(records) and all(r['verified'] for r in records),
        'mismatched_blocks': sum(r['mismatched_blocks'] for r in records),
        'error': errors[0] if errors else None,
        'verify_seconds': round(verify_seconds, 6),
        'verify_share': share,
        'verify_capacity_mb_s': capacity_mb_s,
        'verify_capped': None if share is None else share > VERIFY_SHARE_WARN,
        'best': {'block_size': best['block_size'], 'pattern': best['pattern'], 'read_size': best['read_size'],
                 'mb_s': best['mb_s']} if best else None,
    }
