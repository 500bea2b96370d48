"""Library and drive mechanics: percentiles, overheads, target scaling, object sizes (worked by hand)."""

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _drive_model as dm
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _mechanics as mech
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _mtx

from _tape_fixtures import fixture


# ---------------------------------------------------------------- percentiles

def test_percentile_interpolates_between_ranks():
    # n=4: rank(50) = 3*0.5 = 1.5 -> between 2 and 3 = 2.5; rank(95) = 3*0.95 = 2.85 -> 3 + 0.85*(4-3) = 3.85
    assert mech.percentile([4, 1, 3, 2], 50) == pytest.approx(2.5)
    assert mech.percentile([4, 1, 3, 2], 95) == pytest.approx(3.85)
    assert mech.percentile([7.0], 95) == 7.0
    assert mech.percentile([], 50) is None
    assert mech.percentile([None, 2.0], 50) == 2.0


def test_summarize_three_loads():
    # three lab loads 0.50, 0.44, 0.46 s: sorted 0.44 0.46 0.50; median 0.46; p95 rank 1.9 -> 0.46 + 0.9*0.04 = 0.496
    out = mech.summarize({'move_to_drive': [0.50, 0.44, 0.46], 'locate': []})
    entry = out['move_to_drive']
    assert entry['n'] == 3
    assert entry['median_s'] == pytest.approx(0.46)
    assert entry['p95_s'] == pytest.approx(0.496)
    assert (entry['min_s'], entry['max_s']) == (0.44, 0.5)
    assert 'locate' not in out          # not measured is absent, never 0


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
    summary = mech.summarize({'move_to_drive': [10.0], 'load_ready': [12.0], 'rewind': [5.0], 'unload': [17.0],
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
    summary = mech.summarize({'locate': [1.0]})
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


# ---------------------------------------------------------------- where the cartridge is

def test_find_cartridge_in_a_real_ts3500_status():
    status = _mtx.parse_mtx_status(fixture('mtx', 'mtx_status__IBM-03584L32-TS3500-3drive-24slot__1.txt'))
    assert mech.find_cartridge(status, 'BRU003') == ('drive', 0)
    assert mech.find_cartridge(status, 'bru001') == ('slot', 10)
    assert mech.find_cartridge(status, 'NOPE01') == (None, None)
    assert mech.drive_entry(status, 0)['source_element'] == 12
    assert mech.drive_entry(status, 7) is None


def test_find_cartridge_loaded_in_a_drive_after_mtx_load():
    # mhVTL STK L700 right after "mtx -f /dev/sg9 load 39 0" (slots elided by the author): the cartridge is in
    # drive 0 and the changer remembers slot 39, where the benchmark puts it back between the cycles.
    status = _mtx.parse_mtx_status(fixture('mtx', 'mtx_status_partial__mhVTL-STK-L700-after-load-elided__2.txt'))
    assert mech.find_cartridge(status, 'F01039L5') == ('drive', 0)
    assert mech.drive_entry(status, 0)['source_element'] == 39
    assert mech.drive_entry(status, 1)['full'] is False
    assert mech.find_cartridge(status, '') == (None, None)


def test_benchmark_refuses_bad_input_before_touching_anything():
    with pytest.raises(ValueError, match='barcode is required'):
        mech.MechanicsBenchmark('/dev/nst0', '')
    with pytest.raises(ValueError, match='repeats'):
        mech.MechanicsBenchmark('/dev/nst0', 'SCR001L6', repeats=0)
    with pytest.raises(ValueError, match='locate_files'):
        mech.MechanicsBenchmark('/dev/nst0', 'SCR001L6', locate_files=0)
