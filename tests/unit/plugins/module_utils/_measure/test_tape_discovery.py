"""Discovery helpers: READ ELEMENT STATUS (DVCID) decoding and the drive <->
changer element match, VPD 0x80, MTWEOFI from the st driver (version string and
the ioctl probe's logic), log-page reading with the device's own answers."""

import errno
import os

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _cli
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_discovery as D

from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._tape_fixtures import fixture

RES = 'read_element_status_dvcid__tgt-STK-L700-lab-IBM-ULT3580-TD5__1.txt'
LAB_TD5 = {'vendor': 'IBM', 'product': 'ULT3580-TD5', 'serial': '1068001001'}


def test_element_status_from_the_lab_changer():
    elements = D.decode_element_status_ex(D.parse_sg_raw_hex(fixture('mtx', RES)))['elements']
    assert elements == [{'address': 500, 'full': True, 'source_address': 1000, 'volume_tag': None,
                         'identifier': 'IBM     ULT3580-TD5     10', 'identifier_truncated': True}]


def test_truncated_identifier_matches_by_prefix_only_when_unambiguous():
    elements = D.decode_element_status_ex(D.parse_sg_raw_hex(fixture('mtx', RES)))['elements']
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
    assert D.vpd80_serial(b'\x01\x80\x00\x0a1068001001') == ('1068001001', None)
    assert D.vpd80_serial(b'\x01\x83\x00\x00') == (None, None)


def test_vpd80_serial_with_bytes_that_are_not_ascii_keeps_them_in_hex():
    serial, raw = D.vpd80_serial(b'\x01\x80\x00\x06HU\xe912 ')
    assert serial == 'HU\ufffd12' and raw == '4855e9313220'


def st_version(tmp_path, text):
    path = tmp_path / 'bus' / 'scsi' / 'drivers' / 'st'
    path.mkdir(parents=True)
    (path / 'version').write_text(text)
    return str(tmp_path)


@pytest.mark.parametrize('verstr,supported', [
    ('[20160209]\n', True),    # Linux 4.6 and later (st.c version_show prints "[%s]")
    ('[20101219]\n', True),    # 2.6.38
    ('[20100829]\n', True),    # the MTWEOFI commit 3e51d3c924ae, mainline 2.6.37 or a backport
    ('[20081215]\n', False),   # 2.6.29 .. 2.6.36 without the backport
    # RHEL 6 kernel sources (one tree per release): 6.0-6.4 print a later date and lack MTWEOFI,
    # 6.5 (2.6.32-431.el6) backported it
    ('[20101219rh]\n', False),
    ('[20130315rh]\n', True),
    ('[20110101xx]\n', None),   # another distribution's suffix: the date does not tell
])
def test_mtweofi_from_the_st_driver_version(tmp_path, verstr, supported):
    weofi, basis = D.mtweofi_from_st_driver(st_version(tmp_path, verstr))
    assert weofi is supported
    assert ('st driver version %s' % verstr.strip('[]\n')) in basis


def test_mtweofi_unknown_without_st_driver(tmp_path):
    weofi, basis = D.mtweofi_from_st_driver(str(tmp_path))
    assert weofi is None and basis.startswith('unknown')


class StIoctl:
    """What st answers to the probe: MTIOCGET before/after, and MTIOCTOP(MTWEOFI, 0)."""

    def __init__(self, before=(0, 0), after=None, flags=('BOT', 'ONLINE'), error=None):
        self.states = [before, after or before]
        self.flags = list(flags)
        self.error = error
        self.ops = []

    def mtget(self, fd, timeout=None):
        file_number, block_number = self.states[0] if not self.ops else self.states[1]
        return {'file_number': file_number, 'block_number': block_number, 'flags': self.flags}

    def mtop(self, fd, op, count, timeout=None):
        self.ops.append((op, count))
        if self.error:
            raise OSError(self.error, os.strerror(self.error))


def test_probe_accepted_at_bot_is_supported_and_sends_count_zero():
    st = StIoctl()
    r = D.probe_mtweofi(3, st.mtop, st.mtget)
    assert r == {'supported': True, 'basis': 'ioctl probe', 'detail': 'MTWEOFI with count 0 accepted'}
    assert st.ops == [(35, 0)]


