# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Run the source read benchmark: walk, plan, run fio, turn its output into a result.

Private to this collection: may change without notice. The pure parts live in
``_fio`` (job text, JSON/log parsing, series math) and ``_source_tree``
(walking, mounts, synthetic layout); this file does the I/O around them.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time

from ansible_collections.tapeops.qualify.plugins.module_utils import _fio
from ansible_collections.tapeops.qualify.plugins.module_utils import _source_tree
from ansible_collections.tapeops.qualify.plugins.module_utils._cli import CliError, find_tool, run

# O_DIRECT reads must be multiples of the logical block size; 4096 covers
# 512e and 4Kn disks alike (a 512-byte-sector disk accepts 4 KiB reads too).
DIRECT_MIN_READ = 4096

_SIZE_RE = re.compile(r'^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(i?b)?\s*$', re.IGNORECASE)


class SourceReadError(Exception):
    """The benchmark cannot run; ``fail_kwargs`` go to ``fail_json``."""

    def __init__(self, msg, **evidence):
        super().__init__(msg)
        self.fail_kwargs = dict(evidence, msg=msg)


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


def fio_version(fio):
    result = run([fio, '--version'], check=True, hint='fio is installed but does not run; reinstall it.')
    return result.stdout.strip()


class SourceReadBenchmark:
    """One run of the benchmark for the module's parameters (a dict)."""

    def __init__(self, params, module=None, check_mode=False):
        self.params = params
        self.module = module
        self.check_mode = check_mode
        self.warnings = []
        self.skipped = []
        self.skipped_counts = {}
        self.tmpdir = None
        self.synthetic_root = None

    # -- planning -------------------------------------------------------
    def _options(self):
        p = self.params
        self.block_size = parse_size(p.get('block_size') or '64k', 'block_size')
        if self.block_size < 512 or self.block_size > 64 * 1048576:
            raise SourceReadError('block_size %s is outside 512 bytes..64 MiB: backup agents read 64k to 1M at a time.'
                                  % p.get('block_size'))
        self.byte_budget = parse_size(p['byte_budget'], 'byte_budget') if p.get('byte_budget') else None
        self.time_budget = int(p.get('time_budget') or 0)
        if self.time_budget < 0:
            raise SourceReadError('time_budget must be 0 (no limit) or a number of seconds.')
        if not self.time_budget and not self.byte_budget:
            self.warnings.append('Neither time_budget nor byte_budget is set: every stream reads its whole tree.')
        self.cache = p.get('cache') or 'evict'
        self.sample_bytes = parse_size(p.get('compressibility_sample') or 0, 'compressibility_sample')

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
        for item in walked['skipped']:
            self.skipped.append({'path': item['path'], 'reason': item['why'], 'kind': item['reason']})
        for reason, count in walked['skipped_counts'].items():
            self.skipped_counts[reason] = self.skipped_counts.get(reason, 0) + count
        if walked['skipped_counts'].get('max_files'):
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
            fio = fio or find_tool('fio', self.module,
                                   hint='Install fio on the managed host (Debian/Ubuntu: apt install fio; '
                                        'RHEL: dnf install fio).')
        except CliError as exc:
            raise SourceReadError(**exc.as_fail_kwargs())
        mounts = read_mounts()
        synthetic = None
        if self.params.get('paths'):
            streams = self._streams_from_paths(mounts)
        elif self.params.get('synthetic_dir'):
            base, plans, total = self._plan_synthetic(mounts)
            synthetic = {'directory': base, 'bytes': total, 'files': sum(len(pl) for pl in plans),
                         'mix': self.params.get('synthetic_mix') or 'mixed', 'removed': False}
            streams = None
        else:
            raise SourceReadError('Give paths (the backup sources to read) or synthetic_dir (where to lay out a '
                                  'synthetic data set).')

        if self.check_mode:
            return self._plan_result(streams, synthetic, fio)

        self.tmpdir = tempfile.mkdtemp(prefix='tapeops-source-read-')
        try:
            if synthetic is not None:
                streams = self._lay_out(synthetic, plans, mounts)
            return self._measure(fio, streams, synthetic)
        finally:
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

    def _usable_streams(self, streams):
        usable = []
        for stream in streams:
            if not stream['files_sizes']:
                self.warnings.append('%s holds no file with data to read (%d empty files, %d directories): this '
                                     'stream was left out.' % (stream['path'], stream['empty_files'], stream['dirs']))
                continue
            usable.append(stream)
        if not usable:
            raise SourceReadError('The source paths hold no file with data to read (see skipped): give the '
                                  'directories the backup actually reads, or run as root (become: true) if files '
                                  'were skipped for permissions.', skipped=self.skipped)
        return usable

    def _job_streams(self, streams, aliases):
        min_size = DIRECT_MIN_READ if self.cache == 'direct' else 1
        job_streams = []
        for stream in streams:
            stream['read_sizes'] = [_fio.readable_bytes(size, min_size) for _p, size in stream['files_sizes']]
            job_streams.append({
                'name': stream['name'],
                'files': [aliases.get(path, path) for path, _size in stream['files_sizes']],
                'byte_budget': self.byte_budget,
            })
        return job_streams, min_size

    def _fio_cmd(self, fio, job_path, all_paths):
        cmd = [fio, '--readonly', '--output-format=json']
        alloc = _fio.alloc_size_kib(all_paths)
        if alloc != _fio.FIO_DEFAULT_ALLOC_KIB:
            cmd.append('--alloc-size=%d' % alloc)
        cmd.append(job_path)
        return cmd

    def _plan_result(self, streams, synthetic, fio):
        plan = {'fio': fio, 'cache': self.cache, 'block_size': self.block_size,
                'time_budget_s': self.time_budget, 'byte_budget': self.byte_budget, 'synthetic': synthetic,
                'streams': []}
        if streams is not None:
            for stream in streams:
                plan['streams'].append({'path': stream['path'], 'files': stream['tree_files'],
                                        'bytes': stream['tree_bytes'], 'empty_files': stream['empty_files'],
                                        'filesystem': stream['filesystem']})
        return {'changed': False, 'plan': plan, 'streams': [], 'aggregate': {}, 'compressibility': None,
                'cache': None, 'skipped': self.skipped, 'skipped_counts': self.skipped_counts,
                'warnings_list': self.warnings}

    def _prepare_cache(self, streams):
        data = sum(sum(s['read_sizes']) for s in streams)
        if self.byte_budget:
            data = sum(min(sum(s['read_sizes']), self.byte_budget) for s in streams)
        ram = ram_bytes()
        info = {'method': self.cache, 'dropped': False, 'bypassed': False, 'data_bytes': data, 'ram_bytes': ram,
                'data_vs_ram': round(data / float(ram), 8) if ram else None, 'note': ''}
        memory_fs = [s['path'] for s in streams if s['filesystem'] and s['filesystem']['memory']]
        if self.cache == 'drop':
            if os.geteuid() != 0:
                raise SourceReadError('cache=drop needs root to write /proc/sys/vm/drop_caches: use become: true, '
                                      'or cache=evict (the default) which needs no privilege.')
            os.sync()
            with open('/proc/sys/vm/drop_caches', 'w') as handle:
                handle.write('3\n')
            info['dropped'] = True
            info['note'] = 'Page cache, dentries and inodes dropped host-wide before the run (sync; drop_caches=3).'
        elif self.cache == 'evict':
            info['bypassed'] = True
            info['note'] = ('Each file\'s cached pages were evicted (fio invalidate=1: posix_fadvise DONTNEED) just '
                            'before it was read; buffered reads with kernel readahead, as backup agents read.')
        elif self.cache == 'direct':
            info['bypassed'] = True
            info['note'] = ('O_DIRECT reads (no page cache, no readahead): a pessimistic bound; the last '
                            '<4 KiB of each file is not read.')
        else:
            info['note'] = 'Page cache left alone (cache=keep): files already cached are read from RAM.'
            if ram and data < ram:
                info['note'] += (' The data set (%d bytes) is smaller than RAM (%d bytes), so much of it may come '
                                 'from cache: the rate can be far above the disks\'.' % (data, ram))
                self.warnings.append(info['note'])
        if memory_fs:
            info['bypassed'] = False
            info['dropped'] = False
            info['note'] = ('%s on a memory filesystem: the cache cannot be dropped or bypassed, every read is a '
                            'RAM read.' % ', '.join(memory_fs))
        return info

    def _measure(self, fio, streams, synthetic):
        streams = self._usable_streams(streams)
        aliases = self._aliases(streams)
        job_streams, min_size = self._job_streams(streams, aliases)
        log_dir = os.path.join(self.tmpdir, 'logs')
        os.mkdir(log_dir, 0o700)
        job_text = _fio.build_job(job_streams, block_size=self.block_size, direct=self.cache == 'direct',
                                  min_size=min_size, time_budget_s=self.time_budget or None,
                                  log_prefix_dir=log_dir, invalidate=self.cache != 'keep')
        job_path = os.path.join(self.tmpdir, 'source-read.fio')
        with open(job_path, 'wb') as handle:
            handle.write(job_text.encode('utf-8', 'surrogateescape'))
        all_paths = [f for js in job_streams for f in js['files']]
        cmd = self._fio_cmd(fio, job_path, all_paths)
        cache = self._prepare_cache(streams)
        timeout = None
        if self.time_budget:
            # fio stops itself at runtime; the margin covers setup of large file lists.
            timeout = self.time_budget * 2 + 120 + len(all_paths) // 5000
        try:
            result = run(cmd, timeout=timeout, hint='Check the source paths and fio\'s stderr above.')
        except CliError as exc:
            raise SourceReadError(**exc.as_fail_kwargs())
        if result.rc != 0:
            raise SourceReadError(
                'fio failed with exit code %d while reading the sources.' % result.rc, cmd=result.cmd, rc=result.rc,
                stdout=result.stdout[-4000:], stderr=result.stderr[-4000:],
                hint='If a file vanished or changed during the run, run again; if fio ran out of memory '
                     '(smalloc), lower max_files.')
        try:
            parsed = _fio.parse_json(result.stdout)
        except _fio.FioParseError as exc:
            raise SourceReadError(str(exc), cmd=result.cmd, rc=result.rc, stdout=result.stdout[-4000:],
                                  stderr=result.stderr[-4000:])
        by_name = dict((job['name'], job) for job in parsed['jobs'])
        out_streams = []
        for stream in streams:
            job = by_name.get(stream['name'])
            if job is None:
                raise SourceReadError('fio reported no job %s; its output is incomplete.' % stream['name'],
                                      stdout=result.stdout[-4000:], stderr=result.stderr[-4000:])
            series = self._series(log_dir, stream['name'])
            files = _fio.files_completed(stream['read_sizes'], job['io_bytes'])
            figures = _fio.summarize(job['io_bytes'], job['runtime_ms'], series, files)
            figures.update({
                'path': stream['path'],
                'tree_files': stream['tree_files'],
                'tree_bytes': stream['tree_bytes'],
                'empty_files': stream['empty_files'],
                'scan_s': stream.get('scan_s'),
                'complete': files == len(stream['read_sizes']),
                'filesystem': stream['filesystem'],
                'fio_error': job['error'],
                'cpu_pct': round(job['usr_cpu'] + job['sys_cpu'], 2),
            })
            if job['error']:
                self.warnings.append('fio reported error %d on %s.' % (job['error'], stream['path']))
            out_streams.append(figures)
        aggregate = self._aggregate(out_streams)
        compress = self._compressibility(streams)
        cache['data_bytes'] = aggregate['bytes']
        cache['data_vs_ram'] = round(aggregate['bytes'] / float(cache['ram_bytes']), 8) if cache['ram_bytes'] else None
        return {
            'changed': False,
            'fio_version': parsed['fio_version'],
            'fio_cmd': cmd,
            'streams': out_streams,
            'aggregate': aggregate,
            'compressibility': compress,
            'cache': cache,
            'skipped': self.skipped,
            'skipped_counts': self.skipped_counts,
            'synthetic': synthetic,
            'warnings_list': self.warnings,
        }

    def _series(self, log_dir, name):
        # fio names the log <prefix>_bw.<job index>.log; one job per prefix here.
        candidates = sorted(f for f in os.listdir(log_dir) if f.startswith(name + '_bw.') and f.endswith('.log'))
        if not candidates:
            self.warnings.append('fio wrote no bandwidth log for %s: no per-second series.' % name)
            return []
        with open(os.path.join(log_dir, candidates[0])) as handle:
            return _fio.series_mb_s(_fio.parse_log(handle.read()))

    @staticmethod
    def _aggregate(streams):
        total_bytes = sum(s['bytes'] for s in streams)
        duration_ms = max(s['duration_s'] for s in streams) * 1000.0
        series = _fio.sum_series([s['series_mb_s'] for s in streams])
        figures = _fio.summarize(total_bytes, duration_ms, series, sum(s['files'] for s in streams))
        figures['streams'] = len(streams)
        return figures

    def _compressibility(self, streams):
        if not self.sample_bytes:
            return None
        try:
            from ansible_collections.tapeops.qualify.plugins.module_utils._drive_model import estimate_compressibility
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
