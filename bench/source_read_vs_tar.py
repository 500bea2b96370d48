# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""source_read_benchmark against readers that behave like backup agents, side by side.

Per round, each reader reads the whole tree cold:

- ``module``: the module (fio, file by file, 64 KiB reads);
- ``agent``: a reference backup agent - the same files in the same order, one at
  a time, open / read(64 KiB) / close, every byte written onward into a pipe to
  another process (``cat >/dev/null`` stands for the media agent), as a Disk
  Agent passes its data to the Media Agent or a file daemon to the storage
  daemon;
- ``reader``: the same agent without the pipe (the bytes are read and dropped),
  which separates what the source delivers from what moving it onward costs;
- ``tar``: ``tar -cf - TREE | cat >/dev/null`` with GNU tar's default 10 KiB
  records (``-b 20``), and ``tar-64k`` with 64 KiB records (``-b 128``).

All read the same tree cold (page cache dropped before every run, so run as
root; the bench checks with fincore(1) that the drop took effect and says so),
rotating which goes first, for a few rounds; prints each rate, the CPU used
and the ratios module/agent and module/tar. A ratio near 1 says the module
measures what a file-by-file reader that moves every byte onward gets; well
above 1 would mean the module reads in a way backups cannot; well below 1 would
mean the measurement is the bottleneck.

    python3 bench/source_read_vs_tar.py [--path TREE] [--size-mb 600] [--rounds 3]

