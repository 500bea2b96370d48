# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The upgrade check's interface and host section, with worked numbers.

Drive figures from the drive model (docs/drive-model.md): IBM LTO-9 FH on SAS
400 MB/s native, 1000 MB/s compressed maximum (IBM dtl), floor 177 MB/s
(IBM TS4300 speed matching); LTO-10 on FC 1200 MB/s compressed maximum (IBM
STAKKZ). Links as _hba_link reads them: SAS 6.0 Gbit = 600 MB/s, 12.0 Gbit =
1200 MB/s (8b/10b), FC 8 Gbit = 800 MB/s.
"""

from __future__ import annotations

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _drive_model as dm
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _verdict as v
from ansible_collections.tapeops.qualify.plugins.module_utils import _words

LTO9_SAS = dm.lookup(9, 'FH', 'IBM', interface='SAS')
LTO9 = dm.lookup(9, 'FH', 'IBM')
LTO10_FC = dm.lookup(10, None, 'IBM', interface='FC')


def source(rate, streams=1, seconds=60):
    return {'streams': [{'path': '/src/%d' % i, 'mean_mb_s': rate / streams} for i in range(streams)],
            'aggregate': {'mean_mb_s': float(rate), 'series_mb_s': [float(rate)] * seconds, 'streams': streams,
                          'samples': seconds, 'duration_s': float(seconds)}}


def sas(rate, usable):
    return {'link': {'transport': 'SAS', 'host': 'host0', 'rate': rate, 'lanes': 1, 'usable_mb_s': usable,
                     'encoding': '8b/10b', 'hops': [],
                     'text': 'SAS via host0: port-0:0 1x %s = %.0f MB/s' % (rate, usable)}}


def what_if(spec, src, drive=None, ratio=2.5, memory=None, **options):
    options.setdefault('tape_ratio', ratio)
    return _words.verdict(v.evaluate(spec, src, None, drive, {}, memory, 0, options, what_if=True)).to_dict()


def test_the_model_figures_the_worked_numbers_use():
    assert (LTO9_SAS.native_mb_s, LTO9_SAS.compressed_max_mb_s, LTO9_SAS.speed_floor_mb_s) == (400.0, 1000.0, 177.0)
    assert LTO10_FC.compressed_max_mb_s == 1200.0


def test_a_6g_sas_link_caps_an_lto9_the_sources_could_feed():
    # 2.5:1 data: the drive takes min(400 x 2.5, 1000) = 1000 MB/s; the sources give 900; the 6 Gbit link 600.
    capped = what_if(LTO9_SAS, source(900.0), sas('6.0 Gbit', 600.0))
    free = what_if(LTO9_SAS, source(900.0))
    assert free['numbers']['need_full_mb_s'] == 1000.0
    assert free['forecast']['now']['inputs']['path_mb_s'] is None and free['numbers']['link_caps'] is False
    num = capped['numbers']
    assert (num['link_transport'], num['link_rate'], num['link_mb_s'], num['link_caps']) == (
        'SAS', '6.0 Gbit', 600.0, True)
    # the forecast carries the cap: 600 MB/s of 2.5:1 data is 240 MB/s on tape, above the 177 floor
    assert capped['forecast']['now']['inputs']['path_mb_s'] == 600.0
    assert capped['forecast']['now']['effective_mb_s'] == pytest.approx(600.0, rel=0.01)
    assert free['forecast']['now']['effective_mb_s'] == pytest.approx(900.0, rel=0.01)
    assert capped['class'] == v.SPEED_MATCHED
    text = ' '.join(capped['reasons'])
    assert 'The SAS 6.0 Gbit link carries 600 MB/s, below the LTO-9' in text
    assert 'the link, not the sources (900 MB/s), caps the drive' in text
    assert 'the SAS 6.0 Gbit link at 600 MB/s limiting' in text
    fix = [f for f in capped['fixes'] if f['id'] == 'drive_path'][0]
    assert fix['title'] == 'Give the drive a faster link than SAS 6.0 Gbit'
    assert '1000 MB/s or more' in fix['setting']


def test_a_12g_sas_link_is_enough_for_an_lto9():
    verdict = what_if(LTO9_SAS, source(1100.0), sas('12.0 Gbit', 1200.0))
    assert verdict['numbers']['link_caps'] is False and verdict['numbers']['link_mb_s'] == 1200.0
    assert verdict['forecast']['now']['inputs']['path_mb_s'] is None
    assert verdict['class'] == v.STREAMING
    assert 'The SAS 12.0 Gbit link carries 1200 MB/s, enough for the LTO-9' in ' '.join(verdict['reasons'])
    assert not [f for f in verdict['fixes'] if f['id'] == 'drive_path']


def test_slow_sources_limit_before_the_link_does():
    # 300 MB/s of sources into the same 600 MB/s link: the link is below the drive's 1000 but the sources are lower
    verdict = what_if(LTO9_SAS, source(300.0), sas('6.0 Gbit', 600.0))
    text = ' '.join(verdict['reasons'])
    assert 'the sources (300 MB/s) are lower still, so they limit first' in text
    assert '(the sources limiting)' in text
    assert not [f for f in verdict['fixes'] if f['id'] == 'drive_path']


def test_an_8g_fc_port_caps_an_lto10_at_2_5_to_1_but_not_incompressible_data():
    fc8 = {'link': {'transport': 'FC', 'host': 'host5', 'rate': '8 Gbit', 'lanes': 1, 'usable_mb_s': 800.0,
                    'encoding': '8b/10b', 'hops': [], 'text': 'FC via host5: HBA port 8 Gbit = 800 MB/s (8b/10b)'}}
    compressible = what_if(LTO10_FC, source(1100.0), fc8)
    assert compressible['numbers']['need_full_mb_s'] == 1000.0       # min(400 x 2.5, 1200)
    assert compressible['numbers']['link_caps'] is True
    assert compressible['forecast']['now']['inputs']['path_mb_s'] == 800.0
    incompressible = what_if(LTO10_FC, source(1100.0), fc8, ratio=1.0)
    assert incompressible['numbers']['link_caps'] is False          # 400 MB/s fits in 800
    assert 'data that compresses better would meet the link first' in ' '.join(incompressible['reasons'])


def test_the_lab_virtual_host_says_so_and_caps_nothing():
    lab = {'link': {'transport': None, 'host': 'host2', 'rate': None, 'lanes': None, 'usable_mb_s': None,
                    'encoding': None, 'hops': [],
                    'text': 'not a SAS or FC link (host2 has no sas_phy or fc_host in sysfs)'}}
    verdict = what_if(LTO9_SAS, source(900.0), lab)
    assert verdict['numbers']['link_mb_s'] is None and verdict['numbers']['link_caps'] is False
    assert 'HBA link: not a SAS or FC link (host2 has no sas_phy or fc_host in sysfs).' in verdict['reasons']
    assert verdict['forecast']['now']['inputs']['path_mb_s'] is None


@pytest.mark.parametrize('odd', [{'usable_mb_s': 'fast'}, {'usable_mb_s': float('nan')}, {'usable_mb_s': 0},
                                 {'usable_mb_s': True}, 'SAS', None])
def test_odd_link_records_are_unknown_not_a_traceback(odd):
    verdict = what_if(LTO9_SAS, source(900.0), {'link': odd})
    assert verdict['numbers']['link_mb_s'] is None and verdict['numbers']['link_caps'] is False


def test_host_section_how_many_lto9_drives_and_the_memory_at_that_concurrency():
    # 1000 MB/s over 4 streams, incompressible data: each LTO-9 needs 400 (full) / 177 (floor).
    # 2 drives get 500 each (streaming), 3..5 get 333..200 (speed-matched), 6 get 167 < 177 (shoe-shining).
    cap = v.host_capacity(LTO9, source(1000.0, streams=4), memory_total_mb=2048, options={'tape_ratio': 1.0})
    assert (cap['streaming'], cap['not_shoeshining'], cap['drives']) == (2, 5, 2)
    # at 2 drives the host runs its 4 measured streams: 512 + 512 x 4 = 2560 MB, 512 MB more than it has
    assert (cap['streams'], cap['memory_needed_mb'], cap['memory_short_mb']) == (4, 2560, 512)
    verdict = what_if(LTO9, source(1000.0, streams=4), ratio=1.0, memory=2048)
    num = verdict['numbers']
    assert (num['drives_streaming_at_once'], num['drives_not_shoeshining_at_once']) == (2, 5)
    assert (num['streams_at_once'], num['memory_needed_at_once_mb']) == (4, 2560)
    text = ' '.join(verdict['reasons'])
    assert ('keep 2 LTO-9 FH drives streaming at once (5 from shoe-shining); at 2 drives (4 streams, at least '
            'one per drive) the memory rule asks 512 MB base + 512 MB x 4 streams = 2560 MB; the host has 2048 MB, '
            '512 MB short.') in text
    assert [f['id'] for f in verdict['findings'] if f['id'] == 'memory_at_concurrency'] == ['memory_at_concurrency']


def test_host_section_each_drive_held_to_its_link():
    # 2000 MB/s, 2 streams, 2.5:1 into LTO-9 SAS drives on 6 Gbit links: each drive gets at most 600 MB/s,
    # never the 1000 full speed; 4 drives get 500 each (above the 442.5 floor x ratio), 5 get 400 (below).
    verdict = what_if(LTO9_SAS, source(2000.0, streams=2), sas('6.0 Gbit', 600.0), memory=8192)
    num = verdict['numbers']
    assert (num['drives_streaming_at_once'], num['drives_not_shoeshining_at_once']) == (0, 4)
    assert (num['streams_at_once'], num['memory_needed_at_once_mb']) == (4, 2560)
    text = ' '.join(verdict['reasons'])
    assert 'keep no LTO-9 FH drive streaming at full speed, 4 speed-matched at once (each held to its ' \
           '600 MB/s link)' in text
    assert 'the host has 8192 MB.' in text
    assert not [f for f in verdict['findings'] if f['id'] == 'memory_at_concurrency']


def test_host_section_when_no_drive_is_kept_from_shoe_shining():
    verdict = what_if(LTO9, source(100.0), ratio=1.0, memory=4096)
    assert verdict['numbers']['drives_not_shoeshining_at_once'] == 0
    assert verdict['numbers']['memory_needed_at_once_mb'] is None
    assert "The host's sources keep no LTO-9 FH drive from shoe-shining." in verdict['reasons']


def test_real_drives_on_a_capped_link_count_with_the_cap():
    item = {'spec': LTO9_SAS, 'drive': dict(sas('6.0 Gbit', 600.0), nst='/dev/nst0'), 'tape': None, 'config': {}}
    verdict = _words.verdict(v.evaluate_host([item], source(2000.0, streams=2), memory_total_mb=8192,
                                             options={'tape_ratio': 2.5})[0]).to_dict()
    assert verdict['numbers']['drives_streaming_at_once'] == 0
    assert verdict['numbers']['drives_not_shoeshining_at_once'] == 4
