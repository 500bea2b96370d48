# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cartridges of the lab's emulated drives: ``Cartridge``, one file per cartridge.

Names other modules rely on (the changer in smc.py, the library in
library.py): ``Cartridge`` with ``barcode``, ``holds_data``, ``write_protected``,
``worm``, ``generation``, ``density_code``; ``Cartridge.open(path)`` and
``Cartridge.create(path, barcode, ...)``.

The file is the tape. A 4096-byte header (a magic line and a JSON object:
barcode, generation, density code, capacity, write-protect and WORM flags,
load count, and what the cartridge memory keeps, see below) is followed by an
append-only run of records, one per logical object on tape, in tape order:

    16-byte record header  '>4sBBHII': b'TREC', kind, flags, 0, host length, stored length
    payload                 stored length bytes (flags & 2: raw deflate segment, physics.BlockCompressor;
                            flags & 1: zlib stream; else the block as written)

kind ``B`` is a data block (host length = the block as the host wrote it),
``F`` a file mark. Positions are logical object numbers counted from BOT
(blocks and file marks both count, as LTO drives count them in READ
POSITION). Writing at a position before EOD truncates the file there first,
which is what writing does to a tape: everything after it is gone. The index
(record offsets, kinds and lengths) is rebuilt by one scan of the record
headers when a cartridge is opened; a record cut short by a crash is dropped.

Capacity is in tape-side bytes (what the drive stored after compression),
with an early-warning zone before the end (``EARLY_WARNING_FRACTION``).

