# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""From a run's verdicts to the roles' variables (_judge/_fixes.py, playbooks/apply_fixes.yml).

On the recorded lab run tests/unit/fixtures/lab_runs/20261123-quick/ (its
README: one quick qualify run on the 3-guest lab, backup software not named),
on its measurements judged again by the verdict code for Data Protector and
Bacula hosts, and on hand-made verdicts for each fix id. That the table, the roles'
specs and defaults, the playbook and docs/roles.md agree: tests/unit/roles/test_apply_fixes_contract.py.
"""

from __future__ import annotations

import copy
import json
import os
import shutil

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils import _records, _run
from ansible_collections.tapeops.qualify.plugins.module_utils._config import _netbackup, _omnirc
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _fixes, _host, _verdict

from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._tape_fixtures import FIXTURES

RUN = os.path.join(FIXTURES, 'lab_runs', '20261123-quick')
HOSTS = ('lab-ma1', 'lab-ma2', 'lab-ma3')


def recorded(host):
    with open(os.path.join(RUN, '%s.json' % host), encoding='utf-8') as handle:
        return json.load(handle)


@pytest.fixture
def run_dir(tmp_path):
    """The recorded run laid out as the qualify playbook writes it: <run>/hosts/<host>.json."""
    os.makedirs(str(tmp_path / 'hosts'))
    for host in HOSTS:
        shutil.copy(os.path.join(RUN, '%s.json' % host), str(tmp_path / 'hosts'))
    return str(tmp_path)


def write(run, doc):
    path = os.path.join(run, 'hosts', '%s.json' % doc['host'])
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w', encoding='utf-8') as handle:
        json.dump(doc, handle)


_JUDGED = {}


def rejudge(host, backup, mtweofi=True):
    """The host's recorded measurements judged again by the verdict code for ``backup`` (a copy of it).

    ``mtweofi=False``: the st driver has no MTWEOFI (file marks stay synchronous).
    """
    key = json.dumps([host, backup, mtweofi], sort_keys=True)
    if key not in _JUDGED:
        _JUDGED[key] = _judge(host, backup, mtweofi)
    return copy.deepcopy(_JUDGED[key])


def _judge(host, backup, mtweofi):
    doc = recorded(host)
    drives = doc['drives']
    tapes = [dict(d['write_sweep']) for d in drives]
    preflight = dict(doc['preflight'])
    if not mtweofi:
        for tape in tapes:
            tape['mtweofi_supported'] = False
        preflight['mtweofi_supported'] = False
    facts = doc.get('facts') or {}
    return _host.assemble(host, [d['identity'] for d in drives], doc['source'], tapes,
                          [dict(d['settings'], nst=d['nst']) for d in drives], backup,
                          memory_total_mb=facts.get('memory_total_mb'), preflight=preflight, host_facts=facts).to_dict()


def hand_made(fixes, software=None, drives=('/dev/nst0',), label='LTO-6', **verdict):
    """A host document whose drives' verdicts carry ``fixes`` (each drive the same unless a list of lists)."""
    per_drive = fixes if fixes and isinstance(fixes[0], list) else [fixes] * len(drives)
    entries, verdicts = [], []
    for drive, mine in zip(drives, per_drive):
        entries.append({'id': drive, 'nst': drive, 'label': label})
        verdicts.append(dict(
            {'drive': drive, 'class': _verdict.MISCONFIGURED, 'drive_label': label, 'what_if': False,
             'fixes': [dict({'title': 'T %s' % f['id'], 'setting': 'S %s' % f['id'], 'why': 'W %s' % f['id']}, **f)
                       for f in mine]}, **verdict))
    return {'schema_version': _records.SCHEMA_VERSION, 'host': 'ma', 'status': 'ok', 'error': None,
            'run': {'id': 'r'}, 'facts': {'backup': {'software': software}} if software else {}, 'drives': entries,
            'verdicts': verdicts}


# --------------------------------------------------------------- the recorded lab run

ST_65536 = {'st_tuning': {'st_tuning_block_size': 65536, 'st_tuning_devices': ['/dev/nst0'],
                          'st_tuning_fail_on_preflight': True, 'st_tuning_max_sg_segs': None}}


