# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one drive resolver (_judge/_resolve.py) as discovery and the report use it.

Every drive here is built from recorded real outputs (tests/unit/fixtures, each
with its source header): the INQUIRY strings from an lsscsi capture, the loaded
cartridge from an mt status capture, put into a sysfs tree the way the kernel
shows them, and discovered by the collection's own discovery.
"""

from __future__ import annotations

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils import _records
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _drive_model, _host, _resolve
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_discovery
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _cli
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _scsi_inquiry

from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._tape_fixtures import fixture
from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils.report_cases import source

# HP Ultrium 6-SCSI fw 338D (LTFS issue 354, lsscsi -g): an LTO-6 drive.
LSSCSI_HP6 = 'lsscsi_g_partial__HP-Ultrium6-338D-353D_IBM-ULTRIUM-HH7-lin_tape__1.txt'
# IBM ULTRIUM-HH9 fw N9B1 sold by Dell (LTFS issue 408, lsscsi -g): an LTO-9 half-height drive.
LSSCSI_HH9 = 'lsscsi_g__IBM-ULTRIUM-HH9-N9B1-DellLTO9__1.txt'
# QUANTUM SDLT320 (QUADStor VTL, lsscsi -g): a tape drive that is not LTO.
LSSCSI_SDLT = 'lsscsi_g__QUADStor-VTL-ADIC-Scalar24-SDLT320-VMware__1.txt'
# mt-st issue 10: an LTO-6 drive with an LTO-5 cartridge loaded, density 0x58; the drive's vendor not stated.
MT_LTO5_TAPE = 'mt_status_mtst__LTO6-drive-LTO5-tape-jonasstein__1.txt'
# hercules-390 issue 107: a StorageTek 9840 reports density 0x42, which mt-st names LTO-2.
MT_9840 = 'mt_status_mtst__STK-9840-FC-density0x42__1.txt'


def inquiry_of(lsscsi_name):
    """(vendor, product, revision) of the first tape drive in an lsscsi capture."""
    tape = [d for d in _scsi_inquiry.parse_lsscsi(fixture('lsscsi', lsscsi_name).replace('**', ''))
            if d['type'] == 'tape'][0]
    return tape['vendor'], tape['model'], tape['revision']


def discover(tmp_path, inquiry, mt_name, settings=None):
    """Discovery of one drive whose sysfs INQUIRY is ``inquiry`` and whose ``mt status`` is the capture."""
    scsi = tmp_path / 'bus' / 'scsi' / 'devices' / '3:0:0:0'
    scsi.mkdir(parents=True)
    vendor, product, revision = inquiry
    # sysfs pads INQUIRY to its fixed 8 / 16 / 4 columns (scsi_sysfs.c sdev_rd_attr of vendor, model, rev)
    for name, value in (('vendor', '%-8s\n' % vendor), ('model', '%-16s\n' % product), ('rev', '%-4s\n' % revision),
                        ('type', '1\n')):
        (scsi / name).write_text(value)
    tape = tmp_path / 'class' / 'scsi_tape' / 'nst0'
    tape.mkdir(parents=True)
    (tape / 'device').symlink_to(scsi)
    text = fixture('mt', mt_name)

    def runner(cmd):
        if cmd[0] == 'mt':
            return _cli.CliResult(cmd, 0, text, '')
        return _cli.CliResult(cmd, 127, '', '%s: not found' % cmd[0])
    return _tape_discovery.discover(runner=runner, sys_root=str(tmp_path), log_pages=False,
                                    settings=settings)['drives'][0]


def assemble(drive, settings=None):
    """The drive's entry in the host document, with its verdict (None without one) beside it."""
    doc = _host.assemble('ma', [drive], source(mean=300.0, p5=280.0), [], settings or [],
                         {'software': 'bacula', 'block_size_bytes': 262144}, memory_total_mb=8192).to_dict()
    [(entry, verdict)] = _records.drives_with_verdicts(doc)
    return dict(entry, verdict=verdict)


