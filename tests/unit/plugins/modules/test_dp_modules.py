# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""dp_device_info and dp_omnirc through their main(): arguments in, the documented RETURN out."""

from __future__ import annotations

import os
import shutil

from module_harness import FIXTURES, run_module

from ansible_collections.tapeops.qualify.plugins.modules import dp_device_info, dp_omnirc

TMPL = os.path.join(FIXTURES, 'omnirc', 'omnirc_TMPL__tapeops-test-standin__1.txt')
# the .omnirc the role wrote before issue 23 item 1: OB2FORCESCSI=1 where seed 001 sets WFM
FORCESCSI_1 = os.path.join(FIXTURES, 'omnirc', 'omnirc__dp_omnirc-before-issue23-forcescsi-1__1.txt')


SIZING = ('name', 'native_capacity_gb', 'segment_size_mb', 'catalog_segment_limit_mb', 'block_size_kb',
          'block_size_limited_by', 'drive_label')


def test_dp_device_info_recommends_from_the_drive_model_and_the_hba(monkeypatch):
    failed, result = run_module(dp_device_info.main, {
        'drives': [{'name': '/dev/nst0', 'generation': 'LTO-6'},
                   {'name': '/dev/nst1', 'native_capacity_gb': 18000, 'hba_max_transfer_bytes': 524288}],
    }, monkeypatch)
    assert not failed, result
    assert result['changed'] is False
    # LTO-6: 2500 GB native (drive model) / 50 = 50000 MB segments; DP's 1024 KB block maximum.
    # 18000 GB / 50 = 360000 MB; the HBA carries 512 KiB, so the block is the HBA's; no model label.
    assert [dict((k, d[k]) for k in SIZING) for d in result['devices']] == [
        {'name': '/dev/nst0', 'native_capacity_gb': 2500, 'segment_size_mb': 50000,
         'catalog_segment_limit_mb': 12, 'block_size_kb': 1024, 'block_size_limited_by': 'dp',
         'drive_label': 'LTO-6'},
        {'name': '/dev/nst1', 'native_capacity_gb': 18000, 'segment_size_mb': 360000,
         'catalog_segment_limit_mb': 12, 'block_size_kb': 512, 'block_size_limited_by': 'hba',
         'drive_label': None},
    ]
    # the drive resolver named LTO-6 from the inventory's generation, with no cartridge taken for the drive
    identity = result['devices'][0]['identity']
    assert (identity['generation'], identity['source'], identity['medium']) == (6, 'inventory', None)


def test_dp_device_info_without_generation_or_capacity_says_what_to_give(monkeypatch):
    failed, result = run_module(dp_device_info.main, {'drives': [{'name': '/dev/nst0'}]}, monkeypatch)
    assert failed
    assert result['msg'].startswith('Drive /dev/nst0: give its generation (for example LTO-6), its tape_drive_info '
                                    'entry as discovered, or native_capacity_gb'), result['msg']


def test_dp_device_info_unknown_generation_is_a_clear_error(monkeypatch):
    failed, result = run_module(dp_device_info.main, {'drives': [{'name': '/dev/nst0', 'generation': 'DLT-4'}]},
                                monkeypatch)
    assert failed
    assert result['msg'].startswith("Drive /dev/nst0: tapeops_drives: Cannot read an LTO generation from 'DLT-4'. "
                                    'Use a number 1-10'), result['msg']


def _omni_home(tmp_path):
    home = tmp_path / 'omni'
    home.mkdir()
    shutil.copy(TMPL, str(home / '.omnirc.TMPL'))
    return home


def test_dp_omnirc_ladder_check_real_check_real(tmp_path, monkeypatch):
    home = _omni_home(tmp_path)
    args = {'path': str(home / '.omnirc'), 'keys': {'OB2FORCESCSI': 'WFM', 'OB2IMMEDFM': True}}
    with open(TMPL) as handle:
        template = handle.read()

    # check mode: says it would create the file from the template, writes nothing
    failed, result = run_module(dp_omnirc.main, args, monkeypatch, check_mode=True, diff=True)
    assert not failed, result
    assert (result['changed'], result['created']) == (True, True)
    assert result['changes'] == [{'key': 'OB2FORCESCSI', 'before': None, 'after': 'WFM'},
                                 {'key': 'OB2IMMEDFM', 'before': None, 'after': '1'}]
    assert result['keys'] == {'OB2FORCESCSI': 'WFM', 'OB2IMMEDFM': '1'}
    assert result['diff']['before'] == ''
    assert result['diff']['after_header'] == '%s (from %s)' % (home / '.omnirc', home / '.omnirc.TMPL')
    assert sorted(os.listdir(str(home))) == ['.omnirc.TMPL']

    # real run: the template's lines, each active key right after its commented example
    failed, result = run_module(dp_omnirc.main, args, monkeypatch)
    assert not failed and result['changed'] is True and result['created'] is True
    lines = (home / '.omnirc').read_text().splitlines()
    assert [line for line in lines if line not in ('OB2FORCESCSI=WFM', 'OB2IMMEDFM=1')] == template.splitlines()
    assert lines[lines.index('#OB2IMMEDFM=0') + 1] == 'OB2IMMEDFM=1'
    assert lines[lines.index('#OB2FORCESCSI=WFM') + 1] == 'OB2FORCESCSI=WFM'
    assert 'backup_file' not in result  # nothing existed to back up

    # check mode and real run again: nothing to change, no backup made
    for check_mode in (True, False):
        failed, result = run_module(dp_omnirc.main, args, monkeypatch, check_mode=check_mode)
        assert not failed
        assert (result['changed'], result['created'], result['changes']) == (False, False, [])
    assert sorted(os.listdir(str(home))) == ['.omnirc', '.omnirc.TMPL']


