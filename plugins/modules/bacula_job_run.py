#!/usr/bin/python
# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: bacula_job_run
short_description: Run one Bacula or Bareos backup job through bconsole, wait for its end and report it
version_added: 0.1.0
description:
  - Runs C(bconsole) on the managed host (the Director's host, or any host whose bconsole configuration reaches the
    Director), one session per command - C(run job="JOB" level=LEVEL yes), then C(wait jobid=N) - and reads the
    job back from the catalog with C(llist jobid=N) and C(list joblog jobid=N).
  - Returns the job's id, status (Bacula's JobStatus, C(T) = OK), level, files, bytes, start and end, Bacula's
    C(Rate) over the whole job, and the storage daemon's data-phase rate where the job's log gives it (its
    C(Elapsed time=..., Transfer rate=...) line) - the rate to compare with a drive's, since C(Rate) also spans
    the mount, the label read, the space to the end of data, the closing file mark and the attribute despooling.
  - With O(slot) it first mounts that slot's cartridge (C(mount storage="S" slot=N drive=D)), so the load and the
    label read happen before the job, not in it.
  - A job that ends with a status other than C(T) or C(W) fails the task with Bacula's own messages (the log's
    C(Error:) and C(Fatal error:) lines and its C(Termination)); a job that does not end within O(timeout) is
    cancelled (O(cancel_on_timeout)) and fails the task.
  - The job writes what the Director's configuration says, to the volumes the Director picks; this module only
    starts it. Parsed output was recorded with Debian's bacula-console 9.6.7 and bacula-dir 9.6.7; Bareos's
    bconsole takes the same commands, its output has not been recorded here yet.
author:
  - tapeops.qualify contributors (@tapeops)
extends_documentation_fragment:
  - tapeops.qualify._attributes
attributes:
  check_mode:
    support: full
    details:
      - In check mode nothing is run, bconsole included; the module checks its input, finds bconsole and its
        configuration file, and returns the commands it would send (RV(commands)).
  diff_mode:
    support: none
  idempotent:
    description: When run twice with the same parameters, the second run changes nothing.
    support: N/A
    details:
      - Each run starts a new backup job (C(changed=true) whenever a job was queued).
  async:
    description: Supports being used with the C(async) keyword.
    support: full
    details:
      - A job longer than the connection allows is run with C(async) and C(poll); O(timeout) still bounds it.
requirements:
  - bconsole (Debian/Ubuntu bacula-console, Bareos bareos-bconsole) on the managed host, with a configuration that
    reaches the Director.
options:
  job:
    description: The Job resource to run, as the Director's configuration names it.
    type: str
    required: true
  level:
    description: The backup level.
    type: str
    choices: [Full, Incremental, Differential]
    default: Full
  config:
    description: bconsole's configuration file (C(bconsole -c)); bconsole's own default when not given.
    type: path
  bconsole:
    description: The bconsole program; found on C(PATH), then C(/usr/sbin) and C(/sbin), when not given.
    type: path
  storage:
    description: The Director's Storage resource to mount O(slot) on. Required with O(slot).
    type: str
  slot:
    description: The changer slot to mount before the job (C(mount storage=... slot=... drive=...)); no mount when not given.
    type: int
  drive:
    description: The drive index of the autochanger to mount O(slot) in.
    type: int
    default: 0
  timeout:
    description: Seconds the job may take, from its start to its end.
    type: int
    default: 3600
  cancel_on_timeout:
    description: Cancel the job (C(cancel jobid=N yes)) when it has not ended within O(timeout).
    type: bool
    default: true
'''

EXAMPLES = r'''
- name: One Full backup with the Director's own bconsole configuration
  tapeops.qualify.bacula_job_run:
    job: BackupClient1
  register: backup

- name: The lab's job (lab/tapelab up --bacula), its first cartridge mounted first
  tapeops.qualify.bacula_job_run:
    job: "{{ tapeops_bacula.job }}"
    config: "{{ tapeops_bacula.bconsole_config }}"
    storage: "{{ tapeops_bacula.storage }}"
    slot: "{{ tapeops_bacula.slots[0] }}"
    timeout: 900
  register: backup

