# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Run one step of a source read: fio reads the sources with N streams at once; its figures.

Private to this collection: may change without notice. Before the steps:
the sources fio can read (``usable_sources``), aliases for file names fio
cannot take (``aliases``), the page cache's state (``cache_info``). Then
``StepRun.run`` per step: the job file, fio (with the competing ingest job
beside it when asked), fio's JSON and bandwidth logs turned into figures.
"""

from __future__ import annotations

import os

from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _fio
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _contention
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _source_scaling
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _source_tree
from ansible_collections.tapeops.qualify.plugins.module_utils._measure._source_plan import SourceReadError
from ansible_collections.tapeops.qualify.plugins.module_utils._tools._cli import CliError, run

# O_DIRECT reads must be multiples of the logical block size; 4096 covers
# 512e and 4Kn disks alike (a 512-byte-sector disk accepts 4 KiB reads too).
DIRECT_MIN_READ = 4096

_RUN_AGAIN = 'Run again; if it repeats, run fio by hand with the job file and report its output.'


def mem_total_bytes(text):
    """``MemTotal`` of a ``/proc/meminfo`` text, in bytes; None when it has no such line or no positive number."""
    for line in text.splitlines():
        if line.startswith('MemTotal:'):
            try:
                value = int(line.split()[1]) * 1024
            except (ValueError, IndexError):
                return None
            return value if value > 0 else None
    return None


def ram_bytes(meminfo_path='/proc/meminfo'):
    """The host's memory in bytes (``MemTotal``), or None when ``meminfo_path`` cannot be read or parsed."""
    try:
        with open(meminfo_path, errors='replace') as handle:
            return mem_total_bytes(handle.read())
    except OSError:
        return None


def time_based(job_text):
    """Make every job of a ``_fio.build_job`` text loop over its files until ``runtime`` (fio ``time_based``).

    fio starts again at the first file when a pass ends and evicts each file's
    cached pages again when it reopens it (``invalidate=1``): measured with fio
    3.33 on a throttled loop device, 5.7 passes of a 21 MB tree in 6 s read at
    the throttle's 20 MB/s, not at memory speed.
    """
    marker = '\n[global]\n'
    if marker not in job_text:
        raise ValueError('The fio job text has no [global] section.')
    return job_text.replace(marker, marker + 'time_based=1\n', 1)


def usable_sources(sources, min_size, warnings, passed_over):
    """The sources holding a file fio can read (``min_size``: the smallest read); a warning for each left out."""
    usable = []
    for source in sources:
        if not source['files_sizes']:
            warnings.append('%s holds no file with data to read (%d empty files, %d directories): this '
                            'stream was left out.' % (source['path'], source['empty_files'], source['dirs']))
            continue
        if not any(_fio.readable_bytes(size, min_size) for _p, size in source['files_sizes']):
            warnings.append('%s holds no file of at least %d bytes, which cache=direct cannot read below: '
                            'this stream was left out.' % (source['path'], min_size))
            continue
        usable.append(source)
    if not usable:
        raise SourceReadError('The source paths hold no file with data to read (see passed_over): give the '
                              'directories the backup actually reads, or run as root (become: true) if files '
                              'were passed over for permissions.', passed_over=passed_over)
    return usable


def aliases(streams, tmpdir):
    """{path: alias} for the files whose names a fio job file cannot hold (links in a private directory)."""
    unsafe = [path for stream in streams for path, _size in stream['files_sizes'] if _fio.needs_alias(path)]
    if not unsafe:
        return {}
    alias_dir = os.path.join(tmpdir, 'aliases')
    os.mkdir(alias_dir, 0o700)
    return _source_tree.make_aliases(unsafe, alias_dir)


