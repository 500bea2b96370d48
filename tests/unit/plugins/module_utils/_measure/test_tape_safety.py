"""Every refusal of the safety gate, on real device nodes where this host has
them (/dev/null, a file, a FIFO, a directory) and on a sysfs tree shaped like
the kernel's for the rest (st, sg, disks)."""

import os
import stat

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_safety as S


class FakeStat:
    def __init__(self, mode, major=0, minor=0):
        self.st_mode = mode
        self.st_rdev = os.makedev(major, minor)


def fake_sys(tmp_path, major, minor, name, dev_type='1'):
    devices = tmp_path / 'devices' / 'platform' / 'host0' / 'target0:0:0' / '0:0:0:0'
    devices.mkdir(parents=True, exist_ok=True)
    (devices / 'type').write_text(dev_type + '\n')
    node = devices / 'scsi_tape' / name
    node.mkdir(parents=True, exist_ok=True)
    (node / 'device').symlink_to(devices)
    chardir = tmp_path / 'dev' / 'char'
    chardir.mkdir(parents=True, exist_ok=True)
    (chardir / ('%d:%d' % (major, minor))).symlink_to(node)
    return str(tmp_path)


def refuse(path, reason, **kwargs):
    with pytest.raises(S.TapeSafetyError) as info:
        S.check_tape_device(path, **kwargs)
    assert info.value.reason == reason, info.value.msg
    assert 'nst' in info.value.msg  # every refusal names the node to use or the one found
    return info.value.msg


def test_dev_null_is_refused():
    msg = refuse('/dev/null', 'memory_device')
    assert 'memory device' in msg


def test_regular_file_is_refused(tmp_path):
    path = tmp_path / 'image.bin'
    path.write_bytes(b'x')
    assert 'regular file' in refuse(str(path), 'regular_file')


def test_directory_and_fifo_are_refused(tmp_path):
    refuse(str(tmp_path), 'directory')
    fifo = tmp_path / 'fifo'
    os.mkfifo(str(fifo))
    refuse(str(fifo), 'not_char_device')


def test_missing_path_is_refused(tmp_path):
    refuse(str(tmp_path / 'nst7'), 'missing')


@pytest.mark.parametrize('name', ['sda', 'sda1'])
def test_disk_and_partition_are_refused(tmp_path, name):
    msg = refuse('/dev/' + name, 'block_device', stat_func=lambda p: FakeStat(stat.S_IFBLK | 0o660, 8, 1))
    assert 'a disk or a partition' in msg


def test_sg_node_is_refused(tmp_path):
    root = tmp_path / 'sys'
    (root / 'dev' / 'char').mkdir(parents=True)
    (root / 'dev' / 'char' / '21:3').symlink_to(tmp_path)
    msg = refuse('/dev/sg3', 'sg_node', sys_root=str(root),
                 stat_func=lambda p: FakeStat(stat.S_IFCHR | 0o660, 21, 3))
    assert 'SCSI generic' in msg


def test_other_char_devices_are_refused():
    refuse('/dev/sch0', 'changer_node', stat_func=lambda p: FakeStat(stat.S_IFCHR, 86, 0))
    refuse('/dev/ttyS0', 'other_char_device', stat_func=lambda p: FakeStat(stat.S_IFCHR, 4, 64))


def test_real_tty_or_random_char_device_is_refused():
    path = '/dev/urandom' if os.path.exists('/dev/urandom') else '/dev/zero'
    refuse(path, 'memory_device')


def test_nst_bound_to_a_sequential_device_passes(tmp_path):
    root = fake_sys(tmp_path / 'sys', 9, 128, 'nst0')
    ident = S.check_tape_device('/dev/nst0', sys_root=root, stat_func=lambda p: FakeStat(stat.S_IFCHR, 9, 128))
    assert ident.name == 'nst0' and ident.index == 0 and ident.scsi_device == '0:0:0:0'


def test_rewinding_st_node_is_refused_with_the_nst_to_use(tmp_path):
    root = fake_sys(tmp_path / 'sys', 9, 0, 'st0')
    msg = refuse('/dev/st0', 'rewinding_node', sys_root=root, stat_func=lambda p: FakeStat(stat.S_IFCHR, 9, 0))
    assert 'Use /dev/nst0' in msg


