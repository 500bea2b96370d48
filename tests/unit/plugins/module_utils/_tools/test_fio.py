# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Pure fio helpers, on real fio output (tests/unit/fixtures/fio/, headers say where each came from)."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _fio

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'fixtures', 'fio')


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return handle.read()


# -- JSON ---------------------------------------------------------------

def test_parse_json_loop0_two_streams_recorded_here():
    parsed = _fio.parse_json(fixture('fio_json__loop0-ext4-blkio30MBs-2streams__1.txt'))
    assert parsed['fio_version'] == 'fio-3.33'
    assert [j['name'] for j in parsed['jobs']] == ['stream0', 'stream1']
    s0, s1 = parsed['jobs']
    assert (s0['io_bytes'], s0['runtime_ms']) == (89772415, 6015)
    assert (s1['io_bytes'], s1['runtime_ms']) == (89930706, 6013)
    assert s0['error'] == 0 and s1['error'] == 0
    # Both streams shared a 30 MB/s throttle: together they got 29.9 MB/s.
    total = (s0['io_bytes'] + s1['io_bytes']) / 1e6 / 6.015
    assert total == pytest.approx(29.88, abs=0.01)


def test_parse_json_metrics_operator_kind_randrw_fio_3_28():
    parsed = _fio.parse_json(fixture('fio_json__metrics-operator-kind-randrw-4k-qd64__1.txt'))
    assert parsed['fio_version'] == 'fio-3.28'
    job = parsed['jobs'][0]
    assert job['name'] == 'test'
    assert (job['io_bytes'], job['runtime_ms'], job['bw_bytes']) == (3219128320, 4621, 696630235)


def test_parse_json_cbt_nvme8n6_json_normal_preamble_and_trailer():
    # fio --output-format=json,normal: a text preamble before and the normal report after the JSON.
    parsed = _fio.parse_json(fixture('fio_json_normal__CBT-RawFio-nvme8n6-randwrite-4k-qd8__1.txt'))
    assert parsed['fio_version'] == 'fio-3.42-6-g219f'
    job = parsed['jobs'][0]
    assert job['name'] == '/dev/nvme8n6'
    assert job['io_bytes'] == 0  # a write job: nothing read


@pytest.mark.parametrize('text, words', [
    ('', 'did not print JSON'),
    ('fio: pid=0, err=2/file:filesetup.c:1155, func=total_file_size, error=No such file\n', 'did not print JSON'),
    ('{\n  "fio version" : "fio-3.33",\n  "jobs" : [\n', 'truncated'),
    ('{"fio version": "fio-3.33", "jobs": []}', 'no jobs'),
])
def test_parse_json_bad_output_says_what_happened(text, words):
    with pytest.raises(_fio.FioParseError, match=words):
        _fio.parse_json(text)


# -- logs -----------------------------------------------------------------

def test_parse_log_loop0_stream0_avg1000ms_five_columns():
    entries = _fio.parse_log(fixture('fio_bw_log__loop0-ext4-blkio30MBs-stream0__1.txt'))
    assert entries[0] == (1001, 14005, 0, 0)
    assert [e[0] for e in entries] == [1001, 2000, 3000, 4000, 5001, 6005]


def test_series_two_streams_sum_to_the_30_mb_s_throttle():
    s0 = _fio.series_mb_s(_fio.parse_log(fixture('fio_bw_log__loop0-ext4-blkio30MBs-stream0__1.txt')))
    s1 = _fio.series_mb_s(_fio.parse_log(fixture('fio_bw_log__loop0-ext4-blkio30MBs-stream1__1.txt')))
    assert len(s0) == len(s1) == 6
    assert s0[0] == pytest.approx(14005 * 1024 / 1e6, abs=0.001)
    total = _fio.sum_series([s0, s1])
    for value in total:
        assert 25.0 < value < 35.0
    assert sum(total) / len(total) == pytest.approx(30.0, rel=0.05)


def test_parse_log_fio_issue385_per_io_log_fio_2_20():
    entries = _fio.parse_log(fixture('fio_bw_log__fio-issue385-randrw-8k__1.txt'))
    assert entries[:3] == [(1, 10666, 1, 8192), (1, 9298, 1, 8192), (51, 162, 0, 8192)]
    reads = [e for e in entries if e[2] == 0]
    writes = [e for e in entries if e[2] == 1]
    assert len(reads) + len(writes) == len(entries) == 21  # the capture holds 21 lines
    # All within the first second: one window, read values averaged.
    series = _fio.series_mb_s(entries, ddir=0)
    assert len(series) == 1
    assert series[0] == pytest.approx(sum(e[1] for e in reads) / float(len(reads)) * 1024 / 1e6, abs=0.001)


