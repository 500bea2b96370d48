# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Run the source read benchmark: plan, run fio per stream count, sum up the result.

Private to this collection: may change without notice. ``SourceReadBenchmark``
runs the steps, each in its own module: ``_source_plan`` (options, the
sources walked or a synthetic set laid out, the ingest job, the check-mode
plan), ``_source_step`` (one fio run with N streams and its figures) and
``_source_result`` (the module's result from the steps). The pure parts live
in ``_fio`` (job text, JSON/log parsing, series math), ``_source_tree``
(walking, mounts, synthetic layout) and ``_source_scaling`` (streams per
step, passes, samples, per-drive split, file sizes); ``_ingest`` runs the
competing write job.
"""

from __future__ import annotations

import shutil
import tempfile

from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _ingest
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _source_step
from ansible_collections.tapeops.qualify.plugins.module_utils._measure._source_plan import (
    ReadOptions,
    SourceReadError,
    Sources,
    plan_ingest,
    plan_result,
)
from ansible_collections.tapeops.qualify.plugins.module_utils._measure._source_result import ReadResult
from ansible_collections.tapeops.qualify.plugins.module_utils._tools._cli import CliError, find_tool


class SourceReadBenchmark:
    """One run of the benchmark for the module's parameters (a dict): plan, the steps, the result."""

    def __init__(self, params, module=None, check_mode=False):
        self.params = params
        self.module = module
        self.check_mode = check_mode
        self.warnings = []
        self.options = None
        self.sources = None
        self.tmpdir = None
        self.ingest_plan = None
        self.ingest_run = None

    def run(self):
        """The module's result: the plan in check mode, else the steps measured; the scratch always removed."""
        self.options = ReadOptions(self.params, self.warnings)
        fio = self._find_fio()
        self.sources = Sources(self.params, self.warnings)
        self.ingest_plan = plan_ingest(self.params.get('ingest'), self.sources.paths)
        if self.check_mode:
            return plan_result(self.options, self.sources, self.ingest_plan, fio, self.warnings)

        self.tmpdir = tempfile.mkdtemp(prefix='tapeops-source-read-')
        try:
            if self.sources.synthetic is not None:
                self.sources.lay_out()
            return self._measure(fio)
        finally:
            if self.ingest_run is not None:
                self.ingest_run.cleanup()
            self.sources.remove_synthetic()
            shutil.rmtree(self.tmpdir, ignore_errors=True)

    def _find_fio(self):
        try:
            # missing: its package (_cli.TOOL_PACKAGES)
            return self.params.get('fio_path') or find_tool('fio', self.module)
        except CliError as exc:
            raise SourceReadError(**exc.as_fail_kwargs())

    def _measure(self, fio):
        """Every step of the scaling curve; the one at the read's concurrency again with the ingest job beside it."""
        min_size = _source_step.DIRECT_MIN_READ if self.options.cache == 'direct' else 1
        usable = _source_step.usable_sources(self.sources.streams, min_size, self.warnings, self.sources.passed_over)
        aliases = _source_step.aliases(usable, self.tmpdir)
        count, per_drive = self.options.concurrency(len(usable))
        steps = self.options.steps(count)
        cache = _source_step.cache_info(self.options.cache, usable, min_size, self.warnings)
        if self.ingest_plan:
            self.ingest_run = _ingest.IngestRun(self.ingest_plan, fio, self.tmpdir)
        step_run = _source_step.StepRun(fio, self.options, usable, aliases, min_size, cache, self.tmpdir,
                                        self.warnings)
        results = {}
        main = None
        with_ingest = None
        for step in steps:
            try:
                measured = step_run.run(step)
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
                    with_ingest = self._run_ingest_step(step_run, step)
        result = ReadResult(self.options, self.sources, self.ingest_plan, self.ingest_run, self.warnings)
        return result.of(main, results, steps, with_ingest, per_drive, usable, cache)

    def _run_ingest_step(self, step_run, step):
        try:
            measured = step_run.run(step, ingest=self.ingest_run)
        except SourceReadError as exc:
            self.warnings.append('The read with competing ingest failed, so there is no side-by-side figure: %s'
                                 % exc.fail_kwargs.get('msg'))
            return {'error': exc.fail_kwargs.get('msg')}
        finally:
            self.ingest_run.cleanup()
        return measured
