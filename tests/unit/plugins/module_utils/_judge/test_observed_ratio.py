# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_judge/_observed.drive_ratio: the compression ratio a drive measured in an observe run, for a qualify run.

The observe run's entries are the lab's recorded windows judged as an observe run judges them
(tests/unit/fixtures/observe/, README in tests/unit/plugins/module_utils/_judge/test_observed.py): lab-ma3's real
Bacula 9.6.7 job, whose drive measured 1.213 over 231 MB (its LOG SENSE compression page), and the first seconds
of lab-ma1's window, before its job wrote (an idle drive). Only a judged entry whose ratio is the drive's own is
used; every other case says why, as data.
"""

from __future__ import annotations

import copy
import json
import os

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils import _records
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _observed

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'fixtures', 'observe')
RUN_DIR = '/srv/reports/observe-20261127T220000Z'
RUN = {'id': 'observe-20261127T220000Z', 'mode': 'observe', 'profile': 'observe'}


def recorded(name):
    with open(os.path.join(FIXTURES, '%s.json' % name), encoding='utf-8') as handle:
        return json.load(handle)


def bacula_entry(drive='/dev/nst0', **window_changes):
    """lab-ma3's Bacula job window judged with the guest's drive profile, as the observe run's document holds it."""
    case = recorded('observed_bacula_job__lab-ma3')
    window = dict(case['window'], **window_changes)
    entry = _observed.observed_drive(drive, window, case['profile'])
    entry.job = _records.BaculaJob.from_dict(case['job'])
    return entry


def idle_entry(drive='/dev/nst1'):
    window = copy.deepcopy(recorded('observed_job__lab-ma1')['window'])
    first = next(i for i, nbytes in enumerate(window['series']['write_byte_cnt']) if nbytes)
    window['series'] = dict((k, v[:first]) for k, v in window['series'].items())
    return _observed.observed_drive(drive, dict(window, device=drive), recorded('observed_job__lab-ma1')['profile'])


def report(*entries):
    return _records.HostReport(host='lab-ma3', run=dict(RUN), drives=[], verdicts=[], observed=list(entries))


def test_the_drive_s_own_ratio_over_the_recorded_bacula_job_is_the_basis():
    entry = bacula_entry()
    assert (entry.status, entry.observed['tape_ratio_source']) == ('judged', 'drive')
    basis = _observed.drive_ratio('/dev/nst0', RUN_DIR, report(entry))
    assert basis == {'id': 'ratio_observed', 'ratio': 1.213, 'run': 'observe-20261127T220000Z', 'jobid': 1,
                     'data_seconds': entry.observed['data_seconds'], 'bytes': entry.observed['bytes']}
    # the job's bytes and time in the data phase, as the drive saw them
    assert basis['bytes'] == 230712320 and 75 < basis['data_seconds'] < 85


def test_the_drive_is_matched_by_its_id_and_a_drive_not_watched_says_which_were():
    observed = report(bacula_entry())
    assert _observed.drive_ratio('/dev/nst0', RUN_DIR, observed)['id'] == 'ratio_observed'
    assert _observed.drive_ratio('/dev/nst1', RUN_DIR, observed) == {
        'id': 'ratio_observed_unused', 'why': 'not_watched', 'run_dir': RUN_DIR, 'run': 'observe-20261127T220000Z',
        'drive': '/dev/nst1', 'watched': ['/dev/nst0']}


def test_a_window_without_a_job_gives_the_ratio_without_a_job_id():
    entry = bacula_entry()
    entry.job = None
    assert _observed.drive_ratio('/dev/nst0', RUN_DIR, report(entry))['jobid'] is None


@pytest.mark.parametrize('changes, given, source', [
    ({'compression_ratio': None}, 1.5, 'given'),          # the observe run's tape_ratio option, not the drive
    ({'compression_ratio': None}, None, 'incompressible'),
])
def test_a_ratio_the_drive_did_not_measure_is_not_used(changes, given, source):
    case = recorded('observed_bacula_job__lab-ma3')
    entry = _observed.observed_drive('/dev/nst0', dict(case['window'], **changes), case['profile'], tape_ratio=given)
    assert entry.status == 'judged' and entry.observed['tape_ratio_source'] == source
    unused = _observed.drive_ratio('/dev/nst0', RUN_DIR, report(entry))
    assert (unused['id'], unused['why'], unused['source']) == ('ratio_observed_unused', 'not_measured', source)


def test_an_idle_a_not_judged_and_a_not_observed_drive_say_their_status():
    assert _observed.drive_ratio('/dev/nst1', RUN_DIR, report(idle_entry()))['why'] == 'idle'
    case = recorded('observed_bacula_job__lab-ma3')
    unknown = _observed.observed_drive('/dev/nst0', case['window'], None, 'the generation of /dev/nst0 is unknown')
    unused = _observed.drive_ratio('/dev/nst0', RUN_DIR, report(unknown))
    assert (unused['why'], unused['detail']) == ('not_judged', 'the generation of /dev/nst0 is unknown')
    failed = _observed.observed_drive('/dev/nst0', {'failed': True, 'msg': 'no st statistics under /sys/class.'})
    unused = _observed.drive_ratio('/dev/nst0', RUN_DIR, report(failed))
    assert unused['why'] == 'not_observed' and 'no st statistics' in unused['detail']


def test_a_refused_run_keeps_its_reason_and_the_run_is_named_after_its_directory():
    unused = _observed.drive_ratio('/dev/nst0', RUN_DIR + '/', None, {
        'why': 'no_document', 'path': RUN_DIR + '/hosts/lab-ma3.json', 'detail': 'x', 'host': 'lab-ma3'})
    assert unused == {'id': 'ratio_observed_unused', 'why': 'no_document', 'run_dir': RUN_DIR + '/',
                      'run': 'observe-20261127T220000Z', 'drive': '/dev/nst0',
                      'path': RUN_DIR + '/hosts/lab-ma3.json', 'detail': 'x', 'host': 'lab-ma3'}


def test_the_what_if_target_was_not_watched_and_hears_what_the_host_s_drives_measured():
    unused = _observed.drive_ratio(None, RUN_DIR, report(bacula_entry(), idle_entry()))
    assert (unused['why'], unused['measured'], unused['drive']) == ('what_if', [['/dev/nst0', 1.213]], None)
