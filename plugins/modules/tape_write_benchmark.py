#!/usr/bin/python
# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: tape_write_benchmark
short_description: Measure what a tape drive takes - block-size sweep and file-mark cost, safe by default
version_added: 0.1.0
description:
  - Writes data generated in memory to a non-rewinding tape node (V(/dev/nst0)) in variable-block mode,
    for a sweep of block sizes and data patterns (zeros, random, and data of a target compressibility
    such as V(2:1) or V(2.5:1)), and reports rates per step, a per-second series, and the st driver's
    counter deltas (device busy time versus host time).
  - Optionally measures the cost of file marks - the same payload with a file mark every N MB, once with
    synchronous file marks (MTWEOF) and once with immediate ones (MTWEOFI), against a run without marks.
  - Reads the drive log pages before and after (never during the writes) where the drive has them.
  - Optionally (O(read_back=true)) reads the sweep back after writing - from BOT of the same device, in the same run,
    only what this run has just written - verifies every block against the data it was written from and reports
    the read (restore) rate beside the write rate.
  - B(Safety.) Opens the drive only through the collection's safety gate (see the notes) - refuses every
    path that is not an C(nstN) node of the st driver bound to a SCSI sequential-access device, a drive another
    process holds open, write-protected and WORM media, and media that is not blank unless O(overwrite=true)
    or the loaded barcode is in O(allowed_barcodes). Leaves the tape rewound, on success and on failure; every
    tape operation has a deadline (O(op_timeout)).
author:
  - tapeops.qualify contributors (@tapeops)
extends_documentation_fragment:
  - tapeops.qualify._attributes
  - tapeops.qualify._attributes.benchmark
  - tapeops.qualify._tape_write_safety
attributes:
  idempotent:
    details:
      - A benchmark writes every time it runs; it reports C(changed=true) whenever it wrote to the tape.
requirements:
  - The st driver; sg3-utils and mtx on the managed host for block limits, log pages and barcodes.
options:
  device:
    description: Non-rewinding tape node to write to.
    type: path
    required: true
  block_sizes:
    description:
      - Block sizes to sweep, bytes or with a binary suffix (V(256K), V(1M)). Sizes above READ BLOCK LIMITS
        or the HBA maximum transfer are skipped (listed in C(plan.skipped_block_sizes)); a size the path
        rejects with EINVAL ends the sweep and is reported through RV(ceiling_block_size).
    type: list
    elements: str
    default: ['64K', '128K', '256K', '512K', '1M']
  patterns:
    description: Data patterns - V(zeros), V(random) (incompressible) or a ratio V(N:1) for zlib-calibrated data.
    type: list
    elements: str
    default: ['zeros', 'random', '2:1', '2.5:1']
  step_mb:
    description: Decimal MB written per block size and pattern.
    type: int
    default: 1000
  step_seconds:
    description: Upper bound in seconds per step, whichever of O(step_mb) and this comes first.
    type: int
    default: 60
  filemark_segments_mb:
    description:
      - Segment sizes in decimal MB for the file-mark cost runs. Empty (the default) skips them. Each segment
        size costs two runs of O(filemark_payload_mb) plus one shared baseline run. They are not run when a
        write error (EIO, ENOSPC, ...) stopped the sweep.
      - A segment of half O(filemark_payload_mb) or more is not written (a run would close it fewer than twice and
        measure nothing) - its rate is computed from the cost per mark measured at the largest smaller segment.
    type: list
    elements: int
    default: []
  filemark_payload_mb:
    description: Payload per file-mark run, decimal MB.
    type: int
    default: 16000
  filemark_block_size:
    description: Block size of the file-mark runs (bytes or with suffix).
    type: str
    default: 256K
  filemark_pattern:
    description: Data pattern of the file-mark runs.
    type: str
    default: '2.5:1'
  barcode:
    description:
      - Barcode of the loaded cartridge, for a drive whose changer reports none (a standalone drive, a cartridge
        without a label).
      - Where a changer reports the loaded cartridge's barcode, that barcode is the cartridge's identity; a
        different O(barcode) is refused (C(barcode_mismatch)) and nothing is written.
    type: str
  log_pages:
    description: Read log pages 0x0C, 0x14, 0x17, 0x2E, 0x34 before and after.
    type: bool
    default: true
  read_back:
    description:
      - After the write sweep, read its blocks back from BOT of the same device (the tape this run has just
        written, never another one), verify each block against the pattern data it was written from (regenerated
        in memory, compared byte for byte) and measure the read rate, per step and per second.
      - Adds about the sweep's own time. The file-mark runs are not read back.
    type: bool
    default: false
  read_back_block_size:
    description:
      - Read buffer for the read-back, bytes or with a binary suffix (V(256K)). Unset, each step is read at the
        block size it was written with, as a restore with the same settings would.
      - Smaller than a block on the tape, the read fails with a message that says the block size the tape was
        written with (the st driver answers such a read with ENOMEM in variable-block mode). Use it to check a
        restore setting.
      - Requires O(read_back=true). Refused before anything is written when READ BLOCK LIMITS or the HBA cannot
        carry it.
    type: str
  compression_probe_mb:
    description:
      - After the sweep and the file-mark runs, write this many decimal MB of each pattern but V(zeros) at
        O(filemark_block_size), flush the drive's buffer after each (WRITE FILEMARKS of count 0, which writes no
        mark) and read its data compression log page (0x1B, or 0x32) before and after - the ratio the drive's
        own compressor gets on data whose zlib ratio is known. V(0) (the default) writes nothing more.
      - Needs O(log_pages). Not run after a write error, nor when the st driver writes immediate file marks (its
        C(nowait_eof) option, with which the flush would not wait), and says why.
    type: int
    default: 0
