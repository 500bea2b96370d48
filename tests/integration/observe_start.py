# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""When a lab job may start writing under tape_drive_observe: once the module's window has begun.

tape_drive_observe reads the drive's log pages (LOG SENSE on its sg node) and then begins its window at once. The
lab drive rewrites its statistics file (``/run/tapelab/tape0-stats.json``) on every LOG SENSE, and an idle drive
leaves it alone otherwise, so a job that waits for the file's first rewrite after a mark and then for a few
seconds without one starts inside the window, however long the module took to get there on a loaded machine. With
a fixed delay (8 s after the module's async job file), a CI run's window held 101.2 of the job's 123.7 MB.
"""

from __future__ import annotations

DRIVE_STATS = '/run/tapelab/tape0-stats.json'


def after_log_pages(since, stats=DRIVE_STATS, rest_s=3, give_up_s=150):
    """Shell that returns once ``stats`` was rewritten after the file ``since`` and then rested ``rest_s``.

    ``since`` is a shell word (a path, or a quoted variable). Each wait gives up after ``give_up_s``, so a module
    that read no log page (a drive without its sg node) delays the job, never hangs it; the test then fails on
    what the window saw.
    """
    polls, rests = int(give_up_s * 4), int(rest_s * 4)
    return ('for i in $(seq 1 %(polls)d); do [ %(stats)s -nt %(since)s ] && break; sleep 0.25; done; '
            'last=; still=0; i=0; while [ $still -lt %(rests)d ] && [ $i -lt %(polls)d ]; do i=$((i + 1)); '
            'now=$(stat -c %%y %(stats)s 2>/dev/null); '
            'if [ "$now" = "$last" ]; then still=$((still + 1)); else still=0; last=$now; fi; sleep 0.25; done'
            % {'polls': polls, 'rests': rests, 'stats': stats, 'since': since})
