# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_judge/_forecast: the application's job boundaries (job_gb, job_gap_s).

Real Bacula jobs in the lab (../shared/lab/BACULA.md, "First results": 230.6 MB
tree, Bacula 9.6.7, lab-ma1's drive-bound guest) showed what a continuous
replay misses: each session ends with a synchronous EOF mark, and the next
job on the mounted volume pays a reposition - 0 back-hitches during the data,
1 at the job boundary.
"""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _drive_model, _forecast

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'fixtures', 'observe')


def lab_ma1_profile():
    # the guest's drive profile as the lab wrote it (LTO-5 at scale 0.05: 7 MB/s top, 12.8 MB buffer)
    with open(os.path.join(FIXTURES, 'observed_job__lab-ma1.json')) as handle:
        return json.load(handle)['profile']


def test_without_jobs_the_forecast_and_its_document_are_as_before():
    drive = _drive_model.lookup(9, 'FH', 'IBM')
    plain = _forecast.forecast(drive, feed_mb_s=500.0, trace=False)
    assert 'job_boundaries' not in plain and 'job_gb' not in plain['inputs']


def test_two_bacula_jobs_on_the_drive_bound_guest_cost_one_reposition_at_their_boundary():
    """BACULA.md, lab-ma1: Full jobs of the 230.6 MB tree one after the other on one mounted volume.

    The drive measured 1.205-1.215:1 over Bacula's stream; the guest fed it
    faster than its full speed (7 MB/s x 1.21 = 8.47 MB/s of host data). The
    forecast, replaying two jobs and the start of a third once, with Bacula's
    synchronous end-of-job mark and about 2 s between jobs (BACULA.md: a job
    carries about 2 s of fixed cost), counts no back-hitch in the data and one
    at each boundary, as the drive did.
    """
    tree_mb = 230.6
    feed = 9.0
    seconds = int(2.5 * tree_mb / feed)
    result = _forecast.forecast(lab_ma1_profile(), feed_series_mb_s=[feed] * seconds, tape_ratio=1.21,
                                replay='once', job_gb=tree_mb / 1000.0, job_gap_s=2.0, min_samples=0,
                                trace=False)
    assert result['job_boundaries'] == 2
    assert result['backhitches'] - result['backhitches_filemark'] == 0
    assert result['backhitches_filemark'] == 2
    assert result['inputs']['job_gb'] == pytest.approx(0.2306) and result['inputs']['job_gap_s'] == 2.0


def test_job_boundaries_in_immediate_mode_are_synchronous_and_their_gap_is_clock_time():
    drive = _drive_model.lookup(9, 'FH', 'IBM')
    full, _floor = _forecast.need(_forecast.drive_parameters(drive), 1.0)
    feed = 2.0 * full        # the drive, not the sources, sets the pace
    common = dict(feed_mb_s=feed, filemark_mode='immediate', trace=False, job_gb=100.0)
    none = _forecast.forecast(drive, feed_mb_s=feed, filemark_mode='immediate', trace=False)
    no_gap = _forecast.forecast(drive, job_gap_s=0.0, **common)
    gap = _forecast.forecast(drive, job_gap_s=60.0, **common)
    assert none['class'] == _forecast.STREAMING and none['backhitches'] == 0
    # the same source was replayed: the same number of jobs ended
    boundaries = no_gap['job_boundaries']
    assert boundaries == gap['job_boundaries'] and boundaries >= 5
    # each job's closing mark is synchronous although the segments' marks are immediate: one reposition each
    assert no_gap['backhitches'] == no_gap['backhitches_filemark'] == boundaries
    assert no_gap['effective_mb_s'] < none['effective_mb_s']
    # the gap is host time with nothing sent: each one lengthens the window by the gap, less the mark's
    # reposition (7 s, the model's sync_mark_s) that runs while the host waits anyway
    extra = (gap['simulated_seconds'] - no_gap['simulated_seconds']) / boundaries
    mark_s = _forecast.drive_parameters(drive)['sync_mark_s']
    assert 60.0 - mark_s - 1.0 <= extra <= 60.0 + 1.0, (extra, mark_s)


def test_bad_job_inputs_say_what_to_give():
    drive = _drive_model.lookup(8, 'FH', 'HPE')
    with pytest.raises(_forecast.ForecastInputError, match='job_gb'):
        _forecast.forecast(drive, feed_mb_s=100.0, job_gb=0)
    with pytest.raises(_forecast.ForecastInputError, match='job_gap_s'):
        _forecast.forecast(drive, feed_mb_s=100.0, job_gb=10, job_gap_s=-1)
