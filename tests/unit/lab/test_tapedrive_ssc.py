# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's emulated LTO drive (lab/tapedrive/ssc.py): CDB in, bytes out, on a fake clock.

Every command st, mt-st, sg3_utils and the collection send is checked on its
bytes (SSC-3/SPC-4 layouts), then the real sg3_utils tools (sg_inq,
sg_read_block_limits, sg_modes, sg_rep_density, sg_logs) run against the
drive without a guest through the sg shim (lab/tapedrive/sgshim.c), and the
collection's own parsers read what they print.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _scsi_inquiry

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, 'lab'))

from tapedrive import scsi, sgshim, ssc  # noqa: E402  pylint: disable=wrong-import-position
from tapedrive.media import Cartridge  # noqa: E402  pylint: disable=wrong-import-position
from tapedrive.physics import MB  # noqa: E402  pylint: disable=wrong-import-position

IDENTITY = {'vendor': 'IBM', 'product': 'ULT3580-TD5', 'rev': 'G350', 'serial': '1068001001'}
PROFILE = {'generation': 5, 'native_mb_s': 14.0, 'speed_steps_mb_s': [14.0, 12.25, 10.5, 8.75, 7.0],
           'buffer_mb': 25.6, 'backhitch_s': 3.0, 'load_s': 0.24, 'unload_s': 0.34, 'rewind_s': 1.1,
           'locate_s': 0.9, 'density_code': 0x58}


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t

    def sleep(self, seconds):
        self.t += max(0.0, seconds)


def run(drive, clock, cdb, data=b''):
    """Execute ``cdb``; a Pending result is polled on the fake clock until done."""
    result = drive.execute(bytes(cdb), data)
    while isinstance(result, scsi.Pending):
        due = result.poll(clock.t)
        if isinstance(due, scsi.Result):
            return due
        clock.t = max(clock.t, due)
    return result


def cdb6(op, b1=0, length=0, b5=0):
    return bytes((op, b1)) + length.to_bytes(3, 'big') + bytes((b5,))


def write(drive, clock, data, fixed=False):
    count = len(data) // drive.block_size if fixed else len(data)
    return run(drive, clock, cdb6(0x0A, 1 if fixed else 0, count), data)


def read(drive, clock, length, fixed=False, sili=False):
    return run(drive, clock, cdb6(0x08, (1 if fixed else 0) | (2 if sili else 0), length))


def weof(drive, clock, count=1, immed=False):
    return run(drive, clock, cdb6(0x10, 1 if immed else 0, count))


def rewind(drive, clock):
    return run(drive, clock, bytes(6) and bytes((0x01, 0, 0, 0, 0, 0)))


def sense(result):
    return (result.sense_key, result.asc_ascq)


def info(result):
    return int.from_bytes(result.sense[3:7], 'big', signed=True)


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def cart(tmp_path):
    c = Cartridge.create(str(tmp_path / 'MA1001L5.cart'), 'MA1001L5', generation=5, density_code=0x58,
                         capacity_bytes=400 * MB)
    yield c
    c.close()


@pytest.fixture
def empty(clock):
    return ssc.Drive(IDENTITY, PROFILE, clock)


@pytest.fixture
def drive(empty, cart, clock):
    empty.load_cartridge(cart)
    ua = run(empty, clock, bytes(6))
    assert sense(ua) == (scsi.UNIT_ATTENTION, (0x28, 0x00))   # new cartridge: reported once
    return empty


# ----------------------------------------------------------------------------- SPC: identity, readiness

def test_inquiry_standard_and_vpd(empty, clock):
    std = run(empty, clock, bytes((0x12, 0, 0, 0, 96, 0)))
    assert std.ok and len(std.data) == 96
    assert std.data[0] == 0x01 and std.data[1] & 0x80            # sequential access, removable
    assert std.data[8:16] == b'IBM     ' and std.data[16:32] == b'ULT3580-TD5     ' and std.data[32:36] == b'G350'
    assert run(empty, clock, bytes((0x12, 0, 0, 0, 36, 0))).data == std.data[:36]   # allocation length
    pages = run(empty, clock, bytes((0x12, 1, 0x00, 0, 255, 0))).data
    assert pages == bytes((1, 0, 0, 3, 0x00, 0x80, 0x83))
    serial = run(empty, clock, bytes((0x12, 1, 0x80, 0, 255, 0))).data
    assert serial == bytes((1, 0x80, 0, 10)) + b'1068001001'
    devid = run(empty, clock, bytes((0x12, 1, 0x83, 0, 255, 0))).data
    assert devid[1] == 0x83 and b'IBM     ULT3580-TD5     1068001001' in devid
    bad = run(empty, clock, bytes((0x12, 1, 0xC7, 0, 255, 0)))
    assert sense(bad) == (scsi.ILLEGAL_REQUEST, (0x24, 0x00))


