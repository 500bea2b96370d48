# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Read a NetBackup media server's buffer settings as bptm reads them (Linux/UNIX media servers).

Private to this collection: may change without notice. NetBackup keeps each
tuning setting in a file of its own that holds one decimal integer ("The
integer represents the size of one tape or disk buffer in bytes. For example,
to use a shared data buffer size of 64 kilobytes, the file would contain the
integer 65536": NetBackup Backup Planning and Performance Tuning Guide 8.3.0.1
and 9.0, "Size values for shared data buffers"). Each file is read by bptm
when a job starts; no daemon is restarted (same page). Where the files are
(Veritas article 100000498, "NET_BUFFER_SZ, SIZE_DATA_BUFFERS and
NUMBER_DATA_BUFFERS on UNIX - how they work and how to configure them";
article 100008276 for the same layout on Windows):

- ``<netbackup>/db/config/SIZE_DATA_BUFFERS``: the size of one shared data
  buffer, which is the tape block size bptm writes (article 100008276: "It is
  also the tape block size that bptm uses to write to tape");
- ``<netbackup>/db/config/NUMBER_DATA_BUFFERS``: how many buffers bptm has per
  drive (per multiplexed stream);
- ``<netbackup>/db/config/NUMBER_DATA_BUFFERS_RESTORE``: the same for restores;
- ``<netbackup>/NET_BUFFER_SZ``: the TCP socket buffer bptm asks for on the
  connection from the client. It is in the NetBackup directory itself, not in
  ``db/config`` (both articles; the Tuning Guide's "Setting the network buffer
  size for the NetBackup media server").

``<netbackup>`` is ``/usr/openv/netbackup``. There is no ``SIZE_DATA_BUFFERS_RESTORE``: restores use the buffer
size the image was written with ("Restores use the same buffer size that was used to back up the images being
restored", the Tuning Guide's "About shared memory").

``parse_value`` is the pure reading of one file's bytes; ``read_buffers`` reads
the files of one host. Nothing here raises on a host's files: a file that
cannot be read, or that holds something bptm would not take as the number, is
a setting with an ``error`` saying what is wrong and what to write instead.
"""

from __future__ import annotations

import errno
import os
import re
import stat

NETBACKUP_DIR = '/usr/openv/netbackup'
CONFIG_SUBDIR = os.path.join('db', 'config')
# One integer and a line end: anything this large is not such a file.
MAX_FILE_BYTES = 4096

_GUIDE = 'NetBackup Backup Planning and Performance Tuning Guide (8.3.0.1, 9.0)'

# (record key, NetBackup's file name, where it lives: 'config' (db/config) or 'netbackup', kind)
SETTINGS = (
    ('size_data_buffers', 'SIZE_DATA_BUFFERS', 'config', 'block'),
    ('number_data_buffers', 'NUMBER_DATA_BUFFERS', 'config', 'count'),
    ('number_data_buffers_restore', 'NUMBER_DATA_BUFFERS_RESTORE', 'config', 'count'),
    ('net_buffer_sz', 'NET_BUFFER_SZ', 'netbackup', 'socket'),
)
NAMES = dict((key, name) for key, name, dummy, dummy2 in SETTINGS)

_NUMBER_DEFAULT = ('not verified: the copies of Veritas\'s documentation this collection could consult do not give '
                   'the default of current releases (Veritas document 183702, NetBackup 3.x to 4.x on UNIX: 8 '
                   'buffers for a backup, 4 when multiplexed; article TECH18422, Windows: 16); bptm\'s log says the '
                   'number it uses ("using N data buffers")')
# The value bptm uses when the file does not exist, and where that is documented; value None: not known.
DEFAULTS = {
    'size_data_buffers': (65536, _GUIDE + ', "Default size of shared data buffers": 64K for tape on Linux/UNIX, '
                                          'for a non-multiplexed and a multiplexed backup'),
    'number_data_buffers': (None, _NUMBER_DEFAULT),
    'number_data_buffers_restore': (None, _NUMBER_DEFAULT),
    'net_buffer_sz': (None, _GUIDE + ', "Setting the network buffer size for the NetBackup media server": without '
                                     'the file the size "is derived from the NetBackup data buffer size"; Veritas '
                                     'recommends 0 (the operating system tunes it), which deleting the file is not'),
}
ROUND_TO = 1024
_DIGITS = re.compile(r'^[0-9]+$')


def config_dir(netbackup_dir=None):
    return os.path.join(netbackup_dir or NETBACKUP_DIR, CONFIG_SUBDIR)


def file_path(key, netbackup_dir=None):
    """The file of setting ``key`` (a record key of SETTINGS) under ``netbackup_dir``."""
    for name_key, name, where, dummy in SETTINGS:
        if name_key == key:
            base = config_dir(netbackup_dir) if where == 'config' else (netbackup_dir or NETBACKUP_DIR)
            return os.path.join(base, name)
    raise KeyError(key)


def _kind(key):
    return dict((k, kind) for k, dummy, dummy2, kind in SETTINGS)[key]


def _write_it(name, example):
    return 'write the number alone: echo %s > %s' % (example, name)


def _decode(data):
    """The file's text, or (None, why it is not text bptm reads as a number)."""
    if data.startswith((b'\xff\xfe', b'\xfe\xff')):
        return None, ('it is UTF-16 text (a byte-order mark %s, as a Windows editor saves "Unicode"), not the ASCII '
                      'digits bptm reads' % ' '.join('%02X' % b for b in data[:2]))
    if data.startswith(b'\xef\xbb\xbf'):
        return None, ('it starts with a UTF-8 byte-order mark (EF BB BF, as a Windows editor saves "UTF-8"), which '
                      'is not a digit')
    if b'\0' in data:
        return None, 'it holds NUL bytes: not a text file'
    try:
        return data.decode('ascii'), None
    except UnicodeDecodeError as exc:
        return None, 'it holds a byte that is not ASCII (0x%02X at byte %d), not only digits' % (
            data[exc.start], exc.start)


def parse_value(key, data):
    """One setting from its file's bytes: {text, value, error, note}.

    ``key`` is a record key of SETTINGS. ``text`` is the file's content
    without the space around it (None when it is not text); ``value`` the
    number bptm uses (None when ``error`` says why there is none). Whitespace
    and line ends (LF, CRLF) around the number are what ``echo`` and editors
    leave; anything else is an error.

    SIZE_DATA_BUFFERS not a multiple of 1024 is rounded down, as NetBackup
    does ("If you enter a value that is not a multiple of 1024, NetBackup
    rounds it down to the nearest multiple of 1024": the Tuning Guide, "Size
    values for shared data buffers"): ``value`` is the rounded one and
    ``note`` says so. NET_BUFFER_SZ 0 asks for no size: the operating system
    tunes the socket (Veritas article 100000498).
    """
    name = NAMES[key]
    kind = _kind(key)
    example = {'block': '262144', 'count': '64', 'socket': '0'}[kind]
    out = {'text': None, 'value': None, 'error': None, 'note': None}
    if not isinstance(data, bytes):
        data = str(data).encode('utf-8', 'surrogateescape')
    if len(data) > MAX_FILE_BYTES:
        out['error'] = 'it holds %d bytes, more than one number; %s.' % (len(data), _write_it(name, example))
        return out
    text, why = _decode(data)
    if text is None:
        out['error'] = '%s; %s.' % (why, _write_it(name, example))
        return out
    out['text'] = text.strip()
    words = out['text'].split()
    if not words:
        out['error'] = 'it is empty; %s, or delete it for the default.' % _write_it(name, example)
        return out
    if len(words) > 1:
        out['error'] = ('it holds %d words (%s), not one number; %s.' % (
            len(words), ', '.join(repr(w) for w in words[:4]) + (', ...' if len(words) > 4 else ''),
            _write_it(name, example)))
        return out
    word = words[0]
    if not _DIGITS.match(word):
        what = 'a negative number' if re.match(r'^-[0-9]+$', word) else \
            'not a decimal number' if re.match(r'^(0[xX][0-9a-fA-F]+|[0-9.]+[eE][0-9]+|[0-9]*\.[0-9]+)$', word) else \
            'not a number'
        out['error'] = '%r is %s: NetBackup takes a whole number of %s in decimal digits; %s.' % (
            word, what, 'bytes' if kind in ('block', 'socket') else 'buffers', _write_it(name, example))
        return out
    out.update(_checked_number(kind, int(word), name, example))
    return out


def _checked_number(kind, value, name, example):
    """{value, error, note} of a number read from a file of ``kind`` (block, count, socket)."""
    if kind == 'block':
        used = value - value % ROUND_TO
        if used <= 0:
            return {'error': ('%d bytes is less than 1024: NetBackup rounds the size down to a multiple of 1024 '
                              '(%s), which leaves no buffer; %s.' % (value, _GUIDE, _write_it(name, example)))}
        if used != value:
            return {'value': used, 'note': ('%d is not a multiple of 1024: NetBackup rounds it down and uses %d '
                                            '(%s, "Size values for shared data buffers")' % (value, used, _GUIDE))}
    elif kind == 'count' and value == 0:
        return {'error': '0 buffers: bptm needs at least one; %s.' % _write_it(name, example)}
    elif kind == 'socket' and value == 0:
        return {'value': value, 'note': ('0: bptm asks for no size and the operating system tunes the socket '
                                         'buffer, as Veritas recommends (article 100000498)')}
    return {'value': value}


def _os_reason(exc):
    if exc.errno in (errno.EACCES, errno.EPERM):
        return 'permission denied: read it as root (become: true)'
    return exc.strerror or str(exc)


def _default(key, path):
    value, basis = DEFAULTS[key]
    return {'name': NAMES[key], 'path': path, 'text': None, 'value': value,
            'source': 'default' if value is not None else 'unknown', 'basis': basis, 'error': None, 'note': None}


def read_setting(key, path):
    """One setting of the host (NbSetting as a dict): the file as bptm reads it, or the default when it is absent."""
    try:
        info = os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            return _default(key, path)
        out = _default(key, path)
        out.update(value=None, source='unknown', basis=None, error='%s cannot be read: %s.' % (path, _os_reason(exc)))
        return out
    out = {'name': NAMES[key], 'path': path, 'text': None, 'value': None, 'source': 'configuration', 'basis': None,
           'error': None, 'note': None}
    if not stat.S_ISREG(info.st_mode):
        out['error'] = '%s is not a regular file (%s): NetBackup reads a file holding one number.' % (
            path, 'a directory' if stat.S_ISDIR(info.st_mode) else 'a device, pipe or socket')
        return out
    try:
        with open(path, 'rb') as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        out['error'] = '%s cannot be read: %s.' % (path, _os_reason(exc))
        return out
    parsed = parse_value(key, data)
    out.update(text=parsed['text'], value=parsed['value'], note=parsed['note'])
    if parsed['error']:
        out['error'] = '%s: %s' % (path, parsed['error'])
    return out


def read_buffers(netbackup_dir=None):
    """What bptm reads on this host: the NetBackupBuffers record as a dict.

    ``netbackup_dir``: the NetBackup directory (``/usr/openv/netbackup``).
    When it does not exist, NetBackup is not installed there: ``error`` says
    so and no setting is given (its defaults would describe nothing).
    """
    netbackup_dir = netbackup_dir or NETBACKUP_DIR
    out = {'netbackup_dir': netbackup_dir, 'config_dir': config_dir(netbackup_dir), 'error': None}
    for key, dummy, dummy2, dummy3 in SETTINGS:
        out[key] = None
    if not os.path.isdir(netbackup_dir):
        out['error'] = ('%s %s: NetBackup does not seem to be installed here; give the NetBackup directory of this '
                        'media server (qualify_netbackup_dir).' % (
                            netbackup_dir, 'is not a directory' if os.path.lexists(netbackup_dir) else
                            'does not exist'))
        return out
    for key, dummy, dummy2, dummy3 in SETTINGS:
        out[key] = read_setting(key, file_path(key, netbackup_dir))
    return out


def file_text(value):
    """What a setting's file holds when it is written: the number and a line end, as ``echo N > file`` writes."""
    return '%d\n' % value


def validate(key, value, hba_max_transfer_bytes=None):
    """Why ``value`` cannot be written for setting ``key``, or None.

    ``hba_max_transfer_bytes``: the HBA path's maximum transfer (st_preflight_info); a SIZE_DATA_BUFFERS above it
    is refused, as the drive path cannot carry a block that large in one transfer.
    """
    name = NAMES[key]
    if isinstance(value, bool) or not isinstance(value, int):
        return '%s must be a whole number, got %r.' % (name, value)
    kind = _kind(key)
    if kind == 'block' and (value < ROUND_TO or value % ROUND_TO):
        return ('%s = %d is not a multiple of 1024 bytes of at least 1024: NetBackup would round it down to %d; give '
                'a multiple of 1024 (262144 for 256 KiB).' % (name, value, value - value % ROUND_TO))
    if kind == 'block' and hba_max_transfer_bytes and value > hba_max_transfer_bytes:
        fit = hba_max_transfer_bytes - hba_max_transfer_bytes % ROUND_TO
        return ('%s = %d is larger than the HBA path can carry in one transfer (%d bytes, see the st_tuning preflight '
                'facts): bptm\'s writes of that size would fail; use %d or less, or raise the limit the preflight '
                'names.' % (name, value, hba_max_transfer_bytes, fit))
    if kind == 'count' and value < 1:
        return '%s = %d: bptm needs at least one buffer.' % (name, value)
    if kind == 'socket' and value < 0:
        return '%s = %d: give a size in bytes, or 0 to let the operating system tune it.' % (name, value)
    return None
