# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure helpers of lab/tapelab_mhvtl.py and the mhvtl guests of lab/tapelab.py."""

import hashlib
import importlib.util
import io
import os
import re
import sys
import tarfile

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, 'lab'))
_spec = importlib.util.spec_from_file_location('tapelab', os.path.join(ROOT, 'lab', 'tapelab.py'))
tapelab = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tapelab)
tm = tapelab.mhvtl_module()
FIXTURES = os.path.join(ROOT, 'tests', 'unit', 'fixtures', 'mhvtl_device_conf')


def _fixture(name):
    with open(os.path.join(FIXTURES, name)) as f:
        return f.read()


def test_each_guest_kind_has_one_or_two_drives_of_its_own_and_the_kinds_cover_lto5_to_lto9():
    kinds = [tm.drives(i) for i in (1, 2, 3)]
    assert all(1 <= len(k) <= 2 for k in kinds)
    assert sorted(d['generation'] for k in kinds for d in k) == [5, 6, 7, 8, 9]
    assert {d['vendor'] for k in kinds for d in k} == {'IBM', 'HP', 'QUANTUM'}
    serials = [d['serial'] for i in range(1, tapelab.MAX_GUESTS + 1) for d in tm.drives(i)]
    assert len(set(serials)) == len(serials) and all(len(s) <= 10 for s in serials)  # mhvtl: at most 10
    # C:T:L: the library at target 0, drive N at target N (what guest-init looks the devices up by)
    assert [(d['id'], d['target']) for d in tm.drives(3)] == [(11, 1), (12, 2)]


def test_cartridges_scratch_per_generation_then_data_worm_cleaning():
    slots = tm.cartridges(1, 2)
    assert [(s['barcode'], s['kind']) for s in slots] == [
        ('MA1001L5', 'scratch'), ('MA1002L5', 'scratch'), ('MA1101L6', 'scratch'), ('MA1102L6', 'scratch'),
        ('MA1099L5', 'data'), ('MA1W01LV', 'worm'), ('CLN101L1', 'cleaning')]
    assert all(len(s['barcode']) == 8 for i in (1, 2, 3) for s in tm.cartridges(i, 20))
    # the WORM cartridge carries its generation's LTO WORM media ID (LV = LTO-5 ... LZ = LTO-9)
    assert [tm.worm_barcode(i, g) for i, g in ((1, 5), (2, 7), (3, 9))] == ['MA1W01LV', 'MA2W01LX', 'MA3W01LZ']


def test_media_list_states_type_and_density_of_every_cartridge():
    lines = [line.split() for line in tm.media_list(3, 1, 307).splitlines()]
    assert lines == [['MA3001L8', 'data', 'LTO8', '307'], ['MA3101L9', 'data', 'LTO9', '307'],
                     ['MA3099L8', 'data', 'LTO8', '307'], ['MA3W01LY', 'WORM', 'LTO8', '307'],
                     ['CLN301L1', 'clean', 'LTO8', '307']]
    assert [line.split()[0] for line in tm.media_list(1, 2, 1).splitlines()] == [
        s['barcode'] for s in tm.cartridges(1, 2)]


def test_boot_loads_give_each_drive_a_scratch_cartridge_of_its_generation():
    assert tm.boot_loads(1, 2) == [(1, 1), (3, 2)]
    slots = tm.cartridges(3, 1)
    for slot, number in tm.boot_loads(3, 1):
        assert slots[slot - 1]['kind'] == 'scratch'
        assert slots[slot - 1]['generation'] == tm.drives(3)[number - 1]['generation']


def test_device_conf_round_trips_through_the_parser():
    conf = tm.parse_device_conf(tm.device_conf(1))
    assert conf['version'] == 5
    assert [(lib['id'], lib['target'], lib['serial']) for lib in conf['libraries']] == [(10, 0, 'MHVL001111')]
    got = [(d['id'], d['channel'], d['target'], d['lun'], d['vendor'], d['product'], d['serial'], d['library_id'],
            d['slot']) for d in conf['drives']]
    assert got == [(11, 0, 1, 0, 'IBM', 'ULT3580-TD5', 'MHV0115001', 10, 1),
                   (12, 0, 2, 0, 'HP', 'Ultrium 6-SCSI', 'MHV0126001', 10, 2)]


def test_the_lab_guest_booted_with_what_device_conf_renders_today():
    text = _fixture('device.conf__mhvtl-fc22cc6-lab-ma1__1.txt')
    assert '\n'.join(text.splitlines()[3:]) == tm.device_conf(1).rstrip('\n')


