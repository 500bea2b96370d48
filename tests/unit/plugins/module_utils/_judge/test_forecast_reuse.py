# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A verdict's forecasts, each run once: the simulations kept by their inputs (_forecast._simulated), and the drive
count the sources keep busy found by doubling and bisection (_verdict._last_count).

What it must keep: the same numbers as before. The recorded lab run 20261123-quick
(tests/unit/fixtures/verdict_args/) ran 20 simulations for lab-ma2's verdict where 4 differed (the stream fixes
try every stream count, and without a measured scaling curve each feeds the drive the same), and 16 for
lab-ma1's drive count (every count to 16, all STREAMING). A share of the feed below the drive's floor is not
simulated for the drive count at all (_forecast.below_floor): the recorded hosts' documents are the same with it.
"""

import copy
import json
import os

import pytest

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.tapeops.qualify.plugins.action import qualify_verdict
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _drive_model as dm
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _forecast as fc
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _verdict
from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._tape_fixtures import FIXTURES

LTO7 = dm.lookup(7, 'FH', 'IBM')
FEED = [120.0, 80.0, 95.0, 60.0, 130.0, 110.0, 70.0, 100.0, 90.0, 115.0, 85.0, 105.0]


@pytest.fixture
def counted(monkeypatch):
    """The simulations really run, counted."""
    fc._SIMULATED.clear()
    runs = []
    simulate = fc._simulate

    def counting(*args, **kwargs):
        runs.append(args[8])        # trace
        return simulate(*args, **kwargs)

    monkeypatch.setattr(fc, '_simulate', counting)
    yield runs
    fc._SIMULATED.clear()


def fresh(**kwargs):
    fc._SIMULATED.clear()
    return fc.forecast(LTO7, feed_series_mb_s=FEED, min_samples=0, **kwargs)


def test_an_equal_forecast_is_the_same_document_without_running_again(counted):
    first = fc.forecast(LTO7, feed_series_mb_s=FEED, tape_ratio=1.4, min_samples=0, trace=False)
    again = fc.forecast(LTO7, feed_series_mb_s=list(FEED), tape_ratio=1.4, min_samples=0, trace=False)
    assert again == first and counted == [False]
    # the caller's copy is its own: changing it changes no later answer
    again['drive']['speed_steps_mb_s'].append(1.0)
    again['feed']['mean_mb_s'] = -1
    assert fc.forecast(LTO7, feed_series_mb_s=FEED, tape_ratio=1.4, min_samples=0, trace=False) == first
    assert counted == [False]


def test_any_input_that_differs_runs_its_own(counted):
    fc.forecast(LTO7, feed_series_mb_s=FEED, tape_ratio=1.4, min_samples=0, trace=False)
    fc.forecast(LTO7, feed_series_mb_s=FEED, tape_ratio=1.5, min_samples=0, trace=False)
    fc.forecast(LTO7, feed_series_mb_s=FEED[:-1] + [116.0], tape_ratio=1.4, min_samples=0, trace=False)
    fc.forecast(LTO7, feed_series_mb_s=FEED, tape_ratio=1.4, min_samples=0, trace=False, segment_size_mb=2000,
                filemark_mode='sync')
    fc.forecast(LTO7, feed_series_mb_s=FEED, tape_ratio=1.4, min_samples=0, trace=False, job_gb=50, job_gap_s=60)
    fc.forecast(LTO7, feed_series_mb_s=FEED, tape_ratio=1.4, min_samples=0, trace=False,
                ratio_profile={'ratios': [1.0, 3.0], 'stream_mb': 5000})
    fc.forecast(dict(LTO7.as_dict(), buffer_mb=512), feed_series_mb_s=FEED, tape_ratio=1.4, min_samples=0, trace=False)
    assert len(counted) == 7


def test_a_trace_run_stands_for_one_without_and_not_the_other_way(counted):
    with_trace = fc.forecast(LTO7, feed_series_mb_s=FEED, tape_ratio=1.4, min_samples=0, trace=True)
    without = fc.forecast(LTO7, feed_series_mb_s=FEED, tape_ratio=1.4, min_samples=0, trace=False)
    assert with_trace['trace'] and without['trace'] == []
    assert dict(without, trace=None) == dict(with_trace, trace=None)
    assert counted == [True]
    fc.forecast(LTO7, feed_series_mb_s=FEED, tape_ratio=2.0, min_samples=0, trace=False)
    traced = fc.forecast(LTO7, feed_series_mb_s=FEED, tape_ratio=2.0, min_samples=0, trace=True)
    assert traced['trace'] and counted == [True, False, True]


def test_kept_answers_are_the_answers_a_fresh_process_gives(counted):
    kwargs = {'tape_ratio': 1.3, 'trace': True, 'segment_size_mb': 4000, 'filemark_mode': 'sync'}
    expected = fresh(**copy.deepcopy(kwargs))
    for attempt in range(3):
        assert fc.forecast(LTO7, feed_series_mb_s=FEED, min_samples=0, **kwargs) == expected, attempt


def test_only_the_last_ones_are_kept(counted):
    for n in range(fc.SIMULATED_KEPT + 5):
        fc.forecast(LTO7, feed_mb_s=50.0 + n, tape_ratio=1.0, trace=False)
    assert len(fc._SIMULATED) == fc.SIMULATED_KEPT
    fc.forecast(LTO7, feed_mb_s=50.0, tape_ratio=1.0, trace=False)          # the first: gone, run again
    fc.forecast(LTO7, feed_mb_s=50.0 + fc.SIMULATED_KEPT + 4, tape_ratio=1.0, trace=False)   # the last: kept
    assert len(counted) == fc.SIMULATED_KEPT + 6


@pytest.mark.parametrize('boundary', list(range(0, 18)))
@pytest.mark.parametrize('most', [1, 2, 7, 16])
def test_the_last_count_is_the_linear_scans(boundary, most):
    asked = []

    def class_at(count):
        asked.append(count)
        return 'STREAMING' if count <= boundary else 'SHOE-SHINING'

    assert _verdict._last_count(('STREAMING',), class_at, most) == min(boundary, most)
    assert len(set(asked)) == len(asked) and all(1 <= c <= most for c in asked)
    assert len(asked) <= 2 * most.bit_length() + 1
    assert len(asked) == 1 if boundary >= most else asked[0] == most      # all kept busy: one forecast


def test_no_count_to_try_is_none():
    assert _verdict._last_count(('STREAMING',), lambda count: pytest.fail('asked %d' % count), 0) == 0


def linear(spec, source, options=None):
    """drives_kept_busy as it was: every count from one, up to the first that shoe-shines."""
    opts = dict(_verdict.DEFAULTS, **(options or {}))
    src = _verdict.source_numbers(source, spec)
    ratio, _basis = _verdict.tape_ratio(spec, source, opts.get('tape_ratio'), None, None)
    profile = _verdict.ratio_profile(source, ratio, None) if opts.get('ratio_profile') else None
    result = {'streaming': 0, 'not_shoeshining': 0}
    for count in range(1, _verdict.MAX_DRIVES_COUNTED + 1):
        trial = _verdict._Case(spec, src, ratio, 1.0 / count, None, profile=profile).run()
        if trial['class'] == _verdict.STREAMING:
            result['streaming'] = count
        if trial['class'] in (_verdict.STREAMING, _verdict.SPEED_MATCHED):
            result['not_shoeshining'] = count
        else:
            break
    return result


@pytest.mark.parametrize('mean', [30.0, 140.0, 400.0, 900.0, 1500.0, 3000.0])
def test_the_drive_count_is_the_linear_scans_over_the_feeds(mean):
    from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils.report_cases import source

    src = source(mean, mean * 0.9)
    spec = dm.lookup(8, 'FH', 'IBM')
    assert _verdict.drives_kept_busy(spec, src) == linear(spec, src)


# A share of the feed whose fastest second is below the drive's floor is not simulated for the drive count
# (_forecast.below_floor): the forecast's effective rate cannot exceed that second, and class_of calls anything
# below the floor SHOE-SHINING. The claim, checked against the simulation over feeds around the floor.
FLOOR_CASES = [
    (spec, feed, ratio, path)
    for spec in (LTO7, dm.lookup(9, 'FH', 'IBM'), dm.lookup(5, 'HH', 'HPE'))
    for feed in ([60.0] * 30, FEED, [0.0, 250.0] + [20.0] * 28, [0.0] * 30, [45.0, 46.0, 47.0] * 10)
    for ratio in (1.0, 1.6, 2.5)
    for path in (None, 40.0, 300.0)
]


@pytest.mark.parametrize('share', [1.0, 0.9, 0.75, 0.5, 0.4, 0.25, 0.1])
@pytest.mark.parametrize('spec, feed, ratio, path', FLOOR_CASES)
def test_below_the_floor_unsimulated_is_what_the_simulation_says(spec, feed, ratio, path, share):
    series = [v * share for v in feed]
    below = fc.below_floor(spec, feed_series_mb_s=series, tape_ratio=ratio, path_mb_s=path)
    simulated = fc.forecast(spec, feed_series_mb_s=series, tape_ratio=ratio, path_mb_s=path, min_samples=0,
                            trace=False)
    if below:
        assert simulated['class'] in (fc.SHOE_SHINING, fc.INCONCLUSIVE)
        assert simulated['effective_mb_s'] < simulated['need_floor_mb_s']
    # the bound is the fastest second, capped by the drive and the path: it never decides a feed that reaches it
    fastest = min(max(series), path or float('inf'), fc.drive_parameters(spec)['compressed_max_mb_s'])
    assert below == (fastest < simulated['need_floor_mb_s'] * (1.0 - fc.FULL_SPEED_TOLERANCE))


def test_the_floor_cases_decide_both_ways():
    decided = [fc.below_floor(spec, feed_series_mb_s=[v * share for v in feed], tape_ratio=ratio, path_mb_s=path)
               for spec, feed, ratio, path in FLOOR_CASES for share in (1.0, 0.25)]
    assert any(decided) and not all(decided)


def test_a_constant_feed_and_a_path_are_bounded_too():
    floor = fc.need(fc.drive_parameters(LTO7), 1.0)[1]
    assert fc.below_floor(LTO7, feed_mb_s=floor * 0.98)
    assert not fc.below_floor(LTO7, feed_mb_s=floor)
    assert fc.below_floor(LTO7, feed_mb_s=floor * 3, path_mb_s=floor * 0.9)
    # data that compresses asks more host MB/s of the floor: a feed at it falls short at 1.1:1
    assert not fc.below_floor(LTO7, feed_mb_s=floor) and fc.below_floor(LTO7, feed_mb_s=floor, tape_ratio=1.1)


def test_the_drive_count_simulates_no_share_below_the_floor(counted):
    spec = dm.lookup(8, 'FH', 'IBM')
    floor = fc.need(fc.drive_parameters(spec), 1.0)[1]
    from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils.report_cases import source

    src = source(floor * 2.5, floor * 2.4)
    kept = _verdict.drives_kept_busy(spec, src, {'tape_ratio': 1.0})
    # 16 drives, then 1, 2, 4: 16 and 4 get under the floor's feed each, only 1 and 2 are simulated
    assert kept['not_shoeshining'] == 2 and len(counted) == 2
    assert kept == linear(spec, src, {'tape_ratio': 1.0})


@pytest.mark.parametrize('host', ['lab-ma1', 'lab-ma2', 'lab-ma3'])
def test_the_recorded_lab_verdicts_are_the_same_with_every_share_simulated(host, monkeypatch, tmp_path):
    """The recorded lab run (tests/unit/fixtures/verdict_args/20261123-quick/): each host's whole document, judged
    with the floor's shortcut and with every drive count simulated, is the same."""
    with open(os.path.join(FIXTURES, 'verdict_args', '20261123-quick', host + '.json'), encoding='utf-8') as handle:
        raw = json.load(handle)

    def judged():
        fc._SIMULATED.clear()
        args = ArgumentSpecValidator(qualify_verdict.ARGUMENT_SPEC).validate(
            dict(raw, report_dir=str(tmp_path))).validated_parameters
        doc = qualify_verdict.ActionModule._document(host, args, qualify_verdict.records_of(args)).to_dict()
        del doc['generated_at']           # the clock's, not the verdict's
        return doc

    shortcut = judged()
    monkeypatch.setattr(fc, 'below_floor', lambda *args, **kwargs: False)
    assert judged() == shortcut
