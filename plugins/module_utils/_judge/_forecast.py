# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The streaming forecast: replay a measured feed through a drive's buffer and speed steps.

Private to this collection: may change without notice. Pure Python, no
Ansible imports, no I/O: the same inputs always give the same answer.

Whether a drive shoe-shines depends on the source's rate over time against
the drive's buffer, speed steps and reposition cost: a dip the buffer absorbs
is harmless, a stall longer than the buffer is not. :func:`forecast`
simulates it in ticks of ``TICK_S`` seconds with the rules below, which the
lab's emulated drive (lab/tapedrive/physics.py) follows too, so the lab can
check the forecast against what a drive reports (docs/drive-model.md,
"How a drive streams"):

1. Host writes go into the drive buffer while it has room; a full buffer
   blocks the host. The buffer holds tape-side (compressed) bytes: host bytes
   / ``tape_ratio``.
2. A moving drive drains the buffer at its current speed step.
3. Every ``ADAPT_S`` the drive compares the host's arrival rate over that
   interval with its step. With the buffer more than ``HIGH_WATER`` full and
   the host keeping up (arrival >= step) it moves up to the highest step not
   above the arrival rate, at least one step; with the buffer less than
   ``LOW_WATER`` full and the host falling behind (arrival < step) it moves
   down to the highest step not above the arrival rate, at least one step.
4. When the buffer runs dry the drive stops: one back-hitch. The reposition
   takes ``backhitch_s``; the drive restarts when it is over and the buffer is
   ``RESTART_FILL`` full (or a flush is pending), at the highest step not
   above the host's arrival rate over the last second, or since it stopped if
   that is shorter (the floor if below it).
   In rules 3 and 4 the arrival rate leaves out the time the host waited on
   the drive (a full buffer, a sync mark draining): the drive knows it held
   the host, and that time says nothing of the host's rate; a host held back
   for the whole interval counts as faster than any step.
5. The first start after load is like a restart without back-hitch.
6. A synchronous file mark blocks the host until the buffer is empty; the
   drive then stops and the next data costs a reposition (a back-hitch) of
   ``sync_mark_s``: the cost the write test measured, or the drive model's
   estimate (7 s, derived from a published measurement: _drive_model,
   DEFAULT_SYNC_MARK_S). An immediate file mark costs nothing.

The host side replays the per-second source series by data position, not by
wall clock: the series says how fast the sources read their n-th second of
data, so while the drive blocks the host, the sources wait where they are (a
stretch of small files stays a dip, it is not skipped). A zero sample is a
stall that lasts its second whatever the drive does.

Class: SHOE-SHINING when the drive back-hitches ``SHOESHINE_PER_HOUR`` times
an hour or more (see docs/verdict.md for why that line), or when the backup
averages below the drive's floor (a drive cannot move slower than its floor:
it runs start-stop, however rarely a big buffer makes it stop), STREAMING when the
backup gets the drive's full-speed feed (within ``FULL_SPEED_TOLERANCE``),
SPEED-MATCHED otherwise, INCONCLUSIVE when a measured series is shorter than
``MIN_SAMPLES`` seconds.

