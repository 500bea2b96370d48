# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Truth of the source read number: a source of known speed must measure at that speed.

The source is an ext4 filesystem on a loop device whose reads are throttled by the
kernel's block throttle (cgroup blkio / io.max): the module runs inside the
throttled cgroup and must report the limit within +-5 %. The image sits on tmpfs,
so without the throttle the loop device reads at memory speed: the throttle is the
only limit. The files are written just before the run, so they are in the page
cache: a measurement that failed to keep the cache out would read at GB/s.

On this CI host (Debian 12, kernel 6.18) /sys/fs/cgroup is cgroup v1 with a blkio
hierarchy (cgroup2 is mounted at /sys/fs/cgroup/unified without the io
controller); device-mapper is not available (/dev/mapper/control missing), so
dm-delay is no option. blkio.throttle.read_bps_device works; io.max is used when
the io controller is available on cgroup v2.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

import pytest

import ansible_collections

COLLECTIONS_BASE = os.path.dirname(list(ansible_collections.__path__)[0])
MODULE = 'ansible_collections.tapeops.qualify.plugins.modules.source_read_benchmark'
LIMIT_MB_S = 20
LIMIT_BPS = LIMIT_MB_S * 1000 * 1000
DATA_BYTES = 160 * 1000 * 1000   # 8 s at the limit
V1_BLKIO = '/sys/fs/cgroup/blkio'
V2_ROOT = '/sys/fs/cgroup'


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


class ThrottledSource:
    """ext4 on a tmpfs-backed loop device, mounted, readable at LIMIT_BPS inside a cgroup."""

    def __init__(self, kind):
        self.kind = kind
        self.work = tempfile.mkdtemp(prefix='tapeops-truth-')
        self.image = None
        self.loop = None
        self.mnt = os.path.join(self.work, 'mnt')
        self.mounted = False
        self.cgroup = None

    def __enter__(self):
        try:
            self._setup()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

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
        else:
            self.cgroup = os.path.join(V1_BLKIO, name)
            os.mkdir(self.cgroup)
            with open(os.path.join(self.cgroup, 'blkio.throttle.read_bps_device'), 'w') as handle:
                handle.write('%s %d\n' % (majmin, LIMIT_BPS))

    def write_tree(self, total):
        """Files of 20 KB to 8 MB (log-uniform), random bytes; returns (tree path, bytes, files)."""
        rng = random.Random(5)
        tree = os.path.join(self.mnt, 'tree')
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
        return tree, made, count

    def run_module(self, args):
        handle, args_path = tempfile.mkstemp(prefix='tapeops-args-', suffix='.json')
        with os.fdopen(handle, 'w') as out:
            json.dump({'ANSIBLE_MODULE_ARGS': args}, out)
        tasks = os.path.join(self.cgroup, 'cgroup.procs' if self.kind == 'v2' else 'tasks')

        def enter_cgroup():
            with open(tasks, 'w') as target:
                target.write(str(os.getpid()))

        env = dict(os.environ, PYTHONPATH=COLLECTIONS_BASE, LC_ALL='C')
        try:
            proc = subprocess.run([sys.executable, '-m', MODULE, args_path], capture_output=True, text=True,
                                  timeout=300, env=env, preexec_fn=enter_cgroup, check=False)
        finally:
            os.unlink(args_path)
        return proc.returncode, json.loads(proc.stdout)

    def __exit__(self, *exc):
        if self.mounted:
            subprocess.run(['umount', self.mnt], check=False, timeout=60)
        if self.loop:
            subprocess.run(['losetup', '--detach', self.loop], check=False, timeout=30)
        if self.image and os.path.exists(self.image):
            os.unlink(self.image)
        if self.cgroup and os.path.isdir(self.cgroup):
            os.rmdir(self.cgroup)   # empty: the module process has exited
        shutil.rmtree(self.work, ignore_errors=True)
        return False


KIND, WHY_NOT = _throttle_kind()


@pytest.mark.host_root
@pytest.mark.skipif(KIND is None, reason=WHY_NOT or '')
def test_measured_rate_is_the_throttled_source_rate_within_5_percent():
    with ThrottledSource(KIND) as source:
        tree, total, files = source.write_tree(DATA_BYTES)
        rc, result = source.run_module({'paths': [tree], 'time_budget': 60, 'compressibility_sample': '0'})
        assert rc == 0, result
        agg = result['aggregate']
        assert agg['bytes'] == total and agg['files'] == files  # the whole tree, every byte
        assert result['streams'][0]['filesystem']['device'] is not None
        print('throttle %d MB/s: measured mean %.2f p5 %.2f min %.2f MB/s over %.1f s' % (
            LIMIT_MB_S, agg['mean_mb_s'], agg['p5_mb_s'], agg['min_mb_s'], agg['duration_s']))
        assert abs(agg['mean_mb_s'] - LIMIT_MB_S) <= 0.05 * LIMIT_MB_S, agg
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
        rc, result = source.run_module({'paths': [left, right], 'time_budget': 6, 'compressibility_sample': '0'})
        assert rc == 0, result
        agg = result['aggregate']
        assert agg['streams'] == 2
        # Both streams read through one throttled device: together they get the limit.
        print('throttle %d MB/s, 2 streams: measured %.2f MB/s (%s)' % (
            LIMIT_MB_S, agg['mean_mb_s'], ', '.join('%.2f' % s['mean_mb_s'] for s in result['streams'])))
        assert abs(agg['mean_mb_s'] - LIMIT_MB_S) <= 0.05 * LIMIT_MB_S, agg
        assert all(s['mean_mb_s'] > 5 for s in result['streams'])


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
    # Either the whole tree was read, or the 20 s budget stopped the stream.
    assert stream['bytes'] == plan['streams'][0]['bytes'] or stream['duration_s'] >= 19
    assert result['aggregate']['mean_mb_s'] > 0 and result['aggregate']['p5_mb_s'] > 0
    print('lab-ma2 source read: %.1f MB/s mean, %.1f p5, %d files, %.1f s' % (
        result['aggregate']['mean_mb_s'], result['aggregate']['p5_mb_s'], result['aggregate']['files'],
        result['aggregate']['duration_s']))
