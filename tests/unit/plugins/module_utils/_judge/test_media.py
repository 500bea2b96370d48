"""Cartridge classification and media compatibility (_media) on real mtx / mt captures.

The mtx captures are tests/unit/fixtures/mtx/*, the mt captures tests/unit/fixtures/mt/*; each
file's first three lines say where it was published.
"""

import random

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _drive_model, _media

from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _mt, _mtx

from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._tape_fixtures import fixture, fixtures


def _changer(name, sg='/dev/sg5'):
    status = _mtx.parse_mtx_status(fixture('mtx', name))
    return {'sg': sg, 'hctl': '0:0:1:0', 'vendor': 'V', 'product': 'P', 'status': status,
            'error': status['error']}


def _lib(name, **kwargs):
    return _media.inventory_libraries([_changer(name)], **kwargs)[0]


# ---------------------------------------------------------------------------
# labels on real captures


def test_pyarchive_lto9_library_l9_data_and_an_l1_cleaning_cartridge_flagged():
    lib = _lib('mtx_status__pyarchive-1drive-24slot-LTO9-HH9__2.txt')
    carts = lib['cartridges']
    assert len(carts) == 24
    data = [c for c in carts if c['kind'] == 'data']
    assert len(data) == 23 and all(c['media'] == 'L9' and c['generation'] == 9 and c['capacity_gb'] == 18000
                                   for c in data)
    (cln,) = [c for c in carts if c['kind'] == 'cleaning']
    assert cln['barcode'] == 'CLN670L1' and cln['location'] == {'kind': 'slot', 'element': 2}
    assert cln['cleaning']['universal'] is None and cln['cleaning']['for_generation'] == 1
    assert 'LTO-1-only' in cln['cleaning']['flag']


def test_tandberg_lto5_loader_one_lto4_cartridge_among_l5():
    lib = _lib('mtx_status__TANDBERG-StorageLoader-1drive-7slot-LTO5__1.txt')
    media = sorted(c['media'] for c in lib['cartridges'])
    assert media == ['L4'] + ['L5'] * 6
    l4 = [c for c in lib['cartridges'] if c['media'] == 'L4'][0]
    assert l4['barcode'] == '000711L4' and l4['location']['element'] == 1


def test_mhvtl_l700_lto4_lto5_and_generation_labelled_cleaning_cartridges():
    lib = _lib('mtx_status__mhVTL-STK-L700-4drive-43slot-LTO4-LTO5__1.txt')
    kinds = {}
    for cart in lib['cartridges']:
        kinds.setdefault(cart['kind'], []).append(cart)
    assert len([c for c in kinds['data'] if c['media'] == 'L4']) == 20
    assert len([c for c in kinds['data'] if c['media'] == 'L5']) == 10
    cleaning = dict((c['barcode'], c['cleaning']) for c in kinds['cleaning'])
    assert cleaning['CLN101L4']['universal'] is False and cleaning['CLN101L4']['for_generation'] == 4
    assert cleaning['CLN102L5']['for_generation'] == 5 and 'LTO-5' in cleaning['CLN102L5']['flag']


def test_ts3500_six_character_tags_are_unknown_not_guessed():
    lib = _lib('mtx_status__IBM-03584L32-TS3500-3drive-24slot__1.txt')
    assert lib['cartridges'] and all(c['kind'] == 'unknown' and c['generation'] is None for c in lib['cartridges'])
    bru = [c for c in lib['cartridges'] if c['barcode'] == 'BRU003'][0]
    assert bru['location'] == {'kind': 'drive', 'element': 0, 'nst': None, 'source_slot': 12}
    assert '8-character' in bru['note']


def test_ts4500_lto10_library_reports_la_tags():
    lib = _lib('mtx_status_partial__IBM-03584L32-TS4500-3drive-1840slot__1.txt')
    assert lib['complete'] is False
    assert [c['media'] for c in lib['cartridges']] == ['LA'] * 5
    assert all(c['generation'] == 10 and c['capacity_gb'] == 30000 for c in lib['cartridges'])


