"""lsscsi, sg_inq, tapeinfo and READ BLOCK LIMITS on real outputs."""

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _scsi_inquiry as inq

from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._tape_fixtures import fixture, fixtures

LSSCSI = fixtures('lsscsi')


@pytest.mark.parametrize('name,text', LSSCSI, ids=[n for n, _t in LSSCSI])
def test_every_lsscsi_capture_finds_its_tape(name, text):
    tapes = [d for d in inq.parse_lsscsi(text) if d['type'] == 'tape']
    assert tapes, name
    assert all(d['vendor'] and d['model'] and d['revision'] for d in tapes)


def test_hp_ultrium4_with_superloader_columns_with_spaces():
    devs = inq.parse_lsscsi(fixture('lsscsi', 'lsscsi_g__HP-Ultrium4-B35Z_Quantum-SuperLoader3-UHDL__1.txt'))
    tape = [d for d in devs if d['type'] == 'tape'][0]
    assert tape == {'hctl': '11:0:5:0', 'type': 'tape', 'vendor': 'HP', 'model': 'Ultrium 4-SCSI',
                    'revision': 'B35Z', 'device': '/dev/st0', 'sg': '/dev/sg7'}
    changer = [d for d in devs if d['type'] == 'mediumx'][0]
    assert changer['sg'] == '/dev/sg8' and changer['device'] == '/dev/sch0'
    assert devs[0]['model'] == 'Corsair Force 3'


def test_lin_tape_drives_have_no_st_node():
    devs = inq.parse_lsscsi(fixture('lsscsi', 'lsscsi_g_partial__HP-Ultrium6-338D-353D_IBM-ULTRIUM-HH7-lin_tape__1.txt'))
    ibm = [d for d in devs if d['vendor'] == 'IBM']
    assert [d['device'] for d in ibm] == [None, None]
    assert [d['sg'] for d in ibm] == ['/dev/sg2', '/dev/sg7']


def test_dell_lto9_bold_markers_and_lsscsi_ig_wwn_column():
    devs = inq.parse_lsscsi(fixture('lsscsi', 'lsscsi_g__IBM-ULTRIUM-HH9-N9B1-DellLTO9__1.txt'))
    assert devs[-1]['model'] == 'ULTRIUM-HH9' and devs[-1]['sg'] == '/dev/sg2'
    devs = inq.parse_lsscsi(fixture('lsscsi', 'lsscsi_ig__QUANTUM-ULTRIUM4-U53F__1.txt'))
    tape = [d for d in devs if d['type'] == 'tape'][0]
    assert tape['model'] == 'ULTRIUM 4' and tape['device'] == '/dev/st0' and tape['sg'] == '/dev/sg1'
    assert all(not d['hctl'].startswith('N:') for d in devs)


def test_lsscsi_without_g_has_no_sg():
    devs = inq.parse_lsscsi(fixture('lsscsi', 'lsscsi__IBM-ULT3580-HH5-H971_IBM-3573-TL-F.11-DellTL2000__1.txt'))
    assert devs[0]['model'] == 'ULT3580-HH5' and devs[0]['sg'] is None


def test_sg_inq_ibm_lto10_serial():
    r = inq.parse_sg_inq(fixture('sg_inq', 'sg_inq__IBM-ULT3580-TDA-T3S0-LTO10__1.txt'))
    assert r == {'vendor': 'IBM', 'product': 'ULT3580-TDA', 'revision': 'T3S0', 'serial': '607B811E03',
                 'pdt': 1, 'device_type': 'tape'}


def test_tapeinfo_block_limits_ibm_hh8_and_tandberg():
    r = inq.parse_tapeinfo(fixture('tapeinfo', 'tapeinfo__IBM-ULTRIUM-HH8-MA21__1.txt'))
    assert r['Product ID'] == 'ULTRIUM-HH8' and r['SerialNumber'] == '10WT087648'
    assert (r['MinBlock'], r['MaxBlock']) == (1, 8388608)
    r = inq.parse_tapeinfo(fixture('tapeinfo', 'tapeinfo__TANDBERG-LTO5-HH-Y629__1.txt'))
    assert r['MaxBlock'] == 16777215 and r['Density Code'] == '0x58'


def test_read_block_limits_granularity_is_not_part_of_the_maximum():
    # tgt (the lab) answers 09 10 00 00 00 04: granularity 9, max 1048576, min 4;
    # sg_read_block_limits folds byte 0 in and prints 152043520 (lab NOTES).
    data = bytes([0x09, 0x10, 0x00, 0x00, 0x00, 0x04])
    assert inq.decode_read_block_limits(data) == {'min': 4, 'max': 1048576, 'granularity': 9}
    assert inq.parse_hex_bytes(' 00     09 10 00 00 00 04                                 ......\n') == data
    with pytest.raises(ValueError):
        inq.decode_read_block_limits(b'\x00\x01')


def test_read_block_limits_text_from_the_man_page_example():
    text = fixture('sg_inq', 'doc_sg_read_block_limits__sg3_utils-manpage__1.txt')
    assert inq.parse_read_block_limits_text(text) == {'min': 1, 'max': 16777215}


