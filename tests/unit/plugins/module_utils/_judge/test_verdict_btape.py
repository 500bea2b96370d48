# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""btape in the verdict: the storage daemon's own writer set against the write sweep (issue 23, item 3).

On recorded lab output only:
- btape: ``btape speed`` recorded on lab-ma2 (tests/unit/fixtures/btape/, its header: Bacula 9.6.7's btape on
  the guest's emulated HP Ultrium 6-SCSI, 1 MiB blocks; zero data 11.30 MB/s, random data 14.70 MB/s, the random
  file ending at the end of the small lab cartridge);
- the sweep: lab-ma2's write sweep of the recorded qualify run tests/unit/fixtures/lab_runs/20261123-quick/ (its
  README: the same guest and drive; random data 12.9 MB/s at 1 MiB, 26.9 at 256 KiB, 34.1 at 64 KiB);
- both from one run: lab-ma2's host document of tests/unit/fixtures/lab_documents/20261127-sd-config/ (its
  README: test_sd_config_lab on the lab, btape at the storage daemon's 256 KiB after a sweep of 32 MB steps).
"""

from __future__ import annotations

import copy
import json
import os

from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _host
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _btape

from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._tape_fixtures import FIXTURES, fixture

RUN = os.path.join(FIXTURES, 'lab_runs', '20261123-quick')
BTAPE_1M = 'btape_speed__HP-Ultrium6-SCSI-lab-ma2-tgt-1048576B-enospc__1.txt'


def recorded(host='lab-ma2'):
    with open(os.path.join(RUN, '%s.json' % host), encoding='utf-8') as handle:
        return json.load(handle)


def btape_result(name=BTAPE_1M, keep=None, device='/dev/nst0'):
    """btape_speed's result as Ansible registers a loop item of it, from the recorded btape output."""
    parsed = _btape.parse_speed(fixture('btape', name))
    tests = [t for t in parsed['tests'] if keep is None or (t['data'], t['structure']) in keep]
    return {'changed': True, 'tests': tests, 'summary': _btape.summarize_speed(dict(parsed, tests=tests)),
            'errors': parsed['errors'], 'command': 'speed file_size=1 nb_file=1 skip_raw', 'btape_version': '9.6.7',
            'device': {'path': device, 'name': 'nst0'}, 'item': {'nst': device},
            'invocation': {'module_args': {'device': device, 'block_size': 1048576}}}


def judge(btape=None, host='lab-ma2', sweep=None, options=None):
    """The host's recorded measurements judged again, with btape's result (a host document as data)."""
    doc = recorded(host)
    drives = doc['drives']
    tapes = [dict(d['write_sweep']) for d in drives]
    if sweep is not None:
        tapes[0]['sweep'] = sweep
    facts = doc.get('facts') or {}
    return _host.assemble(host, [d['identity'] for d in drives], doc['source'], tapes,
                          [dict(d['settings'], nst=d['nst']) for d in drives], {'software': 'bacula'},
                          memory_total_mb=facts.get('memory_total_mb'), preflight=doc['preflight'],
                          host_facts=facts, options=options,
                          btape=[btape] if btape is not None else None).to_dict()


def test_btapes_random_rate_is_set_against_the_sweeps_at_its_block_size_and_agrees_within_15_percent():
    doc = judge(btape_result())
    [verdict] = doc['verdicts']
    [said] = [r for r in verdict['reasons'] if r.startswith('btape')]
    # random data in Bacula's block structure (14.70 MB/s), not the zero-data test (11.30): zeros compress
    assert said == ("btape (the storage daemon's own writer) wrote random data in its block structure with 1 MiB "
                    'blocks at 14.7 MB/s (btape: Bad status from weof. ERR=tape_dev.c:962 ioctl MTWEOF error on '
                    '"Drive-0" (/dev/nst0). ERR=No space left on device); '
                    "the write sweep's drive path there is 12.9 MB/s (measured): btape is 14 % faster.")
    assert 'btape_disagrees' not in [f['id'] for f in verdict['findings']]
    # the record is kept with the drive, as btape_speed returned it
    entry = doc['drives'][0]
    assert entry['btape']['summary'] == {'random_block_mb_s': 14.7, 'zero_block_mb_s': 11.3}
    assert [t['data'] for t in entry['btape']['tests']] == ['zero', 'random']


