# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Stream counts, the split of sources among streams, passes, samples, per-drive share, file sizes."""

from __future__ import annotations

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _source_scaling as sc


def source(path, sizes, sub=None):
    files = [('%s/%s/f%03d' % (path, sub(i) if sub else 'd', i), size) for i, size in enumerate(sizes)]
    return {'path': path, 'files_sizes': files, 'filesystem': None, 'empty_files': 0, 'scan_s': 0.1}


@pytest.mark.parametrize('streams, kwargs, expected', [
    (1, {}, [1]),
    (2, {}, [1, 2]),
    (6, {}, [1, 2, 4, 6]),
    (8, {}, [1, 2, 4, 8]),
    (3, {'enabled': False}, [3]),
    (3, {'max_streams': 8}, [1, 2, 3, 4, 8]),
    (4, {'explicit': [1, 6]}, [1, 4, 6]),
    (2, {'explicit': [2]}, [2]),
])
def test_scaling_steps(streams, kwargs, expected):
    assert sc.scaling_steps(streams, **kwargs) == expected


def test_scaling_steps_refuse_nonsense():
    with pytest.raises(ValueError):
        sc.scaling_steps(0)
    with pytest.raises(ValueError):
        sc.scaling_steps(2, explicit=[0, 1])


def test_one_stream_per_source_when_counts_match():
    sources = [source('/a', [10, 20]), source('/b', [5]), source('/c', [7, 7, 7])]
    streams, split = sc.assign_streams(sources, 3)
    assert split is False
    assert [s['paths'] for s in streams] == [['/a'], ['/b'], ['/c']]
    assert [s['name'] for s in streams] == ['stream0', 'stream1', 'stream2']


def test_fewer_streams_than_sources_read_whole_sources_one_after_another():
    sources = [source('/a', [100]), source('/b', [60]), source('/c', [50]), source('/d', [10])]
    streams, split = sc.assign_streams(sources, 2)
    assert split is False
    # Largest first onto the least loaded stream: a (100) | b (60), c (50) -> a+d (110) | b+c (110).
    assert sorted(s['paths'] for s in streams) == [['/a', '/d'], ['/b', '/c']]
    for stream in streams:
        # Each stream reads its sources in the order given, file after file.
        assert [p for p, _s in stream['files_sizes']] == [p for u in stream['units'] for p, _s in u['files_sizes']]
    one, _split = sc.assign_streams(sources, 1)
    assert one[0]['paths'] == ['/a', '/b', '/c', '/d'] and len(one[0]['files_sizes']) == 4


