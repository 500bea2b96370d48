# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""LIO TCMU ring handling and configfs setup for the lab's emulated devices.

Linux's ``target_core_user`` hands every SCSI command of a user backstore to
user space through a shared ring (uapi ``linux/target_core_user.h``), read
here through the backstore's uio device; ``tcm_loop`` exports the backstores
as LUNs of a local SCSI host, so the guest's own ``st``/``sg``/``ch`` drivers
bind to them. Offsets below were checked with a C compiler against the 6.1
uapi header (see the lab's TCMU notes):

    mailbox:   version u16 @0, flags u16 @2, cmdr_off u32 @4, cmdr_size u32 @8,
               cmd_head u32 @12, cmd_tail u32 @64
    entry:     len_op u32 @0 (length | op: 0 PAD, 1 CMD, 2 TMR), cmd_id u16 @4,
               kflags u8 @6, uflags u8 @7
    request:   iov_cnt u32 @8, iov_bidi_cnt @12, iov_dif_cnt @16, cdb_off u64 @24,
               iov[] @48 (base u64 = offset from the mailbox, len u64)
    response:  scsi_status u8 @8, read_len u32 @12, sense_buffer[96] @16

A response is written into the entry at ``cmd_tail`` (skipping PAD/TMR
entries) with the completed command's id, then ``cmd_tail`` advances and 4
bytes written to the uio fd tell the kernel; this is how tcmu-runner
completes commands out of order (the kernel finds the command by its id).
The entry does not say the data direction: it is derived from the opcode
(``scsi.DATA_OUT_OPCODES``). Data-in results always set TCMU_UFLAG_READ_LEN
with the bytes actually returned, so a short READ (ILI) or a CHECK CONDITION
that carries data reaches the initiator with the right residual.

``Server`` polls all rings of the guest (drives and changer: one process),
runs each LUN's commands in order, keeps a ``scsi.Pending`` command in flight
until its time has come, and serves the other LUNs meanwhile.
"""

from __future__ import annotations

import collections
import errno
import math
import mmap
import os
import select
import struct
import sys
import time
import traceback

from . import scsi

MB_CMDR_OFF = 4
MB_CMDR_SIZE = 8
MB_CMD_HEAD = 12
MB_CMD_TAIL = 64
ENT_LEN_OP = 0
ENT_CMD_ID = 4
ENT_UFLAGS = 7
REQ_IOV_CNT = 8
REQ_IOV_BIDI_CNT = 12
REQ_CDB_OFF = 24
REQ_IOV = 48
RSP_STATUS = 8
RSP_READ_LEN = 12
RSP_SENSE = 16
SENSE_MAX = 96
OP_MASK = 0x7
OP_PAD = 0
OP_CMD = 1
OP_TMR = 2
UFLAG_UNKNOWN_OP = 0x1
UFLAG_READ_LEN = 0x2

CONFIGFS = '/sys/kernel/config'
CORE = CONFIGFS + '/target/core'
LOOPBACK = CONFIGFS + '/target/loopback'

_U32 = struct.Struct('<I')
_U16 = struct.Struct('<H')
_U64 = struct.Struct('<Q')


class TcmuError(Exception):
    """configfs or ring trouble; the message says what to check."""


class Command:
    __slots__ = ('cmd_id', 'cdb', 'iovs', 'data_out', 'received')

    def __init__(self, cmd_id, cdb, iovs, data_out, received):
        self.cmd_id = cmd_id
        self.cdb = cdb
        self.iovs = iovs
        self.data_out = data_out
        self.received = received


class Ring:
    """One backstore's uio device: fetch commands, write completions."""

    def __init__(self, uio_path, map_size, name=''):
        self.name = name
        self.path = uio_path
        self.fd = os.open(uio_path, os.O_RDWR)
        try:
            self.mm = mmap.mmap(self.fd, map_size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE, offset=0)
        except OSError:
            os.close(self.fd)
            raise
        self.cmdr_off = self._u32(MB_CMDR_OFF)
        self.cmdr_size = self._u32(MB_CMDR_SIZE)
        self.next = self._u32(MB_CMD_TAIL)      # our read position (entries fetched up to here)
        self.completed = 0

    def _u32(self, off):
        return _U32.unpack_from(self.mm, off)[0]

    def close(self):
        try:
            self.mm.close()
        finally:
            os.close(self.fd)

    def clear_event(self):
        try:
            os.read(self.fd, 4)
        except BlockingIOError:
            pass

    def notify(self):
        os.write(self.fd, b'\0\0\0\0')

    def fetch(self, now):
        """New commands since the last call (list of Command)."""
        out = []
        head = self._u32(MB_CMD_HEAD)
        mm = self.mm
        while self.next != head:
            ent = self.cmdr_off + self.next
            len_op = _U32.unpack_from(mm, ent + ENT_LEN_OP)[0]
            op = len_op & OP_MASK
            length = len_op & ~OP_MASK
            if length == 0:
                raise TcmuError('%s: zero-length ring entry at %d' % (self.name, self.next))
            if op == OP_CMD:
                cmd_id = _U16.unpack_from(mm, ent + ENT_CMD_ID)[0]
                iov_cnt = _U32.unpack_from(mm, ent + REQ_IOV_CNT)[0]
                iov_bidi = _U32.unpack_from(mm, ent + REQ_IOV_BIDI_CNT)[0]
                cdb_off = _U64.unpack_from(mm, ent + REQ_CDB_OFF)[0]
                opcode = mm[cdb_off]
                cdb = bytes(mm[cdb_off:cdb_off + scsi.cdb_length(opcode)])
                iovs = []
                for i in range(iov_cnt + iov_bidi):
                    base = _U64.unpack_from(mm, ent + REQ_IOV + 16 * i)[0]
                    ln = _U64.unpack_from(mm, ent + REQ_IOV + 16 * i + 8)[0]
                    iovs.append((base, ln))
                data_out = b''
                if opcode in scsi.DATA_OUT_OPCODES:
                    data_out = b''.join(bytes(mm[b:b + n]) for b, n in iovs[:iov_cnt])
                out.append(Command(cmd_id, cdb, iovs[:iov_cnt], data_out, now))
            self.next = (self.next + length) % self.cmdr_size
        return out

    def complete(self, cmd, result, unknown_op=False):
        """Write ``result`` for ``cmd`` into the entry at cmd_tail and advance it."""
        mm = self.mm
        written = 0
        data_in = cmd.cdb and cmd.cdb[0] not in scsi.DATA_OUT_OPCODES
        if data_in and result.data:
            data = result.data
            for base, ln in cmd.iovs:
                if written >= len(data):
                    break
                n = min(ln, len(data) - written)
                mm[base:base + n] = data[written:written + n]
                written += n
        tail = self._u32(MB_CMD_TAIL)
        while True:
            ent = self.cmdr_off + tail
            len_op = _U32.unpack_from(mm, ent + ENT_LEN_OP)[0]
            if (len_op & OP_MASK) == OP_CMD:
                break
            if not len_op & ~OP_MASK:
                raise TcmuError('%s: zero-length ring entry at the tail (%d)' % (self.name, tail))
            tail = (tail + (len_op & ~OP_MASK)) % self.cmdr_size
        _U16.pack_into(mm, ent + ENT_CMD_ID, cmd.cmd_id)
        uflags = UFLAG_UNKNOWN_OP if unknown_op else 0
        if data_in:
            uflags |= UFLAG_READ_LEN
            if result.read_len is not None:
                written = min(written, result.read_len)
            _U32.pack_into(mm, ent + RSP_READ_LEN, written)
        mm[ent + ENT_UFLAGS] = uflags
        mm[ent + RSP_STATUS] = result.status
        sense = (result.sense or b'')[:SENSE_MAX]
        mm[ent + RSP_SENSE:ent + RSP_SENSE + SENSE_MAX] = sense + b'\0' * (SENSE_MAX - len(sense))
        tail = (tail + (len_op & ~OP_MASK)) % self.cmdr_size
        _U32.pack_into(mm, MB_CMD_TAIL, tail)
        self.completed += 1


class Lun:
    """A device on a ring: its queue and the command in flight."""

    def __init__(self, name, ring, device, log=None):
        self.name = name
        self.ring = ring
        self.device = device
        self.queue = collections.deque()
        self.inflight = None        # (Command, Pending)
        self.wake = None
        self.log = log

    def _run(self, cmd, now):
        try:
            return self.device.execute(cmd.cdb, cmd.data_out)
        except Exception:  # pylint: disable=broad-except
            self._log('%s: command %s raised:\n%s' % (self.name, cmd.cdb.hex(), traceback.format_exc()))
            return scsi.check_condition(scsi.HARDWARE_ERROR, 0x44, 0x00)   # INTERNAL TARGET FAILURE

    def _poll(self, pending, cmd, now):
        try:
            return pending.poll(now)
        except Exception:  # pylint: disable=broad-except
            self._log('%s: pending %s raised:\n%s' % (self.name, cmd.cdb.hex(), traceback.format_exc()))
            return scsi.check_condition(scsi.HARDWARE_ERROR, 0x44, 0x00)

    def _log(self, text):
        if self.log:
            self.log(text)

    def step(self, now, trace=None):
        """Run what can run now; returns the number of completions."""
        done = 0
        while True:
            if self.inflight is None:
                if not self.queue:
                    self.wake = None
                    return done
                cmd = self.queue.popleft()
                result = self._run(cmd, now)
                if isinstance(result, scsi.Pending):
                    self.inflight = (cmd, result)
                    self.wake = now
                    continue
            else:
                cmd, pending = self.inflight
                result = self._poll(pending, cmd, now)
                if not isinstance(result, scsi.Result):
                    self.wake = float(result)
                    return done
                self.inflight = None
            if trace:
                trace(self.name, cmd, result, now)
            self.ring.complete(cmd, result, unknown_op=False)
            done += 1


class Server:
    """Poll the rings of every LUN of the guest and run their devices."""

    def __init__(self, luns, clock=time.monotonic, log=None, trace=False):
        self.luns = list(luns)
        self.clock = clock
        self.log = log or (lambda text: print(text, file=sys.stderr, flush=True))
        self.trace = self._trace if trace else None
        self.stop = False
        self._last_periodic = 0.0
        self.poller = select.poll()
        self.by_fd = {}
        for lun in self.luns:
            lun.log = self.log
            self.poller.register(lun.ring.fd, select.POLLIN)
            self.by_fd[lun.ring.fd] = lun

    def _trace(self, name, cmd, result, now):
        sense = result.sense[:14].hex() if result.sense else '-'
        self.log('%.6f %s %s -> %02x %s %d bytes' % (now, name, cmd.cdb.hex(), result.status, sense, len(result.data)))

    def run_once(self, max_wait=1.0):
        now = self.clock()
        wakes = [lun.wake for lun in self.luns if lun.wake is not None]
        timeout = max_wait
        if wakes:
            timeout = max(0.0, min(min(wakes) - now, max_wait))
        try:
            events = self.poller.poll(int(math.ceil(timeout * 1000)))
        except InterruptedError:
            events = []
        now = self.clock()
        for fd, _ev in events:
            lun = self.by_fd[fd]
            lun.ring.clear_event()
            lun.queue.extend(lun.ring.fetch(now))
        for lun in self.luns:
            # also pick up entries queued without an event (the kernel may batch)
            lun.queue.extend(lun.ring.fetch(now))
            if lun.queue or lun.inflight is not None:
                if lun.step(now, self.trace):
                    lun.ring.notify()

    def periodic(self, now):
        """About once a second: let devices that want it update their files (statistics)."""
        if now - self._last_periodic < 1.0:
            return
        self._last_periodic = now
        for lun in self.luns:
            hook = getattr(lun.device, 'periodic', None)
            if hook is not None:
                try:
                    hook(now)
                except Exception:  # pylint: disable=broad-except
                    self.log('%s: periodic update raised:\n%s' % (lun.name, traceback.format_exc()))

    def serve(self, until=None):
        while not self.stop and (until is None or not until()):
            self.run_once()
            self.periodic(self.clock())


# ---------------------------------------------------------------- configfs

def _write(path, text):
    try:
        with open(path, 'w') as f:
            f.write(text)
    except OSError as exc:
        raise TcmuError('writing %r to %s failed: %s' % (text, path, exc.strerror))


def backstore_path(hba, name):
    return os.path.join(CORE, 'user_%d' % hba, name)


def create_backstore(hba, name, subtype, max_data_area_mb=64, dev_size=1 << 30):
    """Create and enable a user backstore; cmd_time_out 0 (no kernel timeout: a
    drain or a mechanical move may take longer than the default 30 s).
    Returns (configfs path, uio device path, map size)."""
    path = backstore_path(hba, name)
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise TcmuError('mkdir %s failed (%s): is target_core_user loaded and configfs mounted on %s?' % (
            path, exc.strerror, CONFIGFS))
    _write(os.path.join(path, 'control'), 'dev_config=%s/%s,dev_size=%d,max_data_area_mb=%d' % (
        subtype, name, dev_size, max_data_area_mb))
    _write(os.path.join(path, 'enable'), '1')
    _write(os.path.join(path, 'attrib', 'cmd_time_out'), '0')
    want = 'tcm-user/%d/%s/%s/%s' % (hba, name, subtype, name)
    for _attempt in range(50):
        for uio in sorted(os.listdir('/sys/class/uio')) if os.path.isdir('/sys/class/uio') else []:
            try:
                with open('/sys/class/uio/%s/name' % uio) as f:
                    if f.read().strip() != want:
                        continue
                with open('/sys/class/uio/%s/maps/map0/size' % uio) as f:
                    size = int(f.read().strip(), 16)
            except OSError:
                continue
            return path, '/dev/%s' % uio, size
        time.sleep(0.02)
    raise TcmuError('no uio device named %s after enabling %s (is the uio module loaded?)' % (want, path))


def remove_backstore(path):
    try:
        os.rmdir(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise TcmuError('rmdir %s failed: %s' % (path, exc.strerror))
    parent = os.path.dirname(path)
    try:
        if not os.listdir(parent):
            os.rmdir(parent)
    except OSError:
        pass


def loopback_target(wwn):
    return os.path.join(LOOPBACK, 'naa.%s' % wwn, 'tpgt_1')


def link_luns(wwn, initiator_wwn, backstores):
    """Export ``backstores`` [(lun number, configfs path)] on a tcm_loop target, in order.

    Each link makes the guest kernel scan that LUN (INQUIRY goes to the
    handler, which must already be serving).
    """
    tpg = loopback_target(wwn)
    for lun, _path in backstores:
        os.makedirs(os.path.join(tpg, 'lun', 'lun_%d' % lun), exist_ok=True)
    nexus = os.path.join(tpg, 'nexus')
    try:
        with open(nexus) as f:
            current = f.read().strip()
    except OSError:
        current = ''
    if not current:
        _write(nexus, 'naa.%s' % initiator_wwn)
    for lun, path in backstores:
        link = os.path.join(tpg, 'lun', 'lun_%d' % lun, os.path.basename(path))
        if not os.path.islink(link):
            try:
                os.symlink(path, link)
            except OSError as exc:
                raise TcmuError('linking %s as LUN %d failed: %s' % (path, lun, exc.strerror))


def unlink_luns(wwn):
    """Remove the tcm_loop target ``wwn`` with its LUNs (reverse of link_luns)."""
    tpg = loopback_target(wwn)
    lun_dir = os.path.join(tpg, 'lun')
    if os.path.isdir(lun_dir):
        for lun in sorted(os.listdir(lun_dir), reverse=True):
            d = os.path.join(lun_dir, lun)
            for entry in os.listdir(d):
                p = os.path.join(d, entry)
                if os.path.islink(p):
                    os.unlink(p)
            try:
                os.rmdir(d)
            except OSError as exc:
                if exc.errno != errno.ENOENT:
                    raise
    for d in (tpg, os.path.dirname(tpg)):
        try:
            os.rmdir(d)
        except FileNotFoundError:
            pass
