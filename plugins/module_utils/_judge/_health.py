# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""A drive's and its loaded cartridge's health, judged from what the drive says about itself (docs/health.md).

Private to this collection: may change without notice. Pure Python, no I/O.

:func:`judge` takes the drive's log pages (``read_log_pages`` / ``_sg_logs.parse_all``
output: ``{'pages': {'0x2e': decoded or text, ...}}``) and the cartridge's memory
(``_sg_read_attr.parse`` output or a ``CartridgeMemory``) and returns a ``Health``:

- FAILING: a TapeAlert flag of a drive hardware fault the TapeAlert specification
  rates critical (Hardware A / B, predictive failure, ...), or a cartridge the
  drive cannot give back;
- DEGRADED: a TapeAlert media, read/write, environment or lesser hardware flag;
  uncorrected errors, or rewrites / rereads per GB above the limit, on the loaded
  cartridge; retries per data set above the limit, or unrecovered errors, over
  the cartridge's life; a cartridge near the end of its life by loads or passes;
- CLEAN: the drive asks to be cleaned (TapeAlert 20 / 21, the cleaning bit of
  pages 0x0C / 0x11) or its cleaning cartridge is expired or invalid (22 / 23);
- OK: the TapeAlert page was read and nothing read crosses a line; UNKNOWN: the
  TapeAlert page was not read and nothing else read does.

