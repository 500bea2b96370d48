# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Competing ingest: a bounded fio write job next to the source read, never inside a source.

Private to this collection: may change without notice.

Media agents that stage to disk (disk-staging servers, dCache-style pools,
Bareos storage daemons with spooling) take in new data while they feed tape.
The source read can run with such a write job beside it: fio writes, at a given
rate or flat out, into a private scratch directory created inside the directory
the user names, rewriting at most ``size`` bytes of files there, and the
scratch directory is removed afterwards, also when anything fails.

The directory is refused when it is a source, lies inside one or contains one,
by resolved path and by device and inode of every directory on the way (a bind
mount of a source has the source's device and inode).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _fio
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _source_scaling
from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError

# fio files of at most this many bytes (a bounded ingest of 4 GiB is four files).
FILE_BYTES = 1073741824
# Seconds to wait for the write job to be writing before the read starts.
START_TIMEOUT_S = 20.0
# Seconds fio gets to stop and print its figures after SIGINT.
STOP_TIMEOUT_S = 30.0


class IngestError(TapeopsError):
    """The ingest cannot be used as given; the message says what to do."""


def _chain(path):
    """(device, inode) of ``path`` and of every directory above it, from the resolved path."""
    ids = []
    current = os.path.realpath(path)
    while True:
        st = os.stat(current)
        ids.append((st.st_dev, st.st_ino))
        parent = os.path.dirname(current)
        if parent == current:
            return ids
        current = parent


def _inside(inner, outer):
    inner = inner.rstrip('/') + '/'
    outer = outer.rstrip('/') + '/'
    return inner.startswith(outer)


def written_bytes(pid, proc='/proc'):
    """Bytes written (``wchar``) by a process and its children, from /proc; 0 where it cannot be read."""
    pids = [int(pid)]
    try:
        names = os.listdir(proc)
    except OSError:
        names = []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(os.path.join(proc, name, 'stat')) as handle:
                stat = handle.read()
            # pid (comm) state ppid ...: comm may hold blanks and parentheses, so split after the last ')'.
            if int(stat[stat.rindex(')') + 2:].split()[1]) == int(pid):
                pids.append(int(name))
        except (OSError, ValueError, IndexError):
            continue
    total = 0
    for number in pids:
        try:
            with open(os.path.join(proc, str(number), 'io')) as handle:
                for line in handle:
                    if line.startswith('wchar:'):
                        total += int(line.split()[1])
        except (OSError, ValueError, IndexError):
            continue
    return total


def check_directory(path, sources):
    """Refuse an ingest directory that is, contains or is inside a source; return its resolved path.

    ``sources``: the source paths (directories or single files), absolute.
    """
    if not path or not os.path.isabs(path):
        raise IngestError('ingest.path %r is not absolute: give the full path of a directory on the disk the '
                          'media agent stages new data to.' % (path,))
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise IngestError('ingest.path %s does not exist: create it (a directory outside every source).' % path)
    except OSError as exc:
        raise IngestError('ingest.path %s cannot be examined: %s. Check the path and its filesystem (mount, '
                          'dmesg).' % (path, exc.strerror or exc))
    if not os.path.isdir(path):
        raise IngestError('ingest.path %s is not a directory: give a directory outside every source.' % path)
    real = os.path.realpath(path)
    ingest_id = (st.st_dev, st.st_ino)
    ingest_chain = set(_chain(real))
    for source in sources:
        try:
            source_real = os.path.realpath(source)
            source_st = os.stat(source_real)
            source_chain = _chain(source_real)
        except OSError as exc:
            raise IngestError('Source %s cannot be examined to compare it with ingest.path: %s. Check the source '
                              'path and its filesystem (mount, dmesg).' % (source, exc.strerror or exc))
        source_id = (source_st.st_dev, source_st.st_ino)
        if source_id == ingest_id or source_real == real:
            raise IngestError('ingest.path %s is the source %s: the ingest writes files, and nothing is ever written '
                              'into a source. Give a directory outside every source.' % (path, source))
        if source_id in ingest_chain or _inside(real, source_real):
            raise IngestError('ingest.path %s is inside the source %s: nothing is ever written into a source. Give '
                              'a directory outside every source.' % (path, source))
        if ingest_id in source_chain or _inside(source_real, real):
            raise IngestError('ingest.path %s contains the source %s: the ingest would write next to the data being '
                              'measured. Give a directory that holds no source.' % (path, source))
    if _fio.needs_alias(real):
        raise IngestError('ingest.path %s holds characters fio cannot take in a job file (#, ;, ${, leading or '
                          'trailing blanks, a newline): give a directory with a plain name.' % path)
    if not os.access(real, os.W_OK | os.X_OK):
        raise IngestError('ingest.path %s is not writable: run as root (become: true) or pick a directory the '
                          'module may write to.' % path)
    return real


# Space left free beyond the ingest's files: 5 % of the filesystem, at least 64 MiB. The files are
# allocated when fio lays them out and never grow, so the margin is for everything else on the disk.
RESERVE_SHARE = 0.05
RESERVE_MIN_BYTES = 64 * 1048576


def reserve_bytes(path):
    """Space left free beyond the ingest: 5 % of the filesystem or 64 MiB, whichever is more."""
    st = os.statvfs(path)
    return max(RESERVE_MIN_BYTES, int(st.f_blocks * st.f_frsize * RESERVE_SHARE))


def check_space(path, size):
    st = os.statvfs(path)
    free = st.f_bavail * st.f_frsize
    need = int(size) + reserve_bytes(path)
    if need > free:
        raise IngestError('Not enough free space in %s for a %d-byte ingest: %d bytes free, %d needed with the reserve '
                          '(5 %% of the filesystem, at least 64 MiB). Lower ingest.size or pick another directory.'
                          % (path, size, free, need))
    return free


def build_job(directory, size, block_size=1048576, rate_bytes_s=None, direct=True, runtime_s=3600,
              log_prefix=None):
    """fio job text for the write job: ``size`` bytes of files in ``directory``, rewritten until stopped.

    ``directory`` must be a plain path (no ':' or fio job-file syntax). With
    ``direct`` the writes are O_DIRECT (the disk sees every byte at the rate
    written); buffered writes are flushed every 32 blocks (``fdatasync``) so
    rewriting the bounded files in the page cache cannot hide them from the disk.
    """
    size = int(size)
    block_size = int(block_size)
    if size < block_size:
        raise ValueError('The ingest size (%d) must hold at least one block (%d).' % (size, block_size))
    directory = _fio.escape_filename(directory)   # ValueError for names fio's job parser cannot take
    nrfiles = max(1, -(-size // FILE_BYTES))
    lines = [
        '; tapeops.qualify source_read_benchmark: competing ingest (writes into a private scratch directory)',
        '[global]',
        'rw=write',
        'ioengine=psync',
        'iodepth=1',
        'bs=%d' % block_size,
        'direct=%d' % (1 if direct else 0),
        'time_based=1',
        'runtime=%d' % int(runtime_s),
        'size=%d' % size,
        'nrfiles=%d' % nrfiles,
        'directory=%s' % directory,
        'filename_format=ingest.$filenum',
        'log_avg_msec=1000',
    ]
    if not direct:
        lines.append('fdatasync=32')
    if rate_bytes_s:
        # rate=<read>,<write>: limit the writes only.
        lines.append('rate=,%d' % int(rate_bytes_s))
    lines.append('')
    lines.append('[ingest]')
    if log_prefix:
        lines.append('write_bw_log=%s' % log_prefix)
    lines.append('')
    return '\n'.join(lines)


def parse_write_json(text):
    """Write figures of the ingest job from ``fio --output-format=json``: io_bytes, runtime_ms, error."""
    if not text:
        raise _fio.FioParseError('the ingest fio printed nothing.')
    start = 0 if text.startswith('{') else text.find('\n{') + 1
    if start <= 0 and not text.startswith('{'):
        raise _fio.FioParseError('the ingest fio did not print JSON (first line: %r).' % text.strip()[:200])
    try:
        data, _end = json.JSONDecoder().raw_decode(text[start:])
        job = data['jobs'][0]
        write = job.get('write') or {}
        return {'io_bytes': int(write.get('io_bytes') or 0), 'runtime_ms': int(write.get('runtime') or 0),
                'error': int(job.get('error') or 0)}
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
        raise _fio.FioParseError('the ingest fio JSON output is truncated or invalid (%s).' % exc)


class IngestRun:
    """One write job beside one source read: start, stop, figures, clean-up."""

    def __init__(self, plan, fio, tmpdir):
        self.plan = plan
        self.fio = fio
        self.tmpdir = tmpdir
        self.scratch = None
        self.proc = None
        self.out_path = os.path.join(tmpdir, 'ingest.json')
        self.err_path = os.path.join(tmpdir, 'ingest.err')
        self.log_dir = os.path.join(tmpdir, 'ingest-logs')
        self.removed = None
        self.cmd = None

    def start(self, runtime_s):
        self.scratch = tempfile.mkdtemp(prefix='.tapeops-ingest-', dir=self.plan['directory'])
        os.mkdir(self.log_dir, 0o700)
        job = build_job(self.scratch, self.plan['size_bytes'], self.plan['block_size'], self.plan['rate_bytes_s'],
                        self.plan['direct'], runtime_s, os.path.join(self.log_dir, 'ingest'))
        job_path = os.path.join(self.tmpdir, 'ingest.fio')
        with open(job_path, 'w') as handle:
            handle.write(job)
        self.cmd = [self.fio, '--output-format=json', job_path]
        env = dict(os.environ, LC_ALL='C', LANG='C')
        with open(self.out_path, 'wb') as out, open(self.err_path, 'wb') as err:
            # A session of its own: stop() signals the whole group, as Ctrl-C in a terminal does.
            self.proc = subprocess.Popen(self.cmd, stdout=out, stderr=err, env=env, close_fds=True,
                                         start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT_S
        # Writing has begun when fio's processes wrote a block (fio keeps its logs in memory until the end).
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            if written_bytes(self.proc.pid) >= self.plan['block_size']:
                return True
            time.sleep(0.2)
        return True

    def stop(self):
        """Stop fio (SIGINT: it ends the job and prints its figures); returns (figures or None, error or None)."""
        if self.proc is None:
            return None, 'the ingest did not start'
        if self.proc.poll() is None:
            self._signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL)
                self.proc.wait()
        with open(self.out_path, 'rb') as handle:
            stdout = handle.read().decode('utf-8', 'replace')
        with open(self.err_path, 'rb') as handle:
            stderr = handle.read().decode('utf-8', 'replace')
        try:
            figures = parse_write_json(stdout)
        except _fio.FioParseError as exc:
            return None, '%s fio exit code %s; stderr: %s' % (exc, self.proc.returncode, stderr.strip()[-1000:])
        series = []
        names = sorted(n for n in os.listdir(self.log_dir) if n.endswith('.log'))
        if names:
            with open(os.path.join(self.log_dir, names[0])) as handle:
                series, _bad = _source_scaling.parse_log_lenient(handle.read())
            series = _fio.series_mb_s(series, ddir=1)
        figures['series_mb_s'] = series
        figures['stderr'] = stderr.strip()[-1000:]
        return figures, None

    def _signal(self, number):
        try:
            os.killpg(self.proc.pid, number)
        except OSError:
            pass

    def kill(self):
        if self.proc is None:
            return
        # Also when fio itself has exited: nothing of its group may go on writing.
        self._signal(signal.SIGKILL)
        if self.proc.poll() is None:
            self.proc.wait()

    def cleanup(self):
        """Remove the scratch directory (never through a symlink); True when nothing is left."""
        self.kill()
        if self.scratch is None:
            self.removed = True
            return True
        if os.path.lexists(self.scratch) and not os.path.islink(self.scratch):
            shutil.rmtree(self.scratch, ignore_errors=True)
        self.removed = not os.path.lexists(self.scratch)
        return self.removed