def test_no_barcode_reader_and_ie_slot_without_tag_are_unknown():
    lib = _lib('mtx_status__4slot-DDS-changer-nobarcode-2006__1.txt')
    assert [c['kind'] for c in lib['cartridges']] == ['unknown'] * 4
    lib = _lib('mtx_status__IBM-33614LX-2drive-38slot-LTO3-FreeBSD__2.txt')
    ie = [c for c in lib['cartridges'] if c['location']['kind'] == 'import_export']
    assert [c['media'] for c in ie] == ['L3', 'L3', 'L3', None]
    assert ie[3]['barcode'] is None and ie[3]['generation'] is None and ie[3]['kind'] == 'unknown'


def test_failed_changer_has_no_cartridges_and_its_error():
    lib = _lib('mtx_status_error__SPECTRA-215-illegal-element-type__1.txt')
    assert lib['cartridges'] == [] and lib['error'] == 'illegal Element Type Code 83 reported'
    spec = _drive_model.lookup(9)
    summary = _media.summarize([lib], spec)
    assert any('illegal Element Type Code' in f['text'] for f in summary['findings'])


@pytest.mark.parametrize('tag,kind,media,worm', [
    ('ABC123LT', 'worm', 'L3', True), ('ABC123LU', 'worm', 'L4', True), ('ABC123LV', 'worm', 'L5', True),
    ('ABC123LW', 'worm', 'L6', True), ('ABC123LX', 'worm', 'L7', True), ('ABC123LY', 'worm', 'L8', True),
    ('ABC123LZ', 'worm', 'L9', True), ('ABC123M8', 'data', 'M8', False), ('abc123l7', 'data', 'L7', False),
    ('ABC123PA', 'data', 'PA', False), ('ABC123LR', 'worm', None, True), ('ABC123XY', 'unknown', None, None),
    ('DG 001L7', 'diagnostic', 'L7', None), ('CLNU01CU', 'cleaning', None, None),
])
def test_media_ids(tag, kind, media, worm):
    r = _media.classify_label(tag)
    assert (r['kind'], r['media'], r['worm']) == (kind, media, worm)
    if kind == 'worm' and media is None:
        assert 'not published' in r['note']


def test_m8_is_a_generation_7_cartridge_in_generation_8_format():
    r = _media.classify_label('ABC123M8')
    assert (r['generation'], r['cartridge_generation'], r['capacity_gb']) == (8, 7, 9000)


def test_universal_cleaning_cartridge_is_not_flagged():
    r = _media.classify_label('CLNU01CU')
    assert r['cleaning'] == {'universal': True, 'for_generation': None, 'flag': None}


@pytest.mark.parametrize('value', [b'\xff\xfe\x00L5', 'A' * 300, '  ', '\x00\x01', 12345, 'L5', 'CLN'])
def test_odd_labels_never_raise(value):
    r = _media.classify_label(value)
    assert r['kind'] in ('unknown', 'cleaning') and r['generation'] is None


def test_random_bytes_never_raise():
    rng = random.Random(15)
    for _round in range(500):
        raw = bytes(rng.randrange(256) for _byte in range(rng.randrange(12)))
        r = _media.classify_label(raw)
        assert r['kind'] in ('unknown', 'cleaning', 'diagnostic', 'data', 'worm')


# ---------------------------------------------------------------------------
# density code of a loaded tape (real mt status captures)


@pytest.mark.parametrize('name,media', [
    ('mt_status_mtst__LTO6-drive-LTO5-tape-jonasstein__1.txt', 'L5'),
    ('mt_status_mtst__IBM-ULT3580-HH9-N9B1-lin_tape__2.txt', 'L9'),
    ('mt_status_mtst__mhVTL-IBM-ULT3580-TD5-density0x58-CentOS6__1.txt', 'L5'),
])
def test_density_from_real_mt_status(name, media):
    status = _mt.parse_mt_status(fixture('mt', name))
    r = _media.classify_density(status['density_code'])
    assert r['media'] == media and r['basis'] == 'density' and r['worm'] is None


