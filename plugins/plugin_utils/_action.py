# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""What the collection's action plugins share (as community.crypto's plugin_utils/action_module.py).

Private to this collection: may change without notice.

The action plugins (qualify_verdict, qualify_report, qualify_fixes_info,
qualify_amanda_tapetype, qualify_inputs_check, streaming_forecast) work on data
on the controller: no connection, no file transferred, check mode supported. ``QualifyAction`` does what they all do
around their own work, so each plugin holds only that work (``act``):

- validates the task's arguments against the plugin's ``ARGUMENT_SPEC`` (with
  its ``MUTUALLY_EXCLUSIVE`` and ``REQUIRED_ONE_OF``); a bad argument fails the
  task with ansible-core's message, in check mode too. The arguments are
  validated as plain data (``plain``): ansible-core's validator deep-copies
  what it is given, and a deep copy of values in the types ansible-core 2.19
  wraps them in (origin and trust) is slow: lab-ma1's recorded verdict
  arguments, every value wrapped, 47 ms against 0.5 ms plain; over 100
  recorded hosts the verdicts' worker processes used 16.0 s of CPU where they
  used 17.1 s. The spec is written once,
  in the plugin; its documentation (the stub in plugins/modules/) is held
  against it by tests/unit/plugins/action/test_action_argument_specs.py;
- calls ``act(args, task_vars)``, which returns the keys of the result
  (``changed`` defaults to False);
- leaves the task's arguments in the worker once read (``_keep_arguments``: a
  verdict's measurements are not sent back to the controller's main process);
- fails the task with the message of any error the collection raises on
  purpose (``_errors.TapeopsError``) or of the plugin's ``ERRORS`` (parse
  and model errors that derive from ValueError), never with a traceback: the
  messages already say what to do.
"""

from __future__ import annotations

from collections.abc import Mapping

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.errors import UnsupportedError
from ansible.plugins.action import ActionBase

from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError


class QualifyAction(ActionBase):
    """Base of the collection's action plugins; see the module docstring."""

    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    ARGUMENT_SPEC = {}
    MUTUALLY_EXCLUSIVE = None
    REQUIRED_ONE_OF = None
    # errors besides TapeopsError whose message is the task's (they say what to do)
    ERRORS = ()

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        del tmp
        try:
            args = self.validated_args()
        finally:
            self._keep_arguments()
        handled = (TapeopsError, ) + tuple(self.ERRORS)
        try:
            result.update(self.act(args, task_vars or {}))
        except handled as exc:
            raise AnsibleActionFail(str(exc))
        result.setdefault('changed', False)
        return result

    def _keep_arguments(self):
        """Leave the task's arguments here once read, where no other attempt can follow (``one_attempt``).

        The worker process sends its task's attributes back to the controller's main process with the result, the
        templated arguments among them, and that process reads them back one host at a time: a verdict's
        measurements (about 50 KB a host) cost the play about as much there as the verdicts (1,000 hosts: 41.9 s
        for the arguments given to an action that did nothing, 16.2 s without sending them back, 10.4 s for a
        no-op play; docs/awx.md). Nothing reads them there: the result is the action's, and a rescue's
        ``ansible_failed_task`` is the play's task, as written.
        """
        if one_attempt(self._task):
            self._task.args = {}

    def validated_args(self):
        """The task's arguments, plain data, validated and with their defaults: ActionBase.validate_argument_spec's
        result and failures, on ``plain(self._task.args)`` (see the module docstring)."""
        args = plain(self._task.args)
        validation = ArgumentSpecValidator(
            self.ARGUMENT_SPEC, mutually_exclusive=self.MUTUALLY_EXCLUSIVE,
            required_one_of=self.REQUIRED_ONE_OF).validate(args)
        if validation.error_messages:
            msg = validation.errors.msg
            if isinstance(validation.errors[0], UnsupportedError):
                msg = 'Unsupported parameters for (%s) module: %s' % (self._load_name, msg)
            raise AnsibleActionFail(msg, obj=self._task.args)
        args.update(validation.validated_parameters)
        return args

    @property
    def check_mode(self):
        return bool(self._task.check_mode)

    def act(self, args, task_vars):
        """The plugin's work: the keys of its result, from the validated ``args``."""
        raise NotImplementedError


def plain(value):
    """``value`` as plain data: dicts, lists, str, int, float, bool and None of their own types (a tuple becomes a
    list), whatever types templating handed them over in; anything else as it is."""
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    if isinstance(value, Mapping):
        return dict((plain(key), plain(item)) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    for native in (str, int, float):
        if isinstance(value, native):
            return native(value)
    return value


def one_attempt(task):
    """True when ``task`` runs once: no retries as ansible-core's TaskExecutor counts them (``retries``, else three
    when ``until`` is set)."""
    if task.retries is not None:
        return task.retries <= 0
    return not task.until


def host_of(task_vars):
    """The host the task runs for (``inventory_hostname``; localhost when there is none)."""
    return (task_vars or {}).get('inventory_hostname') or 'localhost'


def unwritable(path, exc):
    """The failure when the reports cannot be written to ``path``."""
    # the system's reason (strerror), not the exception's text; the variables are the qualify role's
    return AnsibleActionFail('Cannot write %s: %s. Set qualify_run_dir to a directory this user can write to (or '
                             'qualify_report_base, the directory each new run directory is made in).'
                             % (path, getattr(exc, 'strerror', None) or 'not writable'))
