# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The qualify role's variables on the real playbooks, without the lab: report-only runs.

What is real: ansible-playbook running tapeops.qualify.qualify and tapeops.qualify.upgrade_check
(the role's three entry points, its argument specs, the fleet report) over the host documents of a
recorded lab run (tests/unit/fixtures/lab_runs/20261123-quick: lab-ma1 STREAMING, lab-ma2
SPEED-MATCHED, lab-ma3 SHOE-SHINING). The inventory names the three hosts with a local
connection; a report-only run connects to none of them (its tasks run on the controller).

Pinned here: qualify_fail_on_failing_drives and qualify_failing_classes fail the run on the classes
they name; an earlier name of a variable (qualify_fail_on_shoe_shining, target_generation) fails the
run before it names a run, naming the variable to write instead; the upgrade check refuses a profile
other than what_if before it names a run; the what-if without a target drive fails before anything is
measured.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

# untimed (pytest.ini): no rate, class or time a loaded machine could change
pytestmark = pytest.mark.untimed

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RECORDED = os.path.join(ROOT, 'tests', 'unit', 'fixtures', 'lab_runs', '20261123-quick')
# the verdicts' JUnit suite (the health suite beside it names the same hosts)
VERDICT_CASES = "./testsuite[@name='tapeops.qualify.qualify']/testcase"
HOSTS = ('lab-ma1', 'lab-ma2', 'lab-ma3')


def _collections_path():
    for entry in sys.path:
        if os.path.isdir(os.path.join(entry, 'ansible_collections', 'tapeops', 'qualify')):
            return entry
    raise RuntimeError('tests/conftest.py did not make the collection importable')


@pytest.fixture
def run_dir(tmp_path):
    hosts = tmp_path / 'run' / 'hosts'
    hosts.mkdir(parents=True)
    for host in HOSTS:
        shutil.copy(os.path.join(RECORDED, host + '.json'), str(hosts / (host + '.json')))
    return tmp_path / 'run'


@pytest.fixture
def play(tmp_path):
    inventory = tmp_path / 'hosts.yml'
    inventory.write_text('all:\n  children:\n    media_agents:\n      hosts:\n'
                         + ''.join('        %s: {ansible_connection: local}\n' % h for h in HOSTS))

    def run(playbook, extra_vars, check=False):
        cmd = [os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), '-i', str(inventory),
               'tapeops.qualify.' + playbook, '-e', json.dumps(extra_vars)]
        if check:
            cmd.append('--check')
        env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=_collections_path(), ANSIBLE_NOCOLOR='1',
                   ANSIBLE_RETRY_FILES_ENABLED='false', ANSIBLE_PYTHON_INTERPRETER=sys.executable,
                   ANSIBLE_LOCALHOST_WARNING='false')
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, check=False,
                              cwd=str(tmp_path), stdin=subprocess.DEVNULL)
        return proc.returncode, proc.stdout + proc.stderr
    return run


def _failing_junit(run_dir):
    cases = ET.parse(str(run_dir / 'junit.xml')).getroot().findall(VERDICT_CASES)
    return sorted((c.get('classname'), c.find('failure').get('type')) for c in cases if c.find('failure') is not None)


def test_report_only_fails_on_failing_drives(play, run_dir):
    rc, out = play('qualify', {'qualify_run_dir': str(run_dir), 'qualify_report_only': True,
                               'qualify_fail_on_failing_drives': True, 'qualify_failing_classes': ['SHOE-SHINING']})
    assert rc == 2, out[-3000:]
    assert 'lab-ma3 /dev/nst0' in out and 'SHOE-SHINING' in out
    assert _failing_junit(run_dir) == [('lab-ma3', 'SHOE-SHINING')]


def test_a_failing_class_list_alone_fails_nothing(play, run_dir):
    rc, out = play('qualify', {'qualify_run_dir': str(run_dir), 'qualify_report_only': True,
                               'qualify_failing_classes': ['SPEED-MATCHED', 'SHOE-SHINING']})
    assert rc == 0, out[-3000:]
    # but the JUnit cases of those classes fail
    assert _failing_junit(run_dir) == [('lab-ma2', 'SPEED-MATCHED'), ('lab-ma3', 'SHOE-SHINING')]


@pytest.mark.parametrize('playbook', ['qualify', 'upgrade_check', 'observe'])
def test_a_report_only_run_includes_the_role_twice_not_once_a_host(play, run_dir, playbook):
    """The run and report entry points once each, for the first host; the measuring entry point for none
    (issue 27: at 1,000 hosts the role's per-host includes and argument checks were two thirds of the rebuild)."""
    rc, out = play(playbook, {'qualify_run_dir': str(run_dir), 'qualify_report_only': True,
                              'qualify_fail_on_missing': False})
    assert rc == 0, out[-3000:]
    assert [line for line in out.splitlines() if line.startswith('included: ')] == [
        'included: tapeops.qualify.qualify for lab-ma1'] * 2, out[-3000:]
    assert out.count("Validating arguments against arg spec") == 2, out[-3000:]
    # and the reports were written
    assert os.path.getsize(str(run_dir / 'summary.md')) > 100


