# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Parse ``mtx status`` (medium changers).

Private to this collection: may change without notice.

Pure functions on text captured with ``LC_ALL=C`` (``parse_mtx_status``), or on
the runner's result of it (``parse_mtx_result``: stdout and stderr). Accepts the variants real
libraries print: padded and unpadded VolumeTags, ``VolumeTag = X`` on drives
and ``VolumeTag=X`` on slots, ``Empty:VolumeTag=`` (IBM TS4500), import/export
slots, "Request Sense" noise before the status, a truncated last line, and a
failed READ ELEMENT STATUS or a fatal mtx error (reported in ``error`` with a
sentence saying what to try in ``error_hint``).
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
_MODE_SENSE = re.compile(r'^Mode sense \(0x1A\) for Page 0x1D failed\s*$')
# Fatal messages of mtx (mtx.c / mtxl.c / scsi_linux.c FatalError and friends).
_FATAL = (
    (re.compile(r'READ ELEMENT STATUS Command Failed', re.I),
     'The library refused READ ELEMENT STATUS (sense data above): it is offline, initialising, or in '
     'sequential/autoloader mode. Put it online in random mode and retry.'),
    (re.compile(r'illegal Element Type Code\s+\d+\s+reported', re.I),
     'mtx could not decode the changer\'s READ ELEMENT STATUS answer (an element type that does not exist): '
     'the data arrived garbled, usually a SCSI bus problem (cable, termination, HBA driver) or a library '
     'mode mtx does not know. Check dmesg for bus resets, try another HBA, or use the library\'s own tool.'),
    (re.compile(r'cannot open SCSI device|mtx: cannot|No such file or directory|Permission denied', re.I),
     'mtx could not open the changer: check the sg node (lsscsi -g), that the sg module is loaded and that '
     'you run as root.'),
    (re.compile(r'is not an sg device|failed to set sg timeout', re.I),
     'The device given is not a SCSI generic (sg) node: point mtx at the changer\'s /dev/sgN.'),
    (re.compile(r'^(?:mtx: )?No Data Transfer Element|^Element \d+ is Empty|^Usage: mtx', re.I),
     'mtx printed no status listing; check the command and the device.'),
)


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
    error_hint, complete, warnings}``.

    ``error`` is the failure line mtx printed (``READ ELEMENT STATUS Command
    Failed``, ``illegal Element Type Code 83 reported``, ...) or None.
    ``complete`` is False when the listing has fewer elements than the header
    announced or its last line may be cut short (the capture does not end with
    a newline): a cut barcode is reported as None, never half-read.
    """
    result = {
        'changer': None, 'drives_count': None, 'slots_count': None,
        'import_export_count': None, 'drives': [], 'slots': [],
        'sense': {}, 'error': None, 'error_hint': None, 'complete': False, 'warnings': [],
    }
    if isinstance(text, bytes):
        text = text.decode('utf-8', 'replace')
    text = text or ''
    lines = [line.rstrip('\r') for line in text.splitlines() if not line.startswith('# ')]
    cut = bool(text) and not text.endswith('\n') and bool(lines)
    other = []
    for index, line in enumerate(lines):
        _read_line(result, line, cut and index == len(lines) - 1, other)
    _conclude(result, lines, cut, other)
    return result


def _element(line):
    """``('drives', entry)`` or ``('slots', entry)`` for a data transfer or storage element line, else None."""
    match = _DRIVE.match(line)
    if match:
        return 'drives', {
            'element': int(match.group('el')),
            'full': match.group('state') == 'Full',
            'source_element': int(match.group('src')) if match.group('src') else None,
            'barcode': _tag(match.group('tag')),
        }
    match = _SLOT.match(line)
    if match:
        return 'slots', {
            'element': int(match.group('el')),
            'full': match.group('state') == 'Full',
            'barcode': _tag(match.group('tag')),
            'import_export': bool(match.group('ie')),
        }
    return None


def _read_line(result, line, last_cut, other):
    """One line into ``result``: sense data, the header, an element, a fatal message; ``other`` gets the rest."""
    match = _SENSE.match(line)
    if match:
        result['sense'][match.group('key').strip().lower().replace(' ', '_')] = match.group('value').strip()
        return
    match = _HEADER.match(line)
    if match:
        result['changer'] = match.group('dev')
        result['drives_count'] = int(match.group('drives'))
        result['slots_count'] = int(match.group('slots'))
        result['import_export_count'] = int(match.group('ie'))
        return
    element = _element(line)
    if element is not None:
        kind, entry = element
        if last_cut:
            entry['barcode'] = None
            result['warnings'].append('the last line %r may be cut short; its barcode is not used' % line.strip())
        result[kind].append(entry)
        return
    stripped = line.strip()
    if not stripped:
        return
    for rx, hint in _FATAL:
        if rx.search(stripped):
            if result['error'] is None:
                result['error'], result['error_hint'] = stripped, hint
            return
    if _MODE_SENSE.match(stripped):
        result['warnings'].append('%s (mtx uses default element addresses)' % stripped)
    else:
        other.append(stripped)


def _conclude(result, lines, cut, other):
    """The error of a run without a listing, the lines nobody recognised, and whether the listing is complete."""
    if result['drives_count'] is None and result['error'] is None and other:
        # No listing at all and a message nobody recognised: that message is the error.
        result['error'] = other[-1]
        result['error_hint'] = 'mtx printed no status listing; run "mtx -f DEVICE status" by hand to see why.'
    elif other:
        result['warnings'].extend('unrecognised line: %r' % line for line in other[:5])
    drives_count, slots_count = result['drives_count'], result['slots_count']
    if drives_count is not None and slots_count is not None:
        counted = len(result['drives']) == drives_count and len(result['slots']) == slots_count
        result['complete'] = counted and not cut and result['error'] is None
        if not counted:
            result['warnings'].append('the header announces %s drives and %s slots, the listing has %d and %d'
                                      % (drives_count, slots_count, len(result['drives']), len(result['slots'])))
    elif result['error'] is None and not lines:
        result['error'] = 'mtx printed nothing'
        result['error_hint'] = 'Run "mtx -f DEVICE status" by hand; check that DEVICE is the changer\'s sg node.'


def parse_mtx_result(result):
    """``mtx -f DEVICE status`` as the runner returned it (``_cli.CliResult``): stdout parsed, and a fatal
    message on stderr, or a failure that printed no listing, as the ``error`` (with ``error_hint``)."""
    status = parse_mtx_status(result.stdout or '')
    if result.rc != 0 and not (result.stdout or '').strip() and (result.stderr or '').strip():
        # mtx failed and said why on stderr (or could not be run): that is the error, not "mtx printed nothing"
        status['error'] = status['error_hint'] = None
    if (result.stderr or '').strip():
        err = parse_mtx_status(result.stderr)
        status['sense'].update(err['sense'])
        if err['error'] and not status['error']:
            status['error'], status['error_hint'] = err['error'], err['error_hint']
            status['complete'] = False
    if status['error'] is None and result.rc != 0 and not status['drives']:
        said = (result.stderr or result.stdout or '').strip().splitlines()
        device = result.cmd[2] if len(result.cmd) > 2 else 'DEVICE'
        status['error'] = said[-1] if said else 'mtx failed with exit code %s' % result.rc
        status['error_hint'] = 'Run "mtx -f %s status" by hand to see why.' % device
    return status


def drive_barcode(status, element):
    """Barcode of the cartridge in drive ``element`` (None if empty/unknown)."""
    for drive in (status or {}).get('drives', []):
        if drive['element'] == element and drive['full']:
            return drive['barcode']
    return None
