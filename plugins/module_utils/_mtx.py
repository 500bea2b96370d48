# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Parse ``mtx status`` (medium changers).

Private to this collection: may change without notice.

Pure function on text captured with ``LC_ALL=C``. Accepts the variants real
libraries print: padded and unpadded VolumeTags, ``VolumeTag = X`` on drives
and ``VolumeTag=X`` on slots, ``Empty:VolumeTag=`` (IBM TS4500), import/export
slots, "Request Sense" noise before the status, a truncated last line, and a
failed READ ELEMENT STATUS (reported in ``error``).
"""

from __future__ import annotations

import re

_HEADER = re.compile(
    r'^\s*Storage Changer\s+(?P<dev>.*?):\s*(?P<drives>\d+)\s+Drives?,\s*(?P<slots>\d+)\s+Slots?'
    r'\s*\(\s*(?P<ie>\d+)\s+Import/Export\s*\)')
_DRIVE = re.compile(
    r'^\s*Data Transfer Element\s+(?P<el>\d+)\s*:\s*(?P<state>Full|Empty)'
    r'(?:\s*\(Storage Element\s+(?P<src>\d+)\s+Loaded\))?(?:\s*:\s*VolumeTag\s*=\s*(?P<tag>.*))?')
_SLOT = re.compile(
    r'^\s*Storage Element\s+(?P<el>\d+)(?P<ie>\s+IMPORT/EXPORT)?\s*:\s*(?P<state>Full|Empty)'
    r'\s*(?::\s*VolumeTag\s*=\s*(?P<tag>.*))?')
_SENSE = re.compile(r'^mtx: Request Sense: (?P<key>[^=]+?)\s*=\s*(?P<value>.*)$')


def _tag(raw):
    if raw is None:
        return None
    raw = raw.strip()
    # An alternate tag may follow (":AlternateVolumeTag = ..."): keep the primary one.
    raw = raw.split(':', 1)[0].strip()
    return raw or None


def parse_mtx_status(text):
    """Return ``{changer, drives_count, slots_count, import_export_count,
    drives: [{element, full, source_element, barcode}],
    slots: [{element, full, barcode, import_export}], sense: {...}, error,
    complete}``.

    ``error`` is the failure line mtx printed (``READ ELEMENT STATUS Command
    Failed``) or None. ``complete`` is False when the listing has fewer
    elements than the header announced (a truncated capture).
    """
    result = {
        'changer': None, 'drives_count': None, 'slots_count': None,
        'import_export_count': None, 'drives': [], 'slots': [],
        'sense': {}, 'error': None, 'complete': False,
    }
    for line in (text or '').splitlines():
        if line.startswith('# '):
            continue
        line = line.rstrip('\r')
        match = _SENSE.match(line)
        if match:
            result['sense'][match.group('key').strip().lower().replace(' ', '_')] = match.group('value').strip()
            continue
        match = _HEADER.match(line)
        if match:
            result['changer'] = match.group('dev')
            result['drives_count'] = int(match.group('drives'))
            result['slots_count'] = int(match.group('slots'))
            result['import_export_count'] = int(match.group('ie'))
            continue
        match = _DRIVE.match(line)
        if match:
            result['drives'].append({
                'element': int(match.group('el')),
                'full': match.group('state') == 'Full',
                'source_element': int(match.group('src')) if match.group('src') else None,
                'barcode': _tag(match.group('tag')),
            })
            continue
        match = _SLOT.match(line)
        if match:
            result['slots'].append({
                'element': int(match.group('el')),
                'full': match.group('state') == 'Full',
                'barcode': _tag(match.group('tag')),
                'import_export': bool(match.group('ie')),
            })
            continue
        if 'Command Failed' in line or line.startswith('mtx: cannot') or 'No such file' in line:
            result['error'] = line.strip()
    if result['drives_count'] is not None:
        result['complete'] = (len(result['drives']) == result['drives_count']
                              and len(result['slots']) == result['slots_count'])
    return result


def drive_barcode(status, element):
    """Barcode of the cartridge in drive ``element`` (None if empty/unknown)."""
    for drive in status.get('drives', []):
        if drive['element'] == element and drive['full']:
            return drive['barcode']
    return None
