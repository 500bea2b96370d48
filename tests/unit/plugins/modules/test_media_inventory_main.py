# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""media_inventory's main() in this process (module_harness.run_module), on recorded tool output.

The changer is the TANDBERG StorageLoader of tests/unit/fixtures/mtx/
mtx_status__TANDBERG-StorageLoader-1drive-7slot-LTO5__1.txt (source in its header), printed by a recorded
``mtx`` on PATH (module_harness.recorded_tools) so the module runs its real runner and parser. Discovery finds
the changer in a sysfs tree laid out as the kernel lays out a medium changer (type 8, its scsi_generic node);
its READ ELEMENT STATUS (``sg_raw``) is not recorded for that changer, so ``sg_raw`` here exits non-zero with no
output, which discovery takes as "no element descriptors" (the changer's serials stay unknown).
"""

from __future__ import annotations

import dataclasses

from ansible_collections.tapeops.qualify.plugins.module_utils import _records
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_discovery
from ansible_collections.tapeops.qualify.plugins.modules import media_inventory

from module_harness import recorded_tools, run_module

TANDBERG = 'mtx/mtx_status__TANDBERG-StorageLoader-1drive-7slot-LTO5__1.txt'
MEDIA_FIELDS = sorted(f.name for f in dataclasses.fields(_records.Media))


def changer_sysfs(root):
    """/sys/bus/scsi/devices/<hctl> of one medium changer (SCSI type 8) with its sg node sg5."""
    device = root / 'bus' / 'scsi' / 'devices' / '5:0:0:1'
    (device / 'scsi_generic' / 'sg5').mkdir(parents=True)
    for name, value in (('type', '8'), ('vendor', 'TANDBERG'), ('model', 'StorageLoader'), ('rev', '0495')):
        (device / name).write_text(value + '\n')
    return str(root)


def with_changer(tmp_path, monkeypatch):
    sys_root = changer_sysfs(tmp_path / 'sys')
    bindir = recorded_tools(tmp_path, monkeypatch, {'mtx': TANDBERG})
    failing = bindir / 'sg_raw'
    failing.write_text('#!/bin/sh\nexit 99\n')
    failing.chmod(0o755)
    real = _tape_discovery.discover
    monkeypatch.setattr(media_inventory, 'discover', lambda **kw: real(sys_root=sys_root, **kw))


def test_the_changers_cartridges_judged_against_lto9_return_the_media_record(tmp_path, monkeypatch):
    with_changer(tmp_path, monkeypatch)
    failed, result = run_module(media_inventory.main, {'target_generation': 'LTO-9 FH'}, monkeypatch)
    assert failed is False and result['changed'] is False
    [library] = result['libraries']
    assert library['id'] == '/dev/sg5' and library['source'] == 'mtx status'
    assert [c['barcode'] for c in library['cartridges']] == [
        '000711L4', 'A00008L5', 'A00034L5', 'A00014L5', 'A00036L5', 'A00025L5', '000218L5']
    summary = result['summary']
    # the module exits with its record: exactly the record's fields, read back unchanged by the controller
    assert sorted(summary) == MEDIA_FIELDS
    assert summary['status'] == 'ok' and summary['error'] is None
    assert _records.Media.from_result(result).to_dict() == summary
    assert _records.Media.from_result(dict(result, invocation={'module_args': {}})).to_dict() == summary
    # LTO-9 writes L8/L9 and reads only L8: the L4 and the six L5 cartridges are stranded
    assert summary['target']['label'] == 'LTO-9 FH'
    assert summary['totals']['cartridges'] == 7 and summary['totals']['counts']['stranded'] == 7
    assert summary['keep_old_drive_libraries'] == ['/dev/sg5']
    assert summary['parameters'] == {'drives_kept': 1, 'fill_fraction': 1.0}


def test_without_a_target_only_the_inventory_is_returned(tmp_path, monkeypatch):
    with_changer(tmp_path, monkeypatch)
    failed, result = run_module(media_inventory.main, {}, monkeypatch)
    assert failed is False and result['summary'] is None
    assert [c['barcode'] for c in result['libraries'][0]['cartridges']][:2] == ['000711L4', 'A00008L5']
    assert _records.Media.from_result(result).to_dict() == {
        'status': 'failed', 'error': 'media_inventory returned no classification (no target generation?)'}


def test_given_media_only_without_reading_a_changer(monkeypatch):
    def no_discovery(**kwargs):
        raise AssertionError('changers=false must not read the changers')
    monkeypatch.setattr(media_inventory, 'discover', no_discovery)
    args = {'changers': False, 'target_generation': 'LTO-9 FH', 'drives_kept': 2,
            'media': ['VAULT1L8', {'barcode': 'OFFSITE01', 'generation': 'LTO-5', 'location': 'vault B'}]}
    failed, result = run_module(media_inventory.main, args, monkeypatch)
    assert failed is False
    [given] = result['libraries']
    assert given['id'] == 'given'
    summary = result['summary']
    assert sorted(summary) == MEDIA_FIELDS and summary['status'] == 'ok'
    counts = summary['totals']['counts']
    assert (counts['write'], counts['read'], counts['stranded']) == (1, 0, 1)
    assert summary['parameters'] == {'drives_kept': 2, 'fill_fraction': 1.0}


def test_a_target_it_cannot_read_fails_before_reading_anything(monkeypatch):
    monkeypatch.setattr(media_inventory, 'discover', lambda **kw: {'changers': [], 'drives': []})
    failed, result = run_module(media_inventory.main, {'target_generation': 'LTO-99'}, monkeypatch)
    assert failed is True and result['msg'].startswith('target: ')