def test_more_streams_than_sources_cut_the_largest_at_a_directory():
    # /big: two directories of 4 files each; /small: one file.
    big = source('/big', [10] * 8, sub=lambda i: 'd%d' % (i // 4))
    streams, split = sc.assign_streams([big, source('/small', [30])], 3)
    assert split is True and len(streams) == 3
    parts = [u for s in streams for u in s['units'] if u['path'] == '/big']
    assert [u['part'] for u in parts] == [[1, 2], [2, 2]]
    # The cut is between the directories, not in the middle of one.
    assert [len(u['files_sizes']) for u in parts] == [4, 4]
    assert set(p.split('/')[2] for p, _s in parts[0]['files_sizes']) == {'d0'}
    # Every file read once, by exactly one stream.
    every = [p for s in streams for p, _s in s['files_sizes']]
    assert sorted(every) == sorted([p for p, _s in big['files_sizes']] + ['/small/d/f000'])


def test_streams_capped_at_the_number_of_files():
    streams, split = sc.assign_streams([source('/a', [1, 2])], 5)
    assert len(streams) == 2 and split is True
    with pytest.raises(ValueError):
        sc.assign_streams([source('/a', [])], 1)


def test_cut_without_directories_is_at_half_the_bytes():
    unit = source('/a', [10, 10, 10, 70])
    streams, _split = sc.assign_streams([unit], 2)
    assert [len(s['files_sizes']) for s in streams] == [3, 1]


@pytest.mark.parametrize('io_bytes, expected', [
    (0, (0.0, 0, False)),
    (150, (0.5, 2, False)),            # files of 100, 50, 150: the first two in full
    (300, (1.0, 3, True)),
    (750, (2.5, 8, True)),             # two passes (6 files) and 100+50 of the third
    (301, (1.003, 3, True)),
])
def test_passes_read(io_bytes, expected):
    assert sc.passes_read([100, 50, 150], io_bytes) == expected


def test_sample_count_leaves_the_last_partial_second_out():
    assert sc.sample_count([]) == 0
    assert sc.sample_count([1.0, 2.0]) == 2
    assert sc.sample_count([1.0, 2.0, 3.0]) == 2


def test_inconclusive_reason_names_the_budget_to_raise():
    assert sc.inconclusive_reason(10, 10, 11.0, 3.0, 12, None, False) is None
    reason = sc.inconclusive_reason(3, 10, 4.0, 5.0, 4, None, False)
    assert 'Only 3 one-second samples' in reason and 'time budget of 4 s is too short' in reason
    assert 'set time_budget' in sc.inconclusive_reason(0, 10, 0.4, 1.0, 0, None, False)
    assert 'raise byte_budget' in sc.inconclusive_reason(2, 10, 2.5, 4.0, 60, 10000, True)
    assert 'Only 1 one-second sample (' in sc.inconclusive_reason(1, 10, 1.0, 1.0, 2, None, False)


def test_per_drive_share_and_measured_groups():
    streams = [
        {'path': '/a', 'paths': ['/a'], 'bytes': 100000000, 'files': 10, 'duration_s': 10.0,
         'series_mb_s': [10.0] * 10},
        {'path': '/b', 'paths': ['/b'], 'bytes': 200000000, 'files': 20, 'duration_s': 10.0,
         'series_mb_s': [20.0] * 10},
        {'path': '/c', 'paths': ['/c'], 'bytes': 300000000, 'files': 30, 'duration_s': 10.0,
         'series_mb_s': [30.0] * 10},
        {'path': '/d', 'paths': ['/d'], 'bytes': 400000000, 'files': 40, 'duration_s': 10.0,
         'series_mb_s': [40.0] * 10},
    ]
    aggregate = {'mean_mb_s': 100.0, 'p5_mb_s': 100.0, 'min_mb_s': 100.0, 'files_per_s': 10.0,
                 'bytes': 1000000000, 'duration_s': 10.0, 'series_mb_s': [100.0] * 10}
    split = sc.per_drive(aggregate, streams, 2, 2)
    assert split['drives'] == 2 and split['streams_per_drive'] == 2
    assert split['aggregate']['mean_mb_s'] == 50.0 and split['aggregate']['p5_mb_s'] == 50.0
    assert split['series_mb_s'] == [50.0] * 10
    assert [g['paths'] for g in split['groups']] == [['/a', '/b'], ['/c', '/d']]
    assert [g['mean_mb_s'] for g in split['groups']] == [30.0, 70.0]
    # Fewer streams than drives x streams per drive (too few files): the missing drive's group is empty.
    split = sc.per_drive(aggregate, streams[:1], 2, 1)
    assert split['groups'][1]['streams'] == 0 and split['groups'][1]['mean_mb_s'] == 0.0


def test_file_size_profile():
    sizes = [1000] * 62 + [2000000] * 38
    profile = sc.file_size_profile(sizes, 830.0)
    assert profile['files'] == 100 and profile['bytes'] == 62000 + 76000000
    first = profile['histogram'][0]
    assert first == {'below_bytes': 65536, 'files_share': 0.62, 'bytes_share': round(62000 / 76062000.0, 4)}
    assert [h['below_bytes'] for h in profile['histogram']] == [65536, 1048576, 16777216, 268435456, 4294967296]
    assert profile['histogram'][2]['files_share'] == 1.0
    assert profile['small_file_bound'] is True
    assert profile['text'].startswith('62 % of the files are under 64 KiB')
    assert 'At most 830 files/s' in profile['text'] and 'file-count bound' in profile['text']
    assert sc.file_size_profile([5000000] * 3, None)['small_file_bound'] is False
    empty = sc.file_size_profile([], None)
    assert empty['files'] == 0 and empty['histogram'][0]['files_share'] == 0.0


def test_parse_log_lenient_keeps_good_lines():
    entries, bad = sc.parse_log_lenient('1000, 19417, 0, 0, 0\n2000, 19570, 0, 0, 0\n3000, 19')
    assert entries == [(1000, 19417, 0, 0), (2000, 19570, 0, 0)] and bad == 1
    entries, bad = sc.parse_log_lenient('1000, 19417, 0, 0, 0\ngarbage\n2000, 19570, 0, 0, 0\n')
    assert entries == [(1000, 19417, 0, 0), (2000, 19570, 0, 0)] and bad == 1
    assert sc.parse_log_lenient('') == ([], 0)