def test_series_fio_issue1058_avg100ms_iops_log_on_100ms_windows():
    entries = _fio.parse_log(fixture('fio_iops_log__fio-issue1058-randread-vdc-avg100ms__1.txt'))
    assert entries[0] == (1101, 252326, 0, 0)
    series = _fio.series_mb_s(entries, window_ms=100)
    # Windows 1..10 hold no entry (the log starts at 1101 ms): reported as stalls (0.0).
    assert series[:10] == [0.0] * 10
    assert series[10] == pytest.approx(252326 * 1024 / 1e6, abs=0.001)


def test_series_gap_is_a_zero_window():
    entries = [(1000, 1000, 0, 0), (2000, 1000, 0, 0), (4001, 1000, 0, 0)]
    assert _fio.series_mb_s(entries) == [1.024, 1.024, 0.0, 1.024]


def test_parse_log_rejects_garbage_with_line_number():
    with pytest.raises(_fio.FioParseError, match='line 2'):
        _fio.parse_log('1000, 5, 0, 0\nhello world\n')
    with pytest.raises(_fio.FioParseError, match='line 1 has 2 fields'):
        _fio.parse_log('1000, 5\n')


# -- math -------------------------------------------------------------------

@pytest.mark.parametrize('values, pct, expected', [
    ([1, 2, 3, 4, 5], 50, 3.0),
    ([1, 2, 3, 4, 5], 0, 1.0),
    ([1, 2, 3, 4, 5], 100, 5.0),
    ([10, 20], 5, 10.5),
    (list(range(1, 101)), 5, 5.95),
    ([7.5], 5, 7.5),
])
def test_percentile_matches_numpy_linear(values, pct, expected):
    assert _fio.percentile(values, pct) == pytest.approx(expected)


def test_percentile_empty_and_bad_pct():
    assert _fio.percentile([], 5) is None
    with pytest.raises(ValueError):
        _fio.percentile([1], 101)


def test_summarize_drops_last_partial_window_from_the_floor():
    series = [100.0, 90.0, 95.0, 3.0]  # the last second: the stream ran out of files
    out = _fio.summarize(288000000, 3100, series, 12)
    assert out['min_mb_s'] == 90.0
    assert out['p5_mb_s'] == pytest.approx(90.5)
    assert out['mean_mb_s'] == pytest.approx(92.903, abs=0.001)
    assert out['files_per_s'] == pytest.approx(3.871, abs=0.001)
    assert out['series_mb_s'] == series


def test_summarize_short_run_without_series_uses_mean():
    out = _fio.summarize(5000000, 500, [], 3)
    assert out['mean_mb_s'] == out['p5_mb_s'] == out['min_mb_s'] == 10.0


def test_files_completed_counts_whole_files_in_order():
    assert _fio.files_completed([10, 20, 30], 0) == 0
    assert _fio.files_completed([10, 20, 30], 29) == 1
    assert _fio.files_completed([10, 20, 30], 30) == 2
    assert _fio.files_completed([10, 20, 30], 60) == 3


# -- job building -------------------------------------------------------------

def test_whole_file_bssplit_has_every_power_of_two_and_sums_to_100():
    split = _fio.whole_file_bssplit(65536)
    parts = [p.split('/') for p in split.split(':')]
    sizes = [int(part[0]) for part in parts]
    assert sizes == [65536] + [2 ** i for i in range(15, -1, -1)]
    assert sum(int(part[1]) for part in parts) == 100
    direct = _fio.whole_file_bssplit(65536, min_size=4096)
    assert [int(p.split('/')[0]) for p in direct.split(':')] == [65536, 32768, 16384, 8192, 4096]


def test_whole_file_bssplit_bad_sizes():
    with pytest.raises(ValueError):
        _fio.whole_file_bssplit(4096, min_size=8192)


def test_readable_bytes_direct_loses_the_sub_block_tail():
    assert _fio.readable_bytes(10000) == 10000
    assert _fio.readable_bytes(10000, 4096) == 8192
    assert _fio.readable_bytes(100, 4096) == 0


@pytest.mark.parametrize('path, alias', [
    ('/srv/a/b.txt', False),
    ('/srv/a/2024-01-01 10:00.log', False),
    ('/srv/#recycle/x', True),
    ('/srv/a;b', True),
    ('/srv/${HOME}', True),
    ('/srv/trail ', True),
    ('/srv/new\nline', True),
    ('/srv/i$j', False),
])
def test_needs_alias_matches_what_fio_3_33_parses(path, alias):
    assert _fio.needs_alias(path) is alias


