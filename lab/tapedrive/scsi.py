# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SCSI plumbing shared by the lab's emulated drive (ssc.py) and changer (smc.py).

Both devices answer ``execute(cdb: bytes, data_out: bytes) -> Result | Pending``: the
ring handler (tcmu.py) hands them the CDB and, for commands that carry data
from the initiator (see ``DATA_OUT_OPCODES``), the data-out buffer; they return
a ``Result`` with the status, the data-in bytes (already cut to the CDB's
allocation length) and, on CHECK CONDITION, fixed-format sense data, or a
``Pending`` for a command that completes later (see its docstring).

References: SPC-4 (r37) for sense data (4.5.3, fixed format), INQUIRY (6.6),
VPD pages 0x00/0x80/0x83 (7.8), MODE SENSE/SELECT headers (7.5.5/7.5.6);
SSC-3 / SMC-3 for device-specific commands.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

# --- status codes (SAM-5 5.3.1) ---
GOOD = 0x00
CHECK_CONDITION = 0x02
BUSY = 0x08
RESERVATION_CONFLICT = 0x18

# --- sense keys (SPC-4 table 44) ---
NO_SENSE = 0x0
RECOVERED_ERROR = 0x1
NOT_READY = 0x2
MEDIUM_ERROR = 0x3
HARDWARE_ERROR = 0x4
ILLEGAL_REQUEST = 0x5
UNIT_ATTENTION = 0x6
DATA_PROTECT = 0x7
BLANK_CHECK = 0x8
ABORTED_COMMAND = 0xB
VOLUME_OVERFLOW = 0xD

# --- (ASC, ASCQ) pairs used by the lab's devices (SPC-4 table D.1) ---
ASC_NONE = (0x00, 0x00)
ASC_FILEMARK = (0x00, 0x01)              # FILEMARK DETECTED
ASC_EOM = (0x00, 0x02)                   # END-OF-PARTITION/MEDIUM DETECTED
ASC_BOM = (0x00, 0x04)                   # BEGINNING-OF-PARTITION/MEDIUM DETECTED
ASC_EOD = (0x00, 0x05)                   # END-OF-DATA DETECTED
ASC_BECOMING_READY = (0x04, 0x01)
ASC_NOT_READY_INIT_REQUIRED = (0x04, 0x02)
ASC_WRITE_ERROR = (0x0C, 0x00)
ASC_PARAM_LIST_LENGTH = (0x1A, 0x00)     # PARAMETER LIST LENGTH ERROR
ASC_INVALID_OPCODE = (0x20, 0x00)        # INVALID COMMAND OPERATION CODE
ASC_LBA_OUT_OF_RANGE = (0x21, 0x00)
ASC_INVALID_ELEMENT = (0x21, 0x01)       # INVALID ELEMENT ADDRESS
ASC_INVALID_FIELD_CDB = (0x24, 0x00)
ASC_LUN_NOT_SUPPORTED = (0x25, 0x00)
ASC_INVALID_FIELD_PARAM = (0x26, 0x00)
ASC_WRITE_PROTECTED = (0x27, 0x00)
ASC_NOT_READY_TO_READY = (0x28, 0x00)    # medium may have changed
ASC_IMPORT_EXPORT_ACCESSED = (0x28, 0x01)
ASC_POWER_ON_RESET = (0x29, 0x00)
ASC_MODE_PARAMS_CHANGED = (0x2A, 0x01)
ASC_INCOMPATIBLE_MEDIUM = (0x30, 0x00)
ASC_CANNOT_WRITE_MEDIUM_INCOMPATIBLE = (0x30, 0x05)
ASC_WORM_OVERWRITE = (0x30, 0x0C)        # WORM MEDIUM - OVERWRITE ATTEMPTED
ASC_MEDIUM_FORMAT_CORRUPTED = (0x31, 0x00)
ASC_SEQUENTIAL_POSITIONING_ERROR = (0x3B, 0x00)
ASC_MEDIUM_DEST_FULL = (0x3B, 0x0D)
ASC_MEDIUM_SOURCE_EMPTY = (0x3B, 0x0E)
ASC_MEDIUM_NOT_PRESENT = (0x3A, 0x00)
ASC_MEDIUM_REMOVAL_PREVENTED = (0x53, 0x02)
ASC_MEDIUM_MAGAZINE_REMOVED = (0x3B, 0x12)
ASC_BLANK_CHECK_EOD = (0x00, 0x05)
ASC_SAVING_NOT_SUPPORTED = (0x39, 0x00)

# --- device types (SPC-4 table 49) ---
TYPE_TAPE = 0x01
TYPE_CHANGER = 0x08

