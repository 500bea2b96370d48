# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""fio for backup-source reads: job building, JSON and bandwidth-log parsing, series math.

Private to this collection: may change without notice. Pure functions only
(no I/O): the module runs fio, these turn what it prints into numbers.

Rates are decimal MB/s (10^6 bytes per second). fio's bandwidth logs are in
KiB/s (1024 bytes), its JSON ``bw_bytes`` in bytes/s.
"""

from __future__ import annotations

import json
import math

from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError

MB = 1000000.0

# fio 3.33 aborts (filesetup.c alloc_new_file: Assertion `0' failed) when its
# shared smalloc pool runs out. Measured on this collection's CI host with the
# default --alloc-size (16384 KiB): 260,000 files with 72-byte paths fit and
# 280,000 did not; 160,000 files with 241-byte paths fit and 200,000 did not.
# That is about 266 + len(path) bytes per file against a ~91 MB capacity.
# The sizing below is deliberately more generous (400 + len(path) bytes per
# file against 80 MB per 16384 KiB), and the pool is mapped lazily, so a
# larger value costs address space, not memory.
FIO_DEFAULT_ALLOC_KIB = 16384
_ALLOC_BYTES_PER_FILE = 400
_ALLOC_CAPACITY_PER_DEFAULT = 80 * 1000 * 1000

# Characters that fio's job-file parser does not pass through in a value
# (measured with fio 3.33): '#' and ';' start a comment anywhere on the line,
# '${' starts an environment-variable substitution, trailing white space is
# stripped, and a newline ends the line. Such paths are read through an alias
# (a symlink with a plain name in a private directory) instead.
_UNSAFE_SUBSTRINGS = ('#', ';', '${', '\n', '\r')


class FioParseError(TapeopsError, ValueError):
    """fio output that cannot be understood; the message says what to do."""


def whole_file_bssplit(block_size, min_size=1):
    """A ``bssplit`` that reads every byte of every file.

    With a fixed ``bs`` fio stops at the last whole block of a file: a 20 KB
    file read with bs=64k is opened and closed but never read, and every file
    loses its tail (fio 3.33, measured). With ``bs_unaligned`` and a split
    that holds ``block_size`` plus each smaller power of two down to
    ``min_size``, fio picks, near the end of a file, among the sizes that still
    fit, so the tail is read in a few small reads. In the body of a file
    ``100 - n`` percent of the reads are ``block_size``; kernel readahead sizes
    the I/O the disk sees, so the small reads cost a little CPU only.

    ``min_size`` must be 1 for buffered reads and the logical block size
    (e.g. 4096) for O_DIRECT, which cannot read less.
    """
    block_size = int(block_size)
    min_size = int(min_size)
    if block_size < 1 or min_size < 1 or min_size > block_size:
        raise ValueError('block_size must be >= min_size >= 1, got %r and %r.' % (block_size, min_size))
    smaller = []
    size = 1
    while size < block_size:
        if size >= min_size:
            smaller.append(size)
        size *= 2
    smaller.sort(reverse=True)
    if len(smaller) > 99:  # cannot happen below 2**99 bytes; keeps percentages positive
        smaller = smaller[:99]
    parts = ['%d/%d' % (block_size, 100 - len(smaller))]
    parts.extend('%d/1' % s for s in smaller)
    return ':'.join(parts)


def readable_bytes(size, min_size=1):
    """Bytes of a ``size``-byte file that fio reads with ``whole_file_bssplit(.., min_size)``."""
    size = int(size)
    if min_size <= 1:
        return size
    return size - size % int(min_size)


def needs_alias(path):
    """True if ``path`` cannot be written as a fio ``filename=`` value."""
    if any(s in path for s in _UNSAFE_SUBSTRINGS):
        return True
    return path != path.rstrip() or path != path.lstrip()


def escape_filename(path):
    """Escape a path for fio's ``filename=`` (':' separates names in fio)."""
    if needs_alias(path):
        raise ValueError('%r cannot be written in a fio job file; read it through an alias.' % path)
    # fio (options.c get_next_name) turns '\:' into ':' and leaves every
    # other backslash alone, so only the colons are escaped.
    return path.replace(':', '\\:')


def alloc_size_kib(paths):
    """``--alloc-size`` (KiB) that holds fio's per-file state for ``paths``.

    Returns the fio default (16384) for trees that fit in it.
    """
    need = 0
    count = 0
    for path in paths:
        need += _ALLOC_BYTES_PER_FILE + len(path.encode('utf-8', 'surrogateescape'))
        count += 1
    if need <= _ALLOC_CAPACITY_PER_DEFAULT:
        return FIO_DEFAULT_ALLOC_KIB
    factor = need / float(_ALLOC_CAPACITY_PER_DEFAULT)
    return int(math.ceil(FIO_DEFAULT_ALLOC_KIB * factor / 1024.0)) * 1024


