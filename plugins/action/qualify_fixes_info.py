# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Controller side of tapeops.qualify.qualify_fixes_info (documentation in plugins/modules/)."""

from __future__ import annotations


from ansible_collections.tapeops.qualify.plugins.module_utils import _words
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _fixes
from ansible_collections.tapeops.qualify.plugins.plugin_utils._action import QualifyAction, host_of

ARGUMENT_SPEC = {
    'run_dir': {'type': 'path', 'required': True},
    'host': {'type': 'str'},
    'software': {'type': 'str'},
}


class ActionModule(QualifyAction):

    ARGUMENT_SPEC = ARGUMENT_SPEC
    ERRORS = (_fixes.FixesError,)

    def act(self, args, task_vars):
        host = args['host'] or host_of(task_vars)
        result = _fixes.plan(args['run_dir'], host, args['software'] or None)
        result['msg'] = _words.fixes_message(host, result)
        return result