@pytest.mark.parametrize('err', [errno.EINVAL, errno.ENOSYS, errno.ENOTTY])
def test_probe_refused_as_unknown_operation_is_unsupported(err):
    st = StIoctl(error=err)
    r = D.probe_mtweofi(3, st.mtop, st.mtget)
    assert r['supported'] is False and r['basis'] == 'ioctl probe' and errno.errorcode[err] in r['detail']


@pytest.mark.parametrize('err', [errno.EACCES, errno.EROFS, errno.EIO])
def test_probe_refused_otherwise_is_inconclusive(err):
    r = D.probe_mtweofi(3, StIoctl(error=err).mtop, StIoctl(error=err).mtget)
    assert r['supported'] is None and r['basis'] == 'ioctl probe inconclusive'


def test_probe_never_runs_away_from_bot_or_on_write_protected_media():
    st = StIoctl(before=(2, 17))
    r = D.probe_mtweofi(3, st.mtop, st.mtget)
    assert r['supported'] is None and 'not at BOT' in r['detail'] and st.ops == []
    st = StIoctl(flags=('BOT', 'ONLINE', 'WR_PROT'))
    r = D.probe_mtweofi(3, st.mtop, st.mtget)
    assert r['supported'] is None and 'write-protected' in r['detail'] and st.ops == []


def test_probe_reports_a_position_change():
    st = StIoctl(after=(1, 0))
    r = D.probe_mtweofi(3, st.mtop, st.mtget)
    assert r['supported'] is True and r['position_changed'] is True and 'file 1 block 0' in r['detail']


def test_element_status_cut_short_never_half_reads_a_volume_tag():
    # A descriptor with PVolTag whose tag bytes end half way.
    data = bytes([0, 10, 0, 1, 0, 0, 0, 60]) + bytes([4, 0x80, 0, 52, 0, 0, 0, 52]) + \
        bytes([0x01, 0xf4, 0x01, 0, 0, 0, 0, 0, 0, 0x80, 0x03, 0xe8]) + b'ULT001L5' + b' ' * 4
    r = D.decode_element_status_ex(data)
    assert r['elements'][0]['address'] == 500 and r['elements'][0]['volume_tag'] is None
    assert r['complete'] is False and any('cut short' in w for w in r['warnings'])
    assert D.decode_element_status_ex(data[:11])['elements'] == []
    # A descriptor length below the 12 bytes every descriptor has (corrupt answer): no IndexError.
    bad = bytes([0, 10, 0, 1, 0, 0, 0, 20]) + bytes([4, 0, 0, 4, 0, 0, 0, 12]) + bytes(12)
    r = D.decode_element_status_ex(bad)
    assert r['elements'] == [] and 'shorter than the 12 bytes' in r['warnings'][0]


@pytest.mark.parametrize('cut', [0, 3, 8, 12, 20, 40])
def test_lab_element_status_cut_anywhere_gives_no_exception(cut):
    data = D.parse_sg_raw_hex(fixture('mtx', RES))
    r = D.decode_element_status_ex(data[:cut])
    assert r['complete'] is False
    for element in r['elements']:
        assert element['identifier'] is None or 'IBM     ULT3580-TD5     10'.startswith(element['identifier'])


def test_gnu_mt_then_mt_st_gives_the_status_bits():
    gnu = fixture('mt', 'mt_status_gnu__IBM-ULTRIUM-HH8-MA21-BDT-FlexStorII__1.txt')
    mtst = fixture('mt', 'mt_status_mtst__HP-Ultrium7-SCSI-G9Q1__2.txt')
    calls = []

    def runner(cmd):
        calls.append(cmd[0])
        return _cli.CliResult(cmd, 0, gnu if cmd[0] == 'mt' else mtst, '')
    status, result, _text = D._mt_status(runner, '/dev/nst0')
    assert calls == ['mt', 'mt-st'] and status['format'] == 'mt-st' and status['media_loaded'] is True

    def runner_without_mt_st(cmd):
        if cmd[0] == 'mt-st':
            raise _cli.CliError('mt-st was not found on this host.', cmd=cmd)
        return _cli.CliResult(cmd, 0, gnu, '')
    status, result, _text = D._mt_status(runner_without_mt_st, '/dev/nst0')
    assert status['format'] == 'gnu' and status['media_loaded'] is None and status['write_protected'] is None


