# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""source_read_benchmark, run as Ansible runs it (a child process with its arguments as JSON), with the real fio
on real directories of this machine. Nothing is mocked."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time

import pytest

import ansible_collections

from ansible_collections.tapeops.qualify.plugins.module_utils import _fio

COLLECTIONS_BASE = os.path.dirname(list(ansible_collections.__path__)[0])
MODULE = 'ansible_collections.tapeops.qualify.plugins.modules.source_read_benchmark'

pytestmark = pytest.mark.skipif(shutil.which('fio') is None, reason='fio is not installed (apt install fio)')


def run_module(args, check_mode=False, user=None, cwd=None, timeout=300, path_env=None):
    """Run the module like Ansible does; return (rc, result dict)."""
    payload = dict(args)
    if check_mode:
        payload['_ansible_check_mode'] = True
    handle, args_path = tempfile.mkstemp(prefix='tapeops-args-', suffix='.json')
    with os.fdopen(handle, 'w') as out:
        json.dump({'ANSIBLE_MODULE_ARGS': payload}, out)
    os.chmod(args_path, 0o644)
    cmd = [sys.executable, '-m', MODULE, args_path]
    if user is not None:
        cmd = ['setpriv', '--reuid=%d' % user, '--regid=%d' % user, '--clear-groups'] + cmd
    env = dict(os.environ, PYTHONPATH=COLLECTIONS_BASE, LC_ALL='C')
    if path_env is not None:
        env['PATH'] = path_env
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd or '/',
                              check=False)
    finally:
        os.unlink(args_path)
    try:
        result = json.loads(proc.stdout)
    except ValueError:
        raise AssertionError('module printed no JSON (rc %d): %s %s' % (proc.returncode, proc.stdout, proc.stderr))
    return proc.returncode, result


def tree_state(root):
    """Recursive content hash, mode, size and mtime of everything under root (symlinks by target)."""
    state = {}
    for directory, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(dirs + files):
            path = os.path.join(directory, name)
            st = os.lstat(path)
            entry = (stat.S_IFMT(st.st_mode), st.st_mode & 0o7777, st.st_size, st.st_mtime_ns)
            if stat.S_ISREG(st.st_mode):
                digest = hashlib.sha256()
                with open(path, 'rb') as handle:
                    for block in iter(lambda: handle.read(1048576), b''):
                        digest.update(block)
                entry += (digest.hexdigest(),)
            elif stat.S_ISLNK(st.st_mode):
                entry += (os.readlink(path),)
            state[os.path.relpath(path, root)] = entry
    return state


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
    rc, result = run_module({'paths': [src], 'time_budget': 60})
    assert rc == 0, result
    assert tree_state(src) == before
    assert result['changed'] is False
    stream = result['streams'][0]
    assert stream['bytes'] == sum(sizes) and stream['files'] == len(sizes)
    assert stream['complete'] is True and stream['empty_files'] == 1
    assert stream['mean_mb_s'] > 0 and stream['min_mb_s'] <= stream['p5_mb_s'] <= stream['mean_mb_s'] * 10
    agg = result['aggregate']
    assert (agg['bytes'], agg['files'], agg['streams']) == (sum(sizes), len(sizes), 1)
    for key in ('mean_mb_s', 'p5_mb_s', 'min_mb_s', 'duration_s', 'series_mb_s', 'files_per_s'):
        assert key in agg and key in stream
    kinds = dict((os.path.basename(s['path']), s['kind']) for s in result['skipped'])
    assert kinds['fifo'] == 'fifo' and kinds['sock'] == 'socket' and kinds['loop'] == 'symlink'
    if os.geteuid() == 0:
        assert kinds['null'] == 'char_device'
    assert result['cache']['method'] == 'evict' and result['cache']['bypassed'] is True
    assert result['compressibility']['ratio'] == pytest.approx(2.0, rel=0.1)
    assert result['fio_version'].startswith('fio-')


def test_two_paths_two_parallel_streams_and_symlink_loop_followed(tmp_path):
    a, b = str(tmp_path / 'a'), str(tmp_path / 'b')
    sizes_a = make_source(a, count=10)
    sizes_b = make_source(b, count=12)
    rc, result = run_module({'paths': [a, b], 'follow_symlinks': True, 'compressibility_sample': '0'})
    assert rc == 0, result
    assert [s['path'] for s in result['streams']] == [a, b]
    assert [s['bytes'] for s in result['streams']] == [sum(sizes_a), sum(sizes_b)]
    assert result['aggregate']['streams'] == 2
    assert result['aggregate']['bytes'] == sum(sizes_a) + sum(sizes_b)
    assert result['skipped_counts']['symlink_loop'] == 2
    assert result['compressibility'] is None


def test_awkward_file_names_are_read_through_aliases(tmp_path):
    names = ['#recycle', 'a;b', 'x:y', 'trailing ', 'new\nline', '${HOME}', 'plain']
    for index, name in enumerate(names):
        (tmp_path / name).write_bytes(b'z' * (1000 + index))
    rc, result = run_module({'paths': [str(tmp_path)], 'compressibility_sample': '0'})
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
    assert stream['files'] == 3 and stream['complete'] is False


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
    rc, result = run_module({'paths': [str(full), str(empty)], 'compressibility_sample': '0'})
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
def test_permission_denied_files_are_skipped_as_unprivileged_user():
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
        rc, result = run_module({'paths': [base], 'compressibility_sample': '0'}, user=65534)
        assert rc == 0, result
        assert result['streams'][0]['bytes'] == 4000
        assert sorted((os.path.basename(s['path']), s['kind']) for s in result['skipped']) == \
            [('locked', 'permission_denied'), ('secret', 'permission_denied')]
        # The whole tree unreadable: a clear failure, not an empty measurement.
        os.chmod(os.path.join(base, 'ok'), 0o600)
        rc, result = run_module({'paths': [base]}, user=65534)
        assert rc == 1 and 'become: true' in result['msg']
    finally:
        subprocess.run(['rm', '-rf', base], check=True)


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
    assert result['skipped'][0]['kind'] == 'fifo'
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
                             'synthetic_streams': 2, 'synthetic_compressible_fraction': 0.5})
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
        rc, result = run_module({'paths': [str(mnt)], 'compressibility_sample': '0'})
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
        rc, result = run_module({'paths': [base], 'compressibility_sample': '0', 'time_budget': 40})
        assert rc == 0, result
        assert any(arg.startswith('--alloc-size=') for arg in result['fio_cmd'])
        assert result['streams'][0]['files'] == count and result['streams'][0]['bytes'] == count
        # Typically 25-50 s on the 2 shared cores of CI; a per-file cost gone quadratic would blow far past this.
        assert time.time() - started < 120
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_memory_filesystem_is_reported_as_uncacheable():
    base = tempfile.mkdtemp(prefix='tapeops-shm-', dir='/dev/shm')
    try:
        with open(os.path.join(base, 'f'), 'wb') as handle:
            handle.write(b'm' * 100000)
        rc, result = run_module({'paths': [base], 'compressibility_sample': '0'})
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
    rc, result = run_module({'paths': [str(tmp_path)], 'cache': mode, 'compressibility_sample': '0'})
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
    from ansible_collections.tapeops.qualify.plugins.module_utils._source_read import SourceReadError, parse_size
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
    assert rc == 1 and 'fio was not found' in result['msg'] and 'apt install fio' in result['msg']
    rc, result = run_module({'paths': [str(tmp_path)], 'fio_path': str(empty_bin / 'fio')}, timeout=60)
    assert rc == 1 and 'Cannot run' in result['msg']
