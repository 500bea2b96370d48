# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The drive's health counters read from sg_logs, on real captures (tests/unit/fixtures/sg_logs/, each with its
source): an HP Ultrium 6 (35GD) page by page with a FUJIFILM LTO-6 cartridge, an HP Ultrium 6 (331U) and an IBM
LTO-10 ``sg_logs -a``, the output of the real sg_logs of sg3_utils 1.44, 1.46 and 1.48 for the same TapeAlert page
bytes (produced/), and the lab's emulated drive (labelled lab-emulated). A text changed to set one flag or counter
says so where it is made (``derived``)."""

from __future__ import annotations

import glob
import os
import random

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _sg_logs
from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._tape_fixtures import derived, read

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'fixtures', 'sg_logs')


def fixture(name):
    return read('sg_logs/' + name)


HP6 = 'sg_logs_p0x%s__HP-Ultrium6-SCSI-35GD-FUJI-LTO6-loaded__1.txt'
HP6_ALL = 'sg_logs_a__HP-Ultrium6-SCSI-331U-bareos-docs__1.txt'
IBM10_ALL = 'sg_logs_a__IBM-ULT3580-TDA-T3S0-LTO10-TS4500__1.txt'
IBM10_TA = 'sg_logs_p0x2e__IBM-ULT3580-TDA-T3S0-LTO10__1.txt'
LAB_TD8_ALL = 'sg_logs_a__lab-emulated-IBM-ULT3580-TD8-shoeshine__1.txt'
LAB_TD5_AFTER = 'sg_logs_p0x%s__lab-emulated-IBM-ULT3580-TD5-observe-after__1.txt'
PRODUCED = sorted(glob.glob(os.path.join(FIXTURES, 'produced', 'sg_logs_a_in__*.txt')))


def page_of(name, code):
    return _sg_logs.parse_all(fixture(name))['pages'][code]


# ------------------------------------------------------------------ error counters 0x02 / 0x03

def test_error_counters_hp_ultrium6_loaded_are_zero_not_unknown():
    for code in ('02', '03'):
        counters = _sg_logs.error_counters(fixture(HP6 % code), int(code, 16))
        assert counters == dict.fromkeys((name for dummy, name, dummy2 in _sg_logs.ERROR_COUNTERS), 0)


def test_error_counters_hp_ultrium6_331u_read_page():
    counters = _sg_logs.error_counters(page_of(HP6_ALL, '0x03'), 0x03)
    assert counters['corrected_without_delay'] == 371 and counters['correction_processed'] == 371
    # HP counts data sets in "Total bytes processed" (C7379-90900): 5839 of them while 10 GB were read
    assert counters['processed'] == 5839
    assert counters['rewrites_or_rereads'] == 0 and counters['uncorrected'] == 0


def test_error_counters_ibm_lto10_vendor_parameters_are_not_counters():
    counters = _sg_logs.error_counters(page_of(IBM10_ALL, '0x02'))
    assert counters['processed'] == 262144
    assert set(counters) == set(name for dummy, name, dummy2 in _sg_logs.ERROR_COUNTERS)


def test_error_counters_lab_drive_counts_bytes():
    counters = _sg_logs.error_counters(fixture(LAB_TD5_AFTER % '02'))
    assert counters['processed'] == 33554432    # the 32 MiB the two jobs wrote


def test_error_counters_sg3_utils_148_prints_big_values_with_their_gb():
    """sg_logs 1.48 prints a counter above 2^30 as "N [G GB]" (sg_logs.c, show_error_counter_page); derived from
    the lab drive's page by giving "Total bytes processed" such a value."""
    text = derived(fixture(LAB_TD5_AFTER % '02'), 'Total bytes processed = 33554432',
                   'Total bytes processed = 4294967296 [4 GB]')
    assert _sg_logs.error_counters(text)['processed'] == 4294967296