def test_no_cartridge_is_not_ready_but_identity_and_logs_answer(empty, clock):
    assert sense(run(empty, clock, bytes(6))) == (scsi.NOT_READY, (0x3A, 0x00))
    assert sense(read(empty, clock, 512)) == (scsi.NOT_READY, (0x3A, 0x00))
    assert run(empty, clock, bytes((0x05, 0, 0, 0, 0, 0))).ok
    assert run(empty, clock, bytes((0x4D, 0, 0x00, 0, 0, 0, 0, 0x10, 0, 0))).ok
    rs = run(empty, clock, bytes((0x03, 0, 0, 0, 18, 0)))
    assert rs.ok and rs.data[2] == scsi.NOT_READY and rs.data[12] == 0x3A


def test_unit_attention_after_load_then_ready(drive, clock):
    assert run(drive, clock, bytes(6)).ok
    rs = run(drive, clock, bytes((0x03, 0, 0, 0, 18, 0)))
    assert rs.ok and rs.data[2] & 0x0F == scsi.NO_SENSE


def test_unknown_opcode_is_illegal_request(drive, clock):
    for op in (0xC5, 0x28, 0x2A, 0x3C, 0x8D):
        assert sense(run(drive, clock, bytes((op,)) + bytes(9))) == (scsi.ILLEGAL_REQUEST, (0x20, 0x00))


def test_read_block_limits(drive, clock):
    res = run(drive, clock, bytes((0x05, 0, 0, 0, 0, 0)))
    assert res.data == bytes((0x00, 0x10, 0x00, 0x00, 0x00, 0x01))   # granularity 0, max 1 MiB, min 1
    assert _scsi_inquiry.decode_read_block_limits(res.data) == {'granularity': 0, 'max': 1048576, 'min': 1}


# ----------------------------------------------------------------------------- MODE SENSE / SELECT

def test_mode_sense6_header_and_block_descriptor(drive, clock):
    res = run(drive, clock, bytes((0x1A, 0, 0x00, 0, 12, 0)))
    assert res.data == bytes((11, 0, 0x10, 8, 0x58, 0, 0, 0, 0, 0, 0, 0))   # BufM=1, density 0x58, variable
    drive.loaded.write_protected = True
    assert run(drive, clock, bytes((0x1A, 0, 0x00, 0, 12, 0))).data[2] == 0x90   # WP


def test_mode_select_sets_fixed_block_size_and_compression(drive, clock):
    params = bytes((0, 0, 0x10, 8, 0x58, 0, 0, 0, 0, 0, 0x80, 0x00))      # block length 32768
    assert run(drive, clock, bytes((0x15, 0x10, 0, 0, len(params), 0)), params).ok
    assert drive.block_size == 32768
    assert run(drive, clock, bytes((0x1A, 0, 0x00, 0, 12, 0))).data[9:12] == bytes((0, 0x80, 0))
    page = run(drive, clock, bytes((0x1A, 0x08, 0x0F, 0, 255, 0))).data
    assert page[4] == 0x0F and page[6] & 0x80 and page[6] & 0x40           # DCE, DCC
    off = bytes((0, 0, 0x10, 0)) + bytes((0x0F, 14, 0x40, 0x80)) + bytes(12)
    assert run(drive, clock, bytes((0x15, 0x10, 0, 0, len(off), 0)), off).ok
    assert drive.compression is False
    assert run(drive, clock, bytes((0x1A, 0x08, 0x0F, 0, 255, 0))).data[6] & 0x80 == 0
    bad = bytes((0, 0, 0x10, 8, 0x58, 0, 0, 0, 0, 0x20, 0, 0))            # 2 MiB block
    assert sense(run(drive, clock, bytes((0x15, 0x10, 0, 0, len(bad), 0)), bad))[0] == scsi.ILLEGAL_REQUEST


