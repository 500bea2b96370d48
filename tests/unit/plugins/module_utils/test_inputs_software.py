# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""tapeops_backup.software as the run's input check takes it (_inputs): a known application, unset, or another one.

Another application's name is taken (the verdict judges the host without that application's settings and says
so); a name like a known one (a slip of the hand, another spelling, a product of the same family) is refused,
naming the known one; a value that is no name is refused, saying what to write.
"""

from __future__ import annotations

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils import _inputs, _words
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _verdict


def problems(software):
    return _inputs.host_problems({'ma-01': {'tapeops_backup': {'software': software}}})


def test_the_inputs_know_the_applications_the_verdict_knows():
    # _inputs cannot import the judge (a lower floor); the three lists must stay one
    assert _inputs.SOFTWARE == _verdict.SOFTWARE == _words.KNOWN_SOFTWARE
    assert set(_verdict.SOFTWARE) - {None} <= set(_words.SOFTWARE_NAMES)


@pytest.mark.parametrize('software', [None, 'data_protector', 'bacula', 'bareos', 'netbackup', 'amanda'])
def test_a_known_application_or_none_passes(software):
    assert problems(software) == []


@pytest.mark.parametrize('software', ['veeam', 'commvault', 'tsm', 'Spectrum Protect', 'arcserve', 'NetWorker',
                                      'rubrik', 'cohesity', 'SEP sesam', 'tar+mbuffer'])
def test_another_application_is_taken_as_one_the_collection_does_not_know(software):
    assert problems(software) == []


@pytest.mark.parametrize('software, near', [
    ('bacual', 'bacula'), ('Bacula', 'bacula'), ('NetBackup', 'netbackup'), ('netbackup10', 'netbackup'),
    ('data-protector', 'data_protector'), ('dataprotector', 'data_protector'), ('hp_data_protector', 'data_protector'),
    ('bacula_enterprise', 'bacula'), ('bareos-sd', 'bareos'), ('Amanda', 'amanda'), ('zmanda', 'amanda'),
])
def test_a_name_like_a_known_one_is_refused_naming_it(software, near):
    [problem] = problems(software)
    assert problem.startswith('tapeops_backup.software is "%s": did you mean %s? Write one of data_protector, '
                              'bacula, bareos, netbackup, amanda; another application\'s name is judged as an '
                              'application this collection does not know' % (software, near)), problem
    assert problem.endswith('(host ma-01).')


@pytest.mark.parametrize('software, shown', [
    (3, '3'), (['bacula'], '["bacula"]'), ('', '""'), ('  ', '"  "'), ('veeam\nbackup', '"veeam\\nbackup"'),
    ('<b>x</b>', '"<b>x</b>"'), ('x' * 65, '"%s"' % ('x' * 65)),
])
def test_a_value_that_is_no_name_is_refused(software, shown):
    [problem] = problems(software)
    assert problem == ('tapeops_backup.software is %s: write one of data_protector, bacula, bareos, netbackup, '
                       'amanda, the name of another backup application (letters, digits, spaces, ".", "_", "+", '
                       '"-"), or leave it unset (host ma-01).' % shown)
