# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The fleet index page: totals, classes by drive generation, one sortable, filterable table.

Private to this collection: may change without notice. ``_render.write_fleet``
writes one page per host (``hosts/<host>.html``, that host's drives with their
charts) and, for a fleet larger than ``INLINE_MAX_HOSTS``, ``report.html`` as
this index: no charts (they are on the host pages), so it stays small at
thousands of hosts (about 0.5 KB per drive row).

The page is templates/index.html.j2. The table sorts by any column (click
its header) and filters by text and by class, with a few lines of inline
JavaScript (templates/index.js): no network, no external file.
The filter can be set from the address: ``report.html#class=SHOE-SHINING``
or ``report.html#q=lto-9`` (what a link from a ticket or a runbook uses).
Without JavaScript the page is a plain table with every row.
"""

from __future__ import annotations

from ansible_collections.tapeops.qualify.plugins.module_utils import _records, _words
from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import _report, _templates

# Up to this many hosts report.html is the one page with every drive and its charts (and
# the host pages are written too); above it, report.html is this index.
INLINE_MAX_HOSTS = 25

CLASSES = _records.CLASSES


def _num(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _rate(value):
    return '-' if value is None else '%.1f' % value


# Most groups drawn in "Classes by inventory group" (the largest by drive count); the rest are named.
MAX_GROUPS = 40


def host_groups(docs):
    """{host: [inventory groups]} from the host documents' facts (``group_names``, without all/ungrouped)."""
    out = {}
    for doc in docs:
        groups = ((doc.get('facts') or {}).get('groups') or []) if isinstance(doc, dict) else []
        out[doc.get('host')] = sorted(str(g) for g in groups if g not in ('all', 'ungrouped'))
    return out


def index_rows(rows, host_page, groups=None):
    """Table rows (dicts of text and sort values) from ``_report.rows``; ``host_page(host)`` gives the link.

    ``groups``: {host: [group]} (host_groups) for the Groups column.
    """
    groups = groups or {}
    out = []
    for row in rows:
        if row.get('observe') and row.get('drive'):
            out.append(_observed_row(row, host_page, groups))
            continue
        verdict = row.get('verdict') or {}
        numbers = verdict.get('numbers') or {}
        cls = verdict.get('class') or (row.get('status') or 'no result').upper()
        fixes = verdict.get('fixes') or []
        out.append({
            'host': row['host'], 'link': host_page(row['host']), 'drive': row.get('drive') or '-',
            'label': row.get('label') or '-', 'class': cls,
            'feed': _num(numbers.get('feed_now_mb_s')),
            'sustained': _num(numbers.get('source_sustained_mb_s')),
            'floor': _num(numbers.get('need_floor_mb_s')), 'full': _num(numbers.get('need_full_mb_s')),
            'fix': fixes[0]['title'] if fixes and isinstance(fixes[0], dict) else (row.get('error') or '-'),
            'groups': groups.get(row['host']) or [],
            'health': row.get('health').get('status') or _records.HEALTH_UNKNOWN if isinstance(
                row.get('health'), dict) else None,
            'health_cell': _words.health_cell(row['health']) if isinstance(row.get('health'), dict) else '-',
        })
    return out


def _observed_row(row, host_page, groups):
    """An observe run's drive in the index: its observed class, what the backup got in its data phase (the
    "Backup gets" column), the floor and full speed at its tape ratio, and its sentence in place of a fix."""
    entry = row.get('observed') or {}
    seen = entry.get('observed') or {}
    return {
        'host': row['host'], 'link': host_page(row['host']), 'drive': row['drive'], 'label': row.get('label') or '-',
        'class': _words.observed_class(entry), 'feed': _num(seen.get('mb_s')), 'sustained': None,
        'floor': _num(seen.get('need_floor_mb_s')), 'full': _num(seen.get('need_full_mb_s')),
        'fix': _words.observed_summary(entry) if entry else (row.get('error') or '-'),
        'groups': groups.get(row['host']) or [],
        'health': None, 'health_cell': '-',
    }


def by_generation(items):
    """{label: {class: count}} over the index rows, labels sorted."""
    table = {}
    for item in items:
        counts = table.setdefault(item['label'], {})
        counts[item['class']] = counts.get(item['class'], 0) + 1
    return dict(sorted(table.items()))


def by_group(items):
    """{group: {class: count}} over the index rows (a drive counts in each of its host's groups), by name."""
    table = {}
    for item in items:
        for group in item.get('groups') or []:
            counts = table.setdefault(group, {})
            counts[item['class']] = counts.get(item['class'], 0) + 1
    return dict(sorted(table.items()))


def group_rows(items, most=MAX_GROUPS):
    """Bars per inventory group, the ``most`` largest; ``(rows, names of the groups left out)``.

    Nothing when every drive row is in the same groups (one bar would repeat the totals).
    """
    groups = by_group(items)
    if len(set(tuple(item.get('groups') or ()) for item in items)) < 2:
        return [], []
    kept = sorted(sorted(groups), key=lambda g: -sum(groups[g].values()))[:most]
    left = sorted(set(groups) - set(kept))
    return class_bars(dict((g, groups[g]) for g in sorted(kept))), left


def generation_rows(items):
    """Rows of the 'classes by drive generation' table: label, total and one bar per class (widths in em)."""
    return class_bars(by_generation(items))


def class_bars(table):
    """Rows of a classes-by-something table from {label: {class: count}}: label, total, bars (widths in em)."""
    generations = table
    if not generations:
        return []
    widest = max(sum(c.values()) for c in generations.values())
    out = []
    for label, counts in generations.items():
        order = CLASSES + tuple(sorted(set(counts) - set(CLASSES)))
        bars = [{'class': k, 'count': counts[k], 'width': 20.0 * counts[k] / widest,
                 'color': _templates.CLASS_COLORS.get(k, _templates.DEFAULT_COLOR)} for k in order if counts.get(k)]
        out.append({'label': label, 'total': sum(counts.values()), 'bars': bars,
                    'counts': ', '.join('%s %d' % (k, counts[k]) for k in sorted(counts))})
    return out


def index_html(docs, rows, run, host_page, generated, sections=()):
    """The index page (templates/index.html.j2, with report.css so both pages look alike).

    ``sections``: more HTML sections (settings, comparison) at the end.
    """
    items = index_rows(rows, host_page, host_groups(docs))
    totals = {}
    for item in items:
        totals[item['class']] = totals.get(item['class'], 0) + 1
    groups, groups_left = group_rows(items)
    healths = sorted(set(i['health'] for i in items if i['health']))
    with_health = any(h != _records.HEALTH_UNKNOWN for h in healths)
    return _templates.render('index.html.j2', docs=docs, items=items, run=run or {}, generated=generated,
                             with_health=with_health, healths=healths if with_health else [],
                             health_totals=_words.health_totals(_report.health_totals(rows)) if with_health else None,
                             totals=totals, generations=generation_rows(items), r=_rate,
                             groups=groups, groups_left=groups_left, with_groups=any(i['groups'] for i in items),
                             sections=[_templates.safe(p) for p in sections])
