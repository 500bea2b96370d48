# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Backup source trees: walking them safely, their filesystems, synthetic data sets.

Private to this collection: may change without notice.

The walker never opens anything but directories: FIFOs (fio blocks on
them), sockets and device nodes are skipped by their ``lstat`` type. Symlinks
are not followed unless asked (backup agents store the link, not the
target); when followed, a directory already on the path (same st_dev and
st_ino) is a loop and is skipped.
"""

from __future__ import annotations

import bisect
import errno
import os
import stat

from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError

# Filesystem types whose reads go over the network (``/proc/self/mountinfo``
# field 9). A rate measured there is the network's and the file server's.
NETWORK_FS_TYPES = frozenset((
    'nfs', 'nfs4', 'cifs', 'smb3', 'smbfs', 'ncpfs', 'afs', 'ceph', 'glusterfs',
    'fuse.glusterfs', 'fuse.sshfs', 'fuse.s3fs', 'fuse.rclone', 'fuse.cephfs', 'lustre',
    'gpfs', '9p', 'davfs', 'fuse.davfs2', 'beegfs', 'ocfs2', 'gfs2', 'orangefs', 'virtiofs',
))
# Filesystems whose pages are the data: nothing to evict, every read is a RAM read.
MEMORY_FS_TYPES = frozenset(('tmpfs', 'ramfs', 'devtmpfs'))

SKIP_REASONS = {
    'fifo': 'FIFO (named pipe): never opened, a read would block',
    'socket': 'socket: not a file',
    'char_device': 'character device node: not backup data',
    'block_device': 'block device node: not backup data',
    'symlink': 'symbolic link: not followed (follow_symlinks=false)',
    'symlink_loop': 'symbolic link loop: directory already on the path',
    'broken_symlink': 'symbolic link to nothing',
    'permission_denied': 'permission denied',
    'unreadable': 'cannot be opened for reading',
    'other_filesystem': 'another filesystem below the source path (one_file_system=true)',
    'vanished': 'vanished while walking',
    'unknown_type': 'unknown file type',
    'max_files': 'beyond max_files for this stream',
    'hardlink': 'hard link to a file already read (backups store the link, not the data again)',
}


class SourceError(TapeopsError):
    """A source path that cannot be used; the message says what to do."""


def check_source_path(path):
    """Fail early, clearly, on a path that is missing, not a directory, or unreadable."""
    if not os.path.isabs(path):
        raise SourceError('Source path %r is not absolute: give the full path (e.g. /srv/data).' % path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise SourceError('Source path %s does not exist: check the path (and that its filesystem is mounted).' % path)
    except PermissionError:
        raise SourceError('Source path %s cannot be reached (permission denied on a parent directory): '
                          'run the module as root (become: true) or as the backup user.' % path)
    except OSError as exc:
        raise SourceError('Source path %s cannot be examined: %s. Check the path and its filesystem (mount, '
                          'dmesg).' % (path, exc.strerror or exc))
    if stat.S_ISREG(st.st_mode):
        if not os.access(path, os.R_OK):
            raise SourceError('Source file %s is not readable: run as root (become: true) or as the backup user.' % path)
        return st
    if not stat.S_ISDIR(st.st_mode):
        raise SourceError('Source path %s is neither a directory nor a regular file: give the directory '
                          'a backup reads (FIFOs and devices are never read).' % path)
    if not os.access(path, os.R_OK | os.X_OK):
        raise SourceError('Source directory %s is not readable: run as root (become: true) or as the backup user.' % path)
    return st


def open_fails(path):
    """The OSError of opening ``path`` read-only, or None when it opens.

    What fio will do, asked before it runs: a file fio cannot open stops its
    whole job. Not ``os.access``, which says yes to root for every file,
    while open() fails for root too - a write-only sysfs attribute bound onto
    the tree, a file of a FUSE or NFS export that refuses root, an encrypted
    file without its key. Opening reads no data and leaves the access time
    alone (``O_NONBLOCK``: a file that became a FIFO meanwhile does not hang
    the walk).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, 'O_NOCTTY', 0))
    except OSError as exc:
        return exc
    os.close(fd)
    return None