def test_parser_reads_mhvtls_own_generated_device_conf():
    conf = tm.parse_device_conf(_fixture('device.conf__mhvtl-fc22cc6-generate_device_conf-default__1.txt'))
    assert conf['version'] == 5
    assert [(lib['id'], lib['product'], lib['home']) for lib in conf['libraries']] == [
        (10, 'L700', '/opt/mhvtl'), (30, 'L80', '/opt/mhvtl')]
    assert len(conf['drives']) == 8
    first = conf['drives'][0]
    assert first == {'type': 'drive', 'id': 11, 'channel': 0, 'target': 1, 'lun': 0, 'library_id': 10, 'slot': 1,
                     'vendor': 'IBM', 'product': 'ULT3580-TD8', 'revision': '2160', 'serial': 'XYZZY_A1',
                     'naa': '10:22:33:44:ab:00:01:00', 'compression_type': 'lzo'}
    assert {d['library_id'] for d in conf['drives'][4:]} == {30}


@pytest.mark.parametrize('text, match', [
    (' Vendor identification: IBM\n', 'before any Library'),
    ('VERSION: 5\nDrive 11 and more\n', 'neither a Library/Drive header'),
])
def test_parser_refuses_what_mhvtl_would_not_read(text, match):
    with pytest.raises(ValueError, match=match):
        tm.parse_device_conf(text)


@pytest.mark.parametrize('text, want', [
    ('linux (= 6.1.176-1)', '6.1.176-1'),
    ('gcc-12 (= 12.2.0-14), linux (= 6.1.158-1)', '6.1.158-1'),
    ('linux-signed (= 1)', None),
    ('', None),
])
def test_parse_built_using(text, want):
    assert tm.parse_built_using(text) == want


INPUTS = {'uml_version': '6.1um4+b13', 'kernel_source': '6.1.176-1', 'gcc': 'gcc (Debian 12.2.0-14+deb12u1) 12.2.0',
          'mhvtl_commit': tm.MHVTL_COMMIT, 'shim_sha256': 'f5061d88'}


def test_cache_key_is_stable_and_moves_with_every_input():
    key = tm.cache_key(INPUTS)
    assert re.match(r'^[0-9a-f]{16}$', key) and key == tm.cache_key(dict(INPUTS, uml_release='ignored'))
    for field in INPUTS:
        assert tm.cache_key(dict(INPUTS, **{field: INPUTS[field] + 'x'})) != key, field
    with pytest.raises(tm.MhvtlError, match='kernel_source'):
        tm.cache_key(dict(INPUTS, kernel_source=''))


def test_cache_root_follows_the_environment(tmp_path):
    assert tm.cache_root({'TAPEOPS_LAB_CACHE': str(tmp_path)}) == str(tmp_path)
    assert tm.cache_root({'XDG_CACHE_HOME': '/x'}) == '/x/tapeops-lab'


def test_cached_build_needs_the_module_and_the_record(tmp_path):
    d = tmp_path / 'mhvtl' / 'k1'
    d.mkdir(parents=True)
    (d / 'mhvtl.ko').write_bytes(b'\x7fELF')
    assert tm.cached_build(str(tmp_path), 'k1') is None      # a build that did not finish
    (d / 'build.json').write_text('{}')
    assert tm.cached_build(str(tmp_path), 'k1') == str(d)


def test_source_tarball_is_checked_by_sha256(tmp_path, monkeypatch):
    good = tmp_path / 'mhvtl.tar.gz'
    good.write_bytes(b'pinned')
    monkeypatch.setattr(tm, 'MHVTL_SHA256', hashlib.sha256(b'pinned').hexdigest())
    assert tm.source_tarball({'TAPEOPS_MHVTL_SRC': str(good)}) == str(good)
    bad = tmp_path / 'other.tar.gz'
    bad.write_bytes(b'something else')
    with pytest.raises(tm.MhvtlError, match='not the pinned'):
        tm.source_tarball({'TAPEOPS_MHVTL_SRC': str(bad)})
    with pytest.raises(tm.MhvtlError, match='is not a file.*archive --format=tar.gz'):
        tm.source_tarball({'TAPEOPS_MHVTL_SRC': str(tmp_path / 'missing')})
    monkeypatch.setattr(tm, 'VENDORED', str(tmp_path / 'absent.tar.gz'))
    with pytest.raises(tm.MhvtlError, match='TAPEOPS_MHVTL_SRC is unset'):
        tm.source_tarball({})


