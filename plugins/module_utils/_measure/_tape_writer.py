# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Write from memory to a tape drive as fast as the drive takes it.

Private to this collection: may change without notice.

- ``make_pool``: a fixed pattern pool generated ONCE (zeros, random, or data of
  a target compressibility); the write loop only cycles through precomputed
  memoryview slices of it, so making data costs nothing per block and memory
  stays bounded (the pool, nothing else) whatever the volume written.
- ``write_stream``: ``os.write`` of whole blocks (one block per write: st in
  variable-block mode turns each write into one tape block), a per-second rate
  series, and the error that stopped it (EINVAL for a block the path rejects,
  ENOSPC at end of media).
- ``mtop`` / ``mtget``: the st ioctls (MTIOCTOP with ``struct mtop`` packed as
  ``'hi'`` native, MTIOCGET), each bounded by a timeout.

Nothing here decides whether a device may be written: ``_tape_safety`` does,
and ``_tape_benchmark`` only opens devices it has cleared.
"""

from __future__ import annotations

import errno
import itertools
import os
import random
import struct
import threading
import time
import zlib

from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError

# include/uapi/linux/mtio.h
MTWEOF = 5
MTREW = 6
MTSETBLK = 20
MTWEOFI = 35
_MTOP = struct.Struct('hi')
_MTGET = struct.Struct('lllllii')


def _ioc(direction, type_char, number, size):
    # include/uapi/asm-generic/ioctl.h: dir(2) size(14) type(8) nr(8)
    return (direction << 30) | (size << 16) | (ord(type_char) << 8) | number


MTIOCTOP = _ioc(1, 'm', 1, _MTOP.size)   # 0x40086d01 on Linux x86_64/arm64
MTIOCGET = _ioc(2, 'm', 2, _MTGET.size)  # 0x80306d02 on 64-bit Linux

MB = 1000 * 1000
MIB = 1024 * 1024
POOL_BYTES = 32 * MIB
PATTERNS = ('zeros', 'random', '2:1', '2.5:1')


class TapeTimeout(TapeopsError):
    """A tape operation did not finish within its deadline."""

    reason = 'timeout'


def call_with_timeout(func, timeout, what):
    """Run ``func()`` in a helper thread; raise TapeTimeout after ``timeout`` s.

    A hung SCSI command cannot be interrupted from user space; the thread is a
    daemon, so the module can still report the timeout and exit.
    """
    box = {}

    def target():
        try:
            box['value'] = func()
        except BaseException as exc:  # pylint: disable=broad-except
            box['error'] = exc

    thread = threading.Thread(target=target, name='tape-op', daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise TapeTimeout('%s did not finish within %s seconds.' % (what, timeout))
    if 'error' in box:
        raise box['error']
    return box.get('value')


def mtop(fd, op, count=1, timeout=None, ioctl=None):
    """Issue MTIOCTOP ``op`` with ``count`` on ``fd`` (bounded by ``timeout``)."""
    if ioctl is None:
        import fcntl
        ioctl = fcntl.ioctl
    arg = _MTOP.pack(op, count)
    if timeout is None:
        return ioctl(fd, MTIOCTOP, arg)
    return call_with_timeout(lambda: ioctl(fd, MTIOCTOP, arg), timeout, 'Tape operation %d' % op)


def mtget(fd, timeout=30, ioctl=None):
    """MTIOCGET on ``fd`` into a dict (gstat flags decoded)."""
    if ioctl is None:
        import fcntl
        ioctl = fcntl.ioctl
    from ansible_collections.tapeops.qualify.plugins.module_utils._tools._mt import gstat_flags
    raw = call_with_timeout(lambda: ioctl(fd, MTIOCGET, bytes(_MTGET.size)), timeout, 'MTIOCGET')
    mt_type, resid, dsreg, gstat, erreg, fileno, blkno = _MTGET.unpack(raw)
    gstat &= 0xffffffff
    return {
        'type': mt_type, 'resid': resid, 'dsreg': dsreg, 'gstat': gstat, 'erreg': erreg,
        'file_number': fileno, 'block_number': blkno, 'flags': gstat_flags(gstat),
        'block_size': dsreg & 0xffffff, 'density_code': (dsreg >> 24) & 0xff,
    }


# ---------------------------------------------------------------- patterns

def parse_ratio(pattern):
    """``'2.5:1'`` -> 2.5; zeros/random -> None."""
    if pattern in ('zeros', 'random'):
        return None
    try:
        left, right = pattern.split(':')
        ratio = float(left) / float(right)
    except (ValueError, ZeroDivisionError):
        raise ValueError('Unknown data pattern %r: use zeros, random or a ratio such as 2:1 or 2.5:1.' % pattern)
    if ratio < 1.0 or ratio > 50:
        raise ValueError('Compression ratio %r is out of range (1:1 to 50:1).' % pattern)
    return ratio


def _compressible(size, ratio, rng, unit=4096):
    """Random bytes mixed with zero runs: zlib/LZ compressors get ``ratio``.

    Each ``unit`` holds ``k`` fresh random bytes then ``unit - k`` zeros; ``k``
    is calibrated once with zlib on a sample so the measured ratio hits the
    target (zlib's per-run overhead is why ``k`` is not simply unit/ratio).
    """
    def build(nbytes, k):
        units = nbytes // unit
        rnd = rng.randbytes(units * k)
        buf = bytearray(units * unit)
        for i in range(units):
            buf[i * unit:i * unit + k] = rnd[i * k:(i + 1) * k]
        return buf

    k = max(1, min(unit, int(round(unit / ratio))))
    sample = 1 * MIB
    for _attempt in range(4):
        measured = sample / float(len(zlib.compress(bytes(build(sample, k)), 6)))
        k = max(1, min(unit, int(round(k * measured / ratio))))
    buf = build(size - size % unit, k)
    return buf


def make_pool(pattern, size=POOL_BYTES, seed=0):
    """Generate the pool for ``pattern`` once; returns a bytearray of ``size``."""
    ratio = parse_ratio(pattern)
    rng = random.Random(seed)
    if pattern == 'zeros':
        return bytearray(size)
    if pattern == 'random':
        return bytearray(rng.randbytes(size))
    return _compressible(size, ratio, rng)


def block_views(pool, block_size, max_views=64):
    """Up to ``max_views`` distinct block-sized memoryviews into ``pool``.

    Offsets step by an odd multiple of 4 KiB so consecutive blocks differ.
    """
    if block_size > len(pool):
        raise ValueError('block size %d is larger than the pattern pool (%d bytes)' % (block_size, len(pool)))
    view = memoryview(pool)
    span = len(pool) - block_size
    if span == 0:
        return [view[0:block_size]]
    step = max(4096, (span // max_views) // 4096 * 4096)
    offsets = list(range(0, span + 1, step))[:max_views]
    return [view[o:o + block_size] for o in offsets]


def compression_ratio(data):
    """zlib ratio of ``data`` (used by tests and the plan report)."""
    return len(data) / float(len(zlib.compress(bytes(data), 6)))


# ---------------------------------------------------------------- streams

def write_stream(fd, views, total_bytes, max_seconds=None, write=os.write,
                 clock=time.monotonic, deadline_check_every=1):
    """Write blocks cycled from ``views`` to ``fd`` until ``total_bytes``.

    Returns ``{bytes, blocks, seconds, mb_s, series_mb_s, error, errno}``.
    ``series_mb_s`` holds one rate per whole second of writing (decimal MB/s).
    Stops early, without raising, on the first OSError (reported in
    ``error``/``errno``: EINVAL = block size rejected, ENOSPC = end of media)
    or when ``max_seconds`` have passed.
    """
    written = 0
    blocks = 0
    series = []
    error = None
    err_no = None
    start = clock()
    tick = start + 1.0
    tick_bytes = 0
    limit = start + max_seconds if max_seconds else None
    for buf in itertools.cycle(views):
        try:
            count = write(fd, buf)
        except OSError as exc:
            error = '%s: %s' % (errno.errorcode.get(exc.errno, exc.errno), exc.strerror)
            err_no = exc.errno
            break
        written += count
        blocks += 1
        if count != len(buf):
            error = 'short write: %d of %d bytes (early warning / end of media)' % (count, len(buf))
            err_no = errno.ENOSPC
            break
        if written >= total_bytes:
            break
        now = clock()
        if now >= tick:
            series.append(round((written - tick_bytes) / (now - tick + 1.0) / MB, 1))
            tick_bytes = written
            tick = now + 1.0
            if limit is not None and now >= limit:
                break
    seconds = clock() - start
    return {
        'bytes': written,
        'blocks': blocks,
        'seconds': round(seconds, 6),
        'mb_s': round(written / seconds / MB, 1) if seconds > 0 else None,
        'series_mb_s': series,
        'error': error,
        'errno': err_no,
    }


def sweep(fd, pools, block_sizes, bytes_per_step, max_seconds=None, write=os.write,
          on_step=None, step_timeout=None, clock=time.monotonic, steps=None):
    """Block-size x pattern sweep. ``pools`` is ``[(pattern, pool), ...]``.

    A block size rejected with EINVAL ends the sweep there: every smaller size
    that worked is kept and ``ceiling_block_size`` is the largest accepted.
    ENOSPC (end of media) ends the sweep too. ``on_step(step)`` runs around
    each step (the benchmark reads st counters there; never log pages).
    ``write`` and ``clock`` are ``write_stream``'s (tests replay a recorded drive through them).
    ``steps``: the caller's list, each step appended as it ends, so the steps measured before a step that
    times out (TapeTimeout) stay with the caller.
    Returns ``(steps, ceiling_block_size, stop_reason)``.
    """
    steps = [] if steps is None else steps
    ceiling = None
    stop = None
    for block_size in sorted(block_sizes):
        rejected = False
        accepted = False
        for pattern, pool in pools:
            views = block_views(pool, block_size)
            context = on_step('before', block_size, pattern) if on_step else None

            def run(views=views):  # pylint: disable=dangerous-default-value
                # Binds this step's views (a late-binding closure would see the last ones).
                return write_stream(fd, views, bytes_per_step, max_seconds, write=write, clock=clock)

            if step_timeout:
                result = call_with_timeout(run, step_timeout, 'Writing %d-byte blocks' % block_size)
            else:
                result = run()
            step = {'block_size': block_size, 'pattern': pattern}
            step.update(result)
            if on_step:
                step.update(on_step('after', block_size, pattern, context) or {})
            steps.append(step)
            # Any block written at this size proves the path carries it, even
            # when the step then ends at end of media (ENOSPC).
            accepted = accepted or result['bytes'] > 0
            if result['errno'] == errno.EINVAL and result['bytes'] == 0:
                rejected = True
                break
            if result['errno'] is not None:
                stop = result['error']
                break
        if accepted:
            ceiling = block_size
        if rejected:
            stop = 'block size %d rejected (EINVAL): ceiling is %s' % (block_size, ceiling)
            break
        if stop:
            break
    return steps, ceiling, stop


def filemark_run(fd, views, payload_bytes, segment_bytes, mark, write=os.write, clock=time.monotonic):
    """Write ``payload_bytes`` with ``mark(fd)`` after every ``segment_bytes``.

    ``segment_bytes`` None or >= payload means no file mark (the baseline).
    Returns ``{bytes, seconds, marks, mb_s, mark_seconds, error}``; the time of
    the file-mark calls is also summed separately (``mark_seconds``).
    """
    written = 0
    marks = 0
    mark_seconds = 0.0
    error = None
    start = clock()
    while written < payload_bytes:
        chunk = payload_bytes - written
        if segment_bytes:
            chunk = min(chunk, segment_bytes)
        result = write_stream(fd, views, chunk, write=write, clock=clock)
        written += result['bytes']
        if result['error']:
            error = result['error']
            break
        if segment_bytes and segment_bytes < payload_bytes and result['bytes'] >= chunk:
            mark_start = clock()
            try:
                mark(fd)
            except OSError as exc:
                # the segment before it is on the tape: its bytes stay counted (the st counters hold them too)
                error = '%s: %s' % (errno.errorcode.get(exc.errno, exc.errno), exc.strerror)
                break
            mark_seconds += clock() - mark_start
            marks += 1
    seconds = clock() - start
    return {
        'bytes': written,
        'seconds': round(seconds, 6),
        'marks': marks,
        'mb_s': round(written / seconds / MB, 1) if seconds > 0 else None,
        'mark_seconds': round(mark_seconds, 6),
        'error': error,
    }
