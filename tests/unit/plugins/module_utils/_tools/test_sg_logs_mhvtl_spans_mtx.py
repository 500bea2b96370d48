"""The parsers on outputs of mhvtl fc22cc6 in the lab (lab/tapelab up --drive mhvtl): someone else's SSC/SMC."""

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _media
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _mt
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _mtx
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _scsi_inquiry as inq
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _sg_logs
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _sg_read_attr

from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._tape_fixtures import fixture, fixtures, header

IBM = '__mhvtl-fc22cc6-lab-IBM-ULT3580-TD5__1.txt'
HP_ALL = 'sg_logs_a__mhvtl-fc22cc6-lab-HP-Ultrium6-SCSI__1.txt'
BOOT = 'mtx_status__mhvtl-fc22cc6-lab-STK-L700-2drive-7slot-LTO5-LTO6-WORM-CLN__1.txt'
PAGES = (0x00, 0x02, 0x03, 0x0C, 0x0D, 0x10, 0x11, 0x17, 0x2E, 0x30, 0x31, 0x32, 0x37)
CAPTURES = [(tool, name) for tool in ('sg_logs', 'mtx', 'mt', 'lsscsi', 'tapeinfo', 'sg_read_attr')
            for name, _text in fixtures(tool, '*mhvtl-fc22cc6-lab*')]


@pytest.mark.parametrize('tool, name', CAPTURES, ids=['%s/%s' % c for c in CAPTURES])
def test_every_capture_says_where_it_comes_from(tool, name):
    lines = header(fixture(tool, name))
    assert len(lines) == 3 and 'mhvtl fc22cc6 in the lab' in lines[0] and lines[2] == '# date: 2026-11-27 (lab capture)'


def test_the_ibm_drive_lists_every_page_mhvtl_serves_and_the_hp_drive_one_fewer():
    assert _sg_logs.parse_supported_pages(fixture('sg_logs', 'sg_logs_p0x00' + IBM)) == list(PAGES)
    hp = _sg_logs.parse_all(fixture('sg_logs', HP_ALL))
    assert hp['supported'] == [p for p in PAGES if p != 0x11]


@pytest.mark.parametrize('code', PAGES[1:], ids=['0x%02x' % p for p in PAGES[1:]])
def test_every_page_mhvtl_serves_decodes_without_warnings(code):
    page = _sg_logs.decode_page(code, fixture('sg_logs', 'sg_logs_p0x%02x' % code + IBM))
    assert not page.get('warnings')


def test_sequential_access_counts_in_whole_gb_so_32_mib_written_reads_as_zero():
    page = _sg_logs.decode_page(0x0C, fixture('sg_logs', 'sg_logs_p0x0c' + IBM))
    assert (page['host_written_gb'], page['media_written_gb'], page['cleaning_required']) == (0, 0, False)
    assert page['raw']['native_capacity_from_bop_to_current_position_mb'] == 16
    # mhvtl's vendor parameters stay as sg_logs named them: nothing is invented for them
    assert [k for k in page['raw'] if k.startswith('vendor_specific')] == [
        'vendor_specific_parameter_0x8000_value', 'vendor_specific_parameter_0x8001_value',
        'vendor_specific_parameter_0x8002_value']


def test_tape_alert_has_all_64_flags_and_none_set():
    alert = _sg_logs.decode_page(0x2E, fixture('sg_logs', 'sg_logs_p0x2e' + IBM))
    assert len(alert['flags']) == 64 and alert['active'] == []
    refused = _sg_logs.decode_page(
        0x2E, fixture('sg_logs', 'sg_logs_p0x2e__mhvtl-fc22cc6-lab-HP-Ultrium6-SCSI-cleaning-refused__1.txt'))
    assert refused['active'] == []


def test_page_0x37_sg_logs_cannot_decode_stays_raw_parameters():
    page = _sg_logs.decode_page(0x37, fixture('sg_logs', 'sg_logs_p0x37' + IBM))
    assert page['page'] == 0x37 and page['parameters'] == {'0x0000': 0} and page['complete']


