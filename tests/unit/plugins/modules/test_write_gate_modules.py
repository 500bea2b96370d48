# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The one safety gate, through the entry path of each module that writes to a tape.

Part 1 runs tape_write_benchmark, btape_speed and tape_mechanics_benchmark as Ansible runs them (a child
process with its arguments as JSON) on the real non-tape paths of this machine - a regular file, /dev/null, a
block device - in check mode and for real: each is refused with the same ``reason`` and nothing is written.

Part 2 takes each module's media path - TapeBenchmark.run, MechanicsBenchmark._write_marks, btape_speed.main -
to a tape the gate may not write (data not allowed, write-protected, write protection unknown). No st device
exists here, so the st descriptor is faked: a real descriptor of /dev/null whose fstat says st 9:128, and the
drive's MTIOCGET / read answers injected into the gate's probe. The lab runs the same paths on real st devices
(tests/integration/test_tape_side.py, test_lab_mechanics.py, test_roles_lab.py).
"""

from __future__ import annotations

import io
import json
import os
import stat
from contextlib import redirect_stdout

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _mechanics as M
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_benchmark as B
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_safety as S
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_writer as W
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _cli
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _mtx

from module_harness import FakeDrive, FakeStat, fake_sys, fit, fixture_text, run_module_process, set_module_args

WRITING_MODULES = {
    'tape_write_benchmark': {},
    'btape_speed': {},
    'tape_mechanics_benchmark': {'barcode': 'LAB001L5'},
}


def run_module(name, args, check_mode=False):
    return run_module_process(name, args, check_mode=check_mode)


def a_block_device():
    for name in sorted(os.listdir('/dev')):
        path = os.path.join('/dev', name)
        if os.path.exists(path) and stat.S_ISBLK(os.stat(path).st_mode):
            return path
    pytest.skip('this machine has no block device node in /dev')


def assert_refused(name, result, rc, reason, words):
    assert rc != 0 and result.get('failed') is True, (name, result)
    assert result['reason'] == reason, (name, result)
    assert words in result['msg'], (name, result['msg'])
    # one refusal shape: msg and reason, no second key, no traceback
    assert 'refused' not in result and 'exception' not in result, (name, result)
    assert 'Refusing to write. Set device to a non-rewinding tape node such as /dev/nst0.' in result['msg']


# ---------------------------------------------------------------- part 1: not a tape, for every module

@pytest.mark.parametrize('check_mode', [True, False], ids=['check_mode', 'run'])
@pytest.mark.parametrize('name', sorted(WRITING_MODULES))
def test_a_regular_file_is_refused_and_stays_as_it_was(tmp_path, name, check_mode):
    image = tmp_path / 'tape.img'
    image.write_bytes(b'backup data\n' * 100)
    before = image.stat()
    rc, result = run_module(name, dict(WRITING_MODULES[name], device=str(image), overwrite=True),
                            check_mode=check_mode)
    assert_refused(name, result, rc, 'regular_file', '%s is a regular file, not a tape drive.' % image)
    after = image.stat()
    assert image.read_bytes() == b'backup data\n' * 100
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


@pytest.mark.parametrize('name', sorted(WRITING_MODULES))
def test_dev_null_is_refused(name):
    rc, result = run_module(name, dict(WRITING_MODULES[name], device='/dev/null', allowed_barcodes=['LAB001L5']))
    assert_refused(name, result, rc, 'memory_device',
                   '/dev/null is a memory device (null), such as /dev/null or /dev/zero, not an st tape device')


@pytest.mark.parametrize('name', sorted(WRITING_MODULES))
def test_a_block_device_is_refused(name):
    disk = a_block_device()
    rc, result = run_module(name, dict(WRITING_MODULES[name], device=disk, overwrite=True))
    assert_refused(name, result, rc, 'block_device',
                   '%s is a block device (a disk or a partition), not a tape drive: writing to it would destroy '
                   'its data.' % disk)


# ---------------------------------------------------------------- part 2: the media, for every module

DATA = (['ONLINE', 'BOT'], b'x' * 65536, 'media_has_data',
        'The cartridge LAB001L5 holds data (read a 65536-byte block at BOT). Refusing to overwrite it.')
WRITE_PROTECTED = (['ONLINE', 'BOT', 'WR_PROT'], b'', 'write_protected',
                   'The cartridge LAB001L5 is write-protected (WR_PROT): nothing will be written.')
# MTIOCGET always has the WR_PROT bit; a status that does not say (parsed as None) is injected into the probe
PROTECTION_UNKNOWN = (['ONLINE', 'BOT', 'EOD'], b'', 'write_protect_unknown',
                      'The drive did not report whether the cartridge LAB001L5 is write-protected; nothing will be '
                      'written.')
CASES = [DATA, WRITE_PROTECTED, PROTECTION_UNKNOWN]
CASE_IDS = ['data', 'write_protected', 'protection_unknown']


def media(monkeypatch, reason):
    """For the protection_unknown case, the probe reports write protection as unknown."""
    if reason == 'write_protect_unknown':
        real = S.probe_media
        monkeypatch.setattr(S, 'probe_media', lambda *a, **kw: dict(real(*a, **kw), write_protected=None))


def no_runner(cmd, *args):
    return _cli.CliResult(cmd, 1, '', 'not on this machine')


@pytest.mark.parametrize('flags,read_result,reason,words', CASES, ids=CASE_IDS)
def test_write_benchmark_does_not_write_what_the_gate_refuses(monkeypatch, tmp_path, flags, read_result, reason,
                                                              words):
    media(monkeypatch, reason)
    drive = FakeDrive(flags, read_result)
    bench = B.TapeBenchmark('/dev/nst0', block_sizes=[65536], patterns=['zeros'], step_bytes=W.MB, log_pages=False,
                            barcode='LAB001L5', allowed_barcodes=['OTHER1L5'], runner=no_runner,
                            sys_root=fake_sys(tmp_path / 'sys'))
    fit(bench.gate, drive, bench.sys_root)
    with pytest.raises(B.BenchmarkError) as info:
        bench.run()
    assert info.value.reason == reason and words in info.value.msg
    assert drive.opens == [os.O_RDONLY] and drive.wrote() == []
    assert info.value.partial['changed'] is False and info.value.partial['media']['online'] is True


@pytest.mark.parametrize('flags,read_result,reason,words', CASES, ids=CASE_IDS)
def test_mechanics_writes_no_file_mark_on_what_the_gate_refuses(monkeypatch, tmp_path, flags, read_result, reason,
                                                                words):
    media(monkeypatch, reason)
    drive = FakeDrive(flags, read_result)
    bench = M.MechanicsBenchmark('/dev/nst0', 'LAB001L5', allowed_barcodes=['OTHER1L5'],
                                 runner=no_runner, sys_root=fake_sys(tmp_path / 'sys'))
    # the gate as identify() sets it up (identify itself needs a changer: tests/integration/test_lab_mechanics.py)
    bench.gate = fit(S.WriteGate('/dev/nst0', barcode='LAB001L5', allowed_barcodes=['OTHER1L5'], runner=None),
                     drive, bench.sys_root)
    bench.gate.check_device()
    bench.result = {'warnings': []}
    record = bench._write_marks()
    assert record['written'] is False and record['refused'] is True
    assert record['reason'] == reason and words in record['msg']
    assert drive.opens == [os.O_RDONLY] and drive.wrote() == []
    assert bench.result['warnings'] == ['no file marks written for the locate: %s' % record['msg']]


def test_mechanics_stops_when_the_drive_cannot_be_opened(tmp_path):
    # EBUSY on the probe's open is not a cartridge the media rule refuses: the benchmark stops with it.
    def busy(path, flags):
        raise OSError(16, 'Device or resource busy')
    bench = M.MechanicsBenchmark('/dev/nst0', 'LAB001L5', runner=no_runner)
    bench.gate = fit(S.WriteGate('/dev/nst0'), FakeDrive(['ONLINE']), fake_sys(tmp_path / 'sys'))
    bench.gate.opener = busy
    bench.gate.check_device()
    bench.result = {'warnings': []}
    with pytest.raises(M.MechanicsError) as info:
        bench._write_marks()
    assert info.value.reason == 'busy' and 'another process has the drive open' in info.value.msg


def run_btape_main(monkeypatch, tmp_path, drive, args):
    """btape_speed.main() in this process, its gate on the fake drive; btape itself must never start."""
    from ansible_collections.tapeops.qualify.plugins.modules import btape_speed
    sys_root = fake_sys(tmp_path / 'sys')
    started = []

    class Gate(S.WriteGate):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            fit(self, drive, sys_root)

        def identify(self, discover=True):
            return super().identify(discover=False)  # no changer here: the barcode is the one given

    def run(cmd, **kwargs):
        started.append(cmd)
        if cmd[1:] == ['-?']:
            return _cli.CliResult(cmd, 1, '', 'Version: 9.6.7 (20 November 2020)\n')
        raise AssertionError('btape was started: %s' % cmd)
    monkeypatch.setattr(btape_speed, 'WriteGate', Gate)
    monkeypatch.setattr(btape_speed, 'run', run)
    monkeypatch.setattr(btape_speed, 'find_tool', lambda *a, **kw: '/usr/sbin/btape')
    out = io.StringIO()
    with set_module_args(dict(args, device='/dev/nst0')), redirect_stdout(out), pytest.raises(SystemExit):
        btape_speed.main()
    return json.loads(out.getvalue()), started


@pytest.mark.parametrize('flags,read_result,reason,words', CASES, ids=CASE_IDS)
def test_btape_is_not_started_on_what_the_gate_refuses(monkeypatch, tmp_path, flags, read_result, reason, words):
    media(monkeypatch, reason)
    drive = FakeDrive(flags, read_result)
    result, started = run_btape_main(monkeypatch, tmp_path, drive,
                                     {'barcode': 'LAB001L5', 'allowed_barcodes': ['OTHER1L5']})
    assert result['failed'] is True and result['reason'] == reason and words in result['msg'], result
    assert 'refused' not in result and result['changed'] is False
    assert started == [['/usr/sbin/btape', '-?']] and drive.wrote() == []


def test_btape_is_given_the_checked_node_only_after_the_gate_admits(monkeypatch, tmp_path):
    # Blank media: the gate admits it, hands the checked node over, and btape would start with it.
    drive = FakeDrive(['ONLINE', 'BOT', 'EOD'])
    with pytest.raises(AssertionError, match=r"btape was started: \['/usr/sbin/btape', '-c', "):
        run_btape_main(monkeypatch, tmp_path, drive, {'barcode': 'LAB001L5'})
    # the probe, and the rewind after btape (which opens the drive itself): both read-only through the gate
    assert drive.opens == [os.O_RDONLY, os.O_RDONLY]


# ---------------------------------------------------------------- the gate's own order

def test_a_refused_cartridge_never_opens_for_writing_even_with_overwrite(tmp_path):
    gate = fit(S.WriteGate('/dev/nst0', overwrite=True), FakeDrive(['ONLINE', 'BOT', 'WR_PROT']), fake_sys(tmp_path))
    gate.check_device()
    with pytest.raises(S.TapeSafetyError) as info:
        gate.admit(gate.probe())
    assert info.value.reason == 'write_protected'
    with pytest.raises(S.TapeSafetyError) as info:
        gate.open_for_write()
    assert info.value.reason == 'media_not_checked'


def test_nothing_opens_for_writing_before_the_media_check(tmp_path):
    drive = FakeDrive(['ONLINE', 'BOT', 'EOD'])
    gate = fit(S.WriteGate('/dev/nst0'), drive, fake_sys(tmp_path))
    with pytest.raises(S.TapeSafetyError) as info:
        gate.open(os.O_RDONLY)
    assert info.value.reason == 'not_checked'
    gate.check_device()
    for attempt in (lambda: gate.open(os.O_WRONLY), gate.open_for_write, gate.handover):
        with pytest.raises(S.TapeSafetyError) as info:
            attempt()
        assert info.value.reason == 'media_not_checked'
    assert drive.opens == []
    assert gate.probe()['content'] == 'blank' and gate.admit() == 'blank media'
    os.close(gate.open_for_write())
    assert drive.opens == [os.O_RDONLY, os.O_WRONLY]
    assert gate.handover() == os.path.realpath('/dev/nst0')


def test_handover_refuses_a_node_replaced_after_the_media_check(tmp_path):
    drive = FakeDrive(['ONLINE', 'BOT', 'EOD'])
    gate = fit(S.WriteGate('/dev/nst0'), drive, fake_sys(tmp_path))
    gate.check_device()
    gate.probe()
    gate.admit()
    gate.stat_func = lambda path: FakeStat(stat.S_IFCHR | 0o666, 1, 3)  # now /dev/null's numbers
    with pytest.raises(S.TapeSafetyError) as info:
        gate.handover()
    assert info.value.reason == 'memory_device'


def test_every_error_of_the_collection_has_one_base_and_keeps_its_words():
    from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError
    from ansible_collections.tapeops.qualify.plugins.module_utils._config._omnirc import OmnircError
    from ansible_collections.tapeops.qualify.plugins.module_utils._measure._source_read import SourceReadError
    refusal = S.TapeSafetyError('The cartridge is WORM.', 'worm')
    assert isinstance(refusal, TapeopsError) and str(refusal) == 'The cartridge is WORM.'
    assert refusal.refusal() == {'msg': 'The cartridge is WORM.', 'reason': 'worm'}
    cli = _cli.CliError('mt failed.', cmd=['mt'], rc=2, hint='Check the drive.')
    assert isinstance(cli, TapeopsError) and cli.as_fail_kwargs() == {'msg': 'mt failed. Check the drive.',
                                                                      'cmd': ['mt'], 'rc': 2}
    assert isinstance(OmnircError('bad key'), ValueError) and str(OmnircError('bad key')) == 'bad key'
    assert SourceReadError('no fio', rc=1).fail_kwargs == {'msg': 'no fio', 'rc': 1}
    from ansible_collections.tapeops.qualify.plugins.module_utils._judge import (
        _forecast, _host, _media, _resolve, _verdict)
    from ansible_collections.tapeops.qualify.plugins.module_utils._reporting._report import ReportError
    for cls in (B.BenchmarkError, M.MechanicsError, W.TapeTimeout, SourceReadError, OmnircError, ReportError):
        assert issubclass(cls, TapeopsError)
    for cls in (_forecast.ForecastInputError, _media.MediaInputError, _resolve.ResolveError,
                _verdict.VerdictInputError, _host.DriveError):
        assert issubclass(cls, TapeopsError) and issubclass(cls, ValueError)  # still caught as ValueError
    assert W.TapeTimeout('Opening /dev/nst0 did not finish within 5 seconds.').reason == 'timeout'


# ---------------------------------------------------------------- part 3: the changer's barcode is the cartridge's

# Real `mtx status` captures (tests/unit/fixtures/mtx/, each with its source header), read by discovery's own
# parser: a Quantum SuperLoader3 whose drive 0 holds NDD311L3, and an IBM 3584 changer that answered Not Ready.
LOADED = 'mtx/mtx_status__Quantum-SuperLoader3-UHDL-0061-HP-LTO4__1.txt'
NOT_READY = 'mtx/mtx_status_error__IBM-33614LX-not-ready__1.txt'
CHANGER = '/dev/sg5'


def changer_says(monkeypatch, fixture):
    """Discovery of /dev/nst0 as drive 0 of a changer whose `mtx status` printed ``fixture``; its calls counted."""
    text = fixture_text(fixture)
    failed = fixture.startswith('mtx/mtx_status_error')
    result = _cli.CliResult(['mtx', '-f', CHANGER, 'status'], 1 if failed else 0, '' if failed else text,
                            text if failed else '')
    status = _mtx.parse_mtx_result(result)
    calls = []

    def discover(**kwargs):
        calls.append(kwargs['only'])
        drive = {'nst': '/dev/nst0', 'sg': None, 'changer': {'sg': CHANGER, 'element': 0},
                 'barcode': _mtx.drive_barcode(status, 0), 'block_limits': {'max': None}}
        return {'drives': [drive], 'changers': [{'sg': CHANGER, 'status': status, 'error': status['error']}]}

    def runner(cmd, *args):
        """The changer's `mtx status` (the gate asks it again before a write that rests on the barcode)."""
        calls.append(' '.join(cmd))
        return result if cmd[0] == 'mtx' else no_runner(cmd)
    monkeypatch.setattr(S._tape_discovery, 'discover', discover)
    return calls, runner


