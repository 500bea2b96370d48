# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fleet index and the host pages, on the host documents of a real lab qualify run.

tests/unit/fixtures/lab_runs/20261123-quick/ holds the three host JSONs of a
qualify run on the lab (lab-ma1 STREAMING, lab-ma2 SPEED-MATCHED, lab-ma3
SHOE-SHINING); a fleet is made of copies of them under new host names. The
index is opened in a real headless Chromium: its filter runs there.
"""

from __future__ import annotations

import copy
import os
import re

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils import _run
from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import _charts, _render, _report, _report_index
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _host

from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._reporting.test_render_chromium import chromium

FIXTURE = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'fixtures', 'lab_runs', '20261123-quick')


def fleet(count):
    templates = []
    for host in ('lab-ma1', 'lab-ma2', 'lab-ma3'):
        templates.append(_run.load(os.path.join(FIXTURE, host + '.json')))
    docs = []
    for index in range(count):
        doc = copy.deepcopy(templates[index % 3])
        doc['host'] = 'ma%03d-%s' % (index + 1, doc['host'])
        docs.append(doc)
    return docs


@pytest.fixture(scope='module')
def big_run(tmp_path_factory):
    """A fleet above the inline limit (made small by lowering the limit: charts take time)."""
    run_dir = tmp_path_factory.mktemp('fleet')
    docs = fleet(7)
    for index, doc in enumerate(docs):
        # the inventory groups the qualify role records (group_names): two sites, one common group
        doc.setdefault('facts', {})['groups'] = ['media_agents', 'site-paris' if index % 2 == 0 else 'site-lyon']
        _run.save(str(run_dir), doc)
    saved = _report_index.INLINE_MAX_HOSTS
    _report_index.INLINE_MAX_HOSTS = 5
    try:
        out = _render.write_fleet(str(run_dir), [d['host'] for d in docs] + ['ma999-gone'])
    finally:
        _report_index.INLINE_MAX_HOSTS = saved
    return {'dir': run_dir, 'out': out, 'docs': docs}


def test_above_the_limit_report_html_is_an_index_with_links_to_host_pages(big_run):
    run_dir = big_run['dir']
    page = (run_dir / 'report.html').read_text()
    assert '<table id="fleet-index">' in page
    assert '<section class="drive"' not in page and '<svg' not in page     # charts live on the host pages
    rows = re.findall(r'<tr data-class="([A-Z -]+)"><td data-v="([^"]+)"><a href="([^"]+)">', page)
    assert len(rows) == 8                           # 7 drives and the host without a result
    for cls, host, link in rows:
        if host == 'ma999-gone':
            assert cls == 'MISSING' and link == '#'
            continue
        assert link == 'hosts/%s.html' % host and (run_dir / link).is_file()
    classes = dict((host, cls) for cls, host, _link in rows)
    assert classes['ma001-lab-ma1'] == 'STREAMING' and classes['ma003-lab-ma3'] == 'SHOE-SHINING'
    assert '<p id="totals"><b>8 host(s), 8 drive row(s):</b>' in page
    assert re.search(r'<tr><td>LTO-6</td><td>2</td>', page)       # classes by generation: two LTO-6 drives
    assert len(big_run['out']['paths']['host_pages']) == 7


def test_the_index_counts_classes_by_inventory_group(big_run):
    page = (big_run['dir'] / 'report.html').read_text()
    groups = re.findall(r'<tr><td><a href="#q=([^"]+)">([^<]+)</a></td><td>(\d+)</td><td>.*?<small>([^<]+)</small>',
                        page)
    # ma001, 003, 005, 007 in site-paris (lab-ma1, lab-ma3, lab-ma2, lab-ma1 copies), ma002, 004, 006 in
    # site-lyon; the host without a result (ma999-gone) has no groups
    assert groups == [
        ('media_agents', 'media_agents', '7', 'SHOE-SHINING 2, SPEED-MATCHED 2, STREAMING 3'),
        ('site-lyon', 'site-lyon', '3', 'SHOE-SHINING 1, SPEED-MATCHED 1, STREAMING 1'),
        ('site-paris', 'site-paris', '4', 'SHOE-SHINING 1, SPEED-MATCHED 1, STREAMING 2'),
    ]
    assert '<td data-v="media_agents site-lyon">media_agents site-lyon</td>' in page


def test_one_group_for_every_host_draws_no_group_chart():
    items = [{'class': 'STREAMING', 'groups': ['media_agents']}, {'class': 'SHOE-SHINING', 'groups': ['media_agents']}]
    assert _report_index.group_rows(items) == ([], [])
    many = [{'class': 'STREAMING', 'groups': ['g%02d' % n]} for n in range(5)]
    rows, left = _report_index.group_rows(many + [{'class': 'STREAMING', 'groups': ['g03']}], most=2)
    assert [r['label'] for r in rows] == ['g00', 'g03'] and left == ['g01', 'g02', 'g04']


def test_a_host_page_has_its_drives_and_charts_and_links_back(big_run):
    page = (big_run['dir'] / 'hosts' / 'ma003-lab-ma3.html').read_text()
    assert '<h1>Tape qualification report: ma003-lab-ma3</h1>' in page
    assert '<a href="../report.html">Fleet report</a>' in page
    assert page.count('<section class="drive"') == 1 and 'data-class="SHOE-SHINING"' in page
    assert '<figure class="chart" data-chart="trace"><svg' in page


def test_chromium_opens_a_host_page_and_its_links_lead_back_and_to_its_drive(big_run, tmp_path):
    page = big_run['dir'] / 'hosts' / 'ma002-lab-ma2.html'
    proc = chromium(tmp_path, '--dump-dom', 'file://%s' % page)
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = proc.stdout
    assert '<h1>Tape qualification report: ma002-lab-ma2</h1>' in dom
    assert dom.count('<section class="drive"') == 1 and 'data-class="SPEED-MATCHED"' in dom
    assert dom.count('<svg') >= 2                      # the host's charts are drawn on its page
    links = re.findall(r'<a href="([^"#]+)"', dom)
    assert '../report.html' in links
    for link in links:
        if '://' not in link:
            assert (page.parent / link).resolve().is_file(), link


def test_the_index_stays_small_per_row(big_run):
    size = os.path.getsize(str(big_run['dir'] / 'report.html'))
    # 3 MB at 1,000 hosts is the target: well under 3 KB a row
    assert size < 8 * 1500 + 8000, size


def test_a_small_fleet_keeps_one_page_and_links_the_host_pages(tmp_path):
    docs = fleet(3)
    for doc in docs:
        _run.save(str(tmp_path), doc)
    _render.write_fleet(str(tmp_path), [d['host'] for d in docs])
    page = (tmp_path / 'report.html').read_text()
    assert page.count('<section class="drive"') == 3
    assert '<p id="host-pages"><small>Host pages: <a href="hosts/ma001-lab-ma1.html">ma001-lab-ma1</a>' in page
    assert (tmp_path / 'hosts' / 'ma002-lab-ma2.html').is_file()


def test_chromium_filters_the_index_by_class_and_text(big_run, tmp_path):
    index = big_run['dir'] / 'report.html'
    proc = chromium(tmp_path, '--dump-dom', 'file://%s#class=SHOE-SHINING' % index)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = re.findall(r'<tr data-class="([A-Z -]+)"( hidden="")?>', proc.stdout)
    assert len(rows) == 8
    visible = [cls for cls, hidden in rows if not hidden]
    assert visible == ['SHOE-SHINING', 'SHOE-SHINING']
    assert '<span id="shown">2</span>' in proc.stdout
    proc = chromium(tmp_path, '--dump-dom', 'file://%s#q=ma00' % index)
    rows = re.findall(r'<tr data-class="[A-Z -]+"( hidden="")?><td data-v="([^"]+)">', proc.stdout)
    assert sorted(host for hidden, host in rows if not hidden) == ['ma%03d-lab-ma%d' % (i, (i - 1) % 3 + 1)
                                                                   for i in range(1, 8)]
    # a group's link in "Classes by inventory group" sets the same filter
    proc = chromium(tmp_path, '--dump-dom', 'file://%s#q=site-lyon' % index)
    rows = re.findall(r'<tr data-class="[A-Z -]+"( hidden="")?><td data-v="([^"]+)">', proc.stdout)
    assert sorted(host for hidden, host in rows if not hidden) == ['ma002-lab-ma2', 'ma004-lab-ma1', 'ma006-lab-ma3']


def test_a_host_lost_after_its_source_read_keeps_it_in_the_reports(tmp_path):
    """The qualify play writes the source read as soon as it is done (status failed, 'the run stopped
    after the source read test'); a host lost later in its run shows it, not a bare failure."""
    recorded = fleet(2)
    lost = _host.host_document(recorded[1]['host'], _run.STATUS_FAILED, source=recorded[1]['source'],
                               error='The run stopped after the source read test: the host was lost.').to_dict()
    _run.save(str(tmp_path), recorded[0])
    _run.save(str(tmp_path), lost)
    out = _render.write_fleet(str(tmp_path), [d['host'] for d in recorded])
    row = [r for r in _report.rows(out['docs']) if r['host'] == lost['host']][0]
    assert row['status'] == 'failed'
    aggregate = recorded[1]['source']['aggregate']
    assert 'Measured before: the sources delivered %.1f MB/s on average' % aggregate['mean_mb_s'] in row['error']
    assert 'Measured before' in (tmp_path / 'summary.md').read_text()
    # a failure with nothing measured says only what failed
    bare = _host.host_document('ma9', _run.STATUS_FAILED, error='boom').to_dict()
    assert _report.rows([bare])[0]['error'] == 'boom'


def _pages(run_dir, docs, workers, monkeypatch):
    """write_host_pages with ``workers``: {host: the page's text}, and how many processes were forked."""
    forks = []
    real_fork = os.fork

    def fork():
        forks.append(1)
        return real_fork()
    monkeypatch.setattr(os, 'fork', fork)
    links = _render.write_host_pages(str(run_dir), docs, {'id': 'bench', 'mode': 'qualify'}, _charts.Charts(),
                                     workers=workers)
    pages = {}
    for host, link in links.items():
        with open(os.path.join(str(run_dir), link), encoding='utf-8') as handle:
            # (each page says when it was written)
            pages[host] = re.sub(r'generated [0-9T:+-]+', 'generated', handle.read())
    return pages, len(forks)


def test_host_pages_written_by_several_processes_are_the_pages_one_writes(tmp_path, monkeypatch):
    monkeypatch.setattr(_render, 'PARALLEL_MIN_PAGES', 2)
    docs = fleet(6)
    alone, forks_alone = _pages(tmp_path / 'one', docs, 1, monkeypatch)
    shared, forks_shared = _pages(tmp_path / 'three', docs, 3, monkeypatch)
    assert (forks_alone, forks_shared) == (0, 2)
    assert sorted(shared) == sorted(d['host'] for d in docs) and shared == alone


def test_a_share_whose_process_fails_is_written_by_the_parent(tmp_path, monkeypatch):
    monkeypatch.setattr(_render, 'PARALLEL_MIN_PAGES', 2)
    parent = os.getpid()
    real_write = _run.atomic_write

    def write_in_parent_only(path, text):
        if os.getpid() != parent:
            raise OSError(28, 'No space left on device', path)
        return real_write(path, text)
    monkeypatch.setattr(_run, 'atomic_write', write_in_parent_only)
    docs = fleet(4)
    shared, forks = _pages(tmp_path / 'two', docs, 2, monkeypatch)
    monkeypatch.setattr(_run, 'atomic_write', real_write)
    alone, _forks = _pages(tmp_path / 'one', docs, 1, monkeypatch)
    assert forks == 1 and shared == alone and len(shared) == 4


def test_fewer_pages_than_a_process_is_worth_are_written_here(tmp_path, monkeypatch):
    pages, forks = _pages(tmp_path, fleet(3), 8, monkeypatch)
    assert forks == 0 and len(pages) == 3