@pytest.mark.parametrize('host, manual', [
    ('lab-ma1', ['block_size', 'memory']),
    ('lab-ma2', ['block_size', 'memory', 'drive_path']),
    ('lab-ma3', ['block_size', 'memory', 'drive_path', 'staging']),
])
def test_recorded_run_gives_st_tuning_and_the_rest_by_hand(run_dir, host, manual):
    plan = _fixes.plan(run_dir, host)
    assert plan['skipped'] is False and plan['software'] is None
    # The run named no backup software: the block size is checked on the host (st_tuning), set by hand.
    assert plan['roles'] == ST_65536
    assert [m['id'] for m in plan['manual']] == manual
    assert plan['applied'] == [
        '/dev/nst0: Use 64 KiB tape blocks -> st_tuning st_tuning_block_size = 65536 (checks st_tuning checks that '
        'each drive\'s HBA path carries it (st_tuning_fail_on_preflight) and keeps the drives in variable-block '
        'mode (its st options))']
    # The verdict's own words go with what is left by hand.
    [verdict] = recorded(host)['verdicts']
    why = dict((f['id'], f['why']) for f in verdict['fixes'])
    for entry in plan['manual']:
        assert why[entry['id']].rstrip('.') in entry['text']


def test_recorded_lab_ma3_manual_words(run_dir):
    plan = _fixes.plan(run_dir, 'lab-ma3')
    staging = [m['text'] for m in plan['manual'] if m['id'] == 'staging']
    assert staging == [
        '/dev/nst0: Stage to disk first, then copy to tape. Where: back up to disk first, then copy to tape. '
        'Why: Even 16 streams give 3.0 MB/s (no more than at 1 streams (3.0 MB/s), the largest step measured: '
        'more streams were not measured, so no gain is assumed), and the forecast still has the drive shoe-shine; '
        'a disk stage that reads sequentially at 36.5 MB/s or more feeds the drive instead.']


def test_recorded_run_with_the_inventorys_software(run_dir):
    """The run did not name the software; the inventory's bacula maps the recorded 64 KiB fix to bacula_sd."""
    plan = _fixes.plan(run_dir, 'lab-ma2', software='bacula')
    assert plan['roles'] == dict(ST_65536, bacula_sd={
        'bacula_sd_flavor': 'bacula', 'bacula_sd_maximum_block_size': 65536, 'bacula_sd_maximum_file_size': None})
    assert [m['id'] for m in plan['manual']] == ['memory', 'drive_path']


# --------------------------------------------------------------- the recorded measurements judged for DP / Bacula

def test_lab_ma2_judged_as_bacula_host():
    doc = rejudge('lab-ma2', {'software': 'bacula', 'block_size_bytes': 1048576, 'segment_size_mb': 64})
    plan = _fixes.plan_host(doc)
    assert plan['software'] == 'bacula'
    assert plan['roles'] == dict(ST_65536, bacula_sd={
        'bacula_sd_flavor': 'bacula', 'bacula_sd_maximum_block_size': 65536,
        'bacula_sd_maximum_file_size': '17000MB'})
    assert [m['id'] for m in plan['manual']] == ['drive_path', 'memory']


def test_lab_ma1_judged_as_bareos_host_below_one_gb_segment():
    """The verdict asks for 4400 MB; a run whose segment fix is below 1 GB gets the role's 1 GB floor (see below)."""
    doc = rejudge('lab-ma1', {'software': 'bareos', 'block_size_bytes': 262144, 'segment_size_mb': 64})
    plan = _fixes.plan_host(doc)
    assert plan['roles'] == {'bacula_sd': {'bacula_sd_flavor': 'bareos', 'bacula_sd_maximum_block_size': None,
                                           'bacula_sd_maximum_file_size': '4400MB'}}