LTO5_MEDIUM = {'code': '0x58', 'generation': 5, 'media': 'LTO-5', 'capacity_gb': 1500, 'note': None}


def test_lto6_drive_with_an_lto5_tape_is_an_lto6_in_discovery_and_report(tmp_path):
    drive = discover(tmp_path, inquiry_of(LSSCSI_HP6), MT_LTO5_TAPE)
    ident = drive['generation']
    assert (drive['vendor'], drive['product'], drive['revision'], drive['density_code']) == (
        'HP', 'Ultrium 6-SCSI', '338D', '0x58')
    assert (ident['generation'], ident['form_factor'], ident['vendor'], ident['source']) == (6, None, 'HPE', 'inquiry')
    assert ident['medium'] == LTO5_MEDIUM
    assert ident['notes'] == ['the loaded cartridge is LTO-5 (density 0x58), not LTO-6: recorded as the medium, '
                              'not the drive']
    model = drive['drive_model']
    assert (model['label'], model['native_mb_s'], model['native_capacity_gb'], model['speed_floor_mb_s']) == (
        'LTO-6', 160.0, 2500, 54.0)   # HPE: HP's LTO-3 range (27/80 of native) applied, docs/drive-model.md
    entry = assemble(drive)
    assert entry['label'] == 'LTO-6' and entry['error'] is None
    assert entry['identity']['generation'] == ident
    # judged as the LTO-6 it is: 160 x 1.6 (the sources' ratio) at full speed, 54 x 1.6 at its floor; as the
    # LTO-5 its cartridge would make it, it would need 140 x 1.6 = 224 and 40 x 1.6 = 64
    numbers = entry['verdict']['numbers']
    assert (numbers['native_mb_s'], numbers['need_full_mb_s'], numbers['need_floor_mb_s']) == (160.0, 256.0, 86.4)
    # a Bacula host that sets no Maximum File Size: the default, a synchronous mark every 1000 MB, holds the
    # LTO-6 back; with the marks set apart (the fix) it streams
    assert entry['verdict']['summary'] == (
        'LTO-6 is held back by its settings: SHOE-SHINING now (90.3 MB/s), STREAMING after the setting fixes '
        '(254 MB/s). First fix: Set a larger Maximum File Size (223800 MB or more between file marks).')


def test_inventory_entry_applied_once_and_seen_by_discovery_and_report(tmp_path):
    setting = {'nst': '/dev/nst0', 'interface': 'SAS', 'speed_floor_mb_s': 54.0,
               'model': {'buffer_mb': 512.0, 'backhitch_s': 2.0}, 'block_size_bytes': 1048576}
    drive = discover(tmp_path, inquiry_of(LSSCSI_HP6), MT_LTO5_TAPE, settings=[setting])
    ident = drive['generation']
    assert ident['source'] == 'inquiry' and ident['interface'] == 'SAS'
    # the resolver's keys only; block_size_bytes is a backup setting for the verdict
    assert ident['inventory'] == {'interface': 'SAS', 'speed_floor_mb_s': 54.0,
                                  'model': {'buffer_mb': 512.0, 'backhitch_s': 2.0}}
    model = drive['drive_model']
    assert (model['buffer_mb'], model['backhitch_s'], model['speed_floor_mb_s'], model['interface']) == (
        512.0, 2.0, 54.0, 'SAS')
    assert model['compressed_max_mb_s'] == _drive_model.lookup(6, interface='SAS').compressed_max_mb_s
    assert model['notes'].count('buffer_mb set per drive (inventory): 512.0') == 1
    # the report resolves the discovered drive (which already carries the entry) with the same entry: the same
    # drive model, not the entry applied twice
    spec = _host.resolve_spec(_records.DriveIdentity.from_dict(drive), setting)
    assert spec.as_dict() == model
    entry = assemble(drive, [setting])
    assert entry['identity']['generation'] == ident and entry['identity']['drive_model'] == model
    assert entry['verdict']['numbers']['speed_floor_mb_s'] == 54.0


