# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The host document (_host.assemble) and the reports made of it (_run, _reporting/_render).

Per-host JSON at once, fleet Markdown, HTML with inline SVG charts, JUnit XML.
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils import _run
from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import _render, _report
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _host, _verdict

from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils.report_cases import drive, source, write_result

RUN = {'id': '20261122T010000Z', 'mode': 'qualify', 'profile': 'quick'}
SETTINGS_MA1 = [{'nst': '/dev/nst0', 'speed_floor_mb_s': 10.0}]


def ma1(src):
    # a tuned Bacula host: Maximum File Size 50 GB (without it, Bacula's default of 1000 MB: a synchronous mark
    # every 17 s at 60 MB/s, over 60 back-hitches an hour, shoe-shines the drive; test_verdict_dp_segment_default)
    return _host.assemble('lab-ma1', [drive('/dev/nst0', 'IBM', 'ULT3580-TD5', '1013000001')], src,
                          [write_result('/dev/nst0')], SETTINGS_MA1, {'software': 'bacula',
                                                                      'block_size_bytes': 262144,
                                                                      'segment_size_mb': 50000},
                          memory_total_mb=1024, run=RUN).to_dict()


def ma2(src):
    return _host.assemble('lab-ma2', [drive('/dev/nst0', 'HP', 'Ultrium 6-SCSI', 'HU1000001')], src,
                          [write_result('/dev/nst0')], [{'nst': '/dev/nst0', 'speed_floor_mb_s': 10.0}],
                          {'software': 'data_protector', 'block_size_bytes': 65536, 'segment_size_mb': 64},
                          memory_total_mb=8192, run=RUN).to_dict()


@pytest.fixture
def run_dir(tmp_path):
    d = tmp_path / 'run'
    _run.save(str(d), ma1(source(mean=60.0, p5=55.0)))     # unthrottled
    _run.save(str(d), ma2(source(mean=6.0, p5=4.0)))       # throttled
    return str(d)


def test_assemble_identifies_drive_and_uses_inventory_floor():
    doc = ma1(source(mean=60.0, p5=55.0))
    assert doc['schema_version'] == 2 and doc['status'] == 'ok'
    entry = doc['drives'][0]
    assert doc['verdicts'][0]['drive'] == entry['id'] == '/dev/nst0'
    assert entry['label'] == 'LTO-5'
    num = doc['verdicts'][0]['numbers']
    assert num['speed_floor_mb_s'] == 10.0 and num['floor_estimated'] is False
    # drive path at 256 KiB (bacula's block) with the pattern closest to the 1.6 ratio (2:1): 45.9
    assert num['drive_path_mb_s'] == 45.9
    assert doc['verdicts'][0]['class'] in (_verdict.SPEED_MATCHED, _verdict.MISCONFIGURED)
    assert entry['write_sweep']['ceiling_block_size'] == 1048576


def test_throttled_source_shoe_shines_and_unthrottled_does_not():
    fast = ma1(source(mean=60.0, p5=55.0))['verdicts'][0]
    slow = ma1(source(mean=6.0, p5=4.0))['verdicts'][0]
    assert slow['class'] == _verdict.SHOE_SHINING and slow['would_shoe_shine']
    assert not fast['would_shoe_shine']


def test_unknown_drive_gets_a_clear_error_not_a_verdict():
    doc = _host.assemble('h', [drive('/dev/nst0', 'ACME', 'TAPE 3000', 'x')], source(60.0, 55.0)).to_dict()
    assert doc['status'] == 'failed'
    assert 'set generation' in doc['drives'][0]['error']
    assert 'tapeops_drives' in doc['error']


def test_inventory_drive_not_discovered_is_reported():
    doc = _host.assemble('h', [], source(60.0, 55.0), [], [{'nst': '/dev/nst1', 'generation': 'LTO-7'}]).to_dict()
    assert doc['status'] == 'failed'
    assert 'discovery did not find it' in doc['drives'][0]['error']


def test_a_hung_drive_has_an_error_and_the_other_drive_its_verdict():
    hung = dict(drive('/dev/nst1', 'IBM', 'ULT3580-TD5', 'h'),
                hung='sg_read_block_limits did not finish within 10 seconds.')
    doc = _host.assemble('h', [drive('/dev/nst0', 'IBM', 'ULT3580-TD5', 's'), hung], source(60.0, 55.0)).to_dict()
    alone = _host.assemble('h', [drive('/dev/nst0', 'IBM', 'ULT3580-TD5', 's')], source(60.0, 55.0)).to_dict()
    assert doc['status'] == 'ok'
    # the hung drive takes no share of the sources' feed: the other drive is judged as if alone
    assert [v['drive'] for v in doc['verdicts']] == ['/dev/nst0']      # none for the hung drive
    assert doc['verdicts'][0]['class'] == alone['verdicts'][0]['class'] == _verdict.SHOE_SHINING
    assert doc['verdicts'][0]['forecast'] == alone['verdicts'][0]['forecast']
    assert doc['drives'][1]['error'] == (
        '/dev/nst1 does not answer: sg_read_block_limits did not finish within 10 seconds. It has no verdict. '
        'Check the drive and its path (dmesg, the drive\'s panel, the HBA), then re-run this host.')