def test_error_counters_unknown_stay_none():
    text = fixture(HP6 % '02')
    cut = text[:text.index('  Total bytes processed')]
    counters = _sg_logs.error_counters(cut)
    assert counters['rewrites_or_rereads'] == 0
    assert counters['processed'] is None and counters['uncorrected'] is None
    assert _sg_logs.error_counters('') is None
    assert _sg_logs.error_counters(None) is None


# ------------------------------------------------------------------ device statistics 0x14

def test_device_statistics_hp_ultrium6_loaded():
    stats = _sg_logs.device_statistics(fixture(HP6 % '14'))
    assert stats['lifetime_volume_loads'] == 20 and stats['lifetime_cleaning_operations'] == 2
    assert stats['lifetime_power_on_hours'] == 733 and stats['lifetime_head_hours'] == 32
    assert stats['head_hours_since_cleaning'] == 32 and stats['lifetime_power_cycles'] == 6
    assert stats['hard_write_errors'] == 0 and stats['hard_read_errors'] == 2


def test_device_statistics_ibm_lto10_and_hp_331u():
    ibm = _sg_logs.device_statistics(page_of(IBM10_ALL, '0x14'))
    assert (ibm['lifetime_volume_loads'], ibm['volume_loads_since_reset'], ibm['lifetime_cleaning_operations']) == (
        95, 46, 1)
    hp = _sg_logs.device_statistics(page_of(HP6_ALL, '0x14'))
    assert hp['lifetime_power_on_hours'] == 99163 and hp['lifetime_metres_processed'] == 21687480


def test_device_statistics_lab_drive_lacks_some_parameters():
    stats = _sg_logs.device_statistics(page_of(LAB_TD8_ALL, '0x14'))
    assert stats['lifetime_volume_loads'] == 1
    assert stats['lifetime_power_cycles'] is None and stats['head_hours_since_cleaning'] is None


# ------------------------------------------------------------------ volume statistics 0x17 / tape usage 0x30

def test_volume_statistics_and_tape_usage_hp_ultrium6_loaded_agree():
    vol = _sg_logs.volume_statistics(fixture(HP6 % '17'))
    usage = _sg_logs.volume_statistics(fixture(HP6 % '30'), 0x30)
    assert vol['thread_count'] == usage['thread_count'] == 2
    assert vol['data_sets_written'] == usage['data_sets_written'] == 13205
    assert vol['beginning_of_medium_passes'] == 554 and vol['lifetime_mb_written'] == 32643
    assert vol['personality'] == 'Ultrium-6' and vol['worm'] is False
    assert 'personality' not in usage


@pytest.mark.parametrize('code,read', [('30', lambda p: _sg_logs.volume_statistics(p, 0x30)),
                                       ('32', lambda p: _sg_logs.data_compression(p, 0x32))])
def test_pages_read_as_hex_give_the_decoded_counters(code, read):
    """tape_drive_info reads pages 0x30 and above with -H: the HP Ultrium 6 35GD pages' bytes (produced/inputs/,
    rebuilt from the captures and checked to decode to them) read by parameter code give the decoded counters."""
    path = os.path.join(FIXTURES, 'produced', 'inputs', 'hp6-35gd-fuji_0x%s.hex' % code)
    with open(path, encoding='utf-8') as handle:
        hexed = read(_sg_logs.parse_hex_page(handle.read()))
    assert hexed == read(fixture(HP6 % code)) and any(v is not None for v in hexed.values())


def test_volume_statistics_hp_331u_retries():
    vol = _sg_logs.volume_statistics(page_of(HP6_ALL, '0x17'))
    assert (vol['write_retries'], vol['data_sets_written'], vol['read_retries'], vol['data_sets_read']) == (
        1, 879440, 31, 1073188)
    assert (vol['beginning_of_medium_passes'], vol['middle_of_medium_passes']) == (656, 314)


# ------------------------------------------------------------------ data compression 0x1B / 0x32

