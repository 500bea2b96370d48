# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Real Bacula in the lab: one Full job on lab-ma2 through tapeops.qualify.bacula_job_run (targets/bacula_job/).

What is real: Debian's Bacula 9.6.7 (Director, File daemon, Storage daemon, SQLite catalog) in the guest,
set up by ``lab/tapelab bacula-setup lab-ma2`` on the running lab (one guest only: the shared lab fixture starts
as fast as it did, and the other guests are left alone), the guest's source tree backed up through its own
changer to its own emulated HP Ultrium 6-SCSI, 256 KiB blocks. At the end ``lab/tapelab bacula-stop`` stops the
daemons and puts the boot cartridge back in the drive; the inventory is then what it was.

The job:
- ends OK (T, "Backup OK") at level Full, with the File daemon's files and bytes those of the guest's source tree
  (every entry, directories included; every byte of its files);
- what the st driver counted written in the whole play (the mount, the job) is what Bacula says it put on its
  new volume (``Last Volume Bytes``: the job rewrites the volume's label and writes its session from the
  beginning of a prelabelled volume), exactly; and it exceeds the job's own bytes by Bacula's own structure only:
  the rewritten label (one 1024-byte block), the session labels, each entry's attributes and MD5 digest records,
  a 12-byte header per record and a 24-byte header per block. The tolerance for that: at most 512 bytes an entry
  plus 1024 (the lab's job: 262144 bytes for 1252 entries, 209 an entry), and at least one byte an entry;
- the storage daemon's data phase is shorter than the job and its rate is what its bytes over its seconds give;
- between jobs the storage daemon holds the drive no longer (AlwaysOpen = no): the lab's other tests use it.

Before the job, the inventory names the job and the configuration qualify reads (``qualify_sd_config``), which
tapeops.qualify.bacula_sd_info reads as the guest's daemon does; check mode runs nothing. 76-131 s on a running
lab, with the machine's load (set-up 19-34 s, the play 42-58 s of which the job 22-23 s).
"""

from __future__ import annotations

import json
import os
import subprocess
import time

import pytest
import yaml

pytestmark = pytest.mark.lab

HOST = 'lab-ma2'
PLAYBOOK = 'tests/integration/targets/bacula_job/playbook.yml'
STATS = '/sys/class/scsi_tape/nst0/stats'
TAPELAB = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), 'lab', 'tapelab')


def tapelab(lab, *args, timeout=600):
    env = dict(os.environ, TAPEOPS_LAB_DIR=lab.hostvars[HOST]['tapeops_lab_run_dir'])
    return subprocess.run([TAPELAB] + list(args), env=env, capture_output=True, text=True, timeout=timeout,
                          check=False)


def hostvars(lab):
    with open(lab.inventory, encoding='utf-8') as handle:
        return yaml.safe_load(handle)['all']['children']['media_agents']['hosts'][HOST]


def st_counters(lab):
    proc = lab.run(HOST, 'for f in %s/*; do echo "$(basename $f)=$(cat $f)"; done' % STATS, timeout=30)
    assert proc.returncode == 0, proc.stderr
    return dict((k, int(v)) for k, v in (line.split('=', 1) for line in proc.stdout.split()))


@pytest.fixture(scope='module')
def bacula(lab):
    if HOST not in lab.hosts:
        pytest.skip('the lab has no %s' % HOST)
    start = time.monotonic()
    proc = tapelab(lab, 'bacula-setup', HOST)
    seconds = time.monotonic() - start
    try:
        assert proc.returncode == 0, proc.stderr
        yield {'hostvars': hostvars(lab), 'setup_seconds': seconds, 'setup_said': proc.stderr}
    finally:
        stop = tapelab(lab, 'bacula-stop', HOST)
        assert stop.returncode == 0, stop.stderr
        assert 'tapeops_bacula' not in hostvars(lab)


def test_the_inventory_names_the_guests_job_and_its_storage_daemon_configuration(bacula):
    hv = bacula['hostvars']
    assert hv['tapeops_backup'] == {'software': 'bacula'}
    assert hv['qualify_sd_config'] == '/srv/bacula/etc/bacula-sd.conf'
    job = hv['tapeops_bacula']
    assert (job['job'], job['storage'], job['pool'], job['bconsole_config']) == (
        'lab-ma2-backup', 'Library', 'LabTapes', '/srv/bacula/etc/bconsole.conf')
    # Bacula labels only scratch cartridges, and never the one the lab loads at boot (the other tests write it)
    assert job['volumes'] and set(job['volumes']) <= set(hv['tapeops_allowed_barcodes'])
    assert hv['tapeops_lab_loaded_barcode'] not in job['volumes']
    assert not set(job['volumes']) & set(hv['tapeops_lab_data_barcodes'])
    assert 'lab-ma2: Bacula set up in' in bacula['setup_said']


def test_a_full_job_writes_the_source_tree_and_baculas_structure_only(bacula, lab, tmp_path, lab_record):
    hv = bacula['hostvars']
    tree = lab.run(HOST, 'find /srv/backup-src | wc -l; find /srv/backup-src -type f -printf "%s\\n" | '
                         'awk "{s += \\$1} END {print s}"', timeout=60)
    assert tree.returncode == 0, tree.stderr
    entries, tree_bytes = (int(v) for v in tree.stdout.split())
    # a cold source, as a nightly backup reads it
    assert lab.run(HOST, 'sync; echo 3 > /proc/sys/vm/drop_caches').returncode == 0
    before = st_counters(lab)
    out = tmp_path / 'bacula-job.json'
    start = time.monotonic()
    result = lab.playbook(PLAYBOOK, limit=HOST, timeout=900, extra_vars={'bacula_job_out': str(out)})
    play_seconds = time.monotonic() - start
    after = st_counters(lab)
    assert result.rc == 0, result.stdout[-4000:] + result.stderr[-2000:]
    data = json.loads(out.read_text())

    # qualify's reader takes the guest's generated configuration as its daemon does
    sd = data['sd']
    assert (sd['config_path'], sd['not_read'], sd['error']) == (hv['qualify_sd_config'], [], None)
    assert sd['version'] == '9.6.7'
    [device] = sd['devices']
    assert (device['name'], device['archive_device'], device['st']) == ('Drive-0', '/dev/nst0', 'st0')
    assert device['maximum_block_size']['value'] == 262144

    planned = data['planned']
    assert planned['changed'] is False and planned['msg'].startswith('Check mode: would run')
    assert planned['commands'] == ['mount storage="Library" slot=%d drive=0' % hv['tapeops_bacula']['slots'][0],
                                   'run job="lab-ma2-backup" level=Full yes']

    job = data['job']
    assert job['changed'] is True and job['mount']['ok']
    assert (job['status'], job['termination'], job['level'], job['error_count'], job['messages']) == (
        'T', 'Backup OK', 'Full', 0, [])
    assert job['volumes'] == [job['mount']['volume']] and job['volumes'][0] in hv['tapeops_allowed_barcodes']
    # the File daemon read the whole tree: every entry, every byte
    assert (job['files'], job['bytes']) == (entries, tree_bytes)

    written = after['write_byte_cnt'] - before['write_byte_cnt']
    # Bacula's own count of what its blocks put on the new volume, label included, is what st wrote
    assert written == job['volume_bytes']
    # Bacula's structure: label, session labels, attributes and digests, record and block headers
    structure = written - job['bytes']
    assert entries <= structure <= 1024 + 512 * entries, structure
    assert job['sd_bytes'] > job['bytes']

    # the data phase lies within the job; its rate is the storage daemon's bytes over its whole seconds
    assert 0 < job['data_seconds'] <= job['elapsed_seconds']
    assert job['data_mb_s'] == pytest.approx(job['sd_bytes'] / job['data_seconds'] / 1e6, rel=0.002)
    assert job['rate_mb_s'] == pytest.approx(job['bytes'] / job['elapsed_seconds'] / 1e6, rel=0.002)

    # between jobs the storage daemon lets go of the drive
    held = lab.run(HOST, 'ls -l /proc/[0-9]*/fd 2>/dev/null | grep -c -e " /dev/nst0$" -e " /dev/st0$"')
    assert held.stdout.strip() == '0', held.stdout

    lab_record('bacula_job_lab_ma2', {
        'setup_seconds': round(bacula['setup_seconds'], 1), 'play_seconds': round(play_seconds, 1),
        'job_seconds': job['elapsed_seconds'], 'data_seconds': job['data_seconds'], 'data_mb_s': job['data_mb_s'],
        'rate_mb_s': job['rate_mb_s'], 'bytes': job['bytes'], 'files': job['files'], 'st_written': written,
        'structure_bytes': structure, 'volume': job['volumes'][0]})
