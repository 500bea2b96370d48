# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Open the HTML report in a real headless Chromium: it parses, the charts are there, it paints."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils import _run
from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import _render
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _host

from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils.report_cases import drive, source, write_result

CHROMIUM = shutil.which('chromium') or shutil.which('chromium-browser') or '/usr/bin/chromium'
FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
         '--disable-component-update', '--disable-sync', '--no-first-run', '--hide-scrollbars']


def chromium(tmp_path, *args):
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail('chromium is not installed: run tools/run setup (it installs Debian\'s chromium).')
    profile = tmp_path / 'profile'
    profile.mkdir(exist_ok=True)
    cmd = [CHROMIUM] + FLAGS + ['--user-data-dir=%s' % profile] + list(args)
    env = dict(os.environ, LC_ALL='C', HOME=str(tmp_path))
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env, check=False)


@pytest.fixture(scope='module')
def report(tmp_path_factory):
    run_dir = str(tmp_path_factory.mktemp('run'))
    cases = (('lab-ma1', 'IBM', 'ULT3580-TD5', 60.0, 55.0), ('lab-ma2', 'HP', 'Ultrium 6-SCSI', 6.0, 4.0))
    for host, vendor, product, mean, p5 in cases:
        doc = _host.assemble(host, [drive('/dev/nst0', vendor, product, host)], source(mean, p5),
                             [write_result('/dev/nst0')], [{'nst': '/dev/nst0', 'speed_floor_mb_s': 10.0}],
                             # a tuned Bacula host (Maximum File Size 50 GB, not the 1000 MB default)
                             {'software': 'bacula', 'block_size_bytes': 262144, 'segment_size_mb': 50000}).to_dict()
        _run.save(run_dir, doc)
    return _render.write_fleet(run_dir, ['lab-ma1', 'lab-ma2'])['paths']['html']


def test_chromium_parses_page_with_all_charts(report, tmp_path):
    proc = chromium(tmp_path, '--dump-dom', 'file://%s' % report)
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = proc.stdout
    assert '<title>Tape qualification report</title>' in dom
    sections = re.findall(r'<section class="drive"[^>]*data-class="([A-Z-]+)"', dom)
    assert sections == ['SPEED-MATCHED', 'SHOE-SHINING']
    charts = re.findall(r'<figure class="chart" data-chart="(\w+)"><svg', dom)
    assert charts == ['feed', 'series', 'trace', 'sweep'] * 2
    # each SVG has its axes with tick labels and its data drawn (lines, bars), text kept as text
    assert dom.count('<g class="axes"') == 8 and dom.count('<g class="tick-labels"') == 8
    assert dom.count('<polyline') >= 8
    assert 'speed step (0 = stopped)' in dom
    assert 'speed-matching band' in dom and 'block size (KiB)' in dom


def test_chromium_paints_the_charts(report, tmp_path):
    shot = tmp_path / 'page.png'
    proc = chromium(tmp_path, '--screenshot=%s' % shot, '--window-size=1400,3000', 'file://%s' % report)
    assert proc.returncode == 0, proc.stderr[-2000:]
    from matplotlib import image
    pixels = image.imread(str(shot))
    assert pixels.shape[0] == 3000 and pixels.shape[1] == 1400
    import numpy
    rgb = numpy.rint(pixels[:, :, :3] * 255).astype('uint8').reshape(-1, 3)
    colors = set(map(tuple, numpy.unique(rgb, axis=0).tolist()))
    assert len(colors) > 50, 'the page painted almost nothing'
    # the SHOE-SHINING badge red (#cf222e) and the STREAMING/full-speed green (#1a7f37) are on screen
    assert (0xcf, 0x22, 0x2e) in colors
    assert (0x1a, 0x7f, 0x37) in colors
