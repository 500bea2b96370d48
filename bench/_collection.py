# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Make this checkout importable as ansible_collections.tapeops.qualify, for the bench scripts.

A checkout that already sits at .../ansible_collections/tapeops/qualify is
used where it is; any other is linked into a temporary
ansible_collections/tapeops/qualify.
"""

import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def import_collection():
    """Put the collection on sys.path; return the directory holding ansible_collections/ (for ANSIBLE_COLLECTIONS_PATH)."""
    parts = ROOT.split(os.sep)
    if parts[-3:-1] == ['ansible_collections', 'tapeops']:
        base = os.sep.join(parts[:-3])
    else:
        base = tempfile.mkdtemp(prefix='tapeops-bench-')
        os.makedirs(os.path.join(base, 'ansible_collections', 'tapeops'))
        os.symlink(ROOT, os.path.join(base, 'ansible_collections', 'tapeops', 'qualify'))
    sys.path.insert(0, base)
    return base
