# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The LTO drive model: what each generation needs from the host.

Private to this collection: may change without notice. Pure Python, no
Ansible imports, importable on Python 3.9+ managed hosts.

* ``lookup()`` gives a :class:`DriveSpec` per generation (1-10), form factor
  where it matters (LTO-8, LTO-9) and vendor where the vendor publishes its
  speed-matching range (IBM, HPE).
* ``identify_inquiry()`` and ``generation_from_density()`` turn SCSI INQUIRY
  strings and the density code that ``mt status`` / ``tapeinfo`` print into a
  generation.
* ``required_feed()`` is the rate math: the host feed (MB/s of uncompressed
  data) that keeps a drive at full speed and at its speed-matching floor for a
  given on-tape compression ratio; ``tape_ratio_from_software()`` and
  ``estimate_compressibility()`` estimate that ratio from a cheap software
  compressor on a sample.

All rates are decimal MB/s (10**6 bytes/s) and capacities decimal GB, as the
vendors quote them. Every number below names its source (keys of
``SOURCES``; full references in docs/drive-model.md). Where no source gives a
number (most speed-matching floors), the model says ``None`` = unknown and the
inventory may set it per drive; it never guesses one.
"""

from __future__ import annotations

import dataclasses
import math
import re
import zlib

# Short citations. The docs (docs/drive-model.md) carry the full references.
# Short citations. The docs (docs/drive-model.md) carry the full references.
SOURCES = {
    'ibm-ts4300-speed': 'IBM TS4300 docs, "Speed matching", tables 1 (full height) and 2 (half height)',
    'ibm-lto10-speed': 'IBM docs STAKKZ con_LTOdrive_speedmatching (Generation 10 and 10 PA media columns)',
    'ibm-ts4500-perf': 'IBM TS4500 docs, "Performance specifications for LTO tape drives" (native data rates, Inquiry strings)',
    'ibm-lto10-drives': 'IBM docs STAKKZ "Tape drives" table 2 (LTO-10: Inquiry ULT3580-TDA / ULTRIUM-TDA, 400 MB/s native)',
    'ibm-ts4500-carts': 'IBM TS4500 docs, "Capacity of supported LTO tape cartridges" (L3..L9, M8)',
    'ibm-ultrium2-guide': 'IBM TotalStorage LTO Ultrium 2 Tape Drive (T400) guide, "Speed Matching and Channel Calibration"',
    'ibm-ultrium3-guide': 'IBM TotalStorage Ultrium Tape Drive T800 (Generation 3) guide, "Speed Matching"',
    'ibm-t200-density': 'IBM Ultrium T200/T200F SCSI reference, table 75 "Density Information for LTO Formats"',
    'ibm-dtl': 'IBM docs dtl 2.12.3, "Performance specifications for LTO tape drives" (LTO-9/10 FH: sustained, '
               'burst, load, unload, rewind, space-record times)',
    'ibm-ts2290': 'IBM TS2290 (LTO HH) user manual, LTO 9..LTO 5 table (native, sustained, burst, load, unload, '
                  'rewind, space-record times)',
    'ibm-stakkz-drives': 'IBM docs STAKKZ "Tape drives" (FH: native per media, sustained compressed per interface)',
    'hp-gen3-trm': 'HP Ultrium drives technical reference manual, Generation 3, volume 4 (Q1530-90901 ed. 5, 2004), ch. 10',
    'hp-gen2-trm': 'HP Ultrium drives technical reference manual, generations 1 and 2 (C7379-90900), REPORT DENSITY SUPPORT',
    'lto5-ug-buffer': '"LTO-5 Tape Drive User\'s Guide" (hosted as the Dell LTO-5 manual), ch. 4 "Data Buffer": 256 MB',
    'quantum-lto4-density': 'Quantum LTO-4 SCSI reference, REPORT DENSITY SUPPORT descriptor fields',
    'quantum-lto9hh-speed': "Quantum LTO-9 HH SAS User's Guide, \"Speed Matching\" (same rates as IBM's tables)",
    'mt-st-1.7': 'mt-st 1.7 "mt densities" (mt.c density_tbl), fixture mt_densities__mt-st-1.7-debian12__1.txt',
    'mt-st-git': 'mt-st upstream mt.c density_tbl after 1.7 (github.com/iustin/mt-st, commit 024313d4541c): 0x60 LTO-9',
    'ibm-hh9-capture': 'real IBM ULT3580-HH9 (LTO-9) mt status showing density 0x60, fixture mt_status_mtst__IBM-ULT3580-HH9-N9B1-lin_tape__2.txt',
    'freebsd-libmt-lto10': 'FreeBSD commit 930486f9be5c "mt(1)/libmt: Add LTO-10 density codes and specs" (2026-03-02)',
    'lto-compat': 'LTO compatibility: Archiware LTO table, HPE QuickSpecs, LTO-9 press release (L9/L8 only), '
                  'LTO roadmap notes (M8 only in LTO-8 drives), FreeBSD libmt (LTO-10 reads LTO-10 only), '
                  'Oracle OKM ("LTO-5, 6 and 7 read two generations back")',
    'interface-links': 'IBM burst rates (600 MB/s 6 Gb SAS, 1200 MB/s 12 Gb SAS, 800 MB/s 8 Gb FC, '
                       '3200 MB/s 32 Gb FC) in IBM TS4500 / dtl / TS2290 tables',
    'issue-2': 'tapeops.qualify issue 2, section 4 (native rates as collected for the project)',
    'lto-dc': 'LTO-DC is an ALDC-based Lempel-Ziv class 1 compressor (HP Ultrium 3 TRM ch. 10; IBM Ultrium 4 description)',
    'ibm-redbook-lto56': 'IBM Redbook SG24-5946 "IBM Tape Library Guide for Open Systems" (Aug 2024), table 2-16 '
                         '(LTO-6 full height) and its generation 5 column, as transcribed in github.com/bnachtwey/'
                         'IT-Stuff Storage/Tape/Speedmatching.md @1900652d (secondary: its LTO-7 and LTO-9 columns '
                         'match IBM\'s own TS4300 tables exactly)',
    'articleclick-lto4': 'articleclick.com, "New Mechanism of IBM LTO-4 Tape Media" (2008-11-10): "any of the 6 speeds '
                         'of 30MB/sec, 48MB/sec, 66MB/sec, 84MB/sec, 103MB/sec, or 120MB/sec" (secondary, restating '
                         'IBM; the same article misstates the LTO-3 range, so it is used only where IBM gives nothing)',
    'seed-001': 'field measurement "seed 001" (tapeops.qualify issues 22/23): HP LTO-4 FH SAS, HPE Data Protector '
                'A.09.07, CentOS 6.8, 256 KiB blocks, one 16 GB file of 1.6:1 data: 108.84 MB/s with a synchronous '
                'file mark every 2000 MB, 188.24 MB/s with immediate marks (183.91 / 190.48 MB/s with 20000 MB '
                'segments)',
    'enstore-guide': 'Fermilab Enstore user performance guidelines (www-isd.fnal.gov/UserPerformanceGuidlines.html, '
                     '2008 and 2009 versions): "The observed per file overhead of enstore is on the order of 3 '
                     'seconds to write a file-mark after each file" (STK 9940B, LTO-3, IBM LTO-4); enstore '
                     'src/migrate.py: "file_mark_seconds = 3 #Observed time for many types of drives."',
    'estimate': 'estimated by the rule stated in the spec\'s "estimated" field (no vendor figure found)',
    'inventory': 'set per drive in the inventory',
}

GENERATIONS = tuple(range(1, 11))
FORM_FACTORS = ('FH', 'HH')
VENDORS = ('IBM', 'HPE')
INTERFACES = ('SAS', 'FC', 'SCSI')

# Largest nominal compression ratio of any LTO generation (2.5:1 from LTO-6 on).
MAX_NOMINAL_RATIO = 2.5

# Fields the inventory may override per drive (tapeops_drives[].model: {field: value}).
OVERRIDABLE = ('native_mb_s', 'speed_steps_mb_s', 'speed_floor_mb_s', 'buffer_mb', 'backhitch_s', 'sync_mark_s',
               'load_s', 'unload_s', 'rewind_s', 'locate_s', 'compressed_max_mb_s', 'interface_mb_s',
               'compression_ratio', 'native_capacity_gb')


@dataclasses.dataclass(frozen=True)
class DriveSpec:
    """One drive model: generation, mechanism, form factor, interface and its numbers.

    Every number is sourced (``sources``) or estimated by a stated rule
    (``estimated``: field name -> rule in words). Nothing is silently
    "unknown": the forecast needs every field.
    """

    generation: int
    form_factor: str | None      # 'FH', 'HH', or None where it makes no difference
    vendor: str | None           # mechanism maker 'IBM', 'HPE', or None (not known: IBM's tables used)
    native_mb_s: float
    native_capacity_gb: int
    compression_ratio: float     # nominal: 2.0 up to LTO-5, 2.5 from LTO-6
    speed_floor_mb_s: float      # slowest speed-matching step (native MB/s)
    speed_steps_mb_s: tuple      # every speed-matching step, fastest first
    label: str
    sources: tuple
    notes: tuple = ()            # assumptions the lookup made, in words
    interface: str | None = None                 # 'SAS', 'FC', 'SCSI' or None (not given)
    speed_matching: str = 'steps'                # 'steps' (listed rates) or 'range' (continuous, modelled as steps)
    buffer_mb: float = 0.0                       # drive data buffer, decimal MB
    backhitch_s: float = 0.0                     # one stop - reposition - restart
    sync_mark_s: float = 0.0                     # a synchronous file mark, beyond its buffer drain
    load_s: float = 0.0                          # load/thread to ready
    unload_s: float = 0.0
    rewind_s: float = 0.0                        # average rewind
    locate_s: float = 0.0                        # average locate (space record from load point)
    compressed_max_mb_s: float = 0.0             # most host data per second the drive takes (sustained, compressed)
    interface_mb_s: float | None = None          # the drive's link (burst); None when the interface is not given
    density_code: int = 0                        # the generation's own media
    writes: tuple = ()                           # media labels the drive writes (L9, L8, M8, LA, PA...)
    reads_only: tuple = ()                       # media labels it reads but cannot write
    estimated: tuple = ()                        # ((field, rule), ...) for every field no source gives

    def as_dict(self):
        """Plain dict for module results and JSON."""
        result = dataclasses.asdict(self)
        for key in ('speed_steps_mb_s', 'sources', 'notes', 'writes', 'reads_only'):
            result[key] = list(getattr(self, key))
        result['estimated'] = dict(self.estimated)
        result['density_code'] = '0x%02x' % self.density_code if self.density_code else None
        return result

    def is_estimated(self, field):
        """True when no source gives ``field`` for this drive."""
        return any(name == field for name, _rule in self.estimated)


# ---------------------------------------------------------------------------
# Per-generation data for the generation's own cartridge.
# generation: (native capacity GB, nominal compression ratio, native MB/s, sources)
# ---------------------------------------------------------------------------
_GENERATION = {
    # LTO-1: 100 GB = density descriptor "95367 MB" of 2**20 bytes (IBM T200 table 75;
    # Quantum LTO-4 REPORT DENSITY lists 100,000 MB). 15 MB/s native: issue 2.
    1: (100, 2.0, 15.0, ('ibm-t200-density', 'quantum-lto4-density', 'issue-2')),
    # LTO-2: 200 GB (HP gen 1/2 TRM: capacity 200,000 MB; Quantum LTO-4 reference).
    # Native rate is vendor-specific: IBM 35 MB/s (top speed-matching step, IBM
    # Ultrium 2 guide), HP 30 MB/s (issue 2). Generic uses the higher one so the
    # full-speed feed requirement errs high, never low.
    2: (200, 2.0, 35.0, ('hp-gen2-trm', 'quantum-lto4-density', 'ibm-ultrium2-guide')),
    # LTO-3: 400 GB (IBM TS4500 cartridges), 80 MB/s (IBM TS4500 performance table
    # "80 Mb/s (L3)"; HP gen 3 TRM "Native: 80 MB/s").
    3: (400, 2.0, 80.0, ('ibm-ts4500-carts', 'ibm-ts4500-perf', 'hp-gen3-trm')),
    # LTO-4: 800 GB, 120 MB/s (IBM TS4500 cartridges / performance "120 Mb/s (L4)").
    4: (800, 2.0, 120.0, ('ibm-ts4500-carts', 'ibm-ts4500-perf')),
    # LTO-5: 1.5 TB, 140 MB/s, 2:1 (IBM TS4500 tables: "L5 and earlier compressed at 2:1").
    5: (1500, 2.0, 140.0, ('ibm-ts4500-carts', 'ibm-ts4500-perf')),
    # LTO-6: 2.5 TB, 160 MB/s, 2.5:1 (IBM TS4500 tables: "L6 ... compressed at 2.5:1").
    6: (2500, 2.5, 160.0, ('ibm-ts4500-carts', 'ibm-ts4500-perf')),
    # LTO-7: 6 TB, 300 MB/s (IBM TS4500 tables).
    7: (6000, 2.5, 300.0, ('ibm-ts4500-carts', 'ibm-ts4500-perf')),
    # LTO-8: 12 TB, 360 MB/s full height (IBM TS4500 tables); half height below.
    8: (12000, 2.5, 360.0, ('ibm-ts4500-carts', 'ibm-ts4500-perf')),
    # LTO-9: 18 TB, 400 MB/s full height (IBM TS4500 tables); half height below.
    9: (18000, 2.5, 400.0, ('ibm-ts4500-carts', 'ibm-ts4500-perf')),
    # LTO-10: 30 TB standard (LA) cartridge, 40 TB premium (PA, density 0x63),
    # 75 TB at 2.5:1 (FreeBSD libmt commit); 400 MB/s native (IBM LTO-10 drives).
    10: (30000, 2.5, 400.0, ('freebsd-libmt-lto10', 'ibm-lto10-drives')),
}

# Native rates that differ by form factor or vendor: (generation, form_factor, vendor) -> (MB/s, source).
# LTO-8 and LTO-9 half-height drives run 300 MB/s (IBM TS2290 "300 Mb/s (L9)", TS4300 user
# manual "LTO8 1U (Half-height) ... 300 MB/s").
_NATIVE_OVERRIDE = {
    (2, None, 'HPE'): (30.0, 'issue-2'),
    (8, 'HH', None): (300.0, 'ibm-ts2290'),
    (9, 'HH', None): (300.0, 'ibm-ts2290'),
}
_FORM_FACTOR_MATTERS = frozenset((8, 9))

# Density code of each generation's own media (LTFS tape_ops.h; FreeBSD libmt; mt-st).
_OWN_DENSITY = {1: 0x40, 2: 0x42, 3: 0x44, 4: 0x46, 5: 0x58, 6: 0x5A, 7: 0x5C, 8: 0x5E, 9: 0x60, 10: 0x62}

# What each generation writes and reads ('lto-compat'): LTO-1..7 write one generation back
# and read two back; LTO-8 writes L8, L7 and M8 (LTO-7 Type M initialised to 9 TB) and
# reads nothing older; LTO-9 reads/writes L9 and L8 only (no M8, no L7); LTO-10 only its own
# LA / PA cartridges.
_COMPAT = {
    1: (('L1',), ()),
    2: (('L2', 'L1'), ()),
    3: (('L3', 'L2'), ('L1',)),
    4: (('L4', 'L3'), ('L2',)),
    5: (('L5', 'L4'), ('L3',)),
    6: (('L6', 'L5'), ('L4',)),
    7: (('L7', 'L6'), ('L5',)),
    8: (('L8', 'L7', 'M8'), ()),
    9: (('L9', 'L8'), ()),
    10: (('LA', 'PA'), ()),
}

# Speed matching: (generation, form_factor, vendor) -> (steps fastest first, kind, source).
# kind 'steps': the drive runs at one of the listed rates; 'range': the vendor gives a
# continuous range (floor, top), modelled as RANGE_STEPS even steps.
_SPEED = {
    # "one of five speeds ... 17.5, 21.9, 26.25, 30.63, or 35 MB/s" (IBM Ultrium 2 guide).
    (2, None, 'IBM'): ((35.0, 30.63, 26.25, 21.9, 17.5), 'steps', 'ibm-ultrium2-guide'),
    # "one of five speeds ... 40, 50, 60, 70, or 80 MB/s" (IBM Ultrium 3 / T800 guide).
    (3, None, 'IBM'): ((80.0, 70.0, 60.0, 50.0, 40.0), 'steps', 'ibm-ultrium3-guide'),
    # "ATS data rate range (3:1) 27-80 MB/s (U3)"; HP lists the range, not the steps.
    (3, None, 'HPE'): ((80.0, 27.0), 'range', 'hp-gen3-trm'),
    # IBM LTO-4, LTO-5 and LTO-6 full height: no IBM page could be read; secondary copies of IBM's
    # figures (see SOURCES). Fourteen even steps from 160 (LTO-6) and the LTO-5 column of the
    # same transcription; the LTO-5 form factor is not stated there, so it applies to both.
    (4, None, 'IBM'): ((120.0, 103.0, 84.0, 66.0, 48.0, 30.0), 'steps', 'articleclick-lto4'),
    (5, None, 'IBM'): ((140.0, 130.0, 120.0, 112.7, 105.5, 98.2, 90.9, 83.6, 76.4, 69.1, 61.8, 53.5, 46.3, 40.0),
                       'steps', 'ibm-redbook-lto56'),
    (6, 'FH', 'IBM'): ((160.0, 150.77, 141.54, 132.31, 123.08, 113.85, 104.62, 95.38, 86.15, 76.92, 67.69, 58.46,
                        49.23, 40.0), 'steps', 'ibm-redbook-lto56'),
    # IBM TS4300 "Speed matching": generation 7 media, full- and half-height
    # drives list the same twelve rates.
    (7, None, 'IBM'): ((306.0, 287.52, 268.56, 250.66, 231.86, 213.06, 194.26,
                        175.46, 157.67, 138.52, 120.11, 101.46), 'steps', 'ibm-ts4300-speed'),
    # Generation 8 media, full height (table 1) and half height (table 2).
    (8, 'FH', 'IBM'): ((365.0, 341.0, 318.0, 306.4, 273.0, 249.5, 226.0, 203.0,
                        180.0, 157.5, 135.0, 112.0), 'steps', 'ibm-ts4300-speed'),
    (8, 'HH', 'IBM'): ((306.4, 273.0, 249.5, 226.0, 203.0, 180.0, 157.5, 135.0,
                        112.0), 'steps', 'ibm-ts4300-speed'),
    # Generation 9 media, full height (table 1) and half height (table 2).
    (9, 'FH', 'IBM'): ((408.0, 385.0, 366.0, 347.0, 325.0, 305.0, 284.0, 263.0,
                        244.0, 223.0, 203.0, 177.0), 'steps', 'ibm-ts4300-speed'),
    (9, 'HH', 'IBM'): ((284.0, 263.0, 244.0, 223.0, 203.0, 177.0), 'steps', 'ibm-ts4300-speed'),
    # Generation 10 (LA) media. Premium PA media runs 407..162 MB/s (14 steps),
    # so its floor is 162; the drive spec describes the standard cartridge.
    (10, None, 'IBM'): ((407.0, 387.0, 368.0, 349.0, 330.0, 311.0, 291.0, 272.0,
                         253.0, 234.0, 214.0, 195.0, 176.0, 157.0), 'steps', 'ibm-lto10-speed'),
}
# A continuous range is modelled as this many even steps (a 27-80 MB/s range gives
# steps 1.7 MB/s apart: finer than any listed step table).
RANGE_STEPS = 32

# Drive buffer (decimal MB): (generation, form_factor, vendor) -> (MB, source). Matched
# most specific first; None entries in the key match any value.
_BUFFER = {
    (3, None, 'HPE'): (64.0, 'hp-gen3-trm'),       # "64 MB buffer"
    (5, None, 'IBM'): (256.0, 'lto5-ug-buffer'),   # "the LTO-5 Tape Drive has a 256-Mbyte buffer"
}

# Back-hitch (stop, reverse, reposition, restart) seconds: no vendor publishes it.
_BACKHITCH = {}

# IBM nominal mechanics (seconds): (generation, form_factor) -> (load, unload, rewind, locate, source).
# None = not given by the table; estimated from the nearest generation.
_MECHANICS = {
    (5, 'FH'): (12.0, 17.0, None, None, 'ibm-ts4500-perf'),
    (6, 'FH'): (12.0, 17.0, None, None, 'ibm-ts4500-perf'),
    (7, 'FH'): (15.0, 20.0, None, None, 'ibm-ts4500-perf'),
    (8, 'FH'): (15.0, 24.0, None, None, 'ibm-ts4500-perf'),
    (9, 'FH'): (17.0, 30.0, 55.0, 45.0, 'ibm-dtl'),
    (10, 'FH'): (12.0, 27.0, 62.0, 65.0, 'ibm-dtl'),
    (5, 'HH'): (12.0, 17.0, None, 60.0, 'ibm-ts2290'),
    (6, 'HH'): (12.0, 17.0, None, 62.0, 'ibm-ts2290'),
    (7, 'HH'): (15.0, 20.0, 60.0, 56.0, 'ibm-ts2290'),
    (8, 'HH'): (15.0, 24.0, 59.0, 59.0, 'ibm-ts2290'),
    (9, 'HH'): (16.0, 56.0, 62.0, 65.0, 'ibm-ts2290'),
}

# Sustained compressed rate (host MB/s the drive takes) by (generation, form_factor, interface):
# IBM tables (ibm-stakkz-drives / ibm-dtl for FH, ibm-ts2290 for HH). Where the table gives one
# figure "FC and SAS" the interface is None.
_COMPRESSED_MAX = {
    (5, None, None): (280.0, 'ibm-ts4500-perf'),
    (6, None, None): (400.0, 'ibm-ts4500-perf'),
    (7, 'FH', 'FC'): (750.0, 'ibm-stakkz-drives'),
    (7, 'HH', 'FC'): (700.0, 'ibm-ts2290'),
    (7, 'HH', 'SAS'): (500.0, 'ibm-ts2290'),
    (8, 'FH', 'FC'): (750.0, 'ibm-stakkz-drives'),
    (8, 'HH', 'FC'): (700.0, 'ibm-ts2290'),
    (8, 'HH', 'SAS'): (600.0, 'ibm-ts2290'),
    (9, 'FH', 'FC'): (750.0, 'ibm-dtl'),
    (9, 'FH', 'SAS'): (1000.0, 'ibm-dtl'),
    (9, 'HH', 'FC'): (700.0, 'ibm-ts2290'),
    (9, 'HH', 'SAS'): (720.0, 'ibm-ts2290'),
    # IBM dtl gives 1000 MB/s on FC and SAS, IBM STAKKZ 1200 MB/s on FC: the higher one is
    # used for FC so that the full-speed requirement errs high.
    (10, None, 'FC'): (1200.0, 'ibm-stakkz-drives'),
    (10, None, 'SAS'): (1000.0, 'ibm-dtl'),
}

# The drive's own link (burst) by (generation, interface): IBM burst figures ('interface-links').
_LINK = {
    'SAS': {5: 600.0, 6: 600.0, 7: 600.0, 8: 600.0, 9: 1200.0, 10: 1200.0},
    'FC': {5: 800.0, 6: 800.0, 7: 800.0, 8: 800.0, 9: 800.0, 10: 3200.0},
}

_GEN_CHARS = {'A': 10}


def _check_generation(value):
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError('LTO generation must be a whole number 1-10, got %r.' % (value,))
    if value not in GENERATIONS:
        raise ValueError(
            'LTO generation %d is not one this model knows (1-10). Check the drive '
            '(lsscsi / sg_inq vendor and product) or set the generation in the inventory.' % value)
    return value


def normalize_form_factor(value):
    """'FH', 'HH' or None (not given) from the ways a form factor is written ('full height', 'half', 'TD'...)."""
    if value is None:
        return None
    text = re.sub(r'[\s_-]+', '', str(value)).upper()
    if text in ('FH', 'FULLHEIGHT', 'FULL', 'TD'):
        return 'FH'
    if text in ('HH', 'HALFHEIGHT', 'HALF'):
        return 'HH'
    raise ValueError("form factor must be 'FH' (full height) or 'HH' (half height), got %r." % (value,))


def _normalize_vendor(value):
    """'IBM', 'HPE' or None. Other vendors (Quantum, Tandberg, Dell...) are generic."""
    if value is None:
        return None
    text = re.sub(r'[^A-Z]', '', str(value).upper())
    if text == 'IBM':
        return 'IBM'
    if text in ('HP', 'HPE', 'HEWLETTPACKARD', 'HEWLETTPACKARDENTERPRISE'):
        return 'HPE'
    return None


def _normalize_interface(value):
    if value is None or value == '':
        return None
    text = re.sub(r'[^A-Z]', '', str(value).upper())
    if text in ('SAS', 'SERIALATTACHEDSCSI'):
        return 'SAS'
    if text in ('FC', 'FIBRECHANNEL', 'FIBERCHANNEL', 'FCP'):
        return 'FC'
    if text in ('SCSI', 'PARALLELSCSI', 'LVD', 'ULTRASCSI', 'SPI'):
        return 'SCSI'
    raise ValueError("interface must be 'SAS', 'FC' or 'SCSI', got %r." % (value,))


_GEN_TEXT_RE = re.compile(
    r'^(?:LTO|ULTRIUM|GEN(?:ERATION)?)?\s*(?P<gen>10|[1-9])\s*(?P<ff>FH|HH|FULL(?:HEIGHT)?|HALF(?:HEIGHT)?)?$')


def parse_generation(text):
    """Parse 'LTO-9 FH', 'lto9', 'LTO9-HH', 'Ultrium 9', 'LTO-10' or 9 into (generation, form_factor).

    form_factor is 'FH', 'HH' or None when the text does not say. Raises
    ValueError with the accepted forms on anything else.
    """
    if isinstance(text, bool):
        raise ValueError('LTO generation must be a number 1-10 or text like "LTO-9 HH", got %r.' % (text,))
    if isinstance(text, int):
        return _check_generation(text), None
    if not isinstance(text, str):
        raise ValueError('LTO generation must be a number 1-10 or text like "LTO-9 HH", got %r.' % (text,))
    squeezed = re.sub(r'[\s_-]+', '', text.upper())
    match = _GEN_TEXT_RE.match(squeezed)
    if not match:
        raise ValueError(
            'Cannot read an LTO generation from %r. Use a number 1-10 or text like '
            '"LTO-9", "LTO-9 HH", "lto8", "Ultrium 7" or "LTO-10".' % (text,))
    return _check_generation(int(match.group('gen'))), normalize_form_factor(match.group('ff'))


def _match_key(table, *query):
    """Most specific entry of ``table`` whose key matches ``query`` (None in a key matches anything)."""
    best = None
    best_score = -1
    for key, value in table.items():
        if key[0] != query[0]:
            continue
        if any(k is not None and k != q for k, q in zip(key[1:], query[1:])):
            continue
        score = sum(1 for k in key[1:] if k is not None)
        if score > best_score:
            best, best_score = value, score
    return best


def _nearest_sourced(generation, candidates, prefer):
    """The sourced generation nearest to ``generation``; ties go to ``prefer(a, b)``'s choice."""
    ranked = sorted(candidates, key=lambda g: abs(g - generation))
    if not ranked:
        return None
    best = ranked[0]
    ties = [g for g in ranked if abs(g - generation) == abs(best - generation)]
    for other in ties[1:]:
        best = prefer(best, other)
    return best


