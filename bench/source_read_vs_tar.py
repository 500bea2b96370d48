# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""source_read_benchmark against a plain ``tar -cf - TREE | cat >/dev/null``, side by side.

tar runs twice per round: with its default 10 KiB records (``-b 20``) and with
64 KiB records (``-b 128``), the module's default read size.

Both read the same tree cold (page cache dropped before every run, so run as
root), alternating which goes first, for a few rounds; prints each rate and the
ratio module/tar. A ratio near 1 says the module measures what a file-by-file
reader gets; well above 1 would mean the module reads in a way backups cannot
(or tar is CPU-bound); well below 1 would mean the measurement is the
bottleneck.

    python3 bench/source_read_vs_tar.py [--path TREE] [--size-mb 600] [--rounds 2]

Without --path a mixed tree (web files, office documents, images, a few large
files; half zeros half random) is laid out under /var/tmp and removed after.
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


def run_module(tree, base):
    args = {'paths': [tree], 'time_budget': 0, 'cache': 'drop', 'compressibility_sample': '0'}
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


def tree_bytes(tree):
    total = 0
    for directory, _dirs, files in os.walk(tree):
        for name in files:
            path = os.path.join(directory, name)
            if os.path.isfile(path) and not os.path.islink(path):
                total += os.path.getsize(path)
    return total


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n', maxsplit=1)[0])
    parser.add_argument('--path', help='tree to read (default: a synthetic mixed tree under /var/tmp)')
    parser.add_argument('--size-mb', type=int, default=600, help='synthetic tree size, MiB (default 600)')
    parser.add_argument('--rounds', type=int, default=2)
    opts = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit('run as root: both readers start from a dropped page cache')
    base = collections_base()
    sys.path.insert(0, base)
    from ansible_collections.tapeops.qualify.plugins.module_utils import _source_tree

    made = None
    tree = opts.path
    if tree is None:
        made = tempfile.mkdtemp(prefix='tapeops-bench-src-', dir='/var/tmp')
        tree = os.path.join(made, 'tree')
        plan = _source_tree.plan_synthetic(opts.size_mb * 1048576, 'mixed', seed=7)
        _source_tree.write_synthetic(tree, plan, compressible_fraction=0.5)
    try:
        size = tree_bytes(tree)
        print('tree %s: %.1f MB' % (tree, size / 1e6))
        print('%-6s %-8s %10s %10s %8s' % ('round', 'reader', 'MB/s', 'seconds', 'cpu%'))
        ratios = []
        readers = ('module', 'tar', 'tar-64k')
        rates = dict((reader, []) for reader in readers)
        for number in range(opts.rounds):
            # Rotate the order so no reader always runs first (or last) on a shared disk.
            order = readers[number % 3:] + readers[:number % 3]
            for reader in order:
                if reader == 'module':
                    out = run_module(tree, base)
                    rate, seconds = out['mb_s'], out['seconds']
                else:
                    # tar: default 10 KiB records (-b 20); tar-64k: -b 128, the module's read size.
                    out = run_tar(tree, 20 if reader == 'tar' else 128)
                    rate, seconds = size / 1e6 / out['seconds'], out['seconds']
                rates[reader].append(rate)
                print('%-6d %-8s %10.1f %10.2f %8.1f' % (number + 1, reader, rate, seconds, out['cpu_pct']))
        for reader in ('tar', 'tar-64k'):
            ratios = [m / t for m, t in zip(rates['module'], rates[reader])]
            print('ratio module/%s per round: %s  (mean %.3f)' % (
                reader, ', '.join('%.3f' % r for r in ratios), sum(ratios) / len(ratios)))
    finally:
        if made:
            shutil.rmtree(made)


if __name__ == '__main__':
    main()
