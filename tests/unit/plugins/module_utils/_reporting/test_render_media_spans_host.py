# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The upgrade check's media section: host JSON, Markdown, HTML and its chart.

The cartridges come from real mtx captures (tests/unit/fixtures/mtx/, sources in their headers),
classified by _media as media_inventory does on a host.
"""

from __future__ import annotations

import json

from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _drive_model, _host, _media

from ansible_collections.tapeops.qualify.plugins.module_utils import _records, _run
from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import _render, _report

from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _mtx

from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._reporting.test_render_chromium import chromium
from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._tape_fixtures import fixture
from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils.report_cases import source

RUN = {'id': 'upgrade-20261123T230000Z', 'mode': 'upgrade_check', 'profile': 'quick', 'target_generation': 'LTO-9 FH'}


def _inventory_result(name, target='LTO-9 FH', sg='/dev/sg5', **kwargs):
    """A media_inventory result as the module returns it, from a real capture."""
    status = _mtx.parse_mtx_status(fixture('mtx', name))
    libraries = _media.inventory_libraries([{'sg': sg, 'vendor': 'V', 'product': 'P', 'status': status,
                                             'error': status['error']}])
    summary = _media.summarize(libraries, _media.target_spec(target), **kwargs)
    return {'changed': False, 'libraries': libraries, 'summary': summary, 'warnings_seen': []}


def _doc(host, media, src=None):
    return _host.assemble(host, [], src if src is not None else source(mean=200.0, p5=180.0, streams=4),
                          target_generation='LTO-9 FH', options={'target_vendor': 'IBM', 'tape_ratio': 1.0},
                          run=RUN, media=media).to_dict()


def test_media_summary_lands_in_the_host_document_and_its_json(tmp_path):
    doc = _doc('ma-tandberg', _inventory_result('mtx_status__TANDBERG-StorageLoader-1drive-7slot-LTO5__1.txt'))
    media = doc['media']
    assert media['status'] == 'ok' and media['target']['label'] == 'LTO-9 FH'
    assert media['totals']['counts']['stranded'] == 7
    assert media['libraries'][0]['cartridges'] == 7          # a count: the cartridge list stays in the module result
    path = _run.save(str(tmp_path), doc)
    back = json.load(open(path))
    assert back['media']['migration']['hours'] == media['migration']['hours'] > 0
    assert back['media']['keep_old_drive_libraries'] == ['/dev/sg5']


def media_section(media):
    """The host document's media section of a media_inventory result (None when the run read no media)."""
    record = _records.Media.from_result(media)
    return record.to_dict() if record is not None else None


def test_failed_or_skipped_inventory_is_recorded_not_dropped():
    assert media_section({'failed': True, 'msg': 'mtx: cannot open'}) == {
        'status': 'failed', 'error': 'mtx: cannot open'}
    assert media_section({'skipped': True, 'skip_reason': 'Conditional result was False'})['status'] == \
        'skipped'
    assert media_section(None) is None
    # failed_when: false keeps the play going: failed is False, the message is kept
    assert media_section({'failed': False, 'failed_when_result': False, 'msg': 'target: Cannot read'}) == {
        'status': 'failed', 'error': 'target: Cannot read'}
    assert media_section({'changed': False, 'libraries': [], 'summary': None})['status'] == 'failed'
    doc = _host.host_document('h', _run.STATUS_FAILED, error='source read failed',
                              media=media_section({'failed': True, 'msg': 'boom'})).to_dict()
    assert doc['media']['error'] == 'boom'


