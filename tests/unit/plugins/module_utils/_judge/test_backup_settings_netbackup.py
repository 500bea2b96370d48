# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A NetBackup media server judged with what bptm runs: SIZE_DATA_BUFFERS is its drives' block size
(_judge/_backup_settings.py, the netbackup_config fact of the verdict, its words).

The buffer files are the published ones of tests/unit/fixtures/netbackup/ (its README names the sources), laid
out under tmp_path as /usr/openv/netbackup and read by _config/_netbackup through netbackup_buffers_info's record
and the verdict action's one conversion (records_of). The drives, sources and write sweeps are report_cases'
(two IBM LTO-5 drives). Every document is validated against docs/host-report.schema.json.
"""

from __future__ import annotations

import json
import os

import jsonschema
import pytest

from ansible_collections.tapeops.qualify.plugins.action import qualify_verdict
from ansible_collections.tapeops.qualify.plugins.module_utils import _records, _words
from ansible_collections.tapeops.qualify.plugins.module_utils._config import _netbackup
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _host
from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import _fleet

from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._tape_fixtures import FIXTURES
from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils.report_cases import drive, source, write_result

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', '..'))
HERE = os.path.join(FIXTURES, 'netbackup')
DRIVES = [dict(drive('/dev/nst%d' % n, 'IBM', 'ULT3580-TD5', '106800100%d' % n), density_code=None) for n in (0, 1)]
LTO5 = [{'nst': '/dev/nst0', 'generation': 'LTO-5'}, {'nst': '/dev/nst1', 'generation': 'LTO-5'}]
NETBACKUP = {'software': 'netbackup'}


@pytest.fixture(scope='module')
def validator():
    with open(os.path.join(ROOT, 'docs', 'host-report.schema.json'), encoding='utf-8') as handle:
        return jsonschema.Draft202012Validator(json.load(handle))


def body(name):
    with open(os.path.join(HERE, name), 'rb') as handle:
        return handle.read().split(b'\n', 3)[3]


def media_server(tmp_path, files):
    """netbackup_buffers_info's result, as Ansible registers it, on a NetBackup directory holding ``files``."""
    root = tmp_path / 'netbackup'
    (root / 'db' / 'config').mkdir(parents=True)
    for name, data in files.items():
        key = dict((n, k) for k, n, dummy, dummy2 in _netbackup.SETTINGS)[name]
        with open(_netbackup.file_path(key, str(root)), 'wb') as handle:
            handle.write(data)
    read = _netbackup.read_buffers(str(root))
    return dict(_records.NetBackupBuffers.from_dict(read).to_dict(), changed=False,
                invocation={'module_args': {'path': str(root)}}), str(root)


PUPPET = {'SIZE_DATA_BUFFERS': body('SIZE_DATA_BUFFERS__puppet-netbackup-tune__1.txt'),
          'NUMBER_DATA_BUFFERS': body('NUMBER_DATA_BUFFERS__puppet-netbackup-tune__1.txt'),
          'NET_BUFFER_SZ': body('NET_BUFFER_SZ__veritas-100000498-zero__1.txt')}


def assemble(nb_result, backup, settings=None):
    measured = qualify_verdict.records_of({'drives': DRIVES, 'source': source(60.0, 50.0),
                                           'write_sweep': [write_result(d['nst']) for d in DRIVES],
                                           'preflight': None, 'media': None, 'mechanics': None,
                                           'netbackup': nb_result})
    return _host.assemble('nbu1', measured['drives'], measured['source'], measured['write_sweep'],
                          settings if settings is not None else LTO5, backup, memory_total_mb=16384,
                          netbackup=measured['netbackup']).to_dict()


def by_drive(doc):
    return dict((d['nst'], (d, v)) for d, v in _records.drives_with_verdicts(doc))


def reason(verdict, start):
    return next(r for r in verdict['reasons'] if r.startswith(start))


