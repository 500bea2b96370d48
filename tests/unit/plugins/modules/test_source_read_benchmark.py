# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""source_read_benchmark, run as Ansible runs it (a child process with its arguments as JSON), with the real fio
on real directories of this machine. Nothing is mocked."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import tempfile
import time

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _fio

from module_harness import run_module_process, tree_state

pytestmark = pytest.mark.skipif(shutil.which('fio') is None, reason='fio is not installed (apt install fio)')


def run_module(args, check_mode=False, user=None, cwd=None, timeout=300, path_env=None):
    """Run the module like Ansible does; return (rc, result dict)."""
    return run_module_process('source_read_benchmark', args, check_mode=check_mode, user=user, cwd=cwd or '/',
                              timeout=timeout, env={'PATH': path_env} if path_env is not None else None)


def make_source(base, count=40):
    """Files of odd sizes plus a FIFO, a socket, a device node, symlinks and an empty file."""
    sizes = []
    for index in range(count):
        size = (index * 7919 * 13) % 400000 + 1
        sub = os.path.join(base, 'dir%d' % (index % 4))
        os.makedirs(sub, exist_ok=True)
        with open(os.path.join(sub, 'file%03d.bin' % index), 'wb') as handle:
            handle.write(os.urandom(size // 2) + bytes(size - size // 2))
        sizes.append(size)
    os.mkfifo(os.path.join(base, 'dir0', 'fifo'))
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(os.path.join(base, 'dir1', 'sock'))
    sock.close()
    if os.geteuid() == 0:
        os.mknod(os.path.join(base, 'dir2', 'null'), 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    os.symlink('..', os.path.join(base, 'dir3', 'loop'))
    open(os.path.join(base, 'dir3', 'empty'), 'wb').close()
    return sizes


def test_real_tree_every_byte_read_tree_byte_identical_after(tmp_path):
    src = str(tmp_path / 'src')
    sizes = make_source(src)
    before = tree_state(src)
    # No time budget: the tree is read once (and the result says that one short pass is not enough).
    rc, result = run_module({'paths': [src], 'time_budget': 0})
    assert rc == 0, result
    assert tree_state(src) == before
    assert result['changed'] is False
    stream = result['streams'][0]
    assert stream['bytes'] == sum(sizes) and stream['files'] == len(sizes)
    assert stream['complete'] is True and stream['empty_files'] == 1 and stream['passes'] == 1.0
    assert result['passes'] == 1.0 and result['samples'] < 10
    assert 'set time_budget' in result['inconclusive']['reason']
    assert stream['mean_mb_s'] > 0 and stream['min_mb_s'] <= stream['p5_mb_s'] <= stream['mean_mb_s'] * 10
    agg = result['aggregate']
    assert (agg['bytes'], agg['files'], agg['streams']) == (sum(sizes), len(sizes), 1)
    for key in ('mean_mb_s', 'p5_mb_s', 'min_mb_s', 'duration_s', 'series_mb_s', 'files_per_s'):
        assert key in agg and key in stream
    kinds = dict((os.path.basename(s['path']), s['kind']) for s in result['passed_over'])
    assert kinds['fifo'] == 'fifo' and kinds['sock'] == 'socket' and kinds['loop'] == 'symlink'
    if os.geteuid() == 0:
        assert kinds['null'] == 'char_device'
    assert result['cache']['method'] == 'evict' and result['cache']['bypassed'] is True
    assert result['compressibility']['ratio'] == pytest.approx(2.0, rel=0.1)
    # and along the stream, window by window: each file is random, then zeros, so a 128 KiB window inside one
    # half does not compress or compresses far, and over all of them the stream is the 2:1 it is
    profile = result['compressibility']['profile']
    assert profile['stream_bytes'] == sum(sizes) and profile['window_bytes'] == 131072
    ratios = profile['ratios']
    assert min(ratios) < 1.5 and max(ratios) > 10
    assert len(ratios) / sum(1.0 / r for r in ratios) == pytest.approx(2.0, rel=0.15)
    assert result['fio_version'].startswith('fio-')


def test_two_paths_two_parallel_streams_and_symlink_loop_followed(tmp_path):
    a, b = str(tmp_path / 'a'), str(tmp_path / 'b')
    sizes_a = make_source(a, count=10)
    sizes_b = make_source(b, count=12)
    rc, result = run_module({'paths': [a, b], 'follow_symlinks': True, 'compressibility_sample': '0',
                             'time_budget': 0})
    assert rc == 0, result
    assert [s['path'] for s in result['streams']] == [a, b]
    assert [s['bytes'] for s in result['streams']] == [sum(sizes_a), sum(sizes_b)]
    assert result['aggregate']['streams'] == 2
    assert result['aggregate']['bytes'] == sum(sizes_a) + sum(sizes_b)
    assert result['passed_over_counts']['symlink_loop'] == 2
    assert result['compressibility'] is None


def test_awkward_file_names_are_read_through_aliases(tmp_path):
    names = ['#recycle', 'a;b', 'x:y', 'trailing ', 'new\nline', '${HOME}', 'plain']
    for index, name in enumerate(names):
        (tmp_path / name).write_bytes(b'z' * (1000 + index))
    rc, result = run_module({'paths': [str(tmp_path)], 'compressibility_sample': '0', 'time_budget': 0})
    assert rc == 0, result
    assert result['streams'][0]['bytes'] == sum(1000 + i for i in range(len(names)))
    assert result['streams'][0]['files'] == len(names)


def test_byte_budget_stops_the_stream(tmp_path):
    for index in range(10):
        (tmp_path / ('f%d' % index)).write_bytes(b'q' * 1048576)
    rc, result = run_module({'paths': [str(tmp_path)], 'byte_budget': '3584k', 'compressibility_sample': '0'})
    assert rc == 0, result
    stream = result['streams'][0]
    # fio stops at the first read that reaches io_size: at most one read (64 KiB) past the budget.
    assert 3584 * 1024 <= stream['bytes'] <= 3584 * 1024 + 65536
    assert stream['files'] == 3 and stream['complete'] is False and stream['passes'] == pytest.approx(0.35, abs=0.01)


@pytest.mark.parametrize('setup, words', [
    ('missing', 'does not exist'),
    ('fifo', 'neither a directory nor a regular file'),
    ('empty', 'no file with data'),
    ('relative', 'not absolute'),
])
def test_bad_source_paths_fail_with_a_clear_message(tmp_path, setup, words):
    path = str(tmp_path / 'src')
    if setup == 'fifo':
        os.mkfifo(path)
    elif setup == 'empty':
        os.makedirs(os.path.join(path, 'sub'))
        open(os.path.join(path, 'sub', 'zero'), 'wb').close()
    elif setup == 'relative':
        path = 'srv/data'
    rc, result = run_module({'paths': [path]}, timeout=60)
    assert rc == 1 and result['failed'] is True
    assert words in result['msg']


def test_one_empty_stream_is_left_out_with_a_warning(tmp_path):
    full, empty = tmp_path / 'full', tmp_path / 'empty'
    full.mkdir()
    empty.mkdir()
    (full / 'f').write_bytes(b'x' * 5000)
    rc, result = run_module({'paths': [str(full), str(empty)], 'compressibility_sample': '0', 'time_budget': 0})
    assert rc == 0, result
    assert [s['path'] for s in result['streams']] == [str(full)]
    assert any('no file with data' in w for w in result['warnings_list'])


@pytest.mark.parametrize('args, words', [
    ({'block_size': 'lots'}, 'is not a size'),
    ({'block_size': '100'}, 'outside 512 bytes'),
    ({'cache': 'fast'}, 'value of cache must be one of'),
    ({'synthetic_dir': '/tmp'}, 'mutually exclusive'),
])
def test_bad_options_fail_with_a_clear_message(tmp_path, args, words):
    (tmp_path / 'f').write_bytes(b'x')
    args = dict(args, paths=[str(tmp_path)])
    rc, result = run_module(args, timeout=60)
    assert rc == 1 and words in result['msg']


def test_neither_paths_nor_synthetic_dir():
    rc, result = run_module({}, timeout=60)
    assert rc == 1 and 'one of the following is required: paths, synthetic_dir' in result['msg']


@pytest.mark.skipif(os.geteuid() != 0, reason='needs root to drop to another user')
def test_permission_denied_files_are_passed_over_as_unprivileged_user():
    base = tempfile.mkdtemp(prefix='tapeops-perm-', dir='/tmp')
    try:
        os.chmod(base, 0o755)
        for name, mode in (('ok', 0o644), ('secret', 0o600)):
            with open(os.path.join(base, name), 'wb') as handle:
                handle.write(b's' * 4000)
            os.chmod(os.path.join(base, name), mode)
        os.makedirs(os.path.join(base, 'locked'), 0o700)
        with open(os.path.join(base, 'locked', 'inner'), 'wb') as handle:
            handle.write(b'i' * 4000)
        rc, result = run_module({'paths': [base], 'compressibility_sample': '0', 'time_budget': 0}, user=65534)
        assert rc == 0, result
        assert result['streams'][0]['bytes'] == 4000
        assert sorted((os.path.basename(s['path']), s['kind']) for s in result['passed_over']) == \
            [('locked', 'permission_denied'), ('secret', 'permission_denied')]
        # The whole tree unreadable: a clear failure, not an empty measurement.
        os.chmod(os.path.join(base, 'ok'), 0o600)
        rc, result = run_module({'paths': [base]}, user=65534)
        assert rc == 1 and 'become: true' in result['msg']
    finally:
        subprocess.run(['rm', '-rf', base], check=True)


# A write-only sysfs attribute: open() for reading fails with EACCES for root too (kernfs has no show method)
WRITE_ONLY_SYSFS = next((p for p in ('/sys/bus/pci/rescan', '/sys/bus/scsi/uevent', '/sys/bus/platform/uevent')
                         if os.path.exists(p)), None)


@pytest.mark.skipif(os.geteuid() != 0 or WRITE_ONLY_SYSFS is None,
                    reason='needs root and a write-only sysfs attribute (a file root cannot open)')
def test_a_file_root_cannot_open_is_passed_over_and_the_rest_is_measured(tmp_path):
    # Before issue 28 the walker asked os.access (always yes for root) and fio stopped on the file: rc 1 and
    # "fio failed with exit code 1", no measurement. The file is reached through a followed symlink here; on the
    # lab (tests/integration/test_source_tree_entries.py) it is bind-mounted into the tree.
    src = tmp_path / 'src'
    src.mkdir()
    for index in range(4):
        (src / ('f%d' % index)).write_bytes(os.urandom(200000))
    os.symlink(WRITE_ONLY_SYSFS, str(src / 'write-only'))
    rc, result = run_module({'paths': [str(src)], 'follow_symlinks': True, 'time_budget': 0,
                             'compressibility_sample': '0'})
    assert rc == 0, result
    assert result['streams'][0]['files'] == 4 and result['aggregate']['bytes'] == 800000
    assert result['passed_over'] == [{'path': str(src / 'write-only'), 'kind': 'permission_denied',
                                      'reason': 'permission denied: open() refused to uid 0'}]
    assert result['passed_over_counts'] == {'permission_denied': 1}
    assert 'skipped' not in result


def test_check_mode_reads_nothing_and_reports_the_plan(tmp_path):
    src = tmp_path / 'src'
    src.mkdir()
    (src / 'f').write_bytes(b'x' * 12345)
    os.mkfifo(str(src / 'pipe'))
    # /bin/false as fio: a check-mode run that started fio would fail.
    rc, result = run_module({'paths': [str(src)], 'fio_path': '/bin/false'}, check_mode=True)
    assert rc == 0, result
    assert result['changed'] is False and result['streams'] == []
    assert result['plan']['streams'][0]['files'] == 1 and result['plan']['streams'][0]['bytes'] == 12345
    assert result['passed_over'][0]['kind'] == 'fifo'
    scratch = tmp_path / 'scratch'
    scratch.mkdir()
    rc, result = run_module({'synthetic_dir': str(scratch), 'synthetic_size': '10M', 'fio_path': '/bin/false'},
                            check_mode=True)
    assert rc == 0, result
    assert result['plan']['synthetic']['bytes'] > 9000000
    assert os.listdir(str(scratch)) == []


def test_synthetic_data_set_laid_out_read_cold_and_removed(tmp_path):
    scratch = tmp_path / 'scratch'
    scratch.mkdir()
    (scratch / 'keep-me').write_bytes(b'user data')
    rc, result = run_module({'synthetic_dir': str(scratch), 'synthetic_size': '24M', 'synthetic_mix': 'office',
                             'synthetic_streams': 2, 'synthetic_compressible_fraction': 0.5, 'time_budget': 0})
    assert rc == 0, result
    assert sorted(os.listdir(str(scratch))) == ['keep-me']
    assert result['synthetic']['removed'] is True
    assert len(result['streams']) == 2
    planned = result['synthetic']['bytes']
    assert 2 * 24 * 1048576 * 0.99 <= planned <= 2 * 24 * 1048576
    assert result['aggregate']['bytes'] == planned
    assert result['compressibility']['ratio'] == pytest.approx(2.0, rel=0.1)


def test_synthetic_data_set_refused_without_free_space(tmp_path):
    rc, result = run_module({'synthetic_dir': str(tmp_path), 'synthetic_size': '1000000G'}, timeout=60)
    assert rc == 1 and 'Not enough free space' in result['msg']
    assert os.listdir(str(tmp_path)) == []


@pytest.mark.skipif(shutil.which('sshfs') is None or not os.path.exists('/usr/lib/openssh/sftp-server')
                    or not os.path.exists('/dev/fuse'),
                    reason='needs sshfs, /usr/lib/openssh/sftp-server and /dev/fuse (apt install sshfs)')
def test_network_filesystem_is_reported(tmp_path):
    """A real fuse.sshfs mount (sftp-server over a pipe, no network needed) is reported as network."""
    src = tmp_path / 'export'
    src.mkdir()
    (src / 'doc').write_bytes(b'n' * 300000)
    mnt = tmp_path / 'mnt'
    mnt.mkdir()
    helper = tmp_path / 'sftp.sh'
    helper.write_text('#!/bin/sh\nexec /usr/lib/openssh/sftp-server\n')
    helper.chmod(0o755)
    subprocess.run(['sshfs', '-o', 'ssh_command=%s' % helper, 'localhost:%s' % src, str(mnt)], check=True,
                   timeout=30)
    try:
        rc, result = run_module({'paths': [str(mnt)], 'compressibility_sample': '0', 'time_budget': 0})
        assert rc == 0, result
        fs = result['streams'][0]['filesystem']
        assert fs['fstype'] == 'fuse.sshfs' and fs['network'] is True
        assert any('network filesystem' in w for w in result['warnings_list'])
        assert result['streams'][0]['bytes'] == 300000
    finally:
        subprocess.run(['fusermount', '-u', str(mnt)], check=False, timeout=30)


@pytest.mark.skipif(not os.path.isdir('/dev/shm'), reason='needs /dev/shm (tmpfs) for a fast large tree')
def test_tree_above_fio_default_smalloc_pool():
    """150,000 files with ~500-byte paths: fio 3.33 aborts at its default pool; the module sizes --alloc-size."""
    base = tempfile.mkdtemp(prefix='tapeops-bigtree-', dir='/dev/shm')
    started = time.time()
    count = 150000
    try:
        deep = os.path.join(base, 'd' * 220, 'e' * 220)
        os.makedirs(deep)
        # split(1) writes the 150,000 one-byte files far faster than a Python loop.
        subprocess.run(['split', '-b', '1', '-a', '6', '-', os.path.join(deep, 'f')], input=b'x' * count,
                       check=True, timeout=60)
        paths = sorted(os.path.join(deep, name) for name in os.listdir(deep))
        assert len(paths) == count
        job = os.path.join(base, 'default-pool.fio')
        with open(job, 'w') as handle:
            handle.write(_fio.build_job([{'name': 'stream0', 'files': paths}]))
        proc = subprocess.run(['fio', '--readonly', '--parse-only', job], capture_output=True, text=True,
                              timeout=60, check=False)
        assert proc.returncode != 0, 'this tree must be above fio\'s default pool for the test to mean anything'
        assert 'smalloc: OOM' in proc.stderr
        os.unlink(job)
        rc, result = run_module({'paths': [base], 'compressibility_sample': '0', 'time_budget': 0})
        assert rc == 0, result
        assert any(arg.startswith('--alloc-size=') for arg in result['fio_cmd'])
        assert result['streams'][0]['files'] == count and result['streams'][0]['bytes'] == count
        # Typically 25-50 s on the 2 shared cores of CI; a per-file cost gone quadratic would blow far past this,
        # and the unit tests' idle CPU group, which gets no CPU while the lab's timed tests want it, stays below.
        assert time.time() - started < 300
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_memory_filesystem_is_reported_as_uncacheable():
    base = tempfile.mkdtemp(prefix='tapeops-shm-', dir='/dev/shm')
    try:
        with open(os.path.join(base, 'f'), 'wb') as handle:
            handle.write(b'm' * 100000)
        rc, result = run_module({'paths': [base], 'compressibility_sample': '0', 'time_budget': 0})
        assert rc == 0, result
        assert result['cache']['bypassed'] is False
        assert 'memory filesystem' in result['cache']['note']
        assert any('tmpfs' in w for w in result['warnings_list'])
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize('mode', ['direct', 'keep', 'drop'])
def test_cache_modes(tmp_path, mode):
    if mode == 'drop' and os.geteuid() != 0:
        pytest.skip('cache=drop needs root')
    sizes = [10000, 4096 * 3, 70001]
    for index, size in enumerate(sizes):
        (tmp_path / ('f%d' % index)).write_bytes(os.urandom(size))
    rc, result = run_module({'paths': [str(tmp_path)], 'cache': mode, 'compressibility_sample': '0', 'time_budget': 0})
    assert rc == 0, result
    cache = result['cache']
    assert cache['method'] == mode
    if mode == 'direct':
        # O_DIRECT reads whole 4 KiB blocks only: each file's sub-block tail is not read.
        assert result['streams'][0]['bytes'] == sum(size - size % 4096 for size in sizes)
        assert cache['bypassed'] is True and cache['dropped'] is False
    elif mode == 'keep':
        assert result['streams'][0]['bytes'] == sum(sizes)
        assert cache['bypassed'] is False and 'smaller than RAM' in cache['note']
        assert any('smaller than RAM' in w for w in result['warnings_list'])
    else:
        assert result['streams'][0]['bytes'] == sum(sizes)
        assert cache['dropped'] is True
    assert cache['ram_bytes'] > 0 and 0 < cache['data_vs_ram'] < 1


def test_parse_size_units():
    from ansible_collections.tapeops.qualify.plugins.module_utils._measure._source_plan import SourceReadError, parse_size
    assert parse_size('64k') == 65536
    assert parse_size('64K') == 65536
    assert parse_size('1.5M') == 1572864
    assert parse_size('10G') == 10 * 1024 ** 3
    assert parse_size('4000M') == 4000 * 1048576
    assert parse_size('2MiB') == 2 * 1048576
    assert parse_size('4096') == 4096
    assert parse_size(123) == 123
    with pytest.raises(SourceReadError, match='is not a size'):
        parse_size('ten gigs')


def test_fio_missing_says_how_to_install_it(tmp_path):
    (tmp_path / 'f').write_bytes(b'x' * 100)
    empty_bin = tmp_path / 'bin'
    empty_bin.mkdir()
    rc, result = run_module({'paths': [str(tmp_path)]}, path_env=str(empty_bin), timeout=60)
    assert rc == 1 and 'fio is not installed on this host' in result['msg'] and 'apt install fio' in result['msg']
    rc, result = run_module({'paths': [str(tmp_path)], 'fio_path': str(empty_bin / 'fio')}, timeout=60)
    assert rc == 1 and 'Cannot run' in result['msg']


# -- repeated passes, scaling, all drives at once, competing ingest, file sizes, fio output cut short ----------

def write_files(base, sizes, sub=None):
    os.makedirs(base, exist_ok=True)
    for index, size in enumerate(sizes):
        directory = os.path.join(base, sub % index) if sub else base
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, 'f%04d' % index), 'wb') as handle:
            handle.write(os.urandom(size))
    return sum(sizes)


def test_short_tree_is_read_again_until_the_time_budget(tmp_path):
    src = str(tmp_path / 'src')
    total = write_files(src, [300000 + 1000 * i for i in range(8)])
    before = tree_state(src)
    rc, result = run_module({'paths': [src], 'time_budget': 3, 'compressibility_sample': '0', 'scaling': False})
    assert rc == 0, result
    assert tree_state(src) == before
    stream = result['streams'][0]
    # 2.5 MB read again and again for 3 s: many passes, and the bytes are whole passes plus part of one.
    assert 2.8 <= result['seconds'] <= 30.0, result['seconds']      # its budget; a loaded machine stretches it
    assert result['passes'] > 2 and stream['passes'] == result['passes']
    assert stream['bytes'] == pytest.approx(result['passes'] * total, abs=0.001 * total + 65536)
    # (whole passes by bytes: ``passes`` is rounded to 3 decimals, so 715.9996 passes show as 716.0 while the
    # last file of the 716th is still short of its end: 5727 files, seen once)
    assert stream['files'] >= int(stream['bytes'] // total) * 8 and stream['complete'] is True
    # 3 one-second windows (fio logs the third or not, as the run ends on its boundary; on a loaded machine the run
    # stretches past it and fio logs a fourth), the last of three or four left out of the floor: 2 or 3 samples,
    # below the default minimum of 10.
    assert result['samples'] in (2, 3) and len(result['aggregate']['series_mb_s']) in (2, 3, 4)
    assert 'time budget of 3 s is too short' in result['inconclusive']['reason']
    assert any('inconclusive' in w for w in result['warnings_list'])
    # The same read with a minimum of 2 samples is conclusive.
    rc, result = run_module({'paths': [src], 'time_budget': 3, 'compressibility_sample': '0', 'scaling': False,
                             'min_samples': 2})
    assert rc == 0 and result['inconclusive'] is None and result['samples'] in (2, 3)


def test_byte_budget_beyond_the_tree_reads_every_byte_of_every_pass(tmp_path):
    src = str(tmp_path / 'src')
    sizes = [1, 4095, 65537, 200003, 77]
    total = write_files(src, sizes)
    rc, result = run_module({'paths': [src], 'time_budget': 0, 'byte_budget': str(3 * total),
                             'compressibility_sample': '0'})
    assert rc == 0, result
    stream = result['streams'][0]
    assert stream['bytes'] == 3 * total and stream['files'] == 3 * len(sizes) and stream['passes'] == 3.0
    # Stopped by the byte budget within a second: inconclusive, and the reason names the byte budget.
    assert 'raise byte_budget' in result['inconclusive']['reason']


def test_scaling_steps_split_streams_by_source(tmp_path):
    paths = []
    for name, count in (('a', 6), ('b', 4), ('c', 2)):
        path = str(tmp_path / name)
        write_files(path, [50000] * count)
        paths.append(path)
    rc, result = run_module({'paths': paths, 'time_budget': 0, 'compressibility_sample': '0',
                             'scaling_streams': [1, 5]})
    assert rc == 0, result
    curve = result['scaling']
    assert [step['streams'] for step in curve] == [1, 3, 5]
    assert [step['split'] for step in curve] == [False, False, True]
    for step in curve:
        # Every step read each file once (one pass, no budget): same bytes and files whatever the stream count.
        assert step['bytes'] == 12 * 50000 and step['files'] == 12 and step['passes'] == 1.0
        assert step['mean_mb_s'] > 0 and step['samples'] == 0 and step['inconclusive'] is not None
    # The main measurement is the 3-stream step: one stream per source, in the order given.
    assert [s['paths'] for s in result['streams']] == [[p] for p in paths]
    assert result['aggregate']['mean_mb_s'] == curve[1]['mean_mb_s']
    assert result['aggregate']['streams'] == 3


def test_more_streams_than_files_are_capped_with_a_warning(tmp_path):
    write_files(str(tmp_path), [10000, 20000])
    rc, result = run_module({'paths': [str(tmp_path)], 'streams': 5, 'time_budget': 0, 'compressibility_sample': '0',
                             'scaling': False})
    assert rc == 0, result
    assert result['aggregate']['streams'] == 2 and len(result['streams']) == 2
    assert sorted(s['bytes'] for s in result['streams']) == [10000, 20000]
    assert any('5 streams were asked for' in w for w in result['warnings_list'])


def test_all_drives_at_once_apportioned_per_drive(tmp_path):
    src = str(tmp_path / 'src')
    total = write_files(src, [80000] * 16, sub='d%d')
    rc, result = run_module({'paths': [src], 'drives': 2, 'streams_per_drive': 2, 'time_budget': 2,
                             'compressibility_sample': '0', 'scaling': False, 'min_samples': 1})
    assert rc == 0, result
    split = result['per_drive']
    assert split['drives'] == 2 and split['streams_per_drive'] == 2
    assert result['aggregate']['streams'] == 4 and len(result['streams']) == 4
    # One source, four streams: the source is cut into four parts, no file read twice.
    parts = sorted(tuple(p['part']) for s in result['streams'] for p in s['parts'])
    assert parts == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert sum(s['tree_files'] for s in result['streams']) == 16
    assert sum(s['tree_bytes'] for s in result['streams']) == total
    agg = result['aggregate']
    assert split['aggregate']['mean_mb_s'] == pytest.approx(agg['mean_mb_s'] / 2, abs=0.002)
    assert split['series_mb_s'] == [round(v / 2, 3) for v in agg['series_mb_s']]
    groups = split['groups']
    assert [g['streams'] for g in groups] == [2, 2]
    assert sum(g['mean_mb_s'] for g in groups) == pytest.approx(agg['mean_mb_s'], rel=0.05)


def test_file_size_histogram_says_when_a_tree_is_file_count_bound(tmp_path):
    small, large = str(tmp_path / 'small'), str(tmp_path / 'large')
    write_files(small, [2000] * 30 + [3000000] * 2)
    write_files(large, [2000] * 2 + [3000000] * 4)
    rc, result = run_module({'paths': [small], 'time_budget': 0, 'compressibility_sample': '0'})
    assert rc == 0, result
    sizes = result['file_sizes']
    assert sizes['files'] == 32 and sizes['bytes'] == 30 * 2000 + 2 * 3000000
    first = sizes['histogram'][0]
    assert first['below_bytes'] == 65536
    assert first['files_share'] == pytest.approx(30 / 32.0, abs=0.0001)
    assert first['bytes_share'] == pytest.approx(60000 / 6060000.0, abs=0.0001)
    assert sizes['histogram'][2] == {'below_bytes': 16777216, 'files_share': 1.0, 'bytes_share': 1.0}
    assert sizes['small_file_bound'] is True and 'file-count bound' in sizes['text'] and '94 %' in sizes['text']
    assert sizes['files_per_s_ceiling'] == pytest.approx(result['aggregate']['files_per_s'], rel=0.001)
    rc, result = run_module({'paths': [large], 'time_budget': 0, 'compressibility_sample': '0'})
    assert rc == 0 and result['file_sizes']['small_file_bound'] is False
    assert 'file-count bound' not in result['file_sizes']['text']


def test_ingest_writes_beside_the_read_and_leaves_nothing(tmp_path):
    src, spool = str(tmp_path / 'src'), str(tmp_path / 'spool')
    write_files(src, [400000] * 6)
    os.mkdir(spool)
    (tmp_path / 'spool' / 'user-file').write_bytes(b'keep')
    before = tree_state(src)
    rc, result = run_module({'paths': [src], 'time_budget': 2, 'compressibility_sample': '0', 'min_samples': 1,
                             'ingest': {'path': spool, 'rate_mb_s': 20, 'size': '8M'}})
    assert rc == 0, result
    assert tree_state(src) == before
    assert os.listdir(spool) == ['user-file']
    ingest = result['ingest']
    assert ingest['removed'] is True and ingest['error'] is None
    assert ingest['target'] == 20 and ingest['target_text'] == '20 MB/s'
    # fio's rate limit holds the writes at the target (the first second ramps up).
    assert ingest['rate_mb_s'] == pytest.approx(20, rel=0.15)
    assert ingest['bytes_written'] > 8 * 1048576   # more than the bound: the files are rewritten, not grown
    for side in ('with', 'without'):
        # each read lasted its 2 s budget; a loaded machine stretches it (2.24 s once, in the idle CPU group beside
        # the lab), so only the budget is held from below, and a bound that tells a read from a hang from above
        assert ingest[side]['mean_mb_s'] > 0 and 1.8 <= ingest[side]['seconds'] <= 30.0, ingest[side]
    assert ingest['without']['mean_mb_s'] == result['aggregate']['mean_mb_s']
    assert ingest['change_pct'] == pytest.approx(
        (ingest['with']['mean_mb_s'] - ingest['without']['mean_mb_s']) / ingest['without']['mean_mb_s'] * 100,
        abs=0.01)


def _bind_mount(source, target):
    return subprocess.run(['mount', '--bind', source, target], capture_output=True, timeout=30,
                          check=False).returncode == 0


@pytest.mark.parametrize('case, words', [
    ('same', 'is the source'),
    ('inside', 'is inside the source'),
    ('contains', 'contains the source'),
    ('symlink_inside', 'is inside the source'),
    ('bind_inside', 'is inside the source'),
    ('relative', 'is not absolute'),
    ('missing', 'does not exist'),
    ('space', 'Not enough free space'),
    ('awkward', 'plain name'),
])
def test_ingest_directory_refused_inside_or_around_a_source(tmp_path, case, words):
    src = tmp_path / 'data' / 'src'
    write_files(str(src / 'sub'), [5000])
    other = tmp_path / 'other'
    other.mkdir()
    ingest = {'path': str(other)}
    mounted = None
    if case == 'same':
        ingest['path'] = str(src)
    elif case == 'inside':
        ingest['path'] = str(src / 'sub')
    elif case == 'contains':
        ingest['path'] = str(tmp_path / 'data')
    elif case == 'symlink_inside':
        os.symlink(str(src / 'sub'), str(other / 'link'))
        ingest['path'] = str(other / 'link')
    elif case == 'bind_inside':
        if os.geteuid() != 0:
            pytest.skip('a bind mount needs root')
        bound = other / 'bound'
        bound.mkdir()
        if not _bind_mount(str(src), str(bound)):
            pytest.skip('mount --bind is not permitted here')
        mounted = str(bound)
        ingest['path'] = str(bound / 'sub')
    elif case == 'relative':
        ingest['path'] = 'spool'
    elif case == 'missing':
        ingest['path'] = str(other / 'nope')
    elif case == 'space':
        ingest['size'] = '1000000G'
    elif case == 'awkward':
        weird = other / 'spool#1'
        weird.mkdir()
        ingest['path'] = str(weird)
    before = tree_state(str(tmp_path / 'data'))
    try:
        # /bin/false as fio: a refusal must come before anything runs; check mode refuses the same way.
        for check in (False, True):
            rc, result = run_module({'paths': [str(src)], 'ingest': ingest, 'fio_path': '/bin/false'},
                                    check_mode=check, timeout=60)
            assert rc == 1 and words in result['msg'], result
    finally:
        if mounted:
            subprocess.run(['umount', mounted], check=False, timeout=30)
    assert tree_state(str(tmp_path / 'data')) == before
    assert not [n for n in os.listdir(str(other)) if n.startswith('.tapeops-ingest-')]


def test_check_mode_plans_steps_and_ingest_and_writes_nothing(tmp_path):
    a, b, spool = str(tmp_path / 'a'), str(tmp_path / 'b'), str(tmp_path / 'spool')
    write_files(a, [1000, 2000, 3000])
    write_files(b, [4000])
    os.mkdir(spool)
    rc, result = run_module({'paths': [a, b], 'drives': 2, 'streams_per_drive': 2, 'time_budget': 30,
                             'ingest': {'path': spool, 'rate_mb_s': 50, 'size': '64M'}, 'fio_path': '/bin/false'},
                            check_mode=True)
    assert rc == 0, result
    plan = result['plan']
    assert plan['concurrency'] == 4 and plan['drives'] == 2 and plan['streams_per_drive'] == 2
    assert [step['streams'] for step in plan['steps']] == [1, 2, 4]
    assert plan['steps'][1]['assignment'][0]['paths'] == [a] and plan['steps'][1]['split'] is False
    assert plan['steps'][2]['split'] is True and sum(s['files'] for s in plan['steps'][2]['assignment']) == 4
    assert plan['ingest']['size_bytes'] == 64 * 1048576 and plan['ingest']['rate_mb_s'] == 50
    assert plan['estimated_seconds'] == 30 * 4
    assert os.listdir(spool) == [] and result['streams'] == [] and result['scaling'] == []


@pytest.mark.parametrize('args, words', [
    ({'streams_per_drive': 2}, 'missing parameter(s) required by'),
    ({'streams': 2, 'drives': 2}, 'mutually exclusive'),
    ({'min_samples': 0}, 'min_samples must be at least 1'),
    ({'drives': 0}, 'drives must be at least 1'),
    ({'scaling_streams': [0, 2]}, 'scaling_streams must hold'),
    ({'ingest': {'path': '/tmp', 'rate_mb_s': -1}}, 'rate_mb_s must be positive'),
    ({'ingest': {'path': '/tmp', 'block_size': '1000'}}, 'multiple of 4 KiB'),
])
def test_bad_scaling_and_ingest_options_fail_clearly(tmp_path, args, words):
    (tmp_path / 'f').write_bytes(b'x' * 100)
    rc, result = run_module(dict(args, paths=[str(tmp_path)], fio_path='/bin/false'), timeout=60)
    assert rc == 1 and words in result['msg'], result


FIO_WRAPPER = r'''#!/bin/sh
# Runs the real fio, then damages its output the way a killed fio or a full disk would.
MODE=%(mode)s
REAL=%(fio)s
# The module stops the ingest fio with SIGINT to its process group: fio prints its figures, this script goes on.
trap '' INT
case "$1" in --version) exec "$REAL" "$@";; esac
for last; do :; done
READONLY=no
for arg; do [ "$arg" = --readonly ] && READONLY=yes; done
OUT=$("$REAL" "$@"); RC=$?
if [ "$MODE" = json ] && [ "$READONLY" = yes ]; then printf '%%s' "$OUT" | head -c 300; exit $RC; fi
if [ "$MODE" = ingest-json ] && [ "$READONLY" = no ]; then printf '{"jobs": [{"jobname": '; exit $RC; fi
if [ "$MODE" = log ] && [ "$READONLY" = yes ]; then
  for log in $(sed -n 's/^write_bw_log=//p' "$last"); do
    # Cut the last line short, as a killed fio or a full disk leaves it.
    for file in "$log"_bw.*.log; do truncate -s -12 "$file"; done
  done
fi
printf '%%s' "$OUT"
exit $RC
'''


def fio_wrapper(tmp_path, mode):
    path = tmp_path / ('fio-%s' % mode)
    path.write_text(FIO_WRAPPER % {'mode': mode, 'fio': shutil.which('fio')})
    path.chmod(0o755)
    return str(path)


def test_fio_json_cut_short_fails_with_a_clear_message(tmp_path):
    src = str(tmp_path / 'src')
    write_files(src, [100000] * 3)
    rc, result = run_module({'paths': [src], 'time_budget': 0, 'compressibility_sample': '0',
                             'fio_path': fio_wrapper(tmp_path, 'json')})
    assert rc == 1 and 'truncated or invalid' in result['msg'] and 'no figures for the 1-stream read' in result['msg']
    assert result['stdout'] and 'Traceback' not in result['msg']


def test_fio_log_cut_short_keeps_the_good_seconds_with_a_warning(tmp_path):
    src = str(tmp_path / 'src')
    total = write_files(src, [400000] * 4)
    rc, result = run_module({'paths': [src], 'time_budget': 3, 'compressibility_sample': '0', 'scaling': False,
                             'min_samples': 1, 'fio_path': fio_wrapper(tmp_path, 'log')})
    assert rc == 0, result
    series = result['streams'][0]['series_mb_s']
    # fio logs the third second or not, as the run ends on its boundary; the line cut short is not counted.
    assert len(series) in (1, 2) and all(v > 0 for v in series) and result['streams'][0]['bytes'] > total
    assert any('1 malformed line' in w and 'keeps the %d good ones' % len(series) in w
               for w in result['warnings_list']), result['warnings_list']


def test_ingest_fio_output_cut_short_keeps_the_read(tmp_path):
    src, spool = str(tmp_path / 'src'), str(tmp_path / 'spool')
    write_files(src, [200000] * 4)
    os.mkdir(spool)
    rc, result = run_module({'paths': [src], 'time_budget': 2, 'compressibility_sample': '0', 'min_samples': 1,
                             'ingest': {'path': spool, 'rate_mb_s': 10, 'size': '4M'},
                             'fio_path': fio_wrapper(tmp_path, 'ingest-json')})
    assert rc == 0, result
    ingest = result['ingest']
    assert ingest['with']['mean_mb_s'] > 0 and ingest['without']['mean_mb_s'] > 0
    assert ingest['rate_mb_s'] is None and 'truncated or invalid' in ingest['error']
    assert ingest['removed'] is True and os.listdir(spool) == []
    assert any('ingest write job gave no figures' in w for w in result['warnings_list'])


def test_file_sizes_describe_the_tree_even_when_the_read_stopped_early():
    """A short read of a slow source reaches a few files; the size picture is the tree's listing all the same
    (issue seen on the lab's 3 MB/s guest, where 2 files stood for the tree)."""
    from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _source_result
    listing = [('/src/small/%d' % number, 2000) for number in range(30)] + [('/src/dump', 64000000)]
    main = {'assigned': [{'files_sizes': listing}],
            'streams': [{'complete': False, 'files': 2}]}
    sizes = _source_result.ReadResult._file_sizes(main, [{'files_per_s': 4.0}])
    assert (sizes['files'], sizes['bytes']) == (31, 30 * 2000 + 64000000)
    assert sizes['histogram'][0]['files_share'] == pytest.approx(30 / 31.0, abs=0.0001)
    assert sizes['files_per_s_ceiling'] == 4.0
