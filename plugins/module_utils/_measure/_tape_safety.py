# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The one safety gate every module that writes to a tape goes through.

Private to this collection: may change without notice.

``WriteGate`` is the gate; tape_write_benchmark (``_tape_benchmark``),
tape_mechanics_benchmark (``_mechanics``) and btape_speed open a tape for
writing through it and nothing else. In order:

1. ``identify``: ``check_tape_device`` (stat and sysfs only, nothing is
   opened): the path must be a character device of the Linux st driver
   (major 9), a non-rewinding node (``nstN``), bound to a SCSI
   sequential-access device (sysfs ``device/type`` == 1). Disks, partitions,
   regular files, /dev/null, sg nodes, changers and every other character
   device are refused with a sentence saying what to use instead. Then
   discovery of that one drive (sg node, READ BLOCK LIMITS, the changer's
   barcode of the loaded cartridge).
2. ``probe``: a cleaning cartridge (its label: CLN..., or the media ID CU)
   is refused before the drive is opened; open O_RDONLY; ``fstat`` of the descriptor must show the very
   device step 1 cleared (a node swapped in between is closed unused and
   refused); one read at BOT (``probe_media``); WORM from the volume
   statistics log page (0x17) where the drive has it.
3. ``admit`` (``media_verdict``): the media is writable only if it is online,
   its write protection is known and off, it is not WORM, and it is blank
   (blank check / EOD at BOT), or the user set ``overwrite``, or its barcode
   is in the allow-list. Anything we cannot prove blank counts as data.

   The cartridge's barcode is the changer's: where a changer reports one for
   the loaded cartridge, that is its identity, and a ``barcode`` given by the
   caller that differs is refused (``barcode_mismatch``, naming both). A given
   barcode stands only where no changer reports one (a standalone drive, a
   cartridge without a label). When the allow-list is what would admit a
   cartridge holding data, the changer is asked again right before the
   decision; a changer that is linked to the drive but whose status fails
   leaves the barcode unconfirmed, and an unconfirmed barcode admits nothing
   (``barcode_unconfirmed``).
4. ``open_for_write``: only after ``admit``; the descriptor is proven again.
   A tool that opens the device itself (btape) gets the path from
   ``handover``, which re-checks the node right before.

Every refusal is a ``TapeSafetyError`` with ``msg`` (what was found, what to
do) and ``reason`` (machine-readable); modules fail with both, the
collection's one refusal shape (``TapeopsError.refusal``). The options of this
gate are declared once (``WRITE_SAFETY_ARGSPEC``) and documented once (doc
fragment ``tapeops.qualify._tape_write_safety``).
"""

from __future__ import annotations

import copy
import errno
import os
import stat

from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_discovery
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_writer as W
from ansible_collections.tapeops.qualify.plugins.module_utils._tools._st_sysfs import read_attr as _read

SYS_ROOT = '/sys'
ST_MAJOR = 9
SG_MAJOR = 21
MEM_MAJOR = 1
CH_MAJOR = 86
TYPE_SEQUENTIAL = 1
# LTO WORM cartridges carry these barcode suffixes (LTO-3 .. LTO-10 WORM).
WORM_SUFFIXES = ('LT', 'LU', 'LV', 'LW', 'LX', 'LY', 'LZ', 'LR')


PROBE_READ_BYTES = W.MIB
PROBE_READ_MAX = 16 * W.MIB

# The options of the gate, declared once for every module that writes to a tape
# (documented once: plugins/doc_fragments/_tape_write_safety.py).
WRITE_SAFETY_ARGSPEC = dict(
    overwrite=dict(type='bool', default=False),
    allowed_barcodes=dict(type='list', elements='str', default=[]),
    op_timeout=dict(type='int', default=900),
)


def write_safety_argspec(**options):
    """A module's argument_spec: the gate's options plus the module's own ``options``."""
    spec = copy.deepcopy(WRITE_SAFETY_ARGSPEC)
    spec.update(options)
    return spec


class TapeSafetyError(TapeopsError):
    """A refusal: the message says what was found and what to do."""

    def __init__(self, msg, reason):
        super().__init__(msg, reason)


class TapeIdentity:
    """A device cleared by ``check_tape_device``."""

    __slots__ = ('path', 'realpath', 'name', 'index', 'sysfs', 'scsi_device', 'major', 'minor')

    def __init__(self, **kwargs):
        for key in self.__slots__:
            setattr(self, key, kwargs.get(key))

    def as_dict(self):
        return dict((key, getattr(self, key)) for key in self.__slots__)


