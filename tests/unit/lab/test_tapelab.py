# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure helpers of lab/tapelab.py: identities, guest config, inventory, source tree plan."""

import importlib.util
import os
import subprocess
import threading

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
_spec = importlib.util.spec_from_file_location('tapelab', os.path.join(ROOT, 'lab', 'tapelab.py'))
tapelab = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tapelab)


def test_data_barcode_is_distinct_from_scratch():
    assert tapelab.data_barcode(1) == 'MA1099L5'
    assert tapelab.data_barcode(2) == 'MA2099L6'
    assert tapelab.data_barcode(1) not in tapelab.barcodes(1, 20)


def test_barcodes_carry_guest_and_generation():
    assert tapelab.barcodes(1, 3) == ['MA1001L5', 'MA1002L5', 'MA1003L5']
    assert tapelab.barcodes(2, 2) == ['MA2001L6', 'MA2002L6']
    assert tapelab.barcodes(3, 1) == ['MA3001L8']
    assert all(len(b) == 8 for b in tapelab.barcodes(1, 20))  # LTO labels: 6 + 2 characters


@pytest.mark.parametrize('index, vendor, product, generation, port', [
    (1, 'IBM', 'ULT3580-TD5', 5, 2221),
    (2, 'HP', 'Ultrium 6-SCSI', 6, 2222),
    (3, 'IBM', 'ULT3580-TD8', 8, 2223),
])
def test_guest_spec_identities(index, vendor, product, generation, port):
    spec = tapelab.guest_spec(index, 3, '/var/tmp/x')
    assert spec['name'] == 'lab-ma%d' % index
    assert (spec['drive']['vendor'], spec['drive']['product'], spec['drive']['generation']) == (vendor, product, generation)
    assert spec['port'] == port
    assert spec['dir'] == '/var/tmp/x/lab-ma%d' % index
    # SCSI INQUIRY field widths: vendor 8, product 16
    assert len(vendor) <= 8 and len(product) <= 16


def test_guests_past_three_repeat_the_spread_with_their_own_identity():
    first, fourth = tapelab.guest_spec(1, 3, '/r'), tapelab.guest_spec(4, 3, '/r')
    assert (fourth['name'], fourth['port']) == ('lab-ma4', tapelab.BASE_PORT + 4)
    assert fourth['drive']['product'] == first['drive']['product'] == 'ULT3580-TD5'
    assert (fourth['scale'], fourth['source_rbps'], fourth['expect']) == (0.035, None, 'streaming')
    assert fourth['drive']['serial'] == '1068001004' != first['drive']['serial']
    assert fourth['scratch'] == ['MA4001L5', 'MA4002L5', 'MA4003L5'] and fourth['data'] == ['MA4099L5']
    assert tapelab.guest_spec(6, 1, '/r')['expect'] == 'shoe-shining'


def test_guest_spec_port_base():
    assert tapelab.guest_spec(2, 3, '/r', port_base=2240)['port'] == 2242


@pytest.mark.parametrize('index, carts', [(0, 3), (9, 3), (1, 0), (1, 21)])
def test_guest_spec_rejects_out_of_range(index, carts):
    with pytest.raises(tapelab.LabError, match='must be|out of range'):
        tapelab.guest_spec(index, carts, '/r')


def test_guest_env_is_sourced_by_sh_with_spaces_intact(tmp_path):
    spec = tapelab.guest_spec(2, 3, str(tmp_path))
    env = tmp_path / 'guest.env'
    env.write_text(tapelab.guest_env(spec, '/run/tapelab/modroot', 2048))
    out = subprocess.run(['sh', '-c', '. "$1"; printf "%s|%s|%s|%s" "$TAPELAB_DRIVE_PRODUCT" "$TAPELAB_BARCODES" '
                          '"$TAPELAB_SLOTS" "$TAPELAB_LOAD_SLOT"', 'sh', str(env)],
                         capture_output=True, text=True, check=True).stdout
    assert out == 'Ultrium 6-SCSI|MA2001L6 MA2002L6 MA2003L6 MA2099L6|4|1'
    seed = subprocess.run(['sh', '-c', '. "$1"; echo "$TAPELAB_DATA_SEED"', 'sh', str(env)],
                          capture_output=True, text=True, check=True).stdout.strip()
    assert seed == '4:MA2099L6'  # slot K+1 holds the data cartridge


