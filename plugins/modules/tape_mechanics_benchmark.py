#!/usr/bin/python
# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: tape_mechanics_benchmark
short_description: Time what a backup window loses between the writes - changer moves, load, locate, rewind, unload
version_added: 0.1.0
description:
  - Moves the cartridge O(barcode) from its slot into the drive (C(mtx load)), waits until the drive is ready
    (C(mt status) polled until ONLINE), locates O(locate_files) file marks from BOT (C(mt fsf)), spaces to end
    of data (C(mt eod)), rewinds from there (C(mt rewind)), unloads (C(mt offline)) and moves the cartridge back
    (C(mtx unload)), O(repeats) times. Each command runs under a deadline (O(op_timeout)) and is timed around
    the real command; the result has the median and 95th percentile per operation.
  - From these times and the drive's streaming rate it computes the overhead per file mark, per locate and per
    mount, and the smallest object (file, segment, Bacula volume file, dCache flush) that reaches 50 % and 90 %
    of the streaming rate, for the drive and for a O(target_generation); an object of S MB at R MB/s with T
    seconds of overhead reaches f = (S/R) / (S/R + T), so S = R * T * f / (1 - f).
  - B(Safety.) The locate needs file marks. They are written once, in the first cycle, through the collection's
    safety gate (see the notes), the same as M(tapeops.qualify.tape_write_benchmark), and only when it admits
    the cartridge (blank, barcode in O(allowed_barcodes), or O(overwrite=true)); a cartridge that holds data is
    only moved, loaded, spaced over and rewound, none of which writes (RV(filemarks.refused) says why nothing was
    written). Only the named cartridge is moved; a drive holding another cartridge is refused. The cartridge
    ends where it started (its slot, or the drive), also when a step fails; RV(restored) says whether the changer
    confirms it.
author:
  - tapeops.qualify contributors (@tapeops)
extends_documentation_fragment:
  - tapeops.qualify._attributes
  - tapeops.qualify._attributes.benchmark
  - tapeops.qualify._tape_write_safety
attributes:
  check_mode:
    details:
      - In check mode the module reads C(mtx status) and the drive's status (read-only), moves nothing, writes
        nothing, and returns the plan.
  idempotent:
    details:
      - A benchmark moves the cartridge every time it runs; it reports C(changed=true) whenever it did.
requirements:
  - The st driver, mtx and mt (mt-st) on the managed host; sg3-utils for discovery.
options:
  device:
    description: Non-rewinding tape node of the drive (V(/dev/nst0)).
    type: path
    required: true
  barcode:
    description: The cartridge to cycle (its barcode in C(mtx status)); in a slot, or already in this drive.
    type: str
    required: true
  changer:
    description: The changer's SCSI generic node (V(/dev/sg3)). Default - the changer discovery matched to the drive.
    type: path
  drive_element:
    description: The drive's data transfer element number in C(mtx) (0, 1, ...). Default - from discovery.
    type: int
  repeats:
    description: Cycles to time (1 to 100).
    type: int
    default: 3
  locate_files:
    description: File marks to locate over from BOT (C(mt fsf N)); as many files are written for it.
    type: int
    default: 4
  file_mb:
    description: Decimal MB per file written for the locate (random data, 256 KiB blocks).
    type: int
    default: 8
  rate_mb_s:
    description: The drive's measured streaming rate (MB/s) for the object sizes; default the drive model's native rate.
    type: float
  drive_settings:
    description:
      - The inventory's C(tapeops_drives). The entry of the drive (matched by C(nst) against O(device)) is applied
        by the collection's drive resolver, as M(tapeops.qualify.tape_drive_info), the verdict and the report apply
        it - C(generation), C(form_factor) and C(vendor) name the drive, C(interface), C(speed_floor_mb_s) and
        C(model) (drive model fields) go to its drive model; other keys are ignored here. RV(drive) records the
        drive model used.
      - An entry the resolver cannot read costs the current drive its inventory entry, with a warning; the times
        are kept.
    type: list
    elements: dict
    default: []
  target_generation:
    description: The drive to forecast for (V(LTO-9 FH)); omitted - only the current drive.
    type: str
  target_vendor:
    description: The target drive's mechanism maker (V(IBM), V(HPE)).
    type: str
  target_interface:
    description: The target drive's interface (V(SAS), V(FC)).
    type: str
  target_model:
    description: Drive model fields of the target drive.
    type: dict
    default: {}
  backup:
    description:
      - The backup software's settings (C(tapeops_backup)); C(segment_size_mb) and C(maximum_file_size) (Bacula
        notation) are compared with the 90 % line (RV(size_warnings)).
    type: dict
    default: {}
seealso:
  - module: tapeops.qualify.tape_write_benchmark
  - module: tapeops.qualify.tape_drive_info
