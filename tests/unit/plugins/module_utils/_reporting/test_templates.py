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

from ansible_collections.tapeops.qualify.plugins.module_utils import _run
from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import _render, _report, _templates
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _host

FIXTURE = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'fixtures', 'lab_runs', '20261123-quick')
EVIL = '<img src=x onerror="alert(1)">'


def _lab_docs():
    docs = []
    for path in sorted(glob.glob(os.path.join(FIXTURE, '*.json'))):
        docs.append(_run.load(path))
    return docs


def test_every_template_compiles():
    env = _templates.environment()
    names = sorted(env.list_templates())
    assert names == ['against_observed.html.j2', 'against_observed.md.j2', 'chart.svg.j2', 'compare.html.j2', 'compare.md.j2',
                     'fleet.html.j2', 'fleet.md.j2', 'index.css', 'index.html.j2', 'index.js', 'mechanics.html.j2',
                     'mechanics.md.j2', 'mechanics.svg.j2', 'media.html.j2', 'media.md.j2', 'observed.html.j2',
                     'observed.md.j2', 'report.css', 'settings.html.j2', 'settings.md.j2']
    for name in names:
        env.get_template(name)
    assert os.path.isfile(os.path.join(_templates.TEMPLATE_DIR, 'fleet.html.j2'))


def test_html_escapes_what_a_host_brings_and_markdown_escapes_it_too(tmp_path):
    docs = _lab_docs()
    failed = _host.host_document('ma-' + EVIL, _run.STATUS_FAILED, error='Cannot read %s' % EVIL).to_dict()
    page = _render.fleet_html(docs + [failed], {'id': EVIL}, _report.ReportError('no charts here'))
    assert EVIL not in page
    assert 'Cannot read &lt;img src=x onerror=&#34;alert(1)&#34;&gt;' in page
    assert ', id &lt;img src=x onerror=&#34;alert(1)&#34;&gt;. Rates in MB/s' in page
    assert '<p class="err">No charts: no charts here</p>' in page
    # what the collection builds itself is markup, not text: the badges
    assert '<span class="cls" style="background:#cf222e">SHOE-SHINING</span>' in page
    markdown = _render.fleet_markdown(docs + [failed], {'id': 'x'})
    assert ('| ma-\\<img src=x onerror="alert(1)"> | - | **FAILED** | - | - | - | - | Cannot read \\<img src=x '
            'onerror="alert(1)"> |') in markdown


# a host name that is every Markdown construct at once: raw HTML, a table cell's end, a code span, a link, an entity
# and a trailing backslash that would escape the next cell's '|'
HOSTILE = '<img src=x onerror=alert(1)>|`rm`[x](http://e) &lt;b\\'


def _viewer(markdown):
    """summary.md as a Markdown viewer shows it: CommonMark with tables, raw HTML allowed (as GitHub's before
    its sanitiser)."""
    from markdown_it import MarkdownIt
    return MarkdownIt('commonmark').enable('table').render(markdown)


def test_summary_md_shows_what_a_host_brings_as_text_in_every_section(tmp_path):
    docs = _lab_docs()
    docs[0] = dict(docs[0], host=HOSTILE)
    docs[0]['drives'][0]['id'] = docs[0]['verdicts'][0]['drive'] = '/dev/nst0|' + HOSTILE
    failed = _host.host_document('ma-' + HOSTILE, _run.STATUS_FAILED, error='Cannot read %s' % HOSTILE).to_dict()
    run = str(tmp_path)
    for doc in docs + [failed]:
        _run.save(run, doc)
    # the comparison section too: the run against itself under another directory
    earlier = tmp_path / 'earlier'
    for doc in docs:
        _run.save(str(earlier), doc)
    _render.write_fleet(run, compare_to=str(earlier))
    with open(os.path.join(run, _run.SUMMARY_MD), encoding='utf-8') as handle:
        markdown = handle.read()
    html = _viewer(markdown)
    assert '<img' not in html and '<code>' not in html and '<a href' not in html
    assert '&lt;img src=x onerror=alert(1)&gt;|`rm`[x](http://e) &amp;lt;b\\' in html
    # every table keeps its columns: the fleet table has 8 in every row, whatever the names held
    fleet = html.split('<table>')[1]
    for row in fleet.split('<tr>')[1:]:
        assert row.count('<td>') + row.count('<th>') == 8, row


def test_pages_are_self_contained(tmp_path):
    run = str(tmp_path)
    for doc in _lab_docs():
        _run.save(run, doc)
    out = _render.write_fleet(run)
    for path in [out['paths']['html']] + out['paths']['host_pages']:
        with open(path, encoding='utf-8') as handle:
            page = handle.read()
        assert page.startswith('<!DOCTYPE html>\n') and page.rstrip().endswith('</body></html>')
        for external in ('<link', '<script src', 'src="http', "src='http", 'url(http', '@import'):
            assert external not in page, (path, external)
        assert page.count('<svg') >= 4           # feed, series, trace, sweep of at least one drive
