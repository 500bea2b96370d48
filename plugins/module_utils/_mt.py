# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Parse ``mt status`` and decode the Linux st driver's MTIOCGET status.

Private to this collection: may change without notice.

Pure functions. ``parse_mt_status`` accepts the output of every ``mt`` found in
the wild on backup hosts: mt-st (Linux, "General status bits on (...)"),
GNU cpio's mt ("drive status = N", the raw ``mt_dsreg``), FreeBSD's and
Solaris' mt. Run it under ``LC_ALL=C`` (see ``_cli.run``).
"""

from __future__ import annotations

import re

# include/uapi/linux/mtio.h: generic status bits (mt_gstat).
GMT_BITS = (
    (0x80000000, 'EOF'),
    (0x40000000, 'BOT'),
    (0x20000000, 'EOT'),
    (0x10000000, 'SM'),
    (0x08000000, 'EOD'),
    (0x04000000, 'WR_PROT'),
    (0x01000000, 'ONLINE'),
    (0x00800000, 'D_6250'),
    (0x00400000, 'D_1600'),
    (0x00200000, 'D_800'),
    (0x00040000, 'DR_OPEN'),
    (0x00010000, 'IM_REP_EN'),
    (0x00008000, 'CLN'),
)
# mt_dsreg layout (st.c): density in bits 24..31, block size in bits 0..23.
MT_ST_DENSITY_SHIFT = 24
MT_ST_BLKSIZE_MASK = 0xffffff
MT_ISSCSI2 = 0x72


def gstat_flags(gstat):
    """Names of the GMT_* bits set in ``gstat`` (an int)."""
    return [name for bit, name in GMT_BITS if gstat & bit]


def _empty(fmt):
    return {
        'format': fmt,
        'file_number': None,
        'block_number': None,
        'partition': None,
        'block_size': None,
        'density_code': None,
        'density_name': None,
        'soft_errors': None,
        'status_bits': None,
        'flags': [],
    }


def _finish(result):
    flags = set(result['flags'])
    result['online'] = 'ONLINE' in flags if result['status_bits'] is not None else None
    result['bot'] = 'BOT' in flags
    result['eof'] = 'EOF' in flags
    result['eod'] = 'EOD' in flags
    result['write_protected'] = 'WR_PROT' in flags
    result['door_open'] = 'DR_OPEN' in flags
    if result['status_bits'] is not None:
        result['media_loaded'] = result['online'] and not result['door_open']
    else:
        result['media_loaded'] = None
    return result


def _strip_header(text):
    return [line for line in text.splitlines() if not line.startswith('# ')]


_MTST_POS = re.compile(r'File number\s*=\s*(-?\d+),\s*block number\s*=\s*(-?\d+)(?:,\s*partition\s*=\s*(-?\d+))?', re.I)
_MTST_BLK = re.compile(r'Tape block size\s+(\d+)\s+bytes\.\s*Density code\s+(0x[0-9a-fA-F]+)\s*(?:\(([^)]*)\))?', re.I)
_MTST_SOFT = re.compile(r'Soft error count since last status\s*=\s*(\d+)', re.I)
_MTST_BITS = re.compile(r'General status bits on\s*\(([0-9a-fA-F]+)\)', re.I)
_GNU_KV = re.compile(r'^\s*(drive type|drive status|sense key error|residue count|file number|block number)\s*=\s*(-?\d+)\s*$', re.I)


def parse_mt_status(text):
    """Parse the text of ``mt status``; return a dict (see module docs).

    ``format`` is ``mt-st``, ``gnu``, ``freebsd``, ``solaris`` or ``unknown``.
    Fields the implementation does not print are ``None``.
    """
    lines = _strip_header(text or '')
    body = '\n'.join(lines)
    if _MTST_BITS.search(body) or _MTST_BLK.search(body):
        return _parse_mtst(body, lines)
    if any(_GNU_KV.match(line) for line in lines):
        return _parse_gnu(lines)
    if 'Calc File Number' in body or re.search(r'^Current:\s', body, re.M):
        return _parse_freebsd(body)
    if re.search(r'file no=\s*-?\d+\s+block no=', body):
        return _parse_solaris(body)
    return _finish(_empty('unknown'))


def _parse_mtst(body, lines):
    result = _empty('mt-st')
    match = _MTST_POS.search(body)
    if match:
        result['file_number'] = int(match.group(1))
        result['block_number'] = int(match.group(2))
        if match.group(3) is not None:
            result['partition'] = int(match.group(3))
    match = _MTST_BLK.search(body)
    if match:
        result['block_size'] = int(match.group(1))
        result['density_code'] = int(match.group(2), 16)
        result['density_name'] = (match.group(3) or '').strip() or None
    match = _MTST_SOFT.search(body)
    if match:
        result['soft_errors'] = int(match.group(1))
    match = _MTST_BITS.search(body)
    if match:
        result['status_bits'] = int(match.group(1), 16)
        # The flag line follows; decode the number too so both agree.
        names = gstat_flags(result['status_bits'])
        after = body[match.end():].split('\n', 2)
        printed = after[1].split() if len(after) > 1 else []
        result['flags'] = names or printed
    return _finish(result)


def _parse_gnu(lines):
    result = _empty('gnu')
    values = {}
    for line in lines:
        match = _GNU_KV.match(line)
        if match:
            values[match.group(1).lower()] = int(match.group(2))
    if 'file number' in values:
        result['file_number'] = values['file number']
    if 'block number' in values:
        result['block_number'] = values['block number']
    dsreg = values.get('drive status')
    if dsreg is not None and values.get('drive type') == MT_ISSCSI2:
        # GNU mt prints mt_dsreg, not mt_gstat: density and block size only.
        result['density_code'] = (dsreg >> MT_ST_DENSITY_SHIFT) & 0xff
        result['block_size'] = dsreg & MT_ST_BLKSIZE_MASK
    result['drive_status_register'] = dsreg
    return _finish(result)


def _parse_freebsd(body):
    result = _empty('freebsd')
    match = re.search(r'^Current:\s+0x([0-9a-fA-F]+):(\S+)\s+(\S+)', body, re.M)
    if match:
        result['density_code'] = int(match.group(1), 16)
        result['density_name'] = match.group(2)
        result['block_size'] = 0 if match.group(3) == 'variable' else int(match.group(3))
    match = re.search(r'Partition:\s*(-?\d+)\s+Calc File Number:\s*(-?\d+)\s+Calc Record Number:\s*(-?\d+)', body)
    if match:
        result['partition'] = int(match.group(1))
        result['file_number'] = int(match.group(2))
        result['block_number'] = int(match.group(3))
    return _finish(result)


def _parse_solaris(body):
    result = _empty('solaris')
    match = re.search(r'file no=\s*(-?\d+)\s+block no=\s*(-?\d+)', body)
    result['file_number'] = int(match.group(1))
    result['block_number'] = int(match.group(2))
    return _finish(result)
