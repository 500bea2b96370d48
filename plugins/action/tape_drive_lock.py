# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Controller side of tapeops.qualify.tape_drive_lock (documentation in plugins/modules/).

Adds who asks (this controller's host name and the ansible-playbook process:
the worker's parent) and runs the module on the managed host. A drive found
busy under a lease this controller took from a process that no longer runs
(a killed ansible-playbook) is asked for again with that holder named in
``break_holders``: the module takes such a lease over at once instead of
waiting for its expiry.
"""

from __future__ import annotations

import os
import socket

from ansible.plugins.action import ActionBase


def controller_gone(holder, controller, pid_alive=None):
    """True when ``holder`` (a lease) was taken from ``controller`` by a process that no longer runs."""
    if not isinstance(holder, dict) or holder.get('controller') != controller:
        return False
    pid = holder.get('controller_pid')
    if not isinstance(pid, int) or pid <= 0:
        return False
    return not (pid_alive or _pid_alive)(pid)


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class ActionModule(ActionBase):

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        del tmp
        args = dict(self._task.args)
        args.setdefault('controller', socket.gethostname())
        # the worker process runs this plugin; its parent is the ansible-playbook process of the run
        args.setdefault('controller_pid', os.getppid())
        out = self._execute_module(module_name='tapeops.qualify.tape_drive_lock', module_args=args,
                                   task_vars=task_vars)
        stale = [lock['holder'] for lock in out.get('locks') or []
                 if lock.get('state') == 'busy' and lock.get('reason') == 'locked'
                 and controller_gone(lock.get('holder'), args['controller'])]
        if stale and not out.get('failed'):
            args['break_holders'] = list(args.get('break_holders') or []) + [
                dict((k, h.get(k)) for k in ('run_id', 'controller', 'controller_pid')) for h in stale]
            out = self._execute_module(module_name='tapeops.qualify.tape_drive_lock', module_args=args,
                                       task_vars=task_vars)
        result.update(out)
        return result
