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
the write job that outlives its controller in the guest is stopped. That
run is lab-ma2's, and it goes on at once beside the host-lost test's on
lab-ma1.

A drive that stops answering: the guest's drive process (lab/tapedrive, the
user-space side of its st device) is stopped with SIGSTOP, so every SCSI
command to the drive and its changer waits in the guest's kernel, as with a
drive whose firmware hangs. A tool waiting on it sits in state D and cannot
be killed. The bounds documented in docs/usage.md hold:

* discovery: ``qualify_tool_timeout`` per device that does not answer (+5 s
  for the kill), after which nothing more is sent to it and no write test
  is started on the drive;
* the write test: ``qualify_write_timeout``, after which Ansible's async
  watchdog ends the job and the drive is reported as not answering.

The drive process is continued before each test ends, the write job left in
the kernel then ends by itself, and the tape is rewound: nothing outlives
the test. The two hangs are on different guests and run at once: lab-ma3's
drive is stopped before its own run (discovery), while lab-ma1's stops in
the middle of its write test beside lab-ma2's; each run is timed on its own.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

import host_schema

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
pytestmark = pytest.mark.lab

HOST = 'lab-ma1'
PROFILE_OVERRIDES = {'source_seconds': 10, 'step_mb': 32, 'step_seconds': 10, 'block_sizes': ['256K', '1M'],
                     'filemark_segments_mb': [16], 'filemark_payload_mb': 32, 'poll_seconds': 3}
FROZEN_S = 45

STOP_WRITE_JOB = ('pkill -f tape_write_benchmark; for i in $(seq 1 30); do pgrep -f tape_write_benchmark >/dev/null '
                  '|| break; sleep 1; done; mt -f /dev/nst0 rewind')

# the controller interrupted during its run's write test: another guest than HOST's, beside the host-lost test
INTERRUPTED = 'lab-ma2'
HUNG, OTHER = 'lab-ma1', 'lab-ma2'
# the drive stopped before its run: another guest, so that its run goes on beside the write-hang test's
HUNG_BEFORE = 'lab-ma3'
TOOL_TIMEOUT_S = 8
# lab-ma2's whole write test (its sweep, file-mark runs, log pages and probe) must end inside it on a loaded
# 2-core machine too: at 40 s it did not once, with the older ansible-core minors' tests running beside the lab
WRITE_TIMEOUT_S = 60
# a source read long enough for a verdict (lab-ma2's is the one the hang must not touch)
HANG_BOUNDS = {'qualify_tool_timeout': TOOL_TIMEOUT_S, 'qualify_write_timeout': WRITE_TIMEOUT_S,
               'qualify_profile_overrides': dict(PROFILE_OVERRIDES, source_seconds=20)}
STOP = 'kill -STOP "$(cat /run/tapedrive.pid)"'
CONT = 'kill -CONT "$(cat /run/tapedrive.pid)"'
# after CONT: the commands that waited complete, the write job killed by the async watchdog dies, the tape is rewound
SETTLE = ('for i in $(seq 1 60); do pgrep -f "tape_write_benchmark|mt -f|mtx -f|sg_" >/dev/null || break; sleep 1; '
          'done; pkill -f tape_write_benchmark; sleep 1; mt -f /dev/nst0 rewind; '
          'pgrep -fa "tape_write_benchmark|mt -f|mtx -f|sg_" || true')


def _doc(run_dir, host=HOST):
    path = os.path.join(run_dir, 'hosts', host + '.json')
    try:
        return host_schema.load(path)
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


def start_qualify(lab, run_dir, hosts, extra=None, env=None):
    """ansible-playbook tapeops.qualify.qualify on ``hosts`` in the background, the short profile, progress lines."""
    extra_vars = dict({'qualify_run_dir': run_dir, 'qualify_profile': 'quick',
                       'qualify_profile_overrides': PROFILE_OVERRIDES}, **(extra or {}))
    cmd = [os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), '-i', lab.inventory,
           'tapeops.qualify.qualify', '--limit', ','.join(hosts), '-e', json.dumps(extra_vars)]
    env = dict(lab.env(), ANSIBLE_STDOUT_CALLBACK='tapeops.qualify.progress', **(env or {}))
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=ROOT,
                            stdin=subprocess.DEVNULL)


