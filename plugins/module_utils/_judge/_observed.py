# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""A drive watched during real jobs, judged: the class it showed, and the forecast replayed from what it was fed.

Private to this collection: may change without notice. Pure Python, no I/O.

tapeops.qualify.tape_drive_observe records what went from the host to the drive
in each interval of a window (``ObservedWindow``). :func:`judge` takes it and
the drive's model and returns an ``ObservedJudgement``:

- ``observed``: what the drive did in the window's data phase (from the first
  interval that wrote bytes to the last one; its rate from the intervals
  between those two, which the job filled whole, and from the last one too
  when the host waited on the drive through it, :func:`steady_phase`): the
  rate it was fed, the back-hitches it counted itself (where the collection
  knows its counter), the compression it measured, and the class by the
  forecast's own rule
  (``_forecast.class_of``: back-hitches an hour against the shoe-shine line,
  the rate against the drive's floor and full speed at that compression). When
  the drive's counter is unknown the class is the rate's alone, and
  ``class_basis`` says so. Where the drive counted no back-hitch, the class's
  rate (``class_mb_s``) is what the drive took from the end of its buffer's
  fill, and the seconds it paced count at its full speed whatever their
  compression (:func:`paced_rate`).
- ``forecast``: the forecast fed the same intervals second by second (replayed
  once, whole) at the same compression: the class, rate and back-hitches it
  predicts from the feed alone.
- ``agreement``: forecast against observed - class match, rate difference in %,
  back-hitches predicted minus counted.

A window in which the drive wrote nothing is ``idle``, not judged.

:func:`observed_drive` makes an observe run's document entry of one drive
(``ObservedDrive``): tape_drive_observe's result as Ansible returned it,
judged with the drive's resolved model (``_host.observe`` resolves it as the
verdict does), the window without its series.

:func:`drive_ratio` reads such an entry back for a later qualify run
(``qualify_tape_ratio_from``): the compression ratio the drive measured
itself over the observed job, which the verdict prefers to the sources'
sample, or why there is none.

The observed series is what the drive accepted, so it holds the pauses the
drive itself caused (the host blocks while the drive repositions); replayed
as a feed, those pauses drain the simulated buffer as they drained the real
one. The application's file marks are in the series the same way (a
synchronous mark blocks the writer); they are not added again.

