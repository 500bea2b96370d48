# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The report templates (plugins/module_utils/_reporting/templates/): they compile, HTML is escaped, pages stay
self-contained.

The documents are the recorded lab run tests/unit/fixtures/lab_runs/20261123-quick/ (see its README.md).
"""

from __future__ import annotations

import glob
import os

from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import _render, _report, _templates

FIXTURE = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures', 'lab_runs', '20261123-quick')
EVIL = '<img src=x onerror="alert(1)">'


def _lab_docs():
    docs = []
    for path in sorted(glob.glob(os.path.join(FIXTURE, '*.json'))):
        docs.append(_report.load_host(path))     # version 1, converted on load
    return docs


def test_every_template_compiles():
    env = _templates.environment()
    names = sorted(env.list_templates())
    assert names == ['compare.html.j2', 'compare.md.j2', 'fleet.html.j2', 'fleet.md.j2', 'index.css',
                     'index.html.j2', 'index.js', 'mechanics.html.j2', 'mechanics.md.j2', 'mechanics.svg.j2',
                     'media.html.j2', 'media.md.j2', 'report.css', 'settings.html.j2', 'settings.md.j2']
    for name in names:
        env.get_template(name)
    assert os.path.isfile(os.path.join(_templates.TEMPLATE_DIR, 'fleet.html.j2'))


def test_html_escapes_what_a_host_brings_and_markdown_keeps_it_verbatim(tmp_path):
    docs = _lab_docs()
    failed = _report.host_document('ma-' + EVIL, _report.STATUS_FAILED, error='Cannot read %s' % EVIL)
    page = _render.fleet_html(docs + [failed], {'id': EVIL}, _report.ReportError('no charts here'))
    assert EVIL not in page
    assert 'Cannot read &lt;img src=x onerror=&#34;alert(1)&#34;&gt;' in page
    assert ', id &lt;img src=x onerror=&#34;alert(1)&#34;&gt;. Rates in MB/s' in page
    assert '<p class="err">No charts: no charts here</p>' in page
    # what the collection builds itself is markup, not text: the badges
    assert '<span class="cls" style="background:#cf222e">SHOE-SHINING</span>' in page
    markdown = _render.fleet_markdown(docs + [failed], {'id': 'x'})
    assert '| ma-<img src=x onerror="alert(1)"> | - | **FAILED** | - | - | - | - | Cannot read %s |' % EVIL in markdown


def test_pages_are_self_contained(tmp_path):
    run = str(tmp_path)
    for doc in _lab_docs():
        _report.write_host(run, doc)
    out = _render.write_fleet(run)
    for path in [out['paths']['html']] + out['paths']['host_pages']:
        with open(path, encoding='utf-8') as handle:
            page = handle.read()
        assert page.startswith('<!DOCTYPE html>\n') and page.rstrip().endswith('</body></html>')
        for external in ('<link', '<script src', 'src="http', "src='http", 'url(http', '@import'):
            assert external not in page, (path, external)
        assert page.count('<svg') >= 4           # feed, series, trace, sweep of at least one drive
