"""Discovery helpers: READ ELEMENT STATUS (DVCID) decoding and the drive <->
changer element match, VPD 0x80, MTWEOFI kernel gate, log-page reading with
the device's own answers."""

from ansible_collections.tapeops.qualify.plugins.module_utils import _cli
from ansible_collections.tapeops.qualify.plugins.module_utils import _tape_discovery as D

from _tape_fixtures import fixture

RES = 'read_element_status_dvcid__tgt-STK-L700-lab-IBM-ULT3580-TD5__1.txt'
LAB_TD5 = {'vendor': 'IBM', 'product': 'ULT3580-TD5', 'serial': '1068001001'}


def test_element_status_from_the_lab_changer():
    elements = D.decode_element_status(D.parse_sg_raw_hex(fixture('mtx', RES)))
    assert elements == [{'address': 500, 'full': True, 'source_address': 1000, 'volume_tag': None,
                         'identifier': 'IBM     ULT3580-TD5     10'}]


def test_truncated_identifier_matches_by_prefix_only_when_unambiguous():
    elements = D.decode_element_status(D.parse_sg_raw_hex(fixture('mtx', RES)))
    assert D.match_drive_element(LAB_TD5, elements) == (0, 'serial_prefix')
    other = {'vendor': 'HP', 'product': 'Ultrium 6-SCSI', 'serial': 'HU1330A002'}
    assert D.match_drive_element(other, elements) == (None, None)
    twins = elements + [dict(elements[0], address=501)]
    assert D.match_drive_element(LAB_TD5, twins) == (None, None)


def test_full_serial_wins():
    elements = [{'identifier': 'IBM     ULT3580-TD5     1068001001'},
                {'identifier': 'IBM     ULT3580-TD5     1068001002'}]
    assert D.match_drive_element(LAB_TD5, elements) == (0, 'serial')


def test_vpd80_serial():
    assert D.vpd80_serial(b'\x01\x80\x00\x0a1068001001') == '1068001001'
    assert D.vpd80_serial(b'\x01\x83\x00\x00') is None


def test_mtweofi_kernel_gate():
    assert D.kernel_supports_mtweofi('6.1.0-28-amd64')
    assert D.kernel_supports_mtweofi('2.6.37')
    assert not D.kernel_supports_mtweofi('2.6.32-754.el6.x86_64')


def test_log_pages_unsupported_device_is_not_a_failure():
    # What sg_logs prints against the lab's tgt drive (captured on lab-ma1).
    def runner(cmd):
        return _cli.CliResult(cmd, 9, '    IBM       ULT3580-TD5       G350\n',
                              'log_sense: not supported\nsg_logs failed: Illegal request, Invalid opcode\n')
    out = D.read_log_pages('/dev/sg1', runner)
    assert out['supported'] == [] and out['errors'] == {}
    assert 'Invalid opcode' in out['unsupported_reason']


def test_log_pages_read_only_supported_ones_and_hex_for_vendor_pages():
    p0 = fixture('sg_logs', 'sg_logs_p0x00__HP-Ultrium6-SCSI-35GD-nomedia__1.txt')
    p17 = fixture('sg_logs', 'sg_logs_p0x17__HP-Ultrium6-SCSI-35GD-FUJI-LTO6-loaded__1.txt')
    calls = []

    def runner(cmd):
        calls.append(cmd)
        page = cmd[-2]
        text = {'0x00': p0, '0x17': p17}.get(page, '')
        return _cli.CliResult(cmd, 0, text, '')
    out = D.read_log_pages('/dev/sg0', runner)
    assert [c[-2] for c in calls] == ['0x00', '0x0c', '0x14', '0x17', '0x2e', '0x34']
    assert calls[-1][1] == '-H'
    assert out['pages']['0x17']['volume_serial_number'] == 'EW7VWMVKF6'