def test_mode_sense10_all_pages_and_saved_values(drive, clock):
    res = run(drive, clock, bytes((0x5A, 0, 0x3F, 0, 0, 0, 0, 0x04, 0, 0)))
    data = res.data
    assert int.from_bytes(data[0:2], 'big') == len(data) - 2
    assert int.from_bytes(data[6:8], 'big') == 8 and data[8] == 0x58
    codes = []
    off = 16
    while off < len(data):
        codes.append(data[off] & 0x3F)
        off += 2 + data[off + 1]
    assert codes == [0x01, 0x02, 0x0A, 0x0F, 0x10, 0x1C]
    assert sense(run(drive, clock, bytes((0x1A, 0, 0xC0 | 0x0F, 0, 255, 0))))[1] == (0x39, 0x00)


# ----------------------------------------------------------------------------- WRITE / READ

def test_variable_block_round_trip_filemark_and_eod(drive, clock):
    blocks = [os.urandom(1000), bytes(65536), os.urandom(262144)]
    for b in blocks:
        assert write(drive, clock, b).ok
    assert weof(drive, clock).ok
    assert write(drive, clock, b'tail').ok
    assert weof(drive, clock).ok
    assert rewind(drive, clock).ok
    for b in blocks:
        res = read(drive, clock, len(b))
        assert res.ok and res.data == b
    fm = read(drive, clock, 4096)
    assert fm.status == scsi.CHECK_CONDITION and fm.sense[2] & 0x80 and fm.data == b''   # FILEMARK
    assert fm.asc_ascq == (0x00, 0x01) and info(fm) == 4096
    assert read(drive, clock, 4).data == b'tail'
    assert read(drive, clock, 4).sense[2] & 0x80
    eod = read(drive, clock, 4096)
    assert sense(eod) == (scsi.BLANK_CHECK, (0x00, 0x05)) and info(eod) == 4096


def test_short_and_long_blocks_report_ili_with_the_residue(drive, clock):
    write(drive, clock, b'x' * 1000)
    write(drive, clock, b'y' * 1000)
    write(drive, clock, b'z' * 1000)
    rewind(drive, clock)
    short = read(drive, clock, 4000)          # block shorter than asked: ILI, residue +3000
    assert short.status == scsi.CHECK_CONDITION and short.sense[2] & 0x20 and info(short) == 3000
    assert short.data == b'x' * 1000 and short.read_len == 1000
    sili = read(drive, clock, 4000, sili=True)  # SILI: no check condition for a short block
    assert sili.ok and sili.data == b'y' * 1000 and sili.read_len == 1000
    long_ = read(drive, clock, 100)           # block longer than asked: ILI, negative residue (st: ENOMEM)
    assert long_.sense[2] & 0x20 and info(long_) == -900 and long_.data == b'z' * 100
    assert drive.pos == 3                     # the long block was passed


def test_fixed_block_mode(drive, clock):
    drive.block_size = 512
    data = os.urandom(512 * 4)
    assert write(drive, clock, data, fixed=True).ok
    assert weof(drive, clock).ok
    rewind(drive, clock)
    res = read(drive, clock, 3, fixed=True)
    assert res.ok and res.data == data[:1536]
    res = read(drive, clock, 3, fixed=True)   # one block left, then the file mark
    assert res.sense[2] & 0x80 and info(res) == 2 and res.data == data[1536:]
    assert sense(read(drive, clock, 1, fixed=False))[0] == scsi.ILLEGAL_REQUEST   # variable read in fixed mode


