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

btape (the profile's ``btape``): after the sweep, the guest's own btape (Bacula 9.6.7) writes 1 GB of random data
in Bacula's block structure at the Device's 262144-byte blocks on the same allowed cartridge. The host document
keeps its test and the verdict sets its rate against the sweep's at 256 KiB; whether they differ by more than 15 %
(a finding) is checked against the document's own two rates, as the rates depend on the machine's load.

Profile: quick, shortened further than test_qualify's (a 15 s source read, the 10 per-second samples a verdict
needs and a few more; 32 MB sweep steps at 256 KiB only, the Device's block size, the one row btape is set against;
one 16 MB file-mark segment; btape 1 GB). Run lab tests under ``flock /tmp/tapeops-lab.lock`` (the lab is shared).
"""

from __future__ import annotations

import os

import pytest

import host_schema

from ansible_collections.tapeops.qualify.plugins.module_utils import _words

# untimed (pytest.ini): no rate, class or time a loaded machine could change
pytestmark = [pytest.mark.lab, pytest.mark.untimed]

HOST = 'lab-ma2'
GUEST_DIR = '/tmp/tapeops-sd-config-test'
MAIN = GUEST_DIR + '/bacula-sd.conf'
DEVICE_FILE = GUEST_DIR + '/devices/lto6.conf'
LINK = GUEST_DIR + '/by-id/scsi-HU1330A002-nst'
PROFILE_OVERRIDES = {'source_seconds': 15, 'step_mb': 32, 'step_seconds': 10, 'block_sizes': ['256K'],
                     'filemark_segments_mb': [16], 'filemark_payload_mb': 32, 'poll_seconds': 3,
                     'btape': True, 'btape_file_gb': 1}

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


def test_btape_writes_at_the_storage_daemons_block_size_and_is_set_against_the_sweep(qualified):
    result = qualified['result']
    assert result.rc == 0, result.stdout[-4000:] + result.stderr[-2000:]
    doc = host_schema.load(os.path.join(qualified['run_dir'], 'hosts', HOST + '.json'))
    [drive] = doc['drives']
    [verdict] = doc['verdicts']
    btape = drive['btape']
    assert btape.get('reason') is None and btape['write_allowed_because'], btape
    assert btape['command'] == 'speed file_size=1 nb_file=1 skip_raw skip_zero', btape
    [test] = btape['tests']
    # the Device's Maximum Block Size, random data in Bacula's block structure, one file of 1 GB (10^9-based)
    assert (test['data'], test['structure'], test['block_size'], test['files']) == ('random', 'block', 262144, 1)
    assert test['total_bytes'] >= 1e9 and test['total_rate_mb_s'] > 0, test
    # the sweep's rate at 256 KiB of random data, measured in the same run
    [sweep_mb_s] = [row['mb_s'] for row in drive['write_sweep']['sweep']
                    if row['pattern'] == 'random' and row['block_size'] == 262144]
    delta = (test['total_rate_mb_s'] - sweep_mb_s) / sweep_mb_s * 100.0
    [said] = [r for r in verdict['reasons'] if r.startswith('btape (')]
    assert said.startswith("btape (the storage daemon's own writer) wrote random data in its block structure with "
                           '256 KiB blocks at %s' % _words.fmt_rate(test['total_rate_mb_s'])), said
    assert "the write sweep's drive path there is %s (measured): btape is %.0f %% %s." % (
        _words.fmt_rate(sweep_mb_s), abs(delta), 'faster' if delta > 0 else 'slower') in said, said
    disagrees = [f for f in verdict['findings'] if f['id'] == 'btape_disagrees']
    assert bool(disagrees) == (abs(delta) > 15.0), (delta, disagrees)