def test_markdown_and_html_show_counts_stranded_slots_migration_and_cleaning_flags(tmp_path):
    run_dir = str(tmp_path)
    _run.save(run_dir, _doc('ma-tandberg', _inventory_result(
        'mtx_status__TANDBERG-StorageLoader-1drive-7slot-LTO5__1.txt', drives_kept=2)))
    _run.save(run_dir, _doc('ma-lto9', _inventory_result('mtx_status__pyarchive-1drive-24slot-LTO9-HH9__2.txt',
                                                         sg='/dev/sch0')))
    _run.save(run_dir, _doc('ma-nomedia', None))
    out = _render.write_fleet(run_dir, ['ma-tandberg', 'ma-lto9', 'ma-nomedia'], RUN)
    md = open(out['paths']['markdown']).read()
    assert '## Media against the target drive' in md
    # Tandberg: 0 written, 0 read-only, 7 stranded (1 L4 + 6 L5 = 9.8 TB native), migration with 2 drives
    tandberg = out['docs'][[d['host'] for d in out['docs']].index('ma-tandberg')]['media']
    hours = tandberg['libraries'][0]['migration']['hours']
    assert '| ma-tandberg | /dev/sg5 | 0 | 0 | 7 | 0 | 0 | 9.8 | %.1f (2) | yes |' % hours in md
    assert '| ma-lto9 | /dev/sch0 | 23 | 0 | 0 | 0 | 1 | 0.0 | - | no |' in md
    assert '000711L4 (L4, slot 1)' in md and 'A00008L5 (L5, slot 2)' in md
    assert 'CLN670L1 (slot 2): CLN...L1' in md
    assert '- /dev/sch0: 24 cartridges, nothing stranded or read-only: the LTO-9 FH writes every one' in md
    assert 'every cartridge 100 % full' in md and '2 old drives kept' in md
    media_md = md.split('## Media against the target drive')[1].split('\n## ')[0]
    assert 'ma-tandberg' in media_md and 'ma-nomedia' not in media_md

    page = open(out['paths']['html']).read()
    section = page.split('<section class="media" id="media">')[1]
    assert section.count('<tr data-host=') == 2
    assert '<figure class="chart" data-chart="media"><svg' in section
    assert 'Media by generation per library' in section
    assert 'class="stranded">/dev/sg5, stranded: 000711L4 (L4, slot 1)' in section
    assert 'class="cleaning">/dev/sch0, cleaning CLN670L1' in section
    assert '<script' not in page


def test_html_without_matplotlib_keeps_the_media_table(tmp_path):
    doc = _doc('h', _inventory_result('mtx_status__mhVTL-STK-L700-4drive-43slot-LTO4-LTO5__1.txt'))
    page = _render.fleet_html([doc], RUN, charts=_report.ReportError('matplotlib is not installed'))
    assert '<table id="media-table">' in page and 'data-chart="media"' not in page


def test_no_media_section_when_no_host_read_media(tmp_path):
    doc = _doc('h', None)
    assert doc['media'] is None
    assert 'Media against' not in _render.fleet_markdown([doc], RUN)
    assert 'id="media"' not in _render.fleet_html([doc], RUN, charts=_report.ReportError('x'))


def test_media_chart_orders_media_and_colours_by_class():
    lib = _media.summarize(_media.inventory_libraries([{'sg': '/dev/sg1', 'status': _mtx.parse_mtx_status(
        fixture('mtx', 'mtx_status__TANDBERG-StorageLoader-1drive-7slot-LTO5__1.txt'))}]),
        _drive_model.lookup(6))['libraries'][0]
    assert _render._media_mix(lib) == [('L4', 1, 'read'), ('L5', 6, 'write')]


def test_chromium_paints_the_media_chart(tmp_path):
    run_dir = str(tmp_path / 'run')
    _run.save(run_dir, _doc('ma-tandberg', _inventory_result(
        'mtx_status__TANDBERG-StorageLoader-1drive-7slot-LTO5__1.txt')))
    page = _render.write_fleet(run_dir, ['ma-tandberg'], RUN)['paths']['html']
    proc = chromium(tmp_path, '--dump-dom', 'file://%s' % page)
    assert proc.returncode == 0, proc.stderr[-2000:]
    section = proc.stdout.split('<section class="media" id="media">')[1]
    svg = section.split('<figure class="chart" data-chart="media">')[1].split('</svg>')[0]
    # the bars with their media IDs, the title and the legend as text
    assert '<g class="axes"' in svg and 'Media by generation per library' in svg
    assert '>L4<' in svg and '>L5<' in svg and '>stranded<' in svg and '>target writes<' not in svg
