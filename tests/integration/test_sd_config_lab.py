# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A Bacula host on the lab: the verdict takes block size and Maximum File Size from the guest's storage daemon.

What is real: lab-ma2's emulated LTO-6 drive behind /dev/nst0, Debian's bacula-sd 9.6.7 in the guest (the
guests boot on the host's root: docs/lab.md), a storage daemon configuration that bacula-sd itself accepts
(``bacula-sd -t -c``) written into a temporary directory of the guest (its /tmp is the guest's own tmpfs; nothing
under /etc/bacula is touched), a quick qualify run of that one guest over SSH, the reports on the controller.

The configuration is a bacula-sd.conf that includes (``@``, an absolute path) a Device file whose Archive
Device is a link to /dev/nst0, as udev's /dev/tape/by-id links are (the guests run no udev), with Maximum
Block Size = 262144 and Maximum File Size = 2G. The run sets ``tapeops_backup: {software: bacula}`` and the
lab inventory gives the drive no block or segment size, so both must come from that Device: the host document
names the file and line of each, and the verdict models a synchronous file mark every 2147 MB (2G is 2^31
bytes: G is a power of 1024 in Bacula).

Profile: quick, shortened as test_qualify's (40 s source reads, 32 MB sweep steps at 256 KiB and 1 MiB, one
16 MB file-mark segment). Run lab tests under ``flock /tmp/tapeops-lab.lock`` (the lab is shared).
"""

from __future__ import annotations

import os

import pytest

import host_schema

# untimed (pytest.ini): no rate, class or time a loaded machine could change
pytestmark = [pytest.mark.lab, pytest.mark.untimed]

HOST = 'lab-ma2'
GUEST_DIR = '/tmp/tapeops-sd-config-test'
MAIN = GUEST_DIR + '/bacula-sd.conf'
DEVICE_FILE = GUEST_DIR + '/devices/lto6.conf'
LINK = GUEST_DIR + '/by-id/scsi-HU1330A002-nst'
PROFILE_OVERRIDES = {'source_seconds': 40, 'step_mb': 32, 'step_seconds': 10, 'block_sizes': ['256K', '1M'],
                     'filemark_segments_mb': [16], 'filemark_payload_mb': 32, 'poll_seconds': 3}

BACULA_SD_CONF = '''# tapeops.qualify lab test: lab-ma2's storage daemon (Debian bacula-sd 9.6.7)
Storage {
  Name = lab-ma2-sd
  WorkingDirectory = "%(dir)s/work"
  Pid Directory = "%(dir)s/work"
  SDAddress = 127.0.0.1
}

Director {
  Name = lab-dir
  Password = "tapeops-lab-test"
}

Messages {
  Name = Standard
  director = lab-dir = all
}

@%(device_file)s
''' % {'dir': GUEST_DIR, 'device_file': DEVICE_FILE}

LTO6_CONF = '''# the lab drive, through a link as /dev/tape/by-id gives one
Device {
  Name = LTO6-Drive
  Media Type = LTO-6
  Archive Device = %s
  AutomaticMount = yes
  AlwaysOpen = yes
  RemovableMedia = yes
  RandomAccess = no
  Maximum Block Size = 262144
  Maximum File Size = 2G
}
''' % LINK


def _write(lab, path, text):
    proc = lab.run(HOST, 'cat > %s' % path, input=text)
    assert proc.returncode == 0, proc.stderr


@pytest.fixture(scope='module')
def qualified(lab, tmp_path_factory):
    if HOST not in lab.hosts:
        pytest.fail('the lab must have %s, it has %s' % (HOST, ', '.join(lab.hosts)))
    nst = lab.hostvars[HOST]['tapeops_lab_drives'][0]['nst']
    assert nst == '/dev/nst0', 'the test links its Archive Device to /dev/nst0; the lab gives %s' % nst
    setup = lab.run(HOST, 'rm -rf %(d)s && mkdir -p %(d)s/work %(d)s/devices %(d)s/by-id && ln -s /dev/nst0 %(l)s'
                    % {'d': GUEST_DIR, 'l': LINK})
    assert setup.returncode == 0, setup.stderr
    _write(lab, MAIN, BACULA_SD_CONF)
    _write(lab, DEVICE_FILE, LTO6_CONF)
    try:
        # the configuration is one the storage daemon itself takes
        checked = lab.run(HOST, 'bacula-sd -t -c %s' % MAIN)
        run_dir = tmp_path_factory.mktemp('sd-config') / 'run'
        result = lab.playbook('tapeops.qualify.qualify', limit=HOST, timeout=900, extra_vars={
            'qualify_run_dir': str(run_dir), 'qualify_profile': 'quick', 'qualify_profile_overrides': PROFILE_OVERRIDES,
            'tapeops_backup': {'software': 'bacula'}, 'qualify_sd_config': MAIN})
    finally:
        lab.run(HOST, 'rm -rf %s' % GUEST_DIR)
    return {'checked': checked, 'result': result, 'run_dir': str(run_dir)}


def test_the_guests_bacula_sd_takes_the_configuration(qualified):
    checked = qualified['checked']
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_drive_is_judged_with_the_storage_daemons_block_size_and_maximum_file_size(qualified):
    result = qualified['result']
    assert result.rc == 0, result.stdout[-4000:] + result.stderr[-2000:]
    doc = host_schema.load(os.path.join(qualified['run_dir'], 'hosts', HOST + '.json'))
    # what was read in the guest: the file and its include, bacula-sd's version, the Device on the drive
    sd = doc['storage_daemon']
    assert (sd['software'], sd['config_path'], sd['files'], sd['not_read'], sd['version']) == (
        'bacula', MAIN, [MAIN, DEVICE_FILE], [], '9.6.7')
    [device] = sd['devices']
    assert (device['name'], device['archive_device'], device['device_path'], device['st']) == (
        'LTO6-Drive', LINK, '/dev/nst0', 'st0')
    [drive] = doc['drives']
    [verdict] = doc['verdicts']
    assert drive['nst'] == '/dev/nst0' and verdict['drive'] == drive['id']
    # the inventory gives neither setting: both come from the Device, its file and line named
    assert not (drive['settings'] or {}).get('block_size_bytes') and not (drive['settings'] or {}).get(
        'segment_size_mb')
    sources = drive['setting_sources']
    assert sources['block_size_bytes'] == {
        'from': 'sd_config', 'value': 262144, 'software': 'bacula', 'device': 'LTO6-Drive', 'file': DEVICE_FILE,
        'directive': 'Maximum Block Size', 'text': '262144', 'where': DEVICE_FILE + ':10', 'basis': None}
    assert sources['segment_size_mb'] == {
        'from': 'sd_config', 'value': 2147.483648, 'software': 'bacula', 'device': 'LTO6-Drive', 'file': DEVICE_FILE,
        'directive': 'Maximum File Size', 'text': '2G', 'where': DEVICE_FILE + ':11', 'basis': None}
    numbers = verdict['numbers']
    assert (numbers['block_size_bytes'], numbers['block_size_basis']) == (262144, 'sd_config')
    assert (numbers['segment_size_mb'], numbers['segment_size_basis']) == (2147.483648, 'sd_config')
    # the forecast places a synchronous mark every 2147 MB of what the backup writes
    now = verdict['forecast']['now']
    assert now['inputs']['segment_size_mb'] == 2147.483648 and now['inputs']['filemark_mode'] == 'sync'
    written_mb = now['effective_mb_s'] * now['simulated_seconds']
    assert now['filemarks'] > 0
    assert now['filemarks'] == pytest.approx(written_mb / 2147.483648, abs=1.0)
    assert ('From the Bacula storage daemon\'s configuration, Device "LTO6-Drive" (Archive Device %s) in %s: '
            'Maximum Block Size = 262144 (line 10): 256 KiB blocks; Maximum File Size = 2G (line 11): a synchronous '
            'file mark every 2147 MB.' % (LINK, DEVICE_FILE)) in verdict['reasons']
    # the fleet settings table names the file each came from
    with open(os.path.join(qualified['run_dir'], 'summary.md'), encoding='utf-8') as handle:
        summary = handle.read()
    row = next(line for line in summary.splitlines() if line.startswith('| LTO-6 /dev/nst0 | %s |' % HOST))
    assert '| 2147.48 MB (lto6.conf) | 256 KiB (lto6.conf) / ' in row
