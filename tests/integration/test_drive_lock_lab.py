# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Two qualify runs on one drive at once (issue 28 item 5): the second gets BUSY, the first is unchanged.

Run A, the qualify playbook on lab-ma1, is started in the background; once its lease on the drive exists on
the guest (/run/tapeops-qualify/drive-<H_C_T_L>.json, taken right after discovery), run B, the same playbook
with another run directory, starts on the same guest. B must find the drive BUSY (locked by A: A's run id in
its document), write nothing and read no sources (its only drive is BUSY), leave A's lease alone, and fail the
run (qualify_fail_on_missing, the default) after its reports are written, with BUSY in summary.md and JUnit.
A must end with a verdict that is either not contended or marked contended, and its lease released.

Short profile (one block size, small steps, no file marks) on the one guest: about two minutes. A second
test holds the drive's node open (as a backup does) and asks tape_drive_lock for the lease: BUSY (open),
naming the holder, found through the guest's real sysfs and /proc (about 20 s).
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import time
import xml.etree.ElementTree as ET

import pytest

import host_schema

# untimed (pytest.ini): no rate, class or time a loaded machine could change
pytestmark = [pytest.mark.lab, pytest.mark.untimed]

HOST = 'lab-ma1'
LOCK_DIR = '/run/tapeops-qualify'
OVERRIDES = {'source_seconds': 20, 'step_mb': 16, 'step_seconds': 5, 'block_sizes': ['256K'],
             'patterns': ['random'], 'filemark_segments_mb': [], 'poll_seconds': 2}


def _leases(lab):
    """{file name: lease} of the drive leases on the guest."""
    proc = lab.run(HOST, 'for f in %s/drive-*.json; do [ -e "$f" ] && printf "%%s\\t" "$f" && cat "$f" && echo; '
                         'done; true' % LOCK_DIR)
    out = {}
    for line in proc.stdout.splitlines():
        if '\t' in line:
            name, text = line.split('\t', 1)
            out[os.path.basename(name)] = json.loads(text)
    return out


def _qualify(lab, run_dir):
    return lab.playbook('tapeops.qualify.qualify', limit=HOST, timeout=900, extra_vars={
        'qualify_run_dir': str(run_dir), 'qualify_profile': 'quick', 'qualify_profile_overrides': OVERRIDES})


def test_a_second_run_on_the_drive_gets_busy_and_the_first_is_unchanged(lab, tmp_path):
    if HOST not in lab.hosts:
        pytest.skip('the lab has no %s' % HOST)
    assert _leases(lab) == {}, 'a drive lease is left on %s from an earlier run: %s' % (HOST, _leases(lab))
    run_a, run_b = tmp_path / 'run-a', tmp_path / 'run-b'
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        first = pool.submit(_qualify, lab, run_a)
        try:
            deadline = time.monotonic() + 300
            leases = {}
            while not leases and not first.done() and time.monotonic() < deadline:
                time.sleep(1)
                leases = _leases(lab)
            assert leases, 'run A took no drive lease: %s' % (first.result().stdout[-3000:] if first.done() else '')
            assert [(v['run_id'], v['device']) for v in leases.values()] == [('run-a', '/dev/nst0')]
            second = _qualify(lab, run_b)
            a_running = not first.done()
            held_after_b = _leases(lab)
        finally:
            result_a = first.result()

    # B: the drive is BUSY, held by A; nothing measured; the run fails after writing its reports
    assert second.rc != 0 and 'No verdict for %s' % HOST in second.stdout, second.stdout[-3000:]
    doc_b = host_schema.load(os.path.join(str(run_b), 'hosts', HOST + '.json'))
    [drive_b] = doc_b['drives']
    assert doc_b['verdicts'] == [] and doc_b['source'] is None and drive_b['write_sweep'] is None
    assert drive_b['busy']['reason'] == 'locked' and drive_b['busy']['holder']['run_id'] == 'run-a'
    assert drive_b['error'].startswith('BUSY: /dev/nst0 was not measured and has no verdict: another qualify run '
                                       'holds it (run run-a from ')
    with open(os.path.join(str(run_b), 'summary.md'), encoding='utf-8') as handle:
        assert '| %s | /dev/nst0 | **BUSY** |' % HOST in handle.read()
    suite = ET.parse(os.path.join(str(run_b), 'junit.xml')).getroot().find('testsuite')
    assert [c.find('error').get('type') for c in suite.iter('testcase')] == ['BUSY']
    if a_running:
        # B's release left A's lease alone
        assert [v['run_id'] for v in held_after_b.values()] == ['run-a']

    # A: its verdict stands, not contended or marked so; its lease is released
    assert result_a.rc == 0, result_a.stdout[-3000:]
    doc_a = host_schema.load(os.path.join(str(run_a), 'hosts', HOST + '.json'))
    [verdict] = doc_a['verdicts']
    assert 'busy' not in doc_a['drives'][0] and doc_a['drives'][0]['write_sweep']['sweep']
    contended = [(doc_a['source'] or {}).get('contention'), doc_a['drives'][0]['write_sweep'].get('contention')]
    if verdict.get('contended'):
        assert any(f['id'] == 'contended' for f in verdict['findings'])
    else:
        assert not any(c and c['contended'] for c in contended), contended
    assert contended[1] is not None, 'the write sweep counted no contention (no st statistics on the guest?)'
    assert _leases(lab) == {}


def test_a_drive_a_process_holds_open_is_busy_naming_it(lab, tmp_path):
    """The drive's nodes found through the guest's real sysfs, the holder through its /proc; no lease left."""
    if HOST not in lab.hosts:
        pytest.skip('the lab has no %s' % HOST)
    out = tmp_path / 'lock.json'
    result = lab.playbook('tests/integration/targets/drive_lock/playbook.yml', limit=HOST, timeout=300,
                          extra_vars={'lock_out': str(out)})
    assert result.rc == 0, result.stdout[-3000:]
    data = json.loads(out.read_text())
    [lock] = data['result']['locks']
    assert data['result']['busy'] == ['/dev/nst0'] and data['result']['changed'] is False
    assert (lock['state'], lock['reason'], lock['holder']) == ('busy', 'open', None)
    assert [(u['pid'], u['node']) for u in lock['users']] == [(data['holder_pid'], 'nst0')]
    assert lock['address'] and _leases(lab) == {}
    # the holder is ended and the drive free again, as the test found it
    assert lab.run(HOST, 'test -e /run/tapeops-test-holder.pid || kill -0 %d' % data['holder_pid']).returncode != 0