def test_discovery_without_the_inventory_entry_and_the_report_with_it_agree_with_discovery_given_it(tmp_path):
    setting = {'nst': 'nst0', 'generation': 'LTO-6', 'model': {'native_capacity_gb': 2400}}
    bare = discover(tmp_path / 'a', inquiry_of(LSSCSI_HP6), MT_LTO5_TAPE)
    given = discover(tmp_path / 'b', inquiry_of(LSSCSI_HP6), MT_LTO5_TAPE, settings=[setting])
    assert bare['drive_model']['native_capacity_gb'] == 2500 and given['drive_model']['native_capacity_gb'] == 2400
    assert given['generation']['source'] == 'inventory' and given['generation']['vendor'] == 'HPE'
    entry = assemble(bare, [dict(setting, nst='/dev/nst0')])
    assert entry['identity']['generation'] == given['generation']
    assert entry['identity']['drive_model'] == given['drive_model']


def test_unknown_inquiry_falls_back_to_the_cartridge_and_says_so(tmp_path):
    # the capture's drive named no vendor: INQUIRY tells nothing, the density code 0x58 is all there is
    drive = discover(tmp_path, ('', '', ''), MT_LTO5_TAPE)
    ident = drive['generation']
    assert (ident['generation'], ident['source'], ident['mechanism']) == (5, 'density', None)
    assert ident['reason'] == ('No INQUIRY product ID names no LTO drive the drive model knows: generation taken '
                               'from the loaded cartridge\'s density code 0x58 (LTO-5)')
    assert 'the drive may be a generation newer than its cartridge' in ident['notes'][0]
    assert drive['drive_model']['label'] == 'LTO-5 (by cartridge density)'
    entry = assemble(drive)
    assert entry['label'] == 'LTO-5 (by cartridge density)'
    assert entry['verdict']['summary'].startswith('LTO-5 (by cartridge density) ')
    # the inventory's word ends the guess; the cartridge stays the medium
    entry = assemble(drive, [{'nst': '/dev/nst0', 'generation': 'LTO-6'}])
    ident = entry['identity']['generation']
    assert (ident['generation'], ident['source'], ident['medium']) == (6, 'inventory', LTO5_MEDIUM)
    assert entry['label'] == 'LTO-6'


def test_a_drive_that_is_not_lto_gets_no_generation_from_an_lto_looking_density(tmp_path):
    drive = discover(tmp_path, inquiry_of(LSSCSI_SDLT), MT_9840)
    ident = drive['generation']
    assert drive['product'] == 'SDLT320' and drive['density_code'] == '0x42'
    assert (ident['generation'], ident['source'], drive['drive_model']) == (None, None, None)
    assert ident['medium']['generation'] == 2      # recorded as what the code would mean, never as the drive
    assert 'not LTO' in ident['reason']
    entry = assemble(drive)
    assert entry['verdict'] is None and 'set generation' in entry['error'] and 'SDLT320' in entry['error']


def test_no_inquiry_and_a_9840_density_is_an_lto2_guess_with_its_warning():
    ident, spec = _resolve.resolve({'density_code': '0x42'})
    assert (ident.generation, ident.source, spec.label) == (2, 'density', 'LTO-2 (by cartridge density)')
    assert any('StorageTek 9840' in note for note in spec.notes)


def test_inventory_generation_takes_the_form_factor_inquiry_gives_for_the_same_generation():
    vendor, product, revision = inquiry_of(LSSCSI_HH9)
    drive = {'vendor': vendor, 'product': product, 'revision': revision, 'density_code': '0x60'}
    ident, spec = _resolve.resolve(drive, {'generation': 'LTO-9'})
    # before the resolver the inventory's "LTO-9" dropped INQUIRY's HH and the drive was judged full height
    assert (ident.source, ident.form_factor, ident.vendor, spec.label, spec.native_mb_s) == (
        'inventory', 'HH', 'IBM', 'LTO-9 HH', 300.0)
    ident, spec = _resolve.resolve(drive, {'generation': 'LTO-8'})
    assert (spec.label, ident.form_factor, ident.vendor) == ('LTO-8 FH', None, None)
    assert ident.notes[0] == "tapeops_drives says LTO-8, INQUIRY 'IBM' 'ULTRIUM-HH9' says LTO-9: the inventory is used"


