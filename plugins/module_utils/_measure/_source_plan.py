# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Plan a source read before anything is read: options, sources, the ingest job, the check-mode plan.

Private to this collection: may change without notice. ``ReadOptions``
checks the module's parameters; ``Sources`` walks the paths given (or plans
a synthetic data set, and lays it out when the read runs); ``plan_ingest``
checks the competing write job; ``plan_result`` is what check mode returns.
``_source_read`` runs the read from these.
"""

from __future__ import annotations

import os
import re
import tempfile
import time

from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _ingest
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _source_scaling
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _source_tree
from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError

_SIZE_RE = re.compile(r'^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(i?b)?\s*$', re.IGNORECASE)


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


def read_mounts():
    try:
        with open('/proc/self/mountinfo') as handle:
            return _source_tree.parse_mountinfo(handle.read())
    except OSError:
        return []


class ReadOptions:
    """The module's parameters (a dict) checked: block size, budgets, cache method, samples, concurrency."""

    def __init__(self, params, warnings):
        self.params = params
        self._sizes_and_budgets(params, warnings)
        self._concurrency_options(params)

    def _sizes_and_budgets(self, p, warnings):
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
            warnings.append('Neither time_budget nor byte_budget is set: every stream reads its whole tree '
                            'once, however short that is.')
        self.cache = p.get('cache') or 'evict'
        self.sample_bytes = parse_size(p.get('compressibility_sample') or 0, 'compressibility_sample')
        self.min_samples = p.get('min_samples')
        self.min_samples = _source_scaling.DEFAULT_MIN_SAMPLES if self.min_samples is None else int(self.min_samples)
        if self.min_samples < 1:
            raise SourceReadError('min_samples must be at least 1 (one-second samples the floor rests on).')

    @staticmethod
    def _concurrency_options(p):
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

    def concurrency(self, sources):
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

    def steps(self, count):
        """The stream counts of the scaling curve, ``count`` among them."""
        p = self.params
        return _source_scaling.scaling_steps(count, enabled=p.get('scaling', True) is not False,
                                             explicit=p.get('scaling_streams'),
                                             max_streams=p.get('scaling_max_streams'))


class Sources:
    """The sources of one read: the paths walked, or a synthetic data set planned and laid out.

    ``streams`` are the sources as the steps read them (None for a synthetic
    set until ``lay_out``); ``paths`` where they live (what the ingest job must
    stay out of); ``synthetic`` the synthetic set's record or None. What the
    walks did not read is gathered in ``passed_over`` and ``passed_over_counts``
    (not ``skipped``: Ansible reads that key as "the task was skipped").
    """

    def __init__(self, params, warnings):
        self.params = params
        self.warnings = warnings
        self.passed_over = []
        self.passed_over_counts = {}
        self.mounts = read_mounts()
        self.streams = None
        self.synthetic = None
        self.synthetic_plans = None
        self.synthetic_root = None
        if params.get('paths'):
            self.streams = self._streams_from_paths()
            self.paths = [s['path'] for s in self.streams]
        elif params.get('synthetic_dir'):
            base, self.synthetic_plans, total = self._plan_synthetic()
            self.synthetic = {'directory': base, 'bytes': total, 'files': sum(len(pl) for pl in self.synthetic_plans),
                              'mix': params.get('synthetic_mix') or 'mixed', 'removed': False}
            self.paths = [base]
        else:
            raise SourceReadError('Give paths (the backup sources to read) or synthetic_dir (where to lay out a '
                                  'synthetic data set).')

    def _streams_from_paths(self):
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
            stream = self._stream(index, path, walked)
            stream['scan_s'] = round(time.monotonic() - started, 3)
            streams.append(stream)
        return streams

    def _stream(self, index, path, walked):
        fs = _source_tree.filesystem_of(os.path.realpath(path), self.mounts) if self.mounts else None
        for item in walked['passed_over']:
            self.passed_over.append({'path': item['path'], 'reason': item['why'], 'kind': item['reason']})
        for reason, count in walked['passed_over_counts'].items():
            self.passed_over_counts[reason] = self.passed_over_counts.get(reason, 0) + count
        if walked['passed_over_counts'].get('max_files'):
            self.warnings.append('%s holds more than max_files=%s files; the rest were not read.'
                                 % (path, self.params.get('max_files')))
        self._filesystem_warnings(path, fs)
        return {
            'name': 'stream%d' % index,
            'path': path,
            # directories in a spread order: a short read reaches a cross-section of the tree, not its first corner
            'files_sizes': _source_tree.spread_order(walked['files']),
            'tree_bytes': walked['bytes'],
            'tree_files': len(walked['files']),
            'empty_files': walked['empty_files'],
            'dirs': walked['dirs'],
            'filesystem': fs,
            'scan_s': None,
        }

    def _filesystem_warnings(self, path, fs):
        if fs and fs['network']:
            self.warnings.append('%s is on a network filesystem (%s from %s): the rate measured is the network\'s and '
                                 'the file server\'s, not a local disk\'s.' % (path, fs['fstype'], fs['source']))
        if fs and fs['memory']:
            self.warnings.append('%s is on %s (memory): every read comes from RAM, the rate says nothing about a '
                                 'disk.' % (path, fs['fstype']))

    def _plan_synthetic(self):
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

    def lay_out(self):
        """Write the synthetic data set planned (in a private directory inside synthetic_dir) and walk it."""
        synthetic = self.synthetic
        self.synthetic_root = tempfile.mkdtemp(prefix='.tapeops-synthetic-', dir=synthetic['directory'])
        os.rmdir(self.synthetic_root)
        os.mkdir(self.synthetic_root, 0o700)
        fraction = float(self.params.get('synthetic_compressible_fraction', 0.5))
        streams = []
        for index, plan in enumerate(self.synthetic_plans):
            directory = os.path.join(self.synthetic_root, 'stream%d' % index)
            _source_tree.write_synthetic(directory, plan, compressible_fraction=fraction)
            walked = _source_tree.walk_tree(directory, one_file_system=True)
            streams.append(self._stream(index, directory, walked))
        synthetic['path'] = self.synthetic_root
        self.streams = streams

    def remove_synthetic(self):
        """Remove the synthetic data set laid out, if any (``synthetic['removed']`` says so)."""
        if self.synthetic_root and os.path.isdir(self.synthetic_root):
            _source_tree.remove_tree(self.synthetic_root)
            if self.synthetic is not None:
                self.synthetic['removed'] = True


