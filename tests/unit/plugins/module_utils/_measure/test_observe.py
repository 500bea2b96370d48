# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Observing a drive (module_utils/_measure/_observe.py) on recorded counters and log pages.

The counters:

- LAB_SERIES: the real st driver's counters of lab-ma1's drive read once a second for 30 s while two dd jobs
  wrote through st (16 MiB random, then 16 MiB zeros, each closed by a synchronous file mark, 4 s apart);
  the drive's log pages before and after are the sg_logs *lab-emulated-IBM-ULT3580-TD5-observe-* captures;
- the bareos documentation's tapestat (a real st0 writing 86-89 MiB/s, st1 idle, one report a second,
  transcribed from its screenshot), Monitorix's (a real st0 reading 293440 kB/s) and sysstat issue 291's (an IBM
  LTO-7 on RHEL 7.9 whose application wrote through sg: only io_ns and other_cnt move): each report is one
  interval of counters, summed into the cumulative counters st keeps.

The window (``watch``) runs on a clock of the test's own: its sleep moves the clock, and the reader returns the
recorded sample due at that time.
"""

from __future__ import annotations

import os
import re
import stat

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils import _records
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _observe as O
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_discovery
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _cli
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _sg_logs
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _st_sysfs

from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._tape_fixtures import fixture

LAB_SERIES = 'sysfs_st_stats_series__lab-ma1-emulated-IBM-ULT3580-TD5-two-dd-jobs__1.txt'
LAB_PAGE = 'sg_logs_p0x%s__lab-emulated-IBM-ULT3580-TD5-observe-%s__1.txt'
LAB_PAGE_H = 'sg_logs_p0x%s_H__lab-emulated-IBM-ULT3580-TD5-observe-%s__1.txt'
LAB_SUPPORTED = 'sg_logs_p0x00__lab-emulated-IBM-ULT3580-TD5__1.txt'
ZEROS = dict.fromkeys(_st_sysfs.STAT_FIELDS, 0)


def series_samples(name=LAB_SERIES):
    """``[(t, counters)]`` of a recorded series: ``t=`` lines, then the counters as ``grep . stats/*`` prints them."""
    text = '\n'.join(line for line in fixture('sysfs', name).splitlines() if not line.startswith('# '))
    out = []
    for block in re.split(r'^t=', text, flags=re.M)[1:]:
        head, _sep, body = block.partition('\n')
        out.append((float(head), _st_sysfs.parse_stats_text(body)))
    return out


def cumulative(base, intervals):
    """Samples one second apart: ``base`` and then ``base`` plus each interval's counters added up."""
    samples = [(0.0, dict(base))]
    for i, step in enumerate(intervals, 1):
        counters = dict(samples[-1][1])
        for key, value in step.items():
            counters[key] = value if key == 'in_flight' else counters[key] + value
        samples.append((float(i), counters))
    return samples


def tapestat_intervals(name, device):
    """One interval of st counters per tapestat report of ``device`` (its per-second figures; kB = 1024 bytes)."""
    parsed = _st_sysfs.parse_tapestat(fixture('tapestat', name))
    out = []
    for report in parsed['reports']:
        [row] = [t for t in report['tapes'] if t['device'] == device]
        out.append({'write_byte_cnt': row['write_bytes_s'], 'write_cnt': row['w_s'],
                    'write_ns': int(row['write_pct'] * 1e7), 'read_byte_cnt': row['read_bytes_s'],
                    'read_cnt': row['r_s'], 'read_ns': int(row['read_pct'] * 1e7),
                    'other_cnt': row['other_s'], 'io_ns': int(row['other_pct'] * 1e7)})
    return out


class Clock:
    """A clock that moves only when the window sleeps (``late``: how much longer than asked each sleep takes)."""

    def __init__(self, late=0.0):
        self.now = 1000.0
        self.late = late
        self.sleeps = []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds + self.late


def recorded_reader(samples, clock):
    """The recorded sample due at the clock's time (the last one at or before it)."""
    start = clock()

    def read():
        elapsed = clock() - start + 1e-9
        due = [counters for t, counters in samples if t <= elapsed]
        return dict(due[-1])
    return read


def watch(samples, duration, until_idle=0, interval=1.0, late=0.0):
    clock = Clock(late)
    return O.watch(recorded_reader(samples, clock), O.Window(duration, until_idle, interval), clock, clock.sleep)


# ---------------------------------------------------------------- the series and its figures

def test_the_lab_series_two_jobs_their_gap_and_every_byte():
    samples = series_samples()
    assert len(samples) == 31 and samples[-1][0] == 30.0
    series = O.Series.of(samples)
    figures = O.summarize(samples[0][1], samples[-1][1], series)
    cols = series.columns
    # every byte dd wrote, interval by interval, and the counters' own difference say the same
    assert figures['bytes_written'] == sum(cols['write_byte_cnt']) == 2 * 16777216
    assert figures['st_delta']['write_cnt'] == 128 and figures['bytes_read'] == 0
    # active: job 1 from its first WRITE (interval 3-4) to its synchronous file mark's end (6-7), with the mark in
    # flight at 5 and 6 and nothing completing in 5-6; job 2 from 10-11 to its rewind (13-14)
    assert [i for i, a in enumerate(series.active) if a] == [3, 4, 5, 6, 10, 11, 12, 13]
    assert cols['write_byte_cnt'][5] == 0 and cols['in_flight'][5] == 1
    assert figures['busy_seconds'] == 8.0 and figures['idle'] is False
    assert figures['idle_gaps'] == [{'start_s': 0.0, 'seconds': 3.0, 'where': 'before'},
                                    {'start_s': 7.0, 'seconds': 3.0, 'where': 'between'},
                                    {'start_s': 14.0, 'seconds': 16.0, 'where': 'after'}]
    # file marks, rewinds, the opens of mt and dd: 28 other commands (11 + 5 for job 1, 3 + 9 for job 2)
    assert figures['other_commands'] == 28 == sum(cols['other_cnt'])
    assert figures['mb_s'] == round(33554432 / 8.0 / 1e6, 3) and figures['window_mb_s'] == round(33554432 / 30e6, 3)
    # a forecast replays the bytes of each interval
    record = _records.ObservedWindow(series=series.as_dict())
    rates = record.write_rates_mb_s()
    assert len(rates) == 30 and round(sum(rates), 6) == round(33554432 / 1e6, 6)
    assert rates[10] == 16.777216     # job 2's zeros: all of its blocks completed in one second


def test_a_drive_that_wrote_as_bareos_tapestat_shows_then_idled():
    busy = tapestat_intervals('tapestat_transcribed__bareos-docs-st0-st1__1.txt', 'st0')
    idle = tapestat_intervals('tapestat_transcribed__bareos-docs-st0-st1__1.txt', 'st1')
    samples = cumulative(ZEROS, busy + idle[:5])
    series = O.Series.of(samples)
    figures = O.summarize(samples[0][1], samples[-1][1], series)
    rates_kb = [89088, 90112, 88064, 91136, 89088, 88999, 90112, 90112]
    assert figures['bytes_written'] == sum(rates_kb) * 1024
    assert figures['busy_seconds'] == 8.0
    assert figures['mb_s'] == round(sum(rates_kb) * 1024 / 8 / 1e6, 3)
    assert figures['idle_gaps'] == [{'start_s': 8.0, 'seconds': 5.0, 'where': 'after'}]
    assert _records.ObservedWindow(series=series.as_dict()).write_rates_mb_s()[0] == 89088 * 1024 / 1e6


def test_a_drive_that_reads_as_monitorix_tapestat_shows_is_active_and_writes_nothing():
    [reading] = tapestat_intervals('tapestat__Monitorix-issue394-st0-reading__1.txt', 'st0')
    samples = cumulative(ZEROS, [reading])
    figures = O.summarize(samples[0][1], samples[-1][1], O.Series.of(samples))
    assert figures['bytes_read'] == 293440 * 1024 and figures['bytes_written'] == 0
    assert figures['idle'] is False and figures['busy_seconds'] == 1.0 and figures['mb_s'] == 0.0


def test_an_application_writing_through_sg_moves_only_st_s_other_counters():
    # sysstat issue 291: all the stats files 0 but io_ns and other_cnt; its tapestat said Ot/s 4, %Oa 91
    base = dict(ZEROS, **_st_sysfs.parse_stats_text(fixture('sysfs', 'sysfs_st_stats__sysstat-issue291-IBM-LTO7-RHEL7__1.txt')))
    samples = cumulative(base, [{'other_cnt': 4, 'io_ns': 910000000}] * 5)
    figures = O.summarize(samples[0][1], samples[-1][1], O.Series.of(samples))
    assert figures['bytes_written'] == 0 and figures['busy_seconds'] == 5.0 and figures['other_commands'] == 20
    # the drive's own count of host bytes (LTO-10's compression page) says what st never saw
    counted = _sg_logs.compression_counters(_sg_logs.decode_page(0x1b, _sg_logs.split_all(
        fixture('sg_logs', 'sg_logs_a__IBM-ULT3580-TDA-T3S0-LTO10-TS4500__1.txt'))[0x1b]))
    note = O.cross_check(0, {'page': '0x1b', 'host_written_bytes': counted['host_written_bytes']})
    assert 'received 268435456 bytes' in note and 'through the sg driver' in note
    assert O.cross_check(268435456, {'page': '0x1b', 'host_written_bytes': 268435456}) is None


# ---------------------------------------------------------------- the window

def test_a_duration_window_samples_on_its_grid_and_ends_on_time():
    first, last, series, ended_by = watch(series_samples(), duration=20)
    assert ended_by == 'duration' and len(series) == 20
    assert series.columns['t'] == [float(i) for i in range(20)] and set(series.columns['seconds']) == {1.0}
    assert last['write_byte_cnt'] - first['write_byte_cnt'] == 33554432


def test_until_idle_ends_after_the_job_and_a_gap_shorter_than_it_does_not():
    # 5 s of idle: the 3 s gap between the jobs goes on, the window ends 5 s after job 2 (t = 14 + 5)
    first, last, series, ended_by = watch(series_samples(), duration=30, until_idle=5)
    assert (ended_by, series.columns['t'][-1] + 1) == ('idle', 19.0)
    assert last['write_byte_cnt'] - first['write_byte_cnt'] == 33554432
    # 3 s of idle: the window ends in the gap, with job 1 only: until_idle must be longer than the gaps of a night
    first, last, series, ended_by = watch(series_samples(), duration=30, until_idle=3)
    assert (ended_by, len(series)) == ('idle', 10)
    assert last['write_byte_cnt'] - first['write_byte_cnt'] == 16777216


def test_until_idle_on_a_drive_never_active_lasts_the_duration():
    idle_part = [(t - 14.0, c) for t, c in series_samples() if t >= 14.0]
    first, last, series, ended_by = watch(idle_part, duration=10, until_idle=3)
    figures = O.summarize(first, last, series)
    assert ended_by == 'duration' and len(series) == 10
    assert figures['idle'] is True and figures['busy_seconds'] == 0.0 and figures['mb_s'] is None
    assert figures['idle_gaps'] == [{'start_s': 0.0, 'seconds': 10.0, 'where': 'whole'}]


def test_after_a_sleep_that_overran_the_next_sample_is_due_on_the_grid_again():
    # every sleep takes 1.5 s longer than asked (a loaded host): samples fall behind, nothing is lost
    first, last, series, ended_by = watch(series_samples(), duration=20, late=1.5)
    cols = series.columns
    assert ended_by == 'duration' and cols['t'][:3] == [0.0, 2.5, 4.5] and all(s > 1.0 for s in cols['seconds'])
    assert sum(cols['write_byte_cnt']) == last['write_byte_cnt'] - first['write_byte_cnt'] == 33554432
    assert len(series) < 20


def test_the_drive_gone_mid_window_ends_it_with_what_was_sampled():
    samples = series_samples()
    clock = Clock()
    reader = recorded_reader(samples, clock)
    calls = []

    def read():
        calls.append(1)
        return None if len(calls) > 6 else reader()
    first, last, series, ended_by = O.watch(read, O.Window(30), clock, clock.sleep)
    assert ended_by == 'drive_gone' and len(series) == 5 and last == samples[5][1]


def test_a_drive_without_statistics_at_the_start_is_refused():
    with pytest.raises(O.ObserveError) as info:
        O.watch(lambda: None, O.Window(10), Clock(), lambda s: None)
    assert info.value.reason == 'drive_gone' and 'tape_drive_info' in info.value.msg


@pytest.mark.parametrize('kwargs, words', [
    ({'duration': 0}, 'duration must be a positive number'),
    ({'duration': 10, 'interval': 0}, 'interval must be a positive number'),
    ({'duration': 5, 'interval': 10}, 'longer than the window'),
    ({'duration': 10, 'until_idle': -1}, 'until_idle must be a number'),
    ({'duration': 10, 'until_idle': 1, 'interval': 2}, 'shorter than one interval'),
    ({'duration': 10, 'interval': float('nan')}, 'interval must be a positive number'),
    ({'duration': float('inf')}, 'duration must be a positive number'),
])
def test_a_window_that_is_not_one_is_refused_saying_what_to_give(kwargs, words):
    with pytest.raises(O.ObserveError) as info:
        O.Window(**kwargs)
    assert words in info.value.msg and info.value.reason == 'bad_window'


# ---------------------------------------------------------------- the drive's own counters (LOG SENSE)

def sg_logs_runner(pages):
    """A runner answering ``sg_logs [-H] -p 0xNN /dev/sg0`` with recorded pages: ``{'0x1b': fixture, ...}``."""
    calls = []

    def runner(cmd):
        calls.append(cmd)
        code = cmd[cmd.index('-p') + 1]
        name = pages.get(code)
        if name is None:
            return _cli.CliResult(cmd, 5, b'', b'illegal request')
        if isinstance(name, tuple):
            return _cli.CliResult(cmd, name[0], b'', name[1].encode())
        text = '\n'.join(line for line in fixture('sg_logs', name).splitlines() if not line.startswith('# '))
        return _cli.CliResult(cmd, 0, (text + '\n').encode(), b'')
    runner.calls = calls
    return runner


def lab_pages(when):
    pages = dict(('0x%s' % p, LAB_PAGE % (p, when)) for p in ('02', '1b', '2e'))
    pages.update(('0x%s' % p, LAB_PAGE_H % (p, when)) for p in ('32', '34'))
    pages['0x00'] = LAB_SUPPORTED
    return _tape_discovery.read_log_pages('/dev/sg0', sg_logs_runner(pages), pages=O.OBSERVE_PAGES)


def test_the_lab_drive_s_own_counters_over_the_two_jobs():
    figures, unknown = O.drive_counters(lab_pages('before'), lab_pages('after'))
    assert unknown == {}
    # 16 MiB random stored as it is, 16 MiB of zeros down to almost nothing: 33554432 / 16851776
    assert figures['compression'] == {'page': '0x1b', 'host_written_bytes': 33554432, 'tape_written_bytes': 16851776,
                                      'ratio': 1.991}
    assert figures['compression_ratio'] == 1.991
    # the drive's own write ratio on the page after (x100) says the same
    after = lab_pages('after')['pages']['0x1b']
    assert after['write_compression_ratio_x100'] == 199
    assert figures['backhitches'] == 1
    assert figures['write_errors']['total_bytes_processed'] == 33554432
    assert figures['write_errors']['total_uncorrected_errors'] == 0
    assert figures['tape_alert'] == {'active_before': [], 'active_after': [], 'raised': []}
    # the drive's host bytes and st's agree: no note
    assert O.cross_check(33554432, figures['compression']) is None


def test_the_lto_page_0x32_read_as_hex_gives_what_the_ssc_page_gives():
    before, after = lab_pages('before'), lab_pages('after')
    for pages in (before, after):
        del pages['pages']['0x1b']
    figures, _unknown = O.drive_counters(before, after)
    assert figures['compression'] == {'page': '0x32', 'host_written_bytes': 33554432, 'tape_written_bytes': 16851776,
                                      'ratio': 1.991}


def test_another_cartridge_loaded_in_the_window_makes_the_drive_s_figures_unknown():
    figures, unknown = O.drive_counters(lab_pages('after'), lab_pages('before'))
    assert figures['compression_ratio'] is None and figures['backhitches'] is None
    assert 'went back' in unknown['compression_ratio'] and 'went back' in unknown['backhitches']
    assert 'went back' in unknown['write_errors']


def test_a_real_hp_drive_has_no_back_hitch_counter_the_collection_reads():
    pages = {'0x00': 'sg_logs_p0x00__HP-Ultrium6-SCSI-35GD-nomedia__1.txt',
             '0x02': 'sg_logs_p0x02__HP-Ultrium6-SCSI-35GD-FUJI-LTO6-loaded__1.txt',
             '0x1b': 'sg_logs_p0x1b__HP-Ultrium6-SCSI-35GD-FUJI-LTO6-loaded__1.txt',
             '0x32': 'sg_logs_p0x32__HP-Ultrium6-SCSI-35GD-FUJI-LTO6-loaded__1.txt',
             '0x34': 'sg_logs_p0x34__HP-Ultrium6-SCSI-35GD-nomedia__1.txt'}
    read = _tape_discovery.read_log_pages('/dev/sg0', sg_logs_runner(pages), pages=O.OBSERVE_PAGES)
    figures, unknown = O.drive_counters(read, read)
    assert unknown['backhitches'] == O.NO_BACKHITCH_COUNTER
    assert unknown['compression_ratio'] == 'the drive received no data in the window'
    assert figures['compression'] == {'page': '0x1b', 'host_written_bytes': 0, 'tape_written_bytes': 0, 'ratio': None}
    assert figures['write_errors'] == dict.fromkeys(figures['write_errors'], 0) and figures['write_errors']
    # the HP lists 0x2e (its page 0x00) but sg_logs failed on it here
    assert unknown['tape_alert'] == 'sg_logs failed on the TapeAlert log page: 0x2e: illegal request'


def test_a_drive_without_log_sense_makes_every_drive_figure_unknown_saying_why():
    tgt = ('0x00', (5, 'log sense: Illegal request, Invalid opcode'))
    read = _tape_discovery.read_log_pages('/dev/sg0', sg_logs_runner(dict([tgt])), pages=O.OBSERVE_PAGES)
    figures, unknown = O.drive_counters(read, read)
    assert set(unknown) == {'compression_ratio', 'backhitches', 'write_errors', 'tape_alert'}
    assert all(v.startswith('the drive answers no LOG SENSE (') for v in unknown.values()), unknown
    assert not any(figures.values())


def test_a_drive_that_does_not_list_the_compression_pages_says_so():
    before, after = lab_pages('before'), lab_pages('after')
    for pages in (before, after):
        pages['supported'] = [p for p in pages['supported'] if p not in (0x1b, 0x32)]
        pages['pages'].pop('0x1b')
        pages['pages'].pop('0x32')
    _figures, unknown = O.drive_counters(before, after)
    assert unknown['compression_ratio'] == ('the drive has no data compression log page (it does not list page 0x1b '
                                            'or 0x32)')


def test_pages_not_read_make_the_drive_figures_unknown_with_the_reason_given():
    figures, unknown = O.drive_counters(None, None, 'log_pages=false: the drive\'s log pages were not read')
    assert figures['compression'] is None and unknown['tape_alert'].startswith('log_pages=false')
    _figures, unknown = O.drive_counters(lab_pages('before'), None)
    assert unknown['compression_ratio'] == 'the drive\'s log pages were not read both before and after the window'


def test_data_still_in_the_drive_s_buffer_gives_no_ratio_and_says_why():
    before = lab_pages('before')
    after = lab_pages('before')
    after['pages']['0x1b'] = dict(after['pages']['0x1b'], megabytes_transferred_from_server=12,
                                  bytes_transferred_from_server=0)
    figures, unknown = O.drive_counters(before, after)
    assert figures['compression']['host_written_bytes'] == 12000000 and figures['compression_ratio'] is None
    assert 'still in its buffer' in unknown['compression_ratio']


# ---------------------------------------------------------------- the drive identified, never opened

def fake_tape_sys(root, name='nst0', minor=128, stats=True, dev_type='1', sg='sg0'):
    """One drive's sysfs as the kernel lays it out: its SCSI device, the st node ``name``, /sys/dev/char."""
    device = root / 'devices' / 'platform' / 'host0' / 'target0:0:1' / '0:0:1:0'
    device.mkdir(parents=True, exist_ok=True)
    for attr, value in (('type', dev_type), ('vendor', 'IBM     '), ('model', 'ULT3580-TD5     '), ('rev', 'G350')):
        (device / attr).write_text(value + '\n')
    if sg:
        (device / 'scsi_generic' / sg).mkdir(parents=True, exist_ok=True)
    node = root / 'class' / 'scsi_tape' / name
    node.mkdir(parents=True)
    (node / 'device').symlink_to(device)
    if stats:
        (node / 'stats').mkdir()
        for field in _st_sysfs.STAT_FIELDS:
            (node / 'stats' / field).write_text('0\n')
    chardir = root / 'dev' / 'char'
    chardir.mkdir(parents=True, exist_ok=True)
    (chardir / ('9:%d' % minor)).symlink_to(node)
    return str(root)


class FakeStat:
    def __init__(self, mode, major=0, minor=0):
        self.st_mode = mode
        self.st_rdev = os.makedev(major, minor)


def st_stat(minor):
    return lambda path: FakeStat(stat.S_IFCHR | 0o660, 9, minor)


@pytest.mark.parametrize('device, name, minor', [
    ('/dev/nst0', 'nst0', 128),
    ('nst0', 'nst0', 128),
    ('/dev/tape/by-id/scsi-35000e11167f7b001-nst', 'nst0', 128),
    # the auto-rewinding node: only stat()ed, never opened, so it cannot rewind anything; same counters
    ('/dev/st0', 'st0', 0),
])
def test_the_drive_is_identified_from_stat_and_sysfs(tmp_path, device, name, minor):
    root = fake_tape_sys(tmp_path, name=name, minor=minor)
    seen = []

    def stat_func(path):
        seen.append(path)
        return st_stat(minor)(path)
    drive = O.identify(device, sys_root=root, stat_func=stat_func)
    assert drive == {'nst': '/dev/nst0', 'name': name, 'stats_dir': os.path.join(root, 'class', 'scsi_tape', name,
                                                                                 'stats'),
                     'sg': '/dev/sg0', 'hctl': '0:0:1:0', 'vendor': 'IBM', 'product': 'ULT3580-TD5',
                     'revision': 'G350'}
    assert seen == [device if '/' in device else '/dev/' + device]


def test_a_kernel_without_st_statistics_is_refused_saying_which_kernel_has_them(tmp_path):
    root = fake_tape_sys(tmp_path, stats=False)
    with pytest.raises(O.ObserveError) as info:
        O.identify('/dev/nst0', sys_root=root, stat_func=st_stat(128))
    assert info.value.reason == 'no_st_stats'
    assert 'Linux 4.2' in info.value.msg and os.uname()[2] in info.value.msg and '/stats is missing' in info.value.msg


@pytest.mark.parametrize('device, stat_result, reason, words', [
    ('/dev/sda', FakeStat(stat.S_IFBLK | 0o660, 8, 0), 'block_device', 'a disk or a partition'),
    ('/dev/sg0', FakeStat(stat.S_IFCHR | 0o660, 21, 0), 'sg_node', 'SCSI generic'),
    ('/dev/null', FakeStat(stat.S_IFCHR | 0o666, 1, 3), 'memory_device', 'memory device'),
])
def test_what_is_not_a_tape_node_is_refused_saying_what_to_give(tmp_path, device, stat_result, reason, words):
    with pytest.raises(O.ObserveError) as info:
        O.identify(device, sys_root=str(tmp_path), stat_func=lambda p: stat_result)
    assert info.value.reason == reason and words in info.value.msg
    assert 'Refusing to write' not in info.value.msg
    assert info.value.msg.endswith(O.OBSERVE_HINT.strip())


def test_an_st_node_of_a_device_that_is_not_a_tape_is_refused(tmp_path):
    root = fake_tape_sys(tmp_path, dev_type='8')
    with pytest.raises(O.ObserveError) as info:
        O.identify('/dev/nst0', sys_root=root, stat_func=st_stat(128))
    assert info.value.reason == 'not_sequential' and 'sequential-access' in info.value.msg


def test_a_missing_node_is_refused_naming_the_module_that_lists_drives(tmp_path):
    with pytest.raises(O.ObserveError) as info:
        O.identify(str(tmp_path / 'nst9'), sys_root=str(tmp_path))
    assert info.value.reason == 'missing' and 'tape_drive_info' in info.value.msg
