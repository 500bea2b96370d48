# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The progress callback: waits read as progress, under a real ansible-playbook run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading

from ansible_collections.tapeops.qualify.plugins.callback import progress

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  vars:
    budget: 3
  tasks:
    - name: Work out the runs on the host (a host-specific number in the wait's name)
      ansible.builtin.set_fact:
        runs: 2
    - name: Start a job that lasts until the test has seen the wait pass its expected time
      ansible.builtin.command:
        argv: [sh, -c, 'while [ ! -e "$0" ]; do sleep 0.2; done', "{{ done_file }}"]
      async: 900
      poll: 0
      register: job
    - name: "Wait for the job (about {{ budget * runs }} s)"
      ansible.builtin.async_status:
        jid: "{{ job.ansible_job_id }}"
      register: res
      until: res.finished
      retries: 600
      delay: 1
"""


def test_progress_line_words():
    assert progress.expected_seconds('Wait for the source read test (about 240 s)') == 240.0
    assert progress.expected_seconds('Wait for the write sweeps') is None
    assert progress.progress_line('ma1', 'Wait (about 100 s)', None, 45.2, 3, 100, 15) == \
        '[ma1] Wait (about 100 s): running, 45 s so far (45 %)'
    assert progress.progress_line('ma1', 'Wait (about 100 s)', None, 130, 9, 100, 15) == \
        '[ma1] Wait (about 100 s): running, 130 s so far (past the expected 100 s; gives up in 1365 s)'
    assert progress.progress_line('ma1', 'Wait for the write sweeps', '/dev/nst0', 20, 2, 10, 10) == \
        '[ma1] Wait for the write sweeps, /dev/nst0: running, 20 s so far'


def test_a_real_wait_prints_progress_not_failed_retrying(tmp_path):
    """The job ends only once the wait has printed a line past its expected 6 s, so the test pins no wall-clock
    figure: however slowly a loaded machine polls, the first retry is a share of the expected time (the callback
    counts the wait from one delay before it) and the last is past it."""
    book = tmp_path / 'wait.yml'
    book.write_text(PLAYBOOK)
    done = tmp_path / 'done'
    env = dict(os.environ, ANSIBLE_STDOUT_CALLBACK='tapeops.qualify.progress', ANSIBLE_NOCOLOR='1',
               ANSIBLE_LOCALHOST_WARNING='false', ANSIBLE_INVENTORY_UNPARSED_WARNING='false',
               ANSIBLE_COLLECTIONS_PATH=os.pathsep.join(p for p in sys.path if p.endswith('ansible_collections') or
                                                        os.path.isdir(os.path.join(p, 'ansible_collections'))))
    cmd = [os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), str(book), '-e', 'done_file=%s' % done]
    # stderr joins stdout: one pipe, read to its end, so that neither can fill while the other is read
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env) as proc:
        watchdog = threading.Timer(600, proc.kill)
        watchdog.start()
        try:
            out = []
            for line in proc.stdout:
                out.append(line)
                if 'past the expected' in line:
                    done.touch()
        finally:
            watchdog.cancel()
            done.touch()
    stdout = ''.join(out)
    assert proc.returncode == 0, stdout
    lines = [line for line in stdout.splitlines() if line.startswith('[localhost] Wait for the job')]
    assert 'FAILED - RETRYING' not in stdout
    assert len(lines) >= 2, stdout
    assert re.match(r'\[localhost\] Wait for the job \(about 6 s\): running, 1 s so far \(16 %\)$', lines[0]), lines
    assert re.match(r'\[localhost\] Wait for the job \(about 6 s\): running, \d+ s so far '
                    r'\(past the expected 6 s; gives up in \d+ s\)$', lines[-1]), lines
