# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""One qualify run per drive at a time: a lease per drive on the managed host, and who else holds the drive.

Private to this collection: may change without notice.

Ansible modules live for one task, so no process of ours can hold a lock for
a whole run. The lock is a lease instead (docs/usage.md, "One run per drive"):

- one JSON file per drive in ``LOCK_DIR`` (``/run/tapeops-qualify``, a tmpfs
  emptied at boot), named by the drive's SCSI address (H:C:T:L, which stays the
  drive's while the host runs, whatever nstN the st driver gave it), holding the
  run id, the controller host, the controller's process id, when it was taken
  and when it expires;
- every read-modify-write of a lease happens under an exclusive ``flock`` of
  ``LOCK_DIR/.guard``, so two runs asking at once cannot both win;
- the run that holds a lease renews it (takes it again with its own run id,
  controller and pid) before the write sweep and the mechanics, and releases it on every way out
  of the role (its ``always:``);
- a lease is stale, and taken over, when it expired (a killed controller
  releases nothing: its lease ends by itself), or when the controller that
  holds it is the one asking and its process is gone (the action plugin checks
  the pid on the controller and names the holder in ``break_holders``).

``users_of`` finds the processes that have the drive's st, nst or sg nodes
open (``/proc/<pid>/fd``), matched by device number through sysfs: a backup
running on the drive holds it that way.
"""

from __future__ import annotations

import datetime
import errno
import fcntl
import json
import os
import stat
import tempfile
import time

from ansible_collections.tapeops.qualify.plugins.module_utils._tools._st_sysfs import read_attr as _read

LOCK_DIR = '/run/tapeops-qualify'
SYS_ROOT = '/sys'
PROC_ROOT = '/proc'
GUARD = '.guard'
GUARD_WAIT_S = 10.0
# The fields of a lease file; the three first say whose it is.
OWNER_KEYS = ('run_id', 'controller', 'controller_pid')


class DriveLockError(Exception):
    """The lease cannot be read or written; the message says what to do."""


def _iso(epoch):
    return datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).replace(microsecond=0).isoformat()


def _rdev(text):
    """'9:128' (a sysfs dev file) -> os.makedev(9, 128), None when unreadable."""
    try:
        major, minor = (int(x) for x in str(text).split(':'))
    except (TypeError, ValueError):
        return None
    return os.makedev(major, minor)


def drive_address(device, sys_root=SYS_ROOT, stat_func=os.stat):
    """The drive's SCSI address (H:C:T:L) of an st/nst node, from sysfs; None when it is not an st device."""
    try:
        rdev = stat_func(device).st_rdev
    except OSError:
        return None
    link = os.path.join(sys_root, 'dev', 'char', '%d:%d' % (os.major(rdev), os.minor(rdev)), 'device')
    if not os.path.lexists(link):
        return None
    return os.path.basename(os.path.realpath(link))


def drive_nodes(address, sys_root=SYS_ROOT):
    """{rdev: kernel name} of every st, nst and sg node of the drive at SCSI ``address``."""
    nodes = {}
    for cls in ('scsi_tape', 'scsi_generic'):
        base = os.path.join(sys_root, 'class', cls)
        try:
            names = sorted(os.listdir(base))
        except OSError:
            continue
        for name in names:
            if os.path.basename(os.path.realpath(os.path.join(base, name, 'device'))) != address:
                continue
            rdev = _rdev(_read(os.path.join(base, name, 'dev')))
            if rdev is not None:
                nodes[rdev] = name
    return nodes


def users_of(nodes, proc_root=PROC_ROOT, own_pid=None):
    """[{pid, command, node}] of the processes (other than ``own_pid``) holding one of ``nodes`` open.

    ``nodes``: {rdev: name} (``drive_nodes``). Processes whose descriptors cannot
    be read (another user's, without root) are not seen.
    """
    own_pid = os.getpid() if own_pid is None else own_pid
    out = []
    try:
        pids = sorted(int(p) for p in os.listdir(proc_root) if p.isdigit())
    except OSError:
        return out
    for pid in pids:
        if pid == own_pid:
            continue
        fd_dir = os.path.join(proc_root, str(pid), 'fd')
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        seen = set()
        for fd in fds:
            try:
                info = os.stat(os.path.join(fd_dir, fd))
            except OSError:
                continue
            if stat.S_ISCHR(info.st_mode) and info.st_rdev in nodes and info.st_rdev not in seen:
                seen.add(info.st_rdev)
                out.append({'pid': pid, 'command': _read(os.path.join(proc_root, str(pid), 'comm')),
                            'node': nodes[info.st_rdev]})
    return out


def lease_name(address):
    """The lease file's name for a drive at SCSI ``address`` ('2:0:1:0' -> 'drive-2_0_1_0.json')."""
    return 'drive-%s.json' % str(address).replace(':', '_').replace('/', '_')


def owner_of(lease):
    return tuple((lease or {}).get(k) for k in OWNER_KEYS)


def stale_reason(lease, now, break_holders=()):
    """Why ``lease`` no longer holds the drive ('expired', 'controller_gone'), or None while it does."""
    if not isinstance(lease, dict) or not isinstance(lease.get('expires_epoch'), (int, float)):
        return 'unreadable'
    if lease['expires_epoch'] <= now:
        return 'expired'
    if any(owner_of(lease) == owner_of(holder) for holder in break_holders or ()):
        return 'controller_gone'
    return None


