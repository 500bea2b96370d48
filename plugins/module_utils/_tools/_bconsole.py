# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Bacula's console, ``bconsole``: the commands that run a job, and parsers (pure) of what it prints.

Private to this collection: may change without notice.

bconsole reads one command a line on its standard input and ends at its end. Every session prints a banner
(``Connecting to Director 127.0.0.1:9101``, ``1000 OK: 103 <director> Version: ...``, ``Enter a period to cancel a
command.``), echoes each command line, then the Director's answer; ``You have messages.`` only says the Director
holds messages for the console. The collection sends one command per session, so each answer is parsed alone.
Recorded with Debian's bacula-console 9.6.7 against bacula-dir 9.6.7 (tests/unit/fixtures/bconsole/):

- ``run job=NAME level=Full yes``: ``Job queued. JobId=N``; an unknown job: ``Job "NAME" not found`` and the
  list of jobs (bconsole then waits for a choice and ends at the end of its input).
- ``wait jobid=N``: ``JobId=N`` and ``JobStatus=OK (T)`` once the job has ended.
- ``cancel jobid=N yes``: ``3000 JobId=N Job="..." marked to be canceled.`` (9.6.7 takes ``yes`` as an argument and
  asks nothing).
- ``llist jobid=N``: the catalog's Job record, one ``Field: value`` a line.
- ``list joblog jobid=N``: the job's log as the catalog holds it, a table of one column (``LogText``): each entry
  ``<daemon> JobId N: <text>``, the end-of-job report spread over several lines, a ``\\`` line closing each entry.

