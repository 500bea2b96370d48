# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""st driver tuning: stinit.def definitions, expected sysfs options, preflight limits.

Private to this collection: may change without notice. Pure functions (plus
small sysfs readers taking a ``sys_root``), unit-tested on sysfs values read on
the lab guests.

Definitions are what the st_tuning role takes, one per drive type::

    {'manufacturer': 'IBM', 'model': 'ULT3580', 'revision': None,
     'options': {'scsi2logical': 1, 'can-bsr': 1, 'timeout': 900},     # all modes / the drive
     'modes': [{'mode': 1, 'blocksize': 0, 'buffer-writes': 1}]}

Keywords are mt-st's stinit(8) keywords, spelled in full. stinit matches
``manufacturer`` / ``model`` / ``revision`` case-sensitively as prefixes of the
INQUIRY strings and applies every matching definition in file order. Measured
with mt-st 1.7 on Linux 6.1 (lab): a parameter block without ``modeN`` lines
changed nothing, so :func:`render_stinit_def` always writes mode lines and
repeats the per-mode booleans on each of them.
"""

from __future__ import annotations

import os
import re

from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError

# stinit keyword -> st option bit name as decoded by _st_sysfs.decode_options
# (include/uapi/linux/mtio.h MT_ST_* bits, shown in /sys/class/scsi_tape/*/options).
BOOLEAN_KEYWORDS = {
    'buffer-writes': 'buffer_writes',
    'async-writes': 'async_writes',
    'read-ahead': 'read_ahead',
    'two-fms': 'two_fm',
    'auto-lock': 'auto_lock',
    'fast-eom': 'fast_mteom',
    'can-bsr': 'can_bsr',
    'no-blklimits': 'no_blklims',
    'can-partitions': 'can_partitions',
    'scsi2logical': 'scsi2logical',
    'sili': 'sili',
    'defs-for-writes': 'def_writes',
    'sysv': 'sysv',
    'no-wait': 'nowait',
}
# Keywords with a value that sysfs shows per mode.
DEFAULT_KEYWORDS = {
    'blocksize': 'default_blksize',
    'density': 'default_density',
    'compression': 'default_compression',
}
# Keywords stinit applies that the kernel does not show in sysfs (not read back).
UNVERIFIED_KEYWORDS = ('timeout', 'long-timeout', 'drive-buffering', 'cleaning', 'disabled')
ALL_KEYWORDS = tuple(BOOLEAN_KEYWORDS) + tuple(DEFAULT_KEYWORDS) + UNVERIFIED_KEYWORDS
# stinit's mode N is the st minor "mode" N-1: nst0, nst0l, nst0m, nst0a.
MODE_SUFFIX = {1: '', 2: 'l', 3: 'm', 4: 'a'}
MATCH_KEYS = ('manufacturer', 'model', 'revision')
# st.c: MAX_TAPES-independent limits of the ioctls stinit uses.
MAX_BLOCKSIZE = 0xFFFFFF  # MT_ST_BLKSIZE_MASK
_INQUIRY_RE = re.compile(r'^[\x20-\x7e]{1,16}$')


class StinitError(TapeopsError, ValueError):
    """A definition stinit would not take, with what to write instead."""


def _bool01(keyword, value, where):
    if isinstance(value, bool):
        return 1 if value else 0
    if value in (0, 1):
        return int(value)
    raise StinitError('%s: %s takes 0 or 1 (or true/false), got %r.' % (where, keyword, value))


def _number(keyword, value, where, minimum=0, maximum=None):
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, str) and re.match(r'^(0x[0-9a-fA-F]+|\d+)$', value):
            value = int(value, 0)
        else:
            raise StinitError('%s: %s takes a whole number, got %r.' % (where, keyword, value))
    if value < minimum or (maximum is not None and value > maximum):
        raise StinitError('%s: %s must be between %d and %s, got %d.' % (where, keyword, minimum, maximum, value))
    return value


def _check_params(params, where, allow_mode=False):
    out = {}
    for keyword, value in (params or {}).items():
        if allow_mode and keyword == 'mode':
            continue
        if keyword not in ALL_KEYWORDS:
            raise StinitError('%s: unknown stinit keyword %r; use one of: %s (see stinit(8)).'
                              % (where, keyword, ', '.join(sorted(ALL_KEYWORDS))))
        if value is None:
            continue
        if keyword in BOOLEAN_KEYWORDS or keyword in ('disabled',):
            out[keyword] = _bool01(keyword, value, where)
        elif keyword == 'blocksize':
            value = _number(keyword, value, where, 0, MAX_BLOCKSIZE)
            if value and value % 4:
                raise StinitError('%s: blocksize %d is not a multiple of 4 bytes; use 0 (variable block mode, '
                                  'what backup software expects) or a multiple of the drive granularity.'
                                  % (where, value))
            out[keyword] = value
        elif keyword == 'compression':
            out[keyword] = _bool01(keyword, value, where)
        elif keyword == 'density':
            out[keyword] = _number(keyword, value, where, 0, 0xFF)
        elif keyword in ('timeout', 'long-timeout'):
            out[keyword] = _number(keyword, value, where, 1, 14 * 24 * 3600)
        else:
            out[keyword] = _number(keyword, value, where, 0, 0xFFFF)
    return out


def validate_definitions(definitions):
    """Normalise the role's definitions; raise StinitError on anything stinit would not take."""
    if not isinstance(definitions, list):
        raise StinitError('st_tuning_definitions must be a list of definitions.')
    out = []
    for index, item in enumerate(definitions):
        where = 'st_tuning_definitions[%d]' % index
        if not isinstance(item, dict):
            raise StinitError('%s must be a mapping.' % where)
        unknown = set(item) - set(MATCH_KEYS) - {'options', 'modes', 'comment'}
        if unknown:
            raise StinitError('%s: unknown key(s) %s; a definition has manufacturer, model, revision, options, '
                              'modes and comment.' % (where, ', '.join(sorted(unknown))))
        norm = {'comment': item.get('comment')}
        for key in MATCH_KEYS:
            value = item.get(key)
            if value is not None:
                value = str(value)
                if not _INQUIRY_RE.match(value) or '"' in value:
                    raise StinitError('%s: %s %r must be 1-16 printable characters without quotes (the INQUIRY '
                                      'string as /sys/class/scsi_tape/nst0/device/%s shows it).'
                                      % (where, key, value, {'manufacturer': 'vendor', 'model': 'model',
                                                             'revision': 'rev'}[key]))
            norm[key] = value
        norm['options'] = _check_params(item.get('options'), where + '.options')
        modes = item.get('modes') or [{'mode': 1}]
        norm_modes = []
        seen = set()
        for mindex, mode in enumerate(modes):
            mwhere = '%s.modes[%d]' % (where, mindex)
            if not isinstance(mode, dict) or mode.get('mode') not in MODE_SUFFIX:
                raise StinitError('%s: mode must be 1, 2, 3 or 4 (st device nodes nst0, nst0l, nst0m, nst0a).' % mwhere)
            if mode['mode'] in seen:
                raise StinitError('%s: mode %d is defined twice.' % (mwhere, mode['mode']))
            seen.add(mode['mode'])
            params = _check_params(mode, mwhere, allow_mode=True)
            norm_modes.append(dict(params, mode=mode['mode']))
        norm['modes'] = norm_modes
        out.append(norm)
    return out