def _speed_table(generation, form_factor, vendor, native):
    """(steps, kind, source or None, rule or None) for a drive."""
    entry = _SPEED.get((generation, form_factor, vendor)) or _SPEED.get((generation, None, vendor))
    if entry is not None:
        steps, kind, source = entry
        if kind == 'range':
            steps = _range_steps(steps[0], steps[-1])
        return tuple(steps), kind, source, None
    # Estimate: the same step fractions (step / top step) as the nearest generation with a
    # sourced table of the same mechanism maker (IBM for unknown makers: the most complete
    # published tables); ties go to the sibling with the higher floor fraction, which makes
    # the drive stop sooner, the cautious side for a verdict.
    maker = vendor if vendor in VENDORS else 'IBM'
    sibling_rows = dict(((gen, kind), (steps, ff)) for (gen, ff, ven), (steps, kind, _s) in _SPEED.items()
                        if ven == maker and (ff is None or ff == (form_factor or 'FH')))
    gens = sorted(set(gen for gen, _kind in sibling_rows))

    def fraction(gen):
        steps = next(v[0] for k, v in sibling_rows.items() if k[0] == gen)
        return steps[-1] / steps[0]

    sibling = _nearest_sourced(generation, gens, lambda a, b: a if fraction(a) >= fraction(b) else b)
    (steps, _ff), kind = next((v, k[1]) for k, v in sibling_rows.items() if k[0] == sibling)
    top = native
    if sibling == generation:
        result = tuple(steps) if kind != 'range' else _range_steps(steps[0], steps[-1])
    elif kind == 'range':
        result = _range_steps(top, top * steps[-1] / steps[0])
    else:
        result = tuple(round(top * s / steps[0], 2) for s in steps)
    if sibling == generation:
        rule = ('LTO-%d of unknown make: IBM\'s published LTO-%d steps used (%d steps, floor %.1f MB/s); '
                'set vendor or speed_steps_mb_s in the inventory if the drive is not an IBM-family mechanism'
                % (generation, generation, len(result), result[-1]))
    else:
        rule = ('%s LTO-%d%s speed matching: no source lists it; the step fractions of the sourced %s LTO-%d '
                'table (floor %.1f %% of the top step, %d step%s) applied to the %.0f MB/s native rate%s' % (
                    vendor or 'mechanism-unknown', generation, ' ' + form_factor if form_factor else '', maker,
                    sibling, 100.0 * steps[-1] / steps[0], len(result), '' if len(result) == 1 else 's', native,
                    '' if vendor in VENDORS else ' (maker unknown: IBM\'s published tables used)'))
    return result, kind, None, rule


