# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every input of a qualify run checked before any host is measured (issue 28, item 3): _inputs.

Each bad input the issue found accepted is a case here (as the user wrote it: the values of
``-e '{"qualify_profile_overrides": {...}}'`` and of the inventory), asserting that it is refused, that
the message names the variable as written and says what to write instead, and that no Python exception
text reaches it. The good values of the profiles (roles/qualify/vars/main.yml) and of the example
inventory pass.
"""

from __future__ import annotations

import os

import pytest
import yaml

from ansible_collections.tapeops.qualify.plugins.module_utils import _inputs

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))

# words of Python exceptions that must never reach the user
EXCEPTION_WORDS = ('Traceback', 'Error:', 'division by zero', '_PyTime_t', 'invalid literal', 'can\'t interpret',
                   'object has no attribute', 'not supported between')


def _yaml(*path):
    with open(os.path.join(ROOT, *path), encoding='utf-8') as handle:
        return yaml.safe_load(handle)


def clean(message):
    return not any(word in message for word in EXCEPTION_WORDS)


# (overrides, the variable the message names, what it says to write)
BAD_OVERRIDES = [
    ({'source_seconds': 'abc'}, 'qualify_profile_overrides.source_seconds is "abc"', 'whole number of seconds'),
    ({'source_seconds': 0}, 'qualify_profile_overrides.source_seconds is 0', 'from 1 to 3600'),
    ({'source_seconds': 1e12}, 'qualify_profile_overrides.source_seconds is 1000000000000.0', 'from 1 to 3600'),
    ({'source_seconds': -5}, 'qualify_profile_overrides.source_seconds is -5', 'from 1 to 3600'),
    ({'source_seconds': True}, 'qualify_profile_overrides.source_seconds is true', 'whole number'),
    ({'poll_seconds': 0}, 'qualify_profile_overrides.poll_seconds is 0', 'from 1 to 600'),
    ({'step_mb': -1}, 'qualify_profile_overrides.step_mb is -1', 'whole number of MB'),
    ({'step_mb': 'x'}, 'qualify_profile_overrides.step_mb is "x"', 'whole number of MB'),
    ({'step_seconds': 2.5}, 'qualify_profile_overrides.step_seconds is 2.5', 'whole number of seconds'),
    ({'source_secs': 60}, 'qualify_profile_overrides.source_secs is not a profile key',
     'did you mean source_seconds?'),
    ({'pollseconds': 3}, 'qualify_profile_overrides.pollseconds is not a profile key', 'did you mean poll_seconds?'),
    ({'source_max_mb': 0}, 'qualify_profile_overrides.source_max_mb is 0', 'or null for none'),
    ({'block_sizes': ['256K', '262145']}, 'qualify_profile_overrides.block_sizes[1] is "262145"',
     'a multiple of 4 bytes from 4096 (4 KiB) to 16777216 (16 MiB)'),
    ({'block_sizes': ['x']}, 'qualify_profile_overrides.block_sizes[0] is "x"', 'not a block size'),
    ({'block_sizes': ['32M']}, 'qualify_profile_overrides.block_sizes[0] is "32M"', 'to 16777216 (16 MiB)'),
    ({'block_sizes': '256K'}, 'qualify_profile_overrides.block_sizes is "256K"', 'non-empty list'),
    ({'block_sizes': []}, 'qualify_profile_overrides.block_sizes is []', 'non-empty list'),
    ({'patterns': ['2.5']}, 'qualify_profile_overrides.patterns[0] is "2.5"', 'zeros, random or a compression ratio'),
    ({'patterns': ['100:1']}, 'qualify_profile_overrides.patterns[0] is "100:1"', 'from 1:1 to 50:1'),
    ({'filemark_segments_mb': [64, 0]}, 'qualify_profile_overrides.filemark_segments_mb[1] is 0', 'whole number'),
    ({'filemark_payload_mb': 'lots'}, 'qualify_profile_overrides.filemark_payload_mb is "lots"', 'whole number'),
    ({'read_back': 'maybe'}, 'qualify_profile_overrides.read_back is "maybe"', 'write true or false'),
    ({'mechanics_repeats': 0}, 'qualify_profile_overrides.mechanics_repeats is 0', 'from 1 to 100'),
    ({'source_scaling_factor': 100}, 'qualify_profile_overrides.source_scaling_factor is 100', 'from 1 to 8'),
]


@pytest.mark.parametrize('overrides, names, says', BAD_OVERRIDES, ids=[repr(c[0]) for c in BAD_OVERRIDES])
def test_a_bad_override_is_refused_naming_the_variable(overrides, names, says):
    [problem] = _inputs.override_problems(overrides)
    assert problem.startswith(names), problem
    assert says in problem and clean(problem)
    with pytest.raises(_inputs.InputError) as raised:
        _inputs.refuse(_inputs.problems(profile_overrides=overrides))
    assert names in raised.value.msg and raised.value.reason == 'bad_input'


def test_overrides_that_are_not_a_dictionary_are_refused():
    [problem] = _inputs.override_problems('source_seconds=60')
    assert problem == ('qualify_profile_overrides is "source_seconds=60": write a dictionary of profile keys, '
                       'for example {"source_seconds": 60}.')


def test_every_profile_of_the_role_passes_and_the_checks_know_exactly_its_keys():
    profiles = _yaml('roles', 'qualify', 'vars', 'main.yml')['__qualify_profiles']
    keys = set()
    for name, profile in profiles.items():
        assert _inputs.override_problems(profile) == [], name
        keys.update(profile)
    assert keys == set(_inputs.PROFILE_KEYS)


@pytest.mark.parametrize('overrides', [
    # the values the collection's own lab tests and molecule use (tests/integration/test_qualify.py, test_faults.py)
    {'source_seconds': 40, 'step_mb': 32, 'step_seconds': 10, 'block_sizes': ['256K', '1M'],
     'filemark_segments_mb': [16], 'filemark_payload_mb': 32, 'poll_seconds': 3},
    {'source_seconds': 5, 'mechanics': True, 'mechanics_repeats': 1},
    {'source_seconds': '60', 'read_back': 'yes', 'block_sizes': [65536, '1.5M'], 'patterns': ['zeros', '2:1']},
    {'source_max_mb': None, 'filemark_segments_mb': []},
    {}, None,
])
def test_good_overrides_pass(overrides):
    assert _inputs.override_problems(overrides) == []


# (tapeops_backup, what the message starts with, what it says)
BAD_BACKUPS = [
    ({'block_size_bytes': 262145}, 'tapeops_backup.block_size_bytes is 262145',
     'write a multiple of 4 bytes from 4096 (4 KiB) to 16777216 (16 MiB), for example 262144'),
    ({'block_size_bytes': '256K'}, 'tapeops_backup.block_size_bytes is "256K"', 'write the block size in bytes, 262144'),
    ({'block_size_bytes': -65536}, 'tapeops_backup.block_size_bytes is -65536', 'a multiple of 4 bytes from 4096'),
    ({'block_size_bytes': 512}, 'tapeops_backup.block_size_bytes is 512', 'from 4096 (4 KiB)'),
    ({'block_size_bytes': 33554432}, 'tapeops_backup.block_size_bytes is 33554432', 'to 16777216 (16 MiB)'),
    ({'block_size_bytes': '2K'}, 'tapeops_backup.block_size_bytes is "2K"', 'a multiple of 4 bytes from 4096'),
    ({'block_size': 262144}, 'tapeops_backup.block_size is not a setting', 'did you mean block_size_bytes?'),
    ({'software': 'bacual'}, 'tapeops_backup.software is "bacual"', 'did you mean bacula?'),
    ({'segment_size_mb': 0}, 'tapeops_backup.segment_size_mb is 0', 'whole number of MB'),
    ({'concurrency': 'four'}, 'tapeops_backup.concurrency is "four"', 'whole number of streams'),
    ({'immediate_filemarks': 'sometimes'}, 'tapeops_backup.immediate_filemarks is "sometimes"', 'true or false'),
    ({'maximum_file_size': '5 parsecs'}, 'tapeops_backup.maximum_file_size is "5 parsecs"', 'for example 50G'),
    ('bacula', 'tapeops_backup is "bacula"', 'write a dictionary'),
]


@pytest.mark.parametrize('backup, names, says', BAD_BACKUPS, ids=[repr(c[0]) for c in BAD_BACKUPS])
def test_a_bad_backup_setting_is_refused_naming_the_variable_and_the_host(backup, names, says):
    [problem] = _inputs.host_problems({'ma-dp-01': {'tapeops_backup': backup}})
    assert problem.startswith(names), problem
    assert says in problem and problem.endswith('(host ma-dp-01).') and clean(problem)


# (tapeops_drives, what the message starts with, what it says)
BAD_DRIVES = [
    ([{'nst': '/dev/nst0', 'block_size_bytes': 262145}], 'tapeops_drives[0].block_size_bytes is 262145',
     'a multiple of 4 bytes'),
    ([{'nst': '/dev/nst0'}, {'nst': '/dev/nst1', 'block_size_bytes': '1M'}],
     'tapeops_drives[1].block_size_bytes is "1M"', 'write the block size in bytes, 1048576'),
    ([{'nst': '/dev/nst0', 'segment_size': 5000}], 'tapeops_drives[0].segment_size is not a setting',
     'did you mean segment_size_mb?'),
    ([{'generation': 'LTO-9'}], 'tapeops_drives[0].nst is null', 'for example /dev/nst0'),
    ([{'nst': 'nst0'}], 'tapeops_drives[0].nst is "nst0"', 'for example /dev/nst0'),
    (['/dev/nst0'], 'tapeops_drives[0] is "/dev/nst0"', '{nst: /dev/nst0}'),
    ({'nst': '/dev/nst0'}, 'tapeops_drives is {"nst": "/dev/nst0"}', 'write a list of drives'),
    ([{'nst': '/dev/nst0', 'physics': 'none'}], 'tapeops_drives[0].physics is "none"', 'write true or false'),
]


@pytest.mark.parametrize('drives, names, says', BAD_DRIVES, ids=[repr(c[0]) for c in BAD_DRIVES])
def test_a_bad_drive_setting_is_refused_naming_the_variable_and_the_host(drives, names, says):
    [problem] = _inputs.host_problems({'lab-ma1': {'tapeops_drives': drives}})
    assert problem.startswith(names), problem
    assert says in problem and problem.endswith('(host lab-ma1).') and clean(problem)


def test_one_problem_set_in_a_group_is_one_line_naming_its_hosts():
    bad = {'tapeops_backup': {'block_size_bytes': 262145}}
    hosts = dict(('ma%02d' % i, bad) for i in range(12))
    hosts['good'] = {'tapeops_backup': {'block_size_bytes': 262144}}
    [problem] = _inputs.host_problems(hosts)
    assert problem.endswith('(hosts ma00, ma01, ma02, ma03, ma04, ma05, ma06, ma07, ma08, ma09 and 2 more).')


def test_the_example_inventory_passes():
    per_host = {}
    group = _yaml('inventories', 'example', 'group_vars', 'media_agents.yml')
    host_dir = os.path.join(ROOT, 'inventories', 'example', 'host_vars')
    for name in sorted(os.listdir(host_dir)):
        host_vars = dict(group, **_yaml('inventories', 'example', 'host_vars', name))
        per_host[name[:-4]] = {'tapeops_backup': host_vars.get('tapeops_backup'),
                               'tapeops_drives': host_vars.get('tapeops_drives')}
    assert len(per_host) >= 3
    assert _inputs.host_problems(per_host) == []


@pytest.mark.parametrize('value, ok', [
    (262144, True), ('262144', True), (4096, True), (16777216, True), (64512, True),   # Bacula's default
    (4095, False), (4098, False), (16777220, False), (0, False), (None, False), (True, False), (262144.5, False),
])
def test_the_block_size_rule(value, ok):
    assert (_inputs.block_size_problem(value, 'b') is None) is ok


def test_the_sweeps_block_sizes_read_suffixes_as_tape_write_benchmark_does():
    assert _inputs.block_size_problem('256K', 'b', suffixes=True) is None
    assert _inputs.block_size_problem('16M', 'b', suffixes=True) is None
    assert 'to 16777216' in _inputs.block_size_problem('17M', 'b', suffixes=True)


@pytest.mark.parametrize('settings, problem', [
    ({'qualify_tool_timeout': 0}, 'qualify_tool_timeout is 0: write a whole number of seconds from 1 to 3600, '
                                  'for example qualify_tool_timeout: 60.'),
    ({'qualify_write_timeout': 'abc'}, 'qualify_write_timeout is "abc": write a whole number of seconds from 1 to '
                                       '172800, or null for none, for example qualify_write_timeout: 3600.'),
    ({'qualify_mechanics_timeout': -1}, 'qualify_mechanics_timeout is -1: write a whole number of seconds from 1 '
                                        'to 172800, for example qualify_mechanics_timeout: 3600.'),
    ({'qualify_target_drives': 0}, 'qualify_target_drives is 0: write a whole number of drives from 1 to 64, for '
                                   'example qualify_target_drives: 2.'),
    ({'qualify_media_fill_fraction': 1.5}, 'qualify_media_fill_fraction is 1.5: write a fraction above 0 and at '
                                           'most 1, for example 0.8 (1.0, the default, is an upper bound).'),
])
def test_the_roles_numbers_are_range_checked(settings, problem):
    assert _inputs.role_problems(settings) == [problem]


def test_the_bounds_the_lab_tests_use_pass():
    # tests/integration/test_faults.py HANG_BOUNDS: a hang found within seconds, not an hour
    assert _inputs.role_problems({'qualify_tool_timeout': 8, 'qualify_write_timeout': 40}) == []


def test_the_roles_defaults_pass():
    defaults = _yaml('roles', 'qualify', 'defaults', 'main.yml')
    settings = dict((k, defaults[k]) for k in list(_inputs.ROLE_NUMBERS) + ['qualify_media_fill_fraction']
                    if not str(defaults[k]).startswith('{{'))
    # as run.yml's templates hand them over before ansible-core 2.19: text
    settings.update(qualify_target_drives='1', qualify_write_timeout='None')
    assert _inputs.role_problems(settings) == []


# --------------------------------------------------------------- earlier names


def test_an_earlier_name_is_refused_naming_the_variable_to_write():
    assert _inputs.renamed_problems(['target_generation', 'qualify_profile', 'qualify_fail_on_shoe_shining',
                                     'target_generation']) == [
        'qualify_fail_on_shoe_shining is set, but the qualify role does not read it: write '
        'qualify_fail_on_failing_drives instead.',
        'target_generation is set, but the qualify role does not read it: write qualify_target_generation instead.']
    assert _inputs.renamed_problems(['upgrade_mechanics']) == [
        'upgrade_mechanics is set, but the qualify role does not read it: write qualify_profile_overrides: '
        '{mechanics: true} instead.']
    assert _inputs.renamed_problems([]) == _inputs.renamed_problems(None) == []


def test_every_earlier_name_points_at_a_variable_of_the_role_and_is_none_itself():
    options = _yaml('roles', 'qualify', 'meta', 'argument_specs.yml')['argument_specs']['main']['options']
    defaults = _yaml('roles', 'qualify', 'defaults', 'main.yml')
    for old, new in _inputs.RENAMED.items():
        assert new.split(':', maxsplit=1)[0] in options, (old, new)
        assert old not in options and old not in defaults, old
    # the profile keys the old what-if switches became
    assert {'mechanics', 'mechanics_repeats'} <= set(_inputs.PROFILE_KEYS)


# --------------------------------------------------------------- directories


def test_a_run_directory_that_is_a_file_is_refused(tmp_path):
    blocker = tmp_path / 'run'
    blocker.write_text('')
    assert _inputs.directory_problem(str(blocker), 'qualify_run_dir') == (
        'qualify_run_dir=%s is a file, not a directory: name a directory (a missing one is created).' % blocker)


def test_a_report_base_under_a_file_is_refused(tmp_path):
    blocker = tmp_path / 'reports'
    blocker.write_text('')
    assert _inputs.directory_problem(str(blocker / 'a' / 'b'), 'qualify_report_base') == (
        'qualify_report_base=%s/a/b cannot be created: %s is a file, not a directory. Name a directory under a '
        'directory.' % (blocker, blocker))


def test_a_missing_directory_under_a_writable_one_and_an_existing_one_pass(tmp_path):
    assert _inputs.directory_problem(str(tmp_path / 'new' / 'deeper'), 'qualify_run_dir') is None
    assert _inputs.directory_problem(str(tmp_path), 'qualify_run_dir') is None
    assert not (tmp_path / 'new').exists()    # nothing is created


@pytest.mark.skipif(os.geteuid() == 0, reason='root writes to any directory')
def test_a_directory_this_user_cannot_write_is_refused(tmp_path):
    locked = tmp_path / 'locked'
    locked.mkdir(mode=0o555)
    try:
        assert 'this user cannot write to' in _inputs.directory_problem(str(locked / 'run'), 'qualify_run_dir')
        assert 'cannot write to' in _inputs.directory_problem(str(locked), 'qualify_run_dir')
    finally:
        locked.chmod(0o755)
