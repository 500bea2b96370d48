# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The mechanics section of the host document and of the fleet reports.

Private to this collection: may change without notice.

The host document keeps, per drive, what ``tape_mechanics_benchmark``
returned that a report needs (``_records.Mechanics``: the per-operation
percentiles, the object-size forecast for the current and the target drive,
the size warnings, whether the cartridge went back; ``_judge._host`` puts the
size warnings into the matching verdicts). ``notes`` says them as data (worded
by ``_words``); ``markdown`` and ``html`` fill templates/mechanics.*.j2: one
table of times per drive and one table of object sizes.
"""

from __future__ import annotations

from ansible_collections.tapeops.qualify.plugins.module_utils import _words
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _mechanics
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _mechanics as _mechanics_analysis
from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import _templates


def _docs(docs):
    return [(d['host'], m) for d in docs for m in (d.get('mechanics') or []) if isinstance(m, dict)]


def _s(value):
    if value is None:
        return '-'
    return '%.2f' % value if value < 100 else '%.0f' % value


def _mb(value):
    if value is None:
        return '-'
    if value >= 1000:
        return '%.1f GB' % (value / 1000.0)
    return '%.0f MB' % value if value >= 10 else '%.2g MB' % value


def time_rows(mech):
    """[(operation label, median, p95, n)] in cycle order."""
    summary = mech.get('summary') or {}
    return [(_mechanics.OPERATION_LABELS.get(op, op), summary[op].get('median_s'), summary[op].get('p95_s'),
             summary[op].get('n')) for op in _mechanics.OPERATIONS if op in summary]


def object_rows(mech):
    """[(drive label, rate, object, overhead, 50 % size, 90 % size)] for current then target."""
    rows = []
    forecast = mech.get('forecast') or {}
    for side in ('current', 'target'):
        entry = forecast.get(side)
        if not entry:
            continue
        for row in entry.get('objects') or []:
            rows.append(('%s (%s)' % (entry.get('label') or side, side), entry.get('rate_mb_s'), row['object'],
                         row.get('overhead_s'), row.get('size_50_mb'), row.get('size_90_mb')))
    return rows


def _entries(docs, html=False):
    """What the templates show per host x drive: the times, the object sizes, the notes (and the chart)."""
    out = []
    for host, mech in _docs(docs):
        entry = {'host': host, 'mech': mech, 'times': [], 'objects': [], 'notes': [], 'chart': None}
        if mech.get('status') == 'ok':
            entry.update(times=time_rows(mech), objects=object_rows(mech), notes=_notes(mech))
            if html:
                entry['chart'] = chart_bars(mech)
        out.append(entry)
    return out


def markdown(docs):
    """Lines of the Markdown mechanics section (empty when no host has one)."""
    entries = _entries(docs)
    if not entries:
        return []
    return _templates.lines(_templates.render('mechanics.md.j2', entries=entries, s=_s, mb=_mb))


def _notes(mech):
    """The notes under a drive's tables, in words (``_words.mechanics_note``)."""
    return [_words.mechanics_note(note) for note in notes(mech)]


def notes(mech):
    """What a drive's mechanics leave to note, as data: the size warnings, file marks not written, a locate not
    measured, a cartridge not put back, the target's times taken as measured or scaled."""
    out = [{'id': 'size_warning', 'text': w['text']} for w in mech.get('size_warnings') or []]
    marks = mech.get('filemarks') or {}
    if marks.get('refused'):
        out.append({'id': 'filemarks_refused', 'reason': marks.get('reason'), 'msg': marks.get('msg')})
    if mech.get('locate_error'):
        out.append({'id': 'locate_not_measured', 'error': mech['locate_error']})
    if mech.get('restored') is False:
        out.append({'id': 'not_restored', 'barcode': mech.get('barcode'), 'where': mech.get('final_location')})
    target = (mech.get('forecast') or {}).get('target') or {}
    for op, scaling in sorted((target.get('scaling') or {}).items()):
        if op in _mechanics_analysis.MODEL_FIELD:
            out.append({'id': 'target_scaling', 'operation': op, 'basis': scaling.get('basis')})
    return out


def chart_bars(mech, width=560, bar_px=16):
    """The geometry of the mechanics chart (templates/mechanics.svg.j2), or None when nothing was timed."""
    rows = [(op, (mech.get('summary') or {}).get(op) or {}) for op in _mechanics.OPERATIONS]
    rows = [(op, e) for op, e in rows if e.get('median_s') is not None]
    if not rows:
        return None
    top = max(max(e.get('p95_s') or 0, e.get('median_s') or 0) for _op, e in rows) or 1.0
    left, right = 110, 60
    scale = (width - left - right) / float(top)
    bars = []
    for index, (op, entry) in enumerate(rows):
        y = 8 + index * bar_px * 1.5
        median = entry['median_s']
        p95 = entry.get('p95_s') or median
        bars.append({'op': op, 'y': y, 'text_y': y + bar_px * 0.75, 'width': max(1.0, median * scale),
                     'x95': left + p95 * scale, 'median': median, 'p95': p95})
    return {'width': width, 'height': bar_px * 1.5 * len(rows) + 24, 'left': left, 'bar_px': bar_px, 'bars': bars}


def html(docs):
    """HTML parts of the mechanics section (empty when no host has one)."""
    entries = _entries(docs, html=True)
    if not entries:
        return []
    return [_templates.render('mechanics.html.j2', entries=entries, s=_s, mb=_mb).rstrip('\n')]
