#!/usr/bin/python
# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: netbackup_buffers
short_description: Set the data buffer settings of a NetBackup media server
version_added: 0.1.0
description:
  - Writes the files a Linux/UNIX NetBackup media server keeps its buffer settings in, each holding one decimal
    number as C(echo N > FILE) writes it. C(<path>/db/config/SIZE_DATA_BUFFERS) (the tape block size bptm writes),
    C(<path>/db/config/NUMBER_DATA_BUFFERS), C(<path>/db/config/NUMBER_DATA_BUFFERS_RESTORE), C(<path>/NET_BUFFER_SZ).
  - A file is compared by the number it holds, as bptm reads it; a file that already holds the number (with or
    without a line end, as Puppet or C(echo) wrote it) is left as it is.
  - Values are checked before any file changes. C(SIZE_DATA_BUFFERS) must be a multiple of 1024 bytes, which
    NetBackup would otherwise round down. It must also be at most O(hba_max_transfer_bytes) when that is given.
  - Files are replaced atomically, with a backup. bptm reads them when a job starts, so no daemon is restarted.
    Images already written keep the block size they were written with; NetBackup restores them with it.
author:
  - tapeops.qualify contributors (@tapeops)
extends_documentation_fragment:
  - tapeops.qualify._attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
  idempotent:
    description: When run twice with the same parameters, the second run changes nothing.
    support: full
options:
  path:
    description: The NetBackup directory of the media server; it must exist, with its C(db/config).
    type: path
    default: /usr/openv/netbackup
  size_data_buffers:
    description: C(SIZE_DATA_BUFFERS), bytes, a multiple of 1024 (262144 for 256 KiB blocks). Not given, left alone.
    type: int
  number_data_buffers:
    description: C(NUMBER_DATA_BUFFERS), at least 1. Not given, left alone.
    type: int
  number_data_buffers_restore:
    description: C(NUMBER_DATA_BUFFERS_RESTORE), at least 1. Not given, left alone.
    type: int
  net_buffer_sz:
    description:
      - C(NET_BUFFER_SZ), bytes; 0 lets the operating system tune the socket buffer, as Veritas recommends. Not
        given, left alone.
    type: int
  hba_max_transfer_bytes:
    description: Refuse a C(SIZE_DATA_BUFFERS) above this (the HBA path's maximum transfer, from st_preflight_info).
    type: int
  backup:
    description: Keep a timestamped copy of each changed file next to it.
    type: bool
    default: true
notes:
  - Run it as root (C(become)); the files are root's.
seealso:
  - module: tapeops.qualify.netbackup_buffers_info
'''

EXAMPLES = r'''
- name: 256 KiB tape blocks, 128 buffers per drive, the socket buffer left to Linux
  tapeops.qualify.netbackup_buffers:
    size_data_buffers: 262144
    number_data_buffers: 128
    net_buffer_sz: 0
    hba_max_transfer_bytes: "{{ st_tuning_preflight.hba_max_transfer_bytes | default(omit) }}"
  become: true
'''

RETURN = r'''
changes:
  description: One entry per file changed (or to change, in check mode), with its text before (null, no file) and after.
  returned: always
  type: list
  elements: dict
  sample: [{"name": "SIZE_DATA_BUFFERS", "path": "/usr/openv/netbackup/db/config/SIZE_DATA_BUFFERS",
            "before": "65536", "after": "262144"}]
backup_files:
  description: Copies of the previous files.
  returned: always
  type: list
  elements: str
block_size_changed:
  description: C(SIZE_DATA_BUFFERS), the block size of new tape images, changed.
  returned: always
  type: bool
'''

import os

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_bytes, to_text

from ansible_collections.tapeops.qualify.plugins.module_utils._config import _netbackup
from ansible_collections.tapeops.qualify.plugins.module_utils._config._textfile import write_text_atomic


def _before_text(path):
    """The file's bytes as text for the diff ('' when there is none)."""
    if not os.path.isfile(path):
        return ''
    with open(path, 'rb') as handle:
        return to_text(handle.read(_netbackup.MAX_FILE_BYTES + 1), errors='surrogate_or_replace')


def plan(netbackup_dir, wanted):
    """[(key, path, current setting, text to write)] of the files to change; raises ValueError when one cannot be."""
    out = []
    for key, value in wanted:
        path = _netbackup.file_path(key, netbackup_dir)
        current = _netbackup.read_setting(key, path)
        if os.path.lexists(path) and not os.path.isfile(path):
            raise ValueError('%s is not a regular file: remove it by hand, NetBackup reads a file holding one number.'
                             % path)
        if current['error'] is None and current['text'] == str(value):
            continue
        out.append((key, path, current, _netbackup.file_text(value)))
    return out


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type='path', default=_netbackup.NETBACKUP_DIR),
            size_data_buffers=dict(type='int'),
            number_data_buffers=dict(type='int'),
            number_data_buffers_restore=dict(type='int'),
            net_buffer_sz=dict(type='int'),
            hba_max_transfer_bytes=dict(type='int'),
            backup=dict(type='bool', default=True),
        ),
        supports_check_mode=True,
    )
    p = module.params
    netbackup_dir = p['path']
    wanted = [(key, p[key]) for key, dummy, dummy2, dummy3 in _netbackup.SETTINGS if p[key] is not None]
    refused = [why for why in (_netbackup.validate(key, value, p['hba_max_transfer_bytes']) for key, value in wanted)
               if why]
    if refused:
        module.fail_json(msg='%s Nothing was changed.' % ' '.join(refused))
    config = _netbackup.config_dir(netbackup_dir)
    if wanted and not os.path.isdir(config):
        module.fail_json(msg='%s does not exist: install the NetBackup media server on this host, or set path '
                             '(netbackup_buffers_path) to its NetBackup directory.' % config)
    try:
        todo = plan(netbackup_dir, wanted)
    except ValueError as exc:
        module.fail_json(msg='%s Nothing was changed.' % exc)

    result = dict(changed=bool(todo), backup_files=[],
                  block_size_changed=any(key == 'size_data_buffers' for key, dummy, dummy2, dummy3 in todo),
                  changes=[{'name': current['name'], 'path': path,
                            'before': current['text'] if current['source'] == 'configuration' else None,
                            'after': text.strip()} for dummy, path, current, text in todo])
    if module._diff:
        result['diff'] = [dict(before=_before_text(path), after=text,
                               before_header=path if os.path.exists(path) else '%s (absent)' % path,
                               after_header=path) for dummy, path, dummy2, text in todo]
    if todo and not module.check_mode:
        for dummy, path, dummy2, text in todo:
            if p['backup'] and os.path.exists(path):
                result['backup_files'].append(module.backup_local(path))
            write_text_atomic(module, path, to_bytes(text))
    module.exit_json(**result)


if __name__ == '__main__':
    main()
