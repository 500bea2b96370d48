# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Amanda's tapetype: the ``define tapetype`` block as amtapetype writes it and amanda.conf reads it.

Private to this collection: may change without notice. Pure functions on
text, no Ansible imports. ``render`` writes a tapetype in amtapetype's own
layout (Amanda 3.5.1 ``device-src/amtapetype.pl``, ``make_tapetype``: the
block of ``comment``, ``length N kbytes``, ``filemark N kbytes``, ``speed N
kps`` and ``blocksize N kbytes``, four spaces in, then ``#`` lines after the
closing brace); ``parse`` reads the tapetypes of an amanda.conf (or of
amtapetype's output) the way Amanda's configuration reader does
(``common-src/conffile.c``), so a tapetype written here is checked against the
real ones amtapetype wrote (tests/unit/fixtures/amanda/).

Amanda's units (conffile.c, ``get_multiplier``): a k is 1024 bytes, an m
1024 k; ``length``, ``filemark`` and ``blocksize`` are in kbytes when no unit
is given, ``speed`` in bytes per second (``kps`` is 1024 of them).
"""

from __future__ import annotations

import re

KIB = 1024
# The tape device's block sizes: at least DISK_BLOCK_KB, 32 KiB (common-src/amanda.h; conffile.c
# validate_blocksize refuses a smaller tapetype blocksize), at most LARGEST_BLOCK_ESTIMATE, 16 MiB
# (device-src/tape-device.c: the tape device's max_block_size)
MIN_BLOCK = 32 * KIB
MAX_BLOCK = 16 * KIB * KIB
# amtapetype's line when a block size is no whole number of kbytes (amtapetype.pl, make_tapetype)
BLOCK_SIZE_PROPERTY = '# add device-property "BLOCK_SIZE" "%d" to the device'
# an identifier of amanda.conf: a letter, then letters, digits, '_' and '-' (conffile.c, get_conftoken)
NAME = re.compile(r'^[A-Za-z][A-Za-z0-9_-]*$')

# unit word -> multiplier, by the unit the value is kept in (conffile.c's keytable of units)
_UNITS = {
    'b': 1, 'byte': 1, 'bytes': 1, 'bps': 1,
    'k': KIB, 'kb': KIB, 'kbps': KIB, 'kbyte': KIB, 'kbytes': KIB, 'kilobyte': KIB, 'kilobytes': KIB, 'kps': KIB,
    'm': KIB ** 2, 'mb': KIB ** 2, 'mbps': KIB ** 2, 'mbyte': KIB ** 2, 'mbytes': KIB ** 2, 'megabyte': KIB ** 2,
    'megabytes': KIB ** 2, 'mps': KIB ** 2,
    'g': KIB ** 3, 'gb': KIB ** 3, 'gbps': KIB ** 3, 'gbyte': KIB ** 3, 'gbytes': KIB ** 3, 'gigabyte': KIB ** 3,
    'gigabytes': KIB ** 3, 'gps': KIB ** 3,
    't': KIB ** 4, 'tb': KIB ** 4, 'tbps': KIB ** 4, 'tbyte': KIB ** 4, 'tbytes': KIB ** 4, 'terabyte': KIB ** 4,
    'terabytes': KIB ** 4, 'tps': KIB ** 4,
}
# the tapetype's sizes and the unit a bare number is in (bytes): kbytes for these, bytes for speed
SIZE_KEYS = {'length': KIB, 'filemark': KIB, 'blocksize': KIB, 'readblocksize': KIB, 'part-size': KIB,
             'part_size': KIB, 'part-cache-max-size': KIB, 'speed': 1}


class AmandaConfError(ValueError):
    """A tapetype that cannot be written or read; the message says what is wrong."""


def comment_text(text):
    """``text`` as a quoted string of amanda.conf can hold it: one line, no double quote and no backslash."""
    return ' '.join(str(text).replace('"', "'").replace('\\', '/').split())


def render(name, comment, length_kbytes, filemark_kbytes, speed_kps=None, blocksize_bytes=None, notes=()):
    """The ``define tapetype`` block in amtapetype's layout, and ``notes`` as ``#`` lines after it.

    ``speed_kps`` None leaves the speed out (Amanda does not use it: amanda.conf(5)); ``blocksize_bytes`` None
    leaves the block size at Amanda's default (32 kbytes), one that is no whole number of kbytes is said as
    amtapetype says it (a device-property line).
    """
    if not NAME.match(str(name)):
        raise AmandaConfError('%r is not a tapetype name amanda.conf reads: write a letter, then letters, digits, '
                              '"_" or "-", for example LTO-6-ma01-nst0.' % (name,))
    lines = ['define tapetype %s {' % name, '    comment "%s"' % comment_text(comment),
             '    length %d kbytes' % length_kbytes, '    filemark %d kbytes' % filemark_kbytes]
    if speed_kps is not None:
        lines.append('    speed %d kps' % speed_kps)
    if blocksize_bytes is not None:
        lines.append('    blocksize %d kbytes' % (blocksize_bytes // KIB) if blocksize_bytes % KIB == 0 else
                     '    ' + BLOCK_SIZE_PROPERTY % blocksize_bytes)
    lines.append('}')
    lines.extend('# %s' % ' '.join(str(note).split()) for note in notes)
    return '\n'.join(lines) + '\n'


def _value(key, words):
    """(bytes, the number as written, its unit) of a size ``key``'s words, the unit ``None`` when none is given."""
    try:
        number = int(words[0])
    except (ValueError, IndexError):
        raise AmandaConfError('%s %s: not a whole number' % (key, ' '.join(words)))
    unit = words[1].lower() if len(words) > 1 else None
    if unit is not None and unit not in _UNITS:
        raise AmandaConfError('%s %s: %r is not a unit amanda.conf knows' % (key, ' '.join(words), words[1]))
    return number * (_UNITS[unit] if unit else SIZE_KEYS[key]), number, unit


def _line(line):
    """(key, words) of one line of a block, its ``#`` comment off (outside a quoted string), or None."""
    quoted = re.match(r'^\s*([\w-]+)\s+"((?:[^"\\]|\\.)*)"', line)
    if quoted:
        return quoted.group(1).lower(), [quoted.group(2)]
    words = line.split('#', 1)[0].split()
    return (words[0].lower(), words[1:]) if words else None


def parse(text):
    """The tapetypes of ``text`` (an amanda.conf, a tapetypes file, amtapetype's output), in its order.

    Each is ``{'name', 'comment', 'notes', <key>: {'bytes', 'number', 'unit'}, ...}``: the sizes of SIZE_KEYS in
    bytes (``length 2459858944 kbytes`` is 2459858944 x 1024), other keys as their words; ``notes`` are the
    ``#`` lines inside the block (amtapetype's device-property advice). AmandaConfError for a block that is not
    closed or a size that is not one.
    """
    out, current = [], None
    for number, line in enumerate(str(text).splitlines(), 1):
        stripped = line.strip()
        if current is None:
            match = re.match(r'^define\s+tapetype\s+"?([^\s"{]+)"?\s*\{\s*(?:#.*)?$', stripped, re.IGNORECASE)
            if match:
                current = {'name': match.group(1), 'comment': None, 'notes': [], 'line': number}
            continue
        if stripped.startswith('}'):
            out.append(current)
            current = None
            continue
        if stripped.startswith('#'):
            current['notes'].append(stripped[1:].strip())
            continue
        parsed = _line(line)
        if parsed is None:
            continue
        key, words = parsed
        if key == 'comment':
            current['comment'] = words[0] if words else ''
        elif key in SIZE_KEYS:
            value, written, unit = _value(key, words)
            current[key] = {'bytes': value, 'number': written, 'unit': unit}
        else:
            current[key] = words
    if current is not None:
        raise AmandaConfError('define tapetype %s (line %d) is not closed with "}"' % (current['name'], current['line']))
    return out
