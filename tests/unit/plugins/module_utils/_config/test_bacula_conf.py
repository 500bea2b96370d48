# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

import os

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._config._bacula_conf import (
    BaculaConfError,
    check_settings,
    devices,
    parse_resources,
    parse_size,
    set_directives,
)

HERE = os.path.dirname(__file__)
DEBIAN = os.path.join(HERE, '..', '..', '..', '..', 'integration', 'targets', 'role_bacula_sd', 'files', 'bacula-sd.conf')
BAREOS = os.path.join(HERE, '..', '..', '..', 'fixtures', 'bareos', 'etc-bareos', 'bareos-sd.d')


def _read(path):
    with open(path) as handle:
        return handle.read()


def test_debian_packaged_config_resources():
    res = parse_resources(_read(DEBIAN))
    assert [r.type for r in res] == ['Storage', 'Director', 'Director', 'Autochanger', 'Device', 'Device',
                                     'Autochanger', 'Device', 'Device', 'Device', 'Messages']
    tape = [d for d in devices(_read(DEBIAN)) if d['tape']]
    assert [(d['name'], d['archive_device']) for d in tape] == [('LTO-3', '/dev/nst0')]
    # File devices of the packaged autochangers are not tape devices.
    assert len([d for d in devices(_read(DEBIAN)) if not d['tape']]) == 4


def test_debian_config_set_block_and_file_size_only_touches_tape_device():
    text = _read(DEBIAN)
    new, changes = set_directives(text, {'Maximum Block Size': 1048576, 'Maximum File Size': '50G'})
    assert {(c['device'], c['directive'], c['before'], c['after']) for c in changes} == {
        ('LTO-3', 'Maximum Block Size', None, '1048576'),
        ('LTO-3', 'Maximum File Size', '4GB', '50G'),
    }
    old_lines, new_lines = text.splitlines(), new.splitlines()
    # One line changed in place, one added; all comments kept.
    assert len(new_lines) == len(old_lines) + 1
    assert '  Maximum File Size = 50G' in new_lines
    idx = new_lines.index('  Maximum Block Size = 1048576')
    assert new_lines[idx + 1] == '}'
    assert [line for line in old_lines if line.lstrip().startswith('#')] == \
        [line for line in new_lines if line.lstrip().startswith('#')]
    again, changes2 = set_directives(new, {'Maximum Block Size': 1048576, 'Maximum File Size': 53687091200})
    assert changes2 == [] and again == new


def test_bareos_layout_semicolon_line_and_camel_case_keywords():
    text = _read(os.path.join(BAREOS, 'device', 'Tape-0.conf'))
    new, changes = set_directives(text, {'Maximum Block Size': 1048576, 'Maximum File Size': 200 * 1000 ** 3})
    assert '  MaximumBlockSize = 1048576; MaximumConcurrentJobs = 1' in new.splitlines()
    assert '  MaximumFileSize = 200000000000              # default: 1000000000 (1GB)' in new.splitlines()
    assert {c['directive']: c['before'] for c in changes} == {'Maximum Block Size': '262144',
                                                              'Maximum File Size': '10GB'}
    assert changes[0]['device'] == 'Tape-0'


def test_bareos_file_device_is_left_alone():
    text = _read(os.path.join(BAREOS, 'device', 'FileStorage.conf'))
    new, changes = set_directives(text, {'Maximum Block Size': 1048576})
    assert changes == [] and new == text


def test_brace_on_directive_line_gets_insertion_before_it():
    new, dummy = set_directives('Device { Name = d; Archive Device = /dev/nst1 }\n', {'Maximum Block Size': 524288})
    assert new == 'Device { Name = d; Archive Device = /dev/nst1 \n  Maximum Block Size = 524288\n}\n'
    assert devices(new)[0]['directives']['Maximum Block Size'] == '524288'


@pytest.mark.parametrize('text, value', [
    ('64512', 64512), ('1G', 1024 ** 3), ('1 gb', 1000 ** 3), ('"50GB"', 50 * 1000 ** 3), ('4k', 4096),
])
def test_parse_size(text, value):
    assert parse_size(text) == value


@pytest.mark.parametrize('text', ['-5', '1Q', 'lots', ''])
def test_parse_size_rejects(text):
    with pytest.raises(BaculaConfError, match='for example 1048576 or 50G'):
        parse_size(text)


@pytest.mark.parametrize('settings, hba, words', [
    ({'Maximum Block Size': 1000000}, None, 'not a multiple of 1024 bytes.*use 999424 or 1000448'),
    ({'Maximum Block Size': 2097152}, 1048576, 'larger than the HBA path can carry.*use 1048576 or less'),
    ({'Maximum Block Size': 25165824}, None, 'above the storage daemon maximum 20000000'),
    ({'Maximum File Size': '-1G'}, None, 'for example 1048576 or 50G'),
    ({'Maximum File Size': '100m'}, None, 'below 1 GB.*use 50G or more'),
    ({'Maximum File Size': '5T'}, None, 'absurd'),
    ({'Maximum Block Size': 65536, 'Minimum Block Size': 131072}, None, 'larger than Maximum Block Size'),
])
def test_check_settings_rejects_with_what_to_set(settings, hba, words):
    with pytest.raises(BaculaConfError, match=words):
        check_settings(settings, hba)


def test_check_settings_granularity_and_normalises():
    assert check_settings({'Maximum Block Size': 1048576, 'Maximum File Size': '50G', 'Spool Directory': None}) == {
        'Maximum Block Size': 1048576, 'Maximum File Size': 50 * 1024 ** 3, 'Spool Directory': None}
    with pytest.raises(BaculaConfError, match='multiple of 4096'):
        check_settings({'Maximum Block Size': 1024 * 1025}, granularity=4096)


@pytest.mark.parametrize('text, words', [
    ('Device {\n  Name = x\n', 'missing its closing'),
    ('}\n', 'unbalanced'),
    ('Device {\n  Name = "x\n}\n', 'unterminated'),
])
def test_malformed_config(text, words):
    with pytest.raises(BaculaConfError, match=words):
        parse_resources(text)
