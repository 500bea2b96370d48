# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The run directory: the one owner of its files.

Private to this collection: may change without notice. Ground floor, beside
``_records``: it imports nothing above it. Every reader and writer of a run
directory goes through it (the ``qualify_verdict`` and ``qualify_report``
actions, ``_judge._fixes``, the reports, compare).

One run directory holds:

- ``hosts/<host>.json``: one document per host (``_records.HostReport``,
  schema version 2, docs/reports.md and docs/host-report.schema.json), written
  as soon as the host's verdict exists (``save``);
- ``summary.md``, ``report.html``, ``junit.xml`` and ``hosts/<host>.html``:
  the fleet reports (``_reporting._render`` writes them through ``atomic_write``).

A host's file name is its inventory name where that is a safe file name, and
otherwise the name made safe plus ``~`` and a short hash of the real name
(``file_stem``), so two hosts never share a file.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
import tempfile

from ansible_collections.tapeops.qualify.plugins.module_utils import _records
from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError

HOSTS_DIR = 'hosts'
SUMMARY_MD = 'summary.md'
REPORT_HTML = 'report.html'
JUNIT_XML = 'junit.xml'
# an observe run's forecast against observed (qualify_compare_to), as data
AGAINST_OBSERVED_JSON = 'against_observed.json'

STATUS_OK = 'ok'
STATUS_FAILED = 'failed'
STATUS_MISSING = 'missing'
# a drive's row (never a host's status): another run or process had the drive (DriveEntry.busy)
STATUS_BUSY = 'busy'

_SAFE_NAME = re.compile(r'[^A-Za-z0-9._-]+')
# '~' is never in a name kept as it is (_SAFE_NAME replaces it), so a stem with it cannot be a kept name
_HASHED = '~'
_HASH_CHARS = 10

EXAMPLE_RUN = 'reports/20261123T101500Z'


class RunError(TapeopsError):
    """A run directory or one of its documents cannot be used; the message says what to do."""


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()


def file_stem(host):
    """The file name (without extension) of a host's document and page: one per host name.

    The inventory name as it is when it is a safe file name (letters, digits,
    ``.``, ``_``, ``-``, not starting or ending with ``.`` or ``_``);
    otherwise the name made safe plus ``~`` and the first 10 hex digits of the
    name's SHA-256, so ``a/b`` and ``a_b`` get different files. Raises RunError
    for a name with nothing usable in it.
    """
    host = str(host)
    safe = _SAFE_NAME.sub('_', host).strip('._')
    if not safe:
        raise RunError('Host name %r gives no usable file name: give the host an inventory name with letters or '
                       'digits (ansible_host can stay as it is).' % (host,))
    if safe == host:
        return safe
    return '%s%s%s' % (safe, _HASHED, hashlib.sha256(host.encode('utf-8', 'surrogatepass')).hexdigest()[:_HASH_CHARS])


def host_json_path(run_dir, host):
    return os.path.join(run_dir, HOSTS_DIR, file_stem(host) + '.json')


def host_page(host):
    """A host's page, relative to the run directory (``hosts/<stem>.html``): the link the fleet pages use."""
    return '%s/%s.html' % (HOSTS_DIR, file_stem(host))


def atomic_write(path, text):
    """Write ``text`` to ``path`` through a temporary file and a rename."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix='.%s.' % os.path.basename(path), dir=directory)
    try:
        with os.fdopen(fd, 'w', encoding='utf-8') as handle:
            handle.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def placeholder(host, status, error):
    """The document of a host without measurements: failed (with why) or missing from the run."""
    return _records.HostReport(
        host=str(host), status=status, error=error, generated_at=utc_now(), run={}, facts={}, drives=[],
        verdicts=[]).to_dict()


def save(run_dir, document):
    """Write one host's document now (before any other host finishes); its path.

    ``document``: the host's ``_records.HostReport``, made plain data here (the JSON boundary), or a document
    already read as data.
    """
    if isinstance(document, _records.Record):
        document = document.to_dict()
    return atomic_write(host_json_path(run_dir, document['host']),
                        json.dumps(document, indent=2, sort_keys=True, default=str) + '\n')


def read(path):
    """One host document from its file as a dict (schema version 2): ``read_report``'s record as data."""
    return read_report(path).to_dict()


def read_report(path):
    """One host document from its file: its ``_records.HostReport`` (schema version 2).

    Raises RunError saying why the file cannot be used: unreadable or not
    JSON (reason ``unreadable``), or not a document this collection reads
    (reason ``schema``, with the host named in ``host`` when the file says it).
    """
    try:
        with open(path, encoding='utf-8') as handle:
            data = json.load(handle)
    except (OSError, ValueError) as exc:
        raise RunError('Cannot read %s (%s): delete it and re-run this host.' % (path, exc), reason='unreadable')
    try:
        return _records.HostReport.load(data)
    except (_records.RecordError, TypeError) as exc:
        error = RunError('%s has %s' % (path, exc), reason='schema')
        error.host = data.get('host') if isinstance(data, dict) and data.get('host') else None
        raise error


