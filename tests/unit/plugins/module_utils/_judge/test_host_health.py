# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A drive's health in the host document (_host.assemble, _health.of_drive) and in its verdict.

The drive's log pages and its cartridge's memory are real captures, as tape_drive_info returns them
(``_tape_discovery.read_log_pages`` decodes each page as sg_logs printed it):

- 0x02, 0x03, 0x0c, 0x14, 0x17, 0x1b: HP Ultrium 6-SCSI 35GD with a FUJIFILM LTO-6 cartridge (mikmorg/tapectl's
  fixtures, tests/unit/fixtures/sg_logs/*HP-Ultrium6-SCSI-35GD-FUJI-LTO6-loaded*);
- 0x2e: the IBM ULT3580-TDA LTO-10's TapeAlert page, as captured (all clear) and with one flag set (``derived``: no
  published capture shows a set flag);
- the cartridge's memory: that HP drive's cartridge EW7VWMVKF6 (sg_read_attr, mikmorg/tapectl).

The drive, sources and write sweep are report_cases' (an LTO-5 whose sweep takes at most 50 MB/s, below the 140 MB/s
the drive takes); a fast sweep is the same at eight times the rates.
"""

from __future__ import annotations

import copy

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils import _records
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _health, _host, _verdict
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _sg_logs, _sg_read_attr

from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._tape_fixtures import derived, read
from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils.report_cases import (
    drive, source, write_result)

HP6 = 'sg_logs/sg_logs_p0x%s__HP-Ultrium6-SCSI-35GD-FUJI-LTO6-loaded__1.txt'
IBM10_TA = 'sg_logs/sg_logs_p0x2e__IBM-ULT3580-TDA-T3S0-LTO10__1.txt'
MAM = 'sg_read_attr/sg_read_attr__HP-Ultrium6-SCSI-35GD-FUJI-LTO6-EW7VWMVKF6__1.txt'
SETTINGS = [{'nst': '/dev/nst0', 'speed_floor_mb_s': 10.0}]
BACKUP = {'software': 'bacula', 'block_size_bytes': 262144, 'segment_size_mb': 50000}


def log_pages(flag=None):
    """``read_log_pages`` output of the real pages, with TapeAlert ``flag`` (its name) set where given."""
    tape_alert = read(IBM10_TA)
    if flag:
        tape_alert = derived(tape_alert, '  %s: 0\n' % flag, '  %s: 1\n' % flag)
    texts = dict((code, read(HP6 % code)) for code in ('02', '03', '0c', '14', '17', '1b'))
    texts['2e'] = tape_alert
    pages = dict(('0x' + code, _sg_logs.decode_page(int(code, 16), text)) for code, text in texts.items())
    return {'supported': sorted(int(c, 16) for c in pages), 'unsupported_reason': None, 'pages': pages,
            'errors': {}, 'warnings': []}


def memory():
    return _records.CartridgeMemory.from_parse(_sg_read_attr.parse(read(MAM))).to_dict()


def fast(result):
    out = copy.deepcopy(result)
    for step in out['sweep']:
        if step['mb_s']:
            step['mb_s'] = round(step['mb_s'] * 8, 1)
    out['best']['mb_s'] *= 8
    return out


def assemble(pages=None, cartridge=None, reason=None, sweep=None):
    info = drive('/dev/nst0', 'IBM', 'ULT3580-TD5', '1013000001')
    if pages is not None:
        info['log_pages'] = pages
    if cartridge is not None:
        info['cartridge_memory'] = cartridge
    if reason is not None:
        info['cartridge_memory_reason'] = reason
    return _host.assemble('lab-ma1', [info], source(mean=60.0, p5=55.0), [sweep or write_result('/dev/nst0')],
                          SETTINGS, BACKUP, memory_total_mb=8192)


def test_a_drive_whose_health_reads_clear_is_ok_and_its_verdict_is_the_one_without_health():
    doc = assemble(log_pages(), memory())
    health = doc.drives[0].health
    assert health.status == 'OK' and health.findings == []
    # the cartridge's memory was read: its loads (1) against an LTO-6's 20,000, from the MAM's density code
    assert health.counters['cartridge_life'] == {'loads': 1, 'loads_from': 'mam', 'generation': 6,
                                                 'generation_from': 'mam:medium_density_code'}
    assert 'cartridge_memory' not in health.unknown
    without = assemble()
    assert without.drives[0].health.status == 'UNKNOWN'
    # health that finds nothing changes nothing of the verdict
    mine, theirs = doc.verdicts[0].to_dict(), without.verdicts[0].to_dict()
    assert mine == theirs


def test_nothing_read_is_unknown_with_why_and_no_counters():
    doc = assemble({'supported': [], 'unsupported_reason': 'Invalid opcode', 'pages': {}, 'errors': {},
                    'warnings': []}, reason='no cartridge loaded')
    assert doc.drives[0].health.to_dict() == {
        'status': 'UNKNOWN', 'findings': [], 'counters': {}, 'thresholds': {},
        'unknown': {'cartridge_memory': 'no cartridge loaded', 'log_pages': 'Invalid opcode'}}


@pytest.mark.parametrize('flag,status,fix', [
    ('Cleaning required', 'CLEAN', 'clean_drive'),
    ('Media life', 'DEGRADED', 'retire_cartridge'),
    ('Hardware A', 'FAILING', 'call_service'),
])
def test_a_slow_sweep_on_a_drive_with_health_findings_puts_the_health_fix_first(flag, status, fix):
    clear = assemble(log_pages(), memory()).verdicts[0]
    doc = assemble(log_pages(flag), memory())
    health = doc.drives[0].health
    assert health.status == status and health.findings[0].fix == fix
    verdict = doc.verdicts[0]
    # the sweep took at most 50 MB/s, the LTO-5 takes 140: slower than its model, so health is the likely cause
    assert clear.fixes[0].id == 'drive_path'
    assert [f.id for f in verdict.fixes] == [_verdict.HEALTH_FIX + fix] + [f.id for f in clear.fixes]
    assert [f.rank for f in verdict.fixes] == list(range(1, len(verdict.fixes) + 1))
    first = verdict.fixes[0]
    assert first.setting == 'the drive and its cartridge, not a setting'
    assert 'health is the likely cause' in first.why and flag in first.why
    assert verdict.summary.endswith('First fix: %s.' % first.title)
    (cause,) = [f for f in verdict.findings if f.id == 'health_likely_cause']
    assert cause.severity == 'warning' and status in cause.text
    # the sweep's best rate at the pattern nearest the sources' (2:1) against the LTO-5's 140 MB/s times 2.0
    assert 'took at most 45.9 MB/s of 2.0:1 data, below the 280 MB/s' in cause.text
    # the class is the forecast's: health changes the order of the fixes, not the class
    assert verdict.class_ == clear.class_


def test_a_sweep_at_the_drives_speed_keeps_health_out_of_the_verdict():
    doc = assemble(log_pages('Cleaning required'), memory(), sweep=fast(write_result('/dev/nst0')))
    assert doc.drives[0].health.status == 'CLEAN'
    verdict = doc.verdicts[0]
    assert not any(f.id.startswith(_verdict.HEALTH_FIX) for f in verdict.fixes)
    assert not any(f.id == 'health_likely_cause' for f in verdict.findings)


def test_a_cartridge_memory_of_no_readable_form_is_left_out_not_a_failure():
    info = _records.DriveIdentity.from_dict(dict(drive('/dev/nst0', 'IBM', 'ULT3580-TD5', '1'),
                                                 log_pages=log_pages()))
    info.cartridge_memory = 42
    health = _health.of_drive(info)
    assert health.status == 'OK' and health.unknown['cartridge_memory'] == 'not_readable'


def test_the_document_round_trips_with_its_health():
    doc = assemble(log_pages('Cleaning required'), memory())
    data = doc.to_dict()
    assert data['drives'][0]['health']['status'] == 'CLEAN'
    assert data['drives'][0]['identity']['cartridge_memory']['medium_serial'] == 'EW7VWMVKF6'
    assert _records.HostReport.load(data).to_dict() == data
