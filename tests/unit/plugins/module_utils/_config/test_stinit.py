# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

import os
import shutil
import subprocess

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._tools._st_sysfs import read_options
from ansible_collections.tapeops.qualify.plugins.module_utils._config._stinit import (
    StinitError,
    compare,
    expected_settings,
    render_stinit_def,
    st_driver_params,
    transfer_limits,
    validate_definitions,
)

FIX = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'fixtures', 'sysfs_st_tuning',
                   'grep_sysfs__HP-Ultrium6-SCSI-35GD-lab-ma2-tuned__1.txt')

DEFAULTS = [{'comment': 'every drive',
             'options': {'buffer-writes': 1, 'async-writes': 1, 'read-ahead': 1, 'can-bsr': 1, 'scsi2logical': 1},
             'modes': [{'mode': 1, 'blocksize': 0}]}]


@pytest.fixture
def sys_root(tmp_path):
    """A sysfs tree rebuilt from the `grep .` recording of lab-ma2 (values byte for byte)."""
    with open(FIX) as handle:
        for line in handle:
            if line.startswith('# '):
                continue
            path, value = line.rstrip('\n').split(':', 1)
            full = tmp_path / path
            full.parent.mkdir(parents=True, exist_ok=True)
            full.write_text(value + '\n')
    return str(tmp_path)


def _actual(sys_root):
    return {mode: read_options('nst0' + suffix, sys_root) for mode, suffix in ((1, ''), (2, 'l'))}


def test_lab_ma2_tuned_drive_matches_default_definitions(sys_root):
    expected = expected_settings(DEFAULTS, 'HP', 'Ultrium 6-SCSI', '35GD')
    assert expected == {1: {'options': {'buffer_writes': True, 'async_writes': True, 'read_ahead': True,
                                        'can_bsr': True, 'scsi2logical': True}, 'default_blksize': 0}}
    assert compare(expected, _actual(sys_root)) == []


def test_lab_ma2_mismatch_is_reported_per_mode(sys_root):
    defs = [{'manufacturer': 'HP', 'model': 'Ultrium', 'options': {'two-fms': 1},
             'modes': [{'mode': 1, 'compression': 1}, {'mode': 2, 'blocksize': 262144}]}]
    diffs = compare(expected_settings(defs, 'HP', 'Ultrium 6-SCSI', '35GD'), _actual(sys_root))
    assert diffs == [
        {'mode': 1, 'setting': 'two_fm', 'expected': True, 'actual': False},
        {'mode': 1, 'setting': 'default_compression', 'expected': 1, 'actual': -1},
        {'mode': 2, 'setting': 'two_fm', 'expected': True, 'actual': False},
        {'mode': 2, 'setting': 'default_blksize', 'expected': 262144, 'actual': -1},
    ]


def test_matching_is_case_sensitive_prefix_and_later_definitions_win():
    defs = [{'options': {'read-ahead': 1}},
            {'manufacturer': 'IBM', 'model': 'ULT3580', 'options': {'read-ahead': 0}},
            {'manufacturer': 'ibm', 'options': {'two-fms': 1}}]
    assert expected_settings(defs, 'IBM', 'ULT3580-TD5', 'G350')[1]['options'] == {'read_ahead': False}
    assert expected_settings(defs, 'HP', 'Ultrium 6-SCSI', '35GD')[1]['options'] == {'read_ahead': True}


def test_st_driver_params_from_driver_attributes(sys_root):
    assert st_driver_params(sys_root) == {'loaded': True, 'fixed_buffer_size': 32768, 'max_sg_segs': 256,
                                          'try_direct_io': True}


def test_st_driver_params_module_parameters_and_absent(tmp_path):
    params = tmp_path / 'module' / 'st' / 'parameters'
    params.mkdir(parents=True)
    (params / 'buffer_kbs').write_text('64\n')
    (params / 'max_sg_segs').write_text('128\n')
    (params / 'try_direct_io').write_text('0\n')
    assert st_driver_params(str(tmp_path)) == {'loaded': True, 'fixed_buffer_size': 65536, 'max_sg_segs': 128,
                                               'try_direct_io': False}
    assert st_driver_params(str(tmp_path / 'none'))['loaded'] is False