def _char_name(sys_root, major, minor):
    link = os.path.join(sys_root, 'dev', 'char', '%d:%d' % (major, minor))
    if os.path.lexists(link):
        return os.path.basename(os.path.realpath(link))
    return None


WRITE_HINT = ' Refusing to write. Set device to a non-rewinding tape node such as /dev/nst0.'


def _stat_device(path, stat_func):
    """stat() of the device path given; a path that is missing or cannot be examined is refused."""
    if not path or not isinstance(path, str):
        raise TapeSafetyError('No tape device given. Set device to the non-rewinding node, e.g. /dev/nst0.',
                              'missing')
    try:
        return stat_func(path)
    except FileNotFoundError:
        raise TapeSafetyError('%s does not exist. Set device to a non-rewinding tape node such as /dev/nst0 '
                              '(tapeops.qualify.tape_drive_info lists them).' % path, 'missing')
    except NotADirectoryError:
        raise TapeSafetyError('%s is not a device path: a part of it before the last "/" is not a directory%s. '
                              'Set device to a non-rewinding tape node such as /dev/nst0 (tapeops.qualify.'
                              'tape_drive_info lists them).' % (
                                  path, ' (a trailing "/")' if path.endswith('/') else ''), 'missing')
    except OSError as exc:
        raise TapeSafetyError('Cannot stat %s: %s. Check the path and its permissions, and set device to a '
                              'non-rewinding tape node such as /dev/nst0.' % (path, exc.strerror), 'missing')


def _refuse_file_type(path, mode, hint):
    """Anything but a character device is refused, each kind with its own sentence."""
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


def _refuse_other_driver(path, major, kernel_name, hint):
    """A character device of a driver other than st: refused, saying which one it is."""
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


def _st_node(path, sys_root, minor, hint, rewinding_ok):
    """(sysfs directory, st node name, its device directory) of an st minor: a stale node, the rewinding node
    (unless ``rewinding_ok``) and a node not bound to a sequential-access device are refused."""
    link = os.path.join(sys_root, 'dev', 'char', '%d:%d' % (ST_MAJOR, minor))
    if not os.path.lexists(link):
        raise TapeSafetyError('%s has st major 9 but no st device is registered for minor %d in %s: the drive is '
                              'gone or the node is stale. Rescan (tape_drive_info) and retry.' % (path, minor, link),
                              'stale_node')
    sysfs = os.path.realpath(link)
    name = os.path.basename(sysfs)
    if not name.startswith('nst') and not rewinding_ok:
        raise TapeSafetyError('%s is the auto-rewinding node %s: the benchmark needs the tape to stay where it is '
                              'between operations. Use /dev/n%s instead.' % (path, name, name), 'rewinding_node')
    device_dir = os.path.join(sysfs, 'device')
    dev_type = _read(os.path.join(device_dir, 'type'))
    if dev_type != str(TYPE_SEQUENTIAL):
        raise TapeSafetyError('%s (%s) is not bound to a SCSI sequential-access device (sysfs type %s, expected 1).'
                              '%s' % (path, name, dev_type, hint), 'not_sequential')
    return sysfs, name, device_dir


def check_tape_device(path, sys_root=SYS_ROOT, stat_func=os.stat, hint=WRITE_HINT, rewinding_ok=False):
    """Return a TapeIdentity for ``path`` or raise TapeSafetyError.

    Nothing is opened: only stat() and sysfs reads. One chain of refusals,
    in the order they must be made, each with its own sentence: the path
    (``_stat_device``), the kind of file (``_refuse_file_type``), the driver
    (``_refuse_other_driver``), the st node in sysfs (``_st_node``).
    ``hint`` ends the refusals of what is no tape node; ``rewinding_ok``
    accepts the auto-rewinding node (st0), for a caller that never opens the
    drive (tape_drive_observe reads its sysfs counters, which every node of
    the drive shares).
    """
    info = _stat_device(path, stat_func)
    _refuse_file_type(path, info.st_mode, hint)
    major, minor = os.major(info.st_rdev), os.minor(info.st_rdev)
    if major != ST_MAJOR:
        _refuse_other_driver(path, major, _char_name(sys_root, major, minor), hint)
    sysfs, name, device_dir = _st_node(path, sys_root, minor, hint, rewinding_ok)
    index = name[3:] if name.startswith('nst') else name[2:]
    digits = ''.join(ch for ch in index if ch.isdigit())
    return TapeIdentity(
        path=path, realpath=os.path.realpath(path), name=name, index=int(digits) if digits else None,
        sysfs=sysfs, scsi_device=os.path.basename(os.path.realpath(device_dir)), major=major, minor=minor)


