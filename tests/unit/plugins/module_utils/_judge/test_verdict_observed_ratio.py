# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_judge/_verdict: the tape ratio's one rule with the ratio a drive measured in an observe run.

The user's tape_ratio, then the drive's own ratio over an observed job, then the sources' sample, then the
drive's nominal ratio; in the verdict and in the count of drives the host's sources keep busy alike. The inputs
are lab run 20261123-quick's (tests/unit/fixtures/verdict_args/20261123-quick: the source read with its 1 MB
zlib sample, ratio 1.015, and each guest's drive as the inventory names it), the observed ratio lab-ma3's
drive measured over a real Bacula job (1.213, tests/unit/fixtures/observe/observed_bacula_job__lab-ma3.json).
"""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils import _records, _words
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _host, _verdict

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'fixtures')
OBSERVED = {'id': 'ratio_observed', 'ratio': 1.213, 'run': 'observe-20261127T220000Z', 'jobid': 1,
            'data_seconds': 79.0, 'bytes': 230712320}
UNUSED = {'id': 'ratio_observed_unused', 'why': 'idle', 'run_dir': '/srv/reports/observe-20261127T220000Z',
          'run': 'observe-20261127T220000Z', 'drive': '/dev/nst0'}


def recorded(host):
    """(the drive's spec as the verdict resolves it, the source read's record) of lab run 20261123-quick."""
    with open(os.path.join(FIXTURES, 'verdict_args', '20261123-quick', '%s.json' % host), encoding='utf-8') as f:
        args = json.load(f)
    spec = _host.resolve_spec(args['drives'][0], args['drive_settings'][0])
    return spec, _records.SourceRead.from_result(args['source'])


@pytest.fixture(scope='module')
def lab_ma3():
    return recorded('lab-ma3')


def test_the_drive_s_observed_ratio_comes_after_the_user_s_and_before_the_sample(lab_ma3):
    spec, source = lab_ma3
    sampled, basis = _verdict.tape_ratio(spec, source)
    assert basis['id'] == 'ratio_sampled' and sampled == pytest.approx(1.015, abs=0.001)
    # the sample's estimate it replaces is kept beside it (the report shows both)
    ratio, used = _verdict.tape_ratio(spec, source, observed=OBSERVED)
    assert ratio == 1.213 and dict(used, sampled=None) == dict(OBSERVED, sampled=None)
    assert used['sampled'] == sampled
    assert _verdict.tape_ratio(spec, source, 1.5, OBSERVED) == (1.5, {'id': 'ratio_set'})
    # no sample: the observed ratio before the nominal
    without_sample = dict(source.to_dict(), compressibility=None)
    assert _verdict.tape_ratio(spec, without_sample)[1] == {'id': 'ratio_nominal'}
    assert _verdict.tape_ratio(spec, without_sample, observed=OBSERVED) == (1.213, OBSERVED)


def test_an_observed_ratio_that_is_not_used_counts_as_none(lab_ma3):
    spec, source = lab_ma3
    assert _verdict.tape_ratio(spec, source, observed=UNUSED) == _verdict.tape_ratio(spec, source)


def test_a_measured_ratio_above_the_nominal_is_kept_as_measured(lab_ma3):
    """The sample's estimate is capped at the drive's nominal ratio; what the drive measured is not."""
    spec, source = lab_ma3
    assert spec.compression_ratio == 2.5
    assert _verdict.tape_ratio(spec, source, observed=dict(OBSERVED, ratio=3.1))[0] == 3.1


def test_why_the_observed_ratio_is_not_used_is_the_run_s_reason_or_the_user_s_tape_ratio():
    assert _verdict.ratio_unused(None, {'id': 'ratio_sampled'}, 1.015) is None
    assert _verdict.ratio_unused(OBSERVED, OBSERVED, 1.213) is None
    assert _verdict.ratio_unused(UNUSED, {'id': 'ratio_sampled'}, 1.015) == UNUSED
    assert _verdict.ratio_unused(OBSERVED, {'id': 'ratio_set'}, 1.5) == {
        'id': 'ratio_observed_unused', 'why': 'tape_ratio_set', 'run': 'observe-20261127T220000Z', 'jobid': 1,
        'measured': 1.213, 'tape_ratio': 1.5}


def test_the_verdict_judges_with_the_observed_ratio_and_says_why_when_it_does_not(lab_ma3):
    spec, source = lab_ma3
    plain = _verdict.evaluate(spec, source)
    observed = _verdict.evaluate(spec, source, observed_ratio=OBSERVED)
    assert observed['numbers']['tape_ratio'] == 1.213
    used = observed['numbers']['tape_ratio_basis']
    assert dict(used, sampled=None) == dict(OBSERVED, sampled=None)
    assert used['sampled'] == pytest.approx(plain['numbers']['tape_ratio'], abs=0.001)
    # the reason names both: the drive's ratio used, the sample's estimate it replaced
    worded = _words.verdict(observed).to_dict()
    [need] = [r for r in worded['reasons'] if r.startswith('Full speed for')]
    assert ' x 1.21 tape compression (measured by the drive itself over an observed job (observe run ' \
           'observe-20261127T220000Z, Bacula job 1: 231 MB in 79 s); the source sample estimated 1.01)' in need
    # the drive's full speed needs more of the sources at the drive's own ratio
    assert observed['numbers']['need_full_mb_s'] == pytest.approx(
        plain['numbers']['need_full_mb_s'] * 1.213 / plain['numbers']['tape_ratio'], rel=0.01)
    assert [f['id'] for f in observed['facts'] if f['id'] == 'ratio_observed_unused'] == []
    unused = _verdict.evaluate(spec, source, observed_ratio=UNUSED)
    assert unused['numbers']['tape_ratio_basis']['id'] == 'ratio_sampled'
    assert [f for f in unused['facts'] if f['id'] == 'ratio_observed_unused'] == [UNUSED]
    # its reason right after the one that names the ratio used
    ids = [f['id'] for f in unused['facts']]
    assert ids.index('ratio_observed_unused') == ids.index('need_full') + 1
    # nothing asked for, nothing said: the verdict of a run without qualify_tape_ratio_from is unchanged
    assert 'ratio_observed_unused' not in [f['id'] for f in plain['facts']]


def test_the_drives_the_sources_keep_busy_are_counted_at_the_same_ratio():
    """drives_kept_busy takes its ratio from tape_ratio with the same inputs as the verdict: one rule."""
    spec, source = recorded('lab-ma1')      # an LTO-5 at the lab's scale fed from the page cache: many drives
    at_sample = _verdict.drives_kept_busy(spec, source)
    at_observed = _verdict.drives_kept_busy(spec, source, observed_ratio=dict(OBSERVED, ratio=2.0))
    assert at_observed == _verdict.drives_kept_busy(spec, source, {'tape_ratio': 2.0})
    assert at_observed['streaming'] < at_sample['streaming']
    # and the host's verdicts count them so
    [verdict] = _verdict.evaluate_host([{'spec': spec, 'drive': None, 'tape': None, 'config': {},
                                         'observed_ratio': dict(OBSERVED, ratio=2.0)}], source)
    assert verdict['numbers']['drives_streaming_at_once'] == at_observed['streaming']
    assert verdict['numbers']['tape_ratio'] == 2.0
