# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's emulated medium changer: a SCSI Media Changer (SMC-3) LUN.

``Changer(library, identity, mechanics).execute(cdb, data_out)`` answers the
commands ``mtx``, ``sg_inq``/``sg_vpd``, ``lsscsi`` and the kernel's ``ch``
driver (at attach) send: INQUIRY (+ VPD 0x00/0x80/0x83), TEST UNIT READY,
REQUEST SENSE, MODE SENSE(6/10) / MODE SELECT(6/10) with the element address
assignment (0x1D), transport geometry (0x1E) and device capabilities (0x1F)
pages, READ ELEMENT STATUS, INITIALIZE ELEMENT STATUS (+ WITH RANGE), MOVE
MEDIUM, POSITION TO ELEMENT and PREVENT ALLOW MEDIUM REMOVAL. Any other
opcode gets ILLEGAL REQUEST, INVALID COMMAND OPERATION CODE (20h/00h).

Elements (addresses from the config; the defaults are tgt's layout in
lab/guest-init, so ``mtx status`` prints what it printed with tgt):

    medium transport (robot)   1
    import/export              10, 11, ...
    data transfer (drives)     500, 501, ...   library.drives[i]
    storage (slots)            1000, 1001, ... library.slots[i]

The cartridges live in the ``Library`` (library.py): the changer reads and
moves them there (``library.slots`` / ``library.import_export`` lists,
``drive.loaded``, ``drive.load_cartridge(cart)``, ``drive.unload_cartridge()``)
and calls ``library.save()`` after each move, so a restarted guest finds them
where they were left.

Times. A move takes the library's robot time (``move_s``) plus, when a drive
is the source and still holds the tape threaded (``drive.threaded``), the
drive's unload (``unload_s``; skipped when the host has already unloaded it,
e.g. ``mt offline``: the library then only pulls the ejected cartridge). The
library unloads the drive itself, as IBM and Quantum libraries do (some
autoloaders refuse instead, Exabyte Magnum 1x7: ASC 3Bh/90h). When a drive is
the destination, MOVE MEDIUM completes when the drive has loaded it
(``load_s``, load-to-ready): ``ssc.Drive.load_cartridge`` is called at the
end of that time and makes the drive ready at once (with its UNIT
ATTENTION, NOT READY TO READY CHANGE), so the host finds the tape ready when
``mtx load`` returns. The drive model (plugins/module_utils/_judge/_drive_model.py)
supplies load_s/unload_s per generation (IBM nominal times,
../shared/reference/lto-facts.md 4a); without them in ``mechanics`` the
changer uses the drive's own ``profile.load_s`` / ``profile.unload_s``
(lab seconds already). The robot and inventory times are
the library's (defaults below, each with its source). ``mechanics_scale``
multiplies the changer's own times (the lab runs them at a fraction of real
time). A command that takes time returns a ``scsi.Pending`` whose
``step(now)`` applies each phase when its time has come (the source element
empties when the robot has picked, the drive gets the cartridge when its
load is done) and returns the ``Result`` at the end; ``clock`` is the
device's clock the handler polls with (tests pass a fake one).

