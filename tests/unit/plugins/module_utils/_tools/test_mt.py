"""mt status parser on real outputs (mt-st, GNU mt, FreeBSD, Solaris)."""

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _mt

from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._tape_fixtures import fixture, fixtures, header


@pytest.mark.parametrize('name,text', fixtures('mt'), ids=[n for n, _t in fixtures('mt')])
def test_every_real_capture_parses_and_keeps_its_source(name, text):
    assert len(header(text)) == 3, 'fixture %s lost its source header' % name
    result = _mt.parse_mt_status(text)
    assert result['format'] != 'unknown'
    assert result['file_number'] is not None


def test_hp_ultrium7_g9q1_at_bot_loaded():
    r = _mt.parse_mt_status(fixture('mt', 'mt_status_mtst__HP-Ultrium7-SCSI-G9Q1__2.txt'))
    assert r['format'] == 'mt-st'
    assert (r['file_number'], r['block_number'], r['partition']) == (0, 0, 0)
    assert r['block_size'] == 0 and r['density_code'] == 0x5c
    assert r['density_name'] == 'no translation'
    assert r['flags'] == ['BOT', 'ONLINE', 'IM_REP_EN']
    assert r['bot'] and r['online'] and r['media_loaded'] and not r['write_protected']


def test_hp_ultrium7_g9q1_after_filemark_is_eof_not_bot():
    r = _mt.parse_mt_status(fixture('mt', 'mt_status_mtst__HP-Ultrium7-SCSI-G9Q1__4.txt'))
    assert r['file_number'] == 3 and r['eof'] and not r['bot']


@pytest.mark.parametrize('name', [
    'mt_status_mtst__HP-Ultrium5-SCSI-no-tape__1.txt',
    'mt_status_mtst__IBM-ULT3580-TDA-LTO10-no-tape__1.txt',
    'mt_status_mtst__DEC-TZ07-9track-no-tape__1.txt',
])
def test_no_tape_means_not_loaded(name):
    r = _mt.parse_mt_status(fixture('mt', name))
    assert r['media_loaded'] is False
    assert r['file_number'] == -1 and r['density_code'] == 0


def test_hp_ultrium5_no_tape_reports_open_door():
    r = _mt.parse_mt_status(fixture('mt', 'mt_status_mtst__HP-Ultrium5-SCSI-no-tape__1.txt'))
    assert r['door_open'] and r['status_bits'] == 0x50000


def test_ibm_hh9_lin_tape_fixed_512_block_size_no_im_rep():
    r = _mt.parse_mt_status(fixture('mt', 'mt_status_mtst__IBM-ULT3580-HH9-N9B1-lin_tape__2.txt'))
    assert r['block_size'] == 512 and r['density_code'] == 0x60
    assert r['flags'] == ['BOT', 'ONLINE']
    assert r['file_number'] == -1 and r['block_number'] == 0


def test_old_mt_unknown_density_label():
    r = _mt.parse_mt_status(fixture('mt', 'mt_status_mtst__DLT-amanda-offline__2.txt'))
    assert r['density_code'] == 0x19 and r['density_name'] == 'unknown to this mt'


def test_lto6_drive_with_lto5_tape_density():
    r = _mt.parse_mt_status(fixture('mt', 'mt_status_mtst__LTO6-drive-LTO5-tape-jonasstein__1.txt'))
    assert r['density_code'] == 0x58 and r['density_name'] == 'LTO-5'


def test_gnu_mt_ibm_hh8_decodes_dsreg_density():
    r = _mt.parse_mt_status(fixture('mt', 'mt_status_gnu__IBM-ULTRIUM-HH8-MA21-BDT-FlexStorII__1.txt'))
    assert r['format'] == 'gnu'
    # drive status 1577058304 = 0x5e000000: density 0x5e (LTO-8), variable block.
    assert r['density_code'] == 0x5e and r['block_size'] == 0
    assert r['status_bits'] is None and r['media_loaded'] is None
    assert r['complete'] is True and r['warnings'] == []


@pytest.mark.parametrize('name', [
    'mt_status_gnu__IBM-ULTRIUM-HH8-MA21-BDT-FlexStorII__1.txt',
    'mt_status_solaris__Quantum-DLT7000__1.txt',
    'mt_status_freebsd__QUANTUM-DLT-V4-0A00-no-tape__1.txt',
])
def test_flags_an_implementation_does_not_print_are_unknown_not_false(name):
    r = _mt.parse_mt_status(fixture('mt', name))
    for flag in ('online', 'eof', 'eod', 'write_protected', 'door_open', 'media_loaded'):
        assert r[flag] is None, flag
    # FreeBSD prints BOP (Flags: None here): BOT is known there, and only there.
    assert r['bot'] is (False if r['format'] == 'freebsd' else None)