def one_drive_tree(tmp_path):
    """A sysfs tree with one IBM LTO-8 drive at nst0 (no sg, no SCSI host) and st driver 20160209."""
    scsi = tmp_path / 'bus' / 'scsi' / 'devices' / '3:0:0:0'
    scsi.mkdir(parents=True)
    for name, value in (('vendor', 'IBM\n'), ('model', 'ULTRIUM-HH8\n'), ('rev', 'MA21\n'), ('type', '1\n')):
        (scsi / name).write_text(value)
    tape = tmp_path / 'class' / 'scsi_tape' / 'nst0'
    tape.mkdir(parents=True)
    (tape / 'device').symlink_to(scsi)
    st_version(tmp_path, '[20160209]\n')


def test_discovery_with_gnu_mt_reports_unknown_not_false(tmp_path):
    one_drive_tree(tmp_path)
    gnu = fixture('mt', 'mt_status_gnu__IBM-ULTRIUM-HH8-MA21-BDT-FlexStorII__1.txt')

    def runner(cmd):
        if cmd[0] == 'mt':
            return _cli.CliResult(cmd, 0, gnu, '')
        return _cli.CliResult(cmd, 127, '', '%s: not found' % cmd[0])
    found = D.discover(runner=runner, sys_root=str(tmp_path))
    drive = found['drives'][0]
    assert drive['media_loaded'] is None and drive['write_protected'] is None
    assert drive['density_code'] == '0x5e' and drive['mt_status']['format'] == 'gnu'
    assert (drive['mtweofi_supported'], drive['mtweofi_basis']) == (True, 'st driver version 20160209')
    # no SCSI host in this tree's device path: the link is unknown, not a failure
    assert drive['link']['transport'] is None and drive['link']['usable_mb_s'] is None


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


@pytest.mark.parametrize('answer', [' 00     34\n', ' 00     34 00 00\n', '\xff\xfe garbage\n', ''])
def test_log_pages_odd_answers_are_warnings_not_exceptions(answer):
    p0 = fixture('sg_logs', 'sg_logs_p0x00__HP-Ultrium6-SCSI-35GD-nomedia__1.txt')

    def runner(cmd):
        return _cli.CliResult(cmd, 0, p0 if cmd[-2] == '0x00' else answer, '')
    out = D.read_log_pages('/dev/sg0', runner)
    assert set(out['pages']) == {'0x0c', '0x14', '0x17', '0x2e', '0x34'}
    if answer.startswith(' 00'):
        assert out['pages']['0x34']['complete'] is False
        assert any('0x34' in w and '4-byte header' in w for w in out['warnings'])


def test_a_drive_that_hangs_is_asked_once_and_named(tmp_path):
    # The drive does not answer: the first tool on it cannot be stopped (_cli raises hung=True, as it
    # does for a tool left in state D, shown on the lab in tests/integration/test_faults.py); discovery
    # sends nothing more to it and says so, instead of waiting out every tool's timeout.
    one_drive_tree(tmp_path)
    sent = []

    def runner(cmd):
        sent.append(cmd)
        raise _cli.CliError('mt did not finish within 60 seconds and does not end when killed', cmd=cmd, hung=True)
    found = D.discover(runner=runner, sys_root=str(tmp_path))
    drive = found['drives'][0]
    assert sent == [['mt', '-f', '/dev/nst0', 'status']]
    assert drive['hung'] == 'mt did not finish within 60 seconds and does not end when killed'
    assert drive['mt_status'] is None and drive['media_loaded'] is None
    assert drive['mt_error'] == drive['hung']


def test_a_drive_that_answers_is_not_hung(tmp_path):
    one_drive_tree(tmp_path)

    def runner(cmd):
        raise _cli.CliError('mt: no such device', cmd=cmd, rc=1)   # a failure, not a timeout
    drive = D.discover(runner=runner, sys_root=str(tmp_path))['drives'][0]
    assert drive['hung'] is None


def test_a_tool_that_times_out_but_dies_also_ends_the_device_s_commands(tmp_path):
    def timed_out(cmd):
        raise _cli.CliError('sg_logs did not finish within 10 seconds.', cmd=cmd, timed_out=True)
    guard = D.HungGuard(timed_out, str(tmp_path))
    with pytest.raises(_cli.CliError):
        guard(['sg_logs', '-p', '0x00', '/dev/sg9'])
    with pytest.raises(_cli.CliError, match='^Not run: sg_logs did not finish within 10 seconds'):
        guard(['sg_logs', '-p', '0x0c', '/dev/sg9'])
    assert guard.reason('/dev/sg9') == 'sg_logs did not finish within 10 seconds.'
    assert guard.reason('/dev/sg8') is None