@pytest.mark.parametrize('name', ['mt_status_mtst__SDLT-library-density0x48-VMware-passthrough__1.txt',
                                  'mt_status_mtst__TR5-density0x47-blk512__1.txt'])
def test_non_lto_density_is_none(name):
    status = _mt.parse_mt_status(fixture('mt', name))
    assert _media.classify_density(status['density_code']) is None


def test_density_edge_values():
    assert _media.classify_density(0) is None
    assert _media.classify_density('garbage') is None
    assert _media.classify_density('0x5d')['media'] == 'M8'
    assert _media.classify_density('0x63')['media'] == 'PA'


def test_unlabelled_tape_in_a_changer_drive_is_classified_by_its_density():
    """pve capture: drive 0 holds 000057L5; a copy with its tag removed, the drive's mt status says 0x5a."""
    text = fixture('mtx', 'mtx_status__pve-2drive-24slot-LTO5__1.txt').replace(':VolumeTag = 000057L5', '')
    status = _mtx.parse_mtx_status(text)
    assert status['drives'][0]['full'] and status['drives'][0]['barcode'] is None
    changer = {'sg': '/dev/sg3', 'status': status}
    drives = [{'nst': '/dev/nst0', 'density_code': '0x5a', 'changer': {'sg': '/dev/sg3', 'element': 0}}]
    (lib,) = _media.inventory_libraries([changer], drives)
    loaded = [c for c in lib['cartridges'] if c['location']['kind'] == 'drive'][0]
    assert (loaded['media'], loaded['basis'], loaded['location']['nst']) == ('L6', 'density', '/dev/nst0')
    # a label wins over the density code
    (lib,) = _media.inventory_libraries([_changer('mtx_status__pve-2drive-24slot-LTO5__1.txt', '/dev/sg3')], drives)
    loaded = [c for c in lib['cartridges'] if c['location']['kind'] == 'drive'][0]
    assert (loaded['media'], loaded['basis']) == ('L5', 'label')


def test_standalone_drive_with_a_loaded_tape_is_its_own_library():
    drives = [{'nst': '/dev/nst1', 'density_code': '0x58', 'changer': None, 'media_loaded': True, 'barcode': None},
              {'nst': '/dev/nst2', 'density_code': None, 'changer': None, 'media_loaded': False}]
    (lib,) = _media.inventory_libraries([], drives)
    assert lib['id'] == '/dev/nst1' and lib['cartridges'][0]['media'] == 'L5'


def test_given_media_list():
    (lib,) = _media.inventory_libraries(given=['VAULT1L6', {'barcode': 'OFF001', 'generation': 'LTO-5'},
                                               {'barcode': 'X00001L7', 'generation': 'M8', 'location': 'vault'}])
    expected = [('L6', 'label'), ('L5', 'given'), ('M8', 'given')]
    assert [(c['media'], c['basis']) for c in lib['cartridges']] == expected
    assert 'label says L7' in lib['cartridges'][2]['note']
    with pytest.raises(_media.MediaInputError, match='not one of 1-10'):
        _media.inventory_libraries(given=[{'barcode': 'A', 'generation': 'DLT'}])
    with pytest.raises(_media.MediaInputError, match='media entries'):
        _media.inventory_libraries(given=[42])