Where the job's data went through the storage daemon, its log has the daemon's data-phase line (Bacula
``src/stored/append.c``; Bareos prints the same): ``Elapsed time=HH:MM:SS, Transfer rate=14.41 M Bytes/second``,
the storage daemon's bytes over the whole seconds from the first data to the last, the number cut (not rounded)
to four digits with a decimal suffix (``edit_uint64_with_suffix``: K = 10^3, M = 10^6). Bacula's own ``Rate``
in the report (KB/s of 1000 bytes) spans the whole job: mount, label read, space to the end of data, the
closing file mark, attribute despooling.
"""

from __future__ import annotations

import datetime
import re

from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError

# Job status codes (Bacula src/jcr.h, the same in Bareos) and their words.
JOB_STATUS = {
    'C': 'created, not yet running', 'R': 'running', 'B': 'blocked', 'T': 'OK',
    'W': 'OK with warnings', 'E': 'terminated in error', 'e': 'non-fatal error', 'f': 'fatal error',
    'D': 'verify differences', 'A': 'canceled', 'I': 'incomplete', 'F': 'waiting on the File daemon',
    'S': 'waiting on the Storage daemon', 'm': 'waiting for a new volume', 'M': 'waiting for a mount',
    's': 'waiting for storage resource', 'j': 'waiting for a job resource', 'c': 'waiting for a client resource',
    'd': 'waiting for the maximum jobs', 't': 'waiting for its start time', 'p': 'waiting for higher-priority jobs',
    'a': 'SD despooling attributes', 'i': 'doing batch insert of file records', 'L': 'committing data',
}
# The statuses of a job that has ended well: T, and W (Bacula 9: "Terminated with warnings").
DONE_OK = ('T', 'W')
RUNNING = ('C', 'R', 'B', 'F', 'S', 'm', 'M', 's', 'j', 'c', 'd', 't', 'p', 'a', 'i', 'L')
LEVELS = {'F': 'Full', 'I': 'Incremental', 'D': 'Differential', 'B': 'Base', 'f': 'VirtualFull', 'V': 'InitCatalog',
          'C': 'Catalog', 'O': 'VolumeToCatalog', 'd': 'DiskToCatalog', 'A': 'Data', ' ': None}
RUN_LEVELS = ('Full', 'Incremental', 'Differential')
# A resource name as bconsole passes it on (Bacula: letters, digits, space and ``-_.:``, at most 127 characters;
# a quote, a control character or a line break would end the command or start another).
_NAME = re.compile(r'^[A-Za-z0-9 _.:-]{1,127}$')
_QUEUED = re.compile(r'^Job queued\. JobId=(\d+)\s*$')
_WAIT_ID = re.compile(r'^JobId=(\d+)\s*$')
_WAIT_STATUS = re.compile(r'^JobStatus=(.*?)\s*\((\S)\)\s*$')
_LLIST = re.compile(r'^\s*([A-Za-z]+):\s*(.*?)\s*$')
_ENTRY = re.compile(r'^(?:\|\s)?(\S+) JobId (\d+): (.*)$')
_ENTRY_END = re.compile(r'^\\\s*\|?\s*$')
_REPORT = re.compile(r'^\s{2}([A-Za-z][A-Za-z /()\-]*?):\s+(.*?)\s*$')
_DATA_PHASE = re.compile(r'Elapsed time=(\d+):(\d\d):(\d\d), Transfer rate=([\d.]+)\s*([KMGTPEZY]?)\s*Bytes/second')
_COMMANDS = ('run', 'wait', 'llist', 'list', 'mount', 'cancel')
_BANNER = ('Connecting to Director', '1000 OK:', 'Enter a period to cancel', 'You have messages.',
           'Automatically selected Catalog:', 'Using Catalog ')
_SUFFIX = {'': 1, 'K': 1e3, 'M': 1e6, 'G': 1e9, 'T': 1e12, 'P': 1e15, 'E': 1e18, 'Z': 1e21, 'Y': 1e24}
_INT_FIELDS = ('jobid', 'jobfiles', 'jobbytes', 'readbytes', 'joberrors', 'jobmissingfiles', 'poolid',
               'clientid', 'filesetid', 'priorjobid', 'volsessionid', 'volsessiontime', 'jobtdate', 'purgedfiles')


class BconsoleParseError(TapeopsError, ValueError):
    """bconsole printed something else than the answer asked for; the message quotes what it printed."""

    reason = 'bconsole_output'


def _lines(text):
    if isinstance(text, bytes):
        text = text.decode('utf-8', 'replace')
    return (text or '').splitlines()


def _complete_lines(text):
    """The lines of a listing (``llist``, ``list joblog``) that bconsole ended: a last line without its end was cut
    short (a truncated capture, a killed session) and is left out rather than read as a shorter value. (Not for
    what may end in a prompt, which has no line end.)"""
    if isinstance(text, bytes):
        text = text.decode('utf-8', 'replace')
    lines = _lines(text)
    if lines and not text.endswith(('\n', '\r')):
        lines.pop()
    return lines


def said(text, limit=6):
    """What bconsole printed besides its banner and the echoed command: the Director's own words, for a message."""
    lines = [line.strip() for line in _lines(text)]
    kept = [line for line in lines if line and not line.startswith(_BANNER) and not line.startswith('# ')]
    if kept and kept[0].split(' ', 1)[0] in _COMMANDS:
        kept = kept[1:]
    if not kept:
        return 'nothing but its banner' if any(lines) else 'nothing'
    return ' / '.join(kept[:limit]) + (' ...' if len(kept) > limit else '')


def name_arg(name, what='job'):
    """``name`` as one bconsole argument (in double quotes); ValueError for a name bconsole could not pass on."""
    if not isinstance(name, str) or not _NAME.match(name) or name != name.strip():
        raise ValueError('%s %r is not a Bacula resource name (letters, digits, spaces and - _ . : only, 1 to 127 '
                         'characters, no leading or trailing space): give the name as the Director\'s configuration '
                         'has it.' % (what, name))
    return '"%s"' % name


def run_command(job, level='Full'):
    """``run job="JOB" level=Full yes``; ValueError for a name or level bconsole would misread."""
    if level not in RUN_LEVELS:
        raise ValueError('level must be one of %s, got %r.' % (', '.join(RUN_LEVELS), level))
    return 'run job=%s level=%s yes' % (name_arg(job), level)