def test_parse_ready():
    text = 'name=lab-ma1\nuptime=6.88\nnst=/dev/nst0\ndrive_sg=/dev/sg1\nchanger_sg=/dev/sg2\n\n# c\nbogus\n'
    assert tapelab.parse_ready(text) == {
        'name': 'lab-ma1', 'uptime': '6.88', 'nst': '/dev/nst0', 'drive_sg': '/dev/sg1', 'changer_sg': '/dev/sg2'}


def test_render_inventory_is_valid_yaml_with_the_documented_vars():
    specs = [tapelab.guest_spec(i, 3, '/var/tmp/tapeops-lab') for i in (1, 2)]
    readies = {'lab-ma1': {'nst': '/dev/nst0', 'drive_sg': '/dev/sg1', 'changer_sg': '/dev/sg2'}}
    data = yaml.safe_load(tapelab.render_inventory(specs, readies, '/var/tmp/tapeops-lab'))
    hosts = data['all']['children']['media_agents']['hosts']
    assert sorted(hosts) == ['lab-ma1', 'lab-ma2']
    ma1 = hosts['lab-ma1']
    assert ma1['ansible_port'] == 2221
    assert ma1['ansible_ssh_private_key_file'] == '/var/tmp/tapeops-lab/ssh/id_ed25519'
    assert 'UserKnownHostsFile=/var/tmp/tapeops-lab/ssh/known_hosts' in ma1['ansible_ssh_common_args']
    assert ma1['tapeops_lab'] is True
    assert ma1['tapeops_lab_drives'] == [{
        'nst': '/dev/nst0', 'sg': '/dev/sg1', 'vendor': 'IBM', 'product': 'ULT3580-TD5', 'revision': 'G350',
        'serial': '1068001001', 'lto_generation': 5, 'element': 500}]
    assert ma1['tapeops_lab_changer']['sg'] == '/dev/sg2'
    assert ma1['tapeops_lab_changer']['slots'] == 4
    assert ma1['tapeops_lab_barcodes'] == ['MA1001L5', 'MA1002L5', 'MA1003L5', 'MA1099L5']
    assert ma1['tapeops_lab_data_barcodes'] == ['MA1099L5']
    # the data cartridge is never allowed for writes
    assert ma1['tapeops_allowed_barcodes'] == ['MA1001L5', 'MA1002L5', 'MA1003L5']
    assert ma1['tapeops_lab_loaded_barcode'] == 'MA1001L5'
    assert ma1['tapeops_lab_source_dir'] == '/srv/backup-src'
    # a guest that has not reported yet still gets its defaults
    assert hosts['lab-ma2']['tapeops_lab_drives'][0]['nst'] == '/dev/nst0'
    assert hosts['lab-ma2']['tapeops_lab_drives'][0]['product'] == 'Ultrium 6-SCSI'


def test_source_tree_plan_is_a_modest_mix():
    plan = tapelab.source_tree_plan()
    assert plan == tapelab.source_tree_plan()  # deterministic
    sizes = [entry[1] for entry in plan]
    total = sum(sizes)
    assert 150 * 10**6 < total < 400 * 10**6  # a few hundred MB at most, fits the 512 MiB image
    assert sum(1 for s in sizes if s <= 65536) >= 1000  # many small files
    assert sum(1 for s in sizes if s >= 32 * 1024 * 1024) >= 2  # a few large ones
    assert {entry[2] for entry in plan} == {'text', 'random'}
    assert len({entry[0] for entry in plan}) == len(plan)


def test_sshd_config_points_into_the_guest_dir():
    text = tapelab.sshd_config('/run/tapelab')
    assert 'HostKey /run/tapelab/ssh_host_ed25519_key' in text
    assert 'AuthorizedKeysFile /run/tapelab/authorized_keys' in text
    assert 'PasswordAuthentication no' in text


def test_port_free_sees_a_listener():
    import socket  # pylint: disable=import-outside-toplevel
    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    sock.listen(1)
    port = sock.getsockname()[1]
    try:
        assert tapelab.port_free(port) is False
    finally:
        sock.close()
    assert tapelab.port_free(port) is True


def test_parse_guest_env_round_trips_guest_env():
    spec = tapelab.guest_spec(2, 3, '/r')
    env = tapelab.parse_guest_env(tapelab.guest_env(spec, '/run/tapelab/modroot', 2048))
    assert env['TAPELAB_DRIVE_PRODUCT'] == 'Ultrium 6-SCSI'
    assert env['TAPELAB_BARCODES'] == 'MA2001L6 MA2002L6 MA2003L6 MA2099L6'
    assert tapelab.apply_booted_cartridges(spec, env) == spec