def test_the_changer_reports_the_cartridge_the_capture_shows(monkeypatch, tmp_path):
    _calls, runner = changer_says(monkeypatch, LOADED)
    gate = fit(S.WriteGate('/dev/nst0', runner=runner), FakeDrive(['ONLINE', 'BOT']), fake_sys(tmp_path))
    gate.identify()
    assert gate.barcode == 'NDD311L3' and gate.barcode_unconfirmed is None


@pytest.mark.parametrize('overwrite', [False, True], ids=['allow_list', 'overwrite'])
def test_write_benchmark_refuses_a_barcode_the_changer_contradicts(monkeypatch, tmp_path, overwrite):
    # The incident: the changer reports the data cartridge, the task names a scratch barcode it also allows.
    _calls, runner = changer_says(monkeypatch, LOADED)
    drive = FakeDrive(*DATA[:2])
    bench = B.TapeBenchmark('/dev/nst0', block_sizes=[65536], patterns=['zeros'], step_bytes=W.MB, log_pages=False,
                            barcode='SCR001L4', allowed_barcodes=['SCR001L4'], overwrite=overwrite,
                            runner=runner, sys_root=fake_sys(tmp_path / 'sys'))
    fit(bench.gate, drive, bench.sys_root)
    for check_mode in (True, False):
        with pytest.raises(S.TapeSafetyError) as info:
            bench.run(check_mode=check_mode)
        assert info.value.reason == 'barcode_mismatch'
        assert 'reports cartridge NDD311L3' in info.value.msg and 'not SCR001L4' in info.value.msg
        assert CHANGER in info.value.msg
    assert drive.opens == [] and drive.wrote() == []


