#!/usr/bin/python
# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: tape_drive_lock
short_description: Take, renew or release a qualify run's lease on tape drives, and say which are busy
version_added: 0.1.0
description:
  - One qualify run per drive at a time. For each drive in O(devices), takes (or renews) a lease file in
    O(lock_dir) on the managed host, named by the drive's SCSI address (H:C:T:L), holding the run id, the
    controller host, the controller's process id, when it was taken and when it expires; O(state=absent)
    removes the run's own leases.
  - A drive is V(busy) when another run holds an unexpired lease on it (C(reason=locked)) or a process has one
    of its st, nst or sg nodes open (C(reason=open), for example a backup). A busy drive is not an error - the
    verdict (M(tapeops.qualify.qualify_verdict), its O(tapeops.qualify.qualify_verdict#module:locks)) records
    it as BUSY.
  - A lease is stale, and taken over, when it expired, or when it was taken from this controller by a process
    that no longer runs (the action plugin checks the process on the controller). docs/usage.md, "One run per
    drive", gives the rules.
author:
  - tapeops.qualify contributors (@tapeops)
extends_documentation_fragment:
  - tapeops.qualify._attributes
attributes:
  check_mode:
    support: full
    details:
      - In check mode the leases are read and the drives' users listed, and nothing is written; C(changed) says
        whether a real run would take, renew or release a lease.
  diff_mode:
    support: none
  action:
    description: An action plugin adds the controller's host name and process id and retries over a lease its dead process left.
    support: full
  async:
    description: Supports being used with the C(async) keyword.
    support: none
  idempotent:
    description: When run twice with the same parameters, the second run changes nothing.
    support: none
    details:
      - Each run renews the lease, moving its expiry.
options:
  devices:
    description: The drives' non-rewinding st nodes (C(/dev/nst0)), as M(tapeops.qualify.tape_drive_info) lists them.
    type: list
    elements: str
    required: true
  state:
    description: V(present) takes or renews the leases, V(absent) releases this run's leases (others' are kept).
    type: str
    choices: [present, absent]
    default: present
  run_id:
    description: The qualify run's id (the role passes its run directory's name).
    type: str
    required: true
  lease_seconds:
    description: How long the lease holds without a renewal; a run renews it before each long step.
    type: int
    default: 3600
  lock_dir:
    description: Where the lease files are (a tmpfs such as C(/run) empties itself at boot).
    type: path
    default: /run/tapeops-qualify
  controller:
    description: The controller's host name. Set by the action plugin; give it only when calling the module alone.
    type: str
  controller_pid:
    description: The controller's process id. Set by the action plugin.
    type: int
  break_holders:
    description:
      - Leases to treat as stale, each C(run_id), C(controller) and C(controller_pid) as the lease holds them.
        The action plugin passes the holders whose controller process is gone.
    type: list
    elements: dict
    default: []
'''

EXAMPLES = r'''
- name: Take the drive locks for this run
  tapeops.qualify.tape_drive_lock:
    devices: "{{ __qualify_drives.drives | map(attribute='nst') | list }}"
    run_id: "{{ __qualify_run.id }}"
    lease_seconds: 7200
  register: __qualify_locks

- name: Release them
  tapeops.qualify.tape_drive_lock:
    devices: "{{ __qualify_drives.drives | map(attribute='nst') | list }}"
    run_id: "{{ __qualify_run.id }}"
    state: absent
'''

RETURN = r'''
locks:
  description: One entry per drive of O(devices).
  returned: success
  type: list
  elements: dict
  contains:
    device:
      description: The drive's node as given.
      type: str
    address:
      description: Its SCSI address (H:C:T:L), the lease's key; null when the node is not an st device.
      type: str
    state:
      description: >-
        V(taken), V(renewed) (this run's lease moved on), V(busy), V(released), V(absent) (nothing to release),
        V(held_by_other) (release left another run's lease alone), V(unknown) (not an st device).
      type: str
    reason:
      description: Why it is busy - V(locked) (another run's lease) or V(open) (C(users) hold it open).
      type: str
    holder:
      description: The lease in force (the other run's when busy) - run_id, controller, controller_pid, started, expires.
      type: dict
    users:
      description: Processes (other than the module) holding the drive's st, nst or sg nodes open - pid, command, node.
      type: list
      elements: dict
    replaced:
      description: A stale lease taken over, with C(stale) (V(expired), V(controller_gone), V(unreadable)).
      type: dict
    lease_path:
      description: The lease file.
      type: str
busy:
  description: The devices that are busy.
  returned: success
  type: list
  elements: str
  sample: [/dev/nst0]
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.tapeops.qualify.plugins.module_utils import _records
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _drive_lock


def main():
    module = AnsibleModule(
        argument_spec=dict(
            devices=dict(type='list', elements='str', required=True),
            state=dict(type='str', default='present', choices=['present', 'absent']),
            run_id=dict(type='str', required=True),
            lease_seconds=dict(type='int', default=3600),
            lock_dir=dict(type='path', default=_drive_lock.LOCK_DIR),
            controller=dict(type='str'),
            controller_pid=dict(type='int'),
            break_holders=dict(type='list', elements='dict', default=[]),
        ),
        supports_check_mode=True,
    )
    p = module.params
    if p['lease_seconds'] <= 0:
        module.fail_json(msg='lease_seconds must be a positive number of seconds, got %d.' % p['lease_seconds'])
    owner = {'run_id': p['run_id'], 'controller': p['controller'], 'controller_pid': p['controller_pid']}
    store = _drive_lock.LeaseStore(p['lock_dir'])
    locks = []
    try:
        for device in p['devices']:
            locks.append(_drive_lock.lock_drive(device, owner, p['lease_seconds'], store, p['state'],
                                                p['break_holders'], module.check_mode))
    except _drive_lock.DriveLockError as exc:
        module.fail_json(msg=str(exc), locks=locks)
    changed = any(lock['state'] in ('taken', 'renewed', 'released') for lock in locks)
    for lock in locks:
        if lock['replaced']:
            module.warn('%s: took over a stale lease (%s) of run %s from %s.' % (
                lock['device'], lock['replaced'].get('stale'), lock['replaced'].get('run_id'),
                lock['replaced'].get('controller')))
    # each lock is a DriveLock record (module_utils/_records.py)
    # in check mode: what a real run would change (the lease it would take, renew or release), nothing written
    module.exit_json(changed=changed,
                     locks=[_records.DriveLock.from_dict(lock).to_dict() for lock in locks],
                     busy=[lock['device'] for lock in locks if lock['state'] == 'busy'])


if __name__ == '__main__':
    main()
