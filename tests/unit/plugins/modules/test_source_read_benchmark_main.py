# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""source_read_benchmark's main() in process (module_harness.run_module): the real fio (fio-3.33 here) on small
real trees under tmp_path, which must be exactly as they were afterwards (content, size, mode, mtime); check mode;
bad input; fio missing; fio's output taken from a real capture (tests/unit/fixtures/fio/), whole and cut short.
The same module as Ansible runs it (child process), with scaling, ingest, caches and permissions:
test_source_read_benchmark.py."""

from __future__ import annotations

import os
import shutil

import pytest

from ansible_collections.tapeops.qualify.plugins.modules import source_read_benchmark

from module_harness import fixture_text, recorded_tools, run_module, tree_state

FIO_CAPTURE = 'fio/fio_json__loop0-ext4-blkio30MBs-2streams__1.txt'
needs_fio = pytest.mark.skipif(shutil.which('fio') is None, reason='fio is not installed (apt install fio)')


def make_tree(base, sizes):
    """Files of the given sizes (half random, half zeros) over two directories, a symlink, an empty file."""
    for index, size in enumerate(sizes):
        directory = base / ('d%d' % (index % 2))
        directory.mkdir(parents=True, exist_ok=True)
        (directory / ('f%03d' % index)).write_bytes(os.urandom(size // 2) + bytes(size - size // 2))
    (base / 'd0' / 'link').symlink_to('f000')
    (base / 'd1' / 'empty').write_bytes(b'')
    return sum(sizes)


def fail_cleanly(result, *words):
    assert result['failed'] is True
    for word in words:
        assert word in result['msg'], result['msg']
    assert 'exception' not in result and 'Traceback' not in result['msg']


@needs_fio
def test_every_byte_is_read_once_and_the_tree_is_left_as_it_was(monkeypatch, tmp_path):
    src = tmp_path / 'src'
    sizes = [1, 4095, 65536, 65537, 300001, 1048576]
    total = make_tree(src, sizes)
    before = tree_state(str(src))
    failed, result = run_module(source_read_benchmark.main, {
        'paths': [str(src)], 'time_budget': 0, 'compressibility_sample': '8M', 'scaling': False}, monkeypatch)
    assert not failed, result
    assert tree_state(str(src)) == before
    assert result['changed'] is False
    stream = result['streams'][0]
    assert (stream['bytes'], stream['files'], stream['passes'], stream['complete']) == (total, 6, 1.0, True)
    assert (stream['tree_bytes'], stream['tree_files'], stream['empty_files']) == (total, 6, 1)
    assert (result['aggregate']['bytes'], result['aggregate']['streams']) == (total, 1)
    assert [(os.path.basename(s['path']), s['kind']) for s in result['passed_over']] == [('link', 'symlink')]
    assert result['fio_cmd'][0] == shutil.which('fio') and result['fio_cmd'][1] == '--readonly'
    assert result['fio_version'] == 'fio-3.33'
    # half of each file is zeros: zlib gets about 2:1 from the start (1 MiB) of each of the 6 files
    assert result['compressibility']['ratio'] == pytest.approx(2.0, rel=0.1)
    assert result['compressibility']['files_sampled'] == 6
    # one pass over a tree this small is too short to rest a floor on; the result says what to change
    assert 'set time_budget' in result['inconclusive']['reason']


@needs_fio
def test_a_single_file_as_the_source_is_read_whole(monkeypatch, tmp_path):
    one = tmp_path / 'backup.tar'
    one.write_bytes(os.urandom(200000))
    before = tree_state(str(tmp_path))
    failed, result = run_module(source_read_benchmark.main, {
        'paths': [str(one)], 'time_budget': 0, 'compressibility_sample': '0', 'scaling': False}, monkeypatch)
    assert not failed, result
    stream = result['streams'][0]
    assert (stream['path'], stream['bytes'], stream['files']) == (str(one), 200000, 1)
    assert tree_state(str(tmp_path)) == before


def test_check_mode_plans_and_runs_nothing(monkeypatch, tmp_path):
    src = tmp_path / 'src'
    total = make_tree(src, [1000, 2000, 3000])
    before = tree_state(str(tmp_path))
    # /bin/false as fio: a check-mode run that started fio would fail
    failed, result = run_module(source_read_benchmark.main, {
        'paths': [str(src)], 'fio_path': '/bin/false', 'time_budget': 30}, monkeypatch, check_mode=True)
    assert not failed, result
    assert result['changed'] is False and result['streams'] == [] and result['scaling'] == []
    plan = result['plan']
    assert plan['fio'] == '/bin/false' and plan['time_budget_s'] == 30
    assert [(s['path'], s['files'], s['bytes'], s['empty_files']) for s in plan['streams']] == [(str(src), 3, total, 1)]
    assert tree_state(str(tmp_path)) == before


@pytest.mark.parametrize('case,words', [
    ('missing', ['does not exist: check the path']),
    ('relative', ['is not absolute: give the full path']),
    ('empty', ['The source paths hold no file with data to read']),
    ('twice', ['is listed twice: give each path once']),
    ('fifo', ['is neither a directory nor a regular file']),
])
def test_bad_sources_fail_with_what_to_do(monkeypatch, tmp_path, case, words):
    src = tmp_path / 'src'
    src.mkdir()
    paths = [str(src)]
    if case == 'missing':
        paths = [str(tmp_path / 'gone')]
    elif case == 'relative':
        paths = ['srv/data']
    elif case == 'empty':
        (src / 'sub').mkdir()
        (src / 'sub' / 'zero').write_bytes(b'')
    elif case == 'twice':
        (src / 'f').write_bytes(b'x' * 100)
        paths = [str(src), str(src) + '/']
    elif case == 'fifo':
        os.mkfifo(str(tmp_path / 'pipe'))
        paths = [str(tmp_path / 'pipe')]
    fio = shutil.which('fio') or '/bin/false'  # 'empty' gets as far as fio; the others fail before
    failed, result = run_module(source_read_benchmark.main, {'paths': paths, 'fio_path': fio, 'time_budget': 0},
                                monkeypatch)
    fail_cleanly(result, *words)


@pytest.mark.parametrize('args,words', [
    ({'max_files': 0}, 'max_files must be at least 1.'),
    ({'synthetic_compressible_fraction': 1.0}, 'synthetic_compressible_fraction must be within 0 (random) .. 0.99.'),
    ({'block_size': '100'}, 'block_size 100 is outside 512 bytes..64 MiB'),
    ({'byte_budget': 'lots'}, "byte_budget 'lots' is not a size"),
])
def test_bad_options_fail_with_what_to_do(monkeypatch, tmp_path, args, words):
    (tmp_path / 'f').write_bytes(b'x' * 100)
    failed, result = run_module(source_read_benchmark.main, dict(args, paths=[str(tmp_path)], fio_path='/bin/false'),
                                monkeypatch)
    fail_cleanly(result, words)


def test_fio_missing_from_path_says_how_to_install_it(monkeypatch, tmp_path):
    (tmp_path / 'f').write_bytes(b'x' * 100)
    empty_bin = tmp_path / 'bin'
    empty_bin.mkdir()
    monkeypatch.setenv('PATH', str(empty_bin))
    failed, result = run_module(source_read_benchmark.main, {'paths': [str(tmp_path)]}, monkeypatch)
    fail_cleanly(result, 'fio is not installed on this host (not found in %s' % empty_bin,
                 'Install the fio package (Debian/Ubuntu: apt install fio; RHEL: dnf install fio) and run again.')


def test_figures_come_from_fio_json(monkeypatch, tmp_path):
    # fio on PATH prints the recorded capture (two streams over a 30 MB/s throttle); the module reads job stream0:
    # 89,772,415 bytes in 6,015 ms. It wrote no bandwidth log, so there is no per-second series, and says so.
    recorded_tools(tmp_path, monkeypatch, {'fio': FIO_CAPTURE})
    src = tmp_path / 'src'
    src.mkdir()
    (src / 'f').write_bytes(b'y' * 10000000)
    failed, result = run_module(source_read_benchmark.main, {
        'paths': [str(src)], 'time_budget': 0, 'compressibility_sample': '0', 'scaling': False}, monkeypatch)
    assert not failed, result
    stream = result['streams'][0]
    assert stream['bytes'] == 89772415 and stream['duration_s'] == 6.015
    assert stream['mean_mb_s'] == round(89772415 / 6.015 / 1e6, 3)
    assert stream['series_mb_s'] == [] and result['fio_version'] == 'fio-3.33'
    assert 'fio wrote no bandwidth log for stream0: no per-second series.' in result['warnings_list']


def test_fio_json_cut_short_fails_with_its_output_attached(monkeypatch, tmp_path):
    # The recorded capture cut after its first 1,500 characters, as a killed fio leaves its output.
    cut = fixture_text(FIO_CAPTURE)[:1500]
    bindir = tmp_path / 'bin'
    bindir.mkdir()
    (bindir / 'fio.out').write_text(cut)
    fio = bindir / 'fio'
    fio.write_text('#!/bin/sh\nexec cat %s\n' % (bindir / 'fio.out'))
    fio.chmod(0o755)
    src = tmp_path / 'src'
    src.mkdir()
    (src / 'f').write_bytes(b'z' * 5000)
    before = tree_state(str(src))
    failed, result = run_module(source_read_benchmark.main, {
        'paths': [str(src)], 'fio_path': str(fio), 'time_budget': 0, 'compressibility_sample': '0',
        'scaling': False}, monkeypatch)
    fail_cleanly(result, "fio's output could not be read (fio JSON output is truncated or invalid",
                 'no figures for the 1-stream read.')
    # what to do ends msg (as a CliError's does) and comes as its own key too
    hint = 'Run again; if it repeats, run fio by hand with the job file and report its output.'
    assert result['msg'].endswith('no figures for the 1-stream read. ' + hint) and result['hint'] == hint
    assert result['rc'] == 0 and result['stdout'] == cut and result['cmd'][0] == str(fio)
    assert tree_state(str(src)) == before


def test_fio_output_without_the_streams_job_fails_saying_what_to_do(monkeypatch, tmp_path):
    # fio on PATH prints a real capture of another job file (tests/unit/fixtures/fio/, its one job is named
    # 'test'): fio's JSON parses, but holds no job stream0 for the one source
    capture = 'fio/fio_json__metrics-operator-kind-randrw-4k-qd64__1.txt'
    recorded_tools(tmp_path, monkeypatch, {'fio': capture})
    src = tmp_path / 'src'
    src.mkdir()
    (src / 'f').write_bytes(b'z' * 5000)
    before = tree_state(str(src))
    failed, result = run_module(source_read_benchmark.main, {
        'paths': [str(src)], 'time_budget': 0, 'compressibility_sample': '0', 'scaling': False}, monkeypatch)
    hint = 'Run again; if it repeats, run fio by hand with the job file and report its output.'
    assert failed
    assert result['msg'] == 'fio reported no job stream0; its output is incomplete. ' + hint
    assert result['hint'] == hint and result['stdout'] == fixture_text(capture)[-4000:]  # its last 4000 characters
    assert tree_state(str(src)) == before
