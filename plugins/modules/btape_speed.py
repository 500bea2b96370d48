#!/usr/bin/python
# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: btape_speed
short_description: Run the Bacula/Bareos btape speed test on a tape drive and parse its rates
version_added: 0.1.0
description:
  - Runs C(btape)'s C(speed) command (the storage daemon's own writer, with its block structure and block
    size) against a tape drive with a one-device configuration written for the run, and returns the
    write rate of each test and file in decimal MB/s.
  - B(It writes to the tape.) Before btape runs, the device must be an st non-rewinding node
    (C(/dev/nstN)) of a sequential-access device, the cartridge must be writable and not WORM, and it must
    be blank (one read at BOT) unless its barcode is in O(allowed_barcodes) or O(overwrite=true).
    The tape is rewound afterwards.
author:
  - tapeops.qualify contributors (@tapeops)
extends_documentation_fragment:
  - tapeops.qualify._attributes
  - tapeops.qualify._attributes.benchmark
attributes:
  idempotent:
    details:
      - A benchmark writes every time it runs; it reports C(changed=true) whenever btape ran.
requirements:
  - btape (Debian bacula-sd, Bareos bareos-storage-tape) on the managed host.
options:
  device:
    description: Non-rewinding tape node.
    type: path
    required: true
  block_size:
    description: Maximum Block Size of the test device, bytes (multiple of 1024).
    type: int
    default: 1048576
  file_size_gb:
    description: Size of each file btape writes, GB (btape's file_size).
    type: int
    default: 1
  nb_file:
    description: Files per test (btape's nb_file).
    type: int
    default: 1
  tests:
    description: Which of btape's tests to run.
    type: list
    elements: str
    choices: [zero_block, random_block, zero_raw, random_raw]
    default: [zero_block]
  overwrite:
    description: Allow writing over a cartridge that is not blank.
    type: bool
    default: false
  allowed_barcodes:
    description: Scratch cartridges that may be overwritten.
    type: list
    elements: str
    default: []
  barcode:
    description: Barcode of the loaded cartridge (from the changer), checked against O(allowed_barcodes).
    type: str
  timeout:
    description: Seconds btape may run before it is stopped.
    type: int
    default: 1800
  op_timeout:
    description: Seconds each tape operation of the safety probe may take.
    type: int
    default: 900
'''

EXAMPLES = r'''
- name: btape speed with 1 MiB blocks on a scratch cartridge
  tapeops.qualify.btape_speed:
    device: /dev/nst0
    block_size: 1048576
    allowed_barcodes: [SCR001L6]
    barcode: SCR001L6
  register: btape
'''

RETURN = r'''
summary:
  description: Total write rate per test, decimal MB/s.
  returned: when btape ran
  type: dict
  sample: {"zero_block_mb_s": 11.3}
tests:
  description: Each test as parsed (data, structure, block_size, files, file_bytes, file_rates_mb_s, total_rate_mb_s, errors).
  returned: when btape ran
  type: list
  elements: dict
errors:
  description: btape's ERR= lines (for example the end of a small cartridge).
  returned: when btape ran
  type: list
  elements: str
command:
  description: The btape command sent to its prompt.
  returned: always
  type: str
  sample: speed file_size=1 nb_file=1 skip_raw skip_random
btape_version:
  description: Version btape reports.
  returned: always
  type: str
write_allowed_because:
  description: Why writing was allowed (blank media, allowed barcode, overwrite).
  returned: when btape ran
  type: str
stdout:
  description: btape's output.
  returned: when btape ran
  type: str
'''

import errno
import os
import re
import shutil
import tempfile

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_writer as W
from ansible_collections.tapeops.qualify.plugins.module_utils._tools._btape import (
    BtapeParseError,
    minimal_config,
    parse_speed,
    speed_command,
    summarize_speed,
)
from ansible_collections.tapeops.qualify.plugins.module_utils._tools._cli import CliError, find_tool, run
from ansible_collections.tapeops.qualify.plugins.module_utils._measure._tape_benchmark import probe_media
from ansible_collections.tapeops.qualify.plugins.module_utils._measure._tape_safety import (
    TapeSafetyError,
    check_tape_device,
    media_verdict,
)


def _version(btape):
    res = run([btape, '-?'], timeout=30)
    match = re.search(r'Version:\s*(\S+)', res.stdout + res.stderr)
    return match.group(1) if match else None


def _probe(device, timeout):
    try:
        fd = W.call_with_timeout(lambda: os.open(device, os.O_RDONLY), timeout, 'Opening %s' % device)
    except OSError as exc:
        if exc.errno == errno.EBUSY:
            raise TapeSafetyError('%s is busy: another process has the drive open. Wait for it to finish.' % device,
                                  'busy')
        if exc.errno in (errno.ENOMEDIUM, errno.EIO):
            raise TapeSafetyError('%s: %s. Load a scratch cartridge and retry.' % (device, exc.strerror), 'no_media')
        raise
    try:
        return probe_media(fd, timeout)
    finally:
        os.close(fd)


def _rewind(device, timeout):
    try:
        fd = W.call_with_timeout(lambda: os.open(device, os.O_RDONLY), timeout, 'Opening %s' % device)
    except OSError:
        return False
    try:
        W.mtop(fd, W.MTREW, 1, timeout=timeout)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            device=dict(type='path', required=True),
            block_size=dict(type='int', default=1048576),
            file_size_gb=dict(type='int', default=1),
            nb_file=dict(type='int', default=1),
            tests=dict(type='list', elements='str', default=['zero_block'],
                       choices=['zero_block', 'random_block', 'zero_raw', 'random_raw']),
            overwrite=dict(type='bool', default=False),
            allowed_barcodes=dict(type='list', elements='str', default=[]),
            barcode=dict(type='str'),
            timeout=dict(type='int', default=1800),
            op_timeout=dict(type='int', default=900),
        ),
        supports_check_mode=True,
    )
    p = module.params
    try:
        command = speed_command(p['file_size_gb'], p['nb_file'], tuple(p['tests']))
        minimal_config(p['device'], p['block_size'], '/tmp')
    except ValueError as exc:
        module.fail_json(msg=str(exc))
    try:
        identity = check_tape_device(p['device'])
    except TapeSafetyError as exc:
        module.fail_json(msg=str(exc), refused=exc.reason)
    try:
        btape = find_tool('btape', module=module, hint='Install bacula-sd (Debian) or bareos-storage-tape (Bareos).')
    except CliError as exc:
        module.fail_json(**exc.as_fail_kwargs())
    result = dict(changed=False, command=command, btape_version=_version(btape), device=identity.as_dict())
    if module.check_mode:
        result['msg'] = ('Check mode: would probe the cartridge in %s and, if it may be written, run btape "%s" with '
                         'Maximum Block Size %d.' % (p['device'], command, p['block_size']))
        module.exit_json(**result)

    try:
        probe = _probe(p['device'], p['op_timeout'])
        result['write_allowed_because'] = media_verdict(probe, overwrite=p['overwrite'],
                                                        allowed_barcodes=p['allowed_barcodes'], barcode=p['barcode'])
    except TapeSafetyError as exc:
        module.fail_json(msg=str(exc), refused=exc.reason, **result)
    except (OSError, W.TapeTimeout) as exc:
        module.fail_json(msg='Could not probe the cartridge in %s: %s. Check the drive (mt status, dmesg).'
                             % (p['device'], exc), **result)

    work = tempfile.mkdtemp(prefix='tapeops-btape-', dir=module.tmpdir)
    try:
        config = os.path.join(work, 'btape-sd.conf')
        with open(config, 'w') as handle:
            handle.write(minimal_config(p['device'], p['block_size'], work))
        try:
            res = run([btape, '-c', config, 'tapeops-btape'], data=command + '\nquit\n', timeout=p['timeout'],
                      hint='btape did not finish; the drive may be hung.')
        except CliError as exc:
            module.fail_json(**dict(result, **exc.as_fail_kwargs()))
    finally:
        shutil.rmtree(work, ignore_errors=True)
        result['rewound'] = _rewind(p['device'], p['op_timeout'])
    result['changed'] = True
    result['stdout'] = res.stdout
    try:
        parsed = parse_speed(res.stdout + '\n' + res.stderr)
    except BtapeParseError as exc:
        module.fail_json(msg='btape ran but printed no speed test (%s). Its output is attached; check that the '
                             'device opened (rc %s).' % (exc, res.rc), cmd=res.cmd, rc=res.rc, stdout=res.stdout,
                         stderr=res.stderr, **result)
    result.update(tests=parsed['tests'], errors=parsed['errors'], summary=summarize_speed(parsed),
                  granularity=parsed['granularity'])
    if not result['summary']:
        module.fail_json(msg='btape speed finished no test: %s' % '; '.join(parsed['errors'] or ['see stdout']),
                         **result)
    if parsed['errors']:
        module.warn('btape reported: %s' % '; '.join(parsed['errors']))
    for warning in parsed.get('warnings') or []:
        module.warn(warning)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
