# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""qualify_verdict in an observe run: run() on the lab's recorded windows (observe_cases.py says which).

The document an observe run writes: no verdict, each watched drive's window judged with the drive's model as
the verdict resolves it (INQUIRY and the guest's tapeops_drives with the lab's scaled model as overrides), the
same judgement the lab tests made with the guest's drive profile; a drive idle in its window said to be idle; the
Bacula job with the drive it wrote to; a failed watch, an unknown model, check mode and a failed host each said.
Every document is validated against docs/host-report.schema.json.
"""

from __future__ import annotations

import copy
import json
import os

import jsonschema
import pytest

from ansible_collections.tapeops.qualify.plugins.action import qualify_verdict
from ansible_collections.tapeops.qualify.plugins.module_utils import _records, _words
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _drive_model

from action_harness import run_action
from observe_cases import (
    RUN, as_waited, bacula_job, idle_window, load, observe_args, recorded, verdict_args)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..'))
SCHEMA = os.path.join(ROOT, 'docs', 'host-report.schema.json')
JUDGEMENT = ('status', 'observed', 'forecast', 'agreement', 'notes')


@pytest.fixture(scope='module')
def validator():
    schema = load(SCHEMA)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def observe(tmp_path, host, windows, jobs=None, check_mode=False, **extra):
    """(failed, result, the document written or None) of one observe run's qualify_verdict task."""
    failed, result = run_action(qualify_verdict, observe_args(host, str(tmp_path), windows, jobs, **extra),
                                {'inventory_hostname': host}, check_mode=check_mode)
    path = result.get('path')
    return failed, result, load(path) if path and os.path.exists(path) else None


def test_the_schema_names_the_observe_records_fields_and_nothing_else():
    defs = load(SCHEMA)['$defs']
    for cls in (_records.ObservedDrive, _records.ObservedWindow, _records.BaculaJob):
        assert sorted(defs[cls.__name__]['properties']) == sorted(_records.keys_of(cls)), cls
        assert defs[cls.__name__]['additionalProperties'] is False


@pytest.mark.parametrize('host, case', [('lab-ma1', 'observed_job__lab-ma1'),
                                        ('lab-ma3', 'observed_job__lab-ma3'),
                                        ('lab-ma3', 'observed_bacula_job__lab-ma3')])
def test_a_recorded_window_is_judged_with_the_model_the_verdict_resolves(tmp_path, validator, host, case):
    recorded_case = recorded(case)
    failed, result, doc = observe(tmp_path, host, [recorded_case['window']])
    assert not failed and result['changed'] is True, result
    validator.validate(doc)
    assert doc['run'] == RUN and doc['status'] == 'ok' and doc['error'] is None
    # an observe run gives no verdict and invents none
    assert doc['verdicts'] == [] and doc['worst_class'] is None and result['verdicts'] == []
    [drive], [seen] = doc['drives'], doc['observed']
    assert seen['drive'] == drive['id'] == '/dev/nst0' and seen['status'] == 'judged'
    # the drive's model is the verdict's: INQUIRY named the mechanism, the inventory gave the lab's model
    assert drive['label'] == recorded_case['profile']['label']
    assert drive['identity']['drive_model']['native_mb_s'] == recorded_case['profile']['native_mb_s']
    # and it judges the window as the lab test judged it with the guest's drive profile
    # (less the back-hitch rate's lower bound and the class's rate, judged since the recording: test_observed checks
    # them)
    judged = dict((k, copy.deepcopy(seen[k])) for k in JUDGEMENT)
    for part in ('observed', 'forecast'):
        judged[part].pop('backhitches_per_hour_low')
    judged['observed'].pop('class_mb_s')
    assert judged == dict((k, recorded_case['judgement'][k]) for k in JUDGEMENT)
    # the window is kept without its per-interval series and log pages, and nothing of Ansible's transport
    assert seen['window']['series'] is None and seen['window']['log_pages_before'] is None
    assert seen['window']['device'] == '/dev/nst0' and seen['window']['status'] == 'observed'
    for key in ('ansible_job_id', 'results_file', '"item"', 'ansible_loop_var', 'attempts'):
        assert key not in json.dumps(doc), key
    assert result['observed'] == [dict(seen, id='/dev/nst0')]
    assert result['msg'] == '/dev/nst0: %s' % _words.observed_summary(seen)