def test_render_has_mode_lines_and_quotes_blanks():
    text = render_stinit_def([{'manufacturer': 'HP', 'model': 'Ultrium 6-SCSI', 'comment': 'HP LTO-6',
                               'options': {'can-bsr': 1, 'timeout': 900, 'long-timeout': 14400},
                               'modes': [{'mode': 1, 'blocksize': 0}, {'mode': 2, 'blocksize': 262144,
                                                                       'compression': 0}]}],
                             header='managed')
    assert text == ('# managed\n\n# HP LTO-6\nmanufacturer=HP model="Ultrium 6-SCSI" {\n'
                    '  timeout=900 long-timeout=14400\n'
                    '  mode1 can-bsr=1 blocksize=0\n'
                    '  mode2 can-bsr=1 blocksize=262144 compression=0\n}\n')


@pytest.mark.skipif(shutil.which('stinit', path=os.environ.get('PATH', '') + ':/usr/sbin:/sbin') is None,
                    reason='mt-st is not installed')
def test_rendered_file_passes_stinit_parse(tmp_path):
    """The real stinit (mt-st) parses what we render: `stinit -p` exits 0 and reports no errors."""
    path = tmp_path / 'stinit.def'
    path.write_text(render_stinit_def(DEFAULTS + [
        {'manufacturer': 'IBM', 'model': 'ULT3580', 'options': {'timeout': 900, 'sili': 1, 'defs-for-writes': 0},
         'modes': [{'mode': 1, 'blocksize': 0, 'density': 0x58}, {'mode': 4, 'disabled': 1}]}], header='test'))
    stinit = shutil.which('stinit', path=os.environ.get('PATH', '') + ':/usr/sbin:/sbin')
    proc = subprocess.run([stinit, '-p', '-f', str(path)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert 'No errors found' in proc.stdout + proc.stderr


@pytest.mark.parametrize('defs, words', [
    ([{'options': {'blocksiz': 0}}], "unknown stinit keyword 'blocksiz'"),
    ([{'options': {'buffer-writes': 2}}], 'buffer-writes takes 0 or 1'),
    ([{'modes': [{'mode': 5}]}], 'mode must be 1, 2, 3 or 4'),
    ([{'modes': [{'mode': 1}, {'mode': 1}]}], 'mode 1 is defined twice'),
    ([{'modes': [{'mode': 1, 'blocksize': 1023}]}], 'not a multiple of 4 bytes'),
    ([{'modes': [{'mode': 1, 'blocksize': -1}]}], 'blocksize must be between 0'),
    ([{'options': {'timeout': 'soon'}}], 'timeout takes a whole number'),
    ([{'model': 'A "quoted" model'}], 'without quotes'),
    ([{'vendor': 'IBM'}], "unknown key(s) vendor"),
])
def test_bad_definitions_rejected_with_what_to_write(defs, words):
    with pytest.raises(StinitError) as exc:
        validate_definitions(defs)
    assert words in str(exc.value)


def test_transfer_limits_lab_ma2_values():
    # lab-ma2: BLKSECTGET on sg1 = 1310720 bytes, host0 sg_tablesize 4096, st max_sg_segs 256.
    fits = transfer_limits(1310720, 4096, 256, 4096, 1048576)
    assert fits['fits'] is True and fits['direct_io_max_bytes'] == 1048576
    assert fits['direct_io_limited_by'] == 'st max_sg_segs'
    too_big = transfer_limits(1310720, 4096, 256, 4096, 2097152)
    assert too_big['fits'] is False and too_big['limited_by'] == 'HBA max_sectors'
    assert 'caps one command at 1310720 bytes' in too_big['message']
    copy = transfer_limits(4194304, 4096, 256, 4096, 2097152)
    assert copy['fits'] is True and 'max_sg_segs=513' in copy['message']
    unknown = transfer_limits(None, None, 256, 4096, 1048576)
    assert unknown['fits'] is None and 'maximum unknown' in unknown['message']
