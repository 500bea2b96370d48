# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The tape writer against dd, side by side, and the ratios.

1. Null sink: the writer's generated 2.5:1 data and dd from /dev/zero, both
   to /dev/null - shows the writer is not the bottleneck (target: >= 2.5 GB/s,
   what an LTO-9 takes at 2.5:1).
2. Device: the writer and dd with the same block size to the same tape node,
   alternating, each from BOT - shows the writer takes what the drive takes
   (target: >= 0.97x dd).

The device part writes to the tape: it goes through the same safety gate as
the module (an nst node of a sequential-access device) and needs
--overwrite because it rewinds and writes from BOT.

Run on a media agent from a checkout. On a lab guest, copy the checkout in
first (the guest's view of the host filesystem can be stale):
    tar c bench plugins | lab/tapelab ssh lab-ma1 'rm -rf /tmp/tq; mkdir /tmp/tq; tar x -C /tmp/tq'
    lab/tapelab ssh lab-ma1 python3 /tmp/tq/bench/tape_write_vs_dd.py --device /dev/nst0 --overwrite
Null sink only, here:
    python3 bench/tape_write_vs_dd.py
"""

import argparse
import os
import resource
import statistics
import subprocess
import time

from _collection import import_collection

import_collection()
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_safety as S  # noqa: E402
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_writer as W  # noqa: E402


def human(size):
    size = size.strip().upper()
    mult = {'K': 1024, 'M': 1024 ** 2, 'G': 1024 ** 3}.get(size[-1:], 1)
    return int(size.rstrip('KMG')) * mult


def dd(dest, block_size, count, source='/dev/zero'):
    cmd = ['dd', 'if=%s' % source, 'of=%s' % dest, 'bs=%d' % block_size, 'count=%d' % count]
    start = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, LC_ALL='C'), check=False)
    seconds = time.monotonic() - start
    if proc.returncode != 0:
        raise SystemExit('dd failed: %s\n%s' % (' '.join(cmd), proc.stderr))
    return block_size * count / seconds / 1e6


def writer(fd, views, total):
    result = W.write_stream(fd, views, total)
    if result['error']:
        raise SystemExit('writer stopped: %s' % result['error'])
    return result['bytes'] / result['seconds'] / 1e6


def rewind(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        W.mtop(fd, W.MTREW, 1, timeout=900)
    finally:
        os.close(fd)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--device', help='non-rewinding tape node (omit for the null-sink part only)')
    parser.add_argument('--overwrite', action='store_true', help='allow rewinding and writing the loaded cartridge')
    parser.add_argument('--block-size', default='256K')
    parser.add_argument('--device-mb', type=int, default=128, help='MB per device run')
    parser.add_argument('--null-gb', type=int, default=20, help='GB per null-sink run')
    parser.add_argument('--repeat', type=int, default=3)
    parser.add_argument('--pattern', default='2.5:1')
    args = parser.parse_args()
    block = human(args.block_size)

    start = time.monotonic()
    pool = W.make_pool(args.pattern)
    gen_seconds = time.monotonic() - start
    views = W.block_views(pool, block)
    print('pattern %s: pool %d MiB generated once in %.2f s (zlib ratio %.2f)' % (
        args.pattern, len(pool) // W.MIB, gen_seconds, W.compression_ratio(pool[:4 * W.MIB])))

    null_total = args.null_gb * 10 ** 9
    count = null_total // block
    mine, theirs = [], []
    for _rep in range(args.repeat):
        theirs.append(dd('/dev/null', block, count))
        fd = os.open('/dev/null', os.O_WRONLY)
        try:
            mine.append(writer(fd, views, count * block))
        finally:
            os.close(fd)
    w_null, d_null = statistics.median(mine), statistics.median(theirs)
    print('null sink, %s blocks, %d GB x %d: writer %.0f MB/s, dd %.0f MB/s, ratio %.2f; target >= 2500 MB/s: %s'
          % (args.block_size, args.null_gb, args.repeat, w_null, d_null, w_null / d_null,
             'PASS' if w_null >= 2500 else 'FAIL'))

    if args.device:
        ident = S.check_tape_device(args.device)
        if not args.overwrite:
            raise SystemExit('--overwrite is required for the device part: it rewinds %s and writes from BOT.'
                             % args.device)
        total = args.device_mb * 10 ** 6
        count = total // block
        mine, theirs = [], []

        def run_dd():
            rewind(args.device)
            theirs.append(dd(args.device, block, count))

        def run_writer():
            rewind(args.device)
            fd = os.open(args.device, os.O_WRONLY)
            try:
                W.mtop(fd, W.MTSETBLK, 0, timeout=900)
                mine.append(writer(fd, views, count * block))
            finally:
                os.close(fd)

        for rep in range(args.repeat):
            # Alternate who goes first: a shared, noisy host drifts over time.
            for step in ((run_dd, run_writer) if rep % 2 == 0 else (run_writer, run_dd)):
                step()
        rewind(args.device)
        w_dev, d_dev = statistics.median(mine), statistics.median(theirs)
        pairs = statistics.median(m / t for m, t in zip(mine, theirs))
        print('device %s (%s), %s blocks, %d MB x %d: writer %.1f MB/s %s, dd %.1f MB/s %s, ratio of medians %.3f, '
              'median of paired ratios %.3f; target >= 0.97: %s' % (
                  args.device, ident.scsi_device, args.block_size, args.device_mb, args.repeat, w_dev,
                  [round(x, 1) for x in mine], d_dev, [round(x, 1) for x in theirs], w_dev / d_dev, pairs,
                  'PASS' if pairs >= 0.97 else 'FAIL'))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print('writer process max RSS %d MiB (pool %d MiB, whatever the volume written)' % (rss, len(pool) // W.MIB))


if __name__ == '__main__':
    main()