def test_tarball_commit_reads_git_archives_pax_header(tmp_path):
    path = tmp_path / 'a.tar'
    with tarfile.open(path, 'w', format=tarfile.PAX_FORMAT, pax_headers={'comment': tm.MHVTL_COMMIT}) as tar:
        info = tarfile.TarInfo('mhvtl-fc22cc6/README')
        info.size = 2
        tar.addfile(info, io.BytesIO(b'hi'))
    assert tm.tarball_commit(str(path)) == tm.MHVTL_COMMIT
    assert tm.tarball_commit(str(tmp_path / 'none.tar')) is None


def test_library_contents_and_mhvtl_conf():
    text = tm.library_contents(2, 1)
    assert 'VERSION: 2' in text and 'Drive 1:' in text and 'Drive 2:' not in text and 'MAP 1:' in text
    assert re.findall(r'^Slot (\d+): (\S+)$', text, re.M) == [
        ('1', 'MA2001L7'), ('2', 'MA2099L7'), ('3', 'MA2W01LX'), ('4', 'CLN201L1')]
    assert 'CAPACITY=307\n' in tm.mhvtl_conf(tm.capacity_mb(4096, 1024))
    assert tm.capacity_mb(100, 1024) == 100


def test_mhvtl_guest_env_round_trips_and_keeps_worm_and_cleaning_out_of_scratch():
    spec = tapelab.guest_spec(1, 2, '/r', 2400, 'mhvtl')
    env = tapelab.parse_guest_env(tapelab.guest_env(spec, '/m', 4096, 1024))
    assert env['TAPELAB_DRIVE_MODE'] == 'mhvtl' and env['TAPELAB_SCALE'] == ''
    assert env['TAPELAB_MHVTL_DRIVES'] == '11:0:1:0:MHV0115001 12:0:2:0:MHV0126001'
    assert env['TAPELAB_MHVTL_LOADS'] == '1:0 3:1' and env['TAPELAB_DATA_SEED'] == '5:MA1099L5'
    booted = tapelab.apply_booted_cartridges(dict(spec, scratch=[], worm=[], cleaning=[]), env)
    assert booted['scratch'] == ['MA1001L5', 'MA1002L5', 'MA1101L6', 'MA1102L6']
    assert (booted['worm'], booted['cleaning'], booted['data']) == (['MA1W01LV'], ['CLN101L1'], ['MA1099L5'])


def test_inventory_of_an_mhvtl_guest_names_drives_by_hctl_and_serial_and_groups_it():
    spec = tapelab.guest_spec(1, 2, '/r', 2400, 'mhvtl')
    emulated = tapelab.guest_spec(2, 2, '/r', 2400)
    ready = tapelab.parse_ready('changer_sg=/dev/sg2\nchanger_hctl=0:0:0:0\nnst=/dev/nst1\n'
                                'drive1_hctl=0:0:1:0\ndrive1_nst=/dev/nst1\ndrive1_sg=/dev/sg1\n'
                                'drive2_hctl=0:0:2:0\ndrive2_nst=/dev/nst0\ndrive2_sg=/dev/sg0\n')
    data = yaml.safe_load(tapelab.render_inventory([spec, emulated], {spec['name']: ready}, '/r'))
    hv = data['all']['children']['media_agents']['hosts']['lab-ma1']
    assert [(d['hctl'], d['nst'], d['serial'], d['lto_generation']) for d in hv['tapeops_lab_drives']] == [
        ('0:0:1:0', '/dev/nst1', 'MHV0115001', 5), ('0:0:2:0', '/dev/nst0', 'MHV0126001', 6)]
    assert hv['tapeops_lab_drive_mode'] == 'mhvtl' and hv['tapeops_lab_mhvtl']['physics'] is False
    assert hv['tapeops_allowed_barcodes'] == ['MA1001L5', 'MA1002L5', 'MA1101L6', 'MA1102L6']
    assert hv['tapeops_lab_loaded_barcodes'] == ['MA1001L5', 'MA1101L6']
    assert (hv['tapeops_lab_worm_barcodes'], hv['tapeops_lab_cleaning_barcodes']) == (['MA1W01LV'], ['CLN101L1'])
    assert hv['tapeops_drives'] == [{'nst': '/dev/nst1', 'physics': False}, {'nst': '/dev/nst0', 'physics': False}]
    assert 'tapeops_lab_spread' not in hv and 'tapeops_lab_drive_profile' not in hv
    assert data['all']['children']['lab_mhvtl'] == {'hosts': {'lab-ma1': {}}}
    only_emulated = yaml.safe_load(tapelab.render_inventory([emulated], {}, '/r'))
    assert list(only_emulated['all']['children']) == ['media_agents']


