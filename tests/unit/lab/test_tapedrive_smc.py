# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's emulated medium changer (lab/tapedrive/smc.py): CDB in, bytes out.

Every command is checked on its bytes against SMC-3 as real libraries and the
tools that read them lay them out (sources in smc.py). Then the real tools
run against it without a guest, through lab/tapedrive/sgshim.c (LD_PRELOAD,
SG_IO over a Unix socket): ``mtx`` (status, load, unload, transfer, the
"altres" all-elements walk, its error messages) and sg3_utils (``sg_inq``,
``sg_vpd``, ``sg_modes``), and the collection's own ``_mtx.py`` parser reads
what mtx printed.

The drive is a stand-in (``StandInDrive``): the changer only needs ``loaded``,
``load_cartridge``, ``unload_cartridge`` and the INQUIRY identity of a drive.
Cartridges and the library are the real ones (media.py, library.py).
"""

from __future__ import annotations

import collections
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._tools._mtx import parse_mtx_status

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, 'lab'))

from tapedrive import scsi, sgshim, smc  # noqa: E402  pylint: disable=wrong-import-position
from tapedrive.library import Library  # noqa: E402  pylint: disable=wrong-import-position
from tapedrive.media import Cartridge  # noqa: E402  pylint: disable=wrong-import-position

IDENTITY = {'vendor': 'STK', 'product': 'L700', 'revision': '0107', 'serial': 'L700-1111'}
BARCODES = ['MA1001L5', 'MA1002L5', 'MA1003L5', 'MA1099L5']
MECHANICS = {'move_s': 10.0, 'load_s': 12.0, 'unload_s': 17.0, 'scan_s': 5.0}


class StandInDrive:
    """What the changer uses of an emulated drive (ssc.Drive has more; see the real one below)."""

    def __init__(self, vendor='IBM', product='ULT3580-TD5', serial='1068001001', refuse=None):
        self.identity = {'vendor': vendor, 'product': product, 'rev': 'G350', 'serial': serial}
        self.loaded = None
        self.threaded = False
        self.removal_prevented = False
        self.refuse = refuse
        self.events = []

    def load_cartridge(self, cart, count=True):
        if self.refuse:
            raise ValueError(self.refuse)
        self.loaded = cart
        self.threaded = True
        self.events.append(('load', cart.barcode))

    def unload_cartridge(self):
        cart, self.loaded = self.loaded, None
        self.threaded = False
        self.events.append(('unload', cart.barcode))
        return cart


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


def timed(changer, cdb, data_out=b'', clock=None):
    """Execute ``cdb``; drive a Pending to its end on the fake clock. Returns (result, seconds)."""
    start = clock.now if clock else 0.0
    result = changer.execute(bytes(cdb), data_out)
    while isinstance(result, scsi.Pending):
        if clock is None:
            pytest.fail('%s returned Pending (it takes time): pass the fake clock' % bytes(cdb).hex())
        due = result.poll(clock.now)
        if isinstance(due, scsi.Result):
            result = due
            break
        assert due > clock.now, 'a Pending must ask to be polled later than now'
        clock.now = due
    return result, (clock.now - start) if clock else 0.0


def run(changer, cdb, data_out=b'', clock=None):
    """Execute ``cdb`` to its end (see ``timed``); the Result."""
    return timed(changer, cdb, data_out, clock)[0]


@pytest.fixture
def lab(tmp_path):
    """A changer like a lab guest's: 1 drive, 4 slots (3 scratch + 1 data), 1 import/export."""
    for code in BARCODES:
        Cartridge.create(str(tmp_path / ('%s.cart' % code)), code)
    clock = Clock()
    drive = StandInDrive()
    config = dict(IDENTITY, slots=4, barcodes=BARCODES, cartridge_dir=str(tmp_path), mechanics=MECHANICS,
                  mechanics_scale=0.01, drive_luns=[1])
    changer = smc.Changer.from_config(config, drives=[drive], clock=clock)
    return changer, drive, clock, tmp_path


def sense(result):
    return result.sense_key, result.asc_ascq


def sks(result):
    """(SKSV, C/D, field pointer, BPV, bit pointer) of an ILLEGAL REQUEST."""
    b = result.sense[15:18]
    return bool(b[0] & 0x80), bool(b[0] & 0x40), (b[1] << 8) | b[2], bool(b[0] & 0x08), b[0] & 0x07


def res_cdb(etype=0, start=0, count=0xFFFF, alloc=0xFFFF, voltag=True, dvcid=False):
    return bytes((0xB8, (0x10 if voltag else 0) | etype, start >> 8, start & 0xFF, count >> 8, count & 0xFF,
                  0x01 if dvcid else 0, (alloc >> 16) & 0xFF, (alloc >> 8) & 0xFF, alloc & 0xFF, 0, 0))


def move_cdb(src, dst, transport=0, invert=False):
    return bytes((0xA5, 0, transport >> 8, transport & 0xFF, src >> 8, src & 0xFF, dst >> 8, dst & 0xFF,
                  0, 0, 1 if invert else 0, 0))


Report = collections.namedtuple('Report', 'first count total pages')


def parse_res(data):
    """Decode READ ELEMENT STATUS data: header and [(type, voltag, desc_len, page_bytes, [descriptor bytes])]."""
    first = int.from_bytes(data[0:2], 'big')
    count = int.from_bytes(data[2:4], 'big')
    total = int.from_bytes(data[5:8], 'big')
    pages = []
    off = 8
    while off < len(data):
        etype, flags = data[off], data[off + 1]
        dlen = int.from_bytes(data[off + 2:off + 4], 'big')
        plen = int.from_bytes(data[off + 5:off + 8], 'big')
        body = data[off + 8:off + 8 + plen]
        pages.append((etype, bool(flags & 0x80), dlen, plen, [body[i:i + dlen] for i in range(0, len(body), dlen)]))
        off += 8 + plen
    return Report(first, count, total, pages)