Every finding carries its evidence (flag or counter, page, value, the limit), the
fix, and the source of its meaning or limit (``SOURCES``); limits that are this
collection's estimates say so. Counters the drive does not give stay unknown: no
finding is made from a counter that was not read.
"""

from __future__ import annotations

import re

from ansible_collections.tapeops.qualify.plugins.module_utils import _records
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _drive_model
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _sg_logs, _sg_read_attr

OK, CLEAN, DEGRADED, FAILING, UNKNOWN = (_records.HEALTH_OK, _records.HEALTH_CLEAN, _records.HEALTH_DEGRADED,
                                         _records.HEALTH_FAILING, _records.HEALTH_UNKNOWN)

SOURCES = {
    't10-tapealert-v3': (
        'TapeAlert Specification v3.0 (Hewlett-Packard to NCITS T10, document 02-142r0, '
        'https://www.t10.org/ftp/t10/document.02/02-142r0.pdf): each flag\'s type (C critical, W warning, '
        'I information) and cause as Bareos carries them (bareos/bareos '
        'core/src/plugins/stored/scsitapealert/scsitapealert-sd.h, commit 326c7732920e); its groups (flags 1-19 '
        'read/write management, 20-25 cleaning, 26-39 drive hardware, 40-49 autoloader) as quoted in '
        'read_attribute.pl (https://github.com/hreinecke/sg3_utils/issues/18); types cross-checked with the HP '
        'LTO Ultrium 4 technical reference manual vol. 2, TapeAlert table (https://manualsdump.com/amp/en/manuals/'
        '291355/81)'),
    'quantum-scalar-tapealert': (
        'Quantum Scalar i40 and Scalar i80 User\'s Guide, Appendix B "Tape Alert Flag Descriptions": severity and '
        'cause of flags 50-60 (https://www.manualslib.com/manual/1139219/Quantum-Scalar-I40.html?page=322 and '
        'page=321)'),
    'ibm-tapealert-actions': (
        'IBM TS4300 documentation, "TapeAlert flags supported by the drive": for read / write warnings and '
        'failures, isolate the fault between drive and tape with a known good cartridge and a known good drive '
        '(https://www.ibm.com/docs/en/ts4300-tape-library?topic=flags-tapealert-supported-by-drive)'),
    'ssc-cleaning': (
        'SSC sequential-access device page cleaning parameter ("Cleaning action required") and DT device status '
        'CRQST / CRQRD bits, as sg_logs prints them; the drive decides: "The drive must be cleaned only when it is '
        'requested by the drive" (IBM TS2900 manual, https://www.easymanua.ls/ibm/ts2900/manual/715332?p=86)'),
    'error-counters': (
        'SPC-4 write / read error counter log pages 0x02 / 0x03, parameters 0-6, as sg_logs prints them; on LTO '
        'drives they count the current cartridge since its load and "Total bytes processed" counts data sets (HP '
        'Ultrium technical reference manual C7379-90900, "Write / Read Error Counters Log Page", '
        'https://azmanual.top/manuals/88875/hp-c737990900.html?page=65; Quantum LTO-4 SCSI reference 3.9.5, '
        'https://manualshive.com/en/manual/quantum/lto-4/3834212?page=62)'),
    'volume-statistics': (
        'SSC-4 volume statistics log page 0x17 and the LTO tape usage page 0x30 (HP Ultrium technical reference '
        'manual C7379-90900, "Tape Usage Log Page", https://azmanual.top/manuals/88875/hp-c737990900.html?page=69): '
        'the cartridge\'s data sets, retries and unrecovered errors over its life, as sg_logs prints them'),
    'ibm-cartridge-life': (
        'IBM TS2900 Tape Autoloader manual, Table 18 "Nominal cartridge life: Load/unload cycles": Ultrium 3 to 8 '
        'and M8 20,000, Ultrium 2 10,000, Ultrium 1 5000 (https://www.easymanua.ls/ibm/ts2900/manual?p=135)'),
    'hp-tape-passes': (
        'HP LTO Ultrium 4 drives technical reference manual vol. 2, software integration (June 2007), "Load '
        'count": "Hewlett-Packard recommends a maximum use for a tape of 20,000 passes over any particular area of '
        'the tape" (https://office.manualsonline.com/manuals/mfg/hewlettpackard_1/lto_4_fc.html?p=25); page 0x17 '
        'counts the passes over the beginning and the middle of the medium'),
    'hp-mam': (
        'HP Ultrium technical reference manual Q1530-90901, READ ATTRIBUTE: "Load count: The number of times this '
        'tape has been fully loaded. It is never reset."; "TapeAlert flags: The bits specify flags that were set '
        'during the previous load. 1 bit per flag (MSB = flag 1, LSB = flag 64)" '
        '(https://cellphone.manualsonline.com/manuals/mfg/hewlettpackard_1/q153090901.html?p=117)'),
    'estimate': 'an estimate of this collection: no vendor publishes this limit (docs/health.md says how it was set)',
}

# Categories of TapeAlert flags. The specification's groups (flags 1-19 read/write management, 20-25 cleaning,
# 26-39 drive hardware, 40-49 autoloader) split by each flag's cause: 'media' (the cartridge), 'read_write'
# (cartridge or drive: the drive cannot tell), 'cleaning', 'hardware', 'environment' (power, temperature,
# humidity around the drive), 'information' (an operation or a setting, not a fault), 'loader' (autoloader flags,
# obsolete since SSC-3: the library's health, not the drive's), 'reserved'.
MEDIA, READ_WRITE, CLEANING, HARDWARE, ENVIRONMENT, INFORMATION, LOADER, RESERVED = (
    'media', 'read_write', 'cleaning', 'hardware', 'environment', 'information', 'loader', 'reserved')

# The status and fix each category gives; a hardware flag the specification rates critical is FAILING, and so is
# a cartridge the drive cannot give back (flags 14, 56: the drive is out of use until service removes it).
_CATEGORY = {
    MEDIA: (DEGRADED, 'retire_cartridge'),
    READ_WRITE: (DEGRADED, 'isolate_fault'),
    CLEANING: (CLEAN, 'clean_drive'),
    HARDWARE: (DEGRADED, 'call_service'),
    ENVIRONMENT: (DEGRADED, 'check_environment'),
}

# flag -> (name as sg_logs prints it, type C / W / I or None, category, fix other than the category's, source)
_V3, _QTM = 't10-tapealert-v3', 'quantum-scalar-tapealert'
TAPE_ALERT = {
    1: ('Read warning', 'W', READ_WRITE, None, _V3),
    2: ('Write warning', 'W', READ_WRITE, None, _V3),
    3: ('Hard error', 'W', READ_WRITE, None, _V3),
    4: ('Media', 'C', MEDIA, None, _V3),
    5: ('Read failure', 'C', READ_WRITE, None, _V3),
    6: ('Write failure', 'C', READ_WRITE, None, _V3),
    7: ('Media life', 'W', MEDIA, None, _V3),
    8: ('Not data grade', 'W', MEDIA, None, _V3),
    9: ('Write protect', 'C', INFORMATION, None, _V3),
    10: ('No removal', 'I', INFORMATION, None, _V3),
    11: ('Cleaning media', 'I', INFORMATION, None, _V3),
    12: ('Unsupported format', 'I', INFORMATION, None, _V3),
    13: ('Recoverable mechanical cartridge failure', 'C', MEDIA, None, _V3),
    14: ('Unrecoverable mechanical cartridge failure', 'C', MEDIA, 'call_service', _V3),
    15: ('Memory chip in cartridge failure', 'W', MEDIA, None, _V3),
    16: ('Forced eject', 'C', INFORMATION, None, _V3),
    17: ('Read only format', 'W', INFORMATION, None, _V3),
    18: ('Tape directory corrupted on load', 'W', MEDIA, 'reread_cartridge', _V3),
    19: ('Nearing media life', 'I', MEDIA, None, _V3),
    20: ('Cleaning required', 'C', CLEANING, None, _V3),
    21: ('Cleaning requested', 'W', CLEANING, None, _V3),
    22: ('Expired cleaning media', 'C', CLEANING, 'replace_cleaning_cartridge', _V3),
    23: ('Invalid cleaning tape', 'C', CLEANING, 'replace_cleaning_cartridge', _V3),
    # in the cleaning group, but about the tape: "severe trouble reading or writing, which will be resolved by a
    # retention cycle"
    24: ('Retension requested', 'W', MEDIA, 'retension_cartridge', _V3),
    25: ('Dual port interface error', 'W', HARDWARE, None, _V3),
    26: ('Cooling fan failing', 'W', HARDWARE, None, _V3),
    27: ('Power supply failure', 'W', HARDWARE, None, _V3),
    28: ('Power consumption', 'W', ENVIRONMENT, None, _V3),
    29: ('Drive maintenance', 'W', HARDWARE, None, _V3),
    30: ('Hardware A', 'C', HARDWARE, None, _V3),
    31: ('Hardware B', 'C', HARDWARE, None, _V3),
    32: ('Interface', 'W', HARDWARE, 'check_interface', _V3),
    # "Error recovery action": eject and insert again; not a fault of its own
    33: ('Eject media', 'C', INFORMATION, None, _V3),
    # a firmware download with the wrong firmware
    34: ('Microcode update fail', 'W', INFORMATION, None, _V3),
    35: ('Drive humidity', 'W', ENVIRONMENT, None, _V3),
    36: ('Drive temperature', 'W', ENVIRONMENT, None, _V3),
    37: ('Drive voltage', 'W', ENVIRONMENT, None, _V3),
    38: ('Predictive failure', 'C', HARDWARE, None, _V3),
    39: ('Diagnostics required', 'W', HARDWARE, None, _V3),
    40: ('Loader hardware A', 'C', LOADER, None, _V3),
    41: ('Loader stray tape', 'C', LOADER, None, _V3),
    42: ('Loader hardware B', 'W', LOADER, None, _V3),
    43: ('Loader door', 'C', LOADER, None, _V3),
    44: ('Loader hardware C', 'C', LOADER, None, _V3),
    45: ('Loader magazine', 'C', LOADER, None, _V3),
    46: ('Loader predictive failure', 'W', LOADER, None, _V3),
    # 47-49: reserved in TapeAlert v3; sg3_utils 1.48 names them after SSC-4 (encryption key manager, diminished
    # native capacity), whose types this collection has no source for
    47: ('External data encryption control - communications failure', None, INFORMATION, None, None),
    48: ('External data encryption control - key manager returned error', None, INFORMATION, None, None),
    49: ('Diminished native capacity', None, INFORMATION, None, None),
    # "Drive or library powered down with tape loaded"
    50: ('Lost statistics', 'W', INFORMATION, None, _V3),
    51: ('Tape directory invalid at unload', 'W', MEDIA, 'reread_cartridge', _V3),
    52: ('Tape system area write failure', 'C', MEDIA, None, _V3),
    53: ('Tape system area read failure', 'C', MEDIA, None, _V3),
    54: ('No start of data', 'C', MEDIA, None, _V3),
    55: ('Loading failure', 'C', READ_WRITE, None, _QTM),
    56: ('Unrecoverable unload failure', 'C', HARDWARE, None, _QTM),
    57: ('Automation interface failure', 'C', HARDWARE, 'check_interface', _QTM),
    58: ('Firmware failure', 'W', HARDWARE, None, _QTM),
    59: ('WORM medium - integrity check failed', 'W', MEDIA, None, _QTM),
    60: ('WORM medium - overwrite attempted', 'W', INFORMATION, None, _QTM),
    61: ('Encryption policy violation', None, INFORMATION, None, None),
    62: ('Reserved (3Eh)', None, RESERVED, None, None),
    63: ('Reserved (3Fh)', None, RESERVED, None, None),
    64: ('Reserved (40h)', None, RESERVED, None, None),
}
_STUCK = (14, 56)


def flag_judgement(number):
    """``(status or None, fix or None)`` a TapeAlert flag gives when it is set (None: it is not a health finding)."""
    entry = TAPE_ALERT.get(number)
    if entry is None:
        return None, None
    dummy, severity, category, fix, dummy2 = entry
    status, category_fix = _CATEGORY.get(category, (None, None))
    if status is None:
        return None, None
    if number in _STUCK or (category == HARDWARE and severity == 'C'):
        status = FAILING
    return status, fix or category_fix


# Load/unload life of a data cartridge by LTO generation (ibm-cartridge-life); IBM's table ends at Ultrium 8,
# generations 9 and 10 are given the same 20,000 as an estimate.
LOAD_LIFE = {1: 5000, 2: 10000, 3: 20000, 4: 20000, 5: 20000, 6: 20000, 7: 20000, 8: 20000, 9: 20000, 10: 20000}
_LOAD_LIFE_ESTIMATED = (9, 10)

# name -> (value, estimate, source). The estimates, and why (docs/health.md):
# - rewrites_per_gb: rewrites (or rereads) per GB moved since the load. No vendor publishes a limit; the real
#   captures here show 0 (HP Ultrium 6: 0 rereads over 9.9 GB read).
# - min_gb: less than this moved since the load is too little to judge a rate on.
# - retry_rate: retries per data set over the cartridge's life; the real captures here show at most 5.7e-4 (IBM
#   LTO-10: 35 write retries in 61,423 data sets); 1e-2 is 17 times that.
# - min_data_sets: fewer data sets than this over the cartridge's life are too few to judge a rate on.
# - near_end: a cartridge at this fraction of its load or pass life is near its end.
THRESHOLDS = {
    'rewrites_per_gb': (10.0, True, 'estimate'),
    'min_gb': (1.0, True, 'estimate'),
    'retry_rate': (0.01, True, 'estimate'),
    'min_data_sets': (1000, True, 'estimate'),
    'near_end': (0.9, True, 'estimate'),
    'passes_limit': (20000, False, 'hp-tape-passes'),
    'load_life': (None, False, 'ibm-cartridge-life'),
}


def _limits(thresholds):
    """The thresholds in force: the defaults, with the caller's values (a number each) over them."""
    limits = dict((name, value) for name, (value, dummy, dummy2) in THRESHOLDS.items())
    given = thresholds or {}
    if not isinstance(given, dict):
        raise ValueError('thresholds must be a mapping of name to number (names: %s), got %r.'
                         % (', '.join(sorted(THRESHOLDS)), given))
    for name, value in given.items():
        if name not in THRESHOLDS:
            raise ValueError('unknown health threshold %r: the thresholds are %s.'
                             % (name, ', '.join(sorted(THRESHOLDS))))
        number = _records.finite(value)
        if number is None or number <= 0:
            raise ValueError('health threshold %s must be a positive number, got %r.' % (name, value))
        limits[name] = number
    return limits


