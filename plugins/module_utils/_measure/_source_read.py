# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Run the source read benchmark: walk, plan, run fio per stream count, turn its output into a result.

Private to this collection: may change without notice. The pure parts live in
``_fio`` (job text, JSON/log parsing, series math), ``_source_tree`` (walking,
mounts, synthetic layout) and ``_source_scaling`` (streams per step, passes,
samples, per-drive split, file sizes); ``_ingest`` runs the competing write
job. This file does the I/O around them.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time

from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _fio
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _contention
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _ingest
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _source_scaling
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _source_tree
from ansible_collections.tapeops.qualify.plugins.module_utils._tools._cli import CliError, find_tool, run
from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError

# O_DIRECT reads must be multiples of the logical block size; 4096 covers
# 512e and 4Kn disks alike (a 512-byte-sector disk accepts 4 KiB reads too).
DIRECT_MIN_READ = 4096

_SIZE_RE = re.compile(r'^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(i?b)?\s*$', re.IGNORECASE)

# The figures of one read that the result repeats for scaling steps and the ingest comparison.
_STEP_KEYS = ('mean_mb_s', 'p5_mb_s', 'min_mb_s', 'files_per_s', 'bytes', 'files', 'series_mb_s')


class SourceReadError(TapeopsError):
    """The benchmark cannot run; ``fail_kwargs`` go to ``fail_json``.

    ``hint``, the sentence saying what to do, ends ``msg`` (as ``CliError.as_fail_kwargs`` puts it there) and is
    kept on its own under ``hint`` too.
    """

    def __init__(self, msg, hint=None, **evidence):
        if hint and not msg.endswith(hint):
            msg = '%s %s' % (msg, hint)
        super().__init__(msg)
        self.fail_kwargs = dict(evidence, msg=msg)
        if hint:
            self.fail_kwargs['hint'] = hint


