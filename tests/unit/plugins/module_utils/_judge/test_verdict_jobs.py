# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The verdict with the application's jobs (tapeops_backup.job_size_mb, job_gap_s).

Real Bacula jobs in the lab (../shared/lab/BACULA.md, "First results": Bacula 9.6.7, the 230.6 MB tree): each
session ends with a synchronous EOF mark, and the next job on the mounted volume pays a reposition; on lab-ma1's
drive-bound guest 0 back-hitches during the data, 1 at the job boundary. The forecast models a job's closing mark
(tests/unit/plugins/module_utils/_judge/test_forecast_jobs.py); here the verdict passes the inventory's jobs to
every forecast it makes, says so, and keeps documents without jobs as they were.
"""

from __future__ import annotations

import json
import os

from ansible_collections.tapeops.qualify.plugins.module_utils import _inputs, _words
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _backup_settings
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _drive_model as dm
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _verdict as v

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'fixtures', 'observe')
LTO9 = dm.lookup(9, 'FH', 'IBM')        # full speed 400, floor 177 (IBM TS4300 speed matching)


def source(rate, seconds=60):
    series = [float(rate)] * seconds
    return {'streams': [{'path': '/src', 'mean_mb_s': rate}],
            'aggregate': {'mean_mb_s': rate, 'series_mb_s': series, 'streams': 1, 'samples': seconds,
                          'duration_s': float(seconds)}}


def run(spec, src, config, **options):
    options.setdefault('tape_ratio', 1.0)
    return _words.verdict(v.evaluate(spec, src, None, None, config, options=options)).to_dict()


def lab_ma1_profile():
    # the guest's drive profile as the lab wrote it (LTO-5 at scale 0.05: 7 MB/s top, 12.8 MB buffer)
    with open(os.path.join(FIXTURES, 'observed_job__lab-ma1.json')) as handle:
        return json.load(handle)['profile']


def test_without_jobs_the_verdict_is_as_before():
    plain = run(LTO9, source(450.0), {'software': 'bacula', 'immediate_filemarks': True})
    assert 'job_size_mb' not in plain['numbers'] and 'job_marks_now' not in plain['numbers']
    assert not [r for r in plain['reasons'] if r.startswith('Jobs of')]
    assert 'job_boundaries' not in plain['forecast']['now']


def test_small_jobs_on_a_streaming_lto9_cost_a_reposition_each_even_with_immediate_marks():
    """450 MB/s streams an IBM LTO-9 (400 native). Jobs of 2000 MB with immediate segment marks still end with a
    synchronous mark each: every 5 s of data a flush and a reposition, which the verdict now counts."""
    config = {'software': 'bacula', 'immediate_filemarks': True, 'segment_size_mb': 1000}
    plain = run(LTO9, source(450.0), config)
    jobs = run(LTO9, source(450.0), dict(config, job_size_mb=2000, job_gap_s=0))
    assert plain['class'] == v.STREAMING and plain['forecast']['now']['backhitches'] == 0
    now = jobs['forecast']['now']
    assert now['job_boundaries'] >= 10 and now['backhitches'] >= now['job_boundaries'] - 1
    assert jobs['numbers']['job_size_mb'] == 2000 and jobs['numbers']['job_marks_now'] == now['job_boundaries']
    assert jobs['class'] != v.STREAMING and now['effective_mb_s'] < 0.8 * plain['forecast']['now']['effective_mb_s']
    # the fixes cannot make a job's closing mark immediate: with them the jobs are still there
    assert jobs['forecast']['after_setting_fixes']['job_boundaries'] >= 10
    [said] = [r for r in jobs['reasons'] if r.startswith('Jobs of')]
    assert said.startswith('Jobs of 2000 MB (job_size_mb in the inventory): the application ends each with a '
                           'synchronous file mark whatever its file-mark setting (%d in the forecast' % (
                               now['job_boundaries']))
    assert "each a reposition at the drive model's cost" in said


def test_the_lab_ma1_bacula_jobs_cost_one_back_hitch_at_their_boundary_as_the_drive_counted():
    """BACULA.md, lab-ma1 (drive-bound): the data phase ran at 7.95-8.87 MB/s at 1.205-1.215:1 (the tape side at
    the drive's 7.0); 0 back-hitches during the data, 1 at a job boundary. Jobs of the 230.6 MB tree, fed at
    8.5 MB/s."""
    profile = lab_ma1_profile()
    one_job = run(profile, source(8.5, seconds=27), {'software': 'bacula', 'immediate_filemarks': True},
                  tape_ratio=1.21)
    config = {'software': 'bacula', 'immediate_filemarks': True, 'job_size_mb': 231, 'job_gap_s': 2}
    jobs = run(profile, source(8.5, seconds=27), config, tape_ratio=1.21)
    assert one_job['forecast']['now']['backhitches'] == 0
    now = jobs['forecast']['now']
    # one back-hitch at each boundary, none between them
    assert now['job_boundaries'] >= 1 and now['backhitches'] == now['job_boundaries']


def test_the_inventory_checks_job_settings_and_the_settings_record_where_they_came_from():
    assert _inputs.backup_problems({'software': 'bacula', 'job_size_mb': 50000, 'job_gap_s': 30}) == []
    [problem] = _inputs.backup_problems({'job_size_mb': '50G'})
    assert problem.startswith('tapeops_backup.job_size_mb is') and 'job_size_mb: 50000' in problem
    [problem] = _inputs.backup_problems({'job_gap_s': -1})
    assert 'from 0 to 86400' in problem
    config, sources = _backup_settings.drive_config(None, {'job_gap_s': 10}, {'job_size_mb': 50000}, None)
    assert (config['job_size_mb'], config['job_gap_s']) == (50000, 10)
    assert sources['job_size_mb']['where'] == 'tapeops_backup.job_size_mb'
    assert sources['job_gap_s']['where'] == 'tapeops_drives.job_gap_s'
