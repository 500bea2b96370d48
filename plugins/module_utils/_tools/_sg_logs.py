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


# ---------------------------------------------------------------------------
# The drive's own health counters, named: TapeAlert flags by number, the write and read error counters, device
# statistics, data compression and volume statistics. Each reader takes a page as ``decode_page`` (or
# ``parse_page`` / ``parse_hex_page``) returns it, or the text sg_logs printed for it, and returns its counters
# by name, None for each one the page does not hold (never 0 for a counter that was not printed); None when the
# page holds none of them. Nothing here raises on odd input.

PAGE_WRITE_ERRORS = 0x02
PAGE_READ_ERRORS = 0x03
PAGE_DT_DEVICE_STATUS = 0x11
PAGE_DATA_COMPRESSION = 0x1B
PAGE_TAPE_USAGE = 0x30

# TapeAlert flags (page 0x2E, parameter code = flag number) as sg_logs prints them: its table up to sg3_utils
# 1.47 (sg_logs.c tape_alert_strs, 0x01-0x3c; "Reserved parameter code 0x3d, flag: 0" beyond), and from 1.48 on
# (lib/sg_lib_data.c sg_lib_tapealert_strs, 0x01-0x40, "Reserved (28h)", three new names). A flag whose name is
# not here is read from the parameter code sg_logs printed instead of a name, or not at all.
_TAPE_ALERT_PRINTED = (
    'Read warning', 'Write warning', 'Hard error', 'Media', 'Read failure', 'Write failure', 'Media life',
    'Not data grade', 'Write protect', 'No removal', 'Cleaning media', 'Unsupported format',
    'Recoverable mechanical cartridge failure', 'Unrecoverable mechanical cartridge failure',
    'Memory chip in cartridge failure', 'Forced eject', 'Read only format', 'Tape directory corrupted on load',
    'Nearing media life', 'Cleaning required', 'Cleaning requested', 'Expired cleaning media',
    'Invalid cleaning tape', 'Retension requested', 'Dual port interface error', 'Cooling fan failing',
    'Power supply failure', 'Power consumption', 'Drive maintenance', 'Hardware A', 'Hardware B', 'Interface',
    'Eject media', 'Microcode update fail', 'Drive humidity', 'Drive temperature', 'Drive voltage',
    'Predictive failure', 'Diagnostics required',
)
_TAPE_ALERT_147 = ('Obsolete (28h)', 'Obsolete (29h)', 'Obsolete (2Ah)', 'Obsolete (2Bh)', 'Obsolete (2Ch)',
                   'Obsolete (2Dh)', 'Obsolete (2Eh)', 'Reserved (2Fh)', 'Reserved (30h)', 'Reserved (31h)')
_TAPE_ALERT_148 = ('Reserved (28h)', 'Reserved (29h)', 'Reserved (2Ah)', 'Reserved (2Bh)', 'Reserved (2Ch)',
                   'Reserved (2Dh)', 'Reserved (2Eh)',
                   'External data encryption control - communications failure',
                   'External data encryption control - key manager returned error',
                   'Diminished native capacity')
_TAPE_ALERT_TAIL = ('Lost statistics', 'Tape directory invalid at unload', 'Tape system area write failure',
                    'Tape system area read failure', 'No start of data', 'Loading failure',
                    'Unrecoverable unload failure', 'Automation interface failure', 'Firmware failure',
                    'WORM medium - integrity check failed', 'WORM medium - overwrite attempted')


def _tape_alert_names():
    names = {}
    for number, name in enumerate(_TAPE_ALERT_PRINTED + _TAPE_ALERT_147 + _TAPE_ALERT_TAIL, 1):
        names.setdefault(number, []).append(name)
    for number, name in enumerate(_TAPE_ALERT_148, 0x28):
        names[number].append(name)
    names.setdefault(0x3d, []).append('Encryption policy violation')
    for number in (0x3e, 0x3f, 0x40):
        names.setdefault(number, []).append('Reserved (%02Xh)' % number)
    return dict((number, tuple(found)) for number, found in names.items())


