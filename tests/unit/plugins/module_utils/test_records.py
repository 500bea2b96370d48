# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Typed records and the host document's schema, on recorded lab runs.

tests/unit/fixtures/lab_runs/ holds two recorded lab runs' host documents
(README.md in each); tests/unit/fixtures/verdict_args/20261123-quick/ holds what
the first of them handed the qualify_verdict action (the write results as
Ansible's async_status returned them, with ansible_job_id, results_file,
stdout_lines, item...). Every document, and every document the assembly writes
in the tests here, is validated against docs/host-report.schema.json; a
document of another schema, the layout before version 2 among them, is
refused naming it.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os

import jsonschema
import pytest

from ansible_collections.tapeops.qualify.plugins.action import qualify_verdict
from ansible_collections.tapeops.qualify.plugins.module_utils import _records, _run
from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import _charts, _render
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _host

from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._tape_fixtures import FIXTURES

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..'))
SCHEMA_PATH = os.path.join(ROOT, 'docs', 'host-report.schema.json')
LAB_RUN_1123 = os.path.join(FIXTURES, 'lab_runs', '20261123-quick')
LAB_RUN_V2 = os.path.join(FIXTURES, 'lab_runs', '20261124-quick-v2')
# what LAB_RUN_1123 handed the qualify_verdict action, Ansible's transport and all
VERDICT_ARGS = os.path.join(FIXTURES, 'verdict_args', '20261123-quick')
HOSTS = ('lab-ma1', 'lab-ma2', 'lab-ma3')
# the classes of the lab's spread (docs/lab.md "The spread"), the same in both runs
SPREAD = {'lab-ma1': 'STREAMING', 'lab-ma2': 'SPEED-MATCHED', 'lab-ma3': 'SHOE-SHINING'}
# keys no record may hold at any depth: they only exist in Ansible's transport
UNAMBIGUOUS_TRANSPORT = ('ansible_job_id', 'results_file', 'stdout_lines', 'stderr_lines', 'invocation',
                         'ansible_loop_var', 'failed_when_result')


@pytest.fixture(scope='module')
def validator():
    with open(SCHEMA_PATH, encoding='utf-8') as handle:
        schema = json.load(handle)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def raw(run, host):
    with open(os.path.join(run, host + '.json'), encoding='utf-8') as handle:
        return json.load(handle)