def _quote(value):
    return '"%s"' % value if re.search(r'\s', value) else value


def render_stinit_def(definitions, header=''):
    """The stinit.def text for ``definitions`` (validated first)."""
    defs = validate_definitions(definitions)
    lines = []
    for line in (header or '').splitlines():
        lines.append(line if line.startswith('#') else '# ' + line)
    for defn in defs:
        lines.append('')
        if defn.get('comment'):
            lines.extend('# ' + c for c in str(defn['comment']).splitlines())
        match = ' '.join('%s=%s' % (k, _quote(defn[k])) for k in MATCH_KEYS if defn.get(k) is not None)
        lines.append((match + ' {') if match else '{')
        drive_level = ['%s=%d' % (k, v) for k, v in defn['options'].items()
                       if k in UNVERIFIED_KEYWORDS]
        if drive_level:
            lines.append('  ' + ' '.join(drive_level))
        per_mode = dict((k, v) for k, v in defn['options'].items() if k not in UNVERIFIED_KEYWORDS)
        for mode in defn['modes']:
            params = dict(per_mode)
            params.update((k, v) for k, v in mode.items() if k != 'mode')
            lines.append('  mode%d %s' % (mode['mode'], ' '.join('%s=%d' % (k, v) for k, v in params.items())))
        lines.append('}')
    return '\n'.join(lines).lstrip('\n') + '\n'