# flag number -> the names sg_logs has printed for it, oldest first
TAPE_ALERT_NAMES = _tape_alert_names()
_TAPE_ALERT_BY_KEY = dict((snake(name), number) for number, found in TAPE_ALERT_NAMES.items() for name in found)
# "Reserved parameter code 0x3d, flag: 0" (up to 1.47), "No string available for code 0x3d, flag: 0" (1.48)
# what parse_hex_page adds beside a page's parameters
_HEX_PAGE_KEYS = frozenset(('page', 'subpage', 'length', 'complete', 'truncated', 'parameters', 'warnings'))
_TAPE_ALERT_CODE_KEY = re.compile(r'^(?:reserved_parameter_code|no_string_available_for_code)_0x([0-9a-f]{1,4})_flag$')


def _decoded(page, code):
    """``page`` as a decoded dict: text is decoded with ``decode_page``; anything else but a dict is None."""
    if isinstance(page, (str, bytes)):
        return decode_page(code, page)
    return page if isinstance(page, dict) else None


def _count(value):
    """A counter as sg_logs printed it: an int >= 0 (``'33554432123 [33 GB]'`` of sg3_utils 1.48 too), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, str):
        match = re.match(r'^(\d+)(?:\s+\[\d+ [TG]B\])?$', value.strip())
        if match:
            return int(match.group(1))
    return None


def _params(page):
    params = page.get('parameters')
    return params if isinstance(params, dict) else {}


def _named(page, table):
    """``{name: counter}`` of a decoded page by sg_logs' labels, else by parameter code (a page read as hex)."""
    params = _params(page)
    out = {}
    for code, name, label in table:
        value = _count(page.get(snake(label)))
        if value is None:
            value = _count(params.get('0x%04x' % code))
        out[name] = value
    return out


def tape_alert_flags(page):
    """TapeAlert page 0x2E by flag number: ``{'flags': {1: 0, ..., 64: 0}, 'active': [20], 'unnamed': [...]}``.

    ``flags`` holds the flags the page printed (a flag it did not print is absent: unknown, not clear);
    ``unnamed`` the keys of lines that looked like flags but name none sg_logs has printed. A page read as hex
    (``parse_hex_page``) gives each flag from bit 0 of its parameter. None when the page holds no flag.
    """
    page = _decoded(page, PAGE_TAPE_ALERT)
    if page is None:
        return None
    flags, unnamed = {}, []
    named = page.get('flags') if isinstance(page.get('flags'), dict) else page
    for key, value in named.items():
        if key.startswith('_') or key in _HEX_PAGE_KEYS or isinstance(value, bool) or value not in (0, 1):
            continue
        number = _TAPE_ALERT_BY_KEY.get(key)
        match = _TAPE_ALERT_CODE_KEY.match(key) if number is None else None
        if match:
            number = int(match.group(1), 16)
        if number is None or not 1 <= number <= 64:
            unnamed.append(key)
            continue
        flags.setdefault(number, value)
    for code, value in _params(page).items():
        try:
            number = int(code, 16)
        except (TypeError, ValueError):
            continue
        if 1 <= number <= 64 and _count(value) is not None:
            flags.setdefault(number, value & 1)
    if not flags:
        return None
    return {'flags': dict(sorted(flags.items())), 'active': sorted(n for n, v in flags.items() if v),
            'unnamed': sorted(unnamed)}


# Write (0x02) and read (0x03) error counter pages: SPC-4 parameter codes 0x0000-0x0006, sg_logs' labels.
# On LTO drives "Total bytes processed" counts data sets, not bytes (HP Ultrium TRM C7379-90900, "Write/Read
# Error Counters log page": "Total data sets processed: The total number of data sets written"; Quantum LTO-4
# SCSI reference 3.9.5: "Total bytes processed. This is the total data sets written."), and HP clears the
# counters when the tape is unloaded: they are the current cartridge's since it was loaded.
ERROR_COUNTERS = (
    (0x0000, 'corrected_without_delay', 'Errors corrected without substantial delay'),
    (0x0001, 'corrected_with_delay', 'Errors corrected with possible delays'),
    (0x0002, 'rewrites_or_rereads', 'Total rewrites or rereads'),
    (0x0003, 'corrected', 'Total errors corrected'),
    (0x0004, 'correction_processed', 'Total times correction algorithm processed'),
    (0x0005, 'processed', 'Total bytes processed'),
    (0x0006, 'uncorrected', 'Total uncorrected errors'),
)