def build_job(streams, block_size=65536, direct=False, min_size=1, time_budget_s=None,
              log_prefix_dir=None, invalidate=True):
    """fio job file text: one job per stream, all running in parallel.

    ``streams``: list of dicts ``{'name': str, 'files': [path, ...],
    'byte_budget': int or None}``; paths must already be escaped-safe
    (see ``needs_alias``). Each job reads its files in order, one open at a
    time (``file_service_type=sequential``, ``openfiles=1``), single-threaded
    with synchronous reads (``ioengine=psync``, ``iodepth=1``), as a backup
    agent reads one volume. Run it with ``fio --readonly``.
    """
    if not streams:
        raise ValueError('No streams to build a fio job from.')
    lines = [
        '; tapeops.qualify source_read_benchmark: file-by-file reads, one job per stream',
        '[global]',
        'rw=read',
        'ioengine=psync',
        'iodepth=1',
        'bssplit=%s' % whole_file_bssplit(block_size, min_size),
        'bs_unaligned=1',
        'file_service_type=sequential',
        'openfiles=1',
        'invalidate=%d' % (1 if invalidate else 0),
        # fio's default fadvise_hint=1 calls posix_fadvise(SEQUENTIAL) on every file, which doubles
        # the kernel readahead window; backup agents (tar, Data Protector, Bacula) do not.
        'fadvise_hint=0',
        'direct=%d' % (1 if direct else 0),
        'group_reporting=0',
        'log_avg_msec=1000',
    ]
    if time_budget_s:
        lines.append('runtime=%d' % int(time_budget_s))
    lines.append('')
    for stream in streams:
        name = stream['name']
        if not name or any(c in name for c in '[]\n #;=$'):
            raise ValueError('Stream name %r is not a valid fio job name.' % name)
        files = stream['files']
        if not files:
            raise ValueError('Stream %s has no files to read.' % name)
        lines.append('[%s]' % name)
        if log_prefix_dir:
            lines.append('write_bw_log=%s/%s' % (log_prefix_dir.rstrip('/'), name))
        if stream.get('byte_budget'):
            lines.append('io_size=%d' % int(stream['byte_budget']))
        for path in files:
            if ':' in path or needs_alias(path):
                path = escape_filename(path)
            lines.append('filename=' + path)
        lines.append('')
    return '\n'.join(lines)


def parse_json(text):
    """Parse ``fio --output-format=json`` output into per-job read figures.

    Text before the JSON (fio prints warnings and, with ``json,normal``, a
    preamble) is ignored. Returns ``{'fio_version', 'jobs': [{'name', 'error',
    'io_bytes', 'runtime_ms', 'bw_bytes', 'total_ios', 'usr_cpu', 'sys_cpu'}]}``.
    """
    if isinstance(text, bytes):
        text = text.decode('utf-8', 'replace')
    if text is None:
        raise FioParseError('fio printed nothing; run it by hand with the job file to see why.')
    start = _json_start(text)
    if start < 0:
        raise FioParseError('fio did not print JSON (first line: %r); check its stderr.' % text.strip()[:200])
    try:
        data, _end = json.JSONDecoder().raw_decode(text[start:])
    except (ValueError, RecursionError) as exc:
        raise FioParseError('fio JSON output is truncated or invalid (%s); was fio killed?' % exc) from exc
    if not isinstance(data, dict):
        raise FioParseError('fio JSON is not an object (%s); is this fio --output-format=json output?'
                            % type(data).__name__)
    jobs = []
    for job in data.get('jobs') or []:
        if not isinstance(job, dict):
            raise FioParseError('fio JSON job entry is not an object: %r' % (job,))
        read = job.get('read') or {}
        if not isinstance(read, dict):
            raise FioParseError('fio JSON job %r has a "read" that is not an object' % job.get('jobname'))
        try:
            jobs.append({
                'name': job.get('jobname'),
                'error': int(job.get('error') or 0),
                'io_bytes': int(read.get('io_bytes') or 0),
                'runtime_ms': int(read.get('runtime') or job.get('job_runtime') or 0),
                'bw_bytes': int(read.get('bw_bytes') or 0),
                'total_ios': int(read.get('total_ios') or 0),
                'usr_cpu': float(job.get('usr_cpu') or 0.0),
                'sys_cpu': float(job.get('sys_cpu') or 0.0),
            })
        except (TypeError, ValueError, OverflowError) as exc:
            raise FioParseError('fio JSON job %r holds a figure that is not a number (%s)'
                                % (job.get('jobname'), exc)) from exc
    if not jobs:
        raise FioParseError('fio JSON has no jobs; the job file defined none or fio failed before starting.')
    return {'fio_version': data.get('fio version'), 'jobs': jobs}


def _json_start(text):
    if text.startswith('{'):
        return 0
    pos = text.find('\n{')
    return pos + 1 if pos >= 0 else -1


