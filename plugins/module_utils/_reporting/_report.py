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
                        'observe': observe, 'observed': None})
            continue
        if observe:
            out.extend(_observed_rows(doc))
            continue
        for item, verdict in _records.drives_with_verdicts(doc):
            out.append({'host': doc['host'], 'drive': item.get('id') or item.get('nst'),
                        'label': (verdict or {}).get('drive_label') or item.get('label'),
                        'verdict': verdict, 'status': _run.STATUS_BUSY if item.get('busy') else doc.get('status'),
                        'error': item.get('error'), 'doc': doc, 'item': item, 'observe': False, 'observed': None})
    return out


def _observed_rows(doc):
    """The rows of an observe run's document: one per drive, with its observed entry (None when not watched)."""
    return [{'host': doc['host'], 'drive': item.get('id') or item.get('nst'), 'label': item.get('label'),
             'verdict': None, 'status': doc.get('status'),
             'error': item.get('error') or (entry or {}).get('error'), 'doc': doc, 'item': item,
             'observe': True, 'observed': entry}
            for item, entry in _records.drives_with_observed(doc)]


def row_class(row):
    """The class a row counts with: its verdict's, else its observed drive's (IDLE...), else None."""
    if row['verdict']:
        return row['verdict'].get('class')
    if row['observe'] and row['drive']:
        return _words.observed_class(row['observed'])
    return None


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