The cartridge memory (LTO-CM, read with READ ATTRIBUTE: ssc.py
``mam_attributes``) lives in the header too: the medium serial number and
manufacture date (``serial``, ``manufactured``, set at ``create``) and under
``mam`` the tape-side bytes written and read over the cartridge's earlier
loads and in its current (or last) one, the last four drives that loaded it,
the TapeAlert flags set during the current and the previous load, and how
many loads changed its data. Every one of these keys is optional: a cartridge
written before they existed opens with its serial and date made from its
barcode and its file's date, and zeros for the counters (which count from
then on); a lab without them ignores them. Nothing of the header's format
changed, so the magic line stays version 1.
"""

from __future__ import annotations

import bisect
import datetime
import hashlib
import json
import os
import struct
import zlib

MAGIC = b'TAPEOPS-LAB-CARTRIDGE 1\n'
HEADER_SIZE = 4096
RECORD = struct.Struct('>4sBBHII')
RECORD_MAGIC = b'TREC'
KIND_BLOCK = ord('B')
KIND_FILEMARK = ord('F')
FLAG_ZLIB = 1
FLAG_DEFLATE = 2
# Early warning: the drive reports EOM (early warning) when this fraction of the
# capacity is left, as LTO drives do some distance before the physical end
# (estimate: 1 %; no vendor gives the distance as a fraction).
EARLY_WARNING_FRACTION = 0.01

# What an LTO cartridge's memory says of the medium, per generation (ssc.py's READ ATTRIBUTE reports it).
# Tape length in metres: LTO-1/2 609, LTO-3 680, LTO-4 820, LTO-5/6 846, LTO-7/8 960, LTO-9 1035, as the
# LTO format tables give them (Wikipedia, "Linear Tape-Open", tape specifications, citing Oracle's and
# Fujifilm's data sheets); a real HP Ultrium 6 drive reports 846 for a FUJIFILM LTO-6 cartridge
# (tests/unit/fixtures/sg_read_attr). LTO-10: 1035, an estimate (the LTO-9 figure; none found).
MEDIUM_LENGTH_M = {1: 609, 2: 609, 3: 680, 4: 820, 5: 846, 6: 846, 7: 960, 8: 960, 9: 1035, 10: 1035}
# Half-inch tape: 12.65 mm, which READ ATTRIBUTE gives in tenths of a millimetre as 127 (the HP capture).
MEDIUM_WIDTH_0_1MM = 127
# The cartridge memory's size in bytes: 4096 for LTO-1 to 3, 8192 for LTO-4 (computerlanguage.com, "LTO",
# EEPROM column); 16384 from LTO-5 on, as the real LTO-6 cartridge reports (the same table says 8 KB there:
# the capture wins, and LTO-5 and 7 to 10 follow LTO-6, an estimate).
MAM_CAPACITY = {1: 4096, 2: 4096, 3: 4096, 4: 8192}
MAM_CAPACITY_DEFAULT = 16384
# The last four drives that loaded the cartridge (attributes 020Ah-020Dh).
LOAD_HISTORY = 4


# The cartridge memory's counters in the header (``mam``), as a cartridge without them starts:
# tape-side bytes written / read over the loads before the current one and in the current (or last) one;
# the drives that loaded it ([vendor, serial], newest first); the TapeAlert flags set during the current
# (or last) load and during the one before (64-bit, flag 1 the most significant bit); the loads that changed
# its data (READ ATTRIBUTE's volume change reference) and whether the current one did.
_MAM_DEFAULTS = {'life_written': 0, 'life_read': 0, 'load_written': 0, 'load_read': 0, 'loaded_by': [],
                 'flags_load': 0, 'flags_previous': 0, 'volume_changes': 0, 'changed_this_load': False}


def medium_serial_of(barcode):
    """A medium serial number for the lab's cartridge ``barcode``: 10 characters, upper-case, stable.

    Real LTO cartridges carry the manufacturer's serial in their memory (FUJIFILM: ``EW7VWMVKF6``); the lab
    makes one from the barcode, so that two cartridges never share one.
    """
    digest = hashlib.sha256(('tapeops-lab:%s' % barcode).encode()).hexdigest().upper()
    return 'TQ' + digest[:8]


class MediaError(Exception):
    """A cartridge file that cannot be used (missing, not a cartridge, damaged header)."""


class Cartridge:
    """One cartridge: its header fields and its records (see the module docstring)."""

    def __init__(self, path, fd, meta, index):
        self.path = path
        self._fd = fd
        self._meta = meta
        if not meta.get('manufactured'):
            # a cartridge made before the cartridge memory was kept: the date of its file stands in
            meta['manufactured'] = datetime.datetime.fromtimestamp(
                os.fstat(fd).st_mtime, datetime.timezone.utc).strftime('%Y%m%d')
        meta.setdefault('serial', medium_serial_of(meta.get('barcode') or ''))
        mam = meta.get('mam') if isinstance(meta.get('mam'), dict) else {}
        meta['mam'] = dict(_MAM_DEFAULTS, **mam)
        # index: parallel lists, one entry per logical object
        self._offsets = [o for o, _k, _h, _s in index]
        self._kinds = [k for _o, k, _h, _s in index]
        self._host_len = [h for _o, _k, h, _s in index]
        self._stored_len = [s for _o, _k, _h, s in index]
        self._filemarks = [i for i, k in enumerate(self._kinds) if k == KIND_FILEMARK]
        self._end = (self._offsets[-1] + RECORD.size + self._stored_len[-1]) if index else HEADER_SIZE
        self._tape_bytes = sum(self._stored_len)

    # -------------------------------------------------------------- files
    @classmethod
    def create(cls, path, barcode, generation=5, density_code=0x58, capacity_bytes=1500 * 10 ** 9,
               write_protected=False, worm=False, medium_type=0, exist_ok=False, manufactured=None):
        """Make a blank cartridge file at ``path`` and return it opened.

        ``manufactured``: the medium manufacture date as YYYYMMDD (default: today, UTC).
        """
        if os.path.exists(path) and not exist_ok:
            raise MediaError('%s exists: refusing to replace a cartridge (remove it first)' % path)
        meta = {
            'barcode': barcode, 'generation': int(generation), 'density_code': int(density_code),
            'capacity_bytes': int(capacity_bytes), 'write_protected': bool(write_protected), 'worm': bool(worm),
            'medium_type': int(medium_type), 'loads': 0,
            'serial': medium_serial_of(barcode),
            'manufactured': manufactured or datetime.datetime.now(datetime.timezone.utc).strftime('%Y%m%d'),
        }
        tmp = path + '.tmp'
        with open(tmp, 'wb') as f:
            f.write(cls._header_bytes(meta))
        os.replace(tmp, path)
        return cls.open(path)

    @classmethod
    def open(cls, path):
        try:
            fd = os.open(path, os.O_RDWR)
        except OSError as exc:
            raise MediaError('cannot open cartridge %s: %s' % (path, exc.strerror))
        try:
            head = os.pread(fd, HEADER_SIZE, 0)
            if not head.startswith(MAGIC):
                raise MediaError('%s is not a lab cartridge (no %r header)' % (path, MAGIC.strip().decode()))
            try:
                meta = json.loads(head[len(MAGIC):].rstrip(b'\0 \n').decode())
            except ValueError as exc:
                raise MediaError('%s: damaged cartridge header (%s)' % (path, exc))
            index = cls._scan(fd)
        except BaseException:
            os.close(fd)
            raise
        return cls(path, fd, meta, index)

    @staticmethod
    def _header_bytes(meta):
        body = MAGIC + json.dumps(meta, sort_keys=True).encode() + b'\n'
        if len(body) > HEADER_SIZE:
            raise MediaError('cartridge header too large')
        return body + b' ' * (HEADER_SIZE - len(body))

    @staticmethod
    def _scan(fd):
        size = os.fstat(fd).st_size
        index = []
        off = HEADER_SIZE
        while off + RECORD.size <= size:
            raw = os.pread(fd, RECORD.size, off)
            magic, kind, _flags, _res, host_len, stored_len = RECORD.unpack(raw)
            if magic != RECORD_MAGIC or kind not in (KIND_BLOCK, KIND_FILEMARK) or \
                    off + RECORD.size + stored_len > size:
                break
            index.append((off, kind, host_len, stored_len))
            off += RECORD.size + stored_len
        if off != size:
            os.ftruncate(fd, off)  # a record cut short (crash while writing) is dropped
        return index

    def _save_meta(self):
        os.pwrite(self._fd, self._header_bytes(self._meta), 0)

    def close(self):
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def sync(self):
        if self._fd is not None:
            os.fsync(self._fd)

    def __repr__(self):
        return 'Cartridge(%r, objects=%d)' % (self.barcode, self.eod)

    # -------------------------------------------------------------- header fields
    @property
    def barcode(self):
        return self._meta['barcode']

    @property
    def generation(self):
        return self._meta['generation']

    @property
    def density_code(self):
        return self._meta['density_code']

    @property
    def medium_type(self):
        return self._meta.get('medium_type', 0)

    @property
    def capacity_bytes(self):
        return self._meta['capacity_bytes']

    @property
    def write_protected(self):
        return bool(self._meta.get('write_protected'))

    @write_protected.setter
    def write_protected(self, value):
        self._meta['write_protected'] = bool(value)
        self._save_meta()

    @property
    def worm(self):
        return bool(self._meta.get('worm'))

    @property
    def loads(self):
        return self._meta.get('loads', 0)

    def count_load(self, vendor=None, serial=None):
        """A load: the load count goes up; the last load's usage and flags become history.

        ``vendor`` / ``serial``: the drive's INQUIRY vendor and serial, kept as the last four drives that
        loaded the cartridge (newest first).
        """
        self._meta['loads'] = self.loads + 1
        mam = self._meta['mam']
        mam['life_written'] += mam['load_written']
        mam['life_read'] += mam['load_read']
        mam['load_written'] = mam['load_read'] = 0
        mam['flags_previous'] = mam['flags_load']
        mam['flags_load'] = 0
        mam['changed_this_load'] = False
        if vendor is not None:
            mam['loaded_by'] = ([[str(vendor), str(serial or '')]] + list(mam['loaded_by']))[:LOAD_HISTORY]
        self._save_meta()

    # -------------------------------------------------------------- cartridge memory
    @property
    def medium_serial(self):
        return self._meta['serial']

    @property
    def manufactured(self):
        """The medium manufacture date, YYYYMMDD."""
        return self._meta['manufactured']

    @property
    def medium_length_m(self):
        return MEDIUM_LENGTH_M.get(self.generation, MEDIUM_LENGTH_M[10])

    @property
    def mam_capacity(self):
        return MAM_CAPACITY.get(self.generation, MAM_CAPACITY_DEFAULT)

    @property
    def memory(self):
        """What the cartridge memory keeps (a copy): see ``_MAM_DEFAULTS``."""
        mam = dict(self._meta['mam'])
        mam['loaded_by'] = [list(entry) for entry in mam['loaded_by']]
        return mam

    def record_load(self, written, read, flags):
        """The current load's usage so far: tape-side bytes ``written`` and ``read`` since the load, and the
        TapeAlert ``flags`` (a 64-bit number, flag 1 its most significant bit) seen in it (added to those kept).
        Written to the header only when something changed.
        """
        mam = self._meta['mam']
        new = {'load_written': int(written), 'load_read': int(read), 'flags_load': mam['flags_load'] | int(flags)}
        if written and not mam['changed_this_load']:
            new['changed_this_load'] = True
            new['volume_changes'] = mam['volume_changes'] + 1
        if any(mam[key] != value for key, value in new.items()):
            mam.update(new)
            self._save_meta()

    # -------------------------------------------------------------- contents
    @property
    def eod(self):
        """Position of end of data (= number of logical objects)."""
        return len(self._kinds)

    @property
    def holds_data(self):
        return self.eod > 0

    @property
    def tape_bytes(self):
        """Tape-side bytes used (stored payloads)."""
        return self._tape_bytes

    @property
    def remaining_bytes(self):
        return max(0, self.capacity_bytes - self._tape_bytes)

    @property
    def early_warning(self):
        return self.remaining_bytes <= self.capacity_bytes * EARLY_WARNING_FRACTION

    def kind(self, pos):
        """'block', 'filemark' or 'eod' at ``pos``."""
        if pos >= self.eod:
            return 'eod'
        return 'block' if self._kinds[pos] == KIND_BLOCK else 'filemark'

    def block_length(self, pos):
        return self._host_len[pos]

    def stored_length(self, pos):
        return self._stored_len[pos]

    def read_block(self, pos):
        """The host bytes of the block at ``pos`` (which must be a block)."""
        if self.kind(pos) != 'block':
            raise MediaError('no block at position %d' % pos)
        off = self._offsets[pos]
        raw = os.pread(self._fd, RECORD.size + self._stored_len[pos], off)
        flags = raw[5]
        payload = raw[RECORD.size:]
        if flags & FLAG_DEFLATE:
            payload = zlib.decompressobj(-15).decompress(payload)
        elif flags & FLAG_ZLIB:
            payload = zlib.decompress(payload)
        if len(payload) != self._host_len[pos]:
            raise MediaError('%s: block %d is damaged (length %d, expected %d)' % (
                self.barcode, pos, len(payload), self._host_len[pos]))
        return payload

    def _truncate(self, pos):
        if pos >= self.eod:
            return
        self._end = self._offsets[pos]
        os.ftruncate(self._fd, self._end)
        del self._offsets[pos:], self._kinds[pos:], self._host_len[pos:]
        self._tape_bytes = sum(self._stored_len[:pos])
        del self._stored_len[pos:]
        cut = bisect.bisect_left(self._filemarks, pos)
        del self._filemarks[cut:]

    def _append(self, kind, host_len, payload, flags):
        rec = RECORD.pack(RECORD_MAGIC, kind, flags, 0, host_len, len(payload))
        os.pwrite(self._fd, rec + payload, self._end)
        self._offsets.append(self._end)
        self._kinds.append(kind)
        self._host_len.append(host_len)
        self._stored_len.append(len(payload))
        if kind == KIND_FILEMARK:
            self._filemarks.append(len(self._kinds) - 1)
        self._end += RECORD.size + len(payload)
        self._tape_bytes += len(payload)

    def write_block(self, pos, data, compressed=None):
        """Write ``data`` as the block at ``pos`` (truncating what follows).

        ``compressed``: the raw deflate segment of ``data`` when the drive
        compressed it and it came out smaller (physics.BlockCompressor); the
        record then stores that (tape-side bytes). Returns the position after
        the block.
        """
        self._truncate(pos)
        if pos != self.eod:
            raise MediaError('write at %d beyond end of data %d' % (pos, self.eod))
        if compressed is not None and len(compressed) < len(data):
            self._append(KIND_BLOCK, len(data), bytes(compressed), FLAG_DEFLATE)
        else:
            self._append(KIND_BLOCK, len(data), bytes(data), 0)
        return pos + 1

    def write_filemarks(self, pos, count):
        self._truncate(pos)
        if pos != self.eod:
            raise MediaError('write at %d beyond end of data %d' % (pos, self.eod))
        for _mark in range(count):
            self._append(KIND_FILEMARK, 0, b'', 0)
        return pos + count

    def erase_from(self, pos):
        """ERASE: everything from ``pos`` on is gone (EOD at ``pos``)."""
        self._truncate(pos)

    # -------------------------------------------------------------- positions
    def file_number(self, pos):
        """File marks before ``pos`` (the file number st reports)."""
        return bisect.bisect_left(self._filemarks, pos)

    def block_in_file(self, pos):
        """Blocks since the last file mark before ``pos``."""
        n = self.file_number(pos)
        start = self._filemarks[n - 1] + 1 if n else 0
        return pos - start

    def filemarks_before(self, pos):
        return self.file_number(pos)

    def next_filemark(self, pos):
        """Position of the first file mark at or after ``pos``, or None."""
        i = bisect.bisect_left(self._filemarks, pos)
        return self._filemarks[i] if i < len(self._filemarks) else None

    def prev_filemark(self, pos):
        """Position of the last file mark before ``pos``, or None."""
        i = bisect.bisect_left(self._filemarks, pos)
        return self._filemarks[i - 1] if i else None

    def filemark_positions(self):
        return list(self._filemarks)

    def host_bytes(self, start=0, end=None):
        """Host bytes of the blocks in [start, end)."""
        end = self.eod if end is None else end
        return sum(self._host_len[start:end])
