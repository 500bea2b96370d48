# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The run directory's store (_run): host file names, save, read, load_run, load_earlier.

The documents are the recorded lab run of 2026-11-24 (tests/unit/fixtures/lab_runs/20261124-quick-v2,
its README says how it was made), saved under other inventory names.
"""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils import _run
from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import _render
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _host

RECORDED = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures', 'lab_runs', '20261124-quick-v2')


def recorded(host, name='lab-ma1'):
    with open(os.path.join(RECORDED, name + '.json')) as handle:
        doc = json.load(handle)
    doc['host'] = host
    return doc


def test_a_safe_inventory_name_is_the_file_name():
    for host in ('lab-ma1', 'db1.example.com', 'MA_07', '10.0.0.7'):
        assert _run.file_stem(host) == host


def test_names_made_safe_keep_a_stable_suffix():
    # the suffix is the first 10 hex digits of the name's SHA-256: pinned, so a run directory written by one
    # version is found by the next
    assert _run.file_stem('a/b') == 'a_b~c14cddc033'
    assert _run.file_stem('[::1]:2222') == '1_2222~df445ab7ef'
    assert _run.file_stem('a_b/') == 'a_b~c3aaef9cc2'
    assert _run.host_page('a/b') == 'hosts/a_b~c14cddc033.html'


@pytest.mark.parametrize('host', ['..', '', '///', '._.'])
def test_a_name_with_nothing_usable_is_refused(host):
    with pytest.raises(_run.RunError, match='gives no usable file name: give the host an inventory name'):
        _run.file_stem(host)


def test_hosts_whose_names_sanitise_alike_keep_their_own_files(tmp_path):
    # before: 'a/b', 'a_b' and 'a_b/' all became hosts/a_b.json, and the last host's document replaced the others'
    hosts = ['a/b', 'a_b', 'a_b/', 'a:b']
    run_dir = str(tmp_path)
    paths = [_run.save(run_dir, recorded(host)) for host in hosts]
    assert len(set(paths)) == len(hosts)
    assert sorted(os.listdir(tmp_path / 'hosts')) == sorted(os.path.basename(p) for p in paths)
    docs = _run.load_run(run_dir, expected_hosts=hosts)
    assert [d['host'] for d in docs] == sorted(hosts)
    assert all(d['status'] == _run.STATUS_OK for d in docs)
    # and their pages: one per host
    out = _render.write_fleet(run_dir, hosts)
    assert len(out['paths']['host_pages']) == len(hosts)
    assert sorted(out['paths']['host_pages']) == sorted(os.path.join(run_dir, _run.host_page(h)) for h in hosts)


def test_save_then_read_gives_the_document_back(tmp_path):
    doc = recorded('lab-ma2', 'lab-ma2')
    path = _run.save(str(tmp_path), doc)
    assert path == str(tmp_path / 'hosts' / 'lab-ma2.json')
    assert _run.read(path) == _run.read(os.path.join(RECORDED, 'lab-ma2.json'))
    assert not [n for n in os.listdir(tmp_path / 'hosts') if n.startswith('.')]   # no temporary file left


def test_a_document_that_cannot_be_read_becomes_a_failed_entry(tmp_path):
    hosts = tmp_path / 'hosts'
    hosts.mkdir()
    (hosts / 'cut.json').write_text(json.dumps(recorded('cut'))[:300])
    (hosts / 'future.json').write_text(json.dumps(dict(recorded('future'), schema_version=99)))
    docs = dict((d['host'], d) for d in _run.load_run(str(tmp_path), expected_hosts=['cut', 'future', 'gone']))
    assert docs['cut']['status'] == _run.STATUS_FAILED and 'delete it and re-run this host' in docs['cut']['error']
    # the host named inside the file, and why: a newer collection wrote it
    assert docs['future']['status'] == _run.STATUS_FAILED and 'newer tapeops.qualify' in docs['future']['error']
    assert docs['gone']['status'] == _run.STATUS_MISSING and '-l gone' in docs['gone']['error']


def test_a_placeholder_is_the_document_the_assembly_writes_without_measurements():
    for status, error in ((_run.STATUS_FAILED, 'unreadable'), (_run.STATUS_MISSING, 'No result')):
        mine = _run.placeholder('ma9', status, error)
        theirs = _host.host_document('ma9', status, error=error).to_dict()
        mine.pop('generated_at')
        theirs.pop('generated_at')
        assert mine == theirs


def test_load_earlier_refuses_a_run_with_one_bad_document(tmp_path):
    _run.save(str(tmp_path), recorded('lab-ma1'))
    assert [d['host'] for d in _run.load_earlier(str(tmp_path))] == ['lab-ma1']
    (tmp_path / 'hosts' / 'lab-ma2.json').write_text('{')
    with pytest.raises(_run.RunError, match='1 of its 2 host document') as raised:
        _run.load_earlier(str(tmp_path), name='qualify_run_dir')
    assert raised.value.reason == 'compare_refused' and 'leave qualify_run_dir unset' in str(raised.value)
    with pytest.raises(_run.RunError, match='is not a run directory'):
        _run.load_earlier(str(tmp_path / 'nowhere'))
