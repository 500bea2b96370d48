# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Controller side of tapeops.qualify.qualify_fixes_info (documentation in plugins/modules/)."""

from __future__ import annotations

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _fixes

ARGUMENT_SPEC = {
    'run_dir': {'type': 'path', 'required': True},
    'host': {'type': 'str'},
    'software': {'type': 'str'},
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
        host = args['host'] or (task_vars or {}).get('inventory_hostname') or 'localhost'
        try:
            plan = _fixes.plan(args['run_dir'], host, args['software'] or None)
        except _fixes.FixesError as exc:
            raise AnsibleActionFail(str(exc))
        result.update(plan)
        result['changed'] = False
        if plan['skipped']:
            result['msg'] = 'Skipped: %s' % plan['reason']
            return result
        result['msg'] = '%s: %s; %d fix(es) left to do by hand.' % (
            host, '; '.join(plan['applied']) if plan['applied'] else 'no fix a role applies', len(plan['manual']))
        return result
