"""sg_logs parsers on real LTO drive captures (HP Ultrium 5/6, IBM LTO-6 and LTO-10), and on the
output of the real sg_logs of sg3_utils 1.44, 1.46 and 1.48 for the same page bytes
(tests/unit/fixtures/sg_logs/produced/, see regenerate.sh there)."""

import os

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _sg_logs

from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._tape_fixtures import FIXTURES, fixture

HP6_P0 = 'sg_logs_p0x00__HP-Ultrium6-SCSI-35GD-nomedia__1.txt'
HP6_ALL = 'sg_logs_a__HP-Ultrium6-SCSI-331U-bareos-docs__1.txt'
IBM10_ALL = 'sg_logs_a__IBM-ULT3580-TDA-T3S0-LTO10-TS4500__1.txt'


def test_supported_pages_hp_ultrium6_35gd():
    pages = _sg_logs.parse_supported_pages(fixture('sg_logs', HP6_P0))
    assert pages[:4] == [0x00, 0x02, 0x03, 0x0c]
    for page in (0x0c, 0x14, 0x17, 0x2e, 0x34):
        assert page in pages
    assert len(pages) == 22


def test_supported_pages_tandberg_changer_partial():
    r = _sg_logs.parse_all(fixture('sg_logs', 'sg_logs_a_partial__TANDBERG-StorageLoader-0470-bareos-docs__1.txt'))
    assert r['supported'] == [0x00, 0x0d, 0x2e]
    assert r['pages']['0x0d']['current_temperature_c'] == 27


def test_sequential_access_page_hp_ultrium5_z6kw_after_unit_attention():
    text = fixture('sg_logs', 'sg_logs_p0x0c__HP-Ultrium5-SCSI-Z6KW__1.txt')
    page = _sg_logs.split_all(text)[0x0c]
    r = _sg_logs.parse_sequential_access(page)
    assert r['host_written_gb'] == 0 and r['media_written_gb'] == 0
    assert r['raw']['native_capacity_from_bop_to_eod_mb'] == 4294967295
    assert r['cleaning_required'] is False
    # The first try in that capture got a Unit Attention: that is a retry, not "unsupported".
    kind, _reason = _sg_logs.classify_failure(6, '', 'log sense:  Fixed format, current;  Sense key: Unit Attention')
    assert kind == 'retry'


def test_device_statistics_page_hp_ultrium6_loaded():
    r = _sg_logs.parse_page(fixture('sg_logs', 'sg_logs_p0x14__HP-Ultrium6-SCSI-35GD-FUJI-LTO6-loaded__1.txt'))
    assert r['lifetime_media_loads'] == 20
    assert r['hard_read_errors'] == 2 and r['hard_write_errors'] == 0
    assert r['duty_cycle_sample_time_ms'] == 1133080000
    assert r['mbs_transferred_from_app_client_in_duty_cycle_sample_time'] == 31487
    # A label wrapped over two lines is joined.
    assert r['lifetime_power_on_hours_when_last_operator_initiated_forced_reset_and_or_emergency_eject_occurred'] == 0


def test_volume_statistics_page_hp_ultrium6_fuji():
    r = _sg_logs.parse_page(fixture('sg_logs', 'sg_logs_p0x17__HP-Ultrium6-SCSI-35GD-FUJI-LTO6-loaded__1.txt'))
    assert r['volume_serial_number'] == 'EW7VWMVKF6'
    assert r['total_native_capacity_mb'] == 2620446
    assert r['lifetime_megabytes_written'] == 32643
    assert r['worm'] == 0 and r['write_protect'] == 0
    assert r['volume_personality'] == 'Ultrium-6'


def test_tape_alert_ibm_lto10_all_clear():
    r = _sg_logs.parse_tape_alert(fixture('sg_logs', 'sg_logs_p0x2e__IBM-ULT3580-TDA-T3S0-LTO10__1.txt'))
    assert r['active'] == []
    assert len(r['flags']) == 64
    assert r['flags']['cleaning_required'] == 0
    assert r['flags']['worm_medium_overwrite_attempted'] == 0