def test_a_write_test_past_its_time_limit_is_a_hung_drive_not_a_source_only_verdict():
    # what async_status returns when async_wrapper's watchdog ended the job (ansible-core 2.19)
    # ('failed' false: the qualify role's wait registers it with failed_when: false)
    timed_out = {'failed': False, 'finished': 1, 'msg': 'Timeout exceeded', 'child_pid': 1234,
                 'ansible_job_id': 'j1', 'item': {'item': {'nst': '/dev/nst0'}}}
    doc = _host.assemble('h', [drive('/dev/nst0', 'IBM', 'ULT3580-TD5', 's')], source(60.0, 55.0),
                         [timed_out]).to_dict()
    assert doc['status'] == 'failed' and doc['verdicts'] == [] and doc['drives'][0]['write_sweep'] is None
    assert doc['drives'][0]['error'] == (
        '/dev/nst0 does not answer: the write test did not end within its time limit (qualify_write_timeout): a '
        'tape operation waits on the drive. It has no verdict. Check the drive and its path (dmesg, the drive\'s '
        'panel, the HBA), then re-run this host.')


def test_no_source_result_is_an_error_per_drive():
    doc = _host.assemble('h', [drive('/dev/nst0', 'IBM', 'ULT3580-TD5', 's')], None).to_dict()
    assert doc['status'] == 'failed'
    assert 'No source read result' in doc['error']


def test_what_if_needs_no_drive_and_no_tape():
    doc = _host.assemble('h', [], source(mean=200.0, p5=180.0, streams=4), target_generation='LTO-9 FH',
                         options={'target_vendor': 'IBM', 'tape_ratio': 1.0}, run={'mode': 'upgrade_check'}).to_dict()
    entry = doc['drives'][0]
    assert entry['id'] == 'what-if LTO-9 FH' and entry['what_if'] is True
    assert doc['verdicts'][0]['drive'] == 'what-if LTO-9 FH' and doc['verdicts'][0]['what_if'] is True
    assert doc['verdicts'][0]['class'] == _verdict.SPEED_MATCHED     # 180 between 177 and 400
    assert entry['write_sweep'] is None


def test_host_json_written_at_once_and_atomically(tmp_path):
    path = _run.save(str(tmp_path), ma1(source(60.0, 55.0)))
    assert path == str(tmp_path / 'hosts' / 'lab-ma1.json')
    data = json.loads(open(path).read())
    assert data['host'] == 'lab-ma1' and data['verdicts'][0]['class']
    assert os.listdir(tmp_path / 'hosts') == ['lab-ma1.json']


def test_load_run_marks_missing_and_corrupt(run_dir):
    with open(os.path.join(run_dir, 'hosts', 'broken.json'), 'w') as handle:
        handle.write('{not json')
    docs = _run.load_run(run_dir, expected_hosts=['lab-ma1', 'lab-ma2', 'lab-ma3'])
    by_host = dict((d['host'], d) for d in docs)
    assert by_host['lab-ma3']['status'] == 'missing'
    assert 'unreachable' in by_host['lab-ma3']['error']
    assert by_host['broken']['status'] == 'failed' and 'Cannot read' in by_host['broken']['error']


def test_write_fleet_all_four_kinds(run_dir):
    out = _render.write_fleet(run_dir, ['lab-ma1', 'lab-ma2', 'lab-ma3'], RUN)
    paths = out['paths']
    assert len(paths['json']) == 2
    for key in ('markdown', 'html', 'junit'):
        assert os.path.getsize(paths[key]) > 200

    md = open(paths['markdown']).read()
    assert md.startswith('# Tape qualification: fleet summary')
    assert '| lab-ma2 | /dev/nst0 (LTO-6) | **SHOE-SHINING** |' in md
    assert '| lab-ma3 | - | **MISSING** |' in md

    suites = ET.parse(paths['junit']).getroot()
    cases = suites.findall('./testsuite/testcase')
    assert [(c.get('classname'), c.get('name')) for c in cases] == [
        ('lab-ma1', '/dev/nst0 (LTO-5)'), ('lab-ma2', '/dev/nst0 (LTO-6)'), ('lab-ma3', 'qualify')]
    assert cases[1].find('failure').get('type') == 'SHOE-SHINING'
    assert cases[2].find('error').get('type') == 'MISSING'
    assert suites.get('tests') == '3' and suites.get('errors') == '1'

    page = open(paths['html']).read()
    assert page.count('<section class="drive"') == 2
    assert page.count('<svg') == 8                        # feed, series, forecast trace, sweep per drive
    # self-contained: nothing is fetched
    for needle in ('src="http', "href=\"http", '<link', '@import', 'url(http'):
        assert needle not in page
    assert '<script' not in page
    assert [f['host'] for f in out['failing']] == ['lab-ma2']