- name: The storage daemon's data-phase rate
  ansible.builtin.debug:
    msg: "{{ backup.bytes }} bytes in {{ backup.data_seconds }} s: {{ backup.data_mb_s }} MB/s"
'''

RETURN = r'''
jobid:
  description: The job's id (C(JobId)).
  returned: when the job was queued
  type: int
  sample: 1
job:
  description: The job's unique name (C(Job)).
  returned: when the job was queued
  type: str
  sample: lab-ma2-backup.2026-11-26_23.41.27_07
name:
  description: The Job resource's name.
  returned: when the job was queued
  type: str
  sample: lab-ma2-backup
client:
  description: The job's client (C(ClientName)).
  returned: when the job was queued
  type: str
fileset:
  description: The job's FileSet.
  returned: when the job was queued
  type: str
pool:
  description: The job's pool (C(PoolName)).
  returned: when the job was queued
  type: str
status:
  description: Bacula's JobStatus letter - C(T) OK, C(W) OK with warnings, C(E), C(e), C(f) errors, C(A) canceled, ...
  returned: when the job was queued
  type: str
  sample: T
status_text:
  description: The status in words.
  returned: when the job was queued
  type: str
  sample: OK
level:
  description: The job's level in words (C(Full), C(Incremental), C(Differential), ...).
  returned: when the job was queued
  type: str
  sample: Full
files:
  description: Files the job saved (C(JobFiles)).
  returned: when the job was queued
  type: int
  sample: 1252
bytes:
  description: Bytes the job saved, as the File daemon sent them (C(JobBytes)).
  returned: when the job was queued
  type: int
  sample: 230450176
error_count:
  description: The job's error count (C(JobErrors)).
  returned: when the job was queued
  type: int
start_time:
  description: The job's start, as the catalog holds it (C(YYYY-MM-DD HH:MM:SS), the Director's local time).
  returned: when the job was queued
  type: str
  sample: "2026-11-26 23:41:29"
end_time:
  description: The job's end, as the catalog holds it.
  returned: when the job was queued
  type: str
  sample: "2026-11-26 23:41:52"
elapsed_seconds:
  description: Seconds from start to end (whole seconds, as Bacula keeps them).
  returned: when the job was queued
  type: int
  sample: 23
rate_mb_s:
  description: Bacula's C(Rate) of the job report (the whole job), decimal MB/s; null when the log has no report.
  returned: when the job was queued
  type: float
  sample: 10.0196
data_seconds:
  description: The storage daemon's data phase, whole seconds; null when the log has no data-phase line.
  returned: when the job was queued
  type: int
  sample: 16
data_mb_s:
  description: The storage daemon's data-phase transfer rate (its bytes over RV(data_seconds)), decimal MB/s, as Bacula printed it (four digits).
  returned: when the job was queued
  type: float
  sample: 14.41
sd_bytes:
  description: Bytes the storage daemon wrote (C(SD Bytes Written)), with Bacula's record headers and attributes.
  returned: when the job was queued
  type: int
  sample: 230596121
volume_bytes:
  description: The last volume's byte count after the job (C(Last Volume Bytes)).
  returned: when the job was queued
  type: int
  sample: 230712320
volumes:
  description: The volumes the job wrote (C(Volume name(s))).
  returned: when the job was queued
  type: list
  elements: str
  sample: [MA2002L6]
termination:
  description: The report's C(Termination) line.
  returned: when the job was queued
  type: str
  sample: Backup OK
messages:
  description: The log's error and warning messages, each as Bacula wrote it, after the daemon's name and a colon.
  returned: when the job was queued
  type: list
  elements: str
commands:
  description: The bconsole commands sent, in order (in check mode, those it would send first).
  returned: always
  type: list
  elements: str
  sample: ["mount storage=\"Library\" slot=2 drive=0", "run job=\"lab-ma2-backup\" level=Full yes", "wait jobid=1"]
