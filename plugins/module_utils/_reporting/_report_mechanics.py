# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The mechanics section of the host document and of the fleet reports.

Private to this collection: may change without notice.

``mechanics_section`` keeps, per drive, what ``tape_mechanics_benchmark``
returned that a report needs (the per-operation percentiles, the object-size
forecast for the current and the target drive, the size warnings, whether the
cartridge went back); ``attach_findings`` puts the size warnings into the
matching verdicts through ``_verdict.mechanics_findings``; ``markdown`` and
``html`` render one table of times per drive and one table of object sizes.
"""

from __future__ import annotations

import html as _html

from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _mechanics
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _verdict

_KEEP = ('summary', 'forecast', 'size_warnings', 'restored', 'final_location', 'locate_error', 'barcode', 'slot')


def _results(registered):
    """A registered result of a looped task, a list, or one result -> list of dicts."""
    if isinstance(registered, dict) and isinstance(registered.get('results'), list):
        registered = registered['results']
    if isinstance(registered, dict):
        registered = [registered]
    return [r for r in (registered or []) if isinstance(r, dict)]


def mechanics_section(registered):
    """The host document's ``mechanics``: a list, one entry per drive, or None when nothing was asked."""
    out = []
    for result in _results(registered):
        item = result.get('item') if isinstance(result.get('item'), dict) else {}
        device = result.get('device') or (result.get('invocation') or {}).get('module_args', {}).get('device') \
            or item.get('nst')
        if result.get('skipped'):
            continue
        entry = {'device': device, 'status': 'ok', 'error': None, 'warnings': list(result.get('warnings') or [])}
        # failed_when: false keeps the play going: the refusal is then only in reason / msg
        if result.get('failed') or result.get('reason') or ('summary' not in result and result.get('msg')):
            entry['status'] = 'failed'
            entry['error'] = str(result.get('msg') or 'tape_mechanics_benchmark failed')
            entry['reason'] = result.get('reason')
        elif 'summary' not in result:
            entry['status'] = 'planned'
            entry['error'] = 'check mode: nothing was moved or timed'
        for key in _KEEP:
            if key in result:
                entry[key] = result[key]
        marks = result.get('filemarks')
        if isinstance(marks, dict):
            entry['filemarks'] = dict((k, marks.get(k)) for k in (
                'written', 'refused', 'reason', 'msg', 'marks', 'files', 'file_mb', 'bytes', 'rate_mb_s',
                'seconds_lost_per_mark', 'media_decision') if k in marks)
        out.append(entry)
    return out or None


def attach_findings(entries, section):
    """Add the mechanics findings to the verdicts of ``entries`` (the host document's drives).

    A drive's verdict gets its own measurement's findings (current drive);
    the what-if entry gets the target side of every drive's forecast.
    """
    for mech in section or []:
        if mech.get('status') != 'ok':
            continue
        for entry in entries:
            verdict = entry.get('verdict')
            if not verdict:
                continue
            if entry.get('what_if'):
                side = 'target'
            elif entry.get('nst') and entry.get('nst') == mech.get('device'):
                side = 'current'
            else:
                continue
            verdict.setdefault('findings', []).extend(_verdict.mechanics_findings(mech, side))


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


def _md(text):
    return str(text).replace('|', '\\|').replace('\n', ' ')


def markdown(docs):
    """Lines of the Markdown mechanics section (empty when no host has one)."""
    items = _docs(docs)
    if not items:
        return []
    lines = ['## Library and drive mechanics', '',
             'Timed around the real commands (mtx, mt); median and 95th percentile of n cycles. Object sizes: '
             'the smallest object that reaches 50 % / 90 % of the streaming rate, S = R * T * f / (1 - f).', '']
    for host, mech in items:
        lines.append('### %s %s (%s)' % (host, mech.get('device') or '-', mech.get('barcode') or 'no barcode'))
        lines.append('')
        if mech.get('status') != 'ok':
            lines.append('No mechanics: %s' % _md(mech.get('error') or 'failed'))
            lines.append('')
            continue
        lines.append('| Operation | Median s | p95 s | n |')
        lines.append('|---|---|---|---|')
        for label, median, p95, count in time_rows(mech):
            lines.append('| %s | %s | %s | %s |' % (_md(label), _s(median), _s(p95), count))
        lines.append('')
        rows = object_rows(mech)
        if rows:
            lines.append('| Drive | Rate MB/s | Object ends with | Overhead s | 50 % at | 90 % at |')
            lines.append('|---|---|---|---|---|---|')
            for label, rate, obj, over, s50, s90 in rows:
                lines.append('| %s | %s | %s | %s | %s | %s |' % (_md(label), _s(rate), obj, _s(over), _mb(s50),
                                                                  _mb(s90)))
            lines.append('')
        for text in _notes(mech):
            lines.append('- %s' % _md(text))
        lines.append('')
    return lines


