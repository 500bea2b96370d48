# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The report's charts: inline SVG, its geometry computed here and written by ``templates/chart.svg.j2``.

Private to this collection: may change without notice. Controller side only;
``_render`` puts the SVG into the page templates (``templates/fleet.html.j2``,
``templates/media.html.j2``) unescaped, as markup this collection drew (every
word in it is escaped by the chart's template).

A chart is a plot area in points (72 to the inch, the size the matplotlib
figures these replace had, so the pages keep their layout), linear axes (the
block-size sweep's is log2) with ticks at 1, 2, 2.5 or 5 x 10^k, and data as
rectangles, polylines, polygons, markers and labels. A matplotlib figure per
chart took about 90 % of a host page's time (docs/reports.md); this takes a
small part of it.
"""

from __future__ import annotations

import math

from ansible_collections.tapeops.qualify.plugins.module_utils import _words
from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import _templates

PT = 72.0
FONT = 'DejaVu Sans, Bitstream Vera Sans, Arial, Helvetica, sans-serif'
# matplotlib's default colour cycle (tab10), for series without a colour of their own (the sweep's patterns)
CYCLE = ('#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22',
         '#17becf')
DASH = '3.7,1.6'


def _n(value):
    """A coordinate as the SVG gets it: two decimals, no trailing zeros."""
    text = '%.2f' % value
    return text.rstrip('0').rstrip('.') if '.' in text else text


def nice_ticks(lo, hi, most=7):
    """Tick values covering [lo, hi] at a step of 1, 2, 2.5 or 5 x 10^k, at most ``most`` steps apart, and the
    step (the steps matplotlib's MaxNLocator takes)."""
    span = hi - lo
    if not span > 0:
        span = abs(hi) or 1.0
        lo, hi = lo - span / 2.0, hi + span / 2.0
        span = hi - lo
    magnitude = 10 ** math.floor(math.log10(span / most))
    step = magnitude * 10
    for mult in (1, 2, 2.5, 5, 10):
        if span / (mult * magnitude) <= most:
            step = mult * magnitude
            break
    first = math.ceil(lo / step - 1e-9)
    last = math.floor(hi / step + 1e-9)
    return [round(index * step, 10) for index in range(first, last + 1)], step


def tick_label(value, step):
    """A tick's words: as many decimals as the step needs ('0', '2.5', '0.25')."""
    text = ('%.10f' % step).rstrip('0')
    decimals = len(text.split('.')[1]) if '.' in text else 0
    return '%.*f' % (decimals, value)


def _text_width(text, size):
    """About how wide a text is in points (a sans-serif's mean advance: 0.6 of its size)."""
    return len(text) * size * 0.6


class _Plot:
    """One chart: a figure of ``width_in`` x ``height_in`` inches with its plot area at the given fractions (as
    matplotlib's subplots_adjust), its axes, its data shapes and its legend."""

    def __init__(self, title, width_in=6.4, height_in=2.6, left=0.12, right=0.97, bottom=0.2, top=0.88):
        self.title = title
        self.width, self.height = width_in * PT, height_in * PT
        self.left, self.right = left * self.width, right * self.width
        self.top, self.bottom = (1.0 - top) * self.height, (1.0 - bottom) * self.height
        self.limits = {}
        self.shapes = []
        self.ticks = []
        self.axis_labels = []
        self.legend_entries = []
        self.legend = None

    # scales
    def set_limits(self, axis, lo, hi, log2=False):
        if not hi > lo:
            hi = lo + 1.0
        self.limits[axis] = (lo, hi, log2)

    def px(self, value):
        lo, hi, log2 = self.limits['x']
        if log2:
            value, lo, hi = math.log2(value), math.log2(lo), math.log2(hi)
        return self.left + (value - lo) / (hi - lo) * (self.right - self.left)

    def py(self, value, axis='y'):
        lo, hi, _log2 = self.limits[axis]
        return self.bottom - (value - lo) / (hi - lo) * (self.bottom - self.top)

    # data
    def rect(self, x0, x1, y0, y1, fill, opacity=None, stroke=None):
        """A rectangle between two x and two y positions, in points."""
        left, right = sorted((x0, x1))
        top, bottom = sorted((y0, y1))
        self.shapes.append({'kind': 'rect', 'x': _n(left), 'y': _n(top), 'w': _n(right - left),
                            'h': _n(bottom - top), 'fill': fill, 'opacity': opacity, 'stroke': stroke})

    def polyline(self, points, color, width=1.0, dash=None, axis='y'):
        """A line through data points ``[(x, y), ...]``."""
        if points:
            self.shapes.append({'kind': 'polyline', 'color': color, 'width': _n(width), 'dash': dash,
                                'points': ' '.join('%s,%s' % (_n(self.px(x)), _n(self.py(y, axis)))
                                                   for x, y in points)})

    def hline(self, value, color, width=1.0, dash=None, axis='y'):
        lo, hi, _log2 = self.limits['x']
        self.polyline([(lo, value), (hi, value)], color, width, dash, axis)

    def band(self, y0, y1, fill, opacity):
        self.rect(self.left, self.right, self.py(y0), self.py(y1), fill, opacity)

    def markers(self, points, color, axis='y'):
        for x, y in points:
            self.shapes.append({'kind': 'circle', 'x': _n(self.px(x)), 'y': _n(self.py(y, axis)), 'color': color})

    def area(self, points, fill, opacity):
        """The area under a line through ``points`` down to y = 0."""
        if points:
            base = self.py(0.0)
            corners = [(self.px(points[0][0]), base)] + [(self.px(x), self.py(y)) for x, y in points]
            corners.append((self.px(points[-1][0]), base))
            self.shapes.append({'kind': 'polygon', 'fill': fill, 'opacity': opacity,
                                'points': ' '.join('%s,%s' % (_n(x), _n(y)) for x, y in corners)})

    def text(self, x, y, text, size=8, anchor='start', color='#000000', baseline='central'):
        """A label at a position in points."""
        self.shapes.append({'kind': 'text', 'x': _n(x), 'y': _n(y), 'text': text, 'size': size, 'anchor': anchor,
                            'color': color, 'baseline': baseline, 'rotate': False})

    # axes
    def xticks(self, values=None, labels=None, most=7):
        """Ticks under the plot area: ``values`` with ``labels``, or nice ones within the x limits."""
        lo, hi, _log2 = self.limits['x']
        if values is None:
            values, step = nice_ticks(lo, hi, most)
            labels = [tick_label(v, step) for v in values]
        for value, label in zip(values, labels):
            if lo - 1e-9 <= value <= hi + 1e-9:
                x = self.px(value)
                self.ticks.append({'x1': _n(x), 'y1': _n(self.bottom), 'x2': _n(x), 'y2': _n(self.bottom + 3.5),
                                   'tx': _n(x), 'ty': _n(self.bottom + 14), 'anchor': 'middle',
                                   'baseline': 'auto', 'label': label, 'size': None})

    def yticks(self, axis='y', values=None, labels=None, most=6, size=None):
        """Ticks left of the plot area (``y2``: right of it): ``values`` with ``labels``, or nice ones."""
        lo, hi, _log2 = self.limits[axis]
        if values is None:
            values, step = nice_ticks(lo, hi, most)
            labels = [tick_label(v, step) for v in values]
        right = axis == 'y2'
        edge = self.right if right else self.left
        sign = 1 if right else -1
        widest = 0.0
        for value, label in zip(values, labels):
            if lo - 1e-9 <= value <= hi + 1e-9:
                y = self.py(value, axis)
                self.ticks.append({'x1': _n(edge), 'y1': _n(y), 'x2': _n(edge + sign * 3.5), 'y2': _n(y),
                                   'tx': _n(edge + sign * 6), 'ty': _n(y), 'anchor': 'start' if right else 'end',
                                   'baseline': 'central', 'label': label, 'size': size})
                widest = max(widest, _text_width(label, size or 10))
        return widest

    def labels(self, xlabel=None, ylabel=None, y2label=None, ywidth=0.0, y2width=0.0):
        """The axes' titles: under the x ticks, and beside the y ticks (rotated)."""
        if xlabel:
            self.axis_labels.append({'x': _n((self.left + self.right) / 2.0), 'y': _n(self.bottom + 28),
                                     'text': xlabel, 'rotate': None})
        middle = _n((self.top + self.bottom) / 2.0)
        if ylabel:
            x = _n(self.left - ywidth - 14)
            self.axis_labels.append({'x': x, 'y': middle, 'text': ylabel, 'rotate': -90})
        if y2label:
            x = _n(self.right + y2width + 16)
            self.axis_labels.append({'x': x, 'y': middle, 'text': y2label, 'rotate': -90})

    def add_legend(self, label, color, patch=False, opacity=None, width=1.0, dash=None, marker=False):
        self.legend_entries.append({'label': label, 'color': color, 'patch': patch, 'opacity': opacity,
                                    'width': _n(width), 'dash': dash, 'marker': marker})

    def _legend_box(self, loc, w, h):
        x = self.right - 4 - w if loc.endswith('right') else self.left + 4
        y = self.top + 4 if loc.startswith('upper') else self.bottom - 4 - h
        return x, y

    def _points_under(self, x, y, w, h):
        """How many of the data's points (line vertices, markers) a box at x, y, w, h would cover."""
        count = 0
        for shape in self.shapes:
            if shape['kind'] == 'polyline':
                points = [pair.split(',') for pair in shape['points'].split()]
            elif shape['kind'] == 'circle':
                points = [(shape['x'], shape['y'])]
            else:
                continue
            count += sum(1 for px, py in points if x <= float(px) <= x + w and y <= float(py) <= y + h)
        return count

    def _place_legend(self, loc):
        """The legend box in a corner of the plot area; ``best``: the corner that covers the fewest data points
        (the first of upper right, upper left, lower left, lower right on a tie)."""
        if not self.legend_entries:
            return
        row = 10.0
        w = 26 + max(_text_width(e['label'], 7) for e in self.legend_entries)
        h = 6 + row * len(self.legend_entries)
        if loc == 'best':
            loc = min(('upper right', 'upper left', 'lower left', 'lower right'),
                      key=lambda corner: self._points_under(*self._legend_box(corner, w, h), w=w, h=h))
        x, y = self._legend_box(loc, w, h)
        entries = []
        for index, entry in enumerate(self.legend_entries):
            entries.append(dict(entry, x=round(x + 5, 2), y=round(y + 3 + row * index + row / 2.0, 2)))
        self.legend = {'x': _n(x), 'y': _n(y), 'w': _n(w), 'h': _n(h), 'entries': entries}

    def svg(self, salt, legend='upper right'):
        """The chart's SVG text."""
        self._place_legend(legend)
        view = {'width': _n(self.width), 'height': _n(self.height), 'font': FONT, 'title': self.title,
                'salt': salt, 'left': _n(self.left), 'top': _n(self.top), 'plot_w': _n(self.right - self.left),
                'plot_h': _n(self.bottom - self.top), 'shapes': self.shapes, 'ticks': self.ticks,
                'axis_labels': self.axis_labels, 'legend': self.legend,
                'title_x': _n((self.left + self.right) / 2.0), 'title_y': _n(self.top - 6)}
        return _templates.render('chart.svg.j2', c=view).strip()


def _padded(lo, hi):
    """Data limits with matplotlib's 5 % margins on each side."""
    pad = (hi - lo) * 0.05 if hi > lo else 0.5
    return lo - pad, hi + pad


class Charts:
    """Draws the charts of a drive (and of a library's media) as inline SVG text."""

    def feed(self, numbers, salt):
        """Source sustained/mean against the drive's floor and full speed."""
        plot = _Plot('Feed vs what the drive needs', left=0.3, right=0.95)
        labels = ['sources sustained (p5)', 'sources mean', 'feed now', 'drive needs: floor', 'drive needs: full']
        values = [numbers.get('source_sustained_mb_s'), numbers.get('source_mean_mb_s'),
                  numbers.get('feed_now_mb_s'), numbers.get('need_floor_mb_s'), numbers.get('need_full_mb_s')]
        colors = ['#0969da', '#54aeff', '#1f2328', '#d4a72c', '#1a7f37']
        values = [v or 0 for v in values]
        count = len(values)
        plot.set_limits('x', 0, max(values + [1]) * 1.25)
        plot.set_limits('y', -0.5 - 0.2, count - 0.5 + 0.2)
        for index, (value, color) in enumerate(zip(values, colors)):
            slot = count - 1 - index                     # the first bar on top
            plot.rect(plot.px(0), plot.px(value), plot.py(slot - 0.4), plot.py(slot + 0.4), color)
            plot.text(plot.px(value) + 2, plot.py(slot), _words.fmt_rate(value), size=8)
        plot.xticks()
        plot.yticks(values=[count - 1 - i for i in range(count)], labels=labels)
        plot.labels(xlabel='MB/s')
        return plot.svg(salt + '-feed')

    def series(self, series, numbers, salt):
        """Aggregate source rate over time against the speed-matching band."""
        plot = _Plot('Source rate over time')
        floor = numbers.get('need_floor_mb_s') or 0
        full = numbers.get('need_full_mb_s') or 0
        plot.set_limits('x', *_padded(1, max(len(series), 1)))
        plot.set_limits('y', 0, max([full * 1.1] + [s * 1.1 for s in series] + [1]))
        plot.band(floor, full, '#d4a72c', 0.25)
        plot.add_legend('speed-matching band', '#d4a72c', patch=True, opacity=0.25)
        plot.hline(full, '#1a7f37')
        plot.add_legend('full speed %s' % _words.fmt_rate(full), '#1a7f37')
        plot.hline(floor, '#cf222e')
        plot.add_legend('floor %s' % _words.fmt_rate(floor), '#cf222e')
        if series:
            plot.polyline([(i + 1, s) for i, s in enumerate(series)], '#0969da', width=1.2)
            plot.add_legend('sources (aggregate)', '#0969da', width=1.2)
        plot.xticks()
        ywidth = plot.yticks()
        plot.labels(xlabel='seconds', ylabel='MB/s', ywidth=ywidth)
        return plot.svg(salt + '-series', legend='upper right')

    def drive_trace(self, trace, numbers, salt):
        """The forecast: drive buffer level and speed step over the replayed interval."""
        plot = _Plot('What the drive does: buffer and speed step (forecast)', right=0.88)
        xs = [point['t_s'] for point in trace]
        steps = [point['step_mb_s'] for point in trace]
        floor = numbers.get('speed_floor_mb_s') or 0
        plot.set_limits('x', *_padded(min(xs), max(xs)))
        plot.set_limits('y', 0, 105)
        plot.set_limits('y2', 0, max(steps + [floor, 1]) * 1.15)
        level = []
        for index, point in enumerate(trace):           # steps after each point (matplotlib's step='post')
            level.append((point['t_s'], point['buffer_pct']))
            if index + 1 < len(trace):
                level.append((trace[index + 1]['t_s'], point['buffer_pct']))
        plot.area(level, '#54aeff', 0.35)
        plot.add_legend('buffer %', '#54aeff', patch=True, opacity=0.35)
        stepped = []
        for index, point in enumerate(trace):
            stepped.append((point['t_s'], point['step_mb_s']))
            if index + 1 < len(trace):
                stepped.append((trace[index + 1]['t_s'], point['step_mb_s']))
        plot.polyline(stepped, '#1f2328', axis='y2')
        plot.add_legend('speed step (0 = stopped)', '#1f2328')
        if floor:
            plot.hline(floor, '#cf222e', width=0.8, dash=DASH, axis='y2')
        plot.xticks()
        ywidth = plot.yticks()
        y2width = plot.yticks('y2')
        plot.labels(xlabel='seconds (replayed feed)', ylabel='buffer %', y2label='tape MB/s', ywidth=ywidth,
                    y2width=y2width)
        return plot.svg(salt + '-trace', legend='lower right')

    def scaling(self, curve, numbers, salt):
        """The sources' measured aggregate rate by stream count, against what the drive needs."""
        plot = _Plot('Source rate by number of streams (measured)')
        xs = [point[0] for point in curve]
        share = numbers.get('feed_share') or 1.0
        plot.set_limits('x', *_padded(min(xs), max(xs)))
        plot.set_limits('y', 0, max([p[1] for p in curve] + [(numbers.get('need_full_mb_s') or 0) / share, 1]) * 1.15)
        plot.polyline(curve, '#0969da')
        plot.markers(curve, '#0969da')
        plot.add_legend('sources (measured)', '#0969da', marker=True)
        for key, color, words in (('need_full_mb_s', '#1a7f37', 'full speed'), ('need_floor_mb_s', '#cf222e', 'floor')):
            if numbers.get(key):
                plot.hline(numbers[key] / share, color, dash=DASH)
                plot.add_legend('%s (this drive%s)' % (words, '' if share >= 1 else ', host total'), color, dash=DASH)
        plot.xticks(values=xs, labels=[str(x) for x in xs])
        ywidth = plot.yticks()
        plot.labels(xlabel='parallel streams', ylabel='MB/s', ywidth=ywidth)
        return plot.svg(salt + '-scaling', legend='lower right')

    def sweep(self, sweep, numbers, salt):
        """Block-size sweep: MB/s per block size and pattern."""
        plot = _Plot('Block-size sweep (drive path)')
        by_pattern = {}
        for row in sweep:
            if row.get('error') or row.get('mb_s') is None:
                continue
            by_pattern.setdefault(str(row.get('pattern')), []).append((int(row['block_size']), float(row['mb_s'])))
        sizes = sorted(set(p[0] for points in by_pattern.values() for p in points)) or [65536, 1048576]
        needs = [numbers[key] for key in ('need_full_mb_s', 'need_floor_mb_s') if numbers.get(key)]
        rates = [p[1] for points in by_pattern.values() for p in points]
        lo, hi = math.log2(sizes[0] / 1024.0), math.log2(sizes[-1] / 1024.0)
        lo, hi = _padded(lo, hi)
        plot.set_limits('x', 2 ** lo, 2 ** hi, log2=True)
        top = max(rates + needs + [1])
        plot.set_limits('y', *_padded(min(rates + needs + [top]) if rates else 0, top))
        for index, (pattern, points) in enumerate(sorted(by_pattern.items())):
            points.sort()
            color = CYCLE[index % len(CYCLE)]
            line = [(p[0] / 1024.0, p[1]) for p in points]
            plot.polyline(line, color, width=1.5)
            plot.markers(line, color)
            plot.add_legend(pattern, color, width=1.5, marker=True)
        for key, color in (('need_full_mb_s', '#1a7f37'), ('need_floor_mb_s', '#cf222e')):
            if numbers.get(key):
                plot.hline(numbers[key], color, dash=DASH)
        plot.xticks(values=[size / 1024.0 for size in sizes],
                    labels=[_words.fmt_bytes(size).replace(' KiB', 'K').replace(' MiB', 'M') for size in sizes])
        ywidth = plot.yticks()
        plot.labels(xlabel='block size (KiB)', ylabel='MB/s', ywidth=ywidth)
        return plot.svg(salt + '-sweep', legend='best')

    def media(self, bars, salt):
        """Cartridges by media ID per library, coloured by what the target drive does with them.

        bars: [(label, [(media ID, count, class), ...]), ...].
        """
        colors = {'write': '#1a7f37', 'read': '#d4a72c', 'stranded': '#cf222e', None: '#8c959f'}
        names = {'write': 'target writes', 'read': 'target reads only', 'stranded': 'stranded', None: 'unknown'}
        plot = _Plot('Media by generation per library', height_in=0.9 + 0.45 * max(len(bars), 1), left=0.3,
                     bottom=0.35 if len(bars) < 3 else 0.2, top=0.85)
        total = max([sum(count for _m, count, _c in segments) for _l, segments in bars] + [1])
        plot.set_limits('x', 0, total * 1.05)
        plot.set_limits('y', -0.6, max(len(bars), 1) - 0.4)
        seen = []
        for index, (_label, segments) in enumerate(bars[::-1]):
            left = 0
            for media, count, cls in segments:
                plot.rect(plot.px(left), plot.px(left + count), plot.py(index - 0.4), plot.py(index + 0.4),
                          colors[cls], stroke='#ffffff')
                if cls not in seen:
                    seen.append(cls)
                    plot.add_legend(names[cls], colors[cls], patch=True)
                plot.text(plot.px(left + count / 2.0), plot.py(index), media or '?', size=7, anchor='middle',
                          color='#ffffff')
                left += count
        plot.xticks(most=6)
        plot.yticks(values=list(range(len(bars))), labels=[label for label, _s in bars[::-1]], size=7)
        plot.labels(xlabel='cartridges')
        return plot.svg(salt + '-media', legend='lower right')
