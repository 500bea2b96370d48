# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A qualify run's forecast against what an observe run saw, per host x drive (_compare.against_observed).

The qualify run is the recorded lab run tests/unit/fixtures/lab_runs/20261124-quick-v2 (lab-ma1 STREAMING at
7.1 MB/s, lab-ma2 SPEED-MATCHED at 15.6 MB/s, lab-ma3 SHOE-SHINING at 2.8 MB/s and 232.51 back-hitches an hour).
The observe run's documents are made by the judge (_judge/_host.observe) from the lab's recorded windows
(tests/unit/fixtures/observe/) and what the lab's discovery found (tests/unit/fixtures/verdict_args/), as the
qualify_verdict action makes them; each case below changes one thing of one side.
"""

from __future__ import annotations

import copy
import json
import os

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils import _records
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _host
from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import _compare

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'fixtures')
QUALIFY_RUN = os.path.join(FIXTURES, 'lab_runs', '20261124-quick-v2')
WINDOWS = {'lab-ma1': 'observed_job__lab-ma1', 'lab-ma3': 'observed_bacula_job__lab-ma3'}


def _load(*path):
    with open(os.path.join(*path), encoding='utf-8') as handle:
        return json.load(handle)


def qualify_docs():
    return [_load(QUALIFY_RUN, host + '.json') for host in ('lab-ma1', 'lab-ma2', 'lab-ma3')]


def observe_doc(host, window=None):
    given = _load(FIXTURES, 'verdict_args', '20261123-quick', host + '.json')
    window = window if window is not None else _load(FIXTURES, 'observe', WINDOWS[host] + '.json')['window']
    return _host.observe(host, drives_info=given['drives'], observed=[window], drive_settings=given['drive_settings'],
                         run={'mode': 'observe'}).to_dict()


def pairs(result):
    return dict((p['host'], p) for p in result['pairs'])


def test_each_judged_drive_is_set_against_its_forecast():
    result = _compare.against_observed(qualify_docs(), [observe_doc('lab-ma1'), observe_doc('lab-ma3')],
                                       {'id': '20261124T021259Z'})
    got = pairs(result)
    assert (result['compared'], result['class_matches']) == (2, 2)
    ma3 = got['lab-ma3']
    assert ma3['status'] == 'compared' and ma3['class_match'] is True
    assert ma3['forecast'] == {'class': 'SHOE-SHINING', 'feed_mb_s': 2.8, 'backhitches_per_hour': 232.51,
                               'label': 'LTO-8 FH'}
    # the forecast's 2.8 MB/s against the 2.989 MB/s the drive was fed: (2.8 - 2.989) / 2.989
    assert ma3['rate_delta_pct'] == -6.3
    # 232.51 an hour for the 78.999 s of data the drive wrote, against the 4 it counted
    assert ma3['backhitches_predicted'] == round(232.51 * 78.999 / 3600, 1) == 5.1
    assert ma3['backhitches_counted'] == 4
    # a drive of the qualify run this run did not watch: its host is not part of it
    assert got['lab-ma2']['status'] == 'not compared'
    assert got['lab-ma2']['reasons'] == ['host not part of this run']


def test_a_class_the_forecast_missed_is_said_and_counted():
    docs = qualify_docs()
    verdict = docs[2]['verdicts'][0]
    verdict['class_at_current_settings'] = verdict['class'] = 'SPEED-MATCHED'
    result = _compare.against_observed(docs, [observe_doc('lab-ma3')])
    ma3 = pairs(result)['lab-ma3']
    assert ma3['class_match'] is False and result['class_matches'] == 0
    assert ma3['reasons'][0] == 'forecast SPEED-MATCHED, observed SHOE-SHINING'


def test_a_misconfigured_drive_is_compared_by_its_class_at_the_current_settings():
    docs = qualify_docs()
    docs[2]['verdicts'][0]['class'] = 'MISCONFIGURED'
    ma3 = pairs(_compare.against_observed(docs, [observe_doc('lab-ma3')]))['lab-ma3']
    assert ma3['forecast']['class'] == 'SHOE-SHINING' and ma3['class_match'] is True


def test_an_idle_drive_an_inconclusive_side_and_a_drive_without_a_forecast_are_not_compared():
    idle = copy.deepcopy(_load(FIXTURES, 'observe', 'observed_job__lab-ma1.json')['window'])
    idle['series']['write_byte_cnt'] = [0] * len(idle['series']['write_byte_cnt'])
    docs = qualify_docs()
    docs[2]['verdicts'][0]['class_at_current_settings'] = 'INCONCLUSIVE'
    result = _compare.against_observed(docs, [observe_doc('lab-ma1', idle), observe_doc('lab-ma3')])
    got = pairs(result)
    assert got['lab-ma1']['reasons'] == ['observed idle: nothing to compare'] and got['lab-ma1']['observed'] is None
    assert got['lab-ma3']['reasons'] == ['INCONCLUSIVE forecast: too little data to compare']
    assert result['compared'] == 0
    # a qualify run without that drive's verdict (it failed there): nothing to compare it with
    docs[0]['verdicts'] = []
    got = pairs(_compare.against_observed(docs, [observe_doc('lab-ma1')]))
    assert got['lab-ma1']['reasons'] == ['no verdict for this drive in the qualify run']


def test_a_drive_without_its_own_counter_has_the_prediction_and_no_count():
    window = dict(_load(FIXTURES, 'observe', 'observed_bacula_job__lab-ma3.json')['window'], backhitches=None)
    ma3 = pairs(_compare.against_observed(qualify_docs(), [observe_doc('lab-ma3', window)]))['lab-ma3']
    assert ma3['status'] == 'compared' and ma3['backhitches_predicted'] == 5.1
    assert ma3['backhitches_counted'] is None


def test_only_observe_runs_documents_are_read_as_observed():
    assert not _records.observe_document(qualify_docs()[0])
    result = _compare.against_observed(qualify_docs(), qualify_docs())
    # the qualify documents count as a run without the hosts: every forecast has nothing observed to meet
    assert result['compared'] == 0 and all(p['reasons'] == ['host not part of this run'] for p in result['pairs'])


@pytest.mark.parametrize('per_hour, expected', [(None, None), (0.0, 0.0)])
def test_the_prediction_needs_the_forecast_s_rate_an_hour(per_hour, expected):
    docs = qualify_docs()
    verdict = docs[2]['verdicts'][0]
    verdict['numbers']['backhitches_per_hour_now'] = per_hour
    verdict['forecast']['now']['backhitches_per_hour'] = per_hour
    ma3 = pairs(_compare.against_observed(docs, [observe_doc('lab-ma3')]))['lab-ma3']
    assert ma3['backhitches_predicted'] == expected