def _range_steps(top, floor):
    step = (top - floor) / (RANGE_STEPS - 1)
    return tuple(round(top - i * step, 3) for i in range(RANGE_STEPS))


def lookup(generation, form_factor=None, vendor=None, speed_floor_mb_s=None, interface=None, overrides=None):
    """The :class:`DriveSpec` for a drive.

    generation: 1-10, or text accepted by :func:`parse_generation`.
    form_factor: 'FH' / 'HH' / None. Only LTO-8 and LTO-9 differ in native rate; when it is
    not given for them the full-height (faster) spec is used, so the required
    feed errs high, and a note says so.
    vendor: the mechanism's maker, 'IBM', 'HP'/'HPE' or anything else (not known: IBM's
    published tables are used and every such number is marked estimated).
    speed_floor_mb_s: per-drive floor from the inventory; overrides the table (the steps
    below it are dropped, or the floor is added as the last step).
    interface: 'SAS' / 'FC' / 'SCSI' / None: picks the sustained compressed rate and link.
    overrides: {field: value} for any field in OVERRIDABLE (inventory, per drive).
    """
    notes = []
    estimated = {}
    generation, form_factor, interface, vendor = _lookup_inputs(generation, form_factor, vendor, interface, notes)

    given_ff, form_factor = _form_factor(generation, form_factor, notes)

    capacity, ratio, native, sources = _GENERATION[generation]
    sources = list(sources)
    native_ff = form_factor if generation in _FORM_FACTOR_MATTERS else None
    native = _native_rate(generation, native_ff, vendor, native, sources, notes)

    steps, kind = _speed_steps(generation, native_ff or given_ff, vendor, native, sources, estimated)

    buffer_mb = _buffer_mb(generation, given_ff, vendor, native, sources, estimated)

    backhitch_s = _backhitch_s(generation, given_ff, vendor, sources, estimated)
    sync_mark_s, sync_mark_sources = _sync_mark_s(generation, given_ff, vendor, estimated)

    values = _mechanics_times(generation, given_ff, sources, estimated)

    compressed_max, link = _interface_rates(generation, native_ff or given_ff, interface, native, ratio, sources,
                                            estimated)

    # -- the inventory's word goes last
    overrides = dict(overrides or {})
    if speed_floor_mb_s is not None:
        overrides.setdefault('speed_floor_mb_s', speed_floor_mb_s)
    fields = {
        'native_mb_s': float(native), 'native_capacity_gb': capacity, 'compression_ratio': ratio,
        'speed_steps_mb_s': tuple(float(s) for s in steps), 'buffer_mb': float(buffer_mb),
        'backhitch_s': float(backhitch_s), 'sync_mark_s': float(sync_mark_s),
        'compressed_max_mb_s': float(compressed_max),
        'interface_mb_s': link,
    }
    fields.update(values)
    _apply_overrides(fields, overrides, generation, native, notes, sources, estimated)
    if 'sync_mark_s' in estimated:
        # the published measurements it is derived from, unless the inventory set it
        sources.extend(sync_mark_sources)
    if estimated:
        sources.append('estimate')

    return _assembled_spec(generation, native_ff, given_ff, vendor, interface, kind, fields, sources, notes, estimated)


