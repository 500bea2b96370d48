# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Amanda's tapetype block (_config/_amanda): written in amtapetype's layout, read as amanda.conf reads it.

Pinned against real amtapetype output: the four tapetypes amtapetype wrote for an LTO-6 drive that Amanda 3.5.1
ships as example/quick/tapetypes (tests/unit/fixtures/amanda/, from Debian's amanda-server package).
"""

from __future__ import annotations

import os

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._config import _amanda

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'fixtures', 'amanda')
DEBIAN = os.path.join(FIXTURES, 'tapetypes__amtapetype-LTO6-debian-amanda-server-3.5.1__1.txt')
# the LTO-6 tapetypes amtapetype wrote: name -> (length kbytes, filemark kbytes, speed kps, blocksize kbytes)
AMTAPETYPE_LTO6 = {
    'LTO6-256K': (2459858944, 328, 121468, 256),
    'LTO6': (2459896320, 713, 111864, 512),
    'LTO6-1M': (2459909120, 3206, 123130, 1024),
    'LTO6-4M': (2459922432, 5419, 157012, 4096),
}


def debian_text():
    with open(DEBIAN, encoding='utf-8') as handle:
        return handle.read()


def block_of(text, name):
    """The lines of tapetype ``name`` in ``text``, its define line to its closing brace."""
    lines = text.splitlines()
    first = lines.index('define tapetype %s {' % name)
    return '\n'.join(lines[first:lines.index('}', first) + 1]) + '\n'


def test_the_real_amtapetype_tapetypes_are_read_in_amandas_units():
    parsed = dict((t['name'], t) for t in _amanda.parse(debian_text()))
    for name, (length, filemark, speed, block) in AMTAPETYPE_LTO6.items():
        tapetype = parsed[name]
        assert tapetype['comment'] == 'Created by amtapetype; compression disabled'
        assert tapetype['length'] == {'bytes': length * 1024, 'number': length, 'unit': 'kbytes'}
        assert tapetype['filemark']['bytes'] == filemark * 1024
        assert tapetype['speed'] == {'bytes': speed * 1024, 'number': speed, 'unit': 'kps'}
        assert tapetype['blocksize']['bytes'] == block * 1024
    # the hand-written vtape types in the same file: a length in bytes and in mbytes, "Kbytes" in capitals
    assert parsed['CD650']['length']['bytes'] == 681984000
    assert parsed['DVD47']['length']['bytes'] == 4482 * 1024 * 1024
    assert parsed['CD650']['filemark']['bytes'] == 4 * 1024


@pytest.mark.parametrize('name', sorted(AMTAPETYPE_LTO6))
def test_a_tapetype_is_written_line_for_line_as_amtapetype_writes_it(name):
    length, filemark, speed, block = AMTAPETYPE_LTO6[name]
    written = _amanda.render(name, 'Created by amtapetype; compression disabled', length, filemark, speed,
                             block * 1024)
    assert written == block_of(debian_text(), name)


def test_notes_follow_the_block_as_amtapetype_s_do():
    text = _amanda.render('LTO-6-ma01-nst0', 'x', 2441406250, 1024, 33300, 262144, ['length: one', 'speed:  two\n'])
    assert text.endswith('}\n# length: one\n# speed: two\n')
    [parsed] = _amanda.parse(text)
    assert parsed['notes'] == [] and parsed['blocksize']['bytes'] == 262144


def test_a_block_size_of_no_whole_kbytes_is_said_as_amtapetype_says_it():
    # amtapetype.pl: "# add device-property "BLOCK_SIZE" "$blocksize" to the device" inside the block
    text = _amanda.render('LTO-5-ma01-nst0', 'x', 1464843750, 256, 48828, 65000)
    assert '    # add device-property "BLOCK_SIZE" "65000" to the device\n' in text
    [parsed] = _amanda.parse(text)
    assert 'blocksize' not in parsed and parsed['notes'] == ['add device-property "BLOCK_SIZE" "65000" to the device']
    # Bacula's default, 64512 bytes, is 63 kbytes
    assert '    blocksize 63 kbytes\n' in _amanda.render('t', 'x', 1, 1, None, 64512)


def test_without_speed_or_block_size_their_lines_are_left_out():
    text = _amanda.render('t', 'x', 100, 128)
    assert text == 'define tapetype t {\n    comment "x"\n    length 100 kbytes\n    filemark 128 kbytes\n}\n'


def test_the_comment_is_one_line_amanda_conf_reads():
    text = _amanda.render('t', 'host "a\\b"\nnext', 1, 1)
    assert '    comment "host \'a/b\' next"\n' in text
    assert _amanda.parse(text)[0]['comment'] == "host 'a/b' next"


@pytest.mark.parametrize('name', ['6-LTO', 'LTO 6', 'LTO.6', '', 'lab-ma1"'])
def test_a_name_amanda_conf_would_not_read_is_refused(name):
    with pytest.raises(_amanda.AmandaConfError, match='is not a tapetype name amanda.conf reads: write a letter'):
        _amanda.render(name, 'x', 1, 1)


@pytest.mark.parametrize('text, says', [
    ('define tapetype t {\n    length 5 kbytes\n', 'define tapetype t (line 1) is not closed with "}"'),
    ('define tapetype t {\n    length 5 parsecs\n}\n', "length 5 parsecs: 'parsecs' is not a unit amanda.conf knows"),
    ('define tapetype t {\n    length five\n}\n', 'length five: not a whole number'),
])
def test_a_tapetype_that_is_not_one_is_refused_saying_why(text, says):
    with pytest.raises(_amanda.AmandaConfError) as caught:
        _amanda.parse(text)
    assert str(caught.value) == says
