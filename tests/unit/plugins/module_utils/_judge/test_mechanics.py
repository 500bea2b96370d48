"""The mechanics forecast (_judge/_mechanics): overheads, target scaling, object sizes (worked by hand), and the
benchmark's result analysed with the drive the collection's resolver names."""

import json
import os

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _drive_model as dm
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _mechanics as mech
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _mechanics as timed

from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._tape_fixtures import FIXTURES


# ---------------------------------------------------------------- object sizes

def test_object_size_worked_numbers():
    # R = 300 MB/s, T = 2 s: 50 % needs S = R*T = 600 MB; 90 % needs 9*R*T = 5400 MB
    assert mech.object_size_mb(300, 2.0, 0.5) == pytest.approx(600.0)
    assert mech.object_size_mb(300, 2.0, 0.9) == pytest.approx(5400.0)
    # and back: 5400 MB take 18 s of writing plus 2 s of overhead = 18/20 = 90 %
    assert mech.fraction_of_rate(5400, 300, 2.0) == pytest.approx(0.9)
    assert mech.fraction_of_rate(600, 300, 2.0) == pytest.approx(0.5)
    assert mech.object_size_mb(300, 0.0, 0.9) == 0.0
    assert mech.object_size_mb(None, 2.0, 0.9) is None
    assert mech.object_size_mb(300, None, 0.9) is None
    with pytest.raises(ValueError):
        mech.object_size_mb(300, 2.0, 1.0)


def test_mount_overhead_and_table():
    # move 10 + ready 12 + rewind 5 + unload 17 + move back 10 = 54 s per mount (locate and EOD not in it)
    times = {'move_to_drive': 10.0, 'load_ready': 12.0, 'locate': 40.0, 'space_eod': 30.0, 'rewind': 5.0,
             'unload': 17.0, 'move_to_slot': 10.0}
    over = mech.overheads(times, filemark_s=3.0)
    assert over == {'filemark': 3.0, 'locate': 40.0, 'mount': 54.0}
    rows = dict((r['object'], r) for r in mech.object_table(300.0, over))
    # file mark: 300*3 = 900 MB at 50 %, 8100 MB at 90 %
    assert (rows['filemark']['size_50_mb'], rows['filemark']['size_90_mb']) == (900.0, 8100.0)
    # locate: 300*40 = 12000 / 108000 MB
    assert (rows['locate']['size_50_mb'], rows['locate']['size_90_mb']) == (12000.0, 108000.0)
    # mount: 300*54 = 16200 MB at 50 %, 145800 MB at 90 %
    assert (rows['mount']['size_50_mb'], rows['mount']['size_90_mb']) == (16200.0, 145800.0)


def test_a_missing_part_makes_the_mount_unknown_not_smaller():
    over = mech.overheads({'move_to_drive': 10.0, 'load_ready': 12.0}, filemark_s=None)
    assert over == {'filemark': None, 'locate': None, 'mount': None}
    rows = mech.object_table(300.0, over)
    assert all(r['size_90_mb'] is None for r in rows)


# ---------------------------------------------------------------- target scaling

def test_scaling_uses_published_figures_only():
    current = dm.lookup('LTO-5 FH', vendor='IBM')     # load 12 / unload 17 published (TS4500); rewind, locate estimated
    target = dm.lookup('LTO-9 FH', vendor='IBM')      # load 17 / unload 30 / rewind 55 / locate 45 published (dtl)
    assert not current.is_estimated('load_s') and current.is_estimated('rewind_s')
    assert not any(target.is_estimated(f) for f in ('load_s', 'unload_s', 'rewind_s', 'locate_s'))
    scaled = mech.scale_times({'load_ready': 2.0, 'unload': 3.4, 'rewind': 10.0, 'locate': 8.0,
                               'move_to_drive': 9.0}, current, target)
    assert scaled['load_ready']['target_s'] == pytest.approx(2.0 * 17 / 12, abs=1e-4)      # 2.8333
    assert scaled['unload']['target_s'] == pytest.approx(3.4 * 30 / 17, abs=1e-4)          # 6.0
    assert scaled['load_ready']['basis'] == 'scaled by load_s: target 17 s (published) / current 12 s (published)'
    assert scaled['rewind']['target_s'] == 10.0 and 'estimate' in scaled['rewind']['basis']
    assert scaled['locate']['target_s'] == 8.0 and 'current' in scaled['locate']['basis']
    assert scaled['move_to_drive']['target_s'] == 9.0 and 'robot' in scaled['move_to_drive']['basis']


