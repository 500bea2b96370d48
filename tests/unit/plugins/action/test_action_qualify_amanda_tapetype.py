# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The qualify_amanda_tapetype action on a run directory qualify_verdict wrote of a recorded host's inputs.

Lab run 20261123-quick's lab-ma2 (tests/unit/fixtures/verdict_args/), judged for an Amanda server: with Amanda's
default block size, and with a tapetype of 1 MiB blocks, which its drive path took at 12.9 MB/s against 34.1 at 64
KiB. The tapetype's block size is the verdict's, its length the LTO-6 cartridge's, and the text is what amanda.conf
reads.
"""

from __future__ import annotations

import json
import os

from ansible_collections.tapeops.qualify.plugins.action import qualify_amanda_tapetype, qualify_verdict
from ansible_collections.tapeops.qualify.plugins.module_utils._config import _amanda

from action_harness import VERDICT_ARGS, run_action


def amanda_run(tmp_path, **backup):
    with open(os.path.join(VERDICT_ARGS, 'lab-ma2.json'), encoding='utf-8') as handle:
        args = json.load(handle)
    run_dir = str(tmp_path / 'run')
    failed, result = run_action(qualify_verdict, dict(args, backup=dict(backup, software='amanda'),
                                                      report_dir=run_dir), {'inventory_hostname': 'lab-ma2'})
    assert not failed, result['msg']
    return run_dir, result


def test_an_amanda_servers_tapetype_from_its_run(tmp_path):
    run_dir, verdict = amanda_run(tmp_path, block_size_bytes=1048576)
    [judged] = verdict['verdicts']
    failed, result = run_action(qualify_amanda_tapetype, {'run_dir': run_dir}, {'inventory_hostname': 'lab-ma2'})
    assert not failed, result['msg']
    assert result['changed'] is False and result['skipped'] is False and result['skipped_drives'] == []
    [tapetype] = result['tapetypes']
    assert result['text'] == tapetype['text']
    assert result['msg'] == 'lab-ma2: tapetype LTO-6-lab-ma2-nst0 (/dev/nst0).'
    # the verdict's block size fix, 64 KiB, is the tapetype's, at the rate the sweep measured there
    fix = next(f for f in judged['fixes'] if f['id'] == 'block_size')
    assert fix['value'] == 65536 and fix['setting'] == (
        'Amanda tapetype (amanda.conf on the Amanda server): blocksize 64 kbytes (tapeops.qualify.qualify_amanda_tapetype '
        'writes the whole tapetype)')
    assert (tapetype['block_size'], tapetype['block_basis'], tapetype['speed_kps']) == (65536, 'fix', 33300)
    [parsed] = _amanda.parse(result['text'])
    assert parsed['blocksize']['bytes'] == 65536 and parsed['length']['number'] == 2441406250


def test_amandas_default_block_size_judged_is_the_tapetypes_with_its_modelled_rate(tmp_path):
    # no block size in the inventory: Amanda's 32 KiB, which the sweep (64 KiB and up) did not measure; the
    # verdict finds no gain in 64 KiB here (the sources limit), so the tapetype keeps 32 KiB and says so
    run_dir, verdict = amanda_run(tmp_path)
    [judged] = verdict['verdicts']
    assert (judged['numbers']['block_size_bytes'], judged['numbers']['block_size_basis']) == (32768, 'default')
    assert 'block_size' not in [f['id'] for f in judged['fixes']]
    failed, result = run_action(qualify_amanda_tapetype, {'run_dir': run_dir}, {'inventory_hostname': 'lab-ma2'})
    [tapetype] = result['tapetypes']
    assert (tapetype['block_size'], tapetype['block_basis'], tapetype['speed_basis']) == (32768, 'judged', 'verdict')
    assert 'speed modelled' in tapetype['text'].splitlines()[1]
    assert '# blocksize: 32 KiB, the block size the verdict judged; the write sweep measured 64 KiB best (34.1 MB/s), ' \
           'which the verdict found no gain in for this host\'s backups\n' in tapetype['text']
    assert '# speed: the drive path at 32 KiB blocks as the verdict judged it, ' in tapetype['text']
    assert 'not measured: extrapolated below 64 KiB, the smallest size measured' in tapetype['text']


def test_check_mode_reads_the_same(tmp_path):
    run_dir, dummy = amanda_run(tmp_path)
    args = {'run_dir': run_dir, 'host': 'lab-ma2', 'drive': '/dev/nst0', 'name': 'LTO6-lab'}
    assert run_action(qualify_amanda_tapetype, args, check_mode=True) == run_action(qualify_amanda_tapetype, args)
    assert run_action(qualify_amanda_tapetype, args)[1]['text'].startswith('define tapetype LTO6-lab {\n')


def test_a_host_not_in_the_run_is_skipped_and_bad_arguments_fail_saying_what_to_do(tmp_path):
    run_dir, dummy = amanda_run(tmp_path)
    failed, result = run_action(qualify_amanda_tapetype, {'run_dir': run_dir, 'host': 'lab-ma9'})
    assert not failed and result['skipped'] is True
    assert result['msg'].startswith('Skipped: %s has no document for lab-ma9' % run_dir)
    failed, result = run_action(qualify_amanda_tapetype, {'run_dir': run_dir + '-not', 'host': 'lab-ma2'})
    assert failed and result['msg'].startswith('The run directory %s-not does not exist' % run_dir)
    failed, result = run_action(qualify_amanda_tapetype, {'run_dir': run_dir, 'host': 'lab-ma2', 'drive': '/dev/nst7'})
    assert failed and result['msg'] == ('lab-ma2 has no verdict for /dev/nst7 in this run, so no tapetype: give one of '
                                        'its drives with a verdict (/dev/nst0)')
    failed, result = run_action(qualify_amanda_tapetype, {'run_dir': run_dir, 'host': 'lab-ma2', 'name': 'LTO 6'})
    assert failed and result['msg'].startswith("'LTO 6' is not a tapetype name amanda.conf reads")