'''

EXAMPLES = r'''
- name: What it would do (check mode moves nothing)
  tapeops.qualify.tape_mechanics_benchmark:
    device: /dev/nst0
    barcode: SCR001L6
  check_mode: true

- name: Time the mechanics on a scratch cartridge and forecast an LTO-9
  tapeops.qualify.tape_mechanics_benchmark:
    device: /dev/nst0
    barcode: SCR001L6
    allowed_barcodes: [SCR001L6]
    repeats: 5
    target_generation: LTO-9 FH
    drive_settings: "{{ tapeops_drives | default([]) }}"
    backup: "{{ tapeops_backup | default({}) }}"
  register: mechanics
'''

RETURN = r'''
device:
  description: The drive's node (O(device)).
  returned: always
  type: str
  sample: /dev/nst0
status:
  description: C(ok) when the cycles were timed, C(planned) in check mode (nothing moved or timed).
  returned: always
  type: str
  sample: ok
error:
  description: Why nothing was timed (in check mode), else null.
  returned: always
  type: str
plan:
  description: What the run does (in check mode, would do) - the cartridge, where it starts, the steps and the media rule.
  returned: always
  type: dict
barcode:
  description: The cartridge cycled.
  returned: always
  type: str
slot:
  description: Its storage element (the slot it goes back to).
  returned: always
  type: int
drive:
  description: >-
    The drive as C(tapeops.qualify.tape_drive_info) reports it (without log pages). Like RV(plan), only in the
    module's result: the host document's mechanics section does not keep it.
  returned: always
  type: dict
summary:
  description: >-
    Per operation (C(move_to_drive), C(load_ready), C(locate), C(space_eod), C(rewind), C(unload),
    C(move_to_slot)) - C(n), C(median_s), C(p95_s), C(min_s), C(max_s), C(samples_s). An operation that was not
    measured is absent.
  returned: when not in check mode
  type: dict
filemarks:
  description: >-
    The file marks for the locate - C(written), C(files), C(file_mb), C(media_decision) or C(refused),
    C(reason) and C(msg); when written C(marks), C(bytes), C(rate_mb_s) (the run without marks) and
    C(seconds_lost_per_mark).
  returned: when not in check mode
  type: dict
  contains:
    refused:
      description: True when the media rule kept the benchmark from writing (a cartridge with data).
      type: bool
    reason:
      description: With C(refused) - the safety gate's reason (C(media_has_data), C(write_protected), C(worm), ...).
      type: str
    msg:
      description: With C(refused) - what was found and what to do.
      type: str
restored:
  description: Whether the changer confirms the cartridge is back where it started.
  returned: when not in check mode
  type: bool
final_location:
  description: Where the changer last saw the cartridge (C(where) slot or drive, C(element)).
  returned: when not in check mode
  type: dict
forecast:
  description: >-
    C(formula); C(current) and (with O(target_generation)) C(target) - C(label), C(rate_mb_s), C(rate_basis),
    C(times_s), C(overheads_s) (filemark, locate, mount) and C(objects) (per overhead C(size_50_mb),
    C(size_90_mb)); the target's C(scaling) says per operation whether its time was scaled by the drive model's
    published figure or taken as measured.
  returned: when not in check mode
  type: dict
size_warnings:
  description: The backup software's segment or file sizes below the 90 % line, each with C(text).
  returned: when not in check mode
  type: list
  elements: dict
locate_error:
  description: Why the locate was not measured on a cartridge the benchmark may not write (fewer file marks than asked).
  returned: when the locate could not be measured
  type: str
warnings:
  description: What was not measured or not restored, in words.
  returned: always
  type: list
  elements: str
reason:
  description: >-
    Machine-readable reason of a failure - a refusal of the safety gate (C(block_device), C(sg_node), C(busy),
    ...), of the changer (C(no_changer), C(drive_full), C(no_cartridge)), C(bad_input), C(timeout), ... The
    collection's one refusal key; a cartridge the media rule does not admit is not a failure (RV(filemarks.reason)).
  returned: on failure
  type: str
  sample: no_cartridge
