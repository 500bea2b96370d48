"""The tape drive's HBA link from sysfs (SAS negotiated rate, FC port speed).

The trees below are laid out as the kernel lays them out, with the names it
gives (drivers/scsi/scsi_transport_sas.c: sas_phy_alloc "phy-%d:%d" /
"phy-%d:%d:%d", sas_port_alloc "port-%d:%d" / "port-%d:%d:%d",
sas_port_create_link: a symlink per member phy inside the port,
sas_linkspeed_names; drivers/scsi/scsi_transport_fc.c: show_fc_host_speed
"unknown", fc_port_speed_names; drivers/target/loopback/tcm_loop.c:
tcm_loop_0/tcm_loop_adapter_N/hostH for the lab's virtual host), with the
relative class symlinks sysfs makes (/sys/class/scsi_tape/nst0 ->
../../devices/.../scsi_tape/nst0, its ``device`` -> the SCSI device).
Real values of the same attribute: sasutils (stanford-rc/sasutils PR #16)
prints "4x12.0 Gbit" for an HBA-expander wide port and "1x12.0 Gbit" for an
end device, read from these files.
"""

import os

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _hba_link

PCI = 'devices/pci0000:00/0000:00:03.0/0000:02:00.0'


def tape_link(name, sys_root):
    """The link of st tape ``name`` as discovery reads it: through /sys/class/scsi_tape/<name>/device."""
    name = os.path.basename(name)
    return _hba_link.device_link(os.path.join(sys_root, 'class', 'scsi_tape', name, 'device'), sys_root)