seealso:
  - module: tapeops.qualify.tape_drive_info
'''

EXAMPLES = r'''
- name: Plan only (check mode writes nothing)
  tapeops.qualify.tape_write_benchmark:
    device: /dev/nst0
  check_mode: true

- name: Sweep a scratch cartridge, then read it back and verify it (restore rate beside the write rate)
  tapeops.qualify.tape_write_benchmark:
    device: /dev/nst0
    allowed_barcodes: [SCR001L9]
    read_back: true
  register: tape_bench

- name: Check that a restore reading 256 KiB blocks can read what was written with them
  tapeops.qualify.tape_write_benchmark:
    device: /dev/nst0
    allowed_barcodes: [SCR001L9]
    block_sizes: [256K]
    patterns: [random]
    step_mb: 200
    read_back: true
    read_back_block_size: 256K

- name: Sweep a scratch cartridge and compare file marks
  tapeops.qualify.tape_write_benchmark:
    device: /dev/nst0
    allowed_barcodes: [SCR001L9, SCR002L9]
    filemark_segments_mb: [2000, 20000]
  register: tape_bench
'''

RETURN = r'''
device:
  description:
    - The tape device written. With the keys below it is the C(WriteSweep) record (the collection's
      C(_records) module utils), the structure the host document keeps as a drive's C(write_sweep);
      a key that does not apply is null.
  returned: always
  type: str
  sample: /dev/nst0
pool_seconds:
  description: Seconds spent building the data pattern pools before writing.
  returned: when the benchmark wrote
  type: float
  sample: 1.365
plan:
  description: What the run writes (in check mode, what it would write) - block sizes kept and skipped, patterns,
    volumes, the barcode and the media rule.
  returned: always
  type: dict
drive:
  description: The drive as C(tapeops.qualify.tape_drive_info) reports it (without log pages).
  returned: always
  type: dict
media:
  description: What the read at BOT found (C(content) blank, data or unknown; C(detail)).
  returned: when not in check mode
  type: dict
media_decision:
  description: Why writing was allowed (blank media, allowed barcode, overwrite).
  returned: when the benchmark wrote
  type: str