def cache_info(method, sources, min_size, warnings):
    """The result's ``cache``: how the page cache is kept out of the reads, and the data set against RAM."""
    data = sum(sum(_fio.readable_bytes(size, min_size) for _p, size in s['files_sizes']) for s in sources)
    ram = ram_bytes()
    info = {'method': method, 'dropped': False, 'bypassed': False, 'data_bytes': data, 'ram_bytes': ram,
            'data_vs_ram': round(data / float(ram), 8) if ram else None, 'note': ''}
    memory_fs = [s['path'] for s in sources if s['filesystem'] and s['filesystem']['memory']]
    if method == 'drop':
        if os.geteuid() != 0:
            raise SourceReadError('cache=drop needs root to write /proc/sys/vm/drop_caches: use become: true, '
                                  'or cache=evict (the default) which needs no privilege.')
        info['note'] = ('Page cache, dentries and inodes dropped host-wide before each read (sync; drop_caches=3); '
                        'repeated passes evict each file again before reading it.')
    elif method == 'evict':
        info['bypassed'] = True
        info['note'] = ('Each file\'s cached pages were evicted (fio invalidate=1: posix_fadvise DONTNEED) just '
                        'before it was read, in every pass; buffered reads with kernel readahead, as backup agents '
                        'read.')
    elif method == 'direct':
        info['bypassed'] = True
        info['note'] = ('O_DIRECT reads (no page cache, no readahead): a pessimistic bound; the last '
                        '<4 KiB of each file is not read.')
    else:
        info['note'] = ('Page cache left alone (cache=keep): files already cached are read from RAM, and every '
                        'pass after the first mostly is.')
        if ram and data < ram:
            info['note'] += (' The data set (%d bytes) is smaller than RAM (%d bytes), so much of it may come '
                             'from cache: the rate can be far above the disks\'.' % (data, ram))
            warnings.append(info['note'])
    if memory_fs:
        info['bypassed'] = False
        info['note'] = ('%s on a memory filesystem: the cache cannot be dropped or bypassed, every read is a '
                        'RAM read.' % ', '.join(memory_fs))
    return info


def drop_caches(cache):
    os.sync()
    with open('/proc/sys/vm/drop_caches', 'w') as handle:
        handle.write('3\n')
    cache['dropped'] = True


def fio_cmd(fio, job_path, all_paths):
    cmd = [fio, '--readonly', '--output-format=json']
    alloc = _fio.alloc_size_kib(all_paths)
    if alloc != _fio.FIO_DEFAULT_ALLOC_KIB:
        cmd.append('--alloc-size=%d' % alloc)
    cmd.append(job_path)
    return cmd


def aggregate(streams):
    """The streams' figures together: bytes and files summed, the longest duration, the per-second sum."""
    total_bytes = sum(s['bytes'] for s in streams)
    duration_ms = max(s['duration_s'] for s in streams) * 1000.0
    series = _fio.sum_series([s['series_mb_s'] for s in streams])
    figures = _fio.summarize(total_bytes, duration_ms, series, sum(s['files'] for s in streams))
    figures['streams'] = len(streams)
    figures['passes'] = min(s['passes'] for s in streams)
    figures['samples'] = _source_scaling.sample_count(series)
    return figures


