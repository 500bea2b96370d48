# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A small fleet, shaped like the modules' results, for the report tests.

Rates of the lab's drive path are the ones measured on the lab (dd to a
tgt-backed /dev/nst0 under user-mode-linux: about 40 / 45 / 50 MB/s at
64 KiB / 256 KiB / 1 MiB, see docs/lab.md); the sources are synthetic.
"""

from __future__ import annotations


def source(mean, p5, streams=2, seconds=30):
    series = [round(mean + ((i * 37) % 11 - 5) * (mean - p5) / 5.0, 1) for i in range(seconds)]
    per = [{'path': '/srv/backup-src/part%d' % i, 'bytes': int(mean / streams * seconds * 1e6), 'files': 800,
            'duration_s': float(seconds), 'mean_mb_s': mean / streams, 'p5_mb_s': p5 / streams,
            'min_mb_s': p5 / streams / 2, 'files_per_s': 26.7, 'series_mb_s': [s / streams for s in series]}
           for i in range(streams)]
    return {'changed': False, 'streams': per,
            'aggregate': {'mean_mb_s': mean, 'p5_mb_s': p5, 'min_mb_s': min(series), 'bytes': int(mean * seconds * 1e6),
                          'files': 800 * streams, 'duration_s': float(seconds), 'series_mb_s': series,
                          'streams': streams},
            'compressibility': {'ratio': 1.6, 'sample_bytes': 32 * 10 ** 6, 'compressor': 'zlib-1'},
            'cache': {'dropped': True}, 'passed_over': [], 'warnings': []}


def drive(nst, vendor, product, serial):
    return {'nst': nst, 'st': nst.replace('nst', 'st'), 'sg': '/dev/sg1', 'vendor': vendor, 'product': product,
            'revision': 'G350', 'serial': serial, 'generation': None,
            'block_limits': {'min': 1, 'max': 1048576}, 'hba_max_transfer_bytes': None, 'block_size': 0,
            'density_code': 0, 'media_loaded': True, 'barcode': 'MA1001L5', 'changer': None,
            'mtweofi_supported': True, 'st_options': {}, 'stats': {}, 'log_pages': {}}


def write_result(nst):
    sweep = []
    for bs, rate in ((65536, 40.0), (262144, 45.0), (1048576, 50.0)):
        for pattern, factor in (('random', 1.0), ('2:1', 1.02)):
            sweep.append({'block_size': bs, 'pattern': pattern, 'bytes': int(rate * 1e7), 'seconds': 10.0,
                          'mb_s': round(rate * factor, 1), 'series_mb_s': [rate] * 10, 'st_stats_delta': {},
                          'error': None})
    sweep.append({'block_size': 2097152, 'pattern': 'random', 'bytes': 0, 'seconds': 0, 'mb_s': None,
                  'series_mb_s': [], 'st_stats_delta': {}, 'error': 'EINVAL'})
    return {'changed': True, 'item': {'nst': nst}, 'sweep': sweep, 'ceiling_block_size': 1048576,
            'best': {'block_size': 1048576, 'mb_s': 50.0},
            'filemarks': [{'segment_mb': 64, 'kind': 'sync', 'marks': 4, 'mb_s': 38.0, 'seconds': 7.0,
                           'seconds_lost_per_mark': 0.03},
                          {'segment_mb': 64, 'kind': 'immediate', 'marks': 4, 'mb_s': 39.0, 'seconds': 6.9,
                           'seconds_lost_per_mark': 0.02}]}
