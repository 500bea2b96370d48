# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The qualify playbook end to end on the lab fleet.

What is real: the guests' st/sg/ch devices (tgt), the tape writes on the
lab's allowed scratch cartridges, fio reading the guests' source trees, the
SSH connections, the reports on the controller.

The honest equivalent of "a throttled source shoe-shines, an unthrottled one
does not": the lab's drives have no physics (tgt writes to a file, there is
no speed matching), and their real native speeds (LTO-5 140 MB/s, LTO-6 160)
are far above anything the lab's emulated path carries. So the test

- sets the drives' speed-matching floor through the inventory
  (``tapeops_drives[].speed_floor_mb_s``, the same override a user has for a
  drive whose floor no source gives) to FLOOR_MB_S, and the tape ratio to 1.0;
- throttles the source disk of lab-ma2 only, with the guest kernel's cgroup v2
  ``io.max`` (rbps on the ubd device that holds /srv/backup-src): every module
  on lab-ma2 runs through an interpreter wrapper that enters that cgroup
  first. lab-ma1 runs through the same wrapper into an unthrottled cgroup.

Then lab-ma2 must come out SHOE-SHINING and lab-ma1 must not, from measured
numbers. The floor is low (1 MB/s) on purpose: the verdict judges the 5th
percentile of per-second rates, and an unthrottled guest on a busy 2-core
machine has seconds where it reads next to nothing (seen: a 0.0 MB/s second
in a 92 MB/s mean run); the throttle sits 4x below the floor. An extra, unreachable host checks that one dead host loses no one
else's results.

Run on a private lab (so other test sessions on the shared one are not
disturbed): TAPEOPS_LAB_DIR=/var/tmp/tapeops-lab-verdict TAPEOPS_LAB_PORT_BASE=2260.
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET

import pytest

pytestmark = pytest.mark.lab

FLOOR_MB_S = 1.0
THROTTLE_BYTES_S = 250000             # 0.25 MB/s on lab-ma2's source disk
CGROUP = '/sys/fs/cgroup/tapeops-verdict'
WRAPPER = '/run/tapeops-verdict/python3'


def _setup_throttle(lab, host, rbps):
    limit = 'rbps=%d' % rbps if rbps else 'rbps=max'
    script = r'''set -e
mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup
grep -qw io /sys/fs/cgroup/cgroup.subtree_control || echo +io > /sys/fs/cgroup/cgroup.subtree_control
mkdir -p {cg}
dev=$(cat /sys/block/$(basename $(findmnt -no SOURCE /srv/backup-src))/dev)
echo "$dev {limit}" > {cg}/io.max
mkdir -p $(dirname {wrapper})
printf '#!/bin/sh\necho $$ > {cg}/cgroup.procs\nexec /usr/bin/python3 "$@"\n' > {wrapper}
chmod 755 {wrapper}
sync; echo 3 > /proc/sys/vm/drop_caches
cat {cg}/io.max
'''.format(cg=CGROUP, limit=limit, wrapper=WRAPPER)
    proc = lab.run(host, script, timeout=60)
    assert proc.returncode == 0, 'cannot set up the cgroup io.max throttle on %s: %s' % (host, proc.stderr)
    return proc.stdout.strip()


def _teardown_throttle(lab, host):
    lab.run(host, 'for p in $(cat %s/cgroup.procs 2>/dev/null); do echo $p > /sys/fs/cgroup/cgroup.procs; done; '
                  'rmdir %s 2>/dev/null; rm -rf /run/tapeops-verdict' % (CGROUP, CGROUP), timeout=60)


@pytest.fixture(scope='module')
def qualified(lab, tmp_path_factory):
    """One qualify run over the lab fleet plus an unreachable host."""
    if not {'lab-ma1', 'lab-ma2'} <= set(lab.hosts):
        pytest.fail('the lab must have lab-ma1 and lab-ma2, it has %s' % lab.hosts)
    base = tmp_path_factory.mktemp('qualify')
    extra_inventory = base / 'gone.yml'
    # Host vars here beat the lab's group_vars (the interpreter), and only apply to the guests.
    extra_inventory.write_text(
        'all:\n  children:\n    media_agents:\n      hosts:\n'
        '        lab-ma1: {ansible_python_interpreter: %s}\n'
        '        lab-ma2: {ansible_python_interpreter: %s}\n'
        '        lab-gone: {ansible_host: 127.0.0.1, ansible_port: 9, ansible_connection: ansible.builtin.ssh}\n'
        % (WRAPPER, WRAPPER))
    run_dir = base / 'run'
    throttles = {'lab-ma1': _setup_throttle(lab, 'lab-ma1', None),
                 'lab-ma2': _setup_throttle(lab, 'lab-ma2', THROTTLE_BYTES_S)}
    try:
        result = lab.playbook('tapeops.qualify.qualify', extra_vars={
            'qualify_run_dir': str(run_dir),
            'qualify_profile': 'quick',
            'qualify_profile_overrides': {'source_seconds': 30, 'step_mb': 64, 'step_seconds': 5,
                                          'block_sizes': ['64K', '256K', '1M'], 'patterns': ['random', '2:1'],
                                          'filemark_segments_mb': [16], 'filemark_payload_mb': 64,
                                          'poll_seconds': 3},
            'tapeops_drives': [{'nst': '/dev/nst0', 'speed_floor_mb_s': FLOOR_MB_S}],
            # the large files only: this test is about the throttle, not about small files
            'tapeops_sources': ['/srv/backup-src/large'],
            'qualify_verdict_options': {'tape_ratio': 1.0},
        }, args=['-i', str(extra_inventory)], timeout=900)
    finally:
        for host in ('lab-ma1', 'lab-ma2'):
            _teardown_throttle(lab, host)
    return {'result': result, 'run_dir': str(run_dir), 'throttles': throttles, 'lab': lab}


