# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Truth of the source read number: a source of known speed must measure at that speed, in every mode.

The source is an ext4 filesystem on a loop device whose reads are throttled by the
kernel's block throttle (cgroup blkio / io.max): the module runs inside the
throttled cgroup and must report the limit within +-5 %. The image sits on tmpfs,
so without the throttle the loop device reads at memory speed: the throttle is the
only limit. The files are written just before the run, so they are in the page
cache: a measurement that failed to keep the cache out would read at GB/s (and so
would a second pass that was not evicted again).

On this CI host (Debian 12, kernel 6.18) /sys/fs/cgroup is cgroup v1 with a blkio
hierarchy (cgroup2 is mounted at /sys/fs/cgroup/unified without the io
controller); device-mapper is not available (/dev/mapper/control missing), so
dm-delay is no option. blkio.throttle.read_bps_device works; io.max is used when
the io controller is available on cgroup v2.

The module also runs in a CPU group of its own with a high weight (v1
cpu.shares 10240 against the 1024 of every other group and session; v2
cpu.weight 1000 where the cpu controller is already enabled). What is tested is that
the module measures the device, and a reader that waits for a CPU behind a busy
loop elsewhere on a 2-core machine measures the machine instead: beside two
Python busy loops the reader got 18.8 and 19.0 of the 20 MB/s. A backup server's
own load is what the module should see there; this host's test load is not.

The block throttle limits reads only and adds no latency a single reader would
feel, so every stream count gets the limit. For a source whose single stream is
latency bound, and for competing ingest (writes that share the source's
bandwidth), the source is a file server behind a link of known rate and
round-trip time instead: sshfs to the real OpenSSH sftp-server through
tests/integration/sftp_link.py, where reads and writes draw on one byte budget.
The link, sftp-server, sshfs and the reader share a high-weight CPU group of
their own too: without it, in the whole test command beside two Python busy
loops, the link delivered 15.8 of its 20 MB/s; with it, beside the same busy
loops, 20.0.

Every test compares the tree's content, modes and mtimes before and after: the
repeated passes, the scaling steps, the per-drive read and the ingest never
write into a source.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

import ansible_collections

from ansible_collections.tapeops.qualify.tests.unit.plugins.modules.module_harness import tree_state

COLLECTIONS_BASE = os.path.dirname(list(ansible_collections.__path__)[0])
HERE = os.path.dirname(os.path.abspath(__file__))
MODULE = 'ansible_collections.tapeops.qualify.plugins.modules.source_read_benchmark'
LIMIT_MB_S = 20
LIMIT_BPS = LIMIT_MB_S * 1000 * 1000
# The share of its rate the sftp link (a Python process) has kept on a loaded 2-core machine: 17.9 of 20 MB/s seen.
LINK_LOADED_SHARE = 0.8
DATA_BYTES = 160 * 1000 * 1000   # 8 s at the limit
V1_BLKIO = '/sys/fs/cgroup/blkio'
V1_CPU = '/sys/fs/cgroup/cpu'
V2_ROOT = '/sys/fs/cgroup'
V2_CPU_WEIGHT = ('cpu.weight', '1000\n')   # the high weight a v2 group gets (the default is 100)
SFTP_SERVER = '/usr/lib/openssh/sftp-server'


def _throttle_kind():
    """'v2', 'v1' or a reason why no kernel block throttle can be used here."""
    if os.geteuid() != 0:
        return None, 'needs root (loop devices, cgroups)'
    if shutil.which('fio') is None or shutil.which('mkfs.ext4') is None or shutil.which('losetup') is None:
        return None, 'needs fio, mkfs.ext4 (e2fsprogs) and losetup (util-linux)'
    controllers = os.path.join(V2_ROOT, 'cgroup.controllers')
    if os.path.exists(controllers):
        with open(controllers) as handle:
            if 'io' in handle.read().split():
                return 'v2', None
    if os.path.exists(os.path.join(V1_BLKIO, 'blkio.throttle.read_bps_device')):
        return 'v1', None
    return None, ('no kernel block throttle: %s has no io controller and %s/blkio.throttle.read_bps_device is '
                  'missing' % (controllers, V1_BLKIO))