# What a directory entry of each type is, when it is not a directory or a regular file (``_TreeWalk._entry``).
_OTHER_TYPES = ((stat.S_ISFIFO, 'fifo'), (stat.S_ISSOCK, 'socket'), (stat.S_ISCHR, 'char_device'),
                (stat.S_ISBLK, 'block_device'))


class _TreeWalk:
    """One walk of ``walk_tree``: the result it fills, the hard links it has seen."""

    def __init__(self, follow_symlinks, one_file_system, max_files, max_listed):
        self.follow_symlinks = follow_symlinks
        self.one_file_system = one_file_system
        self.max_files = max_files
        self.max_listed = max_listed
        self.result = {'files': [], 'empty_files': 0, 'dirs': 0, 'passed_over': [], 'passed_over_counts': {},
                       'bytes': 0}
        self.linked = set()

    def skip(self, path, reason, detail=None):
        result = self.result
        result['passed_over_counts'][reason] = result['passed_over_counts'].get(reason, 0) + 1
        if len(result['passed_over']) < self.max_listed:
            why = SKIP_REASONS[reason] if detail is None else '%s: %s' % (SKIP_REASONS[reason], detail)
            result['passed_over'].append({'path': path, 'reason': reason, 'why': why})

    def add_file(self, path, st):
        result = self.result
        if st.st_nlink > 1:
            key = (st.st_dev, st.st_ino)
            if key in self.linked:
                self.skip(path, 'hardlink')
                return
            self.linked.add(key)
        if self.max_files is not None and len(result['files']) >= self.max_files:
            self.skip(path, 'max_files')
            return
        failed = open_fails(path)
        if failed is not None:
            if failed.errno in (errno.EACCES, errno.EPERM):
                self.skip(path, 'permission_denied', 'open() refused to uid %d' % os.geteuid())
            else:
                self.skip(path, 'unreadable', failed.strerror or str(failed))
            return
        if st.st_size == 0:
            result['empty_files'] += 1
            return
        result['files'].append((path, st.st_size))
        result['bytes'] += st.st_size

    def tree(self, root, root_st):
        """Every directory below ``root``, depth first in name order."""
        root_dev = root_st.st_dev
        # Stack of (directory path, ancestors' (dev, ino) set) - iterative so a deep tree
        # cannot exhaust Python's recursion limit.
        stack = [(root, frozenset([(root_st.st_dev, root_st.st_ino)]))]
        while stack:
            directory, ancestors = stack.pop()
            self.result['dirs'] += 1
            entries = self._entries(directory)
            if entries is None:
                continue
            subdirs = []
            for entry in entries:
                self._entry(entry, ancestors, root_dev, subdirs)
            # Depth first, in name order: push in reverse so the first name pops first.
            for item in reversed(subdirs):
                stack.append(item)

    def _entries(self, directory):
        """The directory's entries in name order, or None (passed over) when it cannot be listed."""
        try:
            with os.scandir(directory) as iterator:
                return sorted(iterator, key=lambda e: e.name)
        except PermissionError:
            self.skip(directory, 'permission_denied')
        except FileNotFoundError:
            self.skip(directory, 'vanished')
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                self.skip(directory, 'symlink_loop')
            else:
                raise
        return None

    def _entry(self, entry, ancestors, root_dev, subdirs):
        """A file added, a directory to walk appended to ``subdirs``, anything else passed over."""
        path = entry.path
        try:
            st = entry.stat(follow_symlinks=False)
        except FileNotFoundError:
            self.skip(path, 'vanished')
            return
        mode = st.st_mode
        if stat.S_ISLNK(mode):
            st = self._link_target(path)
            if st is None:
                return
            mode = st.st_mode
        if stat.S_ISDIR(mode):
            key = (st.st_dev, st.st_ino)
            if key in ancestors:
                self.skip(path, 'symlink_loop')
            elif self.one_file_system and st.st_dev != root_dev:
                self.skip(path, 'other_filesystem')
            else:
                subdirs.append((path, ancestors | frozenset([key])))
        elif stat.S_ISREG(mode):
            self.add_file(path, st)
        else:
            self.skip(path, next((reason for is_type, reason in _OTHER_TYPES if is_type(mode)), 'unknown_type'))

    def _link_target(self, path):
        """The stat of what a symlink points to, or None (passed over) when it is not followed or leads nowhere."""
        if not self.follow_symlinks:
            self.skip(path, 'symlink')
            return None
        try:
            return os.stat(path)
        except FileNotFoundError:
            self.skip(path, 'broken_symlink')
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                self.skip(path, 'symlink_loop')
            elif exc.errno == errno.EACCES:
                self.skip(path, 'permission_denied')
            else:
                raise
        return None


