# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""tape_drive_observe through its main(), on a recorded drive: the real reader, runner and parsers.

The drive is lab-ma1's (IBM ULT3580-TD5, /dev/nst0 = sg0). Its sysfs is laid out under tmp_path and
_observe.SYS_ROOT points at it; its st statistics files hold, at each moment of the window, the counters the
lab recorded once a second while two dd jobs wrote (tests/unit/fixtures/sysfs/sysfs_st_stats_series__lab-ma1-*):
the window's sleep (_observe.SLEEP) moves the clock and writes the sample due then. sg_logs is a script first on
PATH printing the drive's pages as the lab captured them before the jobs, and after them once the window has
begun (module_harness.scripted_tools). A process of a fake /proc holds the drive's node open, as a backup's
storage daemon does: its descriptor is /dev/null, whose device number the fake sysfs gives the nst0 node.

Every open() of the module is recorded: none is of a /dev node but /dev/null (the tools' stdin).
"""

from __future__ import annotations

import builtins
import os
import re
import stat

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _observe
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _st_sysfs
from ansible_collections.tapeops.qualify.plugins.modules import tape_drive_observe

from module_harness import fixture_text, module_warnings, run_module, scripted_tools, tool_calls

LAB_SERIES = 'sysfs/sysfs_st_stats_series__lab-ma1-emulated-IBM-ULT3580-TD5-two-dd-jobs__1.txt'
LAB_PAGE = 'sg_logs_p0x%s__lab-emulated-IBM-ULT3580-TD5-observe-%s__1.txt'
LAB_PAGE_H = 'sg_logs_p0x%s_H__lab-emulated-IBM-ULT3580-TD5-observe-%s__1.txt'
LAB_SUPPORTED = 'sg_logs_p0x00__lab-emulated-IBM-ULT3580-TD5__1.txt'


def series_samples():
    """``[(t, counters)]`` of the recorded series (as tests/unit/plugins/module_utils/_measure/test_observe.py reads it)."""
    out = []
    for block in re.split(r'^t=', fixture_text(LAB_SERIES), flags=re.M)[1:]:
        head, _sep, body = block.partition('\n')
        out.append((float(head), _st_sysfs.parse_stats_text(body)))
    return out


SAMPLES = series_samples()
REAL_OPEN = builtins.open     # the test's own writes of the drive's counters, not recorded as the module's opens


def fake_tape_sys(root, stats=True):
    """lab-ma1's drive in sysfs as the kernel lays it out: its SCSI device (sg0), nst0, /sys/dev/char/9:128."""
    device = root / 'devices' / 'platform' / 'host0' / 'target0:0:1' / '0:0:1:0'
    (device / 'scsi_generic' / 'sg0').mkdir(parents=True)
    for attr, value in (('type', '1'), ('vendor', 'IBM     '), ('model', 'ULT3580-TD5     '), ('rev', 'G350')):
        (device / attr).write_text(value + '\n')
    node = root / 'class' / 'scsi_tape' / 'nst0'
    node.mkdir(parents=True)
    (node / 'device').symlink_to(device)
    if stats:
        (node / 'stats').mkdir()
    (root / 'dev' / 'char').mkdir(parents=True)
    (root / 'dev' / 'char' / '9:128').symlink_to(node)
    return str(root)


def sg_logs_cases(when):
    cases = [('-p 0x00 /dev/sg0', 'sg_logs/' + LAB_SUPPORTED, 0)]
    cases += [('-p 0x%s /dev/sg0' % p, 'sg_logs/' + LAB_PAGE % (p, when), 0) for p in ('02', '1b', '2e')]
    cases += [('-H -p 0x%s /dev/sg0' % p, 'sg_logs/' + LAB_PAGE_H % (p, when), 0) for p in ('32', '34')]
    return cases


class RecordedDrive:
    """The drive's stats files, the clock, and the log pages, moving as the lab recorded them."""

    def __init__(self, tmp_path, monkeypatch, start=0.0):
        self.root = fake_tape_sys(tmp_path / 'sys')
        self.stats = os.path.join(self.root, 'class', 'scsi_tape', 'nst0', 'stats')
        # the node's device number is /dev/null's, so the fake /proc's descriptor on /dev/null holds "nst0"
        null = os.stat(os.devnull).st_rdev
        with open(os.path.join(self.root, 'class', 'scsi_tape', 'nst0', 'dev'), 'w') as handle:
            handle.write('%d:%d\n' % (os.major(null), os.minor(null)))
        proc = tmp_path / 'proc' / '4242'
        (proc / 'fd').mkdir(parents=True)
        (proc / 'fd' / '3').symlink_to(os.devnull)
        (proc / 'comm').write_text('bacula-sd\n')
        self.now = start
        self.sleeps = 0
        self.tmp_path, self.monkeypatch = tmp_path, monkeypatch
        self.write(start)
        monkeypatch.setattr(_observe, 'SYS_ROOT', self.root)
        monkeypatch.setattr(_observe, 'PROC_ROOT', str(tmp_path / 'proc'))
        monkeypatch.setattr(_observe, 'STAT', lambda path: FakeStat())
        monkeypatch.setattr(_observe, 'CLOCK', lambda: self.now)
        monkeypatch.setattr(_observe, 'WALL', lambda: 1795727565.0 + self.now)
        monkeypatch.setattr(_observe, 'SLEEP', self.sleep)
        scripted_tools(tmp_path, monkeypatch, {'sg_logs': sg_logs_cases('before')})

    def write(self, now):
        due = [counters for t, counters in SAMPLES if t <= now + 1e-9][-1]
        for field in _st_sysfs.STAT_FIELDS:
            with REAL_OPEN(os.path.join(self.stats, field), 'w') as handle:
                handle.write('%d\n' % due[field])

    def sleep(self, seconds):
        if not self.sleeps:
            # the window has begun: the pages read from now on are those after the jobs
            scripted_tools(self.tmp_path, self.monkeypatch, {'sg_logs': sg_logs_cases('after')})
        self.sleeps += 1
        self.now += seconds
        self.write(self.now)


class FakeStat:
    st_mode = stat.S_IFCHR | 0o660
    st_rdev = os.makedev(9, 128)


@pytest.fixture
def opened(monkeypatch):
    """Every path the module opens (builtins.open and os.open)."""
    paths = []
    real_open, real_os_open = builtins.open, os.open

    def record_open(file, *args, **kwargs):
        paths.append(str(file))
        return real_open(file, *args, **kwargs)

    def record_os_open(path, *args, **kwargs):
        paths.append(str(path))
        return real_os_open(path, *args, **kwargs)
    monkeypatch.setattr(builtins, 'open', record_open)
    monkeypatch.setattr(os, 'open', record_os_open)
    return paths


def test_two_jobs_observed_until_idle_every_byte_and_the_drive_s_own_figures(tmp_path, monkeypatch, opened):
    drive = RecordedDrive(tmp_path, monkeypatch)
    said = module_warnings(monkeypatch)
    failed, result = run_module(tape_drive_observe.main, {'device': '/dev/nst0', 'duration': 60, 'until_idle': 5},
                                monkeypatch)
    assert not failed, result
    assert result['changed'] is False and result['status'] == 'observed' and result['idle'] is False
    assert result['drive']['sg'] == '/dev/sg0' and result['drive']['nst'] == '/dev/nst0'
    # the window: until 5 s after job 2's rewind (t = 14 + 5)
    window = result['window']
    assert (window['ended_by'], window['seconds'], window['samples']) == ('idle', 19.0, 20)
    assert window['started_at'] == '2026-11-26T21:12:45+00:00' and window['until_idle_s'] == 5.0
    assert drive.sleeps == 19
    # every byte of both jobs, the counters' difference, and the series agree
    assert result['bytes_written'] == result['st_delta']['write_byte_cnt'] == sum(
        result['series']['write_byte_cnt']) == 33554432
    assert result['busy_seconds'] == 8.0 and result['other_commands'] == 28
    assert [g['where'] for g in result['idle_gaps']] == ['before', 'between', 'after']
    assert len(set(len(v) for v in result['series'].values())) == 1 and len(result['series']['t']) == 19
    # what the drive counted itself
    assert result['compression_ratio'] == 1.991 and result['backhitches'] == 1
    assert result['compression']['host_written_bytes'] == result['bytes_written']
    assert result['tape_alert']['raised'] == [] and result['write_errors']['total_bytes_processed'] == 33554432
    assert result['unknown'] == {} and result['notes'] == [] and said == []
    # the storage daemon that held the drive, at the start and the end
    assert result['holders'] == [{'pid': 4242, 'command': 'bacula-sd', 'node': 'nst0', 'seen': ['start', 'end']}]
    # read-only: LOG SENSE pages before and after, nothing else run, no /dev node opened
    calls = tool_calls(tmp_path)
    assert calls and all(c.startswith('sg_logs ') and ' -p 0x' in ' ' + c.split(' ', 1)[1] for c in calls)
    assert len(calls) == 2 * 6
    # /dev/null is the tools' stdin (subprocess.DEVNULL)
    assert [p for p in opened if p.startswith('/dev/') and p != os.devnull] == []
    assert os.path.join(drive.stats, 'write_byte_cnt') in opened


def test_check_mode_says_what_it_would_watch_and_reads_nothing(tmp_path, monkeypatch, opened):
    drive = RecordedDrive(tmp_path, monkeypatch)
    failed, result = run_module(tape_drive_observe.main, {'device': '/dev/nst0', 'duration': 600}, monkeypatch,
                                check_mode=True)
    assert not failed, result
    assert result['status'] == 'planned' and result['changed'] is False
    assert result['drive']['log_pages'] == ['0x02', '0x1b', '0x2e', '0x32', '0x34']
    assert result['window']['duration_s'] == 600.0 and result['window']['started_at'] is None
    assert result['series'] is None and result['bytes_written'] is None
    assert 'check mode' in result['unknown']['window']
    assert tool_calls(tmp_path) == [] and drive.sleeps == 0
    assert not [p for p in opened if p.startswith('/dev/') or p.startswith(drive.stats)]


def test_without_log_pages_only_sysfs_is_read_and_the_drive_s_figures_are_unknown(tmp_path, monkeypatch):
    RecordedDrive(tmp_path, monkeypatch)
    failed, result = run_module(tape_drive_observe.main, {'device': 'nst0', 'duration': 8, 'log_pages': False},
                                monkeypatch)
    assert not failed, result
    assert tool_calls(tmp_path) == []
    assert result['bytes_written'] == 16777216 and result['window']['ended_by'] == 'duration'
    assert result['compression_ratio'] is None and result['unknown']['compression_ratio'].startswith('log_pages=false')
    assert result['log_pages_before'] is None and result['drive']['log_pages'] == []


def test_a_window_ended_while_the_drive_works_says_so(tmp_path, monkeypatch):
    RecordedDrive(tmp_path, monkeypatch)
    said = module_warnings(monkeypatch)
    failed, result = run_module(tape_drive_observe.main, {'device': '/dev/nst0', 'duration': 12}, monkeypatch)
    assert not failed, result
    note = 'the window ended while the drive was still active: the job went on after it'
    assert result['notes'] == [note] and said == ['/dev/nst0: ' + note]


def test_a_window_begun_while_the_drive_writes_says_the_job_is_not_whole_in_it(tmp_path, monkeypatch):
    """The window begins at the recording's third second, as the first job's first WRITE completes in it."""
    RecordedDrive(tmp_path, monkeypatch, start=3.0)
    said = module_warnings(monkeypatch)
    failed, result = run_module(tape_drive_observe.main, {'device': '/dev/nst0', 'duration': 20}, monkeypatch)
    assert not failed, result
    assert result['idle_gaps'][0]['where'] != 'before' and result['bytes_written'] == 2 * 16777216
    note = ("the drive was writing in the window's first second: a job that began before the window is not whole "
            "in it (start the window before the job)")
    assert result['notes'] == [note] and said == ['/dev/nst0: ' + note]


def test_a_kernel_without_st_statistics_fails_saying_what_to_do(tmp_path, monkeypatch):
    root = fake_tape_sys(tmp_path / 'sys', stats=False)
    monkeypatch.setattr(_observe, 'SYS_ROOT', root)
    monkeypatch.setattr(_observe, 'STAT', lambda path: FakeStat())
    failed, result = run_module(tape_drive_observe.main, {'device': '/dev/nst0'}, monkeypatch)
    assert failed and result['reason'] == 'no_st_stats' and 'Linux 4.2' in result['msg']
    assert 'exception' not in result


@pytest.mark.parametrize('args, reason, words', [
    ({'device': '/dev/nst0', 'duration': 0}, 'bad_window', 'duration must be a positive number'),
    ({'device': '/dev/nst0', 'interval': 0.0}, 'bad_window', 'interval must be a positive number'),
    ({'device': '/dev/nst0', 'tool_timeout': 0}, 'bad_input', 'tool_timeout must be a positive number'),
])
def test_bad_input_fails_saying_what_to_give(tmp_path, monkeypatch, args, reason, words):
    RecordedDrive(tmp_path, monkeypatch)
    failed, result = run_module(tape_drive_observe.main, args, monkeypatch)
    assert failed and result['reason'] == reason and words in result['msg'] and 'exception' not in result
