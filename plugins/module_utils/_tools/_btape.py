# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Bacula / Bareos ``btape`` output: parsers (pure) and the minimal configuration it needs.

Private to this collection: may change without notice.

``btape`` prints no machine format, so its text is parsed here (with
``LC_ALL=C``). Lines carry an optional ``btape: `` prefix, a source location
(``btape.c:409-0`` in Bacula 9.x, ``btape.c:406`` in the Bareos manual) and,
after a command, the ``*`` prompt. Rates are what btape prints: decimal MB/s
(btape's ``1.073 GB`` for a 1 GiB file is 10^9-based).

``speed`` runs up to four tests, in this order (Bacula/Bareos btape.c
speed_test): raw zero, raw random (``Begin writing raw blocks``), then zero and
random data in the daemon's block structure. The random-data message is the
same text for the raw and the block test, so a test's structure comes from its
"Begin writing" line (``... with raw blocks of B bytes`` / ``Begin writing raw
blocks`` against ``... with blocks of B bytes``; strings of Debian's btape 9.6.7).
"""

from __future__ import annotations

import re

from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError

_PREFIX = re.compile(r'^\**\s*(?:btape:\s*)?(?:[a-z_]+\.c:\d+(?:-\d+)?\s+)?')
_TEST = re.compile(r'^Test with (zero|random) data')
_NUM = r'(\d+(?:\.\d+)?)'
_BEGIN_FILES = re.compile(r'^Begin writing (\d+) files? of ' + _NUM + r' ([KMGT]?B) with (raw )?blocks of (\d+) bytes')
_BEGIN_RAW = re.compile(r'^Begin writing raw blocks of (\d+) bytes')
_RATE = re.compile(r'^Volume bytes=' + _NUM + r' ([KMGT]?B)\. Write rate = ' + _NUM + r' ([KMGT]?B)/s')
_TOTAL = re.compile(r'^Total Volume bytes=' + _NUM + r' ([KMGT]?B)\. Total Write rate = ' + _NUM + r' ([KMGT]?B)/s')
_GRANULARITY = re.compile(r'^Tape block granularity is (\d+) bytes')
_OPEN = re.compile(r'^open device "([^"]+)" \(([^)]+)\): (\w+)')
_UNITS = {'B': 1, 'KB': 1e3, 'MB': 1e6, 'GB': 1e9, 'TB': 1e12}


class BtapeParseError(TapeopsError, ValueError):
    """The text is not btape speed output."""


def _strip(line):
    return _PREFIX.sub('', line.rstrip('\r\n')).strip()


def _bytes(number, unit):
    return int(round(float(number) * _UNITS[unit]))


def _mb_s(number, unit):
    return round(float(number) * _UNITS[unit] / 1e6, 3)


def _lines(text):
    if isinstance(text, bytes):
        text = text.decode('utf-8', 'replace')
    for raw in (text or '').splitlines():
        if raw.startswith('# '):
            continue  # fixture source header
        yield raw, _strip(raw)


def parse_speed(text):
    """Parse ``btape`` ``speed`` output.

    Returns ``{'device_name', 'device', 'granularity', 'tests': [...], 'errors': [...],
    'complete', 'warnings'}``;
    each test is ``{'data': 'zero'|'random', 'structure': 'block'|'raw',
    'block_size', 'files', 'file_bytes', 'file_rates_mb_s': [...],
    'total_bytes', 'total_rate_mb_s', 'errors': [...]}``. Raises
    BtapeParseError when no test is found.
    """
    out = {'device_name': None, 'device': None, 'granularity': None, 'tests': [], 'errors': []}
    current = None
    for raw, line in _lines(text):
        match = _GRANULARITY.match(line)
        if match:
            out['granularity'] = int(match.group(1))
            continue
        match = _OPEN.match(line)
        if match:
            out['device_name'], out['device'] = match.group(1), match.group(2)
            continue
        match = _TEST.match(line)
        if match:
            current = {'data': match.group(1), 'structure': None, 'block_size': None, 'files': None,
                       'file_bytes': None, 'file_rates_mb_s': [], 'total_bytes': None, 'total_rate_mb_s': None,
                       'errors': []}
            out['tests'].append(current)
            continue
        if current is None:
            if 'ERR=' in line:
                out['errors'].append(line)
            continue
        match = _BEGIN_FILES.match(line)
        if match:
            current.update(structure='raw' if match.group(4) else 'block', files=int(match.group(1)),
                           file_bytes=_bytes(match.group(2), match.group(3)), block_size=int(match.group(5)))
            continue
        match = _BEGIN_RAW.match(line)
        if match:
            current.update(structure='raw', block_size=int(match.group(1)))
            continue
        match = _TOTAL.match(line)
        if match:
            current['total_bytes'] = _bytes(match.group(1), match.group(2))
            current['total_rate_mb_s'] = _mb_s(match.group(3), match.group(4))
            continue
        match = _RATE.match(line)
        if match:
            current['file_rates_mb_s'].append(_mb_s(match.group(3), match.group(4)))
            continue
        if 'ERR=' in line:
            current['errors'].append(line)
            out['errors'].append(line)
    if not out['tests']:
        raise BtapeParseError('no "Test with ... data" line: this is not btape speed output.')
    out['warnings'] = ['%s-data test ended without its "Total Write rate" line (btape stopped or the output '
                       'was cut)' % t['data'] for t in out['tests'] if t['total_rate_mb_s'] is None]
    out['complete'] = not out['warnings']
    return out


def summarize_speed(parsed):
    """``{'<data>_<structure>_mb_s': total rate}`` for each test that finished."""
    out = {}
    for test in parsed['tests']:
        if test['total_rate_mb_s'] is not None:
            out['%s_%s_mb_s' % (test['data'], test['structure'] or 'unknown')] = test['total_rate_mb_s']
    return out


def speed_command(file_size_gb=1, nb_file=1, tests=('zero_block',)):
    """The ``speed`` command line for btape's interactive prompt."""
    if not isinstance(file_size_gb, int) or file_size_gb < 1 or file_size_gb > 100:
        raise ValueError('file_size_gb must be a whole number of GB from 1 to 100, got %r.' % (file_size_gb,))
    if not isinstance(nb_file, int) or nb_file < 1 or nb_file > 100:
        raise ValueError('nb_file must be from 1 to 100, got %r.' % (nb_file,))
    known = ('zero_block', 'random_block', 'zero_raw', 'random_raw')
    unknown = [t for t in tests if t not in known]
    if unknown or not tests:
        raise ValueError('tests must be a non-empty list of %s; got %r.' % (', '.join(known), list(tests)))
    words = ['speed', 'file_size=%d' % file_size_gb, 'nb_file=%d' % nb_file]
    if not any(t.endswith('_raw') for t in tests):
        words.append('skip_raw')
    if not any(t.endswith('_block') for t in tests):
        words.append('skip_block')
    if not any(t.startswith('zero_') for t in tests):
        words.append('skip_zero')
    if not any(t.startswith('random_') for t in tests):
        words.append('skip_random')
    return ' '.join(words)


def minimal_config(device, block_size, work_dir, device_name='tapeops-btape'):
    """A storage daemon configuration with one tape Device, enough for btape."""
    if not re.match(r'^/dev/[A-Za-z0-9/_.-]+$', device):
        raise ValueError('device must be a /dev path, got %r.' % (device,))
    if block_size % 1024 or not 1024 <= block_size <= 20000000:
        raise ValueError('block_size must be a multiple of 1024 between 1024 and 20000000, got %r.' % (block_size,))
    return '\n'.join([
        '# Written by tapeops.qualify.btape_speed for one btape run; removed afterwards.',
        'Storage {', '  Name = tapeops-btape-sd', '  WorkingDirectory = "%s"' % work_dir,
        '  Pid Directory = "%s"' % work_dir, '}',
        'Director {', '  Name = tapeops-btape-dir', '  Password = "unused-by-btape"', '}',
        'Device {', '  Name = "%s"' % device_name, '  Media Type = tapeops-test', '  Archive Device = %s' % device,
        '  Device Type = Tape', '  AutomaticMount = yes', '  AlwaysOpen = yes', '  RemovableMedia = yes',
        '  RandomAccess = no', '  Maximum Block Size = %d' % block_size, '}',
        'Messages {', '  Name = Standard', '  director = tapeops-btape-dir = all', '}', ''])
