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


def fixes_of(verdict):
    return dict((f['id'], f) for f in verdict['fixes'])


def test_small_jobs_that_make_a_streaming_feed_shoe_shine_get_a_finding_and_the_job_size_fix():
    """The LTO-9 fed at 450 MB/s streams as one stream; in jobs of 2000 MB, each closed by a synchronous mark (the
    drive model's flush plus its sync_mark_s: seed 001's 7.9 s a segment, docs/drive-model.md), it shoe-shines.
    No stage is offered (a staged job ends with its mark all the same); fewer, larger jobs are, at the size whose
    boundaries cost 1 % of the time, and the forecast with them streams."""
    config = {'software': 'bacula', 'immediate_filemarks': True, 'segment_size_mb': 1000,
              'job_size_mb': 2000, 'job_gap_s': 0}
    plain = run(LTO9, source(450.0), {'software': 'bacula', 'immediate_filemarks': True, 'segment_size_mb': 1000})
    jobs = run(LTO9, source(450.0), config)
    assert plain['class'] == v.STREAMING and jobs['class'] == v.SHOE_SHINING
    [finding] = [f for f in jobs['findings'] if f['id'] == 'job_boundaries_limit']
    assert finding['severity'] == 'warning'
    assert finding['text'].startswith("The application's job boundaries hold the drive back: with jobs of 2000 MB, "
                                      'each closed by a synchronous file mark, the forecast is SHOE-SHINING (')
    assert finding['text'].endswith('the same data as one stream would be STREAMING (%s).' % _words.fmt_rate(
        plain['forecast']['now']['effective_mb_s']))
    fixes = fixes_of(jobs)
    assert 'staging' not in fixes and 'streams' not in fixes
    fix = fixes['job_size']
    # by the segment rule: 400 MB/s x (flush + sync_mark_s) x 99, to 100 MB
    params = v._forecast.drive_parameters(LTO9)
    cost = params['buffer_mb'] / params['native_mb_s'] + LTO9.sync_mark_s
    assert fix['value'] == int(-(-400.0 * cost * 99 // 100) * 100)
    assert fix['title'] == 'Write fewer, larger jobs to each volume (%.0f GB or more each)' % (fix['value'] / 1000.0)
    assert fix['setting'].startswith('Bacula Job and Schedule resources: fewer, larger jobs on each volume')
    assert 'Each job of 2000 MB ends with a synchronous file mark whatever the file-mark setting' in fix['why']
    assert 'by the drive model' in fix['why'] and 'SHOE-SHINING -> STREAMING' in fix['why']
    assert fix['feed_after_mb_s'] > 2 * jobs['forecast']['now']['effective_mb_s']


def test_a_gap_between_jobs_adds_the_restart_to_the_cost_of_a_boundary():
    """After a gap the drive repositions once more to start the next job: the job size takes that back-hitch too."""
    close = run(LTO9, source(450.0), {'software': 'data_protector', 'immediate_filemarks': True,
                                      'job_size_mb': 500, 'job_gap_s': 0})
    apart = run(LTO9, source(450.0), {'software': 'data_protector', 'immediate_filemarks': True,
                                      'job_size_mb': 500, 'job_gap_s': 10})
    params = v._forecast.drive_parameters(LTO9)
    mark = params['buffer_mb'] / params['native_mb_s'] + LTO9.sync_mark_s
    assert fixes_of(close)['job_size']['value'] == int(-(-400.0 * mark * 99 // 100) * 100)
    assert fixes_of(apart)['job_size']['value'] == int(-(-400.0 * (mark + LTO9.backhitch_s) * 99 // 100) * 100)
    fix = fixes_of(apart)['job_size']
    assert 'and, after the 10 s between jobs, a restart' in fix['why']
    assert fix['setting'].startswith('Data Protector backup specifications: fewer, larger sessions on each medium')


def test_jobs_larger_than_the_rule_asks_get_no_job_size_fix():
    """Jobs of 2 TB on the streaming LTO-9: their boundaries cost under 1 % already (or the forecast sees too few of
    them to matter); the verdict is the one-stream verdict."""
    jobs = run(LTO9, source(450.0), {'software': 'bacula', 'immediate_filemarks': True, 'job_size_mb': 2000000})
    assert 'job_size' not in fixes_of(jobs)
    assert not [f for f in jobs['findings'] if f['id'] == 'job_boundaries_limit']


def test_a_feed_below_the_floor_keeps_its_stage_whatever_the_jobs():
    """The sources give 100 MB/s, below the LTO-9's 177 floor, with any number of streams the curve allows: the feed
    makes it shoe-shine with or without the jobs, so the stage stays the fix for the feed."""
    src = source(100.0)
    jobs = run(LTO9, src, {'software': 'bacula', 'immediate_filemarks': True, 'job_size_mb': 2000}, max_streams=1)
    assert jobs['class'] == v.SHOE_SHINING
    assert not [f for f in jobs['findings'] if f['id'] == 'job_boundaries_limit']
    assert 'staging' in fixes_of(jobs)