def test_data_compression_ratios_and_enable_bit():
    hp = _sg_logs.data_compression(page_of(HP6_ALL, '0x1b'))
    assert hp['read_ratio'] == 1.39 and hp['write_ratio'] is None and hp['enabled'] is True
    assert hp['tape_read_bytes'] == 9880 * 1000000 + 588564
    ibm = _sg_logs.data_compression(page_of(IBM10_ALL, '0x1b'))
    assert ibm['write_ratio'] == 80.26
    lab = _sg_logs.data_compression(fixture(LAB_TD5_AFTER % '1b'))
    assert lab['write_ratio'] == 1.99 and lab['enabled'] is True
    loaded = _sg_logs.data_compression(fixture(HP6 % '1b'))
    assert loaded['enabled'] is False and loaded['read_ratio'] is None and loaded['host_written_bytes'] == 0
    # page 0x32 has no enable parameter: unknown, not off
    assert _sg_logs.data_compression(fixture(HP6 % '32'), 0x32)['enabled'] is None


# ------------------------------------------------------------------ TapeAlert by flag number

def test_tape_alert_flags_ibm_lto10_all_clear():
    flags = _sg_logs.tape_alert_flags(fixture(IBM10_TA))
    assert sorted(flags['flags']) == list(range(1, 65))
    assert flags['active'] == [] and flags['unnamed'] == []


@pytest.mark.parametrize('path', PRODUCED, ids=[os.path.basename(p) for p in PRODUCED])
def test_tape_alert_flags_every_release_names_every_flag(path):
    """sg_logs 1.44, 1.46 and 1.48 print different names for flags 0x28-0x31 and 0x3d-0x40; all read by number."""
    with open(path, encoding='utf-8') as handle:
        page = _sg_logs.parse_all(handle.read())['pages']['0x2e']
    flags = _sg_logs.tape_alert_flags(page)
    assert sorted(flags['flags']) == list(range(1, 65)) and flags['unnamed'] == []


def test_tape_alert_flags_from_hex_equal_the_decoded_page():
    with open(os.path.join(FIXTURES, 'produced', 'inputs', 'ibm-lto10-t3s0_0x2e.hex'), encoding='utf-8') as handle:
        hexed = _sg_logs.tape_alert_flags(_sg_logs.parse_hex_page(handle.read()))
    assert hexed == _sg_logs.tape_alert_flags(fixture(IBM10_TA))


@pytest.mark.parametrize('old,new,number', [
    ('  Cleaning required: 0', '  Cleaning required: 1', 20),
    ('  Hardware B: 0', '  Hardware B: 1', 31),
    ('  Media: 0', '  Media: 1', 4),
    ('  Reserved parameter code 0x3d, flag: 0', '  Reserved parameter code 0x3d, flag: 1', 61),
    ('  Obsolete (2Ah): 0', '  Obsolete (2Ah): 1', 42),
])
def test_tape_alert_one_flag_set(old, new, number):
    """Derived from the real LTO-10 page (sg3_utils <= 1.47 names) by setting the one flag."""
    flags = _sg_logs.tape_alert_flags(derived(fixture(IBM10_TA), old, new))
    assert flags['active'] == [number]


def test_tape_alert_one_flag_set_sg3_utils_148_names():
    """Derived from sg_logs 1.48's output for the real LTO-10 page bytes (produced/) by setting flag 0x31."""
    path = [p for p in PRODUCED if '1.48' in p][0]
    with open(path, encoding='utf-8') as handle:
        text = derived(handle.read(), '  Diminished native capacity: 0', '  Diminished native capacity: 1')
    assert _sg_logs.tape_alert_flags(_sg_logs.parse_all(text)['pages']['0x2e'])['active'] == [0x31]