Replay: a source read (a sample of the backup, ``replay='cycles'``) is
replayed in whole cycles until at least ``MIN_SIMULATED_S`` and at most
``MAX_SIMULATED_S`` of source data; an observed window (what a drive was fed
during real jobs, ``replay='once'``) is replayed once, whole, however long.
"""

from __future__ import annotations

import bisect
import collections
import math

from ansible_collections.tapeops.qualify.plugins.module_utils import _records, _words
from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError

STREAMING = _records.STREAMING
SPEED_MATCHED = _records.SPEED_MATCHED
SHOE_SHINING = _records.SHOE_SHINING
INCONCLUSIVE = _records.INCONCLUSIVE
RANK = {INCONCLUSIVE: -1, SHOE_SHINING: 0, SPEED_MATCHED: 1, STREAMING: 2}

TICK_S = 0.1
ADAPT_S = 0.5            # estimate: how often the drive re-picks its step (no vendor figure)
HIGH_WATER = 0.75        # estimate: step up above this buffer fill
LOW_WATER = 0.25         # estimate: step down below this buffer fill
RESTART_FILL = 0.5       # estimate: a stopped drive restarts at this buffer fill
ARRIVAL_WINDOW_S = 1.0   # the arrival rate a (re)starting drive matches
# Too little data to judge (docs/verdict.md, "Too little data"): one rule, ``too_little_data``, for every
# source read the verdict judges; source_read_benchmark's min_samples defaults to the same MIN_SAMPLES.
MIN_SAMPLES = 10         # one-second samples: fewer, and the 5th percentile is the slowest second alone
MIN_BYTES_READ = 64e6    # bytes read: the smallest drive buffer of the model (HPE LTO-3, 64 MB)
MIN_SIMULATED_S = 1800.0  # a short series is replayed in whole cycles until at least this long
MAX_SIMULATED_S = 7200.0
SHOESHINE_PER_HOUR = 60.0
FULL_SPEED_TOLERANCE = 0.01
TRACE_POINTS = 600

FILEMARK_MODES = ('sync', 'immediate')
REPLAYS = ('cycles', 'once')

DRIVE_FIELDS = ('native_mb_s', 'speed_steps_mb_s', 'buffer_mb', 'backhitch_s', 'sync_mark_s', 'compressed_max_mb_s',
                'compression_ratio', 'label', 'load_s', 'rewind_s', 'unload_s', 'estimated')


class ForecastInputError(TapeopsError, ValueError):
    """The inputs cannot give a forecast; the message says what to do."""


def _number(value, name, positive=True, allow_zero=False):
    if isinstance(value, bool):
        raise ForecastInputError('%s must be a number, got %r.' % (name, value))
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ForecastInputError('%s must be a number, got %r.' % (name, value)) from None
    if not math.isfinite(number):
        raise ForecastInputError('%s must be finite, got %r.' % (name, value))
    if positive and (number < 0 or (number == 0 and not allow_zero)):
        raise ForecastInputError('%s must be %s, got %r.' % (name, 'zero or more' if allow_zero else 'positive', value))
    return number


def _field(drive, name, default=None):
    if isinstance(drive, dict):
        return drive.get(name, default)
    return getattr(drive, name, default)


def drive_parameters(drive):
    """The numbers the simulation needs, from a DriveSpec or a mapping with the same fields."""
    if drive is None:
        raise ForecastInputError('No drive to forecast: give drive (a generation, or the drive model fields).')
    steps = _field(drive, 'speed_steps_mb_s')
    native = _number(_field(drive, 'native_mb_s'), 'drive native_mb_s')
    if not steps:
        floor = _field(drive, 'speed_floor_mb_s')
        steps = [native] if floor is None else [native, floor]
    steps = sorted(set(_number(s, 'drive speed step') for s in steps))
    if steps[0] <= 0:
        raise ForecastInputError('drive speed steps must be positive, got %r.' % (steps,))
    ratio = _field(drive, 'compression_ratio')
    params = {
        'label': _field(drive, 'label') or 'the drive',
        'native_mb_s': native,
        'steps': steps,                       # slowest first
        'buffer_mb': _number(_field(drive, 'buffer_mb'), 'drive buffer_mb'),
        'backhitch_s': _number(_field(drive, 'backhitch_s'), 'drive backhitch_s', allow_zero=True),
        # a mapping without it (a drive described field by field): a synchronous mark costs a back-hitch
        'sync_mark_s': _number(_field(drive, 'sync_mark_s', _field(drive, 'backhitch_s')), 'drive sync_mark_s',
                               allow_zero=True),
        'compressed_max_mb_s': _number(_field(drive, 'compressed_max_mb_s') or native * (ratio or 1.0),
                                       'drive compressed_max_mb_s'),
        'nominal_ratio': _number(ratio, 'drive compression_ratio') if ratio is not None else 1.0,
        'mount_s': sum(_number(_field(drive, k) or 0.0, 'drive %s' % k, allow_zero=True)
                       for k in ('load_s', 'rewind_s', 'unload_s')),
        'estimated': dict(_field(drive, 'estimated') or {}),
    }
    return params


def need(params, tape_ratio):
    """Host MB/s for full speed and for the floor at ``tape_ratio``."""
    full = min(params['native_mb_s'] * tape_ratio, params['compressed_max_mb_s'])
    floor = min(params['steps'][0] * tape_ratio, full)
    return full, floor


def _series(feed_mb_s, feed_series_mb_s):
    if feed_series_mb_s is not None:
        if isinstance(feed_series_mb_s, (str, bytes, dict)) or not hasattr(feed_series_mb_s, '__iter__'):
            raise ForecastInputError('feed_series_mb_s must be a list of per-second rates (MB/s).')
        values = [_number(v, 'feed_series_mb_s[%d]' % i, allow_zero=True) for i, v in enumerate(feed_series_mb_s)]
        if not values:
            raise ForecastInputError('feed_series_mb_s is empty: run the source read test (it records one rate '
                                     'per second), or give feed_mb_s.')
        return values, True
    if feed_mb_s is None:
        raise ForecastInputError('Give the host feed: feed_mb_s (a constant rate) or feed_series_mb_s '
                                 '(one rate per second, as source_read_benchmark records it).')
    return [_number(feed_mb_s, 'feed_mb_s', allow_zero=True)], False


def _stats(values):
    ordered = sorted(values)
    count = len(ordered)
    mean = sum(ordered) / count
    p5 = ordered[min(count - 1, max(0, int(math.ceil(0.05 * count)) - 1))]
    return {'mean_mb_s': mean, 'p5_mb_s': min(p5, mean), 'min_mb_s': ordered[0], 'max_mb_s': ordered[-1],
            'samples': count}


def forecast(drive, feed_mb_s=None, feed_series_mb_s=None, tape_ratio=None, path_mb_s=None,
             segment_size_mb=None, filemark_mode='immediate', filemark_seconds=None, data_gb=None,
             block_size_bytes=None, streams=None, min_samples=MIN_SAMPLES, trace=True, replay='cycles',
             job_gb=None, job_gap_s=0.0, start_full=False, ratio_profile=None):
    """Forecast one drive fed by one feed. See the module docstring for the rules.

    drive: DriveSpec or mapping (native_mb_s, speed_steps_mb_s, buffer_mb,
    backhitch_s, compressed_max_mb_s, compression_ratio...).
    feed_mb_s / feed_series_mb_s: the host feed (MB/s of uncompressed data),
    constant or one sample per second.
    tape_ratio: compression the drive gets on this data (default: 1.0,
    incompressible, which asks the least of the sources; pass the estimate).
    path_mb_s: what the host-to-drive path carries at the block size in use
    (the write sweep's rate), when measured.
    segment_size_mb + filemark_mode: a file mark after every segment;
    ``sync`` marks flush the buffer and cost a reposition, ``immediate`` ones
    nothing. filemark_seconds: a measured cost per sync mark (beyond the
    flush), used as its reposition time instead of the model's sync_mark_s.
    data_gb: backup size for the window. block_size_bytes, streams: recorded.
    replay: ``cycles`` (a sample of the feed, replayed in whole cycles between
    MIN_SIMULATED_S and MAX_SIMULATED_S) or ``once`` (a whole observed window,
    replayed once however long).
    job_gb, job_gap_s: the application's jobs (or sessions) on one mounted
    volume: after every ``job_gb`` of host data a synchronous file mark ends
    the job whatever ``filemark_mode`` is (Bacula and Data Protector close a
    session so), then the host sends nothing for ``job_gap_s`` seconds (the
    next job's start) without reading the sources; the next job's data pays
    the mark's reposition. None: no job boundary in the window.
    start_full: the window starts with the drive's buffer full and the drive
    streaming at its top step (a watched job's window that begins while the
    drive held the host back); by default it starts empty and stopped.
    ratio_profile: ``{'ratios': [...], 'stream_mb': MB}``, the compression the
    drive gets along the sources' stream, in equal shares of its ``stream_mb``
    host MB (the compressibility sample's windows, mapped to tape ratios): the
    data arriving at host MB ``m`` has the ratio of the share ``m`` falls in
    (``m`` modulo ``stream_mb``: the stream starts again, as the cycled feed
    does). A stream longer than what the forecast reads is laid over what it
    reads, each share keeping its part of the bytes. ``tape_ratio`` stays the
    whole stream's ratio (the needs, the numbers); None: every byte has
    ``tape_ratio``.
    """
    params = drive_parameters(drive)
    series, measured = _series(feed_mb_s, feed_series_mb_s)
    if replay not in REPLAYS:
        raise ForecastInputError("replay must be 'cycles' or 'once', got %r." % (replay,))
    ratio, path, segment, mark_cost, data, min_samples = _checked_inputs(
        tape_ratio, path_mb_s, segment_size_mb, filemark_mode, filemark_seconds, data_gb, min_samples)
    jobs = _checked_jobs(job_gb, job_gap_s)
    profile = _checked_profile(ratio_profile)
    sim = _simulated(params, series, measured, ratio, path, segment, filemark_mode, mark_cost, trace,
                     once=replay == 'once', jobs=jobs, start_full=bool(start_full), profile=profile)
    inputs = {
        'tape_ratio': ratio, 'path_mb_s': path, 'segment_size_mb': segment, 'filemark_mode': filemark_mode,
        'filemark_seconds': mark_cost, 'data_gb': data, 'block_size_bytes': block_size_bytes,
        'streams': streams,
    }
    return _asked_for(_document(params, sim, series, measured, min_samples, inputs), sim, job_gb, jobs, profile)


def _asked_for(result, sim, job_gb, jobs, profile):
    """``result`` with the job boundaries and the ratio profile, only when asked: forecasts without them keep
    their documents as they were."""
    if jobs is not None:
        result['inputs'].update(job_gb=job_gb, job_gap_s=jobs[1])
        result['job_boundaries'] = sim['job_marks']
    if profile is not None:
        result['inputs']['ratio_profile'] = {'ratios': list(profile[0]), 'stream_mb': profile[1]}
    return result


def _checked_profile(profile):
    """(ratios, stream MB) of ``forecast``'s ``ratio_profile``, checked, or None."""
    if profile is None:
        return None
    if not isinstance(profile, dict):
        raise ForecastInputError('ratio_profile must be a mapping with ratios and stream_mb, got %r.' % (profile,))
    ratios = profile.get('ratios')
    if not isinstance(ratios, (list, tuple)) or not ratios:
        raise ForecastInputError('ratio_profile.ratios must be a non-empty list of tape ratios.')
    checked = tuple(_number(r, 'ratio_profile.ratios') for r in ratios)
    if min(checked) < 1.0:
        raise ForecastInputError('ratio_profile.ratios must all be at least 1.0, got %r.' % (min(checked),))
    return checked, _number(profile.get('stream_mb'), 'ratio_profile.stream_mb')


def _document(params, sim, series, measured, min_samples, inputs):
    """The forecast's result from the simulation ``sim`` of ``series`` with the checked ``inputs``."""
    ratio, data = inputs['tape_ratio'], inputs['data_gb']
    full, floor = need(params, ratio)
    hours = sim['seconds'] / 3600.0
    host_mb = sim['host_mb']
    effective = host_mb / sim['seconds'] if sim['seconds'] else 0.0
    per_hour = sim['backhitches'] / hours if hours else 0.0
    per_tb = sim['backhitches'] / (host_mb / 1e6) if host_mb > 1e-3 else None
    inconclusive = _inconclusive(measured, len(series), min_samples, host_mb)
    window = None
    if data is not None and effective > 0:
        window = (data * 1000.0 / effective + params['mount_s']) / 3600.0
    return {
        'class': class_of(inconclusive, per_hour, effective, full, floor),
        'inconclusive_reason': inconclusive,
        'drive_label': params['label'],
        'effective_mb_s': round(effective, 3),
        'tape_mb_s': round(sim['tape_mb'] / sim['seconds'], 3) if sim['seconds'] else 0.0,
        'backhitches': sim['backhitches'],
        'backhitches_filemark': sim['backhitches_filemark'],
        'backhitches_per_hour': round(per_hour, 2),
        'backhitches_per_tb': None if per_tb is None else round(per_tb, 2),
        'filemarks': sim['marks'],
        'filemark_wait_s': round(sim['flush_wait_s'] / sim['marks'], 3) if sim['marks'] else 0.0,
        'shoeshine_threshold_per_hour': SHOESHINE_PER_HOUR,
        'time_share': _time_share(sim, params),
        'need_full_mb_s': round(full, 3),
        'need_floor_mb_s': round(floor, 3),
        'feed': dict((k, round(v, 3) if isinstance(v, float) else v) for k, v in _stats(series).items()),
        'feed_measured': measured,
        'simulated_seconds': round(sim['seconds'], 1),
        'replays': sim['replays'],
        'window_hours': None if window is None else round(window, 3),
        'inputs': inputs,
        'drive': {
            'native_mb_s': params['native_mb_s'], 'speed_steps_mb_s': list(reversed(params['steps'])),
            'buffer_mb': params['buffer_mb'], 'backhitch_s': params['backhitch_s'],
            'sync_mark_s': params['sync_mark_s'],
            'compressed_max_mb_s': params['compressed_max_mb_s'], 'estimated': sorted(params['estimated']),
        },
        'trace': sim['trace'],
    }


def _checked_jobs(job_gb, job_gap_s):
    """(host MB per job, gap seconds) or None when no job size is given."""
    if job_gb is None:
        return None
    size = _number(job_gb, 'job_gb')
    gap = 0.0 if job_gap_s is None else _number(job_gap_s, 'job_gap_s', allow_zero=True)
    return size * 1000.0, gap


def _inconclusive(measured, count, min_samples, host_mb):
    """Why the forecast cannot judge (too few measured samples, no data), in ``_words``' words, or None."""
    if measured and count < min_samples:
        # one per-second sample a second: the series' seconds are its samples
        return _words.too_little_data(too_little_data(samples=count, seconds=count, min_samples=min_samples))
    if host_mb <= 1e-3:
        return _words.NO_DATA_DELIVERED
    return None


def too_little_data(samples=None, bytes_read=None, source_bytes=None, files=None, seconds=None, buffer_mb=None,
                    min_samples=MIN_SAMPLES):
    """What a source read falls short of to be judged, as data, or None when it is enough.

    The first of these that falls short, in this order (a measure that is None
    was not reported and is not judged):

    - ``source_bytes`` (the data of the sources, all of it, not what was read)
      below ``MIN_BYTES_READ``, the smallest LTO drive buffer: a backup that
      small fits in any drive's buffer, so the drive never waits on the
      sources - there is no streaming to judge. (Not the drive's own buffer:
      several are estimates, and a what-if's source is often a sample of the
      backup, smaller than an LTO-9's buffer but telling of its rates);
    - ``bytes_read`` below ``MIN_BYTES_READ``, only where the sources' size is
      not known: less than any LTO drive's buffer was read, and nothing says
      whether more was there; per-second rates of so little are opening and
      first-read latency, not throughput. Where the sources are known to hold
      more, a read that stopped short was cut by its time budget: that is a
      slow source (the hosts that shoe-shine), judged on its samples;
    - ``samples`` below ``min_samples`` one-second samples.

    The file count has no minimum of its own (one large file, a database dump,
    is a real source); it is named with the others.
    Returns {'measure': 'source_bytes' | 'bytes_read' | 'samples', 'measured',
    'minimum', 'bytes_read', 'source_bytes', 'files', 'samples', 'seconds',
    'buffer_mb'}.
    """
    measured = {'bytes_read': bytes_read, 'source_bytes': source_bytes, 'files': files, 'samples': samples,
                'seconds': seconds, 'buffer_mb': buffer_mb}
    rules = (('source_bytes', source_bytes, MIN_BYTES_READ),
             ('bytes_read', bytes_read, MIN_BYTES_READ if source_bytes is None else None),
             ('samples', samples, min_samples))
    for measure, value, minimum in rules:
        if value is not None and minimum is not None and value < minimum:
            return dict(measured, measure=measure, measured=value, minimum=minimum)
    return None


def _checked_inputs(tape_ratio, path_mb_s, segment_size_mb, filemark_mode, filemark_seconds, data_gb, min_samples):
    """(ratio, path, segment, mark cost, data, min_samples) of :func:`forecast`'s inputs, checked."""
    ratio = 1.0 if tape_ratio is None else _number(tape_ratio, 'tape_ratio')
    if ratio < 1.0:
        raise ForecastInputError('tape_ratio must be at least 1.0 (host bytes per tape byte), got %r.' % (tape_ratio,))
    path = None if path_mb_s is None else _number(path_mb_s, 'path_mb_s')
    segment = None if segment_size_mb in (None, 0) else _number(segment_size_mb, 'segment_size_mb')
    if filemark_mode not in FILEMARK_MODES:
        raise ForecastInputError("filemark_mode must be 'sync' or 'immediate', got %r." % (filemark_mode,))
    mark_cost = None if filemark_seconds is None else _number(filemark_seconds, 'filemark_seconds', allow_zero=True)
    data = None if data_gb is None else _number(data_gb, 'data_gb')
    return ratio, path, segment, mark_cost, data, int(_number(min_samples, 'min_samples', allow_zero=True))


def class_of(inconclusive, per_hour, effective, full, floor):
    """The class from back-hitches an hour and the rate against the drive's needs (simulated or observed)."""
    if inconclusive:
        return INCONCLUSIVE
    if per_hour >= SHOESHINE_PER_HOUR or effective < floor * (1.0 - FULL_SPEED_TOLERANCE):
        # below its floor a drive cannot move continuously: it runs start-stop, however
        # rarely a big buffer makes it stop
        return SHOE_SHINING
    if effective >= full * (1.0 - FULL_SPEED_TOLERANCE):
        return STREAMING
    return SPEED_MATCHED


def below_floor(drive, feed_mb_s=None, feed_series_mb_s=None, tape_ratio=None, path_mb_s=None):
    """True when no forecast of this feed can keep ``drive`` at its floor, known without simulating it.

    A tick reads at most the source second's rate, capped by what the drive takes (compressed) and by
    ``path_mb_s``, so a forecast's effective rate cannot exceed the feed's fastest second so capped. Below the
    floor (less ``FULL_SPEED_TOLERANCE``) :func:`class_of` calls it SHOE-SHINING (INCONCLUSIVE when nothing
    arrives at all): a caller that needs no more than "STREAMING or SPEED-MATCHED, or not" is spared the
    simulation. The arguments are :func:`forecast`'s.
    """
    params = drive_parameters(drive)
    series = _series(feed_mb_s, feed_series_mb_s)[0]
    ratio, path = _checked_inputs(tape_ratio, path_mb_s, None, 'immediate', None, None, 0)[:2]
    cap = params['compressed_max_mb_s'] if path is None else min(params['compressed_max_mb_s'], path)
    fastest = min(max(series), cap)
    # the margin: the simulation's sums of ticks may round a hair above the rate they add up
    return fastest * (1.0 + 1e-9) < need(params, ratio)[1] * (1.0 - FULL_SPEED_TOLERANCE)


def _time_share(sim, params):
    """Shares of the simulated time: per speed step, at the top step, stopped, repositioning, host blocked."""
    return {
        'steps': dict(('%g' % step, round(spent / sim['seconds'], 4))
                      for step, spent in sorted(sim['step_time'].items(), reverse=True) if spent > 0),
        'top_step': round(sim['step_time'].get(params['steps'][-1], 0.0) / sim['seconds'], 4),
        'stopped': round(sim['stopped_s'] / sim['seconds'], 4),
        'repositioning': round(sim['reposition_s'] / sim['seconds'], 4),
        'host_blocked': round(sim['blocked_s'] / sim['seconds'], 4),
    }


def _highest_step(steps, rate):
    """Index of the highest step not above ``rate`` (the floor, index 0, when below it); ``steps`` ascend."""
    index = bisect.bisect_right(steps, rate + 1e-9) - 1
    return index if index > 0 else 0


def _host_rate(arrived, span, held):
    """The host's arrival rate over ``span`` seconds, leaving out the ``held`` seconds it waited on the drive.

    A host held back the whole span has shown no rate of its own: at least any step (infinite).
    """
    free = span - held
    if free < TICK_S / 2.0:
        return math.inf
    return arrived / free


# The simulations this process ran last, by their inputs (``_simulated``): a verdict asks the same forecast
# several times (now, then each fix the drive's feed does not change, and the trace's twin without it).
_SIMULATED = collections.OrderedDict()
SIMULATED_KEPT = 32


def _simulated(params, series, measured, ratio, path, segment, filemark_mode, mark_cost, trace, **rest):
    """``_simulate``'s result, from the last ``SIMULATED_KEPT`` simulations where one had these inputs.

    The simulation is a function of its inputs alone, so an equal one gives the same numbers. A run with a trace
    stands for one without (its trace left out); one without is run again when a trace is asked for. The caller
    gets its own copy.
    """
    key = (tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in params.items() if k != 'estimated')),
           tuple(series), measured, ratio, path, segment, filemark_mode, mark_cost,
           tuple(sorted(rest.items())))
    kept = _SIMULATED.get(key)
    if kept is None or (trace and not kept['trace']):
        kept = _simulate(params, series, measured, ratio, path, segment, filemark_mode, mark_cost, trace, **rest)
        _SIMULATED[key] = kept
        while len(_SIMULATED) > SIMULATED_KEPT:
            _SIMULATED.popitem(last=False)
    else:
        _SIMULATED.move_to_end(key)
    # the caller's own copy: every value is a number but the step times and the trace's points (a deep copy of
    # the whole result was about 15 % of a verdict's CPU)
    sim = dict(kept, step_time=dict(kept['step_time']))
    sim['trace'] = [dict(point) for point in kept['trace']] if trace else []
    return sim


# Longer than 60 lines on purpose: one loop over the simulated ticks whose state (buffer, speed step, head
# motion, stop and reposition timers, the marks' flush, the trace) changes together at every tick; split into
# functions it would pass that state back and forth on every tick of hours of simulated time.
def _simulate(params, series, measured, ratio, path, segment, filemark_mode, mark_cost, trace, once=False,
              jobs=None, start_full=False, profile=None):
    steps = params['steps']
    shares, stream_mb = profile if profile is not None else ((ratio,), 1.0)
    n_shares = len(shares)
    # the tick and the control constants as locals: read at every tick, a local is cheaper than a global
    tick_s, adapt_s, high_water, low_water, restart_fill = TICK_S, ADAPT_S, HIGH_WATER, LOW_WATER, RESTART_FILL
    top_index = len(steps) - 1
    buffer_mb = params['buffer_mb']
    backhitch_s = params['backhitch_s']
    mark_reposition = params['sync_mark_s'] if mark_cost is None else mark_cost
    host_cap = params['compressed_max_mb_s']
    if path is not None:
        host_cap = min(host_cap, path)

    if measured and once:
        replays = 1
        source_seconds = float(len(series))
    elif measured:
        cycle = float(len(series))
        replays = max(1, int(math.ceil(MIN_SIMULATED_S / cycle))) if cycle < MIN_SIMULATED_S else 1
        source_seconds = min(cycle * replays, MAX_SIMULATED_S)
    else:
        replays = 1
        source_seconds = MIN_SIMULATED_S
    n_samples = len(series)
    if n_shares > 1:
        # A stream longer than the host MB this forecast reads is laid over what it reads: every share is visited,
        # each for its share of the bytes (a share of a large tree lasts far longer than a buffer drains, so the
        # drive does in it what it would do in the whole share).
        expected_mb = sum(series) / float(n_samples) * source_seconds
        if 0 < expected_mb < stream_mb:
            stream_mb = expected_mb
    share_mb = stream_mb / n_shares

    # state
    level = buffer_mb if start_full else 0.0     # tape MB in the buffer
    moving = start_full
    step = top_index if start_full else 0
    reposition_left = 0.0       # seconds of repositioning still to go
    stopped_ticks = 0           # ticks since the drive last stopped (the arrival window on restart)
    adapt_arrived = 0.0
    adapt_held = 0.0            # seconds of the control interval the host waited on the drive
    flush_pending = False       # a sync mark waits for the buffer to drain
    next_mark = segment         # host MB at which the next file mark is due
    job_mb, job_gap = jobs if jobs is not None else (None, 0.0)
    next_job = job_mb           # host MB at which the current job ends (its synchronous mark)
    job_flush = False           # the job's closing mark is draining the buffer
    gap_left = 0.0              # seconds of the gap between two jobs still to go
    job_marks = 0
    host_mb = 0.0
    tape_mb = 0.0
    cursor = 0.0                # seconds of source data consumed
    clock = 0.0
    since_adapt = 0.0
    arrivals = [0.0] * max(1, int(round(ARRIVAL_WINDOW_S / TICK_S)))
    n_arrivals = len(arrivals)
    helds = [0.0] * n_arrivals
    arrival_pos = 0
    backhitches = 0
    backhitches_mark = 0
    step_seconds = [0.0] * len(steps)   # seconds at each step, by index (a list: cheaper than a dict by speed)
    stopped_s = reposition_s = blocked_s = flush_wait_s = 0.0
    marks = 0
    # the trace's samples, one a tick, a list each: the clock, the buffer's fill, the speed, the feed
    trace_t, trace_fill, trace_speed, trace_feed = [], [], [], []
    # the simulation ends when the source has been replayed, or after twice that long on the
    # clock when the drive holds the host back (its pattern is steady by then)
    limit = 2.0 * max(source_seconds, MIN_SIMULATED_S)

    tick_mb = steps[step] * tick_s     # tape MB a tick at the step (kept with the step)
    # the trace's lists' append, bound once
    add_t, add_fill, add_speed, add_feed = trace_t.append, trace_fill.append, trace_speed.append, trace_feed.append
    source_end, adapt_due = source_seconds - 1e-9, adapt_s - 1e-9
    while cursor < source_end and clock < limit:
        rate = series[int(cursor + 1e-9) % n_samples]       # a constant feed is a series of one
        running = moving and reposition_left <= 0
        if job_flush and not flush_pending:
            job_flush = False
            gap_left = job_gap
            limit += job_gap            # the gap is on the clock, not in the source
        if gap_left > 1e-9:
            # between two jobs: the host sends nothing and reads nothing (the source cursor stays)
            gap_left -= tick_s
            rate = accepted = held = 0.0
        else:
            # -- host: read from the sources into the buffer
            # (conditional expressions instead of min() and max() in this loop: the same values, a third faster)
            if n_shares > 1:
                # the ratio of the data arriving now: its share of the sources' stream
                ratio = shares[int((host_mb % stream_mb) / share_mb) % n_shares]
            # a tick reads at the rate of the source second it starts in (ticks divide seconds)
            offered = (rate if rate <= host_cap else host_cap) * tick_s if rate > 0 else 0.0
            # held: time the host waited on the drive (a full buffer, a sync mark draining): not the
            # host's slowness, so the drive leaves it out of the host's arrival rate
            if flush_pending:
                accepted = 0.0
                held = tick_s
            else:
                free = buffer_mb - level
                # host MB the buffer can take now, and what the drive drains of it in this tick
                can_take = (free if free > 0.0 else 0.0) * ratio + (tick_mb * ratio if running else 0.0)
                accepted = offered if offered <= can_take else can_take
                held = tick_s * (1.0 - accepted / offered) if offered > 0 and accepted < offered - 1e-12 else 0.0
            # no further than the next mark and the job's end: min(accepted, max(0.0, left)), without the calls
            if next_mark is not None:
                left = next_mark - host_mb
                if left < accepted:
                    accepted = left if left > 0.0 else 0.0
            if next_job is not None:
                left = next_job - host_mb
                if left < accepted:
                    accepted = left if left > 0.0 else 0.0
            if offered > 0:
                if accepted < offered - 1e-12:
                    blocked_s += tick_s * (1.0 - accepted / offered)
                cursor += accepted / rate
            else:
                cursor += tick_s                                # a stall lasts its time
        host_mb += accepted
        arrived = accepted / ratio
        level += arrived
        arrivals[arrival_pos] = arrived
        helds[arrival_pos] = held
        arrival_pos += 1
        if arrival_pos == n_arrivals:
            arrival_pos = 0
        if flush_pending:
            flush_wait_s += tick_s
        if next_mark is not None and host_mb >= next_mark - 1e-9:
            next_mark += segment
            marks += 1
            if filemark_mode == 'sync':
                flush_pending = True
        if next_job is not None and host_mb >= next_job - 1e-9:
            # the job's closing mark is synchronous whatever the segments' marks are
            next_job += job_mb
            job_marks += 1
            flush_pending = job_flush = True

        # -- drive
        if running:
            if level > tick_mb:
                # a whole tick at the step (the same sums as the general case's with drained = tick_mb)
                level -= tick_mb
                tape_mb += tick_mb
                step_seconds[step] += tick_s
            else:
                drained = level
                level -= drained
                tape_mb += drained
                step_seconds[step] += tick_s * (drained / tick_mb)
                if drained < tick_mb - 1e-12:
                    stopped_s += tick_s * (1.0 - drained / tick_mb)
            since_adapt += tick_s
            adapt_arrived += arrived
            adapt_held += held
            if level <= 1e-9:
                level = 0.0
                moving = False
                stopped_ticks = 0
                backhitches += 1
                if flush_pending:
                    # the mark is written with the buffer empty; the tape stops and the next
                    # data needs a reposition
                    backhitches_mark += 1
                    flush_pending = False
                    reposition_left = mark_reposition
                else:
                    reposition_left = backhitch_s
            elif since_adapt >= adapt_due:
                arrival = _host_rate(adapt_arrived, since_adapt, adapt_held)
                fill = level / buffer_mb
                matched = _highest_step(steps, arrival)
                if fill > high_water and step < top_index and arrival >= steps[step] - 1e-9:
                    step = max(step + 1, matched)
                    tick_mb = steps[step] * tick_s
                elif fill < low_water and step > 0 and arrival < steps[step]:
                    step = min(step - 1, matched)
                    tick_mb = steps[step] * tick_s
                since_adapt = 0.0
                adapt_arrived = 0.0
                adapt_held = 0.0
        else:
            if reposition_left > 0:
                reposition_s += min(tick_s, reposition_left)
                reposition_left -= tick_s
            stopped_s += tick_s
            stopped_ticks += 1
            if flush_pending and level <= 1e-9:
                # sync mark on an already stopped, empty drive: written at once, no extra reposition
                flush_pending = False
            if reposition_left <= 1e-9 and level > 0 and (level >= restart_fill * buffer_mb or flush_pending):
                window = min(len(arrivals), max(1, stopped_ticks))
                recent = [(arrival_pos - 1 - i) % len(arrivals) for i in range(window)]
                step = _highest_step(steps, _host_rate(sum(arrivals[i] for i in recent), window * tick_s,
                                                       sum(helds[i] for i in recent)))
                tick_mb = steps[step] * tick_s
                moving = True
                since_adapt = 0.0
                adapt_arrived = 0.0
                adapt_held = 0.0
        clock += tick_s
        if trace:
            add_t(clock)
            add_fill(level / buffer_mb)
            add_speed(steps[step] if moving and reposition_left <= 0 else 0.0)
            add_feed(rate)
    seconds = max(clock, TICK_S)
    return {
        'seconds': seconds, 'host_mb': host_mb, 'tape_mb': tape_mb, 'backhitches': backhitches,
        'backhitches_filemark': backhitches_mark, 'step_time': dict(zip(steps, step_seconds)), 'stopped_s': stopped_s,
        'reposition_s': reposition_s, 'blocked_s': blocked_s, 'replays': replays,
        'trace': _trace_points(trace_t, trace_fill, trace_speed, trace_feed),
        'marks': marks, 'flush_wait_s': flush_wait_s, 'job_marks': job_marks,
    }


def _trace_points(clock, fill, speed, feed):
    """At most ``TRACE_POINTS`` points of the simulation's ticks (one sample a tick in each list), each the mean of
    its ticks and the clock at its last."""
    points = []
    count = len(clock)
    every = max(1, int(math.ceil(count / float(TRACE_POINTS))))
    for i in range(0, count, every):
        end = min(i + every, count)
        ticks = end - i
        points.append({
            't_s': round(clock[end - 1], 2),
            'buffer_pct': round(100.0 * sum(fill[i:end]) / ticks, 1),
            'step_mb_s': round(sum(speed[i:end]) / ticks, 1),
            'feed_mb_s': round(sum(feed[i:end]) / ticks, 1),
        })
    return points
