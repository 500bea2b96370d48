#!/usr/bin/python
# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: bacula_sd_info
short_description: Read the tape Device settings a Bacula or Bareos storage daemon runs with
version_added: 0.1.0
description:
  - Reads the storage daemon's configuration on the host as the daemon reads it, and returns each tape Device
    resource with its Archive Device, Media Type, Maximum and Minimum Block Size, Maximum File Size, Spool Directory,
    Maximum Spool Size, Maximum Job Spool Size and Maximum Concurrent Jobs.
  - Bacula, C(/etc/bacula/bacula-sd.conf) and the files it includes (C(@path) or C(@"path") as the first word of a
    line, nested up to 16 deep; a file that includes itself is read once). Bareos, C(/etc/bareos), its
    C(bareos-sd.conf) when there is one, else every C(bareos-sd.d/*/*.conf) (the device resources are in
    C(bareos-sd.d/device/)), with their includes, whose wildcards are expanded as Bareos does. Or a file or
    directory given in O(path).
  - A relative include is opened from the directory the daemon starts in (O(relative_to)), as the daemon opens it,
    not from the including file's directory. A command include (C(@|command)) is not run.
  - A directive the Device does not set has the application's documented default, marked as the default with its
    source (Bacula C(src/stored/stored_conf.c), C(block.h), C(spool.c), C(reserve.c); Bareos
    C(core/src/stored/stored_conf.cc) and the same files). Where a default changed between versions (Bareos 23.0.0,
    Maximum Block Size 64512 to 1048576 bytes, Maximum Concurrent Jobs no limit to 1), the installed daemon's
    version is read from C(bacula-sd -?) or C(bareos-sd --version); when it cannot be read the default is
    C(unknown).
  - Whether a job spools is the Job resource's C(Spool Data) directive, in the Director's configuration; it is not
    read here. Only where spooling goes and how much it may hold is a Device setting. A Bareos Director's Pool may
    also set a volume's Maximum Block Size; that is not read here either.
  - The Archive Device is followed to its device node (C(/dev/tape/by-id) and other links), and its st device
    given (C(st0) for C(/dev/nst0), C(/dev/st0) and their mode nodes), so that the Device can be matched to a
    drive tape_drive_info found.
  - A file that cannot be read (missing, permission denied, not text, malformed, an include cycle) is listed in
    RV(not_read) with the reason, and the rest is still read; the module does not fail on the host's files.
author:
  - tapeops.qualify contributors (@tapeops)
extends_documentation_fragment:
  - tapeops.qualify._attributes
  - tapeops.qualify._attributes.info_module
options:
  software:
    description: The storage daemon's application.
    type: str
    choices: [bacula, bareos]
    required: true
  path:
    description:
      - The configuration to read, a file, or a directory (Bareos, C(bareos-sd.conf) or C(bareos-sd.d/); Bacula,
        C(bacula-sd.conf)).
      - Default C(/etc/bacula/bacula-sd.conf) for Bacula, C(/etc/bareos) for Bareos.
    type: path
  relative_to:
    description:
      - The directory relative C(@) includes are opened from, the storage daemon's working directory when it
        starts. The packaged systemd units set none, so it is C(/).
    type: path
    default: /
  daemon_version:
    description:
      - The storage daemon's version (for example C(23.0.1)), for the defaults that changed between versions.
      - Default, read from the installed C(bacula-sd) or C(bareos-sd).
    type: str
'''

EXAMPLES = r'''
- name: Read what the Bacula storage daemon runs with
  tapeops.qualify.bacula_sd_info:
    software: bacula
  register: sd

- name: Each tape Device's block size and where it comes from
  ansible.builtin.debug:
    msg: "{{ item.name }} on {{ item.archive_device }}: {{ item.maximum_block_size.value }} ({{ item.maximum_block_size.source }})"
  loop: "{{ sd.devices }}"

- name: Bareos, configuration directory
  tapeops.qualify.bacula_sd_info:
    software: bareos
    path: /etc/bareos
'''

RETURN = r'''
software:
  description: The application read for, as given.
  returned: always
  type: str
  sample: bacula
config_path:
  description: The file or directory read (O(path) or the default).
  returned: always
  type: str
  sample: /etc/bacula/bacula-sd.conf
layout:
  description: C(file) (one file and its includes) or C(directory) (Bareos C(bareos-sd.d/*/*.conf)); null when nothing was found.
  returned: always
  type: str
relative_to:
  description: The directory relative includes were opened from.
  returned: always
  type: str
  sample: /
version:
  description: The storage daemon's version used for the defaults (C(daemon_version) or the installed daemon's), or null.
  returned: always
  type: str
  sample: 9.6.7
files:
  description: The files read, in the daemon's order (each include where it stands).
  returned: always
  type: list
  elements: str