def spread_order(files):
    """``files`` ((path, size) in the walk's order) with their directories visited in a spread order.

    A backup reads a tree directory by directory; a read bounded in time reaches only the first directories
    of the walk, and on a slow source one directory (or two of its files) then stands for the whole tree. Here
    each directory's files stay together and in their order (the read keeps a backup's locality inside a
    directory), and the directories are taken in bit-reversed order of their place in the walk: the first,
    the middle, the first and third quarters, and so on, so that the first directories a short read reaches
    lie evenly spread over the tree. A complete pass still reads every file once.
    """
    groups = {}
    order = []
    for item in files:
        directory = os.path.dirname(item[0])
        if directory not in groups:
            groups[directory] = []
            order.append(directory)
        groups[directory].append(item)
    count = len(order)
    if count < 3:
        return list(files)
    bits = (count - 1).bit_length()
    ranked = sorted(range(count), key=lambda index: int(format(index, '0%db' % bits)[::-1], 2))
    return [item for index in ranked for item in groups[order[index]]]


def walk_tree(root, follow_symlinks=False, one_file_system=True, max_files=None, max_listed=100):
    """Regular files below ``root`` in backup order.

    Names sorted; a directory's files first, then its subdirectories, depth
    first.

    Returns ``{'files': [(path, size), ...], 'empty_files': int, 'dirs': int,
    'passed_over': [{'path', 'reason', 'why'}...] (at most ``max_listed``),
    'passed_over_counts': {reason: n}, 'bytes': int}``. Zero-byte files are
    counted, not listed (there is nothing to read in them). (Not ``skipped``:
    Ansible reads a result's ``skipped`` as "the task was skipped".)
    """
    root_st = check_source_path(root)
    walk = _TreeWalk(follow_symlinks, one_file_system, max_files, max_listed)
    if stat.S_ISREG(root_st.st_mode):
        walk.add_file(root, root_st)
    else:
        walk.tree(root, root_st)
    return walk.result


def parse_mountinfo(text):
    """Parse ``/proc/self/mountinfo`` into ``[{'mount_point', 'fstype', 'source'}]``.

    Format (proc(5)): ``id parent maj:min root mount_point options [optional...] - fstype source super_options``;
    octal escapes (``\\040`` for a space) are decoded.
    """
    mounts = []
    for line in text.splitlines():
        if not line.strip():
            continue
        fields = line.split(' ')
        try:
            sep = fields.index('-')
        except ValueError:
            raise ValueError('Not a mountinfo line (no " - " separator): %r' % line)
        if sep < 6 or len(fields) < sep + 3:
            raise ValueError('Not a mountinfo line (too few fields): %r' % line)
        mounts.append({
            'mount_point': _unescape_octal(fields[4]),
            'fstype': fields[sep + 1],
            'source': _unescape_octal(fields[sep + 2]),
            'device': fields[2],
        })
    return mounts


def _unescape_octal(value):
    if '\\' not in value:
        return value
    out = []
    i = 0
    while i < len(value):
        if value[i] == '\\' and i + 4 <= len(value) and value[i + 1:i + 4].isdigit():
            out.append(chr(int(value[i + 1:i + 4], 8)))
            i += 4
        else:
            out.append(value[i])
            i += 1
    return ''.join(out)