def test_cut_gnu_mt_gives_no_wrong_density():
    text = fixture('mt', 'mt_status_gnu__IBM-ULTRIUM-HH8-MA21-BDT-FlexStorII__1.txt')
    cut = text[:text.index('drive status = 1577') + len('drive status = 1577')]
    r = _mt.parse_mt_status(cut)
    # "1577" would be density 0x00 with a 1577-byte block: not used.
    assert r['density_code'] is None and r['block_size'] is None and r['drive_status_register'] is None
    assert r['complete'] is False and 'may be cut short' in r['warnings'][0]


def test_cut_mtst_density_is_not_read_from_half_a_code():
    text = fixture('mt', 'mt_status_mtst__LTO6-drive-LTO5-tape-jonasstein__1.txt')
    cut = text[:text.index('Density code 0x58') + len('Density code 0x5')]
    r = _mt.parse_mt_status(cut)
    assert r['density_code'] is None and r['file_number'] == 0
    assert r['bot'] is None and r['complete'] is False


def test_cut_solaris_mt_is_incomplete_not_an_exception():
    text = fixture('mt', 'mt_status_solaris__Quantum-DLT7000__1.txt')
    r = _mt.parse_mt_status(text[:text.index('block no=') + len('block no=')])
    assert r['format'] == 'solaris' and r['file_number'] is None and r['complete'] is False
    assert r['drive'] == 'Quantum DLT7000' and r['sense'] == 'Unit Attention'


def test_solaris_mt_reports_its_sense():
    r = _mt.parse_mt_status(fixture('mt', 'mt_status_solaris__Quantum-DLT7000__1.txt'))
    assert r['sense_key'] == 6 and r['complete'] is True


def test_freebsd_dlt_v4_no_tape():
    r = _mt.parse_mt_status(fixture('mt', 'mt_status_freebsd__QUANTUM-DLT-V4-0A00-no-tape__1.txt'))
    assert r['format'] == 'freebsd' and r['block_size'] == 0 and r['file_number'] == -1
    assert r['drive'] == 'QUANTUM DLT-V4 0A00' and r['serial'] == 'MYL7M00075' and r['flags'] == []


def test_solaris_dlt7000():
    r = _mt.parse_mt_status(fixture('mt', 'mt_status_solaris__Quantum-DLT7000__1.txt'))
    assert r['format'] == 'solaris' and (r['file_number'], r['block_number']) == (0, 0)


def test_gstat_flags_decode_wr_prot_and_eod():
    assert _mt.gstat_flags(0x04000000 | 0x08000000 | 0x01000000) == ['EOD', 'WR_PROT', 'ONLINE']


def test_garbage_is_unknown_not_an_exception():
    r = _mt.parse_mt_status('/dev/nst0: Device or resource busy\n')
    assert r['format'] == 'unknown' and r['media_loaded'] is None and r['write_protected'] is None
    assert r['warnings']


def test_old_mt_st_prints_mtget_fields_before_the_status():
    r = _mt.parse_mt_status(fixture('mt', 'mt_status_mtst__HP-SureStore24i-DDS3-old-mtst-drive-type-format__1.txt'))
    assert r['format'] == 'mt-st' and (r['file_number'], r['block_number']) == (0, 0)
    assert r['density_code'] == 0x25 and r['density_name'] == 'unknown'
    assert r['bot'] is True and r['complete'] is True


def test_forum_paste_joined_into_one_line():
    r = _mt.parse_mt_status(fixture('mt', 'mt_status_mtst__HP-LTO4-SAS-Adaptec-ASC1405-one-line-forum-paste__1.txt'))
    assert (r['density_code'], r['density_name'], r['block_size']) == (0x46, 'LTO-4', 0)
    assert r['bot'] is True and r['write_protected'] is False and r['complete'] is True


def test_kernel_message_on_the_console_is_ignored():
    r = _mt.parse_mt_status(fixture('mt', 'mt_status_mtst__ARCHIVE-Python-28849-DDS2-linux-2.6.0-test3__1.txt'))
    assert (r['block_size'], r['density_code'], r['density_name']) == (512, 0x24, 'DDS-2')
    assert r['media_loaded'] is True