def test_tape_alert_flags_not_printed_are_unknown():
    text = fixture(IBM10_TA)
    cut = text[:text.index('  Cleaning required')]
    flags = _sg_logs.tape_alert_flags(cut)
    assert max(flags['flags']) == 19 and 20 not in flags['flags']
    assert _sg_logs.tape_alert_flags('Tape alert page (ssc-3) [0x2e]\n') is None


# ------------------------------------------------------------------ cleaning bits 0x0C / 0x11

def test_cleaning_request_real_pages():
    assert _sg_logs.cleaning_request({'0x0c': fixture(HP6 % '0c')}) == (False, ['0x0c'])
    assert _sg_logs.cleaning_request(_sg_logs.parse_all(fixture(HP6_ALL))['pages']) == (False, ['0x0c', '0x11'])
    assert _sg_logs.cleaning_request({}) == (None, [])
    assert _sg_logs.cleaning_request(None) == (None, [])


def test_cleaning_request_set_bits():
    """Derived from the real HP Ultrium 6 pages: 0x0C's cleaning parameter set, then 0x11's CRQRD bit set."""
    seq = derived(fixture(HP6 % '0c'), 'Cleaning action not required (or completed)', 'Cleaning action required')
    assert _sg_logs.cleaning_request({'0x0c': seq}) == (True, ['0x0c'])
    pages = _sg_logs.parse_all(derived(fixture(HP6_ALL), 'CRQST=0 CRQRD=0', 'CRQST=0 CRQRD=1'))['pages']
    assert _sg_logs.cleaning_request(pages) == (True, ['0x11'])


# ------------------------------------------------------------------ cut and damaged captures

READERS = {
    '0x02': lambda p: _sg_logs.error_counters(p, 0x02),
    '0x03': lambda p: _sg_logs.error_counters(p, 0x03),
    '0x14': _sg_logs.device_statistics,
    '0x17': _sg_logs.volume_statistics,
    '0x30': lambda p: _sg_logs.volume_statistics(p, 0x30),
    '0x1b': _sg_logs.data_compression,
    '0x32': lambda p: _sg_logs.data_compression(p, 0x32),
    '0x2e': _sg_logs.tape_alert_flags,
}


def _read_all(text):
    pages = _sg_logs.parse_all(text)['pages']
    out = dict((code, read(pages[code])) for code, read in READERS.items() if code in pages)
    out['cleaning'] = _sg_logs.cleaning_request(pages)
    return out


def _no_new_value(cut, full, where):
    for code, values in cut.items():
        if code == 'cleaning' or values is None:
            continue
        flat = values.get('flags', values)
        other = full[code].get('flags', full[code])
        for key, value in flat.items():
            if value is not None and key not in ('active', 'unnamed'):
                assert value == other[key], '%s: page %s %s=%r, the full capture gives %r' % (
                    where, code, key, value, other[key])


@pytest.mark.parametrize('name', [HP6_ALL, IBM10_ALL, LAB_TD8_ALL])
def test_cut_captures_give_no_value_the_capture_does_not(name):
    raw = fixture(name).encode('utf-8')
    full = _read_all(raw.decode('utf-8'))
    # every 4th line end (the fuzz test cuts parse_all itself at every one) and 20 bytes anywhere
    offsets = [i + 1 for i, byte in enumerate(raw) if byte == 0x0a][::4]
    offsets += random.Random(name).sample(range(len(raw)), 20)
    for offset in offsets:
        _no_new_value(_read_all(raw[:offset].decode('utf-8', 'replace')), full, '%s cut at %d' % (name, offset))


@pytest.mark.parametrize('name', [HP6_ALL, IBM10_ALL])
def test_damaged_bytes_never_raise(name):
    raw = bytearray(fixture(name).encode('utf-8'))
    rng = random.Random(name)
    for dummy in range(10):
        damaged = bytearray(raw)
        for dummy2 in range(20):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        for read in READERS.values():
            read(bytes(damaged))
        _sg_logs.cleaning_request({'0x0c': bytes(damaged), '0x11': bytes(damaged)})