def mount_command(storage, slot, drive=0):
    """``mount storage="S" slot=N drive=D``: load a cartridge and read its label before a job (autochangers)."""
    if not isinstance(slot, int) or isinstance(slot, bool) or slot < 1:
        raise ValueError('slot must be a slot number (1 or more), got %r.' % (slot,))
    if not isinstance(drive, int) or isinstance(drive, bool) or drive < 0:
        raise ValueError('drive must be a drive index (0 or more), got %r.' % (drive,))
    return 'mount storage=%s slot=%d drive=%d' % (name_arg(storage, 'storage'), slot, drive)


def parse_run(text):
    """The job id of ``run ... yes``; BconsoleParseError with the Director's words when no job was queued."""
    for line in _lines(text):
        match = _QUEUED.match(line.strip())
        if match:
            return int(match.group(1))
    raise BconsoleParseError('The Director queued no job; bconsole printed: %s.' % said(text))


def parse_mount(text):
    """``{'ok', 'volume', 'lines'}`` of ``mount ...``: ok when the Director says the drive is mounted (3001)."""
    volume = None
    lines = []
    for line in _lines(text):
        line = line.strip()
        if not line or line.startswith(_BANNER) or line.startswith('mount ') or line.startswith('#'):
            continue
        lines.append(line)
        match = re.search(r'(?:^3001 Mounted Volume: (\S+)|is (?:already )?mounted with Volume "([^"]*)")', line)
        if match:
            volume = match.group(1) or match.group(2)
    return {'ok': volume is not None, 'volume': volume, 'lines': lines}


def parse_cancel(text):
    """True when the Director marked the job to be canceled (``3000 JobId=N Job="..." marked to be canceled.``)."""
    return any(re.match(r'^3000 JobId=\d+ .*marked to be canceled\.', line.strip()) for line in _lines(text))


def parse_wait(text):
    """``{'jobid', 'status', 'status_text'}`` of ``wait jobid=N``; BconsoleParseError when it printed no status."""
    jobid = status = words = None
    for line in _lines(text):
        line = line.strip()
        match = _WAIT_ID.match(line)
        if match:
            jobid = int(match.group(1))
            continue
        match = _WAIT_STATUS.match(line)
        if match:
            words, status = match.group(1), match.group(2)
    if status is None:
        raise BconsoleParseError('bconsole printed no job status for the wait; it printed: %s.' % said(text))
    return {'jobid': jobid, 'status': status, 'status_text': words}


def parse_llist(text):
    """The Job record of ``llist jobid=N`` as a dict (field names lower case, counts as int); {} when none.

    Only the first record is read (one job id was asked for).
    """
    out = {}
    for line in _complete_lines(text):
        if not line.strip():
            if out:
                break
            continue
        match = _LLIST.match(line)
        if not match or line.lstrip().startswith(_BANNER):
            continue
        key, value = match.group(1).lower(), match.group(2)
        if key in out:          # a second record: only the first is asked for
            break
        if key in _INT_FIELDS:
            digits = value.replace(',', '')
            value = int(digits) if digits.isdigit() else None
        out[key] = value
    return out if 'jobid' in out else {}


def split_joblog(text):
    """The entries of ``list joblog``: ``[{'daemon', 'jobid', 'text'}]``, each entry's text with its lines joined."""
    entries = []
    current = None
    in_log = False
    for raw in _complete_lines(text):
        line = raw.rstrip()
        stripped = line.strip()
        if stripped.startswith('+-'):
            if current is not None:
                entries.append(current)
                current = None
            continue
        if re.match(r'^\|\s*LogText\s*\|$', stripped):
            in_log = True
            continue
        if stripped.startswith('| JobId ') or re.match(r'^\|\s*\d+\s*\|', stripped):
            in_log = False          # the job list bconsole prints after the log
            continue
        match = _ENTRY.match(stripped)
        if match and (in_log or stripped.startswith('| ') or not entries):
            if current is not None:
                entries.append(current)
            current = {'daemon': match.group(1), 'jobid': int(match.group(2)), 'lines': [_cell(match.group(3))]}
            continue
        if current is None:
            continue
        if _ENTRY_END.match(stripped):
            entries.append(current)
            current = None
            continue
        current['lines'].append(_cell(line))
    if current is not None:
        # in the log table every entry ends at a border: one still open there was cut short
        current['open'] = in_log
        entries.append(current)
    return [{'daemon': e['daemon'], 'jobid': e['jobid'], 'text': '\n'.join(e['lines']).strip('\n'),
             'open': e.get('open', False)} for e in entries]