def is_worm_barcode(barcode):
    """LTO WORM cartridges have barcodes ending in LT..LZ (LR: LTO-10 WORM)."""
    return bool(barcode) and len(barcode) >= 2 and barcode.strip().upper()[-2:] in WORM_SUFFIXES


def is_cleaning_barcode(barcode):
    """LTO cleaning cartridges: labels beginning CLN (CLNxxxL1, CLNU01CU), or with the cleaning media ID CU."""
    tag = barcode_tag(barcode)
    return bool(tag) and (tag.startswith('CLN') or tag.endswith('CU'))


def _refuse_cleaning(barcode):
    if is_cleaning_barcode(barcode):
        raise TapeSafetyError('The cartridge %s is a cleaning cartridge (its label says so): it takes no data, and a '
                              'drive holding one may not answer until it has cleaned and ejected it. Nothing was '
                              'opened. Load a scratch data cartridge.' % barcode, 'cleaning')


def barcode_tag(barcode):
    """A barcode as compared: stripped, upper case; None for no barcode."""
    tag = str(barcode).strip().upper() if barcode is not None else ''
    return tag or None


def rests_on_barcode(probe, overwrite=False, allowed_barcodes=None, barcode=None):
    """True when only the allow-list would admit this cartridge (it is not blank and ``overwrite`` is off)."""
    allowed = set(barcode_tag(b) for b in (allowed_barcodes or []) if barcode_tag(b))
    return (probe or {}).get('content') != 'blank' and not overwrite and barcode_tag(barcode) in allowed


def media_verdict(probe, overwrite=False, allowed_barcodes=None, barcode=None, barcode_unconfirmed=None):
    """Decide from ``probe`` whether to write. Returns a reason string or raises.

    ``probe``: ``{'online': bool, 'write_protected': bool, 'worm': bool|None,
    'content': 'blank'|'data'|'unknown', 'detail': str}``. ``barcode_unconfirmed``:
    why the changer could not confirm ``barcode`` (None: confirmed, or no
    changer to ask); such a barcode does not admit a cartridge with data.
    """
    allowed = set(barcode_tag(b) for b in (allowed_barcodes or []) if barcode_tag(b))
    tag = barcode_tag(barcode)
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
    _refuse_cleaning(barcode)
    if probe.get('worm') or is_worm_barcode(tag):
        raise TapeSafetyError('The cartridge%s is WORM (write once): a benchmark would consume it for good. Load '
                              'a rewritable scratch cartridge.' % (' %s' % barcode if barcode else ''), 'worm')
    content = probe.get('content')
    if content == 'blank':
        return 'blank media'
    # the probe's detail already says where it read ("... at BOT"); the bare content does not
    seen = probe.get('detail') or '%s at BOT' % content
    if tag and tag in allowed and not barcode_unconfirmed:
        return 'barcode %s is in allowed_barcodes (%s)' % (barcode, seen)
    if overwrite:
        return 'overwrite=true (%s)' % seen
    what = 'holds data' if content == 'data' else 'could not be proven blank'
    if tag and tag in allowed:
        raise TapeSafetyError(
            'The cartridge in the drive %s (%s), and the changer could not confirm that it is %s (%s). Refusing to '
            'overwrite it: a barcode in allowed_barcodes admits only the cartridge the changer reports. Check the '
            'changer (mtx status) and retry, or set overwrite=true if the loaded cartridge is scratch.'
            % (what, probe.get('detail') or 'read at BOT', barcode, barcode_unconfirmed), 'barcode_unconfirmed')
    raise TapeSafetyError(
        'The cartridge%s %s (%s). Refusing to overwrite it. If it is scratch, add its barcode to '
        'allowed_barcodes or set overwrite=true.' % (' %s' % barcode if barcode else '', what,
                                                     probe.get('detail') or 'read at BOT'), 'media_has_data')