def test_volume_statistics_of_the_worm_cartridge_says_worm_0():
    page = _sg_logs.decode_page(
        0x17, fixture('sg_logs', 'sg_logs_p0x17__mhvtl-fc22cc6-lab-HP-Ultrium6-SCSI-WORM-MA1W01LV__1.txt'))
    assert page['worm'] == 0 and page['total_native_capacity_mb'] == 307


def test_lto5_usage_and_capacity_pages():
    usage = _sg_logs.decode_page(0x30, fixture('sg_logs', 'sg_logs_p0x30' + IBM))
    capacity = _sg_logs.decode_page(0x31, fixture('sg_logs', 'sg_logs_p0x31' + IBM))
    assert (usage['thread_count'], usage['total_data_sets_written']) == (1, 3)
    assert (capacity['main_partition_remaining_capacity_in_mib'],
            capacity['main_partition_maximum_capacity_in_mib']) == (290, 307)


def test_lsscsi_shows_st_numbering_against_target_order():
    devs = inq.parse_lsscsi(fixture('lsscsi', 'lsscsi_g__mhvtl-fc22cc6-lab-STK-L700-IBM-TD5-HP-Ultrium6__1.txt'))
    tapes = {d['hctl']: (d['vendor'], d['model'], d['device'], d['sg']) for d in devs if d['type'] == 'tape'}
    assert tapes == {'0:0:1:0': ('IBM', 'ULT3580-TD5', '/dev/st1', '/dev/sg1'),
                     '0:0:2:0': ('HP', 'Ultrium 6-SCSI', '/dev/st0', '/dev/sg0')}
    changer = [d for d in devs if d['type'] == 'mediumx'][0]
    assert (changer['hctl'], changer['vendor'], changer['model'], changer['sg']) == ('0:0:0:0', 'STK', 'L700', '/dev/sg2')


def test_mtx_status_of_the_mhvtl_library_and_what_its_labels_say():
    status = _mtx.parse_mtx_status(fixture('mtx', BOOT))
    assert (status['drives_count'], status['slots_count'], status['import_export_count']) == (2, 8, 1)
    assert [(d['source_element'], d['barcode']) for d in status['drives']] == [(1, 'MA1001L5'), (3, 'MA1101L6')]
    assert [s['element'] for s in status['slots'] if s['import_export']] == [8]
    kinds = {s['barcode']: _media.classify_label(s['barcode'])['kind'] for s in status['slots'] if s['barcode']}
    assert kinds == {'MA1002L5': 'data', 'MA1102L6': 'data', 'MA1099L5': 'data', 'MA1W01LV': 'worm',
                     'CLN101L1': 'cleaning'}
    worm = _mtx.parse_mtx_status(fixture('mtx', 'mtx_status__mhvtl-fc22cc6-lab-STK-L700-WORM-loaded__1.txt'))
    assert _mtx.drive_barcode(worm, 1) == 'MA1W01LV' and worm['drives'][1]['source_element'] == 6


def test_mt_status_after_writes_with_a_worm_cartridge_and_after_a_refused_cleaning_load():
    after = _mt.parse_mt_status(
        fixture('mt', 'mt_status_mtst__mhvtl-fc22cc6-lab-IBM-ULT3580-TD5-density0x58-after-writes__1.txt'))
    assert (after['file_number'], after['density_code'], after['eof'], after['online']) == (4, 0x58, True, True)
    worm = _mt.parse_mt_status(fixture('mt', 'mt_status_mtst__mhvtl-fc22cc6-lab-HP-Ultrium6-SCSI-WORM-MA1W01LV-BOT__1.txt'))
    # st shows no WORM: the cartridge reads as an ordinary writable LTO-5 tape at BOT
    assert worm['bot'] and worm['online'] and not worm['write_protected'] and worm['density_code'] == 0x58
    refused = _mt.parse_mt_status(
        fixture('mt', 'mt_status_mtst__mhvtl-fc22cc6-lab-HP-Ultrium6-SCSI-after-cleaning-load-refused__1.txt'))
    assert refused['door_open'] and not refused['media_loaded'] and refused['file_number'] == -1