sweep:
  description: One entry per block size and pattern.
  returned: when the benchmark wrote
  type: list
  elements: dict
  contains:
    block_size:
      description: Bytes per block (one write, one tape block).
      type: int
    pattern:
      description: Data pattern.
      type: str
    bytes:
      description: Bytes written.
      type: int
    seconds:
      description: Wall-clock seconds.
      type: float
    mb_s:
      description: Decimal MB/s.
      type: float
    series_mb_s:
      description: Rate per second of the step.
      type: list
      elements: float
    st_stats_delta:
      description: st counter deltas over the step (C(write_ns), C(write_byte_cnt), C(io_ns), ...).
      type: dict
    device_busy_fraction:
      description: C(write_ns) / wall time - near 1 the drive is the bottleneck, low the host is.
      type: float
    error:
      description: The error that ended the step (C(EINVAL) rejected block size, C(ENOSPC) end of media), or null.
      type: str
ceiling_block_size:
  description: Largest block size the path accepted (null when even the smallest was rejected).
  returned: when the benchmark wrote
  type: int
sweep_stopped:
  description: Why the sweep ended early, or null.
  returned: when the benchmark wrote
  type: str
best:
  description: Fastest step - C(block_size), C(pattern), C(mb_s).
  returned: when the benchmark wrote
  type: dict
filemarks:
  description: >-
    File-mark runs - a baseline (C(kind=none)) then, per segment size, C(sync) (MTWEOF) and C(immediate)
    (MTWEOFI) - each with C(segment_mb), C(kind), C(marks), C(mb_s), C(seconds), C(mark_seconds) and
    C(seconds_lost_per_mark) (time beyond the baseline rate divided by the marks), and C(error). A run not
    made has C(bytes=0) and says why in C(error) (C(skipped: ...)) - no MTWEOFI in the st driver, or a write
    error (EIO, ENOSPC, ...) that stopped the sweep, after which nothing more is written. C(basis) says how
    each row came about - C(measured) (written), C(computed) or null (not run). A segment of half
    O(filemark_payload_mb) or more would be closed fewer than twice in a run, so it is not written - its
    C(mb_s) is computed from the baseline rate and the cost per mark measured at the largest written segment
    (C(computed_from_segment_mb)), one mark lost per segment.
  returned: when the benchmark wrote
  type: list
  elements: dict
st_stats_delta:
  description: st counter deltas over the whole write session.
  returned: when the benchmark wrote
  type: dict
contention:
  description:
    - Whether someone else used the drive while the benchmark held it (docs/verdict.md, "Contention").
      C(contended) is true when the st counters moved by more bytes than the benchmark wrote
      (C(st_written_bytes) against C(ours_written_bytes); C(others_written_bytes), C(others_read_bytes)) or
      another process held one of the drive's st or sg nodes open at the end (C(users), each with C(pid),
      C(command), C(node)); C(basis) names which. The verdict is then marked contended.
    - Null when the st driver has no statistics.
  returned: when the benchmark wrote
  type: dict
  sample: {contended: false, basis: null, ours_written_bytes: 2000000000, st_written_bytes: 2000000000,
           others_written_bytes: 0, ours_read_bytes: 0, st_read_bytes: 0, others_read_bytes: 0, users: []}
log_pages_before:
  description: Log pages before writing (C(supported), C(unsupported_reason), C(pages)).
  returned: when log_pages and not in check mode
  type: dict
log_pages_after:
  description: Log pages after writing.
  returned: when the benchmark wrote and log_pages
  type: dict
rewound:
  description: Whether the final rewind succeeded.
  returned: when the benchmark wrote
  type: bool
mtweofi_supported:
  description: >-
    Whether the st driver has MTWEOFI (immediate file marks). Found out by an MTWEOFI ioctl with count 0 on the
    drive, at BOT, before the sweep (it writes nothing); where that cannot tell (check mode, write-protected media),
    from the st driver's version string. Null when neither can tell.
  returned: always
  type: bool
mtweofi_basis:
  description: How RV(mtweofi_supported) was found out - V(ioctl probe), V(st driver version 20160209), or why unknown.
  returned: always
  type: str
  sample: ioctl probe
mtweofi:
  description: The probe's record - C(supported), C(basis) and C(detail) (what st answered).
  returned: always
  type: dict