def error_counters(page, code=PAGE_WRITE_ERRORS):
    """Page 0x02 or 0x03 (``code``): ``{'corrected_without_delay', ..., 'uncorrected'}``, None when it holds none."""
    page = _decoded(page, code)
    if page is None:
        return None
    out = _named(page, ERROR_COUNTERS)
    return out if any(v is not None for v in out.values()) else None


# Device statistics page 0x14 (SSC-4 parameter codes), sg_logs' labels (the same from sg3_utils 1.37 to 1.49).
DEVICE_STATISTICS = (
    (0x0000, 'lifetime_volume_loads', 'Lifetime media loads'),
    (0x0001, 'lifetime_cleaning_operations', 'Lifetime cleaning operations'),
    (0x0002, 'lifetime_power_on_hours', 'Lifetime power on hours'),
    (0x0003, 'lifetime_head_hours', 'Lifetime media motion (head) hours'),
    (0x0004, 'lifetime_metres_processed', 'Lifetime metres of tape processed'),
    (0x0008, 'head_hours_since_cleaning', 'Media motion (head) hours since last successful cleaning operation'),
    (0x000C, 'lifetime_power_cycles', 'Lifetime power cycles'),
    (0x000D, 'volume_loads_since_reset', 'Volume loads since last parameter reset'),
    (0x000E, 'hard_write_errors', 'Hard write errors'),
    (0x000F, 'hard_read_errors', 'Hard read errors'),
)


def device_statistics(page):
    """Page 0x14: the drive's lifetime counters (loads, cleanings, power-on and head hours, hard errors) or None."""
    page = _decoded(page, PAGE_DEVICE_STATISTICS)
    if page is None:
        return None
    out = _named(page, DEVICE_STATISTICS)
    return out if any(v is not None for v in out.values()) else None


# Volume statistics page 0x17 (SSC-4) and the LTO tape usage page 0x30 print the same labels for the cartridge's
# lifetime counters (HP Ultrium 6 capture: both pages in one sg_logs -a).
VOLUME_STATISTICS = (
    (0x0001, 'thread_count', 'Thread count'),
    (0x0002, 'data_sets_written', 'Total data sets written'),
    (0x0003, 'write_retries', 'Total write retries'),
    (0x0004, 'unrecovered_write_errors', 'Total unrecovered write errors'),
    (0x0007, 'data_sets_read', 'Total data sets read'),
    (0x0008, 'read_retries', 'Total read retries'),
    (0x0009, 'unrecovered_read_errors', 'Total unrecovered read errors'),
    (0x0010, 'lifetime_mb_written', 'Lifetime megabytes written'),
    (0x0011, 'lifetime_mb_read', 'Lifetime megabytes read'),
    (0x0101, 'beginning_of_medium_passes', 'Beginning of medium passes'),
    (0x0102, 'middle_of_medium_passes', 'Middle of medium passes'),
)
_TAPE_USAGE_CODES = {'thread_count': 0x0001, 'data_sets_written': 0x0002, 'write_retries': 0x0003,
                     'unrecovered_write_errors': 0x0004, 'data_sets_read': 0x0007, 'read_retries': 0x0008,
                     'unrecovered_read_errors': 0x0009}