@pytest.mark.parametrize('setting,words', [
    ({'model': 'fast'}, 'tapeops_drives[].model must be a mapping'),
    ({'generation': 'LTO-8 HH', 'form_factor': 'FH'}, 'says HH but form_factor says FH'),
    ({'generation': 'LTO-11'}, 'tapeops_drives: '),
    ({'model': {'buffer_gb': 1}}, "Unknown drive model field 'buffer_gb'"),
    ({'physics': 'sometimes'}, 'tapeops_drives[].physics must be true or false'),
])
def test_an_inventory_entry_that_cannot_be_read_says_what_is_wrong(setting, words):
    with pytest.raises(_resolve.ResolveError, match=None) as info:
        _resolve.resolve({'vendor': 'HP', 'product': 'Ultrium 6-SCSI'}, setting)
    assert words in str(info.value)


def test_discovery_keeps_the_drive_when_its_inventory_entry_cannot_be_read(tmp_path):
    drive = discover(tmp_path, inquiry_of(LSSCSI_HP6), MT_LTO5_TAPE, settings=[{'nst': '/dev/nst0', 'model': 'x'}])
    assert drive['generation']['generation'] == 6 and drive['generation']['inventory'] == {}
    assert drive['warnings'] == ["tapeops_drives[].model must be a mapping of drive model fields (e.g. "
                                 "{backhitch_s: 2.5}), got 'x'.; the drive is identified without its tapeops_drives "
                                 "entry"]


def test_identity_record_round_trips():
    ident, _spec = _resolve.resolve({'vendor': 'HP', 'product': 'Ultrium 6-SCSI', 'density_code': '0x58'},
                                    {'model': {'buffer_mb': 64}})
    assert _resolve.Identification.from_dict(ident.to_dict()) == ident
    # an older discovery record (keys this one no longer has) still loads
    old = {'generation': 6, 'form_factor': None, 'vendor': 'HPE', 'inquiry_vendor': 'HP', 'product': 'ULTRIUM 6-SCSI',
           'reason': 'HP product ID', 'source': 'inquiry'}
    assert _resolve.Identification.from_dict(old).generation == 6


def test_setting_for_matches_nst_as_path_or_name():
    settings = [{'nst': 'nst1', 'generation': 'LTO-7'}, {'device': '/dev/nst0', 'generation': 'LTO-5'}]
    assert _resolve.setting_for('/dev/nst1', settings)['generation'] == 'LTO-7'
    assert _resolve.setting_for('nst0', settings)['generation'] == 'LTO-5'
    assert _resolve.setting_for('/dev/nst2', settings) is None


# IBM ULT3580-HH9 (mt-st issue 27): the HH9's own cartridge, density 0x60
MT_HH9 = 'mt_status_mtst__IBM-ULT3580-HH9-N9B1-lin_tape__2.txt'


def test_the_mechanics_forecast_takes_the_resolvers_drive_with_the_inventory_entry(tmp_path):
    from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _mechanics
    drive = discover(tmp_path, inquiry_of(LSSCSI_HH9), MT_HH9)
    assert drive['generation']['medium']['code'] == '0x60'
    result = {'drive': drive, 'warnings': []}
    spec = _mechanics.current_drive(result, {'nst': '/dev/nst0', 'model': {'load_s': 0.24}})
    assert (spec.label, spec.load_s, result['warnings']) == ('LTO-9 HH', 0.24, [])
    # the result records the drive the forecast used
    assert result['drive']['drive_model']['load_s'] == 0.24
    assert result['drive']['generation']['inventory'] == {'model': {'load_s': 0.24}}
    # the whole entry, as discovery and the verdict apply it: its interface and floor too, not only its model
    result = {'drive': dict(drive), 'warnings': []}
    spec = _mechanics.current_drive(result, {'nst': 'nst0', 'interface': 'FC', 'speed_floor_mb_s': 100.0})
    assert spec == _resolve.resolve(drive, {'interface': 'FC', 'speed_floor_mb_s': 100.0})[1]
    assert (spec.interface, spec.speed_floor_mb_s) == ('FC', 100.0)
    assert result['drive']['generation']['inventory'] == {'interface': 'FC', 'speed_floor_mb_s': 100.0}
    result = {'drive': dict(drive), 'warnings': []}
    spec = _mechanics.current_drive(result, {'nst': '/dev/nst0', 'model': {'load_seconds': 1}})
    assert spec.load_s == _drive_model.lookup(9, 'HH', 'IBM').load_s == 16.0
    assert result['warnings'] == ["tapeops_drives: Unknown drive model field 'load_seconds' in the inventory; the "
                                  "fields are: %s.; the current drive is forecast without its tapeops_drives entry"
                                  % ', '.join(_drive_model.OVERRIDABLE)]


