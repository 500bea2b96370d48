# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Each backup application's fixes in its own words (_words.setting, the segment fix's title): the setting's name
as the application's documentation spells it (docs/data-protector.md, docs/bacula-bareos.md, docs/netbackup.md,
docs/amanda.md)."""

from __future__ import annotations

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils import _words

SEGMENT_DATA = {'segment_mb': 64.0, 'recommended_mb': 17000.0, 'loss_target': 0.01, 'segment_basis': 'inventory'}
NOW = {'class': 'SHOE-SHINING', 'effective_mb_s': 11.2, 'backhitches_per_hour': 630.0,
       'time_share': {'repositioning': 0.42}}
AFTER = {'class': 'SPEED-MATCHED', 'effective_mb_s': 19.8}


@pytest.mark.parametrize('software, block, segment, title', [
    ('data_protector', 'Data Protector device > Properties > Settings > Advanced > Sizes: Block size (kB) = 256',
     'Data Protector device > Advanced > Sizes: Segment size (MB) = 17000', 'Write larger segments'),
    ('bacula', 'Bacula storage daemon Device resource: Maximum Block Size = 262144',
     'Bacula Device resource: Maximum File Size = 17000M', 'Set a larger Maximum File Size'),
    ('bareos', 'Bareos storage daemon Device resource: Maximum Block Size = 262144',
     'Bareos Device resource: Maximum File Size = 17000M', 'Set a larger Maximum File Size'),
    ('netbackup', 'NetBackup media server: SIZE_DATA_BUFFERS = 262144 (/usr/openv/netbackup/db/config/'
     'SIZE_DATA_BUFFERS, tapeops.qualify.netbackup_buffers)',
     'NetBackup tape storage unit (on the primary server): Maximum Fragment Size = 17000 MB or more',
     'Set a larger Maximum Fragment Size'),
    # Amanda's mbytes are 2^20 bytes: 17000 decimal MB is 16212.5 of them, so 16213 or more
    ('amanda', 'Amanda tapetype (amanda.conf on the Amanda server): blocksize 256 kbytes '
     '(tapeops.qualify.qualify_amanda_tapetype writes the whole tapetype)',
     'Amanda tapetype: part-size 16213 mbytes or more, or 0 (no splitting, its default): a file mark ends every '
     'dump or part, so a dump smaller than 17000 MB costs a mark of its own', 'Set a larger part-size'),
])
def test_each_application_s_own_setting_is_named(software, block, segment, title):
    assert _words.setting(software, 'block_size', 262144) == block
    assert _words.setting(software, 'segment_size', 17000) == segment
    fix = {'id': 'segment_size', 'value': 17000, 'forecast': AFTER}
    worded_title, where, dummy = _words.FIXES['segment_size'](fix, dict(SEGMENT_DATA, software=software), NOW)
    assert worded_title == '%s (17000 MB or more between file marks)' % title
    assert where == segment


def test_amandas_block_size_of_no_whole_kbytes_is_a_device_property():
    assert _words.setting('amanda', 'block_size', 65000) == (
        'Amanda device (amanda.conf on the Amanda server): device-property "BLOCK_SIZE" "65000" (not a whole number '
        'of kbytes, which the tapetype\'s blocksize takes)')


def test_amandas_stage_is_its_holding_disk():
    assert _words.setting('amanda', 'staging', None).startswith('Amanda: a holding disk (a holdingdisk section')


@pytest.mark.parametrize('mb, mbytes', [(1, 1), (1048576 / 1e6, 1), (17000, 16213), (354900, 338460)])
def test_decimal_mb_become_amandas_mbytes_rounded_up(mb, mbytes):
    assert _words.amanda_mbytes(mb) == mbytes
