"""mtx status parser on real library outputs."""

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _cli
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _mtx

from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._tape_fixtures import fixture, fixtures, header

STATUS = fixtures('mtx', 'mtx_status*')


@pytest.mark.parametrize('name,text', STATUS, ids=[n for n, _t in STATUS])
def test_every_real_capture_parses(name, text):
    assert len(header(text)) == 3
    r = _mtx.parse_mtx_status(text)
    if 'error' in name:
        assert r['error'] in ('READ ELEMENT STATUS Command Failed', 'illegal Element Type Code 83 reported')
        assert r['drives'] == [] and r['changer'] is None and r['error_hint']
    else:
        assert r['changer'] and r['drives']
        assert r['complete'] == ('partial' not in name)


def test_ts3500_drive_loaded_from_slot_12_with_padded_tag():
    r = _mtx.parse_mtx_status(fixture('mtx', 'mtx_status__IBM-03584L32-TS3500-3drive-24slot__1.txt'))
    assert (r['drives_count'], r['slots_count'], r['import_export_count']) == (3, 24, 4)
    assert r['drives'][0] == {'element': 0, 'full': True, 'source_element': 12, 'barcode': 'BRU003'}
    assert r['drives'][1]['full'] is False
    assert [s['element'] for s in r['slots'] if s['import_export']] == [21, 22, 23, 24]
    assert _mtx.drive_barcode(r, 0) == 'BRU003' and _mtx.drive_barcode(r, 1) is None


def test_superloader_hp_lto4_padded_tags():
    r = _mtx.parse_mtx_status(fixture('mtx', 'mtx_status__Quantum-SuperLoader3-UHDL-0061-HP-LTO4__1.txt'))
    assert r['changer'] == '/dev/sg8'
    assert r['drives'][0]['barcode'] == 'NDD311L3'
    assert r['slots'][7] == {'element': 8, 'full': True, 'barcode': 'NDD312L3', 'import_export': False}


def test_ie_slot_full_without_tag():
    r = _mtx.parse_mtx_status(fixture('mtx', 'mtx_status__IBM-33614LX-2drive-38slot-LTO3-FreeBSD__2.txt'))
    slot6 = r['slots'][5]
    assert slot6 == {'element': 6, 'full': True, 'barcode': None, 'import_export': True}
    assert r['slots'][2]['barcode'] == 'UN0101L3'


def test_tandberg_sense_noise_is_collected_not_fatal():
    r = _mtx.parse_mtx_status(fixture('mtx', 'mtx_status__TANDBERG-StorageLoader-1drive-7slot-LTO5__1.txt'))
    assert r['sense']['sense_key'] == 'Unit Attention'
    assert len(r['slots']) == 7 and r['error'] is None


def test_ts4500_empty_slot_with_blank_tag_and_truncated_line():
    r = _mtx.parse_mtx_status(
        fixture('mtx', 'mtx_status_partial__IBM-03584L32-TS4500-3drive-1840slot__1.txt'))
    assert r['slots'][2] == {'element': 3, 'full': False, 'barcode': None, 'import_export': False}
    assert r['slots'][-1]['element'] == 49 and r['complete'] is False


def test_no_barcode_reader():
    r = _mtx.parse_mtx_status(fixture('mtx', 'mtx_status__4slot-DDS-changer-nobarcode-2006__1.txt'))
    assert all(s['full'] and s['barcode'] is None for s in r['slots'])


def test_illegal_element_type_code_is_an_error_that_says_what_to_try():
    r = _mtx.parse_mtx_status(fixture('mtx', 'mtx_status_error__SPECTRA-215-illegal-element-type__1.txt'))
    assert r['error'] == 'illegal Element Type Code 83 reported'
    assert 'cable, termination, HBA driver' in r['error_hint']
    assert r['complete'] is False and r['sense']['sense_key'] == 'Unit Attention'
    assert any('Mode sense (0x1A) for Page 0x1D failed' in w for w in r['warnings'])


def test_empty_library_after_the_hba_was_replaced():
    r = _mtx.parse_mtx_status(fixture('mtx', 'mtx_status__SPECTRA-215-2drive-30slot-empty__1.txt'))
    assert (r['drives_count'], r['slots_count']) == (2, 30) and r['complete'] is True
    assert not any(s['full'] for s in r['slots']) and r['error'] is None


