"""Make ``ansible_collections.tapeops.qualify`` importable from a plain checkout.

``tools/run test`` runs pytest inside a mirror of the checkout at
``<work>/ansible_collections/tapeops/qualify``; a developer may also run
``pytest`` straight from a clone. In the second case a symlink tree in a
temporary directory of its own (named after the checkout's path) gives Python
the package path it needs.
"""

import hashlib
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _ensure_collection_path():
    parts = ROOT.split(os.sep)
    if parts[-3:-2] == ['ansible_collections'] and parts[-2:] == ['tapeops', 'qualify']:
        base = os.sep.join(parts[:-3]) or os.sep
    else:
        # one tree per checkout: worktrees of the same repository on one machine would otherwise turn the one
        # symlink to each other's checkout between import and test
        base = os.path.join(tempfile.gettempdir(), 'tapeops-pytest-collections-%s'
                            % hashlib.sha1(ROOT.encode('utf-8')).hexdigest()[:12])
        link = os.path.join(base, 'ansible_collections', 'tapeops', 'qualify')
        os.makedirs(os.path.dirname(link), exist_ok=True)
        if os.path.realpath(link) != ROOT:
            if os.path.islink(link):
                os.unlink(link)
            os.symlink(ROOT, link)
    if base not in sys.path:
        sys.path.insert(0, base)


_ensure_collection_path()
