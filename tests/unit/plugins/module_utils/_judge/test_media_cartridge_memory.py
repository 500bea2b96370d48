"""The media inventory with a loaded cartridge's memory (_media): near its end of life it is listed apart, and the
migration estimate takes the data on it instead of its native capacity.

The library is the pve capture (tests/unit/fixtures/mtx/mtx_status__pve-2drive-24slot-LTO5__1.txt) with drive 0's
volume tag removed, so its cartridge is classified by the density the drive reports (0x5a, LTO-6), as in
test_media.py. The cartridge's memory is the real HP Ultrium 6 FUJIFILM LTO-6 one
(tests/unit/fixtures/sg_read_attr/sg_read_attr__HP-Ultrium6-SCSI-35GD-FUJI-LTO6-EW7VWMVKF6__1.txt: load count 1,
nothing written yet) as tape_drive_info returns it, and the same with its load count and remaining capacity
changed (``derived``: no published capture of a worn cartridge was found).
"""

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils import _records
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _drive_model, _media
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _mtx, _sg_read_attr

from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._tape_fixtures import (
    derived, fixture, read)

MAM = 'sg_read_attr/sg_read_attr__HP-Ultrium6-SCSI-35GD-FUJI-LTO6-EW7VWMVKF6__1.txt'


def memory(loads=None, remaining=None):
    text = read(MAM)
    if loads is not None:
        text = derived(text, '  Load count: 1\n', '  Load count: %d\n' % loads)
    if remaining is not None:
        text = derived(text, '  Remaining capacity in partition [MiB]: 2499053\n',
                       '  Remaining capacity in partition [MiB]: %d\n' % remaining)
    return _records.CartridgeMemory.from_parse(_sg_read_attr.parse(text)).to_dict()


def summary(mam):
    text = fixture('mtx', 'mtx_status__pve-2drive-24slot-LTO5__1.txt').replace(':VolumeTag = 000057L5', '')
    changer = {'sg': '/dev/sg3', 'status': _mtx.parse_mtx_status(text)}
    drive = {'nst': '/dev/nst0', 'density_code': '0x5a', 'changer': {'sg': '/dev/sg3', 'element': 0}}
    if mam is not None:
        drive['cartridge_memory'] = mam
    return _media.summarize(_media.inventory_libraries([changer], [drive]), _drive_model.lookup(9, 'FH'))


def test_without_a_cartridge_memory_the_summary_is_as_before():
    (lib,) = summary(None)['libraries']
    assert 'end_of_life' not in lib and 'from_memory' not in lib['migration']
    assert not any('written_gb' in row for row in lib['stranded'])


def test_a_fresh_cartridge_is_migrated_by_the_data_on_it_not_its_native_capacity():
    before, after = summary(None)['libraries'][0], summary(memory())['libraries'][0]
    assert after['end_of_life'] == []
    (row,) = [r for r in after['stranded'] if r['media'] == 'L6']
    # the real cartridge at its first load: nothing written (remaining = maximum capacity)
    assert row['written_gb'] == 0.0
    assert after['migration']['from_memory'] == 1
    assert after['migration']['data_gb'] == pytest.approx(before['migration']['data_gb'] - 2500.0)
    assert after['migration']['hours'] < before['migration']['hours']
    assert after['migration']['assumptions'][0].startswith('1 cartridge: the data its memory says is on it')


def test_a_worn_cartridge_is_listed_apart_and_its_data_still_counts_in_the_migration():
    # 19,000 loads of an LTO-6's 20,000 (IBM's table), 2,000,000 MiB written of its 2,499,053
    s = summary(memory(loads=19000, remaining=499053))
    (lib,) = s['libraries']
    (worn,) = lib['end_of_life']
    assert (worn['media'], worn['class'], worn['where'].startswith('drive 0')) == ('L6', 'stranded', True)
    (finding,) = worn['findings']
    assert finding['code'] == 'cartridge_loads' and finding['fix'] == 'retire_cartridge'
    assert (finding['evidence']['value'], finding['evidence']['limit']) == (19000, 20000)
    assert not any(r['media'] == 'L6' for r in lib['stranded'])
    assert worn['written_gb'] == pytest.approx(2000000 * 1048576 / 1e9, abs=0.001)
    assert lib['migration']['from_memory'] == 1
    assert lib['keep_old_drive']['required'] and 'L6' in lib['keep_old_drive']['why']
    text = [f['text'] for f in s['findings'] if 'end of its life' in f['text']]
    assert text == ['library /dev/sg3, no barcode (%s): near the end of its life (19000 loads of 20000): copy its '
                    'data to another cartridge and retire it' % worn['where']]


@pytest.mark.parametrize('mam', [{'maximum_capacity_mib': 10, 'remaining_capacity_mib': 20},
                                 {'maximum_capacity_mib': None, 'remaining_capacity_mib': 5},
                                 {'load_count': 'many'}, 'garbage'])
def test_a_memory_that_does_not_add_up_falls_back_to_the_native_capacity(mam):
    assert _media.written_gb(mam) is None
    assert _media.end_of_life(mam) == []
