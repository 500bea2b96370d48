# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The verdict on top of the streaming forecast: classes, the cases the threshold got wrong, fixes.

Inputs are shaped like the modules' results (source_read_benchmark, tape_drive_info,
tape_write_benchmark); drives come from the drive model (sources in docs/drive-model.md).
Recorded lab host documents are tested in test_verdict_recorded.py.
"""

from __future__ import annotations

import re

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _drive_model as dm
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _verdict as v
from ansible_collections.tapeops.qualify.plugins.module_utils import _records, _words

LTO9 = dm.lookup(9, 'FH', 'IBM')        # full speed 400, floor 177 (IBM TS4300 speed matching)
LTO5 = dm.lookup(5, vendor='IBM')


def source(series, streams=1, scaling=None, comp=None, inconclusive=None, passes=None):
    mean = sum(series) / len(series)
    out = {'streams': [{'path': '/src/%d' % i, 'mean_mb_s': mean / streams} for i in range(streams)],
           'aggregate': {'mean_mb_s': mean, 'series_mb_s': list(series), 'streams': streams,
                         'samples': len(series), 'duration_s': float(len(series))}}
    if scaling is not None:
        out['scaling'] = [{'streams': n, 'mean_mb_s': r, 'p5_mb_s': r, 'series_mb_s': []} for n, r in scaling]
    if comp is not None:
        out['compressibility'] = {'ratio': comp, 'sample_bytes': 64 * 10 ** 6, 'compressor': 'zlib-1'}
    if inconclusive is not None:
        out['inconclusive'] = inconclusive
    if passes is not None:
        out['passes'] = passes
    return out


def sweep(rates, pattern='random', filemarks=None):
    return {'sweep': [{'block_size': bs, 'pattern': pattern, 'mb_s': r, 'error': None}
                      for bs, r in sorted(rates.items())],
            'ceiling_block_size': max(rates), 'filemarks': filemarks or []}


def run(spec=LTO9, src=None, tape=None, drive=None, config=None, ratio=1.0, **kw):
    options = dict(kw.pop('options', {}))
    options.setdefault('tape_ratio', ratio)
    return _words.verdict(v.evaluate(spec, src, tape, drive, config, options=options, **kw)).to_dict()


def flat(rate, seconds=60):
    return [float(rate)] * seconds


# -- classes come from the forecast -------------------------------------------------------------

@pytest.mark.parametrize('rate, expected', [
    (600.0, v.STREAMING), (400.0, v.STREAMING), (250.0, v.SPEED_MATCHED), (177.0, v.SPEED_MATCHED),
    (120.0, v.SHOE_SHINING),
])
def test_class_follows_the_forecast(rate, expected):
    verdict = run(src=source(flat(rate)))
    assert verdict['class'] == expected
    assert verdict['numbers']['need_full_mb_s'] == 400.0 and verdict['numbers']['need_floor_mb_s'] == 177.0
    assert verdict['forecast']['now']['class'] == expected
    assert verdict['would_shoe_shine'] is (expected == v.SHOE_SHINING)


def test_drive_without_a_published_floor_is_not_called_shoe_shining_near_full_speed():
    # Issue case: 188 MB/s into a drive whose full speed needs 192 (an LTO-6 of unknown make at
    # 1.2:1) never stops: it speed-matches.
    verdict = run(dm.lookup(6), source(flat(188.0)), ratio=1.2)
    assert verdict['numbers']['need_full_mb_s'] == 192.0
    assert verdict['class'] == v.SPEED_MATCHED
    assert verdict['numbers']['floor_estimated'] is True
    assert 'an estimate' in ' '.join(verdict['reasons'])


def test_a_dip_the_buffer_absorbs_is_harmless():
    # Issue case: one second in ten at zero, mean 450 MB/s: the old 5th-percentile verdict said
    # SHOE-SHINING with "14 streams" as the fix.
    verdict = run(src=source(([500.0] * 9 + [0.0]) * 6))
    assert verdict['numbers']['source_sustained_mb_s'] == 0.0
    assert verdict['class'] == v.STREAMING
    assert not [f for f in verdict['fixes'] if f['id'] == 'streams']


def test_a_stall_longer_than_the_buffer_is_seen():
    verdict = run(src=source([500.0] * 40 + [0.0] * 4))
    assert verdict['class'] == v.SHOE_SHINING
    assert verdict['forecast']['now']['backhitches'] > 0


def test_a_one_second_read_is_inconclusive_not_speed_matched():
    verdict = run(src=source([900.0]))
    assert verdict['class'] == v.INCONCLUSIVE
    assert 'read in 1 s' in verdict['summary'] and 'longer time budget' in verdict['summary']
    assert verdict['fixes'] == []
    what_if = run(dm.lookup(9), source([900.0]), what_if=True)
    assert what_if['class'] == v.INCONCLUSIVE


def test_the_source_modules_inconclusive_mark_is_shown():
    verdict = run(src=source(flat(500.0), inconclusive={'reason': 'only 12 samples in the 30 s budget'}))
    assert verdict['class'] == v.INCONCLUSIVE and 'only 12 samples' in verdict['summary']


def test_quoted_numbers_obey_sustained_mean_max():
    for series in ([900.0], [10.0, 500.0, 20.0], ([500.0] * 9 + [0.0]) * 6):
        src = source(series)
        src['aggregate']['p5_mb_s'] = 9999.0           # a module that got it wrong
        num = run(src=src)['numbers']
        assert num['source_sustained_mb_s'] <= num['source_mean_mb_s'] <= num['source_max_mb_s']


def test_drives_of_a_host_share_its_sources():
    # Issue case: four drives sharing 200 MB/s were each told they get 200. Here four LTO-9 FH
    # share 400 MB/s: 100 each, below the 177 floor.
    verdicts = [_words.verdict(d).to_dict()
                for d in v.evaluate_host([{'spec': LTO9}] * 4, source(flat(400.0)), options={'tape_ratio': 1.0})]
    for verdict in verdicts:
        assert verdict['numbers']['feed_share'] == 0.25
        assert verdict['numbers']['feed_mean_mb_s'] == 100.0
        assert verdict['class'] == v.SHOE_SHINING
        assert verdict['numbers']['drives_streaming_at_once'] == 1     # 400 >= 400
        assert verdict['numbers']['drives_not_shoeshining_at_once'] == 2   # 200 each >= 177; 133 is not
    alone = _words.verdict(v.evaluate_host([{'spec': LTO9}], source(flat(400.0)),
                                           options={'tape_ratio': 1.0})[0]).to_dict()
    assert alone['class'] == v.STREAMING


def test_shares_follow_the_concurrency_per_drive():
    verdicts = v.evaluate_host([{'spec': LTO5, 'config': {'concurrency': 3}}, {'spec': LTO5, 'config': {'concurrency': 1}}],
                               source(flat(200.0)), options={'tape_ratio': 1.0})
    assert [x['numbers']['feed_share'] for x in verdicts] == [0.75, 0.25]


# -- file marks ---------------------------------------------------------------------------------

def test_bacula_with_mtweofi_and_no_filemark_measurement_gives_a_verdict():
    # Issue case: a TypeError near the immediate-file-mark fix made the host fail.
    verdict = run(src=source(flat(500.0)), drive={'mtweofi_supported': True},
                  config={'software': 'bacula', 'segment_size_mb': 2000})
    assert verdict['class'] in v.CLASSES
    ids = [f['id'] for f in verdict['fixes']]
    assert 'immediate_filemarks' not in ids           # Bacula has no such setting
    assert 'segment_size' in ids
    fix = next(f for f in verdict['fixes'] if f['id'] == 'segment_size')
    assert 'Maximum File Size' in fix['setting']


def test_data_protector_is_offered_immediate_marks_when_the_driver_has_them():
    # the st driver probe (not the kernel version) says MTWEOFI works: e.g. a RHEL 6.5 2.6.32 kernel
    drive = {'mtweofi_supported': True, 'kernel': '2.6.32-431.el6.x86_64'}
    verdict = run(src=source(flat(500.0)), drive=drive, config={'software': 'data_protector', 'segment_size_mb': 10000})
    first = verdict['fixes'][0]
    assert first['id'] == 'immediate_filemarks'
    assert first['setting'] == ('omnirc on the Media Agent: OB2FORCESCSI=WFM and OB2IMMEDFM=1 '
                                '(tapeops.qualify.dp_omnirc)')
    assert verdict['class'] == v.MISCONFIGURED
    assert first['forecast']['class'] == v.STREAMING
    assert first['feed_after_mb_s'] == pytest.approx(first['forecast']['effective_mb_s'], abs=0.1)
    no_driver = run(src=source(flat(500.0)), drive={'mtweofi_supported': False},
                    config={'software': 'data_protector', 'segment_size_mb': 10000})
    assert 'immediate_filemarks' not in [f['id'] for f in no_driver['fixes']]
    assert 'segment_size' in [f['id'] for f in no_driver['fixes']]


def test_measured_sync_mark_cost_is_used():
    marks = [{'kind': 'sync', 'seconds_lost_per_mark': 9.0}, {'kind': 'immediate', 'seconds_lost_per_mark': 0.0}]
    tape = sweep({262144: 300.0}, filemarks=marks)
    slow = run(dm.lookup(7, vendor='IBM'), source(flat(250.0)), tape, config={'segment_size_mb': 5000})
    cheap = run(dm.lookup(7, vendor='IBM'), source(flat(250.0)), sweep({262144: 300.0}, filemarks=[
        {'kind': 'sync', 'seconds_lost_per_mark': 1.0}]), config={'segment_size_mb': 5000})
    assert slow['forecast']['now']['effective_mb_s'] < cheap['forecast']['now']['effective_mb_s']


# -- the drive side, read honestly ---------------------------------------------------------------

SWEEP_FROM_64K = {65536: 150.0, 131072: 240.0, 262144: 290.0, 524288: 300.0, 1048576: 301.0}


def test_a_block_size_the_sweep_did_not_measure_is_not_given_the_best_rate():
    # Issue case: Bacula's default 64512 B got STREAMING where 65536 B got MISCONFIGURED.
    spec = dm.lookup(7, vendor='IBM')
    at_64k = run(spec, source(flat(400.0)), sweep(SWEEP_FROM_64K), config={'block_size_bytes': 65536})
    at_bacula = run(spec, source(flat(400.0)), sweep(SWEEP_FROM_64K), config={'block_size_bytes': 64512})
    assert at_bacula['numbers']['drive_path_mb_s'] <= at_64k['numbers']['drive_path_mb_s']
    assert at_bacula['class'] == at_64k['class'] == v.MISCONFIGURED
    assert 'block_size_not_measured' in [f['id'] for f in at_bacula['findings']]
    assert at_bacula['fixes'][0]['id'] == 'block_size'


def test_path_rate_models():
    rates = {65536: 100.0, 262144: 250.0}
    assert v.path_rate(rates, 65536) == (100.0, {'id': 'path_measured'})
    between, basis = v.path_rate(rates, 131072)
    assert 100.0 < between < 250.0
    assert basis == {'id': 'path_fitted', 'how': {'id': 'interpolated', 'lower': 65536, 'upper': 262144}}
    assert _words.basis(basis) == ('not measured: interpolated between 64 KiB and 256 KiB (per-command cost fitted '
                                   'to them)')
    below, basis = v.path_rate(rates, 32768)
    assert below < 100.0 and basis == {'id': 'path_fitted', 'how': {'id': 'extrapolated', 'smallest': 65536}}
    assert _words.basis(basis).startswith('not measured: extrapolated below 64 KiB, the smallest size measured')
    above, basis = v.path_rate(rates, 1048576)
    assert above == 250.0 and basis == {'id': 'path_above_largest', 'block_size': 262144}
    assert _words.basis(basis) == 'not measured: the rate at 256 KiB, the largest size measured'
    assert all(b in v.PATH_NOT_MEASURED for b in ('path_fitted', 'path_above_largest'))


def test_recommended_block_size_weighs_vendor_guidance():
    flat_rates = {65536: 300.0, 131072: 301.0, 262144: 300.5, 524288: 301.0, 1048576: 301.0}
    assert v.recommend_block_size(flat_rates, 0.03) == (262144, 300.5)
    assert v.recommend_block_size({65536: 300.0, 131072: 200.0}, 0.03) == (65536, 300.0)
    assert v.recommend_block_size(SWEEP_FROM_64K, 0.03, limit=262144) == (262144, 290.0)
    # a lab sweep whose 64 KiB run happened to be 4 % faster: 256 KiB is still recommended
    assert v.recommend_block_size({65536: 8.0, 262144: 7.7, 1048576: 7.6}, 0.03) == (262144, 7.7)
    # but not when the small block is clearly (over 10 %) faster
    assert v.recommend_block_size({65536: 9.0, 262144: 7.7}, 0.03) == (65536, 9.0)


def test_a_drive_path_at_native_speed_of_compressible_data_is_not_a_path_problem():
    # Issue case: a 2:1 sweep capped near the drive's native rate was told "no number of streams
    # can fix that". The drive took 2:1 data at 2 x native: that is the drive, not the path.
    spec = dm.lookup(5, vendor='IBM')
    tape = sweep({262144: 276.0, 1048576: 279.0}, pattern='2:1')
    verdict = run(spec, source(flat(150.0)), tape, ratio=2.0, config={'block_size_bytes': 262144})
    ids = [f['id'] for f in verdict['fixes']]
    assert 'drive_path' not in ids and 'streams' in ids
    # a path well below what the drive takes is one, and it says so without claiming the impossible
    slow = run(spec, source(flat(400.0)), sweep({262144: 60.0}, pattern='2:1'), ratio=2.0,
               config={'block_size_bytes': 262144})
    fix = next(f for f in slow['fixes'] if f['id'] == 'drive_path')
    assert 'no number of streams' in fix['why']
    assert slow['fixes'][0]['id'] != 'drive_path' or len(slow['fixes']) == 1


def test_block_size_over_the_hba_limit_is_misconfigured():
    verdict = run(src=source(flat(600.0)), tape=sweep({262144: 400.0, 524288: 405.0}),
                  drive={'hba_max_transfer_bytes': 262144}, config={'block_size_bytes': 1048576})
    assert verdict['class'] == v.MISCONFIGURED
    assert verdict['findings'][0]['id'] == 'block_size_over_limit'
    assert verdict['fixes'][0]['value'] == 262144


# -- streams from the measured scaling curve ------------------------------------------------------

def test_streams_come_from_the_measured_curve_and_are_not_extrapolated():
    # The published pattern: one disk agent 60 MB/s, two 78, three 94 (not 60/120/180).
    # Into an IBM LTO-3 (five speeds 40..80 MB/s, IBM T800 guide): 2 streams (78) are still below
    # full speed, 3 (94) reach it; linear scaling would have said 2 (120).
    src = source(flat(60.0), scaling=[(1, 60.0), (2, 78.0), (3, 94.0)])
    verdict = run(dm.lookup(3, vendor='IBM'), src)
    assert verdict['class'] == v.SPEED_MATCHED
    fix = next(f for f in verdict['fixes'] if f['id'] == 'streams')
    assert fix['value'] == 3 and 'measured scaling' in fix['why']
    assert verdict['numbers']['streams_needed_full'] == 3 and verdict['numbers']['streams_needed_floor'] == 1
    value, basis = v.feed_at_streams(v.source_numbers(src), 8)
    assert value == 94.0 and basis == {'id': 'streams_beyond_curve', 'streams': 3, 'mb_s': 94.0}
    assert _words.basis(basis) == ('no more than at 3 streams (94.0 MB/s), the largest step measured: more streams '
                                   'were not measured, so no gain is assumed')
    # into an LTO-7 (floor 101.46) nothing measured reaches even the floor: staging, not 2 streams
    lto7 = run(dm.lookup(7, vendor='IBM'), src)
    assert [f['id'] for f in lto7['fixes']] == ['staging'] and 'no gain is assumed' in lto7['fixes'][0]['why']


def test_without_a_curve_linear_scaling_is_called_an_assumption():
    verdict = run(LTO5, source(flat(60.0)))
    fix = next(f for f in verdict['fixes'] if f['id'] == 'streams')
    assert fix['value'] == 3 and 'an assumption' in fix['why']


def test_staging_when_no_number_of_streams_helps():
    src = source(flat(20.0), scaling=[(1, 20.0), (4, 25.0)])
    verdict = run(LTO9, src)
    assert [f['id'] for f in verdict['fixes']] == ['staging']


def test_memory_rule_counts_the_planned_streams():
    verdict = run(LTO5, source(flat(60.0)), memory_total_mb=1024)
    memory = next(f for f in verdict['fixes'] if f['id'] == 'memory')
    assert memory['value'] == 512 + 3 * 512


# -- words ----------------------------------------------------------------------------------------

@pytest.mark.parametrize('rate', [176.6, 176.9, 177.0, 150.0, 60.0])
def test_wording_never_contradicts_itself_after_rounding(rate):
    verdict = run(src=source(flat(rate)))
    text = ' '.join([verdict['summary']] + verdict['reasons'] + [f['why'] for f in verdict['fixes']])
    for a, b in re.findall(r'([\d.]+) MB/s, below the ([\d.]+) MB/s floor', text):
        assert a != b, text
    assert not re.search(r'\b(\d+) MB/s \(floor \1 MB/s\)', text), text


def test_worst_class_order():
    assert _records.worst([v.STREAMING, v.INCONCLUSIVE]) == v.INCONCLUSIVE
    assert _records.worst([v.SPEED_MATCHED, v.MISCONFIGURED]) == v.MISCONFIGURED
    assert _records.worst([]) is None


def test_no_aggregate_is_a_clear_error():
    with pytest.raises(v.VerdictInputError, match='source_read_benchmark'):
        v.evaluate(LTO9, {'aggregate': {}})


def test_the_write_benchmarks_ioctl_probe_wins_over_the_version_string():
    tape = sweep({262144: 500.0})
    tape.update({'mtweofi_supported': False, 'mtweofi_basis': 'ioctl probe'})
    verdict = run(src=source(flat(500.0)), tape=tape, drive={'mtweofi_supported': True},
                  config={'software': 'data_protector', 'segment_size_mb': 10000, 'block_size_bytes': 262144})
    assert 'immediate_filemarks' not in [f['id'] for f in verdict['fixes']]
    tape['mtweofi_supported'] = True
    verdict = run(src=source(flat(500.0)), tape=tape, drive={'mtweofi_supported': None},
                  config={'software': 'data_protector', 'segment_size_mb': 10000, 'block_size_bytes': 262144})
    assert verdict['fixes'][0]['id'] == 'immediate_filemarks'


def test_summary_and_reasons_round_the_floor_the_same_way():
    # LTO-7's floor is 101.46 MB/s: the summary once said "floor 102" next to "needs 101".
    verdict = run(dm.lookup(7, vendor='IBM'), source(([120.0] * 25 + [0.0] * 5) * 3))
    floors = set(re.findall(r'floor (?:of )?\(?([\d.]+) MB/s', verdict['summary'] + ' '.join(verdict['reasons'])))
    floors |= set(re.findall(r'the ([\d.]+) MB/s floor', ' '.join(verdict['reasons'])))
    assert floors == {'101'}, floors


def test_one_minimum_of_samples_whether_or_not_the_module_says():
    # source_read_benchmark marks reads below its min_samples itself; the verdict's minimum
    # (_forecast.MIN_SAMPLES, the module's default) holds whatever the module says (issue 28):
    # 12 samples are judged, marked or not; 9 are not, even when a module run with min_samples=1 let them by.
    marked_fine = source(flat(500.0, 12), passes=6)
    marked_fine['inconclusive'] = None
    assert run(src=marked_fine)['class'] == v.STREAMING
    assert run(src=source(flat(500.0, 12)))['class'] == v.STREAMING
    nine = source(flat(500.0, 9), passes=6)
    nine['inconclusive'] = None
    assert run(src=nine)['class'] == v.INCONCLUSIVE


def test_the_drives_own_back_hitch_count_is_reported():
    def pages(count):
        return {'pages': {'0x34': {'parameters': {'0x8000': count, '0x8005': 658}}}}
    tape = sweep({262144: 400.0})
    tape.update({'log_pages_before': pages(3), 'log_pages_after': pages(7)})
    verdict = run(src=source(flat(500.0)), tape=tape)
    assert verdict['numbers']['drive_reported_backhitches'] == 4
    assert any('drive itself reported 4 back-hitches' in r for r in verdict['reasons'])
    assert run(src=source(flat(500.0)), tape=sweep({262144: 400.0}))['numbers']['drive_reported_backhitches'] is None


# -- st's max_sg_segs keeps a block from direct I/O (st_direct_io) ---------------------------------

# The st preflight of a drive whose HBA takes more pages than st maps: lab-ma2's st (max_sg_segs 256, 4 KiB pages,
# so 1 MiB by direct I/O; sysfs_st_tuning fixture) on an HBA whose sg_tablesize (4096, lab-ma2's host0) and maximum
# transfer (4 MiB) carry a 2 MiB block.
ST_PATH = {'hba_max_transfer_bytes': 4194304, 'host_sg_tablesize': 4096, 'direct_io_max_bytes': 1048576,
           'st_max_sg_segs': 256, 'st_try_direct_io': True}
SWEEP_TO_2M = {262144: 200.0, 1048576: 250.0, 2097152: 360.0}   # 2 MiB clearly best


def test_st_direct_io_asks_for_the_pages_of_the_block_and_one_more():
    assert v.st_direct_io(ST_PATH, 2097152) == {
        'max_sg_segs': 513, 'block_size': 2097152, 'now_max_sg_segs': 256, 'sg_tablesize': 4096,
        'page_size': 4096, 'direct_io_max_bytes': 1048576}
    # a block that is not a whole number of pages: its pages rounded up, and one more
    assert v.st_direct_io(ST_PATH, 1310720 + 512)['max_sg_segs'] == 322


@pytest.mark.parametrize('drive, block', [
    (ST_PATH, 1048576),                                            # fits direct I/O already
    (dict(ST_PATH, host_sg_tablesize=256), 2097152),               # the HBA's sg_tablesize is the limit, not st
    (dict(ST_PATH, host_sg_tablesize=400), 2097152),               # st above 400 gains nothing: 512 pages needed
    (dict(ST_PATH, hba_max_transfer_bytes=1310720), 2097152),      # the HBA refuses the block (block_size's fix)
    (dict(ST_PATH, st_try_direct_io=False), 2097152),              # st does not try direct I/O
    (dict(ST_PATH, host_sg_tablesize=None), 2097152),              # the HBA's side unknown: no claim
    ({}, 2097152),                                                 # no preflight
    (ST_PATH, None),                                               # no block size
])
def test_st_direct_io_only_where_raising_max_sg_segs_lifts_the_limit(drive, block):
    assert v.st_direct_io(drive, block) is None


def test_st_direct_io_fix_for_the_recommended_block_size():
    verdict = run(src=source(flat(600.0)), tape=sweep(SWEEP_TO_2M), drive=ST_PATH,
                  config={'block_size_bytes': 262144})
    ids = [f['id'] for f in verdict['fixes']]
    assert ids[:2] == ['block_size', 'st_direct_io']
    assert verdict['fixes'][0]['value'] == 2097152
    fix = verdict['fixes'][1]
    assert fix['value'] == {'max_sg_segs': 513, 'block_size': 2097152}
    assert fix['rank'] == 2 and fix['feed_after_mb_s'] is None and 'forecast' not in fix
    assert fix['title'] == 'Let st send 2 MiB blocks without copying them (max_sg_segs=513)'
    assert fix['setting'].startswith('st module option max_sg_segs=513: /etc/modprobe.d/st.conf where st is a module, '
                                     'st.max_sg_segs=513 on the kernel command line where it is built in')
    assert 'at most 256 pages of 4 KiB (st max_sg_segs 256, below the HBA\'s sg_tablesize 4096), 1 MiB' in fix['why']
    assert 'A 2 MiB block is copied through st\'s own driver buffer' in fix['why']
    # the fix forecasts nothing: the class and the rates are the block size fix's alone
    without = run(src=source(flat(600.0)), tape=sweep(SWEEP_TO_2M), drive=dict(ST_PATH, host_sg_tablesize=256),
                  config={'block_size_bytes': 262144})
    assert 'st_direct_io' not in [f['id'] for f in without['fixes']]
    assert (verdict['class'], verdict['numbers']) == (without['class'], without['numbers'])


def test_st_direct_io_fix_for_the_configured_block_size_without_a_block_size_fix():
    verdict = run(src=source(flat(600.0)), tape=sweep(SWEEP_TO_2M), drive=ST_PATH,
                  config={'block_size_bytes': 2097152})
    ids = [f['id'] for f in verdict['fixes']]
    assert ids[0] == 'st_direct_io' and 'block_size' not in ids
    assert verdict['fixes'][0]['value'] == {'max_sg_segs': 513, 'block_size': 2097152}


def test_the_preflight_gives_the_verdict_what_st_direct_io_reads():
    from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _host
    preflight = _records.Preflight(
        st_driver={'loaded': True, 'fixed_buffer_size': 32768, 'max_sg_segs': 256, 'try_direct_io': True},
        drives=[{'device': '/dev/nst0', 'hba_max_transfer_bytes': 4194304, 'host_sg_tablesize': 4096,
                 'direct_io_max_bytes': 1048576}])
    merged = _host._with_preflight(_records.DriveIdentity(nst='/dev/nst0'), preflight)
    assert dict((k, merged.get(k)) for k in ST_PATH) == ST_PATH


def test_a_drive_without_tape_physics_gets_its_rate_said_to_be_no_drives():
    src = source(flat(600.0))
    tape = sweep({262144: 480.0, 1048576: 520.0})
    mhvtl = {'nst': '/dev/nst0', 'generation': {'generation': 9, 'inventory': {'physics': False}}}
    said = run(LTO9, src, tape, drive=mhvtl)
    [finding] = [f for f in said['findings'] if f['id'] == 'no_physics']
    assert finding['severity'] == 'info'
    assert finding['text'].startswith('The drive path rate (up to 520 MB/s) came from a device without tape physics')
    for drive in (None, {'nst': '/dev/nst0', 'generation': {'generation': 9, 'inventory': {'physics': True}}},
                  {'nst': '/dev/nst0', 'generation': {'generation': 9, 'inventory': {}}}):
        assert 'no_physics' not in [f['id'] for f in run(LTO9, src, tape, drive=drive)['findings']]
    # without a sweep there is no rate to qualify
    assert 'no_physics' not in [f['id'] for f in run(LTO9, src, None, drive=mhvtl)['findings']]
