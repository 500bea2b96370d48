# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""tape_drive_lock's main(): two runs on one drive, the second busy; release; check mode; bad input.

The drive's sysfs is left out (no st device here): the drive is at SCSI address 2:0:1:0 and nobody else has
its nodes open; test_drive_lock.py reads both from a sysfs tree and /proc."""

from __future__ import annotations

import os

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils import _records
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _drive_lock
from ansible_collections.tapeops.qualify.plugins.modules import tape_drive_lock

from module_harness import run_module


@pytest.fixture
def drive(monkeypatch):
    monkeypatch.setattr(_drive_lock, 'drive_address', lambda device, *a, **k: '2:0:1:0' if device == '/dev/nst0'
                        else None)
    monkeypatch.setattr(_drive_lock, 'drive_nodes', lambda address, *a, **k: {})


def args(tmp_path, run_id, pid, **more):
    return dict({'devices': ['/dev/nst0'], 'run_id': run_id, 'lock_dir': str(tmp_path / 'locks'),
                 'controller': 'ctl-a', 'controller_pid': pid, 'lease_seconds': 600}, **more)


def test_a_second_run_on_the_drive_is_told_it_is_busy_and_the_first_releases(tmp_path, monkeypatch, drive):
    failed, first = run_module(tape_drive_lock.main, args(tmp_path, 'run-1', 100), monkeypatch)
    assert not failed and first['changed'] is True and first['busy'] == []
    [lock] = first['locks']
    assert set(lock) == set(_records.DriveLock.__dataclass_fields__)
    assert (lock['state'], lock['address']) == ('taken', '2:0:1:0')
    assert os.path.exists(lock['lease_path'])
    failed, second = run_module(tape_drive_lock.main, args(tmp_path, 'run-2', 200), monkeypatch)
    assert not failed and second['changed'] is False and second['busy'] == ['/dev/nst0']
    assert second['locks'][0]['reason'] == 'locked' and second['locks'][0]['holder']['controller_pid'] == 100
    failed, done = run_module(tape_drive_lock.main, args(tmp_path, 'run-1', 100, state='absent'), monkeypatch)
    assert not failed and done['locks'][0]['state'] == 'released' and not os.path.exists(lock['lease_path'])
    failed, third = run_module(tape_drive_lock.main, args(tmp_path, 'run-2', 200), monkeypatch)
    assert third['locks'][0]['state'] == 'taken'


def test_check_mode_tells_and_writes_nothing(tmp_path, monkeypatch, drive):
    failed, result = run_module(tape_drive_lock.main, args(tmp_path, 'run-1', 100), monkeypatch, check_mode=True)
    assert not failed and result['changed'] is True and result['locks'][0]['state'] == 'taken'
    assert not os.path.exists(result['locks'][0]['lease_path'])


def test_a_lease_of_no_time_is_refused(tmp_path, monkeypatch, drive):
    failed, result = run_module(tape_drive_lock.main, args(tmp_path, 'run-1', 100, lease_seconds=0), monkeypatch)
    assert failed and result['msg'] == 'lease_seconds must be a positive number of seconds, got 0.'


def test_an_unwritable_lock_directory_fails_with_what_to_do(tmp_path, monkeypatch, drive):
    (tmp_path / 'locks').write_text('a file')
    failed, result = run_module(tape_drive_lock.main, args(tmp_path, 'run-1', 100), monkeypatch)
    assert failed and 'Cannot create the drive lock directory' in result['msg'] and 'become: true' in result['msg']
    assert 'exception' not in result
