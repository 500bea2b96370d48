# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""bconsole's answers parsed, on what Debian's bacula-console 9.6.7 printed in the lab (tests/unit/fixtures/bconsole/).

Jobs of lab-ma2 (lab/tapelab up --bacula, lab/tapelab bacula-setup): the guest's source tree backed up (T, twice),
a job run with the guest's File daemon stopped (f), one cancelled after 5 s (A), and a run with the Director
stopped. The job runner (``run_job``) is driven by a console that answers each command with those captures.
"""

from __future__ import annotations

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils import _records
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _bconsole as B
from ansible_collections.tapeops.qualify.plugins.module_utils._tools._cli import CliError

from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._tape_fixtures import fixture, fixtures

OK = 'lab-ma2-bacula-9.6.7-T__1.txt'
OK_2 = 'lab-ma2-bacula-9.6.7-T-2__1.txt'
FD_DOWN = 'lab-ma2-bacula-9.6.7-f-fd-down__1.txt'
CANCELLED = 'lab-ma2-bacula-9.6.7-A-cancelled__1.txt'


def cap(name):
    return fixture('bconsole', name)


def body(name):
    """A capture as bconsole printed it: without the fixture's '# ' source lines."""
    return ''.join(line for line in cap(name).splitlines(True) if not line.startswith('# '))


def test_run_gives_the_queued_job_id():
    assert B.parse_run(cap('bconsole_run__lab-ma2-bacula-9.6.7__1.txt')) == 1


def test_an_unknown_job_is_an_error_in_the_directors_words():
    with pytest.raises(B.BconsoleParseError) as err:
        B.parse_run(cap('bconsole_run_unknown_job__lab-ma2-bacula-9.6.7__1.txt'))
    assert err.value.reason == 'bconsole_output'
    assert err.value.msg == ('The Director queued no job; bconsole printed: Job "no-such-job" not found / The defined '
                             'Job resources are: / 1: lab-ma2-backup / 2: lab-ma2-restore / Select Job resource (1-2):.')


def test_mount_names_the_volume_the_drive_holds():
    mounted = B.parse_mount(cap('bconsole_mount__lab-ma2-bacula-9.6.7-slot2__1.txt'))
    assert mounted['ok'] and mounted['volume'] == 'MA2002L6'
    assert mounted['lines'][-2:] == ['3001 Mounted Volume: MA2002L6',
                                     '3001 Device ""Drive-0" (/dev/nst0)" is already mounted with Volume "MA2002L6"']


@pytest.mark.parametrize('name, jobid, status, words', [
    ('bconsole_wait__' + OK, 1, 'T', 'OK'),
    ('bconsole_wait__' + FD_DOWN, 2, 'f', 'Fatal Error'),
    ('bconsole_wait__' + CANCELLED, 2, 'A', 'Canceled'),
])
def test_wait_gives_the_status(name, jobid, status, words):
    assert B.parse_wait(cap(name)) == {'jobid': jobid, 'status': status, 'status_text': words}


def test_cancel_says_whether_the_director_marked_the_job():
    assert B.parse_cancel(cap('bconsole_cancel__lab-ma2-bacula-9.6.7__1.txt')) is True
    assert B.parse_cancel(cap('bconsole_run__lab-ma2-bacula-9.6.7-no-director__1.txt')) is False


def test_a_wait_without_a_status_is_an_error():
    with pytest.raises(B.BconsoleParseError, match='printed no job status'):
        B.parse_wait(cap('bconsole_run__lab-ma2-bacula-9.6.7__1.txt'))


def test_llist_is_the_catalogs_job_record():
    job = B.parse_llist(cap('bconsole_llist_jobid__' + OK))
    assert (job['jobid'], job['name'], job['type'], job['level'], job['jobstatus']) == (1, 'lab-ma2-backup', 'B', 'F',
                                                                                        'T')
    assert (job['jobfiles'], job['jobbytes'], job['readbytes'], job['joberrors']) == (1252, 230450176, 230450176, 0)
    assert (job['starttime'], job['endtime']) == ('2026-11-26 23:41:29', '2026-11-26 23:41:52')
    assert job['comment'] == '' and job['poolname'] == 'LabTapes'


