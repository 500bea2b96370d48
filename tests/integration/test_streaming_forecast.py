# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""tapeops.qualify.streaming_forecast: its documented EXAMPLES, run as they are with ansible-playbook.

The tasks are taken from the module's EXAMPLES block (so the documentation cannot rot), the
results are written to a JSON file by the playbook and checked here, in normal and check mode.
"""

import json
import os
import re
import subprocess
import sys

import pytest
import yaml

from ansible_collections.tapeops.qualify.plugins.modules import streaming_forecast

BIN = os.path.dirname(sys.executable)
RECAP = re.compile(r'^(\S+)\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)', re.M)


def _collections_path():
    for entry in sys.path:
        if os.path.isdir(os.path.join(entry, 'ansible_collections', 'tapeops', 'qualify')):
            return entry
    raise RuntimeError('tests/conftest.py did not make the collection importable')


def run_playbook(playbook, extra_vars, check=False, diff=True):
    """Run ansible-playbook on localhost; return (rc, output, {host: {ok, changed, failed}})."""
    cmd = [os.path.join(BIN, 'ansible-playbook'), playbook, '-i', 'localhost,', '-e', json.dumps(extra_vars)]
    if check:
        cmd.append('--check')
    if diff:
        cmd.append('--diff')
    env = dict(os.environ)
    env.update({
        'ANSIBLE_COLLECTIONS_PATH': _collections_path(),
        'ANSIBLE_NOCOLOR': '1',
        'ANSIBLE_LOCALHOST_WARNING': 'false',
        'ANSIBLE_PYTHON_INTERPRETER': sys.executable,
        'ANSIBLE_RETRY_FILES_ENABLED': 'false',
    })
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, check=False)
    out = proc.stdout + proc.stderr
    recap = {m.group(1): {'ok': int(m.group(2)), 'changed': int(m.group(3)), 'failed': int(m.group(5))}
             for m in RECAP.finditer(out)}
    return proc.returncode, out, recap


# A measured per-second series for the second example: 90 s of a source that reads ~230 MB/s
# with a 3-second stall every 30 s (the shape of a tree with a directory of small files).
SERIES = ([230.0] * 27 + [0.0] * 3) * 3


@pytest.mark.parametrize('check', [False, True])
def test_examples_run_and_say_what_they_should(tmp_path, check):
    tasks = yaml.safe_load(streaming_forecast.EXAMPLES)
    assert len(tasks) == 3
    out = tmp_path / 'results.json'
    play = [{
        'name': 'streaming_forecast examples',
        'hosts': 'localhost',
        'connection': 'local',
        'gather_facts': False,
        'vars': {'source': {'aggregate': {'series_mb_s': SERIES}}},
        'tasks': tasks[:1] + [dict(tasks[1], register='lto8')] + [dict(tasks[2], register='hpe6')] + [{
            'name': 'Keep the results',
            'ansible.builtin.copy': {'dest': str(out), 'content': '{{ {"lto9": lto9, "lto8": lto8, "hpe6": hpe6}'
                                                                  ' | to_json }}', 'mode': '0644'},
            'check_mode': False,
        }],
    }]
    playbook = tmp_path / 'play.yml'
    playbook.write_text(yaml.safe_dump(play))
    rc, output, recap = run_playbook(str(playbook), {}, check=check, diff=False)
    assert rc == 0, output
    assert recap['localhost']['changed'] == 1                   # only the copy of the results
    results = json.loads(out.read_text())
    lto9 = results['lto9']
    # IBM TS4300 speed matching: 200 MB/s lies between the 177 floor and the 408 top step
    assert lto9['class'] == 'SPEED-MATCHED' and lto9['backhitches'] == 0
    assert lto9['effective_mb_s'] == pytest.approx(200.0, rel=1e-3)
    assert lto9['drive_model']['speed_floor_mb_s'] == 177.0 and 'trace' not in lto9
    lto8 = results['lto8']
    assert lto8['class'] == 'SHOE-SHINING'                      # 3 s stalls and 10 GB sync marks
    assert lto8['backhitches_filemark'] > 0 and lto8['window_hours'] > 0
    assert 0 < len(lto8['trace']) <= 600
    assert lto8['drive_model']['compressed_max_mb_s'] == 600.0  # IBM TS2290: HH LTO-8 on 6 Gb SAS
    hpe6 = results['hpe6']
    assert hpe6['drive_model']['backhitch_s'] == 2.2 and 'backhitch_s' not in hpe6['drive_model']['estimated']
    assert not any(r.get('changed') for r in results.values())


def test_bad_drive_fails_with_what_to_do(tmp_path):
    play = [{'name': 'bad', 'hosts': 'localhost', 'gather_facts': False, 'tasks': [{
        'name': 'No generation',
        'tapeops.qualify.streaming_forecast': {'drive': {'vendor': 'IBM', 'warp': 9}, 'feed_mb_s': 100}}]}]
    playbook = tmp_path / 'play.yml'
    playbook.write_text(yaml.safe_dump(play))
    rc, output, _recap = run_playbook(str(playbook), {}, diff=False)
    assert rc != 0 and 'unknown keys warp' in output and 'Traceback' not in output
    assert os.path.exists(playbook)