def _link_missing():
    if shutil.which('fio') is None:
        return 'needs fio'
    if shutil.which('sshfs') is None or not os.path.exists(SFTP_SERVER) or not os.path.exists('/dev/fuse'):
        return 'needs sshfs, %s and /dev/fuse (apt install sshfs openssh-sftp-server)' % SFTP_SERVER
    return None


def run_module(args, cgroup_tasks=(), timeout=600):
    """The module as Ansible runs it; inside the cgroups whose task files ``cgroup_tasks`` names, if any."""
    handle, args_path = tempfile.mkstemp(prefix='tapeops-args-', suffix='.json')
    with os.fdopen(handle, 'w') as out:
        json.dump({'ANSIBLE_MODULE_ARGS': args}, out)

    def enter_cgroup():
        for tasks in cgroup_tasks:
            with open(tasks, 'w') as target:
                target.write(str(os.getpid()))

    env = dict(os.environ, PYTHONPATH=COLLECTIONS_BASE, LC_ALL='C')
    try:
        proc = subprocess.run([sys.executable, '-m', MODULE, args_path], capture_output=True, text=True,
                              timeout=timeout, env=env, preexec_fn=enter_cgroup if cgroup_tasks else None,
                              check=False)
    finally:
        os.unlink(args_path)
    try:
        return proc.returncode, json.loads(proc.stdout)
    except ValueError:
        raise AssertionError('module printed no JSON (rc %d): %s %s' % (proc.returncode, proc.stdout, proc.stderr))


def v2_cpu_delegated():
    """True where the host already delegates cpu to the cgroup v2 root's children (systemd does): the tests give a
    group a CPU weight only there, and never change the host's cgroup set-up."""
    try:
        with open(os.path.join(V2_ROOT, 'cgroup.subtree_control')) as handle:
            return 'cpu' in handle.read().split()
    except OSError:
        return False


def high_weight_cpu_group(name):
    """A CPU group of its own with a high weight (v1 cpu.shares 10240 against the 1024 of every other group and
    session; v2 cpu.weight 1000 where ``v2_cpu_delegated``). Returns (the group's directory, the file a pid is
    written to to join it), or (None, None) where there is none to make; the caller removes the directory once it
    is empty."""
    if os.geteuid() != 0:
        return None, None
    if os.path.exists(os.path.join(V1_CPU, 'cpu.shares')):
        group, weight, join = os.path.join(V1_CPU, name), ('cpu.shares', '10240\n'), 'tasks'
    elif v2_cpu_delegated():
        group, weight, join = os.path.join(V2_ROOT, name), V2_CPU_WEIGHT, 'cgroup.procs'
    else:
        return None, None
    os.mkdir(group)
    with open(os.path.join(group, weight[0]), 'w') as handle:
        handle.write(weight[1])
    return group, os.path.join(group, join)


def remove_group(group):
    """rmdir a cgroup once its processes have left it (a process that has just exited may still count)."""
    for _attempt in range(50):
        try:
            os.rmdir(group)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.1)
    os.rmdir(group)


def machine_state():
    """What the machine's CPUs, memory and I/O were doing, as counters (for ``load_between``)."""
    with open('/proc/stat') as handle:
        cpu = [int(v) for v in handle.readline().split()[1:]]
    pressure = {}
    for kind in ('cpu', 'io', 'memory'):
        try:
            with open('/proc/pressure/%s' % kind) as handle:
                for line in handle:
                    scope, fields = line.split(None, 1)
                    pressure['%s_%s' % (kind, scope)] = int(fields.split('total=')[1])
        except (OSError, IndexError, ValueError):
            pass
    with open('/proc/meminfo') as handle:
        available = [int(line.split()[1]) for line in handle if line.startswith('MemAvailable:')]
    return {'cpu': cpu, 'pressure': pressure, 'mem_available_kb': available[0] if available else None}