def test_inventory_follows_what_a_running_guest_was_booted_with():
    """A guest booted by an older version (no data cartridge) keeps its real changer contents."""
    spec = tapelab.guest_spec(1, 3, '/r')
    old_env = tapelab.parse_guest_env(
        "TAPELAB_NAME=lab-ma1\nTAPELAB_SLOTS=3\nTAPELAB_BARCODES='MA1001L5 MA1002L5 MA1003L5'\nTAPELAB_LOAD_SLOT=1\n")
    booted = tapelab.apply_booted_cartridges(spec, old_env)
    hv = tapelab.host_vars(booted, {}, '/r')
    assert hv['tapeops_lab_barcodes'] == ['MA1001L5', 'MA1002L5', 'MA1003L5']
    assert hv['tapeops_lab_data_barcodes'] == []
    assert hv['tapeops_allowed_barcodes'] == ['MA1001L5', 'MA1002L5', 'MA1003L5']
    assert hv['tapeops_lab_changer']['slots'] == 3
    assert tapelab.apply_booted_cartridges(spec, {}) is spec


# ----------------------------------------------------------------------------- the emulated drive's profile

MODEL_LTO5 = {
    'native_mb_s': 140.0, 'speed_steps_mb_s': [140.0, 122.5, 105.0, 87.5, 70.0], 'speed_floor_mb_s': 70.0,
    'buffer_mb': 256.0, 'backhitch_s': 3.0, 'load_s': 12.0, 'unload_s': 17.0, 'rewind_s': 55.0, 'locate_s': 45.0,
    'compression_ratio': 2.0, 'density_code': '0x58', 'native_capacity_gb': 1500, 'label': 'LTO-5 FH (IBM)',
    'estimated': {'backhitch_s': 'no vendor publishes it'},
}


def test_drive_profile_scales_rates_and_buffer_not_the_back_hitch():
    ident = tapelab.guest_spec(1, 3, '/r')['drive']
    prof = tapelab.drive_profile(ident, 0.1, 50.0, MODEL_LTO5)
    assert prof['native_mb_s'] == pytest.approx(14.0)
    assert prof['speed_steps_mb_s'] == pytest.approx([14.0, 12.25, 10.5, 8.75, 7.0])
    assert prof['speed_floor_mb_s'] == pytest.approx(7.0) and prof['buffer_mb'] == pytest.approx(25.6)
    assert prof['backhitch_s'] == 3.0                      # time behaviour of the real drive
    assert prof['rewind_s'] == pytest.approx(1.1) and prof['load_s'] == pytest.approx(0.24)
    assert prof['density_code'] == 0x58 and prof['defaulted'] == []
    assert prof['real']['load_s'] == 12.0                  # the changer scales real times itself


def test_drive_profile_falls_back_to_stated_defaults_for_missing_fields():
    ident = tapelab.guest_spec(3, 3, '/r')['drive']        # LTO-8: density from the generation
    prof = tapelab.drive_profile(ident, 0.5, 50.0, {'native_mb_s': 360.0, 'speed_floor_mb_s': 112.0})
    assert prof['speed_steps_mb_s'] == pytest.approx([180.0, 56.0])   # native and floor, no steps known
    assert prof['buffer_mb'] == pytest.approx(128.0)                # the default (256 MB) scaled
    assert prof['density_code'] == 0x5E
    assert {'speed_steps_mb_s', 'buffer_mb', 'backhitch_s', 'density_code'} <= set(prof['defaulted'])
    empty = tapelab.drive_profile(ident, 1.0, 1.0, {})
    assert empty['native_mb_s'] == tapelab.PROFILE_DEFAULTS['native_mb_s']
    with pytest.raises(tapelab.LabError, match='scale'):
        tapelab.drive_profile(ident, 0, 50.0, {})


def test_drive_profile_from_the_collections_drive_model():
    model = tapelab.load_drive_model()
    assert model is not None, 'plugins/module_utils/_judge/_drive_model.py must import on its own'
    for index in (1, 2, 3):
        spec = tapelab.guest_spec(index, 3, '/r')
        got = tapelab.model_dict(spec['drive'], model)
        assert got['native_mb_s'] > 0 and got['speed_steps_mb_s']
        prof = tapelab.drive_profile(spec['drive'], spec['scale'], tapelab.MECH_DIVISOR, got)
        assert prof['speed_floor_mb_s'] == pytest.approx(min(got['speed_steps_mb_s']) * spec['scale'])


