# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""A drive's and its cartridge's health judged (_judge/_health.judge) on recorded pages: the HP Ultrium 6 (35GD,
page by page, with its cartridge's memory), the HP Ultrium 6 (331U) and IBM LTO-10 ``sg_logs -a``, the lab's
emulated drives; and on copies of those captures with one flag or counter set, each made by ``derived`` in the
test that uses it (no real capture with a flag set or a worn cartridge was found). The limits and their sources
are docs/health.md's; each test that crosses one names it."""

from __future__ import annotations

import os
import random
import re

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils import _records, _words
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _health
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _sg_logs, _sg_read_attr
from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._tape_fixtures import derived, read

HERE = os.path.dirname(__file__)
FIXTURES = os.path.join(HERE, '..', '..', '..', 'fixtures')
DOC = os.path.join(HERE, '..', '..', '..', '..', '..', 'docs', 'health.md')

HP6 = 'sg_logs/sg_logs_p0x%s__HP-Ultrium6-SCSI-35GD-FUJI-LTO6-loaded__1.txt'
HP6_PAGES = ('02', '03', '0c', '14', '17', '1b', '30', '31', '32')
HP6_MAM = 'sg_read_attr/sg_read_attr__HP-Ultrium6-SCSI-35GD-FUJI-LTO6-EW7VWMVKF6__1.txt'
HP6_ALL = 'sg_logs/sg_logs_a__HP-Ultrium6-SCSI-331U-bareos-docs__1.txt'
IBM10_ALL = 'sg_logs/sg_logs_a__IBM-ULT3580-TDA-T3S0-LTO10-TS4500__1.txt'
IBM10_TA = 'sg_logs/sg_logs_p0x2e__IBM-ULT3580-TDA-T3S0-LTO10__1.txt'
LAB_TD8_ALL = 'sg_logs/sg_logs_a__lab-emulated-IBM-ULT3580-TD8-shoeshine__1.txt'
LAB_TD5 = 'sg_logs/sg_logs_p0x%s__lab-emulated-IBM-ULT3580-TD5-observe-%s__1.txt'


def hp6_pages(**changed):
    """The HP Ultrium 6 35GD capture's pages; ``changed`` (page code -> text) replaces some."""
    pages = dict(('0x' + code, read(HP6 % code)) for code in HP6_PAGES)
    pages.update(changed)
    return {'pages': pages}


def all_pages(name, old=None, new=None):
    text = read(name)
    return _sg_logs.parse_all(derived(text, old, new) if old else text)


def codes(health):
    return [(f.code, f.status, f.fix) for f in health.findings]


# ------------------------------------------------------------------ the real captures as they are

def test_hp_ultrium6_331u_is_ok():
    """Bareos' HP Ultrium 6 capture: every TapeAlert flag clear, no uncorrected error, 0 rereads over 9.88 GB
    read, retries of 1.1e-6 / 2.9e-5 per data set, 18 loads and 656 passes of a 20,000 life."""
    health = _health.judge(all_pages(HP6_ALL))
    assert health.status == _records.HEALTH_OK and health.findings == []
    assert health.counters['read_errors']['gb'] == 9.881 and health.counters['read_errors']['rewrites_per_gb'] == 0
    assert health.counters['cartridge']['write_retry_rate'] == round(1 / 879440.0, 8)
    assert health.counters['cartridge_life'] == {'loads': 18, 'loads_from': '0x17', 'generation': 6,
                                                 'generation_from': '0x17:personality'}
    assert health.counters['compression']['read_ratio'] == 1.39
    # nothing was written since the load: the write rate is not judged, and says why
    assert health.unknown == {'write_error_rate': 'too_little_data'}


def test_hp_ultrium6_35gd_with_its_cartridge_memory_is_unknown_without_tapealert():
    """The 35GD capture holds no TapeAlert page: UNKNOWN, though nothing read crosses a limit (its 2 lifetime hard
    read errors of page 0x14 are listed, not judged: docs/health.md)."""
    health = _health.judge(hp6_pages(), read(HP6_MAM))
    assert health.status == _records.HEALTH_UNKNOWN and health.findings == []
    assert health.unknown['tape_alert'] == 'not_read'
    assert health.counters['device']['hard_read_errors'] == 2
    # the load count is the cartridge memory's (1 on that day), its generation the medium density code's
    assert health.counters['cartridge_life'] == {'loads': 1, 'loads_from': 'mam', 'generation': 6,
                                                 'generation_from': 'mam:medium_density_code'}
    assert health.counters['mam']['medium_serial'] == 'EW7VWMVKF6'
    assert health.thresholds['load_life'] == {'value': 20000, 'estimate': False, 'source': 'ibm-cartridge-life'}
    assert health.counters['cleaning_requested'] == {'value': False, 'pages': ['0x0c']}