def test_hp_0x34_undecoded_by_sg_logs_is_decoded_from_hex():
    r = _sg_logs.parse_all(fixture('sg_logs', HP6_ALL))
    page = r['pages']['0x34']
    assert page['page'] == 0x34 and page['length'] == 30 and page['complete']
    assert page['parameters'] == {'0x0000': 0, '0x0001': 0, '0x0002': 0, '0x0003': 0, '0x0004': 1600}


def test_ibm_0x34_truncated_hex_dump_is_flagged():
    r = _sg_logs.parse_all(fixture('sg_logs', IBM10_ALL))
    page = r['pages']['0x34']
    assert page['truncated'] is True and page['complete'] is False
    assert page['length'] == 186
    assert page['parameters']['0x0000'] == 5
    assert r['pages']['0x0c']['raw']['maximum_native_capacity_in_device_object_buffer_mb'] == 3137


def test_hp_0x34_without_hex_is_not_invented():
    r = _sg_logs.decode_page(0x34, fixture('sg_logs', 'sg_logs_p0x34__HP-Ultrium6-SCSI-35GD-nomedia__1.txt'))
    assert r['decoded'] is False and r['parameters'] == {} and r['complete'] is False
    assert r['note'] == 'Unable to decode Read forward errors (lto-5) [rfe_]'
    assert 'printed no data' in r['warnings'][0]


def test_all_pages_of_hp_ultrium6_dump():
    r = _sg_logs.parse_all(fixture('sg_logs', HP6_ALL))
    assert 0x34 in r['supported']
    assert r['pages']['0x0c']['media_read_gb'] == 10
    assert r['pages']['0x0c']['host_read_gb'] == 14
    assert r['pages']['0x2e']['active'] == []
    assert r['pages']['0x17']['volume_personality'] == 'Ultrium-6'


@pytest.mark.parametrize('stderr,kind', [
    ('log_sense: Illegal request, Invalid opcode', 'unsupported'),
    ('Illegal request, invalid opcode', 'unsupported'),
    ('sg_logs: failed opening file: /dev/sg9: No such file or directory', 'error'),
])
def test_classify_failure(stderr, kind):
    assert _sg_logs.classify_failure(5, '', stderr)[0] == kind


def test_raw_log_parameters_decoder():
    data = bytes([0x34, 0x00, 0x00, 0x0c, 0x00, 0x00, 0x60, 0x02, 0x06, 0x40, 0x00, 0x01, 0x40, 0x02, 0x00, 0x07])
    r = _sg_logs.parse_log_parameters(data)
    assert r['parameters'] == {0: 1600, 1: 7} and r['complete']
    with pytest.raises(_sg_logs.SgLogsParseError):
        _sg_logs.parse_log_parameters(b'\x34')


# --------------------------------------------------------------- sg3_utils versions

PRODUCED = os.path.join(FIXTURES, 'sg_logs', 'produced')
ALL_IN = 'sg_logs_a_in__12-pages-HP-Ultrium5-6_IBM-TD6-LTO10__sg3_utils-%s__1.txt'
IBM6_137 = 'sg_logs_a_partial__IBM-ULT3580-TD6-KAJ8-python-scsi__1.txt'


def produced(name):
    return open(os.path.join(PRODUCED, name), encoding='utf-8').read()


