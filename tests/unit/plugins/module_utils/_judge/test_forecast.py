# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The streaming forecast against published figures, recorded lab numbers and its own invariants.

Published figures and their sources:
- IBM TS4300 documentation, "Speed matching", table 1 (full-height LTO-9 drive, Gen 9 media:
  408 ... 177 MB/s in 12 steps; Gen 8 media 365 ... 112 MB/s) and table 2 (half height),
  https://www.ibm.com/docs/en/ts4300-tape-library?topic=features-speed-matching
- IBM docs dtl 2.12.3, "Performance specifications for LTO tape drives": LTO-9 FH sustained
  compressed rate "FC 750 MB/s (L9) ... SAS 1000 MB/s (L9)",
  https://www.ibm.com/docs/en/dtl/2.12.3?topic=performance-lto-specifications
- HP Ultrium Generation 3 technical reference manual (Q1530-90901), chapter 10: "64 MB buffer",
  "ATS data rate range 27-80 MB/s (U3)".
Recorded lab figure: ../shared/lab/TCMU.md (this project's verified TCMU drive, buffer-drain
model): "With a 64 MiB buffer at 40 MB/s after 40 MiB written: MTWEOF 0.986 s (buffer flush),
MTWEOFI 0.000 s".
"""

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _drive_model as dm
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _forecast as fc

LTO9_FH = dm.lookup(9, 'FH', 'IBM')
LTO9_FH_STEPS = (408.0, 385.0, 366.0, 347.0, 325.0, 305.0, 284.0, 263.0, 244.0, 223.0, 203.0, 177.0)


def run(spec=LTO9_FH, **kwargs):
    kwargs.setdefault('trace', False)
    return fc.forecast(spec, **kwargs)


# -- published speed steps --------------------------------------------------------------------

@pytest.mark.parametrize('step', LTO9_FH_STEPS)
def test_a_feed_at_each_published_step_streams_at_that_step(step):
    # IBM TS4300 table 1: the drive runs at the step that matches the host's rate and never stops.
    result = run(feed_mb_s=step)
    assert result['backhitches'] == 0
    assert result['time_share']['steps']['%g' % step] >= 0.95
    assert result['effective_mb_s'] == pytest.approx(min(step, 408.0), rel=1e-3)


@pytest.mark.parametrize('gen, ff, floor', [(9, 'FH', 177.0), (8, 'FH', 112.0), (8, 'HH', 112.0), (7, 'FH', 101.46),
                                            (10, 'FH', 157.0), (3, None, 40.0), (2, None, 17.5)])
def test_published_floor_is_the_line_between_speed_matching_and_back_hitching(gen, ff, floor):
    spec = dm.lookup(gen, ff, 'IBM')
    assert spec.speed_floor_mb_s == floor
    at_floor = run(spec, feed_mb_s=floor)
    assert at_floor['backhitches'] == 0 and at_floor['class'] == fc.SPEED_MATCHED
    below = run(spec, feed_mb_s=floor * 0.7)
    assert below['backhitches'] > 0 and below['class'] == fc.SHOE_SHINING
    assert below['effective_mb_s'] < floor * 0.7 * 1.001


def test_hp_lto3_range_floor_27_mb_s():
    spec = dm.lookup(3, vendor='HPE')
    assert spec.buffer_mb == 64.0
    assert run(spec, feed_mb_s=28.0)['backhitches'] == 0
    assert run(spec, feed_mb_s=15.0)['class'] == fc.SHOE_SHINING


def test_interface_ceiling_caps_what_the_backup_gets():
    # IBM dtl: an FC LTO-9 FH sustains 750 MB/s compressed; on SAS 1000.
    fc_drive = dm.lookup(9, 'FH', 'IBM', interface='FC')
    result = run(fc_drive, feed_mb_s=900.0, tape_ratio=2.5)
    assert result['need_full_mb_s'] == 750.0
    assert result['effective_mb_s'] == pytest.approx(750.0, rel=0.01)
    assert result['class'] == fc.STREAMING
    sas = run(dm.lookup(9, 'FH', 'IBM', interface='SAS'), feed_mb_s=900.0, tape_ratio=2.5)
    assert sas['need_full_mb_s'] == 1000.0 and sas['class'] == fc.SPEED_MATCHED


# -- the cases the threshold verdict got wrong ---------------------------------------------------

def test_just_below_full_speed_is_speed_matched_not_shoe_shining():
    # LTO-6 of unknown make at 1.2:1: full speed needs 192 MB/s; 188 keeps it moving.
    result = run(dm.lookup(6), feed_mb_s=188.0, tape_ratio=1.2)
    assert result['need_full_mb_s'] == 192.0
    assert result['class'] == fc.SPEED_MATCHED and result['backhitches'] == 0


def test_a_one_second_dip_in_ten_is_absorbed_by_the_buffer():
    series = ([500.0] * 9 + [0.0]) * 6        # mean 450 MB/s, 5th percentile 0
    result = run(feed_series_mb_s=series)
    assert result['feed']['p5_mb_s'] == 0.0
    assert result['backhitches'] == 0 and result['class'] == fc.STREAMING


def test_a_stall_longer_than_the_buffer_back_hitches():
    series = [500.0] * 40 + [0.0] * 4          # 731 MB of buffer lasts 1.8 s at 408 MB/s
    result = run(feed_series_mb_s=series)
    assert result['backhitches'] == result['replays']
    assert result['backhitches_per_hour'] >= fc.SHOESHINE_PER_HOUR
    assert result['class'] == fc.SHOE_SHINING
    # the same stall shorter than the buffer: nothing
    short = run(feed_series_mb_s=[500.0] * 40 + [0.0])
    assert short['backhitches'] == 0


def test_synchronous_file_marks_cost_a_reposition_each_and_immediate_ones_nothing():
    sync = run(feed_mb_s=450.0, segment_size_mb=2000.0, filemark_mode='sync')
    marks = int(sync['effective_mb_s'] * sync['simulated_seconds'] // 2000)
    assert sync['backhitches_filemark'] == pytest.approx(marks, abs=1)
    assert sync['class'] == fc.SHOE_SHINING
    immediate = run(feed_mb_s=450.0, segment_size_mb=2000.0, filemark_mode='immediate')
    assert immediate['backhitches'] == 0 and immediate['class'] == fc.STREAMING
    # a measured cost per mark replaces the model's reposition time
    cheap = run(feed_mb_s=450.0, segment_size_mb=2000.0, filemark_mode='sync', filemark_seconds=0.0)
    assert cheap['effective_mb_s'] > sync['effective_mb_s']


def test_sync_mark_flush_time_matches_the_recorded_lab_drive():
    # ../shared/lab/TCMU.md: 64 MiB buffer drained at 40 MB/s, 40 MiB written, then MTWEOF:
    # 0.986 s flush. The forecast's host is blocked for the drain of what is buffered.
    drive = {'native_mb_s': 40.0, 'speed_steps_mb_s': [40.0], 'buffer_mb': 64 * 1.048576,
             'backhitch_s': 0.0, 'compressed_max_mb_s': 10000.0, 'compression_ratio': 1.0}
    # a fast host (dd) writes 40 MiB in a tenth of a second; the mark waits for the drain
    result = fc.forecast(drive, feed_mb_s=400 * 1.048576, segment_size_mb=40 * 1.048576,
                         filemark_mode='sync', trace=False)
    assert result['filemarks'] > 100
    # the lab's dd drained part of the 40 MiB while writing it; the forecast's host writes it in
    # one 0.1 s tick: one tick of difference is the stated tolerance
    assert result['filemark_wait_s'] == pytest.approx(0.986, abs=0.15)
    immediate = fc.forecast(drive, feed_mb_s=400 * 1.048576, segment_size_mb=40 * 1.048576,
                            filemark_mode='immediate', trace=False)
    assert immediate['filemark_wait_s'] == 0.0


def test_a_feed_below_the_floor_is_shoe_shining_however_rarely_it_stops():
    # 170 MB/s into an LTO-9 FH (floor 177): with 731 MB of buffer the drive stops about once
    # every 76 s (fewer than SHOESHINE_PER_HOUR), but it cannot run that slowly without stopping.
    result = run(feed_mb_s=170.0)
    assert 0 < result['backhitches_per_hour'] < fc.SHOESHINE_PER_HOUR
    assert result['class'] == fc.SHOE_SHINING
    assert run(feed_mb_s=0.0)['class'] == fc.INCONCLUSIVE


def test_short_series_is_inconclusive_and_says_why():
    result = run(feed_series_mb_s=[900.0])
    assert result['class'] == fc.INCONCLUSIVE
    # the verdict's sentence for a read too short (_words.too_little_data), written once
    assert result['inconclusive_reason'] == ('the sources were read in 1 s (1 per-second sample; 10 needed): give a '
                                             'bigger tree or a longer time budget')
    assert result['feed']['p5_mb_s'] <= result['feed']['mean_mb_s'] <= result['feed']['max_mb_s']


def test_window_hours_for_the_backup():
    result = run(feed_mb_s=400.0, data_gb=1000.0)
    mount = (LTO9_FH.load_s + LTO9_FH.rewind_s + LTO9_FH.unload_s) / 3600.0
    assert result['window_hours'] == pytest.approx(1000 * 1000 / 400 / 3600.0 + mount, rel=1e-3)


def test_trace_is_bounded_and_shows_buffer_and_step():
    result = fc.forecast(LTO9_FH, feed_series_mb_s=[500.0] * 40 + [0.0] * 4)
    trace = result['trace']
    assert 0 < len(trace) <= fc.TRACE_POINTS
    assert all(0.0 <= point['buffer_pct'] <= 100.0 for point in trace)
    assert any(point['step_mb_s'] == 0.0 for point in trace)      # stopped during stalls


@pytest.mark.parametrize('kwargs, match', [
    ({}, 'Give the host feed'),
    ({'feed_series_mb_s': []}, 'empty'),
    ({'feed_series_mb_s': 'fast'}, 'list'),
    ({'feed_mb_s': -1}, 'feed_mb_s'),
    ({'feed_mb_s': 100, 'tape_ratio': 0.5}, 'at least 1.0'),
    ({'feed_mb_s': 100, 'filemark_mode': 'sometimes'}, "'sync' or 'immediate'"),
    ({'feed_mb_s': float('nan')}, 'finite'),
    ({'feed_mb_s': True}, 'number'),
])
def test_bad_input_is_a_clear_error(kwargs, match):
    with pytest.raises(fc.ForecastInputError, match=match):
        fc.forecast(LTO9_FH, **kwargs)


def test_no_drive_is_a_clear_error():
    with pytest.raises(fc.ForecastInputError, match='drive'):
        fc.forecast(None, feed_mb_s=1)


# -- properties --------------------------------------------------------------------------------

DRIVES = ((9, 'FH', 'IBM'), (8, 'HH', 'IBM'), (5, None, 'HPE'), (3, None, 'HPE'), (6, None, None), (10, None, 'IBM'),
          (1, None, None))
SPECS = [dm.lookup(g, ff, v) for g, ff, v in DRIVES]
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(spec=st.sampled_from(SPECS), low=st.floats(0.0, 1.3), high=st.floats(0.0, 1.3),
       ratio=st.floats(1.0, 2.5))
def test_more_constant_feed_never_gives_a_worse_class_or_fewer_mb_s(spec, low, high, ratio):
    low, high = sorted((low, high))
    full = min(spec.native_mb_s * ratio, spec.compressed_max_mb_s)
    slow = run(spec, feed_mb_s=low * full, tape_ratio=ratio)
    fast = run(spec, feed_mb_s=high * full, tape_ratio=ratio)
    assert fc.RANK[fast['class']] >= fc.RANK[slow['class']]
    # 0.1 %: when both feeds exceed the top step the drive sets the pace, and where a 0.1 s tick
    # ends decides the last few MB
    assert fast['effective_mb_s'] >= slow['effective_mb_s'] * 0.999 - 1e-6


@FAST
@given(spec=st.sampled_from(SPECS), where=st.floats(0.0, 1.0), ratio=st.floats(1.0, 2.5))
def test_constant_feed_between_floor_and_full_speed_never_back_hitches(spec, where, ratio):
    full, floor = fc.need(fc.drive_parameters(spec), ratio)
    result = run(spec, feed_mb_s=floor + where * (full - floor), tape_ratio=ratio)
    assert result['backhitches'] == 0
    assert result['class'] in (fc.SPEED_MATCHED, fc.STREAMING)


@FAST
@given(spec=st.sampled_from(SPECS), series=st.lists(st.floats(0.0, 1200.0), min_size=1, max_size=90),
       uplift=st.floats(0.0, 400.0))
# found by hypothesis: before the drive left the time it held the host out of the host's rate,
# the first lost 29 % (283.5 -> 202.0 MB/s), the second 7 %
@example(spec=SPECS[0], series=[8.924650435307237, 8.924650435307237, 858.2425839253671], uplift=9.924650435307237)
@example(spec=SPECS[2], series=[0.0, 0.0, 0.0, 0.0, 124.0, 302.0], uplift=8.0)
# found by hypothesis (2026-11-29): 21 % lost, SPEED-MATCHED -> SHOE-SHINING (120.8 -> 95.2 MB/s, 0 -> 272
# back-hitches); and by a random search (4,805 examples): 33 % (37.1 -> 24.9 MB/s, 191 -> 817 back-hitches)
@example(spec=SPECS[4], series=[1.0, 6.0, 408.0], uplift=1.0)
@example(spec=SPECS[3], series=[4.84, 88.26], uplift=8.26)
def test_more_feed_every_second_never_gives_fewer_mb_s(spec, series, uplift):
    base = run(spec, feed_series_mb_s=series, min_samples=0)
    more = run(spec, feed_series_mb_s=[v + uplift for v in series], min_samples=0)
    # Strictly "never fewer MB/s" holds for constant feeds (above). For a varying feed it does
    # not, in the model nor in a drive: which step the drive is on when a dip comes decides
    # whether its buffer bridges the dip, and a drive that restarted after a slow stretch picks a
    # slow step, so a burst that an idle, empty buffer would have swallowed can fill it and block
    # the host. What holds is that such losses stay bounded. A search aimed at the worst case
    # (hypothesis target(), 600 examples) found 12 % ([65, 224, 0.9, 0, 973] + 1.9 MB/s into an
    # HPE LTO-5: 120.5 -> 105.9 MB/s); feeds that swing every second or two do worse, as the
    # drive re-picks its step from the last second's arrivals (rules 3 and 4): 21 % for an LTO-6
    # fed [1, 6, 408] + 1 MB/s, 33 % for an HPE LTO-3 fed [4.84, 88.26] + 8.26 MB/s (the
    # examples above), the worst two random searches of 4,805 and 3,345 examples found. Half is
    # the bound: a loss beyond it would be a model error, not a phase of the drive's steps.
    assert more['effective_mb_s'] >= base['effective_mb_s'] * 0.5 - 1e-6


def test_the_time_a_drive_held_the_host_is_not_read_as_a_slow_host():
    # LTO-9 FH (731 MB buffer, 177..408 MB/s): 2 s of trickle, then a burst that fills the buffer
    # while the drive repositions. Restarting on the host's rate over the last second, waits
    # included, the drive took its floor and ran dry in every dip (297 back-hitches in the
    # replay, 202 MB/s); with the waits left out it takes the top step.
    spec = SPECS[0]
    series = [18.85, 18.85, 868.17]
    result = run(spec, feed_series_mb_s=series, min_samples=0)
    assert result['effective_mb_s'] >= 240.0, result['time_share']
    assert result['backhitches'] < 200


OPTIONAL = {
    'tape_ratio': st.one_of(st.none(), st.floats(1.0, 3.0)),
    'path_mb_s': st.one_of(st.none(), st.floats(1.0, 2000.0)),
    'segment_size_mb': st.one_of(st.none(), st.floats(1.0, 100000.0)),
    'filemark_mode': st.sampled_from(fc.FILEMARK_MODES),
    'filemark_seconds': st.one_of(st.none(), st.floats(0.0, 20.0)),
    'data_gb': st.one_of(st.none(), st.floats(0.001, 100000.0)),
    'block_size_bytes': st.one_of(st.none(), st.integers(512, 8 << 20)),
    'streams': st.one_of(st.none(), st.integers(1, 64)),
}


@FAST
@given(spec=st.sampled_from(SPECS),
       feed=st.one_of(st.floats(0.0, 2000.0), st.lists(st.floats(0.0, 2000.0), min_size=1, max_size=40)),
       chosen=st.fixed_dictionaries({}, optional=OPTIONAL))
def test_any_combination_of_optional_inputs_gives_a_forecast(spec, feed, chosen):
    key = 'feed_series_mb_s' if isinstance(feed, list) else 'feed_mb_s'
    result = fc.forecast(spec, trace=False, **dict(chosen, **{key: feed}))
    assert result['class'] in fc.RANK
    assert result['effective_mb_s'] >= 0
    assert result['feed']['min_mb_s'] <= result['feed']['p5_mb_s'] <= result['feed']['mean_mb_s'] \
        <= result['feed']['max_mb_s']