def test_ibm_lto10_is_ok_and_its_load_life_unknown():
    health = _health.judge(all_pages(IBM10_ALL))
    assert health.status == _records.HEALTH_OK and health.findings == []
    # page 0x17 names the cartridge "LTOLA62" and there is no cartridge memory: no generation, no load life
    assert health.unknown['cartridge_loads'] == 'generation_unknown'
    assert health.counters['compression']['write_ratio'] == 80.26
    assert _health.judge({'pages': {'0x2e': read(IBM10_TA)}}).status == _records.HEALTH_OK
    # pages keyed by number (0x2e) as well as by '0x2e'
    flagged = derived(read(IBM10_TA), '  Media: 0', '  Media: 1')
    assert _health.judge({'pages': {0x2e: flagged}}).status == _records.HEALTH_DEGRADED


@pytest.mark.parametrize('when', ['before', 'after'])
def test_lab_emulated_drives_are_ok(when):
    pages = dict(('0x' + code, read(LAB_TD5 % (code, when))) for code in ('02', '1b', '2e'))
    assert _health.judge({'pages': pages}).status == _records.HEALTH_OK
    assert _health.judge(all_pages(LAB_TD8_ALL)).status == _records.HEALTH_OK


def test_nothing_read_is_unknown():
    health = _health.judge()
    assert health.status == _records.HEALTH_UNKNOWN and health.findings == []
    assert set(health.unknown) == {'tape_alert', 'write_errors', 'read_errors', 'cartridge_statistics',
                                   'cartridge_loads'}
    garbage = _health.judge({'pages': {'zz': 1, '0x2e': 5, '0x02': 'no page here\n'}}, mam={'load_count': None})
    assert garbage.status == _records.HEALTH_UNKNOWN


# ------------------------------------------------------------------ TapeAlert flags, one set at a time

@pytest.mark.parametrize('line,status,fix', [
    # the cleaning flags: CLEAN (issue 25: TapeAlert 20 / 21 / 22)
    ('Cleaning required', 'CLEAN', 'clean_drive'),
    ('Cleaning requested', 'CLEAN', 'clean_drive'),
    ('Expired cleaning media', 'CLEAN', 'replace_cleaning_cartridge'),
    # media flags: DEGRADED, retire the cartridge
    ('Media', 'DEGRADED', 'retire_cartridge'),
    ('Media life', 'DEGRADED', 'retire_cartridge'),
    ('Nearing media life', 'DEGRADED', 'retire_cartridge'),
    # read / write flags: cartridge or drive, the drive cannot tell (IBM: isolate with known good ones)
    ('Write failure', 'DEGRADED', 'isolate_fault'),
    # drive hardware: critical (TapeAlert v3.0 type C) FAILING, warning DEGRADED
    ('Hardware B', 'FAILING', 'call_service'),
    ('Predictive failure', 'FAILING', 'call_service'),
    ('Cooling fan failing', 'DEGRADED', 'call_service'),
    ('Drive temperature', 'DEGRADED', 'check_environment'),
    # a cartridge stuck in the drive
    ('Unrecoverable mechanical cartridge failure', 'FAILING', 'call_service'),
])
def test_one_flag_set(line, status, fix):
    """Derived from the real LTO-10 TapeAlert page by setting the one flag."""
    text = derived(read(IBM10_TA), '  %s: 0\n' % line, '  %s: 1\n' % line)
    health = _health.judge({'pages': {'0x2e': text}})
    assert health.status == status
    assert codes(health) == [('tape_alert', status, fix)]
    assert health.findings[0].evidence['name'] == line and health.findings[0].evidence['page'] == '0x2e'


@pytest.mark.parametrize('line', ['Write protect', 'No removal', 'Cleaning media', 'Lost statistics',
                                  'WORM medium - overwrite attempted', 'Obsolete (28h)'])
def test_information_and_loader_flags_make_no_finding(line):
    """Derived from the real LTO-10 page: a setting, an operation or an autoloader flag is not the drive's health."""
    health = _health.judge({'pages': {'0x2e': derived(read(IBM10_TA), '  %s: 0\n' % line, '  %s: 1\n' % line)}})
    assert health.status == _records.HEALTH_OK and health.findings == []
    assert len(health.counters['tape_alert']['active']) == 1


