# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Reading a storage daemon's configuration as the daemon reads it (module_utils/_config/_sd_config.py).

On real files: Debian's packaged bacula-sd.conf and device samples (bacula-common 9.6.7-7,
tests/unit/fixtures/bacula_sd_conf/README.md) and Bareos's published tape Device resources
(tests/unit/fixtures/bareos/published/README.md). Includes on trees laid out under tmp_path, each built from
those files. The Archive Devices are followed with a resolver that maps the fixtures' device paths to the st
nodes a host would have (the test machine has no tape drive).
"""

from __future__ import annotations

import os
import shutil

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._config import _sd_config as sd

from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._tape_fixtures import FIXTURES

DEBIAN = os.path.join(FIXTURES, 'bacula_sd_conf', 'debian-9.6.7')
PUBLISHED = os.path.join(FIXTURES, 'bareos', 'published')
ETC_BAREOS = os.path.join(FIXTURES, 'bareos', 'etc-bareos')
BYID = '/dev/tape/by-id/scsi-350011d00018a5f03-nst'


def nodes(mapping):
    """A resolver: the device node each Archive Device leads to on a host with these links (None: no such node)."""
    return mapping.get


ONE_DRIVE = nodes({'/dev/nst0': '/dev/nst0', '/dev/nst1': '/dev/nst1', BYID: '/dev/nst0'})


def read_text(path):
    with open(path, encoding='utf-8') as handle:
        return handle.read()


def debian_with(tmp_path, *includes):
    """Debian's packaged bacula-sd.conf with ``includes`` (lines) appended, as an administrator adds them."""
    conf = tmp_path / 'bacula-sd.conf'
    conf.write_text(read_text(os.path.join(DEBIAN, 'bacula-sd.conf')) + ''.join(line + '\n' for line in includes))
    return str(conf)


def test_debian_packaged_sample_has_four_file_devices_and_no_tape_device():
    out = sd.read_storage_daemon('bacula', os.path.join(DEBIAN, 'bacula-sd.conf'), resolve=ONE_DRIVE)
    assert out['error'] is None and out['not_read'] == [] and out['layout'] == 'file'
    assert out['files'] == [os.path.join(DEBIAN, 'bacula-sd.conf')]
    # every tape Device of the sample is commented out: what remains are the virtual autochangers' file devices
    assert out['devices'] == []
    assert [(d['name'], d['archive_device'], d['line']) for d in out['other_devices']] == [
        ('FileChgr1-Dev1', '/nonexistant/path/to/file/archive/dir', 68),
        ('FileChgr1-Dev2', '/nonexistant/path/to/file/archive/dir', 80),
        ('FileChgr2-Dev1', '/nonexistant/path/to/file/archive/dir', 102),
        ('FileChgr2-Dev2', '/nonexistant/path/to/file/archive/dir', 114)]
    assert out['working_directory'] == '/var/lib/bacula'


def test_an_absolute_include_of_debians_lto4_sample_gives_its_device_with_file_line_and_defaults(tmp_path):
    lto4 = os.path.join(DEBIAN, 'LTO-4.conf')
    conf = debian_with(tmp_path, '@%s' % lto4)
    out = sd.read_storage_daemon('bacula', conf, resolve=ONE_DRIVE, version=(9, 6, 7))
    assert out['files'] == [conf, lto4] and out['not_read'] == [] and out['version'] == '9.6.7'
    [dev] = out['devices']
    assert (dev['name'], dev['file'], dev['line'], dev['media_type']) == ('LTO-4', lto4, 4, 'LTO-4')
    assert (dev['archive_device'], dev['device_path'], dev['st'], dev['device_note']) == (
        '/dev/nst0', '/dev/nst0', 'st0', None)
    # set there: "Maximum File Size = 5GB" (GB: powers of 1000, as Bacula's size_to_uint64 reads it)
    assert dev['maximum_file_size'] == {'text': '5GB', 'value': 5000000000, 'source': 'configuration',
                                        'basis': None, 'where': '%s:12' % lto4, 'error': None}
    # not set: the documented defaults, each with its source
    block = dev['maximum_block_size']
    assert (block['value'], block['source'], block['text'], block['where']) == (64512, 'default', None, None)
    assert 'src/stored/block.h DEFAULT_BLOCK_SIZE' in block['basis']
    assert dev['minimum_block_size']['value'] == 0 and dev['minimum_block_size']['source'] == 'default'
    assert dev['maximum_concurrent_jobs']['value'] == 0 and 'reserve.c' in dev['maximum_concurrent_jobs']['basis']
    assert dev['maximum_spool_size']['value'] == 0 and 'spool.c' in dev['maximum_spool_size']['basis']
    # no Spool Directory: the Storage resource's Working Directory, read from the packaged file
    assert dev['spool_directory']['value'] == '/var/lib/bacula' and dev['spool_directory']['source'] == 'default'