# ----------------------------------------------------------------------------- INQUIRY, TUR, REQUEST SENSE

def test_standard_inquiry(lab):
    changer = lab[0]
    r = run(changer, b'\x12\x00\x00\x00\x60\x00')
    assert r.ok and len(r.data) == 96
    assert r.data[0] == 0x08                     # peripheral qualifier 0, medium changer
    assert r.data[1] & 0x80                      # RMB
    assert r.data[8:16] == b'STK     ' and r.data[16:32] == b'L700            ' and r.data[32:36] == b'0107'
    assert r.data[6] & 0x08 == 0                 # MChngr 0: not an attached changer (mtx uses READ ELEMENT STATUS B8)
    short = run(changer, b'\x12\x00\x00\x00\x24\x00')
    assert short.data == r.data[:36]             # cut to the allocation length
    assert run(changer, b'\x12\x00\x00\x00\x05\x00').data == r.data[:5]


def test_vpd_pages(lab):
    changer = lab[0]
    r = run(changer, b'\x12\x01\x00\x00\xff\x00')
    assert r.data == bytes((0x08, 0x00, 0x00, 3, 0x00, 0x80, 0x83))
    r = run(changer, b'\x12\x01\x80\x00\xff\x00')
    assert r.data == bytes((0x08, 0x80, 0x00, 9)) + b'L700-1111'
    r = run(changer, b'\x12\x01\x83\x00\xff\x00')
    ident = b'STK     L700            L700-1111'
    assert r.data == bytes((0x08, 0x83, 0, 4 + len(ident), 0x02, 0x01, 0, len(ident))) + ident


@pytest.mark.parametrize('cdb, field', [
    (b'\x12\x01\x81\x00\xff\x00', 2),            # unsupported VPD page
    (b'\x12\x00\x80\x00\xff\x00', 2),            # page code without EVPD
])
def test_inquiry_invalid_fields(lab, cdb, field):
    r = run(lab[0], cdb)
    assert sense(r) == (scsi.ILLEGAL_REQUEST, (0x24, 0x00))
    assert sks(r)[:3] == (True, True, field)


def test_test_unit_ready_and_request_sense(lab):
    changer = lab[0]
    assert run(changer, bytes(6)).ok
    r = run(changer, b'\x03\x00\x00\x00\xfc\x00')
    assert r.ok and len(r.data) == 18 and r.data[0] == 0x70 and r.data[2] & 0x0F == 0 and r.data[7] == 10
    r = run(changer, b'\x03\x01\x00\x00\xfc\x00')
    assert r.data == bytes((0x72, 0, 0, 0, 0, 0, 0, 0))       # descriptor format when DESC is set
    assert run(changer, b'\x03\x00\x00\x00\x08\x00').data == run(changer, b'\x03\x00\x00\x00\xfc\x00').data[:8]


@pytest.mark.parametrize('opcode', [0x08, 0x0A, 0x1B, 0x2C, 0x4D, 0xA6, 0xB5, 0xFF])
def test_unknown_opcodes_are_illegal_requests(lab, opcode):
    cdb = bytes((opcode,)) + bytes(scsi.cdb_length(opcode) - 1)
    r = run(lab[0], cdb)
    assert r.status == scsi.CHECK_CONDITION
    assert sense(r) == (scsi.ILLEGAL_REQUEST, (0x20, 0x00))


def test_empty_cdb_is_an_illegal_request(lab):
    assert sense(run(lab[0], b'')) == (scsi.ILLEGAL_REQUEST, (0x20, 0x00))


# ----------------------------------------------------------------------------- MODE SENSE / SELECT

PAGE_1D = bytes((0x1D, 0x12, 0, 1, 0, 1, 0x03, 0xE8, 0, 4, 0, 10, 0, 1, 0x01, 0xF4, 0, 1, 0, 0))


def test_mode_sense6_element_address_assignment(lab):
    r = run(lab[0], b'\x1a\x08\x1d\x00\x88\x00')           # as mtx sends it (DBD, 136 bytes)
    assert r.data == bytes((3 + 20, 0, 0, 0)) + PAGE_1D


def test_mode_sense_is_read_as_mtx_and_ch_read_it(lab):
    changer = lab[0]
    # mtx ReadAssignmentPage: page at 4 + block descriptor length; DBD set.
    buf = run(changer, b'\x1a\x08\x1d\x00\x88\x00').data
    page = buf[4 + buf[3]:]
    assert (page[2] << 8 | page[3], page[4] << 8 | page[5]) == (1, 1)          # transport
    assert (page[6] << 8 | page[7], page[8] << 8 | page[9]) == (1000, 4)       # storage
    assert (page[10] << 8 | page[11], page[12] << 8 | page[13]) == (10, 1)     # import/export
    assert (page[14] << 8 | page[15], page[16] << 8 | page[17]) == (500, 1)    # data transfer
    # Linux ch_readconfig: MODE SENSE(6) without DBD first, fields at buffer[buffer[3] + 6 ...].
    buf = run(changer, b'\x1a\x00\x1d\x00\xff\x00').data
    assert buf[3] == 0                                                          # no block descriptor
    firsts = [(buf[buf[3] + i] << 8) | buf[buf[3] + i + 1] for i in (6, 10, 14, 18)]
    counts = [(buf[buf[3] + i] << 8) | buf[buf[3] + i + 1] for i in (8, 12, 16, 20)]
    assert firsts == [1, 1000, 10, 500] and counts == [1, 4, 1, 1]