def test_every_drive_writes_size_data_buffers_blocks_and_the_document_says_from_which_file(tmp_path, validator):
    registered, root = media_server(tmp_path, PUPPET)
    doc = assemble(registered, NETBACKUP)
    validator.validate(doc)
    # the record is kept whole, without Ansible's keys
    assert doc['netbackup'] == _records.NetBackupBuffers.from_result(registered).to_dict()
    size = os.path.join(root, 'db', 'config', 'SIZE_DATA_BUFFERS')
    for nst in ('/dev/nst0', '/dev/nst1'):
        entry, verdict = by_drive(doc)[nst]
        assert (verdict['numbers']['block_size_bytes'], verdict['numbers']['block_size_basis']) == (
            262144, 'netbackup_config')
        assert entry['setting_sources']['block_size_bytes'] == {
            'from': 'netbackup_config', 'value': 262144, 'software': 'netbackup', 'file': size,
            'directive': 'SIZE_DATA_BUFFERS', 'text': '262144', 'where': size, 'basis': None}
        # the drive path the forecast gets is the sweep's rate at that block size (report_cases: 45 MB/s, 2 % more
        # on its 2:1 data, the data's ratio)
        assert verdict['numbers']['drive_path_mb_s'] == 45.9
    verdict = by_drive(doc)['/dev/nst0'][1]
    sentence = reason(verdict, 'From the NetBackup media server')
    numbers = verdict['numbers']
    shared = 256 * 262144
    assert sentence == (
        "From the NetBackup media server's buffer files (%s): SIZE_DATA_BUFFERS = 262144; NUMBER_DATA_BUFFERS = 256; "
        "NET_BUFFER_SZ = 0 (0: bptm asks for no size and the operating system tunes the socket buffer, as Veritas "
        "recommends (article 100000498)); NUMBER_DATA_BUFFERS_RESTORE has no file and its default is not known (%s). "
        "bptm writes 256 KiB blocks to this drive (SIZE_DATA_BUFFERS). The data buffers are 256 x 256 KiB = 64 MiB "
        "of shared memory for each drive (for each multiplexed stream, NetBackup Backup Planning and Performance "
        "Tuning Guide, \"Amount of shared memory required by NetBackup\"): %.2f s of the drive's full-speed feed "
        "(%s) and %.0f %% of the drive's own %.0f MB buffer. The forecast models the drive's buffer; NetBackup's "
        "buffers are not added to it." % (
            root, _netbackup.DEFAULTS['number_data_buffers_restore'][1], shared / 1e6 / numbers['need_full_mb_s'],
            _words.fmt_rate(numbers['need_full_mb_s']), 100.0 * shared / 1e6 / 256, 256))
    # the fleet table names the file
    rows = dict((r['drive'], _fleet.cells(r)) for r in _fleet.settings_rows([doc]))
    assert rows['/dev/nst0'][4].startswith('256 KiB (SIZE_DATA_BUFFERS) / ')


def test_no_file_is_netbackups_64_kib_default_with_its_source(tmp_path, validator):
    registered, root = media_server(tmp_path, {})
    doc = assemble(registered, NETBACKUP)
    validator.validate(doc)
    entry, verdict = by_drive(doc)['/dev/nst0']
    assert (verdict['numbers']['block_size_bytes'], verdict['numbers']['block_size_basis']) == (
        65536, 'netbackup_default')
    block = entry['setting_sources']['block_size_bytes']
    assert (block['from'], block['value'], block['text']) == ('netbackup_default', 65536, None)
    assert block['basis'] == _netbackup.DEFAULTS['size_data_buffers'][1]
    assert verdict['numbers']['drive_path_mb_s'] == 40.8     # report_cases' sweep at 64 KiB (2:1 data)
    sentence = reason(verdict, 'From the NetBackup media server')
    assert ('SIZE_DATA_BUFFERS has no file: the default, 65536 (NetBackup Backup Planning and Performance Tuning Guide '
            '(8.3.0.1, 9.0), "Default size of shared data buffers": 64K for tape on Linux/UNIX') in sentence
    assert "bptm writes 64 KiB blocks to this drive (NetBackup's default)." in sentence
    # the two settings whose default is not verified share one clause
    assert ('; NUMBER_DATA_BUFFERS and NUMBER_DATA_BUFFERS_RESTORE have no file and their default is not known (not '
            'verified: ') in sentence
    assert sentence.endswith('The shared memory of the data buffers is not known (NUMBER_DATA_BUFFERS x '
                             'SIZE_DATA_BUFFERS needs both).')
    rows = dict((r['drive'], _fleet.cells(r)) for r in _fleet.settings_rows([doc]))
    assert rows['/dev/nst0'][4].startswith('64 KiB (NetBackup default, no SIZE_DATA_BUFFERS file) / ')