def test_the_two_drive_autoloader_sample_gives_both_drives_and_survives_its_line_without_equals(tmp_path):
    sample = os.path.join(DEBIAN, 'two-drive-autoloader.conf')
    # as shipped, each Device holds "If you have smartctl, enable this, ..." without '#': no directive, no refusal
    assert 'If you have smartctl, enable this' in read_text(sample)
    out = sd.read_storage_daemon('bacula', debian_with(tmp_path, '@"%s"' % sample), resolve=ONE_DRIVE)
    assert [(d['name'], d['st'], d['maximum_file_size']['value']) for d in out['devices']] == [
        ('Drive-1', 'st0', 1000000000), ('Drive-2', 'st1', 1000000000)]
    assert out['not_read'] == []


def test_a_relative_include_is_opened_from_the_daemons_working_directory_not_the_files(tmp_path):
    # bacula-sd 9.6.7 -t -c /x/bacula-sd.conf with "@sub/dev.conf" read it only when started in /x
    (tmp_path / 'sub').mkdir()
    shutil.copy(os.path.join(DEBIAN, 'LTO-4.conf'), str(tmp_path / 'sub' / 'LTO-4.conf'))
    conf = debian_with(tmp_path, '@sub/LTO-4.conf')
    started_there = sd.read_storage_daemon('bacula', conf, relative_to=str(tmp_path), resolve=ONE_DRIVE)
    assert [d['name'] for d in started_there['devices']] == ['LTO-4'] and started_there['not_read'] == []
    from_root = sd.read_storage_daemon('bacula', conf, resolve=ONE_DRIVE)
    assert from_root['devices'] == []
    [skipped] = from_root['not_read']
    assert skipped['path'] == '/sub/LTO-4.conf' and skipped['included_from'] == '%s:336' % conf
    assert skipped['reason'] == (
        "it does not exist: the storage daemon opens a relative include from its working directory (/), not from "
        "the including file's; %s exists: give relative_to (the directory the daemon starts in) if that is the "
        "one it reads" % (tmp_path / 'sub' / 'LTO-4.conf'))


def test_includes_nest_and_a_cycle_is_read_once(tmp_path):
    lto4 = tmp_path / 'tape' / 'lto4.conf'
    lto4.parent.mkdir()
    shutil.copy(os.path.join(DEBIAN, 'LTO-4.conf'), str(lto4))
    devices = tmp_path / 'devices.conf'
    devices.write_text('# the tape drives\n@%s\n@%s\n' % (lto4, tmp_path / 'bacula-sd.conf'))
    conf = debian_with(tmp_path, '@%s' % devices)
    out = sd.read_storage_daemon('bacula', conf, resolve=ONE_DRIVE)
    assert out['files'] == [conf, str(devices), str(lto4)]
    assert [(d['name'], d['file'], d['line']) for d in out['devices']] == [('LTO-4', str(lto4), 4)]
    [cycle] = out['not_read']
    assert cycle['path'] == conf and cycle['included_from'] == '%s:3' % devices
    assert cycle['reason'] == 'an include cycle (%s -> %s -> %s): read once' % (conf, devices, conf)


