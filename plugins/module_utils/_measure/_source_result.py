# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Sum up a source read from its steps: the module's result.

Private to this collection: may change without notice. The main step's
figures, the scaling curve of the other steps, the per-drive split, the
comparison with the competing ingest job, the file size profile and the
compressibility sample (``ReadResult.of``).
"""

from __future__ import annotations

from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _source_scaling
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _source_tree

# The figures of one read that the result repeats for scaling steps and the ingest comparison.
_STEP_KEYS = ('mean_mb_s', 'p5_mb_s', 'min_mb_s', 'files_per_s', 'bytes', 'files', 'series_mb_s')


def step_figures(measured):
    """A step's figures as the scaling curve and the ingest comparison repeat them."""
    agg = measured['aggregate']
    figures = dict((key, agg[key]) for key in _STEP_KEYS)
    figures.update(seconds=agg['duration_s'], passes=agg['passes'], samples=agg['samples'],
                   inconclusive=measured['inconclusive'])
    return figures


def scaling_curve(results, steps):
    """One entry per step run (or its error), in step order; a step capped to a smaller one's count once."""
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
        entry.update(step_figures(measured))
        curve.append(entry)
    return curve


class ReadResult:
    """The result of one read, from its ``ReadOptions``, its ``Sources`` and the ingest job (plan and run)."""

    def __init__(self, options, sources, ingest_plan, ingest_run, warnings):
        self.options = options
        self.sources = sources
        self.ingest_plan = ingest_plan
        self.ingest_run = ingest_run
        self.warnings = warnings

    def of(self, main, results, steps, with_ingest, per_drive, usable, cache):
        """The module's result: ``main`` the step at the read's concurrency, ``results`` every step by count."""
        curve = scaling_curve(results, steps)
        file_sizes = self._file_sizes(main, curve)
        self._inconclusive_warnings(main, curve)
        aggregate = main['aggregate']
        cache['data_bytes'] = aggregate['bytes']
        cache['data_vs_ram'] = round(aggregate['bytes'] / float(cache['ram_bytes']), 8) if cache['ram_bytes'] else None
        drive_split = None
        drives = self.options.params.get('drives')
        if drives:
            drive_split = _source_scaling.per_drive(aggregate, main['streams'], int(drives), per_drive)
        return {
            'changed': False,
            'fio_version': main['fio_version'],
            'fio_cmd': main['cmd'],
            'streams': main['streams'],
            'aggregate': aggregate,
            'passes': aggregate['passes'],
            'seconds': aggregate['duration_s'],
            'samples': aggregate['samples'],
            'min_samples': self.options.min_samples,
            'inconclusive': main['inconclusive'],
            'contention': main.get('contention'),
            'scaling': curve,
            'per_drive': drive_split,
            'ingest': self._ingest(main, with_ingest) if self.ingest_plan else None,
            'file_sizes': file_sizes,
            'compressibility': self._compressibility(usable),
            'cache': cache,
            'passed_over': self.sources.passed_over,
            'passed_over_counts': self.sources.passed_over_counts,
            'synthetic': self.sources.synthetic,
            'warnings_list': self.warnings,
        }

    @staticmethod
    def _file_sizes(main, curve):
        """The size profile of the trees the main step's streams were given (the walk's listing of each, whether
        the read reached every file or not: a short read of a slow source reaches a few files, which do not
        stand for the tree)."""
        sizes = []
        for stream in main['assigned']:
            sizes.extend(size for _p, size in stream['files_sizes'])
        ceiling = max([c.get('files_per_s') or 0 for c in curve] or [0]) or None
        return _source_scaling.file_size_profile(sizes, ceiling)

    def _inconclusive_warnings(self, main, curve):
        if main['inconclusive']:
            self.warnings.append('The source read is inconclusive: %s' % main['inconclusive']['reason'])
        for entry in curve:
            if entry.get('inconclusive') and entry['streams'] != main['count']:
                self.warnings.append('The %d-stream step is inconclusive: %s' % (
                    entry['streams'], entry['inconclusive']['reason']))

    def _ingest(self, main, with_ingest):
        """The read with the ingest job beside it against the read without it."""
        plan = self.ingest_plan
        out = {'path': plan['path'], 'directory': plan['directory'], 'target': plan['rate_mb_s'],
               'target_text': ('%g MB/s' % plan['rate_mb_s']) if plan['rate_mb_s'] else 'flat out',
               'size_bytes': plan['size_bytes'], 'block_size': plan['block_size'], 'direct': plan['direct'],
               'removed': self.ingest_run.removed if self.ingest_run else None,
               'without': step_figures(main), 'with': None, 'rate_mb_s': None, 'bytes_written': None,
               'series_mb_s': [], 'change_pct': None, 'error': None}
        if with_ingest is None or 'error' in with_ingest and 'aggregate' not in with_ingest:
            out['error'] = (with_ingest or {}).get('error') or 'the read with ingest did not run'
            return out
        out['with'] = step_figures(with_ingest)
        self._ingest_written(out, with_ingest)
        before = out['without']['mean_mb_s']
        if before:
            out['change_pct'] = round((out['with']['mean_mb_s'] - before) / before * 100.0, 2)
        if out['removed'] is False:
            self.warnings.append('The ingest scratch directory inside %s could not be removed completely: remove '
                                 'the .tapeops-ingest-* directory there by hand.' % plan['directory'])
        return out

    def _ingest_written(self, out, with_ingest):
        """What the ingest job wrote (its rate, bytes, per-second series), or why there is no figure."""
        figures = with_ingest.get('ingest')
        if figures is None:
            out['error'] = with_ingest.get('ingest_error')
            self.warnings.append('The ingest write job gave no figures: %s' % out['error'])
            return
        seconds = figures['runtime_ms'] / 1000.0
        out['rate_mb_s'] = round(figures['io_bytes'] / 1e6 / seconds, 3) if seconds > 0 else 0.0
        out['bytes_written'] = figures['io_bytes']
        out['series_mb_s'] = figures['series_mb_s']
        if figures['error']:
            self.warnings.append('The ingest fio reported error %d.' % figures['error'])

    def _compressibility(self, streams):
        if not self.options.sample_bytes:
            return None
        try:
            from ansible_collections.tapeops.qualify.plugins.module_utils._judge._drive_model import estimate_compressibility
        except ImportError:
            self.warnings.append('The drive model (estimate_compressibility) is not installed with this collection: '
                                 'no compressibility estimate.')
            return None
        files = [item for stream in streams for item in stream['files_sizes']]
        windows, sampled, total = _source_tree.sample_windows(files, self.options.sample_bytes)
        data = b''.join(windows)
        if not data:
            self.warnings.append('No file could be sampled for the compressibility estimate.')
            return None
        estimate = dict(estimate_compressibility(data))
        estimate['files_sampled'] = sampled
        # the ratio along the stream, window by window: a stretch of highly compressible data (a database dump)
        # asks more of the sources while it passes than the whole stream's ratio says (_forecast's ratio profile)
        estimate['profile'] = {'stream_bytes': total,
                               'window_bytes': min(_source_tree.SAMPLE_WINDOW, self.options.sample_bytes),
                               'ratios': [round(estimate_compressibility(w)['ratio'], 3) if w else None
                                          for w in windows]}
        return estimate
