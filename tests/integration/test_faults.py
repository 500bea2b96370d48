# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Faults on the lab: a host lost in the middle of its drive tests keeps what it measured.

What is real: the qualify playbook over SSH to a lab guest, its source read
and write sweep on the guest's st device, and the loss: every sshd process on
the guest is stopped (SIGSTOP) once the host's source read is on the
controller, so the next connection times out in its SSH handshake
(OpenSSH's ConnectTimeout covers the banner and key exchange) and Ansible
marks the host UNREACHABLE, as for a host that died or dropped off the
network. sshd is continued 45 s later so the lab is whole again, and the
write sweep the host was still running in the guest is stopped and the tape
rewound, so no test after this one finds the drive busy. (The source read is
10 s: too short for a verdict, long enough to be kept.)

The controller is interrupted the same way (SIGINT to ansible-playbook, as
Ctrl-C or a job cancel sends it) during the write test: the run directory
keeps what was written, a report-only run rebuilds every report from it, and
the write job that outlives its controller in the guest is stopped.
Test of a drive that stops answering: test_hang.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
pytestmark = pytest.mark.lab

HOST = 'lab-ma1'
PROFILE_OVERRIDES = {'source_seconds': 10, 'step_mb': 32, 'step_seconds': 10, 'block_sizes': ['256K', '1M'],
                     'filemark_segments_mb': [16], 'filemark_payload_mb': 32, 'poll_seconds': 3}
FROZEN_S = 45


def _doc(run_dir):
    path = os.path.join(run_dir, 'hosts', HOST + '.json')
    try:
        with open(path, encoding='utf-8') as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def _wait_reachable(lab, limit_s):
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        try:
            if lab.run(HOST, 'true', timeout=20).returncode == 0:
                return True
        except subprocess.TimeoutExpired:
            pass
        time.sleep(2)
    return False


def test_a_host_lost_during_its_drive_tests_keeps_its_source_read(lab, tmp_path):
    if HOST not in lab.hosts:
        pytest.skip('the lab has no %s' % HOST)
    run_dir = str(tmp_path / 'run')
    extra = {'qualify_run_dir': run_dir, 'qualify_profile': 'quick', 'qualify_profile_overrides': PROFILE_OVERRIDES}
    cmd = [os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), '-i', lab.inventory,
           'tapeops.qualify.qualify', '--limit', HOST, '-e', json.dumps(extra)]
    # no SSH connection sharing: every task connects anew, so a frozen sshd shows at the next task; one
    # transfer method and no retries, so the first connection that times out (10 s) loses the host
    env = dict(lab.env(), ANSIBLE_TIMEOUT='10', ANSIBLE_SSH_ARGS='-o ControlMaster=no',
               ANSIBLE_SSH_TRANSFER_METHOD='piped', ANSIBLE_SSH_RETRIES='0',
               ANSIBLE_STDOUT_CALLBACK='tapeops.qualify.progress')
    play = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=ROOT,
                            stdin=subprocess.DEVNULL)
    frozen_at = None
    try:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and play.poll() is None:
            doc = _doc(run_dir)
            if doc and doc.get('status') == 'failed' and (doc.get('source') or {}).get('aggregate'):
                break
            time.sleep(1)
        assert play.poll() is None, 'the play ended before the source read was kept:\n' + play.stdout.read()[-4000:]
        freeze = lab.run(HOST, 'nohup sh -c "sleep 1; pkill -STOP -x sshd; sleep %d; pkill -CONT -x sshd" '
                               '>/dev/null 2>&1 &' % FROZEN_S, timeout=30)
        assert freeze.returncode == 0, freeze.stderr
        frozen_at = time.monotonic()
        out = play.communicate(timeout=300)[0]
        ended_after = time.monotonic() - frozen_at
    finally:
        if play.poll() is None:
            play.kill()
            play.communicate()
        if frozen_at is not None:
            # the lab whole again: sshd continued, the host's write sweep over (it runs on in the guest)
            assert _wait_reachable(lab, FROZEN_S + 120), '%s did not come back after sshd was continued' % HOST
            lab.run(HOST, 'pkill -f tape_write_benchmark; for i in $(seq 1 30); do pgrep -f tape_write_benchmark '
                          '>/dev/null || break; sleep 1; done; mt -f /dev/nst0 rewind', timeout=200)
    # the host is UNREACHABLE, not a failure of the play's own making, and the play ends within its bound:
    # the connection timeout of the first task after the loss, not the write sweep's hour
    assert play.returncode == 4, out[-4000:]
    assert 'UNREACHABLE' in out and 'FAILED - RETRYING' not in out
    assert ended_after < FROZEN_S, ended_after
    # what the host measured before it was lost is on the controller, with why the run stopped
    doc = _doc(run_dir)
    assert doc['status'] == 'failed' and 'stopped after the source read test' in doc['error']
    assert doc['source']['aggregate']['mean_mb_s'] > 0
    # and the reports rebuilt from what was written say it
    report = lab.playbook('tapeops.qualify.qualify', limit=HOST, extra_vars={
        'qualify_run_dir': run_dir, 'qualify_report_only': True}, timeout=300)
    assert report.rc == 2 and 'No verdict for %s' % HOST in report.stdout, report.stdout[-3000:]
    summary = open(os.path.join(run_dir, 'summary.md'), encoding='utf-8').read()
    assert 'stopped after the source read test' in summary and 'Measured before: the sources delivered' in summary