def test_includes_deeper_than_the_limit_are_named_not_followed(tmp_path):
    chain = [tmp_path / ('level%02d.conf' % n) for n in range(sd.MAX_INCLUDE_DEPTH + 3)]
    for here, deeper in zip(chain, chain[1:]):
        here.write_text('@%s\n' % deeper)
    chain[-1].write_text(read_text(os.path.join(DEBIAN, 'LTO-4.conf')))
    out = sd.read_storage_daemon('bacula', str(chain[0]), resolve=ONE_DRIVE)
    assert len(out['files']) == sd.MAX_INCLUDE_DEPTH + 1 and out['devices'] == []
    [deep] = out['not_read']
    assert deep['path'] == str(chain[sd.MAX_INCLUDE_DEPTH + 1])
    assert deep['reason'] == 'includes nest deeper than %d files here' % sd.MAX_INCLUDE_DEPTH


@pytest.mark.parametrize('line, reason', [
    ('@/nonexistent/tapeops/devices.conf', 'it does not exist'),
    ('@|"sh -c \'cat /etc/bacula/devices.conf\'"',
     'a command include: it runs a program, which this read-only reader does not'),
    ('@', 'an @ with no file name after it'),
])
def test_an_include_that_cannot_be_read_is_named_with_why_and_the_rest_is_read(tmp_path, line, reason):
    out = sd.read_storage_daemon('bacula', debian_with(tmp_path, line, '@' + os.path.join(DEBIAN, 'LTO-4.conf')),
                                 resolve=ONE_DRIVE)
    assert [n['reason'] for n in out['not_read']] == [reason]
    assert [d['name'] for d in out['devices']] == ['LTO-4'] and out['error'] is None


def test_unreadable_binary_and_malformed_files_are_not_read_and_say_why(tmp_path):
    binary = tmp_path / 'binary.conf'
    binary.write_bytes(b'Device {\0\1\2')
    latin = tmp_path / 'latin1.conf'
    latin.write_bytes(read_text(os.path.join(DEBIAN, 'LTO-4.conf')).replace('LTO-4', 'LT\xd6-4').encode('latin-1'))
    broken = tmp_path / 'broken.conf'
    broken.write_text(read_text(os.path.join(DEBIAN, 'LTO-4.conf')).replace('}', ''))
    directory = tmp_path / 'a-directory.conf'
    directory.mkdir()
    conf = debian_with(tmp_path, *('@%s' % p for p in (binary, latin, broken, directory)))
    out = sd.read_storage_daemon('bacula', conf, resolve=ONE_DRIVE)
    assert [(n['path'], n['reason']) for n in out['not_read']] == [
        (str(binary), 'it holds NUL bytes: not a text file'),
        (str(latin), 'it is not UTF-8 text (byte %d), as the storage daemon reads its configuration'
         % latin.read_bytes().index(b'\xd6')),
        (str(directory), 'it is a directory, not a file'),
        (str(broken), 'the storage daemon would refuse it: a resource is missing its closing "}" (opened as '
                      '\'Device\')'),
    ]
    # the packaged file still counts: its four file devices
    assert len(out['other_devices']) == 4 and out['devices'] == []


@pytest.mark.skipif(os.geteuid() == 0, reason='root reads a file whatever its mode')
def test_a_file_without_read_permission_says_to_read_it_as_root(tmp_path):
    conf = tmp_path / 'bacula-sd.conf'
    shutil.copy(os.path.join(DEBIAN, 'bacula-sd.conf'), str(conf))
    conf.chmod(0)
    out = sd.read_storage_daemon('bacula', str(conf))
    assert out['files'] == [] and out['devices'] == []
    assert out['error'] == ('Nothing was read from %s: permission denied: read it as root (become: true) or as the '
                            'storage daemon\'s user.' % conf)


