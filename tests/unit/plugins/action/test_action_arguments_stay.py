# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The collection's actions leave their arguments in the worker once read (plugins/plugin_utils/_action.py,
``QualifyAction._keep_arguments``), under a real ansible-playbook run.

ansible-core's worker sends the task's attributes back with its result and the main process reads them again;
a callback sees the task as rebuilt from them. A task that runs once comes back without its arguments; one with
``retries`` or ``until`` keeps them, and its second attempt runs with them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from ansible.playbook.task import Task

from ansible_collections.tapeops.qualify.plugins.plugin_utils._action import one_attempt

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Once
      tapeops.qualify.streaming_forecast:
        drive: {generation: LTO-9}
        feed_mb_s: 120
      register: once
    - name: Until its second attempt
      tapeops.qualify.streaming_forecast:
        drive: {generation: LTO-9}
        feed_mb_s: 120
      register: twice
      until: twice.attempts | default(1) > 1
      retries: 1
      delay: 0
    - name: The same forecast both times
      ansible.builtin.assert:
        that:
          - once['class'] == twice['class'] and once.effective_mb_s == twice.effective_mb_s
          - twice.attempts == 2
"""

# what the main process rebuilt of each task from the worker's attributes
CALLBACK = """from ansible.plugins.callback import CallbackBase
import json, os


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'aggregate'
    CALLBACK_NAME = 'arguments_seen'

    def v2_runner_on_ok(self, result):
        task = result._task
        seen = {}
        path = os.environ['ARGUMENTS_SEEN']
        if os.path.exists(path):
            with open(path) as handle:
                seen = json.load(handle)
        seen[task.get_name()] = sorted(task.args)
        with open(path, 'w') as handle:
            json.dump(seen, handle)
"""


def test_a_task_that_runs_once_comes_back_without_its_arguments(tmp_path):
    (tmp_path / 'book.yml').write_text(PLAYBOOK)
    (tmp_path / 'callbacks').mkdir()
    (tmp_path / 'callbacks' / 'arguments_seen.py').write_text(CALLBACK)
    seen = tmp_path / 'seen.json'
    env = dict(os.environ, ANSIBLE_CALLBACK_PLUGINS=str(tmp_path / 'callbacks'),
               ANSIBLE_CALLBACKS_ENABLED='arguments_seen', ARGUMENTS_SEEN=str(seen), ANSIBLE_NOCOLOR='1',
               ANSIBLE_LOCALHOST_WARNING='false', ANSIBLE_INVENTORY_UNPARSED_WARNING='false',
               ANSIBLE_COLLECTIONS_PATH=os.pathsep.join(p for p in sys.path if p.endswith('ansible_collections') or
                                                        os.path.isdir(os.path.join(p, 'ansible_collections'))))
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'),
                           str(tmp_path / 'book.yml')], capture_output=True, text=True, env=env, timeout=600,
                          check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with open(seen, encoding='utf-8') as handle:
        arguments = json.load(handle)
    assert arguments['Once'] == []
    assert arguments['Until its second attempt'] == ['drive', 'feed_mb_s']


def test_one_attempt_counts_as_the_task_executor_does():
    def task(retries=None, until=None):
        made = Task()
        made.retries = retries
        made.until = until or []
        return made

    assert one_attempt(task())
    assert one_attempt(task(retries=0)) and one_attempt(task(retries=-1))
    assert not one_attempt(task(retries=2))
    assert not one_attempt(task(until=['x.finished']))          # until alone: three retries
    assert one_attempt(task(retries=0, until=['x.finished']))
