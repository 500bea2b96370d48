# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Parse SCSI identity: ``lsscsi -g``, ``sg_inq`` (standard and VPD 0x80),
``tapeinfo`` and READ BLOCK LIMITS data.

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
