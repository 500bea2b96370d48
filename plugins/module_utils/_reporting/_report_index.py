# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The fleet index page: totals, classes by drive generation, one sortable, filterable table.

Private to this collection: may change without notice. ``_report.write_fleet``
writes one page per host (``hosts/<host>.html``, that host's drives with their
charts) and, for a fleet larger than ``INLINE_MAX_HOSTS``, ``report.html`` as
this index: no charts (they are on the host pages), so it stays small at
thousands of hosts (about 0.5 KB per drive row).

The table sorts by any column (click its header) and filters by text and by
class, with a few lines of inline JavaScript: no network, no external file.
The filter can be set from the address: ``report.html#class=SHOE-SHINING``
or ``report.html#q=lto-9`` (what a link from a ticket or a runbook uses).
Without JavaScript the page is a plain table with every row.
"""

from __future__ import annotations

import html

# Up to this many hosts report.html is the one page with every drive and its charts (and
# the host pages are written too); above it, report.html is this index.
INLINE_MAX_HOSTS = 25

CLASSES = ('STREAMING', 'SPEED-MATCHED', 'SHOE-SHINING', 'MISCONFIGURED', 'INCONCLUSIVE')

_SCRIPT = r"""
(function () {
  var table = document.getElementById('fleet-index');
  if (!table) { return; }
  var body = table.tBodies[0];
  var text = document.getElementById('filter-text');
  var cls = document.getElementById('filter-class');
  var shown = document.getElementById('shown');
  function apply() {
    var q = text.value.toLowerCase(), c = cls.value, n = 0;
    for (var i = 0; i < body.rows.length; i++) {
      var row = body.rows[i];
      var ok = (!c || row.getAttribute('data-class') === c) &&
               (!q || row.textContent.toLowerCase().indexOf(q) >= 0);
      row.hidden = !ok;
      if (ok) { n++; }
    }
    shown.textContent = n;
  }
  function sortBy(col, numeric) {
    var rows = Array.prototype.slice.call(body.rows);
    var dir = table.getAttribute('data-sort') === String(col) ? -1 : 1;
    table.setAttribute('data-sort', dir === 1 ? String(col) : '');
    rows.sort(function (a, b) {
      var x = a.cells[col].getAttribute('data-v'), y = b.cells[col].getAttribute('data-v');
      if (numeric) { x = parseFloat(x); y = parseFloat(y); x = isNaN(x) ? -1 : x; y = isNaN(y) ? -1 : y; }
      return (x < y ? -1 : x > y ? 1 : 0) * dir;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  var heads = table.tHead.rows[0].cells;
  for (var i = 0; i < heads.length; i++) {
    (function (col, numeric) {
      heads[col].addEventListener('click', function () { sortBy(col, numeric); });
    })(i, heads[i].getAttribute('data-numeric') === '1');
  }
  text.addEventListener('input', apply);
  cls.addEventListener('change', apply);
  var hash = decodeURIComponent(window.location.hash.replace(/^#/, ''));
  hash.split('&').forEach(function (pair) {
    var kv = pair.split('=');
    if (kv[0] === 'class') { cls.value = kv[1] || ''; }
    if (kv[0] === 'q') { text.value = kv[1] || ''; }
  });
  apply();
})();
"""

_CSS = """
#fleet-index th{cursor:pointer}
.bar{display:inline-block;height:0.8em;vertical-align:middle}
.filters{margin:0.5em 0}
"""


def _num(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _rate(value):
    return '-' if value is None else '%.1f' % value


def index_rows(rows, host_page):
    """Table rows (dicts of text and sort values) from ``_report.rows``; ``host_page(host)`` gives the link."""
    out = []
    for row in rows:
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
        })
    return out


def by_generation(items):
    """{label: {class: count}} over the index rows, labels sorted."""
    table = {}
    for item in items:
        counts = table.setdefault(item['label'], {})
        counts[item['class']] = counts.get(item['class'], 0) + 1
    return dict(sorted(table.items()))


def index_html(docs, rows, run, badge, css, colors, host_page, generated):
    """The index page. ``badge``/``css``/``colors`` come from ``_report`` so both pages look alike."""
    esc = html.escape
    run = run or {}
    items = index_rows(rows, host_page)
    totals = {}
    for item in items:
        totals[item['class']] = totals.get(item['class'], 0) + 1
    parts = ['<!DOCTYPE html>', '<html lang="en"><head><meta charset="utf-8">',
             '<title>Tape qualification report</title>', '<style>%s%s</style></head><body>' % (css, _CSS),
             '<h1>Tape qualification report</h1>',
             '<p><small>generated %s%s. Rates in MB/s (10<sup>6</sup> bytes/s). One page per host: follow '
             'the host name.</small></p>' % (esc(generated), ''.join(
                 ', %s %s' % (esc(k), esc(str(run[k]))) for k in ('id', 'mode', 'profile', 'target_generation')
                 if run.get(k))),
             '<p id="totals"><b>%d host(s), %d drive row(s):</b> %s</p>' % (
                 len(docs), len(items), ', '.join('%s %d' % (badge(k), totals[k]) for k in sorted(totals)))]
    generations = by_generation(items)
    if generations:
        widest = max(sum(c.values()) for c in generations.values())
        parts.append('<h2>Classes by drive generation</h2><table id="by-generation"><tr><th>Drive</th><th>Drives'
                     '</th><th>Classes</th></tr>')
        for label, counts in generations.items():
            total = sum(counts.values())
            bars = ''.join('<span class="bar" title="%s %d" style="background:%s;width:%.1fem"></span>' % (
                esc(k), counts[k], colors.get(k, '#57606a'), 20.0 * counts[k] / widest)
                for k in CLASSES + tuple(sorted(set(counts) - set(CLASSES))) if counts.get(k))
            parts.append('<tr><td>%s</td><td>%d</td><td>%s <small>%s</small></td></tr>' % (
                esc(label), total, bars, esc(', '.join('%s %d' % (k, counts[k]) for k in sorted(counts)))))
        parts.append('</table>')
    options = ''.join('<option value="%s">%s</option>' % (esc(k), esc(k)) for k in sorted(totals))
    parts.append('<h2>Drives</h2><div class="filters"><label>Filter <input id="filter-text" type="search" '
                 'placeholder="host, drive, fix"></label> <label>Class <select id="filter-class"><option value="">'
                 'all</option>%s</select></label> <small><span id="shown">%d</span> shown</small></div>' % (
                     options, len(items)))
    parts.append('<table id="fleet-index"><thead><tr><th>Host</th><th>Drive</th><th>Generation</th><th>Class</th>'
                 '<th data-numeric="1">Backup gets</th><th data-numeric="1">Sources sustained</th>'
                 '<th data-numeric="1">Needs floor / full</th><th>First fix</th></tr></thead><tbody>')
    for item in items:
        parts.append(
            '<tr data-class="%s"><td data-v="%s"><a href="%s">%s</a></td><td data-v="%s">%s</td>'
            '<td data-v="%s">%s</td><td data-v="%s">%s</td><td data-v="%s">%s</td><td data-v="%s">%s</td>'
            '<td data-v="%s">%s / %s</td><td data-v="%s">%s</td></tr>' % (
                esc(item['class']), esc(item['host']), esc(item['link']), esc(item['host']),
                esc(item['drive']), esc(item['drive']), esc(item['label']), esc(item['label']),
                esc(item['class']), badge(item['class']), _rate(item['feed']), _rate(item['feed']),
                _rate(item['sustained']), _rate(item['sustained']), _rate(item['floor']), _rate(item['floor']),
                _rate(item['full']), esc(item['fix']), esc(item['fix'])))
    parts.append('</tbody></table>')
    parts.append('<script>%s</script>' % _SCRIPT)
    parts.append('</body></html>')
    return '\n'.join(parts) + '\n'