def test_worst_first_and_every_finding_kept():
    """Derived from the real LTO-10 page by setting Cleaning required and Hardware A."""
    text = derived(read(IBM10_TA), '  Cleaning required: 0', '  Cleaning required: 1')
    text = derived(text, '  Hardware A: 0', '  Hardware A: 1')
    health = _health.judge({'pages': {'0x2e': text}})
    assert health.status == 'FAILING'
    assert [f.evidence['flag'] for f in health.findings] == [30, 20]


def test_flags_by_the_names_of_sg3_utils_148():
    """sg_logs 1.48's output of the real LTO-10 page bytes (fixtures/sg_logs/produced/), Hardware B set."""
    path = os.path.join(FIXTURES, 'sg_logs', 'produced',
                        'sg_logs_a_in__12-pages-HP-Ultrium5-6_IBM-TD6-LTO10__sg3_utils-1.48__1.txt')
    with open(path, encoding='utf-8') as handle:
        text = derived(handle.read(), '  Hardware B: 0', '  Hardware B: 1')
    page = _sg_logs.parse_all(text)['pages']['0x2e']
    assert codes(_health.judge({'pages': {'0x2e': page}})) == [('tape_alert', 'FAILING', 'call_service')]


def test_the_table_names_flags_as_sg_logs_prints_them():
    """Every flag 1-64 has an entry, named as one of the names sg_logs printed for it (up to or from 1.48), or as
    the TapeAlert v3.0 name of an autoloader flag sg_logs calls obsolete; types only C / W / I."""
    assert sorted(_health.TAPE_ALERT) == list(range(1, 65))
    for number, (name, severity, category, dummy, source) in _health.TAPE_ALERT.items():
        assert severity in ('C', 'W', 'I', None)
        assert (source is None) == (severity is None), number
        if category != _health.LOADER:
            assert name in _sg_logs.TAPE_ALERT_NAMES[number], (number, name)


def test_hardware_flags_fail_when_critical():
    """docs/health.md: a drive hardware flag of type C is FAILING, of type W DEGRADED."""
    for number, (dummy, severity, category, dummy2, dummy3) in _health.TAPE_ALERT.items():
        if category == _health.HARDWARE:
            assert _health.flag_judgement(number)[0] == ('FAILING' if severity == 'C' else 'DEGRADED'), number


def test_the_documented_categories_are_the_tables():
    """docs/health.md's category table lists the flags of each category as TAPE_ALERT has them."""
    with open(DOC, encoding='utf-8') as handle:
        doc = handle.read()
    rows = {'cleaning': _health.CLEANING, 'media (the cartridge)': _health.MEDIA,
            'read / write (cartridge or drive: the drive cannot tell)': _health.READ_WRITE,
            'drive hardware': _health.HARDWARE, 'environment': _health.ENVIRONMENT,
            'information': _health.INFORMATION}
    for label, category in rows.items():
        match = re.search(r'^\| %s \| ([0-9, ]+) \|' % re.escape(label), doc, re.M)
        assert match, label
        listed = [int(n) for n in match.group(1).split(',')]
        assert listed == sorted(n for n, e in _health.TAPE_ALERT.items() if e[2] == category), label


# ------------------------------------------------------------------ the cleaning bits

def test_cleaning_requested_by_page_0x0c():
    """Derived from the HP Ultrium 6 35GD capture's page 0x0C: "Cleaning action required"."""
    seq = derived(read(HP6 % '0c'), 'Cleaning action not required (or completed)', 'Cleaning action required')
    health = _health.judge(hp6_pages(**{'0x0c': seq, '0x2e': read(IBM10_TA)}))
    assert health.status == 'CLEAN'
    assert codes(health) == [('cleaning_requested', 'CLEAN', 'clean_drive')]


# ------------------------------------------------------------------ error counters since the load

def test_uncorrected_write_errors():
    """Derived from the HP Ultrium 6 35GD capture's page 0x02: 3 uncorrected errors."""
    page = derived(read(HP6 % '02'), 'Total uncorrected errors = 0', 'Total uncorrected errors = 3')
    health = _health.judge(hp6_pages(**{'0x02': page}))
    assert health.status == 'DEGRADED'
    assert codes(health) == [('uncorrected_errors', 'DEGRADED', 'isolate_fault')]
    assert health.findings[0].evidence == {'page': '0x02', 'counter': 'uncorrected', 'value': 3}


