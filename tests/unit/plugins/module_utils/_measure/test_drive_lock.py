# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One run per drive: the lease files (_measure/_drive_lock.py), the drive's users, and the action plugin's
stale-controller rule (plugins/action/tape_drive_lock.py)."""

from __future__ import annotations

import json
import os
import subprocess
import types

import pytest

from ansible_collections.tapeops.qualify.plugins.action import tape_drive_lock as action
from ansible_collections.tapeops.qualify.plugins.module_utils import _records
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _drive_lock

HCTL = '2:0:1:0'
ST_RDEV = os.makedev(9, 128)


class Clock:
    def __init__(self, now=1_790_000_000.0):
        self.now = now

    def __call__(self):
        return self.now


def run(run_id, pid=4242, controller='ctl-a'):
    return {'run_id': run_id, 'controller': controller, 'controller_pid': pid}


@pytest.fixture
def store(tmp_path):
    return _drive_lock.LeaseStore(str(tmp_path / 'locks'), clock=Clock())


def fake_sys(root, nodes=((('scsi_tape', 'nst0'), '9:128'), (('scsi_generic', 'sg1'), '21:1'))):
    """The sysfs of one drive at HCTL: its nst0 and sg1 nodes, and /sys/dev/char/9:128 pointing at nst0."""
    device = root / 'devices' / 'host2' / HCTL
    device.mkdir(parents=True)
    for (cls, name), dev in nodes:
        node = root / 'class' / cls / name
        node.mkdir(parents=True)
        (node / 'dev').write_text(dev + '\n')
        (node / 'device').symlink_to(device)
    (root / 'dev' / 'char').mkdir(parents=True)
    (root / 'dev' / 'char' / '9:128').symlink_to(root / 'class' / 'scsi_tape' / 'nst0')
    return str(root)


def st_stat(path):
    if path != '/dev/nst0':
        raise FileNotFoundError(path)
    return types.SimpleNamespace(st_rdev=ST_RDEV)


def test_a_lease_is_taken_written_and_refused_to_a_second_run(store):
    first = store.acquire(HCTL, run('run-1'), 600, device='/dev/nst0')
    assert first['state'] == 'taken' and first['replaced'] is None
    with open(store.path(HCTL), encoding='utf-8') as handle:
        lease = json.load(handle)
    assert (lease['run_id'], lease['controller'], lease['controller_pid']) == ('run-1', 'ctl-a', 4242)
    assert lease['expires_epoch'] == store.clock() + 600 and lease['started'].endswith('+00:00')
    second = store.acquire(HCTL, run('run-2', pid=5151), 600)
    assert second['state'] == 'busy' and second['holder']['run_id'] == 'run-1'
    # the refused run changed nothing
    with open(store.path(HCTL), encoding='utf-8') as handle:
        assert json.load(handle) == lease


def test_the_same_run_renews_its_lease_and_keeps_its_start(store):
    store.acquire(HCTL, run('run-1'), 600)
    store.clock.now += 500
    renewed = store.acquire(HCTL, run('run-1'), 600)
    assert renewed['state'] == 'renewed'
    assert renewed['holder']['expires_epoch'] == store.clock.now + 600
    assert renewed['holder']['started_epoch'] == store.clock.now - 500
    # the same run id from another controller process is another run
    assert store.acquire(HCTL, run('run-1', pid=9999), 600)['state'] == 'busy'


def test_an_expired_lease_is_stale_and_taken_over(store):
    store.acquire(HCTL, run('run-1'), 600)
    store.clock.now += 599
    assert store.acquire(HCTL, run('run-2'), 600)['state'] == 'busy'
    store.clock.now += 1
    taken = store.acquire(HCTL, run('run-2'), 600)
    assert taken['state'] == 'taken'
    assert taken['replaced']['run_id'] == 'run-1' and taken['replaced']['stale'] == 'expired'


def test_a_lease_whose_controller_process_is_gone_is_broken_only_when_named(store):
    store.acquire(HCTL, run('run-1', pid=111), 3600)
    other = {'run_id': 'run-0', 'controller': 'ctl-a', 'controller_pid': 111}
    assert store.acquire(HCTL, run('run-2'), 600, break_holders=[other])['state'] == 'busy'
    gone = {'run_id': 'run-1', 'controller': 'ctl-a', 'controller_pid': 111}
    taken = store.acquire(HCTL, run('run-2'), 600, break_holders=[gone])
    assert taken['state'] == 'taken' and taken['replaced']['stale'] == 'controller_gone'


def test_release_removes_only_the_runs_own_lease(store):
    store.acquire(HCTL, run('run-1'), 600)
    assert store.release(HCTL, run('run-2'))['state'] == 'held_by_other'
    assert os.path.exists(store.path(HCTL))
    assert store.release(HCTL, run('run-1'))['state'] == 'released'
    assert not os.path.exists(store.path(HCTL))
    assert store.release(HCTL, run('run-1'))['state'] == 'absent'
    # released: the next run takes it at once
    assert store.acquire(HCTL, run('run-2'), 600)['state'] == 'taken'


def test_check_mode_reads_and_writes_nothing(store):
    assert store.acquire(HCTL, run('run-1'), 600, check_mode=True)['state'] == 'taken'
    assert not os.path.exists(store.path(HCTL))


def test_an_unreadable_lease_is_stale(store):
    os.makedirs(store.lock_dir)
    with open(store.path(HCTL), 'w', encoding='utf-8') as handle:
        handle.write('{"run_id": "run-1", ')    # cut short (a full /run)
    taken = store.acquire(HCTL, run('run-2'), 600)
    assert taken['state'] == 'taken' and taken['replaced']['stale'] == 'unreadable'


def test_a_lock_directory_that_cannot_be_made_says_what_to_do(tmp_path):
    blocker = tmp_path / 'file'
    blocker.write_text('')
    store = _drive_lock.LeaseStore(str(blocker / 'locks'))
    with pytest.raises(_drive_lock.DriveLockError, match='Cannot create the drive lock directory .* become: true'):
        store.acquire(HCTL, run('run-1'), 600)


def test_the_drive_is_keyed_by_its_scsi_address_and_its_nodes_found_through_sysfs(tmp_path):
    sys_root = fake_sys(tmp_path / 'sys')
    assert _drive_lock.drive_address('/dev/nst0', sys_root, st_stat) == HCTL
    assert _drive_lock.drive_address('/dev/nst9', sys_root, st_stat) is None
    assert _drive_lock.drive_nodes(HCTL, sys_root) == {ST_RDEV: 'nst0', os.makedev(21, 1): 'sg1'}
    assert _drive_lock.lease_name(HCTL) == 'drive-2_0_1_0.json'


def test_users_of_finds_another_process_holding_a_node_and_not_us():
    master, slave = os.openpty()
    try:
        rdev = os.fstat(slave).st_rdev
        child = subprocess.Popen(['sleep', '30'], stdin=slave)
        try:
            users = _drive_lock.users_of({rdev: 'nst0'})
        finally:
            child.kill()
            child.wait()
    finally:
        os.close(master)
        os.close(slave)
    # Only this test's processes are asserted: another process on the machine can hold a terminal of the same
    # number. Ansible's ssh connection starts ssh on a pty and closes its own end; the number is then free again
    # and a new pty gets it, while ssh keeps /dev/pts/N open (seen beside the lab's tests: an ssh in this list).
    assert {'pid': child.pid, 'command': 'sleep', 'node': 'nst0'} in users, users
    assert os.getpid() not in [u['pid'] for u in users], users
    assert not [u for u in _drive_lock.users_of({rdev: 'nst0'}) if u['pid'] in (child.pid, os.getpid())]


def test_lock_drive_takes_refuses_and_releases_with_the_record_the_module_returns(tmp_path, monkeypatch):
    sys_root = fake_sys(tmp_path / 'sys')
    store = _drive_lock.LeaseStore(str(tmp_path / 'locks'), clock=Clock())
    kwargs = dict(sys_root=sys_root, proc_root=str(tmp_path / 'proc'), stat_func=st_stat)
    first = _drive_lock.lock_drive('/dev/nst0', run('run-1'), 600, store, **kwargs)
    assert (first['state'], first['reason'], first['address']) == ('taken', None, HCTL)
    second = _drive_lock.lock_drive('/dev/nst0', run('run-2'), 600, store, **kwargs)
    record = _records.DriveLock.from_dict(second)
    assert record.busy and record.reason == 'locked' and record.holder['run_id'] == 'run-1'
    assert _drive_lock.lock_drive('/dev/nst0', run('run-1'), 600, store, 'absent', **kwargs)['state'] == 'released'
    assert _drive_lock.lock_drive('/dev/nst0', run('run-2'), 600, store, **kwargs)['state'] == 'taken'
    # a node that is no st device is named, not locked
    assert _drive_lock.lock_drive('/dev/sda', run('run-2'), 600, store, **kwargs)['state'] == 'unknown'


def test_a_drive_open_by_a_process_is_busy_and_its_new_lease_given_back(tmp_path, monkeypatch):
    sys_root = fake_sys(tmp_path / 'sys')
    store = _drive_lock.LeaseStore(str(tmp_path / 'locks'), clock=Clock())
    backup = [{'pid': 812, 'command': 'bacula-sd', 'node': 'nst0'}]
    monkeypatch.setattr(_drive_lock, 'users_of', lambda nodes, proc_root: backup if ST_RDEV in nodes else [])
    out = _drive_lock.lock_drive('/dev/nst0', run('run-1'), 600, store, sys_root=sys_root, stat_func=st_stat)
    assert (out['state'], out['reason'], out['users'], out['holder']) == ('busy', 'open', backup, None)
    assert store.read(HCTL) is None


def test_the_action_plugin_breaks_only_a_lease_of_this_controller_whose_process_is_gone():
    done = subprocess.Popen(['true'])
    done.wait()
    lease = {'run_id': 'run-1', 'controller': 'ctl-a', 'controller_pid': done.pid}
    assert action.controller_gone(lease, 'ctl-a') is True
    assert action.controller_gone(dict(lease, controller_pid=os.getpid()), 'ctl-a') is False
    # another controller's process cannot be seen from here: its lease ends at its expiry
    assert action.controller_gone(lease, 'ctl-b') is False
    assert action.controller_gone(dict(lease, controller_pid=None), 'ctl-a') is False


def test_a_drive_found_busy_at_a_renewal_is_busy_for_the_verdict(tmp_path, monkeypatch):
    # The role hands the verdict the first lease and its renewals, in order; the last word per drive wins.
    sys_root = fake_sys(tmp_path / 'sys')
    store = _drive_lock.LeaseStore(str(tmp_path / 'locks'), clock=Clock())
    first = {'changed': True, 'locks': [_drive_lock.lock_drive('/dev/nst0', run('run-1'), 600, store,
                                                               sys_root=sys_root, stat_func=st_stat)]}
    backup = [{'pid': 812, 'command': 'bacula-sd', 'node': 'nst0'}]
    monkeypatch.setattr(_drive_lock, 'users_of', lambda nodes, proc_root: backup if ST_RDEV in nodes else [])
    renewed = {'changed': False, 'locks': [_drive_lock.lock_drive('/dev/nst0', run('run-1'), 600, store,
                                                                  sys_root=sys_root, stat_func=st_stat)]}
    skipped = {'skipped': True, 'changed': False}
    assert not _records.DriveLock.from_results([first, skipped, skipped])['/dev/nst0'].busy
    record = _records.DriveLock.from_results([first, renewed, skipped])['/dev/nst0']
    assert record.busy and record.reason == 'open' and record.users == backup