@pytest.mark.parametrize('release', ['1.44', '1.46', '1.48'])
def test_every_page_header_of_sg3_utils_release_is_a_page_start(release):
    # The same 12 pages decoded by three real sg_logs versions split into the same 12 pages.
    r = _sg_logs.parse_all(produced(ALL_IN % release))
    assert sorted(r['pages']) == ['0x0c', '0x12', '0x2e', '0x30', '0x31', '0x32', '0x33', '0x34', '0x35', '0x37',
                                  '0x39', '0x3e']
    assert r['pages']['0x30']['thread_count'] == 2 and r['pages']['0x30']['total_data_sets_written'] == 13205
    assert r['pages']['0x31']['main_partition_maximum_capacity_in_mib'] == 2499053
    # 1.48 renamed "WRITE commands" to "WRITE operations": the counters are read either way.
    assert r['pages']['0x0c']['host_written_gb'] == 0 and r['pages']['0x0c']['cleaning_required'] is False
    assert r['pages']['0x2e']['active'] == []


@pytest.mark.parametrize('release', ['1.44', '1.46', '1.48'])
def test_vendor_page_parameters_printed_one_by_one_in_hex(release):
    # "unknown parameter code = 0x5, contents in hex:" (1.44/1.46), "unknown Parameter code = 0x5" and
    # hex without offsets (1.48): each dump is one parameter, not the page.
    page = _sg_logs.parse_all(produced(ALL_IN % release))['pages']['0x31']
    assert page['parameters'] == {'0x0005': 0, '0x0006': 0, '0x0007': 0, '0x0008': 0}
    assert page['main_partition_remaining_capacity_in_mib'] == 2499030
    assert 'warnings' not in page


def test_sg3_utils_148_prints_hex_of_undecoded_pages_without_offsets():
    r = _sg_logs.parse_all(produced(ALL_IN % '1.48'))
    assert r['pages']['0x34']['parameters'] == {'0x0000': 0, '0x0001': 0, '0x0002': 0, '0x0003': 0,
                                                '0x0004': 1600}
    assert r['pages']['0x3e']['parameters']['0x0002'] == 751
    assert r['pages']['0x37']['parameters'] == {'0x0000': 15, '0x0001': 10, '0x0010': 128, '0x0011': 128,
                                                '0x0012': 128, '0x001a': 0}
    # A parameter longer than 8 bytes is an identifier or a log, kept as hex text.
    assert r['pages']['0x35']['parameters']['0x0000'] == '0x' + '00' * 22


@pytest.mark.parametrize('release', ['1.44', '1.46'])
def test_offline_decode_without_hex_names_the_page_by_its_acronym(release):
    # sg_logs 1.44/1.46 --in prints "Unable to decode Read forward errors (lto-5) [rfe_]" and no hex.
    r = _sg_logs.parse_all(produced(ALL_IN % release))
    assert r['pages']['0x34']['decoded'] is False and r['pages']['0x34']['parameters'] == {}
    assert r['pages']['0x33']['note'] == 'Unable to decode Write errors (lto-5) [we_]'
    assert any(w.startswith('page 0x34: sg_logs printed no data') for w in r['warnings'])


@pytest.mark.parametrize('page,release,params', [
    ('hp6-331u_0x34', '1.48', {'0x0000': 0, '0x0001': 0, '0x0002': 0, '0x0003': 0, '0x0004': 1600}),
    ('ibm-td6-kaj8_0x33', '1.48', dict(('0x%04x' % c, 0) for c in range(0x12))),
    ('hp6-331u_0x34', '1.46', {}),
])
def test_minus_h_single_page_as_tape_drive_info_reads_it(page, release, params):
    r = _sg_logs.decode_page(int(page[-2:], 16), produced('sg_logs_H__%s__sg3_utils-%s__1.txt' % (page, release)))
    assert r['parameters'] == params
    assert r['complete'] is bool(params)