def _cell(line):
    """A line of a table cell: without the table's right border (``   |``) when it has one."""
    return re.sub(r'\s+\|$', '', line.rstrip())


def _report(text):
    """The end-of-job report's ``Field: value`` lines as a dict (field as Bacula writes it)."""
    out = {}
    for line in text.splitlines():
        match = _REPORT.match(line)
        if match:
            out[match.group(1).strip()] = match.group(2)
    return out


def _number(text):
    """The first number of a report value (``230,450,176 (230.4 MB)`` -> 230450176), or None."""
    match = re.match(r'^\s*([\d,]+(?:\.\d+)?)', text or '')
    if not match:
        return None
    value = match.group(1).replace(',', '')
    return float(value) if '.' in value else int(value)


def parse_joblog(text):
    """What ``list joblog jobid=N`` says about the job.

    ``{'entries': [...], 'report': {field: text}, 'termination', 'sd_bytes', 'fd_bytes', 'volume_bytes',
    'volumes', 'rate_mb_s', 'data_seconds', 'data_mb_s', 'errors', 'warnings'}``: ``rate_mb_s`` is Bacula's
    ``Rate`` (the whole job), ``data_seconds`` / ``data_mb_s`` the storage daemon's data phase (None when the
    log has no such line, as a job that sent no data). ``errors`` and ``warnings`` are the log's ``Error:`` /
    ``Fatal error:`` and ``Warning:`` entries, as Bacula wrote them.
    """
    entries = split_joblog(text)
    report = {}
    out = {'entries': entries, 'report': report, 'termination': None, 'sd_bytes': None, 'fd_bytes': None,
           'volume_bytes': None, 'volumes': [], 'rate_mb_s': None, 'data_seconds': None, 'data_mb_s': None,
           'errors': [], 'warnings': []}
    for entry in entries:
        body = entry['text']
        first = body.split('\n', 1)[0]
        if re.match(r'^(?:Error: )?(?:Bacula|Bareos) \S+ [\d.]+ \(', first):
            report.update(_report(body))
        elif entry['open']:
            continue        # an error or warning cut short is not quoted in part
        elif first.startswith(('Fatal error:', 'Error:')):
            out['errors'].append('%s: %s' % (entry['daemon'], ' '.join(body.split())))
        elif first.startswith('Warning:'):
            out['warnings'].append('%s: %s' % (entry['daemon'], ' '.join(body.split())))
        match = _DATA_PHASE.search(first)
        if match:
            hours, minutes, seconds, number, suffix = match.groups()
            out['data_seconds'] = int(hours) * 3600 + int(minutes) * 60 + int(seconds)
            try:
                out['data_mb_s'] = round(float(number) * _SUFFIX[suffix] / 1e6, 6)
            except ValueError:
                out['data_mb_s'] = None
    out['termination'] = report.get('Termination')
    out['sd_bytes'] = _number(report.get('SD Bytes Written'))
    out['fd_bytes'] = _number(report.get('FD Bytes Written'))
    out['volume_bytes'] = _number(report.get('Last Volume Bytes'))
    out['volumes'] = (report.get('Volume name(s)') or '').replace('|', ' ').split()
    rate = re.match(r'^([\d.]+) KB/s', report.get('Rate') or '')
    if rate:
        try:
            out['rate_mb_s'] = round(float(rate.group(1)) / 1000.0, 6)
        except ValueError:
            pass
    return out


def _seconds_between(start, end):
    try:
        fmt = '%Y-%m-%d %H:%M:%S'
        return int((datetime.datetime.strptime(end, fmt) - datetime.datetime.strptime(start, fmt)).total_seconds())
    except (TypeError, ValueError):
        return None


