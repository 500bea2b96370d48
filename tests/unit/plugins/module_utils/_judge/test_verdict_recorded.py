# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The verdict on recorded lab results: the host documents a lab qualify run wrote.

tests/unit/fixtures/lab_runs/20261123-quick/ holds the hosts/*.json of one quick qualify
run on the default 3-guest lab (README.md there: command, spread, commit). The emulated
drives have the collection's streaming physics at a time scale (docs/lab.md): lab-ma1 an
LTO-5 at 0.05 fed by an unthrottled source, lab-ma2 an LTO-6 at 0.25 behind a 20 MB/s
source, lab-ma3 an LTO-8 at 0.10 behind a 3 MB/s source. The measurements in each document
(drive info, source read with its per-second series, write sweep, file-mark runs, log
pages, settings) are judged again here by the current code, from the recorded inputs only.
"""

from __future__ import annotations

import os

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils import _run
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _host, _verdict

from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._tape_fixtures import FIXTURES

RUN = os.path.join(FIXTURES, 'lab_runs', '20261123-quick')
HOSTS = ('lab-ma1', 'lab-ma2', 'lab-ma3')


def recorded(host):
    """The host's document as the reports load it."""
    return _run.load(os.path.join(RUN, '%s.json' % host))


def judge(host, **changes):
    """The host's verdicts again, from the recorded measurements (``changes`` edit the settings)."""
    doc = recorded(host)
    drives = doc['drives']
    settings = [dict(d['settings'], nst=d['nst'], **changes) for d in drives]
    facts = doc['facts']
    out = _host.assemble(host, [d['identity'] for d in drives], doc['source'], [d['write_sweep'] for d in drives],
                         settings, facts.get('backup') or {}, memory_total_mb=facts.get('memory_total_mb'),
                         preflight=doc.get('preflight'), host_facts=facts).to_dict()
    return out['verdicts']


@pytest.fixture(scope='module')
def verdicts():
    return dict((host, judge(host)[0]) for host in HOSTS)


def test_the_lab_spread_gives_three_classes(verdicts):
    assert verdicts['lab-ma1']['class'] == _verdict.STREAMING
    assert verdicts['lab-ma2']['class'] == _verdict.SPEED_MATCHED
    assert verdicts['lab-ma3']['class'] == _verdict.SHOE_SHINING
    assert len(set(v['class'] for v in verdicts.values())) == 3


def test_the_shoe_shining_drive_back_hitches_in_the_forecast_and_on_the_drive(verdicts):
    num = verdicts['lab-ma3']['numbers']
    # 3 MB/s of source against an 11.2 MB/s floor (LTO-8's 112 at scale 0.1)
    assert num['feed_now_mb_s'] < num['need_floor_mb_s']
    assert num['backhitches_per_hour_now'] >= 60
    assert verdicts['lab-ma3']['forecast']['now']['backhitches'] > 0
    # the emulated drive counted its own back-hitches in LOG SENSE 0x34 during the benchmark
    assert isinstance(num['drive_reported_backhitches'], int) and num['drive_reported_backhitches'] > 0
    assert any('drive itself reported' in r for r in verdicts['lab-ma3']['reasons'])


def test_streaming_and_speed_matched_drives_do_not_back_hitch_in_the_forecast(verdicts):
    for host in ('lab-ma1', 'lab-ma2'):
        assert verdicts[host]['numbers']['backhitches_per_hour_now'] == 0.0, host
    ma2 = verdicts['lab-ma2']['numbers']
    assert ma2['need_floor_mb_s'] <= ma2['feed_now_mb_s'] < ma2['need_full_mb_s']


def test_numbers_obey_their_order(verdicts):
    for host, verdict in verdicts.items():
        num = verdict['numbers']
        assert num['source_sustained_mb_s'] <= num['source_mean_mb_s'] <= num['source_max_mb_s'], host
        assert num['source_samples'] >= 10, host
        assert verdict['inconclusive_reason'] is None, host


def test_no_block_size_fix_when_the_block_size_in_use_is_unknown(verdicts):
    # The lab inventory does not say which block size the backup uses: the sweep's
    # recommendation is a reason, not a fix (the recorded run listed "Use 64 KiB" first).
    for host, verdict in verdicts.items():
        assert 'block_size' not in [f['id'] for f in verdict['fixes']], host
        assert any('the sweep recommends' in r for r in verdict['reasons']), host


def test_a_known_small_block_size_is_judged_from_the_sweep():
    verdict = judge('lab-ma3', block_size_bytes=65536)[0]
    assert verdict['numbers']['drive_path_basis'] == 'measured'
    assert verdict['numbers']['block_size_bytes'] == 65536


def test_the_shoe_shining_host_is_told_to_stage_not_to_add_streams(verdicts):
    # The quick profile measured one scaling step (1 stream, 3.0 MB/s from the cgroup-limited
    # disk); past the largest measured step no gain is assumed, so no number of streams reaches
    # the 11.4 MB/s floor: the fix is a faster source, staging.
    src = recorded('lab-ma3')['source']
    assert [row['streams'] for row in src['scaling']] == [1]
    fixes = [f['id'] for f in verdicts['lab-ma3']['fixes']]
    assert 'streams' not in fixes and 'staging' in fixes
    assert fixes[-1] == 'memory'              # the memory rule comes last without more streams
    staging = next(f for f in verdicts['lab-ma3']['fixes'] if f['id'] == 'staging')
    assert 'no gain is assumed' in staging['why']