def load(path):
    """One host document from its file (``read``); a failed entry saying why when it cannot be read."""
    try:
        return read(path)
    except RunError as exc:
        return placeholder(getattr(exc, 'host', None) or os.path.basename(path)[:-5], STATUS_FAILED, str(exc))


def host_files(run_dir):
    """The paths of a run directory's host documents, by file name ([] when it has none)."""
    hosts_dir = os.path.join(run_dir, HOSTS_DIR)
    try:
        names = os.listdir(hosts_dir)
    except OSError:
        return []
    return [os.path.join(hosts_dir, n) for n in sorted(names) if n.endswith('.json') and not n.startswith('.')]


def has_hosts(run_dir):
    """Whether ``run_dir`` is a run directory (it holds ``hosts/``)."""
    return os.path.isdir(os.path.join(run_dir, HOSTS_DIR))


def load_run(run_dir, expected_hosts=None):
    """All host documents of a run directory, plus a 'missing' entry for each expected host without one."""
    docs = [load(path) for path in host_files(run_dir)]
    seen = set(doc['host'] for doc in docs)
    for host in expected_hosts or ():
        if str(host) not in seen:
            docs.append(placeholder(host, STATUS_MISSING,
                                    'No result: the host was unreachable or failed before its verdict '
                                    '(see the play output); re-run with -l %s.' % host))
    docs.sort(key=lambda d: d['host'])
    return docs


def read_observed(run_dir, host):
    """``host``'s document of the observe run in directory ``run_dir``: its ``_records.HostReport``.

    What a qualify run takes the drives' own compression ratios from (``qualify_tape_ratio_from``). Raises
    RunError whose ``reason`` says why there is none: ``no_directory`` (``run_dir`` does not exist),
    ``not_a_directory`` (it is a file), ``not_a_run`` (it holds no ``hosts/``), ``no_document`` (no
    ``hosts/<host>.json``), ``unreadable`` / ``schema`` (``read_report``'s), ``not_observe`` (a qualify or
    upgrade-check run's document: no ``observed``); its ``path`` names the directory or the document.
    """
    path = host_json_path(run_dir, host)
    if not os.path.lexists(run_dir):
        problem, reason, where = 'does not exist', 'no_directory', run_dir
    elif not os.path.isdir(run_dir):
        problem, reason, where = 'is not a directory', 'not_a_directory', run_dir
    elif not has_hosts(run_dir):
        problem, reason, where = 'holds no hosts/', 'not_a_run', run_dir
    elif not os.path.isfile(path):
        problem, reason, where = 'has no document of %s' % host, 'no_document', path
    else:
        try:
            report = read_report(path)
        except RunError as exc:
            exc.path = path
            raise
        if report.observe_run:
            return report
        problem, reason, where = 'is not an observe run\'s document', 'not_observe', path
    error = RunError('%s %s.' % (where, problem), reason=reason)
    error.path = where
    raise error


def load_earlier(compare_to, name='qualify_compare_to'):
    """The host documents of the earlier run in directory ``compare_to``, every one of them readable.

    Raises RunError (reason ``compare_refused``) saying why the directory
    cannot be compared with: it is not a directory, it holds no
    ``hosts/*.json``, or any of its documents cannot be read (truncated, not
    JSON, another schema version). A comparison that skipped such a document
    would list that host's drives as new and hide a regression, so one bad
    document refuses the whole comparison. ``name`` is the variable the
    directory was given as, named in the message.
    """
    example = 'the directory of an earlier run (it holds hosts/<host>.json), e.g. %s' % EXAMPLE_RUN
    if not compare_to or not os.path.isdir(compare_to):
        raise RunError('%s=%s is not a run directory: give %s.' % (name, compare_to, example),
                       reason='compare_refused')
    paths = host_files(compare_to)
    if not paths:
        raise RunError('%s=%s holds no host results (hosts/*.json): give %s.' % (name, compare_to, example),
                       reason='compare_refused')
    docs, bad = [], []
    for path in paths:
        try:
            doc = read(path)
        except RunError as exc:
            if exc.reason == 'unreadable':
                bad.append('%s cannot be read as JSON (truncated or damaged)' % path)
            else:
                bad.append(str(exc).rstrip('.'))
            continue
        if doc.get('status') != STATUS_MISSING:
            docs.append(doc)
    if bad:
        raise RunError(
            '%s=%s is refused as a comparison: %d of its %d host document(s) cannot be read, so the drives on them '
            'could not be compared (%s). Give an earlier run whose documents are whole, or leave %s unset.' % (
                name, compare_to, len(bad), len(paths), '; '.join(bad), name), reason='compare_refused')
    return docs