def test_an_interrupted_controller_leaves_a_run_the_reports_can_be_rebuilt_from(lab, tmp_path):
    # Ctrl-C on the controller (SIGINT to ansible-playbook, as a terminal or an AWX cancel sends it) while
    # the host runs its write test: what was written stays, and a report-only run rebuilds the reports from it.
    if HOST not in lab.hosts:
        pytest.skip('the lab has no %s' % HOST)
    run_dir = str(tmp_path / 'run')
    extra = {'qualify_run_dir': run_dir, 'qualify_profile': 'quick', 'qualify_profile_overrides': PROFILE_OVERRIDES}
    cmd = [os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), '-i', lab.inventory,
           'tapeops.qualify.qualify', '--limit', HOST, '-e', json.dumps(extra)]
    env = dict(lab.env(), ANSIBLE_STDOUT_CALLBACK='tapeops.qualify.progress')
    play = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=ROOT,
                            stdin=subprocess.DEVNULL)
    interrupted_at = None
    try:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and play.poll() is None:
            doc = _doc(run_dir)
            if doc and doc.get('status') == 'failed' and (doc.get('source') or {}).get('aggregate'):
                break
            time.sleep(1)
        assert play.poll() is None, 'the play ended before the source read was kept:\n' + play.stdout.read()[-4000:]
        time.sleep(2)
        play.send_signal(signal.SIGINT)
        interrupted_at = time.monotonic()
        out = play.communicate(timeout=120)[0]
        ended_after = time.monotonic() - interrupted_at
    finally:
        if play.poll() is None:
            play.kill()
            play.communicate()
        if interrupted_at is not None:
            # the write job runs on in the guest (async jobs outlive their controller): stop it, rewind
            lab.run(HOST, 'pkill -f tape_write_benchmark; for i in $(seq 1 30); do pgrep -f tape_write_benchmark '
                          '>/dev/null || break; sleep 1; done; mt -f /dev/nst0 rewind', timeout=200)
    assert play.returncode != 0 and ended_after < 30, (play.returncode, ended_after, out[-3000:])
    # no fleet report was written by the interrupted run; the host's document was, as it measured
    assert not os.path.exists(os.path.join(run_dir, 'summary.md'))
    doc = _doc(run_dir)
    assert doc['status'] == 'failed' and doc['source']['aggregate']['mean_mb_s'] > 0
    report = lab.playbook('tapeops.qualify.qualify', limit=HOST, extra_vars={
        'qualify_run_dir': run_dir, 'qualify_report_only': True}, timeout=300)
    assert report.rc == 2 and 'No verdict for %s' % HOST in report.stdout, report.stdout[-3000:]
    summary = open(os.path.join(run_dir, 'summary.md'), encoding='utf-8').read()
    assert 'Measured before: the sources delivered' in summary
    for page in ('report.html', 'junit.xml', os.path.join('hosts', HOST + '.html')):
        assert os.path.getsize(os.path.join(run_dir, page)) > 0, page