def test_lab_ma2_judged_as_data_protector_host():
    doc = rejudge('lab-ma2', {'software': 'data_protector', 'block_size_bytes': 1048576, 'segment_size_mb': 64})
    plan = _fixes.plan_host(doc)
    assert plan['roles'] == dict(ST_65536, dp_omnirc={
        'dp_omnirc_immediate_filemarks': True,
        'dp_omnirc_drives': [{'name': '/dev/nst0', 'generation': 'LTO-6', 'block_size_kb': 64}]})
    # Immediate marks are set on the host; the device's block size is the Cell Manager's, so by hand too.
    assert [m['id'] for m in plan['manual']] == ['block_size', 'drive_path', 'memory']  # the verdict's order


def test_lab_ma2_judged_as_netbackup_host_whose_size_data_buffers_is_1_mib(tmp_path):
    """SIZE_DATA_BUFFERS read from the media server's file (echo 1048576 > ...) is the block size judged; the
    verdict's 64 KiB goes to netbackup_buffers, checked by st_tuning; immediate marks are not offered."""
    netbackup = tmp_path / 'netbackup'
    (netbackup / 'db' / 'config').mkdir(parents=True)
    (netbackup / 'db' / 'config' / 'SIZE_DATA_BUFFERS').write_bytes(b'1048576\n')
    doc = recorded('lab-ma2')
    drives, facts = doc['drives'], doc.get('facts') or {}
    judged = _host.assemble('lab-ma2', [d['identity'] for d in drives], doc['source'],
                            [dict(d['write_sweep']) for d in drives],
                            [dict(d['settings'], nst=d['nst']) for d in drives], {'software': 'netbackup'},
                            memory_total_mb=facts.get('memory_total_mb'), preflight=doc['preflight'],
                            host_facts=facts, netbackup=_netbackup.read_buffers(str(netbackup))).to_dict()
    verdict = judged['verdicts'][0]
    assert (verdict['numbers']['block_size_bytes'], verdict['numbers']['block_size_basis']) == (
        1048576, 'netbackup_config')
    assert [f['id'] for f in verdict['fixes']] == ['block_size', 'drive_path', 'memory']
    plan = _fixes.plan_host(judged)
    assert plan['software'] == 'netbackup'
    assert plan['roles'] == dict(ST_65536, netbackup_buffers={'netbackup_buffers_size_data_buffers': 65536})
    assert [m['id'] for m in plan['manual']] == ['drive_path', 'memory']
    assert plan['applied'][1] == (
        '/dev/nst0: Use 64 KiB tape blocks -> netbackup_buffers netbackup_buffers_size_data_buffers = 65536 (sets '
        'SIZE_DATA_BUFFERS of the media server, the block size bptm writes to every drive (checked against the HBA '
        'path\'s maximum transfer))')


def test_lab_ma2_as_netbackup_host_gets_larger_fragments_where_data_protector_gets_immediate_marks():
    """The same measurements with 64 MB between marks: Data Protector can write immediate marks, NetBackup cannot,
    so its fix is a larger fragment size, by hand on the primary server's storage unit."""
    dp = rejudge('lab-ma2', {'software': 'data_protector', 'block_size_bytes': 65536, 'segment_size_mb': 64})
    nbu = rejudge('lab-ma2', {'software': 'netbackup', 'block_size_bytes': 65536, 'segment_size_mb': 64})
    assert [f['id'] for f in dp['verdicts'][0]['fixes']] == ['immediate_filemarks', 'drive_path', 'memory']
    [fix] = [f for f in nbu['verdicts'][0]['fixes'] if f['id'] in ('immediate_filemarks', 'segment_size')]
    assert (fix['id'], fix['value']) == ('segment_size', 17000)
    assert fix['setting'] == ('NetBackup tape storage unit (on the primary server): Maximum Fragment Size = 17000 MB '
                              'or more')
    plan = _fixes.plan_host(nbu)
    assert plan['roles'] == {} and [m['id'] for m in plan['manual']] == ['segment_size', 'drive_path', 'memory']