def definition_matches(defn, vendor, model, revision):
    """stinit's rule: each given keyword is a case-sensitive prefix of the INQUIRY field."""
    fields = {'manufacturer': vendor or '', 'model': model or '', 'revision': revision or ''}
    for key in MATCH_KEYS:
        want = defn.get(key)
        if want is not None and not fields[key].startswith(want):
            return False
    return True


def expected_settings(definitions, vendor, model, revision):
    """``{mode: {'options': {bit_name: bool}, 'default_blksize': n, ...}}`` the definitions give a drive.

    Later matching definitions override earlier ones, as stinit applies them in order.
    """
    defs = validate_definitions(definitions)
    out = {}
    for defn in defs:
        if not definition_matches(defn, vendor, model, revision):
            continue
        for mode in defn['modes']:
            params = dict(defn['options'])
            params.update((k, v) for k, v in mode.items() if k != 'mode')
            slot = out.setdefault(mode['mode'], {'options': {}})
            for keyword, value in params.items():
                if keyword in BOOLEAN_KEYWORDS:
                    slot['options'][BOOLEAN_KEYWORDS[keyword]] = bool(value)
                elif keyword in DEFAULT_KEYWORDS:
                    slot[DEFAULT_KEYWORDS[keyword]] = value
    return out


def compare(expected, actual):
    """Mismatches between :func:`expected_settings` and sysfs read-back.

    ``actual`` is ``{mode: _st_sysfs.read_options(...) or None}``. Returns a
    list of ``{'mode', 'setting', 'expected', 'actual'}``.
    """
    diffs = []
    for mode, want in sorted(expected.items()):
        have = actual.get(mode)
        if have is None:
            diffs.append({'mode': mode, 'setting': 'defined', 'expected': True, 'actual': False})
            continue
        for name, value in sorted(want['options'].items()):
            if have.get(name) != value:
                diffs.append({'mode': mode, 'setting': name, 'expected': value, 'actual': have.get(name)})
        for name in ('default_blksize', 'default_density', 'default_compression'):
            if name in want and have.get(name) != want[name]:
                diffs.append({'mode': mode, 'setting': name, 'expected': want[name], 'actual': have.get(name)})
    return diffs


def _read_int(path):
    try:
        with open(path) as handle:
            text = handle.read().strip()
    except OSError:
        return None
    try:
        return int(text, 0)
    except ValueError:
        return None


