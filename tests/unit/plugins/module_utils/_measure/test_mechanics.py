"""The timed cycle (_measure/_mechanics): percentiles of the times (worked by hand), where the cartridge starts."""

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _mechanics as mech
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _cli
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _mtx

from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._tape_fixtures import fixture

TS3500 = 'mtx_status__IBM-03584L32-TS3500-3drive-24slot__1.txt'


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


def test_summarize_keeps_the_cycle_order():
    out = mech.summarize({'move_to_slot': [1.0], 'extra': [2.0], 'move_to_drive': [3.0], 'locate': [4.0]})
    assert list(out) == ['move_to_drive', 'locate', 'move_to_slot', 'extra']


# ---------------------------------------------------------------- where the cartridge is

def test_find_cartridge_in_a_real_ts3500_status():
    status = _mtx.parse_mtx_status(fixture('mtx', TS3500))
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


def test_start_of_a_cartridge_in_a_slot_or_in_its_drive():
    # TS3500: BRU003 in drive 0, loaded from slot 12; BRU001 in slot 10; drives 1 and 2 empty
    status = _mtx.parse_mtx_status(fixture('mtx', TS3500))
    assert mech.start_of(status, 'BRU001', 1, '/dev/sg3', '/dev/nst1') == ('slot', 10)
    # in the drive benchmarked: it is cycled from the slot it was loaded from
    assert mech.start_of(status, 'bru003', 0, '/dev/sg3', '/dev/nst0') == ('drive', 12)


@pytest.mark.parametrize('barcode, element, reason, words', [
    ('BRU001', 0, 'drive_full', 'Drive 0 (/dev/nst0) holds another cartridge (BRU003); the benchmark moves only '
                                'BRU001. Unload the drive first.'),
    ('BRU003', 1, 'cartridge_elsewhere', 'Cartridge BRU003 is in drive 0 of the changer, not in drive 1'),
    ('NOPE01', 1, 'no_cartridge', 'Cartridge NOPE01 is not in the changer /dev/sg3'),
    ('BRU001', 7, 'no_drive_element', 'The changer /dev/sg3 has no data transfer element 7 (mtx status lists '
                                      '[0, 1, 2]).'),
])
def test_start_of_refuses_what_the_changer_says_against_it(barcode, element, reason, words):
    status = _mtx.parse_mtx_status(fixture('mtx', TS3500))
    with pytest.raises(mech.MechanicsError) as info:
        mech.start_of(status, barcode, element, '/dev/sg3', '/dev/nst0')
    assert info.value.reason == reason and words in info.value.msg


def test_start_of_a_loaded_cartridge_whose_slot_the_changer_does_not_say():
    # the TS3500 capture without "(Storage Element 12 Loaded)": mtx prints it only when the changer reports the
    # source element, so the benchmark would not know where to put BRU003 back
    text = fixture('mtx', TS3500).replace(' (Storage Element 12 Loaded)', '')
    status = _mtx.parse_mtx_status(text)
    assert mech.drive_entry(status, 0)['source_element'] is None
    with pytest.raises(mech.MechanicsError) as info:
        mech.start_of(status, 'BRU003', 0, '/dev/sg3', '/dev/nst0')
    assert info.value.reason == 'no_source_slot' and 'mtx unload SLOT 0' in info.value.msg


def test_start_of_a_changer_that_is_not_ready():
    # IBM 33614LX offline: mtx exits 1 with the sense data and "READ ELEMENT STATUS Command Failed" on stderr
    result = _cli.CliResult(['mtx', '-f', '/dev/sg6', 'status'], 1, '',
                            fixture('mtx', 'mtx_status_error__IBM-33614LX-not-ready__1.txt'))
    with pytest.raises(mech.MechanicsError) as info:
        mech.start_of(_mtx.parse_mtx_result(result), 'ANY001', 0, '/dev/sg6', '/dev/nst0')
    assert info.value.reason == 'changer_error'
    assert info.value.msg.startswith('mtx status on /dev/sg6 failed: READ ELEMENT STATUS Command Failed. ')


def test_benchmark_refuses_bad_input_before_touching_anything():
    with pytest.raises(ValueError, match='barcode is required'):
        mech.MechanicsBenchmark('/dev/nst0', '')
    with pytest.raises(ValueError, match='repeats'):
        mech.MechanicsBenchmark('/dev/nst0', 'SCR001L6', repeats=0)
    with pytest.raises(ValueError, match='locate_files'):
        mech.MechanicsBenchmark('/dev/nst0', 'SCR001L6', locate_files=0)