def job_record(llist, joblog=None, wait=None):
    """The job as the collection returns it (the fields of ``_records.BaculaJob``) from the parsed answers.

    ``llist`` (parse_llist) is the catalog's record and is required; ``joblog`` (parse_joblog) adds the report,
    the data phase and the messages; ``wait`` (parse_wait) the status words.
    """
    if not llist or llist.get('jobid') is None:
        raise BconsoleParseError('The catalog has no record of the job (llist printed no JobId).')
    joblog = joblog or {}
    status = llist.get('jobstatus') or (wait or {}).get('status')
    start, end = llist.get('starttime'), llist.get('endtime')
    return {
        'jobid': llist['jobid'],
        'job': llist.get('job'),
        'name': llist.get('name'),
        'client': llist.get('clientname'),
        'fileset': llist.get('fileset'),
        'pool': llist.get('poolname'),
        'status': status,
        'status_text': JOB_STATUS.get(status) if status else None,
        'level': LEVELS.get(llist.get('level'), llist.get('level')),
        'files': llist.get('jobfiles'),
        'bytes': llist.get('jobbytes'),
        'error_count': llist.get('joberrors'),
        'start_time': start,
        'end_time': end,
        'elapsed_seconds': _seconds_between(start, end),
        'rate_mb_s': joblog.get('rate_mb_s'),
        'data_seconds': joblog.get('data_seconds'),
        'data_mb_s': joblog.get('data_mb_s'),
        'sd_bytes': joblog.get('sd_bytes'),
        'volume_bytes': joblog.get('volume_bytes'),
        'volumes': list(joblog.get('volumes') or []),
        'termination': joblog.get('termination'),
        'messages': list(joblog.get('errors') or []) + list(joblog.get('warnings') or []),
    }


# ---------------------------------------------------------------------------
# running a job: one bconsole session per command


class BaculaJobError(TapeopsError):
    """A job that could not be started, did not end in time or did not end well.

    ``record``: what is known of the job (job_record's fields, or {} before it was queued); ``evidence``: the
    bconsole call that showed it (``cmd``, ``rc``, ``stdout``, ``stderr``).
    """

    def __init__(self, msg, reason, record=None, evidence=None):
        super().__init__(msg, reason)
        self.record = dict(record or {})
        self.evidence = dict(evidence or {})


class Console:
    """bconsole, one session per command: ``bconsole [-c CONFIG]`` with the command on its standard input.

    ``run(cmd, data=..., timeout=...)`` runs a command line and returns an object with ``cmd``, ``rc``,
    ``stdout``, ``stderr`` (_cli.run); it raises _cli.CliError when bconsole cannot run or does not end in time.
    ``sent`` lists every command sent, in order.
    """

    def __init__(self, bconsole, run, config=None):
        self.bconsole = bconsole
        self.config = config
        self._run = run
        self.sent = []

    def argv(self):
        return [self.bconsole] + (['-c', self.config] if self.config else [])

    def command(self, text, timeout=120):
        """One session: ``text`` sent, its result returned."""
        self.sent.append(text)
        return self._run(self.argv(), data=text + '\n', timeout=timeout)


def _evidence(res):
    return dict((key, getattr(res, key, None)) for key in ('cmd', 'rc', 'stdout', 'stderr'))


def _connected(res, what):
    """Raise BaculaJobError when bconsole did not reach the Director (no ``1000 OK`` banner)."""
    if '1000 OK' in (res.stdout or ''):
        return
    raise BaculaJobError(
        'bconsole could not talk to the Director for %s (rc %s): %s. Check that the Director runs and that the '
        'bconsole configuration names it (address, port, password).' % (what, res.rc, said(
            (res.stdout or '') + '\n' + (res.stderr or ''))), 'director_unreachable', evidence=_evidence(res))