# Opcodes whose data flows from the initiator to the device. The ring entry
# does not say the direction, so the handler derives it from the opcode.
DATA_OUT_OPCODES = frozenset({
    0x0A,  # WRITE(6)
    0x15,  # MODE SELECT(6)
    0x55,  # MODE SELECT(10)
    0x4C,  # LOG SELECT
    0x1D,  # SEND DIAGNOSTIC
    0x3B,  # WRITE BUFFER
    0xB6,  # SEND VOLUME TAG (SMC)
    0xA4,  # SECURITY PROTOCOL OUT / MAINTENANCE OUT
    0xB5,  # SECURITY PROTOCOL OUT
    0x5F,  # PERSISTENT RESERVE OUT
})

# Length of a CDB by its group code (SPC-4 4.2.5.1).
_GROUP_LEN = {0: 6, 1: 10, 2: 10, 4: 16, 5: 12}


def cdb_length(opcode):
    """Length of the CDB for ``opcode`` (6, 10, 12 or 16; 6 for reserved groups)."""
    return _GROUP_LEN.get(opcode >> 5, 6)


@dataclass
class Result:
    """What a device returns for one command.

    ``data`` is the data-in (to the initiator), already cut to the allocation
    length; ``sense`` is fixed-format sense data (only with CHECK CONDITION).
    ``read_len`` is set when fewer bytes were moved than the initiator asked
    for and the ring must report it (short variable-block READ): it is the
    count of bytes actually transferred; None means "len(data)".
    ``residual`` is the SCSI residual (requested - transferred) when known.
    """

    status: int = GOOD
    data: bytes = b''
    sense: bytes = b''
    read_len: int | None = None
    residual: int = 0
    # free-form note for the handler's trace log (never sent to the initiator)
    note: str = field(default='', compare=False)

    @property
    def data_in(self):
        return self.data

    @property
    def ok(self):
        return self.status == GOOD

    @property
    def sense_key(self):
        return self.sense[2] & 0x0F if len(self.sense) > 2 else None

    @property
    def asc_ascq(self):
        return (self.sense[12], self.sense[13]) if len(self.sense) > 13 else None


class Pending:
    """A command that completes later (a WRITE waiting for buffer room, a file mark
    waiting for the drain, a changer move that takes seconds).

    ``step(now)`` returns the ``Result`` once the command is done, else the
    absolute time (the device's clock, seconds) at which to call it again.
    The handler keeps the command in flight, serves other LUNs meanwhile and
    queues further commands of the same LUN behind it.
    """

    def __init__(self, step, note=''):
        self.step = step
        self.note = note

    def poll(self, now):
        return self.step(now)


def complete_at(when, result):
    """A Pending that returns ``result`` at time ``when`` (a mechanical delay)."""
    def step(now):
        return result if now >= when else when
    return Pending(step, note='until %.3f' % when)


def good(data=b'', alloc_len=None):
    """GOOD status with ``data`` (cut to ``alloc_len`` when given)."""
    data = bytes(data)
    if alloc_len is not None:
        data = data[:alloc_len]
    return Result(GOOD, data)


def sense_data(key, asc=0, ascq=0, info=None, filemark=False, eom=False, ili=False,
               sks=None, cmd_info=0, deferred=False):
    """Fixed-format sense data, 18 bytes (SPC-4 4.5.3).

    ``info`` (a signed or unsigned 32-bit int) sets the INFORMATION field and the
    VALID bit: for SSC it is the residue (requested - actual blocks/bytes), with
    negative values for an overlength block. ``filemark``/``eom``/``ili`` set
    the SSC flag bits of byte 2. ``sks`` is a 3-byte sense-key-specific field
    (see ``field_pointer``).
    """
    buf = bytearray(18)
    buf[0] = 0x71 if deferred else 0x70
    if info is not None:
        buf[0] |= 0x80
        struct.pack_into('>I', buf, 3, info & 0xFFFFFFFF)
    buf[2] = (key & 0x0F) | (0x80 if filemark else 0) | (0x40 if eom else 0) | (0x20 if ili else 0)
    buf[7] = 10  # additional sense length
    struct.pack_into('>I', buf, 8, cmd_info & 0xFFFFFFFF)
    buf[12] = asc
    buf[13] = ascq
    if sks is not None:
        buf[15:18] = bytes(sks)
    return bytes(buf)


def check_condition(key, asc=0, ascq=0, info=None, filemark=False, eom=False, ili=False,
                    sks=None, data=b'', read_len=None, note=''):
    """CHECK CONDITION with fixed-format sense.

    ``asc`` may be an (asc, ascq) tuple from the ``ASC_*`` constants. ``data`` /
    ``read_len`` carry the part of a READ that was transferred before the
    condition (short block, file mark).
    """
    if isinstance(asc, tuple):
        asc, ascq = asc
    return Result(CHECK_CONDITION, bytes(data),
                  sense_data(key, asc, ascq, info=info, filemark=filemark, eom=eom, ili=ili, sks=sks),
                  read_len=read_len, note=note)


