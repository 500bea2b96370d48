# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Data Protector ``omnirc`` editing and device recommendations (pure functions).

Private to this collection: may change without notice.

The omnirc file (``/opt/omni/.omnirc`` on a Linux Media Agent, created by the
administrator from the ``/opt/omni/.omnirc.TMPL`` template that Data Protector
installs) is plain text: ``#`` starts a comment, every other non-blank line is
``KEY=value``. The Media Agent reads it when a session starts, so an edit needs
no service restart.

``update_omnirc`` keeps every comment, blank line and unknown key where it is,
changes the value of managed keys in place, activates a commented-out example
(``#KEY=...``) by adding the active line right after it, and otherwise appends
the key at the end. Nothing here touches the file system.
"""

from __future__ import annotations

import re

from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError

# Data Protector omnirc variables are upper-case names with digits and
# underscores (OB2IMMEDFM, OB2BLKPADDING_<n>, OB2FORCESCSI ...); values are
# free text on one line (OB2FORCESCSI=WFM).
KEY_RE = re.compile(r'^[A-Z][A-Z0-9_]*$')
_ACTIVE_RE = re.compile(r'^(?P<indent>[ \t]*)(?P<key>[A-Za-z][A-Za-z0-9_]*)[ \t]*=(?P<value>.*)$')
_COMMENTED_RE = re.compile(r'^[ \t]*#+[ \t]*(?P<key>[A-Z][A-Z0-9_]*)[ \t]*=')

# The omnirc lines that make a Linux Media Agent write immediate file marks
# (the st driver's MTWEOFI), exactly as seed 001 sets them: an HP LTO-4 FH SAS
# drive, Data Protector A.09.07, CentOS 6.8, 256 KiB blocks, one 16 GB file
# written at 188.24 MB/s with these two lines against 108.84 MB/s with the
# default omnirc (segment 2000 MB). Data Protector A.09.05 and later; the
# kernel's st driver must know MTWEOFI (RHEL 6.5+, SLES 11+). OB2FORCESCSI takes
# WFM here, not 1. We found no public HPE / Micro Focus / OpenText document
# or forum thread on OB2FORCESCSI or OB2IMMEDFM to cite beside the seed.
IMMEDIATE_FILEMARK_KEYS = {'OB2FORCESCSI': 'WFM', 'OB2IMMEDFM': '1'}

# The field notes' rule for a segment size to set on a tape device (docs/roles.md):
# native capacity / 50 (Data Protector's own default for LTO is 2000 MB, seed 001);
# a segment also closes when its catalog reaches 12 MB.
SEGMENT_DIVISOR = 50
CATALOG_SEGMENT_LIMIT_MB = 12
# Data Protector accepts tape block sizes in KB up to 1024 KB on Linux Media
# Agents; 256 KB is its default for LTO devices.
DP_DEFAULT_BLOCK_KB = 256
DP_MAX_BLOCK_KB = 1024


class OmnircError(TapeopsError, ValueError):
    """A key or value that cannot go into an omnirc file, with what to do instead."""


def validate_keys(keys):
    """Check a ``{KEY: value}`` dict; return it with values as strings.

    ``None`` as a value means "remove this key". Raises OmnircError naming the
    offending key and the format to use.
    """
    if not isinstance(keys, dict):
        raise OmnircError('omnirc keys must be a mapping of KEY: value, got %s.' % type(keys).__name__)
    clean = {}
    for key, value in keys.items():
        if not isinstance(key, str) or not KEY_RE.match(key):
            raise OmnircError(
                'omnirc key %r is not in Data Protector format: use upper-case letters, digits and '
                'underscores, starting with a letter (for example OB2IMMEDFM).' % (key,))
        if value is None:
            clean[key] = None
            continue
        if isinstance(value, bool):
            value = 1 if value else 0
        text = str(value)
        if '\n' in text or '\r' in text or '#' in text:
            raise OmnircError(
                'omnirc value for %s must be a single line without "#" (omnirc has no quoting): got %r.'
                % (key, text))
        if text != text.strip():
            raise OmnircError('omnirc value for %s has leading or trailing blanks: use %r.' % (key, text.strip()))
        clean[key] = text
    return clean


def parse_omnirc(text):
    """Return ``{KEY: value}`` of the active lines (the last one wins, as for a shell-style file)."""
    result = {}
    for line in text.splitlines():
        if line.lstrip().startswith('#'):
            continue
        match = _ACTIVE_RE.match(line)
        if match:
            result[match.group('key')] = match.group('value').strip()
    return result


def _key_lines(lines):
    """({KEY: [indexes of its active lines]}, {KEY: index of the commented example to insert it after})."""
    active = {}
    commented = {}
    tight_seen = set()
    for idx, line in enumerate(lines):
        if line.lstrip().startswith('#'):
            match = _COMMENTED_RE.match(line)
            if match:
                # Prefer an example written exactly as an active line
                # ("#KEY=value") over prose such as "# KEY=0|1".
                key = match.group('key')
                if line.lstrip().startswith('#' + key):
                    if key not in tight_seen:
                        commented[key] = idx
                        tight_seen.add(key)
                elif key not in commented:
                    commented[key] = idx
            continue
        match = _ACTIVE_RE.match(line)
        if match:
            active.setdefault(match.group('key'), []).append(idx)
    return active, commented


class _Edits:
    """The line edits that apply ``keys`` to omnirc ``lines``, and the changes they make."""

    def __init__(self, lines, keys):
        active, commented = _key_lines(lines)
        self.changes = []
        self.replace = {}
        self.drop = set()
        self.insert_after = {}
        self.append = []
        for key, value in keys.items():
            self._key(lines, key, value, active.get(key, []), commented)

    def _key(self, lines, key, value, positions, commented):
        before = _ACTIVE_RE.match(lines[positions[-1]]).group('value').strip() if positions else None
        if value is None:
            if positions:
                self.drop.update(positions)
                self.changes.append({'key': key, 'before': before, 'after': None})
            return
        if positions:
            # One key per line: keep the first occurrence, drop duplicates
            # (they would shadow it).
            first = positions[0]
            indent = _ACTIVE_RE.match(lines[first]).group('indent')
            new_line = '%s%s=%s' % (indent, key, value)
            if before != value or len(positions) > 1:
                self.replace[first] = new_line
                self.drop.update(positions[1:])
                self.changes.append({'key': key, 'before': before, 'after': value})
            return
        line = '%s=%s' % (key, value)
        if key in commented:
            self.insert_after.setdefault(commented[key], []).append(line)
        else:
            self.append.append(line)
        self.changes.append({'key': key, 'before': None, 'after': value})

    def apply(self, lines):
        out = []
        for idx, line in enumerate(lines):
            if idx in self.drop:
                continue
            out.append(self.replace.get(idx, line))
            out.extend(self.insert_after.get(idx, []))
        out.extend(self.append)
        return out


def update_omnirc(text, keys):
    """Return ``(new_text, changes)`` with ``keys`` applied to omnirc ``text``.

    ``changes`` is a list of ``{'key', 'before', 'after'}`` (``None`` for absent).
    """
    keys = validate_keys(keys)
    lines = text.splitlines()
    trailing_newline = text.endswith('\n') or not text
    edits = _Edits(lines, keys)
    if not edits.changes:
        return text, []
    new_text = '\n'.join(edits.apply(lines))
    if trailing_newline or edits.append:
        new_text += '\n'
    return new_text, edits.changes


def _block_limit_kb(hba_max_transfer_bytes, max_block_kb):
    """(largest block in KB Data Protector and the HBA path take, 'dp' or 'hba')."""
    if max_block_kb < 64 or max_block_kb > DP_MAX_BLOCK_KB:
        raise OmnircError('max_block_kb must be between 64 and %d KB, got %r.' % (DP_MAX_BLOCK_KB, max_block_kb))
    if hba_max_transfer_bytes and int(hba_max_transfer_bytes) // 1024 < max_block_kb:
        return int(hba_max_transfer_bytes) // 1024, 'hba'
    return max_block_kb, 'dp'


def recommend_device(native_capacity_gb, hba_max_transfer_bytes=None, max_block_kb=DP_MAX_BLOCK_KB,
                     segment_size_mb=None, block_size_kb=None):
    """Recommend a Data Protector tape device block size and segment size.

    ``native_capacity_gb`` is the cartridge's native (uncompressed) capacity in
    decimal GB, from the drive model. ``segment_size_mb`` and ``block_size_kb``
    are the verdict's recommendation for this drive (apply_fixes passes them):
    given, they are the recommendation, so the role never says something else
    than the verdict; the block size is still checked against the limits.
    Returns a dict:

    - ``segment_size_mb``: the verdict's, else native capacity / 50, in MB (the field notes' rule for a
      size to set; not Data Protector's default, which is 2000 MB for LTO);
    - ``segment_size_basis``: ``verdict`` or ``rule``;
    - ``catalog_segment_limit_mb``: 12 (a segment also closes at 12 MB of catalog);
    - ``block_size_kb``: the verdict's, else the largest power-of-two KB block not
      above ``max_block_kb`` nor the HBA path's maximum transfer (when known);
    - ``block_size_limited_by``: ``dp`` or ``hba`` (the limit of the rule), ``verdict`` (the verdict's size).
    """
    limit_kb, limited_by = _block_limit_kb(hba_max_transfer_bytes, max_block_kb)
    if segment_size_mb is not None:
        if isinstance(segment_size_mb, bool) or int(segment_size_mb) <= 0:
            raise OmnircError('segment_size_mb must be a positive number of MB, got %r.' % (segment_size_mb,))
        segment_mb, segment_basis = int(segment_size_mb), 'verdict'
    else:
        if native_capacity_gb is None or native_capacity_gb <= 0:
            raise OmnircError('native capacity must be a positive number of GB, got %r.' % (native_capacity_gb,))
        segment_mb, segment_basis = int(round(native_capacity_gb * 1000.0 / SEGMENT_DIVISOR)), 'rule'
    if block_size_kb is not None:
        if isinstance(block_size_kb, bool) or int(block_size_kb) <= 0 or int(block_size_kb) > limit_kb:
            raise OmnircError(
                'the verdict\'s block size %r KB is not between 1 KB and %d KB (%s): re-run qualify, whose write '
                'sweep stays within the limits, or give a smaller one.' % (
                    block_size_kb, limit_kb, 'the HBA path\'s maximum transfer' if limited_by == 'hba'
                    else 'max_block_kb'))
        block_kb, limited_by = int(block_size_kb), 'verdict'
    else:
        block_kb = 1
        while block_kb * 2 <= limit_kb:
            block_kb *= 2
        if block_kb < 64:
            raise OmnircError(
                'the HBA path carries only %d KB per transfer, below the 64 KB minimum worth configuring: '
                'raise the st max_sg_segs / HBA sg_tablesize limit (see the st_tuning preflight facts).' % limit_kb)
    return {
        'native_capacity_gb': native_capacity_gb,
        'segment_size_mb': segment_mb,
        'segment_size_basis': segment_basis,
        'catalog_segment_limit_mb': CATALOG_SEGMENT_LIMIT_MB,
        'block_size_kb': block_kb,
        'block_size_limited_by': limited_by,
    }