warnings:
  description: >-
    What could not be read without stopping the run - a log page sg_logs printed only in part or that could not
    be decoded, a position change after the MTWEOFI probe. The write measurements are kept regardless.
  returned: always
  type: list
  elements: str
compression_probe:
  description: >-
    With O(compression_probe_mb) - C(block_size), C(bytes_per_pattern), C(skipped) (why nothing was written, or
    null) and C(patterns), each C(pattern), C(software_ratio) (zlib level 1 of its data, as the sources' sample
    measures theirs), C(bytes), C(drive) (C(page), C(host_written_bytes), C(tape_written_bytes), C(ratio)),
    C(why_unknown) and C(error).
  returned: when O(compression_probe_mb) is set and the sweep ran
  type: dict
read_back:
  description: >-
    The read-back of the sweep (with O(read_back=true)) - per step C(steps) (C(block_size), C(pattern),
    C(read_size), C(bytes), C(blocks), C(seconds), C(mb_s), C(write_mb_s) of the same step, C(series_mb_s),
    C(verified), C(mismatched_blocks), C(mismatches), C(verify_seconds), C(error)) and in total C(bytes),
    C(seconds), C(mb_s) (the restore rate), C(write_mb_s) (the write rate of the same blocks), C(series_mb_s),
    C(verified), C(mismatched_blocks), C(verification) (V(regenerated)), C(verification_basis), C(verify_seconds),
    C(verify_share) (time spent comparing over the read time), C(verify_capacity_mb_s) (compare rate in memory),
    C(verify_capped), C(best), C(block_size) (the requested read size or null) and C(rewound). On a read smaller
    than the block, also attached to the failure with C(reason=read_back_block_size_too_small).
  returned: when read_back and the benchmark wrote
  type: dict
  sample:
    mb_s: 88.1
    write_mb_s: 95.4
    verified: true
    verification: regenerated
    verify_share: 0.004
reason:
  description: >-
    Machine-readable reason of a failure - a refusal of the safety gate (C(block_device), C(sg_node),
    C(media_has_data), C(busy), ...), C(bad_input), C(timeout) or C(internal_error). A failure after the
    drive was opened (C(timeout), C(internal_error), a failure of the read-back) returns with it what was
    measured before it (the sweep steps and file-mark runs that ended, C(rewound)). The collection's one
    refusal key (M(tapeops.qualify.btape_speed) and M(tapeops.qualify.tape_mechanics_benchmark) use it too).
  returned: on failure
  type: str
  sample: media_has_data