def field_pointer(byte, bit=None, in_cdb=True):
    """Sense-key-specific field pointer (SPC-4 4.5.2.4.2) for ILLEGAL REQUEST."""
    b0 = 0x80 | (0x40 if in_cdb else 0)
    if bit is not None:
        b0 |= 0x08 | (bit & 0x07)
    return bytes((b0, (byte >> 8) & 0xFF, byte & 0xFF))


# --- common errors ---

def invalid_opcode():
    return check_condition(ILLEGAL_REQUEST, ASC_INVALID_OPCODE)


def invalid_field_in_cdb(byte=None, bit=None):
    sks = field_pointer(byte, bit) if byte is not None else None
    return check_condition(ILLEGAL_REQUEST, ASC_INVALID_FIELD_CDB, sks=sks)


def invalid_field_in_parameters(byte=None, bit=None):
    sks = field_pointer(byte, bit, in_cdb=False) if byte is not None else None
    return check_condition(ILLEGAL_REQUEST, ASC_INVALID_FIELD_PARAM, sks=sks)


def parameter_list_length_error():
    return check_condition(ILLEGAL_REQUEST, ASC_PARAM_LIST_LENGTH)


def not_ready_no_medium():
    return check_condition(NOT_READY, ASC_MEDIUM_NOT_PRESENT)


def unit_attention(asc=ASC_POWER_ON_RESET):
    return check_condition(UNIT_ATTENTION, asc)


# --- CDB field helpers ---

def be(buf, off, n):
    """Unsigned big-endian integer of ``n`` bytes at ``off`` (missing bytes read as 0)."""
    chunk = bytes(buf[off:off + n])
    chunk = chunk + b'\0' * (n - len(chunk))
    return int.from_bytes(chunk, 'big')


def be_signed(buf, off, n):
    """Signed (two's complement) big-endian integer of ``n`` bytes at ``off``."""
    v = be(buf, off, n)
    if v & (1 << (8 * n - 1)):
        v -= 1 << (8 * n)
    return v


def u16(v):
    return struct.pack('>H', v & 0xFFFF)


def u24(v):
    return (v & 0xFFFFFF).to_bytes(3, 'big')


def u32(v):
    return struct.pack('>I', v & 0xFFFFFFFF)


def u64(v):
    return struct.pack('>Q', v & 0xFFFFFFFFFFFFFFFF)


