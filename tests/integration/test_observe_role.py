# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The observe playbook's plays and the role's observe entry point, without the lab: report-only runs and refusals.

What is real: ansible-playbook running tapeops.qualify.observe (the role's run, observe and report entry points,
its argument specs, the fleet report) over an observe run's host documents the collection writes of the lab's
recorded windows (tests/unit/fixtures/observe/: lab-ma1 STREAMING, lab-ma3 SHOE-SHINING during a Bacula job) and
of what the lab's discovery found (tests/unit/fixtures/verdict_args/20261123-quick/). The inventory names the
hosts with a local connection; a report-only run connects to none of them, and the refusals stop before any
task reaches a host's drives.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils import _run
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _host

# untimed (pytest.ini): no rate, class or time a loaded machine could change
pytestmark = pytest.mark.untimed

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, 'tests', 'unit', 'fixtures')
WINDOWS = {'lab-ma1': 'observed_job__lab-ma1', 'lab-ma3': 'observed_bacula_job__lab-ma3'}
RUN = {'id': 'observe-20261127T220000Z', 'mode': 'observe', 'profile': 'observe'}


def _load(*path):
    with open(os.path.join(FIXTURES, *path), encoding='utf-8') as handle:
        return json.load(handle)


def _collections_path():
    for entry in sys.path:
        if os.path.isdir(os.path.join(entry, 'ansible_collections', 'tapeops', 'qualify')):
            return entry
    raise RuntimeError('tests/conftest.py did not make the collection importable')


@pytest.fixture
def run_dir(tmp_path):
    """An observe run's directory: the two hosts' documents as qualify_verdict writes them."""
    out = tmp_path / 'observe-run'
    for host, case in sorted(WINDOWS.items()):
        given = _load('verdict_args', '20261123-quick', host + '.json')
        recorded = _load('observe', case + '.json')
        doc = _host.observe(host, drives_info=given['drives'], observed=[recorded['window']],
                            jobs=[recorded['job']] if 'job' in recorded else [],
                            drive_settings=given['drive_settings'], run=RUN, host_facts=given['host_facts'])
        _run.save(str(out), doc.to_dict())
    return out


@pytest.fixture
def play(tmp_path):
    inventory = tmp_path / 'hosts.yml'
    inventory.write_text('all:\n  children:\n    media_agents:\n      hosts:\n'
                         + ''.join('        %s: {ansible_connection: local}\n' % h for h in sorted(WINDOWS)))

    def run(playbook, extra_vars):
        cmd = [os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), '-i', str(inventory),
               'tapeops.qualify.' + playbook, '-e', json.dumps(extra_vars)]
        env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=_collections_path(), ANSIBLE_NOCOLOR='1',
                   ANSIBLE_RETRY_FILES_ENABLED='false', ANSIBLE_PYTHON_INTERPRETER=sys.executable,
                   ANSIBLE_LOCALHOST_WARNING='false')
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, check=False,
                              cwd=str(tmp_path), stdin=subprocess.DEVNULL)
        return proc.returncode, proc.stdout + proc.stderr
    return run


def test_report_only_writes_the_observe_run_s_reports(play, run_dir):
    rc, out = play('observe', {'qualify_run_dir': str(run_dir), 'qualify_report_only': True})
    assert rc == 0, out[-3000:]
    junit = ET.parse(str(run_dir / 'junit.xml')).getroot()
    suite = junit.find('./testsuite')
    assert suite.get('name') == 'tapeops.qualify.observe' and suite.get('failures') == '1'
    text = (run_dir / 'summary.md').read_text()
    assert '**2 host(s), 2 drive(s) watched:** SHOE-SHINING 1, STREAMING 1' in text
    assert 'mode observe, profile observe' in text
    assert 'lab-ma3 /dev/nst0: SHOE-SHINING' in out


def test_report_only_fails_on_an_observed_failing_class_when_asked(play, run_dir):
    rc, out = play('observe', {'qualify_run_dir': str(run_dir), 'qualify_report_only': True,
                               'qualify_fail_on_failing_drives': True})
    assert rc == 2, out[-3000:]
    assert '1 drive(s) are SHOE-SHINING or MISCONFIGURED' in out


def test_observe_refuses_another_profile_before_naming_a_run(play, tmp_path):
    rc, out = play('observe', {'qualify_run_dir': str(tmp_path / 'obs'), 'qualify_profile': 'quick'})
    assert rc == 2, out[-3000:]
    assert 'observe runs the observe profile, not quick' in out
    assert not (tmp_path / 'obs').exists()


def test_a_window_out_of_bounds_is_refused_before_any_host_is_watched(play, tmp_path):
    rc, out = play('observe', {'qualify_run_dir': str(tmp_path / 'obs'), 'qualify_observe_seconds': 0,
                               'qualify_observe_until_idle': -5})
    assert rc == 2, out[-3000:]
    said = out.replace('\n', ' ')
    assert 'qualify_observe_seconds is 0: write a whole number of seconds from 1 to 172800' in said
    assert 'qualify_observe_until_idle is -5: write a whole number of seconds from 0 to 172800' in said
    assert not (tmp_path / 'obs').exists()


def test_the_main_entry_point_refuses_the_observe_profile(play, tmp_path):
    rc, out = play('qualify', {'qualify_run_dir': str(tmp_path / 'q'), 'qualify_profile': 'observe'})
    assert rc == 2, out[-3000:]
    assert 'The observe profile watches the drives while the backups run' in out.replace('\n', ' ')
    assert not (tmp_path / 'q' / 'hosts').exists()