def one_changer_tree(tmp_path, sg):
    """A sysfs tree with one SCSI medium changer (type 8, tgt's STK L700 of the lab) whose sg node is ``sg``."""
    scsi = tmp_path / 'bus' / 'scsi' / 'devices' / '0:0:2:0'
    (scsi / 'scsi_generic' / sg).mkdir(parents=True)
    for name, value in (('vendor', 'STK\n'), ('model', 'L700\n'), ('rev', '0104\n'), ('type', '8\n')):
        (scsi / name).write_text(value)


def run_tools(cmd):
    return _cli.run(cmd, timeout=30)


def test_a_changer_without_mtx_installed_says_mtx_is_missing_and_its_package(tmp_path, monkeypatch):
    one_changer_tree(tmp_path, 'sg97')
    empty = tmp_path / 'empty-bin'
    empty.mkdir()
    monkeypatch.setenv('PATH', str(empty))     # neither mtx nor sg_raw: both fail to start (FileNotFoundError)
    (changer,) = D.discover_changers(run_tools, sys_root=str(tmp_path))
    assert changer['error'] == 'mtx is not installed on this host (not found on PATH %s).' % empty
    assert changer['status']['error_hint'] == ('Install the mtx package (Debian/Ubuntu: apt install mtx; RHEL: '
                                               'dnf install mtx) and run again.')
    assert changer['status']['complete'] is False and changer['elements'] == []


def test_mtx_that_cannot_open_the_changer_node_keeps_its_own_hint(tmp_path, monkeypatch):
    # the real mtx (Debian package mtx, in /usr/sbin here) on an sg node that does not exist on this host: its own
    # "cannot open SCSI device ... No such file or directory" is a node that does not open, not a missing tool
    if not os.access('/usr/sbin/mtx', os.X_OK) or os.path.exists('/dev/sg97'):
        pytest.skip('needs /usr/sbin/mtx (apt install mtx) and no /dev/sg97')
    one_changer_tree(tmp_path, 'sg97')
    monkeypatch.setenv('PATH', '/usr/sbin:/usr/bin:/sbin:/bin')
    (changer,) = D.discover_changers(run_tools, sys_root=str(tmp_path))
    assert changer['error'] == "cannot open SCSI device '/dev/sg97' - No such file or directory"
    assert changer['status']['error_hint'].startswith('mtx could not open the changer: check the sg node')


def test_read_block_limits_is_sent_again_after_a_unit_attention():
    """The first command after a cartridge moved gets a UNIT ATTENTION (sg3_utils exit status 6).

    The UA lines are those sg_logs printed on an HP Ultrium 5 right after an mtx unload
    (github.com/waa/mtx-changer-python, a comment in tapealerts(), 2024-05-16: "Sense key: Unit
    Attention", rc 6), with READ BLOCK LIMITS' own prefix; the answer is the lab drive's
    (1 B .. 1 MiB, granularity 0) as ``sg_read_block_limits -H`` prints it.
    """
    calls = []
    answers = [
        _cli.CliResult(['sg_read_block_limits'], 6, '',
                       'read block limits:  Fixed format, current;  Sense key: Unit Attention\n'
                       ' Additional sense: Not ready to ready change, medium may have changed\n'),
        _cli.CliResult(['sg_read_block_limits'], 0, ' 00     00 10 00 00 00 01\n', ''),
    ]

    def runner(cmd):
        calls.append(cmd)
        return answers[len(calls) - 1]
    assert D._block_limits('/dev/sg1', runner) == {'min': 1, 'max': 1048576, 'granularity': 0}
    assert calls == [['sg_read_block_limits', '-H', '/dev/sg1']] * 2

    # only once: a drive that keeps answering so has no limits, and nothing more is sent
    calls.clear()
    answers[1] = answers[0]
    assert D._block_limits('/dev/sg1', runner) == {'min': None, 'max': None, 'granularity': None}
    assert len(calls) == 2