Without --path a mixed tree (web files, office documents, images, a few large
files; half zeros half random) is laid out under /var/tmp and removed after.
With --loop it is laid out on ext4 on a tmpfs-backed loop device instead, a
device that reads at memory speed (the readers' own costs show); add
--throttle-mb-s N to limit its reads with the kernel block throttle (cgroup v1
blkio or v2 io.max), a source of known speed that no reader should beat.

    python3 bench/source_read_vs_tar.py --loop --throttle-mb-s 300 --size-mb 1500
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def collections_base():
    parts = ROOT.split(os.sep)
    if parts[-3:] == ['ansible_collections', 'tapeops', 'qualify']:
        return os.sep.join(parts[:-3])
    base = os.path.join(tempfile.gettempdir(), 'tapeops-bench-collections')
    link = os.path.join(base, 'ansible_collections', 'tapeops', 'qualify')
    os.makedirs(os.path.dirname(link), exist_ok=True)
    if not os.path.islink(link):
        os.symlink(ROOT, link)
    return base


def drop_caches():
    os.sync()
    with open('/proc/sys/vm/drop_caches', 'w') as handle:
        handle.write('3\n')


def resident_bytes(files, sample=200):
    """Bytes of up to ``sample`` files (spread over the list) still in the page cache, by fincore(1); None without it."""
    if not shutil.which('fincore') or not files:
        return None
    step = max(1, len(files) // sample)
    picked = [path for path, _size in files[::step]]
    proc = subprocess.run(['fincore', '--bytes', '--noheadings', '--raw', '--output', 'RES'] + picked,
                          capture_output=True, text=True, check=False, env=dict(os.environ, LC_ALL='C'))
    if proc.returncode != 0:
        return None
    return sum(int(line.split()[0]) for line in proc.stdout.splitlines() if line.strip())


def run_agent(files, bufsize=65536, onward=True):
    """A backup agent: one file at a time, open / read / close, every byte passed onward through a pipe."""
    drop_caches()
    consumer = subprocess.Popen(['cat'], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL) if onward else None
    out = consumer.stdin.fileno() if onward else None
    before_self = resource.getrusage(resource.RUSAGE_SELF)
    started = time.monotonic()
    total = 0
    for path, _size in files:
        fd = os.open(path, os.O_RDONLY)
        try:
            while True:
                data = os.read(fd, bufsize)
                if not data:
                    break
                if onward:
                    view = memoryview(data)
                    while view:
                        view = view[os.write(out, view):]
                total += len(data)
        finally:
            os.close(fd)
    if onward:
        consumer.stdin.close()
        consumer.wait()
    seconds = time.monotonic() - started
    after_self = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after_self.ru_utime - before_self.ru_utime) + (after_self.ru_stime - before_self.ru_stime)
    # The agent's own CPU; the consumer's (cat) is not counted, as the media agent's is not the agent's.
    return {'seconds': seconds, 'bytes': total, 'cpu_pct': 100.0 * cpu / seconds}


def run_module(tree, base):
    # One pass over the whole tree (no time budget), cache dropped first and each file evicted before it is read.
    args = {'paths': [tree], 'time_budget': 0, 'cache': 'drop', 'compressibility_sample': '0', 'scaling': False}
    handle, path = tempfile.mkstemp(suffix='.json')
    with os.fdopen(handle, 'w') as out:
        json.dump({'ANSIBLE_MODULE_ARGS': args}, out)
    env = dict(os.environ, PYTHONPATH=base, LC_ALL='C')
    started = time.monotonic()
    proc = subprocess.run([sys.executable, '-m', 'ansible_collections.tapeops.qualify.plugins.modules.'
                           'source_read_benchmark', path], capture_output=True, text=True, env=env, check=False)
    wall = time.monotonic() - started
    os.unlink(path)
    result = json.loads(proc.stdout)
    if proc.returncode != 0:
        raise SystemExit('module failed: %s' % result.get('msg'))
    agg = result['aggregate']
    return {'mb_s': agg['mean_mb_s'], 'bytes': agg['bytes'], 'seconds': agg['duration_s'], 'wall_s': wall,
            'cpu_pct': result['streams'][0]['cpu_pct']}


def run_tar(tree, blocking=20):
    drop_caches()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    # tar reads file by file, one at a time, like a backup agent; cat stands for the consumer.
    # (GNU tar skips reading when it writes straight to /dev/null: the pipe keeps it honest.)
    proc = subprocess.run(['sh', '-c', 'tar -b "$2" -cf - -C "$1" . | cat >/dev/null', 'sh', tree, str(blocking)],
                          env=dict(os.environ, LC_ALL='C'), check=False)
    seconds = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit('tar failed with exit code %d' % proc.returncode)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {'seconds': seconds, 'cpu_pct': 100.0 * cpu / seconds}


class LoopSource:
    """ext4 on a tmpfs-backed loop device, optionally read-throttled for this process and its children."""

    def __init__(self, size_mb, throttle_mb_s=None):
        self.size_mb = size_mb
        self.throttle = throttle_mb_s
        self.work = tempfile.mkdtemp(prefix='tapeops-bench-loop-')
        self.mnt = os.path.join(self.work, 'mnt')
        self.image = self.loop = self.cgroup = None
        self.mounted = False

    def __enter__(self):
        try:
            os.mkdir(self.mnt)
            handle, self.image = tempfile.mkstemp(prefix='tapeops-bench-', suffix='.img', dir='/dev/shm')
            os.close(handle)
            os.truncate(self.image, int(self.size_mb * 1.3 + 200) * 1048576)
            self.loop = subprocess.run(['losetup', '--find', '--show', self.image], capture_output=True, text=True,
                                       check=True).stdout.strip()
            subprocess.run(['mkfs.ext4', '-q', '-F', self.loop], check=True)
            subprocess.run(['mount', self.loop, self.mnt], check=True)
            self.mounted = True
        except BaseException:
            self.__exit__()
            raise
        return self

    def throttle_self(self):
        """Put this process (and so every reader it starts) under the read throttle."""
        if not self.throttle:
            return
        with open('/sys/block/%s/dev' % os.path.basename(self.loop)) as handle:
            majmin = handle.read().strip()
        bps = int(self.throttle * 1e6)
        name = 'tapeops-bench-%d' % os.getpid()
        controllers = '/sys/fs/cgroup/cgroup.controllers'
        if os.path.exists(controllers) and 'io' in open(controllers).read().split():
            self.cgroup = os.path.join('/sys/fs/cgroup', name)
            os.mkdir(self.cgroup)
            with open(os.path.join(self.cgroup, 'io.max'), 'w') as handle:
                handle.write('%s rbps=%d\n' % (majmin, bps))
            tasks = os.path.join(self.cgroup, 'cgroup.procs')
        else:
            self.cgroup = os.path.join('/sys/fs/cgroup/blkio', name)
            os.mkdir(self.cgroup)
            with open(os.path.join(self.cgroup, 'blkio.throttle.read_bps_device'), 'w') as handle:
                handle.write('%s %d\n' % (majmin, bps))
            tasks = os.path.join(self.cgroup, 'tasks')
        with open(tasks, 'w') as handle:
            handle.write(str(os.getpid()))

    def __exit__(self, *exc):
        if self.cgroup:
            parent = os.path.dirname(self.cgroup)
            tasks = os.path.join(parent, 'cgroup.procs' if os.path.exists(os.path.join(self.cgroup, 'io.max'))
                                 else 'tasks')
            with open(tasks, 'w') as handle:
                handle.write(str(os.getpid()))
            os.rmdir(self.cgroup)
        if self.mounted:
            subprocess.run(['umount', self.mnt], check=False)
        if self.loop:
            subprocess.run(['losetup', '--detach', self.loop], check=False)
        if self.image and os.path.exists(self.image):
            os.unlink(self.image)
        shutil.rmtree(self.work, ignore_errors=True)
        return False


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n', maxsplit=1)[0])
    parser.add_argument('--path', help='tree to read (default: a synthetic mixed tree under /var/tmp)')
    parser.add_argument('--size-mb', type=int, default=600, help='synthetic tree size, MiB (default 600)')
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--loop', action='store_true', help='lay the tree out on a tmpfs-backed loop device')
    parser.add_argument('--throttle-mb-s', type=float, help='with --loop: limit the device\'s reads to this MB/s')
    opts = parser.parse_args()
    if opts.throttle_mb_s and not opts.loop:
        parser.error('--throttle-mb-s needs --loop')
    if os.geteuid() != 0:
        raise SystemExit('run as root: both readers start from a dropped page cache')
    base = collections_base()
    sys.path.insert(0, base)
    from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _source_tree

    made = loop = None
    tree = opts.path
    if opts.loop:
        loop = LoopSource(opts.size_mb, opts.throttle_mb_s).__enter__()
        tree = os.path.join(loop.mnt, 'tree')
    elif tree is None:
        made = tempfile.mkdtemp(prefix='tapeops-bench-src-', dir='/var/tmp')
        tree = os.path.join(made, 'tree')
    try:
        if made or loop:
            plan = _source_tree.plan_synthetic(opts.size_mb * 1048576, 'mixed', seed=7)
            _source_tree.write_synthetic(tree, plan, compressible_fraction=0.5)
        if loop:
            loop.throttle_self()
            print('source: ext4 on %s (tmpfs-backed)%s' % (
                loop.loop, ', reads throttled to %g MB/s' % opts.throttle_mb_s if opts.throttle_mb_s else ''))
        walked = _source_tree.walk_tree(tree)
        files = walked['files']
        size = walked['bytes']
        print('tree %s: %.1f MB in %d files' % (tree, size / 1e6, len(files)))
        drop_caches()
        left = resident_bytes(files)
        if left is None:
            print('cache drop: cannot tell (fincore from util-linux is missing)')
        elif left == 0:
            print('cache drop took effect: none of the sampled files is in the page cache')
        else:
            print('cache drop did NOT take effect: %d bytes of the sampled files are still cached - the rates '
                  'below are (partly) RAM rates' % left)
        print('%-6s %-8s %10s %10s %8s' % ('round', 'reader', 'MB/s', 'seconds', 'cpu%'))
        readers = ('module', 'agent', 'reader', 'tar', 'tar-64k')
        rates = dict((reader, []) for reader in readers)
        for number in range(opts.rounds):
            # Rotate the order so no reader always runs first (or last) on a shared disk.
            order = readers[number % len(readers):] + readers[:number % len(readers)]
            for reader in order:
                if reader == 'module':
                    out = run_module(tree, base)
                    rate, seconds = out['mb_s'], out['seconds']
                elif reader in ('agent', 'reader'):
                    out = run_agent(files, onward=reader == 'agent')
                    rate, seconds = out['bytes'] / 1e6 / out['seconds'], out['seconds']
                else:
                    # tar: default 10 KiB records (-b 20); tar-64k: -b 128, the module's read size.
                    out = run_tar(tree, 20 if reader == 'tar' else 128)
                    rate, seconds = size / 1e6 / out['seconds'], out['seconds']
                rates[reader].append(rate)
                print('%-6d %-8s %10.1f %10.2f %8.1f' % (number + 1, reader, rate, seconds, out['cpu_pct']))
        for reader in ('agent', 'reader', 'tar', 'tar-64k'):
            ratios = [m / t for m, t in zip(rates['module'], rates[reader])]
            ordered = sorted(ratios)
            print('ratio module/%s per round: %s  (mean %.3f, median %.3f)' % (
                reader, ', '.join('%.3f' % r for r in ratios), sum(ratios) / len(ratios), ordered[len(ordered) // 2]))
    finally:
        if made:
            shutil.rmtree(made)
        if loop:
            loop.__exit__()


if __name__ == '__main__':
    main()
