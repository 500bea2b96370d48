# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Parse ``mt status`` and decode the Linux st driver's MTIOCGET status.

Private to this collection: may change without notice.

Pure functions. ``parse_mt_status`` accepts the output of every ``mt`` found in
the wild on backup hosts: mt-st (Linux, "General status bits on (...)"),
GNU cpio's mt ("drive status = N", the raw ``mt_dsreg``), FreeBSD's and
Solaris' mt. Run it under ``LC_ALL=C`` (see ``_cli.run``).

A flag the implementation did not report is ``None`` (unknown), never
``False``: GNU cpio's mt and Solaris' mt print no status bits at all, FreeBSD's
prints only BOP/EOP/BPEW. Callers must not read ``None`` as "not write
protected" or "not at BOT".
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
FLAG_FIELDS = ('online', 'bot', 'eof', 'eod', 'write_protected', 'door_open', 'media_loaded')


def gstat_flags(gstat):
    """Names of the GMT_* bits set in ``gstat`` (an int)."""
    return [name for bit, name in GMT_BITS if gstat & bit]


def _empty(fmt):
    result = {
        'format': fmt,
        'file_number': None,
        'block_number': None,
        'partition': None,
        'block_size': None,
        'density_code': None,
        'density_name': None,
        'soft_errors': None,
        'status_bits': None,
        'flags': None,
        'complete': False,
        'warnings': [],
    }
    for name in FLAG_FIELDS:
        result[name] = None
    return result


def _finish(result):
    """Derive the booleans from the status bits, when the tool printed them."""
    if result['status_bits'] is None:
        return result
    flags = set(result['flags'] or [])
    result['online'] = 'ONLINE' in flags
    result['bot'] = 'BOT' in flags
    result['eof'] = 'EOF' in flags
    result['eod'] = 'EOD' in flags
    result['write_protected'] = 'WR_PROT' in flags
    result['door_open'] = 'DR_OPEN' in flags
    result['media_loaded'] = result['online'] and not result['door_open']
    return result


def _split(text):
    """Lines without fixture headers, and whether the last one may be cut short.

    A capture that does not end with a newline may have lost the end of its
    last line (a killed command, a truncated paste); values that line does not
    terminate itself are not trusted.
    """
    if isinstance(text, bytes):
        text = text.decode('utf-8', 'replace')
    text = text or ''
    lines = [line.rstrip('\r') for line in text.splitlines() if not line.startswith('# ')]
    cut = bool(text) and not text.endswith('\n') and bool(lines)
    return lines, cut


def _search(rx, body, cut):
    """``rx.search(body)``, unless the match runs into a possibly cut end of text."""
    match = rx.search(body)
    if match and cut and match.end() >= len(body.rstrip()):
        return None
    return match


# mt-st prints each of these lines with a terminator (".", ")" or ":"), so a cut
# line does not match and gives no wrong value.
_MTST_POS = re.compile(r'File number\s*=\s*(-?\d+),\s*block number\s*=\s*(-?\d+)(?:,\s*partition\s*=\s*(-?\d+))?\s*\.', re.I)
_MTST_BLK = re.compile(r'Tape block size\s+(\d+)\s+bytes\.\s*Density code\s+(0x[0-9a-fA-F]+)\s*(?:\(([^)\n]*)\))?\s*\.', re.I)
_MTST_SOFT = re.compile(r'Soft error count since last status\s*=\s*(\d+)\s*$', re.I | re.M)
_MTST_BITS = re.compile(r'General status bits on\s*\(([0-9a-fA-F]+)\)\s*:', re.I)
_MTST_ANY = re.compile(r'General status bits on|Tape block size\s+\d|SCSI 2 tape drive:|Density code\s+0x', re.I)
_GNU_KV = re.compile(r'^\s*(drive type|drive status|sense key error|residue count|file number|block number)\s*=\s*(-?\d+)\s*$', re.I)
_FREEBSD_CURRENT = re.compile(r'^Current:\s+0x([0-9a-fA-F]+):(\S+)\s+(\S+)(?:\s|$)', re.M)
_FREEBSD_POS = re.compile(r'Partition:\s*(-?\d+)\s+Calc File Number:\s*(-?\d+)\s+Calc Record Number:\s*(-?\d+)\s*$', re.M)
_FREEBSD_FLAGS = re.compile(r'^Flags:\s*((?:BOP|EOP|BPEW|None)(?:,(?:BOP|EOP|BPEW))*)\s*$', re.M)
_FREEBSD_DRIVE = re.compile(r'^Drive:\s+(\S+):\s+<([^>]*)>(?:\s+Serial Number:\s*(\S+))?\s*$', re.M)
_SOLARIS_POS = re.compile(r'file no=\s*(-?\d+)\s+block no=\s*(-?\d+)\s*$', re.M)
_SOLARIS_ANY = re.compile(r'file no=\s*-?\d|tape drive:\s*$|sense key\(0x', re.M)
_SOLARIS_SENSE = re.compile(r'sense key\(0x([0-9a-fA-F]+)\)=\s*(.*?)\s+residual=\s*(-?\d+)\s+retries=\s*(-?\d+)\s*$', re.M)


