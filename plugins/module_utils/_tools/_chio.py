# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Parse ``chio status`` (FreeBSD/NetBSD/OpenBSD medium changers).

Private to this collection: may change without notice.

chio(1) prints one line per element, ``<type> <unit>: <FLAGS>`` followed by
what was asked for (``-a``: ``sense: <0x00/0x00> voltag: <TAG:0> avoltag:
<:0> source: <slot 3> intaddr: <256> scsi: <?:?>``; bin/chio/chio.c
do_status). Element types are ``picker``, ``slot``, ``portal`` (import/export)
and ``drive``; flags are FULL, IMPEXP, EXCEPT, ACCESS, EXENAB, INEAB.
Terminal copies wrapped at a fixed width are unwrapped first.

An empty status (no element at all) is not an empty library: chio printed
nothing because it could not read the changer. ``parse_chio_status`` raises
``ChioParseError`` then, with a sentence saying what to try.
"""

from __future__ import annotations

import re

from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError

_ELEMENT = re.compile(r'^(picker|slot|portal|drive)\s+(\d+):\s*(?:<([A-Z_,]*)>)?(.*)$')
_FIELD = re.compile(r'(sense|voltag|avoltag|source|intaddr|scsi):\s*<([^>]*)>')
_NO_ELEMENTS = re.compile(r'^(\S+): no (picker|slot|portal|drive) elements\s*$')
_ERROR = re.compile(r'^chio: (.*)$')


class ChioParseError(TapeopsError, ValueError):
    """``chio status`` output with no element in it; the message says what to try."""


def _unwrap(lines):
    """Join the continuation lines of a terminal copy wrapped at a fixed width."""
    out = []
    for line in lines:
        if out and line.strip() and not _ELEMENT.match(line.strip()) and not _ERROR.match(line.strip()) \
                and not _NO_ELEMENTS.match(line.strip()):
            out[-1] = out[-1].rstrip() + line.strip()
            if out[-1].endswith(':'):
                out[-1] += ' '
        else:
            out.append(line)
    return out


def _tag(raw):
    """``'UN0101L3:0'`` -> ``'UN0101L3'``; ``':0'`` -> None."""
    if raw is None:
        return None
    volid = raw.rsplit(':', 1)[0].strip()
    return volid or None


def _element(unit, flags, rest):
    """One element line's entry: ``unit``, its ``flags`` (``FULL,ACCESS``) and the fields after them."""
    names = [f for f in (flags or '').split(',') if f]
    entry = {'unit': unit, 'flags': names, 'full': 'FULL' in names, 'barcode': None, 'source': None}
    fields = dict(_FIELD.findall(rest))
    if 'voltag' in fields:
        entry['barcode'] = _tag(fields['voltag'])
    if fields.get('avoltag'):
        entry['alternate_barcode'] = _tag(fields['avoltag'])
    if fields.get('source'):
        entry['source'] = fields['source']
    if 'sense' in fields:
        entry['sense'] = fields['sense']
    if 'intaddr' in fields and fields['intaddr'].isdigit():
        entry['address'] = int(fields['intaddr'])
    return entry


def parse_chio_status(text):
    """``{'pickers', 'slots', 'portals', 'drives': [{unit, full, flags, barcode,
    source, sense, ...}], 'complete', 'warnings'}``.

    ``barcode`` is None when chio printed no ``voltag`` (status without
    ``-v``/``-a``) or the tag is empty. Raises ChioParseError when the text
    holds no element (or only chio's error), because that is never a library.
    """
    if isinstance(text, bytes):
        text = text.decode('utf-8', 'replace')
    text = text or ''
    raw = [line.rstrip('\r') for line in text.splitlines() if not line.startswith('# ')]
    cut = bool(text) and not text.endswith('\n') and bool(raw)
    lines = _unwrap(raw)
    out = {'pickers': [], 'slots': [], 'portals': [], 'drives': [], 'complete': True, 'warnings': []}
    errors = []
    for index, line in enumerate(lines):
        stripped = line.strip()
        if not stripped:
            continue
        match = _ERROR.match(stripped)
        if match:
            errors.append(stripped)
            continue
        match = _NO_ELEMENTS.match(stripped)
        if match:
            out['warnings'].append(stripped)
            continue
        match = _ELEMENT.match(stripped)
        if not match:
            out['warnings'].append('unrecognised line: %r' % stripped[:120])
            continue
        entry = _element(int(match.group(2)), match.group(3), match.group(4))
        if cut and index == len(lines) - 1:
            # The last line may have lost its end: keep nothing it might have cut.
            entry['barcode'] = None
            entry['source'] = None
            out['complete'] = False
            out['warnings'].append('the last line may be cut short; its barcode and source are not used')
        out[match.group(1) + 's'].append(entry)
    count = sum(len(out[k]) for k in ('pickers', 'slots', 'portals', 'drives'))
    if not count:
        said = '; '.join(errors) if errors else 'no element at all'
        raise ChioParseError(
            'chio status listed no element (%s): chio could not read the changer, this is not an empty '
            'library. Check the changer device (chio -f /dev/chN status, camcontrol devlist) and that the '
            'ch(4) driver is attached.' % said)
    if errors:
        out['complete'] = False
        out['warnings'].extend(errors)
    return out


def drive_barcode(status, unit):
    """Barcode of the cartridge in drive ``unit`` (None if empty or unknown)."""
    for drive in (status or {}).get('drives', []):
        if drive['unit'] == unit and drive['full']:
            return drive['barcode']
    return None
