# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""btape_speed through its main(): the gate admits blank media, btape runs, its output is parsed.

btape is a script first on PATH (module_harness.scripted_tools), found ahead of the real /usr/sbin/btape
(Debian bacula-sd 9.6.7, installed here) because the tool lookup searches PATH first: ``btape -?`` runs that real
btape for its version line; ``btape -c <config> tapeops-btape`` prints the run recorded on lab guest lab-ma2
(tests/unit/fixtures/btape, the random-data test ending in ENOSPC at the file mark). No st device exists here: the
gate's drive is module_harness.FakeDrive (a /dev/null descriptor whose fstat says st 9:128, status flags of
blank media), as in the refusal tests of test_write_gate_modules; the rewind after btape is recorded instead of
sent to /dev/null.
"""

from __future__ import annotations

import os

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_safety as S
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_writer as W
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _cli
from ansible_collections.tapeops.qualify.plugins.modules import btape_speed

from module_harness import (Derived, FakeDrive, Sleeps, fake_sys, fit, module_warnings, run_module, scripted_tools,
                            tool_calls)

PROBE = [(W.MTSETBLK, 0), (W.MTREW, 1), (W.MTREW, 1)]
LAB_MA2 = 'btape/btape_speed__HP-Ultrium6-SCSI-lab-ma2-tgt-1048576B-enospc__1.txt'
REAL_BTAPE = '/usr/sbin/btape'


class Rewinds(FakeDrive):
    """The fake drive, recording each MTIOCTOP the module sends."""

    def __init__(self, flags):
        super().__init__(flags)
        self.ops = []

    def mtop(self, fd, op, count=1, timeout=None):
        self.ops.append((op, count))


@pytest.fixture
def blank(tmp_path, monkeypatch):
    """Blank media in the fake drive; the gate is fitted to it and takes the barcode it is given."""
    drive = Rewinds(['ONLINE', 'BOT', 'EOD'])
    sys_root = fake_sys(tmp_path / 'sys')

    class Gate(S.WriteGate):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            fit(self, drive, sys_root)

        def identify(self, discover=True):
            return super().identify(discover=False)   # no changer here: the barcode is the one given
    monkeypatch.setattr(btape_speed, 'WriteGate', Gate)
    monkeypatch.setattr(btape_speed.W, 'mtop', drive.mtop)
    return drive


def btape(tmp_path, monkeypatch, run_output):
    if not os.access(REAL_BTAPE, os.X_OK):
        pytest.skip('btape is not installed here (Debian package bacula-sd; tools/run setup)')
    bindir = scripted_tools(tmp_path, monkeypatch, {'btape': [('-c * tapeops-btape', run_output, 0)]})
    # "-?" runs the real btape: its version line as Debian's bacula-sd prints it
    script = bindir / 'btape'
    text = script.read_text().replace('case "$*" in\n', 'case "$*" in\n  -\\?) exec %s -\\?;;\n' % REAL_BTAPE)
    script.write_text(text)
    return str(script)


ARGS = {'device': '/dev/nst0', 'barcode': 'MA2001L6', 'allowed_barcodes': ['MA2001L6'], 'file_size_gb': 1,
        'tests': ['zero_block', 'random_block']}     # the recorded run's command: speed file_size=1 nb_file=1 skip_raw


def test_a_recorded_btape_speed_run_is_parsed_and_the_tape_rewound(tmp_path, monkeypatch, blank):
    said = module_warnings(monkeypatch)
    mine = btape(tmp_path, monkeypatch, LAB_MA2)
    failed, result = run_module(btape_speed.main, ARGS, monkeypatch)
    assert not failed, result
    calls = tool_calls(tmp_path)
    assert len(calls) == 2 and calls[0] == 'btape -?'
    # btape's config is a temporary file the module removes after the run
    assert calls[1].startswith('btape -c /') and calls[1].endswith('/btape-sd.conf tapeops-btape')
    assert result['changed'] is True and result['rewound'] is True
    assert result['btape_version'] == '9.6.7'
    assert result['command'] == 'speed file_size=1 nb_file=1 skip_raw'
    assert result['barcode'] == 'MA2001L6' and result['write_allowed_because'] == 'blank media'
    assert result['granularity'] == 1024
    assert result['summary'] == {'zero_block_mb_s': 11.3, 'random_block_mb_s': 14.7}
    assert [t['data'] for t in result['tests']] == ['zero', 'random']
    assert result['errors'] == ['Bad status from weof. ERR=tape_dev.c:962 ioctl MTWEOF error on "Drive-0" '
                                '(/dev/nst0). ERR=No space left on device.']
    assert said == ['btape reported: %s' % result['errors'][0]]
    # the probe and the rewind opened the drive read-only; btape opened it itself, and was found on PATH
    assert blank.opens == [os.O_RDONLY, os.O_RDONLY] and blank.wrote() == []
    # the gate's probe (variable block mode, rewind, read one block, rewind), then the rewind after btape
    assert blank.ops == PROBE + [(W.MTREW, 1)]
    assert _cli.find_tool('btape') == mine


def test_check_mode_runs_only_btape_s_version(tmp_path, monkeypatch, blank):
    btape(tmp_path, monkeypatch, LAB_MA2)
    failed, result = run_module(btape_speed.main, ARGS, monkeypatch, check_mode=True)
    assert not failed and result['changed'] is False
    assert tool_calls(tmp_path) == ['btape -?']
    assert result['msg'] == ('Check mode: would probe the cartridge in /dev/nst0 and, if it may be written, run btape '
                             '"speed file_size=1 nb_file=1 skip_raw" with Maximum Block Size 1048576.')
    assert blank.opens == [] and blank.ops == []


def test_output_that_is_no_speed_test_fails_with_the_output_attached(tmp_path, monkeypatch, blank):
    fill = 'btape/btape_fill__IBM-ULTRIUM-TD3-FreeBSD-64512B-1G-filemarks__1.txt'
    btape(tmp_path, monkeypatch, fill)
    failed, result = run_module(btape_speed.main, ARGS, monkeypatch)
    assert failed
    assert result['msg'] == ('btape ran but printed no speed test (no "Test with ... data" line: this is not btape '
                             'speed output.). Its output is attached; check that the device opened (rc 0).')
    assert 'fill' in result['stdout'] and result['rc'] == 0 and result['rewound'] is True
    assert result['cmd'][-1] == 'tapeops-btape' and result['stderr'] == ''


def test_a_run_cut_before_any_total_finishes_no_test(tmp_path, monkeypatch, blank):
    cut = Derived(open(os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures', LAB_MA2)).read().split(
        'Volume bytes=')[0].split('\n', 3)[3], 'the lab-ma2 run cut before its first "Volume bytes" line')
    btape(tmp_path, monkeypatch, cut)
    failed, result = run_module(btape_speed.main, ARGS, monkeypatch)
    assert failed and result['msg'] == 'btape speed finished no test: see stdout'
    assert result['summary'] == {} and result['rewound'] is True


def test_btape_that_does_not_finish_is_stopped_and_the_tape_rewound(tmp_path, monkeypatch, blank):
    btape(tmp_path, monkeypatch, Sleeps(30))
    failed, result = run_module(btape_speed.main, dict(ARGS, timeout=1), monkeypatch)
    assert failed
    assert result['msg'] == ('%s did not finish within 1 seconds. btape did not finish; the drive may be hung.'
                             % os.path.join(str(tmp_path), 'scripted-bin', 'btape'))
    # the rewind after btape runs before the failure is reported, which says it happened
    assert blank.ops == PROBE + [(W.MTREW, 1)] and result['rewound'] is True
    # btape ran on the drive until it was stopped: it may have written, so the task changed the tape
    assert result['changed'] is True


def test_btape_that_cannot_be_started_changed_nothing(tmp_path, monkeypatch, blank):
    # btape found and then gone when it is run (removed between the lookup and the run): nothing was started, the
    # tape was not written, only rewound
    btape(tmp_path, monkeypatch, LAB_MA2)
    gone = str(tmp_path / 'gone' / 'btape')
    real_run = btape_speed.run

    def run(cmd, **kwargs):
        return real_run([gone] + cmd[1:] if cmd[1:2] == ['-c'] else cmd, **kwargs)
    monkeypatch.setattr(btape_speed, 'run', run)
    failed, result = run_module(btape_speed.main, ARGS, monkeypatch)
    assert failed
    assert result['msg'] == ("Cannot run %s: [Errno 2] No such file or directory: '%s'. btape did not finish; the "
                             "drive may be hung." % (gone, gone))
    assert result['changed'] is False and result['rewound'] is True
    assert blank.ops == PROBE + [(W.MTREW, 1)] and blank.wrote() == []


def test_btape_that_does_not_finish_and_a_rewind_that_fails_are_both_reported(tmp_path, monkeypatch, blank):
    def no_rewind(fd, op, count=1, timeout=None):
        raise OSError(5, 'Input/output error')
    btape(tmp_path, monkeypatch, Sleeps(30))
    monkeypatch.setattr(btape_speed.W, 'mtop', no_rewind)   # the probe still uses the drive's own mtop
    failed, result = run_module(btape_speed.main, dict(ARGS, timeout=1), monkeypatch)
    assert failed and result['msg'].endswith('did not finish within 1 seconds. btape did not finish; the drive may '
                                             'be hung.')
    assert result['rewound'] is False and blank.ops == PROBE


def test_no_btape_on_the_host_says_what_to_install(tmp_path, monkeypatch, blank):
    empty = tmp_path / 'empty-bin'
    empty.mkdir()
    monkeypatch.setenv('PATH', str(empty))
    monkeypatch.setattr(_cli, 'SBIN_DIRS', ())     # a host without bacula-sd: no btape in /usr/sbin either
    failed, result = run_module(btape_speed.main, ARGS, monkeypatch)
    assert failed
    assert result['msg'] == (
        'btape is not installed on this host (not found in %s). Install the bacula-sd package for Bacula '
        '(Debian/Ubuntu: apt install bacula-sd; RHEL: dnf install bacula-storage) or the bareos-storage-tape package '
        'for Bareos (Debian/Ubuntu: apt install bareos-storage-tape; RHEL: dnf install bareos-storage-tape) and run '
        'again.' % empty)
    assert blank.opens == []


@pytest.mark.parametrize('args,msg', [
    ({'file_size_gb': 0}, 'file_size_gb must be a whole number of GB from 1 to 100, got 0.'),
    ({'nb_file': 0}, 'nb_file must be from 1 to 100, got 0.'),
    ({'block_size': 1000}, 'block_size must be a multiple of 1024 between 1024 and 20000000, got 1000.'),
])
def test_bad_input_is_refused_before_anything_runs(tmp_path, monkeypatch, blank, args, msg):
    btape(tmp_path, monkeypatch, LAB_MA2)
    failed, result = run_module(btape_speed.main, dict(ARGS, **args), monkeypatch)
    assert failed and (result['reason'], result['msg']) == ('bad_input', msg)
    assert tool_calls(tmp_path) == [] and blank.opens == []


def test_a_drive_that_fails_the_probe_is_not_given_to_btape(tmp_path, monkeypatch, blank):
    def eio(fd, op, count=1, timeout=None):
        raise OSError(5, 'Input/output error')
    blank.mtop = eio      # the probe's first MTIOCTOP (variable block mode) fails
    monkeypatch.setattr(btape_speed.W, 'mtop', eio)
    btape(tmp_path, monkeypatch, LAB_MA2)
    failed, result = run_module(btape_speed.main, ARGS, monkeypatch)
    assert failed and result['reason'] == 'probe_failed'
    assert result['msg'] == ('Could not probe the cartridge in /dev/nst0: [Errno 5] Input/output error. Check the '
                             'drive (mt status, dmesg).')
    assert tool_calls(tmp_path) == ['btape -?'] and blank.wrote() == []


def test_a_rewind_that_fails_after_btape_is_reported(tmp_path, monkeypatch, blank):
    def no_rewind(fd, op, count=1, timeout=None):
        raise OSError(5, 'Input/output error')
    btape(tmp_path, monkeypatch, LAB_MA2)
    monkeypatch.setattr(btape_speed.W, 'mtop', no_rewind)   # the probe still uses the drive's own mtop
    failed, result = run_module(btape_speed.main, ARGS, monkeypatch)
    assert not failed and result['rewound'] is False
    assert result['summary'] == {'zero_block_mb_s': 11.3, 'random_block_mb_s': 14.7}
    assert blank.ops == PROBE