def _native_rate(generation, native_ff, vendor, native, sources, notes):
    """The native rate: the generation's, or a form factor's or maker's own where one is sourced."""
    override = _NATIVE_OVERRIDE.get((generation, native_ff, vendor)) or _NATIVE_OVERRIDE.get(
        (generation, native_ff, None))
    if override is not None:
        sources.append(override[1])
        return override[0]
    if generation == 2 and vendor is None:
        notes.append('vendor not known: IBM 35 MB/s used (HP LTO-2 drives run 30 MB/s)')
    return native


def _form_factor(generation, form_factor, notes):
    """(the form factor given, the one the native rate is looked up with): full height when it matters and is not
    given."""
    given_ff = form_factor
    if generation in _FORM_FACTOR_MATTERS:
        if form_factor is None:
            form_factor = 'FH'
            notes.append('form factor not given: full height assumed (higher native rate, so the feed requirement '
                         'errs high)')
    elif form_factor is not None:
        notes.append('form factor %s makes no difference to the native rate of LTO-%d in this model'
                     % (form_factor, generation))
    return given_ff, form_factor


def _speed_steps(generation, form_factor, vendor, native, sources, estimated):
    """(speed steps, speed matching kind) from the speed tables, or the rule they are estimated by."""
    steps, kind, speed_source, rule = _speed_table(generation, form_factor, vendor, native)
    if speed_source:
        sources.append(speed_source)
        if generation == 9 and vendor == 'IBM':
            sources.append('quantum-lto9hh-speed')
    else:
        estimated['speed_steps_mb_s'] = rule
        estimated['speed_floor_mb_s'] = rule
    return steps, kind


