# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The forecast's replay of a whole observed night, against real time: the ratio.

An observed window (tapeops.qualify.tape_drive_observe, the nightly backups)
is replayed once, whole, through the drive model (_judge/_observed). This
prints how many seconds of the window one second of replay covers, for an
8-hour night of 1-second samples on each of three drives (LTO-9, LTO-8,
LTO-5 models) and three feeds (steady above the drive's full speed, between
its floor and full speed, and below its floor with stalls), target
>= 20,000x real time: the night in under 1.5 s.

The feeds are generated (seeded), one per second: steady with 5 % noise, or
bursts and 2-5 s stalls; they stand for what the drive was fed, not for a
source.

    python3 bench/forecast_replay.py [--hours 8] [--seed 1]
"""

import argparse
import random
import time

from _collection import import_collection

import_collection()
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _drive_model, _forecast  # noqa: E402

TARGET = 20000.0


def feed(kind, need_full, need_floor, seconds, rng):
    """One rate per second (MB/s) for ``seconds``."""
    if kind == 'above full':
        return [max(0.0, rng.gauss(need_full * 1.2, need_full * 0.06)) for dummy in range(seconds)]
    if kind == 'between':
        middle = (need_full + need_floor) / 2.0
        return [max(0.0, rng.gauss(middle, middle * 0.05)) for dummy in range(seconds)]
    out = []
    while len(out) < seconds:
        out.extend([need_floor * 0.6] * rng.randint(5, 30))
        out.extend([0.0] * rng.randint(2, 5))
    return out[:seconds]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--hours', type=float, default=8.0)
    ap.add_argument('--seed', type=int, default=1)
    args = ap.parse_args()
    seconds = int(args.hours * 3600)
    rng = random.Random(args.seed)
    worst = None
    print('%-28s %-11s %9s %9s %12s %8s' % ('drive', 'feed', 'replay_s', 'window_s', 'x_real_time', 'class'))
    for generation, vendor in ((9, 'IBM'), (8, 'HPE'), (5, 'IBM')):
        drive = _drive_model.lookup(generation, 'FH', vendor)
        params = _forecast.drive_parameters(drive)
        full, floor = _forecast.need(params, 1.0)
        for kind in ('above full', 'between', 'below floor'):
            series = feed(kind, full, floor, seconds, rng)
            started = time.perf_counter()
            result = _forecast.forecast(drive, feed_series_mb_s=series, tape_ratio=1.0, trace=False,
                                        replay='once')
            spent = time.perf_counter() - started
            ratio = seconds / spent
            worst = ratio if worst is None else min(worst, ratio)
            print('%-28s %-11s %9.2f %9d %12.0f %8s' % (
                params['label'][:28], kind, spent, seconds, ratio, result['class']))
    print('slowest: %.0fx real time (target >= %.0fx): %s' % (worst, TARGET, 'ok' if worst >= TARGET else 'SLOW'))


if __name__ == '__main__':
    main()
