# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Make this checkout importable as ansible_collections.tapeops.qualify, for the bench scripts; run a playbook timed.

A checkout that already sits at .../ansible_collections/tapeops/qualify is
used where it is; any other is linked into a temporary
ansible_collections/tapeops/qualify.
"""

import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def import_collection():
    """Put the collection on sys.path; return the directory holding ansible_collections/ (for ANSIBLE_COLLECTIONS_PATH)."""
    parts = ROOT.split(os.sep)
    if parts[-3:-1] == ['ansible_collections', 'tapeops']:
        base = os.sep.join(parts[:-3])
    else:
        base = tempfile.mkdtemp(prefix='tapeops-bench-')
        os.makedirs(os.path.join(base, 'ansible_collections', 'tapeops'))
        os.symlink(ROOT, os.path.join(base, 'ansible_collections', 'tapeops', 'qualify'))
    sys.path.insert(0, base)
    return base


# The play a bench sets a playbook's time against: one controller-side task a host, nothing reached.
NOOP_PLAY = """- name: No-op play over the same inventory
  hosts: media_agents
  gather_facts: false
  tasks:
    - name: One controller-side task a host
      ansible.builtin.set_fact:
        bench_noop: true
"""


def playbook_env(collections):
    """ansible-playbook's environment: this collection (``import_collection``'s directory) and nothing else."""
    return dict(os.environ, ANSIBLE_COLLECTIONS_PATH=collections, ANSIBLE_COLLECTIONS_SCAN_SYS_PATH='false',
                ANSIBLE_HOST_KEY_CHECKING='false', ANSIBLE_RETRY_FILES_ENABLED='false')


def ansible_playbook():
    """The ansible-playbook beside this Python (the venv's, when the bench runs with .venv/bin/python), else PATH's."""
    beside = os.path.join(os.path.dirname(sys.executable), 'ansible-playbook')
    return beside if os.access(beside, os.X_OK) else 'ansible-playbook'


def timed_playbook(args, env):
    """Seconds ``ansible-playbook ARGS`` took; its output's end when it failed."""
    start = time.monotonic()
    proc = subprocess.run([ansible_playbook()] + args, env=env, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - start
    if proc.returncode != 0:
        raise SystemExit('ansible-playbook %s failed (%d):\n%s' % (' '.join(args), proc.returncode,
                                                                   (proc.stdout + proc.stderr)[-3000:]))
    return seconds
