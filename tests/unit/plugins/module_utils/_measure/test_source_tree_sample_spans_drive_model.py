# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The compressibility sample (_source_tree.sample_files, then _drive_model.estimate_compressibility) on the lab's
source tree (lab/tapelab.py source_tree_plan: 1,200 small files a third of them text, 24 random 1-4 MiB files, a
32 MiB SQL dump, 112 MiB of random video and archive), spans the measure and judge floors.

What it must match: real Bacula 9.6.7 jobs of this tree in the lab. On the tree's first version (its text one SQL
line repeated, 120:1) the drive measured 1.205-1.215 over the whole stream (../shared/lab/BACULA.md, "First
results"), where the sample that took the first bytes of every n-th file said 1.015 (1 MB from 8 files). On its
version 2 (the text rows of keys and hashes, about 2:1: tapelab.source_text) the drive of each of the three guests
measured 1.094 over the whole job (tests/integration/test_qualify.py, 2026-11-28; docs/tape-side.md, "Observed
jobs"). The tree is written here at a quarter of its sizes, the same mix.
"""

from __future__ import annotations

import importlib.util
import os
import zlib

from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _drive_model
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _source_tree

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', '..'))
DRIVE_MEASURED = (1.094, 1.094)   # the lab drives over Bacula's whole stream, tree version 2


def write_tree(directory, scale=4):
    """The lab's tree as tapelab.source_template writes it (tapelab.write_source_tree), sizes divided by ``scale``."""
    spec = importlib.util.spec_from_file_location('tapelab', os.path.join(ROOT, 'lab', 'tapelab.py'))
    tapelab = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tapelab)
    tapelab.write_source_tree(directory, scale)


def whole_stream_ratio(files):
    """zlib level 1 over every byte, file after file: what the estimate stands for."""
    compressor = zlib.compressobj(1)
    raw = packed = 0
    for path, _size in files:
        with open(path, 'rb') as handle:
            data = handle.read()
        raw += len(data)
        packed += len(compressor.compress(data))
    packed += len(compressor.flush())
    return raw / float(packed)


def test_the_sample_weighs_the_tree_by_its_bytes(tmp_path):
    write_tree(str(tmp_path))
    walked = _source_tree.walk_tree(str(tmp_path))
    truth = whole_stream_ratio(walked['files'])
    # the scaled tree is the lab's mix: its whole stream compresses as the lab drive measured the real one
    assert DRIVE_MEASURED[0] * 0.95 < truth < DRIVE_MEASURED[1] * 1.05, truth
    # the module's default sample, 8 MiB
    data, sampled = _source_tree.sample_files(walked['files'], 8 * 1024 * 1024)
    estimate = _drive_model.estimate_compressibility(data)['ratio']
    assert abs(estimate - truth) / truth < 0.05, (estimate, truth)
    assert len(data) == 8 * 1024 * 1024 and sampled >= 60
    # a 1 MiB sample still lands in the dump: it is 14 % of the bytes
    small, _files = _source_tree.sample_files(walked['files'], 1024 * 1024)
    assert _drive_model.estimate_compressibility(small)['ratio'] > 1.03


def test_a_window_runs_on_through_small_files_in_the_walk_order(tmp_path):
    paths = []
    for number, fill in enumerate((b'a', b'b', b'c')):
        path = tmp_path / ('f%d' % number)
        path.write_bytes(fill * 1000)
        paths.append((str(path), 1000))
    # one window of 2500 bytes from the start: all of f0 and f1, half of f2, as the stream has them
    data, sampled = _source_tree.sample_files(paths, 2500, chunk=2500)
    assert data == b'a' * 1000 + b'b' * 1000 + b'c' * 500 and sampled == 3
    # three windows of 100 bytes at 0, 1000 and 2000: one in each file
    data, sampled = _source_tree.sample_files(paths, 300, chunk=100)
    assert data == b'a' * 100 + b'b' * 100 + b'c' * 100 and sampled == 3


def test_files_that_went_away_or_are_empty_are_passed_over(tmp_path):
    kept = tmp_path / 'kept'
    kept.write_bytes(b'x' * 4096)
    files = [(str(tmp_path / 'gone'), 4096), (str(tmp_path / 'empty'), 0), (str(kept), 4096)]
    data, sampled = _source_tree.sample_files(files, 8192, chunk=4096)
    # the window that starts in the file that went away runs on into the next one, as the stream would
    assert data == b'x' * 8192 and sampled == 1
    assert _source_tree.sample_files([], 8192) == (b'', 0)


def test_the_windows_tell_the_ratio_along_the_stream(tmp_path):
    # the lab's tree (a quarter of its sizes): the SQL dump's windows compress about 2:1, the random files' not
    write_tree(str(tmp_path))
    walked = _source_tree.walk_tree(str(tmp_path))
    windows, sampled, total = _source_tree.sample_windows(walked['files'], 8 * 1024 * 1024)
    assert total == sum(size for _path, size in walked['files']) and len(windows) == 64 and sampled >= 60
    assert b''.join(windows) == _source_tree.sample_files(walked['files'], 8 * 1024 * 1024)[0]
    start = 0
    for path, size in walked['files']:
        if path.endswith('db-dump.sql'):
            dump = (start, start + size)
        start += size
    step = total / 64.0
    inside = [n for n in range(64) if dump[0] <= int(n * step) and int(n * step) + len(windows[n]) <= dump[1]]
    ratios = [_drive_model.estimate_compressibility(w)['ratio'] for w in windows]
    assert len(inside) >= 8                                   # 8 MiB of a 57.5 MiB stream: about 9 windows
    assert all(1.8 < ratios[n] < 2.2 for n in inside), ratios  # rows of keys and hashes (tapelab.source_text)
    # the random files' windows do not compress; the small files' mix (a third text) a little
    assert sorted(ratios[n] for n in range(64) if n not in inside)[len(ratios) // 2] < 1.05
    assert _source_tree.sample_windows([], 8192) == ([], 0, 0)
