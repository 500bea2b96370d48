# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The upgrade check's media section on the lab: what an LTO-9 full-height drive strands.

What is real: each guest's SCSI medium changer (the lab's STK L700 behind the
kernel's ch/sg drivers), its READ ELEMENT STATUS with barcodes as ``mtx``
prints it, the drive's ``mt status``, the SSH connections and the reports on
the controller. Each guest's changer holds its own generation's cartridges
(docs/lab.md): lab-ma1 L5, lab-ma2 L6, lab-ma3 L8, one of them in the drive.

``upgrade_check -e qualify_target_generation='LTO-9 FH'`` must list every LTO-5 and
LTO-6 cartridge as stranded, with the slot or drive it sits in, the migration
estimate with its assumptions and an old drive to keep, and every LTO-8
cartridge as one the LTO-9 writes. The cartridges are compared with the
guest's own ``mtx status`` read in the test. Nothing may move and nothing may
be written: the changer's listing and the drive's st write counters are the
same before and after.

The source read is held to 5 s (``qualify_profile_overrides.source_seconds``):
the sources are not what this test is about.

Run on a private lab: TAPEOPS_LAB_DIR=/var/tmp/tapeops-lab-media TAPEOPS_LAB_PORT_BASE=2310.
"""

from __future__ import annotations

import os
import re
import time

import pytest

import host_schema

from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _drive_model

# untimed (pytest.ini): no rate, class or time a loaded machine could change
pytestmark = [pytest.mark.lab, pytest.mark.untimed]

GENERATION = {'L5': 5, 'L6': 6, 'L8': 8}


def _mtx_status(lab, host):
    changer = lab.hostvars[host]['tapeops_lab_changer']['sg']
    proc = lab.run(host, 'mtx -f %s status' % changer, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _write_counters(lab, host):
    proc = lab.run(host, 'cat /sys/class/scsi_tape/nst0/stats/write_cnt /sys/class/scsi_tape/nst0/stats/write_byte_cnt',
                   timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def _where(text):
    """{barcode: 'slot N' / 'drive N'} from the guest's own mtx status (read here, not by the collection)."""
    out = {}
    for line in text.splitlines():
        match = re.match(r'^\s*Data Transfer Element (\d+):Full.*VolumeTag\s*=\s*(\S+)', line)
        if match:
            out[match.group(2)] = 'drive %s' % match.group(1)
        match = re.match(r'^\s*Storage Element (\d+):Full\s*:VolumeTag=(\S+)', line)
        if match:
            out[match.group(2)] = 'slot %s' % match.group(1)
    return out


@pytest.fixture(scope='module')
def upgrade(lab, tmp_path_factory):
    before = dict((h, (_mtx_status(lab, h), _write_counters(lab, h))) for h in lab.hosts)
    run_dir = tmp_path_factory.mktemp('upgrade-media') / 'run'
    started = time.monotonic()
    result = lab.playbook('tapeops.qualify.upgrade_check', extra_vars={
        'qualify_run_dir': str(run_dir), 'qualify_target_generation': 'LTO-9 FH', 'qualify_target_vendor': 'IBM',
        'qualify_profile_overrides': {'source_seconds': 5}, 'qualify_verdict_options': {'tape_ratio': 1.0},
        'tapeops_sources': ['/srv/backup-src/large']}, timeout=900)
    seconds = time.monotonic() - started
    after = dict((h, (_mtx_status(lab, h), _write_counters(lab, h))) for h in lab.hosts)
    docs = {}
    for host in lab.hosts:
        path = os.path.join(str(run_dir), 'hosts', host + '.json')
        if os.path.exists(path):
            docs[host] = host_schema.load(path)
    return {'result': result, 'run_dir': str(run_dir), 'before': before, 'after': after, 'docs': docs,
            'seconds': seconds}


def test_the_run_moves_and_writes_nothing(upgrade, lab):
    assert upgrade['result'].rc == 0, upgrade['result'].stdout[-4000:]
    for host in lab.hosts:
        assert upgrade['after'][host] == upgrade['before'][host], host


