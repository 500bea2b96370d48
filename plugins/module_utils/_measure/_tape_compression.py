# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The write benchmark's compression probe: what the drive's own compressor makes of data of known compressibility.

Private to this collection: may change without notice.

The source sample's compressibility is zlib's (level 1, ``_drive_model.estimate_compressibility``); the drive
compresses with its own LZ compressor (LTO-DC), and the verdict maps one to the other (``tape_ratio_from_software``:
``a + b x`` the software ratio, by default the software ratio itself). The probe measures that map on this drive:
for each pattern of the sweep but zeros (their software ratio is in the hundreds, far beyond any drive's), it
writes ``bytes`` of the pattern at one block size on the same admitted cartridge between two flushes of the
drive's buffer with WRITE FILEMARKS of count 0 (MTWEOF 0: synchronous, writes no mark; SSC-4 6.10), and reads the
drive's data compression page (0x1B, or LTO's 0x32) after each flush. The bytes from the host and to the tape over the pattern
give the drive's ratio on it, beside zlib's ratio of the same pool. Two patterns or more give the drive's own
``a`` and ``b`` (``_judge/_verdict``), which the verdict then uses for the sources' sample.

The flushes are what make the tape bytes the pattern's: without the first, what the sweep left in the buffer
would reach the tape during the pattern (on the lab drive random data came out at 0.84:1); without the second,
the pattern's own data still in the buffer would count as received but not written. An st driver set to
immediate file marks (its ``nowait_eof`` option, MT_ST_NOWAIT_EOF) makes MTWEOF 0 return at once: the probe is
then not run, and says why. Only LOG SENSE, the writes and the flush
reach the drive.
"""

from __future__ import annotations

from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _observe
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_discovery
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_writer as W

SKIPPED_ZEROS = 'zeros'
# data compression: SSC-4's page, and the vendor page HP and IBM LTO drives share (_sg_logs.COMPRESSION_PAGES)
PAGES = (0x1B, 0x32)


class CompressionProbe:
    """``bytes`` of each sweep pattern but zeros, flushed, between two reads of the compression page."""

    def __init__(self, nbytes, block_size, op_timeout, write=None, clock=None):
        self.bytes = int(nbytes)
        self.block_size = int(block_size)
        self.op_timeout = op_timeout
        self.write = write
        self.clock = clock

    def plan(self, patterns):
        probed = [p for p in patterns if p != SKIPPED_ZEROS]
        return {'bytes_per_pattern': self.bytes, 'block_size': self.block_size, 'patterns': probed,
                'bytes_planned': self.bytes * len(probed)}

    def run(self, fd, pools, write_error, sg, runner, st_options):
        """The probe's record: ``{'block_size', 'bytes_per_pattern', 'patterns': [...], 'skipped'}``.

        ``skipped``: why nothing was written (a write error in the sweep, no sg node or log pages, st's
        immediate file marks), else None. Each pattern: ``pattern``, ``software_ratio`` (zlib level 1 of its
        pool, as the sources' sample), ``bytes`` written, ``drive`` (the page's host and tape byte differences
        and their ratio, or None) and ``why_unknown``; a write error ends the probe there.
        """
        out = {'block_size': self.block_size, 'bytes_per_pattern': self.bytes, 'patterns': [], 'skipped': None}
        out['skipped'] = self._why_not(write_error, sg, st_options)
        if out['skipped']:
            return out
        for pattern, pool in pools:
            if pattern == SKIPPED_ZEROS:
                continue
            row = self._pattern(fd, pattern, pool, sg, runner)
            out['patterns'].append(row)
            if row.get('error'):
                break
        return out

    @staticmethod
    def _why_not(write_error, sg, st_options):
        if write_error:
            return 'the sweep ended on a write error (%s): nothing more is written' % write_error
        if not sg:
            return 'the drive\'s log pages are not read (log_pages=false, or no sg node): its ratio cannot be read'
        if (st_options or {}).get('nowait_eof'):
            return ('the st driver writes immediate file marks (its nowait_eof option): MTWEOF 0 would not flush '
                    'the drive\'s buffer, so its tape bytes would not be whole')
        return None

    def _pages(self, sg, runner):
        return _tape_discovery.read_log_pages(sg, runner, pages=PAGES)

    def _pattern(self, fd, pattern, pool, sg, runner):
        row = {'pattern': pattern, 'software_ratio': software_ratio(pool), 'bytes': 0, 'drive': None,
               'why_unknown': None, 'error': None}
        # what the sweep (or the pattern before) left in the buffer goes to tape first: not this pattern's bytes
        W.mtop(fd, W.MTWEOF, 0, timeout=self.op_timeout)
        before = self._pages(sg, runner)
        kwargs = dict((k, v) for k, v in (('write', self.write), ('clock', self.clock)) if v is not None)
        wrote = W.write_stream(fd, W.block_views(pool, self.block_size), self.bytes, **kwargs)
        row['bytes'] = wrote['bytes']
        if wrote['errno'] is not None:
            row['error'] = wrote['error']
            return row
        W.mtop(fd, W.MTWEOF, 0, timeout=self.op_timeout)
        figures, why = _observe.compression(before, self._pages(sg, runner))
        row['drive'], row['why_unknown'] = figures, why
        if figures and figures['host_written_bytes'] != wrote['bytes']:
            row['why_unknown'] = ('the drive received %d bytes while the probe wrote %d: someone else wrote to it, '
                                  'or its counters are rounded' % (figures['host_written_bytes'], wrote['bytes']))
        return row


def software_ratio(pool):
    """zlib level 1's ratio of ``pool``, as the sources' sample measures theirs; None without the drive model."""
    try:
        from ansible_collections.tapeops.qualify.plugins.module_utils._judge._drive_model import (
            estimate_compressibility,
        )
    except ImportError:
        return None
    return round(estimate_compressibility(bytes(pool))['ratio'], 4)