def st_driver_params(sys_root='/sys'):
    """The st driver's buffer parameters.

    The driver exposes them as driver attributes
    (``/sys/bus/scsi/drivers/st/{fixed_buffer_size,max_sg_segs,try_direct_io}``,
    present on the lab's 6.1 kernel) and, when loaded with readable
    parameters, under ``/sys/module/st/parameters/`` (``buffer_kbs`` in KB).
    """
    drv = os.path.join(sys_root, 'bus', 'scsi', 'drivers', 'st')
    mod = os.path.join(sys_root, 'module', 'st', 'parameters')
    fixed = _read_int(os.path.join(drv, 'fixed_buffer_size'))
    if fixed is None:
        kbs = _read_int(os.path.join(mod, 'buffer_kbs'))
        fixed = kbs * 1024 if kbs is not None else None
    segs = _read_int(os.path.join(drv, 'max_sg_segs'))
    if segs is None:
        segs = _read_int(os.path.join(mod, 'max_sg_segs'))
    direct = _read_int(os.path.join(drv, 'try_direct_io'))
    if direct is None:
        direct = _read_int(os.path.join(mod, 'try_direct_io'))
    loaded = os.path.isdir(drv) or os.path.isdir(os.path.join(sys_root, 'module', 'st'))
    return {'loaded': loaded, 'fixed_buffer_size': fixed, 'max_sg_segs': segs,
            'try_direct_io': None if direct is None else bool(direct)}


def transfer_limits(hba_max_transfer_bytes, host_sg_tablesize, st_max_sg_segs, page_size=4096,
                    wanted_block_size=None):
    """Which setting limits the block size one st WRITE can carry.

    - ``hba_max_transfer_bytes``: the request queue's max_sectors in bytes
      (BLKSECTGET on the drive's sg node), set by the HBA driver: a hard limit.
    - Direct I/O (st's default, try_direct_io=1) maps the user buffer page by
      page: at most min(st max_sg_segs, host sg_tablesize) pages. Above that st
      copies through its own driver buffer (extra copy, needs large contiguous
      memory), slower but not refused.

    Returns a dict with ``max_block_bytes``, ``direct_io_max_bytes``,
    ``limited_by`` and, when ``wanted_block_size`` is given, ``fits`` and
    ``message`` (what to change).
    """
    segs = [s for s in (host_sg_tablesize, st_max_sg_segs) if s]
    direct_max = min(segs) * page_size if segs else None
    if host_sg_tablesize and st_max_sg_segs:
        direct_by = 'st max_sg_segs' if st_max_sg_segs <= host_sg_tablesize else 'HBA sg_tablesize'
    elif segs:
        direct_by = 'st max_sg_segs' if st_max_sg_segs else 'HBA sg_tablesize'
    else:
        direct_by = None
    out = {
        'max_block_bytes': hba_max_transfer_bytes,
        'limited_by': 'HBA max_sectors' if hba_max_transfer_bytes else None,
        'direct_io_max_bytes': direct_max,
        'direct_io_limited_by': direct_by,
    }
    if wanted_block_size:
        if hba_max_transfer_bytes and wanted_block_size > hba_max_transfer_bytes:
            out['fits'] = False
            out['message'] = ('A %d-byte block does not fit the HBA path: the HBA driver caps one command at %d '
                              'bytes (its max_sectors). Use %d or less, or raise max_sectors in the HBA driver '
                              '(module parameter or udev rule) if the HBA supports it.'
                              % (wanted_block_size, hba_max_transfer_bytes, hba_max_transfer_bytes))
        elif direct_max and wanted_block_size > direct_max:
            out['fits'] = True
            out['message'] = ('A %d-byte block fits the HBA path but exceeds direct I/O (%d bytes = %s x %d-byte '
                              'pages): st will copy through its driver buffer. Raise st max_sg_segs (module '
                              'parameter, e.g. max_sg_segs=%d) to keep direct I/O.'
                              % (wanted_block_size, direct_max, direct_by, page_size,
                                 (wanted_block_size + page_size - 1) // page_size + 1))
        else:
            out['fits'] = True if hba_max_transfer_bytes else None
            out['message'] = ('A %d-byte block fits the HBA path (%s).' % (
                wanted_block_size, 'max %d bytes' % hba_max_transfer_bytes if hba_max_transfer_bytes
                else 'maximum unknown: no sg node readable'))
    return out