def _threshold(name, limits, thresholds, estimate=None, source=None):
    dummy, default_estimate, default_source = THRESHOLDS[name]
    given = name in (thresholds or {})
    return {'value': limits[name], 'estimate': False if given else (default_estimate if estimate is None else estimate),
            'source': 'given' if given else (source or default_source)}


def _pages(log_pages):
    """``{'0x2e': decoded page, ...}`` from ``read_log_pages`` / ``parse_all`` output (text pages decoded)."""
    pages = log_pages.get('pages') if isinstance(log_pages, dict) else None
    out = {}
    for code, page in (pages or {}).items():
        try:
            number = code if isinstance(code, int) and not isinstance(code, bool) else int(str(code), 16)
        except ValueError:
            continue
        if isinstance(page, (str, bytes)):
            page = _sg_logs.decode_page(number, page)
        if isinstance(page, dict):
            out['0x%02x' % number] = page
    return out


def _cartridge_memory(mam):
    if mam is None or isinstance(mam, _records.CartridgeMemory):
        return mam
    if isinstance(mam, dict) and 'attributes' in mam:
        return _records.CartridgeMemory.from_parse(mam)
    if isinstance(mam, dict):
        return _records.CartridgeMemory.from_dict(mam)
    if isinstance(mam, (str, bytes)):
        return _records.CartridgeMemory.from_parse(_sg_read_attr.parse(mam))
    raise _records.RecordError('mam: expected sg_read_attr output, its parse or a CartridgeMemory, got %s.'
                               % type(mam).__name__)