def _backhitch_s(generation, given_ff, vendor, sources, estimated):
    """Seconds per back-hitch: sourced, or the default rule."""
    backhitch_entry = _match_key(_BACKHITCH, generation, given_ff, vendor)
    if backhitch_entry is not None:
        sources.append(backhitch_entry[1])
        return backhitch_entry[0]
    estimated['backhitch_s'] = BACKHITCH_RULE
    return DEFAULT_BACKHITCH_S


def _sync_mark_s(generation, given_ff, vendor, estimated):
    """(seconds a synchronous file mark costs beyond its buffer drain, the sources it is derived from): always
    an estimate, from the published measurements."""
    entry = _match_key(_SYNC_MARK, generation, given_ff, vendor)
    if entry is not None:
        seconds, source, rule = entry
    else:
        seconds, source, rule = DEFAULT_SYNC_MARK_S, 'seed-001', SYNC_MARK_RULE
    estimated['sync_mark_s'] = rule
    return seconds, [source, 'enstore-guide']


def _assembled_spec(generation, native_ff, given_ff, vendor, interface, kind, fields, sources, notes, estimated):
    """The DriveSpec of the looked-up ``fields``."""
    writes, reads_only = _COMPAT[generation]
    label = 'LTO-%d' % generation + (' %s' % native_ff if native_ff else '')
    return DriveSpec(
        generation=generation,
        form_factor=native_ff if generation in _FORM_FACTOR_MATTERS else given_ff,
        vendor=vendor,
        native_mb_s=fields['native_mb_s'],
        native_capacity_gb=fields['native_capacity_gb'],
        compression_ratio=fields['compression_ratio'],
        speed_floor_mb_s=fields['speed_steps_mb_s'][-1],
        speed_steps_mb_s=fields['speed_steps_mb_s'],
        label=label,
        sources=tuple(dict.fromkeys(sources + ['lto-compat'])),
        notes=tuple(notes),
        interface=interface,
        speed_matching=kind,
        buffer_mb=fields['buffer_mb'],
        backhitch_s=fields['backhitch_s'],
        sync_mark_s=fields['sync_mark_s'],
        load_s=float(fields['load_s']),
        unload_s=float(fields['unload_s']),
        rewind_s=float(fields['rewind_s']),
        locate_s=float(fields['locate_s']),
        compressed_max_mb_s=fields['compressed_max_mb_s'],
        interface_mb_s=fields['interface_mb_s'],
        density_code=_OWN_DENSITY[generation],
        writes=writes,
        reads_only=reads_only,
        estimated=tuple(sorted(estimated.items())),
    )


def _lookup_inputs(generation, form_factor, vendor, interface, notes):
    """(generation, form factor, interface, vendor) of :func:`lookup`'s arguments, normalised; notes added."""
    if isinstance(generation, tuple) and len(generation) == 2:
        # parse_generation()'s (generation, form_factor) result, passed on as is.
        generation, text_ff = generation
        if text_ff is not None and form_factor is None:
            form_factor = text_ff
    if isinstance(generation, str):
        generation, text_ff = parse_generation(generation)
        if text_ff is not None:
            given_ff = normalize_form_factor(form_factor)
            if given_ff is not None and given_ff != text_ff:
                raise ValueError('Form factor %s in the generation text conflicts with form_factor=%s; give one.'
                                 % (text_ff, given_ff))
            form_factor = text_ff
    generation = _check_generation(generation)
    form_factor = normalize_form_factor(form_factor)
    interface = _normalize_interface(interface)
    raw_vendor = vendor
    vendor = _normalize_vendor(vendor)
    if raw_vendor is not None and vendor is None:
        notes.append('no vendor-specific data for %r: IBM\'s published LTO-%d numbers used where they differ'
                     % (raw_vendor, generation))
    return generation, form_factor, interface, vendor


def _buffer_mb(generation, given_ff, vendor, native, sources, estimated):
    """The drive's buffer in MB (sourced, or estimated from the nearest sourced drive)."""
    # sourced, or the same seconds of buffer at native speed as the nearest sourced drive
    buffer_entry = _match_key(_BUFFER, generation, given_ff, vendor)
    if buffer_entry is not None:
        buffer_mb = buffer_entry[0]
        sources.append(buffer_entry[1])
    else:
        sourced = dict((key[0], (mb, mb / _GENERATION[key[0]][2])) for key, (mb, _s) in _BUFFER.items())
        sibling = _nearest_sourced(generation, sorted(sourced),
                                   lambda a, b: a if sourced[a][1] <= sourced[b][1] else b)
        seconds = sourced[sibling][1]
        buffer_mb = round(native * seconds, 1)
        estimated['buffer_mb'] = (
            'no source gives this drive\'s buffer; %.2f s at native speed, as the sourced LTO-%d buffer '
            '(%.0f MB at %.0f MB/s) holds (nearest sourced generation; ties to the smaller buffer, which '
            'absorbs less and so errs towards shoe-shining)' % (seconds, sibling, sourced[sibling][0],
                                                                _GENERATION[sibling][2]))
    return buffer_mb


