# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Reading a NetBackup media server's buffer files as bptm reads them (module_utils/_config/_netbackup.py).

On the files as published sources write them (tests/unit/fixtures/netbackup/README.md: Veritas articles
100000498 and 183702, the Tuning Guide's example, a tuning article's echo and more, a public Puppet module's
file resources), laid out under tmp_path as /usr/openv/netbackup holds them. Bad input (no published capture
exists: an empty file, words, byte-order marks as Windows editors save them, UTF-16, a non-breaking space
pasted from a web page, NUL bytes) is built here, byte for byte, and must give a clear error, never a traceback.
"""

from __future__ import annotations

import glob
import os

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils import _records
from ansible_collections.tapeops.qualify.plugins.module_utils._config import _netbackup as nb

from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._tape_fixtures import FIXTURES

HERE = os.path.join(FIXTURES, 'netbackup')


def body(name):
    """The file's bytes: the fixture after its three '# ' source lines, to the end (no line end added)."""
    with open(os.path.join(HERE, name), 'rb') as handle:
        data = handle.read()
    lines = data.split(b'\n', 3)
    assert [line[:2] for line in lines[:3]] == [b'# '] * 3, '%s lost its source header' % name
    return lines[3]


def key_of(name):
    return dict((n, k) for k, n, dummy, dummy2 in nb.SETTINGS)[name.split('__')[0]]


def lay_out(root, files):
    """A NetBackup directory under ``root`` with ``files`` ({NAME: bytes}) where bptm looks for them."""
    netbackup = root / 'usr' / 'openv' / 'netbackup'
    (netbackup / 'db' / 'config').mkdir(parents=True)
    for name, data in files.items():
        with open(nb.file_path(key_of(name), str(netbackup)), 'wb') as handle:
            handle.write(data)
    return str(netbackup)


# (fixture, the number bptm uses, the note)
PUBLISHED = [
    ('SIZE_DATA_BUFFERS__puppet-netbackup-tune__1.txt', 262144, None),
    ('NUMBER_DATA_BUFFERS__puppet-netbackup-tune__1.txt', 256, None),
    ('NET_BUFFER_SZ__puppet-netbackup-tune__1.txt', 0, 'the operating system tunes the socket buffer'),
    ('NET_BUFFER_SZ__veritas-100000498-256k__1.txt', 262144, None),
    ('NET_BUFFER_SZ__veritas-100000498-zero__1.txt', 0, 'the operating system tunes the socket buffer'),
    ('NET_BUFFER_SZ__veritas-183702-64k__1.txt', 65536, None),
    ('SIZE_DATA_BUFFERS__segmentfault-1190000038510005__1.txt', 262144, None),
    ('NUMBER_DATA_BUFFERS__segmentfault-1190000038510005__1.txt', 16, None),
    ('SIZE_DATA_BUFFERS__tuning-guide-262656__1.txt', 262144, '262656 is not a multiple of 1024: NetBackup rounds it '
                                                              'down and uses 262144'),
]


def test_every_fixture_is_in_the_table():
    assert sorted(os.path.basename(p) for p in glob.glob(os.path.join(HERE, '*.txt'))) == sorted(
        name for name, dummy, dummy2 in PUBLISHED)


@pytest.mark.parametrize('name, value, note', PUBLISHED, ids=[p[0] for p in PUBLISHED])
def test_a_published_file_gives_the_number_bptm_uses(name, value, note):
    data = body(name)
    parsed = nb.parse_value(key_of(name), data)
    assert parsed['error'] is None and parsed['value'] == value
    assert parsed['text'] == data.decode('ascii').strip()
    if note is None:
        assert parsed['note'] is None
    else:
        assert note in parsed['note']


def test_puppet_writes_no_line_end_and_echo_writes_one_and_both_read_the_same():
    puppet = body('SIZE_DATA_BUFFERS__puppet-netbackup-tune__1.txt')
    echoed = body('SIZE_DATA_BUFFERS__segmentfault-1190000038510005__1.txt')
    assert (puppet, echoed) == (b'262144', b'262144\n')
    assert nb.parse_value('size_data_buffers', puppet) == nb.parse_value('size_data_buffers', echoed)


