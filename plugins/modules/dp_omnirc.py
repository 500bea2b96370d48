#!/usr/bin/python
# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: dp_omnirc
short_description: Manage keys in a Data Protector Media Agent omnirc file
version_added: 0.1.0
description:
  - Sets, changes or removes C(KEY=value) lines in a Data Protector C(omnirc) file
    (C(/opt/omni/.omnirc) on Linux Media Agents).
  - Comments, blank lines and keys it is not asked about are kept where they are; one key per line.
  - When the file does not exist it is created from the template Data Protector installs
    (C(/opt/omni/.omnirc.TMPL)); a commented-out example C(#KEY=...) in the file is kept and the
    active line is added right after it.
  - The file is written through a temporary file and an atomic rename. The Media Agent reads the
    file when a session starts, so no restart is needed.
author:
  - tapeops.qualify contributors (@tapeops)
extends_documentation_fragment:
  - tapeops.qualify._attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
options:
  path:
    description: The omnirc file.
    type: path
    default: /opt/omni/.omnirc
  template:
    description:
      - File to copy when O(path) does not exist. Defaults to C(.omnirc.TMPL) next to O(path).
      - When neither exists the module fails (Data Protector does not seem to be installed there).
    type: path
  keys:
    description:
      - Keys to set, a mapping of KEY to value. Keys are upper-case letters, digits and underscores
        (Data Protector's format); booleans become C(1)/C(0).
      - A C(null) value removes the key's active lines.
    type: dict
    required: true
  backup:
    description: Keep a timestamped copy of the previous file next to it when it changes.
    type: bool
    default: true
'''

EXAMPLES = r'''
# The two lines of seed 001 (HP LTO-4 FH SAS, Data Protector A.09.07, CentOS 6.8): OB2FORCESCSI takes WFM,
# not 1. An omnirc that has OB2FORCESCSI=1 is corrected to WFM (with a diff and a backup).
- name: Immediate file marks for the Linux Media Agent (DP A.09.05 and later; st driver with MTWEOFI)
  tapeops.qualify.dp_omnirc:
    keys:
      OB2FORCESCSI: WFM
      OB2IMMEDFM: 1

- name: Remove a key
  tapeops.qualify.dp_omnirc:
    path: /opt/omni/.omnirc
    keys:
      OB2OLDKEY: null
'''

RETURN = r'''
changes:
  description: Keys whose active value changed, with the values before and after (C(null) means absent).
  returned: always
  type: list
  elements: dict
  sample: [{"key": "OB2IMMEDFM", "before": null, "after": "1"}]
created:
  description: Whether the file was (or, in check mode, would be) created from the template.
  returned: always
  type: bool
keys:
  description: All active keys of the resulting file.
  returned: always
  type: dict
  sample: {"OB2FORCESCSI": "WFM", "OB2IMMEDFM": "1"}
backup_file:
  description: The copy of the previous file.
  returned: when a backup was made
  type: str
'''

import os

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_bytes, to_text

from ansible_collections.tapeops.qualify.plugins.module_utils._config._omnirc import (
    OmnircError,
    parse_omnirc,
    update_omnirc,
    validate_keys,
)
from ansible_collections.tapeops.qualify.plugins.module_utils._config._textfile import write_text_atomic


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type='path', default='/opt/omni/.omnirc'),
            template=dict(type='path'),
            keys=dict(type='dict', required=True, no_log=False),
            backup=dict(type='bool', default=True),
        ),
        supports_check_mode=True,
    )
    path = module.params['path']
    template = module.params['template'] or os.path.join(os.path.dirname(path), '.omnirc.TMPL')
    try:
        keys = validate_keys(module.params['keys'])
    except OmnircError as exc:
        module.fail_json(msg=str(exc))

    created = not os.path.exists(path)
    source = template if created else path
    if not os.path.isfile(source):
        module.fail_json(msg='Neither %s nor its template %s exists: install the Data Protector Media Agent '
                             'on this host, or set the omnirc path (dp_omnirc_omni_home) to where it lives.'
                             % (path, template))
    with open(source, 'rb') as handle:
        before = to_text(handle.read(), errors='surrogate_or_strict')
    try:
        after, changes = update_omnirc(before, keys)
    except OmnircError as exc:
        module.fail_json(msg=str(exc))

    changed = created or bool(changes)
    result = dict(changed=changed, created=created, changes=changes, keys=parse_omnirc(after))
    if module._diff:
        result['diff'] = dict(before='' if created else before, after=after,
                              before_header=path if not created else '%s (absent)' % path,
                              after_header=path if not created else '%s (from %s)' % (path, template))
    if changed and not module.check_mode:
        if not created and module.params['backup']:
            result['backup_file'] = module.backup_local(path)
        write_text_atomic(module, path, to_bytes(after), reference=source)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