def parse_size(value, what='size'):
    """'64k', '10G', '1.5M', '4096' -> bytes (K/M/G/T/P are powers of 1024)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    match = _SIZE_RE.match(str(value))
    if not match:
        raise SourceReadError('%s %r is not a size: write e.g. 64k, 512M or 10G (powers of 1024).' % (what, value))
    number, unit = float(match.group(1)), match.group(2).lower()
    return int(number * 1024 ** ' kmgtp'.index(unit or ' '))


def ram_bytes(meminfo_path='/proc/meminfo'):
    try:
        with open(meminfo_path) as handle:
            for line in handle:
                if line.startswith('MemTotal:'):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def read_mounts():
    try:
        with open('/proc/self/mountinfo') as handle:
            return _source_tree.parse_mountinfo(handle.read())
    except OSError:
        return []


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


class SourceReadBenchmark:
    """One run of the benchmark for the module's parameters (a dict)."""

    def __init__(self, params, module=None, check_mode=False):
        self.params = params
        self.module = module
        self.check_mode = check_mode
        self.warnings = []
        # entries of the trees not read (not ``skipped``: Ansible reads that key as "the task was skipped")
        self.passed_over = []
        self.passed_over_counts = {}
        self.tmpdir = None
        self.synthetic_root = None
        self.ingest_plan = None
        self.ingest_run = None

    # -- planning -------------------------------------------------------
    def _options(self):
        p = self.params
        self.block_size = parse_size(p.get('block_size') or '64k', 'block_size')
        if self.block_size < 512 or self.block_size > 64 * 1048576:
            raise SourceReadError('block_size %s is outside 512 bytes..64 MiB: backup agents read 64k to 1M at a time.'
                                  % p.get('block_size'))
        self.byte_budget = parse_size(p['byte_budget'], 'byte_budget') if p.get('byte_budget') else None
        if self.byte_budget is not None and self.byte_budget < 1:
            raise SourceReadError('byte_budget must be a positive size (e.g. 20G), or left out for no byte limit.')
        self.time_budget = int(p.get('time_budget') or 0)
        if self.time_budget < 0:
            raise SourceReadError('time_budget must be 0 (no limit) or a number of seconds.')
        if not self.time_budget and not self.byte_budget:
            self.warnings.append('Neither time_budget nor byte_budget is set: every stream reads its whole tree '
                                 'once, however short that is.')
        self.cache = p.get('cache') or 'evict'
        self.sample_bytes = parse_size(p.get('compressibility_sample') or 0, 'compressibility_sample')
        self.min_samples = p.get('min_samples')
        self.min_samples = _source_scaling.DEFAULT_MIN_SAMPLES if self.min_samples is None else int(self.min_samples)
        if self.min_samples < 1:
            raise SourceReadError('min_samples must be at least 1 (one-second samples the floor rests on).')
        for key in ('streams', 'drives', 'streams_per_drive', 'scaling_max_streams'):
            value = p.get(key)
            if value is not None and int(value) < 1:
                raise SourceReadError('%s must be at least 1, got %s.' % (key, value))
        if p.get('streams_per_drive') is not None and p.get('drives') is None:
            raise SourceReadError('streams_per_drive needs drives (the number of tape drives read for at once).')
        if p.get('streams') is not None and p.get('drives') is not None:
            raise SourceReadError('Give either streams (total) or drives with streams_per_drive, not both.')
        explicit = p.get('scaling_streams')
        if explicit and any(int(c) < 1 for c in explicit):
            raise SourceReadError('scaling_streams must hold stream counts of at least 1, got %s.' % explicit)

    def _concurrency(self, sources):
        """(total streams, streams per drive or None) for the main measurement."""
        p = self.params
        if p.get('drives'):
            drives = int(p['drives'])
            per_drive = p.get('streams_per_drive')
            per_drive = int(per_drive) if per_drive else max(1, -(-sources // drives))
            return drives * per_drive, per_drive
        if p.get('streams'):
            return int(p['streams']), None
        return max(1, sources), None

    def _steps(self, count):
        p = self.params
        return _source_scaling.scaling_steps(count, enabled=p.get('scaling', True) is not False,
                                             explicit=p.get('scaling_streams'),
                                             max_streams=p.get('scaling_max_streams'))

    def _streams_from_paths(self, mounts):
        streams = []
        seen = set()
        for index, path in enumerate(self.params['paths']):
            path = os.path.normpath(path)
            if path in seen:
                raise SourceReadError('Source path %s is listed twice: give each path once (one stream per path).' % path)
            seen.add(path)
            started = time.monotonic()
            try:
                walked = _source_tree.walk_tree(
                    path, follow_symlinks=self.params.get('follow_symlinks', False),
                    one_file_system=self.params.get('one_file_system', True),
                    max_files=self.params.get('max_files'))
            except _source_tree.SourceError as exc:
                raise SourceReadError(str(exc), path=path)
            stream = self._stream(index, path, walked, mounts)
            stream['scan_s'] = round(time.monotonic() - started, 3)
            streams.append(stream)
        return streams

    def _stream(self, index, path, walked, mounts):
        fs = _source_tree.filesystem_of(os.path.realpath(path), mounts) if mounts else None
        for item in walked['passed_over']:
            self.passed_over.append({'path': item['path'], 'reason': item['why'], 'kind': item['reason']})
        for reason, count in walked['passed_over_counts'].items():
            self.passed_over_counts[reason] = self.passed_over_counts.get(reason, 0) + count
        if walked['passed_over_counts'].get('max_files'):
            self.warnings.append('%s holds more than max_files=%s files; the rest were not read.'
                                 % (path, self.params.get('max_files')))
        if fs and fs['network']:
            self.warnings.append('%s is on a network filesystem (%s from %s): the rate measured is the network\'s and '
                                 'the file server\'s, not a local disk\'s.' % (path, fs['fstype'], fs['source']))
        if fs and fs['memory']:
            self.warnings.append('%s is on %s (memory): every read comes from RAM, the rate says nothing about a '
                                 'disk.' % (path, fs['fstype']))
        return {
            'name': 'stream%d' % index,
            'path': path,
            'files_sizes': walked['files'],
            'tree_bytes': walked['bytes'],
            'tree_files': len(walked['files']),
            'empty_files': walked['empty_files'],
            'dirs': walked['dirs'],
            'filesystem': fs,
            'scan_s': None,
        }

    def _plan_synthetic(self, mounts):
        p = self.params
        base = p['synthetic_dir']
        try:
            _source_tree.check_source_path(base)
        except _source_tree.SourceError as exc:
            raise SourceReadError('synthetic_dir: %s' % exc)
        if not os.path.isdir(base):
            raise SourceReadError('synthetic_dir %s is not a directory: give a directory on the source filesystem.' % base)
        size = parse_size(p.get('synthetic_size') or '1G', 'synthetic_size')
        count = int(p.get('synthetic_streams') or 1)
        if count < 1:
            raise SourceReadError('synthetic_streams must be at least 1.')
        free = _source_tree.free_bytes(base)
        # Keep 5 % of the filesystem and 1 GiB beyond the data set free.
        st = os.statvfs(base)
        reserve = max(1073741824, int(st.f_blocks * st.f_frsize * 0.05))
        if size * count + reserve > free:
            raise SourceReadError(
                'Not enough free space in %s for a %d-byte synthetic data set: %d bytes free, %d needed with the '
                'reserve (1 GiB or 5 %% of the filesystem). Lower synthetic_size or pick another directory on the '
                'source filesystem.' % (base, size * count, free, size * count + reserve))
        plans = [_source_tree.plan_synthetic(size, p.get('synthetic_mix') or 'mixed', seed=i + 1) for i in range(count)]
        total = sum(s for plan in plans for _r, s in plan)
        return base, plans, total

    def _plan_ingest(self, source_paths):
        spec = self.params.get('ingest')
        if not spec:
            return None
        if not isinstance(spec, dict):
            raise SourceReadError('ingest must be a dictionary with at least path (a directory outside every source).')
        size = parse_size(spec.get('size') or '1G', 'ingest.size')
        block = parse_size(spec.get('block_size') or '1M', 'ingest.block_size')
        if block < 4096 or block > 64 * 1048576 or block % 4096:
            raise SourceReadError('ingest.block_size must be a multiple of 4 KiB within 4 KiB..64 MiB (O_DIRECT writes '
                                  'whole blocks), got %s.' % spec.get('block_size'))
        if size < block:
            raise SourceReadError('ingest.size (%d bytes) must hold at least one block of ingest.block_size (%d).'
                                  % (size, block))
        size -= size % block
        rate = spec.get('rate_mb_s')
        if rate is not None:
            rate = float(rate)
            if rate <= 0:
                raise SourceReadError('ingest.rate_mb_s must be positive (MB/s), or left out to write flat out.')
        try:
            directory = _ingest.check_directory(spec.get('path'), source_paths)
            free = _ingest.check_space(directory, size)
        except _ingest.IngestError as exc:
            raise SourceReadError(str(exc))
        return {'path': spec.get('path'), 'directory': directory, 'size_bytes': size, 'block_size': block,
                'rate_mb_s': rate, 'rate_bytes_s': int(rate * 1000000) if rate else None,
                'direct': spec.get('direct', True) is not False, 'free_bytes': free}

    def _aliases(self, streams):
        unsafe = [path for stream in streams for path, _size in stream['files_sizes'] if _fio.needs_alias(path)]
        if not unsafe:
            return {}
        alias_dir = os.path.join(self.tmpdir, 'aliases')
        os.mkdir(alias_dir, 0o700)
        return _source_tree.make_aliases(unsafe, alias_dir)

    # -- running --------------------------------------------------------
    def run(self):
        self._options()
        fio = self.params.get('fio_path') or None
        try:
            fio = fio or find_tool('fio', self.module)   # missing: its package (_cli.TOOL_PACKAGES)
        except CliError as exc:
            raise SourceReadError(**exc.as_fail_kwargs())
        mounts = read_mounts()
        synthetic = None
        if self.params.get('paths'):
            streams = self._streams_from_paths(mounts)
            source_paths = [s['path'] for s in streams]
        elif self.params.get('synthetic_dir'):
            base, plans, total = self._plan_synthetic(mounts)
            synthetic = {'directory': base, 'bytes': total, 'files': sum(len(pl) for pl in plans),
                         'mix': self.params.get('synthetic_mix') or 'mixed', 'removed': False}
            streams = None
            source_paths = [base]
        else:
            raise SourceReadError('Give paths (the backup sources to read) or synthetic_dir (where to lay out a '
                                  'synthetic data set).')
        self.ingest_plan = self._plan_ingest(source_paths)

        if self.check_mode:
            return self._plan_result(streams, synthetic, fio)

        self.tmpdir = tempfile.mkdtemp(prefix='tapeops-source-read-')
        try:
            if synthetic is not None:
                streams = self._lay_out(synthetic, plans, mounts)
            return self._measure(fio, streams, synthetic)
        finally:
            if self.ingest_run is not None:
                self.ingest_run.cleanup()
            if self.synthetic_root and os.path.isdir(self.synthetic_root):
                _source_tree.remove_tree(self.synthetic_root)
                if synthetic is not None:
                    synthetic['removed'] = True
            shutil.rmtree(self.tmpdir, ignore_errors=True)

    def _lay_out(self, synthetic, plans, mounts):
        self.synthetic_root = tempfile.mkdtemp(prefix='.tapeops-synthetic-', dir=synthetic['directory'])
        os.rmdir(self.synthetic_root)
        os.mkdir(self.synthetic_root, 0o700)
        fraction = float(self.params.get('synthetic_compressible_fraction', 0.5))
        streams = []
        for index, plan in enumerate(plans):
            directory = os.path.join(self.synthetic_root, 'stream%d' % index)
            _source_tree.write_synthetic(directory, plan, compressible_fraction=fraction)
            walked = _source_tree.walk_tree(directory, one_file_system=True)
            streams.append(self._stream(index, directory, walked, mounts))
        synthetic['path'] = self.synthetic_root
        return streams

    def _usable_sources(self, sources, min_size):
        usable = []
        for source in sources:
            if not source['files_sizes']:
                self.warnings.append('%s holds no file with data to read (%d empty files, %d directories): this '
                                     'stream was left out.' % (source['path'], source['empty_files'], source['dirs']))
                continue
            if not any(_fio.readable_bytes(size, min_size) for _p, size in source['files_sizes']):
                self.warnings.append('%s holds no file of at least %d bytes, which cache=direct cannot read below: '
                                     'this stream was left out.' % (source['path'], min_size))
                continue
            usable.append(source)
        if not usable:
            raise SourceReadError('The source paths hold no file with data to read (see passed_over): give the '
                                  'directories the backup actually reads, or run as root (become: true) if files '
                                  'were passed over for permissions.', passed_over=self.passed_over)
        return usable

    def _fio_cmd(self, fio, job_path, all_paths):
        cmd = [fio, '--readonly', '--output-format=json']
        alloc = _fio.alloc_size_kib(all_paths)
        if alloc != _fio.FIO_DEFAULT_ALLOC_KIB:
            cmd.append('--alloc-size=%d' % alloc)
        cmd.append(job_path)
        return cmd

    def _plan_result(self, sources, synthetic, fio):
        plan = {'fio': fio, 'cache': self.cache, 'block_size': self.block_size,
                'time_budget_s': self.time_budget, 'byte_budget': self.byte_budget, 'synthetic': synthetic,
                'min_samples': self.min_samples, 'streams': [], 'steps': [], 'ingest': None}
        if sources is not None:
            for stream in sources:
                plan['streams'].append({'path': stream['path'], 'files': stream['tree_files'],
                                        'bytes': stream['tree_bytes'], 'empty_files': stream['empty_files'],
                                        'filesystem': stream['filesystem']})
            readable = [s for s in sources if s['files_sizes']]
            count, per_drive = self._concurrency(len(readable))
        else:
            count, per_drive = self._concurrency(int(self.params.get('synthetic_streams') or 1))
            readable = None
        plan['concurrency'] = count
        plan['drives'] = self.params.get('drives')
        plan['streams_per_drive'] = per_drive
        steps = self._steps(count)
        for step in steps:
            entry = {'streams': step, 'split': None, 'assignment': None}
            if readable:
                assigned, split = _source_scaling.assign_streams(readable, step)
                entry.update(streams=len(assigned), split=split, assignment=[
                    {'name': s['name'], 'paths': s['paths'], 'files': len(s['files_sizes']),
                     'bytes': sum(size for _p, size in s['files_sizes'])} for s in assigned])
            plan['steps'].append(entry)
        if self.ingest_plan:
            writes = ('files in a private .tapeops-ingest-* directory inside %s, removed afterwards'
                      % self.ingest_plan['directory'])
            plan['ingest'] = dict(self.ingest_plan, writes=writes)
        plan['estimated_seconds'] = _source_scaling.time_estimate(steps, self.time_budget, self.ingest_plan)
        return {'changed': False, 'plan': plan, 'streams': [], 'aggregate': {}, 'compressibility': None,
                'cache': None, 'scaling': [], 'per_drive': None, 'ingest': None, 'file_sizes': None,
                'passes': None, 'seconds': None, 'samples': None, 'inconclusive': None,
                'passed_over': self.passed_over, 'passed_over_counts': self.passed_over_counts,
                'warnings_list': self.warnings}

    def _cache_info(self, sources, min_size):
        data = sum(sum(_fio.readable_bytes(size, min_size) for _p, size in s['files_sizes']) for s in sources)
        ram = ram_bytes()
        info = {'method': self.cache, 'dropped': False, 'bypassed': False, 'data_bytes': data, 'ram_bytes': ram,
                'data_vs_ram': round(data / float(ram), 8) if ram else None, 'note': ''}
        memory_fs = [s['path'] for s in sources if s['filesystem'] and s['filesystem']['memory']]
        if self.cache == 'drop':
            if os.geteuid() != 0:
                raise SourceReadError('cache=drop needs root to write /proc/sys/vm/drop_caches: use become: true, '
                                      'or cache=evict (the default) which needs no privilege.')
            info['note'] = ('Page cache, dentries and inodes dropped host-wide before each read (sync; drop_caches=3); '
                            'repeated passes evict each file again before reading it.')
        elif self.cache == 'evict':
            info['bypassed'] = True
            info['note'] = ('Each file\'s cached pages were evicted (fio invalidate=1: posix_fadvise DONTNEED) just '
                            'before it was read, in every pass; buffered reads with kernel readahead, as backup agents '
                            'read.')
        elif self.cache == 'direct':
            info['bypassed'] = True
            info['note'] = ('O_DIRECT reads (no page cache, no readahead): a pessimistic bound; the last '
                            '<4 KiB of each file is not read.')
        else:
            info['note'] = ('Page cache left alone (cache=keep): files already cached are read from RAM, and every '
                            'pass after the first mostly is.')
            if ram and data < ram:
                info['note'] += (' The data set (%d bytes) is smaller than RAM (%d bytes), so much of it may come '
                                 'from cache: the rate can be far above the disks\'.' % (data, ram))
                self.warnings.append(info['note'])
        if memory_fs:
            info['bypassed'] = False
            info['note'] = ('%s on a memory filesystem: the cache cannot be dropped or bypassed, every read is a '
                            'RAM read.' % ', '.join(memory_fs))
        return info

    def _drop_caches(self, cache):
        os.sync()
        with open('/proc/sys/vm/drop_caches', 'w') as handle:
            handle.write('3\n')
        cache['dropped'] = True

    def _measure(self, fio, sources, synthetic):
        min_size = DIRECT_MIN_READ if self.cache == 'direct' else 1
        sources = self._usable_sources(sources, min_size)
        aliases = self._aliases(sources)
        count, per_drive = self._concurrency(len(sources))
        steps = self._steps(count)
        cache = self._cache_info(sources, min_size)
        if self.ingest_plan:
            self.ingest_run = _ingest.IngestRun(self.ingest_plan, fio, self.tmpdir)
        results = {}
        main = None
        with_ingest = None
        for step in steps:
            try:
                measured = self._run_step(fio, step, sources, aliases, min_size, cache)
            except SourceReadError as exc:
                if step == count:
                    raise
                self.warnings.append('The %d-stream step of the scaling curve was left out: %s' % (step, exc))
                results[step] = {'streams': step, 'error': str(exc)}
                continue
            results[step] = measured
            if step == count:
                main = measured
                if self.ingest_run is not None:
                    with_ingest = self._run_ingest_step(fio, step, sources, aliases, min_size, cache)
        return self._result(main, results, steps, with_ingest, per_drive, sources, synthetic, cache)

    def _run_ingest_step(self, fio, step, sources, aliases, min_size, cache):
        try:
            measured = self._run_step(fio, step, sources, aliases, min_size, cache, ingest=self.ingest_run)
        except SourceReadError as exc:
            self.warnings.append('The read with competing ingest failed, so there is no side-by-side figure: %s'
                                 % exc.fail_kwargs.get('msg'))
            return {'error': exc.fail_kwargs.get('msg')}
        finally:
            self.ingest_run.cleanup()
        return measured

    def _run_step(self, fio, count, sources, aliases, min_size, cache, ingest=None):
        assigned, split = _source_scaling.assign_streams(sources, count)
        if len(assigned) < count:
            self.warnings.append('%d streams were asked for but the sources hold only %d files to share among them: '
                                 'measured with %d.' % (count, len(assigned), len(assigned)))
        label = 'n%d%s' % (count, '-ingest' if ingest else '')
        log_dir = os.path.join(self.tmpdir, 'logs-' + label)
        os.mkdir(log_dir, 0o700)
        job_streams = []
        for stream in assigned:
            stream['read_sizes'] = [_fio.readable_bytes(size, min_size) for _p, size in stream['files_sizes']]
            job_streams.append({'name': stream['name'],
                                'files': [aliases.get(path, path) for path, _size in stream['files_sizes']],
                                'byte_budget': self.byte_budget})
        job_text = _fio.build_job(job_streams, block_size=self.block_size, direct=self.cache == 'direct',
                                  min_size=min_size, time_budget_s=self.time_budget or None,
                                  log_prefix_dir=log_dir, invalidate=self.cache != 'keep')
        if self.time_budget and not self.byte_budget:
            # Repeat short trees until the budget; with a byte budget fio's io_size wraps over the files instead.
            job_text = time_based(job_text)
        job_path = os.path.join(self.tmpdir, 'source-read-%s.fio' % label)
        with open(job_path, 'wb') as handle:
            handle.write(job_text.encode('utf-8', 'surrogateescape'))
        all_paths = [f for js in job_streams for f in js['files']]
        cmd = self._fio_cmd(fio, job_path, all_paths)
        if self.cache == 'drop':
            self._drop_caches(cache)
        timeout = None
        if self.time_budget:
            # fio stops itself at runtime; the margin covers setup of large file lists.
            timeout = self.time_budget * 2 + 120 + len(all_paths) // 5000
        ingest_figures = ingest_error = None
        if ingest is not None:
            runtime = (self.time_budget + 120 + len(all_paths) // 5000) if self.time_budget else 6 * 3600
            if not ingest.start(runtime):
                ingest_figures, ingest_error = ingest.stop()
                raise SourceReadError('The ingest write job did not start (%s). Check ingest.path, or set '
                                      'ingest.direct: false if its filesystem refuses O_DIRECT writes.' % (
                                          ingest_error or (ingest_figures or {}).get('stderr') or 'fio exited at once'))
        devices = _contention.source_devices([s.get('path') for s in sources if s.get('path')])
        reads_before = _contention.read_sectors(devices)
        try:
            result = run(cmd, timeout=timeout, hint='Check the source paths and fio\'s stderr above.')
        except CliError as exc:
            raise SourceReadError(**exc.as_fail_kwargs())
        finally:
            if ingest is not None:
                ingest_figures, ingest_error = ingest.stop()
        reads_after = _contention.read_sectors(devices)
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
                                  stderr=result.stderr[-4000:],
                                  hint='Run again; if it repeats, run fio by hand with the job file and report its '
                                       'output.')
        out_streams = []
        for stream in assigned:
            job = by_name.get(stream['name'])
            if job is None:
                raise SourceReadError('fio reported no job %s; its output is incomplete.' % stream['name'],
                                      stdout=result.stdout[-4000:], stderr=result.stderr[-4000:],
                                      hint='Run again; if it repeats, run fio by hand with the job file and report '
                                           'its output.')
            out_streams.append(self._stream_figures(stream, job, log_dir))
        aggregate = self._aggregate(out_streams)
        stopped_by_bytes = bool(self.byte_budget) and any(s['bytes'] >= self.byte_budget for s in out_streams) and \
            (not self.time_budget or aggregate['duration_s'] < self.time_budget - 1)
        reason = _source_scaling.inconclusive_reason(
            aggregate['samples'], self.min_samples, aggregate['duration_s'], aggregate['passes'], self.time_budget,
            self.byte_budget, stopped_by_bytes)
        return {'count': len(assigned), 'requested': count, 'split': split, 'streams': out_streams,
                'assigned': assigned,
                'aggregate': aggregate, 'cmd': cmd, 'fio_version': parsed['fio_version'],
                'inconclusive': {'reason': reason} if reason else None,
                'contention': _contention.sources(reads_before, reads_after, aggregate.get('bytes')),
                'ingest': ingest_figures, 'ingest_error': ingest_error}

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

    @staticmethod
    def _aggregate(streams):
        total_bytes = sum(s['bytes'] for s in streams)
        duration_ms = max(s['duration_s'] for s in streams) * 1000.0
        series = _fio.sum_series([s['series_mb_s'] for s in streams])
        figures = _fio.summarize(total_bytes, duration_ms, series, sum(s['files'] for s in streams))
        figures['streams'] = len(streams)
        figures['passes'] = min(s['passes'] for s in streams)
        figures['samples'] = _source_scaling.sample_count(series)
        return figures

    # -- the result -------------------------------------------------------
    @staticmethod
    def _figures(measured):
        agg = measured['aggregate']
        figures = dict((key, agg[key]) for key in _STEP_KEYS)
        figures.update(seconds=agg['duration_s'], passes=agg['passes'], samples=agg['samples'],
                       inconclusive=measured['inconclusive'])
        return figures

    def _scaling(self, results, steps):
        curve = []
        seen = set()
        for step in steps:
            measured = results.get(step)
            if measured is None:
                continue
            if 'error' in measured and 'aggregate' not in measured:
                curve.append({'streams': step, 'error': measured['error']})
                continue
            if measured['count'] in seen:
                continue   # capped to the same count as a smaller step (too few files)
            seen.add(measured['count'])
            entry = {'streams': measured['count'], 'split': measured['split']}
            entry.update(self._figures(measured))
            curve.append(entry)
        return curve

    def _ingest_result(self, main, with_ingest):
        plan = self.ingest_plan
        out = {'path': plan['path'], 'directory': plan['directory'], 'target': plan['rate_mb_s'],
               'target_text': ('%g MB/s' % plan['rate_mb_s']) if plan['rate_mb_s'] else 'flat out',
               'size_bytes': plan['size_bytes'], 'block_size': plan['block_size'], 'direct': plan['direct'],
               'removed': self.ingest_run.removed if self.ingest_run else None,
               'without': self._figures(main), 'with': None, 'rate_mb_s': None, 'bytes_written': None,
               'series_mb_s': [], 'change_pct': None, 'error': None}
        if with_ingest is None or 'error' in with_ingest and 'aggregate' not in with_ingest:
            out['error'] = (with_ingest or {}).get('error') or 'the read with ingest did not run'
            return out
        out['with'] = self._figures(with_ingest)
        figures = with_ingest.get('ingest')
        if figures is None:
            out['error'] = with_ingest.get('ingest_error')
            self.warnings.append('The ingest write job gave no figures: %s' % out['error'])
        else:
            seconds = figures['runtime_ms'] / 1000.0
            out['rate_mb_s'] = round(figures['io_bytes'] / 1e6 / seconds, 3) if seconds > 0 else 0.0
            out['bytes_written'] = figures['io_bytes']
            out['series_mb_s'] = figures['series_mb_s']
            if figures['error']:
                self.warnings.append('The ingest fio reported error %d.' % figures['error'])
        before = out['without']['mean_mb_s']
        if before:
            out['change_pct'] = round((out['with']['mean_mb_s'] - before) / before * 100.0, 2)
        if out['removed'] is False:
            self.warnings.append('The ingest scratch directory inside %s could not be removed completely: remove '
                                 'the .tapeops-ingest-* directory there by hand.' % plan['directory'])
        return out

    def _result(self, main, results, steps, with_ingest, per_drive, sources, synthetic, cache):
        curve = self._scaling(results, steps)
        sizes = []
        for stream, figures in zip(main['assigned'], main['streams']):
            count = len(stream['files_sizes']) if figures['complete'] else figures['files']
            sizes.extend(size for _p, size in stream['files_sizes'][:count])
        ceiling = max([c.get('files_per_s') or 0 for c in curve] or [0]) or None
        file_sizes = _source_scaling.file_size_profile(sizes, ceiling)
        if main['inconclusive']:
            self.warnings.append('The source read is inconclusive: %s' % main['inconclusive']['reason'])
        for entry in curve:
            if entry.get('inconclusive') and entry['streams'] != main['count']:
                self.warnings.append('The %d-stream step is inconclusive: %s' % (
                    entry['streams'], entry['inconclusive']['reason']))
        aggregate = main['aggregate']
        cache['data_bytes'] = aggregate['bytes']
        cache['data_vs_ram'] = round(aggregate['bytes'] / float(cache['ram_bytes']), 8) if cache['ram_bytes'] else None
        drive_split = None
        if self.params.get('drives'):
            drive_split = _source_scaling.per_drive(aggregate, main['streams'], int(self.params['drives']), per_drive)
        return {
            'changed': False,
            'fio_version': main['fio_version'],
            'fio_cmd': main['cmd'],
            'streams': main['streams'],
            'aggregate': aggregate,
            'passes': aggregate['passes'],
            'seconds': aggregate['duration_s'],
            'samples': aggregate['samples'],
            'min_samples': self.min_samples,
            'inconclusive': main['inconclusive'],
            'contention': main.get('contention'),
            'scaling': curve,
            'per_drive': drive_split,
            'ingest': self._ingest_result(main, with_ingest) if self.ingest_plan else None,
            'file_sizes': file_sizes,
            'compressibility': self._compressibility(sources),
            'cache': cache,
            'passed_over': self.passed_over,
            'passed_over_counts': self.passed_over_counts,
            'synthetic': synthetic,
            'warnings_list': self.warnings,
        }

    def _compressibility(self, streams):
        if not self.sample_bytes:
            return None
        try:
            from ansible_collections.tapeops.qualify.plugins.module_utils._judge._drive_model import estimate_compressibility
        except ImportError:
            self.warnings.append('The drive model (estimate_compressibility) is not installed with this collection: '
                                 'no compressibility estimate.')
            return None
        files = [item for stream in streams for item in stream['files_sizes']]
        data, sampled = _source_tree.sample_files(files, self.sample_bytes)
        if not data:
            self.warnings.append('No file could be sampled for the compressibility estimate.')
            return None
        estimate = dict(estimate_compressibility(data))
        estimate['files_sampled'] = sampled
        return estimate