def test_an_immediate_mark_fix_a_netbackup_run_still_carries_is_not_offered():
    """A document judged before the verdict knew NetBackup: its immediate-mark fix is neither applied nor left by
    hand; the plan says why."""
    plan = _fixes.plan_host(hand_made([{'id': 'immediate_filemarks', 'value': True},
                                       {'id': 'block_size', 'value': 262144}], 'netbackup'))
    assert plan['roles'] == {'st_tuning': {'st_tuning_block_size': 262144, 'st_tuning_devices': ['/dev/nst0'],
                                           'st_tuning_fail_on_preflight': True, 'st_tuning_max_sg_segs': None},
                             'netbackup_buffers': {'netbackup_buffers_size_data_buffers': 262144}}
    assert plan['manual'] == [] and [f['id'] for f in plan['fixes']] == ['block_size']
    assert plan['ignored'] == [{'drive': '/dev/nst0', 'id': 'immediate_filemarks', 'reason': (
        'the immediate_filemarks fix is not for a netbackup host: NetBackup has no setting for immediate tape marks: '
        'bptm writes them synchronously.')}]


@pytest.mark.parametrize('host, segment_mb', [('lab-ma1', 4400), ('lab-ma2', 17000), ('lab-ma3', 15600)])
def test_dp_omnirc_recommends_the_verdicts_segment_size_never_its_own(host, segment_mb):
    """Without MTWEOFI the verdict asks for larger segments: the role's recommendation is that value."""
    doc = rejudge(host, {'software': 'data_protector', 'block_size_bytes': 262144, 'segment_size_mb': 64},
                  mtweofi=False)
    verdict = _fixes.verdicts_of(doc)[0][1]
    fix = [f for f in verdict.fixes if f.id == 'segment_size']
    assert [f.value for f in fix] == [segment_mb]
    drives = _fixes.plan_host(doc)['roles']['dp_omnirc']['dp_omnirc_drives']
    assert [d['segment_size_mb'] for d in drives] == [segment_mb]
    # What dp_device_info computes for that entry (capacity from the drive model, as the module does).
    rule = _omnirc.recommend_device(2500, None)
    given = _omnirc.recommend_device(2500, None, segment_size_mb=drives[0]['segment_size_mb'])
    assert (rule['segment_size_mb'], rule['segment_size_basis']) == (50000, 'rule')
    assert (given['segment_size_mb'], given['segment_size_basis']) == (segment_mb, 'verdict')


def test_dp_device_recommendation_takes_the_verdicts_block_size_within_the_limits():
    assert _omnirc.recommend_device(2500, 1048576, block_size_kb=64)['block_size_kb'] == 64
    assert _omnirc.recommend_device(2500, 1048576, block_size_kb=64)['block_size_limited_by'] == 'verdict'
    assert _omnirc.recommend_device(2500, 1048576)['block_size_kb'] == 1024
    with pytest.raises(_omnirc.OmnircError, match="the verdict's block size 1024 KB is not between 1 KB and 512 KB "
                                                  "\\(the HBA path's maximum transfer\\)"):
        _omnirc.recommend_device(2500, 524288, block_size_kb=1024)
    # Without capacity, a verdict's segment size is enough; without either, a clear error.
    assert _omnirc.recommend_device(None, None, segment_size_mb=4400)['segment_size_mb'] == 4400
    with pytest.raises(_omnirc.OmnircError, match='native capacity must be a positive number of GB'):
        _omnirc.recommend_device(None, None)


# --------------------------------------------------------------- hand-made verdicts, one per fix id

