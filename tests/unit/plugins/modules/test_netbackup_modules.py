# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""netbackup_buffers_info and netbackup_buffers through their main(), on NetBackup directories laid out under
tmp_path from the published files of tests/unit/fixtures/netbackup/ (its README names the sources).

The writer: check mode changes nothing and says what would change, with a diff; the real run writes each file as
``echo N > FILE`` does, keeping a backup; the second run changes nothing; a file that already holds the number
without a line end (as Puppet writes it) is left alone; a bad value changes no file.
"""

from __future__ import annotations

import os
import subprocess
import tempfile

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils import _records
from ansible_collections.tapeops.qualify.plugins.modules import netbackup_buffers, netbackup_buffers_info

from module_harness import FIXTURES, run_module, run_module_process, tree_state

HERE = os.path.join(FIXTURES, 'netbackup')


def body(name):
    """A fixture's file bytes (after its three '# ' source lines)."""
    with open(os.path.join(HERE, name), 'rb') as handle:
        return handle.read().split(b'\n', 3)[3]


@pytest.fixture
def netbackup(tmp_path):
    """/usr/openv/netbackup of a media server tuned by the public Puppet module (files without a line end)."""
    root = tmp_path / 'usr' / 'openv' / 'netbackup'
    (root / 'db' / 'config').mkdir(parents=True)
    for name in ('SIZE_DATA_BUFFERS', 'NUMBER_DATA_BUFFERS'):
        (root / 'db' / 'config' / name).write_bytes(body('%s__puppet-netbackup-tune__1.txt' % name))
    (root / 'NET_BUFFER_SZ').write_bytes(body('NET_BUFFER_SZ__puppet-netbackup-tune__1.txt'))
    return root


def read(path):
    with open(str(path), 'rb') as handle:
        return handle.read()


# ------------------------------------------------------------------------- netbackup_buffers_info

def test_info_reads_the_files_and_changes_nothing(netbackup, monkeypatch):
    before = tree_state(str(netbackup))
    failed, result = run_module(netbackup_buffers_info.main, {'path': str(netbackup)}, monkeypatch, check_mode=True)
    assert not failed and result['changed'] is False and result['error'] is None
    assert [result[k]['value'] for k in ('size_data_buffers', 'number_data_buffers', 'net_buffer_sz')] == [
        262144, 256, 0]
    assert result['number_data_buffers_restore']['source'] == 'unknown'
    # the result is the record, nothing more (RETURN documents the same keys: test_records)
    assert set(result) - {'changed'} == set(_records.NetBackupBuffers().to_dict())
    assert tree_state(str(netbackup)) == before


def test_info_on_a_host_without_netbackup_says_so(tmp_path, monkeypatch):
    failed, result = run_module(netbackup_buffers_info.main, {'path': str(tmp_path / 'openv')}, monkeypatch)
    assert not failed and result['size_data_buffers'] is None
    assert 'NetBackup does not seem to be installed here' in result['error']


@pytest.mark.skipif(os.geteuid() != 0, reason='needs root to drop to another user')
def test_files_only_root_may_read_say_so_as_another_user():
    base = tempfile.mkdtemp(prefix='tapeops-netbackup-', dir='/tmp')
    try:
        os.chmod(base, 0o755)
        config = os.path.join(base, 'db', 'config')
        os.makedirs(config, mode=0o755)
        os.chmod(os.path.join(base, 'db'), 0o755)
        path = os.path.join(config, 'SIZE_DATA_BUFFERS')
        with open(path, 'wb') as handle:
            handle.write(b'262144\n')
        os.chmod(path, 0o600)
        rc, result = run_module_process('netbackup_buffers_info', {'path': base}, user=65534)
        assert rc == 0, result
        assert result['size_data_buffers']['value'] is None
        assert result['size_data_buffers']['error'] == (
            '%s cannot be read: permission denied: read it as root (become: true).' % path)
        rc, result = run_module_process('netbackup_buffers_info', {'path': base})
        assert rc == 0 and result['size_data_buffers']['value'] == 262144
    finally:
        subprocess.run(['rm', '-rf', base], check=True)


# ------------------------------------------------------------------------- netbackup_buffers

