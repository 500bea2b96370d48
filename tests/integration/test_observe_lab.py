# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""tape_drive_observe on lab-ma1's drive through the guest's real st driver (targets/observe/playbook.yml).

- Idle: with nothing using the drive, every st counter is the same before and after the module ran (in check
  mode, then for a 6 s window with its LOG SENSE before and after): the module opened no st node and sent nothing
  through st. It reports the drive idle, and the drive's own compression counters received nothing.
- A job: a dd of 24 MiB of random data to the drive (the loaded cartridge checked to be an allowed scratch one),
  started once the module's window has begun (observe_start), closed by a file mark and a rewind; the window ends 4 s after the drive
  went idle. The module's bytes equal the st counters' difference read by the test around the whole play (so
  it missed nothing of the job), its series holds them, and the drive's own host-bytes counter says the same;
  the emulated drive stores random data as it is (compression ratio 1.0).

- Judged: a backup-like job (the lab's writer: source files to tape, as a backup agent streams them) runs while
  the module watches, and _judge/_observed judges the window with the guest's drive profile. On lab-ma3 the
  source is throttled far below the drive's floor: the drive counted its own back-hitches (page 0x34), the
  observed class is SHOE-SHINING, and the forecast replayed once from the observed feed predicts the same class,
  the drive's back-hitches within one and its rate within 10 %. On lab-ma1 the source is in the page cache,
  faster than the drive's top step: the drive counted no back-hitch, and the forecast agrees on the class.

No wall-clock rate is asserted: rates are compared within one run (observed against replayed). About 100 s on
a running lab.
"""

from __future__ import annotations

import datetime
import json
import re

import pytest

import observe_start
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _forecast, _observed

pytestmark = pytest.mark.lab

HOST = 'lab-ma1'
WRITER = 'cd /run/tapelab/pylib && python3 -m tapedrive.writer'
PLAYBOOK = 'tests/integration/targets/observe/playbook.yml'
# the job starts once the module's window has begun (its log pages read), after the mark the job touches first
WINDOW = observe_start.after_log_pages('/tmp/tapeops-observe.job-mark')
STATS = '/sys/class/scsi_tape/nst0/stats'
DATA = '/tmp/tapeops-observe.data'
JOB_BYTES = 24 * 1024 * 1024


def st_counters(lab):
    proc = lab.run(HOST, 'for f in %s/*; do echo "$(basename $f)=$(cat $f)"; done' % STATS, timeout=30)
    assert proc.returncode == 0, proc.stderr
    return dict((k, int(v)) for k, v in (line.split('=', 1) for line in proc.stdout.split()))


def loaded_barcode(lab, host=HOST):
    changer = lab.hostvars[host]['tapeops_lab_changer']['sg']
    out = lab.run(host, 'mtx -f %s status' % changer, timeout=60).stdout
    match = re.search(r'Data Transfer Element 0:Full .*VolumeTag\s*=\s*(\S+)', out)
    return match.group(1) if match else None


def observe(lab, tmp_path, host=HOST, **extra):
    out = tmp_path / ('observe-%s.json' % host)
    result = lab.playbook(PLAYBOOK, limit=host, timeout=300, extra_vars=dict(extra, observe_out=str(out)))
    assert result.rc == 0, result.stdout[-3000:]
    return json.loads(out.read_text())


def epoch(iso):
    return datetime.datetime.fromisoformat(iso).timestamp()


def test_an_idle_drive_is_reported_idle_and_its_st_counters_do_not_move(lab, tmp_path):
    if HOST not in lab.hosts:
        pytest.skip('the lab has no %s' % HOST)
    before = st_counters(lab)
    data = observe(lab, tmp_path, observe_duration=6)
    after = st_counters(lab)
    # nothing went through st: no open, no command, while the module identified the drive, read its pages
    # (LOG SENSE on the sg node) and sampled its counters
    assert after == before
    planned, observed = data['planned'], data['observed']
    assert planned['status'] == 'planned' and planned['series'] is None and planned['changed'] is False
    assert observed['status'] == 'observed' and observed['changed'] is False
    assert observed['drive']['nst'] == '/dev/nst0' and observed['drive']['sg']
    assert observed['idle'] is True and observed['bytes_written'] == 0 and observed['busy_seconds'] == 0.0
    assert observed['window']['ended_by'] == 'duration' and observed['window']['samples'] >= 6
    assert [g['where'] for g in observed['idle_gaps']] == ['whole']
    assert all(v == 0 for v in observed['st_delta'].values())
    # the drive's own counters were read before and after: known, and nothing moved
    assert observed['compression']['host_written_bytes'] == 0
    assert observed['unknown']['compression_ratio'] == 'the drive received no data in the window'
    assert observed['backhitches'] == 0 and observed['tape_alert']['raised'] == []


def test_a_job_s_bytes_are_the_st_counters_difference_and_the_series_holds_them(lab, tmp_path):
    if HOST not in lab.hosts:
        pytest.skip('the lab has no %s' % HOST)
    barcode = loaded_barcode(lab)
    # safety: the job writes only to a cartridge the inventory allows
    assert barcode in lab.hostvars[HOST]['tapeops_allowed_barcodes'], barcode
    assert lab.run(HOST, 'head -c %d /dev/urandom > %s' % (JOB_BYTES, DATA), timeout=60).returncode == 0
    try:
        before = st_counters(lab)
        data = observe(lab, tmp_path, observe_job=True, observe_duration=40, observe_job_wait=WINDOW,
                       observe_until_idle=4)
        after = st_counters(lab)
    finally:
        lab.run(HOST, 'rm -f %s /tmp/tapeops-observe.job-start /tmp/tapeops-observe.job-end '
                '/tmp/tapeops-observe.job-mark' % DATA, timeout=30)
    observed = data['observed']
    assert data['job_rc'] == 0, data
    job_start, job_end = (float(t) for t in data['job_times'])
    window = observed['window']
    started, ended = epoch(window['started_at']), epoch(window['ended_at'])
    # the window held the whole job: it began before the job and ended after the drive went idle
    assert started <= job_start and ended >= job_end, (window, data['job_times'])
    assert window['ended_by'] == 'idle'
    moved = after['write_byte_cnt'] - before['write_byte_cnt']
    assert moved == JOB_BYTES
    assert observed['bytes_written'] == moved == sum(observed['series']['write_byte_cnt'])
    assert max(observed['series']['write_byte_cnt']) > 0 and observed['idle'] is False
    assert observed['busy_seconds'] > 0 and observed['mb_s'] > 0
    # the file mark and the rewind, and the opens of mt and dd
    assert observed['other_commands'] == after['other_cnt'] - before['other_cnt'] >= 2
    assert [g['where'] for g in observed['idle_gaps']][0] == 'before'
    # what the drive counted itself: every byte from the host, random data stored as it is
    assert observed['compression']['host_written_bytes'] == moved
    assert observed['compression_ratio'] == 1.0
    assert isinstance(observed['backhitches'], int) and observed['backhitches'] >= 0
    assert observed['write_errors']['total_uncorrected_errors'] == 0
    assert 'compression_ratio' not in observed['unknown'] and 'backhitches' not in observed['unknown']


def profile_of(lab, host):
    prof = lab.hostvars[host]['tapeops_lab_drive_profile']
    return dict((k, float(v) if isinstance(v, str) and k != 'label' else v) for k, v in prof.items())


# host, writer arguments (after --rewind), cache warm-up, the class the drive's physics give
JOBS = [
    ('lab-ma3', '--drop-caches --filemarks none /srv/backup-src/large/video.bin', None, _forecast.SHOE_SHINING),
    ('lab-ma1', '--filemarks immediate /srv/backup-src/large/video.bin /srv/backup-src/medium',
     'cat /srv/backup-src/medium/* /srv/backup-src/large/video.bin >/dev/null', None),
]


@pytest.mark.parametrize('host, args, warm, physics_class', JOBS, ids=[j[0] for j in JOBS])
def test_an_observed_job_is_judged_and_the_replayed_forecast_agrees_with_the_drive(
        lab, tmp_path, lab_record, host, args, warm, physics_class):
    if host not in lab.hosts:
        pytest.skip('the lab has no %s' % host)
    barcode = loaded_barcode(lab, host)
    # safety: the job writes only to a cartridge the inventory allows
    assert barcode in lab.hostvars[host]['tapeops_allowed_barcodes'], barcode
    if warm:
        assert lab.run(host, warm, timeout=300).returncode == 0
    job = '%s --rewind %s > /tmp/tapeops-observe.writer.json && mt -f /dev/nst0 rewind' % (WRITER, args)
    data = observe(lab, tmp_path, host=host, observe_job=True, observe_job_wait=WINDOW, observe_duration=150,
                   observe_until_idle=5, observe_job_cmd=job)
    assert data['job_rc'] == 0, data
    observed = data['observed']
    assert observed['window']['ended_by'] == 'idle', observed['window']
    prof = profile_of(lab, host)
    judged = _observed.judge(observed, prof).to_dict()
    lab_record('observed_job_%s' % host, {
        'host': host, 'profile': prof, 'judgement': judged, 'window': observed,
        'backhitches': observed['backhitches'], 'compression_ratio': observed['compression_ratio']})
    assert judged['status'] == 'judged', judged
    seen, predicted, agreement = judged['observed'], judged['forecast'], judged['agreement']
    # the drive counted its own back-hitches and measured its own compression (random data: 1.0)
    assert seen['class_basis'] == 'backhitches_and_rate' and seen['tape_ratio_source'] == 'drive', seen
    assert seen['inconclusive_reason'] is None and predicted['inconclusive_reason'] is None, judged
    if physics_class:
        assert seen['class'] == physics_class and seen['backhitches'] >= 1, seen
    else:
        # the page cache feeds faster than the drive's top step: the drive never ran dry
        assert seen['backhitches'] == 0 and seen['class'] != _forecast.SHOE_SHINING, seen
    # the forecast, from the feed alone, says what the drive did
    assert agreement['class_match'] is True, judged
    assert abs(agreement['backhitch_delta']) <= 1, judged
    assert abs(agreement['rate_delta_pct']) <= 10.0, judged
