# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Every input of a qualify run, checked once on the controller before any host is measured.

Private to this collection: may change without notice. The qualify role's
run entry point calls the ``qualify_inputs_check`` action, which hands its
arguments to :func:`problems`; any problem fails the run play, so no host is
measured with an input that would fail it later, run without a limit, or be
silently ignored. Each problem names the variable as the user wrote it
(``qualify_profile_overrides.source_secs``, ``tapeops_backup.block_size_bytes``
with the hosts it is set on) and says what to write instead; nothing of a
Python exception reaches the message.

The bounds (documented in roles/qualify/README.md, "Checked before the run"):

- profile keys (``PROFILE_KEYS``): seconds from 1 to an hour per source-read
  or sweep step, sizes from 1 MB, the sweep's block sizes as the backup's;
- block sizes (``block_size_problem``): a whole number of bytes, a multiple
  of 4, from 4 KiB to 16 MiB (``MIN_BLOCK`` .. ``MAX_BLOCK``: st's variable
  block mode and the backup programs' own limits); the sweep's
  ``block_sizes`` also take ``256K`` / ``1M`` (tape_write_benchmark reads
  them with ansible-core's ``human_to_bytes``, and so does this check);
  ``tapeops_backup`` and ``tapeops_drives`` block sizes are bytes only
  (``block_size_bytes``): ``"256K"`` is refused, naming ``262144``;
- directories (``directory_problem``): the run directory (or the report base
  a new one is made under) is a directory this user can write, or can be
  created under one; a file is refused. Nothing is created here (check mode
  writes nothing).

A variable of an earlier name (``RENAMED``: ``qualify_fail_on``,
``target_generation``, ...) is refused, naming the variable to write instead:
the role reads only the new names, and an old one would be silently ignored.

Pure apart from the directory checks (``os.stat``/``os.access``); importable
on a managed host's Python 3.9 like every module_utils file.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import re

from ansible.module_utils.common.text.formatters import human_to_bytes
from ansible.module_utils.parsing.convert_bool import BOOLEANS_FALSE, BOOLEANS_TRUE

from ansible_collections.tapeops.qualify.plugins.module_utils._config import _bacula_conf
from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError

KIB = 1024
MIB = 1024 * KIB
MIN_BLOCK = 4 * KIB
MAX_BLOCK = 16 * MIB

# the backup applications whose settings the verdict knows (_judge._verdict.SOFTWARE: this floor cannot import it;
# tests/unit/plugins/module_utils/test_inputs_software.py holds the two the same)
SOFTWARE = ('data_protector', 'bacula', 'bareos', 'netbackup', 'amanda')
PATTERN_WORDS = ('zeros', 'random')
MAX_RATIO = 50.0


class InputError(TapeopsError):
    """One or more inputs of the run are wrong; the message lists each with what to write instead."""

    reason = 'bad_input'


def _show(value):
    """The value as the user wrote it (JSON/YAML-like: strings quoted)."""
    try:
        return json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)


def nearest(name, known):
    """'did you mean X' for a misspelt key (difflib), or a list of the known keys."""
    close = difflib.get_close_matches(str(name), sorted(known), n=1, cutoff=0.6)
    if close:
        return 'did you mean %s?' % close[0]
    return 'the keys are %s.' % ', '.join(sorted(known))


def whole_number(value):
    """``value`` as an int when it is a whole number (an int, an integral float, a string of digits), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value.is_integer() else None
    if isinstance(value, str) and value.strip().lstrip('-').isdigit():
        return int(value.strip())
    return None


def truth(value):
    """True / False for a boolean as Ansible reads one (true, no, 1, ...), else None."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (str, int)):
        text = value.lower() if isinstance(value, str) else value
        if text in BOOLEANS_TRUE:
            return True
        if text in BOOLEANS_FALSE:
            return False
    return None


# ---------------------------------------------------------------------------
# one value


def number_problem(value, where, low, high, unit, example, nullable=False):
    """Why ``value`` is not a whole number of ``unit`` from ``low`` to ``high`` (None when it is)."""
    if nullable and value in (None, '', 'None'):
        # 'None': a null variable templated as text (ansible-core before 2.19 without native types)
        return None
    number = whole_number(value)
    if number is not None and low <= number <= high:
        return None
    what = 'a whole number of %s from %s to %s' % (unit, low, high)
    if nullable:
        what += ', or null for none'
    return '%s is %s: write %s, for example %s.' % (where, _show(value), what, example)


def bool_problem(value, where):
    if truth(value) is not None:
        return None
    return '%s is %s: write true or false.' % (where, _show(value))


def block_size_problem(value, where, suffixes=False):
    """Why ``value`` is not a usable tape block size (None when it is).

    A whole number of bytes, a multiple of 4, from 4 KiB to 16 MiB. With
    ``suffixes`` (the sweep's ``block_sizes``) ``256K`` and ``1M`` are read as
    tape_write_benchmark reads them (``human_to_bytes``, powers of 1024);
    without, a size with a suffix is refused with its number of bytes.
    """
    rule = ('a multiple of 4 bytes from %d (4 KiB) to %d (16 MiB)%s, for example %s'
            % (MIN_BLOCK, MAX_BLOCK, ', in bytes or with K or M (powers of 1024)' if suffixes else '',
               '256K' if suffixes else '262144'))
    number = whole_number(value)
    if number is None and isinstance(value, str):
        try:
            number = human_to_bytes(value.strip(), isbits=False)
        except (ValueError, TypeError):
            number = None
        if number is not None and not suffixes:
            if MIN_BLOCK <= number <= MAX_BLOCK and not number % 4:
                return '%s is %s: write the block size in bytes, %d.' % (where, _show(value), number)
            return '%s is %s: write %s.' % (where, _show(value), rule)
    if number is None:
        return '%s is %s: not a block size; write %s.' % (where, _show(value), rule)
    if number < MIN_BLOCK or number > MAX_BLOCK or number % 4:
        return '%s is %s: write %s.' % (where, _show(value), rule)
    return None


def pattern_problem(value, where):
    """Why ``value`` is not a data pattern of the write sweep (zeros, random, or a ratio N:M from 1:1 to 50:1)."""
    if value in PATTERN_WORDS:
        return None
    ratio = None
    if isinstance(value, str) and value.count(':') == 1:
        left, right = value.split(':')
        try:
            ratio = float(left) / float(right)
        except (ValueError, ZeroDivisionError):
            ratio = None
    if ratio is not None and math.isfinite(ratio) and 1.0 <= ratio <= MAX_RATIO:
        return None
    return ('%s is %s: write zeros, random or a compression ratio from 1:1 to 50:1 as a quoted string, for '
            'example "2.5:1".' % (where, _show(value)))


def list_problems(value, where, each, allow_empty=False):
    """Problems of a list whose every element is checked by ``each(element, where[i])``."""
    if not isinstance(value, (list, tuple)) or (not value and not allow_empty):
        return ['%s is %s: write a%s list, for example %s.' % (
            where, _show(value), '' if allow_empty else ' non-empty', each.example)]
    return [p for p in (each(v, '%s[%d]' % (where, i)) for i, v in enumerate(value)) if p]


def _ints(low, high, unit, example, nullable=False):
    def check(value, where):
        return number_problem(value, where, low, high, unit, example, nullable)
    check.example = example
    return check


def _blocks(value, where):
    return block_size_problem(value, where, suffixes=True)


_blocks.example = '[64K, 256K, 1M]'
pattern_problem.example = '[random, "2.5:1"]'


def _list_of(each, allow_empty=False):
    def check(value, where):
        return list_problems(value, where, each, allow_empty)
    return check


def _one(check):
    def wrapped(value, where):
        problem = check(value, where)
        return [problem] if problem else []
    return wrapped


# ---------------------------------------------------------------------------
# qualify_profile_overrides

# Every profile key (roles/qualify/vars/main.yml __qualify_profiles; the unit tests hold the two together),
# with its check. Upper bounds: an hour per timed step (the full profile takes 120 s and 60 s), a
# whole LTO-10 cartridge's native capacity per sized step (30 TB = 30,000,000 MB).
PROFILE_KEYS = {
    'source_seconds': _one(_ints(1, 3600, 'seconds', 'source_seconds: 60')),
    'source_max_mb': _one(_ints(1, 30000000, 'MB', 'source_max_mb: 30000', nullable=True)),
    'source_scaling_factor': _one(_ints(1, 8, 'times the streams', 'source_scaling_factor: 2')),
    'block_sizes': _list_of(_blocks),
    'patterns': _list_of(pattern_problem),
    'step_mb': _one(_ints(1, 30000000, 'MB', 'step_mb: 400')),
    'step_seconds': _one(_ints(1, 3600, 'seconds', 'step_seconds: 10')),
    'filemark_segments_mb': _list_of(_ints(1, 30000000, 'MB', '[64, 2000]'), allow_empty=True),
    'filemark_payload_mb': _one(_ints(1, 30000000, 'MB', 'filemark_payload_mb: 256')),
    'read_back': _one(bool_problem),
    'compression_probe_mb': _one(_ints(0, 30000000, 'MB', 'compression_probe_mb: 256')),
    'mechanics': _one(bool_problem),
    'mechanics_repeats': _one(_ints(1, 100, 'cycles', 'mechanics_repeats: 5')),
    'btape': _one(bool_problem),
    'btape_file_gb': _one(_ints(1, 100, 'GB', 'btape_file_gb: 1')),
    'poll_seconds': _one(_ints(1, 600, 'seconds', 'poll_seconds: 10')),
}


def override_problems(overrides, name='qualify_profile_overrides'):
    """Problems of ``qualify_profile_overrides``: known keys only, each of its type and within its bounds."""
    if overrides in (None, ''):
        return []
    if not isinstance(overrides, dict):
        return ['%s is %s: write a dictionary of profile keys, for example {"source_seconds": 60}.'
                % (name, _show(overrides))]
    out = []
    for key in sorted(overrides, key=str):
        where = '%s.%s' % (name, key)
        if key not in PROFILE_KEYS:
            out.append('%s is not a profile key: %s' % (where, nearest(key, PROFILE_KEYS)))
            continue
        out.extend(PROFILE_KEYS[key](overrides[key], where))
    return out


# ---------------------------------------------------------------------------
# the hosts' settings: tapeops_backup, tapeops_drives

# An application the collection does not know is named as the user writes it (a report names it): a name of
# letters and digits, with spaces, '.', '_', '+' or '-' between
APPLICATION_NAME = re.compile(r'^[A-Za-z0-9][A-Za-z0-9 ._+-]{0,63}$')


def _normal(name):
    return re.sub(r'[^a-z0-9]', '', name.lower())


def _near_known(value):
    """The known application ``value`` looks like a misspelling or a variant of (``bacual``, ``NetBackup``,
    ``hp_data_protector``), or None."""
    normal = _normal(value)
    for known in SOFTWARE:
        if _normal(known) in normal:
            return known
    close = difflib.get_close_matches(value.lower(), SOFTWARE, n=1, cutoff=0.75)
    return close[0] if close else None


def _software(value, where):
    """A known application, unset, or the name of one the collection does not know (judged without its settings);
    a name like a known one is refused, naming it: it is more likely a slip than another application."""
    if value is None or value in SOFTWARE:
        return []
    known = ', '.join(SOFTWARE)
    if not isinstance(value, str) or not APPLICATION_NAME.match(value.strip()):
        return ['%s is %s: write one of %s, the name of another backup application (letters, digits, spaces, '
                '".", "_", "+", "-"), or leave it unset.' % (where, _show(value), known)]
    near = _near_known(value)
    if near:
        return ['%s is %s: did you mean %s? Write one of %s; another application\'s name is judged as an '
                'application this collection does not know (only the st driver\'s, the host\'s and the sources\' '
                'fixes are offered).' % (where, _show(value), near, known)]
    return []


def _bacula_size(value, where):
    # Bacula's own notation (k/m/g/t powers of 1024, kb/mb/gb/tb powers of 1000): tape_mechanics_benchmark reads
    # it with _config._bacula_conf.parse_size, the one reader of Bacula sizes
    if value is None:
        return []
    try:
        size = _bacula_conf.parse_size(value)
    except _bacula_conf.BaculaConfError:
        size = None
    if size is not None and size > 0:
        return []
    return ['%s is %s: write a size as in bacula-sd.conf, for example 50G or 17000MB.' % (where, _show(value))]


SETTING_CHECKS = {
    'block_size_bytes': _one(lambda v, w: None if v is None else block_size_problem(v, w)),
    'segment_size_mb': _one(_ints(1, 30000000, 'MB', 'segment_size_mb: 10000', nullable=True)),
    'immediate_filemarks': _one(lambda v, w: None if v is None else bool_problem(v, w)),
    'concurrency': _one(_ints(1, 256, 'streams', 'concurrency: 4', nullable=True)),
    # the application's jobs (sessions) on one mounted volume: each ends with a synchronous file mark
    'job_size_mb': _one(_ints(1, 1000000000, 'MB', 'job_size_mb: 50000', nullable=True)),
    'job_gap_s': _one(_ints(0, 86400, 'seconds', 'job_gap_s: 30', nullable=True)),
}

BACKUP_KEYS = dict(SETTING_CHECKS, software=_software, maximum_file_size=_bacula_size)

# tapeops_drives[]: the settings above per drive, and what names the drive or its model (checked by the resolver);
# physics: false marks a device without tape physics (an emulator such as mhvtl): its rates are no drive's
DRIVE_KEYS = dict(SETTING_CHECKS, physics=_one(lambda v, w: None if v is None else bool_problem(v, w)), **dict(
    (k, None) for k in ('nst', 'generation', 'form_factor', 'vendor', 'interface', 'speed_floor_mb_s', 'model')))


def _settings_problems(settings, where, known):
    out = []
    for key in sorted(settings, key=str):
        key_where = '%s.%s' % (where, key)
        if key not in known:
            out.append('%s is not a setting: %s' % (key_where, nearest(key, known)))
        elif known[key] is not None:
            out.extend(known[key](settings[key], key_where))
    return out


def backup_problems(backup):
    """Problems of one host's ``tapeops_backup``."""
    if backup in (None, ''):
        return []
    if not isinstance(backup, dict):
        return ['tapeops_backup is %s: write a dictionary, for example {software: bacula, block_size_bytes: '
                '262144}.' % _show(backup)]
    return _settings_problems(backup, 'tapeops_backup', BACKUP_KEYS)


def drives_problems(drives):
    """Problems of one host's ``tapeops_drives``."""
    if drives in (None, ''):
        return []
    if not isinstance(drives, list):
        return ['tapeops_drives is %s: write a list of drives, for example [{nst: /dev/nst0, block_size_bytes: '
                '262144}].' % _show(drives)]
    out = []
    for i, drive in enumerate(drives):
        where = 'tapeops_drives[%d]' % i
        if not isinstance(drive, dict):
            out.append('%s is %s: write a dictionary with the drive\'s nst, for example {nst: /dev/nst0}.'
                       % (where, _show(drive)))
            continue
        if not isinstance(drive.get('nst'), str) or not drive['nst'].startswith('/'):
            out.append('%s.nst is %s: write the drive\'s non-rewinding device, for example /dev/nst0.'
                       % (where, _show(drive.get('nst'))))
        out.extend(_settings_problems(drive, where, DRIVE_KEYS))
    return out


def host_problems(per_host):
    """Problems of the hosts' settings, ``{host: {'tapeops_backup': ..., 'tapeops_drives': ...}}``.

    The same problem on several hosts (a group variable) is one line naming them all.
    """
    hosts_of = {}
    for host in sorted(per_host or {}, key=str):
        values = per_host[host] or {}
        for problem in backup_problems(values.get('tapeops_backup')) + drives_problems(values.get('tapeops_drives')):
            hosts_of.setdefault(problem, []).append(str(host))
    out = []
    for problem, hosts in hosts_of.items():
        shown = ', '.join(hosts[:10]) + (' and %d more' % (len(hosts) - 10) if len(hosts) > 10 else '')
        out.append('%s (%s %s)' % (problem.rstrip('.'), 'hosts' if len(hosts) > 1 else 'host', shown) + '.')
    return out


# ---------------------------------------------------------------------------
# the role's numbers

# variable: (low, high, unit, example, nullable)
ROLE_NUMBERS = {
    'qualify_tool_timeout': (1, 3600, 'seconds', 'qualify_tool_timeout: 60', False),
    'qualify_write_timeout': (1, 172800, 'seconds', 'qualify_write_timeout: 3600', True),
    'qualify_mechanics_timeout': (1, 172800, 'seconds', 'qualify_mechanics_timeout: 3600', False),
    'qualify_target_drives': (1, 64, 'drives', 'qualify_target_drives: 2', False),
    'qualify_media_drives_kept': (1, 64, 'drives', 'qualify_media_drives_kept: 1', False),
    # the observe playbook's window: at most 48 hours (a weekend's full backups); until_idle 0 is off
    'qualify_observe_seconds': (1, 172800, 'seconds', 'qualify_observe_seconds: 28800', False),
    'qualify_observe_until_idle': (0, 172800, 'seconds', 'qualify_observe_until_idle: 600', False),
}


def role_problems(settings):
    """Problems of the role's numeric variables in ``settings`` ({variable: value}; absent ones are not checked)."""
    out = []
    for name in sorted(settings or {}):
        value = settings[name]
        if name in ROLE_NUMBERS:
            low, high, unit, example, nullable = ROLE_NUMBERS[name]
            problem = number_problem(None if value == '' else value, name, low, high, unit, example, nullable)
            if problem:
                out.append(problem)
        elif name == 'qualify_media_fill_fraction':
            try:
                fraction = float(value)
            except (TypeError, ValueError):
                fraction = None
            if isinstance(value, bool) or fraction is None or not 0 < fraction <= 1:
                out.append('qualify_media_fill_fraction is %s: write a fraction above 0 and at most 1, for example '
                           '0.8 (1.0, the default, is an upper bound).' % _show(value))
    return out


# ---------------------------------------------------------------------------
# directories (on the controller)


def directory_problem(path, name, must_exist=False):
    """Why ``path`` (the value of variable ``name``) cannot be a directory this run writes to (None when it can).

    An existing directory must be writable; a missing one must be creatable (its nearest existing parent a
    writable directory), unless ``must_exist``. A file anywhere on the way is refused.
    """
    if path in (None, ''):
        return '%s is empty: write a directory, for example reports.' % name
    path = str(path)
    if os.path.isdir(path):
        if not os.access(path, os.W_OK | os.X_OK):
            return ('%s=%s is a directory this user cannot write to: choose a writable one, or fix its '
                    'permissions.' % (name, path))
        return None
    if os.path.lexists(path):
        return '%s=%s is a file, not a directory: name a directory (a missing one is created).' % (name, path)
    if must_exist:
        return None
    parent = os.path.dirname(os.path.abspath(path))
    while not os.path.lexists(parent) and os.path.dirname(parent) != parent:
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        return ('%s=%s cannot be created: %s is a file, not a directory. Name a directory under a directory.'
                % (name, path, parent))
    if not os.access(parent, os.W_OK | os.X_OK):
        return ('%s=%s cannot be created: this user cannot write to %s. Choose a writable place, for example '
                'a directory under your home.' % (name, path, parent))
    return None


# ---------------------------------------------------------------------------
# earlier names of the role's variables

# Earlier names of the qualify role's variables, with what to write instead. The role reads none of them;
# the action refuses them wherever they are set (extra vars, play vars, the hosts' inventory).
RENAMED = {
    'qualify_fail_on_shoe_shining': 'qualify_fail_on_failing_drives',
    'qualify_fail_on': 'qualify_failing_classes',
    'target_generation': 'qualify_target_generation',
    'target_vendor': 'qualify_target_vendor',
    'target_interface': 'qualify_target_interface',
    'target_model': 'qualify_target_model',
    'target_speed_floor_mb_s': 'qualify_target_speed_floor_mb_s',
    'target_drives': 'qualify_target_drives',
    'upgrade_mechanics': 'qualify_profile_overrides: {mechanics: true}',
    'upgrade_mechanics_repeats': 'qualify_profile_overrides: {mechanics_repeats: 5}',
}


def renamed_problems(names):
    """Problems of the variables ``names`` that are set (the earlier names of ``RENAMED`` among them)."""
    return ['%s is set, but the qualify role does not read it: write %s instead.' % (name, RENAMED[name])
            for name in sorted(set(names or ())) if name in RENAMED]


def problems(profile_overrides=None, hosts=None, settings=None):
    """Every problem of the run's inputs but the directories (which the action checks), as sentences."""
    return override_problems(profile_overrides) + role_problems(settings) + host_problems(hosts)


def refuse(found):
    """Raise InputError listing ``found`` (nothing when there is no problem)."""
    if found:
        raise InputError('%d input(s) to fix before any host is measured: %s' % (len(found), ' '.join(
            '(%d) %s' % (i + 1, p) for i, p in enumerate(found))))