@pytest.mark.parametrize('software, fix, roles, by_hand', [
    # not named: st_tuning checks the HBA path carries the block size and keeps st in variable-block mode
    (None, {'id': 'block_size', 'value': 262144},
     {'st_tuning': {'st_tuning_block_size': 262144, 'st_tuning_devices': ['/dev/nst0'],
                    'st_tuning_fail_on_preflight': True, 'st_tuning_max_sg_segs': None}}, True),
    # Amanda's block size is its tapetype's (amanda.conf, by hand); st_tuning checks the HBA path carries it
    ('amanda', {'id': 'block_size', 'value': 262144},
     {'st_tuning': {'st_tuning_block_size': 262144, 'st_tuning_devices': ['/dev/nst0'],
                    'st_tuning_fail_on_preflight': True, 'st_tuning_max_sg_segs': None}}, True),
    ('bacula', {'id': 'block_size', 'value': 262144},
     {'st_tuning': {'st_tuning_block_size': 262144, 'st_tuning_devices': ['/dev/nst0'],
                    'st_tuning_fail_on_preflight': True, 'st_tuning_max_sg_segs': None},
      'bacula_sd': {'bacula_sd_flavor': 'bacula', 'bacula_sd_maximum_block_size': 262144,
                    'bacula_sd_maximum_file_size': None}}, False),
    ('data_protector', {'id': 'block_size', 'value': 524288},
     {'st_tuning': {'st_tuning_block_size': 524288, 'st_tuning_devices': ['/dev/nst0'],
                    'st_tuning_fail_on_preflight': True, 'st_tuning_max_sg_segs': None},
      'dp_omnirc': {'dp_omnirc_immediate_filemarks': False,
                    'dp_omnirc_drives': [{'name': '/dev/nst0', 'generation': 'LTO-6', 'block_size_kb': 512}]}}, True),
    # st's max_sg_segs keeps 2 MiB blocks from direct I/O (test_verdict.py): the st module option, whatever the
    # software, and the block size it is for checked against the HBA path
    (None, {'id': 'st_direct_io', 'value': {'max_sg_segs': 513, 'block_size': 2097152}},
     {'st_tuning': {'st_tuning_block_size': 2097152, 'st_tuning_devices': ['/dev/nst0'],
                    'st_tuning_fail_on_preflight': True, 'st_tuning_max_sg_segs': 513}}, False),
    ('bacula', {'id': 'st_direct_io', 'value': {'max_sg_segs': 513, 'block_size': 2097152}},
     {'st_tuning': {'st_tuning_block_size': 2097152, 'st_tuning_devices': ['/dev/nst0'],
                    'st_tuning_fail_on_preflight': True, 'st_tuning_max_sg_segs': 513}}, False),
    ('data_protector', {'id': 'immediate_filemarks', 'value': True},
     {'dp_omnirc': {'dp_omnirc_immediate_filemarks': True, 'dp_omnirc_drives': []}}, False),
    ('amanda', {'id': 'staging', 'value': None}, {}, True),
    ('data_protector', {'id': 'segment_size', 'value': 2100},
     {'dp_omnirc': {'dp_omnirc_immediate_filemarks': False,
                    'dp_omnirc_drives': [{'name': '/dev/nst0', 'generation': 'LTO-6', 'segment_size_mb': 2100}]}},
     True),
    ('bareos', {'id': 'segment_size', 'value': 2100},
     {'bacula_sd': {'bacula_sd_flavor': 'bareos', 'bacula_sd_maximum_block_size': None,
                    'bacula_sd_maximum_file_size': '2100MB'}}, False),
    # Below the role's 1 GB floor: the verdict's "this much or more" is met at 1 GB.
    ('bacula', {'id': 'segment_size', 'value': 600},
     {'bacula_sd': {'bacula_sd_flavor': 'bacula', 'bacula_sd_maximum_block_size': None,
                    'bacula_sd_maximum_file_size': '1000MB'}}, False),
    ('amanda', {'id': 'segment_size', 'value': 2100}, {}, True),
    ('data_protector', {'id': 'streams', 'value': 4}, {}, True),
    ('bacula', {'id': 'streams', 'value': 4}, {}, True),
    ('bacula', {'id': 'staging', 'value': None}, {}, True),
    ('data_protector', {'id': 'drive_path', 'value': None}, {}, True),
    (None, {'id': 'memory', 'value': 2048}, {}, True),
    ('netbackup', {'id': 'block_size', 'value': 262144},
     {'st_tuning': {'st_tuning_block_size': 262144, 'st_tuning_devices': ['/dev/nst0'],
                    'st_tuning_fail_on_preflight': True, 'st_tuning_max_sg_segs': None},
      'netbackup_buffers': {'netbackup_buffers_size_data_buffers': 262144}}, False),
    ('netbackup', {'id': 'segment_size', 'value': 17000}, {}, True),
    ('netbackup', {'id': 'streams', 'value': 4}, {}, True),
])
def test_each_fix_id(software, fix, roles, by_hand):
    plan = _fixes.plan_host(hand_made([fix], software))
    assert plan['roles'] == roles
    assert [m['id'] for m in plan['manual']] == ([fix['id']] if by_hand else [])
    if by_hand:
        assert plan['manual'][0]['text'] == '/dev/nst0: T %s. Where: S %s. Why: W %s.' % ((fix['id'],) * 3)