Where the drive set the pace, what it accepted is less than the host
offered. An interval in which the host spent at least ``DRIVE_BOUND_SHARE``
of its time inside writes to the drive (st's ``write_ns``) was drive-bound:
the drive's buffer was full and the writer waited for room. Replayed at the
rate the drive took, such a stretch starts the simulated buffer empty and
every slower second slows the simulated drive, which the real one, its
buffer full, never felt. Each run of drive-bound intervals is therefore
replayed as its bytes offered at the drive's host-side ceiling
(``compressed_max_mb_s``): the same data, ready when the drive wanted it.
``observed['drive_bound_s']`` says how many seconds of the data phase were so.
"""

from __future__ import annotations

import math
import os

from ansible_collections.tapeops.qualify.plugins.module_utils import _records, _words
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _forecast

MB = 1e6

STATUS_JUDGED = 'judged'
STATUS_IDLE = 'idle'
STATUS_NOT_OBSERVED = 'not_observed'
# an observe run's drive that wrote in its window but whose drive model is unknown (observed_drive)
STATUS_NOT_JUDGED = 'not_judged'

RATIO_DRIVE = 'drive'          # the drive's own host and tape byte counters over the window
RATIO_GIVEN = 'given'          # the caller's estimate (qualify's sample of the sources)
RATIO_NONE = 'incompressible'  # nothing known: 1.0, which asks the least of the sources

# An interval is drive-bound when the host spent at least this share of it inside writes to the drive. In the lab a
# writer faster than the drive spent 0.88-1.03 of each second in writes (observed_job__lab-ma1.json), a source-bound
# Bacula job 0.07-0.30 (observed_bacula_job__lab-ma3.json); a buffered WRITE waits only while the drive's buffer is
# full, so a host that waits most of a second was held back by the drive.
DRIVE_BOUND_SHARE = 0.8

# A window calls a drive SHOE-SHINING by its back-hitches only when their count says so beyond chance: the lower
# bound of the one-sided Poisson interval of their rate, at this confidence, must reach the forecast's line
# (_forecast.SHOESHINE_PER_HOUR). A choice, not a measurement. One back-hitch in 24 s of data is 150 an hour as it
# stands, and as few as 16 an hour at 90 %: a job that short cannot say that its drive stops once a minute (in the
# lab, one 32 MB dump that compresses far better than the rest of a 230 MB tree starved lab-ma2's drive once).
# The same rule judges the window's replay, which is just as short.
BACKHITCH_CONFIDENCE = _records.BACKHITCH_CONFIDENCE
_EXACT_BELOW = 1000      # counts above this take the Wilson-Hilferty approximation (well within 1 % there)


def data_phase(series):
    """``(first, last)`` indexes of the intervals that wrote bytes, or None when none did."""
    written = (series or {}).get('write_byte_cnt') or []
    active = [i for i, b in enumerate(written) if b]
    if not active:
        return None
    return active[0], active[-1]


def steady_phase(phase, series=None, full_mb_s=None, fill_mb=None):
    """The data phase without its first interval, and without its last unless the host waited on the drive through
    it, when it has three or more; with ``full_mb_s``, also without the rest of the drive's buffer fill.

    A job starts and ends somewhere inside an interval, so its edge intervals are
    partly idle and their rate is not the drive's; the rate and the replay come
    from the intervals between them. The first also holds what the host wrote
    into the drive's empty buffer at its own speed. A last interval that was
    drive-bound (:func:`drive_bound`, given ``series``) was not partly idle:
    the host waited on the drive for most of it, and what it wrote there is
    what the drive took (in the lab, a job whose drive spent 1.2 s of its
    26 at its floor ended with one at the floor's rate). A shorter phase is
    kept whole.

    A fill can run past the first interval: a host that outran the drive
    (at least as fast as ``full_mb_s``, the drive's full speed in host MB/s)
    from the start fills its buffer until it first waits on it. Where it did
    (and not already in the first interval, nor only in the last), the phase
    with ``full_mb_s`` begins after the first interval it waited through: the
    buffer was full there, and from there the host's bytes are what the drive
    took. A buffer holds no more than ``fill_mb`` of host data (its size at
    the most the drive's path compresses): a host that got further ahead of
    the full speed than that before it waited was not only filling it, and
    the phase keeps its second interval. The class's rate of a drive that
    never stopped is taken over it (in the lab, a job whose drive ran at its
    4.9 MB/s top step all along, 10.2 MB of its fill in the second interval,
    read 5.13 MB/s as fed). The rate as fed and the replay take the fill as
    fed; the replay's own buffer fills with it.
    """
    first, last = phase
    if last - first < 2:
        return phase
    if series is None:
        return first + 1, last - 1
    bound = drive_bound(series, phase)
    end = last if bound[-1] else last - 1
    begin = first + 1
    if full_mb_s and not bound[0]:      # a first interval waited through ended the fill itself
        ahead = 0.0
        for i in range(first, end):
            if i > first and bound[i - first]:
                begin = i + 1
                break
            over = series['write_byte_cnt'][i] - full_mb_s * MB * series['seconds'][i]
            ahead += max(0.0, over)
            if (i > first and over < 0) or (fill_mb is not None and ahead > fill_mb * MB):
                break
    return begin, end


def drive_bound(series, phase):
    """For each interval of ``phase``: True when the host waited in writes to the drive for ``DRIVE_BOUND_SHARE``
    of it or more. All False when the series has no usable ``write_ns`` column (an older observe run)."""
    first, last = phase
    waits = series.get('write_ns')
    count = last - first + 1
    if not isinstance(waits, list) or len(waits) != len(series['seconds']):
        return [False] * count
    bound = []
    for wait_ns, seconds in zip(waits[first:last + 1], series['seconds'][first:last + 1]):
        usable = isinstance(wait_ns, (int, float)) and not isinstance(wait_ns, bool) and seconds
        bound.append(bool(usable) and wait_ns / 1e9 >= DRIVE_BOUND_SHARE * seconds)
    return bound


def _runs(series, phase, bound):
    """``[waited, bytes, seconds]`` for each interval of ``phase``, a run of drive-bound ones (``bound``) joined in
    one."""
    first, last = phase
    runs = []
    for written, spent, waited in zip(series['write_byte_cnt'][first:last + 1], series['seconds'][first:last + 1],
                                      bound):
        if runs and runs[-1][0] and waited:
            runs[-1][1] += written
            runs[-1][2] += spent
        else:
            runs.append([waited, written, spent])
    return runs


def paced_rate(series, phase, full_mb_s, native_mb_s, buffer_mb=0.0):
    """``(rate, seconds)``: the rate of ``phase`` with the seconds the drive paced counted at least at
    ``full_mb_s`` (the rate the observed class sets against the drive's needs when the drive counted no
    back-hitch), and how many seconds it paced.

    The drive paced a run of drive-bound intervals (:func:`drive_bound`) in which it took at least its full
    speed at 1:1 (``native_mb_s``, within the forecast's FULL_SPEED_TOLERANCE; over the run, as one interval
    holds whole blocks only): the host waited on a full buffer of a drive that never stopped, and such a drive
    runs at its top step (the forecast's ``_host_rate``: a host held back shows no rate of its own). What it
    took then is its top speed times its data's compression there, which can be below the window's mean: set
    against the mean, a job the drive paced all along would read as slower than the drive. A drive-bound run in
    which the drive took less than its 1:1 speed was not at its top step (a host whose writes were slow for
    another reason: in the lab, a loaded guest's command path) and counts as fed, as do the other intervals.

    The drive also paced the intervals after such a run that its buffer (``buffer_mb``) covered (:func:`_covered`).

    ``phase`` is the one the class's rate is taken over: from the end of the drive's buffer fill
    (:func:`steady_phase` with ``full_mb_s``).

    Each stretch the drive paced, from one run it paced to the last it paced or covered after it, counts at
    least at ``full_mb_s`` as a whole, not each run on its own: the host's bytes there are what the drive took,
    give or take what its buffer held (full where the stretch began), however the samples split them (in the lab
    a loaded sampler's intervals of 0.2 to 1.9 s put a second's blocks in the next one, and runs counted one by
    one read 5.33 MB/s of a 4.9 MB/s drive at 1:1).
    """
    least = native_mb_s * MB * (1.0 - _forecast.FULL_SPEED_TOLERANCE)
    runs = _runs(series, phase, drive_bound(series, phase))
    paced = _covered(runs, [waited and taken >= least * spent for waited, taken, spent in runs], full_mb_s,
                     buffer_mb)
    nbytes, stretch = 0.0, None
    for by_drive, (_waited, taken, spent) in zip(paced + [False], runs + [(False, 0, 0.0)]):
        if by_drive:
            stretch = [stretch[0] + taken, stretch[1] + spent] if stretch else [taken, spent]
            continue
        if stretch:
            nbytes += max(stretch[0], full_mb_s * MB * stretch[1])
            stretch = None
        nbytes += taken
    seconds = sum(spent for _waited, _taken, spent in runs)
    paced_s = sum(spent for by_drive, (_waited, _taken, spent) in zip(paced, runs) if by_drive)
    return (nbytes / seconds / MB if seconds else 0.0), paced_s


def _covered(runs, paced, full_mb_s, buffer_mb):
    """``paced`` with each stretch of runs after a paced one marked paced too where the drive's buffer, full at
    the stretch's start, kept the drive at its top step through it: the stretch holds no drive-bound run (a
    drive-bound run the drive did not pace shows the drive, or the path to it, slower than its top step), and
    the host's shortfall against ``full_mb_s``, summed from there (a buffer holds no more than full), left the
    buffer above the forecast's LOW_WATER share, below which the drive steps down (a stretch that ends the phase
    too: the buffer fed the drive to its end). ``buffer_mb`` is tape-side and is taken as host MB here: on the safe
    side where the data compresses."""
    out = list(paced)
    keep = (1.0 - _forecast.LOW_WATER) * buffer_mb * MB
    start = 1
    while start < len(runs):
        end, short, worst, bound = start, 0.0, 0.0, False
        while end < len(runs) and not paced[end]:
            short = max(0.0, short + full_mb_s * MB * runs[end][2] - runs[end][1])
            worst = max(worst, short)
            bound = bound or runs[end][0]
            end += 1
        if end > start and out[start - 1] and not bound and worst <= keep:
            out[start:end] = [True] * (end - start)
        start = end + 1
    return out


def per_second_rates(series, phase, ceiling_mb_s=None):
    """The data phase as one host-to-drive rate per second (MB/s), for the forecast's replay.

    An interval of ``s`` seconds (the module samples once a second; a loaded host
    may stretch an interval) becomes ``round(s)`` seconds at its average rate,
    at least one. With ``ceiling_mb_s``, each run of drive-bound intervals
    (:func:`drive_bound`) becomes its bytes offered at about that rate: as
    many whole seconds as it takes, at least one, all at the same rate.
    """
    first, last = phase
    bound = drive_bound(series, phase) if ceiling_mb_s else [False] * (last - first + 1)
    rates = []
    for waited, nbytes, seconds in _runs(series, phase, bound):
        if waited:
            if nbytes:          # a run that moved nothing offers nothing
                rates.extend(_offered(nbytes / MB, ceiling_mb_s))
        elif seconds:
            rates.extend([nbytes / float(seconds) / MB] * max(1, int(round(seconds))))
    return rates


def _offered(megabytes, ceiling_mb_s):
    """``megabytes`` offered at about ``ceiling_mb_s``: whole seconds at one rate, not above the ceiling."""
    count = max(1, int(math.ceil(megabytes / ceiling_mb_s - 1e-9)))
    return [megabytes / count] * count


def backhitches_per_hour_low(count, hours, confidence=BACKHITCH_CONFIDENCE):
    """The lower bound, an hour, of the back-hitch rate that ``count`` back-hitches in ``hours`` can come from.

    The one-sided Poisson bound at ``confidence``: the rate at which ``count`` or more would be seen in ``hours``
    with probability ``1 - confidence``. 0.0 for no back-hitch; None when ``count`` or ``hours`` is unknown or not
    positive.
    """
    if count is None or not hours or hours <= 0 or count < 0:
        return None
    if count == 0:
        return 0.0
    alpha = 1.0 - confidence
    if count > _EXACT_BELOW:
        z = _normal_quantile(confidence)
        return count * (1.0 - 1.0 / (9.0 * count) - z / (3.0 * math.sqrt(count))) ** 3 / hours
    return _records.bisect(lambda mean: _poisson_at_least(count, mean) < alpha, 0.0, float(count)) / hours


def _poisson_at_least(count, mean):
    """P(X >= count) for X Poisson with ``mean`` > 0."""
    below = sum(math.exp(-mean + i * math.log(mean) - math.lgamma(i + 1)) for i in range(count))
    return max(0.0, 1.0 - below)


def _normal_quantile(p):
    """The standard normal quantile of ``p`` (0.5 < p < 1), by bisection of the error function."""
    return _records.bisect(lambda z: 0.5 * (1.0 + math.erf(z / math.sqrt(2.0))) < p, 0.0, 10.0)


def _backhitch_class(inconclusive, count, hours, mb_s, full, floor):
    """``(class, per_hour, per_hour_low, note)`` of a window's data phase (observed or replayed).

    The back-hitches count against the line by their lower bound (:func:`backhitches_per_hour_low`); ``note``
    says so when their rate as it stands would have given another class, else None.
    """
    per_hour = count / hours if count is not None and hours else None
    low = backhitches_per_hour_low(count, hours)
    cls = _forecast.class_of(inconclusive, low or 0.0, mb_s, full, floor)
    note = None
    if per_hour is not None and _forecast.class_of(inconclusive, per_hour, mb_s, full, floor) != cls:
        note = _words.backhitches_too_few(count, hours * 3600.0, per_hour, low, BACKHITCH_CONFIDENCE,
                                          _forecast.SHOESHINE_PER_HOUR, cls)
    return cls, per_hour, low, note


def _series_ok(series):
    """True when the window's series has its byte and seconds columns, of equal length, all numbers >= 0."""
    if not isinstance(series, dict):
        return False
    columns = [series.get('write_byte_cnt'), series.get('seconds')]
    if not all(isinstance(c, list) for c in columns) or len(columns[0]) != len(columns[1]):
        return False
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 for c in columns for v in c)


def _ratio(window, tape_ratio):
    if isinstance(window.compression_ratio, (int, float)) and window.compression_ratio > 0:
        return max(1.0, float(window.compression_ratio)), RATIO_DRIVE
    if tape_ratio:
        return max(1.0, float(tape_ratio)), RATIO_GIVEN
    return 1.0, RATIO_NONE


def _observed(window, phase, params, ratio, ratio_source, min_samples):
    series = window.series
    first, last = phase
    nbytes = sum(series['write_byte_cnt'][first:last + 1])
    seconds = sum(series['seconds'][first:last + 1])
    inner_first, inner_last = steady_phase(phase, series)
    inner_s = sum(series['seconds'][inner_first:inner_last + 1])
    bound_s = sum(s for s, waited in zip(series['seconds'][first:last + 1], drive_bound(series, phase)) if waited)
    mb_s = sum(series['write_byte_cnt'][inner_first:inner_last + 1]) / inner_s / MB if inner_s else 0.0
    counted = window.backhitches
    full, floor = _forecast.need(params, ratio)
    inconclusive = None
    if seconds < min_samples:
        inconclusive = _words.observed_too_short(seconds, min_samples)
    # Where the drive is known never to have stopped, the class's rate is what it took: from the end of its buffer's
    # fill, with the seconds it paced at its full speed.
    class_mb_s, paced_s, fill_s = mb_s, 0.0, 0.0
    if counted == 0:
        taken = steady_phase(phase, series, full, params['buffer_mb'] * params['compressed_max_mb_s']
                             / params['native_mb_s'])
        fill_s = sum(series['seconds'][inner_first:taken[0]])
        class_mb_s, paced_s = paced_rate(series, taken, full, params['native_mb_s'], params['buffer_mb'])
    cls, per_hour, low, note = _backhitch_class(inconclusive, counted, seconds / 3600.0, class_mb_s, full, floor)
    notes = [note] if note else []
    if _forecast.class_of(inconclusive, 0.0, mb_s, full, floor) != cls and counted == 0:
        notes.append(_words.drive_paced(paced_s, inner_s - fill_s, mb_s, class_mb_s, full, ratio, cls, fill_s))
    return notes, {
        'class': cls,
        'class_basis': 'backhitches_and_rate' if counted is not None else 'rate',
        'inconclusive_reason': inconclusive,
        'mb_s': round(mb_s, 3),
        'class_mb_s': round(class_mb_s, 3),
        'data_seconds': round(seconds, 3),
        'drive_bound_s': round(bound_s, 3),
        'bytes': nbytes,
        'backhitches': counted,
        'backhitches_per_hour': None if per_hour is None else round(per_hour, 2),
        'backhitches_per_hour_low': None if low is None else round(low, 2),
        'tape_ratio': round(ratio, 4),
        'tape_ratio_source': ratio_source,
        'need_full_mb_s': round(full, 3),
        'need_floor_mb_s': round(floor, 3),
    }


def _predicted(drive, rates, ratio, seen, start_full, need):
    """The forecast replayed from ``rates``; inconclusive when the observed data phase (``seen``) was.

    Whether there was enough to judge is the observed window's question: a drive-bound stretch replays in fewer
    seconds than it lasted (:func:`per_second_rates`), so the replay's own sample count does not decide it. Its
    back-hitches count against the line as the observed ones do (:func:`_backhitch_class`). Returns
    ``(forecast, note)``. ``need``: the drive's (full, floor) host rates at ``ratio``, unrounded.
    """
    result = _forecast.forecast(drive, feed_series_mb_s=rates, tape_ratio=ratio, min_samples=0,
                                trace=False, replay='once', start_full=start_full)
    predicted = dict((key, result[key]) for key in (
        'class', 'inconclusive_reason', 'effective_mb_s', 'backhitches', 'backhitches_per_hour',
        'simulated_seconds'))
    note = None
    if seen['inconclusive_reason']:
        predicted.update({'class': _forecast.INCONCLUSIVE, 'inconclusive_reason': seen['inconclusive_reason'],
                          'backhitches_per_hour_low': None})
    else:
        # a replayed drive that never left its top step nor stopped streamed, whatever the host's mean: over a
        # short replay begun with the buffer full, the buffer's net drain alone keeps that mean below the drive's
        # (lab, 2026-11-29: 24 s at 4.9 MB/s, the buffer from full to 43 %, the mean 4.67 MB/s)
        share = result.get('time_share') or {}
        kept_top = (result['backhitches'] == 0 and share.get('stopped') == 0
                    and share.get('top_step', 0.0) >= 1.0 - _forecast.FULL_SPEED_TOLERANCE)
        rate = max(result['effective_mb_s'], need[0]) if kept_top else result['effective_mb_s']
        cls, _per_hour, low, note = _backhitch_class(
            result['inconclusive_reason'], result['backhitches'], result['simulated_seconds'] / 3600.0,
            rate, need[0], need[1])
        if rate != result['effective_mb_s'] and note is None:
            note = _words.replay_kept_top_step(result['simulated_seconds'], result['effective_mb_s'], need[0], cls)
        predicted.update({'class': cls, 'backhitches_per_hour_low': None if low is None else round(low, 2)})
    return predicted, note


def _agreement(observed, predicted):
    rate_delta = None
    if observed['mb_s']:
        # + 0.0: no -0.0 in the document
        rate_delta = round(100.0 * (predicted['effective_mb_s'] - observed['mb_s']) / observed['mb_s'], 1) + 0.0
    counted = observed['backhitches']
    return {
        'class_match': observed['class'] == predicted['class'],
        'rate_delta_pct': rate_delta,
        'backhitch_delta': None if counted is None else predicted['backhitches'] - counted,
    }


def judge(window, drive, tape_ratio=None, min_samples=_forecast.MIN_SAMPLES):
    """The ``ObservedJudgement`` of ``window`` (an ObservedWindow or its dict) on ``drive`` (a DriveSpec or mapping).

    ``tape_ratio``: the compression to assume when the drive did not measure its
    own (qualify's estimate); without either, 1.0.
    """
    window = _records.ObservedWindow.from_dict(window)
    out = _records.ObservedJudgement(device=window.device, notes=[])
    if not window.observed:
        out.status = STATUS_NOT_OBSERVED
        out.notes.append('nothing was sampled (status %s)' % window.status)
        return out
    if not _series_ok(window.series):
        out.status = STATUS_NOT_OBSERVED
        out.notes.append(_words.OBSERVED_SERIES_BROKEN)
        return out
    phase = data_phase(window.series)
    if phase is None:
        out.status = STATUS_IDLE
        return out
    params = _forecast.drive_parameters(drive)
    ratio, ratio_source = _ratio(window, tape_ratio)
    out.status = STATUS_JUDGED
    seen_notes, out.observed = _observed(window, phase, params, ratio, ratio_source, min_samples)
    steady = steady_phase(phase, window.series)
    rates = per_second_rates(window.series, steady, ceiling_mb_s=params['compressed_max_mb_s'])
    # a steady phase that begins drive-bound begins with the drive's buffer full and the drive streaming
    start_full = drive_bound(window.series, (steady[0], steady[0]))[0]
    out.forecast, replay_note = _predicted(drive, rates, ratio, out.observed, start_full,
                                           _forecast.need(params, ratio))
    if out.observed['class_basis'] == 'rate':
        out.notes.append(_words.OBSERVED_NO_COUNTER)
    out.notes.extend('observed: %s' % note for note in seen_notes)
    if replay_note:
        out.notes.append('replayed: %s' % replay_note)
    out.agreement = _agreement(out.observed, out.forecast)
    return out


def _failure(result):
    """Why a tape_drive_observe result holds no window (failed, skipped, timed out), or None."""
    if not isinstance(result, dict):
        return 'no result'
    if result.get('failed') or result.get('skipped') or 'status' not in result:
        return str(result.get('msg') or result.get('skip_reason') or result.get('reason') or 'no window returned')
    return None


def observed_drive(drive_id, result, drive=None, drive_error=None, tape_ratio=None):
    """The document's ``ObservedDrive`` of one drive: its tape_drive_observe ``result`` judged on ``drive``.

    ``result``: the module's result as registered (async_status, a loop item), or None when the drive was not
    watched. ``drive``: its DriveSpec (``_host.resolve_spec``), or None with ``drive_error`` saying why: a window
    in which the drive wrote is then ``not_judged``, an idle one still ``idle``. A result that failed or holds
    no window is ``not_observed`` with the module's message.
    """
    out = _records.ObservedDrive(drive=drive_id, notes=[])
    failure = _failure(result)
    if failure is not None:
        out.status = STATUS_NOT_OBSERVED
        out.error = _words.not_watched(drive_id, failure)
        return out
    window = _records.ObservedWindow.from_dict(result)
    out.window = window.in_document()
    wrote = window.observed and _series_ok(window.series) and data_phase(window.series) is not None
    if wrote and drive is None:
        out.status = STATUS_NOT_JUDGED
        out.error = drive_error
        return out
    try:
        judged = judge(window, drive, tape_ratio=tape_ratio)
    except ValueError as exc:        # a drive model the forecast refuses (_forecast.ForecastInputError)
        out.status, out.error = STATUS_NOT_JUDGED, str(exc)
        return out
    out.status, out.notes = judged.status, judged.notes
    out.observed, out.forecast, out.agreement = judged.observed, judged.forecast, judged.agreement
    return out


# ---------------------------------------------------------------------------
# a qualify run's tape ratio from an earlier observe run (qualify_tape_ratio_from)

RATIO_OBSERVED = 'ratio_observed'
RATIO_OBSERVED_UNUSED = 'ratio_observed_unused'


def _entry_of(report, drive_id):
    for entry in report.observed or []:
        if entry.drive == drive_id:
            return entry
    return None


def _measured(entry):
    """The ratio the drive measured itself in a judged ``entry`` (ObservedDrive), or None."""
    seen = entry.observed or {}
    if entry.status != STATUS_JUDGED or seen.get('tape_ratio_source') != RATIO_DRIVE:
        return None
    ratio = _records.finite(seen.get('tape_ratio'))
    return max(1.0, ratio) if ratio is not None and ratio > 0 else None


def drive_ratio(drive_id, run_dir, report=None, refused=None):
    """The compression ratio drive ``drive_id`` measured itself in the observe run of ``run_dir``, or why not.

    For the verdict's tape ratio (``_verdict.tape_ratio``: the user's ``tape_ratio``, then this, then the
    sources' sample, then the drive's nominal ratio). ``report``: the host's HostReport of that run
    (``_run.read_observed``), or None with ``refused`` ({'why': the RunError's reason, 'path', 'detail': its
    message, 'host'}) when there is none. ``drive_id``: the drive's id in the qualify run's document (its nst),
    matched with the observed entry's ``drive``; None for the what-if's target drive, which no observe run
    watched.

    Returns the basis ``{'id': 'ratio_observed', 'ratio', 'run', 'jobid', 'data_seconds', 'bytes'}`` when
    the drive's observed entry is judged and its ratio is the drive's own (``tape_ratio_source`` ``drive``:
    LOG SENSE's host and tape byte counters over the window), else ``{'id': 'ratio_observed_unused', 'why',
    'run_dir', 'run', 'drive', ...}`` (``_words`` words it): ``why`` the refusal's reason, ``not_watched``
    (no observed entry names the drive), ``idle``, ``not_judged``, ``not_observed`` (its status, with
    ``detail``), ``not_measured`` (judged with a ratio from elsewhere: ``source``), ``what_if`` (with
    ``measured``: [[drive, ratio]] of the host's drives that measured one).
    """
    run = ((report.run or {}).get('id') if report is not None else None) or os.path.basename(
        os.path.normpath(str(run_dir)))
    unused = {'id': RATIO_OBSERVED_UNUSED, 'run_dir': str(run_dir), 'run': run, 'drive': drive_id}
    if report is None:
        refused = refused or {}
        return dict(unused, why=refused.get('why'), path=refused.get('path'), detail=refused.get('detail'),
                    host=refused.get('host'))
    if drive_id is None:
        measured = [[e.drive, _measured(e)] for e in report.observed or [] if _measured(e) is not None]
        return dict(unused, why='what_if', measured=measured)
    entry = _entry_of(report, drive_id)
    if entry is None:
        return dict(unused, why='not_watched', watched=[e.drive for e in report.observed or []])
    ratio = _measured(entry)
    if ratio is not None:
        seen = entry.observed
        return {'id': RATIO_OBSERVED, 'ratio': ratio, 'run': run, 'jobid': entry.job.jobid if entry.job else None,
                'data_seconds': _records.finite(seen.get('data_seconds')),
                'bytes': _records.finite(seen.get('bytes'))}
    if entry.status == STATUS_JUDGED:
        return dict(unused, why='not_measured', source=(entry.observed or {}).get('tape_ratio_source'))
    detail = entry.error or '; '.join(entry.notes or []) or None
    why = entry.status if entry.status in (STATUS_IDLE, STATUS_NOT_JUDGED) else STATUS_NOT_OBSERVED
    return dict(unused, why=why, detail=detail)
