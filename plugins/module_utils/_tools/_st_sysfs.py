# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The Linux st driver's sysfs: per-drive statistics and options.

Private to this collection: may change without notice.

``/sys/class/scsi_tape/<name>/stats/`` (kernel 4.2+, drivers/scsi/st.c) holds
one counter per file: ``read_byte_cnt read_cnt read_ns write_byte_cnt
write_cnt write_ns other_cnt resid_cnt io_ns in_flight``. ``write_ns`` is the
time the device spent on WRITE commands, ``io_ns`` the time any command was
outstanding: comparing them with the wall clock separates device busy time
from host time. ``options`` is the st option bitmask (MT_ST_* in
include/uapi/linux/mtio.h).
"""

from __future__ import annotations

import os

SYS_ROOT = '/sys'
STAT_FIELDS = ('read_byte_cnt', 'read_cnt', 'read_ns', 'write_byte_cnt', 'write_cnt',
               'write_ns', 'other_cnt', 'resid_cnt', 'io_ns', 'in_flight')

# include/uapi/linux/mtio.h, as printed by st.c options_show().
ST_OPTION_BITS = (
    (0x1, 'buffer_writes'),
    (0x2, 'async_writes'),
    (0x4, 'read_ahead'),
    (0x8, 'debugging'),
    (0x10, 'two_fm'),
    (0x20, 'fast_mteom'),
    (0x40, 'auto_lock'),
    (0x80, 'def_writes'),
    (0x100, 'can_bsr'),
    (0x200, 'no_blklims'),
    (0x400, 'can_partitions'),
    (0x800, 'scsi2logical'),
    (0x1000, 'sysv'),
    (0x2000, 'nowait'),
    (0x4000, 'sili'),
    (0x8000, 'nowait_eof'),
)


def stats_dir(name, sys_root=SYS_ROOT):
    return os.path.join(sys_root, 'class', 'scsi_tape', name, 'stats')


def read_stats(name, sys_root=SYS_ROOT):
    """Read the counters of tape ``name`` (``nst0``); None if the kernel has none.

    Every mode node (st0, nst0, st0l, ...) of one drive shares the counters.
    """
    directory = stats_dir(name, sys_root)
    if not os.path.isdir(directory):
        return None
    out = {}
    for field in STAT_FIELDS:
        try:
            with open(os.path.join(directory, field), 'rb') as handle:
                out[field] = int(handle.read().strip())
        except (OSError, ValueError):
            continue
    return out


def stats_delta(before, after):
    """``after - before`` per counter (in_flight is a level, kept as after)."""
    if not before or not after:
        return None
    delta = {}
    for key, value in after.items():
        if key == 'in_flight':
            delta[key] = value
        elif key in before:
            delta[key] = value - before[key]
    return delta


def decode_options(value):
    """The st options bitmask (int or ``'0x00000f81'``) into a dict of booleans.

    Text that is not a number gives ``{'value': None, 'raw': text}`` and no
    flags (unknown, not "all off").
    """
    if isinstance(value, str):
        raw = value.strip()
        try:
            value = int(raw, 16 if raw.lower().startswith('0x') else 10)
        except ValueError:
            return {'value': None, 'raw': raw}
    if not isinstance(value, int) or value < 0:
        return {'value': None, 'raw': str(value)}
    out = {'value': '0x%08x' % value}
    for bit, name in ST_OPTION_BITS:
        out[name] = bool(value & bit)
    return out


def read_attr(path):
    """A sysfs attribute as text (bytes that are not UTF-8 become U+FFFD), or None."""
    try:
        with open(path, 'rb') as handle:
            return handle.read().decode('utf-8', 'replace').strip()
    except OSError:
        return None


def read_options(name, sys_root=SYS_ROOT):
    """st options and defaults of tape ``name`` from sysfs, or None."""
    base = os.path.join(sys_root, 'class', 'scsi_tape', name)
    raw = read_attr(os.path.join(base, 'options'))
    if raw is None:
        return None
    out = decode_options(raw)
    for attr in ('default_blksize', 'default_density', 'default_compression'):
        value = read_attr(os.path.join(base, attr))
        if value is not None:
            try:
                out[attr] = int(value, 0)
            except ValueError:
                out[attr] = value
    return out