def test_st_direct_io_with_the_block_size_fix_it_is_for():
    """The verdict's two fixes for 2 MiB blocks: one st_tuning run, one block size, the option set."""
    plan = _fixes.plan_host(hand_made([[{'id': 'block_size', 'value': 2097152},
                                        {'id': 'st_direct_io', 'value': {'max_sg_segs': 513, 'block_size': 2097152}}]],
                                      'bacula'))
    assert plan['roles']['st_tuning'] == {'st_tuning_block_size': 2097152, 'st_tuning_devices': ['/dev/nst0'],
                                          'st_tuning_fail_on_preflight': True, 'st_tuning_max_sg_segs': 513}
    assert plan['roles']['bacula_sd']['bacula_sd_maximum_block_size'] == 2097152
    assert plan['manual'] == []
    assert '/dev/nst0: T st_direct_io -> st_tuning st_tuning_max_sg_segs = 513 (sets st module option max_sg_segs in ' \
           '/etc/modprobe.d/st.conf' in ' '.join(plan['applied'])


def test_st_direct_io_without_its_numbers_stays_by_hand():
    plan = _fixes.plan_host(hand_made([{'id': 'st_direct_io', 'value': 513}], None))
    assert plan['roles'] == {}
    assert plan['manual'][0]['text'].endswith(
        'Not applied: st_tuning_block_size cannot take it (expected a value with block_size, got 513).')


def test_a_size_data_buffers_netbackup_would_round_stays_by_hand():
    plan = _fixes.plan_host(hand_made([{'id': 'block_size', 'value': 262656}], 'netbackup'))
    assert 'netbackup_buffers' not in plan['roles']
    assert plan['manual'][0]['text'].endswith(
        'Not applied: netbackup_buffers_size_data_buffers cannot take it (262656 bytes is not a multiple of 1024, '
        'which NetBackup would round down).')


def test_a_value_a_role_cannot_take_stays_by_hand():
    plan = _fixes.plan_host(hand_made([{'id': 'block_size', 'value': 1000000}], 'data_protector'))
    assert 'dp_omnirc' not in plan['roles']
    assert plan['roles']['st_tuning']['st_tuning_block_size'] == 1000000
    assert plan['manual'][0]['text'].endswith(
        "Not applied: block_size_kb cannot take it (1000000 bytes is not a whole number of KB, as Data "
        "Protector's block size is).")


def test_drives_that_disagree_on_a_host_wide_value_stay_by_hand():
    doc = hand_made([[{'id': 'block_size', 'value': 65536}, {'id': 'segment_size', 'value': 5000}],
                     [{'id': 'block_size', 'value': 262144}, {'id': 'segment_size', 'value': 5000}]],
                    'bacula', drives=('/dev/nst0', '/dev/nst1'))
    plan = _fixes.plan_host(doc)
    # One Maximum File Size for both: applied; two block sizes: neither st_tuning nor bacula_sd takes one.
    assert plan['roles'] == {'bacula_sd': {'bacula_sd_flavor': 'bacula', 'bacula_sd_maximum_block_size': None,
                                           'bacula_sd_maximum_file_size': '5000MB'}}
    assert [(m['drive'], m['id']) for m in plan['manual']] == [('/dev/nst0', 'block_size'), ('/dev/nst1', 'block_size')]
    assert 'ask for different values of bacula_sd_maximum_block_size (262144, 65536)' in plan['manual'][0]['text']


def test_data_protector_drives_each_keep_their_own_sizes():
    second = [{'id': 'segment_size', 'value': 9000}, {'id': 'immediate_filemarks', 'value': True}]
    doc = hand_made([[{'id': 'segment_size', 'value': 3000}], second], 'data_protector',
                    drives=('/dev/nst0', '/dev/nst1'), label='LTO-8 HH')
    assert _fixes.plan_host(doc)['roles'] == {'dp_omnirc': {
        'dp_omnirc_immediate_filemarks': True,
        'dp_omnirc_drives': [{'name': '/dev/nst0', 'generation': 'LTO-8 HH', 'segment_size_mb': 3000},
                             {'name': '/dev/nst1', 'generation': 'LTO-8 HH', 'segment_size_mb': 9000}]}}


