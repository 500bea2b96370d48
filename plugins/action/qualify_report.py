# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Controller side of tapeops.qualify.qualify_report (documentation in plugins/modules/)."""

from __future__ import annotations

import os

from ansible_collections.tapeops.qualify.plugins.module_utils import _run, _words
from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import _render, _report
from ansible_collections.tapeops.qualify.plugins.plugin_utils._action import QualifyAction, unwritable

ARGUMENT_SPEC = {
    'report_dir': {'type': 'path', 'required': True},
    'expected_hosts': {'type': 'list', 'elements': 'str', 'default': []},
    'run': {'type': 'dict', 'default': {}},
    'failing_classes': {'type': 'list', 'elements': 'str', 'default': list(_report.DEFAULT_FAILING_CLASSES),
                        'choices': ['STREAMING', 'SPEED-MATCHED', 'SHOE-SHINING', 'MISCONFIGURED']},
    'fail_on_failing_drives': {'type': 'bool', 'default': False},
    'compare_to': {'type': 'path'},
    'fail_on_regression': {'type': 'bool', 'default': False},
}


class ActionModule(QualifyAction):

    ARGUMENT_SPEC = ARGUMENT_SPEC

    def act(self, args, task_vars):
        if self.check_mode:
            if not os.path.isdir(args['report_dir']):
                # the qualify playbook in check mode measures and writes nothing, not even its run directory
                return {'hosts': 0, 'msg': _words.reports_check_mode(args['report_dir'], False)}
            docs = _render.read_run(args['report_dir'], args['expected_hosts'])
            return {'hosts': len(docs), 'msg': _words.reports_check_mode(args['report_dir'], True)}
        try:
            out = _render.write_fleet(args['report_dir'], args['expected_hosts'], args['run'],
                                      tuple(args['failing_classes']), compare_to=args['compare_to'],
                                      fail_on_regression=args['fail_on_regression'])
        except OSError as exc:
            raise unwritable('the reports in %s' % args['report_dir'], exc)
        result = fleet_result(out)
        if out.get('comparison_error'):
            result['comparison_error'] = out['comparison_error']
        if out.get('against_observed') is not None:
            result['against_observed'] = out['against_observed']
        msg = message(result, out.get('comparison'), args, out.get('against_observed'))
        result.update(changed=True, paths=out['paths'], msg=msg)
        return result


def fleet_result(out):
    """The result's fleet, failing, missing and regressions of what ``_render.write_fleet`` returned."""
    rows = _report.rows(out['docs'])
    return {
        'fleet': [{'host': r['host'], 'drive': r['drive'], 'label': r['label'],
                   'class': _report.row_class(r) or ('BUSY' if r['status'] == _run.STATUS_BUSY else None),
                   'status': r['status'], 'summary': summary(r)} for r in rows],
        'failing': [{'host': r['host'], 'drive': r['drive'], 'class': _report.row_class(r),
                     'summary': (r['verdict'] or {}).get('summary') or (summary(r) if r['observe'] else None)}
                    for r in out['failing']],
        # a host with a BUSY drive misses that drive's verdict (qualify_fail_on_missing fails it too)
        'missing': [d['host'] for d in out['docs'] if d['status'] != _run.STATUS_OK or any(
            r['host'] == d['host'] and r['status'] == _run.STATUS_BUSY for r in rows)],
        'busy': [{'host': r['host'], 'drive': r['drive'], 'reason': r['error']} for r in rows
                 if r['status'] == _run.STATUS_BUSY],
        'regressions': [{'host': c['host'], 'drive': c['drive'], 'reasons': c['reasons']}
                        for c in (out.get('comparison') or {}).get('changes', []) if c['status'] == 'regressed'],
    }


def summary(row):
    """A fleet row's sentence: its verdict's summary, its observed drive's, else its error."""
    if row['observed']:
        return _words.observed_summary(row['observed'])
    return (row['verdict'] or {}).get('summary') or row['error']


def message(result, comparison, args, against=None):
    """The task's message; sets ``failed`` when a regression or a failing drive fails the task by the options."""
    msg = _words.fleet_message(args['report_dir'], result['fleet'], comparison, args['compare_to'],
                               result['regressions'])
    if against is not None:
        msg += '. %s' % _words.against_observed_line(against)
    if result.get('comparison_error'):
        msg = _words.not_compared(msg, result['comparison_error'], rebuild_hint(args))
        if args['fail_on_regression']:
            # a comparison that cannot be made shows no regression, which is not the same as none
            result['failed'] = True
            return _words.no_comparison_fails(args['report_dir'], result['comparison_error'], rebuild_hint(args))
    if args['fail_on_regression'] and result['regressions']:
        result['failed'] = True
        msg = _words.regressed(result['regressions'], args['compare_to'], args['report_dir'])
    if args['fail_on_failing_drives'] and result['failing']:
        result['failed'] = True
        msg = _words.failing_drives(result['failing'], args['failing_classes'], args['report_dir'])
    return msg


def rebuild_hint(args):
    """How to rebuild this run's reports against the right earlier run (the role's report-only mode)."""
    playbook = {'upgrade_check': 'upgrade_check', 'observe': 'observe'}.get((args.get('run') or {}).get('mode'),
                                                                            'qualify')
    earlier = os.path.dirname(os.path.normpath(args['compare_to'] or '')) or '.'
    runs = earlier_runs(earlier, exclude=(args['report_dir'], ))
    return _words.rebuild_hint(playbook, args['report_dir'], earlier, runs)


def earlier_runs(parent, exclude=(), most=5):
    """The newest run directories (holding hosts/) under ``parent``, by name, newest first."""
    skip = set(os.path.realpath(p) for p in exclude)
    try:
        names = sorted(os.listdir(parent), reverse=True)
    except OSError:
        return []
    found = [n for n in names if _run.has_hosts(os.path.join(parent, n))
             and os.path.realpath(os.path.join(parent, n)) not in skip]
    return found[:most]