def test_the_inventory_model_is_what_the_window_is_judged_on(tmp_path):
    """Without the guest's tapeops_drives the drive is the LTO-8 INQUIRY names, at its real speed: a far higher
    floor for the same feed. The observe run applies the inventory as the verdict does."""
    window = recorded('observed_job__lab-ma3')['window']
    _failed, _result, lab = observe(tmp_path / 'lab', 'lab-ma3', [window])
    _failed, _result, bare = observe(tmp_path / 'bare', 'lab-ma3', [window], drive_settings=[])
    real = _drive_model.lookup(8, 'FH', 'IBM')
    assert lab['observed'][0]['observed']['need_floor_mb_s'] == 11.2
    assert bare['observed'][0]['observed']['need_floor_mb_s'] == pytest.approx(real.speed_floor_mb_s, rel=0.01)
    assert bare['drives'][0]['identity']['generation']['source'] == 'inquiry'


def test_a_drive_idle_in_its_window_is_said_to_be_idle_not_judged(tmp_path, validator):
    failed, result, doc = observe(tmp_path, 'lab-ma2', [idle_window()])
    assert not failed
    validator.validate(doc)
    [seen] = doc['observed']
    assert seen['status'] == 'idle' and seen['observed'] is None and seen['forecast'] is None
    assert seen['agreement'] is None and seen['error'] is None
    # watched, so the host has its result
    assert doc['status'] == 'ok' and doc['verdicts'] == [] and doc['drives'][0]['label'] == 'LTO-6'
    assert result['msg'] == '/dev/nst0: IDLE: the drive wrote nothing in its window: not judged.'


def test_the_bacula_job_goes_with_the_drive_that_wrote(tmp_path, validator):
    window = recorded('observed_bacula_job__lab-ma3')['window']
    # a second drive on the host, idle in the window (the guest's drive found a second time as /dev/nst1)
    args = verdict_args('lab-ma3')
    second = dict(copy.deepcopy(args['drives'][0]), nst='/dev/nst1', st='/dev/st1')
    idle = dict(idle_window(), device='/dev/nst1')
    windows = [as_waited(window), as_waited(idle, nst='/dev/nst1', job_id='400000000001.2')]
    failed, _result, doc = observe(tmp_path, 'lab-ma3', [], jobs=[bacula_job()], drives=args['drives'] + [second],
                                   observed=windows)
    assert not failed
    validator.validate(doc)
    by_drive = dict((o['drive'], o) for o in doc['observed'])
    assert by_drive['/dev/nst1']['status'] == 'idle' and by_drive['/dev/nst1']['job'] is None
    job = by_drive['/dev/nst0']['job']
    assert (job['jobid'], job['status'], job['bytes']) == (1, 'T', 230450176)
    assert by_drive['/dev/nst0']['job_error'] is None and by_drive['/dev/nst0']['notes'] == []


def test_a_job_that_names_its_drive_goes_there_and_one_that_cannot_be_placed_is_said(tmp_path):
    window = recorded('observed_bacula_job__lab-ma3')['window']
    args = verdict_args('lab-ma3')
    second = dict(copy.deepcopy(args['drives'][0]), nst='/dev/nst1', st='/dev/st1')
    windows = [as_waited(window), as_waited(dict(window, device='/dev/nst1'), nst='/dev/nst1')]
    named = bacula_job()
    named['item']['item']['device'] = '/dev/nst1'      # tapeops_bacula.device
    _failed, _result, doc = observe(tmp_path / 'named', 'lab-ma3', [], jobs=[named],
                                    drives=args['drives'] + [second], observed=windows)
    assert [o['drive'] for o in doc['observed'] if o['job']] == ['/dev/nst1']
    # both drives wrote and the job names neither: it goes with none, and each drive says so
    _failed, _result, doc = observe(tmp_path / 'unnamed', 'lab-ma3', [], jobs=[bacula_job()],
                                    drives=args['drives'] + [second], observed=windows)
    assert all(o['job'] is None for o in doc['observed'])
    assert all(o['notes'] == [_words.job_not_placed(_records.BaculaJob(jobid=1, status='T'), None)]
               for o in doc['observed'])
    assert 'name that drive in tapeops_bacula.device' in doc['observed'][0]['notes'][0]


def test_a_failed_job_keeps_its_record_and_its_message(tmp_path, validator):
    window = recorded('observed_bacula_job__lab-ma3')['window']
    job = dict(bacula_job(), status='E', failed=True,
               msg='Bacula job 1 ended with status E (Error): Fatal error: Network error with FD.')
    _failed, _result, doc = observe(tmp_path, 'lab-ma3', [window], jobs=[job])
    validator.validate(doc)
    [seen] = doc['observed']
    assert seen['job']['status'] == 'E' and seen['job_error'] == job['msg']
    # the window is judged all the same: the drive did what it did
    assert seen['status'] == 'judged'


