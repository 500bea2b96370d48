"""st sysfs statistics and options."""

from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _st_sysfs


def test_read_stats_and_delta_from_a_sysfs_tree(tmp_path):
    stats = tmp_path / 'class' / 'scsi_tape' / 'nst0' / 'stats'
    stats.mkdir(parents=True)
    for i, field in enumerate(_st_sysfs.STAT_FIELDS):
        (stats / field).write_text('%d\n' % (i * 10))
    before = _st_sysfs.read_stats('nst0', sys_root=str(tmp_path))
    (stats / 'write_byte_cnt').write_text('1048606\n')
    (stats / 'write_ns').write_text('2000000050\n')
    after = _st_sysfs.read_stats('nst0', sys_root=str(tmp_path))
    delta = _st_sysfs.stats_delta(before, after)
    assert delta['write_byte_cnt'] == 1048606 - 30
    assert delta['write_ns'] == 2000000000
    assert delta['read_cnt'] == 0
    assert _st_sysfs.read_stats('nst9', sys_root=str(tmp_path)) is None


def test_options_decode():
    opts = _st_sysfs.decode_options('0x00000f81')
    assert opts['buffer_writes'] and opts['def_writes'] and opts['can_bsr']
    assert opts['no_blklims'] and opts['can_partitions'] and opts['scsi2logical']
    assert not opts['async_writes'] and not opts['sysv']
    assert opts['value'] == '0x00000f81'


def test_options_that_are_not_a_number_are_unknown_not_all_off():
    assert _st_sysfs.decode_options('garbage') == {'value': None, 'raw': 'garbage'}


def test_sysfs_attribute_with_bytes_that_are_not_utf8(tmp_path):
    path = tmp_path / 'vendor'
    path.write_bytes(b'HP\xff\xfe  \n')
    assert _st_sysfs.read_attr(str(path)) == 'HP\ufffd\ufffd'
