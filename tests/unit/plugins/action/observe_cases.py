# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""An observe run's material, from recorded lab windows, as the qualify role's observe entry point hands it over.

- tests/unit/fixtures/observe/: tape_drive_observe's windows the lab recorded (test_observe_lab.py and
  test_observe_bacula_lab.py, since folded into test_qualify.py; tests/unit/plugins/module_utils/test_observed.py
  says how): lab-ma1's dd-like writer from the page cache (STREAMING, no back-hitch), lab-ma3's real Bacula
  9.6.7 job (SHOE-SHINING, 4 back-hitches counted by the drive) with the job's record, and ``IDLE``: the first seconds of lab-ma1's window,
  before its job began (every st counter still), as a window of a drive nobody wrote to.
- tests/unit/fixtures/verdict_args/20261123-quick/: what the lab's tape_drive_info found on each guest and the
  guests' tapeops_drives (the drive's generation and the lab's scaled model as ``model`` overrides), the st
  preflight and the facts.

``observe_args(host, window, ...)`` are qualify_verdict's arguments as roles/qualify/tasks/observe.yml passes them:
each window as the async_status loop returned it (``ansible_job_id``, ``finished``, the loop's ``item`` holding
the start task's result with its own ``item``, the drive).
"""

from __future__ import annotations

import copy
import json
import os

from action_harness import FIXTURES, VERDICT_ARGS

OBSERVE = os.path.join(FIXTURES, 'observe')
RUN = {'id': 'observe-20261127T220000Z', 'mode': 'observe', 'profile': 'observe'}


def load(path):
    with open(path, encoding='utf-8') as handle:
        return json.load(handle)


def recorded(name):
    """A recorded observe case (``observed_job__lab-ma1``, ``observed_bacula_job__lab-ma3``...)."""
    return load(os.path.join(OBSERVE, '%s.json' % name))


def idle_window():
    """The first seconds of lab-ma1's recorded window, before its job wrote anything: an idle drive's window."""
    window = copy.deepcopy(recorded('observed_job__lab-ma1')['window'])
    series = window['series']
    first = next(i for i, nbytes in enumerate(series['write_byte_cnt']) if nbytes)
    for key in series:
        series[key] = series[key][:first]
    window.update(backhitches=0, compression_ratio=None)
    return window


def as_waited(result, nst='/dev/nst0', job_id='400000000001.1234'):
    """``result`` as the observe entry point's async_status wait registers it, one loop item per drive."""
    started = {'ansible_job_id': job_id, 'results_file': '/root/.ansible_async/%s' % job_id, 'started': 1,
               'finished': 0, 'changed': True, 'failed': False, 'item': {'nst': nst}, 'ansible_loop_var': 'item'}
    return dict(result, ansible_job_id=job_id, finished=1, started=1, changed=False, attempts=3,
                results_file=started['results_file'], item=started, ansible_loop_var='item')


def verdict_args(host):
    """What lab run 20261123-quick handed qualify_verdict for ``host`` (its drives, settings, preflight, facts)."""
    return load(os.path.join(VERDICT_ARGS, '%s.json' % host))


def observe_args(host, report_dir, windows, jobs=None, **extra):
    """qualify_verdict's arguments of an observe run on ``host``: ``windows`` as tape_drive_observe returned them."""
    given = verdict_args(host)
    args = {
        'report_dir': report_dir,
        'drives': given['drives'],
        'observed': [as_waited(w) for w in windows],
        'jobs': list(jobs or []),
        'drive_settings': given['drive_settings'],
        'memory_total_mb': given['memory_total_mb'],
        'preflight': given['preflight'],
        'run': dict(RUN),
        'host_facts': given['host_facts'],
    }
    args.update(extra)
    return args


def bacula_job():
    """lab-ma3's Bacula job as bacula_job_run's async_status wait registered it (a loop of one over tapeops_bacula)."""
    job = recorded('observed_bacula_job__lab-ma3')['job']
    return dict(job, ansible_job_id='400000000002.1', finished=1, changed=True,
                item={'ansible_job_id': '400000000002.1', 'item': {'job': 'lab-ma3-backup', 'drive': 0}})


# host -> (its window, its jobs) of the observe run the report tests write
FLEET = {
    'lab-ma1': (lambda: recorded('observed_job__lab-ma1')['window'], lambda: []),
    'lab-ma2': (idle_window, lambda: []),
    'lab-ma3': (lambda: recorded('observed_bacula_job__lab-ma3')['window'], lambda: [bacula_job()]),
}