def test_a_drive_named_rather_than_discovered_is_an_entry_without_inquiry():
    # the mechanics' target_* options, streaming_forecast's drive: the resolver's lookup, no INQUIRY, no cartridge
    ident, spec = _resolve.resolve(setting={'generation': 'LTO-9 FH', 'vendor': 'IBM', 'model': {'load_s': 20}},
                                   given_in='target_generation')
    assert spec == _drive_model.lookup('LTO-9 FH', vendor='IBM', overrides={'load_s': 20})
    assert (ident.source, ident.reason, ident.notes) == ('inventory', 'generation LTO-9 FH set in target_generation', ())
    # the errors name the option the drive came from
    with pytest.raises(_resolve.ResolveError) as info:
        _resolve.resolve(setting={'generation': 'LTO-11'}, given_in='target_generation')
    assert str(info.value).startswith("target_generation: Cannot read an LTO generation from 'LTO-11'.")
    with pytest.raises(_resolve.ResolveError) as info:
        _resolve.resolve(setting={'generation': 'LTO-8 HH', 'form_factor': 'FH'}, given_in='drive')
    assert str(info.value) == "drive: generation 'LTO-8 HH' says HH but form_factor says FH; give one."
    with pytest.raises(_resolve.ResolveError) as info:
        _resolve.resolve(setting={'generation': 9, 'interface': 'USB'}, given_in='drive')
    assert str(info.value) == "drive: interface must be 'SAS', 'FC' or 'SCSI', got 'USB'."


def test_a_form_factor_written_out_agrees_with_the_generations():
    # "half" is what "HH" in the generation says: the drive model reads both alike, so the resolver does
    spec = _resolve.resolve(setting={'generation': 'LTO-8 HH', 'form_factor': 'half'})[1]
    assert (spec.label, spec.native_mb_s) == ('LTO-8 HH', _drive_model.lookup('LTO-8 HH').native_mb_s)


def test_the_media_read_rates_take_the_resolvers_drive_with_what_discovery_applied(tmp_path):
    from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _media
    hh9 = discover(tmp_path / 'a', inquiry_of(LSSCSI_HH9), MT_HH9,
                   settings=[{'nst': '/dev/nst0', 'model': {'native_mb_s': 250.0}}])
    sdlt = discover(tmp_path / 'b', inquiry_of(LSSCSI_SDLT), MT_9840)
    specs = _media.old_drive_specs([hh9, sdlt])
    assert [(s.label, s.native_mb_s) for s in specs] == [('LTO-9 HH', 250.0)]


@pytest.mark.parametrize('value, kept', [(False, False), ('false', False), (True, True), ('yes', True)])
def test_physics_is_carried_in_the_identity_for_the_verdict(value, kept):
    ident, spec = _resolve.resolve({'vendor': 'IBM', 'product': 'ULT3580-TD5'}, {'nst': '/dev/nst0', 'physics': value})
    assert ident.inventory == {'physics': kept} and ident.generation == 5
    # the drive model is the same: physics says where the measured rates come from, not what the drive is
    assert spec == _resolve.resolve({'vendor': 'IBM', 'product': 'ULT3580-TD5'})[1]
