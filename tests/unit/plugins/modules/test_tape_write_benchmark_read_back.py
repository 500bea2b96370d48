# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""tape_write_benchmark's read-back options, run as Ansible runs the module (a child process with its arguments
as JSON). Nothing here reaches a tape: bad arguments are refused before the device is looked at, and the
read-back does not open a way past the safety gate (a non-tape path is refused with read_back too). The
read-back on a real st device: tests/integration/test_read_back.py."""

from __future__ import annotations

import pytest

from module_harness import run_module_process


def run_module(args, check_mode=False):
    return run_module_process('tape_write_benchmark', args, check_mode=check_mode)


@pytest.mark.parametrize('args,reason,words', [
    ({'read_back_block_size': '256K'}, 'bad_input',
     'read_back_block_size is set but read_back is false: set read_back: true'),
    ({'read_back': True, 'read_back_block_size': 'lots'}, None,
     "read_back_block_size: 'lots' is not a size"),
    ({'read_back': True, 'read_back_block_size': '0'}, 'bad_input',
     'read_back_block_size must be a positive size such as 256K'),
    ({'read_back': 'perhaps'}, None, 'read_back'),
])
def test_bad_read_back_arguments_are_refused_with_what_to_do(args, reason, words):
    rc, result = run_module(dict(args, device='/dev/nst0'))
    assert rc != 0 and result['failed'] is True
    assert words in result['msg'], result['msg']
    assert 'exception' not in result and 'Traceback' not in result['msg']
    if reason:
        assert result['reason'] == reason


@pytest.mark.parametrize('check_mode', [False, True])
def test_read_back_does_not_get_past_the_safety_gate(check_mode):
    rc, result = run_module({'device': '/dev/null', 'read_back': True, 'read_back_block_size': '64K'},
                            check_mode=check_mode)
    assert rc != 0 and result['reason'] == 'memory_device', result
    assert 'read_back' not in result and 'sweep' not in result