def _mechanics_times(generation, given_ff, sources, estimated):
    """{load_s, unload_s, rewind_s, locate_s}: IBM's figures for the drive, else the nearest generation's."""
    mech_ff = given_ff or 'FH'
    mech = _MECHANICS.get((generation, mech_ff))
    mech_names = ('load_s', 'unload_s', 'rewind_s', 'locate_s')
    values = {}
    for index, name in enumerate(mech_names):
        value = mech[index] if mech else None
        if value is not None:
            values[name] = value
            if mech[4] not in sources:
                sources.append(mech[4])
            continue
        candidates = sorted(gen for (gen, ff), row in _MECHANICS.items() if row[index] is not None and ff == mech_ff)
        if not candidates:
            candidates = sorted(gen for (gen, ff), row in _MECHANICS.items() if row[index] is not None)
        sibling = _nearest_sourced(generation, candidates, max)
        row = _MECHANICS.get((sibling, mech_ff)) or next(
            row for (gen, ff), row in _MECHANICS.items() if gen == sibling and row[index] is not None)
        values[name] = row[index]
        estimated[name] = 'not in the IBM tables for this drive; the LTO-%d %s figure (nearest generation with ' \
                          'one; ties to the later generation)' % (sibling, mech_ff)
    return values


def _interface_rates(generation, form_factor, interface, native, ratio, sources, estimated):
    """(sustained compressed MB/s, link MB/s or None) through the drive's interface."""
    compressed_entry = _match_key(_COMPRESSED_MAX, generation, form_factor, interface)
    format_max = native * ratio
    if compressed_entry is not None and (interface is not None or compressed_entry[0] >= format_max):
        compressed_max = compressed_entry[0]
        sources.append(compressed_entry[1])
    else:
        compressed_max = format_max
        if generation >= 7:
            estimated['compressed_max_mb_s'] = (
                'interface %s: the format maximum, native x nominal ratio (%.0f x %.1f), as no table gives '
                'this interface\'s sustained rate' % (interface or 'not given', native, ratio))
    link = _LINK.get(interface, {}).get(generation) if interface else None
    if link is not None:
        sources.append('interface-links')

    return compressed_max, link


def _apply_overrides(fields, overrides, generation, native, notes, sources, estimated):
    """The inventory's drive model fields over the table's (``fields`` changed in place)."""
    for name, value in sorted(overrides.items()):
        if value is None:
            continue
        if name not in OVERRIDABLE:
            raise ValueError('Unknown drive model field %r in the inventory; the fields are: %s.'
                             % (name, ', '.join(OVERRIDABLE)))
        if name == 'speed_steps_mb_s':
            if not isinstance(value, (list, tuple)) or not value:
                raise ValueError('speed_steps_mb_s must be a non-empty list of rates (MB/s), got %r.' % (value,))
            fields[name] = tuple(sorted((_positive_number(v, 'speed_steps_mb_s') for v in value), reverse=True))
        elif name == 'speed_floor_mb_s':
            floor_value = _positive_number(value, 'speed_floor_mb_s')
            if floor_value > fields['native_mb_s']:
                raise ValueError(
                    'speed_floor_mb_s %s is above the native rate of LTO-%d (%s MB/s). The floor is the '
                    'slowest native (uncompressed) speed the drive can stream at; check the inventory value.'
                    % (value, generation, native))
            kept = tuple(s for s in fields['speed_steps_mb_s'] if s > floor_value)
            fields['speed_steps_mb_s'] = kept + (float(floor_value),)
        elif name == 'native_capacity_gb':
            fields[name] = int(_positive_number(value, name))
        else:
            fields[name] = _positive_number(value, name)
        for key in ([name, 'speed_floor_mb_s'] if name in ('speed_steps_mb_s', 'speed_floor_mb_s') else [name]):
            estimated.pop(key, None)
        notes.append('%s set per drive (inventory): %s' % (name, value))
        if 'inventory' not in sources:
            sources.append('inventory')
    if fields['native_mb_s'] != native and 'speed_steps_mb_s' not in overrides and 'speed_floor_mb_s' not in overrides:
        scale = fields['native_mb_s'] / native
        fields['speed_steps_mb_s'] = tuple(round(s * scale, 3) for s in fields['speed_steps_mb_s'])
        notes.append('speed steps scaled with the inventory\'s native rate (x %.3f)' % scale)


# No vendor publishes the time of one back-hitch. Estimate: a linear drive decelerates from
# its write speed, runs back past the last written position, stops, accelerates and re-finds
# its position; at LTO tape speeds (HP LTO-3: 5.32 m/s write, 7 m/s max, hp-gen3-trm) with
# the distances involved this is on the order of seconds. 3 s is used for every generation
# and is stated as an estimate wherever it appears; the inventory can set backhitch_s per drive.
DEFAULT_BACKHITCH_S = 3.0
BACKHITCH_RULE = ('no vendor publishes the time of one back-hitch; 3 s estimated for every LTO drive '
                  '(decelerate, reverse, re-find the last block, accelerate); set backhitch_s per drive '
                  'in the inventory when measured')


# A synchronous file mark (WRITE FILEMARKS with IMMED=0, the Linux st driver's MTWEOF, a Data Protector
# segment's end without OB2IMMEDFM, a Bacula Maximum File Size boundary): the host waits until the drive's
# buffer is on tape (the forecast simulates that drain), then the drive stops with an empty buffer and the
# next data pays the stop, the reposition and the restart, plus whatever the application does at that
# boundary. No vendor publishes the cost. Seed 001 (SOURCES['seed-001']) measured it on one drive:
# 16000 MB / 108.84 MB/s - 16000 MB / 188.24 MB/s = 147.0 s - 85.0 s = 62.0 s lost to 8 synchronous marks
# (one per 2000 MB segment), 7.75 s a mark; the forecast drains the model's 96 MB HP LTO-4 buffer at
# 120 MB/s itself (0.8 s), which leaves 6.95 s, 7 s rounded (derived, an estimate). The one other
# published figure, Fermilab Enstore's "3 seconds to write a file-mark after each file" (SOURCES
# ['enstore-guide']: 9940B, LTO-3, IBM LTO-4, the whole per-file overhead, drain included), is lower:
# published costs span about 3 to 8 s a mark. The model takes seed 001's, measured on one drive with
# the application a verdict is about, so that an unmeasured mark errs towards shoe-shining, as the
# buffer estimate does. With it the forecast reproduces all four of seed 001's figures within 10 %
# (test_verdict_dp_segment_default.py in tests/unit/plugins/module_utils/_judge). No other generation or vendor has a published figure: 7 s is used for
# every drive, stated as an estimate; a cost the write test measured replaces it, and the inventory can
# set sync_mark_s per drive. (generation, form_factor, vendor) -> (seconds, source, rule).
DEFAULT_SYNC_MARK_S = 7.0
SYNC_MARK_RULE = ('no vendor publishes the cost of a synchronous file mark; 7 s beyond the buffer drain, derived '
                  'from seed 001 (HP LTO-4 FH SAS, Data Protector: 108.84 MB/s with a synchronous mark every '
                  '2000 MB against 188.24 MB/s with immediate marks, 7.75 s lost a mark, 0.8 s of it the '
                  'drain), used for every drive without a measured cost (Fermilab Enstore observed about 3 s a '
                  'mark, drain included, on 9940B and LTO-3/4 drives: 7 s errs towards shoe-shining); the '
                  'write test measures it, or set sync_mark_s per drive in the inventory')
_SYNC_MARK = {
    (4, None, 'HPE'): (DEFAULT_SYNC_MARK_S, 'seed-001',
                       'derived from seed 001, measured on this drive model (HP LTO-4 FH SAS, Data Protector): '
                       '108.84 MB/s with a synchronous mark every 2000 MB against 188.24 MB/s with immediate '
                       'marks, 7.75 s lost a mark, 0.8 s of it the buffer drain; one measurement, an estimate '
                       'for other hosts; the write test measures it, or set sync_mark_s per drive'),
}


