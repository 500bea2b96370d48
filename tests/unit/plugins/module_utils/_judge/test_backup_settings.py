# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A Bacula / Bareos host judged with what its storage daemon runs (_judge/_backup_settings.py).

The storage daemon's configuration is read by _sd_config from the real files of test_sd_config (Debian's
packaged samples, Bareos's published Devices; their READMEs name the sources), through bacula_sd_info's record
and the verdict action's one conversion (records_of), with the Archive Devices followed to the st nodes the
host in report_cases has (/dev/nst0, /dev/nst1; by-id links to them). The drives, sources and write sweeps are
report_cases'. Every document is validated against docs/host-report.schema.json.
"""

from __future__ import annotations

import json
import os
import shutil

import jsonschema
import pytest

from ansible_collections.tapeops.qualify.plugins.action import qualify_verdict
from ansible_collections.tapeops.qualify.plugins.module_utils import _records
from ansible_collections.tapeops.qualify.plugins.module_utils._config import _sd_config
from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import _fleet
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _host

from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._tape_fixtures import FIXTURES
from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils.report_cases import drive, source, write_result

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', '..'))
DEBIAN = os.path.join(FIXTURES, 'bacula_sd_conf', 'debian-9.6.7')
PUBLISHED = os.path.join(FIXTURES, 'bareos', 'published')
ETC_BAREOS = os.path.join(FIXTURES, 'bareos', 'etc-bareos')
BYID = '/dev/tape/by-id/scsi-350011d00018a5f03-nst'
NODES = {'/dev/nst0': '/dev/nst0', '/dev/nst1': '/dev/nst1', BYID: '/dev/nst1'}
# report_cases' drives, with the density code as tape_drive_info gives it (a string, or None with no cartridge read)
DRIVES = [dict(drive('/dev/nst%d' % n, 'IBM', 'ULT3580-TD5', '106800100%d' % n), density_code=None) for n in (0, 1)]
LTO5 = [{'nst': '/dev/nst0', 'generation': 'LTO-5'}, {'nst': '/dev/nst1', 'generation': 'LTO-5'}]


@pytest.fixture(scope='module')
def validator():
    with open(os.path.join(ROOT, 'docs', 'host-report.schema.json'), encoding='utf-8') as handle:
        return jsonschema.Draft202012Validator(json.load(handle))


def registered(read):
    """bacula_sd_info's result as Ansible registers it (the record plus Ansible's keys)."""
    return dict(_records.StorageDaemonConfig.from_dict(read).to_dict(), changed=False,
                invocation={'module_args': {'software': read['software']}})


def bareos_two_drives(tmp_path, version=(23, 0, 1)):
    """/etc/bareos with the published tapedrive-0 (/dev/nst0) and the manual's FC-Drive-1 (by-id link to nst1)."""
    root = tmp_path / 'etc-bareos'
    shutil.copytree(ETC_BAREOS, str(root))
    device_dir = root / 'bareos-sd.d' / 'device'
    for name in os.listdir(str(device_dir)):
        os.remove(str(device_dir / name))
    shutil.copy(os.path.join(PUBLISHED, 'tapedrive-0.conf.example'), str(device_dir / 'tapedrive-0.conf'))
    shutil.copy(os.path.join(PUBLISHED, 'FC-Drive-1.conf'), str(device_dir / 'FC-Drive-1.conf'))
    return _sd_config.read_storage_daemon('bareos', str(root), version=version, resolve=NODES.get), device_dir


def assemble(sd_result, backup, settings=None, drives=None):
    measured = qualify_verdict.records_of({'drives': drives or DRIVES, 'source': source(60.0, 50.0),
                                           'write_sweep': [write_result(d['nst']) for d in drives or DRIVES],
                                           'preflight': None, 'media': None, 'mechanics': None,
                                           'storage_daemon': sd_result})
    return _host.assemble('ma1', measured['drives'], measured['source'], measured['write_sweep'],
                          settings if settings is not None else LTO5, backup, memory_total_mb=16384,
                          storage_daemon=measured['storage_daemon']).to_dict()


def by_drive(doc):
    return dict((d['nst'], (d, v)) for d, v in _records.drives_with_verdicts(doc))


