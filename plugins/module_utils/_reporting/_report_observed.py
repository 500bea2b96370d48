# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The observe run's part of the fleet reports: the drives watched, and the forecast against what they did.

Private to this collection: may change without notice. Controller side only.

An observe run's host documents hold no verdict: each drive's ``observed``
entry (``_records.ObservedDrive``: the window judged with the drive's model,
the job it watched). ``_report.rows`` gives their rows (``observe`` true);
this module renders them, deciding nothing: the table of
templates/observed.*.j2 (observed class, data-phase rate, back-hitches
counted and replayed, tape ratio and its source, the window, the job) with a
section per drive, their JUnit cases, and the comparison with a qualify run
(``_compare.against_observed``) in templates/against_observed.*.j2 and its
JUnit suite. Every sentence comes from ``_words``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from ansible_collections.tapeops.qualify.plugins.module_utils import _run, _words
from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import _templates


def watched(rows):
    """The rows of observe runs' documents."""
    return [row for row in rows if row['observe']]


def entries(rows):
    """What the templates show per observed row: its cells, its sentence and notes."""
    out = []
    for row in watched(rows):
        entry = row['observed'] or {}
        seen = entry.get('observed') or {}
        if not row['drive']:
            cls = (row['status'] or 'no result').upper()
        else:
            cls = _words.observed_class(entry)
        out.append({
            'host': row['host'], 'drive': row['drive'] or '-', 'label': row['label'], 'cls': cls,
            'entry': entry or None, 'mb_s': seen.get('mb_s'), 'backhitches': _words.backhitch_pair(entry),
            'ratio': _words.tape_ratio_text(seen, short=True) if seen else '-',
            'window': _words.window_text(entry), 'job': _words.job_text(entry),
            'summary': _words.observed_summary(entry) if entry else (row['error'] or 'no result'),
            'notes': list(entry.get('notes') or []) + ([entry['job_error']] if entry.get('job_error') else []),
        })
    return out


def counts(items):
    """{class or status: drives} of the observed rows."""
    out = {}
    for item in items:
        out[item['cls']] = out.get(item['cls'], 0) + 1
    return out


def markdown(docs, rows):
    """The Markdown part of the observed drives (templates/observed.md.j2), '' without an observe run's row."""
    items = entries(rows)
    if not items:
        return ''
    hosts = sorted(set(item['host'] for item in items))
    return _templates.render('observed.md.j2', items=items, counts=counts(items), hosts=len(hosts),
                             drives=sum(1 for i in items if i['entry'])).rstrip('\n')


def html(rows):
    """The HTML part of the observed drives (templates/observed.html.j2), '' without an observe run's row."""
    items = entries(rows)
    if not items:
        return ''
    return _templates.render('observed.html.j2', items=items, counts=counts(items),
                             drives=sum(1 for i in items if i['entry'])).rstrip('\n')


# ---------------------------------------------------------------------------
# JUnit

PROPERTIES = (('observed_mb_s', 'mb_s'), ('need_floor_mb_s', 'need_floor_mb_s'),
              ('need_full_mb_s', 'need_full_mb_s'), ('backhitches_counted', 'backhitches'),
              ('tape_ratio', 'tape_ratio'), ('tape_ratio_source', 'tape_ratio_source'),
              ('data_seconds', 'data_seconds'))


