# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The charts' SVG: ticks, scales and shapes computed from the data (test_render_chromium paints them)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import _charts

SVG = '{http://www.w3.org/2000/svg}'
NUMBERS = {'source_sustained_mb_s': 13.2, 'source_mean_mb_s': 153.0, 'feed_now_mb_s': 7.1,
           'need_floor_mb_s': 2.0, 'need_full_mb_s': 7.1, 'speed_floor_mb_s': 2.0}


@pytest.mark.parametrize('lo, hi, ticks', [
    (0, 191.25, [0, 50, 100, 150]),            # the feed chart of a 153 MB/s source (x 1.25)
    (0, 105, [0, 20, 40, 60, 80, 100]),        # the buffer %
    (0, 8.1, [0, 2, 4, 6, 8]),
    (0, 1, [0, 0.2, 0.4, 0.6, 0.8, 1.0]),
    (0.55, 30.45, [5, 10, 15, 20, 25, 30]),    # 1..30 s with 5 % margins
    (-0.35, 7.35, [0, 2, 4, 6]),
    (0, 17.5, [0, 2.5, 5, 7.5, 10, 12.5, 15, 17.5]),
])
def test_ticks_are_round_steps_within_the_limits(lo, hi, ticks):
    values, _step = _charts.nice_ticks(lo, hi)
    assert values == pytest.approx(ticks)
    assert all(lo - 1e-9 <= v <= hi + 1e-9 for v in values)


def test_tick_labels_have_the_decimals_of_the_step():
    assert [_charts.tick_label(v, 0.2) for v in (0, 0.2, 1.0)] == ['0.0', '0.2', '1.0']
    assert [_charts.tick_label(v, 2.5) for v in (0, 2.5, 10)] == ['0.0', '2.5', '10.0']
    assert [_charts.tick_label(v, 50) for v in (0, 150)] == ['0', '150']


def test_a_flat_range_still_gets_ticks():
    values, step = _charts.nice_ticks(5.0, 5.0)
    assert step > 0 and values and min(values) <= 5.0 <= max(values)


def parse(svg):
    return ET.fromstring(svg)


def test_feed_bars_are_as_long_as_their_rates_and_labelled():
    root = parse(_charts.Charts().feed(NUMBERS, 'd0'))
    assert root.get('width') == '460.8pt' and root.get('height') == '187.2pt'    # the 6.4 x 2.6 in figure
    bars = [r for r in root.iter(SVG + 'rect') if r.get('fill') in ('#0969da', '#54aeff', '#1f2328')]
    widths = {r.get('fill'): float(r.get('width')) for r in bars}
    # bar length in proportion to the rate: 13.2 and 153 MB/s
    assert widths['#54aeff'] / widths['#0969da'] == pytest.approx(153.0 / 13.2, rel=0.01)
    texts = [t.text for t in root.iter(SVG + 'text')]
    assert '153 MB/s' in texts and '13.2 MB/s' in texts and 'drive needs: floor' in texts
    assert 'Feed vs what the drive needs' in texts and 'MB/s' in texts


def test_series_line_has_a_point_a_second_inside_the_plot():
    series = [10.0, 30.0, 20.0, 25.0]
    root = parse(_charts.Charts().series(series, NUMBERS, 'd0'))
    line = [p for p in root.iter(SVG + 'polyline') if p.get('stroke') == '#0969da'][0]
    points = [tuple(map(float, pair.split(','))) for pair in line.get('points').split()]
    assert len(points) == 4
    frame = root.find(SVG + 'g[@class="axes"]/' + SVG + 'rect')
    x0, y0 = float(frame.get('x')), float(frame.get('y'))
    x1, y1 = x0 + float(frame.get('width')), y0 + float(frame.get('height'))
    assert all(x0 < x < x1 and y0 < y < y1 for x, y in points)
    # higher rate, higher on the page (smaller y); x in time order
    assert points[1][1] < points[2][1] < points[0][1]
    assert [p[0] for p in points] == sorted(p[0] for p in points)
    legend = [t.text for t in root.find(SVG + 'g[@class="legend"]').iter(SVG + 'text')]
    assert legend == ['speed-matching band', 'full speed 7.1 MB/s', 'floor 2.0 MB/s', 'sources (aggregate)']


def test_trace_steps_after_each_point_on_the_right_axis():
    trace = [{'t_s': 0, 'buffer_pct': 100, 'step_mb_s': 7.0}, {'t_s': 10, 'buffer_pct': 40, 'step_mb_s': 0.0},
             {'t_s': 20, 'buffer_pct': 70, 'step_mb_s': 5.0}]
    root = parse(_charts.Charts().drive_trace(trace, NUMBERS, 'd0'))
    step = [p for p in root.iter(SVG + 'polyline') if p.get('stroke') == '#1f2328'][0]
    points = [tuple(map(float, pair.split(','))) for pair in step.get('points').split()]
    # post steps: 3 points and 2 risers
    assert len(points) == 5 and points[0][1] == points[1][1] and points[1][0] == points[2][0]
    assert points[2][1] > points[0][1]                        # stopped (0) is lower on the page than 7 MB/s
    labels = [t.text for t in root.iter(SVG + 'text')]
    assert 'tape MB/s' in labels and 'buffer %' in labels and 'speed step (0 = stopped)' in labels


def test_sweep_legend_goes_where_no_point_is():
    # points high on the right and low on the left leave the upper left and lower right corners free
    sweep = [{'pattern': 'random', 'block_size': 65536, 'mb_s': 1.0},
             {'pattern': 'random', 'block_size': 1048576, 'mb_s': 100.0}]
    root = parse(_charts.Charts().sweep(sweep, {}, 'd0'))
    frame = root.find(SVG + 'g[@class="axes"]/' + SVG + 'rect')
    box = root.find(SVG + 'g[@class="legend"]/' + SVG + 'rect')
    left = float(frame.get('x'))
    assert float(box.get('x')) < left + 10                      # upper left, the first free corner
    assert float(box.get('y')) < float(frame.get('y')) + 10
    assert [t.text for t in root.iter(SVG + 'text') if t.text in ('64K', '1M')] == ['64K', '1M']


def test_words_are_escaped():
    root = parse(_charts.Charts().media([('ma<1> & co', [('L5', 3, 'write'), (None, 1, None)])], 'm'))
    texts = [t.text for t in root.iter(SVG + 'text')]
    assert 'ma<1> & co' in texts and '?' in texts and 'target writes' in texts and 'unknown' in texts


def test_the_same_data_draws_the_same_svg():
    one = _charts.Charts().feed(NUMBERS, 'd0')
    assert one == _charts.Charts().feed(dict(NUMBERS), 'd0')
    assert not re.search(r'\d\.\d{3,}', one)                  # coordinates at two decimals at most