def parse_log(text, warnings=None):
    """Parse a fio bandwidth/IOPS/latency log into ``[(time_ms, value, ddir, bs), ...]``.

    Lines are ``time, value, ddir, bs[, offset[, prio]]``; comment lines
    (``#``) and blank lines are skipped. ``bs`` is 0 for averaged logs.
    fio ends every line with a newline: a last line without one is what a
    killed fio leaves behind ("172, 84, 0, 8" of "172, 84, 0, 8192"), so it is
    dropped, and said in ``warnings`` (a list) when one is given. Any other
    line that does not parse raises FioParseError.
    """
    if isinstance(text, bytes):
        text = text.decode('utf-8', 'replace')
    text = text or ''
    lines = text.splitlines()
    cut = bool(text) and not text.endswith('\n')
    entries = []
    for number, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith('#'):
            continue
        if cut and number == len(lines):
            if warnings is not None:
                warnings.append('fio log ends in a cut line %r (fio stopped while writing it); dropped' % line[:80])
            continue
        fields = [f.strip() for f in line.split(',')]
        if len(fields) < 4:
            raise FioParseError('fio log line %d has %d fields, expected at least 4: %r' % (number, len(fields), line))
        try:
            entries.append((int(fields[0]), int(fields[1]), int(fields[2]), int(fields[3])))
        except ValueError as exc:
            raise FioParseError('fio log line %d is not numeric: %r' % (number, line)) from exc
    return entries


def series_mb_s(entries, window_ms=1000, ddir=0):
    """Per-window MB/s from bandwidth-log entries (values in KiB/s).

    With ``log_avg_msec`` equal to ``window_ms`` fio writes one averaged entry
    per window; entries are grouped by the window their timestamp falls in
    (``round(t / window_ms)``, so 1000 ms and 1001 ms are both window 1) and
    averaged if a window holds several. Returns a list indexed by window
    starting at window 1; a window with no entry (a stall longer than the
    window) is 0.0.
    """
    if window_ms <= 0:
        raise ValueError('window_ms must be positive.')
    buckets = {}
    for time_ms, value, entry_ddir, _bs in entries:
        if entry_ddir != ddir:
            continue
        index = max(1, int(round(time_ms / float(window_ms))))
        buckets.setdefault(index, []).append(value)
    if not buckets:
        return []
    last = max(buckets)
    series = []
    for index in range(1, last + 1):
        values = buckets.get(index)
        if values:
            series.append(round(sum(values) / float(len(values)) * 1024.0 / MB, 3))
        else:
            series.append(0.0)
    return series


def sum_series(series_list):
    """Element-wise sum of per-stream series (streams that ended count as 0)."""
    length = max([len(s) for s in series_list] or [0])
    total = [0.0] * length
    for series in series_list:
        for index, value in enumerate(series):
            total[index] += value
    return [round(v, 3) for v in total]


def percentile(values, pct):
    """Linear-interpolated percentile (numpy's default method) of ``values``."""
    if not values:
        return None
    if not 0 <= pct <= 100:
        raise ValueError('pct must be within 0..100, got %r.' % pct)
    ordered = sorted(values)
    rank = (len(ordered) - 1) * pct / 100.0
    low = int(math.floor(rank))
    high = int(math.ceil(rank))
    if low == high:
        return float(ordered[low])
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def floor_series(series, drop_last_partial=True):
    """The windows used for the sustained floor (p5, min).

    The last window of a stream that ran out of files is usually partial
    (fio logs the average over the part of the second it ran), and a stream
    that ended early is 0 afterwards in an aggregate; both would report a
    floor the source does not have. The last window is left out when there
    are at least three.
    """
    if drop_last_partial and len(series) >= 3:
        return series[:-1]
    return list(series)


def files_completed(sizes, io_bytes):
    """How many files of ``sizes`` (read in order) ``io_bytes`` covers in full."""
    done = 0
    remaining = int(io_bytes)
    for size in sizes:
        if size > remaining:
            break
        remaining -= size
        done += 1
    return done


def summarize(io_bytes, runtime_ms, series, files):
    """Per-stream (or aggregate) figures: mean, p5 and min over 1 s windows, files/s."""
    duration_s = runtime_ms / 1000.0
    mean = (io_bytes / MB / duration_s) if duration_s > 0 else 0.0
    floor = floor_series(series)
    p5 = percentile(floor, 5)
    low = min(floor) if floor else None
    return {
        'bytes': int(io_bytes),
        'files': int(files),
        'duration_s': round(duration_s, 3),
        'mean_mb_s': round(mean, 3),
        'p5_mb_s': round(p5, 3) if p5 is not None else round(mean, 3),
        'min_mb_s': round(low, 3) if low is not None else round(mean, 3),
        'files_per_s': round(files / duration_s, 3) if duration_s > 0 else 0.0,
        'series_mb_s': list(series),
    }
