# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Parse ``sg_logs`` (sg3_utils) output for tape drives.

Private to this collection: may change without notice.

Pure functions on text captured with ``LC_ALL=C``:

- ``parse_supported_pages``: page 0x00 (the list of pages a drive has);
- ``parse_page``: one decoded page (0x0C sequential access, 0x14 device
  statistics, 0x17 volume statistics, 0x2E TapeAlert, ...) into
  ``{key: value}`` with snake_case keys and integer values where the text is a
  number (a unit such as ``GB`` or ``MB`` is kept in the key: ``..._gb``);
- ``parse_hex_page``: a page ``sg_logs`` cannot decode (HP/IBM vendor pages
  such as 0x34), from its hex dump, into ``{parameter_code: value}``;
- ``parse_all``: an ``sg_logs -a`` listing split page by page;
- ``classify_failure``: tells "the device has no LOG SENSE" (tgt answers
  "invalid opcode") from a real failure.
"""

from __future__ import annotations

import re

PAGE_SUPPORTED = 0x00
PAGE_SEQUENTIAL_ACCESS = 0x0C
PAGE_DEVICE_STATISTICS = 0x14
PAGE_VOLUME_STATISTICS = 0x17
PAGE_TAPE_ALERT = 0x2E
PAGE_HP_0x34 = 0x34

# Page titles printed by sg_logs (sg3_utils 1.4x-1.48) when decoding a page.
_TITLES = (
    (re.compile(r'^Supported log pages'), 0x00),
    (re.compile(r'^Write error counter page'), 0x02),
    (re.compile(r'^Read error counter page'), 0x03),
    (re.compile(r'^Non-medium error page'), 0x06),
    (re.compile(r'^Sequential access device page'), 0x0C),
    (re.compile(r'^Temperature page'), 0x0D),
    (re.compile(r'^DT device status page'), 0x11),
    (re.compile(r'^TapeAlert response page'), 0x12),
    (re.compile(r'^Requested recovery page'), 0x13),
    (re.compile(r'^Device statistics page'), 0x14),
    (re.compile(r'^Service buffer information page'), 0x15),
    (re.compile(r'^Tape diagnostics data page'), 0x16),
    (re.compile(r'^Volume statistics page'), 0x17),
    (re.compile(r'^Protocol Specific port page'), 0x18),
    (re.compile(r'^Power condition transitions page'), 0x1A),
    (re.compile(r'^Data compression page\s+\(ssc'), 0x1B),
    (re.compile(r'^Tape alert page'), 0x2E),
    (re.compile(r'^Tape usage page'), 0x30),
    (re.compile(r'^Tape capacity page'), 0x31),
    (re.compile(r'^Data compression page\s+\(LTO'), 0x32),
)
_UNABLE = re.compile(r'^Unable to decode (?:page\s*=\s*(0x[0-9a-fA-F]+)|(.*?)\s*\[)', re.I)
_PAGE_CODE_SUFFIX = re.compile(r'\[(0x[0-9a-fA-F]+)\]\s*:?\s*$')
_SUPPORTED_LINE = re.compile(r'^\s*0x([0-9a-fA-F]{2})(?:,0x([0-9a-fA-F]{2}))?(?:\s+(.*?))?\s*$')
_HEX_LINE = re.compile(r'^\s*([0-9a-fA-F]{2,8})\s{2,}((?:[0-9a-fA-F]{2}\s+)*[0-9a-fA-F]{2})(?:\s{2,}.*)?$')
_KV = re.compile(r'^\s*(?P<key>[^:=]+?)\s*(?::|=)\s*(?P<value>.*?)\s*$')
_NUMBER_UNIT = re.compile(r'^(-?\d+)(?:\s+([A-Za-z]+))?$')


def _lines(text):
    return [line.rstrip('\r') for line in (text or '').splitlines() if not line.startswith('# ')]


def snake(label):
    """``'Lifetime media loads'`` -> ``'lifetime_media_loads'``."""
    label = label.replace('[MB]', 'mb').replace('(ms)', 'ms')
    label = re.sub(r"'s\b", 's', label)
    label = re.sub(r'[^0-9A-Za-z]+', '_', label).strip('_').lower()
    return label


def parse_supported_pages(text):
    """Page codes listed in a page 0x00 decode (``sg_logs -p 0`` or ``-a``).

    Returns a sorted list of ints; subpage entries (``0x18,0x01``) are kept as
    their page code only once.
    """
    pages = set()
    in_list = False
    for line in _lines(text):
        stripped = line.strip()
        if stripped.startswith('Supported log pages'):
            in_list = True
            continue
        if not in_list:
            continue
        if not stripped:
            if pages:
                break
            continue
        match = _SUPPORTED_LINE.match(line)
        if not match:
            break
        pages.add(int(match.group(1), 16))
    return sorted(pages)


def _value(raw):
    match = _NUMBER_UNIT.match(raw)
    if match:
        return int(match.group(1)), (match.group(2) or '').lower() or None
    if re.match(r'^0x[0-9a-fA-F]+$', raw):
        return int(raw, 16), None
    return raw, None


def parse_page(text):
    """Parse one decoded page body into ``{snake_key: value}``.

    Lines without ``:`` or ``=`` are kept under ``'_notes'`` (for example
    "Cleaning action not required (or completed)"). Repeated keys (mount
    history, per-density hours) keep their first value; nested listings are not
    flattened further. A unit after a number goes into the key
    (``data_bytes_received_with_write_commands_gb``).
    """
    result = {}
    notes = []
    pending = None
    lines = _lines(text)
    for index, line in enumerate(lines):
        stripped = line.strip()
        if not stripped or _HEX_LINE.match(line) or stripped.startswith('.....'):
            continue
        if any(rx.match(stripped) for rx, _code in _TITLES) or _UNABLE.match(stripped):
            continue
        if pending is not None:
            # A label wrapped onto two lines ("...forced reset\n and/or ... : 0").
            stripped = pending + ' ' + stripped
            pending = None
        match = _KV.match(stripped)
        if not match:
            following = lines[index + 1].strip() if index + 1 < len(lines) else ''
            if following[:1].islower():
                pending = stripped
            else:
                notes.append(stripped)
            continue
        key, raw = match.group('key'), match.group('value')
        if raw == '':
            continue
        value, unit = _value(raw)
        name = snake(key)
        if unit in ('gb', 'mb', 'kb', 'c', 'ms'):
            name = '%s_%s' % (name, unit)
        result.setdefault(name, value)
    if notes:
        result['_notes'] = notes
    return result


def parse_tape_alert(text):
    """TapeAlert page 0x2E: ``{'flags': {name: 0|1}, 'active': [names set]}``."""
    flags = {}
    for key, value in parse_page(text).items():
        if key.startswith('_') or not isinstance(value, int):
            continue
        flags[key] = value
    # "Reserved parameter code 0x3d, flag: 0" lines decode to a key ending with _flag.
    return {'flags': flags, 'active': sorted(k for k, v in flags.items() if v)}


def parse_sequential_access(text):
    """Page 0x0C: byte counters and the cleaning request, named for the verdict."""
    page = parse_page(text)
    out = {'raw': page}
    mapping = {
        'data_bytes_received_with_write_commands_gb': 'host_written_gb',
        'data_bytes_written_to_media_by_write_commands_gb': 'media_written_gb',
        'data_bytes_read_from_media_by_read_commands_gb': 'media_read_gb',
        'data_bytes_transferred_by_read_commands_gb': 'host_read_gb',
    }
    for key, name in mapping.items():
        out[name] = page.get(key)
    notes = ' '.join(page.get('_notes', []))
    if 'Cleaning action required' in notes:
        out['cleaning_required'] = True
    elif 'Cleaning action not required' in notes:
        out['cleaning_required'] = False
    else:
        out['cleaning_required'] = None
    return out


def hex_dump_bytes(text):
    """Bytes of an ``sg_logs -H`` / "Unable to decode ... here is hex" dump.

    Returns ``(data, truncated)``; ``truncated`` is True when sg_logs said it
    cut the dump short (``..... [truncated after 64 of 190 bytes ...]``).
    """
    data = bytearray()
    truncated = False
    expected = None
    for line in _lines(text):
        if '[truncated after' in line:
            truncated = True
            break
        match = _HEX_LINE.match(line)
        if not match:
            continue
        offset = int(match.group(1), 16)
        if offset != len(data):
            continue
        for token in match.group(2).split():
            if expected is not None and len(data) >= expected:
                break
            data.append(int(token, 16))
        if expected is None and len(data) >= 4:
            expected = 4 + ((data[2] << 8) | data[3])
    return bytes(data), truncated


def parse_log_parameters(data):
    """Decode a raw LOG SENSE page (SPC-4 7.3): header then parameters.

    Returns ``{'page': int, 'subpage': int, 'length': int,
    'parameters': {code: int}, 'complete': bool}``. Parameter values are
    big-endian unsigned integers (counters on every tape vendor page we use).
    """
    if len(data) < 4:
        raise ValueError('LOG SENSE data shorter than its 4-byte header')
    page = data[0] & 0x3f
    subpage = data[1]
    length = (data[2] << 8) | data[3]
    end = min(len(data), 4 + length)
    params = {}
    pos = 4
    while pos + 4 <= end:
        code = (data[pos] << 8) | data[pos + 1]
        plen = data[pos + 3]
        if pos + 4 + plen > end:
            break
        value = 0
        for byte in data[pos + 4:pos + 4 + plen]:
            value = (value << 8) | byte
        params[code] = value
        pos += 4 + plen
    return {'page': page, 'subpage': subpage, 'length': length, 'parameters': params,
            'complete': pos == 4 + length}


def parse_hex_page(text):
    """A hex-dumped page (vendor pages such as HP 0x34) into parameters.

    ``{'page', 'subpage', 'length', 'parameters': {'0x0000': int, ...},
    'complete': bool, 'truncated': bool}``. Parameter codes are hex strings so
    the result survives JSON.
    """
    data, truncated = hex_dump_bytes(text)
    decoded = parse_log_parameters(data)
    decoded['parameters'] = dict(('0x%04x' % k, v) for k, v in decoded['parameters'].items())
    decoded['truncated'] = truncated
    return decoded


def split_all(text):
    """Split an ``sg_logs -a`` listing into ``{page_code: body_text}``."""
    pages = {}
    current = None
    body = []
    for line in _lines(text):
        stripped = line.strip()
        code = None
        match = _UNABLE.match(stripped)
        if match and match.group(1):
            code = int(match.group(1), 16)
        else:
            for rx, page_code in _TITLES:
                if rx.match(stripped):
                    code = page_code
                    break
        if code is not None:
            if current is not None:
                pages[current] = '\n'.join(body)
            current, body = code, [line]
            continue
        if current is not None:
            body.append(line)
    if current is not None:
        pages[current] = '\n'.join(body)
    return pages


def parse_all(text):
    """``sg_logs -a`` into ``{'supported': [...], 'pages': {'0x0c': {...}}}``."""
    split = split_all(text)
    out = {'supported': parse_supported_pages(split.get(0, '')), 'pages': {}}
    for code, body in split.items():
        if code == 0:
            continue
        out['pages']['0x%02x' % code] = decode_page(code, body)
    return out


def decode_page(code, text):
    """Decode page ``code`` from its text (decoded or hex) the best way we know."""
    unable = next((ln.strip() for ln in _lines(text) if _UNABLE.match(ln.strip())), None)
    if unable or code >= 0x30:
        data, _trunc = hex_dump_bytes(text)
        if data:
            return parse_hex_page(text)
        if unable:
            # sg_logs has no decoder and printed no hex: say so, invent nothing.
            return {'decoded': False, 'note': unable}
    if code == PAGE_TAPE_ALERT:
        return parse_tape_alert(text)
    if code == PAGE_SEQUENTIAL_ACCESS:
        return parse_sequential_access(text)
    return parse_page(text)


_UNSUPPORTED_PATTERNS = (
    'invalid opcode',
    'illegal request',
    'invalid field in cdb',
    'not supported',
)


def classify_failure(rc, stdout, stderr):
    """Why ``sg_logs`` failed: ``('unsupported', reason)`` or ``('error', reason)``.

    tgt (the lab) and some bridges answer LOG SENSE with ILLEGAL REQUEST,
    "invalid opcode": that is a property of the device, reported as
    unsupported, not as a failure of the benchmark. "Unable to decode" is not a
    failure at all (the page exists, sg_logs has no decoder): callers decode
    the hex with ``parse_hex_page``.
    """
    text = ' '.join(x for x in (stdout or '', stderr or '') if x).strip()
    low = text.lower()
    for pattern in _UNSUPPORTED_PATTERNS:
        if pattern in low:
            line = next((ln.strip() for ln in text.splitlines() if pattern in ln.lower()), text)
            return 'unsupported', line
    if 'unit attention' in low:
        return 'retry', 'unit attention (media changed or mode parameters changed); retry once'
    return 'error', text.splitlines()[-1] if text else 'sg_logs exited with %s' % rc