def test_mode_sense10_all_pages_and_changeable(lab):
    changer = lab[0]
    r = run(changer, b'\x5a\x00\x3f\x00\x00\x00\x00\x01\x00\x00')
    body = PAGE_1D + bytes((0x1E, 2, 0, 0)) + bytes((0x1F, 0x12, 0x0E, 0, 0, 0x0E, 0x0E, 0x0E)) + bytes(12)
    assert r.data == (6 + len(body)).to_bytes(2, 'big') + bytes(6) + body
    r = run(changer, b'\x5a\x00\x5d\x00\x00\x00\x00\x01\x00\x00')         # PC=1: changeable values
    assert r.data[8:] == bytes((0x1D, 0x12)) + bytes(18)
    r = run(changer, b'\x5a\x00\x1d\x00\x00\x00\x00\x00\x0a\x00')         # allocation 10: cut, length kept
    assert r.data == (6 + 20).to_bytes(2, 'big') + bytes(6) + PAGE_1D[:2]


@pytest.mark.parametrize('cdb, asc, field', [
    (b'\x1a\x00\xdd\x00\xff\x00', (0x39, 0x00), 2),     # saved values (PC 3)
    (b'\x1a\x00\x0f\x00\xff\x00', (0x24, 0x00), 2),     # a tape drive's page
    (b'\x1a\x00\x1d\x01\xff\x00', (0x24, 0x00), 3),     # subpage
])
def test_mode_sense_errors(lab, cdb, asc, field):
    r = run(lab[0], cdb)
    assert sense(r) == (scsi.ILLEGAL_REQUEST, asc)
    assert sks(r)[:3] == (True, True, field)


def test_mode_select_accepts_current_values_only(lab):
    changer = lab[0]
    params = bytes(4) + PAGE_1D
    assert run(changer, bytes((0x15, 0x10, 0, 0, len(params), 0)), params).ok
    changed = bytearray(params)
    changed[4 + 9] = 9                                     # ask for 9 slots
    r = run(changer, bytes((0x15, 0x10, 0, 0, len(params), 0)), bytes(changed))
    assert sense(r) == (scsi.ILLEGAL_REQUEST, (0x26, 0x00))
    r = run(changer, bytes((0x15, 0x11, 0, 0, len(params), 0)), params)   # SP: nothing saveable
    assert sense(r) == (scsi.ILLEGAL_REQUEST, (0x24, 0x00))
    r = run(changer, bytes((0x15, 0x10, 0, 0, len(params), 0)), params[:10])
    assert sense(r) == (scsi.ILLEGAL_REQUEST, (0x1A, 0x00))


# ----------------------------------------------------------------------------- READ ELEMENT STATUS

def test_read_element_status_all_types(lab):
    changer = lab[0]
    r = run(changer, res_cdb())
    first, count, total, pages = parse_res(r.data)
    assert (first, count) == (1, 7)
    assert total == len(r.data) - 8
    assert [(p[0], p[1], p[2], len(p[4])) for p in pages] == [(1, True, 52, 1), (3, True, 52, 1), (4, True, 52, 1),
                                                              (2, True, 52, 4)]
    assert all(p[3] == p[2] * len(p[4]) for p in pages)
    slots = pages[3][4]
    for i, (desc, code) in enumerate(zip(slots, BARCODES)):
        assert desc[0:2] == (1000 + i).to_bytes(2, 'big')
        assert desc[2] == 0x09                              # ACCESS, FULL
        assert desc[9] == 0x01                              # data medium; SVALID 0: never moved yet
        assert desc[12:48] == code.encode().ljust(32) + bytes(4)   # space padded to 32, reserved + sequence 0
    drive = pages[2][4][0]
    assert drive[0:2] == (500).to_bytes(2, 'big') and drive[2] == 0x08 and drive[12:48] == bytes(36)
    assert drive[6] == 0x11                                 # LU VALID, LUN 1 (for the ch driver)
    ie = pages[1][4][0]
    assert ie[0:2] == (10).to_bytes(2, 'big') and ie[2] == 0x38  # INENAB, EXENAB, ACCESS, empty
    assert pages[0][4][0][:3] == bytes((0, 1, 0))           # robot: empty, no exception


def test_read_element_status_per_type_as_mtx_asks(lab):
    changer = lab[0]
    # mtx's original method: storage from StorageStart, count = NumStorage (I/E excluded).
    r = run(changer, res_cdb(2, 1000, 4, alloc=628))
    first, count, total, pages = parse_res(r.data)
    assert (first, count, total) == (1000, 4, 8 + 4 * 52)
    assert [p[0] for p in pages] == [2]
    # A start inside the range and a count smaller than what is there.
    first, count, total, pages = parse_res(run(changer, res_cdb(2, 1001, 2)).data)
    assert (first, count) == (1001, 2) and [d[0:2] for d in pages[0][4]] == [b'\x03\xe9', b'\x03\xea']
    # A start below the type's range starts at its first element (SL150: lowest address >= start).
    first, count = parse_res(run(changer, res_cdb(4, 0, 10)).data)[:2]
    assert (first, count) == (500, 1)


def test_read_element_status_without_voltag_and_with_dvcid(lab):
    changer = lab[0]
    pages = parse_res(run(changer, res_cdb(0, voltag=False)).data).pages
    assert {p[2] for p in pages} == {16} and not any(p[1] for p in pages)
    pages = parse_res(run(changer, res_cdb(4, dvcid=True)).data).pages
    (desc,) = pages[0][4]
    assert pages[0][2] == 52 + 34 == len(desc)
    assert desc[48:52] == bytes((0x02, 0x01, 0x00, 34))     # ASCII, T10 vendor ID, 34 bytes
    assert desc[52:] == b'IBM     ULT3580-TD5     1068001001'
    pages = parse_res(run(changer, res_cdb(4, dvcid=True, voltag=False)).data).pages
    assert pages[0][2] == 16 + 34
    # DVCID does not change the other element types.
    pages = parse_res(run(changer, res_cdb(2, dvcid=True)).data).pages
    assert pages[0][2] == 52


