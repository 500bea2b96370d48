# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Write a configuration file atomically (temporary file in the same directory + rename).

Private to this collection: may change without notice. Modeled on
ansible.posix.sysctl: the new content goes to a temporary file next to the
target, gets the target's (or a reference file's) mode and owner, and replaces
the target with ``AnsibleModule.atomic_move`` so a reader never sees half a file.
"""

from __future__ import annotations

import os
import tempfile


def write_temp_beside(path, data, reference=None):
    """Write ``data`` (bytes) to a new temporary file in ``path``'s directory; return its name.

    The temporary file gets the mode and owner of ``reference`` (or of
    ``path``) when that exists, else mode 0644.
    """
    directory = os.path.dirname(os.path.abspath(path)) or '.'
    fd, tmp = tempfile.mkstemp(prefix='.%s.' % os.path.basename(path), suffix='.tapeops', dir=directory)
    try:
        with os.fdopen(fd, 'wb') as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        ref = reference if reference and os.path.exists(reference) else path
        if os.path.exists(ref):
            st = os.stat(ref)
            os.chmod(tmp, st.st_mode & 0o7777)
            try:
                os.chown(tmp, st.st_uid, st.st_gid)
            except PermissionError:
                pass
        else:
            os.chmod(tmp, 0o644)
    except BaseException:
        os.unlink(tmp)
        raise
    return tmp


def write_text_atomic(module, path, data, reference=None):
    """Replace ``path`` with ``data`` (bytes) atomically through ``module.atomic_move``."""
    tmp = write_temp_beside(path, data, reference=reference)
    module.atomic_move(tmp, path, unsafe_writes=False)