def test_write_protect_and_worm(drive, clock, tmp_path):
    drive.loaded.write_protected = True
    assert sense(write(drive, clock, b'a')) == (scsi.DATA_PROTECT, (0x27, 0x00))
    assert sense(weof(drive, clock)) == (scsi.DATA_PROTECT, (0x27, 0x00))
    drive.loaded.write_protected = False
    worm = Cartridge.create(str(tmp_path / 'W.cart'), 'MA1005LV', worm=True, capacity_bytes=10 * MB)
    drive.unload_cartridge()
    drive.load_cartridge(worm)
    run(drive, clock, bytes(6))
    assert write(drive, clock, b'first').ok and weof(drive, clock).ok    # appending is allowed
    rewind(drive, clock)
    assert sense(write(drive, clock, b'over')) == (scsi.DATA_PROTECT, (0x30, 0x0C))
    page = run(drive, clock, bytes((0x4D, 0, 0x57, 0, 0, 0, 0, 0x04, 0, 0))).data
    assert page.endswith(bytes((0, 0x81, 0x03, 1, 1)))                   # volume statistics: WORM 1
    worm.close()


def test_older_generation_media_is_read_only(drive, clock, tmp_path):
    old = Cartridge.create(str(tmp_path / 'O.cart'), 'OLD003L3', generation=3, density_code=0x44,
                           capacity_bytes=10 * MB)
    drive.unload_cartridge()
    drive.load_cartridge(old)
    run(drive, clock, bytes(6))
    assert sense(write(drive, clock, b'a')) == (scsi.DATA_PROTECT, (0x30, 0x05))
    old.close()


def test_early_warning_and_end_of_medium(drive, clock, tmp_path):
    small = Cartridge.create(str(tmp_path / 'S.cart'), 'SMALL1L5', capacity_bytes=1_000_000)
    drive.unload_cartridge()
    drive.load_cartridge(small)
    run(drive, clock, bytes(6))
    block = os.urandom(100_000)
    results = [write(drive, clock, block) for _i in range(11)]
    assert all(r.ok for r in results[:9])
    assert results[9].status == scsi.CHECK_CONDITION and results[9].sense[2] & 0x40      # EOM: early warning
    assert sense(results[9]) == (scsi.NO_SENSE, (0x00, 0x02))
    assert sense(results[10]) == (scsi.VOLUME_OVERFLOW, (0x00, 0x02))
    small.close()


# ----------------------------------------------------------------------------- positioning

def _tape_with_files(drive, clock):
    # file 0: 3 blocks, file 1: 2 blocks, file 2: 1 block; positions 0..8 (FMs at 3, 6, 8)
    for n in (3, 2, 1):
        for i in range(n):
            write(drive, clock, b'%d' % i * 10)
        weof(drive, clock)
    rewind(drive, clock)


def test_space_blocks_filemarks_and_eod(drive, clock):
    _tape_with_files(drive, clock)

    def space(code, count):
        return run(drive, clock, bytes((0x11, code)) + (count & 0xFFFFFF).to_bytes(3, 'big') + b'\0')
    assert space(0, 2).ok and drive.pos == 2
    res = space(0, 5)                          # hits the file mark after one block
    assert res.sense[2] & 0x80 and info(res) == 4 and drive.pos == 4
    assert space(1, 1).ok and drive.pos == 7
    res = space(1, 5)                          # EOD after one more file mark
    assert sense(res) == (scsi.BLANK_CHECK, (0x00, 0x05)) and info(res) == 4 and drive.pos == 9
    assert space(1, -2).ok and drive.pos == 6  # backwards: BOP side of the 2nd file mark back
    res = space(0, -3)                         # back over 2 blocks, then a file mark: its BOP side
    assert res.sense[2] & 0x80 and info(res) == 1 and drive.pos == 3
    res = space(1, -5)                         # to BOM
    assert res.sense[2] & 0x40 and res.asc_ascq == (0x00, 0x04) and drive.pos == 0
    assert space(3, 0).ok and drive.pos == 9   # end of data
    assert sense(space(2, 1))[0] == scsi.ILLEGAL_REQUEST   # sequential file marks: not in LTO


def test_read_position_and_locate(drive, clock):
    _tape_with_files(drive, clock)
    short = run(drive, clock, bytes((0x34, 0, 0, 0, 0, 0, 0, 0, 0, 0))).data
    assert len(short) == 20 and short[0] & 0x80 and short[4:8] == bytes(4)     # BOP, block 0
    assert run(drive, clock, bytes((0x2B, 0, 0, 0, 0, 0, 7, 0, 0, 0))).ok
    short = run(drive, clock, bytes((0x34, 1, 0, 0, 0, 0, 0, 0, 0, 0))).data
    assert short[0] & 0x80 == 0 and int.from_bytes(short[4:8], 'big') == 7
    long_ = run(drive, clock, bytes((0x34, 6, 0, 0, 0, 0, 0, 0, 0, 0))).data
    assert len(long_) == 32 and int.from_bytes(long_[8:16], 'big') == 7 and int.from_bytes(long_[16:24], 'big') == 2
    assert read(drive, clock, 10).data == b'0' * 10
    beyond = run(drive, clock, bytes((0x2B, 0, 0, 0, 0, 0, 50, 0, 0, 0)))
    assert sense(beyond) == (scsi.BLANK_CHECK, (0x00, 0x05)) and drive.pos == 9


