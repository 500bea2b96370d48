# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Read a cartridge's Medium Auxiliary Memory (MAM) with ``sg_read_attr`` (sg3_utils), read-only.

Private to this collection: may change without notice.

- ``command``: the command line: READ ATTRIBUTE service action 0 (attribute
  values, sg_read_attr's default), the device opened read-only
  (``--readonly``, in every sg_read_attr since sg3_utils 1.42, its first);
- ``parse``: what it prints (``Attribute values:`` then ``  NAME: VALUE``
  lines; ``-q`` leaves the first line out) into a dict with a key for every
  attribute of ``ATTRIBUTES``: None for each one the cartridge did not give
  (never 0, never ''), ``notes`` for what could not be read;
- ``parse_enumerate``: ``sg_read_attr --enumerate`` (the attributes it knows:
  id, length, format, name);
- ``classify_failure``: why it failed (not ready: no cartridge; no READ
  ATTRIBUTE; other).

Names and formats are sg_read_attr's (src/sg_read_attr.c ``attr_name_arr``,
https://github.com/doug-gilbert/sg3_utils; unchanged from 1.42 to 1.49 but
0x080b's id, listed as 0x080a up to 1.47): capacities in MiB ("[MiB]"), the manufacture date
YYYYMMDD and the last-written date YYYYMMDDHHMM as ASCII (SPC-4; IBM
Ultrium SCSI reference, "Medium Common Attributes"), the TapeAlert flags of
the previous load as a 64-bit number, flag 1 its most significant bit (HP
Ultrium TRM Q1530-90901, READ ATTRIBUTE, "TapeAlert flags"). Pure functions
on text captured with ``LC_ALL=C``; nothing raises on odd input.
"""

from __future__ import annotations

import datetime
import re

# id -> (key, the name sg_read_attr prints, kind). kind: 'int' (decimal), 'hex' (0x..), 'text' (ASCII / text,
# trailing blanks dropped), 'load' (vendor 8 chars + serial), 'date' (YYYYMMDD), 'written' (YYYYMMDDHHMM),
# 'position' (<unknown> [ff] or a hex number).
ATTRIBUTES = {
    0x0000: ('remaining_capacity_mib', 'Remaining capacity in partition [MiB]', 'int'),
    0x0001: ('maximum_capacity_mib', 'Maximum capacity in partition [MiB]', 'int'),
    0x0002: ('tape_alert_flags', 'TapeAlert flags', 'int'),
    0x0003: ('load_count', 'Load count', 'int'),
    0x0004: ('mam_space_remaining_bytes', 'MAM space remaining [B]', 'int'),
    0x0005: ('assigning_organization', 'Assigning organization', 'text'),
    0x0006: ('format_density_code', 'Format density code', 'hex'),
    0x0007: ('initialization_count', 'Initialization count', 'int'),
    0x0008: ('volume_identifier', 'Volume identifier', 'text'),
    0x0009: ('volume_change_reference', 'Volume change reference', 'hex'),
    0x020A: ('loaded_by_last', 'Density vendor/serial number at last load', 'load'),
    0x020B: ('loaded_by_1', 'Density vendor/serial number at load-1', 'load'),
    0x020C: ('loaded_by_2', 'Density vendor/serial number at load-2', 'load'),
    0x020D: ('loaded_by_3', 'Density vendor/serial number at load-3', 'load'),
    0x0220: ('total_mib_written', 'Total MiB written in medium life', 'int'),
    0x0221: ('total_mib_read', 'Total MiB read in medium life', 'int'),
    0x0222: ('mib_written_last_load', 'Total MiB written in current/last load', 'int'),
    0x0223: ('mib_read_last_load', 'Total MiB read in current/last load', 'int'),
    0x0224: ('first_encrypted_block', 'Logical position of first encrypted block', 'position'),
    0x0225: ('first_unencrypted_block', 'Logical position of first unencrypted block after first encrypted block',
             'position'),
    0x0400: ('medium_manufacturer', 'Medium manufacturer', 'text'),
    0x0401: ('medium_serial', 'Medium serial number', 'text'),
    0x0402: ('medium_length_m', 'Medium length [m]', 'int'),
    0x0403: ('medium_width_0_1mm', 'Medium width [0.1 mm]', 'int'),
    0x0404: ('medium_assigning_organization', 'Assigning organization', 'text'),
    0x0405: ('medium_density_code', 'Medium density code', 'hex'),
    0x0406: ('manufacture_date', 'Medium manufacture date', 'date'),
    0x0407: ('mam_capacity_bytes', 'MAM capacity [B]', 'int'),
    0x0408: ('medium_type', 'Medium type', 'hex'),
    0x0409: ('medium_type_information', 'Medium type information', 'hex'),
    0x0800: ('application_vendor', 'Application vendor', 'text'),
    0x0801: ('application_name', 'Application name', 'text'),
    0x0802: ('application_version', 'Application version', 'text'),
    0x0803: ('user_medium_text_label', 'User medium text label', 'text'),
    0x0804: ('last_written', 'Date and time last written', 'written'),
    0x0806: ('barcode', 'Barcode', 'text'),
    0x0807: ('owning_host', 'Owning host textual name', 'text'),
    0x0808: ('media_pool', 'Media pool', 'text'),
}
# The other attributes sg_read_attr names: kept as printed in ``attributes`` (the two usage histories' counters in
# ``usage_history``), not read further here.
OTHER_ATTRIBUTES = {
    0x0340: 'Medium usage history', 0x0341: 'Partition usage history', 0x040A: 'Numeric medium serial number',
    0x0805: 'Text localization identifier', 0x0809: 'Partition user text label', 0x080A: 'Load/unload at partition',
    0x080B: 'Application format version', 0x080C: 'Volume coherency information',
    0x0820: 'Medium globally unique identifier', 0x0821: 'Media pool globally unique identifier',
}
_HISTORIES = (0x0340, 0x0341)
# "Assigning organization" is both 0x0005 (device) and 0x0404 (medium); sg_read_attr prints them in id order,
# so the first of the two printed is 0x0005 when both are there.
_BY_NAME = {}
for _id, _name in sorted(list((i, a[1]) for i, a in ATTRIBUTES.items()) + list(OTHER_ATTRIBUTES.items())):
    _BY_NAME.setdefault(_name.lower(), []).append(_id)
KEYS = tuple(key for key, dummy, dummy2 in ATTRIBUTES.values())

# Medium type (0x0408): 00h data, 01h cleaning, 80h write-once (Sony StorStation LIB-D81 product description,
# "MEDIUM TYPE" table; SSC-4). Other values are left unknown.
MEDIUM_TYPES = {0x00: 'data', 0x01: 'cleaning', 0x80: 'worm'}

_LINE = re.compile(r'^  (?P<name>\S.*?): ?(?P<value>.*)$')
_CONTINUED = re.compile(r'^  (?P<name>\S.*?) -$')
_CONT_VALUE = re.compile(r'^      (?P<name>\S.*?): ?(?P<value>.*)$')
_UNKNOWN_ID = re.compile(r'^(?:unknown|vendor specific) (?:device|medium|host) attribute 0x([0-9a-f]+)$'
                         r'|^reserved attribute 0x([0-9a-f]+)$', re.I)
_HEX_DUMP = re.compile(r'^\s*[0-9a-fA-F]{2,8}\s{2,}((?:[0-9a-fA-F]{2}\s{1,2})*[0-9a-fA-F]{2})(?:\s{2,}.*)?$')
_SUB_LINE = re.compile(r'^    (?P<name>\S.*?): (?P<value>\d+)$')


def command(sg, partition=0):
    """``sg_read_attr`` reading the attribute values of ``partition`` of the cartridge in ``sg``, opened read-only.

    READ ATTRIBUTE service action 0 is sg_read_attr's default (``--sa``); ``-p`` is its PARTITION number, not a
    service action (sg_read_attr(8)). Attributes are per partition; partition 0 holds the cartridge's own.
    """
    if not isinstance(sg, str) or not sg.startswith('/dev/'):
        raise ValueError('sg must be a device path such as /dev/sg3, got %r.' % (sg,))
    if isinstance(partition, bool) or not isinstance(partition, int) or not 0 <= partition <= 255:
        raise ValueError('partition must be a number from 0 to 255, got %r.' % (partition,))
    cmd = ['sg_read_attr', '--readonly']
    if partition:
        cmd.append('--partition=%d' % partition)
    return cmd + [sg]


def _text(text):
    if isinstance(text, bytes):
        return text.decode('utf-8', 'replace')
    return text if isinstance(text, str) else ''


def _int(raw):
    raw = raw.strip()
    return int(raw) if raw.isdigit() else None


def _hex(raw):
    match = re.match(r'^0x([0-9a-f]+)$', raw.strip(), re.I)
    return int(match.group(1), 16) if match else None


def _date(raw):
    raw = raw.strip()
    try:
        return datetime.datetime.strptime(raw, '%Y%m%d').date().isoformat() if re.match(r'^\d{8}$', raw) else None
    except ValueError:
        return None


def _written(raw):
    raw = raw.strip()
    try:
        return datetime.datetime.strptime(raw, '%Y%m%d%H%M').strftime('%Y-%m-%dT%H:%M') \
            if re.match(r'^\d{12}$', raw) else None
    except ValueError:
        return None


def _load(raw):
    """``'HP      HUJ808A5L4  '`` -> ``{'vendor': 'HP', 'serial': 'HUJ808A5L4'}``: 8 characters of vendor, serial."""
    if not raw.strip():
        return None
    vendor, serial = raw[:8].strip(), raw[8:].strip()
    return {'vendor': vendor or None, 'serial': serial or None}


def _position(raw):
    raw = raw.strip()
    if raw.startswith('<unknown'):
        return None
    return int(raw, 16) if re.match(r'^[0-9a-f]+$', raw, re.I) else None


_READERS = {'int': _int, 'hex': _hex, 'date': _date, 'written': _written, 'load': _load, 'position': _position,
            'text': lambda raw: raw.strip() or None}


def tape_alert_active(flags):
    """The TapeAlert flag numbers set in the MAM's 64-bit TapeAlert flags (flag 1 = most significant bit)."""
    if isinstance(flags, bool) or not isinstance(flags, int) or not 0 <= flags < 1 << 64:
        return None
    return [n for n in range(1, 65) if flags >> (64 - n) & 1]


def _lines(text):
    """Lines of the output; a last line without its newline (a cut capture) is left out and said."""
    lines = _text(text).split('\n')
    last = lines.pop()      # '' after the last newline; else a line that was cut
    notes = []
    if last.strip() and not last.startswith('# '):
        notes.append('the output ends in a cut line %r; it is not used' % last.strip()[:80])
    return [line.rstrip('\r') for line in lines if not line.startswith('# ')], notes


def _attribute(name, raw, out, printed, notes):
    """One attribute's line read into ``out`` (and ``printed``); the attribute whose hex dump or usage counters
    follow on the next lines, or None."""
    ids = [i for i in _BY_NAME.get(name.lower(), []) if '0x%04x' % i not in printed]
    unknown = _UNKNOWN_ID.match(name)
    if unknown:
        ids = [int(unknown.group(1) or unknown.group(2), 16)]
    if not ids:
        notes.append('attribute %r is not one sg_read_attr names; not read' % name[:80])
        return None
    attr = ids[0]
    printed['0x%04x' % attr] = raw.rstrip()
    if attr not in ATTRIBUTES:
        return '0x%04x' % attr      # kept as printed, with the hex or counters that follow
    key, dummy, kind = ATTRIBUTES[attr]
    value = _READERS[kind](raw)
    out[key] = value
    if value is None and raw.strip() and not (kind == 'position' and raw.strip().startswith('<unknown')):
        notes.append('%s: %r does not read as %s' % (name, raw.strip()[:40], kind))
        return '0x%04x' % attr      # a long binary attribute: sg_read_attr prints its hex on the next lines
    return None


def parse(text):
    """``sg_read_attr`` attribute values (default or ``-q``) -> ``{key: value, ...}`` for every ``KEYS``.

    Also: ``attributes`` (``{'0x0003': 'as printed'}`` for every attribute read, vendor ones as their hex),
    ``tape_alert_active`` (flag numbers of the previous load), ``medium_type_name`` (``data`` / ``cleaning`` /
    ``worm``), ``usage_history`` (attribute 0x0340's counters), ``notes`` and ``read`` (how many attributes
    were read). A value sg_read_attr printed that does not read as its kind stays None, with a note.
    """
    lines, notes = _lines(text)
    out = dict.fromkeys(KEYS)
    printed = {}
    usage = {}
    pending = None          # a name sg_read_attr wrapped over two lines ("... block -")
    dump = None             # the attribute whose hex dump or usage counters follow
    for line in lines:
        if not line.strip() or line.strip() == 'Attribute values:':
            dump = None
            continue
        hexed = _HEX_DUMP.match(line) if dump is not None else None
        if hexed:
            printed[dump] = (printed.get(dump, '') + ' ' + hexed.group(1)).strip()
            continue
        sub = _SUB_LINE.match(line) if dump in ('0x0340', '0x0341') else None
        if sub:
            usage.setdefault(dump, {})[sub.group('name')] = int(sub.group('value'))
            continue
        dump = None
        cont = _CONTINUED.match(line)
        if cont:
            pending = cont.group('name')
            continue
        match = _CONT_VALUE.match(line) if pending else None
        if match:
            name, raw = '%s %s' % (pending, match.group('name')), match.group('value')
        else:
            match = _LINE.match(line)
            if not match:
                notes.append('line not read: %r' % line.strip()[:80])
                pending = None
                continue
            name, raw = match.group('name'), match.group('value')
        pending = None
        dump = _attribute(name, raw, out, printed, notes)
    out['attributes'] = printed
    out['tape_alert_active'] = tape_alert_active(out['tape_alert_flags'])
    out['medium_type_name'] = MEDIUM_TYPES.get(out['medium_type']) if out['medium_type'] is not None else None
    out['usage_history'] = dict((k, usage[k]) for k in sorted(usage)) or None
    out['read'] = len(printed)
    out['notes'] = notes
    return out


_ENUM_LINE = re.compile(r'^\s+0x([0-9a-f]{4}):\s+(-?\d+)\s+(\S+)\s+(.*?)\s*$', re.I)
_ENUM_CONT = re.compile(r'^\t\t\t\t(\S.*?)\s*$')
_ENUM_SA = re.compile(r'^\s+(\d+):\s+(\S+)\s+(.*?)\s*$')


def parse_enumerate(text):
    """``sg_read_attr --enumerate``: the attributes and service actions it knows.

    ``{'attributes': {0x0003: {'length', 'format', 'name'}}, 'service_actions': {0: 'av'}, 'duplicates': [(id,
    name)]}``: an id listed twice keeps its first entry (up to sg3_utils 1.47 the table lists "Application format
    version" as 0x080a, after "Load/unload at partition").
    """
    attributes, actions, duplicates = {}, {}, []
    last = None
    lines, dummy = _lines(text)
    in_actions = False
    for line in lines:
        if line.startswith('SA_value'):
            in_actions = True
            continue
        match = _ENUM_LINE.match(line)
        if match and not in_actions:
            entry = {'length': int(match.group(2)), 'format': match.group(3), 'name': match.group(4)}
            last = int(match.group(1), 16)
            if last in attributes:
                duplicates.append((last, entry['name']))
                last = None
            else:
                attributes[last] = entry
            continue
        cont = _ENUM_CONT.match(line)
        if cont and last is not None and not in_actions:
            attributes[last]['name'] += ' ' + cont.group(1)
            continue
        match = _ENUM_SA.match(line) if in_actions else None
        if match:
            actions[int(match.group(1))] = match.group(2)
    return {'attributes': attributes, 'service_actions': actions, 'duplicates': duplicates}


# sg_read_attr's own messages (src/sg_read_attr.c) and sg3_utils' names of its exit statuses (lib/sg_lib_data.c
# sg_exit_str_arr): "Read attribute command: Device not ready" (a drive with no cartridge is not ready), "Read
# attribute command not supported" (invalid opcode), "Read attribute command: Illegal request".
_NOT_READY = ('not ready',)
_UNSUPPORTED = ('read attribute command not supported', 'invalid opcode', 'illegal request')


def classify_failure(rc, stdout, stderr):
    """Why ``sg_read_attr`` failed: ``('not_ready' | 'unsupported' | 'error', the line that says so)``."""
    text = '\n'.join(_text(x) for x in (stdout, stderr) if x).strip()
    low = text.lower()
    for kind, patterns in (('not_ready', _NOT_READY), ('unsupported', _UNSUPPORTED)):
        for pattern in patterns:
            if pattern in low:
                return kind, next(ln.strip() for ln in text.splitlines() if pattern in ln.lower())
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    # sg3_utils ends a failure with a hint ("Some error occurred, try again with '-v' ..."); the line naming the
    # command ("read attribute: transport: Host_status=0x05 [DID_ABORT]") says what happened
    named = [ln for ln in lines if 'read attribute' in ln.lower() and 'cdb' not in ln.lower()]
    useful = [ln for ln in lines if not ln.startswith(('Some error occurred', 'sg_read_attr failed'))]
    return 'error', (named or useful or lines or ['sg_read_attr exited with %s' % rc])[-1]