def test_btape_refuses_a_barcode_the_changer_contradicts(monkeypatch, tmp_path):
    from ansible_collections.tapeops.qualify.plugins.modules import btape_speed
    changer_says(monkeypatch, LOADED)
    drive = FakeDrive(*DATA[:2])
    sys_root = fake_sys(tmp_path / 'sys')

    class Gate(S.WriteGate):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            fit(self, drive, sys_root)
    started = []
    monkeypatch.setattr(btape_speed, 'WriteGate', Gate)
    monkeypatch.setattr(btape_speed, 'run', lambda cmd, **kw: started.append(cmd))
    monkeypatch.setattr(btape_speed, 'find_tool', lambda *a, **kw: '/usr/sbin/btape')
    out = io.StringIO()
    args = {'device': '/dev/nst0', 'barcode': 'scr001l4 ', 'allowed_barcodes': ['SCR001L4']}
    with set_module_args(args), redirect_stdout(out), pytest.raises(SystemExit):
        btape_speed.main()
    result = json.loads(out.getvalue())
    assert result['failed'] is True and result['reason'] == 'barcode_mismatch', result
    assert 'NDD311L3' in result['msg'] and 'scr001l4' in result['msg']
    assert started == [] and drive.opens == []


def test_mechanics_file_marks_check_the_loaded_barcode_against_the_changer(monkeypatch, tmp_path):
    # Mechanics moved "SCR001L4" into the drive, yet the changer now reports NDD311L3 there: no file mark.
    calls, runner = changer_says(monkeypatch, LOADED)
    drive = FakeDrive(*DATA[:2])
    bench = M.MechanicsBenchmark('/dev/nst0', 'SCR001L4', allowed_barcodes=['SCR001L4'], runner=runner,
                                 sys_root=fake_sys(tmp_path / 'sys'))
    # the gate as identify() sets it up: no barcode (mechanics names the cartridge it moves, not the loaded one)
    bench.gate = fit(S.WriteGate('/dev/nst0', allowed_barcodes=['SCR001L4'], runner=runner), drive, bench.sys_root)
    bench.gate.identify()
    bench.result = {'warnings': []}
    record = bench._write_marks()
    assert record['refused'] is True and record['reason'] == 'barcode_mismatch', record
    # discovery, then the changer asked again right before the decision
    assert calls == [['/dev/nst0'], 'mtx -f /dev/sg5 status']
    assert drive.opens == [os.O_RDONLY] and drive.wrote() == []


