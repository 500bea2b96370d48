# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""_run.read_observed: a host's document of an observe run, read for a later qualify run's tape ratio.

The observe run's document is the one qualify_verdict writes of lab-ma3's recorded Bacula window
(tests/unit/fixtures/observe/observed_bacula_job__lab-ma3.json, judged by ``_host.observe`` with the guest's
drive settings of tests/unit/fixtures/verdict_args/20261123-quick); the qualify run's is the recorded lab run of
2026-11-24 (tests/unit/fixtures/lab_runs/20261124-quick-v2). Each way there is no such document has its reason.
"""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils import _run
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _host

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures')
RUN = {'id': 'observe-20261127T220000Z', 'mode': 'observe', 'profile': 'observe'}


def load(*path):
    with open(os.path.join(FIXTURES, *path), encoding='utf-8') as handle:
        return json.load(handle)


def observe_run(run_dir, host='lab-ma3'):
    """An observe run's directory holding ``host``'s document of lab-ma3's recorded Bacula window."""
    given = load('verdict_args', '20261123-quick', 'lab-ma3.json')
    window = load('observe', 'observed_bacula_job__lab-ma3.json')['window']
    doc = _host.observe(host, drives_info=given['drives'], observed=[window], drive_settings=given['drive_settings'],
                        run=RUN)
    _run.save(str(run_dir), doc)
    return str(run_dir)


def refused(run_dir, host='lab-ma3'):
    with pytest.raises(_run.RunError) as caught:
        _run.read_observed(str(run_dir), host)
    return caught.value


def test_an_observe_run_s_document_of_the_host_is_read_as_its_record(tmp_path):
    run_dir = observe_run(tmp_path / 'observe')
    report = _run.read_observed(run_dir, 'lab-ma3')
    assert report.observe_run and report.run == RUN and report.host == 'lab-ma3'
    [seen] = report.observed
    assert (seen.drive, seen.status, seen.observed['tape_ratio'], seen.observed['tape_ratio_source']) == (
        '/dev/nst0', 'judged', 1.213, 'drive')


def test_each_way_there_is_no_observe_document_has_its_reason_and_path(tmp_path):
    missing = tmp_path / 'nowhere'
    error = refused(missing)
    assert (error.reason, error.path) == ('no_directory', str(missing))
    a_file = tmp_path / 'file'
    a_file.write_text('')
    assert refused(a_file).reason == 'not_a_directory'
    empty = tmp_path / 'empty'
    empty.mkdir()
    assert (refused(empty).reason, refused(empty).path) == ('not_a_run', str(empty))
    run_dir = observe_run(tmp_path / 'observe')
    error = refused(run_dir, 'lab-ma1')
    assert (error.reason, error.path) == ('no_document', _run.host_json_path(run_dir, 'lab-ma1'))
    # a qualify run's document: it has verdicts and no observed drives
    qualify = tmp_path / 'qualify'
    _run.save(str(qualify), load('lab_runs', '20261124-quick-v2', 'lab-ma3.json'))
    error = refused(qualify)
    assert (error.reason, error.path) == ('not_observe', _run.host_json_path(str(qualify), 'lab-ma3'))


def test_a_document_that_cannot_be_read_keeps_read_report_s_reason_and_names_the_file(tmp_path):
    run_dir = observe_run(tmp_path / 'observe')
    path = _run.host_json_path(run_dir, 'lab-ma3')
    with open(path, encoding='utf-8') as handle:
        text = handle.read()
    with open(path, 'w', encoding='utf-8') as handle:
        handle.write(text[:len(text) // 2])
    error = refused(run_dir)
    assert (error.reason, error.path) == ('unreadable', path) and 'delete it and re-run this host' in str(error)
    with open(path, 'w', encoding='utf-8') as handle:
        json.dump(dict(json.loads(text), schema_version=1), handle)
    error = refused(run_dir)
    assert (error.reason, error.path) == ('schema', path) and 'schema_version 2' in str(error)
