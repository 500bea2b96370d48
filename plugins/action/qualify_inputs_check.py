# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Controller side of tapeops.qualify.qualify_inputs_check (documentation in plugins/modules/)."""

from __future__ import annotations

import os

from ansible_collections.tapeops.qualify.plugins.module_utils import _inputs, _run
from ansible_collections.tapeops.qualify.plugins.plugin_utils._action import QualifyAction

ARGUMENT_SPEC = {
    'profile_overrides': {'type': 'raw'},
    'hosts': {'type': 'list', 'elements': 'str', 'default': []},
    'settings': {'type': 'dict', 'default': {}},
    'run_dir': {'type': 'path'},
    'report_base': {'type': 'path'},
    'report_only': {'type': 'bool', 'default': False},
    'compare_to': {'type': 'path'},
    'tape_ratio_from': {'type': 'path'},
}


class ActionModule(QualifyAction):

    ARGUMENT_SPEC = ARGUMENT_SPEC

    def act(self, args, task_vars):
        hosts = host_settings(args['hosts'], task_vars)
        found = _inputs.renamed_problems(renamed_names(args['hosts'], task_vars))
        found.extend(_inputs.problems(args['profile_overrides'], hosts, args['settings']))
        found.extend(directory_problems(args))
        if args['compare_to'] and not any(p.startswith('qualify_compare_to') for p in found):
            try:
                _run.load_earlier(args['compare_to'])
            except _run.RunError as exc:
                found.append(str(exc))
        _inputs.refuse(found)
        checked = ['qualify_profile_overrides', 'tapeops_backup', 'tapeops_drives'] + sorted(args['settings'])
        checked.append('qualify_run_dir' if args['run_dir'] or args['report_only'] else 'qualify_report_base')
        if args['compare_to']:
            checked.append('qualify_compare_to')
        if args['tape_ratio_from']:
            checked.append('qualify_tape_ratio_from')
        return {'checked': checked, 'hosts_checked': len(hosts)}


HOST_VARIABLES = ('tapeops_backup', 'tapeops_drives')


def host_settings(hosts, task_vars):
    """{host: {variable: value}} of the hosts' own HOST_VARIABLES (host and group variables, templated)."""
    hostvars = task_vars.get('hostvars') or {}
    out = {}
    for host in hosts:
        own = hostvars.get(host) or {}
        out[host] = dict((name, own.get(name)) for name in HOST_VARIABLES)
    return out


def renamed_names(hosts, task_vars):
    """The earlier variable names (_inputs.RENAMED) set for this task's host (extra and play vars too) or any host."""
    hostvars = task_vars.get('hostvars') or {}
    scopes = [task_vars] + [hostvars.get(host) or {} for host in hosts]
    return sorted(set(name for scope in scopes for name in _inputs.RENAMED if name in scope))


def directory_problems(args):
    """The run directory (or the report base a new one goes under) and, for a rebuild, the run to rebuild."""
    run_dir = args['run_dir']
    if args['report_only']:
        if not run_dir:
            return ['qualify_report_only is true but qualify_run_dir is not set: name the run to rebuild, for '
                    'example -e qualify_run_dir=reports/20261123T101500Z.']
        if not _run.has_hosts(run_dir):
            return ['qualify_run_dir=%s holds no host results (hosts/*.json) to rebuild the reports from: name the '
                    'directory of an earlier run, for example reports/20261123T101500Z.' % run_dir]
    found = []
    if run_dir:
        problem = _inputs.directory_problem(run_dir, 'qualify_run_dir')
    else:
        problem = _inputs.directory_problem(args['report_base'], 'qualify_report_base')
    if problem:
        found.append(problem)
    compare_to = args['compare_to']
    if compare_to and run_dir and os.path.realpath(compare_to) == os.path.realpath(run_dir):
        found.append("qualify_compare_to is this run's own directory (%s): give an earlier run." % run_dir)
    ratio_from = args['tape_ratio_from']
    # a directory that does not exist (yet) is no error: each verdict says why its drive's ratio was not used
    if ratio_from and os.path.lexists(ratio_from) and not os.path.isdir(ratio_from):
        found.append('qualify_tape_ratio_from=%s is a file, not a directory: give the directory of an earlier '
                     'observe run (it holds hosts/<host>.json), for example reports/observe-20261127T220000Z.'
                     % ratio_from)
    return found