def test_sg3_utils_137_ibm_specific_titles_and_no_ascii_pages():
    r = _sg_logs.parse_all(fixture('sg_logs', IBM6_137))
    assert r['supported'][:4] == [0x00, 0x02, 0x03, 0x06] and 0x3d in r['supported']
    # "Tape usage page  (IBM specific) [0x30]" and "Data compression page  (IBM specific) [0x32]" start pages.
    assert r['pages']['0x30']['total_suspended_reads'] == 0 and r['pages']['0x30']['thread_count'] == 107
    assert r['pages']['0x31']['alternate_partition_maximum_capacity_in_mib'] == 2314062
    assert r['pages']['0x32']['megabytes_written_to_tape'] == 0
    # "No ascii information for page = 0x33, here is hex:" is a page of its own, decoded from its hex.
    assert r['pages']['0x33']['length'] == 108 and r['pages']['0x33']['complete']
    assert r['pages']['0x3c']['truncated'] and r['pages']['0x3c']['parameters']['0x0001'] == 60847
    # The title without a page code of 1.37's volume statistics is recognised.
    assert r['pages']['0x17']['volume_barcode'] == 'QIM001L6' and r['pages']['0x17']['write_protect'] == 1
    # DT device status prints parameters as "Reserved [parameter_code=0x8000]:" dumps.
    assert r['pages']['0x11']['parameters']['0x8001'] == 0x0f450000


def test_payload_only_dumps_are_values_not_parameters():
    # sg3_utils 1.45+: "Reserved parameter code (0x46), payload in hex" prints the value only.
    page = _sg_logs.parse_all(fixture('sg_logs', HP6_ALL))['pages']['0x17']
    assert page['parameters']['0x0046'] == int.from_bytes(b'20190521', 'big')
    assert page['parameters']['0xf000'] == 1
    assert 'warnings' not in page


@pytest.mark.parametrize('release', ['1.44', '1.46', '1.48'])
def test_tape_alert_flags_every_release(release):
    r = _sg_logs.parse_all(produced(ALL_IN % release))['pages']['0x2e']
    assert len(r['flags']) == 64 and r['active'] == []
    assert r['flags']['cleaning_required'] == 0


@pytest.mark.parametrize('dump', ['34', '34 00', '34 00 00'])
def test_one_to_three_byte_hex_dump_is_a_warning_not_a_traceback(dump):
    text = 'Unable to decode page = 0x34, here is hex:\n 00     %s\n' % dump
    r = _sg_logs.decode_page(0x34, text)
    assert r['page'] is None and r['parameters'] == {} and r['complete'] is False
    assert 'shorter than its 4-byte header' in r['warnings'][0]
    r = _sg_logs.parse_all(text)
    assert 'shorter than its 4-byte header' in r['warnings'][0]


def test_a_cut_last_line_gives_no_half_number():
    text = fixture('sg_logs', 'sg_logs_p0x30__HP-Ultrium6-SCSI-35GD-FUJI-LTO6-loaded__1.txt')
    cut = text[:text.index('Total data sets written: 13205') + len('Total data sets written: 132')]
    r = _sg_logs.parse_page(cut)
    assert 'total_data_sets_written' not in r and r['thread_count'] == 2
    assert 'cut line' in r['warnings'][0]


@pytest.mark.parametrize('name', ['sg_logs_p0x34__lab-emulated-IBM-ULT3580-TD8-shoeshine__1.txt',
                                  'sg_logs_p0x34_H__lab-emulated-IBM-ULT3580-TD8-shoeshine__1.txt'])
def test_lab_drive_backhitch_counter_after_the_inquiry_line(name):
    # sg_logs 1.81 in a lab guest after a run whose source fed the drive below its floor (2
    # back-hitches); the output starts with the INQUIRY line, -H adds a "Log page code=" header.
    page = _sg_logs.decode_page(0x34, fixture('sg_logs', name))
    assert page['parameters']['0x8000'] == 2 and page['parameters']['0x8002'] == 6000
    assert page['parameters']['0x0004'] == 360           # HP layout: native rate, 100 KB/s units
    assert not page['warnings']
    assert _sg_logs.backhitch_count({'pages': {'0x34': page}}) == 2


