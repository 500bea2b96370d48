#!/usr/bin/python
# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: netbackup_buffers_info
short_description: Read the buffer settings a NetBackup media server's bptm runs with
version_added: 0.1.0
description:
  - Reads the files a Linux/UNIX NetBackup media server keeps its data buffer settings in, as bptm reads them when
    a job starts. C(<path>/db/config/SIZE_DATA_BUFFERS) (the size of one shared data buffer, which is the tape
    block size bptm writes), C(<path>/db/config/NUMBER_DATA_BUFFERS), C(<path>/db/config/NUMBER_DATA_BUFFERS_RESTORE)
    and C(<path>/NET_BUFFER_SZ) (the TCP socket buffer towards the client; in the NetBackup directory, not in
    C(db/config)).
  - Each file holds one decimal number. A C(SIZE_DATA_BUFFERS) that is not a multiple of 1024 is rounded down as
    NetBackup does, and the setting says so in its C(note).
  - A file that does not exist has NetBackup's documented default, marked as the default with its source (the
    NetBackup Backup Planning and Performance Tuning Guide; C(SIZE_DATA_BUFFERS) 65536 for tape). Where the
    default could not be verified in Veritas's documentation (C(NUMBER_DATA_BUFFERS), C(NET_BUFFER_SZ)) the value
    is null, C(source) is C(unknown) and C(basis) says why.
  - A file that cannot be read or that bptm would not take as a number (empty, words, a byte-order mark, UTF-16
    text, a negative number) is a setting with an C(error) saying what to write instead; the module does not fail
    on the host's files. A host without the NetBackup directory gets RV(error) and no settings.
  - There is no C(SIZE_DATA_BUFFERS_RESTORE) in NetBackup; restores use the size the image was written with.
author:
  - tapeops.qualify contributors (@tapeops)
extends_documentation_fragment:
  - tapeops.qualify._attributes
  - tapeops.qualify._attributes.info_module
options:
  path:
    description: The NetBackup directory of the media server.
    type: path
    default: /usr/openv/netbackup
notes:
  - Read it as root (C(become)); the files are root's.
seealso:
  - module: tapeops.qualify.netbackup_buffers
'''

EXAMPLES = r'''
- name: Read what bptm runs with
  tapeops.qualify.netbackup_buffers_info:
  become: true
  register: nbu

- name: The tape block size and where it comes from
  ansible.builtin.debug:
    msg: "{{ nbu.size_data_buffers.value }} bytes ({{ nbu.size_data_buffers.source }})"
'''

RETURN = r'''
netbackup_dir:
  description: The NetBackup directory read (O(path)).
  returned: always
  type: str
  sample: /usr/openv/netbackup
config_dir:
  description: Its C(db/config) directory.
  returned: always
  type: str
  sample: /usr/openv/netbackup/db/config
size_data_buffers:
  description: C(SIZE_DATA_BUFFERS), bytes, the tape block size bptm writes (default 65536 for tape); null when RV(error).
  returned: always
  type: dict
  sample: {"name": "SIZE_DATA_BUFFERS", "path": "/usr/openv/netbackup/db/config/SIZE_DATA_BUFFERS",
           "text": "262144", "value": 262144, "source": "configuration", "basis": null, "error": null, "note": null}
  contains:
    name:
      description: NetBackup's name of the setting (the file name).
      type: str
    path:
      description: The file read, or looked for.
      type: str
    text:
      description: What the file holds, without the space around it; null when there is no file or it is not text.
      type: str
    value:
      description: What bptm uses; null when it is not known (an error, or no documented default).
      type: int
    source:
      description: C(configuration) (the file), C(default) (no file, documented default) or C(unknown).
      type: str
    basis:
      description: Where the default is documented, or why it is not known.
      type: str
    error:
      description: Why bptm would not take what the file holds, and what to write instead; or null.
      type: str
    note:
      description: How bptm's value differs from the text (a size rounded down to a multiple of 1024; 0 for the socket buffer).
      type: str
number_data_buffers:
  description:
    - C(NUMBER_DATA_BUFFERS), the shared data buffers of a drive (of each multiplexed stream); null when RV(error).
    - The same keys as RV(size_data_buffers).
  returned: always
  type: dict
number_data_buffers_restore:
  description:
    - C(NUMBER_DATA_BUFFERS_RESTORE), the same for restores; null when RV(error).
    - The same keys as RV(size_data_buffers).
  returned: always
  type: dict
net_buffer_sz:
  description:
    - C(NET_BUFFER_SZ), bytes of TCP socket buffer bptm asks for (0, the operating system tunes it); null when RV(error).
    - The same keys as RV(size_data_buffers).
  returned: always
  type: dict
error:
  description: Why nothing was read (the NetBackup directory does not exist), or null.
  returned: always
  type: str
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.tapeops.qualify.plugins.module_utils._config import _netbackup
from ansible_collections.tapeops.qualify.plugins.module_utils._records import NetBackupBuffers


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type='path', default=_netbackup.NETBACKUP_DIR),
        ),
        supports_check_mode=True,
    )
    read = _netbackup.read_buffers(module.params['path'])
    module.exit_json(changed=False, **NetBackupBuffers.from_dict(read).to_dict())


if __name__ == '__main__':
    main()