def test_each_drive_takes_its_devices_block_and_file_size_and_the_document_says_from_where(tmp_path, validator):
    read, device_dir = bareos_two_drives(tmp_path)
    doc = assemble(registered(read), {'software': 'bareos'})
    validator.validate(doc)
    # the record is kept whole, without Ansible's keys
    assert doc['storage_daemon'] == _records.StorageDaemonConfig.from_dict(read).to_dict()
    drives = by_drive(doc)
    entry, verdict = drives['/dev/nst0']
    numbers = verdict['numbers']
    # tapedrive-0: "MaximumFileSize = 10GB" set, no block size: Bareos 23's default, 1 MiB
    assert (numbers['segment_size_mb'], numbers['segment_size_basis']) == (10000.0, 'sd_config')
    assert (numbers['block_size_bytes'], numbers['block_size_basis']) == (1048576, 'sd_default')
    tapedrive = str(device_dir / 'tapedrive-0.conf')
    assert entry['setting_sources']['segment_size_mb'] == {
        'from': 'sd_config', 'value': 10000.0, 'software': 'bareos', 'device': 'tapedrive-0', 'file': tapedrive,
        'directive': 'Maximum File Size', 'text': '10GB', 'where': '%s:37' % tapedrive, 'basis': None}
    block = entry['setting_sources']['block_size_bytes']
    assert (block['from'], block['value'], block['text'], block['where']) == ('sd_default', 1048576, None, None)
    assert 'since Bareos 23.0.0' in block['basis']
    # the forecast writes a synchronous mark every 10000 MB
    assert verdict['forecast']['now']['inputs']['segment_size_mb'] == 10000.0
    sentence = next(r for r in verdict['reasons'] if r.startswith('From the Bareos storage daemon'))
    assert sentence.startswith('From the Bareos storage daemon\'s configuration, Device "tapedrive-0" (Archive Device '
                               '/dev/nst0) in %s: Maximum Block Size is not set: the default, 1048576 bytes (' % tapedrive)
    assert 'Maximum File Size = 10GB (line 37): a synchronous file mark every 10000 MB.' in sentence
    # FC-Drive-1: its by-id Archive Device leads to nst1; "Maximum Block Size = 131072", Maximum File Size default
    entry, verdict = drives['/dev/nst1']
    assert (verdict['numbers']['block_size_bytes'], verdict['numbers']['block_size_basis']) == (131072, 'sd_config')
    assert (verdict['numbers']['segment_size_mb'], verdict['numbers']['segment_size_basis']) == (1000.0, 'sd_default')
    assert entry['setting_sources']['block_size_bytes']['file'] == str(device_dir / 'FC-Drive-1.conf')
    # the fleet table says where each came from
    rows = dict((r['drive'], _fleet.cells(r)) for r in _fleet.settings_rows([doc]))
    assert rows['/dev/nst0'][3] == '10000 MB (tapedrive-0.conf)'
    assert rows['/dev/nst0'][4].startswith('1 MiB (Bareos default, tapedrive-0.conf sets none) / ')
    assert rows['/dev/nst1'][3] == '1000 MB (Bareos default, FC-Drive-1.conf sets none)'
    assert rows['/dev/nst1'][4].startswith('128 KiB (FC-Drive-1.conf) / ')


def debian_with_device(tmp_path, text):
    """Debian's packaged bacula-sd.conf including a Device file ``text`` (an administrator's addition)."""
    device = tmp_path / 'tape.conf'
    device.write_text(text)
    with open(os.path.join(DEBIAN, 'bacula-sd.conf'), encoding='utf-8') as handle:
        (tmp_path / 'bacula-sd.conf').write_text(handle.read() + '@%s\n' % device)
    return _sd_config.read_storage_daemon('bacula', str(tmp_path / 'bacula-sd.conf'), version=(9, 6, 7),
                                          resolve=NODES.get), str(device)


def tuned_lto4():
    """Debian's LTO-4 sample (examples/devices/LTO-4.conf) with 2G files and 256 KiB blocks, as the lab run sets."""
    with open(os.path.join(DEBIAN, 'LTO-4.conf'), encoding='utf-8') as handle:
        text = handle.read()
    return text.replace('  Maximum File Size = 5GB\n', '  Maximum File Size = 2G\n  Maximum Block Size = 262144\n')


def test_the_verdict_with_the_devices_values_is_the_verdict_with_the_same_values_in_the_inventory(tmp_path):
    read, device = debian_with_device(tmp_path, tuned_lto4())
    from_sd = by_drive(assemble(registered(read), {'software': 'bacula'}))['/dev/nst0'][1]
    # 2G is 2147483648 bytes (G: powers of 1024): a synchronous mark every 2147.48 MB
    assert from_sd['numbers']['segment_size_mb'] == pytest.approx(2147.483648)
    assert from_sd['numbers']['block_size_bytes'] == 262144
    inventory = by_drive(assemble(None, {'software': 'bacula', 'block_size_bytes': 262144,
                                         'segment_size_mb': 2147.483648}))['/dev/nst0'][1]
    assert from_sd['forecast']['now'] == inventory['forecast']['now']
    assert from_sd['class'] == inventory['class'] and from_sd['fixes'] == inventory['fixes']
    differ = sorted(k for k in from_sd['numbers'] if from_sd['numbers'][k] != inventory['numbers'].get(k))
    assert differ == ['block_size_basis', 'segment_size_basis']
    assert 'Maximum File Size = 2G (line 12): a synchronous file mark every 2147 MB' in ' '.join(from_sd['reasons'])


