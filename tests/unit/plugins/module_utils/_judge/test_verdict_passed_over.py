# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The verdict says which entries of the sources were not read (source_read_benchmark's passed_over_counts).

The source is read for real (fio, through the module as Ansible runs it): a tree of files beside a symlink,
a FIFO and a socket. The entries themselves, with paths and reasons, stay in the host document's
source.passed_over; the verdict's reasons count them.
"""

from __future__ import annotations

import os
import shutil
import socket

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _drive_model as dm
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _verdict as v
from ansible_collections.tapeops.qualify.plugins.module_utils import _words
from ansible_collections.tapeops.qualify.tests.unit.plugins.modules.module_harness import run_module_process

LTO5 = dm.lookup(5, vendor='IBM')


@pytest.mark.skipif(shutil.which('fio') is None, reason='fio is not installed (apt install fio)')
def test_the_verdict_counts_what_the_read_passed_over(tmp_path):
    src = tmp_path / 'src'
    src.mkdir()
    for index in range(3):
        (src / ('f%d' % index)).write_bytes(os.urandom(100000))
    os.symlink('f0', str(src / 'link-a'))
    os.symlink('f1', str(src / 'link-b'))
    os.mkfifo(str(src / 'pipe'))
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(src / 'sock'))
    sock.close()
    rc, result = run_module_process('source_read_benchmark', {'paths': [str(src)], 'time_budget': 0,
                                                              'scaling': False, 'compressibility_sample': '0'},
                                    cwd='/', timeout=120)
    assert rc == 0, result.get('msg')
    assert result['passed_over_counts'] == {'symlink': 2, 'fifo': 1, 'socket': 1}
    verdict = _words.verdict(v.evaluate(LTO5, result, options={'tape_ratio': 1.0})).to_dict()
    assert ('Not read from the sources: 2 symbolic links (not followed), 1 FIFO, 1 socket (each with its path and '
            'reason in the host document\'s source.passed_over).') in verdict['reasons']


def test_a_read_that_passed_over_nothing_says_nothing_about_it():
    series = [500.0] * 30
    source = {'streams': [{'path': '/src'}], 'passed_over': [], 'passed_over_counts': {},
              'aggregate': {'mean_mb_s': 500.0, 'series_mb_s': series, 'streams': 1, 'samples': 30}}
    verdict = _words.verdict(v.evaluate(LTO5, source, options={'tape_ratio': 1.0})).to_dict()
    assert not [r for r in verdict['reasons'] if r.startswith('Not read from the sources')]
    assert _words.fact({'id': 'passed_over', 'counts': {'unreadable': 1, 'permission_denied': 2}}) == (
        'Not read from the sources: 2 entries that could not be opened (permission denied), 1 file that could not '
        'be opened (each with its path and reason in the host document\'s source.passed_over).')
