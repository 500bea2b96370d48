# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""tape_mechanics_benchmark's main() in this process (module_harness.run_module), up to the write gate.

The changer is the TANDBERG StorageLoader of tests/unit/fixtures/mtx/
mtx_status__TANDBERG-StorageLoader-1drive-7slot-LTO5__1.txt (drive 0 empty, A00008L5 in slot 2) and the
drive's status the HP Ultrium 7 of tests/unit/fixtures/mt/mt_status_mtst__HP-Ultrium7-SCSI-G9Q1__2.txt (BOT
ONLINE, file 0): recorded ``mtx`` and ``mt-st`` on PATH (module_harness.recorded_tools) print them for every
call, so the module runs its real runner and parsers. A recorded tool prints the same status after a move,
which is what the changer shows when the cartridge is back where it started (slot 2).

No st device exists here: the write gate sees module_harness.FakeDrive (a /dev/null descriptor whose fstat says
st 9:128, the probe's answers injected) holding data at BOT. Its refusals are tested in test_write_gate_modules;
here the gate refuses the file marks (the cartridge is not in allowed_barcodes) and the run goes on moving,
spacing and rewinding without writing, as on a production cartridge.
"""

from __future__ import annotations

import dataclasses
import os

from ansible_collections.tapeops.qualify.plugins.module_utils import _records
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _drive_model
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_safety as S
from ansible_collections.tapeops.qualify.plugins.modules import tape_mechanics_benchmark

from module_harness import FakeDrive, fake_sys, fit, recorded_tools, run_module

TANDBERG = 'mtx/mtx_status__TANDBERG-StorageLoader-1drive-7slot-LTO5__1.txt'
ULTRIUM7 = 'mt/mt_status_mtst__HP-Ultrium7-SCSI-G9Q1__2.txt'
ARGS = {'device': '/dev/nst0', 'barcode': 'A00008L5', 'changer': '/dev/sg5', 'drive_element': 0, 'repeats': 1,
        'locate_files': 2}
OPS = ('move_to_drive', 'load_ready', 'locate', 'space_eod', 'rewind', 'unload', 'move_to_slot')
FIELDS = set(f.name for f in dataclasses.fields(_records.Mechanics))


def the_host(tmp_path, monkeypatch):
    """Recorded mtx / mt-st, and the write gate on a fake st drive holding data; the drive."""
    recorded_tools(tmp_path, monkeypatch, {'mtx': TANDBERG, 'mt-st': ULTRIUM7})
    drive = FakeDrive(['ONLINE', 'BOT'], b'x' * 65536)  # data at BOT: the probe's read there returns a 64 KiB block
    sys_root = fake_sys(tmp_path / 'sys')

    class Gate(S.WriteGate):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            fit(self, drive, sys_root)
    monkeypatch.setattr(S, 'WriteGate', Gate)
    return drive


def test_check_mode_reads_the_changer_and_returns_the_planned_record(tmp_path, monkeypatch):
    drive = the_host(tmp_path, monkeypatch)
    failed, result = run_module(tape_mechanics_benchmark.main, ARGS, monkeypatch, check_mode=True)
    assert failed is False and result['changed'] is False
    # the record (none of its unset fields), the plan and the drive beside it
    assert set(result) == {'device', 'status', 'error', 'barcode', 'slot', 'plan', 'drive', 'changed'}
    assert result['status'] == 'planned' and result['error'] == 'check mode: nothing was moved or timed'
    assert (result['device'], result['barcode'], result['slot']) == ('/dev/nst0', 'A00008L5', 2)
    plan = result['plan']
    assert plan['start'] == {'where': 'slot', 'slot': 2} and plan['changer'] == '/dev/sg5'
    assert plan['max_bytes_written'] == 2 * 2 * 8 * 10 ** 6
    assert plan['steps'][0] == ('1 times: %s' % '; '.join(
        tape_mechanics_benchmark._mechanics.OPERATION_LABELS[op] for op in OPS))
    assert drive.opens == []        # check mode opens nothing, not even to read
    record = _records.Mechanics.from_result(dict(result, item={'nst': '/dev/nst0'}))
    assert record.to_dict() == dict((k, v) for k, v in result.items() if k not in ('plan', 'drive', 'changed'))


def test_a_cartridge_with_data_is_cycled_and_timed_without_a_file_mark(tmp_path, monkeypatch):
    drive = the_host(tmp_path, monkeypatch)
    failed, result = run_module(tape_mechanics_benchmark.main, ARGS, monkeypatch)
    assert failed is False and result['changed'] is True
    assert result['status'] == 'ok' and result['error'] is None
    assert set(result) - {'plan', 'drive', 'changed'} <= FIELDS
    # the gate read the cartridge (one read-only open) and refused it: nothing was opened for writing
    assert drive.opens == [os.O_RDONLY] and drive.wrote() == []
    assert result['filemarks'] == {
        'written': False, 'refused': True, 'reason': 'media_has_data', 'files': 2, 'file_mb': 8,
        'msg': 'The cartridge A00008L5 holds data (read a 65536-byte block at BOT). Refusing to overwrite it. If it '
               'is scratch, add its barcode to allowed_barcodes or set overwrite=true.'}
    # one cycle: every operation timed once, the cartridge back in slot 2
    assert sorted(result['summary']) == sorted(OPS)
    assert [result['summary'][op]['n'] for op in OPS] == [1] * 7
    assert result['restored'] is True and result['final_location'] == {'where': 'slot', 'element': 2}
    # no drive model known here (no INQUIRY recorded): the times without a rate, so no object sizes
    current = result['forecast']['current']
    assert (current['label'], current['rate_mb_s'], current['rate_basis']) == (None, None, 'unknown')
    assert sorted(current['times_s']) == sorted(OPS) and 'target' not in result['forecast']
    assert result['size_warnings'] == []
    record = _records.Mechanics.from_result(dict(result, failed=False, failed_when_result=False))
    assert record.to_dict() == dict((k, v) for k, v in result.items() if k not in ('plan', 'drive', 'changed'))


def test_a_cartridge_the_changer_does_not_hold_is_refused(tmp_path, monkeypatch):
    the_host(tmp_path, monkeypatch)
    failed, result = run_module(tape_mechanics_benchmark.main, dict(ARGS, barcode='NOTHERE1'), monkeypatch)
    assert failed is True and result['reason'] == 'no_cartridge'
    assert result['msg'].startswith('Cartridge NOTHERE1 is not in the changer /dev/sg5')
    record = _records.Mechanics.from_result(dict(result, failed=False, item={'nst': '/dev/nst0'}))
    assert (record.status, record.reason, record.device) == ('failed', 'no_cartridge', '/dev/nst0')


def test_the_drive_is_forecast_as_its_inventory_entry_names_it_and_the_target_as_target_star(tmp_path, monkeypatch):
    # discovery finds no drive here (no sysfs entry for it), so no INQUIRY: the tapeops_drives entry of nst0 names
    # it (the HP Ultrium 7 whose mt status the recorded mt-st prints), as discovery and the verdict apply it; the
    # target comes from target_*
    the_host(tmp_path, monkeypatch)
    args = dict(ARGS, drive_settings=[{'nst': '/dev/nst1', 'generation': 'LTO-5'},
                                      {'nst': 'nst0', 'generation': 'LTO-7', 'vendor': 'HPE'}],
                target_generation='LTO-9 FH', target_vendor='IBM')
    failed, result = run_module(tape_mechanics_benchmark.main, args, monkeypatch)
    assert failed is False and result['status'] == 'ok'
    current, target = result['forecast']['current'], result['forecast']['target']
    assert (current['label'], current['rate_mb_s'], current['rate_basis']) == (
        'LTO-7', _drive_model.lookup(7, vendor='HPE').native_mb_s, "the drive model's native rate")
    assert (target['label'], target['rate_mb_s']) == ('LTO-9 FH', 400.0)
    # every operation timed: the mount's overhead and the object sizes it sets, for both drives
    assert current['overheads_s']['mount'] is not None and target['overheads_s']['mount'] is not None


def test_a_target_the_drive_model_cannot_read_is_refused_before_anything_moves(tmp_path, monkeypatch):
    drive = the_host(tmp_path, monkeypatch)
    failed, result = run_module(tape_mechanics_benchmark.main, dict(ARGS, target_generation='LTO-11'), monkeypatch)
    assert failed is True and result['reason'] == 'bad_input'
    assert result['msg'].startswith("target_generation: Cannot read an LTO generation from 'LTO-11'.")
    assert drive.opens == []
