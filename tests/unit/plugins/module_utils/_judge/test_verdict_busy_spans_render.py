# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""BUSY along the data path: the lock record -> the drive's busy state (_verdict.busy_state) -> its sentence
(_words.busy) -> the host document, summary.md, report.html, junit.xml and qualify_report's result.

The measurements are the recorded lab run's (lab-ma1); the lock records are what tape_drive_lock returns
(test_drive_lock.py makes them from lease files)."""

from __future__ import annotations

import copy
import json
import os
import xml.etree.ElementTree as ET

import jsonschema
import pytest

from ansible_collections.tapeops.qualify.plugins.action import qualify_report
from ansible_collections.tapeops.qualify.plugins.module_utils import _run
from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import _render
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _host

from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._tape_fixtures import FIXTURES

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', '..'))
LAB_RUN_V2 = os.path.join(FIXTURES, 'lab_runs', '20261124-quick-v2')
HOLDER = {'run_id': '20261126T120000Z', 'controller': 'ctl-a', 'controller_pid': 4242,
          'started': '2026-11-26T12:00:05+00:00', 'expires': '2026-11-26T15:00:05+00:00'}


def busy_lock(device='/dev/nst0', reason='locked', users=()):
    return {'device': device, 'address': '0:0:1:0', 'state': 'busy', 'reason': reason,
            'holder': HOLDER if reason == 'locked' else None, 'users': list(users), 'replaced': None,
            'lease_path': '/run/tapeops-qualify/drive-0_0_1_0.json'}


@pytest.fixture(scope='module')
def validator():
    with open(os.path.join(ROOT, 'docs', 'host-report.schema.json'), encoding='utf-8') as handle:
        return jsonschema.Draft202012Validator(json.load(handle))


def lab_ma1():
    with open(os.path.join(LAB_RUN_V2, 'lab-ma1.json'), encoding='utf-8') as handle:
        return json.load(handle)


def assemble(doc, locks=None, writes=None, extra_drives=()):
    drive = doc['drives'][0]
    identities = [drive['identity']] + [dict(copy.deepcopy(drive['identity']), nst=n) for n in extra_drives]
    return _host.assemble('lab-ma1', identities, doc['source'],
                          [drive['write_sweep']] if writes is None else writes,
                          [dict(drive['settings'], nst=drive['nst'])], {},
                          memory_total_mb=doc['facts']['memory_total_mb'], preflight=doc['preflight'],
                          host_facts=doc['facts'], run=doc['run'], locks=locks).to_dict()


def test_a_drive_another_run_holds_is_busy_with_no_verdict_and_says_who(validator):
    written = assemble(lab_ma1(), locks={'locks': [busy_lock()], 'changed': False})
    validator.validate(written)
    [drive] = written['drives']
    assert written['verdicts'] == [] and written['status'] == 'failed' and written['worst_class'] is None
    assert drive['busy']['reason'] == 'locked' and drive['busy']['holder']['run_id'] == HOLDER['run_id']
    assert drive['error'].startswith('BUSY: /dev/nst0 was not measured and has no verdict: another qualify run '
                                     'holds it (run 20261126T120000Z from ctl-a, process 4242')
    assert 'lease ends 2026-11-26T15:00:05+00:00' in drive['error'] and 'Re-run this host' in drive['error']
    assert written['error'] == drive['error']


def test_a_drive_a_backup_has_open_is_busy_naming_the_process(validator):
    users = [{'pid': 812, 'command': 'bacula-sd', 'node': 'nst0'}]
    written = assemble(lab_ma1(), locks=[busy_lock(reason='open', users=users)])
    validator.validate(written)
    assert written['drives'][0]['busy']['users'] == users
    assert 'bacula-sd (pid 812, nst0) had it open' in written['drives'][0]['error']
    # the storage daemon keeps its drive open while idle: the sentence says how to let go of it
    assert written['drives'][0]['error'].endswith(
        'bacula-sd keeps the drive open between jobs (Always Open = yes is its default): unmount it there first '
        '(bconsole: unmount storage=<its Storage>, which closes the device), re-run this host, then mount it again.')


def test_the_write_gates_ebusy_refusal_is_busy_too(validator):
    refused = {'device': '/dev/nst0', 'failed': True, 'reason': 'busy',
               'msg': '/dev/nst0 is busy: another process has the drive open (st allows one open at a time). '
                      'Wait for the backup or tool using it to finish, then retry.'}
    written = assemble(lab_ma1(), writes=[refused])
    validator.validate(written)
    assert written['drives'][0]['busy'] == {'reason': 'busy', 'holder': None, 'users': [], 'basis': 'write_test'}
    assert written['verdicts'] == []


def test_a_free_drive_beside_a_busy_one_keeps_its_verdict():
    doc = lab_ma1()
    written = assemble(doc, locks=[busy_lock('/dev/nst1')], extra_drives=['/dev/nst1'])
    assert written['status'] == 'ok'
    assert [v['drive'] for v in written['verdicts']] == ['/dev/nst0']
    assert [d.get('busy', {}).get('reason') for d in written['drives']] == [None, 'locked']
    # no lock record at all (an older role, the what-if): nothing is busy
    assert 'busy' not in assemble(doc)['drives'][0]


def test_busy_reaches_summary_html_junit_and_fails_the_host_as_missing(tmp_path):
    run_dir = str(tmp_path)
    doc = lab_ma1()
    _run.save(run_dir, assemble(doc, locks=[busy_lock('/dev/nst1')], extra_drives=['/dev/nst1']))
    out = _render.write_fleet(run_dir, ['lab-ma1'], doc['run'])
    with open(out['paths']['markdown'], encoding='utf-8') as handle:
        summary = handle.read()
    assert '| lab-ma1 | /dev/nst1 | **BUSY** |' in summary and 'BUSY: /dev/nst1 was not measured' in summary
    with open(out['paths']['html'], encoding='utf-8') as handle:
        assert 'BUSY: /dev/nst1 was not measured' in handle.read()
    suite = ET.parse(out['paths']['junit']).getroot().find('testsuite')
    errors = [(case.get('name'), case.find('error').get('type')) for case in suite.iter('testcase')
              if case.find('error') is not None]
    assert errors == [('/dev/nst1 (LTO-5)', 'BUSY')] and suite.get('errors') == '1'
    result = qualify_report.fleet_result(out)
    # qualify_fail_on_missing fails a host with a BUSY drive (roles/qualify/tasks/report.yml reads 'missing')
    assert result['missing'] == ['lab-ma1']
    assert [(b['host'], b['drive']) for b in result['busy']] == [('lab-ma1', '/dev/nst1')]
    assert [(f['drive'], f['class']) for f in result['fleet']] == [('/dev/nst0', 'STREAMING'), ('/dev/nst1', 'BUSY')]


def test_a_drive_that_hung_in_discovery_is_reported_hung_not_busy(validator):
    # the hung tool itself (a stuck mt) holds the node, so the lock finds the drive open: the hang is the news
    doc = lab_ma1()
    doc['drives'][0]['identity']['hung'] = 'mt -f /dev/nst0 status did not finish within 60 s'
    users = [{'pid': 901, 'command': 'mt', 'node': 'nst0'}]
    written = assemble(doc, locks=[busy_lock(reason='open', users=users)], writes=[])
    validator.validate(written)
    [drive] = written['drives']
    assert 'busy' not in drive and not drive['error'].startswith('BUSY')
    assert 'did not finish within 60 s' in drive['error']
