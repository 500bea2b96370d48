# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The backup application a host is judged for, on recorded verdict inputs with only tapeops_backup.software changed.

Inputs: what lab run 20261123-quick handed qualify_verdict (tests/unit/fixtures/verdict_args/20261123-quick/) and
the recorded cases of tests/unit/fixtures/controller_outputs/inputs/ (mechanics: 10 MB segments on an LTO-5 whose
st driver has MTWEOFI; upgrade-check: 1000 MB segments on an LTO-6 beside a what-if LTO-9). Each is judged as it
was recorded (no software), for an application this collection does not know ("veeam"), and for the applications
it knows; the documents qualify_verdict writes are read back from the run directory.

- An application not known (unset or unknown) gets the same classes, numbers and fixes either way, none of them an
  application's own setting (immediate file marks, segment size), and a reason naming what was assumed. The block
  size stays a fix (st-direct-io's inputs without their software): the st driver carries it, so it is worded as
  the st driver's, and the plan gives it to st_tuning as for any application.
- A known application gets its own settings' fixes where they help (Data Protector's immediate file marks on
  the same recorded inputs), and Amanda gets none it cannot take (immediate marks, more streams).
"""

from __future__ import annotations

import copy
import json
import os

import pytest

from ansible_collections.tapeops.qualify.plugins.action import qualify_fixes_info, qualify_verdict
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _verdict

from action_harness import FIXTURES, VERDICT_ARGS, run_action

CASES = os.path.join(FIXTURES, 'controller_outputs', 'inputs')
RECORDED = [(VERDICT_ARGS, 'lab-ma1'), (VERDICT_ARGS, 'lab-ma2'), (VERDICT_ARGS, 'lab-ma3'),
            (CASES, 'mechanics'), (CASES, 'upgrade-check')]
# the fixes an application not known is offered: the st driver's (the block size among them), the host's, the sources'
GENERIC_FIXES = {'block_size', 'st_direct_io', 'streams', 'staging', 'drive_path', 'memory'}


def args_of(directory, host):
    with open(os.path.join(directory, host + '.json'), encoding='utf-8') as handle:
        return json.load(handle)


def judged(tmp_path, directory, host, software):
    """The host document qualify_verdict writes of the recorded inputs with tapeops_backup.software = ``software``
    (None: unset), read back from the run directory."""
    args = copy.deepcopy(args_of(directory, host))
    backup = dict(args.get('backup') or {})
    backup.pop('software', None)
    if software is not None:
        backup['software'] = software
    run_dir = str(tmp_path / (software or 'unset'))
    failed, result = run_action(qualify_verdict, dict(args, backup=backup, report_dir=run_dir),
                                {'inventory_hostname': host})
    assert not failed, result['msg']
    with open(result['path'], encoding='utf-8') as handle:
        return run_dir, json.load(handle)


def fixes(doc):
    return dict((v['drive'], [f['id'] for f in v['fixes']]) for v in doc['verdicts'])


def without_the_application_reason(doc):
    out = copy.deepcopy(doc)
    for verdict in out['verdicts']:
        verdict['reasons'] = [r for r in verdict['reasons'] if not r.startswith('Backup application')]
    out['facts'].pop('backup', None)
    out.pop('generated_at')
    return out


@pytest.mark.parametrize('directory, host', RECORDED, ids=[h for d, h in RECORDED])
def test_an_application_not_known_gets_only_the_st_driver_host_and_source_fixes(tmp_path, directory, host):
    dummy, unset = judged(tmp_path, directory, host, None)
    dummy, veeam = judged(tmp_path, directory, host, 'veeam')
    for verdict in unset['verdicts']:
        assert set(f['id'] for f in verdict['fixes']) <= GENERIC_FIXES, verdict['fixes']
        # nothing of the application's is modelled as fixed either: these inputs' block sizes are not known, so
        # the only setting left (the block size) is no fix here
        assert verdict['class_after_setting_fixes'] == verdict['class_at_current_settings']
        assert verdict['class'] != _verdict.MISCONFIGURED
        [said] = [r for r in verdict['reasons'] if r.startswith('Backup application')]
        assert said == ('Backup application not known (tapeops_backup.software unset): only the st driver\'s, the '
                        'host\'s and the sources\' fixes are offered (the block size as the st driver carries it); '
                        'the application\'s own file marks and segment size are neither offered nor counted in the '
                        'forecast with the fixes (set tapeops_backup.software where the host runs one of '
                        'data_protector, bacula, bareos, netbackup or amanda).')
    # an application named but not known is judged the same; only the name it is given differs
    assert without_the_application_reason(veeam) == without_the_application_reason(unset)
    for verdict in veeam['verdicts']:
        [said] = [r for r in verdict['reasons'] if r.startswith('Backup application')]
        assert said.startswith('Backup application "veeam" is not one this collection knows (data_protector, bacula, '
                               'bareos, netbackup, amanda): only the st driver\'s')


@pytest.mark.parametrize('software', [None, 'veeam'])
def test_an_application_not_known_keeps_the_block_size_as_the_st_drivers(tmp_path, software):
    # st-direct-io: an LTO-9 judged at 262144-byte blocks (the inventory's) whose sweep measured 2 MiB best, with
    # 50000 MB segments; recorded as a Bacula host. Without its software the block size is still a fix (the st
    # driver carries it: st_tuning checks the HBA path, st_direct_io lets st send the block), in the st driver's
    # words; the segment size, Bacula's Maximum File Size, is not offered.
    dummy, bacula = judged(tmp_path, CASES, 'st-direct-io', 'bacula')
    run_dir, other = judged(tmp_path, CASES, 'st-direct-io', software)
    assert fixes(bacula)['/dev/nst0'] == ['block_size', 'st_direct_io', 'segment_size', 'drive_path']
    assert fixes(other)['/dev/nst0'] == ['block_size', 'st_direct_io', 'drive_path']
    block = by_drive(other)['/dev/nst0']['fixes'][0]
    assert (block['value'], block['title']) == (2097152, 'Use 2 MiB tape blocks')
    assert block['setting'] == (
        'st driver: 2 MiB blocks (tapeops.qualify.st_tuning checks that each drive\'s HBA path carries them and keeps '
        'st in variable-block mode, where each write of the application is one block: its write size, where it has a '
        'setting for it; in fixed-block mode st writes its own, mt defblksize 2097152, kept as a mode\'s blocksize in '
        '/etc/stinit.def)')
    assert 'Maximum Block Size' not in json.dumps(other) and 'Maximum File Size' not in json.dumps(other)
    # the forecast with the fixes counts the block size (the same drive path as Bacula's), not the larger segment
    assert by_drive(other)['/dev/nst0']['numbers']['drive_path_best_mb_s'] == \
        by_drive(bacula)['/dev/nst0']['numbers']['drive_path_best_mb_s']
    failed, plan = run_action(qualify_fixes_info, {'run_dir': run_dir, 'host': 'st-direct-io'})
    assert not failed, plan['msg']
    assert list(plan['roles']) == ['st_tuning']
    assert plan['roles']['st_tuning']['st_tuning_block_size'] == 2097152
    assert [e['id'] for e in plan['fixes']] == ['block_size', 'st_direct_io', 'drive_path']
    assert plan['ignored'] == []


def test_the_same_inputs_for_a_known_application_get_its_own_settings(tmp_path):
    # upgrade-check: 1000 MB segments with synchronous marks on a drive whose st driver has MTWEOFI. Recorded
    # without software, the drive shoe-shines and the fix is a disk stage; on a Data Protector Media Agent
    # OB2IMMEDFM is the first fix and the settings hold the drive back.
    dummy, unset = judged(tmp_path, CASES, 'upgrade-check', None)
    dummy, dp = judged(tmp_path, CASES, 'upgrade-check', 'data_protector')
    assert fixes(unset)['/dev/nst0'] == ['staging', 'memory']
    assert fixes(dp)['/dev/nst0'][0] == 'immediate_filemarks'
    assert by_drive(dp)['/dev/nst0']['class'] == _verdict.MISCONFIGURED
    assert by_drive(dp)['/dev/nst0']['fixes'][0]['setting'] == (
        'omnirc on the Media Agent: OB2FORCESCSI=WFM and OB2IMMEDFM=1 (tapeops.qualify.dp_omnirc)')
    assert not [r for r in by_drive(dp)['/dev/nst0']['reasons'] if r.startswith('Backup application')]


def by_drive(doc):
    return dict((v['drive'], v) for v in doc['verdicts'])


def test_amanda_gets_no_fix_it_cannot_take(tmp_path):
    # mechanics: an LTO-5 with MTWEOFI, 10 MB segments. Amanda marks synchronously and writes one dump at a time.
    dummy, amanda = judged(tmp_path, CASES, 'mechanics', 'amanda')
    dummy, dp = judged(tmp_path, CASES, 'mechanics', 'data_protector')
    assert 'immediate_filemarks' in fixes(dp)['/dev/nst0']
    assert not set(fixes(amanda)['/dev/nst0']) & {'immediate_filemarks', 'streams'}
    verdict = by_drive(amanda)['/dev/nst0']
    segment = next(f for f in verdict['fixes'] if f['id'] == 'segment_size')
    assert segment['setting'].startswith('Amanda tapetype: part-size ')
    assert ' mbytes or more, or 0 (no splitting, its default): a file mark ends every dump or part' in \
        segment['setting']
    # no block size in the inventory: Amanda's own default, 32 KiB, is judged and said to be
    assert (verdict['numbers']['block_size_bytes'], verdict['numbers']['block_size_basis']) == (32768, 'default')
    assert [r for r in verdict['reasons'] if r.startswith('No block size was given')] == [
        'No block size was given (tapeops_backup.block_size_bytes), so the verdict judges Amanda\'s default, 32 KiB '
        '(amanda.conf(5), tapetype blocksize: "Default: 32 kbytes" (the tape device\'s block size 32768, Amanda '
        'device-src/tape-device.c)); set block_size_bytes to the block size the tapetype sets where it differs.']
    block = next(f for f in verdict['fixes'] if f['id'] == 'block_size')
    assert block['setting'] == ('Amanda tapetype (amanda.conf on the Amanda server): blocksize %d kbytes '
                                '(tapeops.qualify.qualify_amanda_tapetype writes the whole tapetype)'
                                % (block['value'] // 1024))
    drive = next(d for d in amanda['drives'] if d['id'] == '/dev/nst0')
    assert drive['setting_sources']['block_size_bytes']['from'] == 'default'


def test_amanda_dumps_are_the_jobs_whose_marks_the_forecast_models(tmp_path):
    # lab-ma2: no segment size. Amanda marks after every dump: without a dump size the reasons say no marks are
    # modelled; with tapeops_backup.job_size_mb (a dump) each dump's closing mark is in every forecast instead
    dummy, amanda = judged(tmp_path, VERDICT_ARGS, 'lab-ma2', 'amanda')
    [said] = [r for r in by_drive(amanda)['/dev/nst0']['reasons'] if r.startswith('Amanda ends every dump')]
    assert 'neither a dump size (tapeops_backup.job_size_mb) nor a part size (segment_size_mb) was given' in said
    args = dict(args_of(VERDICT_ARGS, 'lab-ma2'), backup={'software': 'amanda', 'job_size_mb': 2000, 'job_gap_s': 30},
                report_dir=str(tmp_path / 'jobs'))
    failed, result = run_action(qualify_verdict, args, {'inventory_hostname': 'lab-ma2'})
    assert not failed, result['msg']
    with open(result['path'], encoding='utf-8') as handle:
        verdict = by_drive(json.load(handle))['/dev/nst0']
    assert not [r for r in verdict['reasons'] if r.startswith('Amanda ends every dump')]
    assert (verdict['numbers']['job_size_mb'], verdict['numbers']['job_gap_s']) == (2000, 30)
    assert verdict['numbers']['job_marks_now'] > 0


def test_amanda_stages_where_others_would_run_more_streams(tmp_path):
    # lab-ma3: the sources give 3 MB/s to an LTO-8 that needs 36; more streams were not measured, so the others get
    # a disk stage after "even 16 streams"; Amanda's is its holding disk, worded for one dump at a time
    dummy, amanda = judged(tmp_path, VERDICT_ARGS, 'lab-ma3', 'amanda')
    staging = next(f for f in by_drive(amanda)['/dev/nst0']['fixes'] if f['id'] == 'staging')
    assert staging['title'] == 'Write to tape from a holding disk'
    assert staging['setting'].startswith('Amanda: a holding disk (a holdingdisk section; the dumptype\'s holdingdisk '
                                         'auto, its default, or required)')
    assert staging['why'].startswith('Amanda writes one backup at a time to a drive (no multiplexing), so more '
                                     'streams are no fix: the sources give this drive 3.0 MB/s, below the 36.5 MB/s')


def test_a_run_judged_for_an_application_not_known_plans_none_of_its_settings(tmp_path):
    # a run judged before the verdict stopped offering an application's own settings for one it does not know may
    # carry a segment size fix; the plan says why it is not planned, and plans the block size (st_tuning's) as before
    run_dir, doc = judged(tmp_path, CASES, 'upgrade-check', None)
    doc['verdicts'][0]['fixes'][:0] = [
        {'id': 'block_size', 'rank': 1, 'value': 262144, 'title': 'T', 'setting': 'S', 'why': 'W'},
        {'id': 'segment_size', 'rank': 2, 'value': 400000, 'title': 'T', 'setting': 'S', 'why': 'W'}]
    with open(os.path.join(run_dir, 'hosts', 'upgrade-check.json'), 'w', encoding='utf-8') as handle:
        json.dump(doc, handle)
    failed, plan = run_action(qualify_fixes_info, {'run_dir': run_dir, 'host': 'upgrade-check', 'software': 'veeam'})
    assert not failed, plan['msg']
    assert [(i.get('id'), i['reason']) for i in plan['ignored'] if i.get('id')] == [
        ('segment_size', 'the segment_size fix is a setting of the backup application: backup application "veeam" '
                         'is not one this collection knows (data_protector, bacula, bareos, netbackup, amanda), so it '
                         'is not planned; set tapeops_backup.software and re-run qualify')]
    assert plan['roles']['st_tuning']['st_tuning_block_size'] == 262144
    assert [e['id'] for e in plan['fixes']][:1] == ['block_size']