def test_the_inventory_model_gives_the_emulated_mark_cost_and_the_collection_takes_it():
    # the emulated drive's synchronous mark costs the drain and one back-hitch (physics.py rule 6): the
    # inventory says so, in place of the drive model's 7 s estimate for a real drive and its application
    model = tapelab.load_drive_model()
    spec = tapelab.guest_spec(1, 3, '/r')
    prof = tapelab.drive_profile(spec['drive'], spec['scale'], tapelab.MECH_DIVISOR,
                                 tapelab.model_dict(spec['drive'], model))
    overrides = tapelab.model_overrides(prof)
    assert overrides['sync_mark_s'] == overrides['backhitch_s'] == prof['backhitch_s'] == 3.0
    assert set(overrides) <= set(model.OVERRIDABLE)
    taken = model.lookup(spec['drive']['generation'], None, spec['drive']['maker'], overrides=overrides)
    assert taken.sync_mark_s == 3.0 and 'sync_mark_s' not in dict(taken.estimated)
    assert model.lookup(spec['drive']['generation'], None, spec['drive']['maker']).sync_mark_s == 7.0


def test_the_spread_puts_each_source_where_its_class_says():
    model = tapelab.load_drive_model()
    for index in (1, 2, 3):
        spec = tapelab.guest_spec(index, 3, '/r')
        prof = tapelab.drive_profile(spec['drive'], spec['scale'], tapelab.MECH_DIVISOR,
                                     tapelab.model_dict(spec['drive'], model))
        rate = (spec['source_rbps'] or 0) / 1e6
        if spec['expect'] == 'streaming':
            assert not spec['source_rbps']
        elif spec['expect'] == 'speed-matched':
            assert prof['speed_floor_mb_s'] < rate < prof['speed_steps_mb_s'][0]
        else:
            assert spec['expect'] == 'shoe-shining' and 0 < rate < prof['speed_floor_mb_s']


def test_tapedrive_config_and_host_vars_of_an_emulated_guest(tmp_path):
    spec = tapelab.guest_spec(2, 3, str(tmp_path))
    prof = tapelab.drive_profile(spec['drive'], spec['scale'], 50.0, MODEL_LTO5)
    cfg = tapelab.tapedrive_config(spec, prof)
    assert cfg['drives'][0]['identity'] == {'vendor': 'HP', 'product': 'Ultrium 6-SCSI', 'rev': '35GD',
                                            'serial': 'HU1330A002'}
    assert cfg['changer']['layout']['slots'] == spec['barcodes'] and cfg['changer']['slots'] == 4
    assert cfg['changer']['mechanics_scale'] == pytest.approx(1 / 50.0)
    assert cfg['target_wwn'] != tapelab.tapedrive_config(tapelab.guest_spec(1, 3, '/r'), prof)['target_wwn']
    ready = {'nst': '/dev/nst0', 'drive_sg': '/dev/sg0', 'changer_sg': '/dev/sg1'}
    text = tapelab.render_inventory([spec], {spec['name']: ready}, '/r', {spec['name']: prof})
    hv = yaml.safe_load(text)['all']['children']['media_agents']['hosts']['lab-ma2']
    assert hv['tapeops_lab_drive_mode'] == 'emulated'
    assert hv['tapeops_sources'] == ['/srv/backup-src']
    assert hv['tapeops_lab_spread'] == {'expect': 'speed-matched', 'scale': 0.125, 'source_rbps': 10000000}
    drive = hv['tapeops_drives'][0]
    assert drive['generation'] == 'LTO-6' and drive['vendor'] == 'HPE'
    assert drive['model']['buffer_mb'] == pytest.approx(32.0) and isinstance(drive['model']['buffer_mb'], float)
    assert set(drive['model']) <= {'native_mb_s', 'speed_steps_mb_s', 'speed_floor_mb_s', 'buffer_mb',
                                   'backhitch_s', 'sync_mark_s', 'load_s', 'unload_s', 'rewind_s', 'locate_s',
                                   'compression_ratio'}
    tgt = dict(spec, drive_mode='tgt')
    assert 'tapeops_drives' not in tapelab.host_vars(tgt, ready, '/r', prof)


