# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_judge/_observed: an observed window judged, on windows recorded in the lab.

tests/unit/fixtures/observe/observed_job__<guest>.json: the lab test
tests/integration/test_observe_lab.py (the judged-job test) recorded them on
2026-11-26 - tapeops.qualify.tape_drive_observe's series of the real st
driver's counters while the lab's writer wrote to the guest's emulated drive,
the back-hitches and compression the drive counted itself (its log pages),
and the guest's drive profile. On lab-ma3 a 64 MiB file came from a source
throttled to 3 MB/s (the drive's floor is 11.2 MB/s at the lab's scale): the
drive counted one back-hitch. On lab-ma1 118 MiB came from the page cache,
faster than the drive's top step (7 MB/s): none. observed_bacula_job__lab-ma3.json:
a real Bacula 9.6.7 job on lab-ma3, recorded on 2026-11-27 by the lab test
test_observe_bacula_lab.py (its checks are test_qualify.py's observed jobs' now).
observed_bacula_job__lab-ma1.json: the same on lab-ma1 (its source unthrottled, its drive the bottleneck),
recorded on 2026-11-28 by test_qualify.py's observed jobs, with the lab drive's own account of the job.
observe_playbook_job*__lab-ma1.json: the observe playbook's windows of the lab writer's job on lab-ma1, recorded
by tests/integration/test_observe_playbook_lab.py with the lab drive's own account (each file's ``source`` says
which run).
"""

from __future__ import annotations

import copy
import json
import math
import os

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils import _records, _words
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _forecast, _observed

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'fixtures', 'observe')


# judged since these were recorded: the back-hitch rate's lower bound (observed and replayed), checked on its own
ADDED_SINCE = ('backhitches_per_hour_low', 'class_mb_s')


def as_recorded(judgement):
    """``judgement`` (a dict) without what the judge gives that the recordings predate (ADDED_SINCE)."""
    out = copy.deepcopy(judgement)
    for part in ('observed', 'forecast'):
        for key in ADDED_SINCE:
            (out.get(part) or {}).pop(key, None)
    return out


def recorded(guest, kind='observed_job'):
    with open(os.path.join(FIXTURES, '%s__%s.json' % (kind, guest))) as handle:
        return json.load(handle)


def test_a_job_below_the_floor_shoe_shines_observed_and_replayed_as_the_drive_counted():
    case = recorded('lab-ma3')
    judged = _observed.judge(case['window'], case['profile'])
    assert isinstance(judged, _records.ObservedJudgement)
    seen, predicted = judged.observed, judged.forecast
    assert judged.status == _observed.STATUS_JUDGED and judged.notes == []
    # 64 MiB in the data phase; its rate from the whole intervals between the job's first and last
    assert seen['bytes'] == 64 * 1024 * 1024
    inner = case['window']['series']['write_byte_cnt'][4:25]
    assert seen['mb_s'] == pytest.approx(sum(inner) / 21.0 / 1e6, abs=0.001)
    assert seen['mb_s'] < seen['need_floor_mb_s'] == case['profile']['speed_floor_mb_s']
    assert (seen['backhitches'], seen['class'], seen['class_basis']) == (1, _forecast.SHOE_SHINING,
                                                                         'backhitches_and_rate')
    assert (seen['tape_ratio'], seen['tape_ratio_source']) == (1.0, 'drive')
    # the forecast from the feed alone: the same class and the back-hitch the drive counted
    assert predicted['class'] == _forecast.SHOE_SHINING and predicted['backhitches'] == 1
    assert predicted['simulated_seconds'] == pytest.approx(21.0, abs=1.0)
    assert judged.agreement == {'class_match': True, 'rate_delta_pct': 0.0, 'backhitch_delta': 0}
    # and what the lab test judged then is what the code judges now
    assert as_recorded(judged.to_dict()) == case['judgement']


def test_a_job_fed_faster_than_the_drive_streams_observed_and_replayed():
    case = recorded('lab-ma1')
    judged = _observed.judge(case['window'], case['profile'])
    seen, predicted = judged.observed, judged.forecast
    assert seen['backhitches'] == 0 and seen['class'] == _forecast.STREAMING
    assert seen['mb_s'] >= 0.99 * case['profile']['native_mb_s']
    assert predicted['class'] == _forecast.STREAMING and predicted['backhitches'] == 0
    # the writer waited in writes 0.88-1.03 of each inner second: the drive set the pace, and the replay gives the
    # drive's top step (7 MB/s at the lab's scale) against the 7.08 the lab's drive ran at
    assert seen['drive_bound_s'] == 15.0 and seen['data_seconds'] == 17.0
    assert predicted['effective_mb_s'] == pytest.approx(case['profile']['native_mb_s'], rel=0.005)
    assert judged.agreement['class_match'] is True and abs(judged.agreement['rate_delta_pct']) < 2.0
    assert as_recorded(judged.to_dict()) == case['judgement']
    # the drive's buffer fill ran into the second interval (8.4 MB, the host waiting through it): as fed, the rate
    # reads 7.078 MB/s, above the drive's 7 MB/s top step; the class's rate begins after it, the drive's full speed
    series = case['window']['series']
    taken = _observed.steady_phase(_observed.data_phase(series), series, seen['need_full_mb_s'])
    assert taken == (4, 17) and _observed.steady_phase(_observed.data_phase(series), series) == (3, 17)
    assert seen['mb_s'] == 7.078 and seen['class_mb_s'] == 7.0


def _uneven(window, swing, run):
    """The recorded lab-ma1 window with its inner seconds in runs of ``run`` seconds alternately ``swing`` below
    their mean and above it (by as much as keeps the total), the host still waiting in writes all of each second:
    a drive-bound writer whose data the drive took unevenly (compressible, then not)."""
    window = copy.deepcopy(window)
    written = window['series']['write_byte_cnt']
    first, last = _observed.steady_phase(_observed.data_phase(window['series']))
    inner = range(first, last + 1)
    total = sum(written[i] for i in inner)
    low = [i for n, i in enumerate(inner) if not (n // run) % 2]
    low_bytes = int(total / len(inner) * (1 - swing))
    high_bytes = (total - low_bytes * len(low)) // (len(inner) - len(low))
    for i in inner:
        written[i] = low_bytes if i in low else high_bytes
        window['series']['write_ns'][i] = 1000000000
    return window


def test_a_drive_bound_job_with_uneven_seconds_streams_replayed_as_it_did_on_the_drive():
    """What a drive took second by second is not what the host offered when the host waited on the drive.

    Replayed at the taken rates, three-second runs 15 % under the drive's speed start the simulated buffer empty
    and slow the simulated drive; the real one, its buffer full, never felt them (it counted no back-hitch and
    its rate is its top step's). Replayed as the same bytes offered at the drive's ceiling from a full buffer,
    the job streams as the drive did.
    """
    case = recorded('lab-ma1')
    window = _uneven(case['window'], 0.15, 3)
    judged = _observed.judge(window, case['profile'])
    assert judged.observed['class'] == _forecast.STREAMING and judged.observed['backhitches'] == 0
    assert judged.observed['drive_bound_s'] == 15.0
    assert judged.forecast['class'] == _forecast.STREAMING and judged.forecast['backhitches'] == 0
    assert abs(judged.agreement['rate_delta_pct']) <= 3.0, judged.to_dict()
    # the same seconds replayed at the rates the drive took (as when write_ns was not read): speed-matched
    steady = _observed.steady_phase(_observed.data_phase(window['series']))
    taken = _observed.per_second_rates(window['series'], steady)
    naive = _forecast.forecast(case['profile'], feed_series_mb_s=taken, tape_ratio=1.0, min_samples=0,
                               trace=False, replay='once')
    assert naive['class'] == _forecast.SPEED_MATCHED, naive


def test_the_seconds_a_drive_paced_count_at_its_full_speed_whatever_the_window_s_mean_compression():
    """A drive that never stopped and kept its host waiting ran at its top step: what it took in those seconds is
    its speed times their data's compression, not the window's mean.

    The recorded lab-ma1 window (random data, 1.0:1, the drive's top step 7 MB/s) as if the drive had measured
    1.03:1 over a window whose other 3 % had been compressible data outside the inner seconds: the inner seconds,
    at 7.08 MB/s, are 2 % under 7.21, and as fed the drive the host waited on would be SPEED-MATCHED. (In CI a
    real Bacula job on lab-ma1, drive-bound 39 of its 43 s, no back-hitch, was so: 5.30 MB/s against 5.36 at
    the window's 1.094:1.)
    """
    case = recorded('lab-ma1')
    window = dict(case['window'], compression_ratio=1.03)
    judged = _observed.judge(window, case['profile'])
    seen = judged.observed
    assert seen['need_full_mb_s'] == pytest.approx(7.21) and seen['mb_s'] < 0.99 * seen['need_full_mb_s']
    assert _forecast.class_of(None, 0.0, seen['mb_s'], seen['need_full_mb_s'],
                              seen['need_floor_mb_s']) == _forecast.SPEED_MATCHED
    assert seen['class'] == _forecast.STREAMING and seen['class_mb_s'] == pytest.approx(7.21)
    [note] = judged.notes
    assert note.startswith('observed: the rate the class is set against begins once the host had first waited on '
                           'the drive, 1 s after the rate as fed begins: until then the host was filling the '
                           'drive\'s buffer; the drive set the pace for 14 of the 14 s the rate is taken over '
                           '(the host waited on it, or its full buffer fed it), taking at least its full speed at '
                           '1:1 and never stopping: those seconds count at its full speed (7.21 MB/s of host data '
                           'at 1.03:1)'), note
    assert 'as fed, 7.08 MB/s' in note and 'the class STREAMING' in note
    # as recorded, 1.0:1: the same class either way, and nothing to say
    plain = _observed.judge(case['window'], case['profile'])
    assert plain.observed['class'] == _forecast.STREAMING and plain.notes == []


def test_a_real_bacula_job_its_drive_paced_streams_as_the_drive_itself_says():
    """Bacula 9.6.7 on lab-ma1 (observed_bacula_job__lab-ma1.json): the lab drive's own account is 43.0 s moving,
    all at its 4.9 MB/s top step, no back-hitch. The host waited on it for 37 of the 43 s of data. Its seconds ran
    at 4.7-5.0 MB/s of host data (random files, 1:1, in whole 64 KiB blocks) and 5.5-18.6 MB/s where the tree's
    text went by (about 2:1): each stretch the drive's speed times its own compression. The text filled the drive's
    buffer (18.4 MB in the second interval, the host waiting through the third): after it, what the drive took is
    the random files' 4.99 MB/s, under the 5.36 the drive's full speed is at the window's 1.094:1, and the seconds
    the drive paced count at that full speed."""
    case = recorded('lab-ma1', kind='observed_bacula_job')
    drive = case['drive']
    assert drive['backhitches'] == 0 and drive['speed_time_s'] == {'4.9': pytest.approx(43.0, abs=0.1)}
    judged = _observed.judge(case['window'], case['profile'])
    seen = judged.observed
    assert (seen['backhitches'], seen['tape_ratio'], seen['tape_ratio_source']) == (0, 1.094, 'drive')
    assert seen['drive_bound_s'] == pytest.approx(37.0, abs=0.01)
    assert _observed.steady_phase(_observed.data_phase(case['window']['series']), case['window']['series'],
                                  seen['need_full_mb_s'])[0] == 10
    assert seen['mb_s'] >= 0.99 * seen['need_full_mb_s'] and seen['need_full_mb_s'] == pytest.approx(5.361)
    assert seen['class'] == _forecast.STREAMING and seen['class_mb_s'] == pytest.approx(seen['need_full_mb_s'])
    assert judged.forecast['class'] == _forecast.STREAMING and judged.agreement['class_match'] is True
    # the observe run judged the same data phase (its replay took the model the verdict resolves, not the profile)
    judgement = judged.to_dict()
    del judgement['observed']['class_mb_s']     # judged since this was recorded
    assert judgement['observed'] == case['judgement']['observed']
    assert judged.forecast['effective_mb_s'] == pytest.approx(case['judgement']['forecast']['effective_mb_s'], rel=0.02)


@pytest.mark.parametrize('counted', [1, None])
def test_seconds_of_a_drive_that_stopped_or_cannot_say_count_as_fed(counted):
    """A drive that repositions keeps its host waiting too, and one without a counter cannot say it did not."""
    case = recorded('lab-ma1')
    window = dict(case['window'], compression_ratio=1.03, backhitches=counted)
    seen = _observed.judge(window, case['profile']).observed
    assert seen['class_mb_s'] == seen['mb_s'] and seen['class'] == _forecast.SPEED_MATCHED


def test_drive_bound_seconds_slower_than_the_drive_at_1_to_1_count_as_fed():
    """A host whose writes were slow for another reason (a loaded guest's command path) waited in them without
    the drive at its top step: a run of drive-bound seconds in which the drive took less than its 1:1 speed."""
    mb = 1000000
    series = {'write_byte_cnt': [9 * mb, 10 * mb, 10 * mb, 10 * mb, 9 * mb, 4 * mb], 'seconds': [1.0] * 6,
              'write_ns': [300000000, 900000000, 950000000, 900000000, 200000000, 100000000]}
    # a 20 MB/s drive (1:1) at 1.1:1: 22 MB/s full; the bound run took 10 MB/s, half its 1:1 speed
    assert _observed.paced_rate(series, (0, 5), 22.0, 20.0) == (pytest.approx(52.0 / 6.0), 0.0)
    # a 9.5 MB/s drive: the bound run (10 MB/s each) took its 1:1 speed, and counts at 10.45 (9.5 at 1.1:1)
    assert _observed.paced_rate(series, (0, 5), 10.45, 9.5) == (pytest.approx((9 + 3 * 10.45 + 9 + 4) / 6.0), 3.0)
    # judged over a run, not a second: one block less in a second of the run (quantised) still took the speed
    series['write_byte_cnt'][2] = int(9.8 * mb)
    assert _observed.paced_rate(series, (0, 5), 10.45, 9.9) == (pytest.approx((9 + 3 * 10.45 + 9 + 4) / 6.0), 3.0)


def test_a_short_stall_after_a_drive_paced_run_that_the_buffer_covered_counts_as_paced():
    """A host that fell short for a second after a run the drive paced: its full buffer (the lab's LTO-5 at 0.035
    holds 8.96 MB) fed the drive its full speed through it while it stayed above the forecast's LOW_WATER share,
    below which the drive steps down. (On the lab beside other tests, a job with no back-hitch once read 1.7 %
    below its drive's full speed, SPEED-MATCHED against a STREAMING replay.)"""
    mb = 1000000
    series = {'write_byte_cnt': [9 * mb, 10 * mb, 10 * mb, 6 * mb, 10 * mb, 10 * mb, 9 * mb], 'seconds': [1.0] * 7,
              'write_ns': [300000000, 900000000, 950000000, 200000000, 900000000, 950000000, 200000000]}
    assert _observed.drive_bound(series, (0, 6)) == [False, True, True, False, True, True, False]
    assert _forecast.LOW_WATER == 0.25
    # a 9.5 MB/s drive at 1.1:1 (10.45 full): 4.45 MB short in the stall and 1.45 in the last second, each within
    # the 6.72 MB above an 8.96 MB buffer's low water; the paced stretch counts at full speed as a whole
    assert _observed.paced_rate(series, (0, 6), 10.45, 9.5, 8.96) == (pytest.approx((9 + 6 * 10.45) / 7.0), 6.0)
    # a 4 MB buffer steps down 3 MB short: the stall counts as fed, the last second is still covered
    assert _observed.paced_rate(series, (0, 6), 10.45, 9.5, 4.0) == (
        pytest.approx((9 + 2 * 10.45 + 6 + 3 * 10.45) / 7.0), 5.0)
    # without a buffer (the default) nothing is covered
    as_fed = (9 + 2 * 10.45 + 6 + 2 * 10.45 + 9) / 7.0
    assert _observed.paced_rate(series, (0, 6), 10.45, 9.5) == (pytest.approx(as_fed), 4.0)
    # the first interval lies before any paced run: as fed, whatever the buffer
    assert _observed.paced_rate(series, (0, 6), 10.45, 9.5, 100.0)[1] == 6.0
    # two short seconds in a row: the shortfall adds up (4.45 + 4.45 = 8.9, within 0.75 x 12 but not 0.75 x 8.96)
    series['write_byte_cnt'][3:4] = [6 * mb, 6 * mb]
    series['seconds'].append(1.0)
    series['write_ns'][3:4] = [200000000, 200000000]
    assert _observed.paced_rate(series, (0, 7), 10.45, 9.5, 12.0)[1] == 7.0
    assert _observed.paced_rate(series, (0, 7), 10.45, 9.5, 8.96)[1] == 5.0


def test_a_drive_bound_run_the_drive_did_not_pace_is_not_covered_by_its_buffer():
    """The host waited on the drive and got less than its speed at 1:1: the drive, or the path to it, was slower
    than its top step there, whatever its buffer held, so the stretch it lies in counts as fed."""
    mb = 1000000
    series = {'write_byte_cnt': [9 * mb, 10 * mb, 10 * mb, 9 * mb, 5 * mb, 9 * mb, 10 * mb, 10 * mb, 9 * mb],
              'seconds': [1.0] * 9,
              'write_ns': [300000000, 950000000, 950000000, 300000000, 950000000, 300000000, 950000000, 950000000,
                           300000000]}
    # a 10 MB/s drive at 1:1: 1, 5 and 1 MB short in the stretch, 7 MB in all, within 0.75 x 10 MB
    assert _observed.paced_rate(series, (0, 8), 10.0, 10.0, 10.0) == (pytest.approx((9 + 20 + 23 + 20 + 10) / 9.0),
                                                                      5.0)
    # the same seconds, the slow one not drive-bound: covered
    series['write_ns'][4] = 300000000
    assert _observed.paced_rate(series, (0, 8), 10.0, 10.0, 10.0) == (pytest.approx((9 + 8 * 10) / 9.0), 8.0)


def test_a_paced_stretch_counts_its_bytes_once_however_the_samples_split_them():
    """A 4.9 MB/s drive at 1:1, its host waiting on it, sampled by a loaded sampler: a second's blocks land in the
    next interval (3 MB, then 6.8). Over the stretch its buffer was full at both ends, so the host's 19.6 MB in 4 s
    are what the drive took: its full speed, not more (each run counted on its own read 5.375 MB/s)."""
    mb = 1000000
    series = {'write_byte_cnt': [4.9 * mb, 4.9 * mb, 3 * mb, 6.8 * mb], 'seconds': [1.0] * 4,
              'write_ns': [950000000, 950000000, 300000000, 950000000]}
    assert _observed.paced_rate(series, (0, 3), 4.9, 4.9, 8.96) == (pytest.approx(4.9), 4.0)
    # a stretch whose data compressed less than the window's mean still counts at the drive's full speed
    assert _observed.paced_rate(series, (0, 3), 5.4, 4.9, 8.96) == (pytest.approx(5.4), 4.0)


@pytest.mark.parametrize('name, pace', [('observe_playbook_job_end_at_floor', 0.9688),
                                        ('observe_playbook_job_end_at_floor_2', 0.9664)])
def test_a_job_whose_drive_ended_at_its_floor_is_speed_matched_as_the_drive_says(name, pace):
    """Two lab windows (CI at b600eb6, a rehearsal at fbe8348) whose drive spent 1.1-1.2 s of its 26 at its floor and
    the rest at its top step, no back-hitch: by its own clock it ran at 96.6-96.9 % of its top step, SPEED-MATCHED.
    Both ended with the host waiting on the drive while it took 1.5-1.6 MB/s (the floor's 1.4, not the top's 4.9):
    that last interval, not partly idle, is in the rate. Both were once read as STREAMING: one's runs counted one by
    one at 5.33 MB/s of a 4.9 MB/s drive, the other's rate left that last interval out."""
    case = recorded('lab-ma1', kind=name)
    drive = case['drive_account']
    assert drive['backhitches'] == 0 and sorted(drive['speed_time_s']) == ['1.4', '4.9']
    top = case['profile']['native_mb_s']
    drive_mb_s = sum(float(step) * spent for step, spent in drive['speed_time_s'].items()) / sum(
        drive['speed_time_s'].values())
    assert drive_mb_s / top == pytest.approx(pace, abs=1e-4)
    assert case['judgement_then']['observed']['class'] == _forecast.STREAMING
    series = case['window']['series']
    first, last = _observed.data_phase(series)
    assert _observed.drive_bound(series, (last, last)) == [True]
    assert series['write_byte_cnt'][last] / 1e6 / series['seconds'][last] < 1.7
    assert _observed.steady_phase((first, last), series) == (first + 1, last)
    judged = _observed.judge(case['window'], case['profile'])
    seen = judged.observed
    assert seen['backhitches'] == 0 and seen['class'] == _forecast.SPEED_MATCHED, seen
    # the rate the class is set against, and the rate as fed, are the drive's own mean within 2 %
    assert seen['class_mb_s'] == pytest.approx(drive_mb_s, rel=0.02)
    assert seen['mb_s'] == pytest.approx(drive_mb_s, rel=0.02)


def test_the_rate_begins_after_a_buffer_fill_that_ran_past_the_first_interval():
    """A host that outran the drive from the start fills its buffer until it first waits on it: the rate begins
    after the first interval it waited through, where the buffer was full, when what the host got ahead of the
    drive until then fits in the buffer."""
    mb = 1000000
    # a 5 MB/s drive: 3 MB in the first interval, 10 in the second (faster than the drive), waited through the third
    series = {'write_byte_cnt': [3 * mb, 10 * mb, 6 * mb, 5 * mb, 5 * mb, 5 * mb, 2 * mb], 'seconds': [1.0] * 7,
              'write_ns': [50000000, 400000000, 950000000, 950000000, 950000000, 950000000, 300000000]}
    assert _observed.steady_phase((0, 6), series, 5.0) == (3, 5)
    # the host got 5 MB ahead of the drive's full speed before it waited: a buffer that holds 6 MB of host data can
    # have taken it all, one that holds 4 cannot (the host was not only filling it: kept from the second interval)
    assert _observed.steady_phase((0, 6), series, 5.0, 6.0) == (3, 5)
    assert _observed.steady_phase((0, 6), series, 5.0, 4.0) == (1, 5)
    # the replay's phase (no full speed given) takes the fill as fed: its own buffer fills with it
    assert _observed.steady_phase((0, 6), series) == (1, 5)
    # a second interval slower than the drive: the host did not outrun it, nothing more is fill
    slow = copy.deepcopy(series)
    slow['write_byte_cnt'][1] = 4 * mb
    assert _observed.steady_phase((0, 6), slow, 5.0) == (1, 5)
    # a first interval waited through ended the fill itself
    waited = copy.deepcopy(series)
    waited['write_ns'][0] = 950000000
    assert _observed.steady_phase((0, 6), waited, 5.0) == (1, 5)
    # a host that never waits on the drive shows no fill's end: kept from the second interval
    never = dict(series, write_ns=[300000000] * 7)
    assert _observed.steady_phase((0, 6), never, 5.0) == (1, 5)
    # at least one interval is kept: here the last, waited through
    assert _observed.steady_phase((0, 3), series, 5.0) == (3, 3)


def test_a_job_whose_fill_ran_into_its_second_interval_reads_the_drive_s_top_step_not_more():
    """A lab window (a rehearsal at d7b1fe3) whose drive ran at its 4.9 MB/s top step all along by its own clock:
    the job began late in the first interval and the buffer's fill ran into the second (10.2 MB in 1.16 s). Taken
    from the second interval, the rate as fed reads 5.13 MB/s, above the drive's top step at 1:1; what the drive took,
    from the fill's end, 4.88."""
    case = recorded('lab-ma1', kind='observe_playbook_job_fill')
    assert case['drive_account']['speed_time_s'] == {'4.9': 25.252} and case['drive_account']['backhitches'] == 0
    assert case['judgement_then']['observed']['mb_s'] == 5.129
    judged = _observed.judge(case['window'], case['profile'])
    seen = judged.observed
    assert seen['mb_s'] == 5.129 and seen['class_mb_s'] == pytest.approx(4.883) and seen['class'] == _forecast.STREAMING
    assert seen['class_mb_s'] <= case['profile']['native_mb_s'] and seen['class_mb_s'] >= 0.99 * seen['need_full_mb_s']
    assert judged.forecast['class'] == _forecast.STREAMING and judged.agreement['class_match'] is True


def test_a_fill_that_made_a_slowed_drive_read_as_streaming_no_longer_does_and_the_note_says_why():
    """lab-ma1's drive (7 MB/s top step, 1:1), no back-hitch: the host filled its buffer into the second interval
    (14 MB) and then waited on a drive that took 6.7 MB/s, below its top step. As fed the rate reads 7.41 MB/s,
    STREAMING; what the drive took after the fill is 6.7, SPEED-MATCHED."""
    case = recorded('lab-ma1')
    window = copy.deepcopy(case['window'])
    mb = 1000000
    window['series'] = {'write_byte_cnt': [4 * mb, 14 * mb, int(7.2 * mb)] + [int(6.7 * mb)] * 9 + [3 * mb],
                        'seconds': [1.0] * 13,
                        'write_ns': [100000000, 500000000] + [950000000] * 10 + [300000000]}
    window.update(backhitches=0, compression_ratio=1.0)
    judged = _observed.judge(window, case['profile'])
    seen = judged.observed
    assert seen['mb_s'] == round(81.5 / 11, 3) and seen['class_mb_s'] == 6.7
    assert seen['class'] == _forecast.SPEED_MATCHED
    [note] = [n for n in judged.notes if n.startswith('observed: ')]
    assert note == ('observed: the rate the class is set against begins once the host had first waited on the '
                    'drive, 2 s after the rate as fed begins: until then the host was filling the drive\'s buffer. '
                    'Counted so, the rate is 6.70 MB/s and the class SPEED-MATCHED; as fed, 7.41 MB/s at the '
                    'window\'s mean compression')


def test_a_minute_ahead_of_the_drive_is_not_a_buffer_fill():
    """lab-ma1's LTO-5 (4.9 MB/s, an 8.96 MB buffer: at most 17.9 MB of host data at the 2:1 its path compresses):
    60 s of text at 9.8 MB/s, 0.49 MB/s above its full speed at the window's 1.9:1, then one interval the host
    waited through and a 4 s tail at 3 MB/s. The host got 29 MB ahead: more than the buffer holds, so the drive
    took it as it came, and the class's rate is the rate as fed, not the tail's."""
    case = recorded('lab-ma1', kind='observe_playbook_job_fill')
    window = copy.deepcopy(case['window'])
    mb = 1000000
    written = [2.0] + [9.8] * 61 + [3.0] * 4 + [1.0]
    waited = [0.1] + [0.5] * 60 + [0.95] + [0.3] * 5
    window['series'] = {'write_byte_cnt': [int(x * mb) for x in written], 'seconds': [1.0] * len(written),
                        'write_ns': [int(x * 1e9) for x in waited]}
    window.update(backhitches=0, compression_ratio=1.9)
    seen = _observed.judge(window, case['profile']).observed
    assert seen['need_full_mb_s'] == pytest.approx(9.31)
    assert seen['class_mb_s'] == seen['mb_s'] == pytest.approx(9.382, abs=0.001)
    assert seen['class'] == _forecast.STREAMING
    # the same minute as a fill, unbounded: the class's rate would be the tail's
    series = window['series']
    assert _observed.steady_phase(_observed.data_phase(series), series, 9.31) == (62, 65)
    assert _observed.steady_phase(_observed.data_phase(series), series, 9.31, 8.96 * 2.0) == (1, 65)


def test_drive_bound_runs_keep_their_bytes_and_the_rest_keeps_its_seconds():
    mb = 1000000
    series = {'write_byte_cnt': [3 * mb, 7 * mb, 7 * mb, 7 * mb, 2 * mb], 'seconds': [1.0] * 5,
              'write_ns': [100000000, 950000000, 1000000000, 800000000, 200000000]}
    assert _observed.drive_bound(series, (0, 4)) == [False, True, True, True, False]
    # 21 MB the drive held back, offered at a 14 MB/s ceiling: two seconds of 10.5
    assert _observed.per_second_rates(series, (0, 4), ceiling_mb_s=14.0) == [3.0, 10.5, 10.5, 2.0]
    assert _observed.per_second_rates(series, (0, 4)) == [3.0, 7.0, 7.0, 7.0, 2.0]
    # an older observe run without write_ns, or a broken column: every interval as it was taken
    for waits in (None, [1] * 4, 'x'):
        older = dict(series, write_ns=waits)
        assert _observed.drive_bound(older, (0, 4)) == [False] * 5
        assert _observed.per_second_rates(older, (0, 4), ceiling_mb_s=14.0) == [3.0, 7.0, 7.0, 7.0, 2.0]
    assert _observed.drive_bound(dict(series, write_ns=[None, True, 'x', 1e9, 1e9]), (0, 4)) == [
        False, False, False, True, True]


def test_without_the_drive_s_counter_the_class_is_the_rate_s_and_says_so():
    case = recorded('lab-ma3')
    window = dict(case['window'], backhitches=None)
    judged = _observed.judge(window, case['profile'])
    assert judged.observed['class_basis'] == 'rate' and judged.observed['backhitches_per_hour'] is None
    # below the floor the rate alone shows it
    assert judged.observed['class'] == _forecast.SHOE_SHINING
    assert judged.agreement['backhitch_delta'] is None and judged.notes == [_words.OBSERVED_NO_COUNTER]


def test_the_drive_s_own_ratio_wins_then_the_given_estimate_then_none():
    case = recorded('lab-ma1')
    assert _observed.judge(case['window'], case['profile'], tape_ratio=1.5).observed['tape_ratio_source'] == 'drive'
    unknown = dict(case['window'], compression_ratio=None)
    given = _observed.judge(unknown, case['profile'], tape_ratio=1.5).observed
    assert (given['tape_ratio'], given['tape_ratio_source']) == (1.5, 'given')
    # at 1.5:1 the drive's full speed asks 1.5 x 7 MB/s of the host
    assert given['need_full_mb_s'] == pytest.approx(10.5)
    # the host waited on the drive, which never stopped: it ran at its full speed whatever its data's compression
    # (here the estimate's, 1.5:1, is not what the drive took: 7 MB/s of host bytes at its 7 MB/s top step)
    assert given['class'] == _forecast.STREAMING and given['class_mb_s'] == pytest.approx(10.5)
    # without st's write times (an older observe run) the window says only what it was fed: 7 MB/s no longer
    # streams a drive that asks 10.5
    older = copy.deepcopy(unknown)
    older['series'].pop('write_ns')
    fed = _observed.judge(older, case['profile'], tape_ratio=1.5).observed
    assert fed['class'] == _forecast.SPEED_MATCHED and fed['class_mb_s'] == fed['mb_s'] < 7.1
    none = _observed.judge(unknown, case['profile']).observed
    assert (none['tape_ratio'], none['tape_ratio_source']) == (1.0, 'incompressible')


def test_an_idle_window_is_idle_not_judged_and_a_planned_one_not_observed():
    case = recorded('lab-ma1')
    idle = copy.deepcopy(case['window'])
    idle['series']['write_byte_cnt'] = [0] * len(idle['series']['write_byte_cnt'])
    judged = _observed.judge(idle, case['profile'])
    assert judged.status == _observed.STATUS_IDLE and judged.observed is None and judged.forecast is None
    planned = _observed.judge({'device': '/dev/nst0', 'status': 'planned'}, case['profile'])
    assert planned.status == _observed.STATUS_NOT_OBSERVED and planned.notes


def test_a_job_too_short_to_judge_is_inconclusive_both_ways():
    case = recorded('lab-ma3')
    short = copy.deepcopy(case['window'])
    series = short['series']
    keep = 8  # three idle intervals, then the job's first five
    for key in series:
        series[key] = series[key][:keep]
    judged = _observed.judge(short, case['profile'])
    assert judged.observed['class'] == _forecast.INCONCLUSIVE
    assert 'watch a longer job' in judged.observed['inconclusive_reason']
    assert judged.forecast['class'] == _forecast.INCONCLUSIVE


def test_steady_phase_drops_the_partly_idle_edges_of_three_intervals_or_more():
    assert _observed.steady_phase((3, 25)) == (4, 24)
    assert _observed.steady_phase((3, 5)) == (4, 4)
    assert _observed.steady_phase((3, 4)) == (3, 4)
    # a last interval the host spent waiting on the drive was not partly idle: kept; a first one never is
    waited = {'write_byte_cnt': [5, 5, 5, 5], 'seconds': [1.0] * 4, 'write_ns': [950000000] * 4}
    assert _observed.steady_phase((0, 3), waited) == (1, 3)
    waited['write_ns'][3] = 500000000
    assert _observed.steady_phase((0, 3), waited) == (1, 2)
    assert _observed.steady_phase((0, 1), waited) == (0, 1)
    series = {'write_byte_cnt': [0, 2000000, 3000000, 0], 'seconds': [1.0, 2.0, 1.0, 1.0]}
    assert _observed.data_phase(series) == (1, 2)
    # a stretched interval (a loaded host) is that many seconds at its average rate
    assert _observed.per_second_rates(series, (1, 2)) == [1.0, 1.0, 3.0]


def test_an_observed_window_replays_once_and_whole_past_the_two_hour_cap():
    drive = recorded('lab-ma3')['profile']
    night = [2.0] * 9000
    once = _forecast.forecast(drive, feed_series_mb_s=night, trace=False, replay='once')
    cycles = _forecast.forecast(drive, feed_series_mb_s=night, trace=False)
    assert once['replays'] == 1 and once['simulated_seconds'] >= 9000
    assert cycles['simulated_seconds'] <= _forecast.MAX_SIMULATED_S * 2
    short = _forecast.forecast(drive, feed_series_mb_s=[2.0] * 60, trace=False, replay='once')
    assert short['replays'] == 1 and short['simulated_seconds'] < _forecast.MIN_SIMULATED_S
    with pytest.raises(_forecast.ForecastInputError, match="replay must be 'cycles' or 'once'"):
        _forecast.forecast(drive, feed_mb_s=1.0, replay='twice')


def test_a_real_bacula_job_is_judged_as_the_drive_counted_it():
    """Bacula 9.6.7 on lab-ma3 (observed_bacula_job__lab-ma3.json, recorded on the lab, 2026-11-27).

    The drive counted 4 back-hitches in 79 s of data (BACULA.md measured 4-5 in 79 s on this guest) and
    1.213:1 over Bacula's stream (BACULA.md: 1.205-1.215); the forecast replayed from the observed feed
    predicts the same 4 and the same class, and the data phase's rate is the storage daemon's own.
    """
    case = recorded('lab-ma3', kind='observed_bacula_job')
    judged = _observed.judge(case['window'], case['profile'])
    seen, predicted = judged.observed, judged.forecast
    assert case['job']['status'] == 'T' and seen['bytes'] == case['window']['bytes_written']
    assert (seen['tape_ratio_source'], seen['tape_ratio']) == ('drive', pytest.approx(1.213, abs=0.001))
    assert 1.205 <= seen['tape_ratio'] <= 1.215
    assert (seen['backhitches'], seen['class']) == (4, _forecast.SHOE_SHINING)
    assert (predicted['backhitches'], predicted['class']) == (4, _forecast.SHOE_SHINING)
    assert seen['mb_s'] == pytest.approx(case['job']['data_mb_s'], rel=0.01)
    assert as_recorded(judged.to_dict()) == case['judgement']


@pytest.mark.parametrize('series', [
    None, 'text', {'write_byte_cnt': [1, 2]}, {'write_byte_cnt': [1, 2], 'seconds': [1.0]},
    {'write_byte_cnt': [1, 'x'], 'seconds': [1.0, 1.0]}, {'write_byte_cnt': [1, -5], 'seconds': [1.0, 1.0]},
])
def test_a_broken_series_is_not_judged_and_says_what_to_do(series):
    case = recorded('lab-ma3')
    judged = _observed.judge(dict(case['window'], series=series), case['profile'])
    assert judged.status == _observed.STATUS_NOT_OBSERVED and judged.notes == [_words.OBSERVED_SERIES_BROKEN]


# ---------------------------------------------------------------- too few back-hitches to say a rate

@pytest.mark.parametrize('count, chi_square', [(2, 1.064), (3, 2.204), (10, 12.443)])
def test_the_back_hitch_rate_s_lower_bound_is_the_poisson_one(count, chi_square):
    """The one-sided 90 % Poisson lower bound: half the chi-square quantile at 0.10 with 2n degrees of freedom
    (Garwood 1936; the chi-square table's 1.064, 2.204 and 12.443 for 4, 6 and 20 degrees); for one event,
    exactly -ln(0.9). Over half an hour, twice that an hour."""
    assert _observed.backhitches_per_hour_low(count, 0.5) == pytest.approx(chi_square, abs=0.002)
    assert _observed.backhitches_per_hour_low(1, 1.0) == pytest.approx(-math.log(0.9), rel=1e-9)
    assert _observed.backhitches_per_hour_low(0, 1.0) == 0.0
    assert _observed.backhitches_per_hour_low(None, 1.0) is None and _observed.backhitches_per_hour_low(3, 0) is None


def test_the_bound_of_many_back_hitches_is_continuous_where_the_approximation_takes_over():
    exact = _observed.backhitches_per_hour_low(_observed._EXACT_BELOW, 1.0)
    approximated = _observed.backhitches_per_hour_low(_observed._EXACT_BELOW + 1, 1.0)
    assert exact < approximated < exact + 1.0
    # an 8-hour night at 62.5 an hour: 500 back-hitches could come from 59 an hour
    assert _observed.backhitches_per_hour_low(500, 8.0) == pytest.approx(58.95, abs=0.01)


def test_one_back_hitch_in_a_25_s_bacula_job_is_too_few_to_call_its_drive_shoe_shining():
    """Bacula 9.6.7 on lab-ma2 (observed_bacula_job__lab-ma2.json): the qualify verdict is SPEED-MATCHED.

    The host fed the drive a steady 10 MB/s (the series), above the floor at the drive's measured 1.21:1. The
    drive still ran dry once: the tree's 32 MB SQL dump (one line repeated) compresses far better than the rest,
    so while it passed the drive received a fraction of its floor on tape (the replay, with one ratio for the
    window, cannot see that). One back-hitch in 25 s is 144 an hour as it stands, but as few as 15 at 90 %: the
    observed class is the rate's, SPEED-MATCHED, as replayed, and the note says why.
    """
    case = recorded('lab-ma2', kind='observed_bacula_job')
    judged = _observed.judge(case['window'], case['profile'])
    seen, predicted = judged.observed, judged.forecast
    assert seen['bytes'] == case['window']['bytes_written'] == 230712320
    assert (seen['tape_ratio_source'], seen['tape_ratio']) == ('drive', 1.21)
    assert seen['need_floor_mb_s'] < seen['mb_s'] < seen['need_full_mb_s']
    assert (seen['backhitches'], seen['backhitches_per_hour']) == (1, pytest.approx(144.0, abs=0.1))
    assert seen['backhitches_per_hour_low'] == pytest.approx(-math.log(0.9) * 3600.0 / seen['data_seconds'], abs=0.01)
    assert seen['class'] == predicted['class'] == _forecast.SPEED_MATCHED
    assert predicted['backhitches'] == 0 and judged.agreement == {
        'class_match': True, 'rate_delta_pct': 0.0, 'backhitch_delta': -1}
    [note] = judged.notes
    assert note.startswith('observed: 1 back-hitch in 25 s of data is 144 an hour as it stands, but could come '
                           'from as few as 15 an hour (90 % confidence)') and 'SPEED-MATCHED by the rate' in note
    # counted as it stands, the back-hitch alone would have made the job SHOE-SHINING
    assert _forecast.class_of(None, seen['backhitches_per_hour'], seen['mb_s'], seen['need_full_mb_s'],
                              seen['need_floor_mb_s']) == _forecast.SHOE_SHINING
    # a drive that stopped: its drive-bound seconds are not taken for its full speed
    assert seen['class_mb_s'] == seen['mb_s']
    judgement = judged.to_dict()
    del judgement['observed']['class_mb_s']     # judged since this was recorded
    assert judgement == case['judgement']
    assert '1 back-hitch counted by the drive (144 an hour, at least 15 at 90 % confidence)' in _words.observed_summary(
        dict(judged.to_dict(), drive='/dev/nst0'))


def test_a_replay_whose_drive_never_left_its_top_step_streams_as_the_drive_did():
    """A lumpy feed from a writer stalling on a CPU-starved guest (observe_playbook_job__lab-ma1.json): the drive
    ran at its top step all along by its own clock and counted no back-hitch. The replay's drive also ran at its top
    step all the time and never stopped, but its host mean (4.67 MB/s, the buffer drained from full to 43 % over a
    24 s replay) was once read as SPEED-MATCHED; the replay now streams as its own drive and the real one did, and
    says why its mean is below the drive's full speed."""
    case = recorded('lab-ma1', kind='observe_playbook_job')
    assert case['drive_account']['speed_time_s'] == {'4.9': 25.252} and case['drive_account']['backhitches'] == 0
    assert case['judgement_then']['forecast']['class'] == _forecast.SPEED_MATCHED
    judged = _observed.judge(case['window'], case['profile'])
    assert judged.observed['class'] == _forecast.STREAMING and judged.observed['backhitches'] == 0
    assert judged.forecast['class'] == _forecast.STREAMING and judged.forecast['backhitches'] == 0
    # the replay now also holds the data phase's last interval, in which the host waited on the drive (steady_phase)
    assert case['judgement_then']['forecast']['effective_mb_s'] == 4.671
    assert judged.forecast['effective_mb_s'] == 4.663
    assert judged.agreement['class_match'] is True
    [said] = [n for n in judged.notes if n.startswith('replayed: ')]
    assert 'never stopped, so the class is STREAMING' in said and '4.66 MB/s' in said


def test_a_replay_whose_drive_stepped_down_keeps_the_class_of_its_mean():
    """The same window with its last twelve seconds of data fed at 2.5 MB/s, the host never waiting on the drive:
    the replay's drive leaves its top step, and its class stays its mean's, SPEED-MATCHED, with no such note."""
    case = recorded('lab-ma1', kind='observe_playbook_job')
    window = copy.deepcopy(case['window'])
    series = window['series']
    first, last = _observed.data_phase(series)
    for i in range(last - 12, last):
        series['write_byte_cnt'][i], series['write_ns'][i], series['seconds'][i] = int(2.5 * 1048576), 0, 1.0
    judged = _observed.judge(window, case['profile'])
    assert judged.forecast['class'] == _forecast.SPEED_MATCHED, judged.to_dict()
    assert not [n for n in judged.notes if 'never stopped, so the class' in n]