not_read:
  description: What was not read, each with C(path), C(reason) and C(included_from) (file:line of the C(@) line, or null).
  returned: always
  type: list
  elements: dict
  sample: [{"path": "/etc/bacula/devices.conf", "reason": "it does not exist", "included_from": "/etc/bacula/bacula-sd.conf:40"}]
working_directory:
  description: The Storage resource's Working Directory (the spool directory when a Device sets none), or null.
  returned: always
  type: str
devices:
  description:
    - The tape Device resources (Device Type = Tape, or an Archive Device that is an st device). Every setting is a
      mapping of C(text) (as written, null when not set), C(value) (bytes for sizes, a number for Maximum Concurrent
      Jobs, a path for Spool Directory; null when unknown), C(source) (C(configuration), C(default) or C(unknown)),
      C(basis) (where the default is documented, or why it is unknown), C(where) (file:line it was set) and
      C(error) (why the daemon would refuse what is written).
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: The Device's Name.
      type: str
    file:
      description: The file that holds the resource.
      type: str
    line:
      description: The line the resource starts on in that file.
      type: int
    archive_device:
      description: The Archive Device as written.
      type: str
    device_path:
      description: The device node it leads to on the host (links followed), null when it does not exist.
      type: str
    st:
      description: Its st device (C(st0)), null when it is not one.
      type: str
    device_note:
      description: Why there is no st device, or null.
      type: str
    device_type:
      description: The Device Type as written, or null.
      type: str
    media_type:
      description: The Media Type.
      type: str
    maximum_block_size:
      description: Maximum Block Size, bytes (Bacula default 64512; Bareos 64512 before 23.0.0, 1048576 since).
      type: dict
    minimum_block_size:
      description: Minimum Block Size, bytes (default 0, no minimum).
      type: dict
    maximum_file_size:
      description: Maximum File Size, bytes, the data between two file marks (default 1000000000).
      type: dict
    spool_directory:
      description: Spool Directory (default the Storage resource's Working Directory). Spool Data, whether a job spools, is a Job directive.
      type: dict
    maximum_spool_size:
      description: Maximum Spool Size, bytes (default 0, no limit).
      type: dict
    maximum_job_spool_size:
      description: Maximum Job Spool Size, bytes (default 0, no limit).
      type: dict
    maximum_concurrent_jobs:
      description: Maximum Concurrent Jobs on the Device (Bacula default 0, no limit; Bareos 1 since 23.0.0).
      type: dict
  sample: [{"name": "LTO-7", "archive_device": "/dev/tape/by-id/scsi-35000e11168f70001-nst", "st": "st0",
            "maximum_block_size": {"text": "262144", "value": 262144, "source": "configuration",
                                   "where": "/etc/bacula/bacula-sd.conf:52", "basis": null, "error": null}}]
other_devices:
  description: The Device resources that are not tape drives (files, FIFOs), with C(name), C(archive_device), C(device_type), C(file), C(line).
  returned: always
  type: list
  elements: dict
error:
  description: Why nothing was read (the configuration is missing or unreadable), or null.
  returned: always
  type: str
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.tapeops.qualify.plugins.module_utils._config import _sd_config
from ansible_collections.tapeops.qualify.plugins.module_utils._records import StorageDaemonConfig
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _cli

# How each daemon prints its version: Bacula's usage (-?), Bareos 22 and later --version (older: the usage)
VERSION_ARGS = {'bacula': ['-?'], 'bareos': ['--version']}


def installed_version(software):
    """The installed daemon's (major, minor, patch), or None when it is not installed or says no version."""
    tool = _cli.find_tool(_sd_config.DAEMONS[software], required=False)
    if not tool:
        return None
    try:
        result = _cli.run([tool] + VERSION_ARGS[software], timeout=30)
    except _cli.CliError:
        return None
    return _sd_config.parse_daemon_version('%s\n%s' % (result.stdout, result.stderr))


def main():
    module = AnsibleModule(
        argument_spec=dict(
            software=dict(type='str', required=True, choices=['bacula', 'bareos']),
            path=dict(type='path'),
            relative_to=dict(type='path', default='/'),
            daemon_version=dict(type='str'),
        ),
        supports_check_mode=True,
    )
    p = module.params
    if p['daemon_version']:
        version = _sd_config.parse_daemon_version(p['daemon_version'])
        if version is None:
            module.fail_json(msg='daemon_version %r is not a version: give it as the daemon prints it, for example '
                                 '9.6.7 or 23.0.1.' % p['daemon_version'])
    else:
        version = installed_version(p['software'])
    read = _sd_config.read_storage_daemon(p['software'], p['path'], p['relative_to'], version)
    module.exit_json(changed=False, **StorageDaemonConfig.from_dict(read).to_dict())


if __name__ == '__main__':
    main()
