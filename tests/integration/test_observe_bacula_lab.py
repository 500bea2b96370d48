# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A real Bacula job, watched and judged: the forecast replayed from what the drive was fed agrees with the drive.

On lab-ma3 (source throttled to 3 MB/s, the drive an LTO-8 at the lab's scale 0.1: floor 11.2 MB/s), Debian's
Bacula 9.6.7 backs the guest's source tree up (``lab/tapelab bacula-setup lab-ma3``, Bacula's own Director, File
and Storage daemons; targets/observe_bacula/). tapeops.qualify.tape_drive_observe watches the drive, read-only,
until it has been idle 6 s after the job; _judge/_observed judges the window with the guest's drive profile.

Required, as issue 22 asks of an observed job:
- the job ends OK and the window saw it write (its data phase);
- the observed class is SHOE-SHINING (the drive counted its own back-hitches, page 0x34; BACULA.md measured 4-5
  in 79 s on this guest), and the forecast replayed once from the observed feed, with the compression the
  drive measured, says the same;
- the data-phase rate within 10 % of the forecast's, and the drive's counted back-hitches within one of the
  replay's.

No wall-clock figure is asserted: both sides come from the same window. About 3 minutes (set-up about 40 s,
the job about 80 s).
"""

from __future__ import annotations

import json

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _forecast, _observed
from test_bacula_lab import tapelab

pytestmark = pytest.mark.lab

HOST = 'lab-ma3'
PLAYBOOK = 'tests/integration/targets/observe_bacula/playbook.yml'


def profile_of(lab, host):
    prof = lab.hostvars[host]['tapeops_lab_drive_profile']
    return dict((k, float(v) if isinstance(v, str) and k != 'label' else v) for k, v in prof.items())


@pytest.fixture(scope='module')
def bacula_ma3(lab):
    if HOST not in lab.hosts:
        pytest.skip('the lab has no %s' % HOST)
    proc = tapelab(lab, 'bacula-setup', HOST)
    try:
        assert proc.returncode == 0, proc.stderr
        yield
    finally:
        stop = tapelab(lab, 'bacula-stop', HOST)
        assert stop.returncode == 0, stop.stderr


def test_a_real_bacula_job_is_judged_as_the_drive_counted_it(lab, bacula_ma3, tmp_path, lab_record):
    out = tmp_path / 'observe-bacula.json'
    # the play reads the inventory lab/tapelab rewrote with the guest's Bacula (tapeops_bacula)
    result = lab.playbook(PLAYBOOK, limit=HOST, timeout=900, extra_vars={'observe_out': str(out)})
    assert result.rc == 0, result.stdout[-3000:]
    data = json.loads(out.read_text())
    job, observed = data['job'], data['observed']
    assert job['status'] == 'T' and job['bytes'] > 0, job
    assert observed['window']['ended_by'] == 'idle', observed['window']
    # begun before the job, the window holds all of it: every byte of the volume
    assert observed['bytes_written'] == job['volume_bytes'], (observed['bytes_written'], job)
    prof = profile_of(lab, HOST)
    judged = _observed.judge(observed, prof).to_dict()
    lab_record('observed_bacula_job_%s' % HOST, {
        'host': HOST, 'profile': prof, 'judgement': judged, 'window': observed,
        'job': dict((k, job.get(k)) for k in ('jobid', 'status', 'bytes', 'files', 'data_mb_s', 'data_seconds'))})
    assert judged['status'] == 'judged', judged
    seen, predicted, agreement = judged['observed'], judged['forecast'], judged['agreement']
    assert seen['class_basis'] == 'backhitches_and_rate' and seen['tape_ratio_source'] == 'drive', seen
    assert seen['class'] == _forecast.SHOE_SHINING and seen['backhitches'] >= 1, seen
    assert predicted['class'] == _forecast.SHOE_SHINING and agreement['class_match'] is True, judged
    assert abs(agreement['rate_delta_pct']) <= 10.0, judged
    assert abs(agreement['backhitch_delta']) <= 1, judged
    # the window's data phase is the storage daemon's: within 10 % of the rate Bacula logged for it
    if job.get('data_mb_s'):
        assert seen['mb_s'] == pytest.approx(job['data_mb_s'], rel=0.10), (seen, job['data_mb_s'])