@pytest.mark.parametrize('software, path, error', [
    ('bacula', '/nonexistent/bacula-sd.conf', 'Nothing was read from /nonexistent/bacula-sd.conf: it does not exist.'),
    ('bareos', '/nonexistent/bareos', 'Nothing was read from /nonexistent/bareos: it does not exist.'),
])
def test_a_missing_configuration_is_a_result_that_says_so(software, path, error):
    out = sd.read_storage_daemon(software, path)
    assert (out['error'], out['files'], out['devices']) == (error, [], [])
    assert out['not_read'] == [{'path': path, 'reason': 'it does not exist', 'included_from': None}]


def bareos_tree(root, *devices):
    """A Bareos configuration directory: the collection's etc-bareos tree with ``devices`` in bareos-sd.d/device."""
    shutil.copytree(ETC_BAREOS, str(root))
    for name in os.listdir(str(root / 'bareos-sd.d' / 'device')):
        os.remove(str(root / 'bareos-sd.d' / 'device' / name))
    for source, name in devices:
        shutil.copy(os.path.join(PUBLISHED, source), str(root / 'bareos-sd.d' / 'device' / name))
    return root


def test_bareos_directory_layout_reads_every_resource_file_and_the_published_tape_devices(tmp_path):
    root = bareos_tree(tmp_path / 'etc-bareos', ('tapedrive-0.conf.example', 'tapedrive-0.conf'),
                       ('FC-Drive-1.conf', 'FC-Drive-1.conf'))
    # the by-id link of the manual's FC-Drive-1 leads to nst1 on this host
    out = sd.read_storage_daemon('bareos', str(root), version=(23, 0, 1),
                                 resolve=nodes({'/dev/nst0': '/dev/nst0', BYID: '/dev/nst1'}))
    assert out['layout'] == 'directory' and out['not_read'] == []
    assert [os.path.relpath(f, str(root)) for f in out['files']] == [
        'bareos-sd.d/device/FC-Drive-1.conf', 'bareos-sd.d/device/tapedrive-0.conf',
        'bareos-sd.d/director/bareos-dir.conf', 'bareos-sd.d/messages/Standard.conf',
        'bareos-sd.d/storage/bareos-sd.conf']
    fc, drive0 = out['devices']
    assert (fc['name'], fc['archive_device'], fc['device_path'], fc['st']) == ('FC-Drive-1', BYID, '/dev/nst1', 'st1')
    assert fc['maximum_block_size']['value'] == 131072 and fc['maximum_block_size']['source'] == 'configuration'
    assert fc['maximum_block_size']['where'] == '%s:11' % (root / 'bareos-sd.d' / 'device' / 'FC-Drive-1.conf')
    # tapedrive-0 sets "MaximumFileSize = 10GB" and no block size: Bareos 23's default, 1 MiB
    assert (drive0['name'], drive0['st'], drive0['media_type']) == ('tapedrive-0', 'st0', 'LTO')
    assert drive0['maximum_file_size']['value'] == 10 * 1000 ** 3
    assert drive0['maximum_block_size']['value'] == 1048576 and 'since Bareos 23.0.0' in \
        drive0['maximum_block_size']['basis']
    assert drive0['maximum_concurrent_jobs']['value'] == 1
    # the Storage resource sets no Working Directory here: the spool directory's default cannot be told
    assert drive0['spool_directory']['source'] == 'unknown' and drive0['spool_directory']['value'] is None


@pytest.mark.parametrize('version, block, jobs', [((22, 1, 6), 64512, 0), ((23, 0, 0), 1048576, 1), (None, None, None)])
def test_bareos_defaults_that_changed_in_23_follow_the_daemons_version(tmp_path, version, block, jobs):
    root = bareos_tree(tmp_path / 'etc-bareos', ('tapedrive-0.conf.example', 'tapedrive-0.conf'))
    [dev] = sd.read_storage_daemon('bareos', str(root), version=version, resolve=ONE_DRIVE)['devices']
    assert dev['maximum_block_size']['value'] == block and dev['maximum_concurrent_jobs']['value'] == jobs
    if version is None:
        assert dev['maximum_block_size']['source'] == 'unknown'
        assert dev['maximum_block_size']['basis'] == (
            "Bareos 23.0.0 raised it from 64512 to 1048576 bytes, and the storage daemon's version was not read "
            "(give it as daemon_version).")


