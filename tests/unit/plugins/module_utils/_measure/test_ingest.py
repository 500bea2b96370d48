# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The competing ingest: where it may write, its fio job, its figures."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _fio
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _ingest


def test_directory_beside_the_sources_is_accepted(tmp_path):
    (tmp_path / 'src').mkdir()
    (tmp_path / 'spool').mkdir()
    (tmp_path / 'src' / 'file').write_bytes(b'x')
    assert _ingest.check_directory(str(tmp_path / 'spool'), [str(tmp_path / 'src')]) == str(tmp_path / 'spool')
    # A single-file source: its directory holds it, so that directory is refused.
    with pytest.raises(_ingest.IngestError, match='contains the source'):
        _ingest.check_directory(str(tmp_path / 'src'), [str(tmp_path / 'src' / 'file')])


def test_symlinked_ingest_resolving_to_a_source_is_refused(tmp_path):
    (tmp_path / 'src').mkdir()
    os.symlink(str(tmp_path / 'src'), str(tmp_path / 'alias'))
    with pytest.raises(_ingest.IngestError, match='is the source'):
        _ingest.check_directory(str(tmp_path / 'alias'), [str(tmp_path / 'src')])
    # And a source given through a symlink is compared by what it resolves to.
    (tmp_path / 'src' / 'inner').mkdir()
    with pytest.raises(_ingest.IngestError, match='is inside the source'):
        _ingest.check_directory(str(tmp_path / 'src' / 'inner'), [str(tmp_path / 'alias')])


def test_write_job_is_bounded_and_rate_limited():
    text = _ingest.build_job('/srv/spool/.tapeops-ingest-x', 3 * 1073741824 + 1048576, 1048576, 50000000, True, 70,
                             '/tmp/logs/ingest')
    lines = text.splitlines()
    for line in ('rw=write', 'direct=1', 'time_based=1', 'runtime=70', 'size=3222274048', 'nrfiles=4',
                 'rate=,50000000', 'directory=/srv/spool/.tapeops-ingest-x', 'write_bw_log=/tmp/logs/ingest'):
        assert line in lines
    buffered = _ingest.build_job('/srv/a:b', 1048576, 1048576, None, False, 10)
    assert 'fdatasync=32' in buffered and 'directory=/srv/a\\:b' in buffered
    assert not [line for line in buffered.splitlines() if line.startswith('rate=')]
    with pytest.raises(ValueError):
        _ingest.build_job('/srv/spool#1', 1048576)
    with pytest.raises(ValueError):
        _ingest.build_job('/srv/spool', 4096, 1048576)


@pytest.mark.skipif(shutil.which('fio') is None, reason='fio is not installed')
def test_write_job_parses_with_the_real_fio(tmp_path):
    job = tmp_path / 'ingest.fio'
    job.write_text(_ingest.build_job(str(tmp_path), 8 * 1048576, 1048576, 1000000, True, 10))
    proc = subprocess.run(['fio', '--parse-only', str(job)], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr


def test_parse_write_json():
    text = 'fio: terminating on signal 2\n{"fio version": "fio-3.33", "jobs": [{"jobname": "ingest", "error": 0, ' \
           '"write": {"io_bytes": 112197632, "runtime": 3706}}]}'
    assert _ingest.parse_write_json(text) == {'io_bytes': 112197632, 'runtime_ms': 3706, 'error': 0}
    for bad in ('', 'no json here', '{"jobs": [', '{"jobs": []}', '{"jobs": [{"write": 5}]}'):
        with pytest.raises(_fio.FioParseError):
            _ingest.parse_write_json(bad)


def test_written_bytes_of_this_process_tree():
    assert _ingest.written_bytes(os.getpid()) > 0
    assert _ingest.written_bytes(2 ** 22 + 12345) == 0   # no such process
