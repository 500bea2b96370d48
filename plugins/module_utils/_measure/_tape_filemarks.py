# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The write benchmark's file-mark runs: what a file mark costs the drive.

Private to this collection: may change without notice. Run by
``_tape_benchmark.TapeBenchmark`` on the descriptor its write gate opened,
after the sweep. A baseline run writes the payload with no mark in it; then,
per segment size, a run with a synchronous mark (MTWEOF) after every
segment and one with an immediate mark (MTWEOFI, where st has it). A segment
that a run would close fewer than twice is not written: its rate is computed
from the cost per mark measured at the largest segment written
(``_tape_writer.filemark_run`` writes each run).
"""

from __future__ import annotations

import errno
import os
import time

from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_writer as W

# Why a planned file-mark run was not run: its ``error``, as the run record carries it (bytes 0).
FILEMARK_SKIPPED = {
    'no_mtweofi': 'skipped: the st driver has no MTWEOFI',
    'write_error': 'skipped: the sweep stopped on a write error (%s); no more writes after a medium or hardware '
                   'error',
    'no_measured_segment': 'skipped: a %d MB segment closes fewer than two in a %d MB run and no smaller segment was '
                           'measured to compute it from; give filemark_payload_mb of %d or more, or a smaller segment '
                           'beside it',
}


class FilemarkRuns:
    """The file-mark runs of one benchmark: segments and payload in bytes; ``write`` and ``clock`` as the sweep's."""

    def __init__(self, segments, payload, block_size, pattern, op_timeout, write=os.write, clock=time.monotonic):
        self.segments = list(segments or [])
        self.payload = int(payload)
        self.block_size = int(block_size)
        self.pattern = pattern
        self.op_timeout = op_timeout
        self.write = write
        self.clock = clock

    def split_segments(self):
        """(measured, computed) segment sizes: a run measures a segment only when it writes two marks or more.

        A segment of half the payload or more would close one segment or none in the run: its rate is then
        computed from the per-mark cost measured at the largest segment that was written.
        """
        segments = sorted(self.segments)
        measured = [s for s in segments if self.payload // s >= 2]
        return measured, [s for s in segments if s not in measured]

    def bytes_planned(self):
        """The most the runs write: the baseline and two runs per measured segment, each the payload."""
        runs = len(self.split_segments()[0]) * 2 + (1 if self.segments else 0)
        return runs * self.payload

    def skipped(self, why):
        """Every planned file-mark run (the baseline, then sync and immediate per segment), not run: ``why``."""
        out = [self._skipped_run('none', None, why)]
        for segment in sorted(self.segments):
            out.extend(self._skipped_run(kind, segment, why) for kind in ('sync', 'immediate'))
        return out

    def run(self, fd, mtweofi_supported=None, out=None):
        """The file-mark runs, each appended to ``out`` as it ends (kept when a later one times out)."""
        pool = W.make_pool(self.pattern, size=max(16 * W.MIB, 8 * self.block_size), seed=99)
        one = self._one_run(fd, W.block_views(pool, self.block_size))
        out = [] if out is None else out
        baseline = one(None, W.MTWEOF)
        base_rate = baseline['bytes'] / baseline['seconds'] if baseline['seconds'] else None
        out.append(dict(baseline, segment_mb=None, kind='none', seconds_lost_per_mark=None,
                        block_size=self.block_size, basis='measured'))
        measured, computed = self.split_segments()
        if not self._measured_runs(one, measured, base_rate, mtweofi_supported, out):
            return out
        for segment in computed:
            for kind in ('sync', 'immediate'):
                if kind == 'immediate' and mtweofi_supported is False:
                    out.append(self._skipped_run(kind, segment, FILEMARK_SKIPPED['no_mtweofi']))
                    continue
                out.append(self._computed_run(kind, segment, base_rate, out))
        return out

    def _one_run(self, fd, views):
        """``one(segment, op)``: one run of the payload with a mark of ``op`` after every ``segment`` bytes."""
        timeout = self.op_timeout

        def marker(op):
            return lambda f: W.mtop(f, op, 1, timeout=timeout)

        budget = self.payload * (2 * len(self.split_segments()[0]) + 1)
        deadline = budget / (1.0 * W.MB) + timeout  # >= 1 MB/s or we call it hung

        def one(segment, op):
            return W.call_with_timeout(
                lambda: W.filemark_run(fd, views, self.payload, segment, marker(op), write=self.write,
                                       clock=self.clock),
                deadline, 'File-mark run')
        return one

    def _measured_runs(self, one, measured, base_rate, mtweofi_supported, out):
        """The sync and immediate runs per measured segment; False when one stopped on an error (no more runs)."""
        for segment in measured:
            for kind, op in (('sync', W.MTWEOF), ('immediate', W.MTWEOFI)):
                if kind == 'immediate' and mtweofi_supported is False:
                    out.append(self._skipped_run(kind, segment, FILEMARK_SKIPPED['no_mtweofi']))
                    continue
                try:
                    run = one(segment, op)
                except OSError as exc:
                    run = {'bytes': 0, 'seconds': 0, 'marks': 0, 'mb_s': None, 'mark_seconds': 0,
                           'error': '%s: %s' % (errno.errorcode.get(exc.errno, exc.errno), exc.strerror)}
                lost = None
                if run['marks'] and base_rate:
                    lost = round((run['seconds'] - run['bytes'] / base_rate) / run['marks'], 4)
                out.append(dict(run, segment_mb=segment // W.MB, kind=kind, seconds_lost_per_mark=lost,
                                block_size=self.block_size, basis='measured'))
                if run['error']:
                    return False
        return True

    def _skipped_run(self, kind, segment, why):
        return {'bytes': 0, 'seconds': 0, 'marks': 0, 'mb_s': None, 'mark_seconds': 0, 'error': why,
                'segment_mb': segment // W.MB if segment else None, 'kind': kind, 'seconds_lost_per_mark': None,
                'block_size': self.block_size, 'basis': None}

    def _computed_run(self, kind, segment, base_rate, runs):
        """The rate at ``segment`` from the baseline rate and the cost per mark of ``kind`` measured at the largest
        written segment: a stream of ``segment`` bytes then a mark loses that cost once per segment."""
        rows = [r for r in runs if r.get('kind') == kind and r.get('basis') == 'measured'
                and r.get('seconds_lost_per_mark') is not None]
        if not rows or not base_rate:
            return self._skipped_run(kind, segment, FILEMARK_SKIPPED['no_measured_segment'] % (
                segment // W.MB, self.payload // W.MB, 2 * segment // W.MB))
        source = max(rows, key=lambda r: r['segment_mb'])
        lost = max(0.0, source['seconds_lost_per_mark'])
        seconds_per_segment = segment / base_rate + lost
        return {'bytes': 0, 'seconds': None, 'marks': 0, 'mark_seconds': None, 'error': None,
                'mb_s': round(segment / seconds_per_segment / W.MB, 1), 'segment_mb': segment // W.MB, 'kind': kind,
                'seconds_lost_per_mark': source['seconds_lost_per_mark'], 'block_size': self.block_size,
                'basis': 'computed', 'computed_from_segment_mb': source['segment_mb']}