def test_tapeinfo_identity_and_the_worm_medium_type():
    ibm = inq.parse_tapeinfo(fixture('tapeinfo', 'tapeinfo__mhvtl-fc22cc6-lab-IBM-ULT3580-TD5__1.txt'))
    assert (ibm['Vendor ID'], ibm['Product ID'], ibm['SerialNumber'], ibm['Density Code']) == (
        'IBM', 'ULT3580-TD5', 'MHV0115001', '0x58')
    worm = inq.parse_tapeinfo(fixture('tapeinfo', 'tapeinfo__mhvtl-fc22cc6-lab-HP-Ultrium6-SCSI-WORM-MA1W01LV__1.txt'))
    assert worm['Medium Type'] == '0x1' and worm['Ready'] == 'yes'
    cleaning = inq.parse_tapeinfo(
        fixture('tapeinfo', 'tapeinfo__mhvtl-fc22cc6-lab-HP-Ultrium6-SCSI-cleaning-refused__1.txt'))
    assert cleaning['Ready'] == 'no' and cleaning['TapeAlert[11]'].startswith('Cleaning Media')


def test_cartridge_memory_of_an_mhvtl_cartridge_keeps_what_does_not_read():
    mam = _sg_read_attr.parse(
        fixture('sg_read_attr', 'sg_read_attr__mhvtl-fc22cc6-lab-IBM-ULT3580-TD5-MA1001L5__1.txt'))
    assert (mam['barcode'], mam['medium_manufacturer'], mam['load_count']) == ('MA1001L5', 'linuxVTL', 1)
    assert mam['loaded_by_last'] == {'vendor': 'IBM', 'serial': 'MHV0115001'}
    assert (mam['remaining_capacity_mib'], mam['maximum_capacity_mib'], mam['format_density_code']) == (290, 307, 0x58)
    # mhvtl stores the manufacture date as seconds since the epoch, not YYYYMMDD: left unknown, and said so
    assert mam['manufacture_date'] is None and mam['attributes']['0x0406'] == '1795765082'
    assert any('does not read as date' in note for note in mam['notes'])
    worm = _sg_read_attr.parse(
        fixture('sg_read_attr', 'sg_read_attr__mhvtl-fc22cc6-lab-HP-Ultrium6-SCSI-WORM-MA1W01LV__1.txt'))
    assert worm['loaded_by_last'] == {'vendor': 'HP', 'serial': 'MHV0126001'} and worm['total_mib_written'] == 0


def test_a_cleaning_cartridge_in_the_drive_shows_as_not_ready_with_tapealert_11_once():
    status = _mtx.parse_mtx_status(fixture('mtx', 'mtx_status__mhvtl-fc22cc6-lab-STK-L700-cleaning-loaded__1.txt'))
    assert _mtx.drive_barcode(status, 0) == 'CLN101L1' and status['drives'][0]['source_element'] == 7
    mt = _mt.parse_mt_status(fixture('mt', 'mt_status_mtst__mhvtl-fc22cc6-lab-IBM-ULT3580-TD5-cleaning-loaded__1.txt'))
    assert not mt['online'] and not mt['door_open'] and mt['file_number'] == -1
    info = inq.parse_tapeinfo(fixture('tapeinfo', 'tapeinfo__mhvtl-fc22cc6-lab-IBM-ULT3580-TD5-cleaning-loaded__1.txt'))
    assert info['Ready'] == 'no' and info['TapeAlert[11]'].startswith('Cleaning Media')
    # tapeinfo read the TapeAlert page first: sg_logs right after finds every flag cleared
    alert = _sg_logs.decode_page(0x2E, fixture(
        'sg_logs', 'sg_logs_p0x2e__mhvtl-fc22cc6-lab-IBM-ULT3580-TD5-cleaning-loaded-after-tapeinfo__1.txt'))
    assert len(alert['flags']) == 64 and alert['active'] == []