def test_dp_omnirc_corrects_forcescsi_1_to_wfm_ladder(tmp_path, monkeypatch):
    home = _omni_home(tmp_path)
    path = home / '.omnirc'
    shutil.copy(FORCESCSI_1, str(path))
    with open(FORCESCSI_1) as handle:
        before = handle.read()
    args = {'path': str(path), 'keys': {'OB2FORCESCSI': 'WFM', 'OB2IMMEDFM': 1}}

    # check mode: the one line it would correct, in the diff; the file stays as it was, no backup
    failed, result = run_module(dp_omnirc.main, args, monkeypatch, check_mode=True, diff=True)
    assert not failed, result
    assert (result['changed'], result['created']) == (True, False)
    assert result['changes'] == [{'key': 'OB2FORCESCSI', 'before': '1', 'after': 'WFM'}]
    assert result['diff']['before'] == before
    assert result['diff']['after'] == before.replace('\nOB2FORCESCSI=1\n', '\nOB2FORCESCSI=WFM\n')
    assert path.read_text() == before
    assert sorted(os.listdir(str(home))) == ['.omnirc', '.omnirc.TMPL']

    # real run: corrected in place, the previous file kept as a backup
    failed, result = run_module(dp_omnirc.main, args, monkeypatch)
    assert not failed and result['changed'] is True, result
    assert path.read_text() == before.replace('\nOB2FORCESCSI=1\n', '\nOB2FORCESCSI=WFM\n')
    assert result['keys'] == {'OB2FORCESCSI': 'WFM', 'OB2IMMEDFM': '1', 'OB2DEVSLEEP': '2000'}
    with open(result['backup_file']) as handle:
        assert handle.read() == before

    # check mode and real run again: nothing to change, no second backup
    for check_mode in (True, False):
        failed, result = run_module(dp_omnirc.main, args, monkeypatch, check_mode=check_mode)
        assert not failed
        assert (result['changed'], result['changes']) == (False, [])
        assert 'backup_file' not in result
    assert len(os.listdir(str(home))) == 3


def test_dp_omnirc_change_keeps_a_backup_and_removes_a_key(tmp_path, monkeypatch):
    home = _omni_home(tmp_path)
    path = home / '.omnirc'
    path.write_text('# local\nOB2DEVSLEEP=2000\nOB2OLDKEY=1\n')
    failed, result = run_module(dp_omnirc.main, {'path': str(path), 'keys': {'OB2DEVSLEEP': 500, 'OB2OLDKEY': None}},
                                monkeypatch)
    assert not failed, result
    assert result['changes'] == [{'key': 'OB2DEVSLEEP', 'before': '2000', 'after': '500'},
                                 {'key': 'OB2OLDKEY', 'before': '1', 'after': None}]
    assert path.read_text() == '# local\nOB2DEVSLEEP=500\n'
    with open(result['backup_file']) as handle:
        assert handle.read() == '# local\nOB2DEVSLEEP=2000\nOB2OLDKEY=1\n'


def test_dp_omnirc_without_file_or_template_says_what_to_do(tmp_path, monkeypatch):
    failed, result = run_module(dp_omnirc.main, {'path': str(tmp_path / '.omnirc'), 'keys': {'OB2IMMEDFM': 1}},
                                monkeypatch)
    assert failed
    want = 'Neither %s nor its template %s exists' % (tmp_path / '.omnirc', tmp_path / '.omnirc.TMPL')
    assert result['msg'].startswith(want)
    assert not os.listdir(str(tmp_path))


def test_dp_omnirc_refuses_a_key_not_in_data_protector_format(tmp_path, monkeypatch):
    home = _omni_home(tmp_path)
    failed, result = run_module(dp_omnirc.main, {'path': str(home / '.omnirc'), 'keys': {'ob2immedfm': 1}},
                                monkeypatch)
    assert failed and 'ob2immedfm' in result['msg']
    assert sorted(os.listdir(str(home))) == ['.omnirc.TMPL']
