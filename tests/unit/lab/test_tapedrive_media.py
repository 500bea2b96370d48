# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cartridge files of the lab's emulated drive (lab/tapedrive/media.py) and the library layout."""

from __future__ import annotations

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, 'lab'))

from tapedrive import physics  # noqa: E402  pylint: disable=wrong-import-position
from tapedrive.library import Library  # noqa: E402  pylint: disable=wrong-import-position
from tapedrive.media import Cartridge, MediaError  # noqa: E402  pylint: disable=wrong-import-position


def new(tmp_path, barcode='MA1001L5', **kw):
    return Cartridge.create(str(tmp_path / (barcode + '.cart')), barcode, **kw)


def test_blocks_and_filemarks_survive_reopening(tmp_path):
    cart = new(tmp_path, generation=6, density_code=0x5A, capacity_bytes=10 ** 8)
    text = b'abc' * 30000
    tape_bytes, packed = physics.compress_block(text)
    pos = cart.write_block(0, text, packed)
    pos = cart.write_filemarks(pos, 2)
    pos = cart.write_block(pos, b'raw')
    assert pos == 4 and cart.eod == 4 and cart.holds_data
    assert cart.tape_bytes == tape_bytes + 3 < len(text)
    cart.close()
    again = Cartridge.open(str(tmp_path / 'MA1001L5.cart'))
    assert (again.barcode, again.generation, again.density_code) == ('MA1001L5', 6, 0x5A)
    assert [again.kind(i) for i in range(5)] == ['block', 'filemark', 'filemark', 'block', 'eod']
    assert again.read_block(0) == text and again.read_block(3) == b'raw'
    assert again.block_length(0) == len(text) and again.stored_length(0) == tape_bytes
    assert (again.file_number(3), again.block_in_file(3)) == (2, 0)
    assert again.next_filemark(0) == 1 and again.prev_filemark(3) == 2 and again.next_filemark(3) is None
    again.close()


def test_writing_before_eod_truncates_as_a_tape_does(tmp_path):
    cart = new(tmp_path)
    for i in range(5):
        cart.write_block(i, b'%d' % i * 100)
    cart.write_filemarks(5, 1)
    assert cart.write_block(2, b'new') == 3
    assert cart.eod == 3 and cart.filemark_positions() == []
    assert cart.read_block(2) == b'new'
    cart.erase_from(1)
    assert cart.eod == 1 and cart.tape_bytes == 100
    size = os.path.getsize(cart.path)
    cart.close()
    assert Cartridge.open(str(tmp_path / 'MA1001L5.cart')).eod == 1
    assert os.path.getsize(str(tmp_path / 'MA1001L5.cart')) == size


def test_a_record_cut_short_is_dropped_at_open(tmp_path):
    cart = new(tmp_path)
    cart.write_block(0, b'x' * 1000)
    cart.write_block(1, b'y' * 1000)
    cart.close()
    path = str(tmp_path / 'MA1001L5.cart')
    with open(path, 'r+b') as f:
        f.truncate(os.path.getsize(path) - 10)      # a crash while writing the last block
    again = Cartridge.open(path)
    assert again.eod == 1 and again.read_block(0) == b'x' * 1000


def test_header_flags_and_errors(tmp_path):
    cart = new(tmp_path, worm=True)
    assert cart.worm and not cart.write_protected and not cart.holds_data
    cart.write_protected = True
    cart.count_load()
    cart.close()
    again = Cartridge.open(str(tmp_path / 'MA1001L5.cart'))
    assert again.write_protected and again.loads == 1
    with pytest.raises(MediaError, match='exists'):
        new(tmp_path)
    other = tmp_path / 'not.cart'
    other.write_bytes(b'hello')
    with pytest.raises(MediaError, match='not a lab cartridge'):
        Cartridge.open(str(other))
    with pytest.raises(MediaError, match='cannot open'):
        Cartridge.open(str(tmp_path / 'missing.cart'))
    with pytest.raises(MediaError, match='no block'):
        again.read_block(0)


def test_capacity_and_early_warning(tmp_path):
    cart = new(tmp_path, capacity_bytes=10000)
    cart.write_block(0, os.urandom(9800))
    assert cart.remaining_bytes == 200 and not cart.early_warning     # early warning: the last 1 %
    cart.write_block(1, os.urandom(150))
    assert cart.remaining_bytes == 50 and cart.early_warning


class Drive:
    def __init__(self):
        self.loaded = None

    def load_cartridge(self, cart, count=True):
        self.loaded = cart


def test_library_layout_is_kept_and_rejects_duplicates(tmp_path):
    for b in ('A00001L5', 'A00002L5'):
        new(tmp_path, b).close()
    drive = Drive()
    lib = Library.load(str(tmp_path), [drive], 3, 1, initial={'slots': ['A00001L5', None], 'drives': ['A00002L5']})
    assert [c.barcode if c else None for c in lib.slots] == ['A00001L5', None, None]
    assert drive.loaded.barcode == 'A00002L5'
    assert lib.find('A00002L5') == ('drive', 0) and lib.find('nope') is None
    lib.slots[2], lib.slots[0] = lib.slots[0], None
    lib.save()
    again = Library.load(str(tmp_path), [Drive()], 3, 1)
    assert again.layout()['slots'] == [None, None, 'A00001L5']
    (tmp_path / 'library.json').write_text('{"slots": ["A00001L5", "A00001L5"]}')
    with pytest.raises(Exception, match='twice'):
        Library.load(str(tmp_path), [Drive()], 3, 1)
