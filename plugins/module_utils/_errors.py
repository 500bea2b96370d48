# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The collection's one error base class.

Private to this collection: may change without notice.

Every error the collection raises on purpose derives from ``TapeopsError``
(as community.crypto's errors derive from ``OpenSSLObjectError``), so a
caller can catch them all in one place and tell them from a bug:

- ``msg``: what was found and the sentence saying what to do; shown to the
  user as it is (``str(error)`` is the same text);
- ``reason``: a short machine-readable key (``media_has_data``,
  ``block_device``, ``timeout``, ...) that a module fails with as
  ``reason``, the collection's one refusal key; None where the class has none.

``refusal()`` gives the ``{msg, reason}`` a module passes to ``fail_json``.
Parse errors also derive from ``ValueError`` (they were ValueErrors before the
base class existed, and callers catch them as such).
"""

from __future__ import annotations


class TapeopsError(Exception):
    """Base of every error the collection raises on purpose; see the module docstring."""

    reason = None

    def __init__(self, msg, reason=None):
        super().__init__(msg)
        self.msg = msg
        if reason is not None:
            self.reason = reason

    def refusal(self):
        """``{'msg', 'reason'}`` for ``fail_json`` (``reason`` only when the error has one)."""
        out = {'msg': self.msg}
        if self.reason is not None:
            out['reason'] = self.reason
        return out
