# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""bacula_job_run's main(), with a bconsole on PATH that answers each command with what the lab's printed.

The answers are the captures of tests/unit/fixtures/bconsole/ (Debian bacula-console 9.6.7 on lab-ma2): the
module runs its real command runner (_cli, a child process per command, the command on its standard input) and its
real parsers.
"""

from __future__ import annotations

import os
import stat

import pytest

from ansible_collections.tapeops.qualify.plugins.modules import bacula_job_run

from module_harness import fixture_text, run_module

OK = 'lab-ma2-bacula-9.6.7-T__1.txt'
FD_DOWN = 'lab-ma2-bacula-9.6.7-f-fd-down__1.txt'
GOOD = {
    'mount storage="Library" slot=2 drive=0': 'bconsole_mount__lab-ma2-bacula-9.6.7-slot2-quoted__1.txt',
    'run job="lab-ma2-backup" level=Full yes': 'bconsole_run__lab-ma2-bacula-9.6.7-quoted__1.txt',
    'wait jobid=1': 'bconsole_wait__' + OK,
    'llist jobid=1': 'bconsole_llist_jobid__' + OK,
    'list joblog jobid=1': 'bconsole_list_joblog__' + OK,
}
FAILED = {
    'run job="lab-ma2-backup" level=Full yes': 'bconsole_run__lab-ma2-bacula-9.6.7-fd-down__1.txt',
    'wait jobid=2': 'bconsole_wait__' + FD_DOWN,
    'llist jobid=2': 'bconsole_llist_jobid__' + FD_DOWN,
    'list joblog jobid=2': 'bconsole_list_joblog__' + FD_DOWN,
}


def console_tool(tmp_path, monkeypatch, answers):
    """A ``bconsole`` first on PATH: it logs its arguments and standard input, and prints the capture recorded for
    the command on its first input line (exit 99 for a command without one)."""
    bindir = tmp_path / 'bin'
    bindir.mkdir()
    log = tmp_path / 'bconsole.log'
    lines = ['#!/bin/sh', 'input=$(cat)', 'printf "%%s | %%s\\n" "$*" "$(echo "$input" | tr "\\n" ";")" >>%s' % log,
             'first=$(echo "$input" | head -n 1)', 'case "$first" in']
    for index, (command, capture) in enumerate(answers.items()):
        out = tmp_path / ('answer.%d' % index)
        out.write_text(fixture_text(os.path.join('bconsole', capture)))
        lines.append("  '%s') cat %s;;" % (command, out))
    lines += ['  *) echo "no recorded answer for: $first" >&2; exit 99;;', 'esac']
    tool = bindir / 'bconsole'
    tool.write_text('\n'.join(lines) + '\n')
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv('PATH', '%s%s%s' % (bindir, os.pathsep, os.environ.get('PATH', '')))
    config = tmp_path / 'bconsole.conf'
    config.write_text('Director {\n  Name = lab-ma2-dir\n}\n')
    return str(config), log


def calls(log):
    return log.read_text().splitlines() if log.exists() else []


def test_a_full_job_after_a_mount(tmp_path, monkeypatch):
    config, log = console_tool(tmp_path, monkeypatch, GOOD)
    failed, result = run_module(bacula_job_run.main, {
        'job': 'lab-ma2-backup', 'config': config, 'storage': 'Library', 'slot': 2, 'timeout': 600}, monkeypatch)
    assert not failed, result['msg']
    assert result['changed'] is True
    assert result['commands'] == list(GOOD)
    assert calls(log) == ['-c %s | %s;' % (config, command) for command in GOOD]
    assert result['mount']['volume'] == 'MA2002L6'
    assert (result['jobid'], result['status'], result['status_text'], result['level']) == (1, 'T', 'OK', 'Full')
    assert (result['files'], result['bytes'], result['sd_bytes'], result['volume_bytes']) == (
        1252, 230450176, 230596121, 230712320)
    assert (result['data_seconds'], result['data_mb_s'], result['rate_mb_s'], result['elapsed_seconds']) == (
        16, 14.41, 10.0196, 23)
    assert (result['termination'], result['volumes'], result['messages']) == ('Backup OK', ['MA2002L6'], [])


def test_a_failed_job_fails_the_task_with_baculas_messages(tmp_path, monkeypatch):
    config, _log = console_tool(tmp_path, monkeypatch, FAILED)
    failed, result = run_module(bacula_job_run.main, {'job': 'lab-ma2-backup', 'config': config}, monkeypatch)
    assert failed and result['reason'] == 'job_failed' and result['changed'] is True
    assert result['msg'] == (
        'Bacula job 2 (lab-ma2-backup) ended with status f (fatal error), "*** Backup Error ***": lab-ma2-dir: Fatal '
        'error: bsockcore.c:208 Unable to connect to Client: lab-ma2-fd on 127.0.0.1:9102. ERR=Connection refused; '
        'lab-ma2-dir: Fatal error: No Job status returned from FD.; lab-ma2-dir: Warning: bsockcore.c:201 Could not '
        'connect to Client: lab-ma2-fd on 127.0.0.1:9102. ERR=Connection refused Retrying ...')
    # the record of the failed job comes with it
    assert (result['jobid'], result['status'], result['bytes'], result['error_count']) == (2, 'f', 0, 1)
    assert result['commands'] == list(FAILED)


def test_an_unknown_job_fails_with_the_directors_answer(tmp_path, monkeypatch):
    config, _log = console_tool(tmp_path, monkeypatch, {
        'run job="no-such-job" level=Full yes': 'bconsole_run_unknown_job__lab-ma2-bacula-9.6.7__1.txt'})
    failed, result = run_module(bacula_job_run.main, {'job': 'no-such-job', 'config': config}, monkeypatch)
    assert failed and result['reason'] == 'job_not_queued' and not result.get('changed')
    assert result['msg'].startswith('The Director queued no job; bconsole printed: Job "no-such-job" not found')
    assert result['rc'] == 0 and 'Select Job resource (1-2):' in result['stdout']
    assert 'jobid' not in result


def test_a_stopped_director_fails_with_what_bconsole_said(tmp_path, monkeypatch):
    bindir = tmp_path / 'bin'
    bindir.mkdir()
    tool = bindir / 'bconsole'
    out = tmp_path / 'answer'
    out.write_text(fixture_text('bconsole/bconsole_run__lab-ma2-bacula-9.6.7-no-director__1.txt'))
    tool.write_text('#!/bin/sh\ncat >/dev/null\ncat %s\nexit 1\n' % out)
    tool.chmod(0o755)
    monkeypatch.setenv('PATH', '%s%s%s' % (bindir, os.pathsep, os.environ.get('PATH', '')))
    failed, result = run_module(bacula_job_run.main, {'job': 'lab-ma2-backup'}, monkeypatch)
    assert failed and result['reason'] == 'director_unreachable' and result['rc'] == 1
    assert result['msg'].startswith('bconsole could not talk to the Director for run job="lab-ma2-backup"')
    assert result['commands'] == ['run job="lab-ma2-backup" level=Full yes'] and not result.get('changed')


def test_check_mode_runs_nothing(tmp_path, monkeypatch):
    config, log = console_tool(tmp_path, monkeypatch, GOOD)
    failed, result = run_module(bacula_job_run.main, {
        'job': 'lab-ma2-backup', 'config': config, 'storage': 'Library', 'slot': 2}, monkeypatch, check_mode=True)
    assert not failed and result['changed'] is False
    assert calls(log) == []
    assert result['commands'] == ['mount storage="Library" slot=2 drive=0', 'run job="lab-ma2-backup" level=Full yes']
    assert result['msg'].startswith('Check mode: would run %s -c %s with: mount' % (
        os.path.join(str(tmp_path), 'bin', 'bconsole'), config))


@pytest.mark.parametrize('args, reason, words', [
    ({'job': 'a"b'}, 'bad_input', 'is not a Bacula resource name'),
    ({'job': 'j', 'timeout': 0}, 'bad_input', 'timeout must be a positive number'),
    ({'job': 'j', 'config': '/nonexistent/bconsole.conf'}, 'bad_input',
     'The bconsole configuration /nonexistent/bconsole.conf cannot be read (it does not exist)'),
    ({'job': 'j', 'storage': 'Library', 'slot': 0}, 'bad_input', 'slot must be a slot number'),
])
def test_bad_input_is_refused_before_anything_runs(tmp_path, monkeypatch, args, reason, words):
    _config, log = console_tool(tmp_path, monkeypatch, GOOD)
    failed, result = run_module(bacula_job_run.main, args, monkeypatch)
    assert failed and result['reason'] == reason and words in result['msg']
    assert calls(log) == []


def test_slot_needs_a_storage(tmp_path, monkeypatch):
    failed, result = run_module(bacula_job_run.main, {'job': 'j', 'slot': 2}, monkeypatch)
    assert failed and 'storage' in result['msg']


def test_a_missing_bconsole_names_its_package(tmp_path, monkeypatch):
    monkeypatch.setenv('PATH', str(tmp_path))
    monkeypatch.setattr('ansible_collections.tapeops.qualify.plugins.module_utils._tools._cli.SBIN_DIRS', ())
    failed, result = run_module(bacula_job_run.main, {'job': 'j'}, monkeypatch)
    assert failed
    assert result['msg'].startswith('bconsole is not installed on this host')
    assert 'apt install bacula-console' in result['msg'] and 'bareos-bconsole' in result['msg']
