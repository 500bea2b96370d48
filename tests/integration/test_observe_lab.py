# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""tape_drive_observe on lab-ma1's drive through the guest's real st driver (targets/observe/playbook.yml).

- Idle: with nothing using the drive, every st counter is the same before and after the module ran (in check
  mode, then for a 6 s window with its LOG SENSE before and after): the module opened no st node and sent nothing
  through st. It reports the drive idle, and the drive's own compression counters received nothing.
- A job: a dd of 24 MiB of random data to the drive (the loaded cartridge checked to be an allowed scratch one),
  started 8 s after the module's window, closed by a file mark and a rewind; the window ends 4 s after the drive
  went idle. The module's bytes equal the st counters' difference read by the test around the whole play (so
  it missed nothing of the job), its series holds them, and the drive's own host-bytes counter says the same;
  the emulated drive stores random data as it is (compression ratio 1.0).

No wall-clock rate is asserted. About 40 s on a running lab.
"""

from __future__ import annotations

import datetime
import json
import re

import pytest

pytestmark = pytest.mark.lab

HOST = 'lab-ma1'
PLAYBOOK = 'tests/integration/targets/observe/playbook.yml'
STATS = '/sys/class/scsi_tape/nst0/stats'
DATA = '/tmp/tapeops-observe.data'
JOB_BYTES = 24 * 1024 * 1024


def st_counters(lab):
    proc = lab.run(HOST, 'for f in %s/*; do echo "$(basename $f)=$(cat $f)"; done' % STATS, timeout=30)
    assert proc.returncode == 0, proc.stderr
    return dict((k, int(v)) for k, v in (line.split('=', 1) for line in proc.stdout.split()))


def loaded_barcode(lab):
    changer = lab.hostvars[HOST]['tapeops_lab_changer']['sg']
    out = lab.run(HOST, 'mtx -f %s status' % changer, timeout=60).stdout
    match = re.search(r'Data Transfer Element 0:Full .*VolumeTag\s*=\s*(\S+)', out)
    return match.group(1) if match else None


def observe(lab, tmp_path, **extra):
    out = tmp_path / 'observe.json'
    result = lab.playbook(PLAYBOOK, limit=HOST, timeout=300, extra_vars=dict(extra, observe_out=str(out)))
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
        data = observe(lab, tmp_path, observe_job=True, observe_job_delay=8, observe_duration=40,
                       observe_until_idle=4)
        after = st_counters(lab)
    finally:
        lab.run(HOST, 'rm -f %s /tmp/tapeops-observe.job-start /tmp/tapeops-observe.job-end' % DATA, timeout=30)
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