def test_listing_cut_mid_barcode_is_incomplete_and_keeps_no_half_barcode():
    text = fixture('mtx', 'mtx_status__TANDBERG-StorageLoader-1drive-7slot-LTO5__1.txt')
    full = _mtx.parse_mtx_status(text)
    last = [s for s in full['slots'] if s['barcode']][-1]
    line = next(ln for ln in text.splitlines() if ln.rstrip().endswith(last['barcode']))
    cut = text[:text.index(line) + len(line) - 2]
    r = _mtx.parse_mtx_status(cut)
    assert r['complete'] is False
    cut_slot = next(s for s in r['slots'] if s['element'] == last['element'])
    assert cut_slot['barcode'] is None and cut_slot['full'] is True


def test_listing_cut_at_a_line_is_incomplete():
    text = fixture('mtx', 'mtx_status__IBM-03584L32-TS3500-3drive-24slot__1.txt')
    r = _mtx.parse_mtx_status(text[:text.index('Storage Element 20')])
    assert r['complete'] is False and len(r['slots']) == 19
    assert 'the listing has 3 and 19' in r['warnings'][-1]


def test_nothing_printed_is_an_error():
    r = _mtx.parse_mtx_status('')
    assert r['error'] == 'mtx printed nothing' and r['complete'] is False


def test_mhvtl_stk_l700_four_drives_cleaning_tapes_and_mailslots():
    r = _mtx.parse_mtx_status(fixture('mtx', 'mtx_status__mhVTL-STK-L700-4drive-43slot-LTO4-LTO5__1.txt'))
    assert (r['drives_count'], r['slots_count'], r['import_export_count']) == (4, 43, 4) and r['complete']
    assert [s['barcode'] for s in r['slots'] if s['element'] in (21, 22, 23)] == [None, 'CLN101L4', 'CLN102L5']
    assert [s['element'] for s in r['slots'] if s['import_export']] == [40, 41, 42, 43]


def test_mhvtl_listing_elided_by_its_author_is_incomplete():
    r = _mtx.parse_mtx_status(fixture('mtx', 'mtx_status_partial__mhVTL-STK-L700-after-load-elided__2.txt'))
    assert r['drives'][0] == {'element': 0, 'full': True, 'source_element': 39, 'barcode': 'F01039L5'}
    assert r['complete'] is False and r['slots'] == [] and r['error'] is None


def test_quadstor_vtl_adic_scalar24_drive_loaded_from_slot_1():
    r = _mtx.parse_mtx_status(fixture('mtx', 'mtx_status__QUADStor-VTL-ADIC-Scalar24-3drive-24slot-SDLT320__1.txt'))
    assert r['changer'] == '/dev/sg3' and r['complete'] is True
    assert _mtx.drive_barcode(r, 0) == 'TEST55' and r['drives'][0]['source_element'] == 1
    assert [s['barcode'] for s in r['slots'] if s['full']] == ['TEST66S', 'TEST67S', 'TEST68S']


# ---------------------------------------------------------------- the runner's result of mtx status

def test_a_result_with_the_failure_on_stderr_is_the_changers_error():
    # IBM 33614LX offline: mtx exits 1, its sense data and the fatal message on stderr, nothing on stdout
    result = _cli.CliResult(['mtx', '-f', '/dev/sg6', 'status'], 1, '',
                            fixture('mtx', 'mtx_status_error__IBM-33614LX-not-ready__1.txt'))
    status = _mtx.parse_mtx_result(result)
    assert status['error'] == 'READ ELEMENT STATUS Command Failed' and 'random mode' in status['error_hint']
    assert status['sense']['sense_key'] == 'Not Ready' and status['complete'] is False and status['drives'] == []


def test_a_result_that_failed_without_a_listing_says_what_mtx_said():
    # mtx's own message for a node that does not open (scsi_linux.c), on stderr with exit code 1
    status = _mtx.parse_mtx_result(_cli.CliResult(['mtx', '-f', '/dev/sg6', 'status'], 1, '',
                                                  'mtx: cannot open SCSI device /dev/sg6\n'))
    assert status['error'] == 'mtx: cannot open SCSI device /dev/sg6'
    assert status['error_hint'].startswith('mtx could not open the changer: check the sg node (lsscsi -g)')
    # stdout and stderr empty: "printed nothing" is the error, not an empty changer
    status = _mtx.parse_mtx_result(_cli.CliResult(['mtx', '-f', '/dev/sg6', 'status'], 2, '', ''))
    assert status['error'] == 'mtx printed nothing' and status['drives'] == []


def test_a_result_that_listed_the_changer_is_its_status():
    text = fixture('mtx', 'mtx_status__TANDBERG-StorageLoader-1drive-7slot-LTO5__1.txt')
    result = _cli.CliResult(['mtx', '-f', '/dev/sg5', 'status'], 0, text, '')
    assert _mtx.parse_mtx_result(result) == _mtx.parse_mtx_status(text)
