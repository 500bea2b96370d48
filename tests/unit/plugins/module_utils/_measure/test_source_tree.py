# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Source trees for the fio reads: walking real directories, mounts, synthetic layouts, sampling."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import tempfile

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _source_tree

import ansible_collections  # noqa: E402  (a namespace package: where this collection is importable from)

COLLECTIONS_BASE = os.path.dirname(list(ansible_collections.__path__)[0])


def make_tree(base):
    """A small tree with one of every awkward thing a backup source holds."""
    os.makedirs(os.path.join(base, 'b', 'deep'))
    os.makedirs(os.path.join(base, 'a'))
    with open(os.path.join(base, 'a', 'one.dat'), 'wb') as handle:
        handle.write(b'1' * 1000)
    with open(os.path.join(base, 'b', 'deep', 'two.dat'), 'wb') as handle:
        handle.write(b'2' * 5000)
    with open(os.path.join(base, 'b', 'three.dat'), 'wb') as handle:
        handle.write(b'3' * 300)
    open(os.path.join(base, 'a', 'empty'), 'wb').close()
    os.mkfifo(os.path.join(base, 'a', 'pipe'))
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(os.path.join(base, 'b', 'sock'))
    sock.close()
    os.symlink('one.dat', os.path.join(base, 'a', 'link-to-one'))
    os.symlink('..', os.path.join(base, 'b', 'up'))           # a loop when followed
    os.symlink('self', os.path.join(base, 'b', 'self'))       # ELOOP on stat
    os.symlink('missing', os.path.join(base, 'b', 'dangling'))
    if os.geteuid() == 0:
        os.mknod(os.path.join(base, 'b', 'null'), 0o600 | stat.S_IFCHR, os.makedev(1, 3))
        os.mknod(os.path.join(base, 'b', 'blk'), 0o600 | stat.S_IFBLK, os.makedev(7, 200))


def kinds(walked):
    return sorted((os.path.basename(s['path']), s['reason']) for s in walked['passed_over'])


def test_walk_skips_fifo_socket_devices_and_symlinks_never_opening_them(tmp_path):
    make_tree(str(tmp_path))
    walked = _source_tree.walk_tree(str(tmp_path))
    assert [os.path.relpath(p, str(tmp_path)) for p, dummy in walked['files']] == \
        ['a/one.dat', 'b/three.dat', 'b/deep/two.dat']  # a directory's files, then its subdirectories
    assert walked['bytes'] == 6300
    assert walked['empty_files'] == 1
    expected = [('dangling', 'symlink'), ('link-to-one', 'symlink'), ('pipe', 'fifo'), ('self', 'symlink'),
                ('sock', 'socket'), ('up', 'symlink')]
    if os.geteuid() == 0:
        expected += [('blk', 'block_device'), ('null', 'char_device')]
    assert kinds(walked) == sorted(expected)


def test_walk_following_symlinks_detects_loops(tmp_path):
    make_tree(str(tmp_path))
    walked = _source_tree.walk_tree(str(tmp_path), follow_symlinks=True)
    names = sorted(os.path.relpath(p, str(tmp_path)) for p, dummy in walked['files'])
    assert names == ['a/link-to-one', 'a/one.dat', 'b/deep/two.dat', 'b/three.dat']
    found = dict(kinds(walked))
    assert found['up'] == 'symlink_loop'
    assert found['self'] == 'symlink_loop'
    assert found['dangling'] == 'broken_symlink'
    assert found['pipe'] == 'fifo'


def test_walk_reads_hard_linked_data_once(tmp_path):
    (tmp_path / 'a').write_bytes(b'x' * 10)
    os.link(str(tmp_path / 'a'), str(tmp_path / 'b'))
    walked = _source_tree.walk_tree(str(tmp_path))
    assert [os.path.basename(p) for p, dummy in walked['files']] == ['a']
    assert kinds(walked) == [('b', 'hardlink')]


def test_walk_max_files_counts_the_rest(tmp_path):
    for i in range(5):
        (tmp_path / ('f%d' % i)).write_bytes(b'x')
    walked = _source_tree.walk_tree(str(tmp_path), max_files=3)
    assert len(walked['files']) == 3
    assert walked['passed_over_counts'] == {'max_files': 2}


@pytest.mark.parametrize('make, words', [
    (lambda p: None, 'does not exist'),
    (os.mkfifo, 'neither a directory nor a regular file'),
])
def test_check_source_path_bad_input(tmp_path, make, words):
    path = str(tmp_path / 'src')
    make(path)
    with pytest.raises(_source_tree.SourceError, match=words):
        _source_tree.check_source_path(path)