mount:
  description: What the mount said (C(ok), C(volume), C(lines)); null without O(slot).
  returned: when the module ran
  type: dict
reason:
  description: >-
    Machine-readable reason of a failure - C(bad_input), C(director_unreachable), C(mount_failed),
    C(job_not_queued), C(timeout), C(job_failed) or C(bconsole_output).
  returned: on failure
  type: str
  sample: job_failed
'''

import os
import traceback

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError
from ansible_collections.tapeops.qualify.plugins.module_utils._records import BaculaJob
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _bconsole, _cli


def main():
    module = AnsibleModule(
        argument_spec=dict(
            job=dict(type='str', required=True),
            level=dict(type='str', default='Full', choices=list(_bconsole.RUN_LEVELS)),
            config=dict(type='path'),
            bconsole=dict(type='path'),
            storage=dict(type='str'),
            slot=dict(type='int'),
            drive=dict(type='int', default=0),
            timeout=dict(type='int', default=3600),
            cancel_on_timeout=dict(type='bool', default=True),
        ),
        required_by={'slot': 'storage'},
        supports_check_mode=True,
    )
    p = module.params
    mount = {'storage': p['storage'], 'slot': p['slot'], 'drive': p['drive']} if p['slot'] is not None else None
    try:
        if p['timeout'] <= 0:
            raise ValueError('timeout must be a positive number of seconds, got %d.' % p['timeout'])
        first = ([_bconsole.mount_command(p['storage'], p['slot'], p['drive'])] if mount else []) + [
            _bconsole.run_command(p['job'], p['level'])]
    except ValueError as exc:
        module.fail_json(msg=str(exc), reason='bad_input', commands=[])
    if p['config'] and not os.access(p['config'], os.R_OK):
        module.fail_json(msg='The bconsole configuration %s cannot be read (%s): give the file bconsole reaches the '
                             'Director with (config).' % (p['config'], 'it does not exist' if not os.path.exists(
                                 p['config']) else 'permission denied'), reason='bad_input', commands=first)
    try:
        bconsole = p['bconsole'] or _cli.find_tool('bconsole')
    except _cli.CliError as exc:
        module.fail_json(commands=first, **exc.as_fail_kwargs())
    if module.check_mode:
        module.exit_json(changed=False, commands=first, mount=None,
                         msg='Check mode: would run %s with: %s, then wait for the job and read it back.' % (
                             ' '.join(_bconsole.Console(bconsole, None, p['config']).argv()), '; '.join(first)))

    console = _bconsole.Console(bconsole, _cli.run, p['config'])
    try:
        record, mounted = _bconsole.run_job(console, p['job'], p['level'], mount=mount, timeout=p['timeout'],
                                            cancel_on_timeout=p['cancel_on_timeout'], timeout_error=_cli.CliError)
    except _bconsole.BaculaJobError as exc:
        result = BaculaJob.from_dict(exc.record).to_dict() if exc.record else {}
        evidence = dict((k, v) for k, v in exc.evidence.items() if v is not None)
        module.fail_json(changed='jobid' in exc.record, commands=console.sent,
                         **dict(result, **dict(evidence, **exc.refusal())))
    except TapeopsError as exc:     # bconsole could not run, or a command other than the wait did not end
        kwargs = exc.as_fail_kwargs() if isinstance(exc, _cli.CliError) else exc.refusal()
        module.fail_json(commands=console.sent, changed=any(c.startswith('run ') for c in console.sent), **kwargs)
    except Exception as exc:  # pylint: disable=broad-except
        module.fail_json(msg='Running Bacula job %s stopped on an unexpected error: %s. Please report it with the '
                             'traceback.' % (p['job'], exc), exception=traceback.format_exc(),
                         reason='internal_error', commands=console.sent)
    job = BaculaJob.from_dict(record)
    for message in job.messages or []:
        module.warn('Bacula job %s: %s' % (job.jobid, message))
    # the BaculaJob record (module_utils/_records.py), the structure RETURN documents
    module.exit_json(changed=True, commands=console.sent, mount=mounted, **job.to_dict())


if __name__ == '__main__':
    main()