def filesystem_of(path, mounts):
    """The mount (from ``parse_mountinfo``) a path lives on: the longest matching mount point, last mounted wins."""
    best = None
    for mount in mounts:
        point = mount['mount_point']
        if path == point or point == '/' or path.startswith(point.rstrip('/') + '/'):
            if best is None or len(point) >= len(best['mount_point']):
                best = mount
    if best is None:
        return None
    fstype = best['fstype']
    return {
        'mount_point': best['mount_point'],
        'fstype': fstype,
        'source': best['source'],
        'device': best.get('device'),
        'network': is_network_fs(fstype),
        'memory': fstype in MEMORY_FS_TYPES,
    }


def is_network_fs(fstype):
    return fstype in NETWORK_FS_TYPES or fstype.startswith('nfs') or fstype.startswith('fuse.sshfs')


# Synthetic data sets: what a file server's backup source looks like. Each
# class: (name, share of the bytes, smallest size, largest size); sizes are
# spread log-uniformly between the bounds, deterministically (seeded).
MIXES = {
    'mixed': (('web', 0.05, 2000, 60000), ('office', 0.25, 20000, 3000000),
              ('images', 0.30, 200000, 8000000), ('large', 0.40, 64000000, 512000000)),
    'office': (('office', 1.0, 20000, 3000000),),
    'web': (('web', 1.0, 2000, 60000),),
    'images': (('images', 1.0, 200000, 8000000),),
    'large': (('large', 1.0, 64000000, 512000000),),
}