def _finding(code, status, evidence, fix, source, estimate=False):
    return _records.HealthFinding(code=code, status=status, evidence=evidence, fix=fix, source=source,
                                  estimate=estimate)


class _Judgement:
    """What one judge() call gathers."""

    def __init__(self, limits, thresholds):
        self.limits = limits
        self.given = thresholds or {}
        self.findings = []
        self.counters = {}
        self.unknown = {}
        self.used = {}

    def use(self, name, estimate=None, source=None):
        self.used[name] = _threshold(name, self.limits, self.given, estimate, source)
        return self.limits[name]

    def tape_alert(self, pages):
        page = pages.get('0x2e')
        read = _sg_logs.tape_alert_flags(page) if page is not None else None
        if read is None:
            self.unknown['tape_alert'] = 'not_read' if page is None else 'no_flags'
            return False
        self.counters['tape_alert'] = {'page': '0x2e', 'active': read['active'], 'read': len(read['flags'])}
        for number in read['active']:
            status, fix = flag_judgement(number)
            if status is None:
                continue
            name, severity, category, dummy, source = TAPE_ALERT[number]
            self.findings.append(_finding('tape_alert', status, {
                'page': '0x2e', 'flag': number, 'name': name, 'type': severity, 'category': category}, fix, source))
        return True

    def cleaning(self, pages):
        asked, said = _sg_logs.cleaning_request(pages)
        self.counters['cleaning_requested'] = {'value': asked, 'pages': said}
        if asked:
            self.findings.append(_finding('cleaning_requested', CLEAN, {'pages': said}, 'clean_drive', 'ssc-cleaning'))

    def _gb(self, pages, direction):
        """GB the drive moved to or from tape since the load: the compression page's byte counters, else 0x0C's GB."""
        for code in ('0x1b', '0x32'):
            counters = _sg_logs.compression_counters(pages.get(code)) or {}
            value = counters.get('tape_%s_bytes' % direction)
            if value is not None:
                return round(value / 1e9, 3), code
        seq = pages.get('0x0c') or {}
        value = seq.get('media_%s_gb' % direction)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return float(value), '0x0c'
        return None, None

    def error_counters(self, pages):
        for code, name, direction, rate_name in (('0x02', 'write_errors', 'written', 'write_error_rate'),
                                                 ('0x03', 'read_errors', 'read', 'read_error_rate')):
            counters = _sg_logs.error_counters(pages[code], int(code, 16)) if code in pages else None
            if counters is None:
                self.unknown[name] = 'not_read' if code not in pages else 'no_counters'
                continue
            counters = dict(counters, page=code)
            self.counters[name] = counters
            if counters['uncorrected']:
                self.findings.append(_finding('uncorrected_errors', DEGRADED, {
                    'page': code, 'counter': 'uncorrected', 'value': counters['uncorrected']}, 'isolate_fault',
                    'error-counters'))
            gb, gb_page = self._gb(pages, direction)
            counters['gb'], counters['gb_page'] = gb, gb_page
            counters['rewrites_per_gb'] = None
            rewrites = counters['rewrites_or_rereads']
            if rewrites is None or gb is None:
                self.unknown[rate_name] = 'no_rewrites' if rewrites is None else 'no_bytes'
                continue
            if gb < self.use('min_gb'):
                self.unknown[rate_name] = 'too_little_data'
                continue
            rate = round(rewrites / gb, 3)
            counters['rewrites_per_gb'] = rate
            limit = self.use('rewrites_per_gb')
            if rate > limit:
                self.findings.append(_finding('error_rate', DEGRADED, {
                    'page': code, 'counter': 'rewrites_or_rereads', 'value': rewrites, 'gb': gb, 'gb_page': gb_page,
                    'per_gb': rate, 'limit': limit}, 'isolate_fault', 'estimate', estimate=True))

    def cartridge_statistics(self, pages):
        stats, code = None, None
        for code, number in (('0x17', 0x17), ('0x30', 0x30)):
            stats = _sg_logs.volume_statistics(pages[code], number) if code in pages else None
            if stats is not None:
                break
        if stats is None:
            self.unknown['cartridge_statistics'] = 'not_read'
            return None
        stats = dict(stats, page=code)
        self.counters['cartridge'] = stats
        for direction in ('write', 'read'):
            value = stats['unrecovered_%s_errors' % direction]
            if value:
                self.findings.append(_finding('cartridge_errors', DEGRADED, {
                    'page': code, 'counter': 'unrecovered_%s_errors' % direction, 'value': value},
                    'retire_cartridge', 'volume-statistics'))
            retries, sets = stats['%s_retries' % direction], stats['data_sets_%s' % (
                'written' if direction == 'write' else 'read')]
            if retries is None or sets is None:
                continue
            if sets < self.use('min_data_sets'):
                self.unknown['%s_retry_rate' % direction] = 'too_little_data'
                continue
            rate = retries / float(sets)
            stats['%s_retry_rate' % direction] = round(rate, 8)
            limit = self.use('retry_rate')
            if rate > limit:
                self.findings.append(_finding('retry_rate', DEGRADED, {
                    'page': code, 'counter': '%s_retries' % direction, 'value': retries, 'data_sets': sets,
                    'rate': round(rate, 6), 'limit': limit}, 'isolate_fault', 'estimate', estimate=True))
        passes = dict((k, stats.get(k)) for k in ('beginning_of_medium_passes', 'middle_of_medium_passes')
                      if stats.get(k) is not None)
        if passes:
            limit, near = self.use('passes_limit'), self.use('near_end')
            most = max(passes, key=passes.get)
            if passes[most] >= near * limit:
                self.findings.append(_finding('cartridge_passes', DEGRADED, {
                    'page': code, 'counter': most, 'value': passes[most], 'limit': limit, 'near_end': near},
                    'retire_cartridge', 'hp-tape-passes', estimate=self.used['near_end']['estimate']))
        return stats

    def device_statistics(self, pages):
        stats = _sg_logs.device_statistics(pages['0x14']) if '0x14' in pages else None
        if stats is not None:
            self.counters['device'] = dict(stats, page='0x14')

    def compression(self, pages):
        for code, number in (('0x1b', 0x1b), ('0x32', 0x32)):
            found = _sg_logs.data_compression(pages[code], number) if code in pages else None
            if found is not None:
                self.counters['compression'] = dict(found, page=code)
                return

    def cartridge_memory(self, mam, stats):
        generation, generation_from = _generation(mam, stats)
        loads, loads_from = None, None
        if mam is not None and mam.load_count is not None:
            loads, loads_from = mam.load_count, 'mam'
        elif stats and stats.get('thread_count') is not None:
            loads, loads_from = stats['thread_count'], stats['page']
        if mam is not None:
            full = (round(mam.total_mib_written / float(mam.maximum_capacity_mib), 2)
                    if mam.total_mib_written is not None and mam.maximum_capacity_mib else None)
            self.counters['mam'] = {
                'load_count': mam.load_count, 'total_mib_written': mam.total_mib_written,
                'total_mib_read': mam.total_mib_read, 'maximum_capacity_mib': mam.maximum_capacity_mib,
                'full_volume_writes': full, 'tape_alert_active': mam.tape_alert_active,
                'medium_serial': mam.medium_serial, 'medium_type': mam.medium_type_name}
            for number in mam.tape_alert_active or []:
                status, fix = flag_judgement(number)
                category = TAPE_ALERT.get(number, (None, None, None))[2]
                # the cartridge's own flags; the drive and cleaning flags of its last load are that drive's
                if status is None or category not in (MEDIA, READ_WRITE):
                    continue
                name, severity, dummy, dummy2, source = TAPE_ALERT[number]
                self.findings.append(_finding('cartridge_tape_alert', status, {
                    'attribute': '0x0002', 'flag': number, 'name': name, 'type': severity, 'category': category},
                    fix, 'hp-mam'))
        self.counters['cartridge_life'] = {'loads': loads, 'loads_from': loads_from, 'generation': generation,
                                           'generation_from': generation_from}
        if loads is None:
            self.unknown['cartridge_loads'] = 'not_read'
            return
        if 'load_life' in self.given:
            life = self.limits['load_life']
        elif generation in LOAD_LIFE:
            life = LOAD_LIFE[generation]
        else:
            self.unknown['cartridge_loads'] = 'generation_unknown'
            return
        self.limits['load_life'] = life
        self.use('load_life', estimate=generation in _LOAD_LIFE_ESTIMATED)
        near = self.use('near_end')
        if loads >= near * life:
            self.findings.append(_finding('cartridge_loads', DEGRADED, {
                'counter': 'load_count' if loads_from == 'mam' else 'thread_count', 'from': loads_from,
                'value': loads, 'limit': life, 'generation': generation, 'near_end': near},
                'retire_cartridge', 'ibm-cartridge-life',
                estimate=generation in _LOAD_LIFE_ESTIMATED or self.used['near_end']['estimate']))