def test_older_cartridges_are_stranded_with_their_slots_and_lto8_is_writable(upgrade, lab):
    assert upgrade['result'].rc == 0, upgrade['result'].stdout[-4000:]
    target = _drive_model.lookup(9, 'FH', 'IBM')
    seen = set()
    for host in lab.hosts:
        media = upgrade['docs'][host]['media']
        assert media['status'] == 'ok', media
        assert media['target']['label'] == 'LTO-9 FH'
        changer = lab.hostvars[host]['tapeops_lab_changer']['sg']
        (lib,) = [lib for lib in media['libraries'] if lib['id'] == changer]
        assert lib['error'] is None and lib['complete'] is True
        where = _where(upgrade['before'][host][0])
        barcodes = list(lab.hostvars[host]['tapeops_lab_barcodes'])
        assert sorted(where) == sorted(barcodes), (host, where)
        suffixes = set(b[-2:] for b in barcodes)
        assert len(suffixes) == 1, barcodes
        suffix = suffixes.pop()
        seen.add(suffix)
        assert lib['by_generation'] == {suffix: len(barcodes)}
        if GENERATION[suffix] < 8:
            # LTO-9 reads and writes L9 and L8 only: L5 and L6 are stranded
            assert lib['counts']['stranded'] == len(barcodes) and lib['counts']['write'] == 0
            assert dict((r['barcode'], r['where']) for r in lib['stranded']) == where
            assert lib['capacity_gb']['stranded'] == len(barcodes) * _drive_model.lookup(GENERATION[suffix]) \
                .native_capacity_gb
            keep = lib['keep_old_drive']
            assert keep['required'] is True and GENERATION[suffix] in keep['readers']
            mig = lib['migration']
            # the estimate, by hand: each cartridge's data at its generation's native rate plus its drive's
            # load + rewind + unload (drive model), one old drive kept. The data: what the loaded cartridge's
            # memory says is on it (MAM maximum less remaining), the others full.
            old = _drive_model.lookup(GENERATION[suffix])
            gbs = [r['written_gb'] if r.get('written_gb') is not None else old.native_capacity_gb
                   for r in lib['stranded']]
            hours = sum(gb * 1000.0 / old.native_mb_s + old.load_s + old.rewind_s + old.unload_s
                        for gb in gbs) / 3600.0
            assert mig['hours'] == pytest.approx(hours, abs=0.01)
            assert mig.get('from_memory', 0) == sum(r.get('written_gb') is not None for r in lib['stranded'])
            assert mig['drives_kept'] == 1 and mig['fill_fraction'] == 1.0
            assert any('100 % full' in a for a in mig['assumptions'])
            assert any('not measured' in a for a in mig['assumptions'])
        else:
            assert lib['counts']['write'] == len(barcodes) and lib['counts']['stranded'] == 0
            assert lib['migration'] is None and lib['keep_old_drive']['required'] is False
            assert suffix in target.writes
    assert {'L5', 'L6'} <= seen, 'the lab must have lab-ma1 (L5) and lab-ma2 (L6): %s' % seen


def test_reports_show_the_media_section(upgrade, lab):
    assert upgrade['result'].rc == 0, upgrade['result'].stdout[-4000:]
    with open(os.path.join(upgrade['run_dir'], 'summary.md'), encoding='utf-8') as handle:
        md = handle.read()
    with open(os.path.join(upgrade['run_dir'], 'report.html'), encoding='utf-8') as handle:
        page = handle.read()
    assert '## Media against the target drive' in md
    section = page.split('<section class="media" id="media">')[1]
    assert '<figure class="chart" data-chart="media"><svg' in section
    for host in lab.hosts:
        media = upgrade['docs'][host]['media']
        for lib in media['libraries']:
            for row in lib['stranded']:
                assert '%s (%s, %s)' % (row['barcode'], row['media'], row['where']) in md
        if media['migration']:
            assert 'Migration of the stranded cartridges: **%.1f h**' % media['migration']['hours'] in md
    print('upgrade_check with the media section: %.0f s wall for %d guests' % (upgrade['seconds'], len(lab.hosts)))
    for host in lab.hosts:
        media = upgrade['docs'][host]['media']
        print('%s: %s, migration %s h' % (host, media['totals']['counts'],
                                          (media['migration'] or {}).get('hours')))
