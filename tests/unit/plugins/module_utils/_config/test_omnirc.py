# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

import os

import pytest
import yaml

from ansible_collections.tapeops.qualify.plugins.module_utils._config._omnirc import (
    IMMEDIATE_FILEMARK_KEYS,
    OmnircError,
    parse_omnirc,
    recommend_device,
    update_omnirc,
    validate_keys,
)

FIX = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'fixtures', 'omnirc')
ROOT = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', '..')


def _read(name):
    with open(os.path.join(FIX, name)) as handle:
        return handle.read()


TMPL = 'omnirc_TMPL__tapeops-test-standin__1.txt'
HAND = 'omnirc__hand-edited-with-unknown-keys__1.txt'
# the .omnirc the role wrote before issue 23 item 1: OB2FORCESCSI=1 (and OB2IMMEDFM=1, OB2DEVSLEEP=2000)
FORCESCSI_1 = 'omnirc__dp_omnirc-before-issue23-forcescsi-1__1.txt'

# Seed 001 (HP LTO-4 FH SAS, Data Protector A.09.07, CentOS 6.8) enables MTWEOFI on a Linux Media Agent with
# exactly these two omnirc lines; 188.24 MB/s with them against 108.84 MB/s with the default omnirc.
SEED_001_LINES = ['OB2FORCESCSI=WFM', 'OB2IMMEDFM=1']


def test_the_immediate_file_mark_keys_are_seed_001s_two_lines():
    assert ['%s=%s' % item for item in IMMEDIATE_FILEMARK_KEYS.items()] == SEED_001_LINES
    # the role sets the same pair (its YAML values become these strings in validate_keys)
    with open(os.path.join(ROOT, 'roles', 'dp_omnirc', 'vars', 'main.yml')) as handle:
        role_keys = yaml.safe_load(handle)['__dp_omnirc_immediate_keys']
    assert validate_keys(role_keys) == IMMEDIATE_FILEMARK_KEYS


def test_template_activates_commented_examples_in_place():
    text = _read(TMPL)
    new, changes = update_omnirc(text, IMMEDIATE_FILEMARK_KEYS)
    lines = new.splitlines()
    # The active line comes right after the commented example, which stays.
    assert lines[lines.index('#OB2IMMEDFM=0') + 1] == 'OB2IMMEDFM=1'
    assert lines[lines.index('#OB2FORCESCSI=WFM') + 1] == 'OB2FORCESCSI=WFM'
    assert [(c['key'], c['before'], c['after']) for c in changes] == [
        ('OB2FORCESCSI', None, 'WFM'), ('OB2IMMEDFM', None, '1')]
    # Every original line is still there, in order; the only active lines are the seed's two.
    assert [line for line in lines if line not in SEED_001_LINES] == text.splitlines()
    assert [line for line in lines if line and not line.startswith('#')] == SEED_001_LINES
    assert parse_omnirc(new) == {'OB2FORCESCSI': 'WFM', 'OB2IMMEDFM': '1'}


def test_an_omnirc_with_forcescsi_1_is_corrected_to_wfm_in_place():
    text = _read(FORCESCSI_1)
    assert parse_omnirc(text) == {'OB2FORCESCSI': '1', 'OB2IMMEDFM': '1', 'OB2DEVSLEEP': '2000'}
    new, changes = update_omnirc(text, IMMEDIATE_FILEMARK_KEYS)
    # one change: OB2FORCESCSI 1 -> WFM; OB2IMMEDFM=1 is already right
    assert changes == [{'key': 'OB2FORCESCSI', 'before': '1', 'after': 'WFM'}]
    old_lines, new_lines = text.splitlines(), new.splitlines()
    # the same line, corrected where it stood; every other line (comments, OB2DEVSLEEP) as it was
    assert len(new_lines) == len(old_lines)
    assert [(o, n) for o, n in zip(old_lines, new_lines) if o != n] == [('OB2FORCESCSI=1', 'OB2FORCESCSI=WFM')]
    assert new_lines[new_lines.index('#OB2FORCESCSI=0') + 1] == 'OB2FORCESCSI=WFM'
    assert parse_omnirc(new) == {'OB2FORCESCSI': 'WFM', 'OB2IMMEDFM': '1', 'OB2DEVSLEEP': '2000'}
    # applied again: nothing to change
    assert update_omnirc(new, IMMEDIATE_FILEMARK_KEYS) == (new, [])


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
