# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""qualify_verdict with tape_ratio_from: a qualify run judged with the ratio its drives measured in an observe run.

Real on both sides: the observe run is the one qualify_verdict writes of the lab's recorded windows
(observe_cases.py: lab-ma3's real Bacula 9.6.7 job, whose drive measured 1.213 over 231 MB; lab-ma1's writer
job, 1.0; lab-ma2's drive idle), and the qualify run is lab run 20261123-quick's recorded arguments
(tests/unit/fixtures/verdict_args/20261123-quick), whose 1 MB zlib sample of the sources estimated 1.015. The
ratio used, its basis in the document's words, the precedence of the user's tape_ratio, each way the observe
run has no ratio for a drive, and every document against docs/host-report.schema.json.
"""

from __future__ import annotations

import copy
import os

import jsonschema
import markupsafe
import pytest

from ansible_collections.tapeops.qualify.plugins.action import qualify_report, qualify_verdict
from ansible_collections.tapeops.qualify.plugins.module_utils import _run, _words
from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import _charts, _report

from action_harness import LAB_RUN_V2, recorded as recorded_doc, run_action
from observe_cases import RUN, bacula_job, idle_window, load, observe_args, recorded, verdict_args

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..'))
SCHEMA = os.path.join(ROOT, 'docs', 'host-report.schema.json')
# the drive's ratio used, and the estimate of the source read's 1 MB sample that it replaced (1.015)
OBSERVED_BASIS = ("measured by the drive itself over an observed job (observe run observe-20261127T220000Z, Bacula "
                  "job 1: 231 MB in 79 s); the source sample estimated 1.01")
PREFIX = "The drive's own tape ratio (qualify_tape_ratio_from) is not used: "


@pytest.fixture(scope='module')
def validator():
    return jsonschema.Draft202012Validator(load(SCHEMA))


@pytest.fixture
def observe_run(tmp_path):
    """An observe run's directory as the observe playbook leaves it: lab-ma3's Bacula job, lab-ma1's writer job,
    lab-ma2's drive idle."""
    run_dir = str(tmp_path / RUN['id'])
    for host, window, jobs in (('lab-ma3', recorded('observed_bacula_job__lab-ma3')['window'], [bacula_job()]),
                               ('lab-ma1', recorded('observed_job__lab-ma1')['window'], []),
                               ('lab-ma2', idle_window(), [])):
        failed, result = run_action(qualify_verdict, observe_args(host, run_dir, [window], jobs),
                                    {'inventory_hostname': host})
        assert not failed, result
    return run_dir


def qualify(tmp_path, host, ratio_from, validator, **changes):
    """The verdicts qualify_verdict writes for ``host`` of lab run 20261123-quick, with ``tape_ratio_from``."""
    args = dict(verdict_args(host), report_dir=str(tmp_path / 'qualify'), **changes)
    if ratio_from is not None:
        args['tape_ratio_from'] = ratio_from
    failed, result = run_action(qualify_verdict, args, {'inventory_hostname': host})
    assert not failed, result
    doc = load(result['path'])
    validator.validate(doc)
    return doc['verdicts']


def ratio_reasons(verdict):
    return [r for r in verdict['reasons'] if r.startswith(PREFIX)]


def test_the_drive_s_own_ratio_over_the_observed_bacula_job_is_the_verdict_s(tmp_path, observe_run, validator):
    [before] = qualify(tmp_path / 'before', 'lab-ma3', None, validator)
    [after] = qualify(tmp_path / 'after', 'lab-ma3', observe_run, validator)
    assert before['numbers']['tape_ratio'] == 1.015 and before['numbers']['need_full_mb_s'] == 36.5
    num = after['numbers']
    assert (num['tape_ratio'], num['tape_ratio_basis']) == (1.213, OBSERVED_BASIS)
    # LTO-8 at the lab's scale: 36 MB/s native x 1.213, as the observe run judged the job
    observed = load(_run.host_json_path(observe_run, 'lab-ma3'))['observed'][0]['observed']
    assert num['need_full_mb_s'] == round(observed['need_full_mb_s'], 1) == 43.7
    assert num['need_floor_mb_s'] == round(observed['need_floor_mb_s'], 1)
    assert ('Full speed for LTO-8 FH needs 43.7 MB/s: 36.0 MB/s native x 1.21 tape compression (%s).' % OBSERVED_BASIS
            in after['reasons'])
    assert ratio_reasons(after) == []
    # the sources did not change: the 3 MB/s Bacula's job got still shoe-shines the drive
    assert after['class'] == before['class'] == 'SHOE-SHINING'


def test_a_drive_that_measured_1_0_is_judged_at_1_0_not_the_sample_s_estimate(tmp_path, observe_run, validator):
    [verdict] = qualify(tmp_path, 'lab-ma1', observe_run, validator)
    assert verdict['numbers']['tape_ratio'] == 1.0
    assert verdict['numbers']['tape_ratio_basis'].startswith('measured by the drive itself over an observed job '
                                                             '(observe run observe-20261127T220000Z: ')


def test_the_user_s_tape_ratio_comes_first_and_the_reasons_say_what_the_drive_measured(tmp_path, observe_run,
                                                                                       validator):
    [verdict] = qualify(tmp_path, 'lab-ma3', observe_run, validator, options={'tape_ratio': 1.5})
    assert (verdict['numbers']['tape_ratio'], verdict['numbers']['tape_ratio_basis']) == (1.5, 'set by the user')
    assert ratio_reasons(verdict) == [
        PREFIX + 'the drive measured 1.21 itself in observe run observe-20261127T220000Z, Bacula job 1, but '
        'tape_ratio is set (1.50) and comes first: leave qualify_verdict_options.tape_ratio unset to judge with '
        'the drive\'s ratio.']


def test_an_idle_drive_gives_no_ratio_and_the_sample_is_used(tmp_path, observe_run, validator):
    [verdict] = qualify(tmp_path, 'lab-ma2', observe_run, validator)
    assert verdict['numbers']['tape_ratio'] == 1.015
    assert verdict['numbers']['tape_ratio_basis'].startswith('estimated from a 1 MB sample of the sources')
    assert ratio_reasons(verdict) == [
        PREFIX + '/dev/nst0 wrote nothing while observe run observe-20261127T220000Z watched it (idle): watch it in '
        'an observe run while a backup writes to it.']


def test_each_drive_is_matched_by_its_id(tmp_path, observe_run, validator):
    args = verdict_args('lab-ma3')
    second = dict(copy.deepcopy(args['drives'][0]), nst='/dev/nst1', st='/dev/st1')
    first, other = qualify(tmp_path, 'lab-ma3', observe_run, validator, drives=args['drives'] + [second])
    assert (first['drive'], first['numbers']['tape_ratio']) == ('/dev/nst0', 1.213)
    assert (other['drive'], other['numbers']['tape_ratio']) == ('/dev/nst1', 1.015)
    assert ratio_reasons(other) == [
        PREFIX + 'observe run observe-20261127T220000Z did not watch /dev/nst1 (it watched /dev/nst0): watch it in '
        'an observe run while a backup writes to it.']


def test_a_window_in_which_the_drive_measured_no_compression_gives_no_ratio(tmp_path, validator):
    run_dir = str(tmp_path / RUN['id'])
    window = dict(recorded('observed_bacula_job__lab-ma3')['window'], compression_ratio=None)
    run_action(qualify_verdict, observe_args('lab-ma3', run_dir, [window]), {'inventory_hostname': 'lab-ma3'})
    [verdict] = qualify(tmp_path, 'lab-ma3', run_dir, validator)
    assert verdict['numbers']['tape_ratio'] == 1.015
    assert ratio_reasons(verdict) == [
        PREFIX + '/dev/nst0 did not measure its compression in observe run observe-20261127T220000Z (the ratio '
        'there: no ratio known, 1.0 assumed), so that run has no ratio of its own for it: set '
        'qualify_verdict_options.tape_ratio if you know it.']


def unused_reason(tmp_path, ratio_from, validator, host='lab-ma3'):
    """The one reason of ``host``'s verdict why ``ratio_from`` gave no ratio; the sample's ratio is used."""
    [verdict] = qualify(tmp_path, host, ratio_from, validator)
    assert verdict['numbers']['tape_ratio'] == 1.015
    [reason] = ratio_reasons(verdict)
    return reason


def test_no_observe_run_there_is_no_error_and_each_reason_says_what_to_do(tmp_path, observe_run, validator):
    missing = str(tmp_path / 'observe-typo')
    assert unused_reason(tmp_path / 'a', missing, validator) == (
        PREFIX + '%s does not exist: run the observe playbook first (ansible-playbook tapeops.qualify.observe), or '
        'give qualify_tape_ratio_from the directory of an observe run, for example '
        'reports/observe-20261127T220000Z.' % missing)
    a_file = tmp_path / 'a-file'
    a_file.write_text('')
    assert unused_reason(tmp_path / 'a2', str(a_file), validator) == (
        PREFIX + '%s is a file, not a directory: give qualify_tape_ratio_from the directory of an observe run, for '
        'example reports/observe-20261127T220000Z.' % a_file)
    empty = tmp_path / 'empty'
    empty.mkdir()
    assert 'holds no host documents (hosts/), so it is not a run\'s directory' in unused_reason(
        tmp_path / 'b', str(empty), validator)
    # an observe run of other hosts
    other = str(tmp_path / 'other')
    run_action(qualify_verdict, observe_args('lab-ma1', other, [recorded('observed_job__lab-ma1')['window']]),
               {'inventory_hostname': 'lab-ma1'})
    assert unused_reason(tmp_path / 'c', other, validator) == (
        PREFIX + 'the run in %s has no document of this host (%s): observe this host (ansible-playbook '
        'tapeops.qualify.observe -l lab-ma3) and give that run.' % (other, _run.host_json_path(other, 'lab-ma3')))
    # a qualify run's directory (the recorded lab run)
    earlier = str(tmp_path / 'earlier-qualify')
    _run.save(earlier, recorded_doc(LAB_RUN_V2, 'lab-ma3'))
    assert unused_reason(tmp_path / 'd', earlier, validator) == (
        PREFIX + "%s is not an observe run's document (it holds no observed drives): give qualify_tape_ratio_from "
        "the directory of an observe run (playbooks/observe.yml writes one), for example "
        "reports/observe-20261127T220000Z." % _run.host_json_path(earlier, 'lab-ma3'))
    # the observe run's document damaged since it was written
    path = _run.host_json_path(observe_run, 'lab-ma3')
    with open(path, encoding='utf-8') as handle:
        text = handle.read()
    with open(path, 'w', encoding='utf-8') as handle:
        handle.write(text[:100])
    reason = unused_reason(tmp_path / 'e', observe_run, validator)
    assert reason.startswith(PREFIX + "the observe run's document of this host cannot be used: Cannot read %s" % path)


def test_the_what_if_target_is_not_the_observed_drive_and_hears_the_ratio_to_set(tmp_path, observe_run, validator):
    args = verdict_args('lab-ma3')
    what_if = dict((k, args[k]) for k in ('source', 'memory_total_mb', 'preflight', 'host_facts'))
    failed, result = run_action(qualify_verdict, dict(
        what_if, report_dir=str(tmp_path), target_generation='LTO-9 FH', options={'target_vendor': 'IBM'},
        run={'id': 'upgrade-x', 'mode': 'upgrade_check'}, tape_ratio_from=observe_run),
        {'inventory_hostname': 'lab-ma3'})
    assert not failed, result
    validator.validate(load(result['path']))
    [verdict] = result['verdicts']
    assert verdict['what_if'] is True and verdict['numbers']['tape_ratio_basis'].startswith('estimated from')
    assert ratio_reasons(verdict) == [
        PREFIX + "the target drive is not installed, so observe run observe-20261127T220000Z did not watch it; this "
        "host's drives measured 1.21 (/dev/nst0) there: set qualify_verdict_options.tape_ratio to judge the target "
        "with that ratio."]


def test_the_reports_say_where_each_drive_s_ratio_comes_from(tmp_path, observe_run, validator, monkeypatch):
    def no_charts():
        raise _report.ReportError('charts are not drawn here')

    monkeypatch.setattr(_charts, 'Charts', no_charts)
    for host in ('lab-ma2', 'lab-ma3'):
        qualify(tmp_path, host, observe_run, validator)
    run_dir = str(tmp_path / 'qualify')
    failed, result = run_action(qualify_report, {'report_dir': run_dir, 'expected_hosts': ['lab-ma2', 'lab-ma3'],
                                                 'run': {'id': 'qualify', 'mode': 'qualify', 'profile': 'quick'}})
    assert not failed, result
    used = 'native x 1.21 tape compression (%s).' % OBSERVED_BASIS
    idle = PREFIX + '/dev/nst0 wrote nothing while observe run observe-20261127T220000Z watched it (idle)'
    with open(os.path.join(run_dir, _run.SUMMARY_MD), encoding='utf-8') as handle:
        summary = handle.read()
    assert used in summary and idle in summary
    for host, said in (('lab-ma3', used), ('lab-ma2', idle)):
        with open(os.path.join(run_dir, _run.host_page(host)), encoding='utf-8') as handle:
            # the page as Jinja2's autoescape writes it
            assert str(markupsafe.escape(said)) in handle.read(), host


def test_an_observe_run_refuses_tape_ratio_from(tmp_path, observe_run):
    failed, result = run_action(qualify_verdict, dict(
        observe_args('lab-ma1', str(tmp_path / 'again'), [recorded('observed_job__lab-ma1')['window']]),
        tape_ratio_from=observe_run), {'inventory_hostname': 'lab-ma1'})
    assert failed and result['msg'] == _words.OBSERVE_NOT_QUALIFY and 'tape_ratio_from' in result['msg']
