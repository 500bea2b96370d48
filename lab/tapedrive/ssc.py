# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's emulated LTO drive: SSC commands over a ``Cartridge`` with streaming physics.

``Drive(identity, profile, clock)`` answers ``execute(cdb, data_out)`` with a
``scsi.Result`` or a ``scsi.Pending`` (a WRITE waiting for buffer room, a
synchronous file mark waiting for the drain, a rewind taking its time).
The changer (smc.py) and the library (library.py) use ``loaded``,
``load_cartridge(cart)`` and ``unload_cartridge()``; ``removal_prevented``
says whether PREVENT MEDIUM REMOVAL is in force.

Commands (SSC-3/SSC-4 and SPC-4 unless said otherwise), with what st, mt-st,
sg3_utils and the collection's modules send:

- TEST UNIT READY, REQUEST SENSE, INQUIRY (standard, VPD 0x00/0x80/0x83)
- READ BLOCK LIMITS (granularity 0, 1 .. 1 MiB: the largest transfer tcm_loop
  passes, see the lab's TCMU notes; st then refuses larger blocks with EINVAL)
- MODE SENSE(6/10) / MODE SELECT(6/10): block descriptor with the cartridge's
  density code and the block size (0 = variable); pages 0x01, 0x02, 0x0A,
  0x0F (data compression, DCE honoured), 0x10 (device configuration), 0x1C
  (informational exceptions / TapeAlert), 0x3F (all)
- READ(6) / WRITE(6), variable and fixed block: ILI with the residue for short
  and long blocks (SILI honoured), FILEMARK and BLANK CHECK at file marks and
  end of data, EOM at early warning and VOLUME OVERFLOW at the end
- WRITE FILEMARKS(6) (IMMED honoured: rule 6/7 of physics.py), SPACE(6)
  (blocks, file marks, end of data; both directions), REWIND, LOAD UNLOAD,
  LOCATE(10), READ POSITION (short and long forms), ERASE
- REPORT DENSITY SUPPORT (the generation's own density and the two it reads)
- LOG SENSE / LOG SELECT (reset): pages 0x00, 0x02, 0x03, 0x0C, 0x14, 0x17,
  0x1B, 0x2E, 0x32 and 0x34 (see ``log_page``)
- READ ATTRIBUTE (SPC-4): the cartridge memory (service actions 0x00
  attribute values, 0x01 attribute list, 0x02 logical volume list, 0x03
  partition list, 0x05 supported attributes; see ``mam_attributes``)
- PREVENT ALLOW MEDIUM REMOVAL, RESERVE/RELEASE(6), SEND DIAGNOSTIC
- anything else: CHECK CONDITION, ILLEGAL REQUEST, INVALID COMMAND OPERATION CODE

Log pages. Standard: 0x0C sequential access (SSC-3), 0x14 device statistics,
0x17 volume statistics (SSC-4), 0x1B data compression (SSC-4), 0x2E TapeAlert.
Vendor: 0x32 "Data compression" in the LTO layout HP and IBM share (HP Ultrium
technical reference manual, generations 1 and 2, C7379-90900, "Data Compression
Log Page": parameters 0..9, megabytes + byte remainder pairs; sg_logs decodes it
as "Data compression page (LTO-5 specific)"), and 0x34 "Performance Data" in
HP's documented layout (HP Ultrium technical reference manual, generation 3,
volume 3 host interface guide, Q1530-90901, LOG SENSE, "Performance Data log
page"): parameter control byte 0x60, 2-byte parameters

    0x0000 repositions per 100 MB written (since load)
    0x0001 data rate into buffer, after compression (100 KB/s units)
    0x0002 maximum data rate for the data's compressibility (100 KB/s)
    0x0003 current data rate, before compression (100 KB/s)
    0x0004 native data rate (100 KB/s)

followed by the lab's own counters, which no vendor documents (4 bytes each,
control byte 0x03, codes in the vendor-unique 0x8000 range so no tool mistakes
them for HP's):

    0x8000 back-hitches (repositions) since load       <- the back-hitch COUNT
    0x8001 synchronous file-mark flushes since load
    0x8002 milliseconds spent repositioning since load
    0x8003 milliseconds WRITEs waited for buffer room since load
    0x8004 current speed step (100 KB/s)
    0x8005 buffer size (100 KB units, after the lab's scale)

Every emulated model carries 0x34 in HP's layout (a real IBM drive's 0x34 is
"Read forward errors", a different page): the lab wants one page the
collection reads on every guest.

Health (``set_health``; docs/lab.md, "Drive health"): the drive can be told
to misbehave, with the signals a real drive gives. ``dirty``: TapeAlert 20
(cleaning required) and page 0x0C's cleaning parameter set, rewrites and
corrected errors on pages 0x02 / 0x03 rising with the tape-side bytes moved
(``DIRTY_REWRITES_PER_GB``), and the data rate at every step lowered by
``DIRTY_RATE_FACTOR``. ``hard_error``: TapeAlert 30 (hardware A); commands
keep working. A cartridge ``worn``: its load count (READ ATTRIBUTE, page
0x17's thread count) near the end of its load life (``WORN_FRACTION`` of
``LOAD_LIFE``), and the media flags a drive raises from that count (19
nearing media life, 7 media life). Each flag the drive raised during a load
goes into the cartridge's memory, which READ ATTRIBUTE gives as the previous
load's TapeAlert flags on the next load.
"""

from __future__ import annotations

import collections
import json
import os
import time

from . import physics
from . import scsi
from .media import MEDIUM_WIDTH_0_1MM, MediaError
from .scsi import (GOOD, ILLEGAL_REQUEST, NOT_READY, NO_SENSE, BLANK_CHECK, DATA_PROTECT, VOLUME_OVERFLOW,
                   UNIT_ATTENTION, MEDIUM_ERROR)

MAX_BLOCK = 1024 * 1024          # largest transfer through tcm_loop (docs: TCMU pitfalls)
MIN_BLOCK = 1
MB = 1000 * 1000

# Commands that work with no cartridge loaded (SPC/SSC: everything else answers NOT READY).
NO_MEDIUM_OK = frozenset({0x03, 0x05, 0x12, 0x15, 0x16, 0x17, 0x1A, 0x1D, 0x1E, 0x44, 0x4C, 0x4D, 0x55, 0x5A, 0xA0})
# Commands that do not report a pending unit attention (SPC-4 5.14).
NO_UA = frozenset({0x03, 0x12, 0xA0})

# INQUIRY product strings per model (lab/tapelab picks one per guest).
#   IBM: ULT3580-TDn (full height) / ULT3580-HHn (half height), n = 1..9, A (LTO-10)
#   HP / HPE: "Ultrium n-SCSI" (SAS drives report -SCSI too)
#   Quantum (IBM mechanism in its own half-height drives): ULTRIUM-HHn
_GEN_CHAR = {10: 'A'}


def model_identity(maker, generation, form_factor='FH'):
    """(vendor, product) INQUIRY strings of an LTO drive model."""
    gen = int(generation)
    char = _GEN_CHAR.get(gen, str(gen))
    maker = (maker or 'IBM').upper()
    if maker in ('HP', 'HPE'):
        return 'HP', 'Ultrium %d-SCSI' % gen
    if maker == 'QUANTUM':
        return 'QUANTUM', 'ULTRIUM-HH%s' % char
    return 'IBM', 'ULT3580-%s%s' % ('HH' if (form_factor or 'FH').upper() == 'HH' else 'TD', char)


# REPORT DENSITY SUPPORT data per density code: (tracks, bits per mm, native capacity in MiB, name).
# Tracks and linear density: LTO format figures as the LTO Consortium's generation tables give them
# (estimate where a drive's own descriptor was not captured: the values below are the ones drives
# report in their descriptors per the Quantum LTO-4 SCSI reference fields; capacities are the
# native capacities in 2**20-byte units).
_DENSITY_INFO = {
    0x40: (384, 4880, 95367, 'LTO-1'),
    0x42: (512, 7398, 190734, 'LTO-2'),
    0x44: (704, 9638, 381469, 'LTO-3'),
    0x46: (896, 13250, 762939, 'LTO-4'),
    0x58: (1280, 15142, 1430511, 'LTO-5'),
    0x5A: (2176, 15142, 2384185, 'LTO-6'),
    0x5C: (3584, 19107, 5722046, 'LTO-7'),
    0x5D: (3584, 19107, 8583069, 'LTO-M8'),
    0x5E: (6656, 20670, 11444091, 'LTO-8'),
    0x60: (8960, 20670, 17166137, 'LTO-9'),
    0x62: (11264, 24370, 28610229, 'LTO-10'),
}
_OWN_DENSITY = {1: 0x40, 2: 0x42, 3: 0x44, 4: 0x46, 5: 0x58, 6: 0x5A, 7: 0x5C, 8: 0x5E, 9: 0x60, 10: 0x62}

# TapeAlert flag count (SSC-4 annex: flags 0x01..0x40)
TAPEALERT_FLAGS = 0x40

# ---------------------------------------------------------------- health (docs/lab.md, "Drive health")
# The modes a drive and a cartridge can be given; 'none' clears a mode.
DRIVE_MODES = ('dirty', 'hard_error')
CARTRIDGE_MODES = ('worn',)
NONE = 'none'
# TapeAlert flags the modes raise (TapeAlert specification v3.0 numbers and names, as docs/health.md cites
# them): 20 Cleaning required (the drive asks to be cleaned), 30 Hardware A (a drive hardware fault the
# specification rates critical), 19 Nearing media life and 7 Media life (the cartridge's life, from its
# load count).
FLAG_CLEANING_REQUIRED = 20
FLAG_HARDWARE_A = 30
FLAG_NEARING_MEDIA_LIFE = 19
FLAG_MEDIA_LIFE = 7
# A dirty head writes less of what it means to on the first pass: the drive rewrites (LTO reads every data
# set back as it writes it and writes again what did not verify) and moves more tape for the same data.
# Both numbers are estimates of the lab: no vendor publishes what a dirty head costs. The rewrites stay under
# the collection's own 10 per GB (plugins/module_utils/_judge/_health.py, an estimate too), so a drive that
# only needs cleaning is judged CLEAN, not DEGRADED; the rate factor is large enough to show in a lab run.
DIRTY_REWRITES_PER_GB = 5            # rewrites (page 0x02) / rereads (0x03) per GB moved to / from tape
DIRTY_RATE_FACTOR = 0.8              # the data rate at each speed step, as a fraction of the clean drive's
# Load life of a data cartridge by LTO generation, as docs/health.md cites it: IBM TS2900 Tape Autoloader
# manual, Table 18 "Nominal cartridge life: Load/unload cycles" (Ultrium 1 5000, 2 10,000, 3 to 8 20,000);
# Ultrium 9 and 10 20,000, an estimate (IBM's table ends at 8). tests/unit/lab holds it to _health.LOAD_LIFE.
LOAD_LIFE = {1: 5000, 2: 10000, 3: 20000, 4: 20000, 5: 20000, 6: 20000, 7: 20000, 8: 20000, 9: 20000,
             10: 20000}
# When the drive raises 19 Nearing media life: at this fraction of the load life (an estimate: no vendor
# says when; 7 Media life at the life itself). A worn cartridge reports WORN_FRACTION of its life more loads
# than it has had (19,500 of 20,000 for LTO-3 to 10): near the end, not over it.
NEARING_LIFE_FRACTION = 0.9
WORN_FRACTION = 0.975


class HealthError(ValueError):
    """A health setting that cannot be applied; the message says what is allowed."""


def parse_health(health):
    """``{'drive': mode or None, 'cartridges': {barcode: mode}}`` from a health setting (a dict or None).

    Accepts ``{"drive": "dirty"|"hard_error"|"none"|null, "cartridges": {"MA1001L5": "worn"|"none"}}``;
    'none' (or null) clears. Raises HealthError naming what is wrong.
    """
    if health is None:
        return {'drive': None, 'cartridges': {}}
    if not isinstance(health, dict):
        raise HealthError('health must be a mapping {"drive": MODE, "cartridges": {BARCODE: MODE}}, got %r'
                          % (health,))
    unknown = sorted(set(health) - {'drive', 'cartridges'})
    if unknown:
        raise HealthError('health: unknown key(s) %s; the keys are drive and cartridges' % ', '.join(unknown))
    drive = health.get('drive')
    if drive in (None, NONE):
        drive = None
    elif drive not in DRIVE_MODES:
        raise HealthError('health: drive mode %r is not one of %s' % (drive, ', '.join(DRIVE_MODES + (NONE,))))
    carts = health.get('cartridges') or {}
    if not isinstance(carts, dict):
        raise HealthError('health: cartridges must map barcodes to modes, got %r' % (carts,))
    out = {}
    for barcode, mode in carts.items():
        if mode in (None, NONE):
            continue
        if mode not in CARTRIDGE_MODES:
            raise HealthError('health: cartridge %s: mode %r is not one of %s' % (
                barcode, mode, ', '.join(CARTRIDGE_MODES + (NONE,))))
        out[str(barcode)] = mode
    return {'drive': drive, 'cartridges': dict(sorted(out.items()))}


def flag_bits(flags):
    """TapeAlert flag numbers -> the 64-bit number the cartridge memory keeps (flag 1 the most significant)."""
    bits = 0
    for number in flags:
        bits |= 1 << (64 - number)
    return bits


# ---------------------------------------------------------------- READ ATTRIBUTE (SPC-4 7.3, SSC-4 annex)
# Attribute formats (the low two bits of byte 2) and the read-only bit.
ATTR_BINARY, ATTR_ASCII, ATTR_TEXT = 0, 1, 2
ATTR_READ_ONLY = 0x80
MIB = 1024 * 1024


class Drive:
    """One emulated LTO drive (see the module docstring)."""

    def __init__(self, identity, profile, clock=time.monotonic, stats_path=None, name='drive0'):
        self.identity = dict(identity)
        self.profile = profile if isinstance(profile, physics.Profile) else physics.Profile(profile)
        self.clock = clock
        self.name = name
        self.stats_path = stats_path
        self.transport = physics.Transport(self.profile, clock())
        self.loaded = None              # Cartridge or None
        self.threaded = False           # loaded and at a position (False after UNLOAD)
        self.pos = 0
        self.block_size = 0             # 0 = variable
        self.compression = True         # DCE (mode page 0x0F)
        self.removal_prevented = False
        self.ua = None                  # pending unit attention (asc, ascq)
        self.busy_until = 0.0           # mechanical operation in progress
        self.last_sense = None
        self.lifetime = collections.Counter()
        self.since_load = collections.Counter()
        self.load_time = None
        self.blocked_since = None
        self.series = []                # per-second host bytes accepted since load: [second, bytes]
        self._series_t0 = None
        self._stats_key = None
        self.health = parse_health(None)
        self.health_file = None         # a JSON file polled by periodic() (lab/tapelab health)
        self.log = None                 # log(text): where periodic() says a health change or error
        self._health_stamp = None
        self.load_usage = collections.Counter()   # tape-side bytes written / read since load (MAM)

    # ------------------------------------------------------------ library side
    @property
    def vendor(self):
        return self.identity['vendor']

    @property
    def product(self):
        return self.identity['product']

    @property
    def serial(self):
        return self.identity['serial']

    def load_cartridge(self, cart, count=True):
        """A cartridge arrives in the drive and is threaded, ready at BOT.

        The changer has already spent the load time (smc.py applies load_s
        before it calls this). The next command other than INQUIRY / REQUEST
        SENSE gets UNIT ATTENTION, NOT READY TO READY CHANGE (28h/00h), as a
        real drive reports a new cartridge; st resets its position on it.
        ``count`` False: a cartridge found in the drive at start-up.
        """
        if self.loaded is not None:
            raise ValueError('drive %s already holds %s' % (self.name, self.loaded.barcode))
        now = self.clock()
        self.loaded = cart
        self.threaded = True
        self.pos = 0
        self.ua = scsi.ASC_NOT_READY_TO_READY
        self.transport = physics.Transport(self.profile, now)
        self.since_load = collections.Counter()
        self.load_time = now
        self.series = []
        self._series_t0 = None
        self.load_usage = collections.Counter()
        if count:
            cart.count_load(self.vendor, self.serial)
            self.lifetime['loads'] += 1
        else:
            # found in the drive at start-up: the load the cartridge memory records goes on
            memory = cart.memory
            self.load_usage.update({'written': memory['load_written'], 'read': memory['load_read']})
        self._apply_rate(now)

    def unload_cartridge(self):
        """The changer takes the cartridge out; returns it (None when the drive is empty)."""
        cart = self.loaded
        if cart is None:
            return None
        self.write_stats()
        self.save_memory()
        cart.sync()
        self.loaded = None
        self.threaded = False
        self.pos = 0
        self.removal_prevented = False
        self.ua = None
        return cart

    # ------------------------------------------------------------ health
    def set_health(self, health):
        """Apply a health setting (``parse_health``'s input); returns it as parsed. Raises HealthError."""
        parsed = parse_health(health)
        self.health = parsed
        self._apply_rate(self.clock())
        return parsed

    @property
    def dirty(self):
        return self.health['drive'] == 'dirty'

    def cartridge_mode(self, cart):
        return self.health['cartridges'].get(cart.barcode) if cart is not None else None

    def _apply_rate(self, now):
        self.transport.set_rate_factor(DIRTY_RATE_FACTOR if self.dirty else 1.0, now)

    def load_life(self, cart):
        return LOAD_LIFE.get(cart.generation, LOAD_LIFE[10])

    def cartridge_loads(self, cart):
        """The load count the cartridge reports: its own, plus WORN_FRACTION of its life when it is worn."""
        loads = cart.loads
        if self.cartridge_mode(cart) == 'worn':
            loads += int(round(WORN_FRACTION * self.load_life(cart)))
        return loads

    def _life_flags(self, cart, loads):
        life = self.load_life(cart)
        if loads >= life:
            return [FLAG_MEDIA_LIFE]
        if loads >= NEARING_LIFE_FRACTION * life:
            return [FLAG_NEARING_MEDIA_LIFE]
        return []

    def tape_alert_flags(self):
        """The TapeAlert flags set now (numbers, ascending)."""
        flags = set()
        if self.dirty:
            flags.add(FLAG_CLEANING_REQUIRED)
        if self.health['drive'] == 'hard_error':
            flags.add(FLAG_HARDWARE_A)
        if self.loaded is not None:
            flags.update(self._life_flags(self.loaded, self.cartridge_loads(self.loaded)))
        return sorted(flags)

    def save_memory(self):
        """Write the current load's usage and flags into the loaded cartridge's memory."""
        if self.loaded is not None:
            self.loaded.record_load(self.load_usage['written'], self.load_usage['read'],
                                    flag_bits(self.tape_alert_flags()))

    def read_health_file(self):
        """Apply ``health_file`` when it changed since it was last read (a missing file: no modes).

        Returns None when nothing changed, else the setting applied, or the error as a HealthError (the
        setting in force stays).
        """
        if not self.health_file:
            return None
        try:
            st = os.stat(self.health_file)
            stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        except FileNotFoundError:
            stamp = None
        except OSError as exc:
            return HealthError('cannot read %s: %s' % (self.health_file, exc.strerror))
        if stamp == self._health_stamp:
            return None
        self._health_stamp = stamp
        if stamp is None:
            return self.set_health(None)
        try:
            with open(self.health_file) as f:
                return self.set_health(json.load(f))
        except (OSError, ValueError) as exc:
            return exc if isinstance(exc, HealthError) else HealthError('%s: %s' % (self.health_file, exc))

    # ------------------------------------------------------------ helpers
    def now(self):
        return self.clock()

    def _sense(self, result):
        if result.status != GOOD:
            self.last_sense = result.sense
        return result

    def _ready_check(self, op):
        """None when the command may proceed, else the Result to return."""
        if op in NO_MEDIUM_OK:
            return None
        if self.loaded is None:
            return scsi.not_ready_no_medium()
        if not self.threaded and op != 0x1B:       # after UNLOAD only LOAD threads the tape again
            return scsi.check_condition(NOT_READY, scsi.ASC_NOT_READY_INIT_REQUIRED)
        if self.clock() < self.busy_until:
            return scsi.check_condition(NOT_READY, scsi.ASC_BECOMING_READY)
        return None

    def _mech(self, seconds, result, immediate=False):
        """Complete ``result`` after ``seconds`` of mechanism time (now when IMMED)."""
        when = self.clock() + max(0.0, seconds)
        self.busy_until = max(self.busy_until, when)
        if immediate or seconds <= 0:
            return result
        return scsi.complete_at(when, result)

    def _distance_time(self, full_seconds, from_pos, to_pos):
        """Mechanism time for a move: ``full_seconds`` for half the cartridge's
        capacity of tape-side bytes, proportional below (estimate: the drive
        model's rewind/locate times are averages over a full cartridge)."""
        cart = self.loaded
        if cart is None or full_seconds <= 0:
            return 0.0
        a, b = sorted((from_pos, to_pos))
        moved = sum(cart.stored_length(i) for i in range(a, min(b, cart.eod)))
        half = max(1.0, cart.capacity_bytes / 2.0)
        return full_seconds * min(1.0, moved / half)

    def _flush_then(self, then):
        """Pending: drain the buffer (rule 8), then call ``then()`` -> Result | Pending."""
        tr = self.transport
        tr.begin_flush(self.clock())

        state = {'next': None}

        def step(now):
            if state['next'] is None:
                if not tr.flush_done(now):
                    return tr.wake_for_flush(now)
                state['next'] = then()
                if isinstance(state['next'], scsi.Result):
                    return state['next']
            return state['next'].poll(now)

        if tr.flush_done(self.clock()):
            return then()
        return scsi.Pending(step, note='flush')

    def _record_series(self, now, host_bytes):
        if self._series_t0 is None:
            self._series_t0 = now
        second = int(now - self._series_t0)
        if self.series and self.series[-1][0] == second:
            self.series[-1][1] += host_bytes
        else:
            self.series.append([second, host_bytes])
        if len(self.series) > 7200:
            del self.series[:len(self.series) - 7200]

    def stats(self):
        now = self.clock()
        snap = self.transport.snapshot(now)
        snap.update({
            'name': self.name,
            'barcode': self.loaded.barcode if self.loaded else None,
            'position': self.pos,
            'profile': self.profile.as_dict(),
            'identity': self.identity,
            'sync_filemark_flushes': self.since_load['sync_flushes'],
            'write_wait_s': round(self.since_load['write_wait_ms'] / 1000.0, 3),
            'host_series_bytes_per_s': [b for _s, b in self.series],
            'loaded_at': self.load_time,
            'now': now,
            'health': self.health,
            'tape_alert_flags': self.tape_alert_flags(),
        })
        return snap

    def periodic(self, now):
        """Called about once a second by the handler: the health file, the statistics file, the cartridge memory.

        Returns what ``read_health_file`` returned (the handler logs a change or an error).
        """
        changed = self.read_health_file()
        if changed is not None and self.log is not None:
            self.log('%s: health %s' % (self.name, 'not changed: %s' % changed if isinstance(changed, Exception)
                                        else json.dumps(changed, sort_keys=True)))
        key = (self.transport.counters['host_bytes_written'], self.transport.counters['tape_bytes_written'],
               self.transport.counters['backhitches'], self.pos, json.dumps(self.health, sort_keys=True))
        if key != getattr(self, '_stats_key', None):
            self._stats_key = key
            self.write_stats()
        self.save_memory()
        return changed

    def write_stats(self):
        if not self.stats_path:
            return
        tmp = self.stats_path + '.tmp'
        try:
            with open(tmp, 'w') as f:
                json.dump(self.stats(), f, indent=1)
            os.replace(tmp, self.stats_path)
        except OSError:
            pass

    # ------------------------------------------------------------ dispatch
    def execute(self, cdb, data_out=b''):
        cdb = bytes(cdb)
        if not cdb:
            return scsi.invalid_opcode()
        op = cdb[0]
        handler = _HANDLERS.get(op)
        if handler is None:
            return self._sense(scsi.invalid_opcode())
        if self.ua is not None and op not in NO_UA and self.loaded is not None \
                and self.clock() >= self.busy_until:
            asc = self.ua
            self.ua = None
            return self._sense(scsi.unit_attention(asc))
        if op != 0x00:
            blocked = self._ready_check(op)
            if blocked is not None:
                return self._sense(blocked)
        result = handler(self, cdb, bytes(data_out or b''))
        if isinstance(result, scsi.Result):
            self._sense(result)
        return result

    # ------------------------------------------------------------ SPC commands
    def cmd_test_unit_ready(self, cdb, data):
        blocked = self._ready_check(0x00)
        return blocked or scsi.good()

    def cmd_request_sense(self, cdb, data):
        alloc = cdb[4]
        if self.ua is not None and self.loaded is not None:
            sense = scsi.sense_data(UNIT_ATTENTION, *self.ua)
            self.ua = None
        elif self.loaded is None:
            sense = scsi.sense_data(NOT_READY, *scsi.ASC_MEDIUM_NOT_PRESENT)
        else:
            sense = scsi.sense_data(NO_SENSE)
        return scsi.good(sense, alloc)

    def cmd_inquiry(self, cdb, data):
        evpd = cdb[1] & 0x01
        page = cdb[2]
        alloc = scsi.be(cdb, 3, 2)
        ident = self.identity
        if not evpd:
            if page:
                return scsi.invalid_field_in_cdb(2)
            return scsi.good(scsi.standard_inquiry(scsi.TYPE_TAPE, ident['vendor'], ident['product'],
                                                   ident.get('rev', '0001')), alloc)
        if page == 0x00:
            return scsi.good(scsi.vpd_supported(scsi.TYPE_TAPE, (0x00, 0x80, 0x83)), alloc)
        if page == 0x80:
            return scsi.good(scsi.vpd_serial(scsi.TYPE_TAPE, ident['serial']), alloc)
        if page == 0x83:
            return scsi.good(scsi.vpd_device_id(scsi.TYPE_TAPE, ident['vendor'], ident['product'], ident['serial'],
                                                self._naa()), alloc)
        return scsi.invalid_field_in_cdb(2)

    def _naa(self):
        """NAA-5 identifier: IEEE company id 0x0001405 (the LIO/Linux prefix) + a hash of the serial."""
        serial = self.identity.get('serial', '')
        h = 0
        for ch in serial.encode():
            h = (h * 131 + ch) & 0xFFFFFFFFF
        return (0x5 << 60) | (0x001405 << 36) | h

    def cmd_log_select(self, cdb, data):
        if cdb[1] & 0x02:       # PCR: reset the counters
            self.since_load = collections.Counter()
            now = self.clock()
            level = self.transport
            for key in list(level.counters):
                level.counters[key] = 0
            level.speed_time.clear()
            level.reset_session(now)
        return scsi.good()

    def cmd_prevent_allow(self, cdb, data):
        self.removal_prevented = bool(cdb[4] & 0x03)
        return scsi.good()

    def cmd_reserve_release(self, cdb, data):
        return scsi.good()

    def cmd_send_diagnostic(self, cdb, data):
        return scsi.good()

    # ------------------------------------------------------------ SSC: limits, density
    def cmd_read_block_limits(self, cdb, data):
        if cdb[1] & 0x01:       # MLOI (SSC-4): maximum logical object identifier
            return scsi.good(b'\0' * 12 + scsi.u32(0xFFFFFFFF), 20)
        return scsi.good(bytes((0,)) + scsi.u24(MAX_BLOCK) + scsi.u16(MIN_BLOCK))

    def _densities(self):
        """(density code, writable) the drive supports, its own first: own, own-1 (write), own-2 (read)."""
        gen = self.profile.generation
        out = []
        for g, writable in ((gen, True), (gen - 1, True), (gen - 2, False)):
            code = _OWN_DENSITY.get(g)
            if code is None or (gen >= 8 and g < gen - 1) or (gen == 10 and g != gen):
                continue
            out.append((code, writable))
        return out

    def cmd_report_density(self, cdb, data):
        media = cdb[1] & 0x01
        medium_type = cdb[1] & 0x02
        alloc = scsi.be(cdb, 7, 2)
        if medium_type:
            return scsi.invalid_field_in_cdb(1, 1)
        if media:
            if self.loaded is None:
                return scsi.not_ready_no_medium()
            codes = [(self.loaded.density_code, True)]
        else:
            codes = self._densities()
        descs = b''
        for i, (code, writable) in enumerate(codes):
            tracks, bpmm, cap_mib, name = _DENSITY_INFO.get(code, (0, 0, 0, 'LTO'))
            if media and self.loaded is not None:
                cap_mib = self.loaded.capacity_bytes // (1024 * 1024)
            flags = (0x80 if writable else 0) | (0x20 if i == 0 else 0)   # WRTOK, DEFLT
            number = name.split('-')[-1]
            descs += (bytes((code, code, flags, 0, 0)) + scsi.u24(bpmm) + scsi.u16(127) + scsi.u16(tracks) +
                      scsi.u32(cap_mib) + scsi.pad('LTO-CVE', 8) + scsi.pad('U-%s' % number, 8) +
                      scsi.pad('Ultrium %s' % number, 20))
        return scsi.good(scsi.u16(len(descs) + 2) + b'\0\0' + descs, alloc)

    # ------------------------------------------------------------ MODE SENSE / SELECT
    def _density_now(self):
        if self.loaded is not None:
            return self.loaded.density_code
        return self.profile.density_code

    def _block_descriptor(self):
        return bytes((self._density_now(), 0, 0, 0, 0)) + scsi.u24(self.block_size)

    def _mode_pages(self, page, pc):
        changeable = pc == 1
        pages = {}

        def put(code, body):
            pages[code] = bytes((code, len(body))) + body

        put(0x01, bytes(10) if changeable else bytes((0x00, 0x03, 0, 0, 0, 0, 0x01, 0, 0, 0)))
        put(0x02, bytes(14))
        put(0x0A, bytes(10))
        if changeable:
            put(0x0F, bytes((0x80, 0x00)) + bytes(12))
        else:
            put(0x0F, bytes((0xC0 if self.compression else 0x40, 0x80)) + scsi.u32(1) + scsi.u32(1) + bytes(4))
        if changeable:
            put(0x10, bytes(14))
        else:
            # device configuration: write delay 30 s (0x012C x 100 ms, HP's default), EOD defined,
            # select data compression algorithm 1 (default)
            put(0x10, bytes((0x00, 0x00, 0x00, 0x00)) + scsi.u16(0x012C) + bytes((0x40, 0x00, 0x18)) +
                scsi.u24(0) + bytes((0x01 if self.compression else 0x00, 0x00)))
        put(0x1C, bytes(10) if changeable else bytes((0x08, 0x03)) + scsi.u32(0) + scsi.u32(1))
        if page == 0x3F:
            return b''.join(pages[k] for k in sorted(pages))
        return pages.get(page)

    def _mode_sense(self, cdb, ten):
        dbd = cdb[1] & 0x08
        pc = cdb[2] >> 6
        page = cdb[2] & 0x3F
        subpage = cdb[3]
        alloc = scsi.be(cdb, 7, 2) if ten else cdb[4]
        if pc == 3:
            return scsi.check_condition(ILLEGAL_REQUEST, scsi.ASC_SAVING_NOT_SUPPORTED)
        if subpage not in (0x00, 0xFF):
            return scsi.invalid_field_in_cdb(3)
        body = b''
        if page:                    # page 0: header and block descriptor only
            body = self._mode_pages(page, pc)
            if body is None:
                return scsi.invalid_field_in_cdb(2, 5)
        bd = b'' if dbd else self._block_descriptor()
        wp = self.loaded is not None and (self.loaded.write_protected or False)
        dev_specific = (0x80 if wp else 0) | 0x10      # WP, BufM=1 (buffered mode)
        medium_type = 0
        if self.loaded is not None and self.loaded.worm:
            medium_type = 0x01
        header = (scsi.mode_header10 if ten else scsi.mode_header6)(len(body), medium_type, dev_specific, bd)
        return scsi.good(header + body, alloc)

    def cmd_mode_sense6(self, cdb, data):
        return self._mode_sense(cdb, False)

    def cmd_mode_sense10(self, cdb, data):
        return self._mode_sense(cdb, True)

    def _mode_select(self, cdb, data, ten):
        plen = scsi.be(cdb, 7, 2) if ten else cdb[4]
        data = data[:plen]
        if not data:
            return scsi.good()
        try:
            _hdr, bd, pages = scsi.split_mode_parameters(cdb, data)
        except ValueError:
            return scsi.parameter_list_length_error()
        if bd:
            if len(bd) < 8:
                return scsi.parameter_list_length_error()
            density = bd[0]
            block_len = scsi.be(bd, 5, 3)
            if block_len and not MIN_BLOCK <= block_len <= MAX_BLOCK:
                return scsi.invalid_field_in_parameters((8 if ten else 4) + 5)
            if density not in (0x00, 0x7F) and density not in dict(self._densities()) and \
                    density != self._density_now():
                return scsi.invalid_field_in_parameters(8 if ten else 4)
            self.block_size = block_len
        for code, _sub, page in pages:
            if code == 0x0F and len(page) >= 3:
                self.compression = bool(page[2] & 0x80)
            elif code == 0x10 and len(page) >= 16:
                # SELECT DATA COMPRESSION ALGORITHM (byte 14): 0 off, 1 default algorithm
                self.compression = bool(page[14])
        return scsi.good()

    def cmd_mode_select6(self, cdb, data):
        return self._mode_select(cdb, data, False)

    def cmd_mode_select10(self, cdb, data):
        return self._mode_select(cdb, data, True)

    # ------------------------------------------------------------ WRITE
    def _writable(self):
        cart = self.loaded
        if cart.write_protected:
            return scsi.check_condition(DATA_PROTECT, scsi.ASC_WRITE_PROTECTED)
        if cart.density_code not in dict(self._densities()) or not dict(self._densities())[cart.density_code]:
            return scsi.check_condition(DATA_PROTECT, scsi.ASC_CANNOT_WRITE_MEDIUM_INCOMPATIBLE)
        if cart.worm and self.pos < cart.eod:
            return scsi.check_condition(DATA_PROTECT, scsi.ASC_WORM_OVERWRITE)
        return None

    def cmd_write6(self, cdb, data):
        fixed = cdb[1] & 0x01
        count = scsi.be(cdb, 2, 3)
        if fixed and not self.block_size:
            return scsi.invalid_field_in_cdb(1, 0)
        if not fixed and self.block_size:
            return scsi.invalid_field_in_cdb(1, 0)
        refused = self._writable()
        if refused:
            return refused
        if count == 0:
            return scsi.good()
        if fixed:
            size = self.block_size
            blocks = [data[i * size:(i + 1) * size] for i in range(count)]
        else:
            blocks = [data[:count]]
        want = count * self.block_size if fixed else count
        if any(len(b) != len(blocks[0]) for b in blocks) or len(b''.join(blocks)) < want:
            return scsi.parameter_list_length_error()
        return self._write_blocks(blocks, fixed)

    def _write_blocks(self, blocks, fixed):
        cart = self.loaded
        tr = self.transport
        packed = []
        for block in blocks:
            if self.compression:
                tape_bytes, compressed = physics.compress_block(block)
            else:
                tape_bytes, compressed = len(block), None
            packed.append((block, tape_bytes, compressed))
        state = {'i': 0, 'wait_start': None}

        def step(now):
            while state['i'] < len(packed):
                block, tape_bytes, compressed = packed[state['i']]
                if cart.remaining_bytes < tape_bytes:
                    left = len(packed) - state['i']
                    return scsi.check_condition(VOLUME_OVERFLOW, scsi.ASC_EOM, eom=True,
                                                info=left if fixed else len(block))
                if not tr.offer(tape_bytes, len(block), now):
                    if state['wait_start'] is None:
                        state['wait_start'] = now
                    return tr.wake_for_room(tape_bytes, now)
                if state['wait_start'] is not None:
                    waited = now - state['wait_start']
                    self.since_load['write_wait_ms'] += waited * 1000.0
                    state['wait_start'] = None
                self.pos = cart.write_block(self.pos, block, compressed)
                self.lifetime['host_bytes_written'] += len(block)
                self.lifetime['tape_bytes_written'] += tape_bytes
                self.load_usage['written'] += tape_bytes
                self._record_series(now, len(block))
                state['i'] += 1
            if cart.early_warning:
                return scsi.check_condition(NO_SENSE, scsi.ASC_EOM, eom=True, info=0)
            return scsi.good()

        first = step(self.clock())
        if isinstance(first, scsi.Result):
            return first
        return scsi.Pending(step, note='write waits for buffer room')

    # ------------------------------------------------------------ WRITE FILEMARKS
    def cmd_write_filemarks(self, cdb, data):
        immed = cdb[1] & 0x01
        if cdb[1] & 0x02:       # WSMK: set marks are not in LTO
            return scsi.invalid_field_in_cdb(1, 1)
        count = scsi.be(cdb, 2, 3)
        if count:
            refused = self._writable()
            if refused:
                return refused
            self.pos = self.loaded.write_filemarks(self.pos, count)
        now = self.clock()
        tr = self.transport
        if immed:
            for _mark in range(count):
                tr.filemark(True, now)
            return scsi.good()
        for _mark in range(max(count, 1) - 1):
            tr.filemark(True, now)
        if count:
            tr.filemark(False, now)
        else:
            tr.begin_flush(now)
        self.since_load['sync_flushes'] += 1

        def step(t):
            if not tr.flush_done(t):
                return tr.wake_for_flush(t)
            self.save_memory()
            self.loaded.sync()
            self.write_stats()
            return scsi.good()

        first = step(now)
        if isinstance(first, scsi.Result):
            return first
        return scsi.Pending(step, note='synchronous file mark drains the buffer')

    # ------------------------------------------------------------ READ
    def cmd_read6(self, cdb, data):
        fixed = cdb[1] & 0x01
        sili = cdb[1] & 0x02
        count = scsi.be(cdb, 2, 3)
        if fixed and sili:
            return scsi.invalid_field_in_cdb(1, 1)
        if fixed != (1 if self.block_size else 0):
            return scsi.invalid_field_in_cdb(1, 0)
        if count == 0:
            return scsi.good()
        return self._flush_then(lambda: self._read(fixed, sili, count))

    def _read(self, fixed, sili, count):
        try:
            return self._read_blocks(fixed, sili, count)
        except MediaError as exc:
            return scsi.check_condition(MEDIUM_ERROR, 0x11, 0x00, note=str(exc))   # UNRECOVERED READ ERROR

    def _read_blocks(self, fixed, sili, count):
        cart = self.loaded
        tr = self.transport
        if not fixed:
            kind = cart.kind(self.pos)
            if kind == 'eod':
                return scsi.check_condition(BLANK_CHECK, scsi.ASC_EOD, info=count)
            if kind == 'filemark':
                self.pos += 1
                return scsi.check_condition(NO_SENSE, scsi.ASC_FILEMARK, filemark=True, info=count)
            block = cart.read_block(self.pos)
            tr.count_read(len(block), cart.stored_length(self.pos))
            self.load_usage['read'] += cart.stored_length(self.pos)
            self.pos += 1
            if len(block) == count:
                return scsi.good(block)
            if len(block) < count:
                if sili:
                    return scsi.Result(GOOD, block, read_len=len(block), residual=count - len(block))
                return scsi.check_condition(NO_SENSE, 0, 0, ili=True, info=count - len(block), data=block,
                                            read_len=len(block))
            # overlength block: the first ``count`` bytes, negative residue (st reports ENOMEM)
            return scsi.check_condition(NO_SENSE, 0, 0, ili=True, info=count - len(block), data=block[:count],
                                        read_len=count)
        size = self.block_size
        out = []
        for n in range(count):
            kind = cart.kind(self.pos)
            if kind == 'eod':
                got = b''.join(out)
                return scsi.check_condition(BLANK_CHECK, scsi.ASC_EOD, info=count - n, data=got, read_len=len(got))
            if kind == 'filemark':
                self.pos += 1
                got = b''.join(out)
                return scsi.check_condition(NO_SENSE, scsi.ASC_FILEMARK, filemark=True, info=count - n, data=got,
                                            read_len=len(got))
            block = cart.read_block(self.pos)
            tr.count_read(len(block), cart.stored_length(self.pos))
            self.load_usage['read'] += cart.stored_length(self.pos)
            self.pos += 1
            if len(block) != size:
                out.append(block[:size].ljust(size, b'\0') if len(block) > size else block)
                got = b''.join(out)
                return scsi.check_condition(NO_SENSE, 0, 0, ili=True, info=count - n - 1, data=got,
                                            read_len=len(got))
            out.append(block)
        return scsi.good(b''.join(out))

    # ------------------------------------------------------------ positioning
    def cmd_rewind(self, cdb, data):
        immed = cdb[1] & 0x01

        def then():
            seconds = self._distance_time(self.profile.rewind_s, 0, self.pos)
            self.pos = 0
            self.transport.repositioned(self.clock())
            self.save_memory()
            self.loaded.sync()
            self.write_stats()
            return self._mech(seconds, scsi.good(), immed)
        return self._flush_then(then)

    def cmd_load_unload(self, cdb, data):
        immed = cdb[1] & 0x01
        load = cdb[4] & 0x01
        if cdb[4] & 0x04:       # EOT: not in LTO
            return scsi.invalid_field_in_cdb(4, 2)
        if load:
            if self.loaded is None:
                return scsi.not_ready_no_medium()
            seconds = 0.0 if self.threaded else self.profile.load_s
            rewind = self._distance_time(self.profile.rewind_s, 0, self.pos) if self.threaded else 0.0

            def then():
                self.threaded = True
                self.pos = 0
                self.transport.repositioned(self.clock())
                return self._mech(seconds + rewind, scsi.good(), immed)
            return self._flush_then(then) if self.threaded else then()
        if not self.threaded:
            return scsi.good()
        if self.removal_prevented:
            return scsi.check_condition(ILLEGAL_REQUEST, scsi.ASC_MEDIUM_REMOVAL_PREVENTED)

        def then_unload():
            seconds = self._distance_time(self.profile.rewind_s, 0, self.pos) + self.profile.unload_s
            self.pos = 0
            self.threaded = False
            self.transport.repositioned(self.clock())
            self.save_memory()
            self.loaded.sync()
            self.write_stats()
            return self._mech(seconds, scsi.good(), immed)
        return self._flush_then(then_unload)

    def _space_result(self, start, code, count):
        cart = self.loaded
        pos = start
        if code == 3:                                   # end of data
            return cart.eod, scsi.good()
        if count == 0:
            return pos, scsi.good()
        if code == 0:                                   # blocks
            done = 0
            if count > 0:
                while done < count:
                    kind = cart.kind(pos)
                    if kind == 'eod':
                        return pos, scsi.check_condition(BLANK_CHECK, scsi.ASC_EOD, info=count - done)
                    pos += 1
                    if kind == 'filemark':
                        return pos, scsi.check_condition(NO_SENSE, scsi.ASC_FILEMARK, filemark=True,
                                                         info=count - done)
                    done += 1
                return pos, scsi.good()
            want = -count
            while done < want:
                if pos == 0:
                    return pos, scsi.check_condition(NO_SENSE, scsi.ASC_BOM, eom=True, info=want - done)
                if cart.kind(pos - 1) == 'filemark':
                    return pos - 1, scsi.check_condition(NO_SENSE, scsi.ASC_FILEMARK, filemark=True,
                                                         info=want - done)
                pos -= 1
                done += 1
            return pos, scsi.good()
        if code == 1:                                   # file marks
            if count > 0:
                for done in range(count):
                    fm = cart.next_filemark(pos)
                    if fm is None:
                        return cart.eod, scsi.check_condition(BLANK_CHECK, scsi.ASC_EOD, info=count - done)
                    pos = fm + 1
                return pos, scsi.good()
            for done in range(-count):
                fm = cart.prev_filemark(pos)
                if fm is None:
                    return 0, scsi.check_condition(NO_SENSE, scsi.ASC_BOM, eom=True, info=-count - done)
                pos = fm
            return pos, scsi.good()
        return pos, scsi.invalid_field_in_cdb(1, 0)

    def cmd_space(self, cdb, data):
        code = cdb[1] & 0x0F
        count = scsi.be_signed(cdb, 2, 3)
        if code not in (0, 1, 3):
            return scsi.invalid_field_in_cdb(1, 0)

        def then():
            start = self.pos
            new, result = self._space_result(start, code, count)
            seconds = self._distance_time(self.profile.locate_s, start, new)
            self.pos = new
            self.transport.repositioned(self.clock())
            return self._mech(seconds, result)
        return self._flush_then(then)

    def cmd_locate10(self, cdb, data):
        immed = cdb[1] & 0x01
        if cdb[1] & 0x02 and cdb[8] != 0:               # CP with a partition other than 0
            return scsi.invalid_field_in_cdb(8)
        target = scsi.be(cdb, 3, 4)

        def then():
            start = self.pos
            cart = self.loaded
            new = min(target, cart.eod)
            seconds = self._distance_time(self.profile.locate_s, start, new)
            self.pos = new
            self.transport.repositioned(self.clock())
            if target > cart.eod:
                return self._mech(seconds, scsi.check_condition(BLANK_CHECK, scsi.ASC_EOD))
            return self._mech(seconds, scsi.good(), immed)
        return self._flush_then(then)

    def cmd_read_position(self, cdb, data):
        action = cdb[1] & 0x1F
        cart = self.loaded
        tr = self.transport
        tr.advance(self.clock())
        in_buffer = tr.blocks_in_buffer()
        bytes_in_buffer = int(tr.level)
        bop = self.pos == 0
        eop = cart.early_warning and self.pos >= cart.eod
        if action in (0x00, 0x01):
            flags = (0x80 if bop else 0) | (0x40 if eop else 0)
            first = self.pos
            last = max(0, self.pos - in_buffer) if in_buffer else self.pos
            body = (bytes((flags, 0, 0, 0)) + scsi.u32(first) + scsi.u32(last) + b'\0' +
                    scsi.u24(min(in_buffer, 0xFFFFFF)) + scsi.u32(min(bytes_in_buffer, 0xFFFFFFFF)))
            return scsi.good(body)
        if action == 0x06:
            flags = (0x80 if bop else 0) | (0x40 if eop else 0)
            body = (bytes((flags, 0, 0, 0)) + scsi.u32(0) + scsi.u64(self.pos) +
                    scsi.u64(cart.file_number(self.pos)) + scsi.u64(0))
            return scsi.good(body)
        if action == 0x08:
            alloc = scsi.be(cdb, 7, 2)
            flags = (0x80 if bop else 0) | (0x40 if eop else 0)
            body = (bytes((flags, 0)) + scsi.u16(0x1C) + b'\0' + scsi.u24(min(in_buffer, 0xFFFFFF)) +
                    scsi.u64(self.pos) + scsi.u64(max(0, self.pos - in_buffer)) +
                    scsi.u64(bytes_in_buffer))
            return scsi.good(body, alloc or None)
        return scsi.invalid_field_in_cdb(1, 0)

    def cmd_erase(self, cdb, data):
        refused = self._writable()
        if refused:
            return refused
        long_erase = cdb[1] & 0x01
        immed = cdb[1] & 0x02

        def then():
            self.loaded.erase_from(self.pos)
            seconds = self.profile.rewind_s if long_erase else 0.0
            return self._mech(seconds, scsi.good(), immed)
        return self._flush_then(then)

    # ------------------------------------------------------------ LOG SENSE
    SUPPORTED_LOG_PAGES = (0x00, 0x02, 0x03, 0x0C, 0x14, 0x17, 0x1B, 0x2E, 0x32, 0x34)

    def cmd_log_sense(self, cdb, data):
        ppc = cdb[1] & 0x02
        pc = cdb[2] >> 6
        page = cdb[2] & 0x3F
        subpage = cdb[3]
        pointer = scsi.be(cdb, 5, 2)
        alloc = scsi.be(cdb, 7, 2)
        if ppc:
            return scsi.invalid_field_in_cdb(1, 1)
        if page == 0x00 and subpage == 0xFF:
            body = b''.join(bytes((p, 0)) for p in self.SUPPORTED_LOG_PAGES) + bytes((0x00, 0xFF))
            return scsi.good(bytes((0x40, 0xFF)) + scsi.u16(len(body)) + body, alloc)
        if subpage not in (0x00,):
            return scsi.invalid_field_in_cdb(3)
        if page not in self.SUPPORTED_LOG_PAGES:
            return scsi.invalid_field_in_cdb(2, 5)
        params = self.log_page(page, pc)
        if pointer:
            params = [p for p in params if scsi.be(p, 0, 2) >= pointer]
        out = scsi.log_page(page, params)
        self.write_stats()
        return scsi.good(out, alloc)

    def log_page(self, page, pc=1):
        """Parameters (list of bytes) of log page ``page`` (see the module docstring)."""
        now = self.clock()
        tr = self.transport
        snap = tr.snapshot(now)
        cart = self.loaded
        lp = scsi.log_parameter
        if page == 0x00:
            return [bytes(self.SUPPORTED_LOG_PAGES)]
        if page in (0x02, 0x03):
            processed = snap['host_bytes_written'] if page == 0x02 else snap['host_bytes_read']
            # a dirty drive rewrites (rereads) and corrects as it moves tape: DIRTY_REWRITES_PER_GB of the
            # tape-side bytes since the load (or the last reset), each a correction with possible delay
            moved = snap['tape_bytes_written'] if page == 0x02 else snap['tape_bytes_read']
            redone = int(moved * DIRTY_REWRITES_PER_GB / 1e9) if self.dirty else 0
            return [lp(0, 0), lp(1, redone), lp(2, redone), lp(3, redone), lp(4, redone),
                    lp(5, processed, length=8), lp(6, 0)]
        if page == 0x0C:
            used_mb = (cart.tape_bytes // (1024 * 1024)) if cart else 0
            cap_mb = (cart.capacity_bytes // (1024 * 1024)) if cart else 0
            ew_mb = int(cap_mb * 0.99)
            pos_mb = (cart.host_bytes(0, self.pos) // (1024 * 1024)) if cart else 0
            return [
                lp(0, snap['host_bytes_written'], length=8),
                lp(1, snap['tape_bytes_written'], length=8),
                lp(2, snap['tape_bytes_read'], length=8),
                lp(3, snap['host_bytes_read'], length=8),
                lp(4, used_mb), lp(5, ew_mb), lp(6, cap_mb - ew_mb), lp(7, min(pos_mb, used_mb)),
                lp(8, int(self.profile.buffer_mb * MB) // (1024 * 1024)),
                lp(0x100, 1 if self.dirty else 0, length=8),     # cleaning required
            ]
        if page == 0x14:
            hours = int((now - (self.load_time or now)) // 3600)
            return [
                lp(0, self.lifetime['loads']), lp(1, 0), lp(2, hours), lp(3, hours),
                lp(4, int(self.lifetime['tape_bytes_written'] / 1e6)),   # metres: estimate 1 MB/m
                lp(0xD, self.lifetime['loads']), lp(0xE, 0), lp(0xF, 0),
                lp(0x80, 1 if self.removal_prevented else 0, length=1),
            ]
        if page == 0x17:
            if cart is None:
                return [lp(0, 0, length=1)]
            mb_w = int(snap['host_bytes_written'] / MB)
            mb_r = int(snap['host_bytes_read'] / MB)
            ratio = self._ratio(snap['host_bytes_written'], snap['tape_bytes_accepted'])
            return [
                lp(0, 1, length=1), lp(1, self.cartridge_loads(cart)),
                lp(2, int(cart.tape_bytes / (2 * 1024 * 1024))),
                lp(3, 0), lp(4, 0), lp(5, 0), lp(6, 0), lp(7, 0), lp(8, 0), lp(9, 0),
                lp(0xE, mb_w), lp(0xF, mb_r), lp(0x12, ratio, length=2),
                lp(0x16, cart.capacity_bytes // MB), lp(0x17, cart.tape_bytes // MB),
                lp(0x40, scsi.pad(cart.barcode, 32), flags=0x01), lp(0x42, scsi.pad(cart.barcode, 32), flags=0x01),
                lp(0x43, scsi.pad('TAPEOPS', 8), flags=0x01),
                lp(0x45, scsi.pad('Ultrium-%d' % cart.generation, 10), flags=0x01),
                lp(0x80, 1 if cart.write_protected else 0, length=1),
                lp(0x81, 1 if cart.worm else 0, length=1),
            ]
        if page in (0x1B, 0x32):
            def pair(code, n):
                # whole megabytes, then the bytes beyond them (HP allows a signed remainder
                # after rounding; like IBM's drives the lab rounds down, so it is never negative)
                mb = int(n // MB)
                return [lp(code, mb), lp(code + 1, int(n - mb * MB))]
            out = [lp(0, self._ratio(snap['host_bytes_read'], snap['tape_bytes_read']), length=2),
                   lp(1, self._ratio(snap['host_bytes_written'], snap['tape_bytes_accepted']), length=2)]
            out += pair(2, snap['host_bytes_read']) + pair(4, snap['tape_bytes_read'])
            out += pair(6, snap['host_bytes_written']) + pair(8, snap['tape_bytes_written'])
            if page == 0x1B:
                out.append(lp(0x100, 1 if self.compression else 0, length=1))
            return out
        if page == 0x2E:
            active = set(self.tape_alert_flags())
            return [lp(code, 1 if code in active else 0, length=1, flags=0x03)
                    for code in range(1, TAPEALERT_FLAGS + 1)]
        if page == 0x34:
            return self._performance_page(snap)
        return []

    @staticmethod
    def _ratio(host, tape):
        return int(round(100.0 * host / tape)) if tape else 0

    def _performance_page(self, snap):
        """HP "Performance Data" (0x34), parameters 0..4 as HP documents them, then the lab's counters."""
        lp = scsi.log_parameter
        unit = 100 * 1000.0          # 100 KB/s (decimal)
        written_mb = snap['tape_bytes_written'] / MB
        per_100mb = int(round(snap['backhitches'] * 100.0 / written_mb)) if written_mb >= 1 else 0
        secs = snap['session_seconds']
        into_buffer = snap['session_tape_bytes'] / secs / unit if secs > 0 else 0
        current = snap['session_host_bytes'] / secs / unit if secs > 0 else 0
        top = self.profile.top_mb_s * MB / unit
        ratio = (snap['session_host_bytes'] / snap['session_tape_bytes']) if snap['session_tape_bytes'] else 1.0
        maximum = top * ratio

        def two(v):
            return min(0xFFFF, int(round(v)))
        return [
            lp(0, two(per_100mb), flags=0x60, length=2),
            lp(1, two(into_buffer), flags=0x60, length=2),
            lp(2, two(maximum), flags=0x60, length=2),
            lp(3, two(current), flags=0x60, length=2),
            lp(4, two(self.profile.native_mb_s * MB / unit), flags=0x60, length=2),
            lp(0x8000, snap['backhitches'], length=4),
            lp(0x8001, self.since_load['sync_flushes'], length=4),
            lp(0x8002, int(snap['reposition_s'] * 1000), length=4),
            lp(0x8003, int(self.since_load['write_wait_ms']), length=4),
            lp(0x8004, int(round(snap['step_mb_s'] * MB / unit)), length=4),
            lp(0x8005, int(round(self.profile.buffer_mb * MB / unit)), length=4),
        ]

    # ------------------------------------------------------------ READ ATTRIBUTE
    # Service actions (SPC-4 table 153; sg_read_attr's names): 0x00 attribute values, 0x01 attribute list,
    # 0x02 logical volume list, 0x03 partition list, 0x05 supported attributes. 0x04 is SMC-2's (element
    # addresses of a changer): a drive refuses it.
    READ_ATTRIBUTE_ACTIONS = (0x00, 0x01, 0x02, 0x03, 0x05)

    def mam_attributes(self, cart):
        """The cartridge memory as READ ATTRIBUTE gives it: ``[(id, byte 2 (read-only, format), value), ...]``.

        The attributes a real LTO cartridge gives (the HP Ultrium 6 capture in tests/unit/fixtures/sg_read_attr:
        the same ids, with the lengths and formats of sg_read_attr's table) with the lab cartridge's own
        values, plus the barcode (0806h, a host attribute: on a real cartridge only when an application or
        library wrote it there; the lab's cartridges carry theirs). Capacities and byte counts in MiB (SPC-4:
        increments of 1 048 576 bytes) of tape-side bytes, after compression (HP Ultrium TRM Q1530-90901:
        "after any data compression has been applied"). Not given, as the real LTO-6 cartridge gives none of
        them: the usage histories (0340h, 0341h) and the host attributes an application writes (0800h-0805h,
        0807h on: "Date and time last written" among them); nor vendor attributes.
        """
        memory = cart.memory
        usage = {'written': self.load_usage['written'], 'read': self.load_usage['read']} \
            if cart is self.loaded else {'written': memory['load_written'], 'read': memory['load_read']}
        loads = self.cartridge_loads(cart)
        previous = memory['flags_previous']
        if self.cartridge_mode(cart) == 'worn':
            # the loads the mode stands for were in a drive too: the one before this raised the life flags
            previous |= flag_bits(self._life_flags(cart, loads - 1))
        history = [scsi.pad(vendor, 8) + scsi.pad(serial, 32) for vendor, serial in memory['loaded_by']]
        history += [bytes(40)] * (4 - len(history))
        ro_bin, ro_ascii = ATTR_READ_ONLY | ATTR_BINARY, ATTR_READ_ONLY | ATTR_ASCII
        attrs = [
            (0x0000, ro_bin, scsi.u64(cart.remaining_bytes // MIB)),
            (0x0001, ro_bin, scsi.u64(cart.capacity_bytes // MIB)),
            (0x0002, ro_bin, scsi.u64(previous)),
            (0x0003, ro_bin, scsi.u64(loads)),
            (0x0004, ro_bin, None),                                     # MAM space remaining: below
            (0x0005, ro_ascii, scsi.pad('LTO-CVE', 8)),
            (0x0006, ro_bin, bytes((cart.density_code,))),
            (0x0007, ro_bin, scsi.u16(0)),                              # initialization count
            (0x0008, ro_ascii, bytes(32)),                              # volume identifier: none
            (0x0009, ro_bin, scsi.u32(memory['volume_changes'])),
        ] + [(0x020A + i, ro_ascii, entry) for i, entry in enumerate(history[:4])] + [
            (0x0220, ro_bin, scsi.u64((memory['life_written'] + usage['written']) // MIB)),
            (0x0221, ro_bin, scsi.u64((memory['life_read'] + usage['read']) // MIB)),
            (0x0222, ro_bin, scsi.u64(usage['written'] // MIB)),
            (0x0223, ro_bin, scsi.u64(usage['read'] // MIB)),
            (0x0224, ro_bin, b'\xff' * 8),                              # no encrypted block
            (0x0225, ro_bin, b'\xff' * 8),
            (0x0400, ro_ascii, scsi.pad('TAPEOPS', 8)),
            (0x0401, ro_ascii, scsi.pad(cart.medium_serial, 32)),
            (0x0402, ro_bin, scsi.u32(cart.medium_length_m)),
            (0x0403, ro_bin, scsi.u32(MEDIUM_WIDTH_0_1MM)),
            (0x0404, ro_ascii, scsi.pad('LTO-CVE', 8)),
            (0x0405, ro_bin, bytes((cart.density_code,))),
            (0x0406, ro_ascii, scsi.pad(cart.manufactured, 8)),
            (0x0407, ro_bin, scsi.u64(cart.mam_capacity)),
            (0x0408, ro_bin, bytes((0x80 if cart.worm else cart.medium_type,))),   # 80h write-once
            (0x0409, ro_bin, scsi.u16(0)),
            (0x0806, ATTR_ASCII, scsi.pad(cart.barcode, 32)),
        ]
        # MAM space remaining: the memory's size less what these attributes take (5 header bytes each); a
        # real drive also keeps its own pages there (the LTO-6 capture: 3062 of 16384 left), the lab does not
        used = sum(5 + (8 if value is None else len(value)) for _id, _fmt, value in attrs)
        return [(ident, fmt, scsi.u64(max(0, cart.mam_capacity - used)) if value is None else value)
                for ident, fmt, value in attrs]

    def cmd_read_attribute(self, cdb, data):
        action = cdb[1] & 0x1F
        volume = cdb[5]
        partition = cdb[7]
        first = scsi.be(cdb, 8, 2)
        alloc = scsi.be(cdb, 10, 4)
        if action not in self.READ_ATTRIBUTE_ACTIONS:
            return scsi.invalid_field_in_cdb(1, 4)
        if volume != 0:                 # one logical volume, one partition (the lab does not partition)
            return scsi.invalid_field_in_cdb(5)
        if partition != 0:
            return scsi.invalid_field_in_cdb(7)
        if action == 0x02 or action == 0x03:
            # AVAILABLE DATA (2 bytes: what follows), first number 0, one volume / partition
            return scsi.good(scsi.u16(2) + bytes((0, 1)), alloc)
        self.save_memory()              # the memory as of now (a real drive keeps it current in the load)
        attrs = self.mam_attributes(self.loaded)
        if action == 0x00:
            body = b''.join(scsi.u16(ident) + bytes((fmt,)) + scsi.u16(len(value)) + value
                            for ident, fmt, value in attrs if ident >= first)
        else:                           # 0x01 the attributes the cartridge has, 0x05 those the drive supports
            body = b''.join(scsi.u16(ident) for ident, _fmt, _value in attrs if ident >= first)
        return scsi.good(scsi.u32(len(body)) + body, alloc)


_HANDLERS = {
    0x00: Drive.cmd_test_unit_ready,
    0x01: Drive.cmd_rewind,
    0x03: Drive.cmd_request_sense,
    0x05: Drive.cmd_read_block_limits,
    0x08: Drive.cmd_read6,
    0x0A: Drive.cmd_write6,
    0x10: Drive.cmd_write_filemarks,
    0x11: Drive.cmd_space,
    0x12: Drive.cmd_inquiry,
    0x15: Drive.cmd_mode_select6,
    0x16: Drive.cmd_reserve_release,
    0x17: Drive.cmd_reserve_release,
    0x19: Drive.cmd_erase,
    0x1A: Drive.cmd_mode_sense6,
    0x1B: Drive.cmd_load_unload,
    0x1D: Drive.cmd_send_diagnostic,
    0x1E: Drive.cmd_prevent_allow,
    0x2B: Drive.cmd_locate10,
    0x34: Drive.cmd_read_position,
    0x44: Drive.cmd_report_density,
    0x4C: Drive.cmd_log_select,
    0x4D: Drive.cmd_log_sense,
    0x55: Drive.cmd_mode_select10,
    0x5A: Drive.cmd_mode_sense10,
    0x8C: Drive.cmd_read_attribute,
}