def test_the_joblog_of_a_good_job():
    log = B.parse_joblog(cap('bconsole_list_joblog__' + OK))
    assert [(e['daemon'], e['jobid']) for e in log['entries']] == [
        ('lab-ma2-dir', 1), ('lab-ma2-dir', 1), ('lab-ma2-sd', 1), ('lab-ma2-sd', 1), ('lab-ma2-sd', 1),
        ('lab-ma2-dir', 1)]
    assert log['entries'][2]['text'] == 'Wrote label to prelabeled Volume "MA2002L6" on Tape device "Drive-0" (/dev/nst0)'
    assert (log['termination'], log['volumes'], log['errors'], log['warnings']) == ('Backup OK', ['MA2002L6'], [], [])
    assert (log['fd_bytes'], log['sd_bytes'], log['volume_bytes']) == (230450176, 230596121, 230712320)
    assert log['report']['Elapsed time'] == '23 secs' and log['report']['Volume name(s)'] == 'MA2002L6'
    # Bacula's Rate: the job's bytes over its 23 whole seconds, in KB/s of 1000 bytes
    assert log['rate_mb_s'] == 10.0196
    assert log['rate_mb_s'] == pytest.approx(230450176 / 23 / 1e6, abs=0.0001)
    # the storage daemon's data phase: its own bytes over 16 whole seconds, cut to four digits
    assert (log['data_seconds'], log['data_mb_s']) == (16, 14.41)
    assert int(log['sd_bytes'] / log['data_seconds'] / 1e4) / 100 == log['data_mb_s']


def test_the_data_phase_of_the_jobs_second_run():
    log = B.parse_joblog(cap('bconsole_list_joblog__' + OK_2))
    job = B.parse_llist(cap('bconsole_llist_jobid__' + OK_2))
    assert (log['data_seconds'], log['data_mb_s'], log['termination']) == (25, 9.223, 'Backup OK')
    assert int(log['sd_bytes'] / log['data_seconds'] / 1e3) / 1000 == log['data_mb_s']
    assert job['jobbytes'] == 230450176 and log['rate_mb_s'] == pytest.approx(230450176 / 31 / 1e6, abs=1e-4)


def test_the_joblog_of_a_cancelled_job():
    log = B.parse_joblog(cap('bconsole_list_joblog__' + CANCELLED))
    assert log['termination'] == 'Backup Canceled' and log['errors'] == [] and log['warnings'] == []
    assert [e['text'] for e in log['entries'][2:4]] == [
        'Volume "MA2002L6" previously written, moving to end of data.',
        'Ready to append to end of Volume "MA2002L6" at file=1.']
    # the storage daemon's line is there, though nothing came: it divides its own count by its seconds
    assert (log['data_seconds'], log['data_mb_s'], log['sd_bytes'], log['fd_bytes']) == (5, 3.297, 0, 0)
    record = B.job_record(B.parse_llist(cap('bconsole_llist_jobid__' + CANCELLED)), log)
    assert (record['status'], record['status_text'], record['bytes']) == ('A', 'canceled', 0)


def test_the_joblog_of_a_job_whose_file_daemon_was_down():
    log = B.parse_joblog(cap('bconsole_list_joblog__' + FD_DOWN))
    assert log['termination'] == '*** Backup Error ***'
    assert log['errors'] == [
        'lab-ma2-dir: Fatal error: bsockcore.c:208 Unable to connect to Client: lab-ma2-fd on 127.0.0.1:9102. '
        'ERR=Connection refused',
        'lab-ma2-dir: Fatal error: No Job status returned from FD.']
    assert log['warnings'] == ['lab-ma2-dir: Warning: bsockcore.c:201 Could not connect to Client: lab-ma2-fd on '
                               '127.0.0.1:9102. ERR=Connection refused Retrying ...']
    # no data went to the storage daemon: no data phase, and nothing written
    assert (log['data_seconds'], log['data_mb_s'], log['sd_bytes'], log['volumes']) == (None, None, 0, [])
    assert log['report']['FD termination status'] == 'Error'


def test_the_record_of_a_good_job():
    record = B.job_record(B.parse_llist(cap('bconsole_llist_jobid__' + OK)),
                          B.parse_joblog(cap('bconsole_list_joblog__' + OK)),
                          B.parse_wait(cap('bconsole_wait__' + OK)))
    job = _records.BaculaJob.from_dict(record)
    assert job.ok and (job.status, job.status_text, job.level) == ('T', 'OK', 'Full')
    assert (job.jobid, job.name, job.client) == (1, 'lab-ma2-backup', 'lab-ma2-fd')
    assert (job.fileset, job.pool) == ('SourceTree', 'LabTapes')
    assert (job.files, job.bytes, job.error_count, job.elapsed_seconds) == (1252, 230450176, 0, 23)
    assert (job.data_seconds, job.data_mb_s, job.rate_mb_s) == (16, 14.41, 10.0196)
    assert job.messages == [] and job.volumes == ['MA2002L6']
    assert _records.BaculaJob.from_dict(job.to_dict()) == job


# ------------------------------------------------------------------ damaged output: no traceback, a clear error