def wait_source_kept(play, run_dir, host=HOST, limit_s=600):
    """Wait until ``host``'s source read is on the controller (its drive tests start then); the play still runs."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline and play.poll() is None:
        doc = _doc(run_dir, host)
        if doc and (doc.get('source') or {}).get('aggregate'):
            break
        time.sleep(1)
    assert play.poll() is None, 'the play ended before the source read was kept:\n' + play.stdout.read()[-4000:]


def _beside(state, work, name, join_s):
    """Runs ``work`` in a thread beside the module's tests, yields ``state`` (with the thread) and then waits.

    A module fixture's body ``yield from``s it: the fixture's run goes on while the tests that use it run, and
    each test judges it from ``state``.
    """
    thread = threading.Thread(target=work, name=name, daemon=True)
    thread.start()
    state['thread'] = thread
    yield state
    thread.join(timeout=join_s)


@pytest.fixture(scope='module')
def interrupted_run(lab, tmp_path_factory):
    """Ctrl-C on the controller (SIGINT to ansible-playbook, as a terminal or an AWX cancel sends it) while
    INTERRUPTED runs its write test, in a thread: it goes on beside the host-lost test (another guest, another run
    directory), which asks for this fixture so that both wait at once; the test after it judges the run."""
    if INTERRUPTED not in lab.hosts:
        pytest.skip('the lab has no %s' % INTERRUPTED)
    state = {'run_dir': str(tmp_path_factory.mktemp('interrupted') / 'run')}
    play = start_qualify(lab, state['run_dir'], [INTERRUPTED])

    def interrupt():
        try:
            wait_source_kept(play, state['run_dir'], INTERRUPTED)
            time.sleep(2)
            play.send_signal(signal.SIGINT)
            interrupted_at = time.monotonic()
            state['out'] = play.communicate(timeout=120)[0]
            state['ended_after'] = time.monotonic() - interrupted_at
        except (AssertionError, OSError, subprocess.SubprocessError) as exc:
            state['error'] = '%s: %s' % (type(exc).__name__, exc)
        finally:
            if play.poll() is None:
                play.kill()
                play.communicate()
            state['rc'] = play.returncode
            # the write job runs on in the guest (async jobs outlive their controller): stop it, rewind; also when
            # the test stopped early, so the next test finds the drive free
            try:
                lab.run(INTERRUPTED, STOP_WRITE_JOB, timeout=200)
            except (OSError, subprocess.SubprocessError) as exc:
                state['error'] = state.get('error') or 'stopping the write job: %s' % exc
    yield from _beside(state, interrupt, 'interrupted-run', 600)


def test_a_host_lost_during_its_drive_tests_keeps_its_source_read(lab, tmp_path, interrupted_run):
    # interrupted_run: lab-ma2's run, its controller interrupted, goes on beside this one (the next test judges it)
    assert interrupted_run['thread'].is_alive() or 'rc' in interrupted_run
    if HOST not in lab.hosts:
        pytest.skip('the lab has no %s' % HOST)
    run_dir = str(tmp_path / 'run')
    # no SSH connection sharing: every task connects anew, so a frozen sshd shows at the next task; one
    # transfer method and no retries, so the first connection that times out (10 s) loses the host
    play = start_qualify(lab, run_dir, [HOST], env={
        'ANSIBLE_TIMEOUT': '10', 'ANSIBLE_SSH_ARGS': '-o ControlMaster=no', 'ANSIBLE_SSH_TRANSFER_METHOD': 'piped',
        'ANSIBLE_SSH_RETRIES': '0'})
    frozen_at = None
    try:
        wait_source_kept(play, run_dir)
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
        # the lab whole again, also when the test stopped early: sshd continued, the host's write sweep
        # (it runs on in the guest) stopped and the tape rewound
        if frozen_at is not None:
            assert _wait_reachable(lab, FROZEN_S + 120), '%s did not come back after sshd was continued' % HOST
        lab.run(HOST, STOP_WRITE_JOB, timeout=200)
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


def test_an_interrupted_controller_leaves_a_run_the_reports_can_be_rebuilt_from(lab, interrupted_run):
    # what was written stays, and a report-only run rebuilds the reports from it
    state = interrupted_run
    state['thread'].join(timeout=600)
    assert not state['thread'].is_alive(), 'the interrupted run of %s did not end' % INTERRUPTED
    assert 'error' not in state, state['error']
    run_dir, out, ended_after = state['run_dir'], state['out'], state['ended_after']
    assert state['rc'] != 0 and ended_after < 30, (state['rc'], ended_after, out[-3000:])
    # no fleet report was written by the interrupted run; the host's document was, as it measured
    assert not os.path.exists(os.path.join(run_dir, 'summary.md'))
    doc = _doc(run_dir, INTERRUPTED)
    assert doc['status'] == 'failed' and doc['source']['aggregate']['mean_mb_s'] > 0
    report = lab.playbook('tapeops.qualify.qualify', limit=INTERRUPTED, extra_vars={
        'qualify_run_dir': run_dir, 'qualify_report_only': True}, timeout=300)
    assert report.rc == 2 and 'No verdict for %s' % INTERRUPTED in report.stdout, report.stdout[-3000:]
    summary = open(os.path.join(run_dir, 'summary.md'), encoding='utf-8').read()
    assert 'Measured before: the sources delivered' in summary
    for page in ('report.html', 'junit.xml', os.path.join('hosts', INTERRUPTED + '.html')):
        assert os.path.getsize(os.path.join(run_dir, page)) > 0, page


def _release(lab, host):
    assert lab.run(host, CONT, timeout=30).returncode == 0
    left = lab.run(host, SETTLE, timeout=200)
    assert left.stdout.strip() == '', 'processes left on %s after the drive answered again:\n%s' % (host, left.stdout)


def _st_writes(lab, host):
    return int(lab.run(host, 'cat /sys/class/scsi_tape/nst0/stats/write_cnt', timeout=30).stdout.strip())


@pytest.fixture(scope='module')
def hung_before_run(lab, tmp_path_factory):
    """A qualify run of HUNG_BEFORE, its drive stopped before the run, started now and waited for in a thread.

    Its guest, drive and run directory are its own, so it runs beside the write-hang test (lab-ma1 and
    lab-ma2), which asks for this fixture so that both wait at once; the test after it judges the run. Its time
    is its own play's, from its start to its end; the drive is continued (and the guest settled) in the thread
    as soon as the play ends."""
    if HUNG_BEFORE not in lab.hosts:
        pytest.skip('the lab has no %s' % HUNG_BEFORE)
    state = {'run_dir': str(tmp_path_factory.mktemp('hung-before') / 'run'),
             'writes_before': _st_writes(lab, HUNG_BEFORE)}
    assert lab.run(HUNG_BEFORE, STOP, timeout=30).returncode == 0
    start = time.monotonic()
    play = start_qualify(lab, state['run_dir'], [HUNG_BEFORE], HANG_BOUNDS)

    def wait():
        try:
            try:
                state['out'] = play.communicate(timeout=600)[0]
            finally:
                state['took'] = time.monotonic() - start
                if play.poll() is None:
                    play.kill()
                    state['out'] = play.communicate()[0]
                state['rc'] = play.returncode
        finally:
            try:
                _release(lab, HUNG_BEFORE)
            except (AssertionError, OSError, subprocess.SubprocessError) as exc:
                state['release_error'] = '%s: %s' % (type(exc).__name__, exc)
    yield from _beside(state, wait, 'hung-before-run', 900)


def test_a_drive_that_hangs_in_its_write_test_ends_within_the_write_limit(lab, tmp_path, hung_before_run):
    # hung_before_run: lab-ma3's run, its drive hung before it, goes on beside this one (the next test judges it)
    assert hung_before_run['thread'].is_alive() or 'rc' in hung_before_run
    for host in (HUNG, OTHER):
        if host not in lab.hosts:
            pytest.skip('the lab has no %s' % host)
    run_dir = str(tmp_path / 'run')
    play = start_qualify(lab, run_dir, [HUNG, OTHER], HANG_BOUNDS)
    stopped_at = None
    try:
        # the source read is kept the moment it is done; the write test starts right after it
        writes = _st_writes(lab, HUNG)
        wait_source_kept(play, run_dir, HUNG)
        # stopped once the sweep writes (st's write counter moves): a write then waits in the kernel (state D).
        # Stopped a fixed 3 s after the source read, no task of the job was in D in 3 of 7 lab runs (the play's
        # result and documents right all the same): the job was then waiting on the drive interruptibly (state
        # S, as a log page asked through sg waits), and its time limit killed it.
        deadline = time.monotonic() + WRITE_TIMEOUT_S
        while _st_writes(lab, HUNG) == writes and time.monotonic() < deadline and play.poll() is None:
            time.sleep(0.5)
        assert _st_writes(lab, HUNG) > writes, 'the write test on %s wrote nothing before its time limit' % HUNG
        assert lab.run(HUNG, STOP, timeout=30).returncode == 0
        stopped_at = time.monotonic()
        # the hang is real: while the play waits, a task of the write job waits in the guest's kernel on the
        # stopped drive (state D)
        stuck, tasks = [], ''
        while not stuck and play.poll() is None and time.monotonic() - stopped_at < WRITE_TIMEOUT_S:
            tasks = lab.run(HUNG, 'ps -eLo stat=,comm=,args=', timeout=30).stdout
            stuck = [line for line in tasks.splitlines() if line.startswith('D')]
            if not stuck:
                time.sleep(1)
        out = play.communicate(timeout=WRITE_TIMEOUT_S + 300)[0]
        ended_after = time.monotonic() - stopped_at
        assert stuck, 'no task waited in the kernel on %s: the drive was not hung\n%s\n%s' % (HUNG, tasks, out[-3000:])
    finally:
        if play.poll() is None:
            play.kill()
            play.communicate()
        if stopped_at is not None:
            _release(lab, HUNG)
        else:
            lab.run(HUNG, STOP_WRITE_JOB, timeout=200)
    # bound: the write limit counts from the job's start, before the stop; then one poll and the verdict tasks
    assert ended_after < WRITE_TIMEOUT_S + 60, ended_after
    assert play.returncode == 2, out[-4000:]
    assert 'No verdict for %s' % HUNG in out and 'FAILED - RETRYING' not in out
    hung = _doc(run_dir, HUNG)
    assert hung['verdicts'] == []
    assert hung['drives'][0]['error'].startswith(
        '/dev/nst0 does not answer: the write test did not end within its time limit (qualify_write_timeout)')
    assert hung['source']['aggregate']['mean_mb_s'] > 0
    other = _doc(run_dir, OTHER)
    # The other host is judged as if nothing had happened: a verdict, no error. Its class is not pinned here: lab-ma2
    # is SPEED-MATCHED when its guest gets the CPU to feed the drive (test_qualify's spread test pins it), and its
    # drive path fell to the drive's lowest speed step (SHOE-SHINING) once, on a loaded machine, beside this hang.
    assert other['status'] == 'ok' and len(other['verdicts']) == 1 and other['drives'][0]['error'] is None
    assert other['verdicts'][0]['class'] in ('STREAMING', 'SPEED-MATCHED', 'SHOE-SHINING'), other['verdicts']
    summary = open(os.path.join(run_dir, 'summary.md'), encoding='utf-8').read()
    assert 'does not answer' in summary and OTHER in summary


def test_a_drive_hung_before_the_run_ends_discovery_within_the_tool_timeout(lab, hung_before_run):
    state = hung_before_run
    state['thread'].join(timeout=900)
    assert not state['thread'].is_alive(), 'the run of %s did not end' % HUNG_BEFORE
    assert 'release_error' not in state, state.get('release_error')
    out, took = state['out'], state['took']
    # discovery: the changer and the drive, one tool timeout (+5 s kill grace) each; then the 20 s source read
    # and the play's own tasks. No write test was started on the hung drive.
    assert took < 2 * (TOOL_TIMEOUT_S + 5) + 20 + 90, took
    assert state['rc'] == 2, out[-4000:]
    doc = _doc(state['run_dir'], HUNG_BEFORE)
    assert doc['verdicts'] == []
    assert doc['drives'][0]['error'].startswith('/dev/nst0 does not answer: ')
    assert 'did not finish within %d seconds' % TOOL_TIMEOUT_S in doc['drives'][0]['error']
    assert doc['source']['aggregate']['mean_mb_s'] > 0
    assert _st_writes(lab, HUNG_BEFORE) == state['writes_before']