@pytest.mark.parametrize('rereads,per_gb,found', [(120, 12.145, True), (90, 9.108, False)])
def test_rereads_per_gb_against_the_estimated_limit(rereads, per_gb, found):
    """Derived from the HP Ultrium 6 331U capture's read page (9.881 GB read since the load, page 0x1B): its
    rereads set to 120 (12.1 per GB, above the estimated 10) and to 90 (9.1, below)."""
    pages = all_pages(HP6_ALL, 'Total rewrites or rereads = 0\n   Total errors corrected = 0\n   Total times '
                      'correction algorithm processed = 371', 'Total rewrites or rereads = %d\n   Total errors '
                      'corrected = 0\n   Total times correction algorithm processed = 371' % rereads)
    health = _health.judge(pages)
    assert health.counters['read_errors']['rewrites_per_gb'] == per_gb
    assert codes(health) == ([('error_rate', 'DEGRADED', 'isolate_fault')] if found else [])
    if found:
        finding = health.findings[0]
        assert finding.estimate and finding.source == 'estimate' and finding.evidence['limit'] == 10.0
    assert health.thresholds['rewrites_per_gb'] == {'value': 10.0, 'estimate': True, 'source': 'estimate'}
    # a limit given instead
    given = _health.judge(pages, thresholds={'rewrites_per_gb': 13})
    assert given.findings == [] and given.thresholds['rewrites_per_gb'] == {
        'value': 13, 'estimate': False, 'source': 'given'}


# ------------------------------------------------------------------ the cartridge's life

def test_unrecovered_errors_and_retries_over_the_cartridges_life():
    """Derived from the HP Ultrium 6 331U capture's page 0x17: 9000 write retries in 879,440 data sets (1.02 %,
    above the estimated 1 %) and 1 unrecovered read error."""
    text = derived(read(HP6_ALL), 'Page valid: 1\n   Thread count: 18\n   Total data sets written: 879440\n   '
                   'Total write retries: 1\n', 'Page valid: 1\n   Thread count: 18\n   Total data sets written: '
                   '879440\n   Total write retries: 9000\n')
    text = derived(text, 'Total unrecovered read errors: 0\n   Last mount',
                   'Total unrecovered read errors: 1\n   Last mount')
    health = _health.judge(_sg_logs.parse_all(text))
    assert health.status == 'DEGRADED'
    assert codes(health) == [('retry_rate', 'DEGRADED', 'isolate_fault'),
                             ('cartridge_errors', 'DEGRADED', 'retire_cartridge')]
    assert health.findings[0].evidence['rate'] == round(9000 / 879440.0, 6) and health.findings[0].estimate


@pytest.mark.parametrize('passes,found', [(18000, True), (17999, False)])
def test_passes_near_the_hp_limit(passes, found):
    """HP LTO-4 TRM vol. 2: at most 20,000 passes over any area of the tape; near at 0.9 of it (estimate).
    Derived from the HP Ultrium 6 331U capture's page 0x17 (656 passes over the beginning of the medium)."""
    health = _health.judge(all_pages(HP6_ALL, 'Beginning of medium passes: 656',
                                     'Beginning of medium passes: %d' % passes))
    assert codes(health) == ([('cartridge_passes', 'DEGRADED', 'retire_cartridge')] if found else [])
    if found:
        assert health.findings[0].evidence['limit'] == 20000 and health.findings[0].source == 'hp-tape-passes'
        assert health.findings[0].evidence['counter'] == 'beginning_of_medium_passes'
    middle = _health.judge(all_pages(HP6_ALL, 'Middle of medium passes: 314', 'Middle of medium passes: %d' % passes))
    assert [f.evidence['counter'] for f in middle.findings] == (['middle_of_medium_passes'] if found else [])


@pytest.mark.parametrize('density,loads,limit,estimate', [
    ('0x5a', 18000, 20000, False),      # LTO-6: IBM TS2900 table 18, 20,000 loads
    ('0x40', 4500, 5000, False),        # LTO-1: the same table, 5000
    ('0x60', 18000, 20000, True),       # LTO-9: past IBM's table, 20,000 estimated
])
def test_loads_near_the_cartridges_load_life(density, loads, limit, estimate):
    """Derived from the real HP Ultrium 6 cartridge memory: its density codes and load count set."""
    text = read(HP6_MAM)
    for attr in ('Format density code', 'Medium density code'):
        text = derived(text, '  %s: 0x5a\n' % attr, '  %s: %s\n' % (attr, density))
    near = derived(text, '  Load count: 1\n', '  Load count: %d\n' % loads)
    health = _health.judge(hp6_pages(**{'0x2e': read(IBM10_TA)}), near)
    assert codes(health) == [('cartridge_loads', 'DEGRADED', 'retire_cartridge')]
    finding = health.findings[0]
    assert (finding.evidence['limit'], finding.evidence['value'], finding.evidence['from']) == (limit, loads, 'mam')
    assert finding.estimate is True     # near_end is an estimate
    assert health.thresholds['load_life']['estimate'] is estimate
    below = derived(text, '  Load count: 1\n', '  Load count: %d\n' % (loads - 1))
    assert _health.judge(hp6_pages(**{'0x2e': read(IBM10_TA)}), below).findings == []