def test_what_if_verdicts_are_not_applied():
    doc = hand_made([{'id': 'block_size', 'value': 262144}], 'bacula', what_if=True)
    plan = _fixes.plan_host(doc)
    assert plan['roles'] == {} and plan['manual'] == []
    assert plan['ignored'] == [{'drive': '/dev/nst0', 'reason': 'a what-if verdict: the drive is not installed yet'}]


# --------------------------------------------------------------- what cannot be applied

def test_run_dir_that_does_not_exist_is_an_error(tmp_path):
    with pytest.raises(_fixes.FixesError, match=r'The run directory .*/nope does not exist: give a directory the '
                                                r'qualify playbook wrote'):
        _fixes.plan(str(tmp_path / 'nope'), 'lab-ma1')


def test_hosts_without_a_usable_document_are_skipped(run_dir):
    missing = _fixes.plan(run_dir, 'lab-ma9')
    assert missing['skipped'] is True
    assert missing['reason'] == ('%s has no document for lab-ma9 (%s/hosts/lab-ma9.json): the host was not in that '
                                 'run or did not get that far; qualify it first (-l lab-ma9).' % (run_dir, run_dir))
    failed = recorded('lab-ma1')
    failed.update(host='lab-ma4', status='failed', error='Discover tape drives and changers failed: no st driver')
    write(run_dir, failed)
    assert _fixes.plan(run_dir, 'lab-ma4')['reason'] == (
        'The run has no verdict for lab-ma4 (status failed: Discover tape drives and changers failed: no st driver): '
        'nothing to apply; fix that and re-run qualify (-l lab-ma4).')
    with open(os.path.join(run_dir, 'hosts', 'lab-ma5.json'), 'w') as handle:
        handle.write('{"schema": ')
    assert _fixes.plan(run_dir, 'lab-ma5')['reason'].startswith('Cannot read %s/hosts/lab-ma5.json (' % run_dir)
    no_verdict = hand_made([])
    no_verdict.update(host='lab-ma6', drives=[], verdicts=[])
    write(run_dir, no_verdict)
    assert _fixes.plan(run_dir, 'lab-ma6')['reason'] == (
        'The run has no verdict for lab-ma6 (its document lists no drive with one): nothing to apply.')


def test_a_run_judged_for_other_software_is_an_error():
    doc = hand_made([{'id': 'segment_size', 'value': 2100}], 'data_protector')
    with pytest.raises(_fixes.FixesError, match='The run judged ma as a data_protector host but the inventory now '
                                                'says bacula'):
        _fixes.plan_host(doc, 'bacula')
    assert _fixes.plan_host(doc, 'data_protector')['software'] == 'data_protector'


# --------------------------------------------------------------- documents the run's reader refuses

def test_documents_of_other_versions_are_skipped_with_the_readers_words(run_dir):
    """_fixes reads a run through the reports' reader (_run.read): its refusal, naming the version, is the reason."""
    newer = recorded('lab-ma1')
    newer.update(host='lab-ma7', schema_version=3)
    write(run_dir, newer)
    path = '%s/hosts/lab-ma7.json' % run_dir
    assert _fixes.plan(run_dir, 'lab-ma7') == {'host': 'lab-ma7', 'skipped': True, 'reason': (
        '%s has schema version 3, but this collection reads schema_version 2: it was written by a newer '
        'tapeops.qualify: report it with that version.' % path)}
    unnamed = {'host': 'lab-ma8', 'status': 'ok', 'drives': []}
    write(run_dir, unnamed)
    assert _fixes.plan(run_dir, 'lab-ma8')['reason'] == (
        '%s/hosts/lab-ma8.json has schema not named (no schema_version or schema key), but this collection reads '
        'schema_version 2: write it again with this collection (re-run the host).' % run_dir)
    # the reports read the same files with the same words
    assert _run.load(path)['error'] == _fixes.plan(run_dir, 'lab-ma7')['reason']