def test_a_matching_barcode_is_asked_again_before_it_admits_data(monkeypatch, tmp_path):
    calls, runner = changer_says(monkeypatch, LOADED)
    drive = FakeDrive(*DATA[:2])
    gate = fit(S.WriteGate('/dev/nst0', barcode='ndd311l3', allowed_barcodes=['NDD311L3'], runner=runner),
               drive, fake_sys(tmp_path))
    gate.identify()
    assert gate.barcode == 'NDD311L3'   # the changer's spelling
    assert gate.admit(gate.probe()) == 'barcode NDD311L3 is in allowed_barcodes (read a 65536-byte block at BOT)'
    assert calls == [['/dev/nst0'], 'mtx -f /dev/sg5 status']


def test_blank_media_needs_no_second_look_at_the_changer(monkeypatch, tmp_path):
    calls, runner = changer_says(monkeypatch, LOADED)
    gate = fit(S.WriteGate('/dev/nst0', allowed_barcodes=['NDD311L3'], runner=runner),
               FakeDrive(['ONLINE', 'BOT', 'EOD']), fake_sys(tmp_path))
    gate.identify()
    assert gate.admit(gate.probe()) == 'blank media' and calls == [['/dev/nst0']]


def test_a_changer_that_fails_leaves_a_given_barcode_unconfirmed(monkeypatch, tmp_path):
    _calls, runner = changer_says(monkeypatch, NOT_READY)
    drive = FakeDrive(*DATA[:2])
    gate = fit(S.WriteGate('/dev/nst0', barcode='SCR001L4', allowed_barcodes=['SCR001L4'], runner=runner),
               drive, fake_sys(tmp_path))
    gate.identify()
    assert gate.barcode == 'SCR001L4' and gate.barcode_unconfirmed.startswith('the changer /dev/sg5 did not answer')
    with pytest.raises(S.TapeSafetyError) as info:
        gate.admit(gate.probe())
    assert info.value.reason == 'barcode_unconfirmed'
    assert 'could not confirm that it is SCR001L4' in info.value.msg and 'mtx status' in info.value.msg
    with pytest.raises(S.TapeSafetyError):
        gate.open_for_write()
    assert drive.wrote() == []
    # overwrite=true is the user's word for whatever is loaded: it does not rest on the barcode
    gate.overwrite = True
    assert gate.admit().startswith('overwrite=true')