def test_a_bareos_single_file_wins_over_its_directory_and_includes_are_globbed(tmp_path):
    root = bareos_tree(tmp_path / 'etc-bareos')
    (root / 'bareos-sd.conf').write_text('@%s/*.example\n' % PUBLISHED)
    out = sd.read_storage_daemon('bareos', str(root), version=(24, 0, 0), resolve=ONE_DRIVE)
    assert out['layout'] == 'file'
    assert out['files'] == [str(root / 'bareos-sd.conf'), os.path.join(PUBLISHED, 'autochanger-0.conf.example'),
                            os.path.join(PUBLISHED, 'tapedrive-0.conf.example')]
    assert [d['name'] for d in out['devices']] == ['tapedrive-0']


def test_an_archive_device_that_is_not_on_this_host_or_not_st_says_so():
    out = sd.read_storage_daemon('bareos', os.path.join(PUBLISHED, 'FC-Drive-1.conf'), version=(23, 0, 0),
                                 resolve=nodes({}))
    [dev] = out['devices']
    assert (dev['device_path'], dev['st'], dev['device_note']) == (None, None, '%s does not exist on this host' % BYID)
    out = sd.read_storage_daemon('bareos', os.path.join(PUBLISHED, 'FC-Drive-1.conf'), version=(23, 0, 0),
                                 resolve=nodes({BYID: '/dev/sg3'}))
    assert out['devices'][0]['device_note'] == '/dev/sg3 is not an st tape device node'


def test_a_value_the_daemon_refuses_is_kept_with_why(tmp_path):
    conf = tmp_path / 'bacula-sd.conf'
    text = read_text(os.path.join(DEBIAN, 'LTO-4.conf'))
    conf.write_text(text.replace('Maximum File Size = 5GB', 'Maximum File Size = 5 parsecs'))
    [dev] = sd.read_storage_daemon('bacula', str(conf), resolve=ONE_DRIVE)['devices']
    assert dev['maximum_file_size']['value'] is None and dev['maximum_file_size']['text'] == '5 parsecs'
    assert dev['maximum_file_size']['error'].startswith('the storage daemon would refuse it: a size must be')


@pytest.mark.parametrize('path, name', [
    ('/dev/nst0', 'st0'), ('/dev/st0', 'st0'), ('/dev/nst12a', 'st12'), ('/dev/st3l', 'st3'),
    ('/dev/sg0', None), ('/dev/nsa0', None), (None, None)])
def test_st_name_is_one_name_for_the_rewinding_non_rewinding_and_mode_nodes(path, name):
    assert sd.st_name(path) == name


def test_the_daemons_version_from_its_own_words():
    from _tape_fixtures import fixture
    # bacula-sd -? on the test machine (Debian 12 bacula-sd 9.6.7-7)
    assert sd.parse_daemon_version(fixture('bacula_sd', 'bacula-sd_usage__debian-bacula-sd-9.6.7-7__1.txt')) == (
        9, 6, 7)
    # the Bareos manual's "status storage" (Tutorial.rst), the same Version: words the usage of bareos-sd before 22
    # prints; bareos-sd 22 and later print the version alone for --version (core/src/lib/cli.cc, CLI11)
    assert sd.parse_daemon_version('bareos-sd Version: 23.0.0 (23 September 2023) GNU/Linux') == (23, 0, 0)
    assert sd.parse_daemon_version('23.0.1\n') == (23, 0, 1)
    assert sd.parse_daemon_version('bareos-sd: invalid option\n') is None
