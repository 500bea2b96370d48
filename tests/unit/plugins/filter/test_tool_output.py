# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The tool_output filter on recorded real output of each tool (tests/unit/fixtures, sources in their headers)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import ansible_collections
from ansible.errors import AnsibleFilterError

from ansible_collections.tapeops.qualify.plugins.filter.tool_output import PARSERS, tool_output

COLLECTIONS_BASE = os.path.dirname(list(ansible_collections.__path__)[0])
FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures')


def fixture(tool, name):
    with open(os.path.join(FIXTURES, tool, name), encoding='utf-8') as handle:
        return handle.read()


def test_chio_status_of_a_freebsd_ibm_3584():
    out = tool_output(fixture('chio', 'chio_status_freebsd__IBM-33614LX-termpad__1.txt'), 'chio')
    assert (len(out['drives']), len(out['slots']), len(out['portals']), out['complete']) == (2, 2, 36, True)


def test_proc_scsi_scsi_of_an_hp_ultrium_7():
    out = tool_output(fixture('proc_scsi_scsi', 'proc_scsi_scsi__HP-Ultrium7-SCSI-G9Q1__1.txt'), 'proc_scsi_scsi')
    assert out['devices'] == [{'hctl': '8:0:0:0', 'host': 8, 'channel': 0, 'id': 0, 'lun': 0, 'vendor': 'HP',
                               'model': 'Ultrium 7-SCSI', 'revision': 'G9Q1', 'type': 'Sequential-Access',
                               'ansi_revision': 6}]


def test_lshw_tape_lists_both_drives():
    out = tool_output(fixture('lshw', 'lshw_tape__TANDBERG-LTO5-HH_HP-DAT160__1.txt'), 'lshw')
    assert [(t['vendor'], t['product'], t['logical_name']) for t in out['tapes']] == [
        ('TANDBERG', 'LTO-5 HH', '/dev/nst0'), ('HP', 'DAT160', '/dev/nst1')]


def test_tapestat_json_gives_the_write_rate():
    text = fixture('tapestat', 'tapestat_json__simulated-st0-300MBs-st1-idle__sysstat-12.7.9__1.txt')
    st0 = tool_output(text, 'tapestat')['reports'][-1]['tapes'][0]
    assert (st0['device'], st0['write_mb_s']) == ('st0', 299.893)


def test_mt_status_from_registered_stdout_lines():
    text = fixture('mt', 'mt_status_mtst__LTO6-drive-LTO5-tape-jonasstein__1.txt')
    assert tool_output(text.splitlines(), 'mt') == tool_output(text, 'mt')
    assert tool_output(text, 'mt')['density_code'] == 0x58


def test_every_tool_gives_its_data_on_empty_input_or_a_clear_error():
    for tool in PARSERS:
        try:
            out = tool_output('', tool)
        except AnsibleFilterError as exc:
            assert str(exc).startswith('tool_output(%s): ' % tool)
            continue
        assert isinstance(out, list if tool in ('lsscsi', 'st_stats_listing') else dict), tool


def test_unknown_tool_and_null_input_are_clear_errors():
    with pytest.raises(AnsibleFilterError, match=r"unknown tool 'tar'; use one of chio, lshw"):
        tool_output('x', 'tar')
    with pytest.raises(AnsibleFilterError, match='no mtx output to read'):
        tool_output(None, 'mtx')


def test_the_filter_runs_in_a_playbook(tmp_path):
    # the collection's filter as ansible-playbook loads it, on a pasted /proc/scsi/scsi
    pasted = tmp_path / 'proc_scsi_scsi.txt'
    pasted.write_text(fixture('proc_scsi_scsi', 'proc_scsi_scsi__HP-Ultrium7-SCSI-G9Q1__1.txt'))
    play = tmp_path / 'play.yml'
    play.write_text('''- hosts: localhost
  gather_facts: false
  tasks:
    - ansible.builtin.debug:
        msg: "{{ (lookup('ansible.builtin.file', '%s') | tapeops.qualify.tool_output('proc_scsi_scsi')).devices
                 | selectattr('type', 'equalto', 'Sequential-Access') | map(attribute='model') | join(',') }}"
''' % pasted)
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), str(play)],
                          capture_output=True, text=True, check=False,
                          env=dict(os.environ, ANSIBLE_NOCOLOR='1', ANSIBLE_COLLECTIONS_PATH=COLLECTIONS_BASE))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert '"msg": "Ultrium 7-SCSI"' in proc.stdout