def test_without_a_changer_the_given_barcode_stands(tmp_path):
    gate = fit(S.WriteGate('/dev/nst0', barcode='SCR001L4', allowed_barcodes=['SCR001L4'], runner=None),
               FakeDrive(*DATA[:2]), fake_sys(tmp_path))
    gate.identify(discover=False)
    assert gate.admit(gate.probe()).startswith('barcode SCR001L4 is in allowed_barcodes')


def test_a_changer_not_ready_for_element_status_either_leaves_a_given_barcode_unconfirmed(monkeypatch, tmp_path):
    # A changer that is not ready fails `mtx status` and READ ELEMENT STATUS alike, so discovery cannot link it to
    # the drive. The changer as discovery's own discover_changers reads it from a sysfs tree laid out as the
    # kernel's, `mtx status` answering with the real Not Ready capture and sg_raw failing as it does then.
    sys_root = tmp_path / 'sys'
    changer_dir = sys_root / 'bus' / 'scsi' / 'devices' / '0:0:1:1'
    (changer_dir / 'scsi_generic' / 'sg5').mkdir(parents=True)
    (changer_dir / 'type').write_text('8\n')

    def runner(cmd):
        if cmd[0] == 'mtx':
            return _cli.CliResult(cmd, 1, '', fixture_text(NOT_READY))
        return _cli.CliResult(cmd, 1, '', 'sg_raw: Not ready, cause not reportable')
    changers = S._tape_discovery.discover_changers(runner, str(sys_root))
    assert changers[0]['sg'] == '/dev/sg5' and changers[0]['error'] and changers[0]['elements'] == []
    monkeypatch.setattr(S._tape_discovery, 'discover', lambda **kw: {
        'drives': [{'nst': '/dev/nst0', 'sg': None, 'changer': None, 'barcode': None, 'block_limits': {}}],
        'changers': changers})
    drive = FakeDrive(*DATA[:2])
    gate = fit(S.WriteGate('/dev/nst0', barcode='SCR001L4', allowed_barcodes=['SCR001L4'], runner=runner),
               drive, fake_sys(tmp_path / 'st'))
    gate.identify()
    assert gate.barcode_unconfirmed.startswith('the changer /dev/sg5 on this host could not say which drives')
    with pytest.raises(S.TapeSafetyError) as info:
        gate.admit(gate.probe())
    assert info.value.reason == 'barcode_unconfirmed' and drive.wrote() == []