# ---------------------------------------------------------------------------
# Identification from SCSI INQUIRY vendor / product strings.
# ---------------------------------------------------------------------------
# IBM product IDs: ULT3580-TDn (full height, "TD") / ULT3580-HHn (half height),
# and ULTRIUM-TDn / ULTRIUM-HHn for library drives; generation 10 is "A"
# (IBM TS4500 and LTO-10 drive tables list ULT3580-TD5..TD9 / ULTRIUM-TD5..TD9,
# ULT3580-TDA / ULTRIUM-TDA). OEMs with IBM mechanisms report the same product
# IDs (Dell "IBM ULTRIUM-HH9", Quantum "ULTRIUM-HH9", fixtures and IBM Storage
# Protect's LTO-9 drive list), so the mechanism is IBM's whatever the vendor field says.
_IBM_PRODUCT_RE = re.compile(r'^(?:ULT3580|ULTRIUM)-(?P<ff>TD|HH)(?P<gen>[1-9A])$')
# HP/HPE: "Ultrium 4-SCSI" ... "Ultrium 7-SCSI" (SAS drives also say -SCSI); no form factor.
_HP_PRODUCT_RE = re.compile(r'^ULTRIUM (?P<gen>10|[1-9])-(?:SCSI|SAS|FC)$')
# Quantum / Certance own designs: "ULTRIUM 4".
_QUANTUM_PRODUCT_RE = re.compile(r'^ULTRIUM[ -]?(?P<gen>10|[1-9])$')
# Tandberg and other rebadgers: "LTO-5 HH", "LTO6 FH".
_LTO_PRODUCT_RE = re.compile(r'^LTO[ -]?(?P<gen>10|[1-9])(?:[ -]?(?P<ff>HH|FH))?$')


def _clean_inquiry(value):
    if value is None:
        return ''
    text = str(value).strip().strip('\'"').strip()
    return re.sub(r'\s+', ' ', text).upper()


def identify_inquiry(vendor, product):
    """Identify an LTO drive from its INQUIRY vendor and product strings.

    Returns {'generation', 'form_factor', 'vendor', 'inquiry_vendor', 'product',
    'reason'} or None when the strings are not an LTO drive this model knows
    (changers, DLT, DAT, AIT, 3592... are None). 'vendor' is the mechanism's
    maker as far as the strings show it ('IBM', 'HPE' or None) and is what
    :func:`lookup` wants; 'inquiry_vendor' is the vendor field as reported.
    """
    inquiry_vendor = _clean_inquiry(vendor)
    prod = _clean_inquiry(product)
    if not prod:
        return None

    def result(gen, form_factor, mech_vendor, reason):
        return {
            'generation': gen,
            'form_factor': form_factor,
            'vendor': mech_vendor,
            'inquiry_vendor': inquiry_vendor or None,
            'product': prod,
            'reason': reason,
        }

    match = _IBM_PRODUCT_RE.match(prod)
    if match:
        char = match.group('gen')
        gen = _GEN_CHARS.get(char) or int(char)
        form_factor = 'FH' if match.group('ff') == 'TD' else 'HH'
        reason = 'IBM product ID %s: %s = %s, generation character %s = LTO-%d' % (
            prod, match.group('ff'), 'full height' if form_factor == 'FH' else 'half height', char, gen)
        if inquiry_vendor and inquiry_vendor != 'IBM':
            reason += ' (IBM mechanism sold by %s)' % inquiry_vendor
        return result(gen, form_factor, 'IBM', reason)

    match = _HP_PRODUCT_RE.match(prod)
    if match:
        gen = int(match.group('gen'))
        mech = 'HPE' if _normalize_vendor(inquiry_vendor) == 'HPE' else None
        return result(gen, None, mech, 'HP product ID %s = LTO-%d; the ID does not tell the form factor' % (prod, gen))

    match = _QUANTUM_PRODUCT_RE.match(prod)
    if match:
        gen = int(match.group('gen'))
        return result(gen, None, None, 'product ID %s = LTO-%d (Quantum/Certance style); form factor not stated' % (prod, gen))

    match = _LTO_PRODUCT_RE.match(prod)
    if match:
        gen = int(match.group('gen'))
        form_factor = match.group('ff')
        return result(gen, form_factor, None, 'product ID %s = LTO-%d%s (vendor %s)' % (
            prod, gen, ' ' + form_factor if form_factor else '', inquiry_vendor or 'not given'))
    return None


# ---------------------------------------------------------------------------
# Density codes (MODE SENSE block descriptor; what `mt status` and `tapeinfo` print).
# The code describes the format of the LOADED CARTRIDGE, not the drive: an LTO-6
# drive with an LTO-5 tape reports 0x58 (fixture mt_status_mtst__LTO6-drive-LTO5-tape-jonasstein).
# code: (generation, media, capacity GB, sources, note)
# ---------------------------------------------------------------------------
_DENSITY = {
    0x40: (1, 'LTO-1', 100, ('ibm-t200-density', 'quantum-lto4-density'),
           'mt-st names 0x40 "DLT1 40 GB, or Ultrium": LTO only if the drive is an LTO drive'),
    0x42: (2, 'LTO-2', 200, ('hp-gen2-trm', 'quantum-lto4-density', 'mt-st-1.7'),
           'StorageTek 9840 drives also report 0x42 (fixture mt_status_mtst__STK-9840-FC-density0x42): '
           'LTO only if the drive is an LTO drive'),
    0x44: (3, 'LTO-3', 400, ('quantum-lto4-density', 'mt-st-1.7'), None),
    0x46: (4, 'LTO-4', 800, ('quantum-lto4-density', 'mt-st-1.7'), None),
    0x58: (5, 'LTO-5', 1500, ('mt-st-1.7',), None),
    0x5A: (6, 'LTO-6', 2500, ('mt-st-1.7',), None),
    0x5C: (7, 'LTO-7', 6000, ('mt-st-1.7',), None),
    # LTO-7 Type M cartridge formatted by an LTO-8 drive: generation 8 format,
    # 9 TB, 300 MB/s native (IBM TS4500 "300 Mb/s (M8)").
    0x5D: (8, 'LTO-M8', 9000, ('mt-st-1.7', 'ibm-ts4500-carts', 'ibm-ts4500-perf'),
           'LTO-7 Type M cartridge written in LTO-8 format (M8): 9 TB, 300 MB/s native'),
    0x5E: (8, 'LTO-8', 12000, ('mt-st-1.7',), None),
    # mt-st 1.7 does not know 0x60 (prints "no translation", as in the LTO-9 capture);
    # upstream mt-st and FreeBSD libmt (context lines of the LTO-10 commit) name it LTO-9.
    0x60: (9, 'LTO-9', 18000, ('mt-st-git', 'freebsd-libmt-lto10', 'ibm-hh9-capture'), None),
    0x62: (10, 'LTO-10', 30000, ('freebsd-libmt-lto10',), None),
    0x63: (10, 'LTO-10P', 40000, ('freebsd-libmt-lto10',),
           'LTO-10 premium (PA) cartridge: 40 TB; IBM speed matching floor 162 MB/s on PA media'),
}
# Not mapped on purpose: 0x41 (mt-st "DLT 40GB, or Ultrium2"; HP and Quantum
# give 0x42 for Ultrium 2) and 0x00 ("default": drives with no tape, and tgt).


def _parse_density_code(code):
    if isinstance(code, bool):
        raise ValueError('density code must be an integer or hex text like "0x5a", got %r.' % (code,))
    if isinstance(code, int):
        value = code
    elif isinstance(code, str):
        text = code.strip().lower()
        match = re.match(r'^(?:0x([0-9a-f]{1,2})|([0-9a-f]{1,2})h)$', text)
        if not match:
            raise ValueError(
                'density code %r is not hex text: write it as mt status and tapeinfo print it, '
                'e.g. "0x5a" (or "5Ah"), or pass an integer.' % (code,))
        value = int(match.group(1) or match.group(2), 16)
    else:
        raise ValueError('density code must be an integer or hex text like "0x5a", got %r.' % (code,))
    if not 0 <= value <= 0xFF:
        raise ValueError('density code %r is outside 0x00-0xff.' % (code,))
    return value


def generation_from_density(code):
    """Media generation from a density code: int or '0x5a' / '5Ah' text.

    Returns {'generation', 'media', 'code', 'capacity_gb', 'source', 'note'},
    or None for 0 (default/unknown: no tape loaded, or tgt) and for codes that
    are not LTO formats.
    """
    value = _parse_density_code(code)
    entry = _DENSITY.get(value)
    if entry is None:
        return None
    gen, media, capacity, sources, note = entry
    return {
        'generation': gen,
        'media': media,
        'code': '0x%02x' % value,
        'capacity_gb': capacity,
        'source': '; '.join(SOURCES[key] for key in sources),
        'note': note,
    }


