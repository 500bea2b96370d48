# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The raw tape write benchmark: safety gates, sweep, file-mark cost.

Private to this collection: may change without notice.

Order of operations, each tape operation with a deadline. Every open of the
drive goes through the collection's one safety gate
(``_tape_safety.WriteGate``), as the other writing modules' do:

1. the gate's device check (stat + sysfs only) — refuse anything that is not
   an nst node of a sequential-access device — and discovery of the drive;
2. plan (block sizes bounded by READ BLOCK LIMITS and the HBA maximum); in
   check mode stop here and return the plan;
3. pattern pools generated once (before the drive is opened);
4. log pages before (never during the writes);
5. the gate's probe: open O_RDONLY (EBUSY = refused; fstat proves the
   descriptor is the checked device), status, variable-block mode, rewind,
   one read at BOT, rewind; ``media_verdict`` decides (``admit``);
6. the gate's ``open_for_write`` (O_WRONLY, proven again); at BOT, ask st whether it has MTWEOFI (an MTWEOFI ioctl
   with count 0, which writes nothing: ``_tape_discovery.probe_mtweofi``);
   sweep, file-mark runs, then always rewind and close;
7. st counters and log pages after; the counters against our own bytes (and
   other processes on the drive's nodes) say whether the drive was contended
   (``_contention.drive``). A log page that cannot be read or
   decoded becomes a warning: the write measurements are never lost to it;
8. with ``read_back`` only: open the same cleared device O_RDONLY again (the
   tape this run has just written and rewound; nothing else is ever read),
   variable-block mode, rewind, read the sweep's blocks back at the size each
   step was written (or ``read_back_block_size``), verify each one against the
   pattern pools still in memory, rewind (``_tape_reader``). After the log
   pages, so the drive's write counters are the writes' alone.

``TapeBenchmark.run`` takes these steps in order; the file-mark runs are
``_tape_filemarks.FilemarkRuns``, the read-back ``ReadBack`` below.
"""

from __future__ import annotations

import errno
import functools
import os
import time

from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _st_sysfs
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _contention
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _drive_lock
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_discovery
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_reader as R
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_safety
from ansible_collections.tapeops.qualify.plugins.module_utils._measure._tape_compression import CompressionProbe
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_writer as W
from ansible_collections.tapeops.qualify.plugins.module_utils._measure._tape_filemarks import (
    FILEMARK_SKIPPED,
    FilemarkRuns,
)
from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError

DEFAULT_BLOCK_SIZES = (65536, 131072, 262144, 524288, 1048576)


class BenchmarkError(TapeopsError):
    """Stops the benchmark; ``reason`` is machine-readable, ``msg`` says what to do."""

    def __init__(self, msg, reason, partial=None):
        super().__init__(msg, reason)
        self.partial = partial or {}


def plan_block_sizes(requested, limits, hba_max):
    """Split ``requested`` into (sizes to run, [{block_size, reason}] skipped)."""
    run, skipped = [], []
    maximum = (limits or {}).get('max')
    minimum = (limits or {}).get('min')
    granularity = (limits or {}).get('granularity') or 0
    for size in sorted(set(requested)):
        if maximum and size > maximum:
            skipped.append({'block_size': size, 'reason': 'above READ BLOCK LIMITS maximum %d' % maximum})
        elif minimum and size < minimum:
            skipped.append({'block_size': size, 'reason': 'below READ BLOCK LIMITS minimum %d' % minimum})
        elif granularity and size % (1 << granularity):
            skipped.append({'block_size': size, 'reason': 'not a multiple of 2**%d (granularity)' % granularity})
        elif hba_max and size > hba_max:
            skipped.append({'block_size': size, 'reason': 'above the HBA maximum transfer %d' % hba_max})
        else:
            run.append(size)
    return run, skipped


def rewind(fd, timeout):
    """Rewind; False when the drive refused or did not answer in time."""
    try:
        W.mtop(fd, W.MTREW, 1, timeout=timeout)
        return True
    except (OSError, W.TapeTimeout):
        return False


def _pool_of(pools, indexed_step):
    index, step = indexed_step
    pattern, pool = pools[index % len(pools)]
    if pattern != step['pattern']:
        raise AssertionError('sweep step %d is %s, expected %s' % (index, step['pattern'], pattern))
    return pool


class ReadBack:
    """Step 8: read the sweep back from BOT of the device the gate cleared and this run wrote; verify; time it.

    ``enabled`` is the module's ``read_back``; ``block_size`` its ``read_back_block_size`` (None: each step at the
    size it was written).
    """

    def __init__(self, gate, enabled, block_size, step_seconds, op_timeout):
        self.gate = gate
        self.enabled = bool(enabled)
        self.block_size = int(block_size) if block_size else None
        if block_size is not None and not self.enabled:
            raise ValueError('read_back_block_size is set but read_back is false: set read_back: true to read the '
                             'written data back.')
        if block_size is not None and int(block_size) <= 0:
            raise ValueError('read_back_block_size must be a positive size such as 256K, got %r.' % (block_size,))
        self.step_seconds = step_seconds
        self.op_timeout = op_timeout

    def plan(self, sweep_bytes):
        return {
            'enabled': self.enabled,
            'block_size': self.block_size,
            'max_bytes_read': sweep_bytes if self.enabled else 0,
            'rule': 'reads only the sweep this run has just written, from BOT of the same device',
        }

    def check_size(self, drive):
        """A read_back_block_size the path cannot carry is refused before anything is written."""
        if not self.block_size:
            return
        _run, skipped = plan_block_sizes([self.block_size], drive.get('block_limits'),
                                         drive.get('hba_max_transfer_bytes'))
        if skipped:
            raise ValueError('read_back_block_size %s cannot be read on this path: %s. Use a smaller size.' % (
                R.fmt_size(self.block_size), skipped[0]['reason']))

    def run(self, pools, result):
        """The read-back record; its warnings go to ``result['warnings']``."""
        steps = R.tape_steps(result.get('sweep'))
        record = {'block_size': self.block_size, 'verification': 'regenerated',
                  'verification_basis': 'each block compared (memcmp) with the bytes of the pattern pools the '
                                        'sweep wrote from, still in memory in this run',
                  'steps': [], 'rewound': None}
        if not steps:
            record.update(R.summarize([]), verified=None, error='the sweep wrote no block: nothing to read back')
            return record
        try:
            fd = self.gate.open(os.O_RDONLY)
        except _tape_safety.TapeSafetyError as exc:
            raise BenchmarkError(exc.msg, exc.reason, partial=result) from None
        try:
            try:
                self._from_bot(fd, result)
                self._read_steps(fd, pools, steps, record, result)
            finally:
                record['rewound'] = rewind(fd, self.op_timeout)
        finally:
            os.close(fd)
        if record['mismatched_blocks'] or record['error']:
            result['warnings'].append('read-back did not verify: %d block(s) differ from what was written%s.' % (
                record['mismatched_blocks'], '; %s' % record['error'] if record['error'] else ''))
        if record['verify_capped']:
            result['warnings'].append('read-back: verifying took %.0f %% of the read time; the read rate may be '
                                      'understated.' % (100 * record['verify_share']))
        return record

    def _from_bot(self, fd, result):
        """Variable-block mode, rewound, and proven at BOT."""
        W.mtop(fd, W.MTSETBLK, 0, timeout=self.op_timeout)
        W.mtop(fd, W.MTREW, 1, timeout=self.op_timeout)
        status = W.mtget(fd, timeout=self.op_timeout)
        if status['file_number'] != 0 or status['block_number'] != 0:
            raise BenchmarkError('Read-back: the tape is not at BOT after rewinding (file %s, block %s). '
                                 'Check the drive (mt status, dmesg).' % (
                                     status['file_number'], status['block_number']), 'read_back_position',
                                 partial=result)

    def _read_steps(self, fd, pools, steps, record, result):
        """Each sweep step read back and verified into ``record['steps']``; stops at the first error."""
        step_timeout = (self.step_seconds or 3600) + self.op_timeout
        # The sweep runs every pattern per block size in pool order and only ever stops at the end,
        # so sweep step k was written from pools[k % len(pools)] (a pattern listed twice has two seeds).
        first = W.block_views(_pool_of(pools, steps[0]), steps[0][1]['block_size'])[0]
        capacity = R.compare_capacity(first)
        readinto = R.file_readinto(fd)
        for index, step in steps:
            views = W.block_views(_pool_of(pools, (index, step)), step['block_size'])
            size = self.block_size or step['block_size']
            one = functools.partial(R.read_step, step, views, size, readinto, step_index=index)
            try:
                rec = W.call_with_timeout(one, step_timeout, 'Reading back %d-byte blocks' % step['block_size'])
            except R.ReadBlockTooSmall as exc:
                record['steps'].append(exc.record)
                record.update(R.summarize(record['steps'], capacity), verified=None, error=exc.msg)
                result['read_back'] = record
                raise BenchmarkError(exc.msg, 'read_back_block_size_too_small', partial=result)
            record['steps'].append(rec)
            if rec['error']:
                break
        record.update(R.summarize(record['steps'], capacity))


class TapeBenchmark:
    """Run the benchmark for one cleared device; results as a dict."""

    def __init__(self, device, block_sizes=DEFAULT_BLOCK_SIZES, patterns=W.PATTERNS, step_bytes=1000 * W.MB,
                 step_seconds=60, filemark_segments=(), filemark_payload=16000 * W.MB,
                 filemark_block_size=262144, filemark_pattern='2.5:1', overwrite=False, allowed_barcodes=(),
                 barcode=None, op_timeout=900, log_pages=True, runner=None, sys_root=_st_sysfs.SYS_ROOT,
                 identity=None, read_back=False, read_back_block_size=None, write=os.write, clock=time.monotonic,
                 proc_root=_drive_lock.PROC_ROOT, compression_probe_bytes=0):
        self.device = device
        self.block_sizes = list(block_sizes)
        self.patterns = list(patterns)
        self.step_bytes = int(step_bytes)
        self.step_seconds = step_seconds
        self.filemarks = FilemarkRuns(filemark_segments, filemark_payload, filemark_block_size, filemark_pattern,
                                      op_timeout, write=write, clock=clock)
        self.barcode = barcode
        self.op_timeout = op_timeout
        self.log_pages = log_pages
        self.runner = runner
        self.sys_root = sys_root
        self.proc_root = proc_root
        # write(2) and the clock of the sweep and the file-mark runs: os.write and time.monotonic outside tests,
        # which replay a recorded drive through them (tests/unit/plugins/module_utils/_measure/test_tape_benchmark_replay.py)
        self.write = write
        self.clock = clock
        self.gate = _tape_safety.WriteGate(device, overwrite=overwrite, allowed_barcodes=allowed_barcodes,
                                           barcode=barcode, op_timeout=op_timeout, runner=self._runner(),
                                           sys_root=sys_root)
        self.gate.identity = identity
        self.read_back = ReadBack(self.gate, read_back, read_back_block_size, step_seconds, op_timeout)
        self.probe = CompressionProbe(int(compression_probe_bytes or 0), filemark_block_size, op_timeout,
                                      write=write, clock=clock)
        self.result = None
        for pattern in self.patterns + [self.filemarks.pattern]:
            W.parse_ratio(pattern)

    # -------------------------------------------------------------- plan
    @property
    def identity(self):
        return self.gate.identity

    def identify(self):
        """The gate's device check and discovery of this drive (the barcode from the changer)."""
        drive = self.gate.identify()
        self.barcode = self.gate.barcode
        return drive

    def plan(self, drive):
        run, skipped = plan_block_sizes(self.block_sizes, drive.get('block_limits'),
                                        drive.get('hba_max_transfer_bytes'))
        sweep_bytes = self.step_bytes * len(run) * len(self.patterns)
        filemarks = self.filemarks
        out = {
            'device': self.device,
            'identity': self.identity.as_dict() if self.identity else None,
            'block_sizes': run,
            'skipped_block_sizes': skipped,
            'patterns': self.patterns,
            'step_bytes': self.step_bytes,
            'step_seconds': self.step_seconds,
            'filemark_segments_mb': [s // W.MB for s in filemarks.segments],
            'filemark_payload_mb': filemarks.payload // W.MB if filemarks.segments else 0,
            'filemark_block_size': filemarks.block_size,
            # only the segments a run closes twice are written; the larger ones are computed (FilemarkRuns)
            'max_bytes_written': sweep_bytes + filemarks.bytes_planned(),
            'barcode': self.barcode,
            'media_rule': 'write only blank media, or barcode in allowed_barcodes, or overwrite=true',
            'read_back': self.read_back.plan(sweep_bytes),
        }
        if self.probe.bytes:
            # (only when asked: the plans of runs without it stay as they were)
            out['compression_probe'] = self.probe.plan(self.patterns)
            out['max_bytes_written'] += out['compression_probe']['bytes_planned']
        return out

    # -------------------------------------------------------------- run
    def run(self, check_mode=False):
        """Steps 1-8 (the module docstring); check mode stops after the plan."""
        drive = self.identify()
        plan = self.plan(drive)
        result = {'device': self.device, 'plan': plan, 'drive': drive, 'changed': False, 'warnings': []}
        self.result = result
        weofi, basis = _tape_discovery.mtweofi_from_st_driver(self.sys_root)
        result['mtweofi'] = {'supported': weofi, 'basis': basis,
                             'detail': 'check mode: no drive opened, the st driver version decides' if check_mode
                             else 'before the ioctl probe'}
        self._set_mtweofi(result)
        self.read_back.check_size(drive)
        if check_mode:
            return result
        pools = self._make_pools(plan, result)
        sg = drive.get('sg')
        if self.log_pages:
            result['log_pages_before'] = self._log_pages(sg, result, 'before')
        fd = self._admit(result)
        name = self.identity.name
        result['changed'] = True
        try:
            try:
                self._write(fd, pools, name, result)
            finally:
                result['rewound'] = rewind(fd, self.op_timeout)
        finally:
            os.close(fd)
        if self.log_pages:
            result['log_pages_after'] = self._log_pages(sg, result, 'after')
        if self.read_back.enabled:
            result['read_back'] = self.read_back.run(pools, result)
        return result

    def _make_pools(self, plan, result):
        """Step 3: the pattern pools, generated before the drive is opened."""
        if not plan['block_sizes']:
            raise BenchmarkError('No requested block size fits this drive path (%s).' % plan['skipped_block_sizes'],
                                 'no_block_size')
        pool_size = max(16 * W.MIB, 8 * max(plan['block_sizes'] + [self.filemarks.block_size]))
        started = time.monotonic()
        pools = [(p, W.make_pool(p, size=pool_size, seed=i)) for i, p in enumerate(self.patterns)]
        result['pool_seconds'] = round(time.monotonic() - started, 3)
        return pools

    def _admit(self, result):
        """Step 5 and the open of step 6: the gate's probe and media decision, then the descriptor to write."""
        try:
            worm = self._worm_from_logs(result.get('log_pages_before')) if self.log_pages else _tape_safety._UNSET
            result['media'] = self.gate.probe(worm=worm)
            result['media_decision'] = self.gate.admit()
            return self.gate.open_for_write()
        except _tape_safety.TapeSafetyError as exc:
            # what was read before the refusal (log pages, the probe) goes with it
            raise BenchmarkError(exc.msg, exc.reason, partial=result) from None

    def _write(self, fd, pools, name, result):
        """Step 6 and the counters of step 7: MTWEOFI probe, sweep, file-mark runs, st counters around them."""
        W.mtop(fd, W.MTSETBLK, 0, timeout=self.op_timeout)
        self._probe_mtweofi(fd, result)
        stats_start = _st_sysfs.read_stats(name, self.sys_root)
        result.update(self._sweep(fd, pools, result['plan']['block_sizes'], name, result))
        result['filemarks'] = []
        write_error = self._write_error(result['sweep'])
        if self.filemarks.segments and write_error:
            # a drive that failed a write is not written to again: each planned run says why it did not run
            result['filemarks'] = self.filemarks.skipped(FILEMARK_SKIPPED['write_error'] % write_error)
        elif self.filemarks.segments:
            self.filemarks.run(fd, result['mtweofi_supported'], out=result['filemarks'])
        if self.probe.bytes:
            result['compression_probe'] = self.probe.run(
                fd, pools, write_error, self.log_pages and (result.get('drive') or {}).get('sg'), self._runner(),
                _st_sysfs.read_options(name, self.sys_root))
        stats_end = _st_sysfs.read_stats(name, self.sys_root)
        result['st_stats_delta'] = _st_sysfs.stats_delta(stats_start, stats_end)
        result['contention'] = self._contention(stats_start, stats_end, result)

    def _contention(self, before, after, result):
        """Whether someone else used the drive during the writes (``_contention.drive``); None when not counted."""
        written = sum(int(s.get('bytes') or 0) for s in result.get('sweep') or []) + sum(
            int(f.get('bytes') or 0) for f in result.get('filemarks') or [])
        nodes = _drive_lock.drive_nodes(self.identity.scsi_device, self.sys_root) if self.identity else {}
        users = _drive_lock.users_of(nodes, self.proc_root) if nodes else []
        return _contention.drive(before, after, written, 0, users)

    def _log_pages(self, sg, result, when):
        """Log pages, or an empty record and a warning: never an exception that loses the run."""
        try:
            pages = _tape_discovery.read_log_pages(sg, self._runner())
        except Exception as exc:  # pylint: disable=broad-except
            result['warnings'].append('log pages %s writing could not be read: %s' % (when, exc))
            return {'supported': [], 'unsupported_reason': None, 'pages': {}, 'errors': {'read': str(exc)},
                    'warnings': [str(exc)]}
        result['warnings'].extend('%s writing: %s' % (when, w) for w in pages.get('warnings') or [])
        return pages

    @staticmethod
    def _set_mtweofi(result):
        result['mtweofi_supported'] = result['mtweofi']['supported']
        result['mtweofi_basis'] = result['mtweofi']['basis']
        if isinstance(result.get('drive'), dict):
            result['drive']['mtweofi_supported'] = result['mtweofi_supported']
            result['drive']['mtweofi_basis'] = result['mtweofi_basis']

    def _probe_mtweofi(self, fd, result):
        """MTWEOFI with count 0 on the admitted drive at BOT; the st version where it cannot tell."""
        probe = _tape_discovery.probe_mtweofi(fd, W.mtop, W.mtget, timeout=self.op_timeout)
        if probe['supported'] is None:
            fallback, basis = _tape_discovery.mtweofi_from_st_driver(self.sys_root)
            probe = dict(probe, supported=fallback, basis=basis,
                         detail='%s; %s' % (probe['basis'], probe['detail']))
        if probe.get('position_changed'):
            result['warnings'].append('MTWEOFI probe: %s' % probe['detail'])
        result['mtweofi'] = probe
        self._set_mtweofi(result)

    def _runner(self):
        if self.runner is not None:
            return self.runner
        from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _cli

        def runner(cmd):
            return _cli.run(cmd, timeout=_tape_discovery.TOOL_TIMEOUT)
        return runner

    @staticmethod
    def _worm_from_logs(pages):
        return _tape_safety.worm_from_log_pages(pages)

    def _sweep(self, fd, pools, sizes, name, result):
        """The sweep; each step lands in ``result['sweep']`` as it ends (kept when a later one times out)."""
        def on_step(phase, block_size, pattern, context=None):
            if phase == 'before':
                return _st_sysfs.read_stats(name, self.sys_root)
            return {'st_stats_delta': _st_sysfs.stats_delta(context, _st_sysfs.read_stats(name, self.sys_root))}

        # A step may not take longer than its time budget plus the op timeout.
        step_timeout = (self.step_seconds or 3600) + self.op_timeout
        result['sweep'] = []
        try:
            steps, ceiling, stop = W.sweep(fd, pools, sizes, self.step_bytes, max_seconds=self.step_seconds,
                                           on_step=on_step, step_timeout=step_timeout, write=self.write,
                                           clock=self.clock, steps=result['sweep'])
        except W.TapeTimeout as exc:
            result['sweep_stopped'] = str(exc)
            raise
        for step in steps:
            delta = step.get('st_stats_delta') or {}
            if delta.get('write_ns') and step['seconds']:
                step['device_busy_fraction'] = round(delta['write_ns'] / 1e9 / step['seconds'], 3)
        done = [s for s in steps if s['error'] is None and s['bytes']]
        best = max(done, key=lambda s: s['mb_s']) if done else None
        return {
            'sweep': steps,
            'ceiling_block_size': ceiling,
            'sweep_stopped': stop,
            'best': {'block_size': best['block_size'], 'pattern': best['pattern'], 'mb_s': best['mb_s']} if best else None,
        }

    @staticmethod
    def _write_error(steps):
        """The error of the write that stopped the sweep (EIO, ENOSPC, ...), or None.

        A block size the path rejects outright (EINVAL, no byte written) is the ceiling, not a write error.
        """
        last = steps[-1] if steps else None
        if not last or last.get('errno') is None:
            return None
        if last['errno'] == errno.EINVAL and not last.get('bytes'):
            return None
        return last.get('error') or errno.errorcode.get(last['errno'], str(last['errno']))
