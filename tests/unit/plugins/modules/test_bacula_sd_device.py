# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""bacula_sd_device's reading of the storage daemon's rejection, on its recorded words.

The fixture is what Debian 12's bacula-sd 9.6.7-7 printed on stdout (exit code 1) for ``bacula-sd -t -c`` on a
Device whose Maximum Block Size is 99999999999: the error twice, the second time behind a date.
"""

from __future__ import annotations

import os

from ansible_collections.tapeops.qualify.plugins.modules import bacula_sd_device

from module_harness import FIXTURES

REJECTED = os.path.join(FIXTURES, 'bacula_sd', 'bacula-sd_t_rejects-block-size__debian-bacula-sd-9.6.7-7__1.txt')


def test_the_daemons_error_is_quoted_once_without_its_full_stop():
    with open(REJECTED) as handle:
        said = bacula_sd_device._daemon_message(handle.read() + '\n')
    assert said == 'Maximum Block Size configured value 1215752191 is greater than allowed maximum: 20000000'


def test_two_different_errors_are_both_quoted():
    out = 'Config error: Keyword "BogusDirective" not permitted in this resource.\nConfig error: another.\n'
    assert bacula_sd_device._daemon_message(out) == \
        'Keyword "BogusDirective" not permitted in this resource; another'


def test_without_a_config_error_the_first_line_is_quoted():
    assert bacula_sd_device._daemon_message('\n  bacula-sd: cannot open it.\nmore\n') == 'bacula-sd: cannot open it'
    assert bacula_sd_device._daemon_message('') == ''
