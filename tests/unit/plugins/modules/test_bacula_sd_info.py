# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""bacula_sd_info through its main(): the packaged Debian and published Bareos files, the daemon's version.

The daemons are scripts first on PATH printing their recorded words (bacula-sd -? of Debian's bacula-sd 9.6.7-7,
on stderr with exit code 1, as it prints them); the configurations are the fixtures of test_sd_config (their
READMEs name the sources). The test machine has no tape drive: Archive Devices that do not exist here say so.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils import _records
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _cli
from ansible_collections.tapeops.qualify.plugins.modules import bacula_sd_info

from module_harness import FIXTURES, Derived, run_module, run_module_process, scripted_tools, tool_calls, tree_state

DEBIAN = os.path.join(FIXTURES, 'bacula_sd_conf', 'debian-9.6.7')
PUBLISHED = os.path.join(FIXTURES, 'bareos', 'published')
USAGE = 'bacula_sd/bacula-sd_usage__debian-bacula-sd-9.6.7-7__1.txt:stderr'


@pytest.fixture
def no_sbin(monkeypatch):
    """Only PATH is searched for the daemons (the test machine may have them in /usr/sbin)."""
    monkeypatch.setattr(_cli, 'SBIN_DIRS', ())


def test_bacula_reads_the_packaged_file_its_include_and_the_installed_daemons_version(tmp_path, monkeypatch, no_sbin):
    scripted_tools(tmp_path, monkeypatch, {'bacula-sd': [('-?', USAGE, 1)]})
    etc = tmp_path / 'etc'
    etc.mkdir()
    conf = etc / 'bacula-sd.conf'
    lto4 = os.path.join(DEBIAN, 'LTO-4.conf')
    with open(os.path.join(DEBIAN, 'bacula-sd.conf'), encoding='utf-8') as handle:
        conf.write_text(handle.read() + '@%s\n' % lto4)
    before = tree_state(str(etc))
    assert list(before) == ['bacula-sd.conf']
    failed, result = run_module(bacula_sd_info.main, {'software': 'bacula', 'path': str(conf)}, monkeypatch)
    assert not failed and result['changed'] is False
    assert tool_calls(tmp_path) == ['bacula-sd -?']
    assert result['version'] == '9.6.7' and result['files'] == [str(conf), lto4] and result['error'] is None
    [dev] = result['devices']
    assert (dev['name'], dev['archive_device'], dev['file'], dev['line']) == ('LTO-4', '/dev/nst0', lto4, 4)
    assert dev['maximum_file_size']['value'] == 5000000000
    assert dev['maximum_block_size']['value'] == 64512 and dev['maximum_block_size']['source'] == 'default'
    assert len(result['other_devices']) == 4
    # the result is the record, nothing more (RETURN documents the same keys: test_records)
    assert set(result) - {'changed'} == set(_records.StorageDaemonConfig().to_dict())
    assert tree_state(str(etc)) == before


def test_bareos_version_from_the_daemon_chooses_the_block_size_default(tmp_path, monkeypatch, no_sbin):
    # bareos-sd 22 and later print the version alone for --version (core/src/lib/cli.cc: CLI11's version flag)
    scripted_tools(tmp_path, monkeypatch, {'bareos-sd': [('--version', Derived(
        '23.0.1\n', 'bareos-sd --version prints kBareosVersionStrings.Full alone (core/src/lib/cli.cc '
        'set_version_flag); 23.0.1 is a Bareos release'), 0)]})
    path = os.path.join(PUBLISHED, 'tapedrive-0.conf.example')
    failed, result = run_module(bacula_sd_info.main, {'software': 'bareos', 'path': path}, monkeypatch)
    assert not failed and result['version'] == '23.0.1' and tool_calls(tmp_path) == ['bareos-sd --version']
    [dev] = result['devices']
    assert dev['maximum_block_size']['value'] == 1048576
    assert dev['maximum_file_size']['value'] == 10000000000
    # the host has no /dev/nst0 (the test machine): the Device says so rather than naming an st device
    if not os.path.exists('/dev/nst0'):
        assert dev['st'] is None and dev['device_note'] == '/dev/nst0 does not exist on this host'


def test_without_the_daemon_installed_a_version_dependent_default_is_unknown_and_daemon_version_gives_it(
        tmp_path, monkeypatch, no_sbin):
    monkeypatch.setenv('PATH', str(tmp_path))
    path = os.path.join(PUBLISHED, 'tapedrive-0.conf.example')
    failed, result = run_module(bacula_sd_info.main, {'software': 'bareos', 'path': path}, monkeypatch)
    assert not failed and result['version'] is None
    assert result['devices'][0]['maximum_block_size']['source'] == 'unknown'
    failed, result = run_module(bacula_sd_info.main, {'software': 'bareos', 'path': path,
                                                      'daemon_version': '22.1.6'}, monkeypatch)
    assert result['version'] == '22.1.6' and result['devices'][0]['maximum_block_size']['value'] == 64512
    failed, result = run_module(bacula_sd_info.main, {'software': 'bareos', 'path': path,
                                                      'daemon_version': 'latest'}, monkeypatch)
    assert failed
    assert result['msg'] == ("daemon_version 'latest' is not a version: give it as the daemon prints it, for example "
                             "9.6.7 or 23.0.1.")


def test_a_missing_configuration_is_a_result_not_a_failure(tmp_path, monkeypatch, no_sbin):
    monkeypatch.setenv('PATH', str(tmp_path))
    failed, result = run_module(bacula_sd_info.main, {'software': 'bacula', 'path': str(tmp_path / 'none.conf')},
                                monkeypatch)
    assert not failed and result['devices'] == [] and result['files'] == []
    assert result['error'] == 'Nothing was read from %s: it does not exist.' % (tmp_path / 'none.conf')


@pytest.mark.skipif(os.geteuid() != 0, reason='needs root to drop to another user')
def test_a_configuration_only_root_may_read_says_so_as_another_user():
    base = tempfile.mkdtemp(prefix='tapeops-sdconf-', dir='/tmp')
    try:
        os.chmod(base, 0o755)
        conf = os.path.join(base, 'bacula-sd.conf')
        shutil.copy(os.path.join(DEBIAN, 'bacula-sd.conf'), conf)
        os.chmod(conf, 0o640)      # as Debian installs it: root:bacula 0640
        rc, result = run_module_process('bacula_sd_info', {'software': 'bacula', 'path': conf,
                                                           'daemon_version': '9.6.7'}, user=65534)
        assert rc == 0, result
        assert result['error'] == ('Nothing was read from %s: permission denied: read it as root (become: true) '
                                   'or as the storage daemon\'s user.' % conf)
        rc, result = run_module_process('bacula_sd_info', {'software': 'bacula', 'path': conf,
                                                           'daemon_version': '9.6.7'})
        assert rc == 0 and result['error'] is None and len(result['other_devices']) == 4
    finally:
        subprocess.run(['rm', '-rf', base], check=True)