def test_read_position_counts_the_blocks_still_in_the_buffer(drive, clock):
    for _i in range(4):
        write(drive, clock, os.urandom(1 * MB))       # 4 MB < 50 % of 25.6 MB: the drive has not started
    short = run(drive, clock, bytes((0x34, 0, 0, 0, 0, 0, 0, 0, 0, 0))).data
    assert int.from_bytes(short[13:16], 'big') == 4
    assert int.from_bytes(short[16:20], 'big') == pytest.approx(4 * MB, abs=64)


def test_erase_truncates_from_the_position(drive, clock):
    _tape_with_files(drive, clock)
    run(drive, clock, bytes((0x11, 1, 0, 0, 1, 0)))   # after the first file mark
    assert run(drive, clock, bytes((0x19, 0, 0, 0, 0, 0))).ok
    assert drive.loaded.eod == 4


def test_rewind_unload_load_and_prevent(drive, clock):
    write(drive, clock, b'abc')
    assert run(drive, clock, bytes((0x1E, 0, 0, 0, 1, 0))).ok        # PREVENT
    assert drive.removal_prevented
    assert sense(run(drive, clock, bytes((0x1B, 0, 0, 0, 0, 0))))[1] == (0x53, 0x02)
    run(drive, clock, bytes((0x1E, 0, 0, 0, 0, 0)))
    start = clock.t
    assert run(drive, clock, bytes((0x1B, 0, 0, 0, 0, 0))).ok         # UNLOAD: flush, rewind, unthread
    assert clock.t - start >= PROFILE['unload_s'] - 1e-9
    assert not drive.threaded and drive.loaded is not None           # still in the drive for the changer
    assert sense(run(drive, clock, bytes(6))) == (scsi.NOT_READY, (0x04, 0x02))
    assert run(drive, clock, bytes((0x1B, 0, 0, 0, 1, 0))).ok         # LOAD: threads again
    assert run(drive, clock, bytes(6)).ok and drive.pos == 0
    assert drive.unload_cartridge().barcode == 'MA1001L5' and drive.loaded is None


def test_immediate_rewind_returns_at_once_and_the_drive_is_busy(drive, clock):
    drive.loaded.write_block(0, b'x' * 100)
    drive.pos = 1
    res = drive.execute(bytes((0x01, 1, 0, 0, 0, 0)))
    assert isinstance(res, scsi.Result) and res.ok
    assert drive.pos == 0


# ----------------------------------------------------------------------------- file marks and physics

def test_sync_filemark_waits_for_the_buffer_drain_immediate_does_not(drive, clock):
    block = os.urandom(256 * 1024)
    for _i in range(100):                           # 26 MB at a fast host: the buffer is full
        assert write(drive, clock, block).ok
    drive.transport.advance(clock.t)
    level = drive.transport.level
    assert level > 0.75 * 25.6 * MB
    start = clock.t
    assert weof(drive, clock, immed=True).ok and clock.t == start   # immediate: no time at all
    assert weof(drive, clock).ok                                    # synchronous: drains the buffer
    took = clock.t - start
    # at the top step while above 25 %; once a tick sees it below 25 % with no host data
    # arriving, straight down to the floor (7 MB/s) for the rest
    assert level / (14 * MB) <= took + 1e-6 <= 0.75 * level / (14 * MB) + 0.25 * level / (7 * MB) + 1e-6
    assert drive.transport.level == 0
    assert drive.stats()['backhitches'] == 0
    for _i in range(60):                            # next data: a reposition before the tape moves
        write(drive, clock, block)
    assert drive.stats()['backhitches'] == 1
    log34 = run(drive, clock, bytes((0x4D, 0, 0x74, 0, 0, 0, 0, 0x10, 0, 0))).data
    params = _params(log34)
    assert params[0x8000] == 1 and params[0x8001] == 1               # back-hitches, sync flushes