def test_a_changer_that_answered_without_this_drive_leaves_the_given_barcode_standing(monkeypatch, tmp_path):
    # a standalone drive beside a library that answered: the library's element status lists its own drives only
    monkeypatch.setattr(S._tape_discovery, 'discover', lambda **kw: {
        'drives': [{'nst': '/dev/nst0', 'sg': None, 'changer': None, 'barcode': None, 'block_limits': {}}],
        'changers': [{'sg': '/dev/sg5', 'error': None,
                      'elements': [{'address': 500, 'identifier': 'IBM     ULT3580-TD8     OTHER001'}]}]})
    gate = fit(S.WriteGate('/dev/nst0', barcode='SCR001L4', allowed_barcodes=['SCR001L4'], runner=no_runner),
               FakeDrive(*DATA[:2]), fake_sys(tmp_path))
    gate.identify()
    assert gate.barcode_unconfirmed is None
    assert gate.admit(gate.probe()).startswith('barcode SCR001L4 is in allowed_barcodes')


def test_a_changer_whose_drives_have_no_identifier_leaves_a_given_barcode_unconfirmed(monkeypatch, tmp_path):
    # without DVCID the changer cannot tell which element this drive is: it may be one of them
    monkeypatch.setattr(S._tape_discovery, 'discover', lambda **kw: {
        'drives': [{'nst': '/dev/nst0', 'sg': None, 'changer': None, 'barcode': None, 'block_limits': {}}],
        'changers': [{'sg': '/dev/sg5', 'error': None, 'elements': [{'address': 500, 'identifier': None}]}]})
    gate = fit(S.WriteGate('/dev/nst0', barcode='SCR001L4', allowed_barcodes=['SCR001L4'], runner=no_runner),
               FakeDrive(*DATA[:2]), fake_sys(tmp_path))
    gate.identify()
    assert 'a drive element without a device identifier' in gate.barcode_unconfirmed
    with pytest.raises(S.TapeSafetyError) as info:
        gate.admit(gate.probe())
    assert info.value.reason == 'barcode_unconfirmed'
