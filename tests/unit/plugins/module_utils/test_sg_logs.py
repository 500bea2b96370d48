"""sg_logs parsers on real LTO drive captures (HP Ultrium 5/6, IBM LTO-10)."""

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils import _sg_logs

from _tape_fixtures import fixture

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
    assert r == {'decoded': False, 'note': 'Unable to decode Read forward errors (lto-5) [rfe_]'}


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
    with pytest.raises(ValueError):
        _sg_logs.parse_log_parameters(b'\x34')
