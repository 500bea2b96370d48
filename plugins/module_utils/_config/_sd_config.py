# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Read a Bacula or Bareos storage daemon's configuration as the daemon reads it (files, includes, tape Devices).

Private to this collection: may change without notice. The resource syntax is
``_bacula_conf``'s (``parse_resources``, ``parse_size``, ``is_tape_device``);
this module adds the files and the defaults around it:

- Bacula: one file (``/etc/bacula/bacula-sd.conf``) and the files it includes.
- Bareos: a configuration directory (``/etc/bareos``): its ``bareos-sd.conf``
  when there is one (the daemon then reads that file only), else every
  ``bareos-sd.d/*/*.conf`` (core/src/lib/parse_conf.cc, ``FindConfigPath`` and
  ``GetConfigIncludePath``); or one file.

Includes: a line whose first word is ``@path`` or ``@"path"`` is replaced by
the file (Bacula src/lib/lex.c, ``lex_include``; Bareos core/src/lib/lex.cc,
which also expands wildcards with glob(3)). The daemon opens a relative path
from its own working directory, not from the including file's directory
(``fopen`` in ``lex_open_file``: bacula-sd 9.6.7 ``-t -c /x/bacula-sd.conf``
with ``@sub/dev.conf`` in it read /x/sub/dev.conf only when started in /x, and
failed with "Cannot open included config file sub/dev.conf" from / and from
/tmp). The packaged systemd units set no WorkingDirectory=, so the daemon
starts in / (``relative_to``). ``@|command`` runs a command: it is not run
here. Includes nest at most MAX_INCLUDE_DEPTH deep; a file that includes
itself, directly or through others, is a cycle and is read once.

Whatever cannot be read (a missing, unreadable, binary or malformed file, a
cycle, a command include) is listed in ``not_read`` with the reason, and the
rest is still read: nothing here raises on a host's files.

Per tape Device: Name, Archive Device (and the st device it is on this host),
Media Type, and the settings in SETTINGS, each with where it was set, or the
documented default that applies when it is not set, with its source (DEFAULTS).
"""

from __future__ import annotations

import bisect
import errno
import glob
import os
import re
import stat

from ansible_collections.tapeops.qualify.plugins.module_utils import _records
from ansible_collections.tapeops.qualify.plugins.module_utils._config._bacula_conf import (
    BaculaConfError,
    is_tape_device,
    normalize_keyword,
    parse_resources,
    parse_size,
)

DEFAULT_PATHS = {'bacula': '/etc/bacula/bacula-sd.conf', 'bareos': '/etc/bareos'}
DAEMONS = {'bacula': 'bacula-sd', 'bareos': 'bareos-sd'}
# Where the daemon starts when systemd starts it (bacula-sd.service, bareos-storage.service: no WorkingDirectory=).
RELATIVE_TO = '/'
MAX_INCLUDE_DEPTH = 16
# A storage daemon configuration is a few kB; a file this large is not one.
MAX_FILE_BYTES = 4 * 1024 * 1024

# (record key, directive as documented, kind)
SETTINGS = (
    ('maximum_block_size', 'Maximum Block Size', 'size'),
    ('minimum_block_size', 'Minimum Block Size', 'size'),
    ('maximum_file_size', 'Maximum File Size', 'size'),
    ('spool_directory', 'Spool Directory', 'path'),
    ('maximum_spool_size', 'Maximum Spool Size', 'size'),
    ('maximum_job_spool_size', 'Maximum Job Spool Size', 'size'),
    ('maximum_concurrent_jobs', 'Maximum Concurrent Jobs', 'count'),
)

# The Working Directory of the Storage resource stands for the spool directory's default.
WORKING_DIRECTORY = object()

_BACULA_CONF = 'Bacula src/stored/stored_conf.c (dev_items)'
_BAREOS_CONF = 'Bareos core/src/stored/stored_conf.cc (dev_items)'
_NO_LIMIT = '0, no limit: %s despools at the limit only when it is above 0'
# The defaults of the settings read, each with its source. A callable takes the daemon's version (a tuple, or
# None when it is not known) and returns (value, basis), value None when the default cannot be told.
DEFAULTS = {
    'bacula': {
        'maximum_block_size': (64512, 'Bacula src/stored/block.h DEFAULT_BLOCK_SIZE (512 * 126 = 64512 bytes), '
                                      'used when Maximum Block Size is not set (stored_conf.c gives it no default)'),
        'minimum_block_size': (0, _BACULA_CONF + ': no default, 0: no minimum, each block as filled up to Maximum '
                                                 'Block Size'),
        'maximum_file_size': (1000000000, _BACULA_CONF + ': MaximumFileSize ITEM_DEFAULT 1000000000'),
        'spool_directory': (WORKING_DIRECTORY, 'Bacula src/stored/spool.c make_unique_data_spool_filename: the '
                                               'Storage resource\'s Working Directory when the Device sets none'),
        'maximum_spool_size': (0, _BACULA_CONF + ': no default, ' + _NO_LIMIT % 'spool.c'),
        'maximum_job_spool_size': (0, _BACULA_CONF + ': no default, ' + _NO_LIMIT % 'spool.c'),
        'maximum_concurrent_jobs': (0, _BACULA_CONF + ': no default, 0: no limit (src/stored/reserve.c '
                                                      'is_max_jobs_ok limits jobs only when it is above 0)'),
    },
    'bareos': {
        'maximum_block_size': lambda version: _by_version(
            version, (23, 0, 0),
            (64512, 'Bareos core/src/stored/block.h DEFAULT_BLOCK_SIZE (64512 bytes), used when Maximum Block Size is '
                    'not set before Bareos 23.0.0'),
            (1048576, _BAREOS_CONF + ': MaximumBlockSize default 1048576 since Bareos 23.0.0 ("stored: increase '
                                     'default block size to 1M")'),
            'Bareos 23.0.0 raised it from 64512 to 1048576 bytes'),
        'minimum_block_size': (0, _BAREOS_CONF + ': no default, 0: no minimum'),
        'maximum_file_size': (1000000000, _BAREOS_CONF + ': MaximumFileSize default "1000000000" (every release to '
                                                         '25.1.0)'),
        'spool_directory': (WORKING_DIRECTORY, 'Bareos core/src/stored/spool.cc MakeUniqueDataSpoolFilename: the '
                                               'Storage resource\'s Working Directory when the Device sets none'),
        'maximum_spool_size': (0, _BAREOS_CONF + ': no default, ' + _NO_LIMIT % 'spool.cc'),
        'maximum_job_spool_size': (0, _BAREOS_CONF + ': no default, ' + _NO_LIMIT % 'spool.cc'),
        'maximum_concurrent_jobs': lambda version: _by_version(
            version, (23, 0, 0),
            (0, _BAREOS_CONF + ': no default before Bareos 23.0.0, 0: no limit'),
            (1, _BAREOS_CONF + ': MaximumConcurrentJobs default "1" since Bareos 23.0.0 ("stored: set device '
                               'Maximum Concurrent Jobs to 1")'),
            'Bareos 23.0.0 changed it from no limit to 1'),
    },
}

_VERSION_RE = re.compile(r'(?:^|\bVersion:\s*)(\d+)\.(\d+)(?:\.(\d+))?', re.M)
_INCLUDE_END = ' \t;,#{}"'


def _by_version(version, since, before, after, change):
    if version is None:
        return None, '%s, and the storage daemon\'s version was not read (give it as daemon_version).' % change
    return after if tuple(version) >= since else before


def parse_daemon_version(text):
    """``(major, minor, patch)`` from what ``bacula-sd -?`` or ``bareos-sd --version`` printed, or None.

    Bacula and Bareos before 22 print a usage with ``Version: 9.6.7 (10 December 2020)``; Bareos 22 and later
    print the version alone for ``--version`` (CLI11's version flag: ``23.0.1``).
    """
    match = _VERSION_RE.search(text or '')
    if not match:
        return None
    return tuple(int(part or 0) for part in match.groups())


# ``st0`` for /dev/nst0, /dev/st0 and their mode nodes: the records' one reading
st_name = _records.st_name


# ---------------------------------------------------------------------------
# files and includes


class _NotRead(Exception):
    """A file that is not read, with the reason."""


def _os_reason(exc):
    if exc.errno == errno.ENOENT:
        return 'it does not exist'
    if exc.errno in (errno.EACCES, errno.EPERM):
        return ('permission denied: read it as root (become: true) or as the storage daemon\'s user')
    return exc.strerror or str(exc)


def read_text(path):
    """The text of a configuration file; raises _NotRead saying why it is not one."""
    try:
        info = os.stat(path)
    except OSError as exc:
        raise _NotRead(_os_reason(exc)) from None
    if stat.S_ISDIR(info.st_mode):
        raise _NotRead('it is a directory, not a file')
    if not stat.S_ISREG(info.st_mode):
        raise _NotRead('it is not a regular file')
    if info.st_size > MAX_FILE_BYTES:
        raise _NotRead('it holds %d bytes, more than a configuration file (%d)' % (info.st_size, MAX_FILE_BYTES))
    try:
        with open(path, 'rb') as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise _NotRead(_os_reason(exc)) from None
    if b'\0' in data:
        raise _NotRead('it holds NUL bytes: not a text file')
    try:
        text = data.decode('utf-8')
    except UnicodeDecodeError as exc:
        raise _NotRead('it is not UTF-8 text (byte %d), as the storage daemon reads its configuration' % exc.start)
    return text[1:] if text.startswith('\ufeff') else text


def include_target(line):
    """The file an ``@`` include line names (``@path``, ``@"path"``, ``@|command``), or None for any other line."""
    text = line.lstrip()
    if not text.startswith('@'):
        return None
    rest = text[1:]
    if rest.startswith('"'):
        out = []
        escaped = False
        for ch in rest[1:]:
            if escaped:
                out.append(ch)
                escaped = False
            elif ch == '\\':
                escaped = True
            elif ch == '"':
                break
            else:
                out.append(ch)
        return ''.join(out)
    end = len(rest)
    for index, ch in enumerate(rest):
        if ch in _INCLUDE_END:
            end = index
            break
    return rest[:end]


class _Reader:
    """The files of one configuration, their lines in the daemon's order, and what was not read."""

    def __init__(self, software, relative_to):
        self.software = software
        self.relative_to = relative_to or RELATIVE_TO
        self.files = []
        self.not_read = []
        self.lines = []     # (text, file, line number); an include line becomes '' in place

    def skip(self, path, reason, included_from=None):
        self.not_read.append({'path': path, 'reason': reason, 'included_from': included_from})

    def add(self, path, stack=(), included_from=None):
        real = os.path.realpath(path)
        if real in stack:
            chain = ' -> '.join(list(stack[stack.index(real):]) + [real])
            self.skip(path, 'an include cycle (%s): read once' % chain, included_from)
            return
        if len(stack) > MAX_INCLUDE_DEPTH:
            self.skip(path, 'includes nest deeper than %d files here' % MAX_INCLUDE_DEPTH, included_from)
            return
        try:
            text = read_text(path)
        except _NotRead as exc:
            self.skip(path, str(exc), included_from)
            return
        self.files.append(path)
        for number, line in enumerate(text.split('\n'), 1):
            target = include_target(line)
            if target is None:
                self.lines.append((line, path, number))
                continue
            self.lines.append(('', path, number))
            self.include(target, path, stack + (real,), '%s:%d' % (path, number))

    def include(self, target, including, stack, where):
        if not target:
            self.skip('@', 'an @ with no file name after it', where)
            return
        if target.startswith('|'):
            self.skip('@' + target, 'a command include: it runs a program, which this read-only reader does not',
                      where)
            return
        path = target if os.path.isabs(target) else os.path.join(self.relative_to, target)
        if self.software == 'bareos' and glob.has_magic(path):
            matches = sorted(glob.glob(path))
            if not matches:
                self.skip(path, 'no file matches this pattern', where)
            for match in matches:
                self.add(match, stack, where)
            return
        if not os.path.isabs(target) and not os.path.lexists(path):
            beside = os.path.join(os.path.dirname(including), target)
            if os.path.exists(beside):
                self.skip(path, 'it does not exist: the storage daemon opens a relative include from its working '
                                'directory (%s), not from the including file\'s; %s exists: give relative_to (the '
                                'directory the daemon starts in) if that is the one it reads'
                          % (self.relative_to, beside), where)
                return
        self.add(path, stack, where)

    def text(self):
        return '\n'.join(line for line, dummy, dummy in self.lines)

    def locator(self, text):
        """offset into ``text`` (``text()``) -> (file, line)."""
        starts = [0] + [match.end() for match in re.finditer('\n', text)]

        def locate(offset):
            dummy, path, number = self.lines[max(0, bisect.bisect_right(starts, offset) - 1)]
            return path, number
        return locate

    def file_text(self, path):
        """The file's own lines (its includes left out, their lines kept empty: the numbering stays the file's)."""
        return '\n'.join(line for line, where, dummy in self.lines if where == path)


def config_files(software, path):
    """``(layout, [files to read first])`` for ``path``, or raises _NotRead saying why there is none.

    A Bareos directory: its bareos-sd.conf when there is one, else bareos-sd.d/*/*.conf; a Bacula directory: its
    bacula-sd.conf; a file: itself.
    """
    if not os.path.lexists(path):
        raise _NotRead('it does not exist')
    if not os.path.isdir(path):
        return 'file', [path]
    single = os.path.join(path, '%s.conf' % DAEMONS[software])
    if os.path.lexists(single):
        return 'file', [single]
    if software == 'bareos':
        files = sorted(glob.glob(os.path.join(path, 'bareos-sd.d', '*', '*.conf')))
        if files:
            return 'directory', files
        raise _NotRead('it holds neither bareos-sd.conf nor bareos-sd.d/*/*.conf')
    raise _NotRead('it is a directory without bacula-sd.conf: give the file')


# ---------------------------------------------------------------------------
# resources and settings


def _unquote(value):
    value = (value or '').strip()
    if len(value) >= 2 and value[0] == '"' and value[-1] == '"':
        return value[1:-1]
    return value


def _directive(resource, key):
    key = normalize_keyword(key)
    found = [d for d in resource.directives if d.key == key]
    return found[-1] if found else None


def _default(software, key, version, working_directory):
    entry = DEFAULTS[software][key]
    value, basis = entry(version) if callable(entry) else entry
    if value is WORKING_DIRECTORY:
        value = working_directory
        if value is None:
            basis += ' (the Storage resource sets no Working Directory here)'
    return {'text': None, 'value': value, 'source': 'default' if value is not None else 'unknown', 'basis': basis,
            'where': None, 'error': None}


def setting(resource, key, directive, kind, software, version, working_directory, locate):
    """One setting of a Device: as set (text, value, where) or the default that applies (source, basis)."""
    found = _directive(resource, directive)
    if found is None:
        return _default(software, key, version, working_directory)
    text = _unquote(found.value)
    out = {'text': text, 'value': None, 'source': 'configuration', 'basis': None,
           'where': '%s:%d' % locate(found.key_start), 'error': None}
    try:
        if kind == 'size':
            out['value'] = parse_size(text)
        elif kind == 'count':
            if not re.match(r'^\d+$', text):
                raise BaculaConfError('a whole number is expected, got %r.' % text)
            out['value'] = int(text)
        else:
            out['value'] = text
    except BaculaConfError as exc:
        out['error'] = 'the storage daemon would refuse it: %s' % exc
    return out


def device_record(resource, software, version, working_directory, locate, resolve=None):
    """The record of one tape Device resource (SdDevice): name, where, Archive Device on this host, settings."""
    resolve = resolve or resolve_device
    archive = _unquote(resource.get('archivedevice'))
    record = {'name': resource.name, 'file': None, 'line': None, 'archive_device': archive or None,
              'device_path': None, 'st': None, 'device_note': None,
              'device_type': _unquote(resource.get('devicetype')) or None,
              'media_type': _unquote(resource.get('mediatype')) or None}
    record['file'], record['line'] = locate(resource.start)
    if not archive:
        record['device_note'] = 'the Device sets no Archive Device'
    else:
        record['device_path'] = resolve(archive)
        record['st'] = st_name(record['device_path'])
        if record['device_path'] is None:
            record['device_note'] = '%s does not exist on this host' % archive
        elif record['st'] is None:
            record['device_note'] = '%s is not an st tape device node' % record['device_path']
    for key, directive, kind in SETTINGS:
        record[key] = setting(resource, key, directive, kind, software, version, working_directory, locate)
    return record


def _located(reader):
    """[(resource, locate)] of the whole configuration; ``locate(offset)`` is (file, line).

    When the whole does not parse, each file is read on its own, and a file the daemon would refuse is in
    ``not_read``: the other files still count.
    """
    text = reader.text()
    try:
        found = parse_resources(text)
    except BaculaConfError:
        found = None
    if found is not None:
        locate = reader.locator(text)
        return [(res, locate) for res in found]
    out = []
    for path in list(reader.files):
        own = reader.file_text(path)
        try:
            found = parse_resources(own)
        except BaculaConfError as exc:
            reader.skip(path, 'the storage daemon would refuse it: %s' % str(exc).rstrip('.'))
            continue

        def locate(offset, own=own, path=path):
            return path, own.count('\n', 0, offset) + 1
        out.extend((res, locate) for res in found)
    return out


def resolve_device(path):
    """The device node ``path`` leads to (symlinks followed: ``/dev/tape/by-id/...``), None when there is none."""
    return os.path.realpath(path) if os.path.exists(path) else None


def read_storage_daemon(software, path=None, relative_to=RELATIVE_TO, version=None, resolve=None):
    """What a Bacula or Bareos storage daemon reads: the StorageDaemonConfig record as a dict.

    ``version``: the daemon's (major, minor, patch), for the defaults that changed (Bareos 23.0.0), or None.
    ``resolve``: how an Archive Device path leads to its device node (``resolve_device``: symlinks such as
    ``/dev/tape/by-id`` followed, None when there is none).
    """
    if software not in DEFAULT_PATHS:
        raise ValueError('software must be one of %s, got %r' % (', '.join(sorted(DEFAULT_PATHS)), software))
    resolve = resolve or resolve_device
    path = path or DEFAULT_PATHS[software]
    reader = _Reader(software, relative_to)
    out = {'software': software, 'config_path': path, 'layout': None, 'relative_to': reader.relative_to,
           'version': '.'.join(str(v) for v in version) if version else None, 'files': [], 'not_read': [],
           'working_directory': None, 'devices': [], 'other_devices': [], 'error': None}
    try:
        out['layout'], first = config_files(software, path)
    except _NotRead as exc:
        reader.skip(path, str(exc))
        first = []
    for name in first:
        reader.add(name)
    located = _located(reader) if reader.files else []
    storage = [res for res, dummy in located if normalize_keyword(res.type) == 'storage']
    if storage:
        out['working_directory'] = _unquote(storage[-1].get('workingdirectory')) or None
    for res, locate in located:
        if normalize_keyword(res.type) != 'device':
            continue
        tape = is_tape_device(res)
        archive = _unquote(res.get('archivedevice'))
        if not tape and not res.get('devicetype') and archive:
            # no Device Type: the daemon tells a tape by its Archive Device (a link to an st node counts)
            tape = st_name(resolve(archive)) is not None
        if tape:
            out['devices'].append(device_record(res, software, version, out['working_directory'], locate, resolve))
        else:
            file_name, line = locate(res.start)
            out['other_devices'].append({'name': res.name, 'archive_device': archive or None,
                                         'device_type': _unquote(res.get('devicetype')) or None, 'file': file_name,
                                         'line': line})
    out['files'] = list(reader.files)
    out['not_read'] = reader.not_read
    if not reader.files:
        out['error'] = 'Nothing was read from %s: %s.' % (path, reader.not_read[0]['reason'] if reader.not_read
                                                          else 'no file')
    return out
