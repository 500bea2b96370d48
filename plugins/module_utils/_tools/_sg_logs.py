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
  parameters sg_logs printed as hex (vendor pages: ``unknown parameter code =
  0x5, contents in hex:``) are decoded one by one into ``parameters``;
- ``parse_hex_page``: a page ``sg_logs`` cannot decode (HP/IBM vendor pages
  such as 0x34), from its hex dump, into ``{parameter_code: value}``;
- ``split_all`` / ``parse_all``: an ``sg_logs -a`` listing split page by page;
- ``classify_failure``: tells "the device has no LOG SENSE" (tgt answers
  "invalid opcode") from a real failure.

Page headers differ between sg3_utils versions (read in sg_logs.c of each
release, https://github.com/doug-gilbert/sg3_utils): 1.2x prints
``Supported log pages:`` and titles without a page code
(``Sequential access device page (ssc-3)``); 1.37 adds ``(spc-2) [0x0]``,
``(IBM specific) [0x30]`` and ``No ascii information for page = 0x33, here is
hex:``; 1.39-1.46 drop the standard name and print ``Unable to decode page =
0x34, here is hex:`` (``Unable to decode NAME [acronym]`` with ``--in``, no
hex); 1.48 says ``... log page`` (``Tape capacity log page  (LTO-5 and LTO-6
specific) [0x31]``, ``Unable to decode NAME log page [0x34], here is hex:``)
and prints hex dumps without the offset column. All of them are recognised
here; every decoder returns what it could read with ``warnings`` and
``complete`` and never raises on odd input.
"""

from __future__ import annotations

import re

from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError

PAGE_SUPPORTED = 0x00
PAGE_SEQUENTIAL_ACCESS = 0x0C
PAGE_DEVICE_STATISTICS = 0x14
PAGE_VOLUME_STATISTICS = 0x17
PAGE_TAPE_ALERT = 0x2E
PAGE_HP_0x34 = 0x34


class SgLogsParseError(TapeopsError, ValueError):
    """Log page data that cannot be decoded at all (for example shorter than its header)."""


# Page titles printed WITHOUT a page code (sg3_utils 1.25-1.48); titles that end
# in "[0xNN]" are recognised by their code, whatever their wording.
_TITLES = (
    (re.compile(r'^Supported log pages(?: and subpages)?(?: log page)?\s*(?:\(spc-\d\))?\s*:?\s*$'), 0x00),
    (re.compile(r'^Write error counter page\s*$'), 0x02),
    (re.compile(r'^Read error counter page\s*$'), 0x03),
    (re.compile(r'^Non-medium error page\s*$'), 0x06),
    (re.compile(r'^Sequential access device (?:log )?page\b'), 0x0C),
    (re.compile(r'^Temperature (?:log )?page\s*$'), 0x0D),
    (re.compile(r'^Device statistics (?:log )?page\b'), 0x14),
    (re.compile(r'^Volume statistics (?:log )?page\b'), 0x17),
    (re.compile(r'^Data compression log page\s*$'), 0x1B),
    (re.compile(r'^Tape alert page\s*$'), 0x2E),
    (re.compile(r'^Tape usage log page\s*$'), 0x30),
    (re.compile(r'^Tape capacity log page\s*$'), 0x31),
)
# Any title that ends with its page code: "Tape alert page (ssc-3) [0x2e]",
# "Tape capacity log page  (LTO-5 and LTO-6 specific) [0x31]", "[0xd,0x1]".
_CODED_TITLE = re.compile(
    r'^(?P<title>[A-Za-z][^\[\]]*?\bpages?\b[^\[\]]*?)\s*'
    r'\[0x(?P<pg>[0-9a-fA-F]{1,2})(?:\s*,\s*0x(?P<spg>[0-9a-fA-F]{1,2}))?\]\s*:?\s*$')
# Pages sg_logs could not decode, every version's wording.
_UNABLE = re.compile(
    r'^(?:Unable to decode|No ascii information for)\b'
    r'(?:.*?\bpage\s*=\s*0x(?P<pg>[0-9a-fA-F]{1,2})'
    r'|.*?\[0x(?P<pg2>[0-9a-fA-F]{1,2})(?:\s*,\s*0x[0-9a-fA-F]+)?\]'
    r'|\s+(?P<name>.*?)\s*\[(?P<acronym>[a-z0-9_]+)\])', re.I)
# Tape page acronyms of sg_logs 1.41-1.48 (its page table), for
# "Unable to decode Read forward errors (lto-5) [rfe_]" that carries no code.
ACRONYMS = {
    'sp': 0x00, 'bou': 0x01, 'we': 0x02, 're': 0x03, 'rre': 0x04, 've': 0x05, 'nm': 0x06, 'lne': 0x07,
    'lnd': 0x0b, 'sad': 0x0c, 'temp': 0x0d, 'sscc': 0x0e, 'ac': 0x0f, 'str': 0x10, 'dtds': 0x11,
    'tar': 0x12, 'rr': 0x13, 'ds': 0x14, 'sbi': 0x15, 'tdd': 0x16, 'vs': 0x17, 'psp': 0x18, 'pct': 0x1a,
    'dc': 0x1b, 'csi': 0x2d, 'ie': 0x2f, 'ta': 0x2e, 'tu_': 0x30, 'tc_': 0x31, 'dc_': 0x32, 'we_': 0x33,
    'rfe_': 0x34, 'dtde_': 0x35, 'pc_': 0x37, 'bbt_': 0x38, 'hp0_': 0x39, 'dcv_': 0x3a, 'hp1_': 0x3b,
    'dui_': 0x3c, 'ss_': 0x3d, 'ds_': 0x3e,
}
# One parameter printed as hex inside a decoded page.
_PARAM_HEX = re.compile(
    r'^(?:unknown\s+)?(?:[Pp]arameter code\s*=\s*0x(?P<a>[0-9a-fA-F]+),\s*contents in hex'
    r'|.*?\[parameter_code=0x(?P<b>[0-9a-fA-F]+)\]'
    r'|.*?parameter code\s*\(0x(?P<c>[0-9a-fA-F]+)\),\s*payload in hex'
    r'|.*?parameter\s*\[0x(?P<d>[0-9a-fA-F]+)\],\s*dump in hex)\s*:?\s*$', re.I)
_TRUNCATED = re.compile(r'\[truncated after (\d+) of (\d+) bytes')
_SUPPORTED_LINE = re.compile(r'^\s*0x([0-9a-fA-F]{2})(?:,0x([0-9a-fA-F]{2}))?(?:\s+(.*?))?\s*$')
_HEX_TOKEN = re.compile(r'^[0-9a-fA-F]{2}$')
_OFFSET_LINE = re.compile(r'^\s*([0-9a-fA-F]{2,8})\s{3,}((?:[0-9a-fA-F]{2} {1,2})*[0-9a-fA-F]{2})(?:\s{3,}.*)?$')
_BARE_LINE = re.compile(r'^\s*((?:[0-9a-fA-F]{2} {1,2})*[0-9a-fA-F]{2})(?:\s{3,}.*)?$')
_KV = re.compile(r'^\s*(?P<key>[^:=]+?)\s*(?::|=)\s*(?P<value>.*?)\s*$')
_NUMBER_UNIT = re.compile(r'^(-?\d+)(?:\s+([A-Za-z]+))?$')


def _text(text):
    if isinstance(text, bytes):
        return text.decode('utf-8', 'replace')
    return text or ''


def _lines(text):
    """Lines of sg_logs output; a last line without its newline is left out.

    sg_logs ends every line with a newline, so a last line without one was cut
    (a killed command, a truncated paste) and may hold half a number.
    """
    text = _text(text)
    lines = [line.rstrip('\r') for line in text.splitlines() if not line.startswith('# ')]
    if lines and text and not text.endswith('\n') and not text.splitlines()[-1].startswith('# '):
        lines.pop()
    return lines


def _cut_warning(text):
    """A warning when ``text`` ends in a line ``_lines`` left out, else None."""
    text = _text(text)
    if text and not text.endswith('\n') and text.splitlines() and text.splitlines()[-1].strip() \
            and not text.splitlines()[-1].startswith('# '):
        return 'the output ends in a cut line %r; it is not used' % text.splitlines()[-1].strip()[:80]
    return None


def snake(label):
    """``'Lifetime media loads'`` -> ``'lifetime_media_loads'``."""
    label = label.replace('[MB]', 'mb').replace('(ms)', 'ms')
    label = re.sub(r"'s\b", 's', label)
    label = re.sub(r'[^0-9A-Za-z]+', '_', label).strip('_').lower()
    return label


def hex_line(line):
    """The bytes of one sg3_utils hex-dump line, or None if it is not one.

    Two layouts: with an offset column (``" 00     34 00 00 1e ..."``, up to
    sg3_utils 1.46, and ``-H``) and without (``"  34 00 00 1e ..."``, 1.48).
    Returns ``(offset or None, [bytes])``.
    """
    match = _OFFSET_LINE.match(line)
    if match:
        return int(match.group(1), 16), [int(t, 16) for t in match.group(2).split()]
    match = _BARE_LINE.match(line)
    if match:
        tokens = match.group(1).split()
        if all(_HEX_TOKEN.match(t) for t in tokens):
            return None, [int(t, 16) for t in tokens]
    return None


def _page_start(stripped, acronyms=None):
    """The page code a line starts, or None. ``stripped`` has no indentation."""
    match = _UNABLE.match(stripped)
    if match:
        code = match.group('pg') or match.group('pg2')
        if code:
            return int(code, 16)
        acronym = (match.group('acronym') or '').lower()
        table = dict(ACRONYMS, **(acronyms or {}))
        return table.get(acronym)
    match = _CODED_TITLE.match(stripped)
    if match and not _PARAM_HEX.match(stripped):
        return int(match.group('pg'), 16)
    for rx, code in _TITLES:
        if rx.match(stripped):
            return code
    return None


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


def supported_acronyms(text):
    """``{acronym: code}`` from a supported-pages list (``0x34  Read forward errors (lto-5) [rfe_]``)."""
    out = {}
    for line in _lines(text):
        match = _SUPPORTED_LINE.match(line)
        if match and match.group(3):
            acr = re.search(r'\[([a-z0-9_]+)\]\s*$', match.group(3))
            if acr:
                out[acr.group(1)] = int(match.group(1), 16)
    return out


def _value(raw):
    match = _NUMBER_UNIT.match(raw)
    if match:
        return int(match.group(1)), (match.group(2) or '').lower() or None
    if re.match(r'^0x[0-9a-fA-F]+$', raw):
        return int(raw, 16), None
    return raw, None


def _be(data):
    value = 0
    for byte in data:
        value = (value << 8) | byte
    return value


def param_value(data):
    """A parameter value: an int up to 8 bytes (every counter), longer ones as hex text."""
    data = bytes(data)
    if len(data) <= 8:
        return _be(data)
    return '0x' + data.hex()


def _param_from_dump(code, data, warnings, payload_only=False):
    """A parameter's value from its own dump.

    sg_logs prints either the whole parameter (4-byte header + value:
    ``unknown parameter code = 0x5, contents in hex``, ``[parameter_code=0x..]``)
    or the value only (``parameter code (0x46), payload in hex``,
    ``parameter [0xf001], dump in hex``).
    """
    if payload_only:
        return param_value(data) if data else None
    if len(data) < 4:
        warnings.append('parameter 0x%04x: hex dump of %d bytes is shorter than a parameter header' % (code, len(data)))
        return None
    plen = data[3]
    if len(data) < 4 + plen:
        warnings.append('parameter 0x%04x: %d of %d value bytes printed' % (code, len(data) - 4, plen))
        return None
    return param_value(data[4:4 + plen])


class _HexParameters:
    """The parameters a page body prints as hex dumps, each decoded when its dump ends."""

    def __init__(self, warnings):
        self.decoded = {}
        self.warnings = warnings
        self.code = None
        self.payload_only = False
        self.data = []

    def start(self, code, payload_only):
        self.code, self.payload_only = code, payload_only

    def add(self, data):
        """A hex dump line's bytes, kept when a parameter is open."""
        if self.code is not None:
            self.data.extend(data)

    def close(self):
        """The open parameter decoded (its first value kept); none open afterwards."""
        if self.code is not None:
            value = _param_from_dump(self.code, self.data, self.warnings, self.payload_only)
            if value is not None:
                self.decoded.setdefault('0x%04x' % self.code, value)
        self.code, self.data = None, []


def _add_value(result, match):
    """A ``key: value`` line into ``result`` (the first value of a key kept; a unit goes into the key)."""
    key, raw = match.group('key'), match.group('value')
    if raw == '':
        return
    value, unit = _value(raw)
    name = snake(key)
    if not name:
        return
    if unit in ('gb', 'mb', 'kb', 'c', 'ms'):
        name = '%s_%s' % (name, unit)
    result.setdefault(name, value)


def parse_page(text):
    """Parse one decoded page body into ``{snake_key: value}``.

    Lines without ``:`` or ``=`` are kept under ``'_notes'`` (for example
    "Cleaning action not required (or completed)"). Repeated keys (mount
    history, per-density hours) keep their first value; nested listings are not
    flattened further. A unit after a number goes into the key
    (``data_bytes_received_with_write_commands_gb``). Parameters printed as hex
    (``unknown parameter code = 0x5, contents in hex:``) are decoded one by one
    into ``parameters`` (``{'0x0005': int}``); problems are listed in
    ``warnings`` (only present when there are some).
    """
    result = {}
    notes = []
    warnings = []
    params = _HexParameters(warnings)
    pending = None
    lines = _lines(text)
    for index, line in enumerate(lines):
        stripped = line.strip()
        dumped = hex_line(line) if stripped else None
        if dumped is not None:
            params.add(dumped[1])
            continue
        params.close()
        if not stripped or stripped.startswith('.....'):
            continue
        match = _PARAM_HEX.match(stripped)
        if match:
            params.start(int(next(g for g in match.groups() if g), 16), bool(match.group('c') or match.group('d')))
            continue
        if _page_start(stripped) is not None:
            continue
        if pending is not None:
            # A label wrapped onto two lines ("...forced reset\n and/or ... : 0").
            stripped = pending + ' ' + stripped
            pending = None
        match = _KV.match(stripped)
        if match:
            _add_value(result, match)
            continue
        following = lines[index + 1].strip() if index + 1 < len(lines) else ''
        if following[:1].islower():
            pending = stripped
        else:
            notes.append(stripped)
    params.close()
    cut = _cut_warning(text)
    if cut:
        warnings.append(cut)
    if notes:
        result['_notes'] = notes
    if params.decoded:
        result['parameters'] = params.decoded
    if warnings:
        result['warnings'] = warnings
    return result


def parse_tape_alert(text):
    """TapeAlert page 0x2E: ``{'flags': {name: 0|1}, 'active': [names set]}``."""
    flags = {}
    for key, value in parse_page(text).items():
        if key.startswith('_') or not isinstance(value, int) or isinstance(value, bool):
            continue
        flags[key] = value
    # "Reserved parameter code 0x3d, flag: 0" lines decode to a key ending with _flag.
    return {'flags': flags, 'active': sorted(k for k, v in flags.items() if v)}


def parse_sequential_access(text):
    """Page 0x0C: byte counters and the cleaning request, named for the verdict."""
    page = parse_page(text)
    out = {'raw': page}
    # sg3_utils up to 1.47 says "... WRITE commands", 1.48 "... WRITE operations".
    mapping = {
        'data_bytes_received_with_write_%s_gb': 'host_written_gb',
        'data_bytes_written_to_media_by_write_%s_gb': 'media_written_gb',
        'data_bytes_read_from_media_by_read_%s_gb': 'media_read_gb',
        'data_bytes_transferred_by_read_%s_gb': 'host_read_gb',
    }
    for key, name in mapping.items():
        value = page.get(key % 'commands', page.get(key % 'operations'))
        out[name] = value if isinstance(value, int) and not isinstance(value, bool) else None
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
    cut the dump short (``..... [truncated after 64 of 190 bytes ...]``) or a
    line of the dump is missing (an offset that does not follow on). The dump
    is the first run of hex lines; it ends at the first line that is not one.
    """
    data = bytearray()
    truncated = False
    expected = None
    started = False
    for line in _lines(text):
        if _TRUNCATED.search(line):
            truncated = True
            break
        dumped = hex_line(line) if line.strip() else None
        if dumped is None:
            if started and line.strip():
                break
            continue
        offset, values = dumped
        if offset is not None and offset != len(data):
            truncated = True
            break
        started = True
        for value in values:
            if expected is not None and len(data) >= expected:
                break
            data.append(value)
        if expected is None and len(data) >= 4:
            expected = 4 + ((data[2] << 8) | data[3])
    return bytes(data), truncated


def parse_log_parameters(data):
    """Decode a raw LOG SENSE page (SPC-4 7.3): header then parameters.

    Returns ``{'page': int, 'subpage': int, 'length': int,
    'parameters': {code: int}, 'complete': bool}``. Parameter values are
    big-endian unsigned integers (counters on every tape vendor page we use);
    a value longer than 8 bytes (identifiers, logs) is kept as hex text.
    Raises SgLogsParseError when ``data`` is shorter than the 4-byte header.
    """
    if len(data) < 4:
        raise SgLogsParseError('LOG SENSE data of %d bytes is shorter than its 4-byte header' % len(data))
    page = data[0] & 0x3f
    subpage = data[1] if data[0] & 0x40 else 0
    length = (data[2] << 8) | data[3]
    end = min(len(data), 4 + length)
    params = {}
    pos = 4
    while pos + 4 <= end:
        code = (data[pos] << 8) | data[pos + 1]
        plen = data[pos + 3]
        if pos + 4 + plen > end:
            break
        params[code] = param_value(data[pos + 4:pos + 4 + plen])
        pos += 4 + plen
    return {'page': page, 'subpage': subpage, 'length': length, 'parameters': params,
            'complete': pos == 4 + length}


def parse_hex_page(text, code=None):
    """A hex-dumped page (vendor pages such as HP 0x34) into parameters.

    ``{'page', 'subpage', 'length', 'parameters': {'0x0000': int, ...},
    'complete': bool, 'truncated': bool, 'warnings': [...]}``. Parameter codes
    are hex strings so the result survives JSON. A dump too short to hold a
    page header gives ``page`` None, no parameters, and a warning.
    """
    data, truncated = hex_dump_bytes(text)
    warnings = []
    cut = _cut_warning(text)
    if cut:
        warnings.append(cut)
    try:
        decoded = parse_log_parameters(data)
    except SgLogsParseError as exc:
        decoded = {'page': None, 'subpage': None, 'length': None, 'parameters': {}, 'complete': False}
        warnings.append(str(exc))
    decoded['parameters'] = dict(('0x%04x' % k, v) for k, v in decoded['parameters'].items())
    decoded['truncated'] = truncated
    if truncated:
        warnings.append('sg_logs printed only part of the page (%d bytes); read it with sg_logs -H for all of it'
                        % len(data))
    elif decoded['length'] is not None and not decoded['complete']:
        warnings.append('the dump holds %d of the %d bytes the page header announces'
                        % (len(data), 4 + decoded['length']))
    if code is not None and decoded['page'] is not None and decoded['page'] != code:
        warnings.append('the dump is of page 0x%02x, not 0x%02x' % (decoded['page'], code))
    decoded['warnings'] = warnings
    return decoded


def split_all(text):
    """Split an ``sg_logs -a`` listing into ``{page_code: body_text}``.

    A page's body starts with its header line. A page printed twice keeps the
    first copy.
    """
    pages = {}
    current = None
    body = []
    lines = _lines(text)
    acronyms = supported_acronyms('\n'.join(lines) + '\n')
    for line in lines:
        code = _page_start(line.strip(), acronyms)
        if code is not None:
            if current is not None:
                pages.setdefault(current, '\n'.join(body) + '\n')
            current, body = code, [line]
            continue
        if current is not None:
            body.append(line)
    if current is not None:
        pages.setdefault(current, '\n'.join(body) + '\n')
    return pages


def parse_all(text):
    """``sg_logs -a`` into ``{'supported': [...], 'pages': {'0x0c': {...}}, 'warnings': [...]}``.

    ``warnings`` gathers the pages' own warnings (``page 0x34: ...``).
    """
    split = split_all(text)
    out = {'supported': parse_supported_pages(split.get(0, '')), 'pages': {}, 'warnings': []}
    cut = _cut_warning(text)
    if cut:
        out['warnings'].append(cut)
    for code, body in split.items():
        if code == 0:
            continue
        page = decode_page(code, body)
        out['pages']['0x%02x' % code] = page
        out['warnings'].extend('page 0x%02x: %s' % (code, w) for w in page.get('warnings') or [])
    return out


_HEX_HEADER = re.compile(r'^Log page code=0x[0-9a-fA-F]{1,2}\b')
_INQUIRY_LINE = re.compile(r'^\s{2,}\S.*\S\s{2,}\S+\s*$')

# The lab's emulated drive (lab/tapedrive/ssc.py) counts its back-hitches in page 0x34,
# parameter 0x8000, a vendor-unique code after HP's "Performance Data" parameters. No real
# drive's 0x34 is read for back-hitches here: on IBM and newer HP drives 0x34 is "Read
# forward errors" (sg_logs' vendor table), and their reposition counters are not decoded yet.
BACKHITCH_PAGE = '0x34'
BACKHITCH_PARAMETER = '0x8000'


def backhitch_count(log_pages):
    """The drive's own back-hitch count from ``read_log_pages()`` output, or None where it gives none."""
    pages = (log_pages or {}).get('pages') if isinstance(log_pages, dict) else None
    page = (pages or {}).get(BACKHITCH_PAGE) or {}
    params = page.get('parameters') if isinstance(page, dict) else None
    value = (params or {}).get(BACKHITCH_PARAMETER)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    if '0x8005' not in params:
        # only the lab drive's layout (its counters 0x8000..0x8005) is read
        return None
    return value


def _is_hex_only(lines):
    """True if the non-empty lines are a hex dump (``sg_logs -H``: no header at all)."""
    seen = False
    for line in lines:
        if not line.strip():
            continue
        if hex_line(line) is None and not _TRUNCATED.search(line):
            return False
        seen = True
    return seen


def decode_page(code, text):
    """Decode page ``code`` from its text (decoded or hex) the best way we know.

    Never raises: what could not be read is said in ``warnings``.
    """
    lines = _lines(text)
    heads = [ln.strip() for ln in lines if ln.strip() and hex_line(ln) is None][:3]
    first = heads[0] if heads else ''
    # sg_logs prints the device's INQUIRY line first, then "Unable to decode ..." or, with -H,
    # "Log page code=0x34, DS=0, ..." before the dump
    unable = any(_UNABLE.match(head) or _HEX_HEADER.match(head) for head in heads)
    body = [ln for ln in lines if not (ln.strip() in heads and (_UNABLE.match(ln.strip()) or _HEX_HEADER.match(
        ln.strip()) or _INQUIRY_LINE.match(ln)))]
    if unable or _is_hex_only(body):
        data, _trunc = hex_dump_bytes(text)
        if data:
            return parse_hex_page(text, code)
        # sg_logs has no decoder and printed no hex: say so, invent nothing.
        return {'decoded': False, 'note': first or 'no output', 'parameters': {}, 'complete': False,
                'warnings': ['sg_logs printed no data for page 0x%02x (%s)' % (code, first or 'empty')]}
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


# Data compression pages: 0x1B (SSC-4) and 0x32 (the LTO layout HP and IBM share), the same parameters.
# Each byte counter is a pair, whole megabytes then the bytes beyond them. The megabyte is 10^6 bytes: the
# IBM LTO-10 capture (tests/unit/fixtures/sg_logs/sg_logs_a__IBM-ULT3580-TDA-T3S0-LTO10-TS4500__1.txt) says
# 268 MB + 435456 B from the host and 3 MB + 344392 B to tape with a write ratio of 8026 (x100): with 10^6
# that is 268435456 B (2^28, 256 MiB) / 3344392 B = 80.26; with 2^20 it would be 80.64. HP allows a negative
# remainder after rounding (HP Ultrium technical reference manual, "Data Compression Log Page"), which
# sg_logs prints as an unsigned 4-byte number.
COMPRESSION_PAGES = ('0x1b', '0x32')
COMPRESSION_MB = 1000 * 1000
_COMPRESSION_PAIRS = (
    # (name, megabytes parameter, bytes parameter, sg_logs' label stem)
    ('host_read_bytes', 0x02, 0x03, 'transferred_to_server'),
    ('tape_read_bytes', 0x04, 0x05, 'read_from_tape'),
    ('host_written_bytes', 0x06, 0x07, 'transferred_from_server'),
    ('tape_written_bytes', 0x08, 0x09, 'written_to_tape'),
)


def _counter(value):
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _remainder(value):
    """A pair's byte remainder; a 4-byte negative one (HP) as printed unsigned is read back as negative."""
    value = _counter(value)
    if value is not None and value >= 1 << 31:
        value -= 1 << 32
    return value


def compression_counters(page):
    """Byte counters of a decoded data compression page (``decode_page`` of 0x1B or 0x32), or None.

    Reads the decoded labels (``Megabytes transferred from server: 268``) or,
    for a page read as hex (``sg_logs -H``, or an sg_logs without a decoder),
    the parameters 0x0002..0x0009. Returns ``{'host_read_bytes',
    'tape_read_bytes', 'host_written_bytes', 'tape_written_bytes'}`` (bytes,
    None for a pair the page does not hold), None when it holds none.
    """
    if not isinstance(page, dict):
        return None
    params = page.get('parameters') if isinstance(page.get('parameters'), dict) else {}
    out = {}
    for name, mb_code, byte_code, stem in _COMPRESSION_PAIRS:
        mb = _counter(page.get('megabytes_%s' % stem))
        rest = _remainder(page.get('bytes_%s' % stem))
        if mb is None or rest is None:
            mb = _counter(params.get('0x%04x' % mb_code))
            rest = _remainder(params.get('0x%04x' % byte_code))
        out[name] = mb * COMPRESSION_MB + rest if mb is not None and rest is not None else None
    return out if any(v is not None for v in out.values()) else None