def test_a_difference_beyond_the_threshold_is_a_finding_with_both_rates():
    """The same btape run against lab-ma2's recorded sweep with its 1 MiB random step set to 28.6 MB/s (a
    constructed case: the rest of the sweep as recorded): btape is 49 % slower, beyond 15 %."""
    sweep = copy.deepcopy(recorded()['drives'][0]['write_sweep']['sweep'])
    for row in sweep:
        if row['pattern'] == 'random' and row['block_size'] == 1048576:
            row['mb_s'] = 28.6
    [verdict] = judge(btape_result(), sweep=sweep)['verdicts']
    [finding] = [f for f in verdict['findings'] if f['id'] == 'btape_disagrees']
    assert finding['severity'] == 'warning'
    assert finding['text'].startswith('btape and the write sweep disagree on the drive path by more than 15 %: '
                                      'btape 14.7 MB/s at 1 MiB, the sweep 28.6 MB/s (btape is 49 % slower).')
    # the recorded sweep's steps (400 MB) are far longer than the LTO-6's buffer: not the short-step cause
    assert 'buffer' not in finding['text'] and "storage daemon's writer is slower" in finding['text']
    # the threshold is an option of the verdict
    [wider] = judge(btape_result(), sweep=sweep, options={'btape_disagree_pct': 60})['verdicts']
    assert 'btape_disagrees' not in [f['id'] for f in wider['findings']]


def test_on_the_lab_short_sweep_steps_within_the_buffer_are_named_as_the_cause():
    """lab_documents/20261127-sd-config (its README): btape 18.51 MB/s at the Device's 256 KiB against the sweep's
    169.9 MB/s in 32 MB steps, which lab-ma2's 36.6 MB buffer holds: the document as the lab run wrote it, and its
    measurements judged again."""
    with open(os.path.join(FIXTURES, 'lab_documents', '20261127-sd-config', 'lab-ma2.json'), encoding='utf-8') as h:
        doc = json.load(h)
    drive = doc['drives'][0]
    again = _host.assemble('lab-ma2', [drive['identity']], doc['source'], [drive['write_sweep']],
                           [dict(drive['settings'] or {}, nst=drive['nst'])], {'software': 'bacula'},
                           preflight=doc['preflight'], storage_daemon=doc['storage_daemon'],
                           btape=[drive['btape']]).to_dict()
    for verdict in (doc['verdicts'][0], again['verdicts'][0]):
        [finding] = [f for f in verdict['findings'] if f['id'] == 'btape_disagrees']
        assert finding['text'] == (
            'btape and the write sweep disagree on the drive path by more than 15 %: btape 18.5 MB/s at 256 KiB, the '
            'sweep 170 MB/s (btape is 89 % slower). The sweep\'s steps of 32 MB are no more than twice the drive\'s '
            '37 MB buffer, so they measured the host filling the buffer as much as the drive: run the sweep with '
            'longer steps (the profile\'s step_mb) before trusting its rate.')
    assert again['drives'][0]['btape'] == drive['btape']


def test_zero_data_alone_is_shown_but_not_compared():
    doc = judge(btape_result(keep=[('zero', 'block')]))
    [verdict] = doc['verdicts']
    [said] = [r for r in verdict['reasons'] if r.startswith('btape')]
    assert said.startswith("btape (the storage daemon's own writer) wrote zero data in its block structure with 1 MiB "
                           'blocks at 11.3 MB/s. The drive compresses zeros')
    assert 'btape_disagrees' not in [f['id'] for f in verdict['findings']]


def test_a_refused_btape_is_said_and_judges_nothing():
    refused = {'failed': True, 'reason': 'media_has_data', 'msg': 'The cartridge holds data: not written.',
               'item': {'nst': '/dev/nst0'}, 'invocation': {'module_args': {'device': '/dev/nst0'}}}
    doc = judge(refused)
    [verdict] = doc['verdicts']
    assert "btape's speed test did not run on this drive: The cartridge holds data: not written." in verdict['reasons']
    assert doc['drives'][0]['btape']['reason'] == 'media_has_data'


def test_without_btape_the_document_is_as_before():
    plain, skipped = judge(), judge({'skipped': True, 'item': {'nst': '/dev/nst0'}})
    plain.pop('generated_at')
    skipped.pop('generated_at')
    assert 'btape' not in plain['drives'][0] and plain == skipped
    assert not [r for r in plain['verdicts'][0]['reasons'] if r.startswith('btape')]


def test_odd_btape_results_are_said_not_compared_and_raise_nothing():
    """btape's recorded random-data test with its block size lost (a cut output), its errors a string: said, not
    compared; and a test list of no dicts is no run."""
    cut = btape_result(keep=[('random', 'block')])
    cut['tests'][0].update(block_size=None, errors='ERR=No space left on device')
    [verdict] = judge(cut)['verdicts']
    [said] = [r for r in verdict['reasons'] if r.startswith('btape')]
    assert said == ("btape (the storage daemon's own writer) wrote random data in its block structure with its "
                    'blocks at 14.7 MB/s; its output names no block size, so it is not set against the sweep.')
    [verdict] = judge(dict(btape_result(), tests=['speed', 3]))['verdicts']
    assert "btape's speed test did not run on this drive: no reason given." in verdict['reasons']
