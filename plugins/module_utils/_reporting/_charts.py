# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The report's charts: matplotlib figures as inline SVG text.

Private to this collection: may change without notice. Controller side only;
``_render`` puts the SVG into the page templates (``templates/fleet.html.j2``,
``templates/media.html.j2``) unescaped, as markup this collection drew.
"""

from __future__ import annotations

import io
import re

from ansible_collections.tapeops.qualify.plugins.module_utils import _words
from ansible_collections.tapeops.qualify.plugins.module_utils._reporting._report import ReportError


class Charts:
    """Draws the three charts of a drive with matplotlib, as inline SVG text."""

    def __init__(self):
        try:
            import matplotlib
            from matplotlib.figure import Figure
        except ImportError as exc:
            raise ReportError('matplotlib is not installed on the controller (%s): pip install matplotlib '
                              '(it is in meta/ee-requirements.txt for execution environments).' % exc)
        self._matplotlib = matplotlib
        self._figure = Figure

    def _svg(self, fig, salt):
        rc = {'svg.fonttype': 'none', 'svg.hashsalt': salt}
        with self._matplotlib.rc_context(rc):
            buf = io.StringIO()
            # Fixed margins (set per chart) instead of bbox_inches='tight' or a layout
            # engine: a quarter of the drawing time, which adds up over a fleet.
            fig.savefig(buf, format='svg', metadata={'Date': None})
        text = buf.getvalue()
        start = text.find('<svg')
        text = text[start:] if start >= 0 else text
        # The RDF metadata block only names the tool; drop it to keep the page small.
        return re.sub(r'\s*<metadata>.*?</metadata>', '', text, count=1, flags=re.S)

    def feed(self, numbers, salt):
        """Source sustained/mean against the drive's floor and full speed."""
        fig = self._figure(figsize=(6.4, 2.6))
        fig.subplots_adjust(left=0.3, right=0.95, bottom=0.2, top=0.88)
        ax = fig.add_subplot()
        labels = ['sources sustained (p5)', 'sources mean', 'feed now', 'drive needs: floor', 'drive needs: full']
        values = [numbers.get('source_sustained_mb_s'), numbers.get('source_mean_mb_s'),
                  numbers.get('feed_now_mb_s'), numbers.get('need_floor_mb_s'), numbers.get('need_full_mb_s')]
        colors = ['#0969da', '#54aeff', '#1f2328', '#d4a72c', '#1a7f37']
        values = [v or 0 for v in values]
        ax.barh(labels[::-1], values[::-1], color=colors[::-1])
        for index, value in enumerate(values[::-1]):
            ax.text(value, index, ' %s' % _words.fmt_rate(value), va='center', fontsize=8)
        ax.set_xlabel('MB/s')
        ax.set_xlim(0, max(values + [1]) * 1.25)
        ax.set_title('Feed vs what the drive needs')
        return self._svg(fig, salt + '-feed')

    def series(self, series, numbers, salt):
        """Aggregate source rate over time against the speed-matching band."""
        fig = self._figure(figsize=(6.4, 2.6))
        fig.subplots_adjust(left=0.12, right=0.97, bottom=0.2, top=0.88)
        ax = fig.add_subplot()
        floor = numbers.get('need_floor_mb_s') or 0
        full = numbers.get('need_full_mb_s') or 0
        xs = list(range(1, len(series) + 1))
        ax.axhspan(floor, full, color='#d4a72c', alpha=0.25, label='speed-matching band')
        ax.axhline(full, color='#1a7f37', linewidth=1, label='full speed %s' % _words.fmt_rate(full))
        ax.axhline(floor, color='#cf222e', linewidth=1, label='floor %s' % _words.fmt_rate(floor))
        if series:
            ax.plot(xs, series, color='#0969da', linewidth=1.2, label='sources (aggregate)')
        ax.set_xlabel('seconds')
        ax.set_ylabel('MB/s')
        ax.set_ylim(0, max([full * 1.1] + [s * 1.1 for s in series] + [1]))
        ax.set_title('Source rate over time')
        ax.legend(fontsize=7, loc='upper right')
        return self._svg(fig, salt + '-series')

    def drive_trace(self, trace, numbers, salt):
        """The forecast: drive buffer level and speed step over the replayed interval."""
        fig = self._figure(figsize=(6.4, 2.6))
        fig.subplots_adjust(left=0.12, right=0.88, bottom=0.2, top=0.88)
        ax = fig.add_subplot()
        xs = [point['t_s'] for point in trace]
        ax.fill_between(xs, [point['buffer_pct'] for point in trace], color='#54aeff', alpha=0.35,
                        label='buffer %', step='post')
        ax.set_ylim(0, 105)
        ax.set_ylabel('buffer %')
        ax.set_xlabel('seconds (replayed feed)')
        speed = ax.twinx()
        speed.step(xs, [point['step_mb_s'] for point in trace], where='post', color='#1f2328', linewidth=1,
                   label='speed step (0 = stopped)')
        floor = numbers.get('speed_floor_mb_s') or 0
        if floor:
            speed.axhline(floor, color='#cf222e', linewidth=0.8, linestyle='--')
        speed.set_ylabel('tape MB/s')
        speed.set_ylim(0, max([p['step_mb_s'] for p in trace] + [floor, 1]) * 1.15)
        ax.set_title('What the drive does: buffer and speed step (forecast)')
        lines = ax.get_legend_handles_labels()
        more = speed.get_legend_handles_labels()
        ax.legend(lines[0] + more[0], lines[1] + more[1], fontsize=7, loc='lower right')
        return self._svg(fig, salt + '-trace')

    def scaling(self, curve, numbers, salt):
        """The sources' measured aggregate rate by stream count, against what the drive needs."""
        fig = self._figure(figsize=(6.4, 2.6))
        fig.subplots_adjust(left=0.12, right=0.97, bottom=0.2, top=0.88)
        ax = fig.add_subplot()
        xs = [point[0] for point in curve]
        ax.plot(xs, [point[1] for point in curve], marker='o', color='#0969da', label='sources (measured)')
        share = numbers.get('feed_share') or 1.0
        for key, color, words in (('need_full_mb_s', '#1a7f37', 'full speed'), ('need_floor_mb_s', '#cf222e', 'floor')):
            if numbers.get(key):
                ax.axhline(numbers[key] / share, color=color, linewidth=1, linestyle='--',
                           label='%s (this drive%s)' % (words, '' if share >= 1 else ', host total'))
        ax.set_xlabel('parallel streams')
        ax.set_ylabel('MB/s')
        ax.set_xticks(xs)
        ax.set_ylim(0, max([p[1] for p in curve] + [(numbers.get('need_full_mb_s') or 0) / share, 1]) * 1.15)
        ax.set_title('Source rate by number of streams (measured)')
        ax.legend(fontsize=7, loc='lower right')
        return self._svg(fig, salt + '-scaling')

    def sweep(self, sweep, numbers, salt):
        """Block-size sweep: MB/s per block size and pattern."""
        fig = self._figure(figsize=(6.4, 2.6))
        fig.subplots_adjust(left=0.12, right=0.97, bottom=0.2, top=0.88)
        ax = fig.add_subplot()
        by_pattern = {}
        for row in sweep:
            if row.get('error') or row.get('mb_s') is None:
                continue
            by_pattern.setdefault(str(row.get('pattern')), []).append((int(row['block_size']), float(row['mb_s'])))
        for pattern, points in sorted(by_pattern.items()):
            points.sort()
            ax.plot([p[0] / 1024 for p in points], [p[1] for p in points], marker='o', label=pattern)
        if by_pattern:
            ax.set_xscale('log', base=2)
            sizes = sorted(set(p[0] for points in by_pattern.values() for p in points))
            ax.set_xticks([size / 1024 for size in sizes])
            ax.set_xticklabels([_words.fmt_bytes(size).replace(' KiB', 'K').replace(' MiB', 'M') for size in sizes])
            ax.minorticks_off()
        for key, color in (('need_full_mb_s', '#1a7f37'), ('need_floor_mb_s', '#cf222e')):
            if numbers.get(key):
                ax.axhline(numbers[key], color=color, linewidth=1, linestyle='--')
        ax.set_xlabel('block size (KiB)')
        ax.set_ylabel('MB/s')
        ax.set_title('Block-size sweep (drive path)')
        if by_pattern:
            ax.legend(fontsize=7)
        return self._svg(fig, salt + '-sweep')

    def media(self, bars, salt):
        """Cartridges by media ID per library, coloured by what the target drive does with them.

        bars: [(label, [(media ID, count, class), ...]), ...].
        """
        colors = {'write': '#1a7f37', 'read': '#d4a72c', 'stranded': '#cf222e', None: '#8c959f'}
        fig = self._figure(figsize=(6.4, 0.9 + 0.45 * max(len(bars), 1)))
        fig.subplots_adjust(left=0.3, right=0.97, bottom=0.35 if len(bars) < 3 else 0.2, top=0.85)
        ax = fig.add_subplot()
        seen = set()
        for index, (_label, segments) in enumerate(bars[::-1]):
            left = 0
            for media, count, cls in segments:
                name = {'write': 'target writes', 'read': 'target reads only', 'stranded': 'stranded',
                        None: 'unknown'}[cls]
                ax.barh(index, count, left=left, color=colors[cls], edgecolor='white',
                        label=None if name in seen else name)
                seen.add(name)
                ax.text(left + count / 2.0, index, media or '?', ha='center', va='center', fontsize=7, color='white')
                left += count
        ax.set_yticks(range(len(bars)))
        ax.set_yticklabels([label for label, _s in bars[::-1]], fontsize=7)
        ax.set_xlabel('cartridges')
        ax.set_title('Media by generation per library')
        if seen:
            ax.legend(fontsize=7, loc='lower right')
        return self._svg(fig, salt + '-media')