def test_speed_matched_as_a_failing_class_too(run_dir):
    out = _render.write_fleet(run_dir, failing_classes=(_verdict.SHOE_SHINING, _verdict.SPEED_MATCHED,
                                                        _verdict.MISCONFIGURED))
    assert sorted(f['host'] for f in out['failing']) == ['lab-ma1', 'lab-ma2']


def test_missing_run_dir_is_a_clear_error(tmp_path):
    with pytest.raises(_run.RunError, match='run the qualify playbook first'):
        _render.write_fleet(str(tmp_path / 'nope'))


def test_html_without_matplotlib_still_has_tables(run_dir):
    docs = _run.load_run(run_dir)
    page = _render.fleet_html(docs, charts=_report.ReportError('matplotlib is not installed'))
    assert '<table id="fleet">' in page and '<svg' not in page
    assert 'No charts: matplotlib is not installed' in page


def test_preflight_hba_limit_makes_large_block_misconfigured():
    preflight = {'kernel': '6.1.0', 'mtweofi_supported': True,
                 'drives': [{'device': '/dev/nst0', 'hba_max_transfer_bytes': 524288, 'fits': False}]}
    info = drive('/dev/nst0', 'IBM', 'ULT3580-TD5', 's')
    doc = _host.assemble('h', [info], source(60.0, 55.0), [write_result('/dev/nst0')], SETTINGS_MA1,
                         {'software': 'bacula', 'block_size_bytes': 1048576}, preflight=preflight).to_dict()
    verdict = doc['verdicts'][0]
    assert verdict['class'] == _verdict.MISCONFIGURED
    assert verdict['findings'][0]['id'] == 'block_size_over_limit'
    assert verdict['numbers']['block_size_limit_bytes'] == 524288
    # the preflight record: what was given, the fields it did not give null
    assert doc['preflight'] == dict(kernel='6.1.0', mtweofi_supported=True, drives=preflight['drives'], mtweofi_basis=None,
                                    st_driver_version=None, st_driver=None, hba_max_transfer_bytes=None,
                                    block_size_fits=None, error=None)


def test_refused_write_is_a_note_and_the_verdict_rests_on_sources(tmp_path):
    refused = {'failed': True, 'item': {'nst': '/dev/nst0'},
               'msg': 'The loaded cartridge MA1009L5 holds data and is not in allowed_barcodes.'}
    doc = _host.assemble('h', [drive('/dev/nst0', 'IBM', 'ULT3580-TD5', 's')], source(60.0, 55.0), [refused],
                         SETTINGS_MA1, options={'tape_ratio': 1.0}).to_dict()
    entry = doc['drives'][0]
    assert entry['write_sweep'] is None
    assert 'MA1009L5 holds data' in entry['write_note']
    assert doc['verdicts'][0]['numbers']['drive_path_mb_s'] is None
    assert 'not measured' in ' '.join(doc['verdicts'][0]['reasons'])
    _run.save(str(tmp_path), doc)
    md = _render.fleet_markdown(_run.load_run(str(tmp_path)))
    assert '- No write sweep: The loaded cartridge MA1009L5 holds data' in md


def test_scaling_curve_file_sizes_and_ingest_reach_the_report(tmp_path):
    src = source(mean=60.0, p5=55.0)
    src['scaling'] = [{'streams': 1, 'mean_mb_s': 60.0}, {'streams': 2, 'mean_mb_s': 78.0},
                      {'streams': 4, 'mean_mb_s': 94.0}]
    src['file_sizes'] = {'text': '62 % of the files are under 64 KiB: this source is file-count bound',
                         'small_file_bound': True}
    src['ingest'] = {'with': {'mean_mb_s': 41.0}, 'without': {'mean_mb_s': 60.0}, 'target_text': '20 MB/s'}
    doc = ma1(src)
    verdict = doc['verdicts'][0]
    assert 'small_file_bound' in [f['id'] for f in verdict['findings']]
    assert any('competing ingest (20 MB/s) the sources gave 41.0 MB/s, against 60.0 MB/s' in r
               for r in verdict['reasons'])
    page = _render.fleet_html([doc])
    assert 'data-chart="scaling"' in page and 'Source rate by number of streams' in page