def test_check_real_check_real(netbackup, monkeypatch):
    args = {'path': str(netbackup), 'size_data_buffers': 524288, 'number_data_buffers': 256,
            'number_data_buffers_restore': 64, 'net_buffer_sz': 0}
    size = netbackup / 'db' / 'config' / 'SIZE_DATA_BUFFERS'
    restore = netbackup / 'db' / 'config' / 'NUMBER_DATA_BUFFERS_RESTORE'
    before = tree_state(str(netbackup))

    failed, result = run_module(netbackup_buffers.main, args, monkeypatch, check_mode=True, diff=True)
    assert not failed and result['changed'] is True and result['block_size_changed'] is True
    # NUMBER_DATA_BUFFERS and NET_BUFFER_SZ already hold 256 and 0 (Puppet's files, no line end): left alone
    assert result['changes'] == [
        {'name': 'SIZE_DATA_BUFFERS', 'path': str(size), 'before': '262144', 'after': '524288'},
        {'name': 'NUMBER_DATA_BUFFERS_RESTORE', 'path': str(restore), 'before': None, 'after': '64'}]
    assert result['diff'] == [
        {'before': '262144', 'after': '524288\n', 'before_header': str(size), 'after_header': str(size)},
        {'before': '', 'after': '64\n', 'before_header': '%s (absent)' % restore, 'after_header': str(restore)}]
    assert tree_state(str(netbackup)) == before and result['backup_files'] == []

    failed, result = run_module(netbackup_buffers.main, args, monkeypatch)
    assert not failed and result['changed'] is True
    assert (read(size), read(restore)) == (b'524288\n', b'64\n')
    [backup] = result['backup_files']
    assert os.path.dirname(backup) == str(size.parent) and read(backup) == b'262144'
    assert read(netbackup / 'NET_BUFFER_SZ') == b'0'

    after = tree_state(str(netbackup))
    for check_mode in (True, False):
        failed, result = run_module(netbackup_buffers.main, args, monkeypatch, check_mode=check_mode, diff=True)
        assert not failed and result['changed'] is False and result['changes'] == [] and result['diff'] == []
        assert result['block_size_changed'] is False
    assert tree_state(str(netbackup)) == after
    # what it wrote is what the reader (and bptm) reads
    failed, result = run_module(netbackup_buffers_info.main, {'path': str(netbackup)}, monkeypatch)
    assert [result[k]['value'] for k in ('size_data_buffers', 'number_data_buffers_restore')] == [524288, 64]


def test_a_file_bptm_would_not_take_is_rewritten(netbackup, monkeypatch):
    size = netbackup / 'db' / 'config' / 'SIZE_DATA_BUFFERS'
    size.write_bytes('\ufeff262144\r\n'.encode('utf-16-le'))   # saved by a Windows editor as "Unicode"
    failed, result = run_module(netbackup_buffers.main, {'path': str(netbackup), 'size_data_buffers': 262144,
                                                         'backup': False}, monkeypatch)
    assert not failed and result['changed'] is True and result['changes'][0]['before'] is None
    assert read(size) == b'262144\n' and result['backup_files'] == []


@pytest.mark.parametrize('args, words', [
    ({'size_data_buffers': 262656}, 'SIZE_DATA_BUFFERS = 262656 is not a multiple of 1024 bytes of at least 1024: '
                                    'NetBackup would round it down to 262144'),
    ({'size_data_buffers': 2097152, 'hba_max_transfer_bytes': 1310720}, 'larger than the HBA path can carry'),
    ({'number_data_buffers': 0}, 'NUMBER_DATA_BUFFERS = 0: bptm needs at least one buffer.'),
    ({'net_buffer_sz': -1}, 'NET_BUFFER_SZ = -1'),
])
def test_a_bad_value_changes_no_file(netbackup, monkeypatch, args, words):
    before = tree_state(str(netbackup))
    args = dict(args, path=str(netbackup), number_data_buffers_restore=64)
    failed, result = run_module(netbackup_buffers.main, args, monkeypatch)
    assert failed and words in result['msg'] and result['msg'].endswith('Nothing was changed.')
    assert tree_state(str(netbackup)) == before


def test_a_directory_where_a_file_belongs_changes_no_file(netbackup, monkeypatch):
    (netbackup / 'db' / 'config' / 'NUMBER_DATA_BUFFERS_RESTORE').mkdir()
    before = tree_state(str(netbackup))
    failed, result = run_module(netbackup_buffers.main, {'path': str(netbackup), 'size_data_buffers': 524288,
                                                         'number_data_buffers_restore': 64}, monkeypatch)
    assert failed and result['msg'] == (
        '%s is not a regular file: remove it by hand, NetBackup reads a file holding one number. Nothing was '
        'changed.' % (netbackup / 'db' / 'config' / 'NUMBER_DATA_BUFFERS_RESTORE'))
    assert tree_state(str(netbackup)) == before


def test_no_netbackup_says_what_to_do(tmp_path, monkeypatch):
    failed, result = run_module(netbackup_buffers.main, {'path': str(tmp_path / 'netbackup'),
                                                         'size_data_buffers': 262144}, monkeypatch)
    assert failed and result['msg'] == (
        '%s does not exist: install the NetBackup media server on this host, or set path (netbackup_buffers_path) '
        'to its NetBackup directory.' % (tmp_path / 'netbackup' / 'db' / 'config'))
    assert not (tmp_path / 'netbackup').exists()


def test_nothing_asked_changes_nothing(netbackup, monkeypatch):
    before = tree_state(str(netbackup))
    failed, result = run_module(netbackup_buffers.main, {'path': str(netbackup)}, monkeypatch)
    assert not failed and result['changed'] is False and tree_state(str(netbackup)) == before


def test_as_ansible_runs_it(netbackup):
    rc, result = run_module_process('netbackup_buffers', {'path': str(netbackup), 'size_data_buffers': 1048576})
    assert rc == 0 and result['changed'] is True, result
    assert read(netbackup / 'db' / 'config' / 'SIZE_DATA_BUFFERS') == b'1048576\n'