def test_the_verdict_with_the_files_value_is_the_verdict_with_the_same_value_in_the_inventory(tmp_path):
    registered, dummy = media_server(tmp_path, PUPPET)
    from_file = by_drive(assemble(registered, NETBACKUP))['/dev/nst0'][1]
    inventory = by_drive(assemble(None, dict(NETBACKUP, block_size_bytes=262144)))['/dev/nst0'][1]
    assert from_file['forecast']['now'] == inventory['forecast']['now']
    assert from_file['class'] == inventory['class'] and from_file['fixes'] == inventory['fixes']
    differ = sorted(k for k in from_file['numbers'] if from_file['numbers'][k] != inventory['numbers'].get(k))
    assert differ == ['block_size_basis']


def test_the_inventory_overrides_the_file_and_the_document_keeps_both(tmp_path, validator):
    registered, root = media_server(tmp_path, PUPPET)
    doc = assemble(registered, NETBACKUP, [dict(LTO5[0], block_size_bytes=1048576), LTO5[1]])
    validator.validate(doc)
    entry, verdict = by_drive(doc)['/dev/nst0']
    assert (verdict['numbers']['block_size_bytes'], verdict['numbers']['block_size_basis']) == (1048576, 'inventory')
    block = entry['setting_sources']['block_size_bytes']
    assert (block['from'], block['where']) == ('inventory', 'tapeops_drives.block_size_bytes')
    assert (block['overrides']['from'], block['overrides']['value'], block['overrides']['file']) == (
        'netbackup_config', 262144, os.path.join(root, 'db', 'config', 'SIZE_DATA_BUFFERS'))
    assert "The inventory's tapeops_drives.block_size_bytes is used instead of SIZE_DATA_BUFFERS." in reason(
        verdict, 'From the NetBackup media server')
    # the other drive still takes the file's
    assert by_drive(doc)['/dev/nst1'][1]['numbers']['block_size_basis'] == 'netbackup_config'


def test_a_file_bptm_would_not_take_gives_no_block_size_and_the_reasons_say_why(tmp_path, validator):
    registered, root = media_server(tmp_path, {'SIZE_DATA_BUFFERS': '\ufeff262144\r\n'.encode('utf-16-le')})
    doc = assemble(registered, NETBACKUP)
    validator.validate(doc)
    entry, verdict = by_drive(doc)['/dev/nst0']
    assert 'block_size_basis' not in verdict['numbers'] and verdict['numbers']['block_size_bytes'] is None
    assert 'block_size_bytes' not in (entry['setting_sources'] or {})
    assert ('SIZE_DATA_BUFFERS is not taken (%s: it is UTF-16 text (a byte-order mark FF FE, as a Windows editor saves '
            '"Unicode"), not the ASCII digits bptm reads; write the number alone: echo 262144 > SIZE_DATA_BUFFERS); '
            'what bptm uses instead is in its log' % os.path.join(root, 'db', 'config', 'SIZE_DATA_BUFFERS')) in reason(
                verdict, 'From the NetBackup media server')