def _doc(run_dir, host):
    with open(os.path.join(run_dir, 'hosts', host + '.json'), encoding='utf-8') as handle:
        return json.load(handle)


def test_all_four_report_kinds_written(qualified):
    run_dir, result = qualified['run_dir'], qualified['result']
    # rc 4: lab-gone is unreachable (the play's last task also fails because lab-gone has no
    # verdict, after every report was written); nothing else may fail
    assert result.rc == 4, result.stdout[-4000:] + result.stderr[-2000:]
    assert 'No verdict for lab-gone' in result.stdout
    recap = dict((line.split()[0], line) for line in result.stdout.split('PLAY RECAP')[-1].splitlines()
                 if ':' in line and 'ok=' in line)
    for host in ('lab-ma1', 'lab-ma2'):
        assert 'rescued=0' in recap[host], recap[host]
    assert 'unreachable=1' in recap['lab-gone']
    # the only failures: lab-gone unreachable, and the last task saying lab-gone has no verdict
    fatal = [line for line in result.stdout.splitlines() if line.startswith('fatal: [')]
    assert fatal and all(('lab-gone' in line and 'UNREACHABLE' in line) or 'No verdict for lab-gone' in line
                         for line in fatal), fatal
    for name in ('hosts/lab-ma1.json', 'hosts/lab-ma2.json', 'summary.md', 'report.html', 'junit.xml'):
        path = os.path.join(run_dir, name)
        assert os.path.getsize(path) > 100, '%s missing or empty\n%s' % (name, result.stdout[-4000:])
    page = open(os.path.join(run_dir, 'report.html'), encoding='utf-8').read()
    assert page.count('<section class="drive"') == 2
    assert page.count('<svg') >= 4


def test_throttled_source_shoe_shines_unthrottled_does_not(qualified):
    run_dir = qualified['run_dir']
    assert 'rbps=250000' in qualified['throttles']['lab-ma2']
    fast = _doc(run_dir, 'lab-ma1')['drives'][0]['verdict']
    slow = _doc(run_dir, 'lab-ma2')['drives'][0]['verdict']
    assert slow['numbers']['need_floor_mb_s'] == FLOOR_MB_S == fast['numbers']['need_floor_mb_s']
    # the measured numbers, not just the labels
    assert slow['numbers']['source_sustained_mb_s'] <= THROTTLE_BYTES_S / 1e6 * 1.25
    assert slow['class'] == 'SHOE-SHINING' and slow['would_shoe_shine'] is True
    series = _doc(run_dir, 'lab-ma1')['source']['aggregate']['series_mb_s']
    assert fast['numbers']['source_sustained_mb_s'] >= FLOOR_MB_S, 'unthrottled per-second rates: %s' % series
    assert fast['class'] != 'SHOE-SHINING' and fast['would_shoe_shine'] is False


def test_drives_identified_and_written_on_scratch_media(qualified):
    run_dir = qualified['run_dir']
    labels = {h: _doc(run_dir, h)['drives'][0]['label'] for h in ('lab-ma1', 'lab-ma2')}
    assert labels == {'lab-ma1': 'LTO-5', 'lab-ma2': 'LTO-6'}
    for host in ('lab-ma1', 'lab-ma2'):
        entry = _doc(run_dir, host)['drives'][0]
        if entry['write_benchmark'] is None:
            pytest.fail('%s wrote no sweep: %s' % (host, entry.get('write_note')))
        rates = [r['mb_s'] for r in entry['write_benchmark']['sweep'] if r.get('mb_s')]
        assert rates and min(rates) > 0
        assert entry['verdict']['numbers']['drive_path_mb_s'] > 0


def test_unreachable_host_is_reported_and_loses_nobody_else(qualified):
    run_dir = qualified['run_dir']
    assert not os.path.exists(os.path.join(run_dir, 'hosts', 'lab-gone.json'))
    cases = ET.parse(os.path.join(run_dir, 'junit.xml')).getroot().findall('./testsuite/testcase')
    by_host = {c.get('classname'): c for c in cases}
    assert set(by_host) == {'lab-ma1', 'lab-ma2', 'lab-gone'}
    assert by_host['lab-gone'].find('error').get('type') == 'MISSING'
    assert by_host['lab-ma2'].find('failure').get('type') == 'SHOE-SHINING'
    md = open(os.path.join(run_dir, 'summary.md'), encoding='utf-8').read()
    assert '| lab-gone | - | **MISSING** |' in md