class LeaseStore:
    """The lease files of one host (``lock_dir``); every change under the guard's flock."""

    def __init__(self, lock_dir=LOCK_DIR, clock=time.time, guard_wait_s=GUARD_WAIT_S):
        self.lock_dir = lock_dir
        self.clock = clock
        self.guard_wait_s = guard_wait_s

    def _guard(self):
        try:
            os.makedirs(self.lock_dir, mode=0o755, exist_ok=True)
            fd = os.open(os.path.join(self.lock_dir, GUARD), os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise DriveLockError('Cannot create the drive lock directory %s: %s. Run the role with become: true, '
                                 'or give lock_dir a directory the user may write.'
                                 % (self.lock_dir, exc.strerror))
        deadline = time.monotonic() + self.guard_wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES) or time.monotonic() > deadline:
                    os.close(fd)
                    raise DriveLockError('The drive lock directory %s stayed locked for %.0f s (%s): another task is '
                                         'stuck taking a drive lock there. Retry; if it persists, look for a hung '
                                         'process holding %s.' % (self.lock_dir, self.guard_wait_s, exc.strerror,
                                                                  os.path.join(self.lock_dir, GUARD)))
                time.sleep(0.05)

    def path(self, address):
        return os.path.join(self.lock_dir, lease_name(address))

    def read(self, address):
        """The lease of the drive at ``address`` (a dict), None when there is none; unreadable -> {}."""
        try:
            with open(self.path(address), encoding='utf-8') as handle:
                data = json.load(handle)
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write(self, address, lease):
        fd, tmp = tempfile.mkstemp(prefix='.lease-', dir=self.lock_dir)
        try:
            with os.fdopen(fd, 'w', encoding='utf-8') as handle:
                json.dump(lease, handle, sort_keys=True)
            os.chmod(tmp, 0o644)
            os.replace(tmp, self.path(address))
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    def acquire(self, address, owner, lease_seconds, device=None, break_holders=(), check_mode=False):
        """Take or renew the lease of the drive at ``address`` for ``owner`` ({run_id, controller, controller_pid}).

        Returns {'state': 'taken' | 'renewed' | 'busy', 'holder': the lease now in force (another run's when
        busy), 'replaced': a stale lease taken over with 'stale' saying why, or None}.
        """
        if int(lease_seconds) <= 0:
            raise DriveLockError('lease_seconds must be a positive number of seconds, got %r.' % (lease_seconds,))
        fd = None if check_mode else self._guard()
        try:
            now = self.clock()
            current = self.read(address)
            replaced = None
            mine = current is not None and owner_of(current) == owner_of(owner)
            if current is not None and not mine:
                why = stale_reason(current, now, break_holders)
                if why is None:
                    return {'state': 'busy', 'holder': current, 'replaced': None}
                replaced = dict(current, stale=why)
            lease = dict((k, owner.get(k)) for k in OWNER_KEYS)
            started = current.get('started_epoch') if mine else None
            started = started if isinstance(started, (int, float)) else now
            lease.update(device=device, address=address, started_epoch=started, started=_iso(started),
                         renewed=_iso(now), expires_epoch=now + int(lease_seconds),
                         expires=_iso(now + int(lease_seconds)), lease_seconds=int(lease_seconds))
            if not check_mode:
                self._write(address, lease)
            return {'state': 'renewed' if mine else 'taken', 'holder': lease, 'replaced': replaced}
        finally:
            if fd is not None:
                os.close(fd)

    def release(self, address, owner, check_mode=False):
        """Remove ``owner``'s lease of the drive at ``address``: 'released', 'absent', or 'held_by_other' (kept)."""
        fd = None if check_mode else self._guard()
        try:
            current = self.read(address)
            if current is None:
                return {'state': 'absent', 'holder': None, 'replaced': None}
            if owner_of(current) != owner_of(owner):
                return {'state': 'held_by_other', 'holder': current, 'replaced': None}
            if not check_mode:
                try:
                    os.unlink(self.path(address))
                except FileNotFoundError:
                    pass
            return {'state': 'released', 'holder': current, 'replaced': None}
        finally:
            if fd is not None:
                os.close(fd)


def lock_drive(device, owner, lease_seconds, store, state='present', break_holders=(), check_mode=False,
               sys_root=SYS_ROOT, proc_root=PROC_ROOT, stat_func=os.stat):
    """One drive's lock record (``_records.DriveLock`` fields): take / renew (present) or release (absent).

    A drive is busy when another run holds its lease (reason ``locked``) or a
    process has one of its nodes open (reason ``open``: a backup, a tool); its
    lease is then left as it was. A busy drive is not an error: the verdict
    records it as BUSY.
    """
    address = drive_address(device, sys_root, stat_func)
    out = {'device': device, 'address': address, 'state': None, 'reason': None, 'holder': None, 'users': [],
           'replaced': None, 'lease_path': None}
    if address is None:
        out.update(state='unknown', reason='not_st_device')
        return out
    out['lease_path'] = store.path(address)
    if state == 'absent':
        done = store.release(address, owner, check_mode=check_mode)
    else:
        done = store.acquire(address, owner, lease_seconds, device=device, break_holders=break_holders,
                             check_mode=check_mode)
        out['users'] = users_of(drive_nodes(address, sys_root), proc_root)
        if done['state'] == 'busy':
            out['reason'] = 'locked'
        elif out['users']:
            # held open by someone else: the lease just taken is given back, the drive is not ours to measure
            if done['state'] == 'taken':
                store.release(address, owner, check_mode=check_mode)
                done = dict(done, holder=None)      # no lease holds the drive: the users do
            done = dict(done, state='busy')
            out['reason'] = 'open'
    out.update(state=done['state'], holder=done['holder'], replaced=done['replaced'])
    return out