Sources for the byte layouts: SMC-3 as implemented by real libraries and
documented in their interface manuals: Oracle StorageTek SL150 Interface
Reference Manual (READ ELEMENT STATUS data, header semantics and allocation
truncation, "4-102"/"4-103"), Sun StorageTek SL500 Interface Reference Manual
(storage element descriptor, table 6-74), Exabyte Magnum 1x7 LTO autoloader
manual (MOVE MEDIUM sense codes, table 11-5, and its timing specifications);
and what the tools that read them do: mtx 1.3.12 mtxl.c (ReadElementStatus,
ParseElementStatus, MoveMedium), Linux drivers/scsi/ch.c (ch_readconfig,
ch_read_element_status).
"""

from __future__ import annotations

import json
import math
import os
import time

from . import scsi
from .scsi import (
    ILLEGAL_REQUEST, MEDIUM_ERROR, NO_SENSE, TYPE_CHANGER,
    ASC_INVALID_ELEMENT, ASC_INVALID_FIELD_PARAM, ASC_MEDIUM_DEST_FULL, ASC_MEDIUM_REMOVAL_PREVENTED,
    ASC_MEDIUM_SOURCE_EMPTY, ASC_SAVING_NOT_SUPPORTED,
    Pending, Result, be, check_condition, field_pointer, good, pad, u16, u24,
)

# Element type codes (SMC-3 table "element type code").
MT, ST, IE, DT = 1, 2, 3, 4
TYPE_NAMES = {MT: 'medium transport', ST: 'storage', IE: 'import/export', DT: 'data transfer'}

# Default element addresses: tgt's changer as lab/guest-init configures it.
DEFAULT_ADDRESSES = {'transport': 1, 'import_export': 10, 'drives': 500, 'slots': 1000}

# Robot time for one move (pick, travel, place), seconds. Source: Exabyte
# VXA-2 AutoPak 1x7 autoloader manual, "Move complete time": "The average move
# complete time for the autoloader is less than 10 seconds" (upper bound used).
DEFAULT_MOVE_S = 10.0
# Inventory (INITIALIZE ELEMENT STATUS) time per storage or import/export
# element, seconds. Source: Exabyte Magnum 1x7 LTO autoloader manual,
# "Cartridge inventory times": 5 s for an individual cell with a bar code
# label (35 s for 7 labelled cartridges). Applied to every storage and
# import/export element in the range, full or empty (estimate: the manual
# does not time an empty cell).
DEFAULT_SCAN_S = 5.0
# POSITION TO ELEMENT moves the robot without picking or placing. Estimate:
# a move is pick + travel + place and no manual times the travel alone; the
# lab takes half of move_s.
POSITION_FRACTION = 0.5
# Drive load-to-ready and unload when neither the mapping nor the drive's
# profile gives one: IBM LTO-5 full-height nominal times, 12 s and 17 s
# (lto-facts.md 4a, IBM TS4500 performance table), the lab's default drive.
DEFAULT_LOAD_S = 12.0
DEFAULT_UNLOAD_S = 17.0

ASC_LOAD_EJECT_FAILED = (0x53, 0x00)   # MEDIA LOAD OR EJECT FAILED (SPC-4 table D.1)
VOLUME_TAG_LEN = 36                    # 32 identifier + 2 reserved + 2 sequence (SMC-3)
DVCID_LEN_MIN = 34                     # vendor 8 + product 16 + serial 10, as tgt/mhvtl/IBM libraries

# Medium type codes of the element descriptor (SMC-3: 1 data, 2 cleaning, 4 WORM).
MEDIUM_DATA, MEDIUM_CLEANING, MEDIUM_WORM = 1, 2, 4

_SUPPORTED_VPD = (0x00, 0x80, 0x83)
_MODE_PAGES = (0x1D, 0x1E, 0x1F)


class ChangerConfigError(ValueError):
    """A changer configuration that cannot work; the message says what to change."""


class Element:
    """One addressable element: its type, address and index in its kind's list."""

    __slots__ = ('etype', 'address', 'index')

    def __init__(self, etype, address, index):
        self.etype = etype
        self.address = address
        self.index = index

    def __repr__(self):
        return 'Element(%s %d)' % (TYPE_NAMES[self.etype], self.address)


def _check_text(name, value, limit):
    if not isinstance(value, str) or not value:
        raise ChangerConfigError('changer %s must be a non-empty string, got %r' % (name, value))
    if len(value) > limit or any(not (0x20 <= ord(c) < 0x7F) for c in value):
        raise ChangerConfigError('changer %s %r must be printable ASCII of at most %d characters' % (name, value, limit))
    return value


def check_barcode(barcode):
    """A volume identifier the changer can report: printable ASCII, 1-32 characters, no spaces."""
    if not isinstance(barcode, str) or not barcode or len(barcode) > 32 or \
            any(not (0x21 <= ord(c) < 0x7F) for c in barcode):
        raise ChangerConfigError('barcode %r must be 1-32 printable ASCII characters without spaces '
                                 '(SMC-3 volume identifier)' % (barcode,))
    return barcode


def _seconds(value):
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value) and value >= 0


def _number(mapping, key, default):
    value = mapping.get(key, default)
    if not _seconds(value):
        raise ChangerConfigError('mechanics %s must be a number of seconds >= 0, got %r' % (key, value))
    return float(value)