def test_st_major_without_sysfs_entry_is_stale(tmp_path):
    (tmp_path / 'dev' / 'char').mkdir(parents=True)
    refuse('/dev/nst5', 'stale_node', sys_root=str(tmp_path), stat_func=lambda p: FakeStat(stat.S_IFCHR, 9, 133))


def test_st_node_on_a_non_sequential_device_is_refused(tmp_path):
    root = fake_sys(tmp_path / 'sys', 9, 128, 'nst0', dev_type='0')
    refuse('/dev/nst0', 'not_sequential', sys_root=root, stat_func=lambda p: FakeStat(stat.S_IFCHR, 9, 128))


BLANK = {'online': True, 'write_protected': False, 'worm': False, 'content': 'blank', 'detail': 'EOD at BOT'}
DATA = {'online': True, 'write_protected': False, 'worm': False, 'content': 'data', 'detail': 'read 65536 bytes'}


def test_blank_media_may_be_written():
    assert S.media_verdict(BLANK) == 'blank media'


def test_media_with_data_is_refused_unless_allowed():
    with pytest.raises(S.TapeSafetyError) as info:
        S.media_verdict(DATA, barcode='LAB001L5')
    assert info.value.reason == 'media_has_data'
    assert 'allowed_barcodes' in info.value.msg and 'LAB001L5' in info.value.msg
    assert 'allowed_barcodes' in S.media_verdict(DATA, allowed_barcodes=['lab001l5'], barcode='LAB001L5')
    assert 'overwrite=true' in S.media_verdict(DATA, overwrite=True)


def test_unknown_content_counts_as_data():
    probe = dict(DATA, content='unknown', detail='EIO at BOT without EOD')
    with pytest.raises(S.TapeSafetyError, match='could not be proven blank'):
        S.media_verdict(probe)


def test_write_protected_and_worm_are_refused_even_with_overwrite():
    with pytest.raises(S.TapeSafetyError) as info:
        S.media_verdict(dict(BLANK, write_protected=True), overwrite=True)
    assert info.value.reason == 'write_protected'
    with pytest.raises(S.TapeSafetyError) as info:
        S.media_verdict(dict(BLANK, worm=True), overwrite=True)
    assert info.value.reason == 'worm'
    with pytest.raises(S.TapeSafetyError) as info:
        S.media_verdict(BLANK, barcode='ABC123LW', allowed_barcodes=['ABC123LW'])
    assert info.value.reason == 'worm'


def test_no_media_is_refused():
    with pytest.raises(S.TapeSafetyError) as info:
        S.media_verdict(dict(BLANK, online=False))
    assert info.value.reason == 'no_media'


def test_unknown_write_protection_is_not_writable():
    # A status that does not say (GNU cpio mt, Solaris mt: parsed as None) is no permission to write.
    probe = dict(BLANK, write_protected=None)
    with pytest.raises(S.TapeSafetyError) as info:
        S.media_verdict(probe, overwrite=True)
    assert info.value.reason == 'write_protect_unknown' and 'mt status' in str(info.value)


def test_the_media_decision_says_where_it_read_once():
    # the probe's own words, as the lab run recorded them (tests/unit/fixtures/lab_runs/20261123-quick)
    probe = {'online': True, 'write_protected': False, 'worm': False, 'content': 'data',
             'detail': 'read a 262144-byte block at BOT'}
    decision = S.media_verdict(probe, allowed_barcodes=['MA1001L5'], barcode='MA1001L5')
    assert decision == 'barcode MA1001L5 is in allowed_barcodes (read a 262144-byte block at BOT)'
    assert S.media_verdict(dict(probe, detail=None), overwrite=True) == 'overwrite=true (data at BOT)'


def test_a_trailing_slash_says_what_to_write_instead():
    # a real stat() of this machine: /dev/null/ fails with ENOTDIR, as /dev/nst0/ does on a media agent
    msg = refuse('/dev/null/', 'missing')
    assert msg == ('/dev/null/ is not a device path: a part of it before the last "/" is not a directory (a '
                   'trailing "/"). Set device to a non-rewinding tape node such as /dev/nst0 '
                   '(tapeops.qualify.tape_drive_info lists them).')


def test_a_path_through_a_file_says_what_to_write_instead(tmp_path):
    afile = tmp_path / 'file'
    afile.write_bytes(b'')
    msg = refuse(str(afile / 'nst0'), 'missing')
    assert 'is not a device path' in msg and 'trailing' not in msg