def test_a_media_server_laid_out_from_the_published_files(tmp_path):
    root = lay_out(tmp_path, {
        'SIZE_DATA_BUFFERS': body('SIZE_DATA_BUFFERS__puppet-netbackup-tune__1.txt'),
        'NUMBER_DATA_BUFFERS': body('NUMBER_DATA_BUFFERS__puppet-netbackup-tune__1.txt'),
        'NET_BUFFER_SZ': body('NET_BUFFER_SZ__veritas-100000498-zero__1.txt')})
    out = nb.read_buffers(root)
    assert out['error'] is None and out['config_dir'] == os.path.join(root, 'db', 'config')
    assert out['size_data_buffers'] == {
        'name': 'SIZE_DATA_BUFFERS', 'path': os.path.join(root, 'db', 'config', 'SIZE_DATA_BUFFERS'),
        'text': '262144', 'value': 262144, 'source': 'configuration', 'basis': None, 'error': None, 'note': None}
    assert (out['number_data_buffers']['value'], out['number_data_buffers']['source']) == (256, 'configuration')
    # NET_BUFFER_SZ lives in the NetBackup directory itself, not in db/config
    assert out['net_buffer_sz']['path'] == os.path.join(root, 'NET_BUFFER_SZ')
    assert out['net_buffer_sz']['value'] == 0
    # no NUMBER_DATA_BUFFERS_RESTORE: its default is not verified, so it is unknown, and the basis says why
    restore = out['number_data_buffers_restore']
    assert (restore['value'], restore['source'], restore['text']) == (None, 'unknown', None)
    assert restore['basis'].startswith('not verified')
    # the record keeps exactly this
    assert _records.NetBackupBuffers.from_dict(out).to_dict() == out


def test_no_files_are_netbackups_documented_defaults_with_their_source(tmp_path):
    out = nb.read_buffers(lay_out(tmp_path, {}))
    size = out['size_data_buffers']
    assert (size['value'], size['source'], size['text'], size['error']) == (65536, 'default', None, None)
    assert 'Default size of shared data buffers' in size['basis'] and '64K for tape on Linux/UNIX' in size['basis']
    for key in ('number_data_buffers', 'number_data_buffers_restore', 'net_buffer_sz'):
        assert (out[key]['value'], out[key]['source']) == (None, 'unknown'), key
    assert 'derived from the NetBackup data buffer size' in out['net_buffer_sz']['basis']
    assert 'which deleting the file is not' in out['net_buffer_sz']['basis']


def test_no_netbackup_directory_is_an_error_and_no_settings(tmp_path):
    out = nb.read_buffers(str(tmp_path / 'none'))
    assert out['error'] == ('%s does not exist: NetBackup does not seem to be installed here; give the NetBackup '
                            'directory of this media server (qualify_netbackup_dir).' % (tmp_path / 'none'))
    assert [out[key] for key, dummy, dummy2, dummy3 in nb.SETTINGS] == [None] * 4


# (setting, bytes as found on a host, words the error holds)
BAD = [
    ('size_data_buffers', b'', 'it is empty; write the number alone: echo 262144 > SIZE_DATA_BUFFERS, or delete it'),
    ('size_data_buffers', b'\n', 'it is empty'),
    ('number_data_buffers', b'lots\n', "'lots' is not a number: NetBackup takes a whole number of buffers"),
    ('size_data_buffers', b'262144 # 256 KiB blocks\n',
     "it holds 5 words ('262144', '#', '256', 'KiB', ...), not one number"),
    ('size_data_buffers', b'262144\n262144\n', 'it holds 2 words'),
    ('size_data_buffers', b'256K\n', "'256K' is not a number"),
    ('size_data_buffers', b'0x40000\n', "'0x40000' is not a decimal number"),
    ('net_buffer_sz', b'-65536\n', "'-65536' is a negative number: NetBackup takes a whole number of bytes"),
    ('number_data_buffers', b'1e3\n', "'1e3' is not a decimal number"),
    ('size_data_buffers', b'1000\n', '1000 bytes is less than 1024: NetBackup rounds the size down'),
    ('number_data_buffers', b'0\n', '0 buffers: bptm needs at least one; write the number alone: echo 64 >'),
    # Notepad's "Unicode" (UTF-16LE with a byte-order mark) and its "UTF-8" (with one), CRLF
    ('size_data_buffers', '\ufeff262144\r\n'.encode('utf-16-le'), 'it is UTF-16 text (a byte-order mark FF FE'),
    ('size_data_buffers', '\ufeff262144\r\n'.encode('utf-16-be'), 'a byte-order mark FE FF'),
    ('size_data_buffers', b'\xef\xbb\xbf262144\r\n', 'it starts with a UTF-8 byte-order mark (EF BB BF'),
    # a number copied from a web page with a non-breaking space as the thousands separator
    ('size_data_buffers', '262\u00a0144\n'.encode('utf-8'), 'a byte that is not ASCII (0xC2 at byte 3)'),
    ('size_data_buffers', '262\u00a0144\n'.encode('latin-1'), 'a byte that is not ASCII (0xA0 at byte 3)'),
    ('size_data_buffers', b'\0' * 16, 'it holds NUL bytes: not a text file'),
    ('size_data_buffers', b'1' * 5000, 'it holds 5000 bytes, more than one number'),
]