def _link(root, path, target):
    """A relative symlink at root/path to root/target, as sysfs makes them."""
    full = os.path.join(root, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    os.symlink(os.path.relpath(os.path.join(root, target), os.path.dirname(full)), full)


def _write(root, path, text):
    full = os.path.join(root, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, 'w') as handle:
        handle.write(text)


def _phy(root, parent, name, rate):
    """A SAS phy device with its transport class directory and its /sys/class/sas_phy link."""
    _write(root, '%s/%s/sas_phy/%s/negotiated_linkrate' % (parent, name, name), rate + '\n')
    _link(root, 'class/sas_phy/%s' % name, '%s/%s/sas_phy/%s' % (parent, name, name))


def _tape(root, device_dir, name='nst0'):
    os.makedirs(os.path.join(root, device_dir, 'scsi_tape', name))
    _write(root, device_dir + '/vendor', 'IBM     \n')
    _link(root, 'class/scsi_tape/%s' % name, '%s/scsi_tape/%s' % (device_dir, name))
    _link(root, '%s/scsi_tape/%s/device' % (device_dir, name), device_dir)


def sas_direct(root, rate='6.0 Gbit'):
    """LSI SAS2008-style HBA, drive on phy 4 (direct attach, narrow port)."""
    host = PCI + '/host0'
    for number in range(8):
        _phy(root, host, 'phy-0:%d' % number, rate if number == 4 else 'Unknown')
    _link(root, host + '/port-0:0/phy-0:4', host + '/phy-0:4')
    _tape(root, host + '/port-0:0/end_device-0:0/target0:0:0/0:0:0:0')
    return root


def sas_expander(root, upstream='12.0 Gbit', drive='6.0 Gbit'):
    """HBA -> 4-lane wide port -> expander-0:0 -> narrow port-0:0:5 -> the drive."""
    host = PCI + '/host0'
    for number in range(4):
        _phy(root, host, 'phy-0:%d' % number, upstream)
        _link(root, host + '/port-0:0/phy-0:%d' % number, host + '/phy-0:%d' % number)
    expander = host + '/port-0:0/expander-0:0'
    for number in range(12):
        _phy(root, expander, 'phy-0:0:%d' % number, drive if number == 5 else 'Unknown')
    _link(root, expander + '/port-0:0:5/phy-0:0:5', expander + '/phy-0:0:5')
    _tape(root, expander + '/port-0:0:5/end_device-0:0:5/target0:0:1/0:0:1:0')
    return root


def fc(root, speed='8 Gbit'):
    """QLogic-style FC HBA: host5 with fc_host/host5/speed, the drive below an rport."""
    host = PCI + '/host5'
    if speed is not None:
        _write(root, host + '/fc_host/host5/speed', speed + '\n')
        _link(root, 'class/fc_host/host5', host + '/fc_host/host5')
    _tape(root, host + '/rport-5:0-2/target5:0:0/5:0:0:0')
    return root


def tcm_loop(root):
    """The lab: LIO tcm_loop's virtual host (no SAS or FC transport class)."""
    _tape(root, 'devices/tcm_loop_0/tcm_loop_adapter_0/host2/target2:0:1/2:0:1:0')
    return root


@pytest.mark.parametrize('text, usable, encoding', [
    ('1.5 Gbit', 150.0, '8b/10b'), ('3.0 Gbit', 300.0, '8b/10b'), ('6.0 Gbit', 600.0, '8b/10b'),
    ('12.0 Gbit', 1200.0, '8b/10b'), ('22.5 Gbit', 2400.0, '128b/150b')])
def test_every_sas_rate_the_kernel_prints_has_its_usable_rate(text, usable, encoding):
    rate = _hba_link.parse_sas_rate(text + '\n')
    assert rate == {'raw': text, 'linked': True, 'usable_mb_s': usable, 'encoding': encoding}


def test_sas_states_without_a_link_are_unknown_and_odd_text_is_not_false():
    for text in ('Unknown', 'Phy disabled', 'Link Rate failed', 'Spin-up hold'):
        assert _hba_link.parse_sas_rate(text)['linked'] is False
        assert _hba_link.parse_sas_rate(text)['usable_mb_s'] is None
    for text in ('6 Gbit', '', None, '\ufffd\ufffd', '6.0 Gbit 6.0 Gbit'):
        rate = _hba_link.parse_sas_rate(text)
        assert rate['linked'] is None and rate['usable_mb_s'] is None


@pytest.mark.parametrize('text, usable', [
    ('1 Gbit', 100.0), ('2 Gbit', 200.0), ('4 Gbit', 400.0), ('8 Gbit', 800.0), ('10 Gbit', 1200.0),
    ('16 Gbit', 1600.0), ('32 Gbit', 3200.0), ('unknown', None), ('Not Negotiated', None), ('64 Gbit', None),
    ('4 Gbit, 8 Gbit', None), ('', None), (None, None)])
def test_fc_port_speeds(text, usable):
    assert _hba_link.parse_fc_speed(text)['usable_mb_s'] == usable


def test_direct_attached_sas_drive_6g(tmp_path):
    link = tape_link('nst0', str(sas_direct(str(tmp_path))))
    assert link['transport'] == 'SAS' and link['host'] == 'host0'
    assert link['rate'] == '6.0 Gbit' and link['lanes'] == 1 and link['usable_mb_s'] == 600.0
    assert link['encoding'] == '8b/10b'
    assert [h['port'] for h in link['hops']] == ['port-0:0']
    assert link['hops'][0]['phys'][0]['phy'] == 'phy-0:4'
    assert 'port-0:0 1x 6.0 Gbit = 600 MB/s' in link['text']


def test_the_class_symlink_alone_gives_the_rate_when_the_phy_dir_has_no_class_dir(tmp_path):
    root = str(sas_direct(str(tmp_path)))
    host = os.path.join(root, PCI, 'host0')
    os.rename(os.path.join(host, 'phy-0:4', 'sas_phy'), os.path.join(host, 'phy-0:4', 'moved'))
    os.unlink(os.path.join(root, 'class', 'sas_phy', 'phy-0:4'))
    _link(root, 'class/sas_phy/phy-0:4', PCI + '/host0/phy-0:4/moved/phy-0:4')
    assert tape_link('/dev/nst0', root)['usable_mb_s'] == 600.0


def test_behind_an_expander_the_drive_narrow_link_caps_not_the_wide_uplink(tmp_path):
    link = tape_link('nst0', str(sas_expander(str(tmp_path))))
    assert [h['port'] for h in link['hops']] == ['port-0:0', 'port-0:0:5']
    uplink, own = link['hops']
    assert uplink['lanes'] == 4 and uplink['usable_mb_s'] == 4800.0
    assert own['lanes'] == 1 and own['usable_mb_s'] == 600.0
    assert link['usable_mb_s'] == 600.0 and link['rate'] == '6.0 Gbit'


def test_a_slow_uplink_caps_a_fast_drive_link(tmp_path):
    link = tape_link('nst0', str(sas_expander(str(tmp_path), upstream='1.5 Gbit', drive='12.0 Gbit')))
    # 4 lanes x 150 = 600 MB/s uplink below the drive's 1200
    assert link['usable_mb_s'] == 600.0 and link['lanes'] == 4 and link['rate'] == '1.5 Gbit'


def test_sas_phy_with_no_link_is_unknown_not_zero(tmp_path):
    link = tape_link('nst0', str(sas_direct(str(tmp_path), rate='Phy disabled')))
    assert link['transport'] == 'SAS' and link['usable_mb_s'] is None and link['rate'] is None
    assert 'phy-0:4 Phy disabled' in link['text'] and 'unknown' in link['text']


def test_fc_8g_and_16g(tmp_path):
    link = tape_link('nst0', str(fc(str(tmp_path / 'a'))))
    assert (link['transport'], link['host'], link['rate'], link['usable_mb_s']) == ('FC', 'host5', '8 Gbit', 800.0)
    assert tape_link('nst0', str(fc(str(tmp_path / 'b'), '16 Gbit')))['usable_mb_s'] == 1600.0


def test_fc_unknown_speed_and_missing_attribute_stay_unknown(tmp_path):
    link = tape_link('nst0', str(fc(str(tmp_path / 'a'), 'unknown')))
    assert link['transport'] == 'FC' and link['usable_mb_s'] is None and "'unknown'" in link['text']
    link = tape_link('nst0', str(fc(str(tmp_path / 'b'), None)))
    assert link['transport'] == 'FC' and link['usable_mb_s'] is None and 'unreadable' in link['text']


def test_lab_tcm_loop_host_is_not_a_sas_or_fc_link(tmp_path):
    link = tape_link('nst0', str(tcm_loop(str(tmp_path))))
    assert link['transport'] is None and link['usable_mb_s'] is None and link['host'] == 'host2'
    assert link['text'].startswith('not a SAS or FC link')


def test_no_such_tape_and_odd_bytes_give_no_traceback(tmp_path):
    link = tape_link('nst7', str(tmp_path))
    assert link['transport'] is None and link['usable_mb_s'] is None and 'link unknown' in link['text']
    root = str(sas_direct(str(tmp_path / 'odd')))
    with open(os.path.join(root, PCI, 'host0', 'phy-0:4', 'sas_phy', 'phy-0:4', 'negotiated_linkrate'), 'wb') as h:
        h.write(b'\xff\xfe\x00garbage')
    link = tape_link('nst0', root)
    assert link['transport'] == 'SAS' and link['usable_mb_s'] is None


def test_slowest_link_of_a_host():
    links = [{'usable_mb_s': None}, {'usable_mb_s': 1200.0, 'id': 'a'}, {'usable_mb_s': 600.0, 'id': 'b'},
             {'usable_mb_s': True}, 'junk', {'usable_mb_s': float('nan')}]
    assert _hba_link.slowest(links)['id'] == 'b'
    assert _hba_link.slowest([{'usable_mb_s': None}]) is None and _hba_link.slowest(None) is None