def test_read_element_status_allocation_length(lab):
    changer = lab[0]
    full = run(changer, res_cdb()).data
    for alloc in (0, 7, 8, 60, 100, len(full) - 1, len(full), len(full) + 100):
        r = run(changer, res_cdb(alloc=alloc))
        assert r.ok and r.data == full[:alloc]
    # The header keeps the counts of the whole report (SL150: "not adjusted to
    # match the allocation length"), which mtx uses to ask again with room.
    head = run(changer, res_cdb(alloc=8)).data
    assert int.from_bytes(head[5:8], 'big') + 8 == len(full)
    assert int.from_bytes(head[2:4], 'big') == 7


def test_read_element_status_errors(lab):
    changer = lab[0]
    r = run(changer, res_cdb(5))
    assert sense(r) == (scsi.ILLEGAL_REQUEST, (0x24, 0x00)) and sks(r) == (True, True, 1, True, 3)
    r = run(changer, res_cdb(0, 1004))                  # above every element
    assert sense(r) == (scsi.ILLEGAL_REQUEST, (0x21, 0x01)) and sks(r)[:3] == (True, True, 2)
    r = run(changer, res_cdb(3, 11))                    # above the only import/export element
    assert sense(r) == (scsi.ILLEGAL_REQUEST, (0x21, 0x01))
    r = run(changer, res_cdb(0, 0, count=0))
    assert r.ok and r.data == bytes(8)


def test_read_element_status_as_the_ch_driver_asks(lab):
    """drivers/scsi/ch.c ch_read_element_status: one element, 255 bytes, descriptor at buffer[16]."""
    changer = lab[0]
    r = run(changer, res_cdb(4, 500, 1, alloc=255, voltag=False))
    buf = r.data
    assert (buf[16] << 8 | buf[17]) == 500
    data = buf[16:32]
    assert not data[6] & 0x80 and data[6] & 0x30 == 0x10 and data[6] & 7 == 1   # on this bus, LU valid, LUN 1
    # ch puts the changer's LUN in byte 1 bits 7..5 (SCSI-2 style): ignored, as by real devices.
    lun_bits = bytearray(res_cdb(4, 500, 1, alloc=255, voltag=False))
    lun_bits[1] |= 0x20
    assert run(changer, bytes(lun_bits)).data == buf
    assert run(changer, b'\x1a\x20\x1d\x00\xff\x00').data == run(changer, b'\x1a\x00\x1d\x00\xff\x00').data
    assert run(changer, b'\x07\x20\x00\x00\x00\x00', clock=lab[2]).ok


# ----------------------------------------------------------------------------- MOVE MEDIUM and its times

def test_move_slot_to_drive_and_back_with_mechanical_times(lab):
    changer, drive, clock = lab[:3]
    start = clock.now
    pending = changer.execute(move_cdb(1000, 500), b'')
    assert isinstance(pending, scsi.Pending)
    assert changer.library.slots[0] is None                 # picked at once
    assert pending.poll(clock.now) == pytest.approx(start + 0.10)   # robot: move_s 10 s x 0.01
    assert pending.poll(start + 0.0999) == pytest.approx(start + 0.10)
    assert drive.loaded is None
    due = pending.poll(start + 0.10)
    assert due == pytest.approx(start + 0.22) and drive.loaded is None   # then the drive loads: 12 s x 0.01
    result = pending.poll(start + 0.22)
    assert isinstance(result, scsi.Result) and result.ok
    assert drive.loaded.barcode == 'MA1001L5'
    pages = parse_res(run(changer, res_cdb(4)).data).pages
    desc = pages[0][4][0]
    assert desc[2] & 0x01 and desc[9] == 0x81 and desc[10:12] == (1000).to_bytes(2, 'big')   # SVALID, from slot 1
    assert desc[12:20] == b'MA1001L5'
    # Back: the drive unloads (17 s, it is threaded), then the robot moves (10 s).
    r, took = timed(changer, move_cdb(500, 1000), clock=clock)
    assert r.ok and took == pytest.approx(0.27)
    assert drive.loaded is None and changer.library.slots[0].barcode == 'MA1001L5'
    assert drive.events == [('load', 'MA1001L5'), ('unload', 'MA1001L5')]


def test_move_from_an_ejected_drive_skips_the_unload(lab):
    changer, drive, clock = lab[:3]
    assert run(changer, move_cdb(1001, 500), clock=clock).ok
    drive.threaded = False                                 # the host sent UNLOAD (mt offline) already
    r, took = timed(changer, move_cdb(500, 1001), clock=clock)
    assert r.ok and took == pytest.approx(0.10)


def test_move_slot_to_slot_and_import_export(lab):
    changer, clock = lab[0], lab[2]
    r, took = timed(changer, move_cdb(1003, 10), clock=clock)
    assert r.ok and took == pytest.approx(0.10)
    lib = changer.library
    assert lib.slots[3] is None and lib.import_export[0].barcode == 'MA1099L5'
    pages = parse_res(run(changer, res_cdb(3)).data).pages
    ie = pages[0][4][0]
    assert ie[2] == 0x39 and ie[9] == 0x81 and ie[10:12] == (1003).to_bytes(2, 'big')
    assert run(changer, move_cdb(10, 1003), clock=clock).ok
    assert lib.slots[3].barcode == 'MA1099L5' and lib.import_export[0] is None
    assert sense(run(changer, move_cdb(1000, 1003), clock=clock)) == (scsi.ILLEGAL_REQUEST, (0x3B, 0x0D))
    r, took = timed(changer, move_cdb(1001, 1001), clock=clock)                # pick and put back
    assert r.ok and took == pytest.approx(0.10) and lib.slots[1].barcode == 'MA1002L5'


