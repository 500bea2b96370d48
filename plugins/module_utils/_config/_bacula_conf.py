# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Edit Device resources of Bacula / Bareos storage daemon configuration (pure functions).

Private to this collection: may change without notice.

Both daemons read the same resource syntax: ``Type { Directive = value ... }``,
``#`` comments, ``;`` or newline between directives, quoted strings, keywords
compared without case and without blanks (``MaximumBlockSize`` is ``Maximum
Block Size``). Bacula keeps all resources in one ``bacula-sd.conf``; Bareos
keeps one resource per file under ``bareos-sd.d/<type>/*.conf``. The functions
here work on the text of one file, so they serve both layouts.

Edits are surgical: only the value text of a managed directive is replaced,
or one line is added before the resource's closing brace. Comments, ordering
and unknown directives stay as they are.
"""

from __future__ import annotations

import re

from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError

# Bacula lib/edit.c size_to_uint64(): "k"/"m"/"g" are powers of 1024,
# "kb"/"mb"/"gb" powers of 1000; modifiers are case-insensitive.
_SIZE_MODS = {
    '': 1, 'b': 1,
    'k': 1024, 'kb': 1000,
    'm': 1024 ** 2, 'mb': 1000 ** 2,
    'g': 1024 ** 3, 'gb': 1000 ** 3,
    't': 1024 ** 4, 'tb': 1000 ** 4,
}
_SIZE_RE = re.compile(r'^\s*"?\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*"?\s*$')

# Bacula's config parser refuses a Maximum Block Size above this (measured
# with bacula-sd 9.6.7: "configured value ... is greater than allowed maximum: 20000000").
BACULA_MAX_BLOCK_SIZE = 20000000
# Bacula warns "[SW0007] Max block size ... not multiple of device block size=1024"
# (init_dev.c): block sizes must be multiples of 1024 bytes.
BACULA_BLOCK_MULTIPLE = 1024

TAPE_DEVICE_RE = re.compile(r'^/dev/(n?st\d+|nsa\d+|sa\d+|tape/|IBMtape\d+n?|rmt/)')


class BaculaConfError(TapeopsError, ValueError):
    """A value or file the storage daemon would not accept, with what to do instead."""


def normalize_keyword(word):
    """Bacula compares keywords without case and blanks."""
    return re.sub(r'[\s_]', '', word).lower()


def parse_size(text):
    """Parse a Bacula size (``64512``, ``1G``, ``50 GB``, ``"200gb"``) to bytes."""
    if isinstance(text, bool):
        raise BaculaConfError('a size must be a number of bytes or a number with k/m/g/t (kb/mb/gb/tb), got %r.' % text)
    if isinstance(text, int):
        return text
    match = _SIZE_RE.match(str(text))
    if not match or match.group(2).lower() not in _SIZE_MODS:
        raise BaculaConfError(
            'a size must be a number of bytes or a number with k/m/g/t (powers of 1024) or kb/mb/gb/tb '
            '(powers of 1000), for example 1048576 or 50G; got %r.' % (text,))
    return int(float(match.group(1)) * _SIZE_MODS[match.group(2).lower()])


class Directive:
    __slots__ = ('keyword', 'key_start', 'value_start', 'value_end', 'value')

    def __init__(self, keyword, key_start, value_start, value_end, value):
        self.keyword = keyword
        self.key_start = key_start
        self.value_start = value_start
        self.value_end = value_end
        self.value = value

    @property
    def key(self):
        return normalize_keyword(self.keyword)


class Resource:
    """One top-level resource with offsets into the file text."""

    __slots__ = ('type', 'start', 'open_brace', 'close_brace', 'directives')

    def __init__(self, rtype, start, open_brace, close_brace, directives):
        self.type = rtype
        self.start = start
        self.open_brace = open_brace
        self.close_brace = close_brace
        self.directives = directives

    def get(self, key):
        key = normalize_keyword(key)
        found = [d for d in self.directives if d.key == key]
        return found[-1].value if found else None

    @property
    def name(self):
        return _unquote(self.get('name') or '')


def _unquote(value):
    value = value.strip()
    if len(value) >= 2 and value[0] == '"' and value[-1] == '"':
        return value[1:-1]
    return value


def _string_end(text, i):
    """Index just after the quoted string whose first character is ``text[i]`` (the opening quote is before it).

    A backslash escapes the next character; a string that reaches the end of
    its line or of the file is refused.
    """
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == '\\':
            i += 2
            continue
        if ch == '"':
            return i + 1
        if ch == '\n':
            raise BaculaConfError('unterminated quoted string at line %d.' % (text.count('\n', 0, i) + 1))
        i += 1
    raise BaculaConfError('unterminated quoted string at the end of the file.')


class _Scanner:
    """What ``parse_resources`` knows at a character: the depth, the resource open, the statement begun."""

    def __init__(self, text):
        self.text = text
        self.resources = []
        self.depth = 0
        self.current = None
        self.stmt_start = None  # start of the current statement at depth 0 or 1

    def end_directive(self, i):
        """The statement begun inside a resource ends at ``i``: it becomes one of its directives."""
        if self.stmt_start is not None and self.depth == 1:
            _add_directive(self.current, self.text, self.stmt_start, i)
            self.stmt_start = None

    def open_brace(self, i):
        if self.depth == 0:
            start = self.stmt_start if self.stmt_start is not None else i
            head_lines = self.text[start:i].split('\n')
            head = head_lines[-1].strip() or (head_lines[-2].strip() if len(head_lines) > 1 else '')
            self.current = Resource(head, start, i, None, [])
            self.stmt_start = None
        elif self.depth == 1:
            # A nested block (rare in SD configs): its directives are not managed.
            self.stmt_start = None
        self.depth += 1

    def close_brace(self, i):
        if self.depth == 0:
            raise BaculaConfError('unbalanced "}" at line %d.' % (self.text.count('\n', 0, i) + 1))
        if self.depth == 1:
            self.end_directive(i)
            self.current.close_brace = i
            self.resources.append(self.current)
            self.current = None
        self.depth -= 1

    def separator(self, ch, i):
        """A newline or ``;``: ends a directive; at the top level a ``;`` ends the statement."""
        if self.depth == 1 and self.stmt_start is not None:
            self.end_directive(i)
        elif self.depth == 0 and ch == ';':
            self.stmt_start = None


def parse_resources(text):
    """Return the top-level resources of ``text`` with their depth-1 directives.

    Raises BaculaConfError on unbalanced braces or an unterminated string.
    """
    scan = _Scanner(text)
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == '#':
            scan.end_directive(i)
            nl = text.find('\n', i)
            i = n if nl < 0 else nl
            continue
        if ch == '"':
            if scan.stmt_start is None:
                scan.stmt_start = i
            i = _string_end(text, i + 1)
            continue
        if ch == '{':
            scan.open_brace(i)
        elif ch == '}':
            scan.close_brace(i)
        elif ch in '\n;':
            scan.separator(ch, i)
        elif scan.stmt_start is None and not ch.isspace():
            scan.stmt_start = i
        i += 1
    if scan.depth != 0:
        current = scan.current
        raise BaculaConfError('a resource is missing its closing "}" (opened as %r).' % (current.type if current else '?'))
    return scan.resources


def _add_directive(resource, text, start, end):
    if resource is None:
        return
    stmt = text[start:end]
    eq = stmt.find('=')
    if eq < 0:
        return
    keyword = stmt[:eq].strip()
    vstart = start + eq + 1
    while vstart < end and text[vstart] in ' \t':
        vstart += 1
    vend = end
    while vend > vstart and text[vend - 1] in ' \t\r':
        vend -= 1
    resource.directives.append(Directive(keyword, start, vstart, vend, text[vstart:vend]))


def is_tape_device(resource):
    """A Device resource for a tape drive (Device Type = Tape, or a tape Archive Device)."""
    if normalize_keyword(resource.type) != 'device':
        return False
    dtype = (resource.get('devicetype') or '').strip('"').lower()
    if dtype:
        return dtype == 'tape'
    return bool(TAPE_DEVICE_RE.match(_unquote(resource.get('archivedevice') or '')))


def _format_value(key, value):
    if isinstance(value, bool):
        return 'yes' if value else 'no'
    if isinstance(value, int):
        return str(value)
    text = str(value)
    if key in _SIZE_KEYS:
        return text
    if re.search(r'[\s#;{}=]', text) and not (text.startswith('"') and text.endswith('"')):
        return '"%s"' % text.replace('"', '\\"')
    return text


def _same(key, current, desired):
    if current is None:
        return False
    if key in _SIZE_KEYS:
        try:
            return parse_size(current) == parse_size(desired)
        except BaculaConfError:
            return False
    if isinstance(desired, bool):
        return current.strip('"').lower() in (('yes', 'true', '1') if desired else ('no', 'false', '0'))
    return _unquote(current) == _unquote(_format_value(key, desired))


_SIZE_KEYS = {normalize_keyword(k) for k in (
    'Maximum Block Size', 'Minimum Block Size', 'Maximum File Size', 'Maximum Network Buffer Size',
    'Maximum Spool Size', 'Maximum Job Spool Size', 'Maximum Volume Size', 'Maximum Part Size')}

# How new lines are spelled (the documented spelling of each directive).
CANONICAL = {normalize_keyword(k): k for k in (
    'Maximum Block Size', 'Minimum Block Size', 'Maximum File Size', 'Maximum Network Buffer Size',
    'Maximum Spool Size', 'Maximum Job Spool Size', 'Spool Directory', 'Maximum Volume Size',
    'Maximum Concurrent Jobs', 'Block Positioning', 'Hardware End of Medium', 'Fast Forward Space File',
    'BSF at EOM', 'Two EOF', 'Backward Space Record', 'Backward Space File', 'Offline On Unmount')}


def set_directives(text, settings, select=None):
    """Apply ``settings`` ({directive: value}) to the selected Device resources of ``text``.

    ``select(resource) -> bool`` picks the resources (default: tape Device
    resources). ``None`` values are skipped (not managed). Returns
    ``(new_text, changes)``; ``changes`` lists ``{'device', 'directive',
    'before', 'after'}``.
    """
    if select is None:
        select = is_tape_device
    resources = parse_resources(text)
    edits = []  # (start, end, replacement)
    changes = []
    for res in resources:
        if not select(res):
            continue
        indent = _indent_of(text, res)
        additions = []
        for directive, desired in settings.items():
            if desired is None:
                continue
            key = normalize_keyword(directive)
            found = [d for d in res.directives if d.key == key]
            current = found[-1].value if found else None
            if _same(key, current, desired):
                continue
            new_value = _format_value(key, desired)
            if found:
                for d in found:
                    edits.append((d.value_start, d.value_end, new_value))
            else:
                additions.append('%s%s = %s' % (indent, CANONICAL.get(key, directive), new_value))
            changes.append({'device': res.name, 'directive': CANONICAL.get(key, directive),
                            'before': current, 'after': new_value})
        if additions:
            edits.append(_insertion(text, res, additions))
    for start, end, replacement in sorted(edits, key=lambda e: e[0], reverse=True):
        text = text[:start] + replacement + text[end:]
    return text, changes


def _indent_of(text, res):
    for d in res.directives:
        line_start = text.rfind('\n', 0, d.key_start) + 1
        prefix = text[line_start:d.key_start]
        if not prefix.strip():
            return prefix
    return '  '


def _insertion(text, res, lines):
    brace = res.close_brace
    line_start = text.rfind('\n', 0, brace) + 1
    if not text[line_start:brace].strip():
        # "}" on its own line: add the lines just before it.
        return (line_start, line_start, ''.join(line + '\n' for line in lines))
    return (brace, brace, '\n' + ''.join(line + '\n' for line in lines))


def devices(text):
    """Summaries of the Device resources in ``text`` (name, archive device, tape, directives)."""
    out = []
    for res in parse_resources(text):
        if normalize_keyword(res.type) != 'device':
            continue
        out.append({
            'name': res.name,
            'archive_device': _unquote(res.get('archivedevice') or ''),
            'tape': is_tape_device(res),
            'directives': dict((d.keyword, d.value) for d in res.directives),
        })
    return out


def check_settings(settings, hba_max_transfer_bytes=None, granularity=1):
    """Validate the values the role wants to set; return them with sizes in bytes.

    Raises BaculaConfError with what to set instead. ``granularity`` is the
    drive's block granularity (READ BLOCK LIMITS), 1 for LTO.
    """
    out = {}
    for key, value in settings.items():
        if value is None:
            out[key] = None
            continue
        norm = normalize_keyword(key)
        if norm in _SIZE_KEYS:
            size = parse_size(value)
            if size <= 0:
                raise BaculaConfError('%s must be positive, got %r.' % (key, value))
            out[key] = size
        else:
            out[key] = value
    block = out.get('Maximum Block Size')
    if block is not None:
        multiple = max(BACULA_BLOCK_MULTIPLE, granularity or 1)
        if block % multiple:
            lower = block - block % multiple
            raise BaculaConfError(
                'Maximum Block Size %d is not a multiple of %d bytes (the storage daemon and drive block '
                'granularity): use %d or %d.' % (block, multiple, lower or multiple, lower + multiple))
        if block > BACULA_MAX_BLOCK_SIZE:
            raise BaculaConfError('Maximum Block Size %d is above the storage daemon maximum %d: use 1048576.'
                                  % (block, BACULA_MAX_BLOCK_SIZE))
        if hba_max_transfer_bytes and block > hba_max_transfer_bytes:
            fit = hba_max_transfer_bytes - hba_max_transfer_bytes % multiple
            raise BaculaConfError(
                'Maximum Block Size %d is larger than the HBA path can carry in one transfer (%d bytes, see the '
                'st_tuning preflight facts): use %d or less, or raise the limit named in the preflight facts.'
                % (block, hba_max_transfer_bytes, fit))
    minimum = out.get('Minimum Block Size')
    if minimum is not None and block is not None and minimum > block:
        raise BaculaConfError('Minimum Block Size %d is larger than Maximum Block Size %d: lower it or omit it.'
                              % (minimum, block))
    fsize = out.get('Maximum File Size')
    if fsize is not None:
        if fsize < 1000 ** 3:
            raise BaculaConfError('Maximum File Size %d is below 1 GB, which makes the drive stop for a file mark '
                                  'very often: use 50G or more.' % fsize)
        if fsize > 2 * 1000 ** 4:
            raise BaculaConfError('Maximum File Size %d is absurd (above 2 TB, larger than a file on most '
                                  'cartridges): use between 50G and 200G.' % fsize)
    return out