def test_guest_env_carries_drive_mode_and_throttle(tmp_path):
    spec = tapelab.guest_spec(3, 3, str(tmp_path))
    env = tapelab.parse_guest_env(tapelab.guest_env(spec, '/m', 4096))
    got = (env['TAPELAB_DRIVE_MODE'], env['TAPELAB_SOURCE_RBPS'], env['TAPELAB_SCALE'])
    assert got == ('emulated', '3000000', '0.1')
    env1 = tapelab.parse_guest_env(tapelab.guest_env(tapelab.guest_spec(1, 3, '/r'), '/m', 1))
    assert env1['TAPELAB_SOURCE_RBPS'] == ''
    booted = tapelab.apply_booted_cartridges(spec, env)
    assert booted['drive_mode'] == 'emulated' and booted['source_rbps'] == 3000000
    with pytest.raises(tapelab.LabError, match='drive mode'):
        tapelab.guest_spec(1, 3, '/r', drive_mode='vtl')


# ----------------------------------------------------------------------------- health modes (docs/lab.md)

def _specs(run_dir='/r'):
    return [tapelab.guest_spec(i, 3, run_dir) for i in (1, 2, 3)]


def test_health_specs_set_and_clear_drive_and_cartridge_modes():
    got = tapelab.health_settings(['lab-ma2=dirty', 'lab-ma1:MA1001L5=worn,lab-ma3=hard_error'], _specs())
    assert got == {'lab-ma1': {'drive': None, 'cartridges': {'MA1001L5': 'worn'}},
                   'lab-ma2': {'drive': 'dirty', 'cartridges': {}},
                   'lab-ma3': {'drive': 'hard_error', 'cartridges': {}}}
    # over what is set: named guests change, 'none' clears, the others keep theirs
    again = tapelab.health_settings(['lab-ma2=none lab-ma1:MA1001L5=none', 'lab-ma1:MA1099L5=worn'], _specs(), got)
    assert again == {'lab-ma1': {'drive': None, 'cartridges': {'MA1099L5': 'worn'}},
                     'lab-ma2': {'drive': None, 'cartridges': {}},
                     'lab-ma3': {'drive': 'hard_error', 'cartridges': {}}}
    assert tapelab.health_settings(None, _specs())['lab-ma1'] == {'drive': None, 'cartridges': {}}
    assert tapelab.health_words(got['lab-ma1']) == 'cartridge MA1001L5 worn'
    assert tapelab.health_words(again['lab-ma2']) == 'no health mode'


@pytest.mark.parametrize('item,message', [
    ('lab-ma2', 'write GUEST=MODE for a drive \\(dirty, hard_error, none\\) or GUEST:BARCODE=MODE'),
    ('lab-ma2:=worn', 'write GUEST=MODE'),
    ('lab-ma9=dirty', 'no guest lab-ma9; the lab has lab-ma1, lab-ma2, lab-ma3'),
    ('lab-ma2=worn', 'worn is a cartridge mode: name the cartridge, lab-ma2:MA2001L6=worn'),
    ('lab-ma2:MA1001L5=worn', 'lab-ma2 has no cartridge MA1001L5; its cartridges are MA2001L6, '),
    ('lab-ma2:MA2001L6=dirty', 'dirty is not a cartridge mode'),
    ('lab-ma2=sticky', 'sticky is not a mode'),
])
def test_health_specs_that_do_not_read_say_what_to_write(item, message):
    with pytest.raises(tapelab.LabError, match=message):
        tapelab.health_settings([item], _specs())


