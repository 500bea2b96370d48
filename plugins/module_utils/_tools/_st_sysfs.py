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
import re

from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError

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

_KV = re.compile(r'^\s*([a-z_]+)\s*[=:]\s*(-?\d+)\s*$')
_LS = re.compile(r'^[-lrwx]{10}\S*\s+\d+\s+\S+\s+\S+\s+\d+\s+\S+\s+\d+\s+\S+\s+(\S+)$')


def parse_stats_text(text):
    """``name = value`` (or ``name: value``) lines into ``{name: int}``.

    This is how people paste the stats directory (``grep . stats/*`` is
    handled too: ``stats/io_ns:5058``).
    """
    out = {}
    for line in (text or '').splitlines():
        if line.startswith('# '):
            continue
        line = line.strip()
        if ':' in line and '/' in line.split(':', 1)[0]:
            path, value = line.split(':', 1)
            line = '%s = %s' % (os.path.basename(path), value)
        match = _KV.match(line)
        if match:
            out[match.group(1)] = int(match.group(2))
    return out


def parse_stats_listing(text):
    """File names in an ``ls -l`` of a stats directory (which counters exist)."""
    names = []
    for line in (text or '').splitlines():
        match = _LS.match(line.strip())
        if match:
            names.append(match.group(1))
    return names


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


# ---------------------------------------------------------------- tapestat

class TapestatParseError(TapeopsError, ValueError):
    """Text that holds no tapestat report at all; the message says what to do."""


_TAPESTAT_HEAD = re.compile(r'^Tape:\s+r/s\s+w/s\s+(kB|MB)_read/s\s+(?:kB|MB)_wrtn/s\s+%Rd\s+%Wr\s+%Oa\s+Rs/s\s+Ot/s\s*$')
_TAPESTAT_ROW = re.compile(r'^(st\d+)\s+(\d+(?:\.\d+)?[kMGT]?)' + r'\s+(\d+(?:\.\d+)?[kMGT]?%?)' * 8 + r'\s*$')
_TAPESTAT_BANNER = re.compile(r'^(\S+)\s+(\S+)\s+\((\S+)\)\s+(\S+)\s+_(\S+)_\s+\((\d+) CPU\)\s*$')
_TAPESTAT_JSON_ROW = re.compile(r'\{"tape_device":[^{}]*\}')
_TAPESTAT_FIELDS = ('r_s', 'w_s', 'read', 'write', 'read_pct', 'write_pct', 'other_pct', 'resid_s', 'other_s')
_HUMAN = {'': 1, 'k': 1, 'M': 1024, 'G': 1024 ** 2, 'T': 1024 ** 3}


def _tapestat_row(device, values, unit):
    """One tape's figures; rates in the unit tapestat printed and in bytes/s (kB = 1024 B)."""
    row = {'device': device}
    for name, raw in zip(_TAPESTAT_FIELDS, values):
        row[name] = raw
    scale = 1024 if unit == 'kB' else 1024 * 1024
    for name in ('read', 'write'):
        row['%s_bytes_s' % name] = int(row[name] * scale) if row[name] is not None else None
        row['%s_mb_s' % name] = round(row['%s_bytes_s' % name] / 1e6, 3) if row[name] is not None else None
    row['unit'] = unit
    return row


def _number(raw):
    """``'292864'`` -> 292864; ``--human`` forms (``'286.0M'``, ``'97.0%'``) in kB."""
    raw = raw.rstrip('%')
    match = re.match(r'^(\d+(?:\.\d+)?)([kMGT]?)$', raw)
    if not match:
        return None
    value = float(match.group(1)) * _HUMAN[match.group(2)]
    return int(value) if value.is_integer() else value


def parse_tapestat(text):
    """sysstat ``tapestat`` output, text or ``-o JSON``, into reports.

    Returns ``{'format': 'text'|'json', 'host': {...}, 'reports': [{'timestamp',
    'tapes': [{device, r_s, w_s, read, write, read_pct, write_pct, other_pct,
    resid_s, other_s, read_bytes_s, write_bytes_s, read_mb_s, write_mb_s,
    unit}]}], 'complete', 'warnings'}``. ``read``/``write`` are in ``unit``
    (``kB`` = 1024 bytes per second, or ``MB`` with ``-m``); the ``_bytes_s``
    and decimal ``_mb_s`` figures are computed from them. The first report of
    a run without ``-y`` covers the time since boot. A JSON run that was
    stopped early keeps the rows it printed (``complete`` False). Raises
    TapestatParseError when the text holds no tapestat report.
    """
    if isinstance(text, bytes):
        text = text.decode('utf-8', 'replace')
    text = text or ''
    body = '\n'.join(line for line in text.splitlines() if not line.startswith('# '))
    if body.lstrip().startswith('{'):
        return _parse_tapestat_json(body)
    return _parse_tapestat_text(body, cut=bool(text) and not text.endswith('\n'))


