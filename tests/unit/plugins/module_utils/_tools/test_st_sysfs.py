"""st sysfs statistics and options."""

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _st_sysfs

from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._tape_fixtures import fixture


def test_real_stats_listing_has_every_counter_we_read():
    names = _st_sysfs.parse_stats_listing(fixture('sysfs', 'sysfs_st_stats_ls__Monitorix-issue394__1.txt'))
    assert sorted(names) == sorted(_st_sysfs.STAT_FIELDS)


def test_real_stats_values_ibm_lto7():
    stats = _st_sysfs.parse_stats_text(fixture('sysfs', 'sysfs_st_stats__sysstat-issue291-IBM-LTO7-RHEL7__1.txt'))
    assert stats == {'io_ns': 5058457945440, 'other_cnt': 26770}


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


TAPESTAT = 'tapestat'


def test_tapestat_monitorix_st0_reading():
    r = _st_sysfs.parse_tapestat(fixture(TAPESTAT, 'tapestat__Monitorix-issue394-st0-reading__1.txt'))
    assert r['format'] == 'text' and len(r['reports']) == 1
    st0 = r['reports'][0]['tapes'][0]
    assert (st0['device'], st0['r_s'], st0['read'], st0['read_pct'], st0['other_pct']) == ('st0', 4584, 293440, 93, 93)
    # kB in tapestat is 1024 bytes: 293440 kB/s = 300.48 MB/s.
    assert st0['read_bytes_s'] == 293440 * 1024 and st0['read_mb_s'] == 300.483


def test_tapestat_transcribed_bareos_eight_reports():
    r = _st_sysfs.parse_tapestat(fixture(TAPESTAT, 'tapestat_transcribed__bareos-docs-st0-st1__1.txt'))
    assert len(r['reports']) == 8
    assert [rep['tapes'][0]['write'] for rep in r['reports']][:3] == [89088, 90112, 88064]
    assert all(rep['tapes'][1]['write'] == 0 for rep in r['reports'])


def test_tapestat_text_json_and_megabytes_agree_on_simulated_counters():
    text = _st_sysfs.parse_tapestat(fixture(TAPESTAT, 'tapestat__simulated-st0-300MBs-st1-idle__sysstat-12.7.9__1.txt'))
    json_ = _st_sysfs.parse_tapestat(
        fixture(TAPESTAT, 'tapestat_json__simulated-st0-300MBs-st1-idle__sysstat-12.7.9__1.txt'))
    mb = _st_sysfs.parse_tapestat(fixture(TAPESTAT, 'tapestat_t_m__simulated-st0-300MBs-st1-idle__sysstat-12.7.9__1.txt'))
    assert json_['format'] == 'json' and json_['host']['number-of-cpus'] == 2
    assert text['reports'][-1]['tapes'] == json_['reports'][-1]['tapes']
    assert text['reports'][-1]['tapes'][0]['write_bytes_s'] == 1144 * 262144
    assert mb['reports'][-1]['tapes'][0]['unit'] == 'MB' and mb['reports'][-1]['tapes'][0]['write'] == 285
    assert mb['reports'][-1]['timestamp'].endswith('18:42:37')
    assert text['host']['cpus'] == 2


def test_tapestat_json_stopped_early_keeps_its_rows():
    text = fixture(TAPESTAT, 'tapestat_json__simulated-st0-300MBs-st1-idle__sysstat-12.7.9__1.txt')
    r = _st_sysfs.parse_tapestat(text[:text.index('"st1"') + 30])
    assert r['complete'] is False and [t['device'] for t in r['reports'][0]['tapes']] == ['st0']
    assert 'incomplete' in r['warnings'][0]


@pytest.mark.parametrize('text', ['', 'Linux 6.1.0 (host)\n', '{"sysstat": {"hosts": [', '{'])
def test_not_tapestat_says_what_to_run(text):
    with pytest.raises(_st_sysfs.TapestatParseError, match='tapestat'):
        _st_sysfs.parse_tapestat(text)