# ---------------------------------------------------------------------------
# Rate math.
# ---------------------------------------------------------------------------
def _positive_number(value, name):
    if isinstance(value, bool):
        raise ValueError('%s must be a number, got %r.' % (name, value))
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError('%s must be a number, got %r.' % (name, value)) from None
    if not math.isfinite(number) or number <= 0:
        raise ValueError('%s must be a positive finite number, got %r.' % (name, value))
    return number


def required_feed(spec, tape_ratio):
    """Host feed (MB/s of uncompressed data) that keeps the drive at full speed and at its floor.

    The drive writes native MB/s of compressed data to tape, so it consumes
    native * ratio MB/s of host data, but never more than its sustained
    compressed rate on its interface (``compressed_max_mb_s``: an 8 Gb FC LTO-9
    takes 750 MB/s however well the data compresses); below floor * ratio it
    cannot slow down further and starts to stop and reposition (shoe-shine).
    Returns {'full_speed_mb_s', 'floor_mb_s', 'tape_ratio'}.
    """
    ratio = _positive_number(tape_ratio, 'tape_ratio')
    floor = _get_number(spec, 'speed_floor_mb_s')
    native = _get_number(spec, 'native_mb_s')
    cap = _get_number(spec, 'compressed_max_mb_s')
    full = native * ratio
    if cap:
        full = min(full, cap)
    return {
        'full_speed_mb_s': round(full, 6),
        'floor_mb_s': None if floor is None else round(min(floor * ratio, full), 6),
        'tape_ratio': ratio,
    }


def _get_number(spec, name):
    value = spec.get(name) if isinstance(spec, dict) else getattr(spec, name, None)
    if value is None or isinstance(value, bool):
        return None
    return float(value)


def classify_feed(spec, feed_mb_s, tape_ratio):
    """Where a constant host feed puts the drive (no buffer, no time: see _forecast for that).

    state: 'full_speed' (feed >= full-speed feed), 'speed_matching' (between
    floor and full speed) or 'below_floor' (the drive will shoe-shine).
    tape_mb_s is the native rate the feed supports (min(native, feed/ratio));
    matched_step_mb_s the fastest step at or below it (the floor when below).
    """
    feed = _positive_number(feed_mb_s, 'feed_mb_s')
    need = required_feed(spec, tape_ratio)
    ratio = need['tape_ratio']
    tape_mb_s = min(spec.native_mb_s, feed / ratio)
    if feed >= need['full_speed_mb_s']:
        state = 'full_speed'
    elif need['floor_mb_s'] is None:
        state = 'below_full_speed_floor_unknown'
    elif feed >= need['floor_mb_s']:
        state = 'speed_matching'
    else:
        state = 'below_floor'
    step = None
    if spec.speed_steps_mb_s:
        if state == 'full_speed':
            # IBM's top step is slightly above the quoted native rate (408 vs 400 MB/s).
            step = spec.speed_steps_mb_s[0]
        else:
            fitting = [s for s in spec.speed_steps_mb_s if s <= tape_mb_s]
            step = max(fitting) if fitting else spec.speed_steps_mb_s[-1]
    result = dict(need)
    result.update({'state': state, 'feed_mb_s': feed, 'tape_mb_s': round(tape_mb_s, 6), 'matched_step_mb_s': step})
    return result


# Johnson ("Measuring tape drive performance") models the tape drive's
# compression ratio as linear in a software compressor's: C_tape ~ a + b * C_soft
# (equivalently, relative throughput = 1 / (a' + b' / C_soft) for the time per
# byte). The coefficients depend on the drive's compressor and on the software
# compressor used; the paper's fitted values could not be checked here, so no
# number is taken from it. The defaults a=0, b=1 say "the drive compresses like
# zlib level 1". LTO-DC is an LZ-1 (ALDC-family) compressor ('lto-dc'), as is zlib's
# LZ77 stage; zlib adds Huffman coding, so on most data it compresses at least as
# well, and the default errs toward a higher ratio, i.e. a higher required feed
# at both full speed and floor (the cautious side for a verdict). Calibrate a
# and b per site with fit_tape_ratio_model() from runs whose real tape ratio is
# known (sg_logs data compression page).
DEFAULT_RATIO_A = 0.0
DEFAULT_RATIO_B = 1.0


def tape_ratio_from_software(c_soft, a=DEFAULT_RATIO_A, b=DEFAULT_RATIO_B, max_ratio=MAX_NOMINAL_RATIO):
    """Estimated on-tape compression ratio from a software compressor's ratio.

    C_tape = a + b * c_soft, clamped to [1, max_ratio]. max_ratio defaults to
    the largest nominal LTO ratio (2.5); pass spec.compression_ratio for a
    drive's own nominal ratio, or a larger value when a vendor gives one (HP's
    Ultrium 3 reference states a maximum streaming compression ratio of 3:1).
    """
    soft = _positive_number(c_soft, 'c_soft')
    upper = _positive_number(max_ratio, 'max_ratio')
    if upper < 1.0:
        raise ValueError('max_ratio must be at least 1.0, got %r.' % (max_ratio,))
    for name, value in (('a', a), ('b', b)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError('%s must be a finite number, got %r.' % (name, value))
    estimate = a + b * soft
    return min(max(estimate, 1.0), upper)


def fit_tape_ratio_model(pairs):
    """Least-squares (a, b) for C_tape = a + b * C_soft from measured (c_soft, c_tape) pairs.

    Needs at least two different c_soft values.
    """
    points = [(_positive_number(s, 'c_soft'), _positive_number(t, 'c_tape')) for s, t in pairs]
    if len(points) < 2:
        raise ValueError('fit_tape_ratio_model needs at least two (c_soft, c_tape) measurements.')
    n = float(len(points))
    mean_s = sum(p[0] for p in points) / n
    mean_t = sum(p[1] for p in points) / n
    sxx = sum((p[0] - mean_s) ** 2 for p in points)
    if sxx == 0:
        raise ValueError('fit_tape_ratio_model needs measurements at two or more different software ratios.')
    sxy = sum((p[0] - mean_s) * (p[1] - mean_t) for p in points)
    b = sxy / sxx
    return mean_t - b * mean_s, b


# Sampling for estimate_compressibility: at most this many bytes, taken as
# evenly spaced chunks so a large buffer is not judged by its head alone.
SAMPLE_MAX_BYTES = 8 * 1024 * 1024
SAMPLE_CHUNK_BYTES = 256 * 1024


def estimate_compressibility(data, max_bytes=SAMPLE_MAX_BYTES, chunk_bytes=SAMPLE_CHUNK_BYTES):
    """Software compression ratio of a bounded sample (zlib level 1).

    Returns {'ratio', 'sample_bytes', 'compressed_bytes', 'compressor': 'zlib-1'}.
    ratio = sample_bytes / compressed_bytes (may be slightly below 1 for
    incompressible data: zlib's framing).
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ValueError('estimate_compressibility needs bytes, got %s.' % type(data).__name__)
    view = memoryview(data).cast('B')
    if len(view) == 0:
        raise ValueError('estimate_compressibility needs a non-empty sample; read some of the backup source first.')
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes <= 0:
        raise ValueError('max_bytes must be a positive integer, got %r.' % (max_bytes,))
    if isinstance(chunk_bytes, bool) or not isinstance(chunk_bytes, int) or chunk_bytes <= 0:
        raise ValueError('chunk_bytes must be a positive integer, got %r.' % (chunk_bytes,))
    total = len(view)
    if total <= max_bytes:
        chunks = [view]
    else:
        count = max(1, max_bytes // chunk_bytes)
        size = max_bytes // count
        stride = (total - size) / float(max(count - 1, 1))
        chunks = [view[int(i * stride):int(i * stride) + size] for i in range(count)]
    compressor = zlib.compressobj(1)
    sample = 0
    compressed = 0
    for chunk in chunks:
        sample += len(chunk)
        compressed += len(compressor.compress(chunk))
    compressed += len(compressor.flush())
    return {
        'ratio': sample / float(compressed),
        'sample_bytes': sample,
        'compressed_bytes': compressed,
        'compressor': 'zlib-1',
    }