def test_a_watch_that_failed_and_a_drive_without_a_model_say_why(tmp_path, validator):
    failed_watch = {'failed': True, 'msg': '/dev/nst0 is not a tape drive: no st statistics under /sys/class.',
                    'reason': 'not_a_tape_drive'}
    failed, result, doc = observe(tmp_path / 'failed', 'lab-ma1', [failed_watch])
    assert not failed
    validator.validate(doc)
    [seen] = doc['observed']
    assert seen['status'] == 'not_observed' and seen['window'] is None
    assert seen['error'] == '/dev/nst0 was not watched: %s.' % failed_watch['msg'].rstrip('.')
    # nothing was watched: the host has no result, and says why
    assert doc['status'] == 'failed' and doc['error'] == seen['error'] and result['status'] == 'failed'
    # the async job's own end (past its time limit)
    _failed, _result, doc = observe(tmp_path / 'timeout', 'lab-ma1', [{'failed': 1, 'msg': 'Timeout exceeded'}])
    assert 'ran past its time limit' in doc['observed'][0]['error']
    # a drive INQUIRY cannot name and the inventory does not either: its window is not judged, and says what to set
    unknown = dict(verdict_args('lab-ma1')['drives'][0], vendor='ACME', product='STREAMER 9000', density_code=None)
    unknown['generation'] = None
    window = recorded('observed_job__lab-ma1')['window']
    _failed, _result, doc = observe(tmp_path / 'unknown', 'lab-ma1', [window], drives=[unknown], drive_settings=[])
    validator.validate(doc)
    [seen] = doc['observed']
    assert seen['status'] == 'not_judged' and seen['observed'] is None and seen['window']['status'] == 'observed'
    assert seen['error'] == doc['drives'][0]['error'] and 'tapeops_drives' in seen['error']


def test_without_the_drive_s_ratio_the_given_tape_ratio_is_used(tmp_path):
    window = dict(recorded('observed_job__lab-ma1')['window'], compression_ratio=None)
    _failed, _result, doc = observe(tmp_path, 'lab-ma1', [window], options={'tape_ratio': 1.5})
    seen = doc['observed'][0]['observed']
    assert (seen['tape_ratio'], seen['tape_ratio_source']) == (1.5, 'given')


def test_check_mode_writes_nothing_and_the_planned_windows_are_not_judged(tmp_path):
    planned = {'device': '/dev/nst0', 'status': 'planned', 'drive': {'nst': '/dev/nst0'},
               'unknown': {'window': 'check mode: nothing was sampled'}, 'changed': False}
    failed, result, doc = observe(tmp_path, 'lab-ma1', [planned], check_mode=True)
    assert not failed and doc is None and not os.path.exists(result['path'])
    assert result['msg'] == _words.would_write(result['path'])
    [seen] = result['observed']
    assert seen['status'] == 'not_observed' and seen['notes'] == ['nothing was sampled (status planned)']


def test_an_observe_run_refuses_a_qualify_run_s_measurements(tmp_path):
    source = verdict_args('lab-ma1')['source']
    failed, result, _doc = observe(tmp_path, 'lab-ma1', [recorded('observed_job__lab-ma1')['window']],
                                   source=source)
    assert failed and result['msg'] == _words.OBSERVE_NOT_QUALIFY
    assert not os.path.exists(tmp_path / 'hosts' / 'lab-ma1.json')


def test_a_host_that_failed_before_its_window_is_an_observe_document_with_its_error(tmp_path, validator):
    error = 'Discover tape drives and changers failed: mt: command not found'
    failed, result, doc = observe(tmp_path, 'lab-ma1', [], status='failed', error=error, observed=[], drives=[])
    assert not failed
    validator.validate(doc)
    assert doc['status'] == 'failed' and doc['error'] == error and doc['observed'] == [] and doc['verdicts'] == []
    assert _records.observe_document(doc) and result['observed'] == []


def test_a_qualify_run_s_document_has_no_observed_key(tmp_path):
    args = dict(verdict_args('lab-ma1'), report_dir=str(tmp_path))
    failed, result = run_action(qualify_verdict, args, {'inventory_hostname': 'lab-ma1'})
    assert not failed and 'observed' not in result
    assert 'observed' not in load(result['path']) and not _records.observe_document(load(result['path']))
