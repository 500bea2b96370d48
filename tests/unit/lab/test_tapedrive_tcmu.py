# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The TCMU ring handling of lab/tapedrive/tcmu.py, on a mailbox in a file.

The mailbox, command entries and iovecs are laid out as the kernel lays them
out (uapi linux/target_core_user.h, offsets in tcmu.py); the test plays the
kernel's part: it queues entries, moves cmd_head, and reads the responses
where the kernel reads them (the entry at the old cmd_tail).
"""

from __future__ import annotations

import os
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, 'lab'))

from tapedrive import scsi, tcmu  # noqa: E402  pylint: disable=wrong-import-position

CMDR_OFF = 4096
CMDR_SIZE = 8192
DATA_OFF = CMDR_OFF + CMDR_SIZE
SIZE = DATA_OFF + 65536


class Kernel:
    """The kernel's side of one ring, in a file the Ring maps."""

    def __init__(self, path):
        self.path = path
        with open(path, 'wb') as f:
            f.write(bytes(SIZE))
        self.f = open(path, 'r+b', buffering=0)  # pylint: disable=consider-using-with
        self.put(4, struct.pack('<II', CMDR_OFF, CMDR_SIZE))
        self.head = 0
        self.data = DATA_OFF

    def put(self, off, raw):
        self.f.seek(off)
        self.f.write(raw)
        self.f.flush()

    def get(self, off, n):
        self.f.seek(off)
        return self.f.read(n)

    def queue(self, cmd_id, cdb, data_len=0, data_out=b'', pad=0):
        if pad:
            self.put(CMDR_OFF + self.head, struct.pack('<I', pad | tcmu.OP_PAD))
            self.head += pad
        cdb_off = self.data
        self.put(cdb_off, cdb.ljust(16, b'\0'))
        self.data += 16
        base = self.data
        if data_out:
            self.put(base, data_out)
            data_len = len(data_out)
        self.data += max(data_len, 1)
        # two iovecs, as the kernel splits a transfer over its data pages
        half = data_len // 2
        iovs = [(base, half), (base + half, data_len - half)] if data_len else []
        # the kernel makes every command entry at least sizeof(struct tcmu_cmd_entry) (112 bytes):
        # the response written in place must fit
        length = max(48 + 16 * max(1, len(iovs)), 112)
        length = (length + 7) & ~7
        entry = struct.pack('<IHBBIII', length | tcmu.OP_CMD, cmd_id, 0, 0, len(iovs), 0, 0)
        entry = entry.ljust(24, b'\0') + struct.pack('<Q', cdb_off)
        entry = entry.ljust(48, b'\0') + b''.join(struct.pack('<QQ', b, n) for b, n in iovs)
        self.put(CMDR_OFF + self.head, entry.ljust(length, b'\0'))
        start = self.head
        self.head += length
        self.put(12, struct.pack('<I', self.head))
        return start, iovs

    def tail(self):
        return struct.unpack('<I', self.get(64, 4))[0]

    def response(self, slot):
        raw = self.get(CMDR_OFF + slot, 112)
        cmd_id, = struct.unpack_from('<H', raw, 4)
        return {'cmd_id': cmd_id, 'uflags': raw[7], 'status': raw[8],
                'read_len': struct.unpack_from('<I', raw, 12)[0], 'sense': raw[16:16 + 18]}