_PERSONALITY = re.compile(r'^Ultrium[- ]?(\d{1,2})$', re.I)


def _generation(mam, stats):
    """The cartridge's LTO generation and where it was read: the MAM density codes, else page 0x17's personality."""
    for field in ('medium_density_code', 'format_density_code'):
        code = getattr(mam, field, None) if mam is not None else None
        if isinstance(code, int) and not isinstance(code, bool) and 0 < code <= 0xFF:
            found = _drive_model.generation_from_density(code)
            if found:
                return found['generation'], 'mam:' + field
    match = _PERSONALITY.match((stats or {}).get('personality') or '')
    if match:
        return int(match.group(1)), '%s:personality' % stats['page']
    return None, None


_RANK = {FAILING: 0, DEGRADED: 1, CLEAN: 2}


def judge(log_pages=None, mam=None, thresholds=None):
    """The drive's and its cartridge's ``Health`` from its log pages and the cartridge's memory (either may be None).

    ``thresholds``: ``{name: number}`` over ``THRESHOLDS`` (``load_life`` then applies to the cartridge whatever
    its generation). Raises ValueError for a threshold that is unknown or not a positive number, and
    ``_records.RecordError`` for a ``mam`` that is none of the forms read; never on what a drive printed.
    """
    limits = _limits(thresholds)
    pages = _pages(log_pages)
    memory = _cartridge_memory(mam)
    work = _Judgement(limits, thresholds)
    alerts_read = work.tape_alert(pages)
    work.cleaning(pages)
    work.error_counters(pages)
    stats = work.cartridge_statistics(pages)
    work.device_statistics(pages)
    work.compression(pages)
    work.cartridge_memory(memory, stats)
    findings = sorted(work.findings, key=lambda f: _RANK[f.status])
    status = _records.worst_health([f.status for f in findings]) or (OK if alerts_read else UNKNOWN)
    return _records.Health(status=status, findings=findings, counters=work.counters,
                           thresholds=dict(sorted(work.used.items())), unknown=dict(sorted(work.unknown.items())))