def int_bytes(v, n=None):
    """Big-endian bytes of ``v``, in ``n`` bytes or the fewest that hold it (at least 1)."""
    if n is None:
        n = max(1, (v.bit_length() + 7) // 8)
    return v.to_bytes(n, 'big')


def alloc_len(cdb):
    """The allocation length of the CDBs that have one where SPC/SSC/SMC put it."""
    op = cdb[0]
    if op in (0x12, 0x03, 0x1A):           # INQUIRY (16-bit since SPC-3), REQUEST SENSE, MODE SENSE(6)
        return be(cdb, 3, 2) if op == 0x12 else cdb[4]
    if op in (0x5A, 0x4D, 0x44, 0x34):     # MODE SENSE(10), LOG SENSE, REPORT DENSITY, READ POSITION
        return be(cdb, 7, 2)
    if op in (0xB8, 0xA3, 0xA0):           # READ ELEMENT STATUS, MAINTENANCE IN, REPORT LUNS
        return be(cdb, 6, 4) if op != 0xB8 else be(cdb, 7, 3)
    return None


def pad(text, n):
    """ASCII field of ``n`` bytes, space-padded (SPC-4 4.4.1)."""
    raw = text.encode('ascii', 'replace')[:n]
    return raw + b' ' * (n - len(raw))


# --- INQUIRY / VPD builders ---

def standard_inquiry(ptype, vendor, product, revision, removable=True, vendor_specific=b'',
                     version=0x06, multi_port=False):
    """Standard INQUIRY data (SPC-4 6.6.2), 96 bytes with ``vendor_specific`` at 36..55.

    version 0x06 = SPC-4; response data format 2; HiSup.
    """
    buf = bytearray(96)
    buf[0] = ptype & 0x1F
    buf[1] = 0x80 if removable else 0
    buf[2] = version
    buf[3] = 0x12           # HiSup, response data format 2
    buf[4] = len(buf) - 5   # additional length
    buf[6] = 0x10 if multi_port else 0
    buf[7] = 0x02           # CmdQue
    buf[8:16] = pad(vendor, 8)
    buf[16:32] = pad(product, 16)
    buf[32:36] = pad(revision, 4)
    vs = bytes(vendor_specific)[:20]
    buf[36:36 + len(vs)] = vs
    # version descriptors (58..): SAM-5, SPC-4, SSC-3 or SMC-3
    descs = (0x00A0, 0x0460, 0x0400 if ptype == TYPE_TAPE else 0x0480)
    for i, d in enumerate(descs):
        struct.pack_into('>H', buf, 58 + 2 * i, d)
    return bytes(buf)


def vpd_page(ptype, page, payload):
    """A VPD page: 4-byte header (type, page code, 16-bit length) + payload."""
    return bytes((ptype & 0x1F, page)) + u16(len(payload)) + bytes(payload)


def vpd_supported(ptype, pages):
    return vpd_page(ptype, 0x00, bytes(sorted(set(pages) | {0x00})))


def vpd_serial(ptype, serial):
    return vpd_page(ptype, 0x80, serial.encode('ascii'))


def designator(code_set, assoc, dtype, ident, piv=False, protocol=0):
    """One identification descriptor of VPD page 0x83 (SPC-4 7.8.6.1)."""
    ident = bytes(ident)
    b0 = ((protocol & 0x0F) << 4) | (code_set & 0x0F)
    b1 = (0x80 if piv else 0) | ((assoc & 0x3) << 4) | (dtype & 0x0F)
    return bytes((b0, b1, 0, len(ident))) + ident


def vpd_device_id(ptype, vendor, product, serial, naa):
    """VPD 0x83 with a T10 vendor ID designator (vendor + product + serial) and an NAA one.

    ``naa`` is a 64-bit NAA-5 (IEEE registered) identifier as an int.
    """
    t10 = pad(vendor, 8) + pad(product, 16) + serial.encode('ascii')
    descs = designator(2, 0, 1, t10) + designator(1, 0, 3, u64(naa))
    return vpd_page(ptype, 0x83, descs)


# --- MODE SENSE / SELECT headers (SPC-4 7.5.5, 7.5.6) ---

def mode_header6(body_len, medium_type=0, device_specific=0, bd=b''):
    """MODE SENSE(6) parameter header + block descriptor; body follows."""
    total = 3 + len(bd) + body_len   # mode data length excludes itself
    return bytes((min(total, 255), medium_type, device_specific, len(bd))) + bytes(bd)


def mode_header10(body_len, medium_type=0, device_specific=0, bd=b''):
    total = 6 + len(bd) + body_len
    return u16(total) + bytes((medium_type, device_specific, 0, 0)) + u16(len(bd)) + bytes(bd)


def split_mode_parameters(cdb, data):
    """Split a MODE SELECT(6/10) parameter list into (header dict, block descriptors, pages).

    pages is a list of (page_code, subpage, page bytes including its header).
    Raises ValueError on a list that does not parse.
    """
    if cdb[0] == 0x15:
        if len(data) < 4:
            raise ValueError('header')
        hdr = {'medium_type': data[1], 'device_specific': data[2]}
        bdl = data[3]
        off = 4
    else:
        if len(data) < 8:
            raise ValueError('header')
        hdr = {'medium_type': data[2], 'device_specific': data[3]}
        bdl = be(data, 6, 2)
        off = 8
    bd = bytes(data[off:off + bdl])
    if len(bd) != bdl:
        raise ValueError('block descriptor')
    off += bdl
    pages = []
    while off < len(data):
        code = data[off] & 0x3F
        spf = bool(data[off] & 0x40)
        if spf:
            if off + 4 > len(data):
                raise ValueError('page header')
            plen = 4 + be(data, off + 2, 2)
            sub = data[off + 1]
        else:
            if off + 2 > len(data):
                raise ValueError('page header')
            plen = 2 + data[off + 1]
            sub = 0
        if off + plen > len(data):
            raise ValueError('page length')
        pages.append((code, sub, bytes(data[off:off + plen])))
        off += plen
    return hdr, bd, pages


# --- LOG SENSE helpers (SPC-4 7.3) ---

def log_parameter(code, value, flags=0x03, length=None):
    """One log parameter: code, control byte, length, value.

    ``value`` is an int (binary counter, written in ``length`` bytes, default
    the fewest multiple-of-1 bytes that hold it, at least 4 for counters) or bytes.
    flags default 0x03 = binary format list, as counters are sent by real drives.
    """
    if isinstance(value, int):
        n = length or max(4, (value.bit_length() + 7) // 8)
        value = value.to_bytes(n, 'big')
    value = bytes(value)
    return u16(code) + bytes((flags, len(value))) + value


def log_page(page, params, subpage=0):
    """A log page: header (page code, subpage, 16-bit length) + parameters."""
    body = b''.join(params)
    b0 = page & 0x3F
    if subpage:
        b0 |= 0x40
    return bytes((b0, subpage)) + u16(len(body)) + body
