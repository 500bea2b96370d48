# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The forecast with the tape ratio along the sources' stream (ratio_profile) and the verdict's profile.

What it must show: a real Bacula job in the lab (lab-ma2, docs/tape-side.md "Observed jobs") ran its drive dry
while the tree's 32 MiB SQL dump passed (its first version: one line repeated, 120:1), where the whole stream's
ratio (1.21) said the sources kept it above its floor; on the tree's version 2 (the dump about 2:1) its job slowed
the drive and did not stop it. A stretch of highly compressible data asks floor x its ratio of the sources while it passes: the drive
takes little tape from it, and its buffer drains.
IBM TS4300 documentation, "Speed matching", table 1: a full-height LTO-9's floor is 177 MB/s.
"""

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _drive_model as dm
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _forecast as fc
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _verdict

LTO9_FH = dm.lookup(9, 'FH', 'IBM')
# ten equal shares of the stream, two of them a database dump at 20:1: 1 / (0.8 / 1 + 0.2 / 20) = 1.235 over it all
DUMP = [1.0] * 4 + [20.0, 20.0] + [1.0] * 4
WHOLE = 1.0 / (0.8 + 0.2 / 20.0)


def run(**kwargs):
    return fc.forecast(LTO9_FH, feed_mb_s=250.0, tape_ratio=WHOLE, trace=False, **kwargs)


def test_a_compressible_stretch_drains_the_buffer_the_whole_ratio_keeps():
    # 250 MB/s at 1.235: 202 tape MB/s, above the 177 floor: speed-matched without a stop
    whole = run()
    assert whole['class'] == fc.SPEED_MATCHED and whole['backhitches'] == 0
    # the same bytes with the dump where it is: 2 GB at 20:1 gives the drive 12.5 tape MB/s for 8 s, and its
    # 731 MB buffer (the model's) lasts under 5 s of that; every pass of the dump stops the drive, 45 passes in
    # the forecast's 1800 s, 90 an hour
    stretch = run(ratio_profile={'ratios': DUMP, 'stream_mb': 10000.0})
    passes = 250.0 * fc.MIN_SIMULATED_S / 10000.0
    assert stretch['backhitches'] >= passes - 1
    assert stretch['class'] == fc.SHOE_SHINING and stretch['backhitches_per_hour'] >= fc.SHOESHINE_PER_HOUR
    assert stretch['inputs']['ratio_profile'] == {'ratios': DUMP, 'stream_mb': 10000.0}


def test_a_flat_profile_forecasts_as_the_one_ratio():
    flat = run(ratio_profile={'ratios': [WHOLE] * 10, 'stream_mb': 10000.0})
    whole = run()
    flat['inputs'].pop('ratio_profile')
    assert flat == whole


def test_a_stream_longer_than_the_forecast_reads_is_laid_over_it():
    # 10 TB: the forecast reads 450 GB of it. Laid over those, the dump in the stream's middle is still passed,
    # for its part of the bytes (90 GB, 6 minutes), in which the drive runs dry, waits for a refill and stops
    # again, a dozen times; at its true place it would never be reached
    long = run(ratio_profile={'ratios': DUMP, 'stream_mb': 1e7})
    assert long['backhitches'] >= 10
    # a dump in the stream's last share too
    assert run(ratio_profile={'ratios': [1.0] * 9 + [20.0], 'stream_mb': 1e7})['backhitches'] >= 5


@pytest.mark.parametrize('profile, words', [
    ('x', 'mapping'), ({'ratios': [], 'stream_mb': 1}, 'non-empty'), ({'ratios': [0.5, 2], 'stream_mb': 1}, '1.0'),
    ({'ratios': [1, 2], 'stream_mb': 0}, 'stream_mb'),
])
def test_a_bad_profile_is_refused_with_its_name(profile, words):
    with pytest.raises(fc.ForecastInputError, match='ratio_profile') as err:
        run(ratio_profile=profile)
    assert words in str(err.value)


def source_with(ratios, stream_bytes=57_500_000):
    return {'compressibility': {'ratio': 1.2, 'sample_bytes': 8388608, 'compressor': 'zlib-1',
                                'profile': {'stream_bytes': stream_bytes, 'window_bytes': 131072,
                                            'ratios': ratios}}}


def stream_ratio(ratios):
    """Host bytes over tape bytes of equal host shares."""
    return len(ratios) / sum(1.0 / r for r in ratios)


def test_the_verdicts_profile_keeps_its_tape_ratio_over_the_stream():
    windows = [1.0, 1.0, 122.0, None, 1.02]              # the sample's: 1.338 over the four it read
    profile = _verdict.ratio_profile(source_with(windows), 1.5)
    ratios = profile['ratios']
    assert profile['stream_mb'] == 57.5
    # host bytes over tape bytes of the whole stream: the ratio the verdict judges with (here above the sample's:
    # every window scaled up, the shape kept); the window the sample could not read at that ratio
    assert stream_ratio(ratios) == pytest.approx(1.5, rel=1e-3)
    assert ratios[3] == 1.5 and ratios[2] / ratios[4] == pytest.approx(122.0 / 1.02, rel=1e-3)
    # below the sample's: no window under 1:1, so the compressible one gives way
    lower = _verdict.ratio_profile(source_with(windows), 1.25)['ratios']
    assert stream_ratio(lower) == pytest.approx(1.25, rel=1e-3)
    assert min(lower) == 1.0 and 4.0 < lower[2] < 122.0


@pytest.mark.parametrize('source', [
    {}, {'compressibility': {'ratio': 1.2}}, source_with([1.0, 1.03, 1.02]), source_with([3.0]),
    source_with([1.0, 5.0], stream_bytes=0), source_with('bad'),
])
def test_no_profile_without_windows_that_differ(source):
    assert _verdict.ratio_profile(source, 1.2) is None


# lab-ma2 as the 2026-11-27 test_qualify run measured it (tests/integration/test_qualify.py, a quick qualify run
# of the lab): its sources' feed, one sample a second (its 10 MB/s throttle), and its whole sample's ratio
LAB_MA2_FEED = [9.924, 9.96, 10.131, 9.908, 9.975, 9.981, 10.138, 9.931, 9.982, 9.971, 10.042, 10.01, 9.98, 10.031,
                9.965, 9.738, 9.868, 9.923, 9.918, 10.676, 9.941, 9.332, 9.798, 10.504, 9.939, 9.973, 9.898, 10.128,
                9.939, 9.977, 9.921, 10.053, 9.95, 9.913, 10.086, 9.983, 9.9, 10.143, 9.564]
LAB_MA2_RATIO = 1.2347
# the lab's tree (lab/tapelab.py write_source_tree, full size, 230,450,176 bytes in the walk's order): the 64
# windows of the module's default 8 MiB sample (_source_tree.sample_windows), zlib level 1 each
LAB_TREE_WINDOWS = [1.0] * 14 + [122.155, 122.269, 121.251, 122.269, 122.155, 122.269, 122.269, 122.155, 122.041,
                                 123.188] + [1.0] * 34 + [3.855, 3.112, 1.576, 1.306, 1.975, 1.413]
LAB_TREE_BYTES = 230450176


def lab_ma2_drive():
    """The lab drive's own physics (its observed job's record: tests/unit/fixtures/observe/)."""
    import json
    import os
    path = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'fixtures', 'observe',
                        'observed_bacula_job__lab-ma2.json')
    with open(path, encoding='utf-8') as handle:
        profile = json.load(handle)['profile']
    return dict((k, profile[k]) for k in ('native_mb_s', 'speed_steps_mb_s', 'buffer_mb', 'backhitch_s',
                                          'compression_ratio', 'speed_floor_mb_s'))


def test_lab_ma2_shoe_shines_on_its_first_tree_as_its_real_job_did():
    # The real Bacula jobs of this tree on lab-ma2 (docs/tape-side.md, "Observed jobs"): the drive ran dry once in
    # the 24 s the tree passed, then twice in 26 s, while the SQL dump passed. One ratio for the stream says
    # speed-matched; the ratio along the stream says a stop or so each pass, as the drive counted.
    drive = lab_ma2_drive()
    source = {'compressibility': {'ratio': LAB_MA2_RATIO, 'profile': {
        'stream_bytes': LAB_TREE_BYTES, 'window_bytes': 131072, 'ratios': LAB_TREE_WINDOWS}}}
    profile = _verdict.ratio_profile(source, LAB_MA2_RATIO)
    whole = fc.forecast(drive, feed_series_mb_s=LAB_MA2_FEED, tape_ratio=LAB_MA2_RATIO, min_samples=0, trace=False)
    along = fc.forecast(drive, feed_series_mb_s=LAB_MA2_FEED, tape_ratio=LAB_MA2_RATIO, min_samples=0, trace=False,
                        ratio_profile=profile)
    assert whole['class'] == fc.SPEED_MATCHED and whole['backhitches'] == 0
    assert along['class'] == fc.SHOE_SHINING and along['backhitches_per_hour'] >= fc.SHOESHINE_PER_HOUR
    passes = sum(LAB_MA2_FEED) / len(LAB_MA2_FEED) * fc.MIN_SIMULATED_S / (LAB_TREE_BYTES / 1e6)
    assert 0.5 <= along['backhitches'] / passes <= 2.5          # the drive counted 1, then 2, a pass


# lab-ma2 on the tree's version 2 (lab/tapelab.py source_text: its text about 2:1), as the 2026-11-28 test_qualify
# run measured it: the source read's feed and the 64 windows of its compressibility sample
# (source.aggregate.series_mb_s, source.compressibility.profile), the sample's whole ratio. The real Bacula job that
# followed read the tree at 9.93 MB/s, the drive measured 1.094 over it and counted no back-hitch: SPEED-MATCHED.
LAB_MA2_FEED_V2 = [9.913, 9.96, 10.121, 9.917, 9.975, 9.981, 10.128, 9.941, 9.982, 9.981, 10.053, 10.01, 9.98, 9.893,
                   10.881, 8.851, 10.542, 10.082, 9.921, 9.906, 9.941, 9.58, 10.089, 9.945, 9.939, 9.982, 9.839,
                   10.139, 9.939, 9.987, 9.921, 10.093, 9.96, 9.904, 10.076, 9.993, 9.891, 10.153, 9.383]
LAB_MA2_RATIO_V2 = 1.1023
LAB_TREE_WINDOWS_V2 = ([1.0] * 14 + [1.984, 1.983, 1.982, 1.98, 1.984, 1.981, 1.985, 1.981, 1.983, 1.981] + [1.0] * 18
                       + [1.123, 1.145, 1.243, 1.157] + [1.0] * 15 + [1.199, 1.075, 1.315])


def test_lab_ma2_speed_matches_on_the_tree_it_has_now_as_its_real_job_did():
    drive = lab_ma2_drive()
    source = {'compressibility': {'ratio': LAB_MA2_RATIO_V2, 'profile': {
        'stream_bytes': LAB_TREE_BYTES, 'window_bytes': 131072, 'ratios': LAB_TREE_WINDOWS_V2}}}
    assert len(LAB_TREE_WINDOWS_V2) == 64
    profile = _verdict.ratio_profile(source, LAB_MA2_RATIO_V2)
    along = fc.forecast(drive, feed_series_mb_s=LAB_MA2_FEED_V2, tape_ratio=LAB_MA2_RATIO_V2, min_samples=0,
                        trace=False, ratio_profile=profile)
    # the dump at 2:1 asks 13.3 MB/s to hold the floor while it passes (the verdict's reason said so), 10 come:
    # the buffer drains for the 3 s it lasts and holds
    assert along['class'] == fc.SPEED_MATCHED and along['backhitches'] == 0, along
    assert along['effective_mb_s'] == pytest.approx(9.93, rel=0.02)        # the real job's 9.93 MB/s
    slower = fc.forecast(drive, feed_series_mb_s=[v * 0.8 for v in LAB_MA2_FEED_V2], tape_ratio=LAB_MA2_RATIO_V2,
                         min_samples=0, trace=False, ratio_profile=profile)
    assert slower['backhitches'] > 0                                        # the margin is the buffer's, not more


def test_the_verdict_replays_the_profile_unless_told_not_to():
    from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _host
    from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils.report_cases import (
        drive, source)

    src = source(80.0, 75.0)
    src['compressibility']['profile'] = {'stream_bytes': 2 * 10 ** 10, 'window_bytes': 131072,
                                         'ratios': [1.0] * 8 + [40.0] * 2}

    def verdict(options):
        # no write test: the sources alone feed the drive (the sweep's 40-50 MB/s path would be below its floor)
        doc = _host.assemble('ma1', [drive('/dev/nst0', 'IBM', 'ULT3580-TD5', 'S1')], src, [],
                             options=options).to_dict()
        return doc['verdicts'][0]

    off, on = verdict({'ratio_profile': False}), verdict(None)      # on by default
    assert 'ratio_profile' not in off['forecast']['now']['inputs']
    assert not [r for r in off['reasons'] if 'along their stream' in r]
    ratios = on['forecast']['now']['inputs']['ratio_profile']['ratios']
    assert len(ratios) == 10 and stream_ratio(ratios) == pytest.approx(on['numbers']['tape_ratio'], rel=1e-3)
    words = [r for r in on['reasons'] if 'along their stream' in r]
    # the sample's 1.24 over its windows scaled to the stream's 1.6 (the sample's whole ratio): 1.29 and 51.52
    assert len(words) == 1 and "the sample's 10 windows come to 1.29:1 to 51.52:1 on tape (1.60:1" in words[0], words
    # an LTO-5 fed 80 MB/s: above its floor's 64 MB/s at the stream's 1.6, far below what the fifth of the stream
    # at 51.5:1 asks (40 MB/s x 51.5): it speed-matches through the rest and stops in that fifth (4 GB: seven
    # passes in the forecast's 30 minutes, too few stops an hour to call it shoe-shining)
    assert off['forecast']['now']['backhitches'] == 0 and off['class'] == 'SPEED-MATCHED'
    assert on['forecast']['now']['backhitches'] >= 7 and on['class'] == 'SPEED-MATCHED'