def test_an_earlier_name_fails_the_run_before_it_is_named(play, run_dir, tmp_path):
    rc, out = play('qualify', {'qualify_run_dir': str(run_dir), 'qualify_report_only': True,
                               'qualify_fail_on_shoe_shining': True, 'qualify_fail_on_failing_drives': False})
    assert rc == 2, out[-3000:]
    assert ('qualify_fail_on_shoe_shining is set, but the qualify role does not read it: write '
            'qualify_fail_on_failing_drives instead.') in out.replace('\n', ' ')
    assert not (run_dir / 'summary.md').exists()
    rc, out = play('upgrade_check', {'qualify_run_dir': str(tmp_path / 'up'), 'target_generation': 'LTO-9 FH'})
    assert rc == 2, out[-3000:]
    assert ('target_generation is set, but the qualify role does not read it: write qualify_target_generation '
            'instead.') in out.replace('\n', ' ')
    assert not (tmp_path / 'up').exists()


def test_a_bad_class_is_refused_by_the_argument_spec(play, run_dir):
    rc, out = play('qualify', {'qualify_run_dir': str(run_dir), 'qualify_report_only': True,
                               'qualify_failing_classes': ['SHOESHINING']})
    assert rc == 2, out[-3000:]
    assert 'qualify_failing_classes' in out and 'SHOESHINING' in out
    assert not (run_dir / 'summary.md').exists()


def test_upgrade_check_refuses_another_profile_before_naming_a_run(play, tmp_path):
    rc, out = play('upgrade_check', {'qualify_run_dir': str(tmp_path / 'up'), 'qualify_profile': 'full',
                                     'qualify_target_generation': 'LTO-9 FH'})
    assert rc == 2, out[-3000:]
    assert 'upgrade_check runs the what_if profile, not full' in out
    assert '"source_seconds": 120' in out
    assert not (tmp_path / 'up').exists()


def test_the_what_if_needs_a_target_drive(play, tmp_path):
    rc, out = play('upgrade_check', {'qualify_run_dir': str(tmp_path / 'up')})
    assert rc == 2, out[-3000:]
    assert "The what_if profile needs the drive to evaluate, for example -e \"qualify_target_generation='LTO-9 FH'\"" \
        in out.replace('\n', ' ')
    assert not (tmp_path / 'up').exists()


def test_upgrade_check_report_only_names_the_run_what_if(play, run_dir):
    rc, out = play('upgrade_check', {'qualify_run_dir': str(run_dir), 'qualify_report_only': True,
                                     'qualify_target_generation': 'LTO-9 FH'})
    assert rc == 0, out[-3000:]
    junit = ET.parse(str(run_dir / 'junit.xml')).getroot()
    assert junit.find('./testsuite').get('name') == 'tapeops.qualify.upgrade_check'


@pytest.mark.lab
def test_what_if_mechanics_on_the_lab_put_the_cartridge_back(lab, tmp_path):
    """The what-if's opt-in mechanics through the role, on lab-ma1's changer and drive (about 2 min).

    qualify_profile_overrides {mechanics: true} times one cycle on the allowed cartridge loaded in the
    drive, forecasts the target drive, and leaves the cartridge where it was; the guest's own mtx
    status is read before and after.
    """
    host = 'lab-ma1'
    if host not in lab.hosts:
        pytest.skip('the lab has no %s' % host)
    loaded = lab.hostvars[host]['tapeops_lab_loaded_barcode']
    assert loaded in lab.hostvars[host]['tapeops_allowed_barcodes']
    changer = lab.hostvars[host]['tapeops_lab_changer']['sg']
    before = lab.run(host, 'mtx -f %s status' % changer, check=True).stdout
    run_dir = tmp_path / 'what-if'
    result = lab.playbook('tapeops.qualify.upgrade_check', limit=host, extra_vars={
        'qualify_run_dir': str(run_dir), 'qualify_target_generation': 'LTO-9 FH', 'qualify_media': False,
        'qualify_profile_overrides': {'source_seconds': 5, 'mechanics': True, 'mechanics_repeats': 1},
        'tapeops_sources': ['/srv/backup-src/large']}, timeout=900)
    assert result.rc == 0, result.stdout[-4000:] + result.stderr[-2000:]
    with open(str(run_dir / 'hosts' / (host + '.json')), encoding='utf-8') as handle:
        doc = json.load(handle)
    assert doc['run']['mode'] == 'upgrade_check' and doc['run']['profile'] == 'what_if'
    assert doc['run']['target_generation'] == 'LTO-9 FH'
    [mech] = doc['mechanics']
    assert mech['barcode'] == loaded and mech['error'] is None
    assert mech['restored'] is True and mech['final_location'] == {'where': 'drive', 'element': 0}
    assert sorted(op for op, row in mech['summary'].items() if row['n'] == 1) == sorted(mech['summary'])
    assert mech['filemarks']['written'] is True
    assert mech['forecast']['target']['label'] == 'LTO-9 FH'
    assert lab.run(host, 'mtx -f %s status' % changer, check=True).stdout == before