'''

import traceback

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.formatters import human_to_bytes

from ansible_collections.tapeops.qualify.plugins.module_utils import _records
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _cli
from ansible_collections.tapeops.qualify.plugins.module_utils._measure._tape_benchmark import BenchmarkError, TapeBenchmark
from ansible_collections.tapeops.qualify.plugins.module_utils._measure._tape_discovery import TOOL_TIMEOUT
from ansible_collections.tapeops.qualify.plugins.module_utils._measure._tape_safety import (
    TapeSafetyError,
    write_safety_argspec,
)
from ansible_collections.tapeops.qualify.plugins.module_utils._measure._tape_writer import MB, TapeTimeout


def _bytes(module, value, name):
    try:
        return human_to_bytes(str(value), isbits=False)
    except ValueError as exc:
        module.fail_json(msg='%s: %r is not a size (%s). Use bytes or a suffix such as 256K or 1M.' % (name, value, exc))


def _benchmark(module):
    """The TapeBenchmark for the module's parameters (sizes parsed; a bad one fails the module)."""
    p = module.params

    def runner(cmd):
        return _cli.run(cmd, timeout=TOOL_TIMEOUT)

    return TapeBenchmark(
        p['device'],
        block_sizes=[_bytes(module, b, 'block_sizes') for b in p['block_sizes']],
        patterns=p['patterns'],
        step_bytes=p['step_mb'] * MB,
        step_seconds=p['step_seconds'],
        filemark_segments=[s * MB for s in p['filemark_segments_mb']],
        filemark_payload=p['filemark_payload_mb'] * MB,
        filemark_block_size=_bytes(module, p['filemark_block_size'], 'filemark_block_size'),
        filemark_pattern=p['filemark_pattern'],
        overwrite=p['overwrite'],
        allowed_barcodes=p['allowed_barcodes'],
        barcode=p['barcode'],
        op_timeout=p['op_timeout'],
        log_pages=p['log_pages'],
        runner=runner,
        read_back=p['read_back'],
        compression_probe_bytes=p['compression_probe_mb'] * MB,
        read_back_block_size=(_bytes(module, p['read_back_block_size'], 'read_back_block_size')
                              if p['read_back_block_size'] is not None else None),
    )


def _check_numbers(module):
    """Fail the module on a size or a time that cannot be, before the device is looked at."""
    p = module.params
    for name in ('step_mb', 'step_seconds', 'filemark_payload_mb', 'op_timeout'):
        if p[name] <= 0:
            module.fail_json(msg='%s must be a positive number, got %s.' % (name, p[name]))
    if p['compression_probe_mb'] < 0:
        module.fail_json(msg='compression_probe_mb must be 0 (no probe) or a positive number of MB, got %s.'
                         % p['compression_probe_mb'])


def main():
    module = AnsibleModule(
        argument_spec=write_safety_argspec(
            device=dict(type='path', required=True),
            block_sizes=dict(type='list', elements='str', default=['64K', '128K', '256K', '512K', '1M']),
            patterns=dict(type='list', elements='str', default=['zeros', 'random', '2:1', '2.5:1']),
            step_mb=dict(type='int', default=1000),
            step_seconds=dict(type='int', default=60),
            filemark_segments_mb=dict(type='list', elements='int', default=[]),
            filemark_payload_mb=dict(type='int', default=16000),
            filemark_block_size=dict(type='str', default='256K'),
            filemark_pattern=dict(type='str', default='2.5:1'),
            barcode=dict(type='str'),
            log_pages=dict(type='bool', default=True),
            read_back=dict(type='bool', default=False),
            read_back_block_size=dict(type='str'),
            compression_probe_mb=dict(type='int', default=0),
        ),
        supports_check_mode=True,
    )
    _check_numbers(module)
    bench = None
    try:
        bench = _benchmark(module)
        result = bench.run(check_mode=module.check_mode)
    except ValueError as exc:
        module.fail_json(msg=str(exc), reason='bad_input')
    except TapeSafetyError as exc:
        module.fail_json(**exc.refusal())
    except BenchmarkError as exc:
        partial = dict((k, v) for k, v in exc.partial.items() if k not in ('changed',))
        module.fail_json(msg=exc.msg, reason=exc.reason, **partial)
    except TapeTimeout as exc:
        # the steps and file-mark runs measured before the one that hung go with the failure, as a
        # BenchmarkError's do
        partial = dict((k, v) for k, v in (getattr(bench, 'result', None) or {}).items() if k != 'changed')
        module.fail_json(msg='%s Check the drive (dmesg, sg_logs) and the cabling, then retry.' % exc,
                         reason='timeout', **partial)
    except _cli.CliError as exc:
        module.fail_json(**exc.as_fail_kwargs())
    except Exception as exc:  # pylint: disable=broad-except
        # Whatever went wrong, what was measured before it is returned with the error.
        partial = dict((k, v) for k, v in (getattr(bench, 'result', None) or {}).items() if k != 'changed')
        module.fail_json(msg='The benchmark stopped on an unexpected error: %s. The measurements taken before it '
                             'are attached; please report this with the traceback.' % exc,
                         exception=traceback.format_exc(), reason='internal_error', **partial)
    for warning in result.get('warnings') or []:
        module.warn(warning)
    # the WriteSweep record (module_utils/_records.py), the structure RETURN documents; msg and reason
    # belong to a refusal (fail_json above), not to a measurement; the warnings reach the result through
    # module.warn above (passing them to exit_json is deprecated in ansible-core 2.19)
    out = _records.WriteSweep.from_dict(result).to_dict()
    del out['warnings']
    for key in ('msg', 'reason'):
        if out[key] is None:
            del out[key]
    module.exit_json(changed=bool(result.get('changed')), **out)


if __name__ == '__main__':
    main()
