# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Controller side of tapeops.qualify.qualify_amanda_tapetype (documentation in plugins/modules/)."""

from __future__ import annotations

from ansible_collections.tapeops.qualify.plugins.module_utils import _words
from ansible_collections.tapeops.qualify.plugins.module_utils._config import _amanda as _amanda_conf
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _amanda, _fixes
from ansible_collections.tapeops.qualify.plugins.plugin_utils._action import QualifyAction, host_of

ARGUMENT_SPEC = {
    'run_dir': {'type': 'path', 'required': True},
    'host': {'type': 'str'},
    'drive': {'type': 'str'},
    'name': {'type': 'str'},
    'hardware_compression': {'type': 'bool', 'default': False},
}


class ActionModule(QualifyAction):

    ARGUMENT_SPEC = ARGUMENT_SPEC
    ERRORS = (_fixes.FixesError, _amanda.TapetypeError, _amanda_conf.AmandaConfError)

    def act(self, args, task_vars):
        host = args['host'] or host_of(task_vars)
        doc, reason = _fixes.load_host(args['run_dir'], host)
        if doc is None:
            result = {'skipped': True, 'reason': reason}
        else:
            made = _amanda.tapetypes(doc, args['drive'], args['name'], args['hardware_compression'])
            result = {'skipped': False, 'tapetypes': made['tapetypes'], 'skipped_drives': made['skipped'],
                      'text': '\n'.join(t['text'] for t in made['tapetypes'])}
        result['msg'] = _words.tapetype_message(host, result)
        return result
