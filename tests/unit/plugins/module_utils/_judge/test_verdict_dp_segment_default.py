# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A Data Protector host whose inventory gives no segment size: the verdict models DP's 2000 MB default.

Seed 001 (issue 22/23): an HP LTO-4 FH SAS drive with Data Protector A.09.07 on
CentOS 6.8 wrote one 16 GB file of 1.6:1 data in 256 KiB blocks at

- 108.84 MB/s with the default omnirc and the default segment (2000 MB);
- 183.91 MB/s with the default omnirc and 20000 MB segments;
- 188.24 MB/s with OB2IMMEDFM (OB2FORCESCSI=WFM, OB2IMMEDFM=1) and 2000 MB segments;
- 190.48 MB/s with OB2IMMEDFM and 20000 MB segments.
"""

from __future__ import annotations

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _drive_model as dm
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _forecast, _host
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _verdict as v
from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import _fleet
from ansible_collections.tapeops.qualify.plugins.module_utils import _words

from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils.report_cases import drive, source as report_source, write_result

LTO4_HP = dm.lookup(4, 'FH', 'HP', interface='SAS')
LTO9 = dm.lookup(9, 'FH', 'IBM')
MTWEOFI = {'mtweofi_supported': True}   # CentOS 6.8's st driver has MTWEOFI (RHEL 6.5 and later)

DEFAULT_SENTENCE = ('No segment size was given (tapeops_backup.segment_size_mb), so the forecast models the Data '
                    'Protector default: a file mark every 2000 MB, synchronous unless immediate file marks are on; '
                    'set segment_size_mb to the device\'s segment size where it differs.')


def source(rate, seconds=60):
    series = [float(rate)] * seconds
    return {'streams': [{'path': '/src', 'mean_mb_s': rate}],
            'aggregate': {'mean_mb_s': rate, 'series_mb_s': series, 'streams': 1, 'samples': seconds,
                          'duration_s': float(seconds)}}


def judge(spec, config, rate=500.0, drive_info=None, **options):
    options.setdefault('tape_ratio', 1.0)
    return _words.verdict(v.evaluate(spec, source(rate), None, drive_info, config, options=options)).to_dict()


def test_a_data_protector_host_without_a_segment_size_gets_marks_every_2000_mb():
    verdict = judge(LTO9, {'software': 'data_protector'}, drive_info=MTWEOFI)
    now = verdict['forecast']['now']
    assert verdict['numbers']['segment_size_mb'] == 2000.0
    assert verdict['numbers']['segment_size_basis'] == 'default'
    assert now['inputs']['segment_size_mb'] == 2000.0 and now['inputs']['filemark_mode'] == 'sync'
    # one synchronous mark per 2000 MB the backup wrote in the replayed window
    written_mb = now['effective_mb_s'] * now['simulated_seconds']
    assert now['filemarks'] == pytest.approx(written_mb / 2000.0, abs=1.0)
    # each synchronous mark costs a back-hitch (the last one of the window may not have been paid yet)
    assert now['filemarks'] > 0 and now['filemarks'] - 1 <= now['backhitches_filemark'] <= now['filemarks']
    # the same forecast as an inventory that says 2000 MB; only the basis differs
    given = judge(LTO9, {'software': 'data_protector', 'segment_size_mb': 2000}, drive_info=MTWEOFI)
    assert given['forecast']['now'] == now
    assert given['numbers']['segment_size_basis'] == 'inventory'
    # the words say it is the default, in the reasons and in the fix built on it
    assert DEFAULT_SENTENCE in verdict['reasons']
    assert DEFAULT_SENTENCE not in given['reasons']
    fix = next(f for f in verdict['fixes'] if f['id'] == 'immediate_filemarks')
    assert fix['why'].startswith('Every 2000 MB segment (the Data Protector default) ends with a synchronous file mark')
    given_fix = next(f for f in given['fixes'] if f['id'] == 'immediate_filemarks')
    assert given_fix['why'].startswith('Every 2000 MB segment ends with a synchronous file mark')


def test_without_mtweofi_the_default_segment_gets_a_segment_size_fix_that_says_so():
    verdict = judge(LTO9, {'software': 'data_protector'}, drive_info={'mtweofi_supported': False})
    fix = next(f for f in verdict['fixes'] if f['id'] == 'segment_size')
    assert fix['value'] > 2000
    assert fix['why'].startswith('A synchronous file mark every 2000 MB (the Data Protector default): ')
    assert fix['setting'] == 'Data Protector device > Advanced > Sizes: Segment size (MB) = %d' % fix['value']


@pytest.mark.parametrize('software, name', [('bacula', 'Bacula'), ('bareos', 'Bareos')])
def test_a_bacula_or_bareos_host_without_maximum_file_size_gets_a_synchronous_mark_every_1000_mb(software, name):
    # both storage daemons default Maximum File Size to 1000000000 bytes (stored_conf.c / stored_conf.cc, cited
    # at _verdict.DEFAULT_SEGMENT_MB) and end each file with a synchronous mark: there is no immediate mark to fix
    verdict = judge(LTO9, {'software': software}, drive_info=MTWEOFI)
    now = verdict['forecast']['now']
    assert verdict['numbers']['segment_size_mb'] == 1000.0 and verdict['numbers']['segment_size_basis'] == 'default'
    assert now['inputs']['segment_size_mb'] == 1000.0 and now['inputs']['filemark_mode'] == 'sync'
    assert now['filemarks'] > 0
    sentence = ('No Maximum File Size was given (tapeops_backup.segment_size_mb), so the forecast models the %s '
                'default: a synchronous file mark every 1000 MB (Maximum File Size = 1000000000 bytes); set '
                'segment_size_mb to the Device resource\'s Maximum File Size where it differs.' % name)
    assert sentence in verdict['reasons']
    assert not [f for f in verdict['fixes'] if f['id'] == 'immediate_filemarks']
    fix = next(f for f in verdict['fixes'] if f['id'] == 'segment_size')
    assert fix['value'] > 1000
    assert fix['why'].startswith('A synchronous file mark every 1000 MB (the %s default): ' % name)
    # a Maximum File Size the inventory gives is taken as it is
    given = judge(LTO9, {'software': software, 'segment_size_mb': 50000}, drive_info=MTWEOFI)
    assert given['numbers']['segment_size_basis'] == 'inventory' and sentence not in given['reasons']


def test_a_given_segment_size_and_other_software_are_left_as_they_are():
    given = judge(LTO9, {'software': 'data_protector', 'segment_size_mb': 10000})
    assert (given['numbers']['segment_size_mb'], given['numbers']['segment_size_basis']) == (10000.0, 'inventory')
    # no default is modelled where the collection knows none (no software named)
    unknown = judge(LTO9, {})
    assert unknown['numbers']['segment_size_mb'] is None and 'segment_size_basis' not in unknown['numbers']
    assert unknown['forecast']['now']['filemarks'] == 0
    assert not [r for r in unknown['reasons'] if r.startswith('No segment size was given')]


SEED_001 = {  # (segment MB, immediate marks) -> MB/s the seed measured
    (2000, False): 108.84, (20000, False): 183.91, (2000, True): 188.24, (20000, True): 190.48}


@pytest.mark.parametrize('segment, immediate', sorted(SEED_001))
def test_seed_001_figures_from_the_drive_model_alone(segment, immediate):
    """Seed 001's four figures, forecast from the drive model alone (no mark measured), within 10 %.

    The sources are not the limit (400 MB/s against the 192 MB/s the drive takes of 1.6:1 data). The
    unmeasured synchronous mark costs the model's sync_mark_s, 7 s beyond the buffer drain, derived from
    this seed (_drive_model, DEFAULT_SYNC_MARK_S). Before that calibration it cost a back-hitch (3 s) and
    the forecast gave 148.28 MB/s for the first case, +36 %. The forecast now gives:

    - default omnirc, 2000 MB (Data Protector's default, modelled): 113.87 MB/s against 108.84 (+4.6 %);
    - default omnirc, 20000 MB: 179.85 MB/s against 183.91 (-2.2 %; the forecast replays an hour of marks
      every 20000 MB where the seed's 16 GB file reached none, so it errs low);
    - OB2IMMEDFM, 2000 MB and 20000 MB: 192.02 MB/s against 188.24 (+2.0 %) and 190.48 (+0.8 %).
    """
    dp = {'software': 'data_protector', 'block_size_bytes': 262144}
    if segment != 2000:
        dp['segment_size_mb'] = segment
    if immediate:
        dp['immediate_filemarks'] = True
    verdict = judge(LTO4_HP, dp, 400.0, MTWEOFI, tape_ratio=1.6, data_gb=16)
    now = verdict['forecast']['now']
    assert now['inputs']['filemark_mode'] == ('immediate' if immediate else 'sync')
    assert now['inputs']['segment_size_mb'] == segment and now['inputs']['filemark_seconds'] is None
    assert abs(now['effective_mb_s'] / SEED_001[segment, immediate] - 1) < 0.10, now['effective_mb_s']
    if not immediate:
        assert now['drive']['sync_mark_s'] == 7.0
        assert now['backhitches_filemark'] >= now['filemarks'] - 1 > 0


def test_seed_001_default_case_is_shoe_shining_and_the_fix_is_immediate_marks():
    dp = {'software': 'data_protector', 'block_size_bytes': 262144}
    default = judge(LTO4_HP, dp, 400.0, MTWEOFI, tape_ratio=1.6, data_gb=16)
    assert default['numbers']['segment_size_mb'] == 2000.0 and default['numbers']['segment_size_basis'] == 'default'
    assert default['forecast']['now']['effective_mb_s'] == pytest.approx(113.87, abs=0.05)
    assert default['class_at_current_settings'] == v.SHOE_SHINING and default['class'] == v.MISCONFIGURED
    first = default['fixes'][0]
    assert first['id'] == 'immediate_filemarks'
    assert first['setting'] == ('omnirc on the Media Agent: OB2FORCESCSI=WFM and OB2IMMEDFM=1 '
                                '(tapeops.qualify.dp_omnirc)')
    assert first['feed_after_mb_s'] == pytest.approx(192.0, abs=0.05)
    # the report says the marks' cost is the model's estimate, and where it comes from
    [said] = [f for f in default['findings'] if f['id'] == 'estimated_sync_mark_s']
    assert said['severity'] == 'info'
    assert said['text'].startswith('The write test measured no synchronous file mark, so each costs the drive '
                                   'model\'s 7.0 s beyond the buffer drain, an estimate: derived from seed 001')
    # not where no mark is synchronous, nor where the write test measured the cost
    immediate = judge(LTO4_HP, dict(dp, immediate_filemarks=True), 400.0, MTWEOFI, tape_ratio=1.6, data_gb=16)
    assert not [f for f in immediate['findings'] if f['id'] == 'estimated_sync_mark_s']


def test_the_unmeasured_mark_cost_is_an_estimate_that_names_seed_001_and_gives_way():
    # every drive: an estimate, sourced from seed 001; HP LTO-4 (the seed's drive) says it was measured on it
    assert 'seed-001' in LTO4_HP.sources and 'seed-001' in LTO9.sources
    assert dict(LTO4_HP.estimated)['sync_mark_s'].startswith('derived from seed 001, measured on this drive model')
    assert dict(LTO9.estimated)['sync_mark_s'].startswith('no vendor publishes the cost of a synchronous file mark')
    assert LTO4_HP.sync_mark_s == LTO9.sync_mark_s == dm.DEFAULT_SYNC_MARK_S == 7.0
    # the inventory's value replaces it and is no estimate any more
    set_here = dm.lookup(9, 'FH', 'IBM', overrides={'sync_mark_s': 4.5})
    assert set_here.sync_mark_s == 4.5 and 'sync_mark_s' not in dict(set_here.estimated)
    assert 'inventory' in set_here.sources
    # a cost the write test measured replaces it in the forecast
    dp = {'software': 'data_protector', 'block_size_bytes': 262144}
    modelled = _forecast.forecast(LTO4_HP, feed_mb_s=400.0, tape_ratio=1.6, segment_size_mb=2000,
                                  filemark_mode='sync', min_samples=0)
    measured = _forecast.forecast(LTO4_HP, feed_mb_s=400.0, tape_ratio=1.6, segment_size_mb=2000,
                                  filemark_mode='sync', filemark_seconds=3.0, min_samples=0)
    assert modelled['effective_mb_s'] == judge(LTO4_HP, dp, 400.0, MTWEOFI, tape_ratio=1.6)['forecast']['now'][
        'effective_mb_s']
    assert measured['effective_mb_s'] == pytest.approx(148.28, abs=0.05)
    assert measured['effective_mb_s'] > modelled['effective_mb_s']
    # a drive described field by field without sync_mark_s: a synchronous mark costs its back-hitch
    names = ('native_mb_s', 'speed_steps_mb_s', 'buffer_mb', 'backhitch_s', 'compressed_max_mb_s', 'compression_ratio')
    fields = dict((k, getattr(LTO4_HP, k)) for k in names)
    by_fields = _forecast.forecast(fields, feed_mb_s=400.0, tape_ratio=1.6, segment_size_mb=2000,
                                   filemark_mode='sync', min_samples=0)
    assert by_fields['drive']['sync_mark_s'] == 3.0
    assert by_fields['effective_mb_s'] == measured['effective_mb_s']


def _dp_host(host, backup):
    return _host.assemble(host, [drive('/dev/nst0', 'HP', 'Ultrium 6-SCSI', 'HU1000001')],
                          report_source(mean=300.0, p5=280.0), [write_result('/dev/nst0')],
                          [{'nst': '/dev/nst0', 'speed_floor_mb_s': 10.0}], backup, memory_total_mb=8192,
                          run={'id': 'r'}).to_dict()


def test_the_fleet_settings_table_shows_the_default_as_a_default():
    default = _dp_host('ma-default', {'software': 'data_protector', 'block_size_bytes': 262144})
    given = _dp_host('ma-given', {'software': 'data_protector', 'block_size_bytes': 262144,
                                  'segment_size_mb': 2000})
    rows = dict((row['host'], row) for row in _fleet.settings_rows([default, given]))
    segment = _fleet.HEADER.index('Segment / Max File Size')
    assert _fleet.cells(rows['ma-default'])[segment] == '2000 MB (Data Protector default)'
    assert _fleet.cells(rows['ma-given'])[segment] == '2000 MB'
    markdown = '\n'.join(_fleet.settings_markdown(list(rows.values())))
    assert '| 2000 MB (Data Protector default) |' in markdown
    # the host document keeps the basis beside the number, and the reason in words
    verdict = default['verdicts'][0]
    assert verdict['numbers']['segment_size_basis'] == 'default'
    assert DEFAULT_SENTENCE in verdict['reasons']