def test_a_host_without_netbackup_says_so_and_the_drives_keep_the_inventorys_settings(tmp_path, validator):
    read = _netbackup.read_buffers(str(tmp_path / 'none'))
    doc = assemble(dict(_records.NetBackupBuffers.from_dict(read).to_dict(), changed=False), NETBACKUP)
    validator.validate(doc)
    verdict = by_drive(doc)['/dev/nst0'][1]
    assert ("The NetBackup media server's buffer files (%s) were not read: %s does not exist: NetBackup does not seem "
            "to be installed here; give the NetBackup directory of this media server (qualify_netbackup_dir); the "
            "drive's block size comes from the inventory or the drive." % ((tmp_path / 'none',) * 2)) in verdict['reasons']
    assert 'block_size_basis' not in verdict['numbers']


def test_netbackup_has_no_immediate_marks_and_its_default_fragment_is_modelled(tmp_path, validator):
    registered, dummy = media_server(tmp_path, PUPPET)
    doc = assemble(registered, NETBACKUP)
    validator.validate(doc)
    verdict = by_drive(doc)['/dev/nst0'][1]
    assert verdict['numbers']['filemark_mode'] == 'sync'
    assert 'immediate_filemarks' not in [f['id'] for f in verdict['fixes']]
    # the same drive on a Data Protector host: its st driver has MTWEOFI, so immediate marks are modelled
    other = by_drive(assemble(None, {'software': 'data_protector', 'block_size_bytes': 262144,
                                     'segment_size_mb': 64}))['/dev/nst0'][1]
    netbackup = by_drive(assemble(None, dict(NETBACKUP, block_size_bytes=262144, segment_size_mb=64)))['/dev/nst0'][1]
    assert 'immediate_filemarks' in [f['id'] for f in other['fixes']]
    assert 'immediate_filemarks' not in [f['id'] for f in netbackup['fixes']]
    segment = next(f for f in netbackup['fixes'] if f['id'] == 'segment_size')
    assert segment['setting'].startswith('NetBackup tape storage unit (on the primary server): Maximum Fragment Size = ')
    # no fragment size given: a tape storage unit's default, 1 TB of NetBackup's megabytes, in decimal MB
    assert (verdict['numbers']['segment_size_mb'], verdict['numbers']['segment_size_basis']) == (
        1099511.627776, 'default')
    assert reason(verdict, 'No fragment size was given').startswith(
        'No fragment size was given (tapeops_backup.segment_size_mb), so the forecast models the NetBackup default: '
        'a synchronous tape mark every 1099512 MB')


def test_the_block_size_fix_names_size_data_buffers(tmp_path):
    # 64 KiB by NetBackup's default: report_cases' sweep measured 45 MB/s at 256 KiB against 40 at 64 KiB (1 MiB's 50
    # is within the verdict's tolerance of it)
    registered, dummy = media_server(tmp_path, {})
    verdict = by_drive(assemble(registered, NETBACKUP))['/dev/nst0'][1]
    fix = next(f for f in verdict['fixes'] if f['id'] == 'block_size')
    assert fix['value'] == 262144
    assert fix['title'] == 'Use 256 KiB tape blocks'
    assert fix['setting'] == ('NetBackup media server: SIZE_DATA_BUFFERS = 262144 '
                              '(/usr/openv/netbackup/db/config/SIZE_DATA_BUFFERS, tapeops.qualify.netbackup_buffers)')


def test_a_failed_or_skipped_netbackup_buffers_info_is_kept_as_such():
    assert _records.NetBackupBuffers.from_result({'skipped': True, 'changed': False}) is None
    failed = _records.NetBackupBuffers.from_result({'failed': True, 'msg': 'MODULE FAILURE'})
    assert failed.to_dict() == dict(_records.NetBackupBuffers().to_dict(), error='MODULE FAILURE')
    doc = assemble({'skipped': True, 'changed': False}, NETBACKUP)
    assert 'netbackup' not in doc
