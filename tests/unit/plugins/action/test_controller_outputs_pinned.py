# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the controller writes of recorded inputs, pinned byte for byte (spans the three controller actions).

The qualify_verdict, qualify_report and qualify_fixes_info actions run through run() on:

- tests/unit/fixtures/verdict_args/20261123-quick/: what lab run 20261123-quick handed qualify_verdict;
- tests/unit/fixtures/controller_outputs/inputs/: qualify_verdict's arguments for the cases the lab runs do not
  have (README.md there: BUSY, hung and unknown drives, a storage daemon's settings, no source, a failed host,
  contention, mechanics, the upgrade check with media, st's direct I/O, a NetBackup media server);
- tests/unit/fixtures/lab_runs/: the recorded host documents themselves, read and written again by the run
  directory's store (which must give them back as they are) and reported (20261124-quick-v2 compared with
  20261123-quick).

Each run's host documents (those qualify_verdict wrote), summary.md, junit.xml and the actions' results (actions.json) must be the files under
tests/unit/fixtures/controller_outputs/expected/, byte for byte, with the clock held at one time. A change that
means to change them writes them again with TAPEOPS_PIN_OUTPUTS=write and shows the difference in its commit.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest

from ansible_collections.tapeops.qualify.plugins.action import qualify_fixes_info, qualify_report, qualify_verdict
from ansible_collections.tapeops.qualify.plugins.module_utils import _run
from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import _charts, _report

from action_harness import FIXTURES, LAB_RUN_1123, LAB_RUN_V2, VERDICT_ARGS, run_action

PINNED = os.path.join(FIXTURES, 'controller_outputs')
INPUTS = os.path.join(PINNED, 'inputs')
EXPECTED = os.path.join(PINNED, 'expected')
WRITE = os.environ.get('TAPEOPS_PIN_OUTPUTS') == 'write'
NOW = '2026-11-27T10:00:00+00:00'
RUN = {'id': '20261127T100000Z', 'mode': 'qualify', 'profile': 'quick'}
# runs whose host documents qualify_verdict writes from its arguments, and runs whose documents are recorded
FROM_ARGS = {'verdict-args-20261123-quick': VERDICT_ARGS, 'cases': INPUTS}
FROM_DOCS = {'lab-run-20261123-quick': LAB_RUN_1123, 'lab-run-20261124-quick-v2': LAB_RUN_V2}
# the run each recorded run is compared with
COMPARE = {'lab-run-20261124-quick-v2': 'lab-run-20261123-quick'}


def hosts_of(directory):
    return sorted(name[:-5] for name in os.listdir(directory) if name.endswith('.json'))


def load(path):
    with open(path, encoding='utf-8') as handle:
        return json.load(handle)


def portable(value, run_dir, runs_dir):
    """``value`` (an action's result) with the run directories named as they are under expected/."""
    text = json.dumps(value, indent=1, sort_keys=True)
    return text.replace(run_dir, '<run>').replace(runs_dir, '<runs>') + '\n'


def report_and_fixes(run_dir, runs_dir, hosts, expected_hosts, compare_to=None):
    """{'report': qualify_report's result, 'fixes': {host: qualify_fixes_info's}} of a written run directory."""
    args = {'report_dir': run_dir, 'expected_hosts': expected_hosts, 'run': RUN}
    if compare_to:
        args['compare_to'] = compare_to
    failed, report = run_action(qualify_report, args)
    assert not failed, report['msg']
    fixes = {}
    for host in hosts:
        failed, fixes[host] = run_action(qualify_fixes_info, {'run_dir': run_dir, 'host': host})
        assert not failed, fixes[host]['msg']
    report = dict((k, v) for k, v in report.items() if k != 'docs')
    return {'report': report, 'fixes': fixes}