def test_check_source_path_relative():
    with pytest.raises(_source_tree.SourceError, match='not absolute'):
        _source_tree.check_source_path('srv/data')


@pytest.mark.skipif(os.geteuid() != 0, reason='needs root to drop to another user')
def test_walk_as_unprivileged_user_skips_unreadable_files_and_dirs():
    """Permission denied, for real: the walker runs as nobody (65534) in a child process."""
    base = tempfile.mkdtemp(prefix='tapeops-perm-', dir='/tmp')
    try:
        os.chmod(base, 0o755)
        os.makedirs(os.path.join(base, 'open'))
        os.makedirs(os.path.join(base, 'locked'))
        for name, mode in (('open/readable', 0o644), ('open/secret', 0o600), ('locked/inside', 0o644)):
            with open(os.path.join(base, name), 'wb') as handle:
                handle.write(b'data')
            os.chmod(os.path.join(base, name), mode)
        os.chmod(os.path.join(base, 'open'), 0o755)
        os.chmod(os.path.join(base, 'locked'), 0o700)
        code = ('import json, sys; sys.path.insert(0, %r);'
                'from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _source_tree as t;'
                'print(json.dumps(t.walk_tree(%r)))' % (COLLECTIONS_BASE, base))
        proc = subprocess.run(['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', sys.executable, '-c',
                               code], capture_output=True, text=True, timeout=60, check=False)
        assert proc.returncode == 0, proc.stderr
        walked = json.loads(proc.stdout)
        assert [os.path.relpath(p, base) for p, dummy in walked['files']] == ['open/readable']
        assert sorted((os.path.relpath(s['path'], base), s['reason']) for s in walked['passed_over']) == \
            [('locked', 'permission_denied'), ('open/secret', 'permission_denied')]
    finally:
        subprocess.run(['rm', '-rf', base], check=True)


# /proc/self/mountinfo lines captured on this collection's CI host (Debian 12, kernel 6.18,
# 2026-11-22) with two real sshfs 3.7.3 mounts (fuse.sshfs over sftp-server; the second on a
# directory named "with space", hence the 040 escape), a loop device, and /dev/shm mounted twice.
MOUNTINFO = r'''22 27 0:21 / /proc rw,relatime - proc proc rw
25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24684084k
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard,resv_strict,resuid=65534,resgid=65534
30 25 0:27 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24684084k
42 27 7:0 / /tmp/truth-exp/mnt rw,relatime - ext4 /dev/loop0 rw
43 27 0:39 / /tmp/sshfs-exp/mnt rw,nosuid,nodev,relatime - fuse.sshfs localhost:/tmp/src-exp/t rw,user_id=0,group_id=0
44 27 0:40 / /tmp/with\040space rw,nosuid,nodev,relatime - fuse.sshfs localhost:/tmp rw,user_id=0,group_id=0
'''


def test_parse_mountinfo_and_filesystem_of():
    mounts = _source_tree.parse_mountinfo(MOUNTINFO)
    assert len(mounts) == 7
    assert mounts[6]['mount_point'] == '/tmp/with space'
    sshfs = _source_tree.filesystem_of('/tmp/sshfs-exp/mnt/a/f1', mounts)
    assert (sshfs['fstype'], sshfs['network'], sshfs['memory']) == ('fuse.sshfs', True, False)
    assert sshfs['source'] == 'localhost:/tmp/src-exp/t'
    loop = _source_tree.filesystem_of('/tmp/truth-exp/mnt', mounts)
    assert (loop['fstype'], loop['device'], loop['network']) == ('ext4', '7:0', False)
    assert _source_tree.filesystem_of('/tmp/sshfs-exp/mntx', mounts)['mount_point'] == '/'
    shm = _source_tree.filesystem_of('/dev/shm/x', mounts)
    assert (shm['memory'], shm['device']) == (True, '0:27')  # the later of two mounts on one point
    assert _source_tree.filesystem_of('/tmp/with space/y', mounts)['network'] is True


@pytest.mark.parametrize('fstype, network', [
    ('nfs', True), ('nfs4', True), ('cifs', True), ('smb3', True), ('fuse.sshfs', True), ('ceph', True),
    ('ext4', False), ('xfs', False), ('btrfs', False), ('zfs', False), ('tmpfs', False),
])
def test_is_network_fs(fstype, network):
    assert _source_tree.is_network_fs(fstype) is network