# ---------------------------------------------------------------------------
# the compatibility matrix: every drive generation against every media ID
#
# Expected, written from the published rules (docs/drive-model.md, "Media compatibility"):
# LTO-1..LTO-7 write their own and the previous generation, read two back (ARCHIWARE, HPE QuickSpecs,
# Oracle OKM "LTO-5, 6, and 7 drives can read two generations back and write one generation back");
# LTO-8 writes L8, L7 and M8, reads nothing older (LTO roadmap notes: "cannot read (and write)
# LTO-6"); LTO-9 writes L9 and L8 only (LTO-9 press release; M8 only in LTO-8 drives);
# LTO-10 writes only LTO-10 media, LA and PA (FreeBSD libmt: "not backward compatible";
# IBM: "Only Ultrium 10 media can be written").

_LABELS = ['L1', 'L2', 'L3', 'L4', 'L5', 'L6', 'L7', 'M8', 'L8', 'L9', 'LA', 'PA']
_EXPECTED_WRITES = {1: {'L1'}, 2: {'L2', 'L1'}, 3: {'L3', 'L2'}, 4: {'L4', 'L3'}, 5: {'L5', 'L4'},
                    6: {'L6', 'L5'}, 7: {'L7', 'L6'}, 8: {'L8', 'L7', 'M8'}, 9: {'L9', 'L8'}, 10: {'LA', 'PA'}}
_EXPECTED_READS = {3: {'L1'}, 4: {'L2'}, 5: {'L3'}, 6: {'L4'}, 7: {'L5'}}


@pytest.mark.parametrize('drive', range(1, 11))
@pytest.mark.parametrize('media', _LABELS)
def test_compatibility_every_pair(drive, media):
    spec = _drive_model.lookup(drive)
    expected = ('write' if media in _EXPECTED_WRITES[drive] else
                'read' if media in _EXPECTED_READS.get(drive, ()) else 'stranded')
    assert _media.compatibility(media, spec) == expected
    assert _media.matrix()[drive][media] == expected


def test_compatibility_ignores_form_factor_and_vendor():
    for gen in (8, 9):
        for ff in ('FH', 'HH'):
            for vendor in ('IBM', 'HPE', None):
                spec = _drive_model.lookup(gen, ff, vendor)
                assert [_media.compatibility(m, spec) for m in _LABELS] == [_media.matrix()[gen][m] for m in _LABELS]


def test_unknown_media_has_no_class():
    assert _media.compatibility(None, _drive_model.lookup(9)) is None


def test_which_drives_read_a_set_of_media():
    assert _media.drives_that_read(['L5', 'L6']) == [6, 7]
    assert _media.drives_that_read(['M8']) == [8]
    assert _media.drives_that_read(['L3', 'L8']) == []


# ---------------------------------------------------------------------------
# summary and migration


def test_lto9_target_strands_the_tandberg_l4_and_l5_cartridges_with_a_migration_estimate():
    lib = _lib('mtx_status__TANDBERG-StorageLoader-1drive-7slot-LTO5__1.txt')
    spec = _drive_model.lookup(9, 'FH')
    s = _media.summarize([lib], spec)
    (out,) = s['libraries']
    assert out['counts']['stranded'] == 7 and out['counts']['write'] == 0
    assert out['capacity_gb']['stranded'] == 800 + 6 * 1500
    assert sorted(r['element'] for r in out['stranded']) == [1, 2, 3, 4, 5, 6, 7]
    assert out['keep_old_drive']['required'] is True and out['keep_old_drive']['readers'] == [5, 6]
    mig = out['migration']
    # 1 L4 at 120 MB/s, 6 L5 at 140 MB/s, full, plus load + rewind + unload of each generation's drive
    l4, l5 = _drive_model.lookup(4), _drive_model.lookup(5)
    seconds = 800e3 / 120 + l4.load_s + l4.rewind_s + l4.unload_s + 6 * (1500e3 / 140 + l5.load_s + l5.rewind_s
                                                                         + l5.unload_s)
    assert mig['hours'] == pytest.approx(seconds / 3600, abs=0.01)
    assert mig['hours'] > 18
    assert any('100 %' in a for a in mig['assumptions'])
    assert s['keep_old_drive_libraries'] == ['/dev/sg5']
    assert s['findings'][0]['severity'] == 'warning' and '7 cartridges' in s['findings'][0]['text']