def test_scaling_says_when_the_current_figure_is_the_inventorys():
    # the lab's inventory gives its drive's scaled times (tapeops_drives[].model): load 12 / 50 = 0.24 s;
    # a measured 0.49 s scales to the real LTO-9 FH: 0.49 * 17 / 0.24 = 34.7 s, and the basis says where each came from
    current = dm.lookup('LTO-5 FH', vendor='IBM', overrides={'load_s': 0.24, 'rewind_s': 1.1})
    target = dm.lookup('LTO-9 FH', vendor='IBM')
    scaled = mech.scale_times({'load_ready': 0.49, 'rewind': 0.1}, current, target)
    assert scaled['load_ready']['target_s'] == pytest.approx(0.49 * 17 / 0.24, abs=1e-3)
    assert scaled['load_ready']['basis'] == 'scaled by load_s: target 17 s (published) / current 0.24 s (inventory)'
    # an inventory value is not an estimate any more: the rewind is scaled too (55 / 1.1 = 50x)
    assert scaled['rewind']['target_s'] == pytest.approx(5.0)
    assert 'current 1.1 s (inventory)' in scaled['rewind']['basis']


def test_scaling_half_height_locate():
    # IBM TS2290: LTO-7 HH locate 56 s, LTO-9 HH 65 s: 5.6 s measured -> 6.5 s
    scaled = mech.scale_times({'locate': 5.6}, dm.lookup('LTO-7 HH', vendor='IBM'), dm.lookup('LTO-9 HH', vendor='IBM'))
    assert scaled['locate']['target_s'] == pytest.approx(6.5)


def test_forecast_current_and_target():
    summary = timed.summarize({'move_to_drive': [10.0], 'load_ready': [12.0], 'rewind': [5.0], 'unload': [17.0],
                              'move_to_slot': [10.0], 'locate': [40.0]})
    current = dm.lookup('LTO-5 FH', vendor='IBM')
    target = dm.lookup('LTO-9 FH', vendor='IBM')
    out = mech.forecast(summary, current=current, target=target, filemark_s=3.0)
    # current rate: LTO-5 native 140 MB/s (no measured rate given)
    assert out['current']['rate_mb_s'] == 140.0 and 'native' in out['current']['rate_basis']
    cur = dict((r['object'], r) for r in out['current']['objects'])
    assert cur['mount']['overhead_s'] == 54.0
    assert cur['mount']['size_90_mb'] == pytest.approx(140 * 54 * 9)             # 68040 MB
    assert cur['filemark']['size_90_mb'] == pytest.approx(140 * 3 * 9)           # 3780 MB
    # target LTO-9: 400 MB/s; load 12*17/12 = 17, unload 17*30/17 = 30, rewind 5 as measured (LTO-5's is estimated)
    tgt = out['target']
    assert tgt['rate_mb_s'] == 400.0
    assert tgt['times_s']['load_ready'] == pytest.approx(17.0)
    assert tgt['times_s']['unload'] == pytest.approx(30.0)
    assert tgt['overheads_s']['mount'] == pytest.approx(10 + 17 + 5 + 30 + 10)  # 72 s
    rows = dict((r['object'], r) for r in tgt['objects'])
    assert rows['mount']['size_50_mb'] == pytest.approx(400 * 72)              # 28800 MB
    assert rows['filemark']['size_90_mb'] == pytest.approx(400 * 3 * 9)       # 10800 MB
    # a measured rate replaces the model's for the current drive
    measured = mech.forecast(summary, current=current, rate_mb_s=120.0, filemark_s=3.0, rate_basis='measured')
    assert measured['current']['rate_mb_s'] == 120.0 and 'target' not in measured


# ---------------------------------------------------------------- backup sizes

def test_backup_sizes_read_segment_and_bacula_notation():
    sizes = mech.backup_sizes_mb({'segment_size_mb': 2000, 'maximum_file_size': '50G'})
    assert sizes['segment size (segment_size_mb)'] == 2000.0
    # Bacula: G = 1024**3 bytes -> 50 * 1073741824 / 1e6 = 53687.09 MB
    assert sizes['Bacula Maximum File Size (maximum_file_size 50G)'] == pytest.approx(53687.09, abs=0.01)
    assert mech.backup_sizes_mb({'maximum_file_size': '200GB'}) == {
        'Bacula Maximum File Size (maximum_file_size 200GB)': 200000.0}
    assert mech.backup_sizes_mb({'segment_size_mb': 'lots', 'maximum_file_size': '-1G'}) == {}
    assert mech.backup_sizes_mb(None) == {}


def test_size_warning_below_the_90_percent_line():
    summary = timed.summarize({'locate': [1.0]})
    out = mech.forecast(summary, current=dm.lookup('LTO-7 HH', vendor='IBM'),
                        target=dm.lookup('LTO-9 HH', vendor='IBM'), rate_mb_s=300.0, filemark_s=3.0)
    # current: 90 % line = 300*3*9 = 8100 MB; a 2000 MB segment reaches (2000/300)/(2000/300 + 3) = 0.690
    warnings = mech.size_warnings(out, {'segment size': 2000.0, 'big': 200000.0})
    current = [w for w in warnings if w['drive'] == 'current']
    assert len(current) == 1 and current[0]['setting'] == 'segment size'
    assert current[0]['size_90_mb'] == 8100.0
    assert current[0]['reaches'] == pytest.approx(0.69, abs=0.001)
    assert '8100 MB' in current[0]['text'] and '69 %' in current[0]['text']
    # target LTO-9 HH: 300 MB/s native -> same line; the 200 GB setting is above both
    assert [w['setting'] for w in warnings] == ['segment size', 'segment size']
    assert mech.size_warnings(out, {}) == []
    unknown = mech.forecast(summary, rate_mb_s=300.0, filemark_s=None)
    assert mech.size_warnings(unknown, {'segment size': 1.0}) == []