def test_fetch_gathers_data_out_and_complete_scatters_data_in(tmp_path):
    k = Kernel(str(tmp_path / 'uio'))
    ring = tcmu.Ring(k.path, SIZE, 'tape0')
    slot_w, _iovs = k.queue(7, bytes((0x0A, 0, 0, 0, 8, 0)), data_out=b'ABCDEFGH')
    slot_r, iovs = k.queue(8, bytes((0x08, 0, 0, 0, 8, 0)), data_len=8)
    cmds = ring.fetch(0.0)
    assert [(c.cmd_id, c.cdb[0], c.data_out) for c in cmds] == [(7, 0x0A, b'ABCDEFGH'), (8, 0x08, b'')]
    assert len(cmds[0].cdb) == 6 and len(cmds[1].iovs) == 2
    ring.complete(cmds[0], scsi.good())
    ring.complete(cmds[1], scsi.Result(scsi.GOOD, b'hello', read_len=5))
    assert k.tail() == k.head
    assert k.response(slot_w)['cmd_id'] == 7 and k.response(slot_w)['status'] == 0
    rsp = k.response(slot_r)
    assert (rsp['cmd_id'], rsp['uflags'], rsp['read_len']) == (8, tcmu.UFLAG_READ_LEN, 5)
    assert k.get(iovs[0][0], 4) == b'hell' and k.get(iovs[1][0], 1) == b'o'
    ring.close()


def test_check_condition_carries_sense_and_pad_entries_are_skipped(tmp_path):
    k = Kernel(str(tmp_path / 'uio'))
    ring = tcmu.Ring(k.path, SIZE, 'tape0')
    slot, _iovs = k.queue(3, bytes((0xC5,)) + bytes(5), pad=64)
    cmds = ring.fetch(0.0)
    assert [c.cmd_id for c in cmds] == [3]
    ring.complete(cmds[0], scsi.invalid_opcode())
    rsp = k.response(slot)
    assert rsp['status'] == scsi.CHECK_CONDITION and rsp['sense'][2] == scsi.ILLEGAL_REQUEST
    assert rsp['sense'][12:14] == b'\x20\x00'
    assert slot == 64 and k.tail() == k.head == slot + 112


def test_out_of_order_completion_uses_the_slot_at_the_tail(tmp_path):
    """A command that completes first is answered in the oldest slot, with its own id (as tcmu-runner does)."""
    k = Kernel(str(tmp_path / 'uio'))
    ring = tcmu.Ring(k.path, SIZE, 'tape0')
    slot_a, _iovs = k.queue(1, bytes((0x10, 0, 0, 0, 1, 0)))
    slot_b, _iovs = k.queue(2, bytes(6))
    a, b = ring.fetch(0.0)
    ring.complete(b, scsi.good())
    assert k.response(slot_a)['cmd_id'] == 2
    ring.complete(a, scsi.good())
    assert k.response(slot_b)['cmd_id'] == 1 and k.tail() == k.head


class SlowDevice:
    """A device whose WRITE FILEMARKS takes 2 s (a Pending), everything else at once."""

    def __init__(self):
        self.seen = []

    def execute(self, cdb, data_out=b''):
        self.seen.append(cdb[0])
        if cdb[0] == 0x10:
            return scsi.complete_at(2.0, scsi.good())
        if cdb[0] == 0xFF:
            raise RuntimeError('boom')
        return scsi.good()


def test_lun_keeps_order_while_a_command_is_in_flight_and_survives_an_exception(tmp_path):
    k = Kernel(str(tmp_path / 'uio'))
    ring = tcmu.Ring(k.path, SIZE, 'tape0')
    logs = []
    lun = tcmu.Lun('tape0', ring, SlowDevice(), log=logs.append)
    k.queue(1, bytes((0x10, 0, 0, 0, 1, 0)))
    k.queue(2, bytes(6))
    slot_c, _iovs = k.queue(3, bytes((0xFF,)) + bytes(5))
    lun.queue.extend(ring.fetch(0.0))
    assert lun.step(0.0) == 0 and lun.wake == 2.0          # the file mark holds the queue
    assert lun.device.seen == [0x10]
    assert lun.step(2.0) == 3                             # then everything completes, in order
    assert lun.device.seen == [0x10, 0x00, 0xFF]
    rsp = k.response(slot_c)
    assert rsp['status'] == scsi.CHECK_CONDITION and rsp['sense'][2] == scsi.HARDWARE_ERROR
    assert 'boom' in logs[0]