def plan_synthetic(total_bytes, mix='mixed', seed=1):
    """Files (relative path, size) adding up to about ``total_bytes`` for a mix in MIXES.

    Deterministic for a seed. Large files are capped at the class share so a
    small data set still gets every class. At most 1000 files per directory.
    """
    import random
    if mix not in MIXES:
        raise ValueError('Unknown synthetic mix %r; choose one of %s.' % (mix, ', '.join(sorted(MIXES))))
    total_bytes = int(total_bytes)
    if total_bytes <= 0:
        raise ValueError('The synthetic data set size must be positive.')
    rng = random.Random(seed)
    plan = []
    for name, share, low, high in MIXES[mix]:
        budget = int(total_bytes * share)
        high = min(high, max(budget, 1))
        low = min(low, high)
        made = 0
        index = 0
        while made < budget:
            size = int(round(low * (high / float(low)) ** rng.random())) if high > low else low
            size = max(1, min(size, budget - made))
            plan.append(('%s/%03d/%s-%06d.dat' % (name, index // 1000, name, index), size))
            made += size
            index += 1
    return plan


def write_synthetic(directory, plan, compressible_fraction=0.5, chunk=1048576):
    """Write the planned files under ``directory`` (which must not exist yet).

    Each file is ``compressible_fraction`` zeros and the rest random bytes,
    interleaved in 64 KiB pieces, so a compressor sees about
    ``1 / (1 - compressible_fraction)`` : 1. Every file is fsynced so its
    pages are clean and a cold read can evict them.
    """
    os.mkdir(directory, 0o700)
    piece = 65536
    zero = bytes(piece)
    written = 0
    for relpath, size in plan:
        path = os.path.join(directory, relpath)
        parent = os.path.dirname(path)
        if not os.path.isdir(parent):
            os.makedirs(parent, 0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            left = size
            toggle = 0.0
            while left > 0:
                buf = bytearray()
                while len(buf) < chunk and left - len(buf) > 0:
                    n = min(piece, left - len(buf))
                    toggle += compressible_fraction
                    if toggle >= 1.0:
                        toggle -= 1.0
                        buf += zero[:n]
                    else:
                        buf += os.urandom(n)
                os.write(fd, bytes(buf))
                left -= len(buf)
            os.fsync(fd)
        finally:
            os.close(fd)
        written += size
    return written


def remove_tree(directory):
    """Remove a synthetic data set, never following symlinks."""
    import shutil
    if os.path.islink(directory):
        raise SourceError('%s is a symlink; refusing to remove through it.' % directory)
    shutil.rmtree(directory)


def free_bytes(path):
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


# bytes per sampled window: zlib's 32 KiB history (and an LTO drive's, smaller still) sees no further, so many
# windows across the tree say more about the whole stream than a few long ones
SAMPLE_WINDOW = 131072
# at most this many files opened for one window (a window over a directory of tiny files)
_WINDOW_MAX_FILES = 1024


def sample_files(files, max_bytes, chunk=SAMPLE_WINDOW):
    """``(data, files_sampled)``: :func:`sample_windows`' windows joined."""
    windows, sampled, _total = sample_windows(files, max_bytes, chunk)
    return b''.join(windows), sampled


def sample_windows(files, max_bytes, chunk=SAMPLE_WINDOW):
    """Read up to ``max_bytes`` of the backup stream the files make, in windows spread evenly over its bytes.

    The tape sees the files one after another, so its compression ratio is
    a ratio of bytes: a sample that takes the start of every n-th file
    (what this did before) weighs a 512-byte file like a 64 MB dump and
    misses what the large files hold. Here the files, in ``files``' order
    (the walk's: the order a backup reads them), make one stream of
    ``sum(size)`` bytes; ``max_bytes // chunk`` windows of ``chunk`` bytes
    start at evenly spaced points of it (systematic sampling by bytes), and a
    window that reaches the end of a small file goes on into the next ones,
    as the stream does. Each part of the tree is then sampled in proportion
    to the bytes it sends to the drive.

    Files are opened ``O_RDONLY | O_NOATIME`` where allowed (access times
    unchanged) and the pages read are dropped from the cache afterwards, so a
    later cold read stays cold; a file that cannot be opened, or is no longer
    a regular file, is passed over. Returns ``(windows, files_sampled, stream_bytes)``: each window's bytes in
    stream order (window n starts at n / len(windows) of the stream's ``stream_bytes``), so the compressibility
    can be told along the stream as well as over it.
    """
    files = [(path, size) for path, size in files or [] if size and size > 0]
    if not files or max_bytes <= 0:
        return [], 0, 0
    chunk = max(1, min(int(chunk), int(max_bytes)))
    starts = []
    total = 0
    for _path, size in files:
        starts.append(total)
        total += size
    windows = max(1, min(int(max_bytes // chunk), -(-total // chunk)))
    step = total / float(windows)
    out = []
    touched = set()
    for number in range(windows):
        position = int(number * step)
        index = bisect.bisect_right(starts, position) - 1
        out.append(b''.join(_read_window(files, index, position - starts[index], chunk, touched)))
    return out, len(touched), total


def _read_window(files, index, offset, length, touched):
    """The stream's bytes from ``offset`` into file ``index`` on, ``length`` of them at most."""
    out = []
    noatime = getattr(os, 'O_NOATIME', 0)
    for path, size in files[index:index + _WINDOW_MAX_FILES]:
        if length <= 0:
            break
        try:
            try:
                fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | noatime)
            except PermissionError:
                fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            offset = 0
            continue
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                offset = 0
                continue
            data = os.pread(fd, min(length, max(size - offset, 0)), offset)
            if hasattr(os, 'posix_fadvise'):
                os.posix_fadvise(fd, offset, len(data), os.POSIX_FADV_DONTNEED)
        except OSError:
            offset = 0
            continue
        finally:
            os.close(fd)
        if data:
            out.append(data)
            touched.add(path)
            length -= len(data)
        offset = 0
    return out


def make_aliases(paths, alias_dir):
    """Symlinks with plain names in ``alias_dir`` for paths fio cannot take in a job file.

    Returns ``{original: alias}``. fio opens the alias, the kernel follows it
    to the same file: same bytes, same device, same cache.
    """
    aliases = {}
    for number, path in enumerate(paths):
        alias = os.path.join(alias_dir, 'alias-%07d' % number)
        os.symlink(path, alias)
        aliases[path] = alias
    return aliases