@pytest.mark.parametrize('name, text', fixtures('bconsole'))
def test_every_capture_cut_at_every_line_parses_or_says_why(name, text):
    lines = text.splitlines(True)
    full = B.parse_joblog(text) if 'joblog' in name else None
    for cut in range(len(lines) + 1):
        part = ''.join(lines[:cut])
        for parse in (B.parse_run, B.parse_wait):
            try:
                parse(part)
            except B.BconsoleParseError as exc:
                assert exc.msg.endswith('.') and 'bconsole printed' in exc.msg
        llist = B.parse_llist(part)
        assert llist == {} or llist['jobid'] in (1, 2)
        log = B.parse_joblog(part)
        if full is not None:
            # a cut log never gives a number the whole log does not
            for key in ('data_seconds', 'data_mb_s', 'sd_bytes', 'volume_bytes', 'rate_mb_s'):
                assert log[key] is None or log[key] == full[key], (name, cut, key)


def test_a_log_cut_inside_the_report_keeps_what_it_has():
    text = cap('bconsole_list_joblog__' + OK)
    cut = text[:text.index('  SD Bytes Written:')]
    log = B.parse_joblog(cut)
    assert (log['fd_bytes'], log['sd_bytes'], log['termination']) == (230450176, None, None)
    assert (log['data_seconds'], log['data_mb_s']) == (16, 14.41)


def test_oddly_encoded_output_is_read_with_replacement_characters():
    raw = cap('bconsole_llist_jobid__' + OK).encode('ascii').replace(b'lab-ma2-fd', b'lab-\xe9\xff-fd')
    job = B.parse_llist(raw)
    assert job['clientname'] == 'lab-\ufffd\ufffd-fd' and job['jobbytes'] == 230450176
    log = B.parse_joblog(cap('bconsole_list_joblog__' + OK).encode('ascii').replace(b'Backup OK', b'Backup \xc3('))
    assert log['termination'] == 'Backup \ufffd(' and log['data_mb_s'] == 14.41
    with pytest.raises(B.BconsoleParseError, match='queued no job'):
        B.parse_run(b'\xff\xfe\x00garbage\n')


def test_no_record_without_the_catalogs():
    with pytest.raises(B.BconsoleParseError, match='The catalog has no record'):
        B.job_record({}, B.parse_joblog(cap('bconsole_list_joblog__' + OK)))


# ------------------------------------------------------------------ commands

def test_commands_quote_names_and_refuse_what_bconsole_would_misread():
    assert B.run_command('lab-ma2-backup') == 'run job="lab-ma2-backup" level=Full yes'
    assert B.run_command('Backup Client 1', 'Incremental') == 'run job="Backup Client 1" level=Incremental yes'
    assert B.mount_command('Library', 2) == 'mount storage="Library" slot=2 drive=0'
    for bad in ('a"b', 'job\nrun job=other yes', '', ' padded', 'x' * 128, 'semi;colon'):
        with pytest.raises(ValueError, match='is not a Bacula resource name'):
            B.run_command(bad)
    with pytest.raises(ValueError, match='level must be one of Full, Incremental, Differential'):
        B.run_command('job', 'VirtualFull')
    with pytest.raises(ValueError, match='slot must be a slot number'):
        B.mount_command('Library', 0)


# ------------------------------------------------------------------ the job runner on the captures

class Result:
    def __init__(self, cmd, stdout, rc=0, stderr=''):
        self.cmd, self.stdout, self.rc, self.stderr = cmd, stdout, rc, stderr


class Answers:
    """A bconsole runner answering each command with a capture; ``timeouts`` names commands that do not end."""

    def __init__(self, answers, timeouts=()):
        self.answers = answers
        self.timeouts = timeouts
        self.calls = []

    def __call__(self, cmd, data=None, timeout=None):
        command = data.split('\n', 1)[0]
        self.calls.append((cmd, data, timeout))
        if command in self.timeouts:
            raise CliError('bconsole did not finish within %s seconds.' % timeout, cmd=cmd, timed_out=True)
        return Result(cmd, body(self.answers[command]) if command in self.answers else '1000 OK\n')


def _console(answers, timeouts=()):
    runner = Answers(answers, timeouts)
    return B.Console('/usr/sbin/bconsole', runner, '/srv/bacula/etc/bconsole.conf'), runner


GOOD = {
    'mount storage="Library" slot=2 drive=0': 'bconsole_mount__lab-ma2-bacula-9.6.7-slot2-quoted__1.txt',
    'run job="lab-ma2-backup" level=Full yes': 'bconsole_run__lab-ma2-bacula-9.6.7-quoted__1.txt',
    'wait jobid=1': 'bconsole_wait__' + OK,
    'llist jobid=1': 'bconsole_llist_jobid__' + OK,
    'list joblog jobid=1': 'bconsole_list_joblog__' + OK,
}


