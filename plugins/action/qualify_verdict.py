# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Controller side of tapeops.qualify.qualify_verdict (documentation in plugins/modules/)."""

from __future__ import annotations

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import _report, _report_mechanics

ARGUMENT_SPEC = {
    'report_dir': {'type': 'path', 'required': True},
    'status': {'type': 'str', 'default': 'ok', 'choices': ['ok', 'failed']},
    'error': {'type': 'str'},
    'drives': {'type': 'list', 'elements': 'dict', 'default': []},
    'source': {'type': 'dict'},
    'write_benchmarks': {'type': 'list', 'elements': 'dict', 'default': []},
    'drive_settings': {'type': 'list', 'elements': 'dict', 'default': []},
    'backup': {'type': 'dict', 'default': {}},
    'memory_total_mb': {'type': 'int'},
    'options': {'type': 'dict', 'default': {}},
    'target_generation': {'type': 'str'},
    'run': {'type': 'dict', 'default': {}},
    'preflight': {'type': 'dict'},
    'host_facts': {'type': 'dict', 'default': {}},
    'media': {'type': 'dict'},
    'mechanics': {'type': 'raw'},
}


class ActionModule(ActionBase):

    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        del tmp
        validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        del validation
        host = (task_vars or {}).get('inventory_hostname') or 'localhost'
        path = _report.host_json_path(args['report_dir'], host)
        if args['status'] == 'failed':
            doc = _report.host_document(host, _report.STATUS_FAILED, source=args['source'], run=args['run'],
                                        host_facts=args['host_facts'], preflight=args['preflight'],
                                        error=args['error'] or 'The host failed before its verdict.',
                                        media=_report.media_section(args['media']),
                                        mechanics=_report_mechanics.mechanics_section(args['mechanics']))
        else:
            options = dict(args['options'])
            try:
                doc = _report.assemble(
                    host, drives_info=args['drives'], source=args['source'],
                    write_results=args['write_benchmarks'], drive_settings=args['drive_settings'],
                    backup=args['backup'], memory_total_mb=args['memory_total_mb'], options=options,
                    target_generation=args['target_generation'], run=args['run'],
                    preflight=args['preflight'], host_facts=args['host_facts'], media=args['media'],
                    mechanics=args['mechanics'])
            except (_report.ReportError, ValueError) as exc:
                raise AnsibleActionFail(str(exc))
        result['verdicts'] = [dict(d['verdict'], id=d['id']) for d in doc['drives'] if d.get('verdict')]
        result['drive_errors'] = [{'id': d['id'], 'error': d['error']} for d in doc['drives'] if d.get('error')]
        result['worst_class'] = doc['worst_class']
        result['status'] = doc['status']
        result['path'] = path
        if self._task.check_mode:
            result['changed'] = False
            result['msg'] = 'Check mode: would write %s.' % path
            return result
        try:
            _report.write_host(args['report_dir'], doc)
        except OSError as exc:
            raise AnsibleActionFail('Cannot write %s: %s. Choose a writable qualify_report_dir.' % (path, exc))
        result['changed'] = True
        result['msg'] = '; '.join('%s: %s' % (v['id'], v['summary']) for v in result['verdicts']) or (
            doc['error'] or 'no verdict')
        return result
