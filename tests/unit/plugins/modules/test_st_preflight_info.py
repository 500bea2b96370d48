# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""st_preflight_info through its main() on a recorded sysfs: lab-ma2's, as `grep .` printed it.

The sysfs tree is laid out under tmp_path from tests/unit/fixtures/sysfs_st_tuning (recorded on lab guest lab-ma2:
st driver 20160209, fixed_buffer_size 32768, max_sg_segs 256, try_direct_io 1, host0 sg_tablesize 4096, the HP
Ultrium 6-SCSI at nst0 with sg1); the drive's device directory sits under host0 as the kernel lays it out (the
capture does not name the H:C:T:L: 0:0:1:0 is what the recorded lab run 20261124-quick-v2 gives lab-ma2's drive).
The module's SYS_ROOT points at it, and its MEMINFO at the CI machine's /proc/meminfo
(tests/unit/fixtures/proc_meminfo, MemTotal 24684092 kB). No sg node exists on the test machine, so the BLKSECTGET
ioctl is answered with the value that recorded lab run measured on lab-ma2 (1310720 bytes) where a test needs one.
"""

from __future__ import annotations

import json
import os

import pytest
import yaml

from ansible_collections.tapeops.qualify.plugins.modules import st_preflight_info

from module_harness import FIXTURES, fixture_text, run_module

GREP = 'sysfs_st_tuning/grep_sysfs__HP-Ultrium6-SCSI-35GD-lab-ma2-tuned__1.txt'
LAB_MA2 = os.path.join(FIXTURES, 'lab_runs', '20261124-quick-v2', 'lab-ma2.json')
PAGE = os.sysconf('SC_PAGE_SIZE')
MEMINFO = os.path.join(FIXTURES, 'proc_meminfo', 'debian12-6.18-2cpu.txt')


def lab_ma2_sysfs(root):
    device = root / 'devices' / 'platform' / 'host0' / 'session1' / 'target0:0:1' / '0:0:1:0'
    (device / 'scsi_generic' / 'sg1').mkdir(parents=True)
    (device / 'type').write_text('1\n')
    for line in fixture_text(GREP).splitlines():
        path, value = line.split(':', 1)
        if '/device/' in path:
            target = device / path.split('/device/', 1)[1]
        else:
            target = root / path
            if path.startswith('class/scsi_tape/') and not (target.parent / 'device').exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                (target.parent / 'device').symlink_to(device)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(value + '\n')
    return root


@pytest.fixture
def lab_ma2(tmp_path, monkeypatch):
    root = lab_ma2_sysfs(tmp_path / 'sys')
    monkeypatch.setattr(st_preflight_info, 'SYS_ROOT', str(root))
    monkeypatch.setattr(st_preflight_info, 'MEMINFO', MEMINFO)
    return root


def recorded_hba(monkeypatch):
    with open(LAB_MA2) as handle:
        measured = json.load(handle)['preflight']['hba_max_transfer_bytes']
    assert measured == 1310720
    monkeypatch.setattr(st_preflight_info, 'hba_max_transfer', lambda sg: measured if sg == '/dev/sg1' else None)
    return measured


NOT_SAS_OR_FC = {'transport': None, 'host': 'host0', 'rate': None, 'lanes': None, 'usable_mb_s': None,
                 'encoding': None, 'hops': [], 'text': 'not a SAS or FC link (host0 has no sas_phy or fc_host in sysfs)'}


@pytest.mark.parametrize('check_mode', [False, True], ids=['run', 'check_mode'])
def test_lab_ma2_preflight_without_a_block_size(monkeypatch, lab_ma2, check_mode):
    failed, result = run_module(st_preflight_info.main, {}, monkeypatch, check_mode=check_mode)
    assert not failed, result
    assert set(result) - {'changed'} == set(yaml.safe_load(st_preflight_info.RETURN))
    # the capture has nst0 and its mode nodes nst0a, nst0l, nst0m: one drive
    assert sorted(os.listdir(lab_ma2 / 'class' / 'scsi_tape')) == ['nst0', 'nst0a', 'nst0l', 'nst0m']
    assert result == {
        'changed': False,
        'kernel': os.uname()[2],
        'memory_total_mb': 24105,            # 24684092 kB // 1024, as Ansible's memtotal_mb
        'vcpus': os.cpu_count(),
        'mtweofi_supported': True,
        'mtweofi_basis': 'st driver version 20160209',
        'st_driver_version': '20160209',
        'st_driver': {'loaded': True, 'fixed_buffer_size': 32768, 'max_sg_segs': 256, 'try_direct_io': True},
        'hba_max_transfer_bytes': None,      # no /dev/sg1 here
        'block_size_fits': None,
        'drives': [{'device': '/dev/nst0', 'sg': '/dev/sg1', 'host': 'host0', 'hba_max_transfer_bytes': None,
                    'host_sg_tablesize': 4096, 'limited_by': None, 'direct_io_max_bytes': 256 * PAGE,
                    'direct_io_limited_by': 'st max_sg_segs', 'link': NOT_SAS_OR_FC}],
    }


@pytest.mark.parametrize('text', [
    '',                                                   # empty
    'MemTotal:\n',                                        # truncated after the key
    'MemTotal:       many kB\n',                          # not a number
    'MemFree:        19030496 kB\n',                      # no MemTotal line
    b'MemTotal:       2468\xff4092 kB\n'.decode('latin-1'),  # a stray byte
])
def test_an_unreadable_memory_total_is_null_not_an_error(monkeypatch, lab_ma2, tmp_path, text):
    meminfo = tmp_path / 'meminfo'
    meminfo.write_bytes(text.encode('latin-1'))
    monkeypatch.setattr(st_preflight_info, 'MEMINFO', str(meminfo))
    failed, result = run_module(st_preflight_info.main, {}, monkeypatch)
    assert not failed, result
    assert result['memory_total_mb'] is None
    assert result['drives'][0]['device'] == '/dev/nst0'


def test_no_meminfo_is_null_not_an_error(monkeypatch, lab_ma2, tmp_path):
    monkeypatch.setattr(st_preflight_info, 'MEMINFO', str(tmp_path / 'absent'))
    failed, result = run_module(st_preflight_info.main, {}, monkeypatch)
    assert not failed and result['memory_total_mb'] is None, result


@pytest.mark.parametrize('block,fits,message', [
    (1048576, True, 'A 1048576-byte block fits the HBA path (max 1310720 bytes).'),
    (2097152, False, 'A 2097152-byte block does not fit the HBA path: the HBA driver caps one command at 1310720 '
                     'bytes (its max_sectors). Use 1310720 or less, or raise max_sectors in the HBA driver (module '
                     'parameter or udev rule) if the HBA supports it.'),
])
def test_a_block_size_is_judged_against_the_recorded_hba_limit(monkeypatch, lab_ma2, block, fits, message):
    if PAGE != 4096:
        pytest.skip('direct I/O limits here are worked out for 4 KiB pages')
    hba = recorded_hba(monkeypatch)
    failed, result = run_module(st_preflight_info.main, {'block_size': block}, monkeypatch)
    assert not failed, result
    (drive,) = result['drives']
    assert (drive['hba_max_transfer_bytes'], drive['limited_by']) == (hba, 'HBA max_sectors')
    assert (drive['fits'], drive['message']) == (fits, message)
    assert (result['hba_max_transfer_bytes'], result['block_size_fits']) == (hba, fits)


def test_a_block_above_direct_io_fits_with_a_copy_and_says_what_to_raise(monkeypatch, lab_ma2):
    if PAGE != 4096:
        pytest.skip('direct I/O limits here are worked out for 4 KiB pages')
    recorded_hba(monkeypatch)
    failed, result = run_module(st_preflight_info.main, {'block_size': 1310720}, monkeypatch)
    assert not failed
    (drive,) = result['drives']
    assert drive['fits'] is True and result['block_size_fits'] is True
    assert drive['message'] == ('A 1310720-byte block fits the HBA path but exceeds direct I/O (1048576 bytes = st '
                                'max_sg_segs x 4096-byte pages): st will copy through its driver buffer. Raise st '
                                'max_sg_segs (module parameter, e.g. max_sg_segs=321) to keep direct I/O.')


def test_an_unknown_hba_limit_leaves_the_fleet_answer_unknown(monkeypatch, lab_ma2):
    failed, result = run_module(st_preflight_info.main, {'block_size': 65536}, monkeypatch)
    assert not failed
    (drive,) = result['drives']
    assert drive['fits'] is None
    assert drive['message'] == 'A 65536-byte block fits the HBA path (maximum unknown: no sg node readable).'
    assert result['block_size_fits'] is None


@pytest.mark.parametrize('devices,found', [(['/dev/nst0'], ['/dev/nst0']), (['nst0'], ['/dev/nst0']),
                                           (['/dev/nst1'], [])])
def test_only_the_devices_asked_for(monkeypatch, lab_ma2, devices, found):
    failed, result = run_module(st_preflight_info.main, {'devices': devices}, monkeypatch)
    assert not failed and [d['device'] for d in result['drives']] == found


def test_a_host_without_st_says_unknown_not_no(tmp_path, monkeypatch):
    monkeypatch.setattr(st_preflight_info, 'SYS_ROOT', str(tmp_path / 'sys'))
    failed, result = run_module(st_preflight_info.main, {'block_size': 1048576}, monkeypatch)
    assert not failed
    assert result['drives'] == [] and result['block_size_fits'] is None and result['hba_max_transfer_bytes'] is None
    assert result['st_driver'] == {'loaded': False, 'fixed_buffer_size': None, 'max_sg_segs': None,
                                   'try_direct_io': None}
    assert (result['mtweofi_supported'], result['st_driver_version']) == (None, None)
    assert result['mtweofi_basis'] == 'unknown: the st driver exports no version (is the st module loaded?)'


@pytest.mark.parametrize('block', [0, -4096])
def test_block_size_must_be_positive(monkeypatch, lab_ma2, block):
    failed, result = run_module(st_preflight_info.main, {'block_size': block}, monkeypatch)
    assert failed and result['msg'] == 'block_size must be a positive number of bytes, for example 1048576.'