@pytest.mark.parametrize('cdb, asc, field', [
    (move_cdb(1000, 1001), (0x3B, 0x0D), None),          # destination full
    (move_cdb(500, 1001), (0x3B, 0x0E), None),           # source (the drive) empty
    (move_cdb(10, 1001), (0x3B, 0x0E), None),            # source (import/export) empty
    (move_cdb(999, 500), (0x21, 0x01), 4),               # no such source element
    (move_cdb(1000, 501), (0x21, 0x01), 6),              # no such destination element
    (move_cdb(1, 500), (0x21, 0x01), 4),                 # the robot is no source
    (move_cdb(1000, 1), (0x21, 0x01), 6),                # ... nor a destination
    (move_cdb(1000, 500, transport=2), (0x21, 0x01), 2),  # no such transport
    (move_cdb(1000, 500, invert=True), (0x24, 0x00), 10),
])
def test_move_medium_errors(lab, cdb, asc, field):
    changer = lab[0]
    before = changer.library.layout()
    r = run(changer, cdb)
    assert r.status == scsi.CHECK_CONDITION and sense(r) == (scsi.ILLEGAL_REQUEST, asc)
    if field is not None:
        assert sks(r)[:3] == (True, True, field)
    assert changer.library.layout() == before


def test_move_with_explicit_transport_address(lab):
    changer, drive, clock = lab[:3]
    assert run(changer, move_cdb(1002, 500, transport=1), clock=clock).ok
    assert drive.loaded.barcode == 'MA1003L5'


def test_move_out_of_a_locked_drive_is_prevented(lab):
    changer, drive, clock = lab[:3]
    assert run(changer, move_cdb(1000, 500), clock=clock).ok
    drive.removal_prevented = True                         # st holds the drive open (PREVENT MEDIUM REMOVAL)
    r = run(changer, move_cdb(500, 1000), clock=clock)
    assert sense(r) == (scsi.ILLEGAL_REQUEST, (0x53, 0x02))
    assert drive.loaded.barcode == 'MA1001L5'
    pages = parse_res(run(changer, res_cdb(4)).data).pages
    assert pages[0][4][0][2] == 0x01                       # full, ACCESS 0


def test_move_into_a_drive_that_refuses_puts_the_cartridge_back(lab):
    changer, drive, clock = lab[:3]
    drive.refuse = 'LTO-5 cartridge in an LTO-8 drive'
    r = run(changer, move_cdb(1000, 500), clock=clock)
    assert r.status == scsi.CHECK_CONDITION and sense(r) == (scsi.MEDIUM_ERROR, (0x53, 0x00))
    assert drive.loaded is None and changer.library.slots[0].barcode == 'MA1001L5'


def test_drive_times_fall_back_to_the_drive_profile(tmp_path):
    Cartridge.create(str(tmp_path / 'AA0001L5.cart'), 'AA0001L5')
    clock = Clock()
    drive = StandInDrive()
    drive.profile = type('Profile', (), {'load_s': 0.21, 'unload_s': 0.34})()   # lab seconds, already scaled
    changer = smc.Changer.from_config(dict(IDENTITY, slots=2, barcodes=['AA0001L5'], cartridge_dir=str(tmp_path),
                                           mechanics={'move_s': 10}, mechanics_scale=0.01), drives=[drive],
                                      clock=clock)
    r, took = timed(changer, move_cdb(1000, 500), clock=clock)
    assert r.ok and took == pytest.approx(0.10 + 0.21)
    r, took = timed(changer, move_cdb(500, 1001), clock=clock)
    assert r.ok and took == pytest.approx(0.34 + 0.10)
    del drive.profile
    r, took = timed(changer, move_cdb(1001, 500), clock=clock)
    assert r.ok and took == pytest.approx((10.0 + 12.0) * 0.01)   # neither: the sourced defaults
    r, took = timed(changer, move_cdb(500, 1000), clock=clock)
    assert r.ok and took == pytest.approx((17.0 + 10.0) * 0.01)


def test_instant_mechanics_complete_at_once(tmp_path):
    Cartridge.create(str(tmp_path / 'AA0001L5.cart'), 'AA0001L5')
    drive = StandInDrive()
    changer = smc.Changer.from_config(dict(IDENTITY, slots=2, barcodes=['AA0001L5'], cartridge_dir=str(tmp_path),
                                           mechanics_scale=0), drives=[drive])
    r = changer.execute(move_cdb(1000, 500), b'')
    assert isinstance(r, scsi.Result) and r.ok and drive.loaded.barcode == 'AA0001L5'


def test_default_mechanics_are_the_sourced_figures(lab):
    changer = smc.Changer(lab[0].library, IDENTITY)
    assert (changer.move_s, changer.scan_s) == (10.0, 5.0)
    assert (changer.load_seconds(StandInDrive()), changer.unload_seconds(StandInDrive())) == (12.0, 17.0)
    assert changer.mechanics_scale == 1.0


