# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The qualify and upgrade_check playbooks on the lab fleet where they write nothing to tape.

Check mode measures and writes nothing; the upgrade check's what-if judges the measured source series through a
target drive the host does not have, without a tape write; a host whose source read fails is recorded with its
error. Each run is checked against the guests' own st write counters, and nothing asserted here depends on how
fast the machine is: the what-if class is held to the rule of docs/verdict.md applied to the verdict's own
numbers, and lab-ma3's source to its throttle from above. So ``tools/run test`` runs these beside the unit tests
(pytest.ini, ``untimed``); the qualify run whose classes are the lab's spread is test_qualify.py's.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

import pytest

from test_qualify import VERDICT_CASES, _doc

# untimed (pytest.ini): no rate, class or time a loaded machine could change
pytestmark = [pytest.mark.lab, pytest.mark.untimed]


def _write_counters(lab):
    out = {}
    for host in lab.hosts:
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


def test_observe_in_check_mode_starts_no_job_and_writes_nothing(lab, tmp_path):
    """The observe playbook with ``qualify_observe_run_jobs`` and a Bacula job named for every guest, in check mode:
    discovery reads, the windows and the job are only planned (bacula_job_run's check mode sends nothing to
    bconsole), no drive's st write counter moves and no run directory is written."""
    before = _write_counters(lab)
    run_dir = tmp_path / 'observe-check'
    result = lab.playbook('tapeops.qualify.observe', check=True, timeout=600, extra_vars={
        'qualify_run_dir': str(run_dir), 'qualify_observe_run_jobs': True, 'qualify_observe_seconds': 30,
        # bacula-console's own configuration (tools/run installs it): readable in the guests, which share the
        # machine's root file system; the job's name is never sent
        'tapeops_bacula': {'job': 'tapeops-check-mode', 'bconsole_config': '/etc/bacula/bconsole.conf'}})
    assert result.rc == 0, result.stdout[-4000:]
    for host in lab.hosts:                            # the job planned on every guest, not skipped
        assert '[%s] => (item=tapeops-check-mode)' % host in result.stdout, result.stdout[-4000:]
    assert _write_counters(lab) == before
    assert not run_dir.exists()


def _class_by_the_rule(num):
    """docs/verdict.md, "The classes", from a verdict's forecast numbers (no setting fixes)."""
    if num['backhitches_per_hour_now'] >= 60 or num['feed_now_mb_s'] < num['need_floor_mb_s']:
        return 'SHOE-SHINING'
    if num['feed_now_mb_s'] >= num['need_full_mb_s'] * 0.99:
        return 'STREAMING'
    return 'SPEED-MATCHED'


def test_upgrade_check_what_if_without_tape_writes(lab, tmp_path):
    before = _write_counters(lab)
    run_dir = tmp_path / 'upgrade'
    result = lab.playbook('tapeops.qualify.upgrade_check', extra_vars={
        'qualify_run_dir': str(run_dir), 'qualify_target_generation': 'LTO-9 FH', 'qualify_target_vendor': 'IBM',
        'qualify_verdict_options': {'tape_ratio': 1.0}, 'tapeops_sources': ['/srv/backup-src/large'],
        # 12 s per scaling step (1 and 2 streams), as test_lab_link's: the verdict's 10 per-second samples and more
        'qualify_profile_overrides': {'source_seconds': 12}},
        timeout=900)
    assert result.rc == 0, result.stdout[-4000:]
    assert _write_counters(lab) == before
    for host in lab.hosts:
        doc = _doc(str(run_dir), host)
        assert doc['run']['mode'] == 'upgrade_check'
        [entry] = doc['drives']
        assert entry['id'] == 'what-if LTO-9 FH' and entry['write_sweep'] is None
        [verdict] = doc['verdicts']
        assert verdict['drive'] == entry['id'] and verdict['what_if'] is True
        num = verdict['numbers']
        assert num['need_floor_mb_s'] == 177.0 and num['need_full_mb_s'] == 400.0
        # no drive path in a what-if: the class is the forecast of the measured source series
        # through the target drive, by the rule of docs/verdict.md, "The classes"
        assert num['drive_path_mb_s'] is None
        assert verdict['class'] == verdict['forecast']['now']['class'] == _class_by_the_rule(num), (
            verdict['reasons'])
        # a source read limit below the target's floor can only shoe-shine (lab-ma3: 3 MB/s)
        limit = lab.hostvars[host].get('tapeops_lab_spread', {}).get('source_rbps') or 0
        if limit and limit / 1e6 < 177.0:
            assert num['source_mean_mb_s'] <= limit / 1e6 * 1.1, (host, num)
            assert verdict['class'] == 'SHOE-SHINING', (host, verdict['reasons'])
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
    cases = ET.parse(os.path.join(str(run_dir), 'junit.xml')).getroot().findall(VERDICT_CASES)
    assert [(c.get('classname'), c.find('error').get('type')) for c in cases] == [('lab-ma1', 'FAILED')]
