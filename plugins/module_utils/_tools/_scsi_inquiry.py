# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Parse SCSI identity: ``lsscsi -g``, ``sg_inq`` (standard and VPD 0x80),
``tapeinfo``, READ BLOCK LIMITS data, ``/proc/scsi/scsi`` and ``lshw -class
tape``.

Private to this collection: may change without notice. Parsers return what
they could read; the ones that raise raise InquiryParseError (a ValueError)
with a sentence saying what to do.
"""

from __future__ import annotations

import re

from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError


class InquiryParseError(TapeopsError, ValueError):
    """Text that is not the output it was given as; the message says what to do."""


_LSSCSI_HEAD = re.compile(r'^\[(?P<hctl>[^\]]+)\]\s+(?P<type>\S+)\s+')


def parse_lsscsi(text):
    """``lsscsi``, ``lsscsi -g`` or ``lsscsi -ig`` lines into dicts.

    ``{hctl, type, vendor, model, revision, device, sg}``; ``device`` is None
    when lsscsi prints ``-`` (no upper driver bound, for example a drive held
    by IBM lin_tape instead of st). lsscsi prints vendor, model and revision in
    fixed 8/16/4 columns, so vendor and model may contain spaces.
    """
    out = []
    for line in (text or '').splitlines():
        if line.startswith('# '):
            continue
        line = line.strip().strip('*').rstrip()
        match = _LSSCSI_HEAD.match(line)
        if not match or match.group('hctl').startswith('N:'):
            # NVMe namespaces ("[N:0:0:1]") have no SCSI columns.
            continue
        rest = line[match.end():]
        vendor, model, revision = rest[0:8].strip(), rest[9:25].strip(), rest[26:30].strip()
        tail = rest[30:].split()
        device = tail[0] if tail and tail[0].startswith('/dev/') else None
        sg = next((t for t in tail if t.startswith('/dev/sg')), None)
        if device == sg:
            device = None
        out.append({
            'hctl': match.group('hctl'),
            'type': match.group('type'),
            'vendor': vendor,
            'model': model,
            'revision': revision,
            'device': device,
            'sg': sg,
        })
    return out


_INQ_FIELDS = {
    'vendor identification': 'vendor',
    'product identification': 'product',
    'product revision level': 'revision',
    'unit serial number': 'serial',
}


def parse_sg_inq(text):
    """``sg_inq DEV`` or ``sg_inq -p 0x80 DEV`` into ``{vendor, product,
    revision, serial, pdt, device_type}`` (missing ones None)."""
    out = {'vendor': None, 'product': None, 'revision': None, 'serial': None,
           'pdt': None, 'device_type': None}
    for line in (text or '').splitlines():
        if line.startswith('# '):
            continue
        if ':' in line:
            key, value = line.split(':', 1)
            name = _INQ_FIELDS.get(key.strip().lower())
            if name:
                out[name] = value.strip() or None
                continue
        match = re.search(r'Peripheral device type:\s*(.+?)\s*$', line)
        if match:
            out['device_type'] = match.group(1)
        match = re.search(r'\bPDT=(\d+)', line)
        if match and out['pdt'] is None:
            out['pdt'] = int(match.group(1))
    return out


def parse_tapeinfo(text):
    """``tapeinfo -f DEV`` (mtx package) ``Key: value`` lines into a dict."""
    out = {}
    for line in (text or '').splitlines():
        if line.startswith('# ') or ':' not in line:
            continue
        key, value = line.split(':', 1)
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] == "'":
            value = value[1:-1].strip()
        elif re.match(r'^-?\d+$', value):
            value = int(value)
        out[key.strip()] = value
    return out


def decode_read_block_limits(data):
    """Decode the 6 bytes of READ BLOCK LIMITS (SSC-3 7.7).

    Byte 0 bits 4..0 are the granularity (block sizes must be multiples of
    2**granularity), bytes 1..3 the maximum, bytes 4..5 the minimum block
    length. Some sg_read_block_limits versions fold byte 0 into the maximum;
    tgt sets a granularity there, which makes them print 152043520 for a
    1048576 limit: we decode the bytes ourselves.
    """
    if len(data) < 6:
        raise InquiryParseError('READ BLOCK LIMITS returned %d bytes, expected 6' % len(data))
    granularity = data[0] & 0x1f
    maximum = (data[1] << 16) | (data[2] << 8) | data[3]
    minimum = (data[4] << 8) | data[5]
    return {'min': minimum, 'max': maximum, 'granularity': granularity}


def parse_read_block_limits_text(text):
    """Text output of ``sg_read_block_limits`` into ``{min, max}`` (bytes)."""
    out = {'min': None, 'max': None}
    for line in (text or '').splitlines():
        match = re.search(r'(Minimum|Maximum) block size:\s*(\d+)', line)
        if match:
            out['min' if match.group(1) == 'Minimum' else 'max'] = int(match.group(2))
    return out


def parse_hex_bytes(text):
    """Bytes of an sg3_utils ``--hex`` dump (``00     09 10 00 00 00 04``).

    Up to 16 bytes per line, separated by one space (two between the halves);
    the ASCII column after three or more spaces is ignored.
    """
    data = bytearray()
    for line in (text or '').splitlines():
        match = re.match(r'^\s*([0-9a-fA-F]+)\s{2,}((?:[0-9a-fA-F]{2}(?: {1,2}(?=[0-9a-fA-F]{2}\b)|\b))+)', line)
        if not match:
            continue
        for token in match.group(2).split()[:16]:
            data.append(int(token, 16))
    return bytes(data)


_PROC_HOST = re.compile(r'^Host:\s*scsi(\d+)\s+Channel:\s*(\d+)\s+Id:\s*(\d+)\s+Lun:\s*(\d+)\s*$')
_PROC_VENDOR = re.compile(r'^\s*Vendor:\s?(.{0,8}?)\s*Model:\s?(.{0,16}?)\s*Rev:\s?(.{0,4}?)\s*$')
_PROC_TYPE = re.compile(r'^\s*Type:\s+(.*?)\s+ANSI\s+SCSI revision:\s*([0-9a-fA-F]+)\s*$')


def parse_proc_scsi_scsi(text):
    """``cat /proc/scsi/scsi`` into ``{'devices': [{hctl, host, channel, id, lun,
    vendor, model, revision, type, ansi_revision}], 'complete', 'warnings'}``.

    Vendor, model and revision are fixed 8/16/4 columns (they may contain
    spaces). A device whose Vendor or Type line is missing (a cut capture)
    keeps None there; ``complete`` is False then. Raises InquiryParseError when
    the text has no ``Host:`` line at all.
    """
    if isinstance(text, bytes):
        text = text.decode('utf-8', 'replace')
    text = text or ''
    lines = [line.rstrip('\r') for line in text.splitlines() if not line.startswith('# ')]
    cut = bool(text) and not text.endswith('\n') and bool(lines)
    out = {'devices': [], 'complete': True, 'warnings': []}
    current = None
    for index, line in enumerate(lines):
        if cut and index == len(lines) - 1:
            out['complete'] = False
            out['warnings'].append('the last line %r may be cut short; it is not used' % line.strip())
            break
        match = _PROC_HOST.match(line.strip())
        if match:
            host, channel, target, lun = (int(g) for g in match.groups())
            current = {'hctl': '%d:%d:%d:%d' % (host, channel, target, lun), 'host': host, 'channel': channel,
                       'id': target, 'lun': lun, 'vendor': None, 'model': None, 'revision': None, 'type': None,
                       'ansi_revision': None}
            out['devices'].append(current)
            continue
        if current is None:
            continue
        match = _PROC_VENDOR.match(line)
        if match:
            current['vendor'] = match.group(1).strip() or None
            current['model'] = match.group(2).strip() or None
            current['revision'] = match.group(3).strip() or None
            continue
        match = _PROC_TYPE.match(line)
        if match:
            current['type'] = match.group(1).strip()
            current['ansi_revision'] = int(match.group(2), 16)
    for device in out['devices']:
        if device['vendor'] is None or device['type'] is None:
            out['complete'] = False
            out['warnings'].append('device %s lacks its Vendor or Type line' % device['hctl'])
    if not out['devices']:
        raise InquiryParseError('No "Host: scsiN Channel: ..." line: this is not /proc/scsi/scsi. Paste the output '
                                'of "cat /proc/scsi/scsi" (or use lsscsi -g).')
    return out


def tape_devices(devices):
    """The sequential-access (tape) entries of ``parse_proc_scsi_scsi``/``parse_lsscsi`` results."""
    return [d for d in devices if (d.get('type') or '').lower() in ('sequential-access', 'tape')]


def parse_lshw_tape(text):
    """``lshw -class tape`` (text output) into tape entries.

    Returns ``{'tapes': [{product, vendor, logical_name, bus_info, version,
    serial, capabilities, configuration, description, physical_id}],
    'format', 'complete', 'warnings'}``. Missing fields are None. Raises
    InquiryParseError when the text holds no tape entry, or is lshw's JSON
    (not read here: no real capture of it to test on).
    """
    if isinstance(text, bytes):
        text = text.decode('utf-8', 'replace')
    text = text or ''
    body = '\n'.join(line for line in text.splitlines() if not line.startswith('# '))
    if body.lstrip().startswith(('{', '[')):
        raise InquiryParseError('This is lshw JSON; paste the text output of "lshw -class tape" instead.')
    out = {'tapes': [], 'format': 'text', 'complete': True, 'warnings': []}
    cut = bool(text) and not text.endswith('\n')
    lines = body.splitlines()
    current = None
    keys = {'product': 'product', 'vendor': 'vendor', 'logical name': 'logical_name', 'bus info': 'bus_info',
            'version': 'version', 'serial': 'serial', 'capabilities': 'capabilities',
            'configuration': 'configuration', 'description': 'description', 'physical id': 'physical_id'}
    for index, line in enumerate(lines):
        stripped = line.strip()
        if re.match(r'^\*-tape(?::\d+)?(?:\s+.*)?$', stripped):
            current = dict((name, None) for name in keys.values())
            out['tapes'].append(current)
            continue
        if stripped.startswith('*-'):
            current = None
            continue
        if current is None or ':' not in stripped:
            continue
        if cut and index == len(lines) - 1:
            out['complete'] = False
            out['warnings'].append('the last line %r may be cut short; it is not used' % stripped)
            continue
        key, value = stripped.split(':', 1)
        name = keys.get(key.strip())
        if name:
            current[name] = value.strip() or None
    for tape in out['tapes']:
        if tape['configuration']:
            tape['configuration'] = dict(item.split('=', 1) for item in tape['configuration'].split()
                                         if '=' in item)
        if tape['capabilities']:
            tape['capabilities'] = tape['capabilities'].split()
    if not out['tapes']:
        raise InquiryParseError('No "*-tape" entry: this is not "lshw -class tape" output, or lshw found no tape '
                                'drive (is the st driver bound? see lsscsi -g).')
    return out