def test_with_the_emulated_drive(tmp_path):
    """The changer over ssc.Drive: its profile's load/unload times, its identity
    for DVCID, and its PREVENT MEDIUM REMOVAL and UNLOAD steer the move."""
    ssc = pytest.importorskip('tapedrive.ssc')
    for code in BARCODES[:2]:
        Cartridge.create(str(tmp_path / ('%s.cart' % code)), code)
    clock = Clock()
    drive = ssc.Drive({'vendor': 'IBM', 'product': 'ULT3580-TD5', 'rev': 'G350', 'serial': '1068001001'},
                      {'generation': 5, 'load_s': 0.12, 'unload_s': 0.17, 'rewind_s': 0.5}, clock=clock)
    changer = smc.Changer.from_config(dict(IDENTITY, slots=2, barcodes=BARCODES[:2], cartridge_dir=str(tmp_path),
                                           mechanics={'move_s': 10.0}, mechanics_scale=0.01), drives=[drive],
                                      clock=clock)
    r, took = timed(changer, move_cdb(1000, 500), clock=clock)
    assert r.ok and took == pytest.approx(0.10 + 0.12) and drive.loaded.barcode == 'MA1001L5'
    tur = drive.execute(bytes(6), b'')
    assert (tur.sense_key, tur.asc_ascq) == (scsi.UNIT_ATTENTION, (0x28, 0x00))  # a new cartridge, ready
    assert drive.execute(bytes(6), b'').ok
    pages = parse_res(run(changer, res_cdb(4, dvcid=True)).data).pages
    assert pages[0][4][0][52:] == b'IBM     ULT3580-TD5     1068001001'
    assert run(drive, b'\x1e\x00\x00\x00\x01\x00', clock=clock).ok           # PREVENT (st does at open)
    r = run(changer, move_cdb(500, 1000), clock=clock)
    assert sense(r) == (scsi.ILLEGAL_REQUEST, (0x53, 0x02)) and drive.loaded is not None
    assert run(drive, b'\x1e\x00\x00\x00\x00\x00', clock=clock).ok
    r, took = timed(changer, move_cdb(500, 1000), clock=clock)                 # threaded: the library unloads it
    assert r.ok and took == pytest.approx(0.17 + 0.10) and drive.loaded is None
    assert run(changer, move_cdb(1001, 500), clock=clock).ok
    drive.execute(bytes(6), b'')                                             # the unit attention
    r = run(drive, b'\x1b\x00\x00\x00\x00\x00', clock=clock)                # the host unloads (mt offline)
    assert r.ok and not drive.threaded
    r, took = timed(changer, move_cdb(500, 1001), clock=clock)
    assert r.ok and took == pytest.approx(0.10)                              # the robot only pulls it out
    assert changer.library.layout()['slots'] == ['MA1001L5', 'MA1002L5']


# ----------------------------------------------------------------------------- the other commands

def test_initialize_element_status_scans_storage_and_import_export(lab):
    changer, clock = lab[0], lab[2]
    r, took = timed(changer, b'\x07\x00\x00\x00\x00\x00', clock=clock)
    assert r.ok and took == pytest.approx(5 * 5.0 * 0.01)   # 4 slots + 1 import/export, 5 s each, x 0.01
    ranged = bytes((0xE7, 0x01, 0x03, 0xE8, 0, 0, 0, 2, 0, 0))    # WITH RANGE: 1000, 2 elements
    r, took = timed(changer, ranged, clock=clock)
    assert r.ok and took == pytest.approx(2 * 5.0 * 0.01)
    r, took = timed(changer, bytes((0xE7, 0, 0, 0, 0, 0, 0, 0, 0, 0)), clock=clock)   # RANGE 0: everything
    assert r.ok and took == pytest.approx(5 * 5.0 * 0.01)
    r = run(changer, bytes((0xE7, 0x01, 0x0F, 0xFF, 0, 0, 0, 1, 0, 0)), clock=clock)
    assert sense(r) == (scsi.ILLEGAL_REQUEST, (0x21, 0x01))


def test_position_to_element(lab):
    changer, clock = lab[0], lab[2]
    r, took = timed(changer, bytes((0x2B, 0, 0, 0, 0x01, 0xF4, 0, 0, 0, 0)), clock=clock)
    assert r.ok and took == pytest.approx(0.05)             # half a move (estimate in smc.py)
    r = run(changer, bytes((0x2B, 0, 0, 0, 0x01, 0xF5, 0, 0, 0, 0)), clock=clock)
    assert sense(r) == (scsi.ILLEGAL_REQUEST, (0x21, 0x01)) and sks(r)[2] == 4
    r = run(changer, bytes((0x2B, 0, 0, 0, 0x01, 0xF4, 0, 0, 1, 0)), clock=clock)
    assert sense(r) == (scsi.ILLEGAL_REQUEST, (0x24, 0x00)) and sks(r)[2] == 8


def test_prevent_allow_medium_removal(lab):
    changer = lab[0]
    assert run(changer, b'\x1e\x00\x00\x00\x01\x00').ok and changer.prevent_removal
    assert run(changer, b'\x1e\x00\x00\x00\x00\x00').ok and not changer.prevent_removal
    r = run(changer, b'\x1e\x00\x00\x00\x02\x00')
    assert sense(r) == (scsi.ILLEGAL_REQUEST, (0x24, 0x00)) and sks(r)[2] == 4


# ----------------------------------------------------------------------------- persistence and config

def test_layout_and_sources_survive_a_restart(lab):
    changer, drive, clock, tmp_path = lab
    assert run(changer, move_cdb(1001, 500), clock=clock).ok
    assert run(changer, move_cdb(1000, 1001), clock=clock).ok
    with open(tmp_path / 'library.json') as f:
        assert json.load(f) == {'slots': [None, 'MA1001L5', 'MA1003L5', 'MA1099L5'], 'drives': ['MA1002L5'],
                                'import_export': [None]}
    drive2 = StandInDrive()
    again = smc.Changer.from_config(dict(IDENTITY, slots=4, barcodes=BARCODES, cartridge_dir=str(tmp_path)),
                                    drives=[drive2], clock=clock)
    assert drive2.loaded.barcode == 'MA1002L5'
    pages = parse_res(run(again, res_cdb(4)).data).pages
    assert pages[0][4][0][9] & 0x80 and pages[0][4][0][10:12] == (1001).to_bytes(2, 'big')


