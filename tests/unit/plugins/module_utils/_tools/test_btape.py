# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

import os
import shutil
import subprocess

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._tools._btape import (
    BtapeParseError,
    minimal_config,
    parse_speed,
    speed_command,
    summarize_speed,
)

FIX = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'fixtures', 'btape')


def _read(name):
    with open(os.path.join(FIX, name)) as handle:
        return handle.read()


def test_speed_lab_ma2_hp_ultrium6_bacula_9_6_7():
    """Recorded here: Debian btape 9.6.7 on the lab's HP Ultrium 6-SCSI (tgt), 1 MiB blocks."""
    parsed = parse_speed(_read('btape_speed__HP-Ultrium6-SCSI-lab-ma2-tgt-1048576B-enospc__1.txt'))
    assert parsed['granularity'] == 1024
    assert (parsed['device_name'], parsed['device']) == ('Drive-0', '/dev/nst0')
    zero, random = parsed['tests']
    assert (zero['data'], zero['structure'], zero['block_size'], zero['files']) == ('zero', 'block', 1048576, 1)
    assert zero['file_bytes'] == 1073000000
    assert zero['file_rates_mb_s'] == [11.3] and zero['total_rate_mb_s'] == 11.3
    assert zero['errors'] == []
    assert (random['data'], random['structure'], random['total_rate_mb_s']) == ('random', 'block', 14.7)
    # The end of the small lab cartridge: the file mark after the random file failed.
    assert len(random['errors']) == 1 and 'No space left on device' in random['errors'][0]
    assert parsed['errors'] == random['errors']
    assert summarize_speed(parsed) == {'zero_block_mb_s': 11.3, 'random_block_mb_s': 14.7}


def test_speed_bareos_manual_drive_0():
    """The Bareos manual's example (with its '...' elisions): 3 files of 3.221 GB, 129024-byte blocks."""
    parsed = parse_speed(_read('doc_btape_speed__bareos-manual-Drive-0__1.txt'))
    zero, random = parsed['tests']
    assert (zero['structure'], zero['block_size'], zero['files'], zero['file_bytes']) == \
        ('block', 129024, 3, 3221000000)
    assert zero['file_rates_mb_s'] == [44.128]
    assert zero['total_rate_mb_s'] == 43.531 and zero['total_bytes'] == 9664000000
    assert (random['data'], random['structure'], random['total_rate_mb_s']) == ('random', 'block', 7.365)
    assert parsed['granularity'] is None


def test_speed_rejects_other_output():
    with pytest.raises(BtapeParseError, match='not btape speed output'):
        parse_speed(_read('btape_fill__IBM-ULTRIUM-TD3-FreeBSD-64512B-1G-filemarks__1.txt'))


@pytest.mark.parametrize('args, command', [
    ({}, 'speed file_size=1 nb_file=1 skip_raw skip_random'),
    ({'file_size_gb': 3, 'nb_file': 2, 'tests': ('zero_block', 'random_block')}, 'speed file_size=3 nb_file=2 skip_raw'),
    ({'tests': ('zero_raw',)}, 'speed file_size=1 nb_file=1 skip_block skip_random'),
])
def test_speed_command(args, command):
    assert speed_command(**args) == command


@pytest.mark.parametrize('args, words', [
    ({'file_size_gb': 0}, 'file_size_gb must be'),
    ({'nb_file': 1000}, 'nb_file must be'),
    ({'tests': ('fast',)}, 'tests must be'),
])
def test_speed_command_rejects(args, words):
    with pytest.raises(ValueError, match=words):
        speed_command(**args)


@pytest.mark.skipif(shutil.which('bacula-sd', path=os.environ.get('PATH', '') + ':/usr/sbin') is None,
                    reason='bacula-sd is not installed')
def test_minimal_config_passes_bacula_sd_test(tmp_path):
    path = tmp_path / 'btape.conf'
    path.write_text(minimal_config('/dev/nst0', 1048576, str(tmp_path)))
    sd = shutil.which('bacula-sd', path=os.environ.get('PATH', '') + ':/usr/sbin')
    proc = subprocess.run([sd, '-t', '-c', str(path)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize('device, block', [('nst0', 1048576), ('/dev/nst0; rm', 1048576), ('/dev/nst0', 1000)])
def test_minimal_config_rejects(device, block):
    with pytest.raises(ValueError):
        minimal_config(device, block, '/tmp')


def test_speed_cut_before_the_total_is_incomplete():
    text = _read('btape_speed__HP-Ultrium6-SCSI-lab-ma2-tgt-1048576B-enospc__1.txt')
    cut = text[:text.index('Total Write rate')]
    parsed = parse_speed(cut)
    assert parsed['complete'] is False and parsed['tests'][0]['total_rate_mb_s'] is None
    assert 'Total Write rate' in parsed['warnings'][0]
    assert parse_speed(text)['complete'] is True


def test_numbers_that_are_not_numbers_are_not_read():
    parsed = parse_speed('Test with zero data, should give the maximum throughput.\n'
                         'Total Volume bytes=1..0 GB. Total Write rate = 1..5 MB/s\n')
    assert parsed['tests'][0]['total_rate_mb_s'] is None
