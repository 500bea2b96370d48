# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's tape library: ``Library`` (slots, drives, import/export elements).

Names other modules rely on (the changer in smc.py): ``Library`` with
``slots`` / ``import_export`` (lists of ``Cartridge`` or None), ``drives``
(the emulated drives, objects with ``loaded`` (a Cartridge or None),
``load_cartridge(cart)`` and ``unload_cartridge() -> cart``), ``find(barcode)``
-> (``'slot'|'drive'|'import_export'``, index) or None, ``cartridge(barcode)``,
and ``save()`` that records where every cartridge is.

Cartridges are files ``<dir>/<barcode>.cart`` (media.py); the layout (which
cartridge is in which element) is ``<dir>/library.json``, so a guest that
restarts finds its cartridges where the changer left them.
"""

from __future__ import annotations

import json
import os

from .media import Cartridge

LAYOUT = 'library.json'


class LibraryError(Exception):
    """A layout that cannot be honoured (a cartridge named twice, a missing file)."""


def cartridge_path(directory, barcode):
    return os.path.join(directory, '%s.cart' % barcode)


class Library:
    """Slots, drives and import/export elements holding ``Cartridge`` objects."""

    def __init__(self, directory, slots, drives, import_export):
        self.directory = directory
        self.slots = list(slots)
        self.drives = list(drives)
        self.import_export = list(import_export)

    @classmethod
    def load(cls, directory, drives, slot_count, ie_count=1, initial=None):
        """Open the library in ``directory`` with the given drive objects.

        The layout comes from ``library.json`` when it exists, else from
        ``initial``: ``{'slots': [barcode|None, ...], 'drives': [barcode|None, ...]}``.
        Cartridges named in the layout are opened; drives get theirs loaded.
        """
        path = os.path.join(directory, LAYOUT)
        layout = None
        if os.path.exists(path):
            with open(path) as f:
                layout = json.load(f)
        if layout is None:
            layout = initial or {}
        slot_codes = list(layout.get('slots') or [])[:slot_count]
        slot_codes += [None] * (slot_count - len(slot_codes))
        drive_codes = list(layout.get('drives') or [])[:len(drives)]
        drive_codes += [None] * (len(drives) - len(drive_codes))
        ie_codes = list(layout.get('import_export') or [])[:ie_count]
        ie_codes += [None] * (ie_count - len(ie_codes))
        seen = set()

        def open_cart(code):
            if code is None:
                return None
            if code in seen:
                raise LibraryError('cartridge %s appears twice in %s' % (code, path))
            seen.add(code)
            return Cartridge.open(cartridge_path(directory, code))

        lib = cls(directory, [open_cart(c) for c in slot_codes], drives, [open_cart(c) for c in ie_codes])
        for drive, code in zip(drives, drive_codes):
            cart = open_cart(code)
            if cart is not None:
                drive.load_cartridge(cart, count=False)
        lib.save()
        return lib

    def elements(self):
        """Every (kind, index, cartridge-or-None)."""
        out = [('slot', i, c) for i, c in enumerate(self.slots)]
        out += [('drive', i, d.loaded) for i, d in enumerate(self.drives)]
        out += [('import_export', i, c) for i, c in enumerate(self.import_export)]
        return out

    def find(self, barcode):
        for kind, index, cart in self.elements():
            if cart is not None and cart.barcode == barcode:
                return kind, index
        return None

    def cartridge(self, barcode):
        for _kind, _index, cart in self.elements():
            if cart is not None and cart.barcode == barcode:
                return cart
        return None

    def layout(self):
        def code(cart):
            return cart.barcode if cart is not None else None
        return {
            'slots': [code(c) for c in self.slots],
            'drives': [code(d.loaded) for d in self.drives],
            'import_export': [code(c) for c in self.import_export],
        }

    def save(self):
        path = os.path.join(self.directory, LAYOUT)
        tmp = path + '.tmp'
        with open(tmp, 'w') as f:
            json.dump(self.layout(), f, indent=1)
        os.replace(tmp, path)