def test_short_read_block_limits_is_the_modules_own_error():
    with pytest.raises(inq.InquiryParseError, match='returned 5 bytes'):
        inq.decode_read_block_limits(b'\x09\x10\x00\x00\x00')


def test_proc_scsi_scsi_hp_ultrium7():
    r = inq.parse_proc_scsi_scsi(fixture('proc_scsi_scsi', 'proc_scsi_scsi__HP-Ultrium7-SCSI-G9Q1__1.txt'))
    assert r['devices'] == [{'hctl': '8:0:0:0', 'host': 8, 'channel': 0, 'id': 0, 'lun': 0, 'vendor': 'HP',
                             'model': 'Ultrium 7-SCSI', 'revision': 'G9Q1', 'type': 'Sequential-Access',
                             'ansi_revision': 6}]
    assert r['complete'] is True


def test_proc_scsi_scsi_spectra_library_two_ait_drives():
    r = inq.parse_proc_scsi_scsi(fixture('proc_scsi_scsi', 'proc_scsi_scsi__SPECTRA-215_SONY-SDX-500C__1.txt'))
    types = ['Direct-Access', 'CD-ROM', 'Medium Changer', 'Sequential-Access', 'Sequential-Access']
    assert [d['type'] for d in r['devices']] == types
    # Model is a fixed 16-character column with spaces inside.
    assert r['devices'][0]['model'] == 'WDC WD5000AAKS-2' and r['devices'][1]['vendor'] == 'HL-DT-ST'
    tapes = inq.tape_devices(r['devices'])
    assert [(t['hctl'], t['model'], t['revision']) for t in tapes] == [('7:0:3:0', 'SDX-500C', '02b3'),
                                                                       ('7:0:4:0', 'SDX-500C', '02b3')]


def test_proc_scsi_scsi_cut_device_is_incomplete():
    text = fixture('proc_scsi_scsi', 'proc_scsi_scsi__HP-Ultrium7-SCSI-G9Q1__1.txt')
    r = inq.parse_proc_scsi_scsi(text[:text.index('Model: Ultrium') + 12])
    assert r['devices'][0]['vendor'] is None and r['complete'] is False


def test_not_proc_scsi_scsi_says_what_to_paste():
    with pytest.raises(inq.InquiryParseError, match='cat /proc/scsi/scsi'):
        inq.parse_proc_scsi_scsi('Attached devices:\n')


def test_lshw_tape_tandberg_lto5_and_hp_dat160():
    r = inq.parse_lshw_tape(fixture('lshw', 'lshw_tape__TANDBERG-LTO5-HH_HP-DAT160__1.txt'))
    assert [(t['vendor'], t['product'], t['logical_name'], t['serial']) for t in r['tapes']] == [
        ('TANDBERG', 'LTO-5 HH', '/dev/nst0', 'HU1246T99F'), ('HP', 'DAT160', '/dev/nst1', 'HU10123NFH')]
    assert r['tapes'][0]['configuration'] == {'ansiversion': '6'} and r['tapes'][1]['version'] == 'WU8A'
    assert r['tapes'][0]['bus_info'] == 'scsi@13:0.0.0' and r['complete'] is True


def test_lshw_cut_last_line_is_not_read():
    text = fixture('lshw', 'lshw_tape__TANDBERG-LTO5-HH_HP-DAT160__1.txt')
    r = inq.parse_lshw_tape(text[:text.index('HU10123NFH') + 4])
    assert r['tapes'][1]['serial'] is None and r['complete'] is False


@pytest.mark.parametrize('text', ['', 'no tape here\n', '[{"class": "tape"}]'])
def test_lshw_without_tape_entry_is_an_error(text):
    with pytest.raises(inq.InquiryParseError):
        inq.parse_lshw_tape(text)


def test_lsscsi_changers_without_upper_driver_and_t10000b():
    devs = inq.parse_lsscsi(fixture('lsscsi', 'lsscsi_g__mhVTL-STK-L700-L80-IBM-TD4-TD5-STK-T10000B__1.txt'))
    changers = [d for d in devs if d['type'] == 'mediumx']
    expected = [('L700', None, '/dev/sg9'), ('L80', None, '/dev/sg10')]
    assert [(c['model'], c['device'], c['sg']) for c in changers] == expected
    assert [d['model'] for d in devs if d['type'] == 'tape'].count('T10000B') == 4


def test_lsscsi_quadstor_adic_scalar24_with_sch_node():
    devs = inq.parse_lsscsi(fixture('lsscsi', 'lsscsi_g__QUADStor-VTL-ADIC-Scalar24-SDLT320-VMware__1.txt'))
    changer = next(d for d in devs if d['type'] == 'mediumx')
    assert (changer['vendor'], changer['model'], changer['device'], changer['sg']) == (
        'ADIC', 'Scalar 24', '/dev/sch0', '/dev/sg3')
    assert [(d['model'], d['revision'], d['device']) for d in devs if d['type'] == 'tape'][0] == (
        'SDLT320', '6.24', '/dev/st0')