def test_a_job_runs_waits_and_is_read_back():
    console, runner = _console(GOOD)
    record, mounted = B.run_job(console, 'lab-ma2-backup', mount={'storage': 'Library', 'slot': 2, 'drive': 0},
                                timeout=600, timeout_error=CliError)
    assert console.sent == list(GOOD)
    assert all(call[0] == ['/usr/sbin/bconsole', '-c', '/srv/bacula/etc/bconsole.conf'] for call in runner.calls)
    assert runner.calls[2][2] == 600        # the wait is bounded by the job's timeout
    assert mounted['volume'] == 'MA2002L6'
    assert (record['status'], record['bytes'], record['data_mb_s']) == ('T', 230450176, 14.41)


def test_a_failed_job_fails_with_baculas_messages():
    console, _runner = _console({
        'run job="lab-ma2-backup" level=Full yes': 'bconsole_run__lab-ma2-bacula-9.6.7-fd-down__1.txt',
        'wait jobid=2': 'bconsole_wait__' + FD_DOWN,
        'llist jobid=2': 'bconsole_llist_jobid__' + FD_DOWN,
        'list joblog jobid=2': 'bconsole_list_joblog__' + FD_DOWN})
    with pytest.raises(B.BaculaJobError) as err:
        B.run_job(console, 'lab-ma2-backup', timeout_error=CliError)
    assert err.value.reason == 'job_failed'
    assert err.value.msg.startswith('Bacula job 2 (lab-ma2-backup) ended with status f (fatal error), '
                                    '"*** Backup Error ***": lab-ma2-dir: Fatal error: bsockcore.c:208 Unable to '
                                    'connect to Client: lab-ma2-fd on 127.0.0.1:9102. ERR=Connection refused; ')
    assert err.value.record['status'] == 'f' and err.value.record['bytes'] == 0


def test_an_unknown_job_is_not_queued():
    console, _runner = _console({'run job="no-such-job" level=Full yes':
                                 'bconsole_run_unknown_job__lab-ma2-bacula-9.6.7__1.txt'})
    with pytest.raises(B.BaculaJobError) as err:
        B.run_job(console, 'no-such-job', timeout_error=CliError)
    assert err.value.reason == 'job_not_queued'
    assert 'Job "no-such-job" not found' in err.value.msg and 'Check the job name' in err.value.msg
    assert err.value.evidence['stdout'].startswith('Connecting to Director')


CANCEL = {
    'run job="lab-ma2-backup" level=Full yes': 'bconsole_run__lab-ma2-bacula-9.6.7-to-cancel__1.txt',
    'cancel jobid=2 yes': 'bconsole_cancel__lab-ma2-bacula-9.6.7__1.txt',
    'llist jobid=2': 'bconsole_llist_jobid__' + CANCELLED,
    'list joblog jobid=2': 'bconsole_list_joblog__' + CANCELLED,
}


def test_a_job_past_its_timeout_is_cancelled():
    console, runner = _console(CANCEL, timeouts=('wait jobid=2',))
    with pytest.raises(B.BaculaJobError) as err:
        B.run_job(console, 'lab-ma2-backup', timeout=5, timeout_error=CliError)
    assert err.value.reason == 'timeout'
    assert err.value.msg.startswith('Bacula job 2 (lab-ma2-backup) did not end within 5 seconds; it was cancelled.')
    assert console.sent == list(CANCEL)[:1] + ['wait jobid=2'] + list(CANCEL)[1:]
    assert runner.calls[2][1] == 'cancel jobid=2 yes\n'
    assert (err.value.record['status'], err.value.record['termination']) == ('A', 'Backup Canceled')


def test_a_job_past_its_timeout_is_left_running_when_asked():
    console, _runner = _console(CANCEL, timeouts=('wait jobid=2',))
    with pytest.raises(B.BaculaJobError, match='did not end within 5 seconds and still runs') as err:
        B.run_job(console, 'lab-ma2-backup', timeout=5, cancel_on_timeout=False, timeout_error=CliError)
    assert 'cancel jobid=2 yes' not in console.sent and err.value.reason == 'timeout'


def test_a_director_that_does_not_answer():
    console, _runner = _console({})
    # bconsole with the guest's Director stopped: its banner's first line, exit 1
    console._run = lambda cmd, data=None, timeout=None: Result(
        cmd, body('bconsole_run__lab-ma2-bacula-9.6.7-no-director__1.txt'), 1)
    with pytest.raises(B.BaculaJobError) as err:
        B.run_job(console, 'lab-ma2-backup', timeout_error=CliError)
    assert err.value.reason == 'director_unreachable'
    assert err.value.msg == ('bconsole could not talk to the Director for run job="lab-ma2-backup" level=Full yes '
                             '(rc 1): nothing but its banner. Check that the Director runs and that the bconsole '
                             'configuration names it (address, port, password).')
    assert console.sent == ['run job="lab-ma2-backup" level=Full yes']
