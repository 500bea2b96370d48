# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Too little data is INCONCLUSIVE, whatever the rates say (issue 28; docs/verdict.md, "Too little data").

One rule, ``_forecast.too_little_data``: the sources' data at least the drive's buffer, at least
``MIN_BYTES_READ`` read, at least ``MIN_SAMPLES`` one-second samples (source_read_benchmark's min_samples
defaults to the same number). The 8-byte source is read for real (fio, through the module as Ansible runs
it); the recorded lab runs (tests/unit/fixtures/lab_runs/) keep their classes.
"""

from __future__ import annotations

import os
import shutil

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _drive_model as dm
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _forecast as fc
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _verdict as v
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _source_scaling
from ansible_collections.tapeops.qualify.plugins.module_utils import _run, _words
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _host

from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._tape_fixtures import FIXTURES
from ansible_collections.tapeops.qualify.tests.unit.plugins.modules.module_harness import run_module_process

LTO9 = dm.lookup(9, 'FH', 'IBM')
LTO5 = dm.lookup(5, vendor='IBM')        # 256 MB buffer (sourced: the LTO-5 user's guide)
LAB_RUNS = os.path.join(FIXTURES, 'lab_runs')
RECORDED = {'lab-ma1': v.STREAMING, 'lab-ma2': v.SPEED_MATCHED, 'lab-ma3': v.SHOE_SHINING}


def judge(spec, src):
    return _words.verdict(v.evaluate(spec, src, options={'tape_ratio': 1.0})).to_dict()


def source(rate=500.0, seconds=60, bytes_read=None, tree_bytes=None, tree_files=1000):
    """A source read as source_read_benchmark returns it: a flat series, its bytes, its tree."""
    bytes_read = int(rate * 1e6 * seconds) if bytes_read is None else bytes_read
    tree_bytes = bytes_read if tree_bytes is None else tree_bytes
    return {'streams': [{'path': '/src', 'bytes': bytes_read, 'tree_bytes': tree_bytes, 'tree_files': tree_files}],
            'aggregate': {'mean_mb_s': rate, 'p5_mb_s': rate, 'series_mb_s': [rate] * seconds, 'streams': 1,
                          'samples': seconds, 'duration_s': float(seconds), 'bytes': bytes_read,
                          'files': tree_files},
            'inconclusive': None}


@pytest.mark.skipif(shutil.which('fio') is None, reason='fio is not installed (apt install fio)')
def test_a_source_of_one_8_byte_file_is_inconclusive_not_shoe_shining(tmp_path):
    src = tmp_path / 'src'
    src.mkdir()
    (src / 'tiny').write_bytes(b'12345678')
    rc, result = run_module_process('source_read_benchmark', {'paths': [str(src)], 'time_budget': 12,
                                                              'scaling': False, 'compressibility_sample': '0'},
                                    cwd='/', timeout=120)
    assert rc == 0, result.get('msg')
    # the module read it again and again for its budget: enough samples, a rate, and 8 bytes of data
    assert result['inconclusive'] is None and result['samples'] >= fc.MIN_SAMPLES
    assert result['streams'][0]['tree_bytes'] == 8 and result['streams'][0]['tree_files'] == 1
    verdict = judge(LTO9, result)
    # the rates alone say the drive would shoe-shine: far below its floor ...
    assert verdict['forecast']['now']['class'] == v.SHOE_SHINING
    # ... but 8 bytes of sources fit in any drive's buffer: there is nothing to judge
    assert verdict['class'] == v.INCONCLUSIVE and verdict['fixes'] == []
    assert verdict['inconclusive_reason'] == (
        "the sources hold 8 bytes in 1 file, less than the minimum of 64 MB (the smallest LTO drive buffer): a "
        "backup that small fits in the drive's buffer, so the drive never waits on the sources and there is no "
        "streaming to judge; qualify with the backup's real sources")
    assert verdict['summary'].startswith('Not enough data to judge LTO-9 FH: the sources hold 8 bytes in 1 file')


@pytest.mark.parametrize('measure, at, below', [
    # the sources' data against MIN_BYTES_READ (64 MB), whatever the drive's buffer
    ('source_bytes', dict(source_bytes=64000000), dict(source_bytes=63999999)),
    # bytes read against MIN_BYTES_READ (64 MB), where the sources' size is not known
    ('bytes_read', dict(bytes_read=64000000, source_bytes=None), dict(bytes_read=63999999, source_bytes=None)),
    # one-second samples against MIN_SAMPLES (10)
    ('samples', dict(samples=10), dict(samples=9)),
])
def test_each_minimum_is_met_at_its_value_and_missed_just_below(measure, at, below):
    enough = dict(samples=60, bytes_read=10 ** 10, source_bytes=10 ** 10, files=100, seconds=60.0,
                  buffer_mb=LTO5.buffer_mb)
    assert fc.too_little_data(**dict(enough, **at)) is None
    short = fc.too_little_data(**dict(enough, **below))
    assert short['measure'] == measure
    assert short['measured'] == list(below.values())[0]
    assert short['minimum'] == {'source_bytes': 64e6, 'bytes_read': 64e6, 'samples': 10}[measure]


def test_a_measure_not_reported_is_not_judged_and_the_first_shortfall_is_named():
    assert fc.too_little_data() is None
    assert fc.too_little_data(samples=60, bytes_read=None, source_bytes=None, buffer_mb=256.0) is None
    # the sources' data comes first: more time would not help a tree that fits in the buffer
    short = fc.too_little_data(samples=3, bytes_read=8, source_bytes=8, files=1, buffer_mb=256.0)
    assert (short['measure'], short['measured'], short['files']) == ('source_bytes', 8, 1)


def test_the_boundaries_through_the_verdict():
    # 64 MB of sources exactly: judged on its rates (500 MB/s streams an LTO-5); a byte less is not
    assert judge(LTO5, source(tree_bytes=64000000))['class'] == v.STREAMING
    below = judge(LTO5, source(tree_bytes=63999999, tree_files=3))
    assert below['class'] == v.INCONCLUSIVE
    assert below['inconclusive_reason'].startswith("the sources hold 63999999 bytes in 3 files, less than the "
                                                   "minimum of 64000000 bytes")
    # a what-if's sample of the sources, smaller than an LTO-9's (estimated) 731 MB buffer, is judged
    assert judge(LTO9, source(tree_bytes=400 * 10 ** 6))['class'] != v.INCONCLUSIVE
    # A slow source of a big tree (0.5 MB/s for 60 s: 30 MB of 1 TB read before the time budget ended) is the
    # host that shoe-shines: judged on its 60 samples, however little it read.
    slow = judge(LTO5, source(rate=0.5, bytes_read=30000000, tree_bytes=10 ** 12))
    assert slow['class'] == v.SHOE_SHINING and not slow.get('inconclusive_reason')
    # Where the streams do not say how much the sources hold, 64 MB read is judged and a byte less is not.
    unsized = source(rate=64 / 60.0, bytes_read=64000000, tree_files=5)
    unsized['streams'][0]['tree_bytes'] = None
    assert judge(LTO5, unsized)['class'] == v.SHOE_SHINING
    unsized = source(rate=64 / 60.0, bytes_read=63999999, tree_files=5)
    unsized['streams'][0]['tree_bytes'] = None
    less = judge(LTO5, unsized)
    assert less['class'] == v.INCONCLUSIVE
    assert less['inconclusive_reason'] == (
        'only 63999999 bytes was read in 5 files in 60 s, less than the minimum of 64000000 bytes (the smallest LTO '
        'drive buffer): '
        'rates of so little data are opening and first-read latency, not throughput; give a bigger tree or a '
        'longer time budget')
    # away from the boundary the volumes are rounded, in decimal units as the rates are
    assert _words.too_little_data(fc.too_little_data(samples=60, bytes_read=2400000, files=1, seconds=60.0)) == (
        'only 2.4 MB was read in 1 file in 60 s, less than the minimum of 64 MB (the smallest LTO drive buffer): '
        'rates of so little data are opening and first-read latency, not throughput; give a bigger tree or a '
        'longer time budget')
    # 10 one-second samples: judged; 9: not, even when the module's own min_samples let them through
    assert judge(LTO5, source(seconds=10))['class'] == v.STREAMING
    nine = judge(LTO5, source(seconds=9))
    assert nine['class'] == v.INCONCLUSIVE
    assert nine['inconclusive_reason'] == ('the sources were read in 9 s (9 per-second samples; 10 needed): give a '
                                           'bigger tree or a longer time budget')
    assert any(r.startswith('Not enough to judge: the sources were read in 9 s') for r in nine['reasons'])


def test_one_minimum_of_samples_for_the_module_the_forecast_and_the_verdict():
    assert _source_scaling.DEFAULT_MIN_SAMPLES == fc.MIN_SAMPLES == 10
    assert fc.forecast(LTO5, feed_series_mb_s=[500.0] * 9)['class'] == fc.INCONCLUSIVE
    assert fc.forecast(LTO5, feed_series_mb_s=[500.0] * 10)['class'] == fc.STREAMING


@pytest.mark.parametrize('run', ['20261123-quick', '20261124-quick-v2'])
@pytest.mark.parametrize('host', sorted(RECORDED))
def test_recorded_lab_runs_keep_their_classes(run, host):
    doc = _run.load(os.path.join(LAB_RUNS, run, '%s.json' % host))
    drives = doc['drives']
    facts = doc['facts']
    out = _host.assemble(host, [d['identity'] for d in drives], doc['source'], [d['write_sweep'] for d in drives],
                         [dict(d['settings'], nst=d['nst']) for d in drives], facts.get('backup') or {},
                         memory_total_mb=facts.get('memory_total_mb'), preflight=doc.get('preflight'),
                         host_facts=facts).to_dict()
    [verdict] = out['verdicts']
    assert verdict['class'] == doc['verdicts'][0]['class'] == RECORDED[host]
    # every minimum met, and by how much (lab-ma3 read 88-90 MB at 3 MB/s: the closest to MIN_BYTES_READ)
    src = doc['source']
    assert src['aggregate']['bytes'] >= fc.MIN_BYTES_READ and src['aggregate']['samples'] >= fc.MIN_SAMPLES
    assert src['streams'][0]['tree_bytes'] >= verdict['forecast']['now']['drive']['buffer_mb'] * 1e6
