# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""qualify_inputs_check with tape_ratio_from (qualify_tape_ratio_from): a file is refused before any host is measured.

A directory that does not exist is not refused: the qualify run goes on, and each verdict says why its drive's
observed ratio was not used (test_qualify_verdict_ratio_from.py). The directories are real (tmp_path).
"""

from __future__ import annotations

from ansible_collections.tapeops.qualify.plugins.action import qualify_inputs_check

from action_harness import run_action


def check(tmp_path, ratio_from):
    return run_action(qualify_inputs_check, {'hosts': ['lab-ma1'], 'report_base': str(tmp_path / 'reports'),
                                             'tape_ratio_from': ratio_from},
                      {'inventory_hostname': 'lab-ma1', 'hostvars': {'lab-ma1': {}}})


def test_a_file_is_refused_saying_what_to_give(tmp_path):
    a_file = tmp_path / 'observe.json'
    a_file.write_text('{}')
    failed, result = check(tmp_path, str(a_file))
    assert failed
    assert result['msg'] == (
        '1 input(s) to fix before any host is measured: (1) qualify_tape_ratio_from=%s is a file, not a directory: '
        'give the directory of an earlier observe run (it holds hosts/<host>.json), for example '
        'reports/observe-20261127T220000Z.' % a_file)


def test_a_directory_is_checked_and_one_that_does_not_exist_is_not_refused(tmp_path):
    observe_run = tmp_path / 'observe-20261127T220000Z'
    observe_run.mkdir()
    failed, result = check(tmp_path, str(observe_run))
    assert not failed and result['checked'][-1] == 'qualify_tape_ratio_from'
    failed, result = check(tmp_path, str(tmp_path / 'not-yet'))
    assert not failed and 'qualify_tape_ratio_from' in result['checked']


def test_without_it_nothing_is_said_of_it(tmp_path):
    failed, result = run_action(qualify_inputs_check, {'hosts': [], 'report_base': str(tmp_path)},
                                {'inventory_hostname': 'lab-ma1', 'hostvars': {}})
    assert not failed and 'qualify_tape_ratio_from' not in result['checked']
