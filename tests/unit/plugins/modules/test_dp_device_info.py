# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""dp_device_info, run as Ansible runs it (a child process with its arguments as JSON): the drive is
identified by the collection's one drive resolver, as discovery and the verdict identify it.

The discovered drives are recorded real outputs (tests/unit/fixtures, source headers there) read by the
collection's own parsers: INQUIRY from lsscsi, the loaded cartridge from mt status."""

from __future__ import annotations

import json
import os

from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _mt
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _scsi_inquiry

from module_harness import run_module_process

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures')


def fixture(tool, name):
    with open(os.path.join(FIXTURES, tool, name), encoding='utf-8') as handle:
        return handle.read()


def discovered(lsscsi_name, mt_name, **extra):
    """A tape_drive_info drives[] entry's identifying fields from an lsscsi and an mt status capture."""
    tape = [d for d in _scsi_inquiry.parse_lsscsi(fixture('lsscsi', lsscsi_name).replace('**', ''))
            if d['type'] == 'tape'][0]
    status = _mt.parse_mt_status(fixture('mt', mt_name))
    entry = {'nst': '/dev/nst0', 'vendor': tape['vendor'], 'product': tape['model'], 'revision': tape['revision'],
             'density_code': '0x%02x' % status['density_code']}
    entry.update(extra)
    return entry


# HP Ultrium 6-SCSI (LTFS issue 354) with the LTO-5 cartridge of mt-st issue 10 (density 0x58)
HP6_WITH_LTO5 = discovered('lsscsi_g_partial__HP-Ultrium6-338D-353D_IBM-ULTRIUM-HH7-lin_tape__1.txt',
                           'mt_status_mtst__LTO6-drive-LTO5-tape-jonasstein__1.txt', hba_max_transfer_bytes=524288)
# IBM ULTRIUM-HH9 sold by Dell (LTFS issue 408) with an IBM ULT3580-HH9's mt status (mt-st issue 27, density 0x60)
HH9 = discovered('lsscsi_g__IBM-ULTRIUM-HH9-N9B1-DellLTO9__1.txt', 'mt_status_mtst__IBM-ULT3580-HH9-N9B1-lin_tape__2.txt')


def run_module(args):
    return run_module_process('dp_device_info', args)


def test_an_lto6_drive_with_an_lto5_tape_is_sized_as_an_lto6():
    rc, result = run_module({'drives': [{'name': '/dev/nst0', 'discovered': HP6_WITH_LTO5}]})
    assert rc == 0 and result['changed'] is False
    device = result['devices'][0]
    # LTO-6: 2500 GB native, segment = 2500 GB / 50; the discovered HBA path (512 KiB) caps the block
    assert {k: device[k] for k in ('name', 'drive_label', 'native_capacity_gb', 'segment_size_mb', 'block_size_kb',
                                   'block_size_limited_by')} == {
        'name': '/dev/nst0', 'drive_label': 'LTO-6', 'native_capacity_gb': 2500, 'segment_size_mb': 50000,
        'block_size_kb': 512, 'block_size_limited_by': 'hba'}
    assert (device['identity']['source'], device['identity']['generation']) == ('inquiry', 6)
    assert device['identity']['medium']['generation'] == 5


def test_the_inventory_entry_reaches_dp_device_info_through_the_resolver():
    rc, result = run_module({'drives': [
        {'name': 'drive-a', 'discovered': HP6_WITH_LTO5, 'model': {'native_capacity_gb': 2400}, 'interface': 'SAS'},
        {'name': 'drive-b', 'discovered': HH9, 'generation': 'LTO-9'},
    ]})
    assert rc == 0, result
    a, b = result['devices']
    assert (a['native_capacity_gb'], a['segment_size_mb']) == (2400, 48000)
    assert a['identity']['inventory'] == {'interface': 'SAS', 'model': {'native_capacity_gb': 2400}}
    # the inventory's generation keeps INQUIRY's half height (same generation): LTO-9 HH, 18 TB
    assert (b['drive_label'], b['native_capacity_gb'], b['identity']['source'], b['identity']['form_factor']) == (
        'LTO-9 HH', 18000, 'inventory', 'HH')


def test_a_capacity_alone_still_works_and_nothing_at_all_says_what_to_give():
    rc, result = run_module({'drives': [{'name': 'x', 'native_capacity_gb': 9000}]})
    assert rc == 0 and result['devices'][0]['segment_size_mb'] == 180000
    assert result['devices'][0]['drive_label'] is None
    rc, result = run_module({'drives': [{'name': 'y'}]})
    assert rc == 1 and result['failed'] is True
    assert result['msg'].startswith('Drive y: give its generation (for example LTO-6), its tape_drive_info entry')
    assert 'Traceback' not in json.dumps(result)
    rc, result = run_module({'drives': [{'name': 'z', 'generation': 'LTO-6', 'model': {'buffer_gb': 1}}]})
    assert rc == 1 and "Unknown drive model field 'buffer_gb'" in result['msg'] and result['msg'].startswith('Drive z:')
