# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The LTO drive model against its sourced numbers and real captured strings.

Expected numbers are the ones the sources print (see docs/drive-model.md);
identification and density cases are read from real captures in
tests/unit/fixtures/ (each file keeps its source header), named in the test id.
"""

import json
import math
import os
import re
import zlib

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _drive_model as dm

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'fixtures')
REPO_ROOT = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', '..')


def fixture(tool, name):
    with open(os.path.join(FIXTURES, tool, name), encoding='utf-8') as handle:
        text = handle.read()
    lines = text.splitlines()
    assert [line[:2] for line in lines[:3]] == ['# '] * 3, 'fixture %s/%s lost its source header' % (tool, name)
    return '\n'.join(lines[3:])


# -- every generation: the sourced numbers ----------------------------------------------------

# (generation, form_factor, vendor) -> (native MB/s, capacity GB, nominal ratio, floor, steps count, top step)
SPECS = {
    (1, None, None): (15.0, 100, 2.0, None, None, None),
    (2, None, None): (35.0, 200, 2.0, None, None, None),
    (2, None, 'HPE'): (30.0, 200, 2.0, None, None, None),
    (2, None, 'IBM'): (35.0, 200, 2.0, 17.5, 5, 35.0),
    (3, None, None): (80.0, 400, 2.0, None, None, None),
    (3, None, 'IBM'): (80.0, 400, 2.0, 40.0, 5, 80.0),
    (3, None, 'HPE'): (80.0, 400, 2.0, 27.0, None, 80.0),
    (4, None, None): (120.0, 800, 2.0, None, None, None),
    (4, None, 'IBM'): (120.0, 800, 2.0, 30.0, 6, 120.0),
    (5, None, None): (140.0, 1500, 2.0, None, None, None),
    (6, None, None): (160.0, 2500, 2.5, None, None, None),
    (6, None, 'HPE'): (160.0, 2500, 2.5, None, None, None),
    (7, None, None): (300.0, 6000, 2.5, None, None, None),
    (7, None, 'IBM'): (300.0, 6000, 2.5, 101.46, 12, 306.0),
    (8, 'FH', None): (360.0, 12000, 2.5, None, None, None),
    (8, 'FH', 'IBM'): (360.0, 12000, 2.5, 112.0, 12, 365.0),
    (8, 'HH', 'IBM'): (300.0, 12000, 2.5, 112.0, 9, 306.4),
    (9, 'FH', None): (400.0, 18000, 2.5, None, None, None),
    (9, 'FH', 'IBM'): (400.0, 18000, 2.5, 177.0, 12, 408.0),
    (9, 'HH', 'IBM'): (300.0, 18000, 2.5, 177.0, 6, 284.0),
    (9, 'HH', 'HPE'): (300.0, 18000, 2.5, None, None, None),
    (10, None, None): (400.0, 30000, 2.5, None, None, None),
    (10, None, 'IBM'): (400.0, 30000, 2.5, 157.0, 14, 407.0),
}


@pytest.mark.parametrize('key', sorted(SPECS, key=str), ids=lambda k: 'LTO-%d-%s-%s' % k)
def test_spec_numbers(key):
    gen, form_factor, vendor = key
    native, capacity, ratio, floor, n_steps, top = SPECS[key]
    spec = dm.lookup(gen, form_factor, vendor)
    assert (spec.generation, spec.form_factor, spec.vendor) == key
    assert spec.native_mb_s == native
    assert spec.native_capacity_gb == capacity
    assert spec.compression_ratio == ratio
    if floor is None:
        # No source lists this drive's speed matching: an estimate, stated as one, never
        # "floor = full speed".
        assert spec.is_estimated('speed_floor_mb_s') and spec.is_estimated('speed_steps_mb_s')
        rule = dict(spec.estimated)['speed_floor_mb_s']
        assert 'step fractions of the sourced' in rule or "IBM's published LTO-%d steps used" % gen in rule
        assert spec.speed_floor_mb_s < spec.native_mb_s
        assert spec.speed_steps_mb_s[-1] == spec.speed_floor_mb_s
        assert 'estimate' in spec.sources
    elif n_steps is None:
        # a published continuous range, modelled as even steps
        assert spec.speed_matching == 'range' and spec.speed_floor_mb_s == floor
        assert not spec.is_estimated('speed_floor_mb_s')
        assert len(spec.speed_steps_mb_s) == dm.RANGE_STEPS
    else:
        assert spec.speed_floor_mb_s == floor and not spec.is_estimated('speed_floor_mb_s')
        assert len(spec.speed_steps_mb_s) == n_steps
        assert spec.speed_steps_mb_s[0] == top
        assert spec.speed_steps_mb_s[-1] == floor
        assert list(spec.speed_steps_mb_s) == sorted(spec.speed_steps_mb_s, reverse=True)
    assert spec.sources, 'every spec names its sources'
    assert all(s in dm.SOURCES for s in spec.sources)


def test_every_generation_has_a_spec_with_label():
    labels = [dm.lookup(gen).label for gen in dm.GENERATIONS]
    assert labels == ['LTO-1', 'LTO-2', 'LTO-3', 'LTO-4', 'LTO-5', 'LTO-6', 'LTO-7',
                      'LTO-8 FH', 'LTO-9 FH', 'LTO-10']
    assert dm.lookup(9, 'HH').label == 'LTO-9 HH'


def test_compression_ratio_is_2_up_to_lto5_and_2_5_from_lto6():
    assert [dm.lookup(g).compression_ratio for g in dm.GENERATIONS] == [2.0] * 5 + [2.5] * 5


def test_capacities_match_the_cartridge_tables():
    assert [dm.lookup(g).native_capacity_gb for g in dm.GENERATIONS] == [
        100, 200, 400, 800, 1500, 2500, 6000, 12000, 18000, 30000]


def test_nominal_feed_reproduces_ibm_published_sustained_rates():
    # IBM TS4500 / STAKKZ tables: "Sustained data rate (L6..L9 at 2.5:1; L5 and earlier at 2:1)":
    # 160 (L3), 240 (L4), 280 (L5), 400 (L6), 750 (L7), 900 (L8, SAS), 1000 (L9, SAS; LTO-10 LA/PA).
    published = {3: 160.0, 4: 240.0, 5: 280.0, 6: 400.0, 7: 750.0, 8: 900.0, 9: 1000.0, 10: 1000.0}
    for gen, rate in published.items():
        spec = dm.lookup(gen, vendor='IBM')
        assert dm.required_feed(spec, spec.compression_ratio)['full_speed_mb_s'] == rate, gen


def test_hp_lto3_compressed_rate_and_ats_floor():
    # HP Ultrium 3 TRM: "Compressed (2:1): 160 MB/s", "ATS data rate range 27-80 MB/s (U3)".
    spec = dm.lookup(3, vendor='HP')
    assert spec.vendor == 'HPE'
    assert dm.required_feed(spec, 2.0) == {'full_speed_mb_s': 160.0, 'floor_mb_s': 54.0, 'tape_ratio': 2.0}


def test_secondary_ibm_lto4_to_6_tables():
    # IBM Redbook SG24-5946 table 2-16 via a transcription (see SOURCES): LTO-6 FH 160 .. 40 in 14
    # steps; LTO-5 140 .. 40; LTO-4 30 .. 120 in six (a 2008 article restating IBM).
    lto6 = dm.lookup(6, 'FH', 'IBM')
    assert lto6.speed_floor_mb_s == 40.0 and len(lto6.speed_steps_mb_s) == 14
    assert 'ibm-redbook-lto56' in lto6.sources and not lto6.is_estimated('speed_floor_mb_s')
    assert dm.lookup(5, 'HH', 'IBM').speed_floor_mb_s == 40.0
    assert dm.lookup(4, vendor='IBM').speed_steps_mb_s == (120.0, 103.0, 84.0, 66.0, 48.0, 30.0)


def test_unsourced_floor_is_an_estimate_with_its_rule():
    # IBM LTO-6 half height: no table; LTO-5 (28.6 %) and LTO-7 (33.2 %) are equally near, the
    # higher floor fraction wins (the drive stops sooner: the cautious side).
    spec = dm.lookup(6, 'HH', 'IBM')
    rule = dict(spec.estimated)['speed_floor_mb_s']
    assert 'IBM LTO-7' in rule and '33.2 %' in rule
    assert spec.speed_floor_mb_s == pytest.approx(160.0 * 101.46 / 306.0, abs=0.01)
    assert len(spec.speed_steps_mb_s) == 12
    # HPE LTO-6: HP's LTO-3 range is the only HP figure: 27/80 of 160 MB/s, a continuous range.
    spec = dm.lookup(6, vendor='HPE')
    assert 'HPE LTO-3' in dict(spec.estimated)['speed_floor_mb_s'] and spec.speed_matching == 'range'
    assert spec.speed_floor_mb_s == pytest.approx(54.0, abs=0.01)
    # Maker unknown: IBM's tables, and the rule says so.
    assert "IBM's published tables used" in dict(dm.lookup(6, 'HH').estimated)['speed_floor_mb_s']
    assert "IBM's published LTO-9 steps used" in dict(dm.lookup(9, 'HH', 'Quantum').estimated)['speed_floor_mb_s']
    assert dm.lookup(9, 'HH', 'Quantum').speed_steps_mb_s == dm.lookup(9, 'HH', 'IBM').speed_steps_mb_s


def test_every_drive_has_every_physics_field():
    for gen in dm.GENERATIONS:
        for ff in (None, 'FH', 'HH'):
            for vendor in (None, 'IBM', 'HPE', 'Quantum'):
                spec = dm.lookup(gen, ff, vendor)
                for name in ('buffer_mb', 'backhitch_s', 'load_s', 'unload_s', 'rewind_s', 'locate_s',
                             'compressed_max_mb_s', 'speed_floor_mb_s', 'native_mb_s'):
                    value = getattr(spec, name)
                    assert isinstance(value, float) and value > 0, (gen, ff, vendor, name)
                steps = spec.speed_steps_mb_s
                assert list(steps) == sorted(steps, reverse=True) and len(steps) >= 2
                assert spec.writes and spec.density_code


def test_sourced_buffers_and_mechanics():
    assert dm.lookup(3, vendor='HPE').buffer_mb == 64.0           # HP Ultrium 3 TRM "64 MB buffer"
    assert not dm.lookup(3, vendor='HPE').is_estimated('buffer_mb')
    assert dm.lookup(5, vendor='IBM').buffer_mb == 256.0          # LTO-5 user's guide "256-Mbyte buffer"
    lto9 = dm.lookup(9, 'FH', 'IBM')                              # IBM dtl: load 17, unload 30, rewind 55, space 45
    assert (lto9.load_s, lto9.unload_s, lto9.rewind_s, lto9.locate_s) == (17.0, 30.0, 55.0, 45.0)
    hh9 = dm.lookup(9, 'HH', 'IBM')                               # IBM TS2290: 16, 56, 62, 65
    assert (hh9.load_s, hh9.unload_s, hh9.rewind_s, hh9.locate_s) == (16.0, 56.0, 62.0, 65.0)
    assert lto9.is_estimated('backhitch_s')


def test_interface_caps_the_compressed_rate():
    # IBM dtl: LTO-9 FH sustained FC 750 MB/s (L9), SAS 1000 MB/s; IBM TS2290 HH LTO-8 SAS 600.
    assert dm.lookup(9, 'FH', 'IBM', interface='FC').compressed_max_mb_s == 750.0
    assert dm.lookup(9, 'FH', 'IBM', interface='SAS').compressed_max_mb_s == 1000.0
    assert dm.lookup(8, 'HH', 'IBM', interface='SAS').compressed_max_mb_s == 600.0
    assert dm.lookup(9, 'FH', 'IBM', interface='FC').interface_mb_s == 800.0
    assert dm.required_feed(dm.lookup(9, 'FH', 'IBM', interface='FC'), 2.5)['full_speed_mb_s'] == 750.0


def test_media_compatibility():
    assert dm.lookup(9).writes == ('L9', 'L8') and dm.lookup(9).reads_only == ()
    assert 'M8' in dm.lookup(8).writes and 'M8' not in dm.lookup(9).writes
    assert dm.lookup(7).reads_only == ('L5',)
    assert dm.lookup(10).writes == ('LA', 'PA')


def test_inventory_overrides_any_field():
    spec = dm.lookup(9, 'FH', 'IBM', overrides={'buffer_mb': 2048, 'backhitch_s': 1.5})
    assert spec.buffer_mb == 2048.0 and spec.backhitch_s == 1.5
    assert not spec.is_estimated('backhitch_s') and 'inventory' in spec.sources
    with pytest.raises(ValueError, match='Unknown drive model field'):
        dm.lookup(9, overrides={'warp_speed': 9})


def test_as_dict_is_json():
    data = dm.lookup(9, 'HH', 'IBM').as_dict()
    again = json.loads(json.dumps(data))
    assert again['speed_steps_mb_s'] == [284.0, 263.0, 244.0, 223.0, 203.0, 177.0]
    assert again['label'] == 'LTO-9 HH'


# -- lookup: inputs, defaults, overrides, errors ------------------------------------------------

def test_lookup_accepts_text_and_parse_generation_result():
    assert dm.lookup('LTO-9 HH', vendor='IBM') == dm.lookup(9, 'HH', 'IBM')
    assert dm.lookup(dm.parse_generation('LTO8-HH'), vendor='IBM') == dm.lookup(8, 'HH', 'IBM')
    assert dm.lookup('ultrium 7').native_mb_s == 300.0


def test_lookup_form_factor_conflict_is_an_error():
    with pytest.raises(ValueError, match='conflicts'):
        dm.lookup('LTO-9 HH', 'FH')


def test_lookup_assumes_full_height_where_it_matters_and_says_so():
    spec = dm.lookup(8, vendor='IBM')
    assert spec.form_factor == 'FH' and spec.native_mb_s == 360.0
    assert any('full height assumed' in note for note in spec.notes)


def test_lookup_keeps_form_factor_where_only_mechanics_differ():
    spec = dm.lookup(7, 'HH', 'IBM')
    assert spec.form_factor == 'HH' and spec.label == 'LTO-7'
    assert spec.speed_floor_mb_s == 101.46       # IBM: the same twelve steps for FH and HH
    assert spec.locate_s == 56.0                 # IBM TS2290 HH LTO-7 average space time
    assert any('makes no difference' in note for note in spec.notes)


def test_lookup_vendor_names():
    assert dm.lookup(3, vendor='Hewlett Packard').vendor == 'HPE'
    assert dm.lookup(3, vendor='hpe').speed_floor_mb_s == 27.0
    generic = dm.lookup(9, 'HH', vendor='TANDBERG')
    assert generic.vendor is None and generic.is_estimated('speed_floor_mb_s')
    assert any("'TANDBERG'" in note for note in generic.notes)


def test_lookup_inventory_floor_overrides():
    spec = dm.lookup(6, speed_floor_mb_s=54)
    assert spec.speed_floor_mb_s == 54.0 and spec.speed_steps_mb_s[-1] == 54.0
    assert 'inventory' in spec.sources and not spec.is_estimated('speed_floor_mb_s')
    assert dm.required_feed(spec, 2.0)['floor_mb_s'] == 108.0
    same = dm.lookup(9, 'FH', 'IBM', speed_floor_mb_s=177)
    assert same.speed_steps_mb_s == dm.lookup(9, 'FH', 'IBM').speed_steps_mb_s   # agrees: steps kept
    other = dm.lookup(9, 'FH', 'IBM', speed_floor_mb_s=200)
    assert other.speed_floor_mb_s == 200.0 and other.speed_steps_mb_s[-2] == 203.0


@pytest.mark.parametrize('floor', [0, -5, float('nan'), 'fast', True, 401])
def test_lookup_rejects_bad_floor(floor):
    with pytest.raises(ValueError):
        dm.lookup(9, 'FH', 'IBM', speed_floor_mb_s=floor)


@pytest.mark.parametrize('gen', [0, 11, -1, 9.0, None, True, 'LTO-11', 'DLT-V4'])
def test_lookup_rejects_unknown_generation(gen):
    with pytest.raises(ValueError) as info:
        dm.lookup(gen)
    assert 'LTO' in str(info.value) or 'generation' in str(info.value)


def test_unknown_generation_message_says_what_to_do():
    with pytest.raises(ValueError, match='inventory'):
        dm.lookup(11)


def test_bad_form_factor():
    with pytest.raises(ValueError, match="'FH'"):
        dm.lookup(9, 'quarter')


# -- parse_generation ---------------------------------------------------------------------------

@pytest.mark.parametrize('text, expected', [
    ('LTO-9 FH', (9, 'FH')),
    ('lto9', (9, None)),
    ('LTO9-HH', (9, 'HH')),
    ('Ultrium 9', (9, None)),
    (9, (9, None)),
    ('LTO-1', (1, None)),
    ('LTO-10', (10, None)),
    ('lto 10 hh', (10, 'HH')),
    ('LTO-8 half-height', (8, 'HH')),
    ('LTO_6_full_height', (6, 'FH')),
    ('7', (7, None)),
])
def test_parse_generation(text, expected):
    assert dm.parse_generation(text) == expected


@pytest.mark.parametrize('text', ['LTO-11', 'LTO-0', '', 'DLT', 'LTO-9 QH', None, True, 9.5, 0, 12])
def test_parse_generation_rejects(text):
    with pytest.raises(ValueError):
        dm.parse_generation(text)


# -- identification from INQUIRY strings (real captures) ----------------------------------------

LSSCSI_RE = re.compile(r'^\**\[[^\]]+\]\s+(?P<type>\S+)\s+(?P<vendor>.{8}) (?P<product>.{16}) ')


def lsscsi_devices(text):
    devices = []
    for line in text.splitlines():
        match = LSSCSI_RE.match(line)
        if match:
            devices.append((match.group('type'), match.group('vendor'), match.group('product')))
    return devices


# fixture -> identified tape drives (generation, form factor, mechanism vendor), in file order
LSSCSI_CASES = {
    'lsscsi__IBM-ULT3580-HH5-H971_IBM-3573-TL-F.11-DellTL2000__1.txt': [(5, 'HH', 'IBM')],
    'lsscsi_g__HP-Ultrium4-B35Z_Quantum-SuperLoader3-UHDL__1.txt': [(4, None, 'HPE')],
    'lsscsi_g__HP-Ultrium7-SCSI-G9Q1__1.txt': [(7, None, 'HPE')],
    'lsscsi_g__IBM-ULTRIUM-HH9-N9B1-DellLTO9__1.txt': [(9, 'HH', 'IBM')],
    'lsscsi_g__QUANTUM-Scalar-i3-i6-225G_IBM-ULTRIUM-HH7-KAH1__1.txt': [(7, 'HH', 'IBM')] * 2,
    'lsscsi_g_partial__HP-Ultrium6-338D-353D_IBM-ULTRIUM-HH7-lin_tape__1.txt':
        [(6, None, 'HPE')] * 4 + [(7, 'HH', 'IBM')] * 2,
    'lsscsi_ig__QUANTUM-ULTRIUM4-U53F__1.txt': [(4, None, None)],
}


@pytest.mark.parametrize('name', sorted(LSSCSI_CASES))
def test_identify_lsscsi_capture(name):
    devices = lsscsi_devices(fixture('lsscsi', name))
    assert devices, 'no device lines read from %s' % name
    found = []
    for dev_type, vendor, product in devices:
        ident = dm.identify_inquiry(vendor, product)
        if dev_type != 'tape':
            assert ident is None, (dev_type, vendor, product)   # disks, changers, enclosures, DVD
            continue
        assert ident is not None, (vendor, product)
        assert ident['reason']
        found.append((ident['generation'], ident['form_factor'], ident['vendor']))
    assert found == LSSCSI_CASES[name]


def test_identify_dell_lto9_keeps_inquiry_vendor():
    # lsscsi_g__IBM-ULTRIUM-HH9-N9B1-DellLTO9: a "Dell LTO-9" drive reports IBM ULTRIUM-HH9.
    ident = dm.identify_inquiry('IBM     ', 'ULTRIUM-HH9     ')
    assert ident == {'generation': 9, 'form_factor': 'HH', 'vendor': 'IBM', 'inquiry_vendor': 'IBM',
                     'product': 'ULTRIUM-HH9', 'reason': ident['reason']}
    assert 'half height' in ident['reason']


def test_identify_proc_scsi_scsi_hp_ultrium7():
    text = fixture('proc_scsi_scsi', 'proc_scsi_scsi__HP-Ultrium7-SCSI-G9Q1__1.txt')
    vendor, product = re.search(r'Vendor: (.{8}) Model: (.{16}) Rev:', text).groups()
    ident = dm.identify_inquiry(vendor, product)
    assert (ident['generation'], ident['form_factor'], ident['vendor']) == (7, None, 'HPE')


def test_identify_proc_scsi_scsi_spectra_sony_ait_is_not_lto():
    text = fixture('proc_scsi_scsi', 'proc_scsi_scsi__SPECTRA-215_SONY-SDX-500C__1.txt')
    pairs = re.findall(r'Vendor: (.{8}) Model: (.{16}) Rev:', text)
    assert len(pairs) == 5
    assert [dm.identify_inquiry(v, p) for v, p in pairs] == [None] * 5


def test_identify_sg_inq_ibm_ult3580_tda_lto10():
    text = fixture('sg_inq', 'sg_inq__IBM-ULT3580-TDA-T3S0-LTO10__1.txt')
    vendor = re.search(r'Vendor identification: (.*)', text).group(1)
    product = re.search(r'Product identification: (.*)', text).group(1)
    ident = dm.identify_inquiry(vendor, product)
    assert (ident['generation'], ident['form_factor'], ident['vendor']) == (10, 'FH', 'IBM')
    assert dm.lookup(10, ident['form_factor'], ident['vendor']).speed_floor_mb_s == 157.0


def tapeinfo_fields(text):
    return dict(re.findall(r"^([A-Za-z ]+): '?(.*?)'?\s*$", text, re.M))


@pytest.mark.parametrize('name, expected, density_gen', [
    ('tapeinfo__IBM-ULTRIUM-HH8-MA21__1.txt', (8, 'HH', 'IBM'), 8),
    ('tapeinfo__TANDBERG-LTO5-HH-Y629__1.txt', (5, 'HH', None), 5),
])
def test_identify_tapeinfo_and_its_density_agree(name, expected, density_gen):
    fields = tapeinfo_fields(fixture('tapeinfo', name))
    ident = dm.identify_inquiry(fields['Vendor ID'], fields['Product ID'])
    assert (ident['generation'], ident['form_factor'], ident['vendor']) == expected
    assert dm.generation_from_density(fields['Density Code'])['generation'] == density_gen


def test_identify_mtx_inquiry_hp_ultrium5_and_ibm_changer():
    fields = tapeinfo_fields(fixture('mtx', 'mtx_inquiry__HP-Ultrium5-SCSI__1.txt'))
    ident = dm.identify_inquiry(fields['Vendor ID'], fields['Product ID'])
    assert (ident['generation'], ident['form_factor'], ident['vendor']) == (5, None, 'HPE')
    fields = tapeinfo_fields(fixture('mtx', 'mtx_inquiry__IBM-33614LX-changer__1.txt'))
    assert fields['Product Type'] == 'Medium Changer'
    assert dm.identify_inquiry(fields['Vendor ID'], fields['Product ID']) is None


def test_identify_lshw_tandberg_lto5_hh_and_hp_dat160():
    text = fixture('lshw', 'lshw_tape__TANDBERG-LTO5-HH_HP-DAT160__1.txt')
    pairs = re.findall(r'product: (.*)\n\s+vendor: (.*)', text)
    results = [dm.identify_inquiry(vendor, product) for product, vendor in pairs]
    assert (results[0]['generation'], results[0]['form_factor'], results[0]['vendor']) == (5, 'HH', None)
    assert results[0]['inquiry_vendor'] == 'TANDBERG'
    assert results[1] is None                     # HP DAT160 is DDS, not LTO


@pytest.mark.parametrize('vendor, product, expected', [
    # IBM documentation Inquiry strings (TS4500 / STAKKZ performance tables).
    ('IBM', 'ULT3580-TD5', (5, 'FH', 'IBM')),
    ('IBM', 'ULTRIUM-TD9', (9, 'FH', 'IBM')),
    ('IBM', 'ULTRIUM-TDA', (10, 'FH', 'IBM')),
    ('IBM', 'ULT3580-HH8', (8, 'HH', 'IBM')),
    ('IBM', 'ULTRIUM-TD3', (3, 'FH', 'IBM')),     # btape/mtx captures of IBM 33614LX drives
    # IBM Storage Protect LTO-9 list: "QUANTUM ULTRIUM-HH9", "HPE StoreEver" drives.
    ('QUANTUM', 'ULTRIUM-HH9', (9, 'HH', 'IBM')),
    ('HP', 'Ultrium 6-SCSI', (6, None, 'HPE')),
    ('HPE', 'Ultrium 9-SCSI', (9, None, 'HPE')),
    ('TANDBERG', 'LTO-6 HH', (6, 'HH', None)),
    ('CERTANCE', 'ULTRIUM 3', (3, None, None)),
])
def test_identify_documented_strings(vendor, product, expected):
    ident = dm.identify_inquiry(vendor, product)
    assert (ident['generation'], ident['form_factor'], ident['vendor']) == expected


@pytest.mark.parametrize('vendor, product', [
    ('IBM', '3573-TL'), ('IBM', '03584L32'), ('IBM', '03592E08'), ('QUANTUM', 'UHDL'),
    ('QUANTUM', 'DLT-V4'), ('SONY', 'SDX-500C'), ('HP', 'DAT160'), ('STK', 'T9840C'),
    ('IBM', ''), ('', None), ('IBM', 'ULT3580-TD0'), ('IBM', 'ULTRIUM-HH11'),
])
def test_identify_non_lto(vendor, product):
    assert dm.identify_inquiry(vendor, product) is None


# -- density codes -------------------------------------------------------------------------------

def mt_density(text):
    return re.search(r'Density code (0x[0-9a-f]+)', text).group(1)


@pytest.mark.parametrize('name, expected', [
    ('mt_status_mtst__HP-Ultrium7-SCSI-G9Q1__2.txt', 7),
    ('mt_status_mtst__LTO6-drive-LTO5-tape-jonasstein__1.txt', 5),   # the cartridge's format, not the drive
    ('mt_status_mtst__IBM-ULT3580-HH9-N9B1-lin_tape__2.txt', 9),
    ('mt_status_mtst__IBM-ULT3580-TDA-LTO10-no-tape__1.txt', None),  # 0x0 default: no tape
    ('mt_status_mtst__HP-Ultrium5-SCSI-no-tape__1.txt', None),
    ('mt_status_mtst__TR5-density0x47-blk512__1.txt', None),
    ('mt_status_mtst__SDLT-library-density0x48-VMware-passthrough__1.txt', None),
    ('mt_status_mtst__STK-9840-FC-density0x42__1.txt', 2),
])
def test_density_from_mt_status_capture(name, expected):
    result = dm.generation_from_density(mt_density(fixture('mt', name)))
    if expected is None:
        assert result is None
    else:
        assert result['generation'] == expected
        assert result['media'] == 'LTO-%d' % expected


def test_density_0x42_warns_it_is_also_stk_9840():
    result = dm.generation_from_density('0x42')
    assert '9840' in result['note']


@pytest.mark.parametrize('code, gen, media, capacity', [
    (0x40, 1, 'LTO-1', 100), (0x42, 2, 'LTO-2', 200), (0x44, 3, 'LTO-3', 400), (0x46, 4, 'LTO-4', 800),
    (0x58, 5, 'LTO-5', 1500), (0x5A, 6, 'LTO-6', 2500), (0x5C, 7, 'LTO-7', 6000),
    (0x5D, 8, 'LTO-M8', 9000), (0x5E, 8, 'LTO-8', 12000), (0x60, 9, 'LTO-9', 18000),
    (0x62, 10, 'LTO-10', 30000), (0x63, 10, 'LTO-10P', 40000),
])
def test_density_table(code, gen, media, capacity):
    for form in (code, '0x%02x' % code, '0x%02X' % code, '%02Xh' % code, ' 0x%x ' % code):
        result = dm.generation_from_density(form)
        assert (result['generation'], result['media'], result['capacity_gb']) == (gen, media, capacity), form
        assert result['code'] == '0x%02x' % code
        assert result['source']


@pytest.mark.parametrize('code', [0, '0x0', '0x00', 0x41, 0x47, 0x48, 0x4C, 0x55, 0x61, 0xFF])
def test_density_not_lto(code):
    assert dm.generation_from_density(code) is None


@pytest.mark.parametrize('code', ['90', 'LTO-6', '0x', '0x5g', '0x100', 256, -1, True, None, 5.8])
def test_density_bad_input(code):
    with pytest.raises(ValueError):
        dm.generation_from_density(code)


def mt_densities_table(text):
    table = {}
    for line in text.splitlines():
        for code, name in re.findall(r'(0x[0-9a-f]{2})   (.*?)(?=\s{2,}0x|\s*$)', line):
            table[int(code, 16)] = name.strip()
    return table


def test_density_names_agree_with_mt_st_1_7():
    mtst = mt_densities_table(fixture('mt_densities', 'mt_densities__mt-st-1.7-debian12__1.txt'))
    assert len(mtst) > 80
    for code in (0x42, 0x44, 0x46, 0x58, 0x5A, 0x5C, 0x5E):
        assert mtst[code] == dm.generation_from_density(code)['media'], hex(code)
    assert mtst[0x5D] == 'LTO-7-M8'
    assert 'Ultrium' in mtst[0x40]
    # mt-st 1.7 knows neither LTO-9 nor LTO-10: 0x60 comes from upstream mt-st and FreeBSD
    # libmt, 0x62/0x63 from FreeBSD libmt. This mt prints "no translation" for them, as in
    # the LTO-9 capture (mt_status_mtst__IBM-ULT3580-HH9-N9B1-lin_tape__2, mt-st 1.7).
    assert 0x60 not in mtst and 0x62 not in mtst and 0x63 not in mtst
    hh9 = fixture('mt', 'mt_status_mtst__IBM-ULT3580-HH9-N9B1-lin_tape__2.txt')
    assert 'Density code 0x60 (no translation)' in hh9


# -- rate math -----------------------------------------------------------------------------------

@pytest.mark.parametrize('key, ratio, full, floor', [
    ((9, 'FH', 'IBM'), 1.0, 400.0, 177.0),
    ((9, 'FH', 'IBM'), 2.5, 1000.0, 442.5),
    ((9, 'HH', 'IBM'), 1.0, 300.0, 177.0),
    ((8, 'FH', 'IBM'), 1.0, 360.0, 112.0),
    ((8, 'HH', 'IBM'), 2.0, 600.0, 224.0),
    ((7, None, 'IBM'), 1.0, 300.0, 101.46),
    ((7, None, 'IBM'), 2.5, 750.0, 253.65),
    ((3, None, 'IBM'), 2.0, 160.0, 80.0),
    ((2, None, 'IBM'), 2.0, 70.0, 35.0),
    # estimates: HP LTO-2 at the HP LTO-3 range's 27/80 fraction; LTO-10 of unknown make on
    # IBM's table; LTO-1 at IBM LTO-2's 50 %.
    ((2, None, 'HPE'), 1.0, 30.0, 10.125),
    ((10, None, 'IBM'), 1.5, 600.0, 235.5),
    ((10, None, None), 1.0, 400.0, 157.0),
    ((1, None, None), 1.0, 15.0, 7.5),
])
def test_required_feed(key, ratio, full, floor):
    feed = dm.required_feed(dm.lookup(*key), ratio)
    assert feed == {'full_speed_mb_s': full, 'floor_mb_s': floor, 'tape_ratio': ratio}


@pytest.mark.parametrize('ratio', [0, -1.0, float('nan'), float('inf'), 'two', None, True])
def test_required_feed_rejects_bad_ratio(ratio):
    with pytest.raises(ValueError, match='tape_ratio'):
        dm.required_feed(dm.lookup(9), ratio)


def test_classify_feed_ibm_ultrium2_guide_example():
    # IBM Ultrium 2 guide: 60 MB/s from the host at 2:1 is 30 MB/s net; the drive runs at
    # 26.25 or 30.63 MB/s -> the fastest step the feed can sustain is 26.25.
    result = dm.classify_feed(dm.lookup(2, vendor='IBM'), 60.0, 2.0)
    assert result['state'] == 'speed_matching'
    assert result['tape_mb_s'] == 30.0
    assert result['matched_step_mb_s'] == 26.25


@pytest.mark.parametrize('feed, state, step', [
    (1000.0, 'full_speed', 408.0),
    (2000.0, 'full_speed', 408.0),
    (442.5, 'speed_matching', 177.0),
    (442.4, 'below_floor', 177.0),
    (600.0, 'speed_matching', 223.0),
])
def test_classify_feed_lto9_fh_ibm_at_2_5(feed, state, step):
    result = dm.classify_feed(dm.lookup(9, 'FH', 'IBM'), feed, 2.5)
    assert result['state'] == state
    assert result['matched_step_mb_s'] == step


def test_classify_feed_uses_the_estimated_floor():
    spec = dm.lookup(6)
    result = dm.classify_feed(spec, 100.0, 1.0)
    assert result['state'] == 'speed_matching' and result['floor_mb_s'] == spec.speed_floor_mb_s
    assert dm.classify_feed(spec, 160.0, 1.0)['state'] == 'full_speed'
    assert dm.classify_feed(spec, 20.0, 1.0)['matched_step_mb_s'] == spec.speed_floor_mb_s


@pytest.mark.parametrize('c_soft, kwargs, expected', [
    (2.0, {}, 2.0),
    (1.0, {}, 1.0),
    (0.98, {}, 1.0),                              # incompressible: never below 1
    (3.7, {}, 2.5),                               # clamped to the largest nominal ratio
    (3.7, {'max_ratio': 2.0}, 2.0),               # an LTO-5's nominal
    (3.7, {'max_ratio': 3.0}, 3.0),               # HP Ultrium 3: max streaming ratio 3:1
    (2.0, {'a': 0.2, 'b': 0.8}, 1.8),
    (1.1, {'a': -0.5, 'b': 1.0}, 1.0),
])
def test_tape_ratio_from_software(c_soft, kwargs, expected):
    assert dm.tape_ratio_from_software(c_soft, **kwargs) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize('args', [(0,), (-1,), (float('nan'),), ('x',), (2.0, float('inf')), (2.0, 0, 'b'),
                                  (2.0, 0, 1, 0.5)])
def test_tape_ratio_from_software_rejects(args):
    with pytest.raises(ValueError):
        dm.tape_ratio_from_software(*args)


def test_fit_tape_ratio_model_recovers_a_line():
    pairs = [(c, 0.3 + 0.7 * c) for c in (1.0, 1.5, 2.2, 3.1)]
    a, b = dm.fit_tape_ratio_model(pairs)
    assert a == pytest.approx(0.3) and b == pytest.approx(0.7)
    assert dm.tape_ratio_from_software(2.0, a, b) == pytest.approx(1.7)
    with pytest.raises(ValueError):
        dm.fit_tape_ratio_model([(2.0, 1.5)])
    with pytest.raises(ValueError):
        dm.fit_tape_ratio_model([(2.0, 1.5), (2.0, 1.6)])


# -- compressibility sample ----------------------------------------------------------------------

def test_compressibility_of_real_text():
    with open(os.path.join(REPO_ROOT, 'COPYING'), 'rb') as handle:
        data = handle.read()
    result = dm.estimate_compressibility(data)
    assert result['compressor'] == 'zlib-1'
    assert result['sample_bytes'] == len(data)
    assert result['compressed_bytes'] == len(zlib.compress(data, 1))
    assert 2.0 < result['ratio'] < 4.0           # English licence text


def test_compressibility_of_random_and_zero_data():
    noise = os.urandom(1 << 20)
    ratio = dm.estimate_compressibility(noise)['ratio']
    assert 0.99 < ratio <= 1.0
    assert dm.estimate_compressibility(bytes(1 << 20))['ratio'] > 100
    assert dm.tape_ratio_from_software(ratio) == 1.0


def test_compressibility_sample_is_bounded_and_spread():
    # 32 MiB: first half zeros, second half random. A head-only sample would say "very
    # compressible"; evenly spaced chunks see both halves.
    half = 16 << 20
    data = bytes(half) + os.urandom(half)
    result = dm.estimate_compressibility(data)
    assert result['sample_bytes'] == dm.SAMPLE_MAX_BYTES
    assert 1.8 < result['ratio'] < 2.2
    small = dm.estimate_compressibility(data, max_bytes=1 << 20, chunk_bytes=1 << 18)
    assert small['sample_bytes'] == 1 << 20


@pytest.mark.parametrize('data, kwargs', [(b'', {}), ('text', {}), (None, {}), (b'x', {'max_bytes': 0}),
                                          (b'x', {'chunk_bytes': -1})])
def test_compressibility_rejects(data, kwargs):
    with pytest.raises(ValueError):
        dm.estimate_compressibility(data, **kwargs)


def test_no_number_without_a_source():
    # Every speed-matching entry and density entry names a known source.
    for (gen, _ff, _vendor), (steps, kind, source) in dm._SPEED.items():
        assert source in dm.SOURCES and steps[-1] > 0 and gen in dm.GENERATIONS
        assert kind in ('steps', 'range') and list(steps) == sorted(steps, reverse=True)
    for code, (gen, _media, capacity, sources, _note) in dm._DENSITY.items():
        assert sources and all(s in dm.SOURCES for s in sources), hex(code)
        assert capacity == dm.lookup(gen).native_capacity_gb or code in (0x5D, 0x63)
    assert not math.isnan(dm.MAX_NOMINAL_RATIO)


# -- end to end with the collection's parsers (what tape_drive_info feeds the model) -------------

@pytest.mark.parametrize('name', sorted(LSSCSI_CASES))
def test_identify_from_parse_lsscsi(name):
    from ansible_collections.tapeops.qualify.plugins.module_utils._tools._scsi_inquiry import parse_lsscsi

    rows = parse_lsscsi(fixture('lsscsi', name))
    found = []
    for row in rows:
        ident = dm.identify_inquiry(row['vendor'], row['model'])
        if row['type'] == 'tape':
            found.append((ident['generation'], ident['form_factor'], ident['vendor']))
        else:
            assert ident is None, row
    assert found == LSSCSI_CASES[name]


@pytest.mark.parametrize('name, expected', [
    ('mt_status_mtst__HP-Ultrium7-SCSI-G9Q1__2.txt', 7),
    ('mt_status_mtst__IBM-ULT3580-HH9-N9B1-lin_tape__2.txt', 9),
    ('mt_status_mtst__IBM-ULT3580-TDA-LTO10-no-tape__1.txt', None),
    ('mt_status_mtst__STK-9840-FC-density0x42__1.txt', 2),
])
def test_density_from_parse_mt_status(name, expected):
    from ansible_collections.tapeops.qualify.plugins.module_utils._tools._mt import parse_mt_status

    status = parse_mt_status(fixture('mt', name))
    result = dm.generation_from_density(status['density_code'])
    assert (result and result['generation']) == expected


def test_identify_from_parse_sg_inq_and_tapeinfo():
    from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _scsi_inquiry as inq

    sg = inq.parse_sg_inq(fixture('sg_inq', 'sg_inq__IBM-ULT3580-TDA-T3S0-LTO10__1.txt'))
    assert dm.identify_inquiry(sg['vendor'], sg['product'])['generation'] == 10
    info = inq.parse_tapeinfo(fixture('tapeinfo', 'tapeinfo__IBM-ULTRIUM-HH8-MA21__1.txt'))
    ident = dm.identify_inquiry(info['Vendor ID'], info['Product ID'])
    assert (ident['generation'], ident['form_factor']) == (8, 'HH')
    assert dm.generation_from_density(info['Density Code'])['media'] == 'LTO-8'