def test_the_drive_process_reads_the_health_file_tapelab_writes(tmp_path):
    spec = tapelab.guest_spec(2, 1, str(tmp_path))
    os.makedirs(os.path.join(spec['dir'], 'cartridges'))
    media = tapelab.tapedrive_module('media')
    for barcode in spec['barcodes']:
        media.Cartridge.create(os.path.join(spec['dir'], 'cartridges', barcode + '.cart'), barcode, generation=6,
                               density_code=0x5A, capacity_bytes=10 ** 8).close()
    prof = tapelab.drive_profile(spec['drive'], spec['scale'], 50.0, MODEL_LTO5)
    # the config as the guest sees it, with the guest dir where the guest mounts it
    config = tapelab.tapedrive_config(spec, prof, run_dir_in_guest=spec['dir'])
    assert config['health_file'] == os.path.join(spec['dir'], 'health.json')
    assert tapelab.tapedrive_config(spec, prof)['health_file'] == '/run/tapelab/health.json'
    setting = tapelab.health_settings(['lab-ma2=dirty', 'lab-ma2:MA2001L6=worn'], [spec])['lab-ma2']
    tapelab.Lab.write_health(spec, setting)
    assert tapelab.Lab.read_health(spec) == setting
    main = tapelab.tapedrive_module('__main__')
    drives, lib, _changer = main.build(config)
    assert drives[0].health == setting and drives[0].dirty
    assert drives[0].transport.rate_factor == tapelab.tapedrive_module('ssc').DIRTY_RATE_FACTOR
    lib.save()
    with open(os.path.join(spec['dir'], 'health.json'), 'w') as f:
        f.write('not json')
    assert tapelab.Lab.read_health(spec) == {'drive': None, 'cartridges': {}}   # said, and taken as none


def test_inventory_says_the_health_modes_of_emulated_guests():
    spec = tapelab.guest_spec(2, 3, '/r')
    prof = tapelab.drive_profile(spec['drive'], spec['scale'], 50.0, MODEL_LTO5)
    ready = {'nst': '/dev/nst0', 'drive_sg': '/dev/sg0', 'changer_sg': '/dev/sg1'}
    health = {'lab-ma2': {'drive': 'dirty', 'cartridges': {'MA2002L6': 'worn'}}}
    text = tapelab.render_inventory([spec], {spec['name']: ready}, '/r', {spec['name']: prof}, None, health)
    hv = yaml.safe_load(text)['all']['children']['media_agents']['hosts']['lab-ma2']
    assert hv['tapeops_lab_health'] == {'drive': 'dirty', 'cartridges': {'MA2002L6': 'worn'}}
    assert tapelab.host_vars(spec, ready, '/r', prof)['tapeops_lab_health'] == {'drive': 'none', 'cartridges': {}}
    assert 'tapeops_lab_health' not in tapelab.host_vars(dict(spec, drive_mode='tgt'), ready, '/r', prof)


def test_health_on_a_lab_that_is_not_there_says_to_bring_it_up(tmp_path):
    with pytest.raises(tapelab.LabError, match='no lab in .*: run lab/tapelab up first'):
        tapelab.Lab(str(tmp_path)).health(['lab-ma2=dirty'])


def test_health_on_a_running_lab_waits_for_the_drive_to_say_it(tmp_path, capsys):
    """lab/tapelab health's part on this machine against a drive process's part, files in between (no guest)."""
    lab = tapelab.Lab(str(tmp_path))
    state = {'drive': 'emulated', 'guests': 1, 'carts': 1, 'port_base': tapelab.BASE_PORT}
    spec = lab.specs(state)[0]
    os.makedirs(spec['dir'])
    ssc = tapelab.tapedrive_module('ssc')
    drive = ssc.Drive({'vendor': 'IBM', 'product': 'ULT3580-TD5', 'rev': 'G350', 'serial': '1068001001'}, {},
                      stats_path=os.path.join(spec['dir'], 'tape0-stats.json'))
    drive.health_file = os.path.join(spec['dir'], tapelab.HEALTH_FILE)
    stop = threading.Event()

    def serve():                                 # what the guest's tapedrive process does about once a second
        while not stop.is_set():
            drive.periodic(0.0)
            stop.wait(0.05)
    thread = threading.Thread(target=serve)
    thread.start()
    try:
        settings = lab._set_health(state, ['lab-ma1=dirty', 'lab-ma1:MA1001L5=worn'])
    finally:
        stop.set()
        thread.join()
    assert settings['lab-ma1'] == {'drive': 'dirty', 'cartridges': {'MA1001L5': 'worn'}} == drive.health
    assert 'lab-ma1: drive dirty; cartridge MA1001L5 worn' in capsys.readouterr().err
    assert lab.read_health(spec) == drive.health
    # a SPEC that changes nothing is answered too (nothing written, nothing to wait for)
    assert lab._set_health(state, ['lab-ma1=dirty']) == settings
    assert capsys.readouterr().err.strip() == 'tapelab: lab-ma1: drive dirty; cartridge MA1001L5 worn, as before'
    with pytest.raises(tapelab.LabError, match='need the emulated drive; the lab in .* runs tgt drives'):
        lab._set_health(dict(state, drive='tgt'), ['lab-ma1=dirty'])