def test_slow_host_back_hitches_and_the_log_page_counts_them(drive, clock):
    block = os.urandom(256 * 1024)
    # 3 MB/s into a 25.6 MB buffer, floor 7 MB/s, 3 s back-hitch: start at 12.8 MB (4.27 s),
    # dry 12.8 / 4 = 3.2 s later; refill to 12.8 MB takes 4.27 s from the stop: a cycle of 7.47 s.
    for _i in range(int(56 * 3 * MB / len(block))):
        assert write(drive, clock, block).ok
        clock.t += len(block) / (3 * MB)
    stats = drive.stats()
    assert stats['backhitches'] == 7                               # dry at 7.47 s, 14.9, ... 52.3 (< 56 s)
    params = _params(run(drive, clock, bytes((0x4D, 0, 0x74, 0, 0, 0, 0, 0x10, 0, 0))).data)
    assert params[0x8000] == 7
    written_mb = stats['tape_bytes_written'] / MB
    assert params[0x0000] == round(7 * 100 / written_mb)          # HP: repositions per 100 MB
    assert params[0x0004] == 140                                   # native 14 MB/s in 100 KB/s units
    assert params[0x0003] == pytest.approx(30, abs=1)              # current rate 3 MB/s (100 KB/s units)


def _params(page):
    out = {}
    off = 4
    end = 4 + int.from_bytes(page[2:4], 'big')
    while off < end:
        code = int.from_bytes(page[off:off + 2], 'big')
        n = page[off + 3]
        out[code] = int.from_bytes(page[off + 4:off + 4 + n], 'big')
        off += 4 + n
    return out


# ----------------------------------------------------------------------------- log pages, density

def test_log_sense_supported_pages_and_errors(drive, clock):
    res = run(drive, clock, bytes((0x4D, 0, 0x00, 0, 0, 0, 0, 0x01, 0, 0)))
    assert res.data == bytes((0, 0, 0, 10, 0x00, 0x02, 0x03, 0x0C, 0x14, 0x17, 0x1B, 0x2E, 0x32, 0x34))
    sub = run(drive, clock, bytes((0x4D, 0, 0x00, 0xFF, 0, 0, 0, 0x01, 0, 0))).data
    assert sub[:2] == bytes((0x40, 0xFF)) and bytes((0x34, 0)) in sub
    assert sense(run(drive, clock, bytes((0x4D, 0, 0x31, 0, 0, 0, 0, 0x01, 0, 0))))[0] == scsi.ILLEGAL_REQUEST
    assert len(run(drive, clock, bytes((0x4D, 0, 0x2E, 0, 0, 0, 0, 0x10, 0, 0))).data) == 4 + 64 * 5


def test_log_pages_count_host_and_tape_bytes_and_log_select_resets(drive, clock):
    write(drive, clock, bytes(1 * MB))             # zeros: a few KB on tape
    write(drive, clock, os.urandom(1 * MB))        # random: stored as is
    weof(drive, clock)
    seq = _params(run(drive, clock, bytes((0x4D, 0, 0x4C, 0, 0, 0, 0, 0x10, 0, 0))).data)
    assert seq[0] == 2 * MB                         # received with WRITE
    assert MB < seq[1] < 1.1 * MB                   # written to media (compressed)
    comp = _params(run(drive, clock, bytes((0x4D, 0, 0x72, 0, 0, 0, 0, 0x10, 0, 0))).data)
    assert comp[6] == 2 and comp[7] == 0            # MB + bytes transferred from the host
    assert comp[8] == seq[1] // MB and comp[9] == seq[1] % MB
    assert 180 < comp[1] < 200                       # write compression ratio x100
    assert run(drive, clock, bytes((0x4C, 0x02, 0xC0, 0, 0, 0, 0, 0, 0, 0))).ok   # LOG SELECT, PCR
    assert _params(run(drive, clock, bytes((0x4D, 0, 0x4C, 0, 0, 0, 0, 0x10, 0, 0))).data)[0] == 0