def test_parse_mountinfo_rejects_other_text():
    with pytest.raises(ValueError, match='mountinfo'):
        _source_tree.parse_mountinfo('/dev/vda / ext4 rw 0 0\n')


def test_plan_synthetic_mixed_is_deterministic_and_adds_up():
    plan = _source_tree.plan_synthetic(200 * 1000 * 1000, 'mixed', seed=3)
    assert plan == _source_tree.plan_synthetic(200 * 1000 * 1000, 'mixed', seed=3)
    total = sum(size for dummy, size in plan)
    assert 199 * 1000 * 1000 <= total <= 200 * 1000 * 1000
    classes = set(path.split('/')[0] for path, dummy in plan)
    assert classes == {'web', 'office', 'images', 'large'}
    web = [size for path, size in plan if path.startswith('web/')]
    assert max(web) <= 60000 and min(web) >= 1


def test_plan_synthetic_bad_input():
    with pytest.raises(ValueError, match='Unknown synthetic mix'):
        _source_tree.plan_synthetic(1000, 'videos')
    with pytest.raises(ValueError, match='positive'):
        _source_tree.plan_synthetic(0)


def test_write_synthetic_then_sample_compressibility_and_remove(tmp_path):
    from ansible_collections.tapeops.qualify.plugins.module_utils._judge._drive_model import estimate_compressibility
    plan = _source_tree.plan_synthetic(20 * 1000 * 1000, 'office', seed=1)
    target = str(tmp_path / 'set')
    written = _source_tree.write_synthetic(target, plan, compressible_fraction=0.5)
    assert written == sum(size for dummy, size in plan)
    walked = _source_tree.walk_tree(target)
    assert walked['bytes'] == written
    data, sampled = _source_tree.sample_files(walked['files'], 4 * 1048576, chunk=262144)
    assert len(data) <= 4 * 1048576 and sampled >= 4
    ratio = estimate_compressibility(data)['ratio']
    assert 1.7 < ratio < 2.1  # half zeros, half random
    _source_tree.remove_tree(target)
    assert not os.path.exists(target)


def test_sample_files_keeps_access_times(tmp_path):
    path = tmp_path / 'f'
    path.write_bytes(os.urandom(100000))
    os.utime(str(path), (1000000000, 1000000000))
    data, sampled = _source_tree.sample_files([(str(path), 100000)], 50000)
    assert sampled == 1 and len(data) == 50000
    assert os.stat(str(path)).st_atime == 1000000000


def test_make_aliases_reads_the_same_file(tmp_path):
    src = tmp_path / '#recycle; x'
    src.write_bytes(b'abc')
    aliases = _source_tree.make_aliases([str(src)], str(tmp_path))
    with open(aliases[str(src)], 'rb') as handle:
        assert handle.read() == b'abc'


def test_spread_order_visits_directories_evenly_and_keeps_each_together(tmp_path):
    """Eight directories of three files each, walked as a backup walks them: a read that stops after two
    directories has seen the first and the middle one, not the first two; each directory's files stay together
    in their order; every file is there once."""
    for number in range(8):
        write = tmp_path / ('d%d' % number)
        write.mkdir()
        for name in 'abc':
            (write / name).write_bytes(b'x' * (number + 1))
    walked = _source_tree.walk_tree(str(tmp_path))['files']
    spread = _source_tree.spread_order(walked)
    assert sorted(spread) == sorted(walked)
    dirs = [os.path.basename(os.path.dirname(path)) for path, _size in spread]
    visited = [dirs[index] for index in range(0, len(dirs), 3)]
    assert visited == ['d0', 'd4', 'd2', 'd6', 'd1', 'd5', 'd3', 'd7']
    assert all(dirs[index:index + 3] == [dirs[index]] * 3 for index in range(0, len(dirs), 3))
    assert [os.path.basename(path) for path, _size in spread[:3]] == ['a', 'b', 'c']


def test_spread_order_leaves_one_or_two_directories_as_walked():
    files = [('/s/a/1', 1), ('/s/a/2', 2), ('/s/b/1', 3)]
    assert _source_tree.spread_order(files) == files
    assert _source_tree.spread_order([]) == []


def test_spread_order_of_a_count_that_is_no_power_of_two():
    files = [('/s/%d/f' % number, 1) for number in range(5)]
    assert [path for path, _size in _source_tree.spread_order(files)] == [
        '/s/0/f', '/s/4/f', '/s/2/f', '/s/1/f', '/s/3/f']
