#!/usr/bin/python
# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: st_options
short_description: Apply stinit.def to the Linux st driver now and verify it from sysfs
version_added: 0.1.0
description:
  - For every st tape drive on the host, computes what the stinit definitions give it (matching
    manufacturer / model / revision against the drive's INQUIRY strings, as stinit does), reads the
    driver options and mode defaults back from C(/sys/class/scsi_tape/nstN*/), and when they differ runs
    C(stinit -f CONFIG /dev/nstN) and reads them back again.
  - Fails, with what was expected and what the kernel shows, when the read-back still differs.
  - C(timeout), C(long-timeout), C(drive-buffering) and C(cleaning) are applied by stinit but the kernel
    does not show them in sysfs, so they are not verified.
  - Only driver settings change; nothing is written to a tape.
author:
  - tapeops.qualify contributors (@tapeops)
extends_documentation_fragment:
  - tapeops.qualify._attributes
attributes:
  check_mode:
    support: full
    details:
      - In check mode the sysfs read-back is compared and the differences returned; stinit is not run.
  diff_mode:
    support: full
options:
  definitions:
    description: The definitions the stinit.def file was rendered from (see the st_tuning role).
    type: list
    elements: dict
    required: true
  config:
    description: The stinit definition file to apply.
    type: path
    default: /etc/stinit.def
  devices:
    description: Non-rewinding nodes to handle (C(/dev/nst0)); empty means every st drive.
    type: list
    elements: str
    default: []
  apply:
    description:
      - When false, only validate the definitions, render the file text (RV(rendered)) and compare sysfs;
        nothing is run (the result is never C(changed)). The st_tuning role uses this to reject bad
        definitions before any file is written.
    type: bool
    default: true
  header:
    description: Comment lines put at the top of RV(rendered) (for example C(ansible_managed)).
    type: str
    default: ''
'''

EXAMPLES = r'''
- name: Apply and verify
  tapeops.qualify.st_options:
    definitions: "{{ st_tuning_definitions }}"
    config: /etc/stinit.def
'''

RETURN = r'''
rendered:
  description: The stinit.def text for O(definitions) (with O(header)).
  returned: always
  type: str
drives:
  description: One entry per drive.
  returned: always
  type: list
  elements: dict
  contains:
    device:
      description: Non-rewinding node.
      type: str
    vendor:
      description: INQUIRY vendor.
      type: str
    model:
      description: INQUIRY product.
      type: str
    expected:
      description: Per mode, the options and defaults the definitions give.
      type: dict
    before:
      description: Per mode, sysfs before (options decoded, default_blksize ...).
      type: dict
    after:
      description: Per mode, sysfs after applying (same as before when nothing was needed).
      type: dict
    differences:
      description: What differed before applying.
      type: list
  sample: [{"device": "/dev/nst0", "vendor": "HP", "model": "Ultrium 6-SCSI",
            "differences": [{"mode": 1, "setting": "scsi2logical", "expected": true, "actual": false}]}]
'''

import os
import re

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.tapeops.qualify.plugins.module_utils._tools._cli import CliError, find_tool, run
from ansible_collections.tapeops.qualify.plugins.module_utils._tools._st_sysfs import read_attr, read_options
from ansible_collections.tapeops.qualify.plugins.module_utils._config._stinit import (
    MODE_SUFFIX,
    StinitError,
    compare,
    expected_settings,
    render_stinit_def,
)

SYS_ROOT = '/sys'


def _drives(wanted):
    base = os.path.join(SYS_ROOT, 'class', 'scsi_tape')
    try:
        names = sorted(n for n in os.listdir(base) if re.match(r'^nst\d+$', n))
    except OSError:
        names = []
    out = []
    for name in names:
        if wanted and '/dev/%s' % name not in wanted and name not in wanted:
            continue
        dev = os.path.join(base, name, 'device')
        out.append({'name': name, 'device': '/dev/%s' % name,
                    'vendor': read_attr(os.path.join(dev, 'vendor')) or '',
                    'model': read_attr(os.path.join(dev, 'model')) or '',
                    'revision': read_attr(os.path.join(dev, 'rev')) or ''})
    return out


def _read_back(name, modes):
    return dict((mode, read_options(name + MODE_SUFFIX[mode], SYS_ROOT)) for mode in modes)


def _apply(module, config, entry, results):
    """stinit applies ``config`` to the drive of ``entry``; the kernel's settings after it must be the expected."""
    try:
        stinit = find_tool('stinit', module=module)
        res = run([stinit, '-v', '-f', config, entry['device']], module=module, check=True,
                  hint='stinit could not apply %s; check the file with "stinit -p -f %s".' % (config, config))
    except CliError as exc:
        module.fail_json(drives=results, **exc.as_fail_kwargs())
    entry['after'] = _read_back(entry['name'], entry['expected'])
    left = compare(entry['expected'], entry['after'])
    if left:
        module.fail_json(
            msg='%s (%s %s): after stinit the kernel still shows %s. The drive or the st driver does not '
                'accept these settings; remove them from st_tuning_definitions or check dmesg.'
                % (entry['device'], entry['vendor'], entry['model'],
                   ', '.join('mode %d %s=%s (wanted %s)' % (d['mode'], d['setting'], d['actual'], d['expected'])
                             for d in left)),
            drives=results, cmd=res.cmd, rc=res.rc, stdout=res.stdout, stderr=res.stderr)


def _diff(entry):
    """The drive's differences as Ansible's diff: what sysfs showed, what stinit was to set."""
    return dict(before_header='%s (sysfs)' % entry['device'], after_header='%s (sysfs)' % entry['device'],
                before=''.join('mode %d %s=%s\n' % (x['mode'], x['setting'], x['actual'])
                               for x in entry['differences']),
                after=''.join('mode %d %s=%s\n' % (x['mode'], x['setting'], x['expected'])
                              for x in entry['differences']))


def main():
    module = AnsibleModule(
        argument_spec=dict(
            definitions=dict(type='list', elements='dict', required=True),
            config=dict(type='path', default='/etc/stinit.def'),
            devices=dict(type='list', elements='str', default=[]),
            apply=dict(type='bool', default=True),
            header=dict(type='str', default=''),
        ),
        supports_check_mode=True,
    )
    p = module.params
    try:
        rendered = render_stinit_def(p['definitions'], p['header'])
    except StinitError as exc:
        module.fail_json(msg=str(exc))
    drives = _drives(p['devices'])
    missing = [d for d in p['devices'] if not any(d in (x['device'], x['name']) for x in drives)]
    if missing:
        module.fail_json(msg='No st tape drive %s on this host (see /sys/class/scsi_tape): check st_tuning_devices.'
                             % ', '.join(missing))
    results = []
    changed = False
    for drive in drives:
        try:
            expected = expected_settings(p['definitions'], drive['vendor'], drive['model'], drive['revision'])
        except StinitError as exc:
            module.fail_json(msg=str(exc))
        before = _read_back(drive['name'], expected)
        diffs = compare(expected, before)
        entry = dict(drive, expected=expected, before=before, after=before, differences=diffs)
        results.append(entry)
        if not diffs:
            continue
        changed = True
        if module.check_mode or not p['apply']:
            continue
        _apply(module, p['config'], entry, results)
    result = dict(changed=changed and p['apply'], drives=results, rendered=rendered)
    if module._diff:
        result['diff'] = [_diff(d) for d in results if d['differences']]
    module.exit_json(**result)


if __name__ == '__main__':
    main()
