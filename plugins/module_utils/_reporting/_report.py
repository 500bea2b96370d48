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
    """One row per host x drive (and one per host without drives/verdicts)."""
    out = []
    for doc in docs:
        drives = doc.get('drives') or []
        if (doc.get('status') != _run.STATUS_OK and not any(d.get('busy') for d in drives)) or not drives:
            error = doc.get('error') or _words.NO_DRIVE
            if doc.get('status') != _run.STATUS_OK and _words.measured_before(doc):
                error = '%s %s' % (error, _words.measured_before(doc))
            out.append({'host': doc['host'], 'drive': None, 'label': None, 'verdict': None,
                        'status': doc.get('status'), 'error': error, 'doc': doc, 'item': None})
            continue
        for item, verdict in _records.drives_with_verdicts(doc):
            out.append({'host': doc['host'], 'drive': item.get('id') or item.get('nst'),
                        'label': (verdict or {}).get('drive_label') or item.get('label'),
                        'verdict': verdict, 'status': _run.STATUS_BUSY if item.get('busy') else doc.get('status'),
                        'error': item.get('error'), 'doc': doc, 'item': item})
    return out


def failing(docs, failing_classes=DEFAULT_FAILING_CLASSES):
    """Rows whose class is in ``failing_classes`` (e.g. any drive that would shoe-shine)."""
    bad = []
    for row in rows(docs):
        verdict = row['verdict'] or {}
        if verdict.get('class') in failing_classes or (
                _records.SHOE_SHINING in failing_classes and verdict.get('would_shoe_shine')):
            bad.append(row)
    return bad


def load_comparison(compare_to, docs, tolerance=_compare.DEFAULT_TOLERANCE):
    """Compare ``docs`` with the run in directory ``compare_to`` (its host JSONs; ``load_earlier``)."""
    earlier = _run.load_earlier(compare_to)
    earlier_run = dict(next((d.get('run') for d in earlier if d.get('run')), {}) or {})
    earlier_run['dir'] = compare_to
    return _compare.compare(earlier, docs, tolerance, earlier_run)