@pytest.mark.parametrize('change, message', [
    ({'colour': 'red'}, 'unknown changer config key'),
    ({'vendor': 'STORAGETEK'}, 'at most 8'),
    ({'serial': None}, 'non-empty string'),
    ({'barcodes': ['MA1001L5', 'MA1001L5']}, 'twice'),
    ({'barcodes': ['MA 1001']}, 'without spaces'),
    ({'barcodes': ['A', 'B', 'C', 'D', 'E']}, 'at most 4'),
    ({'slots': 0}, 'slots must be'),
    ({'addresses': {'slots': 500}}, 'overlap'),
    ({'addresses': {'slots': 65534}}, '16-bit'),
    ({'addresses': {'robot': 1}}, 'keys among'),
    ({'mechanics': {'move_s': -1}}, 'move_s must be'),
    ({'mechanics': {'load_s': float('nan')}}, 'load_s must be'),
    ({'mechanics_scale': float('inf')}, 'mechanics_scale'),
    ({'drive_luns': [8]}, 'LUNs 0-7'),
    ({'mechanics': {'travel_s': 1}}, 'keys among'),
    ({'mechanics_scale': 'fast'}, 'mechanics_scale'),
    ({'cartridge_dir': '/nonexistent/x'}, 'not a directory'),
    ({'barcodes': ['ZZ0001L5']}, 'Cartridge.create'),
])
def test_config_errors_say_what_to_change(tmp_path, change, message):
    for code in BARCODES:
        Cartridge.create(str(tmp_path / ('%s.cart' % code)), code)
    config = dict(IDENTITY, slots=4, barcodes=BARCODES, cartridge_dir=str(tmp_path))
    config.update(change)
    with pytest.raises(smc.ChangerConfigError, match=message):
        smc.Changer.from_config(config, drives=[StandInDrive()])


def test_from_json(tmp_path):
    Cartridge.create(str(tmp_path / 'AA0001L5.cart'), 'AA0001L5')
    path = tmp_path / 'changer.json'
    path.write_text(json.dumps(dict(IDENTITY, slots=2, barcodes=['AA0001L5'], cartridge_dir=str(tmp_path),
                                    addresses={'slots': 4096, 'drives': 256, 'import_export': 32, 'transport': 0})))
    changer = smc.Changer.from_json(str(path), drives=[StandInDrive()])
    first, count, _total, pages = parse_res(run(changer, res_cdb()).data)
    assert (first, count) == (0, 5) and [p[0] for p in pages] == [1, 3, 4, 2]
    path.write_text('{not json')
    with pytest.raises(smc.ChangerConfigError, match='not valid JSON'):
        smc.Changer.from_json(str(path), drives=[StandInDrive()])


def test_identity_must_be_a_mapping(lab):
    with pytest.raises(smc.ChangerConfigError, match='identity must be a mapping'):
        smc.Changer(lab[0].library, ['STK', 'L700'])
    with pytest.raises(smc.ChangerConfigError, match='mechanics must be a mapping'):
        smc.Changer(lab[0].library, IDENTITY, mechanics=[10.0])


def test_library_without_drive_or_slot_is_refused(tmp_path):
    with pytest.raises(smc.ChangerConfigError, match='no drive'):
        smc.Changer(Library(str(tmp_path), [None], [], []), IDENTITY)
    with pytest.raises(smc.ChangerConfigError, match='no slot'):
        smc.Changer(Library(str(tmp_path), [], [StandInDrive()], []), IDENTITY)


# ----------------------------------------------------------------------------- the real tools, through the sg shim

needs_mtx = pytest.mark.skipif(not shutil.which('mtx'), reason='mtx not installed (apt-get install mtx)')
needs_sg3 = pytest.mark.skipif(not shutil.which('sg_inq'), reason='sg3_utils not installed (apt-get install sg3-utils)')


@pytest.fixture
def served(lab, tmp_path_factory):
    """The lab changer behind the sg shim; yields a function running a tool on it."""
    if not (shutil.which('gcc') or shutil.which('cc')):
        pytest.skip('no C compiler for the sg shim (apt-get install gcc libc6-dev)')
    changer, drive, clock = lab[:3]
    shim_dir = tmp_path_factory.getbasetemp() / 'sgshim'
    so = sgshim.build(str(shim_dir))
    sock_dir = tmp_path_factory.mktemp('sock')
    dev = str(sock_dir / 'sg-changer')
    server = sgshim.serve(changer, str(sock_dir / 's'), clock=clock, sleep=clock.sleep)

    def tool(*args, ptype=8):
        argv = [a if a != 'DEV' else dev for a in args]
        proc = subprocess.run(argv, env=server.env(so, dev, ptype=ptype), capture_output=True, text=True,
                              timeout=60, check=False)
        return proc

    tool.dev = dev
    tool.server = server
    tool.changer, tool.drive, tool.clock = changer, drive, clock
    yield tool
    server.close()


def mtx(tool, *args):
    return tool('mtx', '-f', 'DEV', *args)


@needs_mtx
def test_mtx_status_parsed_by_the_collection(served):
    proc = mtx(served, 'status')
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == '  Storage Changer %s:1 Drives, 5 Slots ( 1 Import/Export )' % served.dev
    assert lines[1] == 'Data Transfer Element 0:Empty'
    # Volume tags padded with spaces to 32 characters, as real libraries print them
    # (tests/unit/fixtures: IBM 33614LX, Quantum SuperLoader 3).
    assert lines[2] == '      Storage Element 1:Full :VolumeTag=MA1001L5' + ' ' * 24
    assert lines[6] == '      Storage Element 5 IMPORT/EXPORT:Empty'
    status = parse_mtx_status(proc.stdout)
    assert status['complete'] and status['error'] is None
    assert (status['drives_count'], status['slots_count'], status['import_export_count']) == (1, 5, 1)
    assert [(s['element'], s['full'], s['barcode'], s['import_export']) for s in status['slots']] == [
        (1, True, 'MA1001L5', False), (2, True, 'MA1002L5', False), (3, True, 'MA1003L5', False),
        (4, True, 'MA1099L5', False), (5, False, None, True)]
    assert status['drives'] == [{'element': 0, 'full': False, 'source_element': None, 'barcode': None}]