def test_escape_filename_escapes_colons_only():
    assert _fio.escape_filename('/srv/a:b\\c') == '/srv/a\\:b\\c'
    with pytest.raises(ValueError):
        _fio.escape_filename('/srv/#x')


def test_alloc_size_default_for_small_trees_and_grows_for_large():
    assert _fio.alloc_size_kib(['/srv/f%d' % i for i in range(1000)]) == _fio.FIO_DEFAULT_ALLOC_KIB
    # 300,000 72-byte paths: fio 3.33 aborts at the default (measured), so more is asked for.
    big = ['/srv/backup-src/some/deeper/directory/structure/with-a-name-%08d.dat' % i for i in range(300000)]
    assert _fio.alloc_size_kib(big) > _fio.FIO_DEFAULT_ALLOC_KIB
    assert _fio.alloc_size_kib(big) % 1024 == 0


def test_build_job_layout():
    job = _fio.build_job([
        {'name': 'stream0', 'files': ['/srv/a/1', '/srv/a/x:y'], 'byte_budget': 1000000},
        {'name': 'stream1', 'files': ['/srv/b/1']},
    ], block_size=131072, time_budget_s=30, log_prefix_dir='/tmp/logs/')
    lines = job.splitlines()
    assert 'ioengine=psync' in lines and 'file_service_type=sequential' in lines and 'openfiles=1' in lines
    assert 'runtime=30' in lines and 'log_avg_msec=1000' in lines and 'invalidate=1' in lines
    assert 'direct=0' in lines and 'bs_unaligned=1' in lines
    assert lines[lines.index('[stream0]') + 1] == 'write_bw_log=/tmp/logs/stream0'
    assert 'io_size=1000000' in lines
    assert 'filename=/srv/a/x\\:y' in lines
    assert lines.index('[stream1]') > lines.index('filename=/srv/a/1')
    assert job.count('io_size=') == 1


def test_build_job_rejects_empty_and_bad_names():
    with pytest.raises(ValueError, match='No streams'):
        _fio.build_job([])
    with pytest.raises(ValueError, match='no files'):
        _fio.build_job([{'name': 's', 'files': []}])
    with pytest.raises(ValueError, match='job name'):
        _fio.build_job([{'name': 'a b', 'files': ['/x']}])


@pytest.mark.skipif(shutil.which('fio') is None, reason='fio is not installed (apt install fio)')
def test_built_job_is_accepted_by_real_fio_and_reads_every_byte(tmp_path):
    """The job text, run by the real fio: all bytes of odd-sized and tiny files are read."""
    sizes = [1, 100, 4095, 65535, 65537, 300001]
    paths = []
    for index, size in enumerate(sizes):
        path = tmp_path / ('f%d:odd' % index)
        path.write_bytes(b'\x5a' * size)
        paths.append(str(path))
    job = tmp_path / 'job.fio'
    job.write_text(_fio.build_job([{'name': 'stream0', 'files': paths}], log_prefix_dir=str(tmp_path)))
    proc = subprocess.run(['fio', '--readonly', '--output-format=json', str(job)], capture_output=True, text=True,
                          env=dict(os.environ, LC_ALL='C'), timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    parsed = _fio.parse_json(proc.stdout)
    assert parsed['jobs'][0]['io_bytes'] == sum(sizes)
    assert (tmp_path / 'stream0_bw.1.log').exists()


def test_parse_log_cut_by_a_killed_fio_drops_the_cut_line_only():
    text = fixture('fio_bw_log__loop0-ext4-blkio30MBs-stream0__1.txt')
    lines = [ln for ln in text.splitlines() if ln and not ln.startswith('#')]
    cut = text[:text.rindex(lines[-1]) + 3]
    warnings = []
    entries = _fio.parse_log(cut, warnings)
    assert len(entries) == len(lines) - 1 and 'cut line' in warnings[0]
    # A bad line in the middle is still an error with its line number.
    with pytest.raises(_fio.FioParseError, match='line'):
        _fio.parse_log(cut + '\n1000, 5, 0, 0\n')


@pytest.mark.parametrize('text', ['[1, 2]', '{"jobs": [1]}', '{"jobs": [{"read": 5}]}',
                                  '{"jobs": [{"jobname": "a", "error": "x"}]}', '"fio"'])
def test_parse_json_odd_shapes_are_fio_parse_errors(text):
    with pytest.raises(_fio.FioParseError):
        _fio.parse_json(text)