def test_the_inventory_overrides_the_device_and_the_document_keeps_both(tmp_path, validator):
    read, device = debian_with_device(tmp_path, tuned_lto4())
    settings = [dict(LTO5[0], segment_size_mb=50000), LTO5[1]]
    doc = assemble(registered(read), {'software': 'bacula', 'block_size_bytes': 65536}, settings)
    validator.validate(doc)
    entry, verdict = by_drive(doc)['/dev/nst0']
    assert (verdict['numbers']['block_size_bytes'], verdict['numbers']['block_size_basis']) == (65536, 'inventory')
    assert (verdict['numbers']['segment_size_mb'], verdict['numbers']['segment_size_basis']) == (50000, 'inventory')
    block = entry['setting_sources']['block_size_bytes']
    assert (block['from'], block['where'], block['value']) == ('inventory', 'tapeops_backup.block_size_bytes', 65536)
    assert (block['overrides']['from'], block['overrides']['value'], block['overrides']['file']) == (
        'sd_config', 262144, device)
    segment = entry['setting_sources']['segment_size_mb']
    assert (segment['where'], segment['overrides']['text']) == ('tapeops_drives.segment_size_mb', '2G')
    reasons = ' '.join(verdict['reasons'])
    assert ('Maximum Block Size = 262144 (line 13): 256 KiB blocks; the inventory\'s tapeops_backup.block_size_bytes '
            'is used instead') in reasons


def test_a_drive_no_device_uses_gets_the_defaults_and_the_reasons_name_the_devices_there(tmp_path, validator):
    lto4 = os.path.join(DEBIAN, 'LTO-4.conf')       # its Device is on /dev/nst0
    read = _sd_config.read_storage_daemon('bacula', lto4, version=(9, 6, 7), resolve=NODES.get)
    doc = assemble(registered(read), {'software': 'bacula'})
    validator.validate(doc)
    entry, verdict = by_drive(doc)['/dev/nst1']
    assert (verdict['numbers']['segment_size_mb'], verdict['numbers']['segment_size_basis']) == (1000.0, 'default')
    assert 'block_size_basis' not in verdict['numbers']      # report_cases' drives report st block size 0
    assert entry['setting_sources'] == {'segment_size_mb': {
        'from': 'default', 'value': 1000.0, 'software': 'bacula',
        'basis': 'Bacula src/stored/stored_conf.c (dev_items): MaximumFileSize ITEM_DEFAULT 1000000000'}}
    assert ('No tape Device of the Bacula storage daemon\'s configuration (%s) has /dev/nst1 as its Archive Device '
            '(the tape Devices there: LTO-4 (/dev/nst0)); the drive\'s settings come from the inventory or the '
            'defaults.' % lto4) in verdict['reasons']


def test_a_configuration_that_was_not_read_says_why_in_the_reasons(validator):
    read = _sd_config.read_storage_daemon('bacula', '/nonexistent/bacula-sd.conf')
    doc = assemble(registered(read), {'software': 'bacula'})
    validator.validate(doc)
    verdict = by_drive(doc)['/dev/nst0'][1]
    assert ('The Bacula storage daemon\'s configuration (/nonexistent/bacula-sd.conf) was not read: Nothing was read '
            'from /nonexistent/bacula-sd.conf: it does not exist; the drive\'s settings come from the inventory or '
            'the defaults.') in verdict['reasons']
    assert doc['storage_daemon']['error'] == 'Nothing was read from /nonexistent/bacula-sd.conf: it does not exist.'


def test_a_failed_or_skipped_bacula_sd_info_is_kept_as_such():
    assert _records.StorageDaemonConfig.from_result({'skipped': True, 'changed': False}) is None
    failed = _records.StorageDaemonConfig.from_result({'failed': True, 'msg': 'MODULE FAILURE'})
    assert failed.to_dict() == dict(_records.StorageDaemonConfig().to_dict(), error='MODULE FAILURE')
    doc = assemble({'skipped': True, 'changed': False}, {'software': 'data_protector'})
    assert 'storage_daemon' not in doc
    assert not [r for r in by_drive(doc)['/dev/nst0'][1]['reasons'] if 'storage daemon' in r]