def test_report_only_rerun_fails_on_shoe_shining(qualified):
    lab, run_dir = qualified['lab'], qualified['run_dir']
    before = os.path.getmtime(os.path.join(run_dir, 'summary.md'))
    result = lab.playbook('tapeops.qualify.qualify', extra_vars={
        'qualify_run_dir': run_dir, 'qualify_report_only': True, 'qualify_fail_on_shoe_shining': True,
        'qualify_fail_on': ['SHOE-SHINING']}, timeout=300)
    assert result.rc == 2, result.stdout[-3000:]
    assert 'lab-ma2 /dev/nst0' in result.stdout and 'SHOE-SHINING' in result.stdout
    assert os.path.getmtime(os.path.join(run_dir, 'summary.md')) >= before
    # the re-run measured nothing: the host documents are the first run's
    assert _doc(run_dir, 'lab-ma2')['drives'][0]['verdict']['class'] == 'SHOE-SHINING'


def _write_counters(lab):
    out = {}
    for host in ('lab-ma1', 'lab-ma2'):
        proc = lab.run(host, 'for f in write_cnt write_byte_cnt; do cat /sys/class/scsi_tape/nst0/stats/$f; echo; done',
                       timeout=60)
        assert proc.returncode == 0, proc.stderr
        out[host] = proc.stdout.split()
    return out


def test_check_mode_measures_and_writes_nothing(lab, tmp_path):
    before = _write_counters(lab)
    run_dir = tmp_path / 'check-run'
    result = lab.playbook('tapeops.qualify.qualify', check=True, extra_vars={'qualify_run_dir': str(run_dir)},
                          timeout=600)
    assert result.rc == 0, result.stdout[-4000:]
    assert _write_counters(lab) == before          # not one block reached a drive
    assert not run_dir.exists()                    # and nothing was written on the controller


def test_upgrade_check_what_if_without_tape_writes(lab, tmp_path):
    before = _write_counters(lab)
    run_dir = tmp_path / 'upgrade'
    result = lab.playbook('tapeops.qualify.upgrade_check', extra_vars={
        'qualify_run_dir': str(run_dir), 'target_generation': 'LTO-9 FH', 'target_vendor': 'IBM',
        'qualify_verdict_options': {'tape_ratio': 1.0}, 'tapeops_sources': ['/srv/backup-src/large']},
        timeout=900)
    assert result.rc == 0, result.stdout[-4000:]
    assert _write_counters(lab) == before
    for host in ('lab-ma1', 'lab-ma2'):
        doc = _doc(str(run_dir), host)
        assert doc['run']['mode'] == 'upgrade_check'
        [entry] = doc['drives']
        assert entry['id'] == 'what-if LTO-9 FH' and entry['write_benchmark'] is None
        verdict = entry['verdict']
        assert verdict['what_if'] is True
        assert verdict['numbers']['need_floor_mb_s'] == 177.0 and verdict['numbers']['need_full_mb_s'] == 400.0
        # no drive path in a what-if: the class follows the measured sustained source rate alone
        sustained = verdict['numbers']['source_sustained_mb_s']
        expected = 'SHOE-SHINING' if sustained < 177.0 else 'SPEED-MATCHED' if sustained < 400.0 else 'STREAMING'
        assert verdict['class'] == expected, verdict['reasons']
        assert verdict['numbers']['drive_path_mb_s'] is None
    junit = ET.parse(os.path.join(str(run_dir), 'junit.xml')).getroot()
    assert junit.find('./testsuite').get('name') == 'tapeops.qualify.upgrade_check'


def test_failing_host_is_recorded_with_its_error(lab, tmp_path):
    run_dir = tmp_path / 'failing'
    result = lab.playbook('tapeops.qualify.qualify', limit='lab-ma1', extra_vars={
        'qualify_run_dir': str(run_dir), 'qualify_tape_writes': False,
        'tapeops_sources': ['relative/not/allowed']}, timeout=600)
    # the host is rescued (its failure recorded), the play fails at its end: no verdict for lab-ma1
    assert result.rc == 2, result.stdout[-4000:]
    assert 'No verdict for lab-ma1' in result.stdout
    doc = _doc(str(run_dir), 'lab-ma1')
    assert doc['status'] == 'failed'
    assert 'source read test failed' in doc['error'] and "'relative/not/allowed' is not absolute" in doc['error']
    cases = ET.parse(os.path.join(str(run_dir), 'junit.xml')).getroot().findall('./testsuite/testcase')
    assert [(c.get('classname'), c.find('error').get('type')) for c in cases] == [('lab-ma1', 'FAILED')]