def probe_media(fd, timeout, read_bytes=PROBE_READ_BYTES, mtget=W.mtget, mtop=W.mtop, read=os.read):
    """One read at BOT (variable-block mode), classified. Leaves the tape rewound.

    ``content`` is 'blank' only for blank check / EOD at BOT; a block, a file
    mark, or an error that is not EOD means data or unknown. ``read_bytes``
    must not exceed READ BLOCK LIMITS' maximum (st answers EINVAL); a block
    larger than it gives ENOMEM, which also means data.
    """
    status = mtget(fd, timeout=timeout)
    probe = {
        'online': 'ONLINE' in status['flags'],
        'write_protected': 'WR_PROT' in status['flags'],
        'worm': None,
        'content': 'unknown',
        'detail': None,
        'status_before': status['flags'],
    }
    if not probe['online']:
        return probe
    mtop(fd, W.MTSETBLK, 0, timeout=timeout)
    mtop(fd, W.MTREW, 1, timeout=timeout)
    try:
        data = W.call_with_timeout(lambda: read(fd, read_bytes), timeout, 'Reading at BOT')
        err = None
    except OSError as exc:
        data, err = None, exc
    after = mtget(fd, timeout=timeout)
    if data:
        probe['content'], probe['detail'] = 'data', 'read a %d-byte block at BOT' % len(data)
    elif err is not None and err.errno == errno.ENOMEM:
        probe['content'], probe['detail'] = 'data', 'a block larger than %d bytes at BOT' % read_bytes
    elif 'EOD' in after['flags']:
        probe['content'], probe['detail'] = 'blank', 'blank check (EOD) at BOT'
    elif err is None and after['file_number'] >= 1:
        probe['content'], probe['detail'] = 'data', 'a file mark at BOT'
    elif err is None:
        probe['content'], probe['detail'] = 'blank', 'no data at BOT (read returned 0, still at file 0)'
    else:
        probe['detail'] = 'read at BOT failed: %s' % err
    mtop(fd, W.MTREW, 1, timeout=timeout)
    return probe


def open_checked(path, flags, timeout, identity, opener=os.open, fstat=os.fstat):
    """Open ``path`` and prove by ``fstat`` that the descriptor is the device ``identity`` cleared.

    The path was checked with stat(); if it was replaced between that check
    and this open (a symlink swapped, a node re-created), the descriptor is
    closed unused and the run refused (``device_changed``).
    """
    try:
        fd = W.call_with_timeout(lambda: opener(path, flags), timeout, 'Opening %s' % path)
    except OSError as exc:
        if exc.errno == errno.EBUSY:
            raise TapeSafetyError('%s is busy: another process has the drive open (st allows one open at a time). '
                                  'Wait for the backup or tool using it to finish, then retry.' % path, 'busy')
        if exc.errno in (errno.EROFS, errno.EACCES):
            raise TapeSafetyError('%s refused opening for write (%s): the cartridge is write-protected. Use a '
                                  'writable scratch cartridge.' % (path, exc.strerror), 'write_protected')
        if exc.errno in (errno.ENOMEDIUM, errno.EIO):
            raise TapeSafetyError('%s: %s. Load a scratch cartridge and retry.' % (path, exc.strerror), 'no_media')
        raise
    try:
        info = fstat(fd)
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISCHR(info.st_mode) or info.st_rdev != os.makedev(identity.major, identity.minor):
        os.close(fd)
        raise TapeSafetyError('%s changed between the safety check and the open (now %d:%d, checked %d:%d). '
                              'Nothing was written; check what replaces the node and retry.' % (
                                  path, os.major(info.st_rdev), os.minor(info.st_rdev), identity.major,
                                  identity.minor), 'device_changed')
    return fd


_UNSET = object()