def parse_mt_status(text):
    """Parse the text of ``mt status``; return a dict (see module docs).

    ``format`` is ``mt-st``, ``gnu``, ``freebsd``, ``solaris`` or ``unknown``.
    Fields the implementation does not print, or that a cut-short capture
    lost, are ``None``; ``complete`` is False and ``warnings`` says why when
    the capture ends before the fields its format always prints.
    """
    lines, cut = _split(text)
    body = '\n'.join(lines)
    if _MTST_ANY.search(body):
        return _parse_mtst(body, cut, lines)
    if any(_GNU_KV.match(line) for line in lines):
        return _parse_gnu(lines, cut)
    if 'Calc File Number' in body or re.search(r'^Current:\s', body, re.M) or _FREEBSD_DRIVE.search(body):
        return _parse_freebsd(body, cut)
    if _SOLARIS_ANY.search(body):
        return _parse_solaris(body, lines, cut)
    result = _empty('unknown')
    if body.strip():
        result['warnings'].append('not the output of a known mt implementation: %r' % body.strip()[:80])
    return result


def _parse_mtst(body, cut, lines):
    result = _empty('mt-st')
    match = _MTST_POS.search(body)
    if match:
        result['file_number'] = int(match.group(1))
        result['block_number'] = int(match.group(2))
        if match.group(3) is not None:
            result['partition'] = int(match.group(3))
    else:
        # Old mt-st (0.x) prints the mtget fields as "file number = 0" lines instead.
        values = {}
        for index, line in enumerate(lines):
            kv = _GNU_KV.match(line)
            if kv and not (cut and index == len(lines) - 1):
                values.setdefault(kv.group(1).lower(), int(kv.group(2)))
        if 'file number' in values and 'block number' in values:
            result['file_number'] = values['file number']
            result['block_number'] = values['block number']
    match = _MTST_BLK.search(body)
    if match:
        result['block_size'] = int(match.group(1))
        result['density_code'] = int(match.group(2), 16)
        result['density_name'] = (match.group(3) or '').strip() or None
    match = _search(_MTST_SOFT, body, cut)
    if match:
        result['soft_errors'] = int(match.group(1))
    match = _MTST_BITS.search(body)
    if match:
        result['status_bits'] = int(match.group(1), 16)
        # The flag names follow on the next line; the number is authoritative.
        result['flags'] = gstat_flags(result['status_bits'])
    missing = [name for name, key in (('position', 'file_number'), ('block size and density', 'density_code'),
                                      ('status bits', 'status_bits')) if result[key] is None]
    result['complete'] = not missing
    if missing:
        result['warnings'].append('mt-st output without %s (cut short?): those fields are unknown'
                                  % ', '.join(missing))
    return _finish(result)


def _parse_gnu(lines, cut):
    result = _empty('gnu')
    values = {}
    for index, line in enumerate(lines):
        match = _GNU_KV.match(line)
        if not match:
            continue
        if cut and index == len(lines) - 1:
            result['warnings'].append('the last line %r may be cut short; its value is not used' % line.strip())
            continue
        values.setdefault(match.group(1).lower(), int(match.group(2)))
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
    result['complete'] = all(k in values for k in ('drive type', 'drive status', 'file number', 'block number'))
    if not result['complete']:
        result['warnings'].append('GNU mt output without all of drive type, drive status, file and block number')
    return result


def _parse_freebsd(body, cut):
    result = _empty('freebsd')
    match = _FREEBSD_DRIVE.search(body)
    if match:
        result['drive'] = match.group(2)
        result['serial'] = match.group(3)
    match = _search(_FREEBSD_CURRENT, body, cut)
    if match:
        result['density_code'] = int(match.group(1), 16)
        result['density_name'] = match.group(2)
        size = match.group(3)
        if size == 'variable':
            result['block_size'] = 0
        elif size.isdigit():
            result['block_size'] = int(size)
    match = _search(_FREEBSD_POS, body, cut)
    if match:
        result['partition'] = int(match.group(1))
        result['file_number'] = int(match.group(2))
        result['block_number'] = int(match.group(3))
    match = _search(_FREEBSD_FLAGS, body, cut)
    if match:
        # FreeBSD mt(1) prints BOP, EOP and BPEW only: BOT is known, the rest is not.
        names = [] if match.group(1) == 'None' else match.group(1).split(',')
        result['flags'] = ['BOT' if n == 'BOP' else n for n in names]
        result['bot'] = 'BOP' in names
    result['complete'] = result['file_number'] is not None and match is not None
    if not result['complete']:
        result['warnings'].append('FreeBSD mt output without its position or Flags line (cut short?)')
    return result


def _parse_solaris(body, lines, cut):
    result = _empty('solaris')
    head = next((ln.strip() for ln in lines if ln.strip().endswith('tape drive:')), None)
    if head:
        result['drive'] = head[:-len('tape drive:')].strip() or None
    match = _search(_SOLARIS_SENSE, body, cut)
    if match:
        result['sense_key'] = int(match.group(1), 16)
        result['sense'] = match.group(2)
    match = _search(_SOLARIS_POS, body, cut)
    if match:
        result['file_number'] = int(match.group(1))
        result['block_number'] = int(match.group(2))
    result['complete'] = match is not None
    if not result['complete']:
        result['warnings'].append('Solaris mt output without its "file no= ... block no= ..." line (cut short?)')
    return result
