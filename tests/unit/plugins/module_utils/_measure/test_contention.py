# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Contention (_measure/_contention.py) from recorded counters: the lab run's st counters, a virtio disk's
block stat read alone and beside another reader; and the verdict and report marking a contended measurement."""

from __future__ import annotations

import copy
import json
import os

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _host, _verdict
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _contention

from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._tape_fixtures import FIXTURES

LAB_RUN_V2 = os.path.join(FIXTURES, 'lab_runs', '20261124-quick-v2')
BLOCK_STAT = os.path.join(FIXTURES, 'sysfs', 'sysfs_block_stat__virtio-vda-6.18-dd-direct__1.txt')
DD_BYTES = 268435456


def lab(host):
    with open(os.path.join(LAB_RUN_V2, host + '.json'), encoding='utf-8') as handle:
        return json.load(handle)


def own_bytes(sweep):
    return sum(s['bytes'] for s in sweep['sweep']) + sum(f['bytes'] for f in sweep['filemarks'] or [])


def block_captures():
    """{'alone': (before, after), 'contended': (before, after)} of the recorded stat lines."""
    out, name = {}, None
    with open(BLOCK_STAT, encoding='ascii') as handle:
        for line in handle:
            if line.startswith('# ') and line[2:].strip() in ('alone', 'contended'):
                name = line[2:].strip()
                out[name] = []
            elif name and line.strip():
                out[name].append(_contention.parse_block_stat(line))
    return out


@pytest.mark.parametrize('host', ('lab-ma1', 'lab-ma2', 'lab-ma3'))
def test_the_lab_runs_counters_moved_by_their_own_writes_alone(host):
    sweep = lab(host)['drives'][0]['write_sweep']
    delta = sweep['st_stats_delta']
    before = dict.fromkeys(delta, 0)
    found = _contention.drive(before, delta, own_bytes(sweep))
    assert found['contended'] is False and found['others_written_bytes'] == 0 and found['basis'] is None


def test_another_writer_in_the_window_makes_the_drive_contended():
    # lab-ma3's counters with lab-ma2's whole sweep written by someone else in the same window
    mine, theirs = lab('lab-ma3')['drives'][0]['write_sweep'], lab('lab-ma2')['drives'][0]['write_sweep']
    after = dict((k, v + theirs['st_stats_delta'].get(k, 0)) for k, v in mine['st_stats_delta'].items())
    found = _contention.drive(dict.fromkeys(after, 0), after, own_bytes(mine))
    assert found['contended'] is True and found['basis'] == 'st_write_bytes'
    assert found['others_written_bytes'] == theirs['st_stats_delta']['write_byte_cnt'] == 2143223808
    # a st buffer's worth short of ours (not flushed yet) is not someone else
    short = dict(mine['st_stats_delta'], write_byte_cnt=mine['st_stats_delta']['write_byte_cnt'] - 65536)
    assert _contention.drive(dict.fromkeys(short, 0), short, own_bytes(mine))['contended'] is False


def test_a_process_on_the_drives_nodes_makes_it_contended_even_without_counters():
    users = [{'pid': 812, 'command': 'sg_logs', 'node': 'sg1'}]
    assert _contention.drive(None, None, 0, users=users) == {'contended': True, 'basis': 'open', 'users': users}
    assert _contention.drive(None, None, 0) is None


def test_the_recorded_block_stat_alone_is_not_contended_and_beside_another_reader_is():
    captures = block_captures()
    alone = _contention.sources({'254:0': captures['alone'][0]}, {'254:0': captures['alone'][1]}, DD_BYTES)
    assert alone['contended'] is False and alone['others_read_bytes'] == 45056
    both = _contention.sources({'254:0': captures['contended'][0]}, {'254:0': captures['contended'][1]}, DD_BYTES)
    assert both['contended'] is True and both['devices'] == ['254:0']
    assert both['device_read_bytes'] == 1048616 * 512 and both['others_read_bytes'] == 1048616 * 512 - DD_BYTES


def test_block_devices_of_paths_and_their_counters_are_read_from_sysfs(tmp_path):
    sys_root = tmp_path / 'sys'
    dev = os.stat(str(tmp_path)).st_dev
    key = '%d:%d' % (os.major(dev), os.minor(dev))
    (sys_root / 'dev' / 'block' / key).mkdir(parents=True)
    with open(BLOCK_STAT, encoding='ascii') as handle:
        line = [x for x in handle if not x.startswith('#')][0]
    (sys_root / 'dev' / 'block' / key / 'stat').write_text(line)
    devices = _contention.source_devices([str(tmp_path), str(tmp_path / 'missing')], str(sys_root))
    assert list(devices) == [key]
    assert _contention.read_sectors(devices) == {key: 67812554}
    assert _contention.parse_block_stat('') is None and _contention.sources({}, {}, 1) is None


def test_a_contended_source_read_marks_the_verdict_and_its_words():
    doc = lab('lab-ma1')
    source = copy.deepcopy(doc['source'])
    captures = block_captures()
    source['contention'] = _contention.sources({'254:0': captures['contended'][0]},
                                               {'254:0': captures['contended'][1]}, DD_BYTES)
    drive = doc['drives'][0]
    written = _host.assemble('lab-ma1', [drive['identity']], source, [drive['write_sweep']],
                             [dict(drive['settings'], nst=drive['nst'])], {},
                             memory_total_mb=doc['facts']['memory_total_mb'], preflight=doc['preflight'],
                             host_facts=doc['facts'], run=doc['run']).to_dict()
    [verdict] = written['verdicts']
    # marked, not changed: the class is the one the same numbers give
    assert verdict['contended'] is True and verdict['class'] == doc['verdicts'][0]['class']
    [finding] = [f for f in verdict['findings'] if f['id'] == 'contended']
    assert finding['severity'] == 'warning'
    assert 'others read 268.5 MB from the sources\' devices while this run read 268.4 MB' in finding['text']
    assert verdict['summary'].endswith('(Measured under contention: see the findings.)')
    assert written['source']['contention']['contended'] is True
    # the uncontended document has no mark at all
    again = _verdict.contention(doc['source'], drive['write_sweep'])
    assert again is None and 'contended' not in doc['verdicts'][0]
