# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Was the drive or were the sources used by someone else while we measured them?

Private to this collection: may change without notice. Pure functions on
counters read before and after a measurement, plus the readers of those
counters:

- the drive: the st driver's counters (``/sys/class/scsi_tape/nstN/stats``,
  ``_st_sysfs``) moved by more bytes than our own writes (or reads) account
  for, or a process other than ours holds one of the drive's nodes open
  (``_drive_lock.users_of``: a tool on its sg node);
- the sources: the block devices under the source paths
  (``/sys/dev/block/<major>:<minor>/stat``, field 3: sectors read, 512 bytes
  each) read more than our read did. Our own read may come partly from the page
  cache (fewer sectors than bytes) and adds some metadata reads, so the figure
  is a lower bound of what others read and small differences are ignored
  (``SOURCE_TOLERANCE``).

Each returns ``{'contended': bool, ...the numbers behind it}``, or None when
nothing could be counted (no st statistics, a source on a filesystem without
a block device such as tmpfs or NFS).
"""

from __future__ import annotations

import os

SYS_ROOT = '/sys'
SECTOR = 512
MIB = 1024 * 1024
# Others' bytes on the drive below this (or below DRIVE_TOLERANCE of ours) are noise: st rounds and buffers.
DRIVE_FLOOR = MIB
DRIVE_TOLERANCE = 0.005
# Others' reads on the sources' devices below this (or SOURCE_TOLERANCE of ours) are metadata and readahead.
SOURCE_FLOOR = 16 * MIB
SOURCE_TOLERANCE = 0.10


def _over(others, ours, floor, tolerance):
    return others > max(floor, tolerance * max(ours, 0))


def drive(before, after, written, read=0, users=None):
    """Contention of the drive from st counters ``before`` / ``after`` and our own ``written`` / ``read`` bytes.

    ``users``: [{pid, command, node}] of other processes holding the drive's
    nodes open at the end. Returns None when the counters are missing.
    """
    if not before or not after or 'write_byte_cnt' not in before or 'write_byte_cnt' not in after:
        if users:
            return {'contended': True, 'basis': 'open', 'users': list(users)}
        return None
    moved_w = after['write_byte_cnt'] - before['write_byte_cnt']
    moved_r = after.get('read_byte_cnt', 0) - before.get('read_byte_cnt', 0)
    others_w = max(0, moved_w - int(written or 0))
    others_r = max(0, moved_r - int(read or 0))
    basis = []
    if _over(others_w, written or 0, DRIVE_FLOOR, DRIVE_TOLERANCE):
        basis.append('st_write_bytes')
    if _over(others_r, read or 0, DRIVE_FLOOR, DRIVE_TOLERANCE):
        basis.append('st_read_bytes')
    if users:
        basis.append('open')
    return {'contended': bool(basis), 'basis': ','.join(basis) or None, 'ours_written_bytes': int(written or 0),
            'st_written_bytes': moved_w, 'others_written_bytes': others_w, 'ours_read_bytes': int(read or 0),
            'st_read_bytes': moved_r, 'others_read_bytes': others_r, 'users': list(users or [])}


def parse_block_stat(text):
    """Sectors read of a ``/sys/block/<dev>/stat`` line (its third field), None when unreadable."""
    fields = (text or '').split()
    if len(fields) < 3 or not fields[2].isdigit():
        return None
    return int(fields[2])


def source_devices(paths, sys_root=SYS_ROOT, stat_func=os.stat):
    """{'major:minor': stat file} of the block devices holding ``paths`` (those without one are left out)."""
    out = {}
    for path in paths or []:
        try:
            dev = stat_func(path).st_dev
        except OSError:
            continue
        key = '%d:%d' % (os.major(dev), os.minor(dev))
        stat_path = os.path.join(sys_root, 'dev', 'block', key, 'stat')
        if os.path.exists(stat_path):
            out[key] = stat_path
    return out


def read_sectors(devices):
    """{'major:minor': sectors read} of ``source_devices``'s stat files (unreadable ones left out)."""
    out = {}
    for key, path in (devices or {}).items():
        try:
            with open(path, encoding='ascii') as handle:
                value = parse_block_stat(handle.read())
        except (OSError, ValueError):
            value = None
        if value is not None:
            out[key] = value
    return out


def sources(before, after, ours):
    """Contention of the sources: sectors read on their devices (``read_sectors`` before / after) against ``ours``.

    ``ours``: the bytes our read returned. Returns None when no device could be counted.
    """
    keys = sorted(set(before or {}) & set(after or {}))
    if not keys:
        return None
    moved = sum(max(0, after[k] - before[k]) for k in keys) * SECTOR
    others = max(0, moved - int(ours or 0))
    return {'contended': _over(others, ours or 0, SOURCE_FLOOR, SOURCE_TOLERANCE), 'devices': keys,
            'device_read_bytes': moved, 'ours_read_bytes': int(ours or 0), 'others_read_bytes': others}
