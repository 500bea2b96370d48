# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every input is checked before any host is measured: the real playbooks, on the controller, without the lab.

What is real: ansible-playbook running tapeops.qualify.qualify (and upgrade_check) over an inventory of three
hosts with a local connection, measuring for real when an input passes. Each bad input of issue 28 (item 3)
must fail the run play, naming the variable, before the play that measures starts: no host's facts are
gathered, no tape or source is touched, no run directory is made. The unit tests
(tests/unit/plugins/module_utils/test_inputs.py) hold every bad value; these hold that the role checks them
in time, with the hosts' own inventory values.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

# untimed (pytest.ini): no rate, class or time a loaded machine could change
pytestmark = pytest.mark.untimed

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RECORDED = os.path.join(ROOT, 'tests', 'unit', 'fixtures', 'lab_runs', '20261124-quick-v2')
HOSTS = ('lab-ma1', 'lab-ma2', 'lab-ma3')
# the name of the first task of the measuring play (roles/qualify/tasks/main.yml): it must never run
MEASURE_PLAY = 'PLAY [Qualify the media agents]'
FIRST_MEASURING_TASK = 'Require the run directory'


def _collections_path():
    for entry in sys.path:
        if os.path.isdir(os.path.join(entry, 'ansible_collections', 'tapeops', 'qualify')):
            return entry
    raise RuntimeError('tests/conftest.py did not make the collection importable')


@pytest.fixture
def play(tmp_path):
    def run(extra_vars, host_vars=None, group_vars=None, playbook='qualify'):
        own = dict((h, dict({'ansible_connection': 'local'}, **(host_vars or {}).get(h, {}))) for h in HOSTS)
        hosts = ''.join('        %s: %s\n' % (h, json.dumps(own[h])) for h in HOSTS)
        inventory = tmp_path / 'hosts.yml'
        inventory.write_text('all:\n  children:\n    media_agents:\n      vars: %s\n      hosts:\n%s'
                             % (json.dumps(group_vars or {}), hosts))
        cmd = [os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), '-i', str(inventory),
               'tapeops.qualify.' + playbook, '-e', json.dumps(extra_vars)]
        env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=_collections_path(), ANSIBLE_NOCOLOR='1',
                   ANSIBLE_RETRY_FILES_ENABLED='false', ANSIBLE_PYTHON_INTERPRETER=sys.executable,
                   ANSIBLE_LOCALHOST_WARNING='false')
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, check=False,
                              cwd=str(tmp_path), stdin=subprocess.DEVNULL)
        return proc.returncode, proc.stdout + proc.stderr
    return run


def _flat(out):
    return ' '.join(out.split())


def assert_refused_before_measuring(rc, out, tmp_path, *says):
    assert rc == 2, out[-4000:]
    flat = _flat(out)
    assert 'Check every input before any host is measured' in out
    assert 'input(s) to fix before any host is measured' in flat, out[-4000:]
    for text in says:
        assert text in flat, (text, out[-4000:])
    # no host reached the measuring play, and nothing was written
    assert MEASURE_PLAY not in out and FIRST_MEASURING_TASK not in out, out[-4000:]
    assert not (tmp_path / 'run').exists() and not (tmp_path / 'reports').exists()
    assert 'Traceback' not in out


@pytest.mark.parametrize('overrides, says', [
    ({'source_secs': 60}, 'qualify_profile_overrides.source_secs is not a profile key: did you mean source_seconds?'),
    ({'source_seconds': 'abc'}, 'qualify_profile_overrides.source_seconds is "abc": write a whole number of seconds'),
    ({'source_seconds': 0}, 'qualify_profile_overrides.source_seconds is 0'),
    ({'source_seconds': 1e12}, 'qualify_profile_overrides.source_seconds is 1000000000000.0'),
    ({'poll_seconds': 0}, 'qualify_profile_overrides.poll_seconds is 0'),
    ({'step_mb': -1}, 'qualify_profile_overrides.step_mb is -1'),
    ({'block_sizes': ['256K', 'x']}, 'qualify_profile_overrides.block_sizes[1] is "x"'),
])
def test_a_bad_override_fails_the_run_play_before_any_host_is_measured(play, tmp_path, overrides, says):
    rc, out = play({'qualify_run_dir': str(tmp_path / 'run'), 'qualify_profile_overrides': overrides,
                    'tapeops_sources': [str(tmp_path)]})
    assert_refused_before_measuring(rc, out, tmp_path, says)


def test_the_hosts_own_backup_and_drive_settings_are_checked(play, tmp_path):
    rc, out = play({'qualify_report_base': str(tmp_path / 'reports')},
                   group_vars={'tapeops_backup': {'software': 'bacula', 'block_size_bytes': 262145}},
                   host_vars={'lab-ma2': {'tapeops_backup': {'block_size_bytes': '256K'},
                                          'tapeops_drives': [{'nst': '/dev/nst0', 'block_size_bytes': -65536}]}})
    assert_refused_before_measuring(
        rc, out, tmp_path,
        'tapeops_backup.block_size_bytes is 262145: write a multiple of 4 bytes from 4096 (4 KiB) to 16777216 '
        '(16 MiB), for example 262144 (hosts lab-ma1, lab-ma3)',
        'tapeops_backup.block_size_bytes is "256K": write the block size in bytes, 262144 (host lab-ma2)',
        'tapeops_drives[0].block_size_bytes is -65536')


def test_a_run_directory_or_report_base_that_is_a_file_is_refused_by_its_own_name(play, tmp_path):
    blocker = tmp_path / 'file'
    blocker.write_text('')
    rc, out = play({'qualify_run_dir': str(blocker / 'run')})
    assert_refused_before_measuring(rc, out, tmp_path, 'qualify_run_dir=%s/run cannot be created: %s is a file'
                                    % (blocker, blocker))
    rc, out = play({'qualify_report_base': str(blocker)})
    assert_refused_before_measuring(rc, out, tmp_path, 'qualify_report_base=%s is a file, not a directory' % blocker)
    assert 'qualify_report_dir' not in out


def test_a_truncated_earlier_run_is_refused_before_any_host_is_measured(play, tmp_path):
    earlier = tmp_path / 'earlier' / 'hosts'
    earlier.mkdir(parents=True)
    for host in HOSTS:
        shutil.copy(os.path.join(RECORDED, host + '.json'), str(earlier / (host + '.json')))
    text = (earlier / 'lab-ma1.json').read_text()
    (earlier / 'lab-ma1.json').write_text(text[:500])
    rc, out = play({'qualify_run_dir': str(tmp_path / 'run'), 'qualify_compare_to': str(tmp_path / 'earlier'),
                    'qualify_fail_on_regression': True})
    assert_refused_before_measuring(
        rc, out, tmp_path, 'qualify_compare_to=%s is refused as a comparison: 1 of its 3 host document(s) cannot be '
        'read' % (tmp_path / 'earlier'), 'lab-ma1.json cannot be read as JSON (truncated or damaged)')


def test_the_upgrade_check_checks_its_inputs_too(play, tmp_path):
    rc, out = play({'qualify_run_dir': str(tmp_path / 'run'), 'qualify_target_generation': 'LTO-9 FH',
                    'qualify_profile_overrides': {'mechanics_repeat': 3}}, playbook='upgrade_check')
    assert_refused_before_measuring(
        rc, out, tmp_path, 'qualify_profile_overrides.mechanics_repeat is not a profile key: did you mean '
        'mechanics_repeats?')
