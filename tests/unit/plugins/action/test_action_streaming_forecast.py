# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The streaming_forecast action's main path: run() on the inputs the verdict recorded.

tests/unit/fixtures/lab_runs/20261124-quick-v2/ (README.md there) holds, for each host, the verdict's
forecasts with the inputs they were made from (``verdicts[0].forecast.now.inputs``): the drive model of
the inventory (``drives[0].settings``: the lab's scaled drive), the source read's per-second series
(``source.aggregate.series_mb_s``), the tape ratio, the drive path and the file-mark mode. The action,
given the same inputs, must forecast what the verdict did: it is the same model (_judge/_forecast.py)
reached through the action's options.
"""

from __future__ import annotations

import pytest

from ansible_collections.tapeops.qualify.plugins.action import streaming_forecast

from action_harness import LAB_RUN_V2, recorded, run_action

PINNED = ('class', 'backhitches', 'backhitches_per_hour', 'effective_mb_s', 'tape_mb_s', 'need_floor_mb_s',
          'need_full_mb_s', 'time_share', 'feed', 'replays', 'simulated_seconds')


def recorded_inputs(host, which='now'):
    """(action arguments, the verdict's forecast) for ``host`` of the v2 lab run."""
    doc = recorded(LAB_RUN_V2, host)
    settings = doc['drives'][0]['settings']
    forecast = doc['verdicts'][0]['forecast'][which]
    args = dict((k, v) for k, v in forecast['inputs'].items() if v is not None)
    args.update(drive=dict(settings['model'], generation=settings['generation'], vendor=settings['vendor']),
                feed_series_mb_s=doc['source']['aggregate']['series_mb_s'], min_samples=0)
    return args, forecast


@pytest.mark.parametrize('host, which', [('lab-ma1', 'now'), ('lab-ma2', 'now'), ('lab-ma3', 'now'),
                                         ('lab-ma3', 'after_setting_fixes')])
def test_the_verdicts_recorded_inputs_give_its_forecast(host, which, recorded_lab_run):
    args, forecast = recorded_inputs(host, which)
    # the drive as today's lab inventory gives it (its sync_mark_s, which the run predates: tests/unit/conftest.py)
    args['drive'] = recorded_lab_run.model(args['drive'])
    failed, result = run_action(streaming_forecast, args)
    assert not failed and result['changed'] is False
    assert dict((k, result[k]) for k in PINNED) == dict((k, forecast[k]) for k in PINNED)
    assert recorded_lab_run.strip(result['drive']) == forecast['drive'] and 'trace' not in result
    assert result['drive']['sync_mark_s'] == result['drive']['backhitch_s'] == 3.0


def test_lab_ma3_shoe_shines_at_232_back_hitches_an_hour():
    """The numbers of the README's table, pinned: 2.8 MB/s to tape from a 2.9 MB/s source under an 11.4 floor."""
    args, dummy = recorded_inputs('lab-ma3')
    assert args['filemark_mode'] == 'sync' and args['path_mb_s'] == 14.8
    failed, result = run_action(streaming_forecast, args)
    assert not failed
    assert (result['class'], result['backhitches'], result['backhitches_per_hour']) == ('SHOE-SHINING', 118, 232.51)
    assert (result['effective_mb_s'], result['tape_mb_s'], result['need_floor_mb_s']) == (2.845, 2.798, 11.366)
    assert result['feed'] == {'max_mb_s': 3.431, 'mean_mb_s': 2.845, 'min_mb_s': 0.0, 'p5_mb_s': 1.808, 'samples': 29}
    # the inventory's drive, its fields marked as set per drive
    assert result['drive_model']['label'] == 'LTO-8 FH' and result['drive_model']['speed_floor_mb_s'] == 11.2
    assert result['drive_model']['buffer_mb'] == 65.83


def test_trace_is_returned_only_when_asked():
    args, forecast = recorded_inputs('lab-ma2')
    failed, result = run_action(streaming_forecast, dict(args, trace=True))
    assert not failed
    doc = recorded(LAB_RUN_V2, 'lab-ma2')
    # the verdict keeps the trace of its current-settings forecast beside the forecasts
    assert result['trace'] == doc['verdicts'][0]['forecast']['trace']
    assert result['class'] == forecast['class'] == 'SPEED-MATCHED'


def test_check_mode_forecasts_the_same():
    args, forecast = recorded_inputs('lab-ma1')
    failed, result = run_action(streaming_forecast, args, check_mode=True)
    assert not failed and result['class'] == forecast['class'] == 'STREAMING'
    assert result['effective_mb_s'] == forecast['effective_mb_s']


# --------------------------------------------------------------- bad input: failed, the message saying what to pass

@pytest.mark.parametrize('args, msg', [
    ({'feed_mb_s': 100}, 'missing required arguments: drive'),
    ({'drive': {'generation': 'LTO-9'}}, 'one of the following is required: feed_mb_s, feed_series_mb_s'),
    ({'drive': {'generation': 'LTO-9'}, 'feed_mb_s': 100, 'feed_series_mb_s': [100.0]},
     'parameters are mutually exclusive: feed_mb_s|feed_series_mb_s'),
    ({'drive': {'vendor': 'IBM'}, 'feed_mb_s': 100}, 'drive.generation is required (e.g. "LTO-9", "LTO-8 HH", 7).'),
    ({'drive': {'generation': 'LTO-9', 'warp': 9}, 'feed_mb_s': 100},
     'drive has unknown keys warp; it takes generation, form_factor, vendor, interface and any drive model field '
     '(native_mb_s, speed_steps_mb_s, speed_floor_mb_s, buffer_mb, backhitch_s, sync_mark_s, load_s, unload_s, '
     'rewind_s, locate_s, compressed_max_mb_s, interface_mb_s, compression_ratio, native_capacity_gb).'),
    # the drive resolver's and the drive model's words, naming the option
    ({'drive': {'generation': 'DLT-4'}, 'feed_mb_s': 100},
     'drive: Cannot read an LTO generation from \'DLT-4\'. Use a number 1-10 or text like "LTO-9", "LTO-9 HH", '
     '"lto8", "Ultrium 7" or "LTO-10".'),
    ({'drive': {'generation': 'LTO-8 HH', 'form_factor': 'FH'}, 'feed_mb_s': 100},
     "drive: generation 'LTO-8 HH' says HH but form_factor says FH; give one."),
    ({'drive': {'generation': 'LTO-5', 'speed_floor_mb_s': 500}, 'feed_mb_s': 100},
     'drive: speed_floor_mb_s 500 is above the native rate of LTO-5 (140.0 MB/s). The floor is the slowest native '
     '(uncompressed) speed the drive can stream at; check the inventory value.'),
    ({'drive': {'generation': 'LTO-9'}, 'feed_mb_s': 100, 'tape_ratio': 0.5},
     'tape_ratio must be at least 1.0 (host bytes per tape byte), got 0.5.'),
])
def test_bad_input_fails_with_what_to_pass(args, msg):
    assert run_action(streaming_forecast, args) == (True, {'failed': True, 'msg': msg})
