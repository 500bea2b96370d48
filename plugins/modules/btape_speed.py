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
  - B(It writes to the tape.) Before btape runs, the device and the cartridge pass the collection's safety gate
    (see the notes), the same as for M(tapeops.qualify.tape_write_benchmark); btape is then given the checked
    node, checked once more right before it starts. The tape is rewound afterwards.
author:
  - tapeops.qualify contributors (@tapeops)
extends_documentation_fragment:
  - tapeops.qualify._attributes
  - tapeops.qualify._attributes.benchmark
  - tapeops.qualify._tape_write_safety
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
  barcode:
    description:
      - Barcode of the loaded cartridge, for a drive whose changer reports none (a standalone drive, a cartridge
        without a label).
      - Where a changer reports the loaded cartridge's barcode, that barcode is the cartridge's identity; a
        different O(barcode) is refused (C(barcode_mismatch)) and nothing is written.
    type: str
  timeout:
    description: Seconds btape may run before it is stopped.
    type: int
    default: 1800
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
device:
  description: The device as the safety gate cleared it (C(path), C(realpath), C(name), C(major), C(minor), ...).
  returned: when the device passed the gate
  type: dict
barcode:
  description: Barcode of the loaded cartridge (O(barcode), or the changer's), or null.
  returned: when the device passed the gate
  type: str
media:
  description: What the read at BOT found (C(online), C(write_protected), C(worm), C(content), C(detail)).
  returned: when not in check mode and the cartridge was probed
  type: dict
rewound:
  description: Whether the rewind after btape succeeded.
  returned: when btape ran, also when it failed or did not finish within O(timeout)
  type: bool
reason:
  description: >-
    Machine-readable reason of a failure - a refusal of the safety gate (C(block_device), C(memory_device),
    C(media_has_data), C(write_protected), ...), C(bad_input) or C(probe_failed).
  returned: on failure
  type: str
  sample: media_has_data
stdout:
  description: btape's output.
  returned: when btape ran
  type: str
'''

import os
import re
import shutil
import tempfile

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_writer as W
from ansible_collections.tapeops.qualify.plugins.module_utils._measure._tape_discovery import TOOL_TIMEOUT
from ansible_collections.tapeops.qualify.plugins.module_utils._measure._tape_safety import (
    TapeSafetyError,
    WriteGate,
    write_safety_argspec,
)
from ansible_collections.tapeops.qualify.plugins.module_utils._tools._btape import (
    BtapeParseError,
    minimal_config,
    parse_speed,
    speed_command,
    summarize_speed,
)
from ansible_collections.tapeops.qualify.plugins.module_utils._tools._cli import CliError, find_tool, run


def _version(btape):
    res = run([btape, '-?'], timeout=30)
    match = re.search(r'Version:\s*(\S+)', res.stdout + res.stderr)
    return match.group(1) if match else None


def _rewind(gate):
    """Rewind through the gate's checked open (read-only); False when the drive does not answer."""
    try:
        fd = gate.open(os.O_RDONLY)
    except (OSError, TapeSafetyError, W.TapeTimeout):
        return False
    try:
        W.mtop(fd, W.MTREW, 1, timeout=gate.op_timeout)
        return True
    except (OSError, W.TapeTimeout):
        return False
    finally:
        os.close(fd)


def _admit(module, gate, result):
    """The safety gate's probe and media check; the sentence why btape may write, or fail_json."""
    try:
        result['media'] = gate.probe()
        return gate.admit()
    except TapeSafetyError as exc:
        module.fail_json(**dict(result, **exc.refusal()))
    except (OSError, W.TapeTimeout) as exc:
        module.fail_json(msg='Could not probe the cartridge in %s: %s. Check the drive (mt status, dmesg).'
                             % (gate.device, exc), reason='probe_failed', **result)


def _speed(module, gate, btape, command, result):
    """Run btape speed on the node the gate hands over, rewind, parse; exit_json or fail_json."""
    p = module.params
    try:
        device = gate.handover()
    except TapeSafetyError as exc:
        module.fail_json(**dict(result, **exc.refusal()))
    work = tempfile.mkdtemp(prefix='tapeops-btape-', dir=module.tmpdir)
    failure = None
    try:
        config = os.path.join(work, 'btape-sd.conf')
        with open(config, 'w') as handle:
            handle.write(minimal_config(device, p['block_size'], work))
        try:
            res = run([btape, '-c', config, 'tapeops-btape'], data=command + '\nquit\n', timeout=p['timeout'],
                      hint='btape did not finish; the drive may be hung.')
        except CliError as exc:
            failure = exc
    finally:
        shutil.rmtree(work, ignore_errors=True)
        result['rewound'] = _rewind(gate)
    # btape writes from the moment it starts: a run that failed or did not finish may have written to the tape.
    # Only a btape that could not be started (an error without an exit code and not a timeout) changed nothing.
    result['changed'] = failure is None or failure.rc is not None or failure.timed_out
    if failure is not None:
        # after the rewind, so that the failure says whether the tape was rewound
        module.fail_json(**dict(result, **failure.as_fail_kwargs()))
    result['stdout'] = res.stdout
    try:
        parsed = parse_speed(res.stdout + '\n' + res.stderr)
    except BtapeParseError as exc:
        # result holds stdout already: passing it again made the failure a TypeError with a traceback
        module.fail_json(msg='btape ran but printed no speed test (%s). Its output is attached; check that the '
                             'device opened (rc %s).' % (exc, res.rc),
                         **dict(result, cmd=res.cmd, rc=res.rc, stderr=res.stderr))
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


def main():
    module = AnsibleModule(
        argument_spec=write_safety_argspec(
            device=dict(type='path', required=True),
            block_size=dict(type='int', default=1048576),
            file_size_gb=dict(type='int', default=1),
            nb_file=dict(type='int', default=1),
            tests=dict(type='list', elements='str', default=['zero_block'],
                       choices=['zero_block', 'random_block', 'zero_raw', 'random_raw']),
            barcode=dict(type='str'),
            timeout=dict(type='int', default=1800),
        ),
        supports_check_mode=True,
    )
    p = module.params

    def runner(cmd):
        return run(cmd, timeout=TOOL_TIMEOUT)

    gate = WriteGate(p['device'], overwrite=p['overwrite'], allowed_barcodes=p['allowed_barcodes'],
                     barcode=p['barcode'], op_timeout=p['op_timeout'], runner=runner)
    try:
        command = speed_command(p['file_size_gb'], p['nb_file'], tuple(p['tests']))
        gate.check_device()
        minimal_config(p['device'], p['block_size'], '/tmp')
    except ValueError as exc:
        module.fail_json(msg=str(exc), reason='bad_input')
    except TapeSafetyError as exc:
        module.fail_json(**exc.refusal())
    try:
        btape = find_tool('btape', module=module)   # missing: its packages (_cli.TOOL_PACKAGES)
        gate.identify()
    except TapeSafetyError as exc:
        module.fail_json(**exc.refusal())
    except CliError as exc:
        module.fail_json(**exc.as_fail_kwargs())
    result = dict(changed=False, command=command, btape_version=_version(btape), device=gate.identity.as_dict(),
                  barcode=gate.barcode)
    if module.check_mode:
        result['msg'] = ('Check mode: would probe the cartridge in %s and, if it may be written, run btape "%s" with '
                         'Maximum Block Size %d.' % (p['device'], command, p['block_size']))
        module.exit_json(**result)

    result['write_allowed_because'] = _admit(module, gate, result)
    _speed(module, gate, btape, command, result)


if __name__ == '__main__':
    main()