@pytest.fixture(scope='module')
def written(tmp_path_factory):
    """{run: {relative path: the text written}} of every run, with the clock held at NOW."""
    patch = pytest.MonkeyPatch()
    patch.setattr(_run, 'utc_now', lambda: NOW)
    patch.setattr(_charts, 'Charts', no_charts)     # the HTML is not pinned: no time spent drawing its charts
    runs_dir = str(tmp_path_factory.mktemp('runs'))
    out = {}
    try:
        for name, inputs in sorted(FROM_ARGS.items()):
            run_dir = os.path.join(runs_dir, name)
            actions = {'verdict': {}}
            hosts = hosts_of(inputs)
            for host in hosts:
                args = dict(load(os.path.join(inputs, host + '.json')), report_dir=run_dir)
                failed, result = run_action(qualify_verdict, args, {'inventory_hostname': host})
                assert not failed, result['msg']
                # the verdicts are the document's (pinned there), each with its drive as its id, their forecasts
                # without the trace
                assert result.pop('verdicts') == [qualify_verdict.result_verdict(v)
                                                  for v in load(result['path'])['verdicts']]
                actions['verdict'][host] = result
            actions.update(report_and_fixes(run_dir, runs_dir, hosts, hosts + ['never-reached']))
            out[name] = collect(run_dir, runs_dir, actions)
        for name, recorded in sorted(FROM_DOCS.items()):
            run_dir = os.path.join(runs_dir, name)
            hosts = hosts_of(recorded)
            for host in hosts:
                # the store reads a recorded document and writes it again as it was
                path = os.path.join(recorded, host + '.json')
                with open(_run.save(run_dir, _run.read(path)), encoding='utf-8') as handle:
                    assert handle.read() == json.dumps(load(path), indent=2, sort_keys=True) + '\n', path
            compare_to = os.path.join(runs_dir, COMPARE[name]) if name in COMPARE else None
            out[name] = collect(run_dir, runs_dir, report_and_fixes(run_dir, runs_dir, hosts, hosts, compare_to),
                                documents=False)
    finally:
        patch.undo()
    return out


def no_charts():
    raise _report.ReportError('charts are not drawn here')


def collect(run_dir, runs_dir, actions, documents=True):
    files = {'actions.json': portable(actions, run_dir, runs_dir)}
    for name in ('summary.md', 'junit.xml'):
        with open(os.path.join(run_dir, name), encoding='utf-8') as handle:
            files[name] = handle.read().replace(run_dir, '<run>').replace(runs_dir, '<runs>')
    for path in _run.host_files(run_dir) if documents else ():
        with open(path, encoding='utf-8') as handle:
            files['hosts/' + os.path.basename(path)] = handle.read()
    return files


def expected_files(run):
    root = os.path.join(EXPECTED, run)
    out = {}
    for directory, _dirs, names in os.walk(root):
        for name in names:
            path = os.path.join(directory, name)
            with open(path, encoding='utf-8') as handle:
                out[os.path.relpath(path, root)] = handle.read()
    return out


def write_expected(run, files):
    root = os.path.join(EXPECTED, run)
    shutil.rmtree(root, ignore_errors=True)
    for name, text in files.items():
        path = os.path.join(root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w', encoding='utf-8') as handle:
            handle.write(text)


@pytest.mark.parametrize('run', sorted(list(FROM_ARGS) + list(FROM_DOCS)))
def test_the_files_written_are_the_pinned_ones(written, run):
    files = written[run]
    if WRITE:
        write_expected(run, files)
    expected = expected_files(run)
    assert sorted(files) == sorted(expected)
    for name in sorted(files):
        assert files[name] == expected[name], '%s/%s differs from the pinned file' % (run, name)


def test_the_cases_reach_every_kind_of_outcome(written):
    """The inputs are worth pinning: BUSY, errors of each kind, a failed host, what-if, settings from the SD."""
    docs = [json.loads(text) for run in written.values() for name, text in run.items() if name.startswith('hosts/')]
    classes = set(v['class'] for d in docs for v in d['verdicts'])
    assert classes == {'STREAMING', 'SPEED-MATCHED', 'SHOE-SHINING', 'MISCONFIGURED'}
    errors = ' '.join(d['error'] or '' for d in docs) + ' '.join(e['error'] or '' for d in docs for e in d['drives'])
    for said in ('BUSY:', 'does not answer', 'Cannot tell the LTO generation', 'listed in tapeops_drives',
                 'No source read result', 'Discover tape drives'):
        assert said in errors
    assert any(v['what_if'] for d in docs for v in d['verdicts'])
    assert any(v.get('contended') for d in docs for v in d['verdicts'])
    assert any(d.get('media') and d['media']['status'] == 'ok' for d in docs)
    assert any((e.get('setting_sources') or {}).get('segment_size_mb', {}).get('from') == 'sd_config'
               for d in docs for e in d['drives'])
    assert any(f['id'] == 'st_direct_io' for d in docs for v in d['verdicts'] for f in v['fixes'])
    assert any(d.get('netbackup') and d['netbackup'].get('size_data_buffers') for d in docs)
