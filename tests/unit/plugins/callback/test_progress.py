# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The progress callback: waits read as progress, under a real ansible-playbook run."""

from __future__ import annotations

import os
import re
import subprocess
import sys

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
    - name: Start a job that takes 14 s
      ansible.builtin.command: sleep 14
      async: 60
      poll: 0
      register: job
    - name: "Wait for the job (about {{ budget * runs }} s)"
      ansible.builtin.async_status:
        jid: "{{ job.ansible_job_id }}"
      register: res
      until: res.finished
      retries: 60
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
    book = tmp_path / 'wait.yml'
    book.write_text(PLAYBOOK)
    env = dict(os.environ, ANSIBLE_STDOUT_CALLBACK='tapeops.qualify.progress', ANSIBLE_NOCOLOR='1',
               ANSIBLE_LOCALHOST_WARNING='false', ANSIBLE_INVENTORY_UNPARSED_WARNING='false',
               ANSIBLE_COLLECTIONS_PATH=os.pathsep.join(p for p in sys.path if p.endswith('ansible_collections') or
                                                        os.path.isdir(os.path.join(p, 'ansible_collections'))))
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), str(book)],
                          capture_output=True, text=True, env=env, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = [line for line in proc.stdout.splitlines() if line.startswith('[localhost] Wait for the job')]
    assert 'FAILED - RETRYING' not in proc.stdout
    # No wall-clock figure is pinned: on a loaded machine a poll takes seconds, not one. The job outlasts the
    # expected 6 s by 8 s, so there are polls before it (a share of the expected time) and after it.
    assert len(lines) >= 3, proc.stdout
    assert re.match(r'\[localhost\] Wait for the job \(about 6 s\): running, \d+ s so far \(\d+ %\)$', lines[0]), lines
    assert 'past the expected 6 s; gives up in' in lines[-1], lines
