# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Fleet-wide settings tables: segment size, block size and file marks across hosts.

Private to this collection: may change without notice. Pure Python, no
Ansible imports; ``_report`` calls :func:`settings_rows` on the host documents
and the templates settings.md.j2 / settings.html.j2 render the tables.

One row per host x drive with a verdict: the backup software's segment size
(Data Protector; "2000 MB (Data Protector default)" where the inventory gave
none and the verdict modelled the default) or Maximum File Size
(Bacula/Bareos; "(bacula-sd.conf)" where it came from the storage daemon's
configuration, "(Bacula default, bacula-sd.conf sets none)" where its Device
sets none), the tape block size in use (with the same note) and the best one
the sweep measured, the file-mark mode and what a mark
costs (measured by the write benchmark, seconds per mark), the forecast
backup rate now and with the setting fixes, and the gain. Rows are grouped by
drive generation (the drive's label) and sorted by gain, largest first, so
the first rows of each group are the drives a settings change helps most.
"""

from __future__ import annotations

from ansible_collections.tapeops.qualify.plugins.module_utils import _records, _words
from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import _templates

SETTING_FIXES = ('block_size', 'immediate_filemarks', 'segment_size')


def _number(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _kib(value):
    value = _number(value)
    if value is None:
        return None
    return '%d KiB' % round(value / 1024) if value < 1024 * 1024 else '%g MiB' % round(value / 1048576.0, 2)


def settings_rows(docs):
    """Rows of the fleet settings table, grouped by drive label and sorted by gain (MB/s) within a group."""
    out = []
    for doc in docs or []:
        for item, verdict in _records.drives_with_verdicts(doc):
            verdict = verdict or {}
            numbers = verdict.get('numbers') or {}
            if not verdict.get('class') or not numbers:
                continue
            now = _number(numbers.get('feed_now_mb_s'))
            after = _number(numbers.get('feed_after_setting_fixes_mb_s'))
            gain = None if now is None or after is None else round(after - now, 3)
            fixes = [f.get('title') for f in verdict.get('fixes') or []
                     if isinstance(f, dict) and f.get('id') in SETTING_FIXES]
            out.append({
                'host': doc.get('host'),
                'drive': str(item.get('id') or item.get('nst') or '-'),
                'label': verdict.get('drive_label') or item.get('label') or 'unknown drive',
                'class': verdict['class'],
                'segment_size_mb': _number(numbers.get('segment_size_mb')),
                'segment_size_basis': numbers.get('segment_size_basis'),
                'software': ((doc.get('facts') or {}).get('backup') or {}).get('software'),
                'block_size': _kib(numbers.get('block_size_bytes')),
                'block_size_basis': numbers.get('block_size_basis'),
                # the storage daemon's file each setting came from (the drive's setting_sources), if any
                'setting_files': dict((k, v.get('file')) for k, v in (item.get('setting_sources') or {}).items()
                                      if isinstance(v, dict) and v.get('file')),
                'best_block_size': _kib(numbers.get('best_block_size_bytes')),
                'filemark_mode': numbers.get('filemark_mode'),
                'filemark_seconds_sync': _number(numbers.get('filemark_seconds_sync')),
                'filemark_seconds_immediate': _number(numbers.get('filemark_seconds_immediate')),
                'feed_now_mb_s': now,
                'feed_after_setting_fixes_mb_s': after,
                'gain_mb_s': gain,
                'setting_fixes': fixes,
            })
    out.sort(key=lambda r: (r['label'], -(r['gain_mb_s'] or 0.0), r['host'], r['drive']))
    return out


def _cell(value, fmt='%.1f'):
    return '-' if value is None else fmt % value


def _note(row, key, basis):
    note = _words.setting_source_note(row.get(basis), row.get('software'), (row.get('setting_files') or {}).get(key))
    return ' (%s)' % note if note else ''


def _segment(row):
    """'10000 MB', '2000 MB (Data Protector default)' (the verdict modelled the default), '2147.48 MB
    (bacula-sd.conf)' (the storage daemon's configuration), '-'."""
    text = _cell(row['segment_size_mb'], '%g MB')
    if row['segment_size_mb'] is not None:
        text += _note(row, 'segment_size_mb', 'segment_size_basis')
    return text


def _block(row):
    """'256 KiB', '256 KiB (bacula-sd.conf)', '63 KiB (Bacula default, bacula-sd.conf sets none)', 'unknown'."""
    if not row['block_size']:
        return 'unknown'
    return row['block_size'] + _note(row, 'block_size_bytes', 'block_size_basis')


def _marks(row):
    mode = row['filemark_mode'] or 'unknown'
    costs = []
    if row['filemark_seconds_sync'] is not None:
        costs.append('sync %.2f s' % row['filemark_seconds_sync'])
    if row['filemark_seconds_immediate'] is not None:
        costs.append('immediate %.2f s' % row['filemark_seconds_immediate'])
    return '%s (%s)' % (mode, ', '.join(costs)) if costs else mode


HEADER = ('Drive', 'Host', 'Class', 'Segment / Max File Size', 'Block in use / best', 'File marks (cost per mark)',
          'Backup now -> with setting fixes', 'Gain', 'Setting fixes')


def cells(row):
    """The table cells of one row, as text."""
    return (
        '%s %s' % (row['label'], row['drive']), row['host'], row['class'],
        _segment(row),
        '%s / %s' % (_block(row), row['best_block_size'] or '-'),
        _marks(row),
        '%s -> %s MB/s' % (_cell(row['feed_now_mb_s']), _cell(row['feed_after_setting_fixes_mb_s'])),
        _cell(row['gain_mb_s'], '%+.1f MB/s'),
        '; '.join(row['setting_fixes']) or '-',
    )


def groups(rows, with_rows=False):
    """[(label, [cells of each row])] in the rows' order (they come sorted by label); with_rows: (row, cells)."""
    out = []
    for row in rows:
        if not out or out[-1][0] != row['label']:
            out.append((row['label'], []))
        out[-1][1].append((row, cells(row)) if with_rows else cells(row))
    return out


def settings_markdown(rows):
    """The Markdown section (a list of lines; templates/settings.md.j2)."""
    if not rows:
        return []
    return _templates.lines(_templates.render('settings.md.j2', groups=groups(rows), header=HEADER))
