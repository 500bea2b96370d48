#!/usr/bin/python
# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: bacula_sd_device
short_description: Set directives of the tape Device resources of a Bacula or Bareos storage daemon
version_added: 0.1.0
description:
  - Sets directives (Maximum Block Size, Maximum File Size, Minimum Block Size, Maximum Network Buffer
    Size, spooling ...) in the Device resources of a storage daemon configuration, keeping comments,
    order and every other directive.
  - Bacula layout, one file (C(/etc/bacula/bacula-sd.conf)); Bareos layout, a configuration directory
    (C(/etc/bareos)) whose devices are C(bareos-sd.d/device/*.conf).
  - The candidate configuration is checked with the daemon's own configuration test
    (C(bacula-sd -t -c FILE), C(bareos-sd -t -c DIR)) before anything is replaced; when the test fails
    the old files stay and the module fails with the daemon's message.
  - Files are replaced atomically, with a backup. The daemon is not restarted; RV(restart_needed) says
    whether it must be.
author:
  - tapeops.qualify contributors (@tapeops)
extends_documentation_fragment:
  - tapeops.qualify._attributes
attributes:
  check_mode:
    support: full
    details:
      - In check mode the candidate is still validated with the daemon's configuration test, from a copy
        in a private temporary directory; the configuration is not changed.
  diff_mode:
    support: full
options:
  path:
    description:
      - The Bacula C(bacula-sd.conf) file, or the Bareos configuration directory (the one that holds
        C(bareos-sd.d/)).
    type: path
    required: true
  devices:
    description: Names of the Device resources to change. Empty means every tape Device resource.
    type: list
    elements: str
    default: []
  settings:
    description:
      - Directives to set, a mapping of directive name to value. Sizes take bytes or Bacula suffixes
        (C(k)/C(m)/C(g) powers of 1024, C(kb)/C(mb)/C(gb) powers of 1000). C(null) leaves a directive alone.
    type: dict
    required: true
  hba_max_transfer_bytes:
    description: Reject a Maximum Block Size above this (the HBA path's maximum transfer).
    type: int
  granularity:
    description: The drive's block size granularity in bytes (READ BLOCK LIMITS); block sizes must be multiples.
    type: int
    default: 1
  validate:
    description:
      - Command that tests the candidate, C(%s) standing for the file (Bacula) or directory (Bareos).
      - Default C(bacula-sd -t -c %s) for a file, C(bareos-sd -t -c %s) for a directory.
      - An empty string skips the test (only for trees without a daemon, such as test fixtures).
    type: str
  backup:
    description: Keep a timestamped copy of each changed file next to it.
    type: bool
    default: true
'''

EXAMPLES = r'''
- name: 1 MiB blocks and 50 GB files on every tape device (Bacula)
  tapeops.qualify.bacula_sd_device:
    path: /etc/bacula/bacula-sd.conf
    settings:
      Maximum Block Size: 1048576
      Maximum File Size: 50G
    hba_max_transfer_bytes: "{{ st_tuning_preflight.hba_max_transfer_bytes }}"

- name: Bareos layout
  tapeops.qualify.bacula_sd_device:
    path: /etc/bareos
    devices: [Drive-0]
    settings:
      Maximum Block Size: 1048576
'''

RETURN = r'''
changes:
  description: One entry per directive changed (or to change, in check mode).
  returned: always
  type: list
  elements: dict
  sample: [{"file": "/etc/bacula/bacula-sd.conf", "device": "Drive-0", "directive": "Maximum Block Size",
            "before": null, "after": "1048576"}]
files:
  description: Configuration files changed.
  returned: always
  type: list
  elements: str
backup_files:
  description: Copies of the previous files.
  returned: always
  type: list
  elements: str
devices:
  description: The tape Device resources found, with their directives after the change.
  returned: always
  type: list
  elements: dict
block_size_changed:
  description:
    - True when Maximum Block Size or Minimum Block Size changed. Volumes written with the old block size
      must be read back with it.
  returned: always
  type: bool
restart_needed:
  description: The storage daemon reads its configuration at start; true when it must be restarted.
  returned: always
  type: bool
validate_stdout:
  description: Output of the configuration test.
  returned: when the test ran
  type: str
'''

import glob
import os
import shutil
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_bytes, to_text

from ansible_collections.tapeops.qualify.plugins.module_utils._config._bacula_conf import (
    BaculaConfError,
    check_settings,
    devices as list_devices,
    is_tape_device,
    set_directives,
)
from ansible_collections.tapeops.qualify.plugins.module_utils._tools._cli import CliError, find_tool, run
from ansible_collections.tapeops.qualify.plugins.module_utils._config._textfile import write_text_atomic

BLOCK_WARNING = ('The block size changed: volumes written with the old block size must be read back with it '
                 '(the label block and the data blocks were written at the old size). Keep a Device resource '
                 'with the old Maximum Block Size for restores of old volumes, or migrate them.')


def _read(path):
    with open(path, 'rb') as handle:
        return to_text(handle.read(), errors='surrogate_or_strict')


def _validate(module, command, target):
    parts = command.split()
    tool = find_tool(parts[0], module=module, hint='Or set validate to the command that tests the configuration here.')
    cmd = [tool] + [target if p == '%s' else p for p in parts[1:]]
    return run(cmd, module=module, check=True,
               hint='The storage daemon rejected the new configuration; nothing was changed. Fix the value named '
                    'in its message.')


def _daemon_message(output):
    """The daemon's own words: its 'Config error:' line(s), or its first line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = []
    for line in lines:
        said = line[len('Config error:'):].strip().rstrip('.')
        # the daemon prints its error twice (the second time behind a date), once is enough
        if line.startswith('Config error:') and said not in errors:
            errors.append(said)
    if errors:
        return '; '.join(errors)
    return lines[0].rstrip('.') if lines else ''


def _config_files(module, path, validate):
    """(a Bareos configuration directory?, the files holding Device resources, the test command)."""
    if os.path.isdir(path):
        files = sorted(glob.glob(os.path.join(path, 'bareos-sd.d', 'device', '*.conf')))
        if not files:
            module.fail_json(msg='%s has no bareos-sd.d/device/*.conf: give the Bareos configuration directory '
                                 '(usually /etc/bareos) or the Bacula bacula-sd.conf file.' % path)
        return True, files, 'bareos-sd -t -c %s' if validate is None else validate
    if os.path.isfile(path):
        return False, [path], 'bacula-sd -t -c %s' if validate is None else validate
    module.fail_json(msg='%s does not exist: install the storage daemon or set bacula_sd_config.' % path)


def _edit(module, files, settings, wanted):
    """({file: (before, after)} of the files that change, the changes, the tape devices found) in memory."""
    def select(res):
        if not is_tape_device(res):
            return False
        return not wanted or res.name in wanted

    new_texts = {}
    changes = []
    found = []
    for name in files:
        before = _read(name)
        try:
            after, file_changes = set_directives(before, settings, select)
            found.extend(d for d in list_devices(after) if d['tape'] and (not wanted or d['name'] in wanted))
        except BaculaConfError as exc:
            module.fail_json(msg='%s: %s' % (name, exc))
        for change in file_changes:
            change['file'] = name
        changes.extend(file_changes)
        if after != before:
            new_texts[name] = (before, after)
    return new_texts, changes, found


def _test_staged(module, validate, path, layout_dir, new_texts, changes):
    """The daemon's test of the new configuration in a staging copy; its stdout, or the module fails."""
    stage = tempfile.mkdtemp(prefix='tapeops-sd-', dir=module.tmpdir)
    try:
        if layout_dir:
            target = os.path.join(stage, 'config')
            shutil.copytree(path, target, symlinks=True)
            for name, (dummy, after) in new_texts.items():
                with open(os.path.join(target, os.path.relpath(name, path)), 'wb') as handle:
                    handle.write(to_bytes(after))
        else:
            target = os.path.join(stage, os.path.basename(path))
            with open(target, 'wb') as handle:
                handle.write(to_bytes(new_texts[path][1]))
        return _validate(module, validate, target).stdout
    except CliError as exc:
        kwargs = exc.as_fail_kwargs()
        said = _daemon_message((exc.stdout or '') + '\n' + (exc.stderr or ''))
        if said:
            kwargs['msg'] = 'The storage daemon rejected the new configuration: %s. Nothing was changed; fix ' \
                            'that value (bacula_sd_* variables) and run again.' % said
        module.fail_json(changes=changes, **kwargs)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type='path', required=True),
            devices=dict(type='list', elements='str', default=[]),
            settings=dict(type='dict', required=True),
            hba_max_transfer_bytes=dict(type='int'),
            granularity=dict(type='int', default=1),
            validate=dict(type='str'),
            backup=dict(type='bool', default=True),
        ),
        supports_check_mode=True,
    )
    p = module.params
    path = os.path.abspath(p['path'])
    try:
        # Validated (sizes parsed); the user's spelling (50G, 1048576) is what gets written.
        check_settings(p['settings'], p['hba_max_transfer_bytes'], p['granularity'])
        settings = p['settings']
    except BaculaConfError as exc:
        module.fail_json(msg=str(exc))

    wanted = set(p['devices'])
    layout_dir, files, validate = _config_files(module, path, p['validate'])
    new_texts, changes, found = _edit(module, files, settings, wanted)
    missing = wanted - set(d['name'] for d in found)
    if missing:
        module.fail_json(msg='No tape Device resource named %s in %s: check bacula_sd_devices against the Name '
                             'lines of the configuration.' % (', '.join(sorted(missing)), path))
    if not found:
        module.fail_json(msg='No tape Device resource (Device Type = Tape or a /dev/nst* Archive Device) in %s.' % path)

    result = dict(changed=bool(new_texts), changes=changes, files=sorted(new_texts), backup_files=[],
                  devices=found, restart_needed=bool(new_texts),
                  block_size_changed=any(c['directive'] in ('Maximum Block Size', 'Minimum Block Size')
                                         for c in changes))
    if module._diff:
        result['diff'] = [dict(before=b, after=a, before_header=n, after_header=n) for n, (b, a) in sorted(new_texts.items())]
    if result['block_size_changed']:
        module.warn(BLOCK_WARNING)
    if new_texts and validate:
        result['validate_stdout'] = _test_staged(module, validate, path, layout_dir, new_texts, changes)
    if new_texts and not module.check_mode:
        for name, (dummy, after) in sorted(new_texts.items()):
            if p['backup']:
                result['backup_files'].append(module.backup_local(name))
            write_text_atomic(module, name, to_bytes(after))
    module.exit_json(**result)


if __name__ == '__main__':
    main()