def load_between(before, after):
    """The machine over a read, for an assertion's message: its CPUs' shares (busy, iowait, stolen by the
    hypervisor), the seconds some or all tasks stalled on CPU, I/O or memory (PSI), the memory left."""
    ticks = [b - a for a, b in zip(before['cpu'], after['cpu'])]
    total = float(sum(ticks)) or 1.0
    # /proc/stat: user nice system idle iowait irq softirq steal ...
    out = {'busy_pct': round(100 * (total - ticks[3] - ticks[4]) / total, 1),
           'iowait_pct': round(100 * ticks[4] / total, 1),
           'steal_pct': round(100 * ticks[7] / total, 1) if len(ticks) > 7 else None,
           'mem_available_mb': (after['mem_available_kb'] or 0) // 1024}
    for key, value in after['pressure'].items():
        out['stall_%s_s' % key] = round((value - before['pressure'].get(key, value)) / 1e6, 2)
    return out


def write_tree(tree, total, seed=5):
    """Files of 20 KB to 8 MB (log-uniform), random bytes, 80 per directory; returns (bytes, files)."""
    rng = random.Random(seed)
    made = count = 0
    while made < total:
        size = min(int(20000 * (8000000 / 20000.0) ** rng.random()), total - made)
        directory = os.path.join(tree, 'half%d' % (count % 2), 'd%02d' % (count // 80))
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, 'f%05d' % count), 'wb') as handle:
            handle.write(os.urandom(size))
        made += size
        count += 1
    os.sync()
    return made, count


class _Source:
    """A source made on entry (``_setup``) and taken down on exit (``__exit__``), also when it was made half way."""

    def __enter__(self):
        try:
            self._setup()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _setup(self):
        raise NotImplementedError

    def __exit__(self, *exc):
        raise NotImplementedError


class ThrottledSource(_Source):
    """ext4 on a tmpfs-backed loop device, mounted, readable at LIMIT_BPS inside a cgroup."""

    def __init__(self, kind):
        self.kind = kind
        self.work = tempfile.mkdtemp(prefix='tapeops-truth-')
        self.image = None
        self.loop = None
        self.mnt = os.path.join(self.work, 'mnt')
        self.mounted = False
        self.cgroup = None
        self.cpu_group = None
        self.cpu_join = None
        self.load = None            # the machine over the last read (load_between)

    def _setup(self):
        os.mkdir(self.mnt)
        shm = '/dev/shm' if os.path.isdir('/dev/shm') else self.work
        handle, self.image = tempfile.mkstemp(prefix='tapeops-truth-', suffix='.img', dir=shm)
        os.close(handle)
        os.truncate(self.image, 400 * 1048576)
        self.loop = subprocess.run(['losetup', '--find', '--show', self.image], capture_output=True, text=True,
                                   check=True, timeout=30).stdout.strip()
        subprocess.run(['mkfs.ext4', '-q', '-F', self.loop], check=True, timeout=60)
        # 1 MiB readahead (common on backup servers' arrays) keeps a throttled bio queued at all times, so the
        # device is limited by the throttle's bandwidth, not by one 128 KiB round trip at a time when the
        # loop worker thread waits for a CPU on a busy host.
        with open('/sys/block/%s/queue/read_ahead_kb' % os.path.basename(self.loop), 'w') as handle:
            handle.write('1024\n')
        subprocess.run(['mount', self.loop, self.mnt], check=True, timeout=30)
        self.mounted = True
        with open('/sys/block/%s/dev' % os.path.basename(self.loop)) as handle:
            majmin = handle.read().strip()
        name = 'tapeops-truth-%d' % os.getpid()
        if self.kind == 'v2':
            self.cgroup = os.path.join(V2_ROOT, name)
            os.mkdir(self.cgroup)
            with open(os.path.join(self.cgroup, 'io.max'), 'w') as handle:
                handle.write('%s rbps=%d\n' % (majmin, LIMIT_BPS))
            # v2 puts a process in one group: the throttle's gets the CPU weight (without delegation, the default)
            if v2_cpu_delegated():
                with open(os.path.join(self.cgroup, V2_CPU_WEIGHT[0]), 'w') as handle:
                    handle.write(V2_CPU_WEIGHT[1])
        else:
            self.cgroup = os.path.join(V1_BLKIO, name)
            os.mkdir(self.cgroup)
            with open(os.path.join(self.cgroup, 'blkio.throttle.read_bps_device'), 'w') as handle:
                handle.write('%s %d\n' % (majmin, LIMIT_BPS))
            self.cpu_group, self.cpu_join = high_weight_cpu_group(name + '-cpu')

    def write_tree(self, total):
        """Files of 20 KB to 8 MB (log-uniform), random bytes; returns (tree path, bytes, files)."""
        tree = os.path.join(self.mnt, 'tree')
        made, count = write_tree(tree, total)
        return tree, made, count

    def run_module(self, args):
        groups = [os.path.join(self.cgroup, 'cgroup.procs' if self.kind == 'v2' else 'tasks')]
        if self.cpu_group:
            groups.append(self.cpu_join)
        before = machine_state()
        try:
            return run_module(args, groups)
        finally:
            self.load = load_between(before, machine_state())

    def __exit__(self, *exc):
        if self.mounted:
            subprocess.run(['umount', self.mnt], check=False, timeout=60)
        if self.loop:
            subprocess.run(['losetup', '--detach', self.loop], check=False, timeout=30)
        if self.image and os.path.exists(self.image):
            os.unlink(self.image)
        for group in (self.cgroup, self.cpu_group):
            if group and os.path.isdir(group):
                remove_group(group)   # empty once the module process has exited
        shutil.rmtree(self.work, ignore_errors=True)
        return False


class LinkedSource(_Source):
    """A directory served by the real sftp-server over a link of known rate and round-trip time, mounted by sshfs.

    The link (a Python process), sftp-server, sshfs and the reader (``run_module``) run in a high-weight CPU group
    of their own (``high_weight_cpu_group``), as the throttled source's reader does: the link is the file server
    whose rate the tests know (see the module docstring).
    """

    def __init__(self, rate_bps, rtt_ms=0.0):
        self.rate = rate_bps
        self.rtt = rtt_ms
        self.work = tempfile.mkdtemp(prefix='tapeops-link-')
        self.export = os.path.join(self.work, 'export')
        self.mnt = os.path.join(self.work, 'mnt')
        self.mounted = False
        self.cpu_group = None
        self.cpu_join = None

    def _setup(self):
        os.mkdir(self.export)
        os.mkdir(self.mnt)
        self.cpu_group, self.cpu_join = high_weight_cpu_group('tapeops-link-%d' % os.getpid())
        wrapper = os.path.join(self.work, 'link.sh')
        with open(wrapper, 'w') as handle:
            # sshfs appends ssh's arguments; the link takes none of them. sshfs starts it, in sshfs's CPU group.
            handle.write('#!/bin/sh\nexec %s %s --rate %d --rtt %g\n' % (
                sys.executable, os.path.join(HERE, 'sftp_link.py'), self.rate, self.rtt))
        os.chmod(wrapper, 0o755)
        subprocess.run(['sshfs', '-o', 'ssh_command=%s' % wrapper, 'localhost:%s' % self.export, self.mnt],
                       check=True, timeout=30, preexec_fn=self._join if self.cpu_join else None)
        self.mounted = True

    def _join(self):
        with open(self.cpu_join, 'w') as handle:
            handle.write(str(os.getpid()))

    def run_module(self, args):
        return run_module(args, [self.cpu_join] if self.cpu_join else ())

    def __exit__(self, *exc):
        if self.mounted:
            subprocess.run(['fusermount', '-u', self.mnt], check=False, timeout=30)
            self.mounted = False
        shutil.rmtree(self.work, ignore_errors=True)
        if self.cpu_group and os.path.isdir(self.cpu_group):
            remove_group(self.cpu_group)
        return False


KIND, WHY_NOT = _throttle_kind()
LINK_MISSING = _link_missing()


def _curve(result):
    return ', '.join('%d: %.2f (p5 %.2f, %.1f passes)' % (s['streams'], s['mean_mb_s'], s['p5_mb_s'], s['passes'])
                     for s in result['scaling'])


@pytest.mark.host_root
@pytest.mark.skipif(KIND is None, reason=WHY_NOT or '')
def test_measured_rate_is_the_throttled_source_rate_within_5_percent():
    with ThrottledSource(KIND) as source:
        tree, total, files = source.write_tree(DATA_BYTES)
        before = tree_state(tree)
        # No time budget: one pass over the whole tree, every byte.
        rc, result = source.run_module({'paths': [tree], 'time_budget': 0, 'compressibility_sample': '0'})
        assert rc == 0, result
        assert tree_state(tree) == before
        agg = result['aggregate']
        assert agg['bytes'] == total and agg['files'] == files  # the whole tree, every byte
        assert result['passes'] == 1.0
        assert result['streams'][0]['filesystem']['device'] is not None
        print('throttle %d MB/s: measured mean %.2f p5 %.2f min %.2f MB/s over %.1f s' % (
            LIMIT_MB_S, agg['mean_mb_s'], agg['p5_mb_s'], agg['min_mb_s'], agg['duration_s']))
        assert abs(agg['mean_mb_s'] - LIMIT_MB_S) <= 0.05 * LIMIT_MB_S, (agg, source.load)
        # The floor is a real floor of a steady source: p5 and min near the limit, not near 0.
        assert agg['p5_mb_s'] >= 0.75 * LIMIT_MB_S, agg
        assert len(agg['series_mb_s']) >= 6


@pytest.mark.host_root
@pytest.mark.skipif(KIND is None, reason=WHY_NOT or '')
def test_two_streams_share_the_throttled_source():
    with ThrottledSource(KIND) as source:
        tree, total, _files = source.write_tree(DATA_BYTES)
        left, right = os.path.join(tree, 'half0'), os.path.join(tree, 'half1')
        # 80 MB each at ~10 MB/s: both streams run until the 6 s budget, side by side all the time.
        rc, result = source.run_module({'paths': [left, right], 'time_budget': 6, 'compressibility_sample': '0',
                                        'min_samples': 5})
        assert rc == 0, result
        agg = result['aggregate']
        assert agg['streams'] == 2
        # Both streams read through one throttled device: together they get the limit.
        print('throttle %d MB/s, 2 streams: measured %.2f MB/s (%s)' % (
            LIMIT_MB_S, agg['mean_mb_s'], ', '.join('%.2f' % s['mean_mb_s'] for s in result['streams'])))
        assert abs(agg['mean_mb_s'] - LIMIT_MB_S) <= 0.05 * LIMIT_MB_S, (agg, source.load)
        assert all(s['mean_mb_s'] > 5 for s in result['streams'])


@pytest.mark.host_root
@pytest.mark.skipif(KIND is None, reason=WHY_NOT or '')
def test_scaling_on_a_throttled_device_is_flat_and_passes_are_evicted_each_time():
    """1, 2 and 4 streams through one 20 MB/s device: each step gets the limit (+-5 %), not 1x/2x/4x.

    The tree is 40 MB (2 s at the limit) and each step reads 8 s, so every stream reads its files again and
    again: a pass served from the page cache would read at GB/s.
    """
    with ThrottledSource(KIND) as source:
        tree, total, _files = source.write_tree(40 * 1000 * 1000)
        before = tree_state(tree)
        rc, result = source.run_module({'paths': [tree], 'streams': 4, 'time_budget': 8,
                                        'compressibility_sample': '0', 'min_samples': 5})
        assert rc == 0, result
        assert tree_state(tree) == before
        print('throttle %d MB/s, one tree: %s' % (LIMIT_MB_S, _curve(result)))
        curve = result['scaling']
        assert [step['streams'] for step in curve] == [1, 2, 4]
        assert [step['split'] for step in curve] == [False, True, True]
        for step in curve:
            assert abs(step['mean_mb_s'] - LIMIT_MB_S) <= 0.05 * LIMIT_MB_S, (step, source.load)
            assert step['p5_mb_s'] >= 0.75 * LIMIT_MB_S, step
            assert step['inconclusive'] is None and step['samples'] >= 5
            # Everything read about 8 s at the limit, i.e. about 4 passes of the 40 MB tree.
            assert step['bytes'] == pytest.approx(8 * LIMIT_BPS, rel=0.08)
        assert curve[0]['passes'] == pytest.approx(4.0, rel=0.08)
        assert result['aggregate']['mean_mb_s'] == curve[-1]['mean_mb_s']


@pytest.mark.host_root
@pytest.mark.skipif(KIND is None, reason=WHY_NOT or '')
def test_one_second_tree_is_read_again_or_marked_inconclusive():
    with ThrottledSource(KIND) as source:
        tree, total, files = source.write_tree(LIMIT_BPS)   # one second at the limit
        before = tree_state(tree)
        # Read once (no time budget): about one second, one sample at most - inconclusive, never a verdict.
        rc, once = source.run_module({'paths': [tree], 'time_budget': 0, 'compressibility_sample': '0'})
        assert rc == 0, once
        assert once['passes'] == 1.0 and once['samples'] <= 1 and once['seconds'] < 2
        assert 'set time_budget' in once['inconclusive']['reason']
        # With a 12 s budget the tree is read about 12 times, with at least 10 samples: conclusive and true.
        rc, again = source.run_module({'paths': [tree], 'time_budget': 12, 'compressibility_sample': '0'})
        assert rc == 0, again
        assert tree_state(tree) == before
        print('1-second tree: once %.2f MB/s (%d samples); 12 s budget %.2f MB/s p5 %.2f, %.1f passes, %d samples; '
              'the machine %s' % (once['aggregate']['mean_mb_s'], once['samples'], again['aggregate']['mean_mb_s'],
                                  again['aggregate']['p5_mb_s'], again['passes'], again['samples'], source.load))
        assert again['inconclusive'] is None and again['samples'] >= 10
        assert again['passes'] == pytest.approx(12.0, rel=0.08)
        assert again['streams'][0]['files'] >= 11 * files
        assert abs(again['aggregate']['mean_mb_s'] - LIMIT_MB_S) <= 0.05 * LIMIT_MB_S, (
            again['aggregate'], source.load)


@pytest.mark.host_root
@pytest.mark.skipif(KIND is None, reason=WHY_NOT or '')
def test_all_drives_at_once_share_the_source():
    """Two drives, two streams each, one read: each drive's share is half the device's limit."""
    with ThrottledSource(KIND) as source:
        tree, _total, _files = source.write_tree(80 * 1000 * 1000)
        before = tree_state(tree)
        rc, result = source.run_module({'paths': [os.path.join(tree, 'half0'), os.path.join(tree, 'half1')],
                                        'drives': 2, 'streams_per_drive': 2, 'time_budget': 8, 'scaling': False,
                                        'compressibility_sample': '0', 'min_samples': 5})
        assert rc == 0, result
        assert tree_state(tree) == before
        split = result['per_drive']
        print('2 drives x 2 streams at %d MB/s: per drive %.2f MB/s (groups %s)' % (
            LIMIT_MB_S, split['aggregate']['mean_mb_s'], ', '.join('%.2f' % g['mean_mb_s'] for g in split['groups'])))
        assert result['aggregate']['streams'] == 4
        assert abs(result['aggregate']['mean_mb_s'] - LIMIT_MB_S) <= 0.05 * LIMIT_MB_S, (
            result['aggregate'], source.load)
        assert abs(split['aggregate']['mean_mb_s'] - LIMIT_MB_S / 2.0) <= 0.05 * LIMIT_MB_S / 2.0, (
            split['aggregate'], source.load)
        # Drive 0 got half0's two parts, drive 1 half1's: each group about half the device.
        assert [g['paths'] for g in split['groups']] == [[os.path.join(tree, 'half0')], [os.path.join(tree, 'half1')]]
        for group in split['groups']:
            assert abs(group['mean_mb_s'] - LIMIT_MB_S / 2.0) <= 0.25 * LIMIT_MB_S / 2.0, group


@pytest.mark.host_root
@pytest.mark.skipif(LINK_MISSING is not None, reason=LINK_MISSING or '')
def test_latency_bound_source_scales_non_linearly_to_the_link_rate():
    """A file server 20 ms away on a 20 MB/s link: one stream is latency bound, four reach the link's rate.

    Measured on the CI host: 8.9-9.2, 16.9-17.0 and 19.6-19.7 MB/s for 1, 2 and 4 streams (6 s steps) -
    far from 1x/2x/4x.
    """
    with LinkedSource(LIMIT_BPS, rtt_ms=20) as link:
        made, _count = write_tree(os.path.join(link.export, 'tree'), 60 * 1000 * 1000)
        before = tree_state(os.path.join(link.export, 'tree'))
        tree = os.path.join(link.mnt, 'tree')
        rc, result = link.run_module({'paths': [tree], 'streams': 4, 'time_budget': 6, 'compressibility_sample': '0',
                                      'min_samples': 5})
        assert rc == 0, result
        assert tree_state(os.path.join(link.export, 'tree')) == before
        print('link %d MB/s, 20 ms: %s' % (LIMIT_MB_S, _curve(result)))
        one, two, four = [step['mean_mb_s'] for step in result['scaling']]
        assert result['streams'][0]['filesystem']['network'] is True
        # The link is a Python process sharing the 2 CI cores: under load, before it had a high-weight CPU group
        # (LinkedSource), it delivered 17.9 of its 20 MB/s, and 15.8 beside a CPU hog.
        assert LINK_LOADED_SHARE * LIMIT_MB_S <= four <= 1.05 * LIMIT_MB_S, result['scaling']
        assert one < 0.7 * LIMIT_MB_S                     # one synchronous reader waits on the round trips
        assert one < two <= four * 1.02                  # more streams help ...
        assert four < 0.75 * 4 * one                     # ... but not linearly: the link's rate caps them


@pytest.mark.host_root
@pytest.mark.skipif(LINK_MISSING is not None, reason=LINK_MISSING or '')
def test_competing_ingest_lowers_the_source_rate_and_leaves_nothing():
    """Reads and ingest writes share a 20 MB/s file server: 5 MB/s of ingest leaves about 15 for the source."""
    with LinkedSource(LIMIT_BPS) as link:
        export_tree = os.path.join(link.export, 'tree')
        write_tree(export_tree, 40 * 1000 * 1000)
        os.mkdir(os.path.join(link.export, 'spool'))
        before = tree_state(export_tree)
        tree, spool = os.path.join(link.mnt, 'tree'), os.path.join(link.mnt, 'spool')
        rc, paced = link.run_module({'paths': [tree], 'time_budget': 8, 'compressibility_sample': '0', 'min_samples': 5,
                                     'ingest': {'path': spool, 'rate_mb_s': 5, 'size': '64M'}})
        assert rc == 0, paced
        assert os.listdir(spool) == [] and os.listdir(os.path.join(link.export, 'spool')) == []
        rc, flat = link.run_module({'paths': [tree], 'time_budget': 8, 'compressibility_sample': '0', 'min_samples': 5,
                                    'ingest': {'path': spool, 'size': '64M'}})
        assert rc == 0, flat
        assert os.listdir(os.path.join(link.export, 'spool')) == []
        assert tree_state(export_tree) == before
        for result in (paced, flat):
            ingest = result['ingest']
            assert ingest['removed'] is True and ingest['error'] is None, ingest
            print('ingest %s: source %.2f -> %.2f MB/s (%+.1f %%), ingest wrote %.2f MB/s' % (
                ingest['target_text'], ingest['without']['mean_mb_s'], ingest['with']['mean_mb_s'],
                ingest['change_pct'], ingest['rate_mb_s']))
            # The link caps the read; it is a Python process on the machine's cores, and a loaded CI machine has
            # left it 17.9 of its 20 MB/s. The claims below compare rates measured in the same run.
            assert LINK_LOADED_SHARE * LIMIT_MB_S <= ingest['without']['mean_mb_s'] <= 1.05 * LIMIT_MB_S, ingest
            # Source and ingest share the link: together they never get more than it carries.
            assert ingest['with']['mean_mb_s'] + ingest['rate_mb_s'] <= 1.05 * LIMIT_MB_S, ingest
        ingest = paced['ingest']
        assert ingest['rate_mb_s'] == pytest.approx(5, rel=0.1)
        # The source loses about the ingest's 5 MB/s: at least half of it, at most all of it and 1.5 MB/s for the
        # sftp messages and the ingest's ramp.
        drop = ingest['without']['mean_mb_s'] - ingest['with']['mean_mb_s']
        assert 0.5 * ingest['rate_mb_s'] <= drop <= ingest['rate_mb_s'] + 1.5, ingest
        ingest = flat['ingest']
        assert ingest['target'] is None and ingest['target_text'] == 'flat out'
        assert ingest['with']['mean_mb_s'] < 0.75 * ingest['without']['mean_mb_s'] and ingest['rate_mb_s'] > 3
        assert ingest['with']['mean_mb_s'] + ingest['rate_mb_s'] >= 0.9 * ingest['without']['mean_mb_s'], ingest


@pytest.mark.lab
def test_module_in_lab_guests_over_ssh(lab, tmp_path):
    """The module in a user-mode-linux guest: fio reads the guest's ext4 source tree, over SSH."""
    out = tmp_path / 'out'
    out.mkdir()
    run = lab.playbook('tests/integration/targets/source_read_benchmark/playbook.yml',
                       extra_vars={'source_read_out': str(out)}, limit='lab-ma2')
    assert run.rc == 0, run.stdout[-4000:] + run.stderr[-2000:]
    data = json.loads((out / 'lab-ma2.json').read_text())
    plan, result = data['plan'], data['result']
    stream = result['streams'][0]
    assert stream['filesystem']['fstype'] == 'ext4' and stream['filesystem']['network'] is False
    # The 14 s budget: a smaller tree is read again until it ends, a larger one is cut by it.
    assert stream['duration_s'] >= 13 and result['seconds'] >= 13 and stream['bytes'] > 0
    assert plan['ingest']['directory'].endswith('/spool')
    assert result['aggregate']['mean_mb_s'] > 0 and result['aggregate']['p5_mb_s'] > 0
    assert result['samples'] >= 10 and result['inconclusive'] is None
    # Scaling to two streams, both drives of the host at once (one per drive), and the ingest beside it.
    assert [step['streams'] for step in result['scaling']] == [1, 2]
    assert result['per_drive']['drives'] == 2 and len(result['per_drive']['groups']) == 2
    ingest = result['ingest']
    assert ingest['removed'] is True and ingest['error'] is None and ingest['rate_mb_s'] > 0
    print('lab-ma2 source read: %.1f MB/s mean, %.1f p5, %d files, %.1f s, %.1f passes; curve %s; ingest %s: '
          '%.1f -> %.1f MB/s' % (
              result['aggregate']['mean_mb_s'], result['aggregate']['p5_mb_s'], result['aggregate']['files'],
              result['seconds'], result['passes'], _curve(result), ingest['target_text'],
              ingest['without']['mean_mb_s'], ingest['with']['mean_mb_s']))