def test_report_density_support(drive, clock):
    res = run(drive, clock, bytes((0x44, 0, 0, 0, 0, 0, 0, 0x10, 0, 0)))
    data = res.data
    assert int.from_bytes(data[0:2], 'big') == len(data) - 2
    descs = [data[4 + 52 * i:4 + 52 * (i + 1)] for i in range((len(data) - 4) // 52)]
    assert [(d[0], bool(d[2] & 0x80)) for d in descs] == [(0x58, True), (0x46, True), (0x44, False)]
    assert descs[0][2] & 0x20                        # default density
    media = run(drive, clock, bytes((0x44, 1, 0, 0, 0, 0, 0, 0x10, 0, 0))).data
    assert len(media) == 4 + 52 and media[4] == 0x58


def test_model_identity_strings():
    assert ssc.model_identity('IBM', 5) == ('IBM', 'ULT3580-TD5')
    assert ssc.model_identity('IBM', 9, 'HH') == ('IBM', 'ULT3580-HH9')
    assert ssc.model_identity('IBM', 10) == ('IBM', 'ULT3580-TDA')
    assert ssc.model_identity('HPE', 6) == ('HP', 'Ultrium 6-SCSI')
    assert ssc.model_identity('Quantum', 8) == ('QUANTUM', 'ULTRIUM-HH8')


# ----------------------------------------------------------------------------- the real tools, through the sg shim

needs_sg3 = pytest.mark.skipif(not shutil.which('sg_logs'), reason='sg3_utils not installed (apt-get install sg3-utils)')


@pytest.fixture
def tool(drive, clock, tmp_path_factory):
    if not (shutil.which('gcc') or shutil.which('cc')):
        pytest.skip('no C compiler for the sg shim (apt-get install gcc libc6-dev)')
    so = sgshim.build(str(tmp_path_factory.getbasetemp() / 'sgshim'))
    sock_dir = tmp_path_factory.mktemp('sock')
    dev = str(sock_dir / 'sg-drive')
    server = sgshim.serve(drive, str(sock_dir / 's'), clock=clock, sleep=clock.sleep)

    def run_tool(*args):
        argv = [a if a != 'DEV' else dev for a in args]
        return subprocess.run(argv, env=server.env(so, dev, ptype=1), capture_output=True, text=True, timeout=60,
                              check=False)
    yield run_tool
    server.close()


@needs_sg3
def test_sg_inq_and_block_limits_as_the_collection_reads_them(tool):
    inq = tool('sg_inq', 'DEV')
    assert inq.returncode == 0, inq.stderr
    parsed = _scsi_inquiry.parse_sg_inq(inq.stdout)
    assert (parsed['vendor'], parsed['product'], parsed['revision']) == ('IBM', 'ULT3580-TD5', 'G350')
    assert 'Peripheral device type: tape' in inq.stdout
    serial = tool('sg_inq', '-p', '0x80', 'DEV')
    assert _scsi_inquiry.parse_sg_inq(serial.stdout)['serial'] == '1068001001'
    limits = tool('sg_read_block_limits', '-H', 'DEV')
    assert limits.returncode == 0, limits.stderr
    data = _scsi_inquiry.parse_hex_bytes(limits.stdout)
    assert _scsi_inquiry.decode_read_block_limits(data) == {'granularity': 0, 'max': 1048576, 'min': 1}


@needs_sg3
def test_sg_modes_decodes_the_pages(tool):
    modes = tool('sg_modes', '-a', 'DEV')
    assert modes.returncode == 0, modes.stderr
    assert '>> Data Compression' in modes.stdout and '>> Device configuration' in modes.stdout
    assert 'Density code=0x58' in modes.stdout


@needs_sg3
def test_sg_logs_decodes_every_standard_page(tool):
    out = tool('sg_logs', '-a', 'DEV')
    assert out.returncode == 0, out.stderr
    text = out.stdout
    for title in ('Supported log pages', 'Sequential access device page', 'Device statistics page',
                  'Volume statistics page', 'Data compression page  (ssc-4)', 'Tape alert page',
                  'Data compression page  (LTO-5 specific)', 'Write error counter page'):
        assert title in text, text
    assert 'Unable to decode page = 0x34' in text
    assert 'Volume serial number: MA1001L5' in text and 'WORM: 0' in text