class WriteGate:
    """The one way to a tape for writing (see the module docstring for the order).

    ``runner(cmd)`` runs a tool for discovery and the WORM log page (a
    ``_cli.run`` with a timeout); ``opener``/``fstat``/``stat_func`` are
    ``os.open``/``os.fstat``/``os.stat`` outside tests.
    """

    def __init__(self, device, overwrite=False, allowed_barcodes=(), barcode=None, op_timeout=900, runner=None,
                 sys_root=SYS_ROOT, stat_func=os.stat, opener=os.open, fstat=os.fstat):
        self.device = device
        self.overwrite = bool(overwrite)
        self.allowed_barcodes = list(allowed_barcodes or [])
        self.given_barcode = barcode   # what the caller said is loaded; the changer's barcode wins
        self.barcode = barcode         # the loaded cartridge's identity (the changer's where it reports one)
        self.barcode_unconfirmed = None  # why a linked changer could not confirm the barcode, or None
        self.op_timeout = op_timeout
        self.runner = runner
        self.sys_root = sys_root
        self.stat_func = stat_func
        self.opener = opener
        self.fstat = fstat
        self.probe_io = {}  # mtget / mtop / read for probe_media: tests put a fake st drive here
        self.identity = None
        self.drive = {}
        self.changers = []   # discovery's changers of the host (what a given barcode is checked against)
        self.probe_result = None
        self.decision = None

    # ---------------------------------------------------------- 1. the device
    def check_device(self):
        """``check_tape_device`` on the path (stat and sysfs only); the TapeIdentity."""
        self.identity = check_tape_device(self.device, sys_root=self.sys_root, stat_func=self.stat_func)
        return self.identity

    def identify(self, discover=True):
        """The device check, then discovery of that drive; the drive record (empty without ``discover``)."""
        if self.identity is None:
            self.check_device()
        if discover:
            self._discover()
        else:
            self.reconcile_barcode(self.drive, ())
        return self.drive

    def _discover(self):
        found = _tape_discovery.discover(runner=self.runner, sys_root=self.sys_root, log_pages=False,
                                         only=['/dev/%s' % self.identity.name])
        self.drive = found['drives'][0] if found.get('drives') else {}
        self.changers = list(found.get('changers') or ())
        self.reconcile_barcode(self.drive, self.changers)

    def _ask_changer_again(self):
        """The drive's changer asked once more what is loaded (one ``mtx status``), then the barcode reconciled."""
        link = self.drive.get('changer') or {}
        changers = self.changers
        if link.get('sg') and link.get('element') is not None:
            barcode, error = _tape_discovery.changer_drive_barcode(self.runner, link['sg'], link['element'])
            self.drive = dict(self.drive, barcode=barcode)
            mine = next((c for c in changers if c.get('sg') == link['sg']), {'sg': link['sg']})
            changers = [c for c in changers if c is not mine] + [dict(mine, error=error)]
            self.changers = changers
        self.reconcile_barcode(self.drive, changers)

    def loaded(self, barcode):
        """Name the cartridge a caller has just loaded by its barcode (mechanics' changer move).

        It is then checked like a given barcode: ``admit`` asks the changer again where the barcode is
        what would admit the cartridge.
        """
        self.given_barcode = self.barcode = barcode
        self.barcode_unconfirmed = None

    def reconcile_barcode(self, drive, changers):
        """The loaded cartridge's barcode: the changer's where it reports one; a given one that differs is refused."""
        reported = drive.get('barcode')
        given = self.given_barcode
        if barcode_tag(reported):
            if barcode_tag(given) and barcode_tag(given) != barcode_tag(reported):
                link = drive.get('changer') or {}
                raise TapeSafetyError(
                    'The changer %s reports cartridge %s in the drive %s, not %s as given in barcode. Nothing was '
                    'written. The changer\'s barcode is the cartridge\'s identity: leave barcode unset where a '
                    'changer reports it, or load %s and retry.' % (
                        link.get('sg') or '', reported, self.device, given, given), 'barcode_mismatch')
            self.barcode, self.barcode_unconfirmed = reported, None
            return self.barcode
        self.barcode = given
        self.barcode_unconfirmed = None
        if barcode_tag(given):
            self.barcode_unconfirmed = _unconfirmed(drive.get('changer') or {}, changers)
        return self.barcode

    def open(self, flags):
        """A descriptor of the cleared device (proven by fstat). Writing needs ``open_for_write``."""
        if self.identity is None:
            raise TapeSafetyError('The device %s was not checked before opening it; nothing was opened.'
                                  % self.device, 'not_checked')
        if flags & (os.O_WRONLY | os.O_RDWR):
            raise TapeSafetyError('Opening %s for writing goes through open_for_write, after the media check; '
                                  'nothing was opened.' % self.device, 'media_not_checked')
        return open_checked(self.device, flags, self.op_timeout, self.identity, opener=self.opener,
                            fstat=self.fstat)

    # ---------------------------------------------------------- 2. the media
    def read_bytes(self):
        """The probe's read size: 1 MiB, or READ BLOCK LIMITS' maximum up to 16 MiB when known."""
        limit = (self.drive.get('block_limits') or {}).get('max') or PROBE_READ_BYTES
        return min(limit, PROBE_READ_MAX)

    def probe(self, worm=_UNSET):
        """Open O_RDONLY, one read at BOT, close; the probe record (also kept as ``probe_result``).

        ``worm``: what the caller read from log page 0x17 (None: unknown);
        left out, the gate reads that page itself where the drive has an sg node.
        """
        # a cleaning cartridge is refused by its label before the drive is opened: a drive cleaning with it may
        # block an open until the cleaning ends (mhvtl's did, up to the write test's time limit)
        _refuse_cleaning(self.barcode)
        fd = self.open(os.O_RDONLY)
        try:
            probe = probe_media(fd, self.op_timeout, read_bytes=self.read_bytes(), **self.probe_io)
        finally:
            os.close(fd)
        probe['worm'] = self.worm_from_log_page() if worm is _UNSET else worm
        self.probe_result = probe
        return probe

    def worm_from_log_page(self):
        """WORM flag of the volume statistics page (0x17); None when the drive or its sg node cannot say."""
        if not self.drive.get('sg') or self.runner is None:
            return None
        try:
            pages = _tape_discovery.read_log_pages(self.drive['sg'], self.runner, pages=(0x17,))
        except Exception:  # pylint: disable=broad-except
            return None  # unknown WORM is not a permission: the barcode and the read at BOT still decide
        return worm_from_log_pages(pages)

    def admit(self, probe=None):
        """``media_verdict`` on the probe; the sentence saying why writing is allowed, or TapeSafetyError."""
        probe = probe if probe is not None else self.probe_result
        if probe is None:
            raise TapeSafetyError('The cartridge in %s was not probed; nothing will be written.' % self.device,
                                  'media_not_checked')
        if self.runner is not None and self.identity is not None and rests_on_barcode(
                probe, self.overwrite, self.allowed_barcodes, self.barcode):
            # the allow-list is all that admits this cartridge: ask the changer again what is loaded now
            self._ask_changer_again()
        self.decision = media_verdict(probe, overwrite=self.overwrite, allowed_barcodes=self.allowed_barcodes,
                                      barcode=self.barcode, barcode_unconfirmed=self.barcode_unconfirmed)
        return self.decision

    # ---------------------------------------------------------- 3. writing
    def _require_admitted(self):
        if self.identity is None or self.decision is None:
            raise TapeSafetyError('The cartridge in %s was not admitted by the media check; nothing will be '
                                  'written.' % self.device, 'media_not_checked')

    def open_for_write(self):
        """O_WRONLY descriptor of the cleared device, only after ``admit``."""
        self._require_admitted()
        return open_checked(self.device, os.O_WRONLY, self.op_timeout, self.identity, opener=self.opener,
                            fstat=self.fstat)

    def handover(self):
        """The device path for a tool that opens it itself (btape), only after ``admit``.

        The node is checked again right before (stat and sysfs): it must be the
        same st device the probe was made on. The canonical path is returned,
        so a symlink swapped after this check does not redirect the tool.
        """
        self._require_admitted()
        now = check_tape_device(self.device, sys_root=self.sys_root, stat_func=self.stat_func)
        if (now.major, now.minor) != (self.identity.major, self.identity.minor):
            raise TapeSafetyError('%s changed between the media check and the write (now %d:%d, checked %d:%d). '
                                  'Nothing was written; check what replaces the node and retry.' % (
                                      self.device, now.major, now.minor, self.identity.major, self.identity.minor),
                                  'device_changed')
        return now.realpath