class Changer:
    """An SMC-3 medium changer over a ``Library``; see the module docstring.

    ``identity``: vendor (<= 8), product (<= 16), revision or rev (<= 4), serial.
    ``mechanics``: move_s, load_s, unload_s, scan_s (seconds, real time; the
    defaults above apply to missing keys; load_s and unload_s first fall back
    to each drive's ``profile``). ``mechanics_scale`` multiplies them (not the
    drive profile's times, which the lab has scaled already).
    ``addresses``: first address of each element kind (DEFAULT_ADDRESSES).
    ``drive_luns``: per drive, the LUN of the drive on the changer's own target
    (reported in its data transfer element descriptor so the ``ch`` driver can
    link it) or None. ``state_path``: JSON file remembering each cartridge's
    source storage element across restarts (None: not remembered).
    """

    def __init__(self, library, identity, mechanics=None, mechanics_scale=1.0, addresses=None,
                 clock=time.monotonic, drive_luns=None, state_path=None):
        self.library = library
        if not isinstance(identity, dict):
            raise ChangerConfigError('changer identity must be a mapping of vendor, product, revision, serial, '
                                     'got %r' % (identity,))
        if mechanics is not None and not isinstance(mechanics, dict):
            raise ChangerConfigError('changer mechanics must be a mapping of seconds, got %r' % (mechanics,))
        self.vendor = _check_text('vendor', identity.get('vendor'), 8)
        self.product = _check_text('product', identity.get('product'), 16)
        self.revision = _check_text('revision', identity.get('revision', identity.get('rev', '0001')), 4)
        self.serial = _check_text('serial', identity.get('serial'), 64)
        mechanics = dict(mechanics or {})
        self.move_s = _number(mechanics, 'move_s', DEFAULT_MOVE_S)
        self.load_s = _number(mechanics, 'load_s', DEFAULT_LOAD_S) if 'load_s' in mechanics else None
        self.unload_s = _number(mechanics, 'unload_s', DEFAULT_UNLOAD_S) if 'unload_s' in mechanics else None
        self.scan_s = _number(mechanics, 'scan_s', DEFAULT_SCAN_S)
        if not _seconds(mechanics_scale):
            raise ChangerConfigError('mechanics_scale must be a number >= 0 (1 = real time), got %r' % (mechanics_scale,))
        self.mechanics_scale = float(mechanics_scale)
        self.clock = clock
        self.prevent_removal = False
        addr = dict(DEFAULT_ADDRESSES)
        addr.update(addresses or {})
        self.addresses = addr
        luns = list(drive_luns or [])
        for lun in luns:
            if lun is not None and (isinstance(lun, bool) or not isinstance(lun, int) or not 0 <= lun <= 7):
                raise ChangerConfigError('drive_luns entries must be LUNs 0-7 (the 3-bit field of the data '
                                         'transfer element descriptor) or null, got %r' % (lun,))
        self.drive_luns = (luns + [None] * len(library.drives))[:len(library.drives)]
        self._build_elements()
        self.state_path = state_path
        self._source = {}     # barcode -> address of the last storage/import-export element it left
        self._load_state()

    # ------------------------------------------------------------------ layout
    def _build_elements(self):
        lib = self.library
        kinds = (
            (MT, 'transport', 1),
            (IE, 'import_export', len(lib.import_export)),
            (DT, 'drives', len(lib.drives)),
            (ST, 'slots', len(lib.slots)),
        )
        elements = []
        spans = []
        for etype, key, count in kinds:
            start = self.addresses.get(key)
            if isinstance(start, bool) or not isinstance(start, int) or start < 0:
                raise ChangerConfigError('element address %s must be an integer >= 0, got %r' % (key, start))
            if count and start + count - 1 > 0xFFFF:
                raise ChangerConfigError('%s elements %d..%d do not fit 16-bit element addresses'
                                         % (key, start, start + count - 1))
            for other_key, lo, hi in spans:
                if count and lo <= start + count - 1 and start <= hi:
                    raise ChangerConfigError('element addresses of %s (%d..%d) overlap those of %s (%d..%d)'
                                             % (key, start, start + count - 1, other_key, lo, hi))
            if count:
                spans.append((key, start, start + count - 1))
            elements += [Element(etype, start + i, i) for i in range(count)]
        if not lib.drives:
            raise ChangerConfigError('the library has no drive: a changer needs at least one data transfer element')
        if not lib.slots:
            raise ChangerConfigError('the library has no slot: a changer needs at least one storage element')
        self.elements = sorted(elements, key=lambda e: e.address)
        self._by_address = {e.address: e for e in self.elements}
        self.first = {etype: min((e.address for e in self.elements if e.etype == etype), default=0)
                      for etype in (MT, ST, IE, DT)}
        self.count = {etype: sum(1 for e in self.elements if e.etype == etype) for etype in (MT, ST, IE, DT)}
        self.transport = self.first[MT]

    def element(self, address):
        return self._by_address.get(address)

    def cartridge(self, el):
        """The cartridge in element ``el`` (None when empty; the robot never holds one at rest)."""
        if el.etype == ST:
            return self.library.slots[el.index]
        if el.etype == IE:
            return self.library.import_export[el.index]
        if el.etype == DT:
            return self.library.drives[el.index].loaded
        return None

    # ------------------------------------------------------------------ state
    def _load_state(self):
        if not self.state_path or not os.path.exists(self.state_path):
            return
        try:
            with open(self.state_path) as f:
                data = json.load(f)
            sources = data.get('sources', {})
            self._source = {str(k): int(v) for k, v in sources.items() if self.element(int(v)) is not None}
        except (OSError, ValueError, AttributeError, TypeError):
            self._source = {}   # a damaged state file only loses SVALID: a real library after power-on

    def _save_state(self):
        if self.state_path:
            tmp = self.state_path + '.tmp'
            with open(tmp, 'w') as f:
                json.dump({'sources': self._source}, f, indent=1, sort_keys=True)
            os.replace(tmp, self.state_path)
        save = getattr(self.library, 'save', None)
        if save is not None:
            save()

    def seconds(self, real_s):
        """Lab seconds for ``real_s`` seconds of mechanics."""
        return real_s * self.mechanics_scale

    def _drive_seconds(self, drive, mine, key, default):
        if mine is not None:
            return self.seconds(mine)
        own = getattr(getattr(drive, 'profile', None), key, None)
        if _seconds(own):
            return float(own)                      # the drive's profile: lab seconds already
        return self.seconds(default)

    def load_seconds(self, drive):
        """Lab seconds from a cartridge's arrival in ``drive`` to the drive being ready."""
        return self._drive_seconds(drive, self.load_s, 'load_s', DEFAULT_LOAD_S)

    def unload_seconds(self, drive):
        """Lab seconds the library waits for ``drive`` to unload a threaded tape."""
        return self._drive_seconds(drive, self.unload_s, 'unload_s', DEFAULT_UNLOAD_S)

    @staticmethod
    def drive_identity(drive):
        """(vendor, product, serial) of a drive: its ``identity`` dict (ssc.Drive) or attributes."""
        ident = getattr(drive, 'identity', None)
        if not isinstance(ident, dict):
            ident = {k: getattr(drive, k, '') for k in ('vendor', 'product', 'serial')}
        return tuple(str(ident.get(k) or '') for k in ('vendor', 'product', 'serial'))

    # ------------------------------------------------------------------ dispatch
    def execute(self, cdb, data_out=b''):
        cdb = bytes(cdb)
        if not cdb:
            return scsi.invalid_opcode()
        handler = self._HANDLERS.get(cdb[0])
        if handler is None:
            return scsi.invalid_opcode()
        need = scsi.cdb_length(cdb[0])
        if len(cdb) < need:
            return scsi.invalid_field_in_cdb(len(cdb))
        return handler(self, cdb, bytes(data_out or b''))

    # ------------------------------------------------------------------ SPC
    def inquiry(self, cdb, _data):
        alloc = be(cdb, 3, 2)
        evpd = cdb[1] & 0x01
        page = cdb[2]
        if cdb[1] & 0x02:                         # CMDDT (obsolete)
            return scsi.invalid_field_in_cdb(1, 1)
        if not evpd:
            if page:
                return scsi.invalid_field_in_cdb(2)
            return good(scsi.standard_inquiry(TYPE_CHANGER, self.vendor, self.product, self.revision), alloc)
        if page == 0x00:
            return good(scsi.vpd_supported(TYPE_CHANGER, _SUPPORTED_VPD), alloc)
        if page == 0x80:
            return good(scsi.vpd_serial(TYPE_CHANGER, self.serial), alloc)
        if page == 0x83:
            return good(self.device_identification(), alloc)
        return scsi.invalid_field_in_cdb(2)

    def device_identification(self):
        """VPD 0x83: one T10 vendor ID designator, vendor + product + serial.

        Real libraries do this (IBM 03584L32 shows up as
        /dev/tape/by-id/scsi-1IBM_03584L32_<serial>, the T10 form udev names
        "scsi-1..."); no NAA, which would need an IEEE company ID of ours.
        """
        ident = pad(self.vendor, 8) + pad(self.product, 16) + self.serial.encode('ascii')
        return scsi.vpd_page(TYPE_CHANGER, 0x83, scsi.designator(2, 0, 1, ident))

    def test_unit_ready(self, _cdb, _data):
        return good()

    def request_sense(self, cdb, _data):
        # Every error is reported with CHECK CONDITION and autosense, so there
        # is never a pending condition: NO SENSE, in the format asked for.
        alloc = cdb[4]
        if cdb[1] & 0x01:                         # DESC: descriptor format (SPC-4 4.5.2)
            return good(bytes((0x72, NO_SENSE, 0, 0, 0, 0, 0, 0)), alloc)
        return good(scsi.sense_data(NO_SENSE), alloc)

    def prevent_allow(self, cdb, _data):
        prevent = cdb[4] & 0x03
        if prevent > 1:
            return scsi.invalid_field_in_cdb(4, 1)
        self.prevent_removal = bool(prevent)
        return good()

    # ------------------------------------------------------------------ mode pages
    def mode_page(self, code, changeable=False):
        """Page ``code`` (0x1D, 0x1E or 0x1F); ``changeable``: its mask (nothing is)."""
        if code == 0x1D:
            # Element address assignment (SMC-3 7.3.4): first address and count per type.
            body = b''.join(u16(self.first[t]) + u16(self.count[t]) for t in (MT, ST, IE, DT)) + b'\0\0'
        elif code == 0x1E:
            # Transport geometry (SMC-3 7.3.5): per transport, ROTATE 0, member number 0.
            body = b'\0\0' * max(1, self.count[MT])
        elif code == 0x1F:
            # Device capabilities (SMC-3 7.3.3): storage (STOR*) and MOVE MEDIUM
            # source -> destination bits (DT, I/E, ST, MT = bits 3..0); no EXCHANGE.
            stor = 0x0E                          # ST, I/E, DT can store a cartridge; the robot cannot
            moves = 0x0E                         # from each of ST, I/E, DT to ST, I/E, DT
            body = bytes((stor, 0, 0, moves, moves, moves, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        else:
            raise KeyError(code)
        if changeable:
            body = bytes(len(body))
        return bytes((code, len(body))) + body

    def mode_sense(self, cdb, _data):
        ten = cdb[0] == 0x5A
        alloc = be(cdb, 7, 2) if ten else cdb[4]
        pc = cdb[2] >> 6
        code = cdb[2] & 0x3F
        subpage = cdb[3]
        if pc == 3:
            return check_condition(ILLEGAL_REQUEST, ASC_SAVING_NOT_SUPPORTED, sks=field_pointer(2, 7))
        if code == 0x3F:
            if subpage not in (0x00, 0xFF):
                return scsi.invalid_field_in_cdb(3)
            codes = _MODE_PAGES
        elif code in _MODE_PAGES:
            if subpage:
                return scsi.invalid_field_in_cdb(3)
            codes = (code,)
        else:
            return scsi.invalid_field_in_cdb(2, 5)
        body = b''.join(self.mode_page(c, changeable=(pc == 1)) for c in codes)
        # No block descriptors on a changer, whatever DBD says.
        header = scsi.mode_header10(len(body)) if ten else scsi.mode_header6(len(body))
        return good(header + body, alloc)

    def mode_select(self, cdb, data):
        ten = cdb[0] == 0x55
        length = be(cdb, 7, 2) if ten else cdb[4]
        if cdb[1] & 0x01:                         # SP: nothing is saveable
            return scsi.invalid_field_in_cdb(1, 0)
        if len(data) < length:
            return scsi.parameter_list_length_error()
        try:
            _hdr, bd, pages = scsi.split_mode_parameters(cdb, data[:length])
        except ValueError:
            return scsi.parameter_list_length_error()
        if bd:
            return scsi.invalid_field_in_parameters(7 if ten else 3)
        for code, _sub, raw in pages:
            if code not in _MODE_PAGES:
                return check_condition(ILLEGAL_REQUEST, ASC_INVALID_FIELD_PARAM)
            current = self.mode_page(code)
            # Nothing is changeable: a page must repeat the current values (PS bit aside).
            if bytes((raw[0] & 0x3F,)) + raw[1:] != current:
                return check_condition(ILLEGAL_REQUEST, ASC_INVALID_FIELD_PARAM)
        return good()

    # ------------------------------------------------------------------ READ ELEMENT STATUS
    def _dvcid_len(self):
        serials = [self.drive_identity(d)[2] for d in self.library.drives]
        return max([DVCID_LEN_MIN] + [24 + len(s) for s in serials])

    def descriptor_length(self, etype, voltag, dvcid):
        """Bytes per element descriptor of a page of ``etype`` (constant within a page).

        12 fixed bytes, the primary volume tag (36) when VOLTAG, then the
        identifier header (code set, type, reserved, length: 4 bytes, present
        with or without DVCID as SL150/SL500/tgt/mhvtl send it) and, for a data
        transfer element with DVCID, the drive's identifier.
        """
        n = 12 + (VOLUME_TAG_LEN if voltag else 0) + 4
        if dvcid and etype == DT:
            n += self._dvcid_len()
        return n

    def descriptor(self, el, voltag, dvcid):
        cart = self.cartridge(el)
        d = bytearray(self.descriptor_length(el.etype, voltag, dvcid))
        d[0:2] = u16(el.address)
        full = cart is not None
        if el.etype == MT:
            flags = 0                              # EXCEPT 0, FULL 0: the robot rests empty
        elif el.etype == ST:
            flags = 0x08 | full                    # ACCESS, FULL
        elif el.etype == IE:
            flags = 0x20 | 0x10 | 0x08 | full      # INENAB, EXENAB, ACCESS, FULL (IMPEXP 0: placed by the robot)
        else:
            drive = self.library.drives[el.index]
            access = not (full and getattr(drive, 'removal_prevented', False))
            flags = (0x08 if access else 0) | full
        d[2] = flags
        # d[3] reserved; d[4:6] ASC/ASCQ 0 (no exception)
        if el.etype == DT:
            lun = self.drive_luns[el.index]
            if lun is not None:
                d[6] = 0x10 | (lun & 0x07)         # LU VALID + LUN (same target as the changer)
        if full:
            source = self._source.get(cart.barcode)
            medium = MEDIUM_WORM if getattr(cart, 'worm', False) else MEDIUM_DATA
            d[9] = medium
            if source is not None and el.etype != MT:
                d[9] |= 0x80                       # SVALID
                d[10:12] = u16(source)
        off = 12
        if voltag:
            if full and getattr(cart, 'barcode', None):
                d[off:off + 32] = pad(cart.barcode, 32)   # volume identifier, space padded; reserved + seq 0
            off += VOLUME_TAG_LEN
        if dvcid and el.etype == DT:
            vendor, product, serial = self.drive_identity(self.library.drives[el.index])
            ident_len = self._dvcid_len()
            ident = pad(vendor, 8) + pad(product, 16) + pad(serial, ident_len - 24)
            d[off] = 0x02                          # code set: ASCII
            d[off + 1] = 0x01                      # identifier type: T10 vendor ID
            d[off + 3] = ident_len
            d[off + 4:off + 4 + ident_len] = ident
        return bytes(d)

    def element_status(self, etype, start, count, voltag=True, dvcid=False):
        """READ ELEMENT STATUS data (untruncated) or None when no element matches.

        Elements of ``etype`` (0 = all) with an address >= ``start``, at most
        ``count``, in address order; one page per run of one element type.
        Header: first address reported, NUMBER OF ELEMENTS AVAILABLE (those
        reported, <= count) and BYTE COUNT OF REPORT AVAILABLE (all pages),
        which SL150's manual says is "not adjusted to match the allocation
        length"; the caller cuts the data to the allocation length.
        """
        chosen = [e for e in self.elements if (etype == 0 or e.etype == etype) and e.address >= start][:count]
        if not chosen:
            return None
        pages = []
        run = []
        for el in chosen:
            if run and run[-1].etype != el.etype:
                pages.append(run)
                run = []
            run.append(el)
        pages.append(run)
        body = b''
        for run in pages:
            t = run[0].etype
            descs = b''.join(self.descriptor(el, voltag, dvcid) for el in run)
            body += bytes((t, 0x80 if voltag else 0)) + u16(self.descriptor_length(t, voltag, dvcid)) + b'\0' \
                + u24(len(descs)) + descs
        return u16(chosen[0].address) + u16(len(chosen)) + b'\0' + u24(len(body)) + body

    def read_element_status(self, cdb, _data):
        etype = cdb[1] & 0x0F
        voltag = bool(cdb[1] & 0x10)
        start = be(cdb, 2, 2)
        count = be(cdb, 4, 2)
        dvcid = bool(cdb[6] & 0x01)               # CURDATA (bit 1): our status is always current
        alloc = be(cdb, 7, 3)
        if etype > DT:
            return scsi.invalid_field_in_cdb(1, 3)
        if count == 0:
            # Nothing asked for: an empty report (header only).
            return good(u16(start) + u16(0) + b'\0' + u24(0), alloc)
        data = self.element_status(etype, start, count, voltag, dvcid)
        if data is None:
            # No element of that type at or above the starting address: mtx's
            # "all elements" walk stops on exactly this sense (mtxl.c).
            return check_condition(ILLEGAL_REQUEST, ASC_INVALID_ELEMENT, sks=field_pointer(2))
        return good(data, alloc)

    # ------------------------------------------------------------------ INITIALIZE ELEMENT STATUS
    def initialize_element_status(self, cdb, _data):
        if cdb[0] == 0xE7 and cdb[1] & 0x01:      # WITH RANGE, RANGE bit
            start = be(cdb, 2, 2)
            count = be(cdb, 6, 2)
            chosen = [e for e in self.elements if e.address >= start][:count]
            if count and not chosen:
                return check_condition(ILLEGAL_REQUEST, ASC_INVALID_ELEMENT, sks=field_pointer(2))
        else:
            chosen = self.elements
        scanned = sum(1 for e in chosen if e.etype in (ST, IE))
        return self._after(self.seconds(self.scan_s * scanned), [], good(), 'inventory of %d elements' % scanned)

    # ------------------------------------------------------------------ POSITION TO ELEMENT
    def _transport_ok(self, cdb):
        transport = be(cdb, 2, 2)
        return transport == 0 or (self.element(transport) is not None and self.element(transport).etype == MT)

    def position_to_element(self, cdb, _data):
        if not self._transport_ok(cdb):
            return check_condition(ILLEGAL_REQUEST, ASC_INVALID_ELEMENT, sks=field_pointer(2))
        dest = self.element(be(cdb, 4, 2))
        if dest is None or dest.etype == MT:
            return check_condition(ILLEGAL_REQUEST, ASC_INVALID_ELEMENT, sks=field_pointer(4))
        if cdb[8] & 0x01:                         # INVERT: single-sided media
            return scsi.invalid_field_in_cdb(8, 0)
        return self._after(self.seconds(self.move_s * POSITION_FRACTION), [], good(),
                           'position to %d' % dest.address)

    # ------------------------------------------------------------------ MOVE MEDIUM
    def move_medium(self, cdb, _data):
        if not self._transport_ok(cdb):
            return check_condition(ILLEGAL_REQUEST, ASC_INVALID_ELEMENT, sks=field_pointer(2))
        src = self.element(be(cdb, 4, 2))
        if src is None or src.etype == MT:
            return check_condition(ILLEGAL_REQUEST, ASC_INVALID_ELEMENT, sks=field_pointer(4))
        dst = self.element(be(cdb, 6, 2))
        if dst is None or dst.etype == MT:
            return check_condition(ILLEGAL_REQUEST, ASC_INVALID_ELEMENT, sks=field_pointer(6))
        if cdb[10] & 0x01:                        # INVERT: single-sided media
            return scsi.invalid_field_in_cdb(10, 0)
        cart = self.cartridge(src)
        if cart is None:
            return check_condition(ILLEGAL_REQUEST, ASC_MEDIUM_SOURCE_EMPTY)
        if dst is not src and self.cartridge(dst) is not None:
            return check_condition(ILLEGAL_REQUEST, ASC_MEDIUM_DEST_FULL)
        if src.etype == DT and getattr(self.library.drives[src.index], 'removal_prevented', False):
            # The drive is locked (PREVENT MEDIUM REMOVAL from its host, st's
            # open): the library cannot pull the cartridge (tgt does the same).
            return check_condition(ILLEGAL_REQUEST, ASC_MEDIUM_REMOVAL_PREVENTED)
        if dst is src:
            # Pick and put back: the robot moves, nothing changes.
            return self._after(self.seconds(self.move_s), [], good(), 'move %d to itself' % src.address)

        holder = {}
        phases = []
        if src.etype == DT:
            drive = self.library.drives[src.index]
            unload = self.unload_seconds(drive) if getattr(drive, 'threaded', True) else 0.0
            phases.append((unload, lambda: holder.__setitem__('cart', drive.unload_cartridge())))
        else:
            phases.append((0.0, lambda: holder.__setitem__('cart', self._take(src))))

        def place():
            moved = holder['cart']
            if src.etype in (ST, IE):
                self._source[moved.barcode] = src.address
            if dst.etype != DT:
                self._put(dst, moved)
            return None

        def load():
            moved = holder['cart']
            try:
                self.library.drives[dst.index].load_cartridge(moved)
            except Exception as exc:  # pylint: disable=broad-exception-caught  # the drive refused it: the robot takes it back
                self._put_back(src, moved)
                return check_condition(MEDIUM_ERROR, ASC_LOAD_EJECT_FAILED,
                                       note='drive %d refused %s: %s' % (dst.index, moved.barcode, exc))
            return None

        phases.append((self.seconds(self.move_s), place))
        if dst.etype == DT:
            phases.append((self.load_seconds(self.library.drives[dst.index]), load))
        return self._after(None, phases, good(), 'move %d -> %d (%s)' % (src.address, dst.address, cart.barcode))

    def _take(self, el):
        if el.etype == ST:
            cart, self.library.slots[el.index] = self.library.slots[el.index], None
        else:
            cart, self.library.import_export[el.index] = self.library.import_export[el.index], None
        return cart

    def _put(self, el, cart):
        if el.etype == ST:
            self.library.slots[el.index] = cart
        else:
            self.library.import_export[el.index] = cart

    def _put_back(self, src, cart):
        if src.etype == DT:
            self.library.drives[src.index].load_cartridge(cart)
        else:
            self._put(src, cart)

    # ------------------------------------------------------------------ timing
    def _after(self, delay, phases, result, note):
        """Run ``phases`` [(seconds, action)] in order, each when its time has come.

        With ``delay`` (and no phases) the command simply completes after it.
        An action may return a Result to end the command early (an error).
        Everything due at once runs now and the Result comes back directly;
        otherwise a ``Pending`` carries on on the device's clock.
        """
        if delay is not None:
            phases = [(delay, lambda: None)]
        queue = list(phases)
        state = {'due': self.clock(), 'result': result}

        def run(now):
            while queue:
                seconds, action = queue[0]
                due = state['due'] + seconds
                if now < due:
                    return due
                queue.pop(0)
                state['due'] = due
                outcome = action()
                if isinstance(outcome, Result):
                    queue.clear()
                    state['result'] = outcome
            if phases and delay is None:
                self._save_state()
            return state['result']

        first = run(state['due'])
        if isinstance(first, Result):
            return first
        return Pending(run, note=note)

    _HANDLERS = {
        0x00: test_unit_ready,
        0x03: request_sense,
        0x07: initialize_element_status,
        0x12: inquiry,
        0x15: mode_select,
        0x1A: mode_sense,
        0x1E: prevent_allow,
        0x2B: position_to_element,
        0x55: mode_select,
        0x5A: mode_sense,
        0xA5: move_medium,
        0xB8: read_element_status,
        0xE7: initialize_element_status,
    }

    # ------------------------------------------------------------------ construction from the lab's config
    @classmethod
    def from_config(cls, config, drives=None, library=None, clock=time.monotonic):
        """A changer from the lab's JSON config (a dict), over ``library`` or a
        ``Library`` opened on ``config['cartridge_dir']`` with ``drives``.

        Keys: vendor, product, revision, serial; slots (count); import_export
        (count, default 1); barcodes (slot order, None for an empty slot);
        cartridge_dir; addresses {transport, import_export, drives, slots};
        mechanics {move_s, load_s, unload_s, scan_s}; mechanics_scale;
        drive_luns. See the module docstring and docs/lab.md.
        """
        if not isinstance(config, dict):
            raise ChangerConfigError('changer config must be a JSON object, got %s' % type(config).__name__)
        known = {'vendor', 'product', 'revision', 'serial', 'slots', 'import_export', 'barcodes', 'cartridge_dir',
                 'addresses', 'mechanics', 'mechanics_scale', 'drive_luns'}
        unknown = sorted(set(config) - known)
        if unknown:
            raise ChangerConfigError('unknown changer config key(s) %s (known: %s)' % (
                ', '.join(unknown), ', '.join(sorted(known))))
        identity = {k: config.get(k) for k in ('vendor', 'product', 'revision', 'serial') if k in config}
        for key in ('vendor', 'product', 'serial'):
            if key not in identity:
                raise ChangerConfigError('changer config needs %r' % key)
        addresses = config.get('addresses') or {}
        if not isinstance(addresses, dict) or set(addresses) - set(DEFAULT_ADDRESSES):
            raise ChangerConfigError('changer addresses must be an object with keys among %s, got %r'
                                     % (', '.join(sorted(DEFAULT_ADDRESSES)), addresses))
        mechanics = config.get('mechanics') or {}
        if not isinstance(mechanics, dict) or set(mechanics) - {'move_s', 'load_s', 'unload_s', 'scan_s'}:
            raise ChangerConfigError('changer mechanics must be an object with keys among move_s, load_s, '
                                     'unload_s, scan_s, got %r' % (mechanics,))
        state_path = None
        if library is None:
            library, state_path = cls._open_library(config, drives)
        return cls(library, identity, mechanics, config.get('mechanics_scale', 1.0), addresses, clock=clock,
                   drive_luns=config.get('drive_luns'), state_path=state_path)

    @staticmethod
    def _open_library(config, drives):
        from .library import Library, LibraryError   # only when the changer opens the cartridges itself
        from .media import MediaError
        if drives is None:
            raise ChangerConfigError('from_config needs the drive objects (or a library) to build the library')
        directory = config.get('cartridge_dir')
        if not isinstance(directory, str) or not os.path.isdir(directory):
            raise ChangerConfigError('changer cartridge_dir %r is not a directory' % (directory,))
        slots = config.get('slots')
        if isinstance(slots, bool) or not isinstance(slots, int) or slots < 1:
            raise ChangerConfigError('changer slots must be an integer >= 1, got %r' % (slots,))
        ie_count = config.get('import_export', 1)
        if isinstance(ie_count, bool) or not isinstance(ie_count, int) or ie_count < 0:
            raise ChangerConfigError('changer import_export must be an integer >= 0, got %r' % (ie_count,))
        barcodes = config.get('barcodes') or []
        if not isinstance(barcodes, list) or len(barcodes) > slots:
            raise ChangerConfigError('changer barcodes must be a list of at most %d (slots) entries, got %r'
                                     % (slots, barcodes))
        present = [check_barcode(b) for b in barcodes if b is not None]
        if len(set(present)) != len(present):
            raise ChangerConfigError('changer barcodes name a cartridge twice: %r' % (barcodes,))
        try:
            library = Library.load(directory, list(drives), slots, ie_count, initial={'slots': barcodes})
        except (LibraryError, MediaError) as exc:
            raise ChangerConfigError('cannot open the cartridges in %s: %s (create each cartridge file with '
                                     'media.Cartridge.create first)' % (directory, exc)) from exc
        return library, os.path.join(directory, 'changer-state.json')

    @classmethod
    def from_json(cls, path, drives=None, library=None, clock=time.monotonic):
        try:
            with open(path) as f:
                config = json.load(f)
        except OSError as exc:
            raise ChangerConfigError('cannot read changer config %s: %s' % (path, exc.strerror)) from exc
        except ValueError as exc:
            raise ChangerConfigError('changer config %s is not valid JSON: %s' % (path, exc)) from exc
        return cls.from_config(config, drives=drives, library=library, clock=clock)