def plan_ingest(spec, source_paths):
    """The competing write job's plan from the ``ingest`` option (None without it); checked, nothing written."""
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


def _plan_steps(options, sources):
    """(count, streams per drive, steps, [{streams, split, assignment}]) as the read would run them."""
    if sources.streams is not None:
        readable = [s for s in sources.streams if s['files_sizes']]
        count, per_drive = options.concurrency(len(readable))
    else:
        count, per_drive = options.concurrency(int(options.params.get('synthetic_streams') or 1))
        readable = None
    steps = options.steps(count)
    entries = []
    for step in steps:
        entry = {'streams': step, 'split': None, 'assignment': None}
        if readable:
            assigned, split = _source_scaling.assign_streams(readable, step)
            entry.update(streams=len(assigned), split=split, assignment=[
                {'name': s['name'], 'paths': s['paths'], 'files': len(s['files_sizes']),
                 'bytes': sum(size for _p, size in s['files_sizes'])} for s in assigned])
        entries.append(entry)
    return count, per_drive, steps, entries


def plan_result(options, sources, ingest_plan, fio, warnings):
    """What check mode returns: the plan (streams, steps, ingest, time estimate), nothing read."""
    plan = {'fio': fio, 'cache': options.cache, 'block_size': options.block_size,
            'time_budget_s': options.time_budget, 'byte_budget': options.byte_budget, 'synthetic': sources.synthetic,
            'min_samples': options.min_samples, 'streams': [], 'steps': [], 'ingest': None}
    for stream in sources.streams or []:
        plan['streams'].append({'path': stream['path'], 'files': stream['tree_files'],
                                'bytes': stream['tree_bytes'], 'empty_files': stream['empty_files'],
                                'filesystem': stream['filesystem']})
    count, per_drive, steps, plan['steps'] = _plan_steps(options, sources)
    plan['concurrency'] = count
    plan['drives'] = options.params.get('drives')
    plan['streams_per_drive'] = per_drive
    if ingest_plan:
        writes = ('files in a private .tapeops-ingest-* directory inside %s, removed afterwards'
                  % ingest_plan['directory'])
        plan['ingest'] = dict(ingest_plan, writes=writes)
    plan['estimated_seconds'] = _source_scaling.time_estimate(steps, options.time_budget, ingest_plan)
    return {'changed': False, 'plan': plan, 'streams': [], 'aggregate': {}, 'compressibility': None,
            'cache': None, 'scaling': [], 'per_drive': None, 'ingest': None, 'file_sizes': None,
            'passes': None, 'seconds': None, 'samples': None, 'inconclusive': None,
            'passed_over': sources.passed_over, 'passed_over_counts': sources.passed_over_counts,
            'warnings_list': warnings}