def _parse_tapestat_text(body, cut):
    out = {'format': 'text', 'host': None, 'reports': [], 'complete': True, 'warnings': []}
    lines = body.splitlines()
    current = None
    timestamp = None
    for index, line in enumerate(lines):
        stripped = line.strip()
        match = _TAPESTAT_BANNER.match(stripped)
        if match and out['host'] is None:
            out['host'] = {'sysname': match.group(1), 'release': match.group(2), 'nodename': match.group(3),
                           'date': match.group(4), 'machine': match.group(5), 'cpus': int(match.group(6))}
            continue
        match = _TAPESTAT_HEAD.match(stripped)
        if match:
            current = {'timestamp': timestamp, 'unit': match.group(1), 'tapes': []}
            out['reports'].append(current)
            timestamp = None
            continue
        match = _TAPESTAT_ROW.match(stripped)
        if match and current is not None:
            if cut and index == len(lines) - 1:
                out['complete'] = False
                out['warnings'].append('the last line %r may be cut short; it is not used' % stripped)
                continue
            values = [_number(v) for v in match.groups()[1:]]
            current['tapes'].append(_tapestat_row(match.group(1), values, current['unit']))
            continue
        if stripped and current is None and re.match(r'^\d', stripped):
            timestamp = stripped
            continue
        if stripped and re.match(r'^\d{2}[/.-]\d{2}[/.-]\d{2,4}\s+\d', stripped):
            timestamp = stripped
            continue
        if stripped and stripped.startswith('st') and current is not None:
            out['complete'] = False
            out['warnings'].append('a tape line tapestat did not finish: %r' % stripped)
    if not out['reports']:
        raise TapestatParseError('No "Tape: r/s w/s ..." report in this text: it is not tapestat output. '
                                 'Run "tapestat 1 5" (sysstat) on the backup host while it writes.')
    return out


def _parse_tapestat_json(body):
    import json
    out = {'format': 'json', 'host': None, 'reports': [], 'complete': True, 'warnings': []}
    try:
        data = json.loads(body)
        hosts = data['sysstat']['hosts']
        for host in hosts:
            out['host'] = dict((k, v) for k, v in host.items() if k != 'statistics')
            for stats in host.get('statistics') or []:
                report = {'timestamp': stats.get('timestamp'), 'tapes': []}
                for tape in stats.get('tape') or []:
                    report['tapes'].append(_json_tape(tape))
                out['reports'].append(report)
        return out
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        error = exc
    # A run stopped early: keep the complete rows it printed.
    out['complete'] = False
    out['warnings'].append('tapestat JSON is incomplete (%s); the rows it holds are kept' % error)
    report = {'timestamp': None, 'tapes': []}
    for raw in _TAPESTAT_JSON_ROW.findall(body):
        try:
            report['tapes'].append(_json_tape(json.loads(raw)))
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            out['warnings'].append('unreadable tape row: %r' % raw[:80])
    if not report['tapes']:
        raise TapestatParseError('tapestat JSON without a single tape row (%s). Run "tapestat -o JSON 1 5" '
                                 '(sysstat 12.7.7 or later) again and let it finish.' % error)
    out['reports'].append(report)
    return out


def _json_tape(tape):
    unit = 'MB' if 'MB_read/s' in tape else 'kB'
    keys = ('r/s', 'w/s', '%s_read/s' % unit, '%s_wrtn/s' % unit, 'Rd', 'Wr', 'Oa', 'Rs/s', 'Ot/s')
    values = []
    for key in keys:
        value = tape.get(key)
        values.append(value if isinstance(value, (int, float)) and not isinstance(value, bool) else None)
    device = tape['tape_device']
    if not isinstance(device, str):
        raise TypeError('tape_device is not a name')
    return _tapestat_row(device, values, unit)