class StepRun:
    """Runs the steps of one read: fio with ``count`` streams over the usable sources, its figures.

    ``options`` is the read's ``ReadOptions``, ``cache`` its ``cache_info``
    (marked ``dropped`` when the caches are dropped before a step), ``tmpdir``
    the read's private directory for job files and logs; warnings go to
    ``warnings``.
    """

    def __init__(self, fio, options, sources, aliases_of, min_size, cache, tmpdir, warnings):
        self.fio = fio
        self.options = options
        self.sources = sources
        self.aliases = aliases_of
        self.min_size = min_size
        self.cache = cache
        self.tmpdir = tmpdir
        self.warnings = warnings

    def run(self, count, ingest=None):
        """One step: ``{count, requested, split, streams, assigned, aggregate, cmd, fio_version, inconclusive,
        contention, ingest, ingest_error}``; ``ingest`` an ``_ingest.IngestRun`` writing beside the read."""
        assigned, split = _source_scaling.assign_streams(self.sources, count)
        if len(assigned) < count:
            self.warnings.append('%d streams were asked for but the sources hold only %d files to share among them: '
                                 'measured with %d.' % (count, len(assigned), len(assigned)))
        label = 'n%d%s' % (count, '-ingest' if ingest else '')
        log_dir = os.path.join(self.tmpdir, 'logs-' + label)
        os.mkdir(log_dir, 0o700)
        all_paths, job_path = self._write_job(assigned, label, log_dir)
        cmd = fio_cmd(self.fio, job_path, all_paths)
        if self.options.cache == 'drop':
            drop_caches(self.cache)
        result, (reads_before, reads_after), ingest_figures, ingest_error = self._run_fio(cmd, len(all_paths), ingest)
        parsed, out_streams = self._figures(result, count, assigned, log_dir)
        total = aggregate(out_streams)
        return {'count': len(assigned), 'requested': count, 'split': split, 'streams': out_streams,
                'assigned': assigned,
                'aggregate': total, 'cmd': cmd, 'fio_version': parsed['fio_version'],
                'inconclusive': self._inconclusive(out_streams, total),
                'contention': _contention.sources(reads_before, reads_after, total.get('bytes')),
                'ingest': ingest_figures, 'ingest_error': ingest_error}

    def _write_job(self, assigned, label, log_dir):
        """The fio job file of the step: (every file path in it, the job file's path)."""
        options = self.options
        job_streams = []
        for stream in assigned:
            stream['read_sizes'] = [_fio.readable_bytes(size, self.min_size) for _p, size in stream['files_sizes']]
            job_streams.append({'name': stream['name'],
                                'files': [self.aliases.get(path, path) for path, _size in stream['files_sizes']],
                                'byte_budget': options.byte_budget})
        job_text = _fio.build_job(job_streams, block_size=options.block_size, direct=options.cache == 'direct',
                                  min_size=self.min_size, time_budget_s=options.time_budget or None,
                                  log_prefix_dir=log_dir, invalidate=options.cache != 'keep')
        if options.time_budget and not options.byte_budget:
            # Repeat short trees until the budget; with a byte budget fio's io_size wraps over the files instead.
            job_text = time_based(job_text)
        job_path = os.path.join(self.tmpdir, 'source-read-%s.fio' % label)
        with open(job_path, 'wb') as handle:
            handle.write(job_text.encode('utf-8', 'surrogateescape'))
        return [f for js in job_streams for f in js['files']], job_path

    def _run_fio(self, cmd, files, ingest):
        """Run fio (the ingest job beside it): (its result, (sectors read before, after), ingest figures, error)."""
        time_budget = self.options.time_budget
        timeout = None
        if time_budget:
            # fio stops itself at runtime; the margin covers setup of large file lists.
            timeout = time_budget * 2 + 120 + files // 5000
        ingest_figures = ingest_error = None
        if ingest is not None:
            runtime = (time_budget + 120 + files // 5000) if time_budget else 6 * 3600
            if not ingest.start(runtime):
                ingest_figures, ingest_error = ingest.stop()
                raise SourceReadError('The ingest write job did not start (%s). Check ingest.path, or set '
                                      'ingest.direct: false if its filesystem refuses O_DIRECT writes.' % (
                                          ingest_error or (ingest_figures or {}).get('stderr') or 'fio exited at once'))
        devices = _contention.source_devices([s.get('path') for s in self.sources if s.get('path')])
        reads_before = _contention.read_sectors(devices)
        try:
            result = run(cmd, timeout=timeout, hint='Check the source paths and fio\'s stderr above.')
        except CliError as exc:
            raise SourceReadError(**exc.as_fail_kwargs())
        finally:
            if ingest is not None:
                ingest_figures, ingest_error = ingest.stop()
        reads_after = _contention.read_sectors(devices)
        return result, (reads_before, reads_after), ingest_figures, ingest_error

    def _figures(self, result, count, assigned, log_dir):
        """(fio's parsed JSON, each stream's figures); fio failing or its output unreadable stops the step."""
        if result.rc != 0:
            raise SourceReadError(
                'fio failed with exit code %d while reading the sources.' % result.rc, cmd=result.cmd, rc=result.rc,
                stdout=result.stdout[-4000:], stderr=result.stderr[-4000:],
                hint='If a file vanished or changed during the run, run again; if fio ran out of memory '
                     '(smalloc), lower max_files.')
        try:
            parsed = _fio.parse_json(result.stdout)
            by_name = dict((job['name'], job) for job in parsed['jobs'])
        except (_fio.FioParseError, ValueError, TypeError, AttributeError, KeyError) as exc:
            raise SourceReadError('fio\'s output could not be read (%s): no figures for the %d-stream read.'
                                  % (exc, count), cmd=result.cmd, rc=result.rc, stdout=result.stdout[-4000:],
                                  stderr=result.stderr[-4000:], hint=_RUN_AGAIN)
        out_streams = []
        for stream in assigned:
            job = by_name.get(stream['name'])
            if job is None:
                raise SourceReadError('fio reported no job %s; its output is incomplete.' % stream['name'],
                                      stdout=result.stdout[-4000:], stderr=result.stderr[-4000:], hint=_RUN_AGAIN)
            out_streams.append(self._stream_figures(stream, job, log_dir))
        return parsed, out_streams

    def _inconclusive(self, out_streams, total):
        """``{'reason'}`` when the step's figures are too few to rest a floor on, else None."""
        options = self.options
        stopped_by_bytes = bool(options.byte_budget) and any(s['bytes'] >= options.byte_budget for s in out_streams) \
            and (not options.time_budget or total['duration_s'] < options.time_budget - 1)
        reason = _source_scaling.inconclusive_reason(
            total['samples'], options.min_samples, total['duration_s'], total['passes'], options.time_budget,
            options.byte_budget, stopped_by_bytes)
        return {'reason': reason} if reason else None

    def _stream_figures(self, stream, job, log_dir):
        series = self._series(log_dir, stream['name'])
        passes, files, complete = _source_scaling.passes_read(stream['read_sizes'], job['io_bytes'])
        figures = _fio.summarize(job['io_bytes'], job['runtime_ms'], series, files)
        whole = [unit for unit in stream['units'] if not unit['part'] or unit['part'][0] == 1]
        scan = [unit.get('scan_s') for unit in whole if unit.get('scan_s') is not None]
        figures.update({
            'path': stream['paths'][0],
            'paths': stream['paths'],
            'parts': [{'path': unit['path'], 'part': unit['part'], 'files': len(unit['files_sizes'])}
                      for unit in stream['units'] if unit['part']],
            'passes': passes,
            'samples': _source_scaling.sample_count(series),
            'tree_files': len(stream['files_sizes']),
            'tree_bytes': sum(size for _p, size in stream['files_sizes']),
            'empty_files': sum(unit['empty_files'] for unit in whole),
            'scan_s': round(sum(scan), 3) if scan else None,
            'complete': complete,
            'filesystem': stream['units'][0]['filesystem'],
            'fio_error': job['error'],
            'cpu_pct': round(job['usr_cpu'] + job['sys_cpu'], 2),
        })
        if job['error']:
            self.warnings.append('fio reported error %d on %s.' % (job['error'], ', '.join(stream['paths'])))
        return figures

    def _series(self, log_dir, name):
        # fio names the log <prefix>_bw.<job index>.log; one job per prefix here.
        candidates = sorted(f for f in os.listdir(log_dir) if f.startswith(name + '_bw.') and f.endswith('.log'))
        if not candidates:
            self.warnings.append('fio wrote no bandwidth log for %s: no per-second series.' % name)
            return []
        with open(os.path.join(log_dir, candidates[0]), 'rb') as handle:
            text = handle.read().decode('utf-8', 'replace')
        entries, bad = _source_scaling.parse_log_lenient(text)
        if bad:
            self.warnings.append('fio\'s bandwidth log for %s had %d malformed line%s (cut short?): the per-second '
                                 'series keeps the %d good ones.' % (name, bad, '' if bad == 1 else 's', len(entries)))
        try:
            return _fio.series_mb_s(entries)
        except (ValueError, TypeError) as exc:
            self.warnings.append('fio\'s bandwidth log for %s could not be read (%s): no per-second series.'
                                 % (name, exc))
            return []
