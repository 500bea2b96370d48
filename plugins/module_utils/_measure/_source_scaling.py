# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Source reads at several stream counts: which streams read what, passes, samples, file sizes.

Private to this collection: may change without notice. Pure functions only
(no I/O): ``_source_read`` runs fio and hands the numbers here.

Backup software splits its concurrency by source: each stream (Data Protector
Disk Agent, Bacula/Bareos job, NetBackup stream) reads whole sources, one file
at a time, and several sources are read in parallel. Only when more streams are
asked for than there are sources is a source cut into parts (contiguous runs of
its files in walk order, i.e. whole directories where the sizes allow), as
NetBackup's multiple data streams or Commvault's several data readers per mount
point do. No file is ever read by two streams.
"""

from __future__ import annotations

import os

from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _forecast
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _fio

# Below this many one-second samples the aggregate is marked inconclusive: the
# verdict's own minimum (_forecast.MIN_SAMPLES, docs/verdict.md "Too little
# data"), one rule. Estimate, with its rule: the 5th percentile of fewer than
# 10 samples is the lowest second (or an interpolation towards it), so one
# slow second would set the sustained floor on its own.
DEFAULT_MIN_SAMPLES = _forecast.MIN_SAMPLES

# File-size classes of the histogram (cumulative: share below each bound).
HISTOGRAM_BOUNDS = (65536, 1048576, 16777216, 268435456, 4294967296)

# A tree is called file-count bound when at least this share of its files is
# below 64 KiB. Estimate, with its rule: a file of 64 KiB or less is one read
# call (the module's default read size) and one readahead window, so opening it,
# looking up its inode and seeking to it cost as much as or more than reading
# its data; when half the files are that small, the file count sets the pace.
SMALL_FILE_BYTES = 65536
SMALL_FILE_SHARE = 0.5


def scaling_steps(streams, enabled=True, explicit=None, max_streams=None):
    """Stream counts to measure, ascending; always holds ``streams`` (the main measurement).

    ``explicit``: the counts to measure (the main count is added). Otherwise,
    when ``enabled``: 1, 2, 4, ... below the top, then the top, where the top is
    ``max(streams, max_streams)``.
    """
    streams = int(streams)
    if streams < 1:
        raise ValueError('streams must be at least 1.')
    if explicit:
        counts = set(int(c) for c in explicit)
        if min(counts) < 1:
            raise ValueError('scaling_streams must hold positive stream counts, got %s.' % sorted(counts))
        counts.add(streams)
        return sorted(counts)
    if not enabled:
        return [streams]
    top = max(streams, int(max_streams or streams))
    counts = set([streams, top])
    value = 1
    while value < top:
        counts.add(value)
        value *= 2
    return sorted(counts)


def _split_unit(unit):
    """Cut a unit's file list in two contiguous parts of about equal bytes; None if it holds one file.

    The cut goes between two directories when one lies within 25-75 % of the
    bytes (the part closest to half wins), else between the two files closest to half.
    """
    files = unit['files_sizes']
    if len(files) < 2:
        return None
    total = float(sum(size for _path, size in files))
    best = best_dir = None
    before = 0
    for index in range(1, len(files)):
        before += files[index - 1][1]
        distance = abs(before - total / 2.0)
        if best is None or distance < best[0]:
            best = (distance, index)
        new_dir = os.path.dirname(files[index - 1][0]) != os.path.dirname(files[index][0])
        if new_dir and 0.25 * total <= before <= 0.75 * total and (best_dir is None or distance < best_dir[0]):
            best_dir = (distance, index)
    cut = (best_dir or best)[1]
    return dict(unit, files_sizes=files[:cut]), dict(unit, files_sizes=files[cut:])


def _split_units(units, count):
    """Halve the largest units until there are ``count`` (or every unit is one file); True when one was cut.

    The parts of a source cut are numbered so the result can say "part 2 of 3".
    """
    split = False
    while len(units) < count:
        order = sorted(range(len(units)), key=lambda i: -sum(s for _p, s in units[i]['files_sizes']))
        for index in order:
            halves = _split_unit(units[index])
            if halves is not None:
                units[index:index + 1] = list(halves)
                split = True
                break
        else:
            break   # every unit is a single file: no more streams possible
    if split:
        by_path = {}
        for unit in units:
            by_path.setdefault(unit['path'], []).append(unit)
        for parts in by_path.values():
            if len(parts) > 1:
                for number, unit in enumerate(parts, 1):
                    unit['part'] = [number, len(parts)]
    return split


def _share_units(units, count):
    """``count`` lists of units: one each, or the largest first onto the stream with the fewest bytes."""
    streams = [{'units': [], 'bytes': 0} for _i in range(count)]
    if len(units) == count:
        for stream, unit in zip(streams, units):
            stream['units'].append(unit)
        return [stream['units'] for stream in streams]
    # Largest source first onto the stream with the fewest bytes (ties: the lower index).
    ranked = sorted(range(len(units)), key=lambda i: (-sum(s for _p, s in units[i]['files_sizes']), i))
    for index in ranked:
        target = min(range(count), key=lambda i: (streams[i]['bytes'], i))
        streams[target]['units'].append(units[index])
        streams[target]['bytes'] += sum(s for _p, s in units[index]['files_sizes'])
    for stream in streams:
        # Sources in the order the user gave them (a stream reads them one after another).
        stream['units'].sort(key=units.index)
    return [stream['units'] for stream in streams]


def assign_streams(sources, count):
    """Split the sources among ``count`` streams, as backup software splits its concurrency.

    ``sources``: ``[{'path', 'files_sizes': [(path, size), ...], ...}]`` in the
    order given. Returns ``(streams, split)`` where each stream is
    ``{'name', 'units': [unit, ...], 'files_sizes': [...], 'paths': [...]}`` and
    ``split`` says whether a source had to be cut into parts. With fewer
    streams than sources, each stream reads several whole sources one after
    another (largest first onto the least loaded stream); with more, the
    largest parts are halved until there are enough. The count is capped at
    the number of files (a file is never read by two streams).
    """
    count = int(count)
    if count < 1:
        raise ValueError('A step needs at least one stream.')
    units = [dict(source, part=None) for source in sources if source['files_sizes']]
    if not units:
        raise ValueError('No source holds a file to read.')
    split = _split_units(units, count)
    out = []
    for number, stream_units in enumerate(_share_units(units, min(count, len(units)))):
        files = [item for unit in stream_units for item in unit['files_sizes']]
        paths = []
        for unit in stream_units:
            if unit['path'] not in paths:
                paths.append(unit['path'])
        out.append({'name': 'stream%d' % number, 'units': stream_units, 'files_sizes': files, 'paths': paths})
    return out, split


def passes_read(read_sizes, io_bytes):
    """(passes, files read in full, complete) for a stream that looped over its files.

    ``read_sizes``: bytes fio reads of each file per pass, in order. fio starts
    again at the first file when a pass ends (``time_based`` or an ``io_size``
    larger than the files), so ``io_bytes`` covers whole passes and a part of
    the next one. ``passes`` is fractional (2.4 = two whole passes and 40 % of
    the bytes of a third).
    """
    per_pass = sum(read_sizes)
    io_bytes = int(io_bytes)
    if per_pass <= 0:
        return 0.0, 0, False
    full = io_bytes // per_pass
    rest = io_bytes - full * per_pass
    files = full * len(read_sizes) + _fio.files_completed(read_sizes, rest)
    return round(io_bytes / float(per_pass), 3), int(files), full >= 1


def sample_count(series):
    """One-second samples the sustained floor (p5, min) rests on (the last, partial, second left out)."""
    return len(_fio.floor_series(series))


def inconclusive_reason(samples, min_samples, seconds, passes, time_budget, byte_budget, stopped_by_bytes):
    """None, or a sentence saying why the figures are too short to trust and what to change."""
    if samples >= min_samples:
        return None
    head = ('Only %d one-second sample%s (at least %d needed): ' % (samples, '' if samples == 1 else 's', min_samples))
    if stopped_by_bytes:
        return head + ('the byte budget (%d bytes per stream) was reached after %.1f s; raise byte_budget so that '
                       'the read lasts at least %d s.' % (byte_budget, seconds, min_samples + 1))
    if not time_budget:
        return head + ('with no time budget the tree was read once, in %.1f s (%.2f passes); set time_budget to '
                       'at least %d s so that short trees are read again until it ends.'
                       % (seconds, passes, min_samples + 1))
    return head + ('the time budget of %d s is too short; give at least %d s.' % (time_budget, min_samples + 1))


def per_drive(aggregate, streams, drives, streams_per_drive):
    """The host's all-drives-at-once read apportioned per drive.

    ``aggregate``: the host's aggregate figures (all streams of all drives read
    at once); ``streams``: the per-stream figures in stream order, where drive
    ``d`` was given streams ``d * streams_per_drive .. (d + 1) * streams_per_drive - 1``.
    ``aggregate`` and ``series_mb_s`` here are the host's divided by the number
    of drives (what each drive gets when the backup software spreads its
    streams evenly); ``groups`` are the streams each drive was given, measured.
    """
    drives = int(drives)
    share = [round(value / drives, 3) for value in aggregate.get('series_mb_s') or []]
    per = {}
    for key in ('mean_mb_s', 'p5_mb_s', 'min_mb_s', 'files_per_s'):
        value = aggregate.get(key)
        per[key] = round(value / drives, 3) if value is not None else None
    per['bytes'] = int(aggregate.get('bytes', 0) // drives)
    per['duration_s'] = aggregate.get('duration_s')
    per['streams'] = int(streams_per_drive)
    groups = []
    for drive in range(drives):
        members = streams[drive * streams_per_drive:(drive + 1) * streams_per_drive]
        if not members:
            groups.append({'drive': drive, 'streams': 0, 'paths': [], 'mean_mb_s': 0.0, 'p5_mb_s': 0.0,
                           'min_mb_s': 0.0, 'series_mb_s': []})
            continue
        series = _fio.sum_series([m['series_mb_s'] for m in members])
        figures = _fio.summarize(sum(m['bytes'] for m in members), max(m['duration_s'] for m in members) * 1000.0,
                                 series, sum(m['files'] for m in members))
        paths = []
        for member in members:
            for path in member.get('paths') or [member['path']]:
                if path not in paths:
                    paths.append(path)
        groups.append({'drive': drive, 'streams': len(members), 'paths': paths, 'mean_mb_s': figures['mean_mb_s'],
                       'p5_mb_s': figures['p5_mb_s'], 'min_mb_s': figures['min_mb_s'],
                       'series_mb_s': figures['series_mb_s']})
    return {
        'drives': drives,
        'streams_per_drive': int(streams_per_drive),
        'aggregate': per,
        'series_mb_s': share,
        'groups': groups,
        'basis': ('one read of all %d drives\' streams at once (%d x %d), the host aggregate divided by %d; '
                  'groups are the streams given to each drive' % (drives, drives, streams_per_drive, drives)),
    }


def _human_bytes(value):
    for unit, size in (('GiB', 1073741824), ('MiB', 1048576), ('KiB', 1024)):
        if value >= size:
            return '%g %s' % (round(value / float(size), 1), unit)
    return '%d bytes' % value


def file_size_profile(sizes, files_per_s_ceiling):
    """Histogram of the files read and what it says about the source.

    ``sizes``: bytes of each file read (each file once). ``histogram``: per bound,
    the share of the files and of the bytes in files smaller than it
    (cumulative). ``files_per_s_ceiling``: the most files per second the read
    reached (over all stream counts measured); with a tree of small files that
    is what limits a backup.
    """
    sizes = [int(s) for s in sizes]
    count = len(sizes)
    total = sum(sizes)
    histogram = []
    for bound in HISTOGRAM_BOUNDS:
        below = [s for s in sizes if s < bound]
        histogram.append({
            'below_bytes': bound,
            'files_share': round(len(below) / float(count), 4) if count else 0.0,
            'bytes_share': round(sum(below) / float(total), 4) if total else 0.0,
        })
    small = histogram[0]
    bound = small['files_share'] >= SMALL_FILE_SHARE
    mean = total / float(count) if count else 0.0
    text = '%d %% of the files are under 64 KiB (%s %% of the bytes); mean file size %s.' % (
        round(small['files_share'] * 100), round(small['bytes_share'] * 100, 1), _human_bytes(mean))
    if files_per_s_ceiling:
        text += ' At most %.0f files/s were read.' % files_per_s_ceiling
    if bound:
        text += ' This source is file-count bound: the time per file, not the disk\'s bandwidth, sets its rate.'
    return {
        'files': count,
        'bytes': total,
        'mean_file_bytes': int(round(mean)),
        'histogram': histogram,
        'files_per_s_ceiling': round(files_per_s_ceiling, 3) if files_per_s_ceiling else None,
        'small_file_bound': bound,
        'small_file_rule': ('estimate: at least %d %% of the files below %s (one read call each: the per-file cost '
                            'outweighs the data)' % (round(SMALL_FILE_SHARE * 100), _human_bytes(SMALL_FILE_BYTES))),
        'text': text,
    }


def time_estimate(steps, time_budget, ingest):
    """Seconds the reads take at most (not counting the walk and fio's start-up)."""
    if not time_budget:
        return None
    return int(time_budget) * (len(steps) + (1 if ingest else 0))


def parse_log_lenient(text):
    """fio log entries, keeping every well-formed line; returns (entries, lines left out).

    A log cut short (fio killed, disk full) ends in a partial line, which
    ``_fio.parse_log`` drops with a warning; any other malformed line is left
    out here too, so the seconds around it are still good figures.
    """
    notes = []
    try:
        return _fio.parse_log(text, warnings=notes), len(notes)
    except _fio.FioParseError:
        pass
    entries = []
    bad = 0
    for line in (text or '').splitlines():
        try:
            # Each line with its newline: parsed on its own, it is not the cut end of the log.
            entries.extend(_fio.parse_log(line + '\n'))
        except _fio.FioParseError:
            bad += 1
    return entries, bad
