# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Decide whether a device and the media in it may be written.

Private to this collection: may change without notice.

Two gates, both before any open for writing:

1. ``check_tape_device``: the path must be a character device of the Linux
   st driver (major 9), a non-rewinding node (``nstN``), bound to a SCSI
   sequential-access device (sysfs ``device/type`` == 1). Disks, partitions,
   regular files, /dev/null, sg nodes, changers and every other character
   device are refused with a sentence saying what to use instead.
2. ``media_verdict``: given what the drive reported (write protect, WORM, the
   result of one read at BOT), the media is writable only if it is blank
   (blank check / EOD at BOT), or the user set ``overwrite``, or its barcode is
   in the allow-list. Anything we cannot prove blank counts as data.
"""

from __future__ import annotations

import os
import stat

SYS_ROOT = '/sys'
ST_MAJOR = 9
SG_MAJOR = 21
MEM_MAJOR = 1
CH_MAJOR = 86
TYPE_SEQUENTIAL = 1
# LTO WORM cartridges carry these barcode suffixes (LTO-3 .. LTO-10 WORM).
WORM_SUFFIXES = ('LT', 'LU', 'LV', 'LW', 'LX', 'LY', 'LZ', 'LR')


class TapeSafetyError(Exception):
    """A refusal: the message says what was found and what to do."""

    def __init__(self, msg, reason):
        super().__init__(msg)
        self.msg = msg
        self.reason = reason


class TapeIdentity:
    """A device cleared by ``check_tape_device``."""

    __slots__ = ('path', 'realpath', 'name', 'index', 'sysfs', 'scsi_device', 'major', 'minor')

    def __init__(self, **kwargs):
        for key in self.__slots__:
            setattr(self, key, kwargs.get(key))

    def as_dict(self):
        return dict((key, getattr(self, key)) for key in self.__slots__)


def _read(path):
    try:
        with open(path, 'rb') as handle:
            return handle.read().decode('utf-8', 'replace').strip()
    except OSError:
        return None


def _char_name(sys_root, major, minor):
    link = os.path.join(sys_root, 'dev', 'char', '%d:%d' % (major, minor))
    if os.path.lexists(link):
        return os.path.basename(os.path.realpath(link))
    return None


def check_tape_device(path, sys_root=SYS_ROOT, stat_func=os.stat):
    """Return a TapeIdentity for ``path`` or raise TapeSafetyError.

    Nothing is opened: only stat() and sysfs reads.
    """
    if not path or not isinstance(path, str):
        raise TapeSafetyError('No tape device given. Set device to the non-rewinding node, e.g. /dev/nst0.',
                              'missing')
    try:
        info = stat_func(path)
    except FileNotFoundError:
        raise TapeSafetyError('%s does not exist. Set device to a non-rewinding tape node such as /dev/nst0 '
                              '(tapeops.qualify.tape_drive_info lists them).' % path, 'missing')
    except OSError as exc:
        raise TapeSafetyError('Cannot stat %s: %s.' % (path, exc.strerror), 'missing')
    mode = info.st_mode
    hint = ' Refusing to write. Set device to a non-rewinding tape node such as /dev/nst0.'
    if stat.S_ISREG(mode):
        raise TapeSafetyError('%s is a regular file, not a tape drive.%s' % (path, hint), 'regular_file')
    if stat.S_ISDIR(mode):
        raise TapeSafetyError('%s is a directory, not a tape drive.%s' % (path, hint), 'directory')
    if stat.S_ISBLK(mode):
        raise TapeSafetyError('%s is a block device (a disk or a partition), not a tape drive: writing to it '
                              'would destroy its data.%s' % (path, hint), 'block_device')
    if not stat.S_ISCHR(mode):
        raise TapeSafetyError('%s is not a character device (FIFO or socket), not a tape drive.%s' % (path, hint),
                              'not_char_device')
    major, minor = os.major(info.st_rdev), os.minor(info.st_rdev)
    kernel_name = _char_name(sys_root, major, minor)
    if major != ST_MAJOR:
        if major == SG_MAJOR:
            what = ('a SCSI generic (sg) node%s: commands sent through it bypass the st driver and can reach '
                    'any SCSI device, disks included' % (' (%s)' % kernel_name if kernel_name else ''))
            reason = 'sg_node'
        elif major == MEM_MAJOR:
            what = 'a memory device (%s), such as /dev/null or /dev/zero' % (kernel_name or 'major 1')
            reason = 'memory_device'
        elif major == CH_MAJOR:
            what = 'a medium changer node (%s)' % (kernel_name or 'sch')
            reason = 'changer_node'
        else:
            what = 'a character device of another driver (major %d%s)' % (
                major, ', %s' % kernel_name if kernel_name else '')
            reason = 'other_char_device'
        raise TapeSafetyError('%s is %s, not an st tape device (major 9).%s' % (path, what, hint), reason)
    link = os.path.join(sys_root, 'dev', 'char', '%d:%d' % (major, minor))
    if not os.path.lexists(link):
        raise TapeSafetyError('%s has st major 9 but no st device is registered for minor %d in %s: the drive is '
                              'gone or the node is stale. Rescan (tape_drive_info) and retry.' % (path, minor, link),
                              'stale_node')
    sysfs = os.path.realpath(link)
    name = os.path.basename(sysfs)
    if not name.startswith('nst'):
        raise TapeSafetyError('%s is the auto-rewinding node %s: the benchmark needs the tape to stay where it is '
                              'between operations. Use /dev/n%s instead.' % (path, name, name), 'rewinding_node')
    device_dir = os.path.join(sysfs, 'device')
    dev_type = _read(os.path.join(device_dir, 'type'))
    if dev_type != str(TYPE_SEQUENTIAL):
        raise TapeSafetyError('%s (%s) is not bound to a SCSI sequential-access device (sysfs type %s, expected 1).'
                              '%s' % (path, name, dev_type, hint), 'not_sequential')
    index = name[3:]
    digits = ''.join(ch for ch in index if ch.isdigit())
    return TapeIdentity(
        path=path, realpath=os.path.realpath(path), name=name, index=int(digits) if digits else None,
        sysfs=sysfs, scsi_device=os.path.basename(os.path.realpath(device_dir)), major=major, minor=minor)


def is_worm_barcode(barcode):
    """LTO WORM cartridges have barcodes ending in LT..LZ (LR: LTO-10 WORM)."""
    return bool(barcode) and len(barcode) >= 2 and barcode.strip().upper()[-2:] in WORM_SUFFIXES


def media_verdict(probe, overwrite=False, allowed_barcodes=None, barcode=None):
    """Decide from ``probe`` whether to write. Returns a reason string or raises.

    ``probe``: ``{'online': bool, 'write_protected': bool, 'worm': bool|None,
    'content': 'blank'|'data'|'unknown', 'detail': str}``.
    """
    allowed = set(b.strip().upper() for b in (allowed_barcodes or []) if b)
    tag = barcode.strip().upper() if barcode else None
    if not probe.get('online'):
        raise TapeSafetyError('No cartridge is loaded (the drive is not online). Load a scratch cartridge and retry.',
                              'no_media')
    if probe.get('write_protected') is None:
        # unknown is not "writable": a status that did not say is no permission to write
        raise TapeSafetyError('The drive did not report whether the cartridge%s is write-protected; nothing will '
                              'be written. Check the drive with mt status (mt-st) and retry.'
                              % (' %s' % barcode if barcode else ''), 'write_protect_unknown')
    if probe.get('write_protected'):
        raise TapeSafetyError('The cartridge%s is write-protected (WR_PROT): nothing will be written. Use a '
                              'writable scratch cartridge, or slide its write-protect tab off if it is meant to be '
                              'scratch.' % (' %s' % barcode if barcode else ''), 'write_protected')
    if probe.get('worm') or is_worm_barcode(tag):
        raise TapeSafetyError('The cartridge%s is WORM (write once): a benchmark would consume it for good. Load '
                              'a rewritable scratch cartridge.' % (' %s' % barcode if barcode else ''), 'worm')
    content = probe.get('content')
    if content == 'blank':
        return 'blank media'
    # the probe's detail already says where it read ("... at BOT"); the bare content does not
    seen = probe.get('detail') or '%s at BOT' % content
    if tag and tag in allowed:
        return 'barcode %s is in allowed_barcodes (%s)' % (barcode, seen)
    if overwrite:
        return 'overwrite=true (%s)' % seen
    what = 'holds data' if content == 'data' else 'could not be proven blank'
    raise TapeSafetyError(
        'The cartridge%s %s (%s). Refusing to overwrite it. If it is scratch, add its barcode to '
        'allowed_barcodes or set overwrite=true.' % (' %s' % barcode if barcode else '', what,
                                                     probe.get('detail') or 'read at BOT'), 'media_has_data')
