# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Run an action plugin's run() in-process, the way community.general and community.crypto unit-test action plugins.

``run_action(module, args, task_vars)`` builds the plugin's ActionModule on a
mocked Task (its ``args``, ``check_mode``), connection and play context (the
collection's actions use neither: ``_requires_connection`` is False), calls
``run(task_vars=...)`` and returns ``(failed, result)``. A plugin fails by
raising AnsibleActionFail, as ansible-core expects; the task executor turns it
into a failed result with its message, and so does this helper, so a test can
assert the message the user sees. Any other exception is a bug and propagates
(a traceback fails the test).
"""

from __future__ import annotations

import json
import os
from unittest import mock

from ansible.errors import AnsibleActionFail
from ansible.playbook.task import Task

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures')
LAB_RUN_1123 = os.path.join(FIXTURES, 'lab_runs', '20261123-quick')
# what LAB_RUN_1123 handed the qualify_verdict action, per host (README.md there)
VERDICT_ARGS = os.path.join(FIXTURES, 'verdict_args', '20261123-quick')
LAB_RUN_V2 = os.path.join(FIXTURES, 'lab_runs', '20261124-quick-v2')


def recorded(run, host):
    """The host's document of a recorded lab run (tests/unit/fixtures/lab_runs/), as qualify_verdict wrote it."""
    with open(os.path.join(run, '%s.json' % host), encoding='utf-8') as handle:
        return json.load(handle)


def make_action(module, args, check_mode=False):
    """The ActionModule of ``module`` (a plugins/action/ module) for a task with ``args``."""
    task = mock.MagicMock(Task)
    task.args = dict(args)
    task.async_val = 0
    task.check_mode = check_mode
    task.diff = False
    task.until = []
    task.retries = None
    task.action = 'tapeops.qualify.%s' % module.__name__.rsplit('.', 1)[-1]
    connection = mock.MagicMock()
    connection._shell.tmpdir = None  # pylint: disable=protected-access
    plugin = module.ActionModule(task, connection, mock.MagicMock(), loader=None, templar=None, shared_loader_obj=None)
    plugin._load_name = task.action  # pylint: disable=protected-access
    return plugin


def run_action(module, args, task_vars=None, check_mode=False):
    """(failed, result) of one run of the action, failures as ansible-core reports them ({failed, msg})."""
    plugin = make_action(module, args, check_mode=check_mode)
    try:
        result = plugin.run(task_vars=task_vars if task_vars is not None else {'inventory_hostname': 'localhost'})
    except AnsibleActionFail as exc:
        # ansible-core before 2.19 also puts the Python traceback of the raise in
        # the result's 'exception', which it shows only at -vvv; the user sees msg.
        shown = dict((k, v) for k, v in exc.result.items() if k != 'exception')
        return True, dict(shown, failed=True, msg=str(exc.message))
    return bool(result.get('failed')), result