def keys_anywhere(value):
    if isinstance(value, dict):
        for key, inner in value.items():
            yield key
            yield from keys_anywhere(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from keys_anywhere(inner)


def record_dicts(doc):
    """Every record in a host document (the dicts whose keys are a record's fields)."""
    yield doc
    yield from (d for d in (doc.get('preflight'), doc.get('source'), doc.get('media')) if d)
    yield from doc.get('mechanics') or []
    for drive in doc['drives']:
        yield drive
        yield from (d for d in (drive.get('identity'), drive.get('write_sweep')) if d)
        yield from (drive.get('write_sweep') or {}).get('filemarks') or []


def assert_clean(doc):
    for record in record_dicts(doc):
        assert _records.transport_keys(record) == [], record.keys()
    assert not set(keys_anywhere(doc)) & set(UNAMBIGUOUS_TRANSPORT)


def test_the_schema_names_every_records_fields_and_nothing_else():
    with open(SCHEMA_PATH, encoding='utf-8') as handle:
        schema = json.load(handle)
    defs = schema['$defs']
    for cls in (_records.DriveIdentity, _records.FilemarkCost, _records.WriteSweep, _records.SourceRead,
                _records.Preflight, _records.Mechanics, _records.Media, _records.DriveEntry, _records.SdSetting,
                _records.SdDevice, _records.StorageDaemonConfig, _records.NbSetting, _records.NetBackupBuffers,
                _records.Verdict, _records.Finding, _records.Fix, _records.VerdictForecasts, _records.Forecast,
                _records.CartridgeMemory, _records.Health, _records.HealthFinding):
        assert sorted(defs[cls.__name__]['properties']) == sorted(_records.keys_of(cls)), cls
        assert defs[cls.__name__]['additionalProperties'] is False
    assert sorted(schema['properties']) == sorted(_records.keys_of(_records.HostReport))
    # the classes the documents name are the records' (the judge decides them, the reports read them)
    verdict = defs['Verdict']['properties']
    assert verdict['class']['enum'] == list(_records.CLASSES) == verdict['class_at_current_settings']['enum']
    assert schema['properties']['worst_class']['enum'] == list(_records.CLASSES) + [None]
    assert schema['properties']['schema_version'] == {'const': _records.SCHEMA_VERSION}
    assert defs['Health']['properties']['status']['enum'] == list(_records.HEALTH_STATUSES)


def test_a_write_result_as_async_status_returned_it_becomes_a_record_without_transport():
    result = raw(VERDICT_ARGS, 'lab-ma2')['write_sweep'][0]
    assert {'ansible_job_id', 'results_file', 'stdout_lines', 'item', 'started', 'finished'} <= set(result)
    record = _records.WriteSweep.from_result(result)
    out = record.to_dict()
    assert _records.transport_keys(out) == []
    assert out['device'] == '/dev/nst0' and out['ceiling_block_size'] == 1048576
    assert out['sweep'] == result['sweep'] and len(out['sweep']) == 6
    # the file-mark runs are records too, every measured field kept
    assert out['filemarks'][0] == {'kind': 'none', 'segment_mb': None, 'block_size': 262144, 'bytes': 256114688,
                                   'seconds': 5.091722, 'mb_s': 50.3, 'marks': 0, 'mark_seconds': 0.0,
                                   'seconds_lost_per_mark': None, 'error': None}
    assert record.written and record.note is None
    # a record read back from its dict is the same record
    assert _records.WriteSweep.from_dict(json.loads(json.dumps(out))) == record


def test_a_refused_write_keeps_why_and_no_measurement():
    refused = {'failed': True, 'failed_when_result': False, 'reason': 'media_has_data',
               'msg': 'The loaded cartridge MA1009L5 holds data and is not in allowed_barcodes.',
               'item': {'item': {'nst': '/dev/nst0'}, 'ansible_job_id': 'j1'}, 'ansible_job_id': 'j1'}
    record = _records.WriteSweep.from_result(refused)
    assert record.device == '/dev/nst0' and not record.written
    assert record.note == 'The loaded cartridge MA1009L5 holds data and is not in allowed_barcodes.'
    assert record.sweep is None and record.reason == 'media_has_data'


@pytest.mark.parametrize('host', HOSTS)
def test_the_first_lab_run_validates_and_keeps_the_records_of_what_it_was_handed(host, validator):
    doc = raw(LAB_RUN_1123, host)
    validator.validate(doc)
    assert_clean(doc)
    assert doc['schema_version'] == 2 and doc['status'] == 'ok' and doc['host'] == host
    args = raw(VERDICT_ARGS, host)
    assert doc['facts'] == args['host_facts']
    [drive], [verdict] = doc['drives'], doc['verdicts']
    assert verdict['drive'] == drive['id'] == '/dev/nst0'
    assert verdict['class'] == SPREAD[host] and doc['worst_class'] == SPREAD[host]
    # recorded before links, the drive model and hung drives were recorded: those fields are null
    # the cartridge memory fields are absent where discovery did not read them
    fields = [f.name for f in dataclasses.fields(_records.DriveIdentity)
              if f.name not in ('cartridge_memory', 'cartridge_memory_reason')]
    assert drive['identity'] == dict(dict.fromkeys(fields), **args['drives'][0])
    assert set(fields) - set(args['drives'][0]) == {'link', 'drive_model', 'hung'}
    assert drive['write_sweep']['sweep'] == args['write_sweep'][0]['sweep']
    assert doc['source']['aggregate'] == args['source']['aggregate']
    # loading it gives it back as written
    assert _run.load(os.path.join(LAB_RUN_1123, host + '.json')) == doc


@pytest.mark.parametrize('host', HOSTS)
def test_the_version_2_lab_run_validates_and_holds_no_transport(host, validator):
    doc = raw(LAB_RUN_V2, host)
    validator.validate(doc)
    assert_clean(doc)
    assert doc['schema_version'] == 2 and doc['host'] == host and doc['run']['profile'] == 'quick'
    [drive], [verdict] = doc['drives'], doc['verdicts']
    assert verdict['drive'] == drive['id'] == drive['nst'] == '/dev/nst0'
    assert verdict['class'] == SPREAD[host]
    assert drive['write_sweep']['sweep'] and drive['write_sweep']['plan']['barcode'] == drive['identity']['barcode']
    # the resolver's identity and drive model, recorded once in the drive's identity
    identity = drive['identity']
    assert identity['hung'] is None and identity['drive_model']['label'] == verdict['drive_label'] == drive['label']
    assert identity['generation']['medium']['generation'] == identity['generation']['generation']
    # loading a version 2 document gives it back as written
    assert _run.load(os.path.join(LAB_RUN_V2, host + '.json')) == doc


def test_the_assembly_of_recorded_results_matches_the_recorded_verdicts(validator):
    """The action's one conversion (records_of) on the run's raw async output, then the assembly."""
    old = raw(VERDICT_ARGS, 'lab-ma3')
    args = {'drives': old['drives'], 'source': old['source'], 'write_sweep': old['write_sweep'],
            'preflight': old['preflight'], 'media': None, 'mechanics': None}
    measured = qualify_verdict.records_of(args)
    # records, not their dicts: the assembly takes them as they are
    assert isinstance(measured['source'], _records.SourceRead)
    assert isinstance(measured['drives'][0], _records.DriveIdentity)
    assert measured['source'].aggregate['p5_mb_s'] == old['source']['aggregate']['p5_mb_s']
    facts = old['host_facts']
    doc = _host.assemble('lab-ma3', measured['drives'], measured['source'], measured['write_sweep'],
                         old['drive_settings'], {},
                         memory_total_mb=facts['memory_total_mb'], preflight=measured['preflight'],
                         host_facts=facts, run=old['run']).to_dict()
    validator.validate(doc)
    assert_clean(doc)
    assert doc['verdicts'][0]['class'] == 'SHOE-SHINING'
    [recorded] = raw(LAB_RUN_1123, 'lab-ma3')['verdicts']
    assert doc['verdicts'][0]['numbers']['feed_now_mb_s'] == recorded['numbers']['feed_now_mb_s']


def test_failed_and_what_if_documents_validate(validator):
    old = raw(VERDICT_ARGS, 'lab-ma2')
    lost = _host.host_document('lab-ma2', _run.STATUS_FAILED, source=old['source'],
                               error='The run stopped after the source read test.', run=old['run']).to_dict()
    validator.validate(lost)
    assert lost['drives'] == [] and lost['verdicts'] == [] and lost['worst_class'] is None
    what_if = _host.assemble('lab-ma2', [], old['source'], target_generation='LTO-9 FH',
                             options={'target_vendor': 'IBM'}, run={'mode': 'upgrade_check'}).to_dict()
    validator.validate(what_if)
    assert [v['drive'] for v in what_if['verdicts']] == ['what-if LTO-9 FH']


def test_a_source_read_too_short_to_judge_validates_with_its_reason(validator):
    # source_read_benchmark marks a read below min_samples as {'reason': ...} (its RETURN, type dict): what a
    # 10 s read on lab-ma1 returned in the fault tests
    old = raw(VERDICT_ARGS, 'lab-ma1')
    reason = ('Only 9 one-second samples (at least 10 needed): the time budget of 10 s is too short; give at '
              'least 11 s.')
    source = dict(old['source'], inconclusive={'reason': reason})
    lost = _host.host_document('lab-ma1', _run.STATUS_FAILED, source=source,
                               error='The run stopped after the source read test.', run=old['run']).to_dict()
    validator.validate(lost)
    assert lost['source']['inconclusive'] == {'reason': reason}
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(dict(lost, source=dict(lost['source'], inconclusive=reason)))


def test_the_schema_refuses_transport_debris(validator):
    doc = _run.load(os.path.join(LAB_RUN_1123, 'lab-ma1.json'))
    dirty = copy.deepcopy(doc)
    dirty['drives'][0]['write_sweep']['ansible_job_id'] = 'j1'
    with pytest.raises(jsonschema.ValidationError, match='ansible_job_id'):
        validator.validate(dirty)
    dirty = copy.deepcopy(doc)
    dirty['source']['stdout_lines'] = []
    with pytest.raises(jsonschema.ValidationError, match='stdout_lines'):
        validator.validate(dirty)


@pytest.mark.parametrize('data, words', [
    ({'schema_version': 3, 'host': 'h'}, "schema version 3, but this collection reads schema_version 2"),
    ({'schema_version': 1, 'host': 'h'}, 'schema version 1, but this collection reads schema_version 2: write it '
                                         'again with this collection (re-run the host).'),
    # the layout before version 2 (a verdict in each drive entry, host_facts), named by its schema key
    ({'schema': 'tapeops.qualify/host-report/v1', 'host': 'h', 'status': 'ok', 'host_facts': {}, 'drives': []},
     "schema version 'tapeops.qualify/host-report/v1', but this collection reads schema_version 2: write it again "
     "with this collection (re-run the host)."),
    ({'host': 'h'}, 'schema not named (no schema_version or schema key), but this collection reads schema_version 2'),
])
def test_another_version_fails_naming_the_one_found_and_the_one_expected(tmp_path, data, words):
    (tmp_path / 'hosts').mkdir()
    (tmp_path / 'hosts' / 'h.json').write_text(json.dumps(data))
    [doc] = _run.load_run(str(tmp_path))
    assert doc['status'] == 'failed' and doc['host'] == 'h'
    assert words in doc['error'] and str(tmp_path / 'hosts' / 'h.json') in doc['error']


# (module, RETURN key holding the record or None for the top level, record, fields only the controller sets,
#  RETURN keys the record does not keep)
RETURNS = (
    ('tape_drive_info', 'drives', _records.DriveIdentity, (), ()),
    ('tape_write_benchmark', None, _records.WriteSweep, ('msg',), ()),
    ('source_read_benchmark', None, _records.SourceRead, (), ()),
    # the host's memory and CPUs beside the record: the role puts them in the host's facts
    ('st_preflight_info', None, _records.Preflight, ('error',), ('memory_total_mb', 'vcpus')),
    # the module exits with its record; the plan and the drive's identity beside it stay in the module's result
    ('tape_mechanics_benchmark', None, _records.Mechanics, (), ('plan', 'drive')),
    ('media_inventory', 'summary', _records.Media, (), ()),
    ('tape_drive_observe', None, _records.ObservedWindow, (), ()),
    ('bacula_sd_info', None, _records.StorageDaemonConfig, (), ()),
    ('bacula_sd_info', 'devices', _records.SdDevice, (), ()),
    # the commands sent and the mount's answer say how the job ran; the record is the job
    ('bacula_job_run', None, _records.BaculaJob, (), ('commands', 'mount', 'reason')),
    ('netbackup_buffers_info', None, _records.NetBackupBuffers, (), ()),
    ('netbackup_buffers_info', 'size_data_buffers', _records.NbSetting, (), ()),
)


@pytest.mark.parametrize('module, key, record, controller_only, not_kept', RETURNS)
def test_each_modules_return_documents_its_record(module, key, record, controller_only, not_kept):
    """A key a module documents but its record does not hold would be lost on the way to the report."""
    import importlib

    import yaml

    doc = yaml.safe_load(importlib.import_module(
        'ansible_collections.tapeops.qualify.plugins.modules.%s' % module).RETURN)
    documented = set(doc[key]['contains']) if key else set(doc)
    fields = set(f.name for f in dataclasses.fields(record))
    assert documented - set(not_kept) == fields - set(controller_only)


def test_a_preflight_that_failed_keeps_its_message_and_a_good_one_its_record():
    failed = {'failed': False, 'failed_when_result': False, 'changed': False,
              'msg': 'Cannot read /sys/module/st/parameters: Permission denied',
              'invocation': {'module_args': {'block_size': None}}}
    assert _records.Preflight.from_result(failed).to_dict() == dict(
        dict.fromkeys(f.name for f in dataclasses.fields(_records.Preflight)),
        error='Cannot read /sys/module/st/parameters: Permission denied')
    registered = dict(raw(VERDICT_ARGS, 'lab-ma2')['preflight'], changed=False, invocation={'module_args': {}})
    record = _records.Preflight.from_result(registered).to_dict()
    assert _records.transport_keys(record) == [] and record['error'] is None
    assert record['st_driver_version'] == '20160209' and record['hba_max_transfer_bytes'] == 1310720


def failed_write(old, reason, msg):
    """lab-ma3's write result as a failed run returns it: the first two recorded steps, then a stop.

    The shape is the one tape_write_benchmark returns on a hang mid-sweep (test_tape_write_benchmark_main's
    test_a_write_that_hangs_mid_sweep_keeps_the_steps_measured_before_it): ``failed``, ``reason``, ``msg``, the
    steps measured before the one that stopped, ``sweep_stopped`` and ``rewound``. The steps are the lab run's
    recorded first two (derived: the recorded sweep cut after its second step), the async transport kept.
    """
    recorded = old['write_sweep'][0]
    result = dict(recorded, failed=True, reason=reason, msg=msg, sweep=recorded['sweep'][:2],
                  sweep_stopped='Writing 262144-byte blocks did not finish within 2 seconds.', rewound=True)
    for key in ('filemarks', 'best', 'ceiling_block_size'):
        result.pop(key, None)
    return result


def assemble_lab_ma3(old, write_result):
    facts = old['host_facts']
    return _host.assemble('lab-ma3', old['drives'], old['source'], [write_result], old['drive_settings'], {},
                          memory_total_mb=facts['memory_total_mb'], preflight=old['preflight'],
                          host_facts=facts, run=old['run']).to_dict()


def test_a_write_that_failed_mid_sweep_keeps_its_steps_in_the_document_and_is_not_judged(validator):
    old = raw(VERDICT_ARGS, 'lab-ma3')
    msg = ('Writing 262144-byte blocks did not finish within 2 seconds. Check the drive (dmesg, sg_logs) and the '
           'cabling, then retry.')
    result = failed_write(old, 'timeout', msg)
    record = _records.WriteSweep.from_result(result)
    steps = old['write_sweep'][0]['sweep'][:2]
    assert [(s['block_size'], s['pattern']) for s in steps] == [(65536, 'random'), (65536, '2.5:1')]
    assert (record.device, record.reason, record.msg, record.sweep) == ('/dev/nst0', 'timeout', msg, steps)
    assert record.sweep_stopped == 'Writing 262144-byte blocks did not finish within 2 seconds.'
    assert record.rewound is True and record.filemarks is None and record.best is None
    # failed: not a sweep to judge, its note says why; its steps are measurements all the same
    assert record.failed and record.measured and not record.written and record.note == msg
    doc = assemble_lab_ma3(old, result)
    validator.validate(doc)
    assert_clean(doc)
    (drive,) = doc['drives']
    assert drive['write_sweep']['sweep'] == steps and drive['write_sweep']['reason'] == 'timeout'
    assert drive['write_sweep']['rewound'] is True and drive['write_note'] == msg
    # a timeout says the drive hung: an error and no verdict, as before the steps were kept
    assert doc['verdicts'] == [] and doc['status'] == 'failed'
    assert drive['error'].startswith('/dev/nst0 does not answer: Writing 262144-byte blocks did not finish')


def test_a_failed_write_s_partial_steps_do_not_change_the_verdict(validator):
    # a write error that is not a hang: the drive is judged without a sweep, as when nothing was written
    old = raw(VERDICT_ARGS, 'lab-ma3')
    msg = 'Writing 262144-byte blocks failed: [Errno 5] Input/output error. Check the drive (dmesg, sg_logs).'
    partial = assemble_lab_ma3(old, failed_write(old, 'write_error', msg))
    validator.validate(partial)
    nothing = assemble_lab_ma3(old, {'failed': True, 'reason': 'write_error', 'msg': msg,
                                     'item': {'nst': '/dev/nst0'}})
    assert partial['drives'][0]['write_sweep']['sweep'] == old['write_sweep'][0]['sweep'][:2]
    assert nothing['drives'][0]['write_sweep'] is None
    assert partial['drives'][0]['write_note'] == nothing['drives'][0]['write_note'] == msg
    (verdict,) = partial['verdicts']
    assert verdict == nothing['verdicts'][0]
    # judged without a sweep: the recorded run's whole sweep made it SHOE-SHINING with a measured drive path
    whole = assemble_lab_ma3(old, old['write_sweep'][0])
    assert whole['verdicts'][0]['class'] == 'SHOE-SHINING' and verdict != whole['verdicts'][0]


def test_the_report_charts_no_sweep_for_a_failed_write_and_says_why():
    # the page of the partial write: the drive's verdict with its charts, but the sweep chart is the "no sweep" one
    # (the steps before the error are in the document, not drawn as the drive's sweep); the whole run draws it
    old = raw(VERDICT_ARGS, 'lab-ma3')
    msg = 'Writing 262144-byte blocks failed: [Errno 5] Input/output error. Check the drive (dmesg, sg_logs).'
    charts = _charts.Charts()
    for write, drawn in ((failed_write(old, 'write_error', msg), False), (old['write_sweep'][0], True)):
        doc = assemble_lab_ma3(old, write)
        (row,) = _render._page_rows([doc], charts)
        by_name = dict(row['charts'])
        assert by_name['feed'] is not None and (by_name['sweep'] is not None) is drawn
        page = _render.fleet_html([doc], charts=charts)
        assert ('No write sweep: %s' % msg in page) is not drawn


@pytest.mark.parametrize('value, expected', [
    (3, 3.0), ('2.5', 2.5), (0, 0.0), (None, None), (True, None), ('fast', None), ([], None),
    (float('nan'), None), (float('inf'), None), ('-inf', None)])
def test_finite_is_a_finite_float_or_none(value, expected):
    assert _records.finite(value) == expected