def volume_statistics(page, code=PAGE_VOLUME_STATISTICS):
    """Page 0x17 (or the LTO tape usage page 0x30, ``code``): the loaded cartridge's lifetime counters, or None.

    Adds ``personality`` (``'Ultrium-6'``, as the page prints it) and ``worm`` (the page's WORM bit) from 0x17.
    A page read as hex is read by parameter code only for 0x30 (its codes per the HP Ultrium TRM, "Tape Usage
    Log Page"); page 0x17's hex has its own codes above.
    """
    page = _decoded(page, code)
    if page is None:
        return None
    table = VOLUME_STATISTICS if code == PAGE_VOLUME_STATISTICS else tuple(
        (_TAPE_USAGE_CODES[name], name, label) for dummy, name, label in VOLUME_STATISTICS
        if name in _TAPE_USAGE_CODES)
    out = _named(page, table)
    if not any(v is not None for v in out.values()):
        return None
    if code == PAGE_VOLUME_STATISTICS:
        personality = page.get('volume_personality')
        out['personality'] = personality.strip() or None if isinstance(personality, str) else None
        worm = _count(page.get('worm'))
        out['worm'] = bool(worm) if worm in (0, 1) else None
    return out


def data_compression(page, code=PAGE_DATA_COMPRESSION):
    """Page 0x1B (or 0x32): the drive's compression ratios (x100 printed, as ratios here), byte counters, enable bit.

    ``{'read_ratio', 'write_ratio', 'host_read_bytes', 'tape_read_bytes', 'host_written_bytes',
    'tape_written_bytes', 'enabled'}``; a ratio the drive gives as 0 (nothing moved since the load) is None.
    None when the page holds none of them.
    """
    page = _decoded(page, code)
    if page is None:
        return None
    params = _params(page)
    pairs = [name for name, dummy, dummy2, dummy3 in _COMPRESSION_PAIRS]
    out = dict(compression_counters(page) or dict.fromkeys(pairs))
    for name, param, label in (('read_ratio', 0x0000, 'read_compression_ratio_x100'),
                               ('write_ratio', 0x0001, 'write_compression_ratio_x100')):
        value = _count(page.get(label))
        if value is None:
            value = _count(params.get('0x%04x' % param))
        out[name] = round(value / 100.0, 2) if value else None
    enabled = _count(page.get('data_compression_enabled'))
    if enabled is None:
        enabled = _count(params.get('0x0100'))
    out['enabled'] = bool(enabled) if enabled is not None else None
    return out if any(v is not None for v in out.values()) else None


_DT_BIT = re.compile(r'\b([A-Z]{2,8})=([01])\b')


def cleaning_request(pages):
    """Whether the drive asks to be cleaned, from its own bits: ``(True | False | None, [pages that say so])``.

    Page 0x0C's cleaning parameter (sg_logs: "Cleaning action required" / "... not required (or completed)")
    and page 0x11's very high frequency data (SSC-4 DT device status: CRQST cleaning requested, CRQRD cleaning
    required). ``pages`` is ``{'0x0c': decoded or text, '0x11': ...}``. True when either asks, False when one
    was read and none asks, None when neither says.
    """
    pages = pages if isinstance(pages, dict) else {}
    said = {}
    seq = pages.get('0x0c')
    if isinstance(seq, (str, bytes)):
        seq = decode_page(PAGE_SEQUENTIAL_ACCESS, seq)
    if isinstance(seq, dict) and isinstance(seq.get('cleaning_required'), bool):
        said['0x0c'] = seq['cleaning_required']
    status = pages.get('0x11')
    if isinstance(status, (str, bytes)):
        text = _text(status)
    elif isinstance(status, dict):
        # parse_page keeps "PAMR=1 HUI=0 ... CRQST=0 CRQRD=0" as key "pamr" and the rest of the line as its value
        text = ' '.join('%s=%s' % (k.upper(), v) for k, v in status.items() if isinstance(v, str))
    else:
        text = ''
    bits = dict(_DT_BIT.findall(text))
    if 'CRQST' in bits or 'CRQRD' in bits:
        said['0x11'] = bits.get('CRQST') == '1' or bits.get('CRQRD') == '1'
    if not said:
        return None, []
    asking = sorted(code for code, value in said.items() if value)
    return (True, asking) if asking else (False, sorted(said))
