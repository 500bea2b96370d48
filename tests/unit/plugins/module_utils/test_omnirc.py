# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

import os

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._config._omnirc import (
    OmnircError,
    parse_omnirc,
    recommend_device,
    update_omnirc,
    validate_keys,
)

FIX = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures', 'omnirc')


def _read(name):
    with open(os.path.join(FIX, name)) as handle:
        return handle.read()


TMPL = 'omnirc_TMPL__tapeops-test-standin__1.txt'
HAND = 'omnirc__hand-edited-with-unknown-keys__1.txt'


def test_template_activates_commented_examples_in_place():
    text = _read(TMPL)
    new, changes = update_omnirc(text, {'OB2FORCESCSI': 1, 'OB2IMMEDFM': 1})
    lines = new.splitlines()
    # The active line comes right after the commented example, which stays.
    assert lines[lines.index('#OB2IMMEDFM=0') + 1] == 'OB2IMMEDFM=1'
    assert lines[lines.index('#OB2FORCESCSI=0') + 1] == 'OB2FORCESCSI=1'
    assert [c['key'] for c in changes] == ['OB2FORCESCSI', 'OB2IMMEDFM']
    assert all(c['before'] is None and c['after'] == '1' for c in changes)
    # Every original line is still there, in order.
    assert [line for line in lines if line not in ('OB2IMMEDFM=1', 'OB2FORCESCSI=1')] == text.splitlines()
    assert parse_omnirc(new) == {'OB2FORCESCSI': '1', 'OB2IMMEDFM': '1'}


def test_second_application_changes_nothing():
    once, dummy = update_omnirc(_read(TMPL), {'OB2IMMEDFM': True})
    twice, changes = update_omnirc(once, {'OB2IMMEDFM': True})
    assert changes == []
    assert twice == once


def test_hand_edited_file_keeps_unknown_keys_and_dedups_managed_key():
    text = _read(HAND)
    new, changes = update_omnirc(text, {'OB2DEVSLEEP': 500, 'OB2IMMEDFM': 1})
    assert 'SOME_VENDOR_KEY=keep me' in new.splitlines()
    assert '# local settings, edited by hand' in new.splitlines()
    # The duplicate OB2DEVSLEEP (3000 shadowed 2000) collapses into one line.
    assert [line for line in new.splitlines() if line.startswith('OB2DEVSLEEP')] == ['OB2DEVSLEEP=500']
    assert '  OB2IMMEDFM=1' in new.splitlines()
    assert {c['key']: (c['before'], c['after']) for c in changes} == {
        'OB2DEVSLEEP': ('3000', '500'), 'OB2IMMEDFM': ('0', '1')}


def test_absent_key_is_appended_and_null_removes():
    new, changes = update_omnirc('A_KEY=1\n', {'OB2NEW': 'x y', 'A_KEY': None})
    assert new == 'OB2NEW=x y\n'
    assert {c['key']: c['after'] for c in changes} == {'OB2NEW': 'x y', 'A_KEY': None}


@pytest.mark.parametrize('keys, words', [
    ({'ob2immedfm': 1}, 'not in Data Protector format'),
    ({'OB2 IMMEDFM': 1}, 'not in Data Protector format'),
    ({'1OB2': 1}, 'not in Data Protector format'),
    ({'OB2X': 'a\nB=2'}, 'single line'),
    ({'OB2X': 'a # b'}, 'single line'),
    ({'OB2X': ' 1'}, 'leading or trailing blanks'),
])
def test_bad_keys_rejected_with_what_to_do(keys, words):
    with pytest.raises(OmnircError, match=words):
        validate_keys(keys)


@pytest.mark.parametrize('capacity_gb, hba, block_kb, segment_mb, limited_by', [
    # LTO-6 2500 GB native -> 50000 MB segments; DP max 1024 KB blocks.
    (2500, None, 1024, 50000, 'dp'),
    # LTO-9 18000 GB -> 360000 MB; a 512 KiB HBA path limits the block.
    (18000, 524288, 512, 360000, 'hba'),
    # 768 KiB limit -> largest power of two below: 512 KB.
    (1500, 786432, 512, 30000, 'hba'),
])
def test_recommend_device(capacity_gb, hba, block_kb, segment_mb, limited_by):
    rec = recommend_device(capacity_gb, hba)
    assert rec['block_size_kb'] == block_kb
    assert rec['segment_size_mb'] == segment_mb
    assert rec['catalog_segment_limit_mb'] == 12
    assert rec['block_size_limited_by'] == limited_by


def test_recommend_device_rejects_tiny_hba_path():
    with pytest.raises(OmnircError, match='max_sg_segs'):
        recommend_device(2500, 32768)