@pytest.mark.parametrize('key, data, words', BAD, ids=[repr(b[1][:12]) for b in BAD])
def test_what_bptm_would_not_take_is_an_error_saying_what_to_write(key, data, words):
    parsed = nb.parse_value(key, data)
    assert parsed['value'] is None
    assert words in parsed['error'], parsed['error']
    assert parsed['error'].rstrip('.').endswith(('> %s' % nb.NAMES[key], 'for the default'))


def test_crlf_and_spaces_around_the_number_are_what_editors_leave():
    for data in (b'262144\r\n', b'  262144  \n', b'\t262144', b'0262144\n'):
        assert nb.parse_value('size_data_buffers', data)['value'] == 262144, data


def test_a_bad_file_on_the_host_is_a_setting_with_its_path_in_the_error(tmp_path):
    root = lay_out(tmp_path, {'SIZE_DATA_BUFFERS': '\ufeff262144\r\n'.encode('utf-16-le'),
                              'NUMBER_DATA_BUFFERS': b''})
    (tmp_path / 'usr' / 'openv' / 'netbackup' / 'NET_BUFFER_SZ').mkdir()
    out = nb.read_buffers(root)
    size = out['size_data_buffers']
    assert (size['source'], size['value'], size['text']) == ('configuration', None, None)
    assert size['error'].startswith('%s: it is UTF-16 text' % size['path'])
    assert out['number_data_buffers']['error'].startswith('%s: it is empty' % out['number_data_buffers']['path'])
    assert out['net_buffer_sz']['error'] == ('%s is not a regular file (a directory): NetBackup reads a file holding '
                                             'one number.' % out['net_buffer_sz']['path'])


def test_a_file_that_cannot_be_read_says_to_read_it_as_root(tmp_path, monkeypatch):
    root = lay_out(tmp_path, {'SIZE_DATA_BUFFERS': b'262144\n'})

    def denied(path, *args, **kwargs):
        # what open() raises for a user other than root on the 0600 root-owned file (the tests run as root,
        # whom the mode does not stop)
        raise PermissionError(13, 'Permission denied', path)
    monkeypatch.setattr(nb, 'open', denied, raising=False)
    size = nb.read_buffers(root)['size_data_buffers']
    assert size['value'] is None and 'permission denied: read it as root (become: true)' in size['error']


@pytest.mark.parametrize('key, value, words', [
    ('size_data_buffers', 262656, 'not a multiple of 1024 bytes of at least 1024: NetBackup would round it down to '
                                  '262144'),
    ('size_data_buffers', 512, 'would round it down to 0'),
    ('size_data_buffers', True, 'must be a whole number'),
    ('number_data_buffers', 0, 'bptm needs at least one buffer'),
    ('net_buffer_sz', -1, 'or 0 to let the operating system tune it'),
])
def test_a_value_that_cannot_be_written_says_why(key, value, words):
    assert words in nb.validate(key, value)


def test_a_block_size_the_hba_path_cannot_carry_is_refused_with_the_largest_that_fits():
    assert nb.validate('size_data_buffers', 1048576, hba_max_transfer_bytes=1310720) is None
    assert nb.validate('size_data_buffers', 2097152, hba_max_transfer_bytes=1310720) == (
        'SIZE_DATA_BUFFERS = 2097152 is larger than the HBA path can carry in one transfer (1310720 bytes, see the '
        'st_tuning preflight facts): bptm\'s writes of that size would fail; use 1310720 or less, or raise the limit '
        'the preflight names.')
    assert nb.validate('net_buffer_sz', 0) is None and nb.validate('number_data_buffers', 256) is None


def test_what_is_written_reads_back_as_the_same_number():
    for key, value in (('size_data_buffers', 262144), ('number_data_buffers', 128), ('net_buffer_sz', 0)):
        text = nb.file_text(value)
        assert text == '%d\n' % value
        assert nb.parse_value(key, text.encode('ascii'))['value'] == value