'''

import traceback

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.tapeops.qualify.plugins.module_utils import _records
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _cli
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _resolve
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _mechanics as _mechanics_analysis
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _mechanics
from ansible_collections.tapeops.qualify.plugins.module_utils._measure._tape_benchmark import BenchmarkError
from ansible_collections.tapeops.qualify.plugins.module_utils._measure._tape_safety import (
    TapeSafetyError,
    write_safety_argspec,
)
from ansible_collections.tapeops.qualify.plugins.module_utils._measure._tape_writer import TapeTimeout


def _partial(module, result):
    """What was measured before a failure, for fail_json; its warnings (not put back, ...) via module.warn."""
    result = dict(result or {})
    for warning in result.pop('warnings', None) or []:
        module.warn(warning)
    result.pop('changed', None)
    return result


def target_drive(p):
    """The target drive's model (``target_generation`` and the other ``target_*`` options), from the collection's
    one drive resolver; None without a target. Raises ``_resolve.ResolveError`` (a ValueError) naming
    target_generation.
    """
    if not p['target_generation']:
        return None
    setting = {'generation': p['target_generation'], 'vendor': p['target_vendor'],
               'interface': p['target_interface'], 'model': p['target_model']}
    return _resolve.resolve(setting=setting, given_in='target_generation')[1]


def _analyse(result, p, target):
    """The forecast of the measured times for the current drive (its tapeops_drives entry) and ``target``."""
    _mechanics_analysis.analyse(result, setting=_resolve.setting_for(p['device'], p['drive_settings']),
                                target=target, rate_mb_s=p['rate_mb_s'], backup=p['backup'])


def _argument_spec():
    """The safety gate's options (shared) and this module's own."""
    return write_safety_argspec(
        device=dict(type='path', required=True),
        barcode=dict(type='str', required=True),
        changer=dict(type='path'),
        drive_element=dict(type='int'),
        repeats=dict(type='int', default=3),
        locate_files=dict(type='int', default=4),
        file_mb=dict(type='int', default=8),
        rate_mb_s=dict(type='float'),
        drive_settings=dict(type='list', elements='dict', default=[]),
        target_generation=dict(type='str'),
        target_vendor=dict(type='str'),
        target_interface=dict(type='str'),
        target_model=dict(type='dict', default={}),
        backup=dict(type='dict', default={}),
    )


def main():
    module = AnsibleModule(argument_spec=_argument_spec(), supports_check_mode=True)
    p = module.params
    if p['rate_mb_s'] is not None and p['rate_mb_s'] <= 0:
        module.fail_json(msg='rate_mb_s must be a positive rate in MB/s, got %s.' % p['rate_mb_s'], reason='bad_input')
    target = None
    try:
        target = target_drive(p)
    except ValueError as exc:
        module.fail_json(msg=str(exc), reason='bad_input')

    def runner(cmd, timeout):
        return _cli.run(cmd, timeout=timeout)

    mt = 'mt-st' if _cli.find_tool('mt-st', module=module, required=False) else 'mt'
    bench = None
    try:
        bench = _mechanics.MechanicsBenchmark(
            p['device'], p['barcode'], changer=p['changer'], drive_element=p['drive_element'],
            repeats=p['repeats'], locate_files=p['locate_files'], file_mb=p['file_mb'],
            allowed_barcodes=p['allowed_barcodes'], overwrite=p['overwrite'], op_timeout=p['op_timeout'],
            runner=runner, mt=mt)
        result = bench.run(check_mode=module.check_mode)
        if not module.check_mode:
            _analyse(result, p, target)
    except ValueError as exc:
        module.fail_json(msg=str(exc), reason='bad_input')
    except TapeSafetyError as exc:
        module.fail_json(**exc.refusal())
    except (_mechanics.MechanicsError, BenchmarkError) as exc:
        partial = _partial(module, exc.partial)
        if bench is not None and 'summary' not in partial:
            partial['summary'] = _mechanics.summarize(bench.samples)
        module.fail_json(msg=exc.msg, reason=exc.reason, **partial)
    except TapeTimeout as exc:
        partial = _partial(module, getattr(bench, 'result', None))
        module.fail_json(msg='%s Check the drive (dmesg, sg_logs) and the changer, then retry.' % exc,
                         reason='timeout', **partial)
    except _cli.CliError as exc:
        kwargs = _partial(module, getattr(bench, 'result', None))
        kwargs.update(exc.as_fail_kwargs())
        module.fail_json(reason='command_failed', **kwargs)
    except Exception as exc:  # pylint: disable=broad-except
        partial = _partial(module, getattr(bench, 'result', None))
        module.fail_json(msg='The mechanics benchmark stopped on an unexpected error: %s. What was measured before '
                             'it is attached; please report this with the traceback.' % exc,
                         exception=traceback.format_exc(), reason='internal_error', **partial)
    module.exit_json(**returned(module, result))


def returned(module, result):
    """The module's result: its record (``_records.Mechanics``), with the plan and the drive beside it.

    The warnings go through module.warn (passing them to exit_json is deprecated in ansible-core 2.19).
    """
    out = _records.Mechanics.measured(result).to_dict()
    for warning in out.pop('warnings', None) or []:
        module.warn(warning)
    out.update(plan=result.get('plan'), drive=result.get('drive'), changed=bool(result.get('changed')))
    return out


if __name__ == '__main__':
    main()
