# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A recorded lab drive replayed under the write benchmark (``_tape_benchmark.TapeBenchmark``).

The lab runs under tests/unit/fixtures/lab_runs/ hold, per host, the write record the benchmark made on the lab's
emulated drive through the real st driver (README.md there: date, commit, commands). ``ReplayDrive`` plays that
drive back to a new ``TapeBenchmark.run``:

- ``write`` / ``clock`` (the benchmark's seam): each sweep step takes the recorded number of blocks and ends at
  its recorded time. The blocks before the last are spread evenly over the step's time budget, one of them ending
  on each whole second (where the writer checks its time limit); the last ends at the recorded time. A file-mark run
  spreads its recorded write time over its blocks and its recorded mark time over its marks. The per-second series
  within a step is not recorded finely enough to replay (the writer's sample windows are not in the record): it
  comes out flat at the step's bytes over its time budget, the last sample taking the rest.
- the st counters (sysfs ``stats``): at the end of each step they have moved by the step's recorded delta, at the
  end of the file-mark runs by the run's recorded total;
- the st ioctls (``mtop`` / ``mtget``), the safety gate's open / fstat / stat and its probe's read at BOT, answered
  as the record says the drive answered (the read's outcome is the probe's recorded ``detail``);
- discovery and the log pages: the drive record and the pages the run recorded.

Times are whole multiples of 2**-30 s, so that the writer's own arithmetic on them (start + 1.0, end - start) is
exact and a step stops where the lab's did.
"""

from __future__ import annotations

import copy
import errno
import glob
import json
import math
import os
import re
import stat

from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_benchmark as B
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_writer as W
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _st_sysfs
from ansible_collections.tapeops.qualify.tests.unit.plugins.modules.module_harness import FakeStat

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures')
LAB_RUNS = os.path.join(FIXTURES, 'lab_runs')
QUANTUM = 2 ** 30  # clock ticks per second
ST_VERSION = '20160209'  # the lab guests' st driver (identity.mtweofi_basis of the recorded runs)


def lab_write_records():
    """[(id, write record)] of every host of every recorded lab run (layout 1: write_benchmark, 2: write_sweep)."""
    out = []
    for path in sorted(glob.glob(os.path.join(LAB_RUNS, '*', '*.json'))):
        with open(path) as handle:
            doc = json.load(handle)
        drive = doc['drives'][0]
        record = drive.get('write_sweep') or drive.get('write_benchmark')
        out.append(('%s/%s' % (os.path.basename(os.path.dirname(path)), doc['host']), record))
    return out


def lab_write_record(run_id):
    """The write record of one host, e.g. ``'20261124-quick-v2/lab-ma1'``."""
    return dict(lab_write_records())[run_id]


def plan_kwargs(record):
    """The TapeBenchmark options of the recorded run, from its plan."""
    plan = record['plan']
    return {
        'block_sizes': plan['block_sizes'], 'patterns': plan['patterns'], 'step_bytes': plan['step_bytes'],
        'step_seconds': plan['step_seconds'],
        'filemark_segments': [mb * W.MB for mb in plan['filemark_segments_mb']],
        'filemark_payload': plan['filemark_payload_mb'] * W.MB, 'filemark_block_size': plan['filemark_block_size'],
        'allowed_barcodes': [plan['barcode']],
    }


def st_sysfs(root, stats):
    """The sysfs of one st drive nst0 (9:128) on a sequential-access SCSI device, as the kernel lays it out."""
    devices = os.path.join(root, 'devices', 'platform', 'host0', 'target0:0:1', '0:0:1:0')
    node = os.path.join(devices, 'scsi_tape', 'nst0')
    os.makedirs(os.path.join(node, 'stats'))
    with open(os.path.join(devices, 'type'), 'w') as handle:
        handle.write('1\n')
    os.symlink(devices, os.path.join(node, 'device'))
    os.makedirs(os.path.join(root, 'dev', 'char'))
    os.symlink(node, os.path.join(root, 'dev', 'char', '9:128'))
    os.makedirs(os.path.join(root, 'class', 'scsi_tape'))
    os.symlink(node, os.path.join(root, 'class', 'scsi_tape', 'nst0'))
    driver = os.path.join(root, 'bus', 'scsi', 'drivers', 'st')
    os.makedirs(driver)
    with open(os.path.join(driver, 'version'), 'w') as handle:
        handle.write('%s\n' % ST_VERSION)
    write_stats(root, stats)
    return root


def write_stats(root, stats):
    directory = _st_sysfs.stats_dir('nst0', root)
    for field, value in stats.items():
        with open(os.path.join(directory, field), 'w') as handle:
            handle.write('%d\n' % value)


def _q(seconds):
    return int(round(seconds * QUANTUM))


class Phase:
    """One sweep step or one file-mark run of the record, as the drive served it."""

    def __init__(self, kind, rec, limit=None):
        self.kind = kind
        self.rec = rec
        self.block_size = rec['block_size']
        self.blocks = rec.get('blocks')
        if self.blocks is None:  # file-mark runs record bytes, not blocks
            self.blocks = rec['bytes'] // rec['block_size']
        self.seconds = rec['seconds']
        self.limit = limit
        self.marks = rec.get('marks') or 0
        self.mark_seconds = rec.get('mark_seconds') or 0.0
        self.errno = rec.get('errno')
        self.written = 0
        self.marked = 0
        self.raised = False

    def done(self):
        if self.errno is not None:
            return self.raised
        return self.written >= self.blocks and self.marked >= self.marks

    def at(self, k):
        """Seconds from the phase's start when block ``k`` (1-based) has been written."""
        if self.kind == 'marks':
            per_block = (self.seconds - self.mark_seconds) / self.blocks
            per_mark = self.mark_seconds / self.marks if self.marks else 0.0
            return k * per_block + self.marked * per_mark
        if k >= self.blocks:
            return self.seconds
        span = min(self.seconds, self.limit) if self.limit else self.seconds
        u = k * span / self.blocks
        whole = math.floor(u)
        if whole >= 1 and whole > math.floor((k - 1) * span / self.blocks):
            return float(whole)  # the block that crosses a second ends on it: the writer checks its limit there
        return u


class ReplayDrive:
    """The recorded drive: write, clock, the st ioctls, the gate's open and probe, discovery, log pages."""

    def __init__(self, record, sys_root, fail=None):
        """``fail``: ``{'step': i, 'after_blocks': n, 'errno': e}`` - from step ``i`` on, the drive answers
        every write after the ``n`` th with ``e`` (a derived scenario; the lab runs have no write error)."""
        self.record = record
        self.sys_root = sys_root
        self.fail = fail
        self.now = 0
        self.failed = False
        plan = record['plan']
        self.phases = [Phase('step', step, plan['step_seconds']) for step in record['sweep']]
        self.phases += [Phase('marks', run) for run in record['filemarks'] if run['bytes']]
        self.phase = None
        self.index = -1
        self.key = None
        self.opens = []
        self.ops = []
        self.writes = 0
        self.log_page_reads = []
        self.read_done = False
        drive = record['drive']
        self.stats = dict(drive['stats'])
        self.stats_start = dict(self.stats)
        self.phase_stats = dict(self.stats)
        st_sysfs(sys_root, self.stats)

    # ------------------------------------------------------------ the benchmark's seam
    def clock(self):
        return self.now / float(QUANTUM)

    def write(self, fd, buf):
        key = (len(buf), id(buf.obj))
        if self.phase is None or self.phase.done() or (self.phase.kind == 'step' and key != self.key):
            self._next_phase(key)
        phase = self.phase
        if len(buf) != phase.block_size:
            raise AssertionError('phase %d: the benchmark wrote a %d-byte block, the lab %d' % (
                self.index, len(buf), phase.block_size))
        if self._fails(phase):
            self.failed = True
            raise OSError(self.fail['errno'], os.strerror(self.fail['errno']))
        if phase.errno is not None and phase.written == phase.blocks:
            phase.raised = True
            raise OSError(phase.errno, os.strerror(phase.errno))
        phase.written += 1
        self.writes += 1
        self.now = self.start + _q(phase.at(phase.written))
        if phase.kind == 'step' and phase.done():
            self._step_counters(phase)
        return len(buf)

    def _fails(self, phase):
        if not self.fail:
            return False
        if self.failed:
            return True
        return self.index == self.fail['step'] and phase.written >= self.fail['after_blocks']

    def _next_phase(self, key):
        self.index += 1
        if self.index >= len(self.phases):
            if self.failed:  # a failed drive fails whatever comes after
                self.phase = Phase('marks', {'block_size': key[0], 'bytes': 0, 'blocks': 0, 'seconds': 0})
                return
            raise AssertionError('the benchmark wrote more than the lab run recorded')
        self.phase = self.phases[self.index]
        self.key = key
        self.start = self.now
        self.phase_stats = dict(self.stats)

    def _step_counters(self, phase):
        delta = phase.rec.get('st_stats_delta') or {}
        for field, value in delta.items():
            self.stats[field] = value if field == 'in_flight' else self.phase_stats[field] + value
        write_stats(self.sys_root, self.stats)

    # ------------------------------------------------------------ st ioctls
    def mtop(self, fd, op, count=1, timeout=None):
        self.ops.append((op, count))
        if op in (W.MTWEOF, W.MTWEOFI) and count:
            phase = self.phase
            phase.marked += 1
            self.now = self.start + _q(phase.at(phase.written))
            if phase is self.phases[-1] and phase.done():
                total = self.record['st_stats_delta']
                for field, value in total.items():
                    self.stats[field] = value if field == 'in_flight' else self.stats_start[field] + value
                write_stats(self.sys_root, self.stats)

    def mtget(self, fd, timeout=None):
        return {'flags': ['ONLINE', 'BOT'], 'file_number': 0, 'block_number': 0}

    # ------------------------------------------------------------ the gate: open, stat, the probe at BOT
    def opener(self, path, flags):
        self.opens.append(flags)
        return os.open(os.devnull, os.O_RDONLY)  # a real descriptor to close; fstat says it is st 9:128

    @staticmethod
    def fstat(fd):
        return FakeStat(stat.S_IFCHR | 0o660, 9, 128)

    @staticmethod
    def stat(path):
        return FakeStat(stat.S_IFCHR | 0o660, 9, 128)

    def probe_mtget(self, fd, timeout=None):
        if self.read_done:
            detail = self.record['media']['detail']
            return {'flags': ['ONLINE', 'EOD'] if 'EOD' in detail else ['ONLINE'], 'file_number': 0,
                    'block_number': 0}
        return {'flags': list(self.record['media']['status_before']), 'file_number': 0, 'block_number': 0}

    def probe_read(self, fd, size):
        self.read_done = True
        detail = self.record['media']['detail']
        block = re.match(r'read a (\d+)-byte block at BOT', detail)
        if block:
            return bytes(int(block.group(1)))
        if detail.startswith('read at BOT failed: [Errno 5]'):
            raise OSError(errno.EIO, 'Input/output error')
        return b''

    def fit(self, gate):
        gate.sys_root = self.sys_root
        gate.stat_func, gate.opener, gate.fstat = self.stat, self.opener, self.fstat
        gate.probe_io = {'mtget': self.probe_mtget, 'mtop': self.mtop, 'read': self.probe_read}
        return gate

    # ------------------------------------------------------------ discovery and log pages
    def discovered(self):
        """The drive as discovery saw it before the benchmark: MTWEOFI known from the st driver's version."""
        drive = copy.deepcopy(self.record['drive'])
        drive.update(mtweofi_supported=True, mtweofi_basis='st driver version %s' % ST_VERSION)
        return drive

    def read_log_pages(self, sg, runner, pages=None):
        which = 'log_pages_before' if not self.log_page_reads else 'log_pages_after'
        self.log_page_reads.append(sg)
        return copy.deepcopy(self.record[which])

    def install(self, monkeypatch):
        """The st ioctls, discovery and the log page reader of this drive, for every TapeBenchmark made now."""
        monkeypatch.setattr(W, 'mtop', self.mtop)
        monkeypatch.setattr(W, 'mtget', self.mtget)
        monkeypatch.setattr(B._tape_discovery, 'discover', lambda **kw: {'drives': [self.discovered()]})
        # the changer asked again before a write that rests on the barcode: it reports the recorded cartridge
        monkeypatch.setattr(B._tape_discovery, 'changer_drive_barcode',
                            lambda runner, sg, element: (self.record['drive'].get('barcode'), None))
        monkeypatch.setattr(B._tape_discovery, 'read_log_pages', self.read_log_pages)
        return self

    def written_for_real(self):
        """Opens for writing (O_WRONLY / O_RDWR); each was given a read-only /dev/null descriptor."""
        return [flags for flags in self.opens if flags & (os.O_WRONLY | os.O_RDWR)]