def _unconfirmed(link, changers):
    """Why no changer could confirm a given barcode for this drive, or None where the given one stands.

    A changer holding this drive whose status failed could not say what is loaded. A changer not linked to the
    drive that failed, or listed no elements to match drives with, may hold it all the same: the link comes
    from its element status, which a changer that is not ready does not give either, and from each drive
    element's device identifier. One that answered, and holds this drive empty-handed or, by every drive's
    identifier, not at all, leaves the given barcode standing (an unlabelled cartridge, a standalone drive).
    """
    if link.get('sg'):
        error = next((c.get('error') for c in changers if c.get('sg') == link['sg'] and c.get('error')), None)
        return 'the changer %s did not answer: %s' % (link['sg'], error) if error else None
    for changer in changers:
        elements = changer.get('elements') or []
        why = (changer.get('error') or ('no element status' if not elements else None) or
               ('a drive element without a device identifier' if any(not e.get('identifier') for e in elements)
                else None))
        if why:
            return ('the changer %s on this host could not say which drives it holds (%s), so this drive may be '
                    'one of them' % (changer.get('sg') or changer.get('hctl') or '?', why))
    return None


def worm_from_log_pages(pages):
    """WORM flag from ``read_log_pages`` output (page 0x17), or None."""
    if not pages:
        return None
    volume = (pages.get('pages') or {}).get('0x17') or {}
    worm = volume.get('worm')
    return bool(worm) if isinstance(worm, int) else None
