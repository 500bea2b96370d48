# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: progress
type: stdout
short_description: Ansible's default screen output, with long waits shown as progress
description:
  - Ansible's default stdout callback (C(ansible.builtin.default)), except for the retries of a task that
    waits for something (an C(until) loop, such as the M(ansible.builtin.async_status) waits of the
    C(tapeops.qualify.qualify) and C(tapeops.qualify.upgrade_check) playbooks while the source read test and
    the write sweeps run).
  - >-
    The default callback prints each such retry as C(FAILED - RETRYING ... (360 retries left)), which reads
    as a failure and says nothing of how far the measurement is. This one prints
    C([lab-ma1] Wait for the source read test, about 120 s: running, 45 s so far (37 %)): the time since
    the wait began and, when the task name says C(about N s), the share of that expected time. Past the
    expected time it says so and how long the wait can still last before it times out.
  - Everything else is printed exactly as the default callback prints it.
author:
  - tapeops.qualify contributors (@tapeops)
extends_documentation_fragment:
  - default_callback
  - result_format_callback
requirements:
  - set as the stdout callback, for example C(ANSIBLE_STDOUT_CALLBACK=tapeops.qualify.progress), or
    C(stdout_callback = tapeops.qualify.progress) in the C([defaults]) section of C(ansible.cfg)
'''

import re
import time

from ansible import constants as C
from ansible.plugins.callback.default import CallbackModule as DefaultCallback

_ABOUT = re.compile(r'\babout (\d+(?:\.\d+)?) ?s\b')


def expected_seconds(task_name):
    """The N of 'about N s' in a task name, or None."""
    match = _ABOUT.search(task_name or '')
    return float(match.group(1)) if match else None


def progress_line(host, task_name, item_label, elapsed, attempts, retries, delay):
    """The line printed for one retry of a waiting task."""
    what = '%s, %s' % (task_name, item_label) if item_label else task_name
    line = '[%s] %s: running, %d s so far' % (host, what, round(elapsed))
    expected = expected_seconds(task_name)
    if expected:
        if elapsed <= expected:
            line += ' (%d %%)' % min(99, int(100 * elapsed / expected))
        else:
            line += ' (past the expected %d s' % round(expected)
            if retries is not None and attempts is not None and delay:
                line += '; gives up in %d s' % max(0, round((retries - attempts) * delay))
            line += ')'
    return line


def _task_and_data(result):
    """The task and the result dict of a callback's task result.

    ansible-core 2.19 names them ``result.task`` and ``result.result``; before 2.19 (2.16 to 2.18, which
    meta/runtime.yml also claims) the task result has only ``_task`` and ``_result``.
    """
    task = getattr(result, 'task', None)
    data = getattr(result, 'result', None)
    if task is None:
        task = result._task  # pylint: disable=protected-access
    if data is None:
        data = result._result  # pylint: disable=protected-access
    return task, data


class CallbackModule(DefaultCallback):
    """The default callback with progress lines for waiting tasks."""

    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'stdout'
    CALLBACK_NAME = 'tapeops.qualify.progress'

    def __init__(self):
        super().__init__()
        self._wait_started = {}

    def v2_runner_retry(self, result):
        task, data = _task_and_data(result)
        task_name = result.task_name or getattr(task, 'name', None) or str(task)
        item = data.get('_ansible_item_label') or data.get('item')
        label = item if isinstance(item, str) else None
        key = (self.host_label(result), getattr(task, '_uuid', task_name), repr(item))
        now = time.monotonic()
        delay = None
        try:
            delay = float(getattr(task, 'delay', None) or 0) or None
        except (TypeError, ValueError):
            delay = None
        started = self._wait_started.setdefault(key, now - (delay or 0.0))
        attempts, retries = data.get('attempts'), data.get('retries')
        self._display.display(progress_line(self.host_label(result), task_name, label, now - started,
                                            attempts, retries, delay), color=C.COLOR_DEBUG)
        if self._run_is_verbose(result, verbosity=2):
            self._display.display('Result was: %s' % self._dump_results(data), color=C.COLOR_DEBUG)
