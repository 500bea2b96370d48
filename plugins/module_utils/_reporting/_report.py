# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The fleet's rows of a qualify run's host documents, and the run they are compared with.

Private to this collection: may change without notice. Used by the
``qualify_report`` action and ``_render`` on the controller (never shipped to
managed hosts, no module imports it).

It reads what the documents say (``hosts/<host>.json``, as ``_run`` reads
them; ``_judge._host`` made them): one row per host and drive, the drives
whose class fails the run, the comparison with an earlier run. No verdict is
computed here. ``_render`` renders the reports (templates under
``templates/``).
"""

from __future__ import annotations

from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError
from ansible_collections.tapeops.qualify.plugins.module_utils import _records, _run, _words

from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import _compare


DEFAULT_FAILING_CLASSES = (_records.SHOE_SHINING, _records.MISCONFIGURED)


class ReportError(TapeopsError):
    """A report cannot be written; the message says what to do."""


# ---------------------------------------------------------------------------
# fleet rows


def rows(docs):
    """One row per host x drive (and one per host without drives/verdicts).

    ``observe``: the row is an observe run's (its document has ``observed``), ``observed``: its drive's observed
    entry (None elsewhere); such a row has no verdict.
    """
    out = []
    for doc in docs:
        drives = doc.get('drives') or []
        observe = _records.observe_document(doc)
        if (doc.get('status') != _run.STATUS_OK and not any(d.get('busy') for d in drives)) or not drives:
            error = doc.get('error') or _words.NO_DRIVE
            if doc.get('status') != _run.STATUS_OK and _words.measured_before(doc):
                error = '%s %s' % (error, _words.measured_before(doc))
            out.append({'host': doc['host'], 'drive': None, 'label': None, 'verdict': None,
                        'status': doc.get('status'), 'error': error, 'doc': doc, 'item': None,
                        'observe': observe, 'observed': None, 'health': None})
            continue
        if observe:
            out.extend(_observed_rows(doc))
            continue
        for item, verdict in _records.drives_with_verdicts(doc):
            out.append({'host': doc['host'], 'drive': item.get('id') or item.get('nst'),
                        'label': (verdict or {}).get('drive_label') or item.get('label'),
                        'verdict': verdict, 'status': _run.STATUS_BUSY if item.get('busy') else doc.get('status'),
                        'error': item.get('error'), 'doc': doc, 'item': item, 'observe': False, 'observed': None,
                        'health': item.get('health') if isinstance(item.get('health'), dict) else None})
    return out


def _observed_rows(doc):
    """The rows of an observe run's document: one per drive, with its observed entry (None when not watched)."""
    return [{'host': doc['host'], 'drive': item.get('id') or item.get('nst'), 'label': item.get('label'),
             'verdict': None, 'status': doc.get('status'),
             'error': item.get('error') or (entry or {}).get('error'), 'doc': doc, 'item': item,
             'observe': True, 'observed': entry, 'health': None}
            for item, entry in _records.drives_with_observed(doc)]


def row_class(row):
    """The class a row counts with: its verdict's, else its observed drive's (IDLE...), else None."""
    if row['verdict']:
        return row['verdict'].get('class')
    if row['observe'] and row['drive']:
        return _words.observed_class(row['observed'])
    return None


# ---------------------------------------------------------------------------
# the drives' health (docs/health.md), as the documents say it


def health_status(row):
    """A row's drive's health status (OK, CLEAN, DEGRADED, FAILING, UNKNOWN), or None for a row without health."""
    health = row.get('health')
    return (health.get('status') or _records.HEALTH_UNKNOWN) if isinstance(health, dict) else None


def health_read(all_rows):
    """True when the health of at least one drive of the rows was read (a status other than UNKNOWN): the reports
    show health then, and documents without it (or with nothing read) render as they did."""
    return any(health_status(r) not in (None, _records.HEALTH_UNKNOWN) for r in all_rows)


# a health finding that is about the cartridge's end of life: near its load or pass life, or its drive's own
# Media life (7) and Nearing media life (19) TapeAlert flags
_END_OF_LIFE_CODES = ('cartridge_loads', 'cartridge_passes')
_END_OF_LIFE_FLAGS = (7, 19)
_CLEANING_FIXES = ('clean_drive', 'replace_cleaning_cartridge')


def end_of_life(finding):
    """True for a health finding (a dict) that says the cartridge is near the end of its life."""
    return finding.get('code') in _END_OF_LIFE_CODES or (
        finding.get('code') in ('tape_alert', 'cartridge_tape_alert')
        and (finding.get('evidence') or {}).get('flag') in _END_OF_LIFE_FLAGS)


def health_totals(all_rows):
    """The fleet's health as counts (``_words.health_totals`` words them): drives that need cleaning, cartridges
    near their end of life, failing and otherwise degraded drives, OK drives and drives whose health was not read.
    """
    out = dict.fromkeys(('clean', 'end_of_life', 'failing', 'degraded', 'ok', 'unknown'), 0)
    for row in all_rows:
        status = health_status(row)
        if status is None:
            continue
        findings = [f for f in row['health'].get('findings') or [] if isinstance(f, dict)]
        out['clean'] += any(f.get('fix') in _CLEANING_FIXES for f in findings)
        out['end_of_life'] += any(end_of_life(f) for f in findings)
        out['failing'] += status == _records.HEALTH_FAILING
        out['degraded'] += status == _records.HEALTH_DEGRADED and not all(end_of_life(f) for f in findings)
        out['ok'] += status == _records.HEALTH_OK
        out['unknown'] += status == _records.HEALTH_UNKNOWN
    return out


def failing(docs, failing_classes=DEFAULT_FAILING_CLASSES):
    """Rows whose class is in ``failing_classes`` (e.g. any drive that would shoe-shine, or was seen shoe-shining)."""
    bad = []
    for row in rows(docs):
        verdict = row['verdict'] or {}
        if verdict.get('class') in failing_classes or (
                _records.SHOE_SHINING in failing_classes and verdict.get('would_shoe_shine')):
            bad.append(row)
        elif row['observed'] and (row['observed'].get('observed') or {}).get('class') in failing_classes:
            bad.append(row)
    return bad


def load_comparison(compare_to, docs, tolerance=_compare.DEFAULT_TOLERANCE):
    """Compare ``docs`` with the run in directory ``compare_to`` (its host JSONs; ``load_earlier``).

    Returns ``(comparison, against_observed)``: what changed (``_compare.compare``) over the qualify runs'
    documents (None when all of ``docs`` are an observe run's), and the earlier run's forecast against what the
    observe run's documents saw (``_compare.against_observed``; None without such a document).
    """
    earlier = _run.load_earlier(compare_to)
    earlier_run = dict(next((d.get('run') for d in earlier if d.get('run')), {}) or {})
    earlier_run['dir'] = compare_to
    watched = [d for d in docs if _records.observe_document(d)]
    measured = [d for d in docs if not _records.observe_document(d)]
    comparison = _compare.compare(earlier, measured, tolerance, earlier_run) if measured or not watched else None
    against = _compare.against_observed(earlier, watched, earlier_run) if watched else None
    return comparison, against