# ---------------------------------------------------------------- the benchmark's result

# lab-ma1's drive as the v2 lab run recorded it (tests/unit/fixtures/lab_runs/20261124-quick-v2/lab-ma1.json): its
# INQUIRY and loaded cartridge (identity) and its tapeops_drives entry (settings: the emulated LTO-5's scaled model)
with open(os.path.join(FIXTURES, 'lab_runs', '20261124-quick-v2', 'lab-ma1.json'), encoding='utf-8') as _doc:
    LAB_MA1 = json.load(_doc)['drives'][0]
LAB_DRIVE = dict((k, LAB_MA1['identity'][k]) for k in ('nst', 'vendor', 'product', 'revision', 'density_code'))
LAB_ENTRY = LAB_MA1['settings']
SAMPLES = {'move_to_drive': [0.47, 0.46, 0.50], 'load_ready': [0.03, 0.02, 0.03], 'locate': [0.05, 0.04, 0.05],
           'space_eod': [0.06, 0.05, 0.06], 'rewind': [0.06, 0.06, 0.07], 'unload': [0.37, 0.38, 0.37],
           'move_to_slot': [0.22, 0.23, 0.22]}


def benchmark_result(drive):
    """What MechanicsBenchmark.run returns, file marks written (0.5 s lost per mark)."""
    return {'device': '/dev/nst0', 'drive': dict(drive), 'warnings': [], 'summary': timed.summarize(SAMPLES),
            'filemarks': {'written': True, 'marks': 4, 'seconds_lost_per_mark': 0.5}}


def test_analyse_forecasts_the_drive_its_inventory_entry_names():
    assert (LAB_DRIVE['product'], LAB_ENTRY['model']['native_mb_s'], LAB_ENTRY['model']['load_s']) == (
        'ULT3580-TD5', 7.0, 0.24)
    result = mech.analyse(benchmark_result(LAB_DRIVE), setting=LAB_ENTRY, target=dm.lookup('LTO-9 FH', vendor='IBM'),
                          backup={'segment_size_mb': 4})
    current, target = result['forecast']['current'], result['forecast']['target']
    # the entry's native rate (no measured one given) and its load time, which the target's is scaled from
    assert (current['label'], current['rate_mb_s'], current['rate_basis']) == (
        'LTO-5', 7.0, "the drive model's native rate")
    assert target['scaling']['load_ready']['basis'] == \
        'scaled by load_s: target 17 s (published) / current 0.24 s (inventory)'
    assert target['times_s']['load_ready'] == pytest.approx(0.03 * 17 / 0.24, abs=1e-4)
    # 90 % line of a file mark: 7 * 0.5 * 9 = 31.5 MB now, 400 * 0.5 * 9 = 1800 MB on the LTO-9: the 4 MB
    # segment is below both
    assert [(w['drive'], w['size_90_mb']) for w in result['size_warnings']] == [('current', 31.5), ('target', 1800.0)]
    # the result's drive says which drive model the forecast used: the entry's, its floor too
    assert result['drive']['generation']['source'] == 'inventory'
    assert result['drive']['drive_model']['speed_floor_mb_s'] == 2.0


def test_a_drive_inquiry_does_not_name_is_forecast_as_its_entry_names_it():
    # no product ID: only the inventory's generation names the drive (before, the mechanics took the entry's
    # model fields alone and had no drive model, so no rate and no object sizes)
    drive = {'nst': '/dev/nst0', 'vendor': 'IBM', 'product': None}
    bare = mech.analyse(benchmark_result(drive))['forecast']['current']
    assert (bare['label'], bare['rate_mb_s'], bare['rate_basis']) == (None, None, 'unknown')
    result = mech.analyse(benchmark_result(drive), setting={'nst': 'nst0', 'generation': 'LTO-7', 'vendor': 'HPE'})
    current = result['forecast']['current']
    assert (current['label'], current['rate_mb_s']) == ('LTO-7', dm.lookup(7, vendor='HPE').native_mb_s)
    assert dict((r['object'], r['size_90_mb']) for r in current['objects'])['filemark'] == pytest.approx(
        current['rate_mb_s'] * 0.5 * 9, abs=0.1)


def test_an_entry_the_resolver_cannot_read_costs_the_entry_not_the_forecast():
    result = mech.analyse(benchmark_result(LAB_DRIVE), setting={'nst': '/dev/nst0', 'generation': 'LTO-5 FH',
                                                                'form_factor': 'HH'})
    assert result['forecast']['current']['label'] == 'LTO-5'        # INQUIRY's drive
    assert result['warnings'] == ["tapeops_drives: generation 'LTO-5 FH' says FH but form_factor says HH; give one.; "
                                  "the current drive is forecast without its tapeops_drives entry"]