def _notes(mech):
    notes = [w['text'] for w in mech.get('size_warnings') or []]
    marks = mech.get('filemarks') or {}
    if marks.get('refused'):
        notes.append('No file marks were written (%s): %s' % (marks.get('reason'), marks.get('msg')))
    if mech.get('locate_error'):
        notes.append('Locate not measured: %s' % mech['locate_error'])
    if mech.get('restored') is False:
        notes.append('The cartridge %s is NOT back where it started (%s): put it back by hand.' % (
            mech.get('barcode'), mech.get('final_location')))
    target = (mech.get('forecast') or {}).get('target') or {}
    for op, scaling in sorted((target.get('scaling') or {}).items()):
        if op in _mechanics.MODEL_FIELD:
            notes.append('Target %s: %s.' % (op, scaling.get('basis')))
    return notes


def svg_chart(mech, width=560, bar_px=16):
    """A small self-contained SVG: per operation a bar to the median and a tick at the p95 (seconds)."""
    rows = [(op, (mech.get('summary') or {}).get(op) or {}) for op in _mechanics.OPERATIONS]
    rows = [(op, e) for op, e in rows if e.get('median_s') is not None]
    if not rows:
        return ''
    top = max(max(e.get('p95_s') or 0, e.get('median_s') or 0) for _op, e in rows) or 1.0
    left, right = 110, 60
    scale = (width - left - right) / float(top)
    height = bar_px * 1.5 * len(rows) + 24
    out = ['<svg xmlns="http://www.w3.org/2000/svg" data-chart="mechanics" width="%d" height="%d" role="img" '
           'aria-label="median and p95 seconds per operation">' % (width, height)]
    for index, (op, entry) in enumerate(rows):
        y = 8 + index * bar_px * 1.5
        median = entry['median_s']
        p95 = entry.get('p95_s') or median
        out.append('<text x="%d" y="%.1f" font-size="11" text-anchor="end">%s</text>' % (
            left - 6, y + bar_px * 0.75, _html.escape(op)))
        out.append('<rect x="%d" y="%.1f" width="%.1f" height="%d" fill="#4a7ab5"/>' % (
            left, y, max(1.0, median * scale), bar_px))
        x95 = left + p95 * scale
        out.append('<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#c0392b" stroke-width="2"/>' % (
            x95, x95, y - 2, y + bar_px + 2))
        out.append('<text x="%.1f" y="%.1f" font-size="10">%s / %s s</text>' % (
            x95 + 4, y + bar_px * 0.75, _s(median), _s(p95)))
    out.append('<text x="%d" y="%.1f" font-size="10">bar: median, red line: p95 (seconds)</text>' % (
        left, height - 4))
    out.append('</svg>')
    return ''.join(out)


def html(docs):
    """HTML parts of the mechanics section (empty when no host has one)."""
    items = _docs(docs)
    if not items:
        return []
    esc = _html.escape
    parts = ['<h2>Library and drive mechanics</h2>',
             '<p>Timed around the real commands (mtx, mt); median and 95th percentile of n cycles. Object sizes: '
             'the smallest object that reaches 50 % / 90 % of the streaming rate, S = R &times; T &times; f / '
             '(1 &minus; f).</p>']
    for host, mech in items:
        parts.append('<h3>%s %s (%s)</h3>' % (
            esc(host), esc(mech.get('device') or '-'), esc(mech.get('barcode') or 'no barcode')))
        if mech.get('status') != 'ok':
            parts.append('<p>No mechanics: %s</p>' % esc(mech.get('error') or 'failed'))
            continue
        parts.append('<table class="mechanics"><tr><th>Operation</th><th>Median s</th><th>p95 s</th><th>n</th></tr>')
        for label, median, p95, count in time_rows(mech):
            parts.append('<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>' % (
                esc(label), _s(median), _s(p95), count))
        parts.append('</table>')
        parts.append(svg_chart(mech))
        rows = object_rows(mech)
        if rows:
            parts.append('<table class="mechanics-objects"><tr><th>Drive</th><th>Rate MB/s</th><th>Object ends with'
                         '</th><th>Overhead s</th><th>50 % at</th><th>90 % at</th></tr>')
            for label, rate, obj, over, s50, s90 in rows:
                parts.append('<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>' % (
                    esc(label), _s(rate), esc(obj), _s(over), esc(_mb(s50)), esc(_mb(s90))))
            parts.append('</table>')
        notes = _notes(mech)
        if notes:
            parts.append('<ul>%s</ul>' % ''.join('<li>%s</li>' % esc(n) for n in notes))
    return parts