def junit_case(suite, row, failing_classes):
    """One observed row's test case; ``(failures, errors, skipped)`` it adds.

    A drive whose observed class is in ``failing_classes`` fails, an idle one is skipped, one not judged or not
    watched (or a host without a result) is an error; the others pass with their sentence as output.
    """
    entry = row['observed'] or {}
    name = '%s (%s)' % (row['drive'], row['label'] or 'unknown drive') if row['drive'] else 'observe'
    case = ET.SubElement(suite, 'testcase', classname=row['host'], name=name)
    status = entry.get('status')
    summary = _words.observed_summary(entry) if entry else (row['error'] or 'no result')
    if status == 'idle':
        ET.SubElement(case, 'skipped', message=summary)
        return 0, 0, 1
    if status != 'judged':
        kind = _words.observed_class(entry) if row['drive'] else (row['status'] or 'missing').upper()
        ET.SubElement(case, 'error', type=kind.replace(' ', '_'), message=summary).text = summary
        return 0, 1, 0
    seen = entry.get('observed') or {}
    body = '\n'.join([summary, ''] + list(entry.get('notes') or []))
    failed = seen.get('class') in failing_classes
    if failed:
        ET.SubElement(case, 'failure', type=seen['class'], message=summary).text = body
    else:
        ET.SubElement(case, 'system-out').text = body
    props = ET.SubElement(case, 'properties')
    for name, key in PROPERTIES:
        ET.SubElement(props, 'property', name=name, value=str(seen.get(key)))
    ET.SubElement(props, 'property', name='backhitches_replayed', value=str((entry.get('forecast') or {}).get(
        'backhitches')))
    ET.SubElement(props, 'property', name='window_seconds', value=str(
        ((entry.get('window') or {}).get('window') or {}).get('seconds')))
    ET.SubElement(props, 'property', name='class', value=str(seen.get('class')))
    return (1 if failed else 0), 0, 0


# ---------------------------------------------------------------------------
# forecast against observed (a qualify run's forecast, this observe run's drives)

def _against_cells(pair):
    forecast, seen = pair['forecast'] or {}, pair['observed'] or {}
    predicted, counted = pair['backhitches_predicted'], pair['backhitches_counted']
    return {
        'forecast_class': forecast.get('class') or '-', 'observed_class': seen.get('class') or '-',
        'match': '-' if pair['class_match'] is None else 'yes' if pair['class_match'] else 'NO',
        'rates': '%s -> %s' % (_words.table_rate(forecast.get('feed_mb_s')), _words.table_rate(seen.get('mb_s'))),
        'delta': '-' if pair['rate_delta_pct'] is None else '%+.1f %%' % pair['rate_delta_pct'],
        'hitches': '%s / %s' % ('-' if predicted is None else '%.1f' % predicted,
                                '-' if counted is None and pair['status'] != 'compared'
                                else 'unknown' if counted is None else counted),
        # a compared pair's reasons are its cells again: only why a pair is not compared is said here
        'why': 'compared' if pair['status'] == 'compared' else '; '.join(pair['reasons']) or '-',
    }


def against_markdown(result):
    """The Markdown section of the forecast against observed (templates/against_observed.md.j2), as lines."""
    pairs = [dict(pair, cells=_against_cells(pair)) for pair in result.get('pairs') or []]
    return _templates.lines(_templates.render('against_observed.md.j2', result=result, pairs=pairs))


def against_html(result):
    """The HTML section of the forecast against observed (templates/against_observed.html.j2)."""
    pairs = [dict(pair, cells=_against_cells(pair)) for pair in result.get('pairs') or []]
    return _templates.render('against_observed.html.j2', result=result, pairs=pairs).rstrip('\n')


def against_junit(suites, result):
    """A test suite 'forecast_against_observed': one case per host x drive, its comparison as output (no failure:
    it says how far the forecast was right, nothing regresses)."""
    suite = ET.SubElement(suites, 'testsuite', name='tapeops.qualify.forecast_against_observed',
                          timestamp=_run.utc_now())
    if result.get('refused'):
        case = ET.SubElement(suite, 'testcase', classname='forecast_against_observed', name='compared with %s' % (
            result['earlier'].get('dir') or 'the qualify run'))
        ET.SubElement(case, 'system-out').text = result['refused']
        tests = 1
    else:
        for pair in result['pairs']:
            case = ET.SubElement(suite, 'testcase', classname=pair['host'],
                                 name='%s forecast against observed' % pair['drive'])
            text = '%s: %s' % (pair['status'], '; '.join(pair['reasons']) or '-')
            if pair['backhitches_predicted'] is not None:
                text += '; %s' % _words.backhitches_predicted(pair['backhitches_predicted'],
                                                              pair['backhitches_counted'])
            ET.SubElement(case, 'system-out').text = text
        tests = len(result['pairs'])
    for key, value in (('tests', tests), ('failures', 0), ('errors', 0), ('skipped', 0)):
        suite.set(key, str(value))
    suites.set('tests', str(int(suites.get('tests')) + tests))