def test_no_backhitch_count_from_a_real_drives_0x34():
    # HP Ultrium 6: 0x34 is "Read forward errors" there, nothing to count
    page = _sg_logs.decode_page(0x34, fixture('sg_logs', 'sg_logs_p0x34__HP-Ultrium6-SCSI-35GD-nomedia__1.txt'))
    assert _sg_logs.backhitch_count({'pages': {'0x34': page}}) is None
    assert _sg_logs.backhitch_count({'pages': {'0x34': {'parameters': {'0x8000': 5}}}}) is None
    assert _sg_logs.backhitch_count(None) is None


def _page_of_all(name, code):
    return _sg_logs.decode_page(code, _sg_logs.split_all(fixture('sg_logs', name))[code])


@pytest.mark.parametrize('code', [0x1b, 0x32])
def test_compression_counters_ibm_lto10_megabytes_are_decimal(code):
    # 268 MB + 435456 B from the host = 2^28 bytes, 3 MB + 344392 B to tape: 80.26, the drive's own 8026 (x100);
    # megabytes of 2^20 would make it 80.64
    page = _page_of_all(IBM10_ALL, code)
    counters = _sg_logs.compression_counters(page)
    assert counters == {'host_read_bytes': 0, 'tape_read_bytes': 4, 'host_written_bytes': 268435456,
                        'tape_written_bytes': 3344392}
    assert round(100.0 * counters['host_written_bytes'] / counters['tape_written_bytes']) == \
        page['write_compression_ratio_x100'] == 8026


def test_compression_counters_hp_ultrium6_read_side():
    # a restore on the HP: 13746 MB + 602450 B to the host from 9880 MB + 588564 B read from tape, ratio 139 (x100)
    page = _page_of_all(HP6_ALL, 0x1b)
    counters = _sg_logs.compression_counters(page)
    assert (counters['host_read_bytes'], counters['tape_read_bytes']) == (13746602450, 9880588564)
    assert round(100.0 * counters['host_read_bytes'] / counters['tape_read_bytes']) == \
        page['read_compression_ratio_x100'] == 139
    assert counters['host_written_bytes'] == counters['tape_written_bytes'] == 0


def test_compression_counters_from_hex_equal_the_decoded_page():
    # the lab's drive after two jobs: 0x32 read with -H (parameters) and 0x1b decoded by sg_logs say the same
    hexed = _sg_logs.decode_page(0x32, fixture(
        'sg_logs', 'sg_logs_p0x32_H__lab-emulated-IBM-ULT3580-TD5-observe-after__1.txt'))
    decoded = _sg_logs.decode_page(0x1b, fixture(
        'sg_logs', 'sg_logs_p0x1b__lab-emulated-IBM-ULT3580-TD5-observe-after__1.txt'))
    assert 'parameters' in hexed and 'megabytes_transferred_from_server' in decoded
    assert _sg_logs.compression_counters(hexed) == _sg_logs.compression_counters(decoded) == {
        'host_read_bytes': 0, 'tape_read_bytes': 0, 'host_written_bytes': 33554432, 'tape_written_bytes': 16851776}


def test_compression_counters_negative_remainder_and_pages_without_them():
    # HP allows a negative remainder; sg_logs prints the 4-byte field unsigned
    page = {'parameters': {'0x0006': 5, '0x0007': (1 << 32) - 1000, '0x0008': 2, '0x0009': 0}}
    counters = _sg_logs.compression_counters(page)
    assert counters['host_written_bytes'] == 5 * 1000000 - 1000 and counters['tape_written_bytes'] == 2000000
    assert counters['host_read_bytes'] is None
    assert _sg_logs.compression_counters(_sg_logs.decode_page(0x34, fixture(
        'sg_logs', 'sg_logs_p0x34__HP-Ultrium6-SCSI-35GD-nomedia__1.txt'))) is None
    assert _sg_logs.compression_counters(None) is None and _sg_logs.compression_counters({'bytes': True}) is None