def of_drive(identity):
    """The ``Health`` of a drive from what discovery read: ``identity`` is its ``_records.DriveIdentity``.

    Its log pages (``read_log_pages`` output) and its loaded cartridge's memory are judged (``judge``); what
    was not read says why in ``unknown``: ``log_pages`` (not read, or the drive has no LOG SENSE: its reason) and
    ``cartridge_memory`` (discovery's reason: no cartridge loaded, no READ ATTRIBUTE, ...). Never raises on what
    a drive printed; a cartridge memory of no form read is left out (``unknown`` says so).
    """
    log_pages = identity.log_pages if isinstance(identity.log_pages, dict) else None
    memory, memory_why = identity.cartridge_memory, identity.cartridge_memory_reason
    if memory is None and not _pages(log_pages):
        # nothing read at all: unknown, with why, and no counter of nothing
        return _records.Health(status=UNKNOWN, findings=[], counters={}, thresholds={}, unknown={
            'cartridge_memory': memory_why or 'not_read',
            'log_pages': (log_pages or {}).get('unsupported_reason') or 'not_read'})
    try:
        health = judge(log_pages, memory)
    except (_records.RecordError, TypeError):     # a memory of no form discovery returns: judged without it
        health, memory, memory_why = judge(log_pages, None), None, 'not_readable'
    unknown = dict(health.unknown or {})
    if log_pages is None or log_pages.get('unsupported_reason'):
        unknown['log_pages'] = (log_pages or {}).get('unsupported_reason') or 'not_read'
    if memory is None:
        unknown['cartridge_memory'] = memory_why or 'not_read'
    health.unknown = dict(sorted(unknown.items()))
    return health