def test_the_cartridges_tapealert_flags_of_its_previous_load():
    """HP Ultrium TRM Q1530-90901: flag 1 the most significant bit. Derived from the real cartridge memory with
    flags 4 (Media) and 20 (Cleaning required) set: the first is the cartridge's, the second was the drive's."""
    text = derived(read(HP6_MAM), '  TapeAlert flags: 0\n', '  TapeAlert flags: %d\n' % (1 << 60 | 1 << 44))
    health = _health.judge({'pages': {'0x2e': read(IBM10_TA)}}, _sg_read_attr.parse(text))
    assert codes(health) == [('cartridge_tape_alert', 'DEGRADED', 'retire_cartridge')]
    assert health.findings[0].evidence['flag'] == 4 and health.counters['mam']['tape_alert_active'] == [4, 20]


# ------------------------------------------------------------------ input checks, cut captures, words, records

def test_thresholds_are_checked():
    with pytest.raises(ValueError, match='rewrites_per_gb'):
        _health.judge(thresholds={'errors_per_gb': 5})
    with pytest.raises(ValueError, match='positive'):
        _health.judge(thresholds={'near_end': -1})
    with pytest.raises(_records.RecordError):
        _health.judge(mam=42)


def test_cut_captures_never_raise_and_find_nothing_the_capture_does_not():
    raw, mam = read(HP6_ALL), read(HP6_MAM)
    for offset in [i + 1 for i, char in enumerate(raw) if char == '\n'][::4]:
        health = _health.judge(_sg_logs.parse_all(raw[:offset]))
        assert health.status in (_records.HEALTH_OK, _records.HEALTH_UNKNOWN), offset
        assert health.findings == [], offset
    pages = all_pages(HP6_ALL)
    for offset in [i + 1 for i, char in enumerate(mam) if char == '\n'] + random.Random(3).sample(range(len(mam)), 50):
        health = _health.judge(pages, mam[:offset])
        assert health.status == _records.HEALTH_OK and health.findings == [], offset


def test_words_carry_the_evidence():
    text = derived(read(IBM10_TA), '  Hardware B: 0', '  Hardware B: 1')
    health = _health.judge({'pages': {'0x2e': text, '0x02': derived(
        read(HP6 % '02'), 'Total uncorrected errors = 0', 'Total uncorrected errors = 3')}})
    summary = _words.health_summary(health)
    assert summary.startswith('FAILING: ') and '31 "Hardware B"' in summary and '1 more finding' in summary
    assert '3 uncorrected write error' in _words.health_finding(health.findings[1])
    assert _words.health_fix(health.findings[0].fix) == _words.HEALTH_FIXES['call_service']
    assert _words.health_summary(_health.judge()).startswith('UNKNOWN: ')
    for what, why in _health.judge().unknown.items():
        assert _words.HEALTH_UNKNOWN[why] in _words.health_unknown(what, why)


def test_every_fix_and_reason_has_words():
    fixes = set(fix for dummy, fix in _health._CATEGORY.values())
    fixes |= set(e[3] for e in _health.TAPE_ALERT.values() if e[3])
    fixes |= {'clean_drive', 'isolate_fault', 'retire_cartridge'}
    assert fixes <= set(_words.HEALTH_FIXES)
    # the reasons the judge gives, read from its source: every quoted id assigned to self.unknown[...]
    with open(_health.__file__, encoding='utf-8') as handle:
        assigned = [line.split('] = ', 1)[1] for line in handle if 'self.unknown[' in line and '] = ' in line]
    reasons = set(word for line in assigned for word in re.findall(r"'([a-z_]+)'", line))
    assert len(reasons) >= 6 and reasons <= set(_words.HEALTH_UNKNOWN), reasons - set(_words.HEALTH_UNKNOWN)


def test_health_record_round_trip():
    text = derived(read(IBM10_TA), '  Media: 0', '  Media: 1')
    health = _health.judge({'pages': {'0x2e': text}}, read(HP6_MAM))
    data = health.to_dict()
    assert _records.Health.from_dict(data).to_dict() == data
    assert isinstance(_records.Health.from_dict(data).findings[0], _records.HealthFinding)
    assert data['status'] in _records.HEALTH_STATUSES
