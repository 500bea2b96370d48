# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The verdict: every class, every boundary, the fixes and their order.

Inputs are shaped like the modules' results (source_read_benchmark,
tape_drive_info, tape_write_benchmark). Drive numbers come from the drive
model; synthetic drives (a spec with round numbers) keep the boundaries easy
to read.
"""

from __future__ import annotations

import collections
import math

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils import _drive_model
from ansible_collections.tapeops.qualify.plugins.module_utils import _verdict as v

Spec = collections.namedtuple('Spec', 'generation form_factor vendor native_mb_s native_capacity_gb '
                                      'compression_ratio speed_floor_mb_s speed_steps_mb_s label sources')


def spec(native=300.0, floor=100.0, ratio=2.5, label='LTO-test'):
    """A drive with round numbers, shaped like _drive_model.DriveSpec."""
    return Spec(7, None, None, native, 6000, ratio, floor, None, label, ())


def source(mean, p5=None, minimum=None, streams=1, comp=None):
    per = [{'path': '/src/%d' % i, 'bytes': 10 ** 9, 'files': 1000, 'duration_s': 10.0,
            'mean_mb_s': mean / streams, 'p5_mb_s': (p5 if p5 is not None else mean) / streams,
            'min_mb_s': (minimum or 0) / streams, 'files_per_s': 100.0, 'series_mb_s': []}
           for i in range(streams)]
    out = {'streams': per,
           'aggregate': {'mean_mb_s': mean, 'p5_mb_s': p5 if p5 is not None else mean,
                         'min_mb_s': minimum if minimum is not None else mean,
                         'bytes': streams * 10 ** 9, 'files': 1000 * streams, 'duration_s': 10.0,
                         'series_mb_s': [mean] * 10, 'streams': streams},
           'skipped': [], 'warnings': []}
    if comp is not None:
        out['compressibility'] = {'ratio': comp, 'sample_bytes': 64 * 10 ** 6, 'compressor': 'zlib-1'}
    return out


def sweep(rates, pattern='random', filemarks=None, ceiling=None):
    return {'sweep': [{'block_size': bs, 'pattern': pattern, 'bytes': 10 ** 9, 'seconds': 10 ** 3 / r,
                       'mb_s': r, 'series_mb_s': [r], 'st_stats_delta': {}, 'error': None}
                      for bs, r in sorted(rates.items())],
            'ceiling_block_size': ceiling or max(rates), 'best': None, 'filemarks': filemarks or []}


def run(sp=None, src=None, tape=None, drive=None, config=None, ratio=1.0, **kw):
    options = dict(kw.pop('options', {}))
    options.setdefault('tape_ratio', ratio)
    return v.evaluate(sp or spec(), src, tape, drive, config, options=options, **kw)


# -- every class and boundary (tape ratio 1.0: need_full = 300, need_floor = 100) ---------------

@pytest.mark.parametrize('p5, expected', [
    (1000.0, v.STREAMING),
    (300.0, v.STREAMING),          # exactly full speed streams
    (299.99, v.SPEED_MATCHED),
    (100.0, v.SPEED_MATCHED),      # exactly at the floor still speed-matches
    (99.99, v.SHOE_SHINING),
    (0.5, v.SHOE_SHINING),
])
def test_class_boundaries_on_sustained_rate(p5, expected):
    verdict = run(src=source(mean=p5, p5=p5))
    assert verdict['class'] == expected
    assert verdict['numbers']['need_full_mb_s'] == 300.0
    assert verdict['numbers']['need_floor_mb_s'] == 100.0
    assert verdict['would_shoe_shine'] is (expected == v.SHOE_SHINING)


def test_sustained_floor_not_mean_decides():
    # mean looks like streaming, but 5 % of the seconds are below the floor
    verdict = run(src=source(mean=350.0, p5=80.0, minimum=5.0))
    assert verdict['class'] == v.SHOE_SHINING
    assert '80.0 MB/s sustained' in verdict['reasons'][0]
    assert 'mean 350 MB/s' in verdict['reasons'][0]


def test_tape_ratio_multiplies_both_needs():
    verdict = run(src=source(mean=400.0), ratio=2.0)
    assert verdict['numbers']['need_full_mb_s'] == 600.0
    assert verdict['numbers']['need_floor_mb_s'] == 200.0
    assert verdict['class'] == v.SPEED_MATCHED
    assert 'x 2.00 tape compression' in verdict['reasons'][1]


def test_nominal_ratio_when_nothing_measured():
    verdict = v.evaluate(spec(ratio=2.5), source(mean=500.0))
    assert verdict['numbers']['tape_ratio'] == 2.5
    assert 'nominal' in verdict['numbers']['tape_ratio_basis']
    assert verdict['numbers']['need_full_mb_s'] == 750.0


def test_ratio_estimated_from_sample_is_capped_by_nominal():
    verdict = v.evaluate(spec(ratio=2.0), source(mean=500.0, comp=50.0))
    assert verdict['numbers']['tape_ratio'] <= 2.0
    assert 'estimated' in verdict['numbers']['tape_ratio_basis']


def test_incompressible_sample_gives_low_ratio():
    verdict = v.evaluate(spec(ratio=2.5), source(mean=500.0, comp=1.0))
    assert verdict['numbers']['tape_ratio'] < 1.3


def test_unknown_floor_treated_as_full_speed():
    verdict = run(sp=spec(floor=None), src=source(mean=250.0))
    assert verdict['numbers']['floor_known'] is False
    assert verdict['numbers']['need_floor_mb_s'] == 300.0
    assert verdict['class'] == v.SHOE_SHINING
    assert any(f['id'] == 'floor_unknown' for f in verdict['findings'])
    assert 'speed_floor_mb_s' in verdict['reasons'][2]


def test_bad_ratio_and_missing_source_are_clear_errors():
    with pytest.raises(v.VerdictInputError, match='tape_ratio must be >= 1.0'):
        run(src=source(mean=100.0), ratio=0.5)
    with pytest.raises(v.VerdictInputError, match='source_read_benchmark'):
        run(src={'aggregate': {}, 'streams': []})


# -- drive path, block size, MISCONFIGURED ---------------------------------------------------------

def test_small_blocks_limit_feed_is_misconfigured_with_block_size_fix_first():
    tape = sweep({65536: 90.0, 262144: 280.0, 1048576: 285.0})
    verdict = run(src=source(mean=400.0), tape=tape, config={'software': 'data_protector',
                                                             'block_size_bytes': 65536})
    assert verdict['class'] == v.MISCONFIGURED
    assert verdict['class_at_current_settings'] == v.SHOE_SHINING
    assert verdict['class_after_setting_fixes'] == v.SPEED_MATCHED
    assert verdict['fixes'][0]['id'] == 'block_size'
    assert verdict['fixes'][0]['value'] == 262144   # smallest within 3 % of the best
    assert 'Block size (kB) = 256' in verdict['fixes'][0]['setting']
    assert verdict['numbers']['drive_path_mb_s'] == 90.0
    assert 'the drive path at 64 KiB blocks' in verdict['reasons'][-2]


def test_block_size_over_hba_limit_is_misconfigured_even_if_fast():
    tape = sweep({65536: 300.0, 262144: 310.0})
    drive = {'hba_max_transfer_bytes': 524288, 'block_limits': {'min': 1, 'max': 8388608}}
    verdict = run(src=source(mean=400.0), tape=tape, drive=drive,
                  config={'software': 'bacula', 'block_size_bytes': 1048576})
    assert verdict['class'] == v.MISCONFIGURED
    assert verdict['findings'][0]['id'] == 'block_size_over_limit'
    assert "HBA's maximum transfer (512 KiB)" in verdict['findings'][0]['text']
    assert verdict['fixes'][0]['setting'] == 'Bacula storage daemon Device resource: Maximum Block Size = 262144'


def test_block_size_fine_no_fix_and_path_not_limiting():
    tape = sweep({65536: 500.0, 262144: 505.0})
    verdict = run(src=source(mean=320.0), tape=tape, config={'block_size_bytes': 262144})
    assert verdict['class'] == v.STREAMING
    assert verdict['fixes'] == []


def test_drive_path_below_floor_needs_path_not_streams():
    tape = sweep({65536: 40.0, 262144: 48.0})
    verdict = run(src=source(mean=80.0, p5=60.0), tape=tape, config={'block_size_bytes': 262144})
    assert verdict['class'] == v.SHOE_SHINING
    ids = [f['id'] for f in verdict['fixes']]
    assert ids == ['drive_path']
    assert 'no number of streams' in verdict['fixes'][0]['why']


def test_pattern_closest_to_data_ratio_is_used():
    tape = {'sweep': [
        {'block_size': 262144, 'pattern': 'zeros', 'mb_s': 900.0, 'error': None},
        {'block_size': 262144, 'pattern': 'random', 'mb_s': 150.0, 'error': None},
        {'block_size': 262144, 'pattern': '2.5:1', 'mb_s': 370.0, 'error': None},
        {'block_size': 2097152, 'pattern': 'random', 'mb_s': None, 'error': 'EINVAL'},
    ], 'filemarks': []}
    assert v.sweep_rates(tape, 2.5) == {262144: 370.0}
    assert v.sweep_rates(tape, 1.0) == {262144: 150.0}


# -- file marks and segments ----------------------------------------------------------------------

def test_sync_filemarks_on_small_segments_is_misconfigured_fix_immediate():
    marks = [{'segment_mb': 64, 'kind': 'sync', 'marks': 8, 'mb_s': 50.0, 'seconds': 9.0,
              'seconds_lost_per_mark': 2.0},
             {'segment_mb': 64, 'kind': 'immediate', 'marks': 8, 'mb_s': 300.0, 'seconds': 2.0,
              'seconds_lost_per_mark': 0.01}]
    tape = sweep({262144: 400.0}, filemarks=marks)
    drive = {'mtweofi_supported': True}
    verdict = run(src=source(mean=320.0), tape=tape, drive=drive,
                  config={'software': 'data_protector', 'block_size_bytes': 262144, 'segment_size_mb': 500,
                          'immediate_filemarks': False})
    # 500 MB at 320 MB/s = 1.5625 s + 2 s lost -> 140 MB/s: speed-matched; immediate -> ~318: streaming
    assert verdict['numbers']['feed_now_mb_s'] == pytest.approx(500 / (500 / 320 + 2.0), abs=0.1)
    assert verdict['class_at_current_settings'] == v.SPEED_MATCHED
    assert verdict['class_after_setting_fixes'] == v.STREAMING
    assert verdict['class'] == v.MISCONFIGURED
    ids = [f['id'] for f in verdict['fixes']]
    assert ids[0] == 'immediate_filemarks'
    assert 'OB2IMMEDFM=1' in verdict['fixes'][0]['setting']
    assert 'synchronous file marks every 500 MB' in verdict['reasons'][-2]


def test_bacula_has_no_immediate_marks_gets_maximum_file_size():
    marks = [{'segment_mb': 64, 'kind': 'sync', 'seconds_lost_per_mark': 1.0}]
    tape = sweep({262144: 400.0}, filemarks=marks)
    verdict = run(src=source(mean=320.0), tape=tape,
                  config={'software': 'bacula', 'block_size_bytes': 262144, 'segment_size_mb': 1000})
    ids = [f['id'] for f in verdict['fixes']]
    assert 'immediate_filemarks' not in ids
    seg = [f for f in verdict['fixes'] if f['id'] == 'segment_size'][0]
    # 1 % loss at 300 MB/s with 1 s per mark: 300 * 1 * 0.99 / 0.01 = 29700 MB
    assert seg['value'] == 29700
    assert seg['setting'].endswith('Maximum File Size = 29700M')


def test_filemark_helpers():
    assert v.filemark_rate(100.0, 1000, 0) == 100.0
    assert v.filemark_rate(100.0, 1000, 10.0) == pytest.approx(50.0)
    assert v.segment_for_loss(100.0, 1.0, 0.01) == pytest.approx(9900.0)
    assert v.segment_for_loss(100.0, 0.0, 0.01) is None


# -- streams, memory, staging ---------------------------------------------------------------------

def test_streams_needed_from_per_stream_rate():
    # 2 streams measured, 120 MB/s sustained together = 60 each; 300 full -> 5 streams
    verdict = run(src=source(mean=130.0, p5=120.0, streams=2))
    assert verdict['class'] == v.SPEED_MATCHED
    assert verdict['numbers']['per_stream_mb_s'] == 60.0
    assert verdict['numbers']['streams_needed_full'] == 5
    assert verdict['numbers']['streams_needed_floor'] == 2
    streams = [f for f in verdict['fixes'] if f['id'] == 'streams'][0]
    assert streams['value'] == 5
    assert '5 streams give 300 MB/s' in streams['why']


def test_streams_floor_when_full_speed_needs_too_many():
    # 10 MB/s per stream: full needs 30 > 16, floor needs 10 <= 16
    verdict = run(src=source(mean=10.0))
    streams = [f for f in verdict['fixes'] if f['id'] == 'streams'][0]
    assert streams['value'] == 10
    assert 'above the 100 MB/s floor' in streams['why']


def test_staging_when_no_stream_count_suffices():
    verdict = run(src=source(mean=5.0))            # floor needs 20 streams > 16
    ids = [f['id'] for f in verdict['fixes']]
    assert 'streams' not in ids
    assert ids[-1] == 'staging'
    assert verdict['numbers']['streams_needed_floor'] == 20


def test_streams_needed_boundaries():
    assert v.streams_needed(300.0, 100.0) == 3
    assert v.streams_needed(300.0, 99.99) == 4
    assert v.streams_needed(100.0, 300.0) == 1
    assert v.streams_needed(100.0, 100.0 / 3) == 3
    assert v.streams_needed(100.0, 0) is None


def test_memory_rule_512_plus_512_per_stream():
    assert v.memory_needed_mb(0) == 512
    assert v.memory_needed_mb(4) == 2560
    verdict = run(src=source(mean=130.0, p5=120.0, streams=2), memory_total_mb=2048)
    mem = [f for f in verdict['fixes'] if f['id'] == 'memory'][0]
    assert mem['value'] == 512 + 512 * 5
    assert '512 MB base + 512 MB x 5 interleaved streams = 3072 MB; the host has 2048 MB.' == mem['why']
    ok = run(src=source(mean=130.0, p5=120.0, streams=2), memory_total_mb=3072)
    assert 'memory' not in [f['id'] for f in ok['fixes']]


def test_host_memory_counts_every_drive():
    drives = [{'spec': spec(label='drive A')}, {'spec': spec(label='drive B')}]
    verdicts = v.evaluate_host(drives, source(mean=130.0, p5=120.0, streams=2), memory_total_mb=4096,
                               options={'tape_ratio': 1.0})
    # each drive plans 5 streams: 512 + 512 * 10 = 5632 MB > 4096
    for verdict in verdicts:
        mem = [f for f in verdict['fixes'] if f['id'] == 'memory'][0]
        assert mem['value'] == 5632


def test_fixes_are_ranked_in_fix_order():
    marks = [{'segment_mb': 64, 'kind': 'sync', 'seconds_lost_per_mark': 2.0},
             {'segment_mb': 64, 'kind': 'immediate', 'seconds_lost_per_mark': 0.0}]
    tape = sweep({65536: 90.0, 262144: 400.0}, filemarks=marks)
    verdict = run(src=source(mean=130.0, p5=120.0, streams=2), tape=tape, drive={'mtweofi_supported': True},
                  config={'software': 'data_protector', 'block_size_bytes': 65536, 'segment_size_mb': 200},
                  memory_total_mb=1024)
    ids = [f['id'] for f in verdict['fixes']]
    assert ids == [i for i in v.FIX_ORDER if i in ids]
    assert ids[:2] == ['block_size', 'immediate_filemarks']
    assert 'streams' in ids and 'memory' in ids
    assert [f['rank'] for f in verdict['fixes']] == list(range(1, len(ids) + 1))


# -- real drives from the model; what-if --------------------------------------------------------

def test_lto9_fh_ibm_floor_from_model():
    lto9 = _drive_model.lookup(9, 'FH', 'IBM')
    assert lto9.speed_floor_mb_s is not None
    verdict = v.evaluate(lto9, source(mean=lto9.speed_floor_mb_s - 1), options={'tape_ratio': 1.0})
    assert verdict['class'] == v.SHOE_SHINING
    verdict = v.evaluate(lto9, source(mean=lto9.speed_floor_mb_s), options={'tape_ratio': 1.0})
    assert verdict['class'] == v.SPEED_MATCHED
    assert verdict['drive_label'] == lto9.label


def test_what_if_upgrade_lto6_to_lto9_without_tape():
    src = source(mean=180.0, p5=170.0, streams=4)
    lto6 = _drive_model.lookup(6)
    lto9 = _drive_model.lookup(9, 'FH', 'IBM')
    now = v.evaluate(lto6, src, options={'tape_ratio': 1.0})
    later = v.evaluate(lto9, src, options={'tape_ratio': 1.0}, what_if=True)
    assert now['class'] == v.STREAMING
    assert later['class'] == v.SHOE_SHINING            # 170 < 177: the faster drive would shoe-shine
    assert later['what_if'] is True
    assert 'not installed' in ' '.join(later['reasons'])
    streams = [f for f in later['fixes'] if f['id'] == 'streams'][0]
    assert streams['value'] == math.ceil(lto9.native_mb_s / (170.0 / 4) - 1e-9)


def test_worst_class():
    assert v.worst([v.STREAMING, v.SPEED_MATCHED]) == v.SPEED_MATCHED
    assert v.worst([v.STREAMING, v.MISCONFIGURED, v.SHOE_SHINING]) == v.MISCONFIGURED
    assert v.worst([]) is None


def test_drive_path_between_floor_and_full_caps_the_streams():
    # path 150 (floor 100, full 300); one stream at 40: 4 streams reach the 150 the path carries
    tape = sweep({262144: 150.0})
    verdict = run(src=source(mean=45.0, p5=40.0), tape=tape, config={'block_size_bytes': 262144})
    assert verdict['class'] == v.SHOE_SHINING
    ids = [f['id'] for f in verdict['fixes']]
    assert ids == ['drive_path', 'streams']
    assert 'at best make the drive speed-match' in verdict['fixes'][0]['why']
    streams = verdict['fixes'][1]
    assert streams['value'] == 4 and streams['feed_after_mb_s'] == 150.0
    assert 'the drive path carries' in streams['why']


def test_no_stream_fix_when_the_drive_path_is_the_limit():
    tape = sweep({262144: 150.0})
    verdict = run(src=source(mean=260.0, p5=250.0), tape=tape, config={'block_size_bytes': 262144})
    assert verdict['class'] == v.SPEED_MATCHED
    assert [f['id'] for f in verdict['fixes']] == ['drive_path']


def test_memory_ranks_after_staging_without_more_streams():
    verdict = run(src=source(mean=5.0), memory_total_mb=512)
    assert [f['id'] for f in verdict['fixes']] == ['staging', 'memory']
    assert verdict['summary'].endswith('First fix: Stage to disk first, then copy to tape.')