def read_job(console, jobid, timeout=120, wait=None):
    """The job's record from the catalog and its log (``llist``, ``list joblog``)."""
    res = console.command('llist jobid=%d' % jobid, timeout=timeout)
    _connected(res, 'llist jobid=%d' % jobid)
    llist = parse_llist(res.stdout)
    if not llist:
        raise BaculaJobError('The catalog has no job %d; bconsole printed: %s.' % (jobid, said(res.stdout)),
                             'bconsole_output', evidence=_evidence(res))
    log = console.command('list joblog jobid=%d' % jobid, timeout=timeout)
    _connected(log, 'list joblog jobid=%d' % jobid)
    return job_record(llist, parse_joblog(log.stdout), wait)


def run_job(console, job, level='Full', mount=None, timeout=3600, cancel_on_timeout=True, timeout_error=Exception):
    """Start one job, wait for its end and read it back: ``(record, mount)`` (see job_record, parse_mount).

    ``mount``: ``{'storage', 'slot', 'drive'}`` to mount first (the cartridge loaded and its label read before the
    job starts), or None. ``timeout``: seconds the job may take; past it the job is cancelled (when
    ``cancel_on_timeout``) and BaculaJobError says so. ``timeout_error``: the exception ``console``'s runner raises
    when a command does not end in time (_cli.CliError; its ``timed_out`` says a timeout from another failure).
    A job that ends with a status other than T or W raises BaculaJobError with its record and Bacula's messages.
    """
    command = run_command(job, level)
    mounted = None
    if mount:
        text = mount_command(mount['storage'], mount['slot'], mount.get('drive') or 0)
        res = console.command(text, timeout=max(120, min(timeout, 900)))
        _connected(res, text)
        mounted = parse_mount(res.stdout)
        if not mounted['ok']:
            raise BaculaJobError('The Director did not mount slot %d of storage %s: %s. Check the storage name, the '
                                 'slot and that its cartridge is labelled in a pool (bconsole: list volumes).' % (
                                     mount['slot'], mount['storage'], said(res.stdout)),
                                 'mount_failed', evidence=_evidence(res))
    res = console.command(command)
    _connected(res, command)
    try:
        jobid = parse_run(res.stdout)
    except BconsoleParseError as exc:
        raise BaculaJobError('%s Check the job name (bconsole: show jobs).' % exc.msg, 'job_not_queued',
                             evidence=_evidence(res)) from None
    try:
        res = console.command('wait jobid=%d' % jobid, timeout=timeout)
    except timeout_error as exc:
        if not getattr(exc, 'timed_out', False):
            raise
        cancelled = False
        if cancel_on_timeout:
            try:
                # bconsole 9.6.7 takes 'yes' as an argument and asks nothing
                cancelled = parse_cancel(console.command('cancel jobid=%d yes' % jobid).stdout)
            except TapeopsError:
                cancelled = False
        record = _record_or_empty(console, jobid)
        raise BaculaJobError('Bacula job %d (%s) did not end within %d seconds%s. Raise timeout for a longer job, '
                             'or see why it waits (bconsole: status director).' % (
                                 jobid, job, timeout, '; it was cancelled' if cancelled else
                                 ' and was not cancelled: it may still run' if cancel_on_timeout else
                                 ' and still runs'), 'timeout', record=record) from None
    _connected(res, 'wait jobid=%d' % jobid)
    try:
        waited = parse_wait(res.stdout)
    except BconsoleParseError as exc:
        raise BaculaJobError(exc.msg, 'bconsole_output', record={'jobid': jobid}, evidence=_evidence(res)) from None
    record = read_job(console, jobid, wait=waited)
    if record['status'] not in DONE_OK:
        words = '; '.join(record['messages']) or 'its log holds no error message (bconsole: list joblog jobid=%d)' % (
            jobid)
        raise BaculaJobError('Bacula job %d (%s) ended with status %s (%s)%s: %s' % (
            jobid, record.get('name') or job, record['status'], record['status_text'] or waited['status_text'],
            ', "%s"' % record['termination'] if record.get('termination') else '', words), 'job_failed',
            record=record)
    return record, mounted


def _record_or_empty(console, jobid):
    try:
        return read_job(console, jobid)
    except TapeopsError:        # the timeout is the error to report; the record only adds to it
        return {'jobid': jobid}