@needs_mtx
def test_mtx_load_unload_transfer(served):
    proc = mtx(served, 'load', '2', '0')
    assert proc.returncode == 0 and 'Loading media from Storage Element 2 into drive 0...done' in proc.stdout
    assert served.drive.loaded.barcode == 'MA1002L5'
    assert served.clock.now == pytest.approx(1000.0 + 0.22)   # the robot and the load took their (scaled) time
    status = parse_mtx_status(mtx(served, 'status').stdout)
    assert status['drives'] == [{'element': 0, 'full': True, 'source_element': 2, 'barcode': 'MA1002L5'}]
    assert not status['slots'][1]['full']
    proc = mtx(served, 'transfer', '4', '5')                 # the data cartridge to the import/export slot
    assert proc.returncode == 0, proc.stderr
    proc = mtx(served, 'unload')                             # back where it came from (the drive's source)
    assert proc.returncode == 0 and 'Unloading drive 0 into Storage Element 2...done' in proc.stdout
    status = parse_mtx_status(mtx(served, 'status').stdout)
    assert [(s['full'], s['barcode']) for s in status['slots']] == [
        (True, 'MA1001L5'), (True, 'MA1002L5'), (True, 'MA1003L5'), (False, None), (True, 'MA1099L5')]
    assert served.changer.library.layout()['import_export'] == ['MA1099L5']


@needs_mtx
def test_mtx_output_fits_the_lab_integration_tests(served):
    """The patterns tests/integration/test_lab.py reads mtx with (written against tgt's changer)."""
    assert mtx(served, 'load', '1', '0').returncode == 0
    out = mtx(served, 'status').stdout
    tags = re.findall(r'VolumeTag\s*=\s*([A-Z0-9]+)\s*$', out, re.M)
    assert sorted(tags) == sorted(BARCODES)
    loaded = re.search(r'Data Transfer Element 0:Full \(Storage Element (\d+) Loaded\):VolumeTag\s*=\s*(\S+)', out)
    assert loaded.groups() == ('1', 'MA1001L5')
    assert re.search(r'Storage Element (\d+):Full :VolumeTag=%s' % 'MA1099L5', out).group(1) == '4'
    script = 'unload 1 0 load 4 0 unload 4 0 load 1 0'.split()   # the data-cartridge test's sequence, one mtx run
    proc = mtx(served, *script)
    assert proc.returncode == 0, proc.stderr
    assert served.drive.loaded.barcode == 'MA1001L5'
    assert served.drive.events == [('load', 'MA1001L5'), ('unload', 'MA1001L5'), ('load', 'MA1099L5'),
                                   ('unload', 'MA1099L5'), ('load', 'MA1001L5')]


@needs_mtx
def test_mtx_prints_our_sense_as_its_errors(served):
    proc = mtx(served, 'transfer', '1', '2')
    assert proc.returncode == 1 and 'Destination Element Address 1001 is Already Full' in proc.stderr
    proc = mtx(served, 'transfer', '5', '1')
    assert proc.returncode == 1 and 'Source Element Address 10 is Empty' in proc.stderr


@needs_mtx
def test_mtx_all_elements_walk(served):
    """``mtx altres``: READ ELEMENT STATUS of all types, re-asked from the next address
    until INVALID ELEMENT ADDRESS; multi-page answers are parsed as one status."""
    assert mtx(served, 'load', '1').returncode == 0
    proc = mtx(served, 'altres', 'status')
    assert proc.returncode == 0, proc.stderr
    status = parse_mtx_status(proc.stdout)
    assert status['complete'] and status['drives'][0]['barcode'] == 'MA1001L5'
    assert status['drives'][0]['source_element'] == 1
    all_types = [cdb for cdb, _result in served.server.log if cdb[0] == 0xB8 and cdb[1] & 0x0F == 0]
    assert all_types and served.server.log[-1][1].asc_ascq == (0x21, 0x01)


@needs_mtx
def test_mtx_inquiry_and_inventory(served):
    proc = mtx(served, 'inquiry')
    assert proc.stdout.splitlines() == ["Product Type: Medium Changer", "Vendor ID: 'STK     '",
                                        "Product ID: 'L700            '", "Revision: '0107'",
                                        'Attached Changer API: No']
    start = served.clock.now
    assert mtx(served, 'inventory').returncode == 0
    assert served.clock.now - start == pytest.approx(5 * 5.0 * 0.01)


@needs_sg3
def test_sg3_utils_decode_our_pages(served):
    proc = served('sg_inq', 'DEV')
    assert proc.returncode == 0, proc.stderr
    assert 'PDT=8' in proc.stdout and 'medium changer' in proc.stdout and 'Unit serial number: L700-1111' in proc.stdout
    proc = served('sg_vpd', '--page=di', 'DEV')
    assert 'T10 vendor identification' in proc.stdout and 'vendor id: STK' in proc.stdout
    proc = served('sg_modes', '--page=0x1d', 'DEV')
    assert proc.returncode == 0 and 'Element address assignment' in proc.stdout
    assert '1d 12 00 01 00 01 03 e8  00 04 00 0a 00 01 01 f4' in proc.stdout