def test_print_status_names_each_guests_backend(capsys):
    tapelab.Lab.print_status({'lab-ma1': {'running': True, 'ssh': True, 'port': 2401, 'backend': 'mhvtl',
                                          'drive': 'IBM ULT3580-TD5 + HP Ultrium 6-SCSI', 'pids': {'uml': 7},
                                          'ready': {'nst': '/dev/nst1', 'changer_sg': '/dev/sg2'}}})
    assert 'backend=mhvtl drive=IBM ULT3580-TD5 + HP Ultrium 6-SCSI nst=/dev/nst1' in capsys.readouterr().out


def test_parse_library_contents_reads_what_mhvtl_reads():
    text = tm.library_contents(1, 2) + '# a comment\nSlot 8:\nMAP 2: IMP001L5\nnonsense line\n'
    got = tm.parse_library_contents(text)
    assert got['version'] == 2 and got['drives'] == [1, 2] and got['pickers'] == [1]
    assert got['maps'] == {1: None, 2: 'IMP001L5'}
    assert got['slots'][6] == 'MA1W01LV' and got['slots'][8] is None and len(got['slots']) == 8


@pytest.mark.parametrize('barcode, kind', [
    ('CLN001L1', 'cleaning'), ('MA1W01LV', 'worm'), ('E01001LZ', 'worm'), ('E01001L8', 'data'), ('', 'data'),
])
def test_label_kind(barcode, kind):
    assert tm.label_kind(barcode) == kind


def _fake_mhvtl(root, host=3, other_host=0):
    """A sysfs tree with mhvtl's devices of lab-ma1 on SCSI host ``host``, and a disk on another host at 0:1:0."""
    sysfs = root / 'sys'
    for h, proc in ((host, 'mhvtl'), (other_host, 'ahci')):
        d = sysfs / 'class' / 'scsi_host' / ('host%d' % h)
        d.mkdir(parents=True)
        (d / 'proc_name').write_text(proc + '\n')
    devices = sysfs / 'bus' / 'scsi' / 'devices'
    nodes = {(0, 0): ('scsi_generic', 'sg2'), (1, 0): ('scsi_tape', 'nst1'), (2, 0): ('scsi_tape', 'nst0')}
    for (target, lun), (cls, name) in nodes.items():
        d = devices / ('%d:0:%d:%d' % (host, target, lun))
        (d / cls / name).mkdir(parents=True)
        if cls == 'scsi_tape':
            for extra in ('nst%sa' % name[3:], 'st' + name[3:]):
                (d / cls / extra).mkdir()
            (d / 'scsi_generic' / ('sg%d' % target)).mkdir(parents=True)
    (devices / ('%d:0:1:0' % other_host) / 'scsi_generic' / 'sg9').mkdir(parents=True)
    conf = root / 'etc'
    conf.mkdir()
    (conf / 'device.conf').write_text(tm.device_conf(1))
    (conf / 'library_contents.10').write_text(tm.library_contents(1, 2))
    return str(conf), str(sysfs)


def test_machine_facts_finds_each_device_by_its_address_on_the_mhvtl_host(tmp_path):
    conf, sysfs = _fake_mhvtl(tmp_path)
    facts = tm.machine_facts(conf, sysfs)
    [lib] = facts['libraries']
    assert (lib['hctl'], lib['sg'], lib['serial']) == ('3:0:0:0', '/dev/sg2', 'MHVL001111')
    assert [(s['slot'], s['barcode'], s['kind']) for s in lib['slots']][-3:] == [
        (5, 'MA1099L5', 'data'), (6, 'MA1W01LV', 'worm'), (7, 'CLN101L1', 'cleaning')]
    # the other host's device at the same C:T:L is not mhvtl's; st numbering is not target order
    assert [(d['hctl'], d['nst'], d['sg'], d['serial'], d['slot']) for d in facts['drives']] == [
        ('3:0:1:0', '/dev/nst1', '/dev/sg1', 'MHV0115001', 1), ('3:0:2:0', '/dev/nst0', '/dev/sg2', 'MHV0126001', 2)]


def test_facts_command_says_what_is_missing(tmp_path, capsys):
    assert tm.main(['facts', str(tmp_path)]) == 1
    assert 'is mhvtl installed' in capsys.readouterr().err
    assert tm.main([]) == 2


def test_scratch_dir_is_the_tmpfs_only_with_room(tmp_path):
    assert tm.scratch_dir('/fallback', str(tmp_path), min_free=1) == str(tmp_path)
    assert tm.scratch_dir('/fallback', str(tmp_path), min_free=1 << 62) == '/fallback'
    assert tm.scratch_dir('/fallback', str(tmp_path / 'absent')) == '/fallback'
