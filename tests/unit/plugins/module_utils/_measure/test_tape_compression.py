# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_measure/_tape_compression: the write benchmark's compression probe, on the lab drive's recorded pages.

The drive's data compression pages are the lab drive's, recorded before and after two dd jobs on lab-ma1
(tests/unit/fixtures/sg_logs/sg_logs_p0x1b__lab-emulated-IBM-ULT3580-TD5-observe-*: 33554432 bytes received,
the pages test_observe.py reads). The writes and the flush are the test's: ``write`` counts what the probe
writes, MTWEOF is recorded, not sent. The ratio itself on the real st driver and lab drive:
tests/integration/test_compression_probe_lab.py.
"""

from __future__ import annotations

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_compression as C
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_writer as W
from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._measure.test_observe import (
    LAB_PAGE,
    LAB_PAGE_H,
    LAB_SUPPORTED,
    sg_logs_runner,
)

RECEIVED = 33554432     # what the lab drive's page 0x1B counted between the two reads


class Drive:
    """The probe's writes and flushes; the pages switch from 'before' to 'after' at the first write."""

    def __init__(self, monkeypatch, fail_at=None):
        self.written, self.ops, self.fail_at = 0, [], fail_at
        self.phase = 'before'
        monkeypatch.setattr(W, 'mtop', lambda fd, op, count=1, timeout=None: self.ops.append((op, count)))

    def write(self, fd, buf):
        if self.fail_at is not None and self.written >= self.fail_at:
            raise OSError(28, 'No space left on device')
        self.phase = 'after'
        self.written += len(buf)
        return len(buf)

    def runner(self):
        def run(cmd):
            pages = {'0x00': LAB_SUPPORTED, '0x1b': LAB_PAGE % ('1b', self.phase),
                     '0x32': LAB_PAGE_H % ('32', self.phase)}
            return sg_logs_runner(pages)(cmd)
        return run


def pools(*patterns):
    return [(p, W.make_pool(p, size=4 * W.MIB, seed=i)) for i, p in enumerate(patterns)]


def probe(drive, nbytes):
    return C.CompressionProbe(nbytes, 262144, 60, write=drive.write)


def test_a_pattern_s_ratio_is_the_drive_s_counters_over_its_flushed_write(monkeypatch):
    drive = Drive(monkeypatch)
    out = probe(drive, RECEIVED).run(3, pools('zeros', 'random'), None, '/dev/sg0', drive.runner(), {})
    # zeros are not probed (zlib's ratio of them is in the hundreds); random is, between two flushes (MTWEOF 0)
    assert out['skipped'] is None and [r['pattern'] for r in out['patterns']] == ['random']
    [row] = out['patterns']
    assert drive.ops == [(W.MTWEOF, 0)] * 2 and row['bytes'] == RECEIVED == drive.written
    assert row['drive']['page'] == '0x1b' and row['drive']['host_written_bytes'] == RECEIVED
    assert row['drive']['ratio'] == pytest.approx(RECEIVED / float(row['drive']['tape_written_bytes']), abs=0.001)
    assert row['why_unknown'] is None and row['error'] is None
    assert row['software_ratio'] == pytest.approx(1.0, abs=0.01)


def test_bytes_the_drive_counted_that_the_probe_did_not_write_make_the_ratio_unknown(monkeypatch):
    drive = Drive(monkeypatch)
    out = probe(drive, 16 * W.MIB).run(3, pools('2:1'), None, '/dev/sg0', drive.runner(), {})
    [row] = out['patterns']
    assert row['bytes'] == 16 * W.MIB
    assert row['why_unknown'] == ('the drive received %d bytes while the probe wrote %d: someone else wrote to it, '
                                  'or its counters are rounded' % (RECEIVED, 16 * W.MIB))


def test_a_write_error_ends_the_probe_there(monkeypatch):
    drive = Drive(monkeypatch, fail_at=W.MIB)
    out = probe(drive, RECEIVED).run(3, pools('random', '2:1'), None, '/dev/sg0', drive.runner(), {})
    [row] = out['patterns']
    # (the flush before it ran: what the sweep left in the buffer)
    assert row['error'].startswith('ENOSPC') and row['drive'] is None and drive.ops == [(W.MTWEOF, 0)]


@pytest.mark.parametrize('write_error, sg, options, words', [
    ('EIO: Input/output error', '/dev/sg0', {}, 'the sweep ended on a write error (EIO'),
    (None, None, {}, "the drive's log pages are not read"),
    (None, '/dev/sg0', {'nowait_eof': True}, 'immediate file marks (its nowait_eof option)'),
])
def test_what_cannot_be_measured_whole_is_not_written(monkeypatch, write_error, sg, options, words):
    drive = Drive(monkeypatch)
    out = probe(drive, RECEIVED).run(3, pools('random'), write_error, sg, drive.runner(), options)
    assert out['patterns'] == [] and words in out['skipped'] and drive.written == 0 and drive.ops == []


def test_the_plan_counts_every_pattern_but_zeros():
    plan = C.CompressionProbe(256 * W.MB, 262144, 60).plan(['zeros', 'random', '2:1', '2.5:1'])
    assert plan == {'bytes_per_pattern': 256 * W.MB, 'block_size': 262144, 'patterns': ['random', '2:1', '2.5:1'],
                    'bytes_planned': 3 * 256 * W.MB}