def test_more_drives_kept_and_a_lower_fill_shorten_the_migration():
    lib = _lib('mtx_status__mhVTL-STK-L700-4drive-43slot-LTO4-LTO5__1.txt')
    spec = _drive_model.lookup(9)
    one = _media.summarize([lib], spec)['migration']
    four = _media.summarize([lib], spec, drives_kept=4)['migration']
    half = _media.summarize([lib], spec, fill_fraction=0.5)['migration']
    assert four['hours'] == pytest.approx(one['hours'] / 4, abs=0.01)
    assert half['hours'] < one['hours'] * 0.51
    assert one['cartridges'] == 30 and one['drive_hours'] == one['hours']


def test_old_drive_caps_the_read_rate():
    """An LTO-8 half-height drive reads L7 at 300 MB/s, the L7 native rate: no change; HH LTO-8 M8 the same."""
    hh8 = _drive_model.lookup(8, 'HH')
    rate, why = _media.read_rate('L8', [hh8])
    assert rate == 300.0 and 'fastest drive' in why
    rate, _why = _media.read_rate('L8', [])
    assert rate == 360.0


def test_lto7_target_reads_l5_only_and_says_not_to_append():
    lib = _lib('mtx_status__TANDBERG-StorageLoader-1drive-7slot-LTO5__1.txt')
    s = _media.summarize([lib], _drive_model.lookup(7))
    out = s['libraries'][0]
    assert (out['counts']['read'], out['counts']['stranded']) == (6, 1)
    assert out['keep_old_drive']['required'] is True
    s = _media.summarize([_lib('mtx_status__pve-2drive-24slot-LTO5__1.txt')], _drive_model.lookup(7))
    out = s['libraries'][0]
    assert out['counts']['read'] == 7 and out['keep_old_drive']['required'] is False
    assert 'must not append' in out['keep_old_drive']['why'] and out['migration'] is None


def test_lto9_library_against_lto9_writes_everything_and_flags_the_cleaning_cartridge():
    lib = _lib('mtx_status__pyarchive-1drive-24slot-LTO9-HH9__2.txt')
    s = _media.summarize([lib], _drive_model.lookup(9, 'HH'))
    out = s['libraries'][0]
    assert out['counts'] == {'write': 23, 'read': 0, 'stranded': 0, 'unknown': 0, 'cleaning': 1, 'diagnostic': 0}
    assert out['by_generation'] == {'L9': 23} and s['migration'] is None
    assert any('CLN670L1' in f['text'] for f in s['findings'])
    s10 = _media.summarize([lib], _drive_model.lookup(10))
    assert s10['totals']['counts']['stranded'] == 23


def test_bad_parameters_say_what_to_give():
    spec = _drive_model.lookup(9)
    with pytest.raises(_media.MediaInputError, match='drives_kept'):
        _media.summarize([], spec, drives_kept=0)
    with pytest.raises(_media.MediaInputError, match='fill_fraction'):
        _media.summarize([], spec, fill_fraction=1.5)
    with pytest.raises(ValueError, match='Cannot read an LTO generation'):
        _media.target_spec('DLT-8000')


@pytest.mark.parametrize('name,text', fixtures('mtx', 'mtx_status*'), ids=[n for n, _t in fixtures('mtx', 'mtx_status*')])
def test_every_real_capture_summarizes(name, text):
    status = _mtx.parse_mtx_status(text)
    libs = _media.inventory_libraries([{'sg': '/dev/sg1', 'status': status, 'error': status['error']}])
    s = _media.summarize(libs, _drive_model.lookup(9))
    counts = s['libraries'][0]['counts']
    full = sum(1 for e in status['drives'] + status['slots'] if e['full'])
    assert sum(counts.values()) == full == s['totals']['cartridges']
