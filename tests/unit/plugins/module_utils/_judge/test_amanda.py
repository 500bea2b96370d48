# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""An Amanda tapetype from a run's host document (_judge/_amanda), on documents qualify_verdict wrote of recorded
inputs (tests/unit/fixtures/controller_outputs/expected/) and on a recorded lab run's (tests/unit/fixtures/lab_runs/).

The length is held against what amtapetype measured on a real LTO-6 (Amanda's own example, in
tests/unit/fixtures/amanda/): the native capacity of the cartridge, a little below what the drive took.
"""

from __future__ import annotations

import copy
import json
import os

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils import _records
from ansible_collections.tapeops.qualify.plugins.module_utils._config import _amanda as conf
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _amanda

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'fixtures')
EXPECTED = os.path.join(FIXTURES, 'controller_outputs', 'expected')
LAB_MA2 = os.path.join(EXPECTED, 'verdict-args-20261123-quick', 'hosts', 'lab-ma2.json')
BAREOS = os.path.join(EXPECTED, 'cases', 'hosts', 'bareos-two-drives.json')
UPGRADE = os.path.join(EXPECTED, 'cases', 'hosts', 'upgrade-check.json')
OLD_LAB_MA3 = os.path.join(FIXTURES, 'lab_runs', '20261123-quick', 'lab-ma3.json')
AMTAPETYPE = os.path.join(FIXTURES, 'amanda', 'tapetypes__amtapetype-LTO6-debian-amanda-server-3.5.1__1.txt')


def doc(path, change=None):
    with open(path, encoding='utf-8') as handle:
        data = json.load(handle)
    if change:
        change(data)
    return _records.HostReport.load(data)


def test_an_lto6_from_the_lab_runs_numbers():
    tapetype = _amanda.tapetype(doc(LAB_MA2), '/dev/nst0')
    # the LTO-6 cartridge loaded (density 0x5a): 2500 GB in kbytes of 1024 bytes
    assert (tapetype['length_kbytes'], tapetype['length_basis']) == (2441406250, 'medium')
    # no block size in use known: the sweep's best, 64 KiB, where the sweep took 34.1 MB/s of random data
    assert (tapetype['block_size'], tapetype['block_basis']) == (65536, 'sweep_best')
    assert (tapetype['speed_mb_s'], tapetype['speed_kps'], tapetype['speed_basis']) == (34.1, 33300, 'measured')
    assert (tapetype['filemark_kbytes'], tapetype['mark_seconds'], tapetype['mark_basis']) == (256, 4.206, 'measured')
    [parsed] = conf.parse(tapetype['text'])
    assert parsed['name'] == tapetype['name'] == 'LTO-6-lab-ma2-nst0'
    assert (parsed['length']['number'], parsed['filemark']['number'], parsed['speed']['number'],
            parsed['blocksize']['bytes']) == (2441406250, 256, 33300, 65536)
    assert parsed['comment'] == ('tapeops.qualify run 20261123T195725Z, lab-ma2 /dev/nst0 (HP Ultrium 6-SCSI): length '
                                 'and filemark modelled, speed measured; hardware compression not assumed')
    notes = tapetype['text'].split('}\n', 1)[1]
    assert '# filemark: the tape space a file mark uses (amanda.conf(5)), which the run does not measure: modelled ' \
           'as 4 blocks of 64 KiB' in notes
    assert 'a synchronous file mark costs this drive 4.21 s (measured by the write test): time, not tape space' in notes
    assert notes.endswith('# to measure instead (hours: it fills the cartridge twice, and overwrites it): amtapetype '
                          '-f -b 65536 -t LTO-6-lab-ma2-nst0 /dev/nst0\n')


def test_the_length_is_the_native_capacity_a_little_below_what_amtapetype_measured_on_an_lto6():
    with open(AMTAPETYPE, encoding='utf-8') as handle:
        measured = [t['length']['bytes'] for t in conf.parse(handle.read()) if t['name'].startswith('LTO6')]
    ours = _amanda.tapetype(doc(LAB_MA2), '/dev/nst0')['length_kbytes'] * 1024
    assert len(measured) == 4
    assert all(0.99 * m < ours <= m for m in measured)


def test_the_length_is_what_the_loaded_cartridges_memory_says_it_holds_where_it_was_read():
    """lab-ma2's document of tests/unit/fixtures/lab_documents/20261127-sd-config/ (its README): the lab's 4096 MB
    cartridge MA2001L6 says 3906 MiB in its MAM (Maximum capacity in partition), not the 2500 GB of an LTO-6
    cartridge that its density code names; the length is the memory's, in Amanda's kbytes."""
    lab = doc(os.path.join(FIXTURES, 'lab_documents', '20261127-sd-config', 'lab-ma2.json'))
    assert lab.drives[0].identity.cartridge_memory.maximum_capacity_mib == 3906
    tapetype = _amanda.tapetype(lab, '/dev/nst0')
    assert (tapetype['length_kbytes'], tapetype['length_basis']) == (3906 * 1024, 'mam')
    [parsed] = conf.parse(tapetype['text'])
    assert parsed['length']['number'] == 3999744
    assert parsed['comment'].endswith('length from the cartridge memory, filemark modelled, speed measured; hardware '
                                      'compression not assumed')
    assert '# length: the cartridge MA2001L6, whose memory says it holds 3906 MiB (MAM, Maximum capacity in ' \
           'partition), 4.1 GB; no hardware compression assumed' in tapetype['text']


LAB_AMANDA = os.path.join(FIXTURES, 'lab_documents', '20261127-amanda', 'lab-ma2.json')
LAB_AMTAPETYPE = os.path.join(FIXTURES, 'amanda', 'amtapetype__lab-ma2-HP-Ultrium6-1GB-32K__1.txt')


def test_against_amtapetype_on_the_same_lab_drive_and_cartridge():
    """The tapetype of a qualify run on lab-ma2 against amtapetype's on the same drive and cartridge right after
    (lab_documents/20261127-amanda/README.md; docs/amanda.md, "Compared with amtapetype on the lab")."""
    ours = _amanda.tapetype(doc(LAB_AMANDA), '/dev/nst0')
    with open(LAB_AMTAPETYPE, encoding='utf-8') as handle:
        [theirs] = conf.parse(handle.read())
    [parsed] = conf.parse(ours['text'])
    assert parsed['name'] == theirs['name'] == 'LTO-6-lab-ma2-nst0'
    # blocksize: Amanda's default, judged, and the one amtapetype was given
    assert parsed['blocksize']['bytes'] == theirs['blocksize']['bytes'] == 32768
    # length: the cartridge memory's 976 MiB; amtapetype wrote until the drive signalled the end of the medium at
    # its early warning, 1 % before the end (lab/tapedrive): ours is 0.95 % above what it wrote
    assert (ours['length_basis'], parsed['length']['number'], theirs['length']['number']) == ('mam', 999424, 990048)
    assert 1.0 < parsed['length']['bytes'] / theirs['length']['bytes'] < 1.01
    # speed: the sweep's 100 MB steps (2.7 times the drive's 36.6 MB buffer) took 26.2 MB/s, part of each step
    # into the buffer at the host's speed; amtapetype's 1 GB fill took the drive's own 19.5 MB/s (20 at the top step)
    assert (ours['speed_basis'], parsed['speed']['number'], theirs['speed']['number']) == ('measured', 25585, 19039)
    # filemark: ours modelled as 4 blocks; amtapetype found the 100 marks took no tape space on this drive
    assert (parsed['filemark']['number'], theirs['filemark']['number']) == (128, 0)
    # compression: amtapetype's heuristic saw the drive compress (its fixed data at twice the random rate); the
    # tapetype assumes none for the length, Amanda compressing in software
    assert theirs['comment'] == 'Created by amtapetype; compression enabled'
    assert parsed['comment'].endswith('hardware compression not assumed')


def test_hardware_compression_multiplies_the_length_by_the_estimated_tape_ratio():
    plain = _amanda.tapetype(doc(LAB_MA2), '/dev/nst0')
    compressed = _amanda.tapetype(doc(LAB_MA2), '/dev/nst0', hardware_compression=True)
    assert compressed['tape_ratio'] == 1.015
    assert compressed['length_kbytes'] == int(2500e9 * 1.015 // 1024) > plain['length_kbytes']
    assert 'hardware compression assumed' in compressed['text']
    assert 'x 1.01, the tape compression estimated for the sources (estimated from a 1 MB sample' in compressed['text']


def test_the_verdicts_block_size_fix_is_the_tapetypes_else_the_block_size_judged():
    made = _amanda.tapetypes(doc(BAREOS))
    by_drive = dict((t['drive'], t) for t in made['tapetypes'])
    assert made['skipped'] == []
    assert (by_drive['/dev/nst1']['block_size'], by_drive['/dev/nst1']['block_basis']) == (262144, 'fix')
    assert (by_drive['/dev/nst0']['block_size'], by_drive['/dev/nst0']['block_basis']) == (1048576, 'judged')
    # no cartridge was loaded: the LTO-5's own cartridge
    assert (by_drive['/dev/nst0']['length_kbytes'], by_drive['/dev/nst0']['length_basis']) == (
        1464843750, 'drive_generation')
    assert 'blocksize 256 kbytes' in by_drive['/dev/nst1']['text']


def test_a_document_written_before_the_medium_was_named_reads_the_density_code():
    # lab run 20261123-quick: the drive's identity has density code 0x5e (LTO-8) and neither medium nor model
    tapetype = _amanda.tapetype(doc(OLD_LAB_MA3), '/dev/nst0')
    assert (tapetype['capacity_gb'], tapetype['length_basis']) == (12000, 'medium')
    assert tapetype['cartridge'] == 'LTO-8 cartridge loaded (density 0x5e)'


def test_a_drive_the_sweep_did_not_measure_gets_no_speed_line():
    def no_sweep(data):
        data['drives'][0]['write_sweep'] = None
        data['verdicts'][0]['numbers']['block_size_bytes'] = None
    tapetype = _amanda.tapetype(doc(LAB_MA2, no_sweep), '/dev/nst0')
    assert tapetype['speed_kps'] is None and tapetype['speed_basis'] == 'not_measured'
    assert '    speed ' not in tapetype['text'] and '# speed: not measured at 64 KiB blocks, so left out' in \
        tapetype['text']


def test_no_block_size_at_all_leaves_amandas_default():
    def nothing(data):
        data['verdicts'][0]['numbers'].update(block_size_bytes=None, best_block_size_bytes=None)
        data['verdicts'][0]['fixes'] = []
    tapetype = _amanda.tapetype(doc(LAB_MA2, nothing), '/dev/nst0')
    assert tapetype['block_size'] is None and 'blocksize' not in tapetype['text'].split('}')[0]
    assert tapetype['filemark_kbytes'] == 128
    assert '# blocksize: not known to the run: no blocksize line, so Amanda\'s default, 32 kbytes, applies' in \
        tapetype['text']


def test_the_what_if_drive_has_no_tapetype_and_a_drive_without_a_verdict_is_an_error():
    upgrade = doc(UPGRADE)
    assert [t['drive'] for t in _amanda.tapetypes(upgrade)['tapetypes']] == ['/dev/nst0']
    with pytest.raises(_amanda.TapetypeError) as caught:
        _amanda.tapetypes(upgrade, drive='what-if LTO-9 FH')
    assert str(caught.value) == ('upgrade-check has no verdict for what-if LTO-9 FH in this run, so no tapetype: give '
                                 'one of its drives with a verdict (/dev/nst0)')


def test_one_name_for_two_drives_is_refused():
    with pytest.raises(_amanda.TapetypeError) as caught:
        _amanda.tapetypes(doc(BAREOS), name='LTO5')
    assert str(caught.value) == ('name LTO5 is for one tapetype, and bareos-two-drives has 2 drives with a verdict '
                                 '(/dev/nst0, /dev/nst1): give drive as well, or leave name out for a name per drive')
    assert _amanda.tapetypes(doc(BAREOS), drive='/dev/nst1', name='LTO5')['tapetypes'][0]['text'].startswith(
        'define tapetype LTO5 {')


def test_no_capacity_known_is_said_with_what_to_do():
    def unknown(data):
        identity = data['drives'][0]['identity']
        identity.update(density_code=None, drive_model=None)
        identity['generation'] = dict(identity['generation'], medium=None)
    made = _amanda.tapetypes(doc(LAB_MA2, unknown))
    assert made['tapetypes'] == []
    assert made['skipped'] == [{'drive': '/dev/nst0', 'reason': (
        '/dev/nst0: the run knows no cartridge capacity for it (no LTO density code of a loaded cartridge, no drive '
        'model): load a cartridge, or set generation for it in tapeops_drives, and re-run qualify')}]


def test_the_default_name_is_an_amanda_conf_identifier():
    entry = copy.deepcopy(doc(LAB_MA2).drives[0])
    entry.nst = '/dev/tape/by-id/scsi-3500.nst'
    assert _amanda.default_name('ma.example.com', entry, 'LTO-9 FH') == 'LTO-9-FH-ma-example-com-scsi-3500-nst'
    assert _amanda.default_name('9host', entry, None) == 'tape-9host-scsi-3500-nst'
