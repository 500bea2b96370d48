# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""What changed since an earlier run: per host x drive, with regressions marked.

Private to this collection: may change without notice. Pure Python, no
Ansible imports; the report writer (``_render``) loads both runs and calls
:func:`compare`; the Markdown is templates/compare.md.j2.

Admins re-run the qualify playbook after any change (a new HBA, a new block
size, a kernel update, more streams) and want to know, per drive, whether it
got better or worse. A drive regressed when:

- its class fell (STREAMING > SPEED-MATCHED > SHOE-SHINING; MISCONFIGURED
  ranks with SHOE-SHINING: the drive does not stream as set up), or
- the backup's forecast rate (``feed_now_mb_s``) or the measured drive path
  at its best block size (``drive_path_best_mb_s``: what the host-to-drive
  path can do, apart from the block size set; the fleet table's "Drive path"
  is the rate at the block size set) fell by more than ``tolerance`` (default 10 %:
  two lab runs of the same guest differ by up to 5 %), or
- it had a verdict before and has none now (the host failed or the drive is
  gone).

INCONCLUSIVE on either side is not compared (a too-short read says nothing
about a change); it is listed as such.

The decision is data (each change's ``why``: an id with the numbers behind
it); ``_words.compare_reason`` words it into the change's ``reasons``.

An observe run compared with a qualify run (:func:`against_observed`) sets,
per host x drive, what the qualify run forecast (its verdict's class at the
current settings, the backup's feed, the back-hitches an hour) against what
the drive did while real backups ran (the observed class and data-phase rate,
the back-hitches it counted): class match, the rate's difference in % and the
back-hitches the forecast's rate an hour predicts for the observed hours of
data. Nothing regresses there: it says how far the forecast was right.
"""

from __future__ import annotations

from ansible_collections.tapeops.qualify.plugins.module_utils import _records, _words
from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import _templates

DEFAULT_TOLERANCE = 0.10

RANK = {'SHOE-SHINING': 0, 'MISCONFIGURED': 0, 'SPEED-MATCHED': 1, 'STREAMING': 2}
# the verdict's numbers compared (their names in words: _words.COMPARED_NUMBERS)
NUMBERS = ('feed_now_mb_s', 'drive_path_best_mb_s', 'source_sustained_mb_s')


def _key(doc_host, item):
    return doc_host, str(item.get('id') or item.get('nst') or '-')


def index(docs):
    """{(host, drive): {'class', 'label', numbers...}} of every drive with a verdict, plus the hosts seen."""
    drives = {}
    hosts = {}
    for doc in docs or []:
        host = doc.get('host')
        if not host:
            continue
        hosts[host] = doc.get('status')
        for item, verdict in _records.drives_with_verdicts(doc):
            verdict = verdict or {}
            if not verdict.get('class'):
                continue
            numbers = verdict.get('numbers') or {}
            entry = {'class': verdict['class'], 'label': verdict.get('drive_label') or item.get('label')}
            for name in NUMBERS:
                value = numbers.get(name)
                entry[name] = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
            drives[_key(host, item)] = entry
    return drives, hosts


def _fell(before, after, tolerance):
    return before is not None and after is not None and before > 0 and after < before * (1.0 - tolerance)


def _pct(before, after):
    return round(100.0 * (after - before) / before, 1) if before else None


def compare(earlier_docs, docs, tolerance=DEFAULT_TOLERANCE, earlier_run=None):
    """Per host x drive what changed between ``earlier_docs`` and ``docs``.

    Returns {'earlier': run info, 'tolerance', 'changes': [...], 'regressions': n,
    'improvements': n}. Each change: host, drive, label, before, after (class and
    numbers, None when absent), status (regressed / improved / unchanged / new /
    gone / not compared) and the reasons in words.
    """
    if not 0 <= tolerance < 1:
        raise ValueError('compare tolerance must be between 0 and 1 (a fraction, 0.1 = 10 %%), got %r' % (tolerance,))
    before_drives, _before_hosts = index(earlier_docs)
    after_drives, after_hosts = index(docs)
    changes = []
    for key in sorted(set(before_drives) | set(after_drives)):
        host, drive = key
        before, after = before_drives.get(key), after_drives.get(key)
        status, why = _change(host, before, after, after_hosts, tolerance)
        changes.append({
            'host': host, 'drive': drive,
            'label': (after or before or {}).get('label'),
            'before': before, 'after': after, 'status': status,
            'reasons': [_words.compare_reason(reason) for reason in why],
        })
    return {
        'earlier': dict(earlier_run or {}),
        'tolerance': tolerance,
        'changes': changes,
        'regressions': sum(1 for c in changes if c['status'] == 'regressed'),
        'improvements': sum(1 for c in changes if c['status'] == 'improved'),
    }


def _change(host, before, after, after_hosts, tolerance):
    """(status, why) of one host x drive; ``why`` is a list of reasons as data (id and numbers)."""
    if before is None:
        return 'new', [{'id': 'new'}]
    if after is None:
        if host not in after_hosts:
            return 'not compared', [{'id': 'host_not_in_run'}]
        return 'regressed', [{'id': 'verdict_lost', 'class': before['class'], 'host_status': after_hosts.get(host)}]
    if 'INCONCLUSIVE' in (before['class'], after['class']):
        return 'not compared', [{'id': 'inconclusive', 'side': 'before' if before['class'] == 'INCONCLUSIVE'
                                 else 'now'}]
    why = []
    worse = better = False
    if before['class'] != after['class']:
        why.append({'id': 'class', 'before': before['class'], 'after': after['class']})
        rank_before, rank_after = RANK.get(before['class']), RANK.get(after['class'])
        if rank_before is not None and rank_after is not None:
            worse = rank_after < rank_before
            better = rank_after > rank_before
    for name in NUMBERS:
        old, new = before.get(name), after.get(name)
        fell, rose = _fell(old, new, tolerance), _fell(new, old, tolerance)
        if fell or rose:
            why.append({'id': 'number', 'name': name, 'before': old, 'after': new, 'pct': _pct(old, new)})
            # the sources' rate is not the drive's: it says why, it does not make the drive better or worse
            if name != 'source_sustained_mb_s':
                worse, better = worse or fell, better or rose
    return 'regressed' if worse else 'improved' if better else 'unchanged', why


# ---------------------------------------------------------------------------
# forecast (a qualify run) against observed (an observe run)


def _number(value):
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def forecasts(docs):
    """{(host, drive): {'class', 'feed_mb_s', 'backhitches_per_hour', 'label'}} of the real drives' verdicts."""
    out = {}
    for doc in docs or []:
        for item, verdict in _records.drives_with_verdicts(doc):
            if not verdict or not verdict.get('class') or item.get('what_if') or not doc.get('host'):
                continue
            numbers = verdict.get('numbers') or {}
            now = ((verdict.get('forecast') or {}).get('now') or {})
            per_hour = numbers.get('backhitches_per_hour_now')
            out[_key(doc['host'], item)] = {
                # today's class: MISCONFIGURED says a setting is wrong; what the drive does now is this
                'class': verdict.get('class_at_current_settings') or verdict['class'],
                'feed_mb_s': _number(numbers.get('feed_now_mb_s')),
                'backhitches_per_hour': _number(per_hour if per_hour is not None else now.get('backhitches_per_hour')),
                'label': verdict.get('drive_label') or item.get('label'),
            }
    return out


def observations(docs):
    """({(host, drive): observed entry}, {host: status}) of the observe runs' documents among ``docs``."""
    seen, hosts = {}, {}
    for doc in docs or []:
        if not _records.observe_document(doc) or not doc.get('host'):
            continue
        hosts[doc['host']] = doc.get('status')
        for item, entry in _records.drives_with_observed(doc):
            if entry:
                seen[_key(doc['host'], item)] = dict(entry, label=item.get('label'))
    return seen, hosts


def against_observed(earlier_docs, docs, earlier_run=None):
    """Per host x drive: the qualify run's forecast (``earlier_docs``) against what the observe run saw (``docs``).

    Returns {'earlier', 'pairs': [...], 'compared': n, 'class_matches': n}. Each pair: host, drive, label,
    status (compared / not compared), forecast (class, feed_mb_s, backhitches_per_hour), observed (class, mb_s,
    data_seconds, backhitches), class_match, rate_delta_pct (the forecast's feed against the observed rate, as the
    observed window's own agreement), backhitches_predicted (the forecast's rate an hour times the observed data
    hours), backhitches_counted (by the drive; None without its counter), and the reasons in words.
    """
    before = forecasts(earlier_docs)
    seen, hosts = observations(docs)
    pairs = [_pair(key, before.get(key), seen.get(key), hosts) for key in sorted(set(before) | set(seen))]
    return {
        'earlier': dict(earlier_run or {}),
        'pairs': pairs,
        'compared': sum(1 for p in pairs if p['status'] == 'compared'),
        'class_matches': sum(1 for p in pairs if p['class_match']),
    }


def _pair(key, forecast, entry, hosts):
    host, drive = key
    seen = (entry or {}).get('observed') or {}
    shown = dict((k, seen.get(k)) for k in ('class', 'mb_s', 'data_seconds', 'backhitches')) if seen else None
    out = {'host': host, 'drive': drive, 'label': (forecast or {}).get('label') or (entry or {}).get('label'),
           'status': 'not compared', 'forecast': forecast, 'observed': shown,
           'class_match': None, 'rate_delta_pct': None, 'backhitches_predicted': None, 'backhitches_counted': None}
    why = _not_compared(host, forecast, entry, hosts)
    if why is None:
        why = _compared(out, forecast, seen)
    out['reasons'] = [_words.against_observed_reason(reason) for reason in why]
    return out


def _not_compared(host, forecast, entry, hosts):
    """Why a pair is not compared (reasons as data), or None when both sides can be."""
    if forecast is None:
        return [{'id': 'no_forecast'}]
    if entry is None:
        return [{'id': 'host_not_in_run'}] if host not in hosts else [{'id': 'not_observed', 'status': None}]
    if entry.get('status') != 'judged':
        return [{'id': 'not_observed', 'status': entry.get('status')}]
    if _records.INCONCLUSIVE in (forecast['class'], (entry.get('observed') or {}).get('class')):
        return [{'id': 'inconclusive', 'side': 'forecast' if forecast['class'] == _records.INCONCLUSIVE
                 else 'observed'}]
    return None


def _compared(out, forecast, seen):
    """Fill ``out`` with the comparison of a forecast and an observed data phase; its reasons as data."""
    out['status'] = 'compared'
    out['class_match'] = forecast['class'] == seen.get('class')
    why = [{'id': 'class', 'forecast': forecast['class'], 'observed': seen.get('class')}]
    observed_rate = _number(seen.get('mb_s'))
    if forecast['feed_mb_s'] is not None and observed_rate:
        out['rate_delta_pct'] = round(100.0 * (forecast['feed_mb_s'] - observed_rate) / observed_rate, 1) + 0.0
        why.append({'id': 'rate', 'forecast': forecast['feed_mb_s'], 'observed': observed_rate,
                    'pct': out['rate_delta_pct']})
    hours = (_number(seen.get('data_seconds')) or 0.0) / 3600.0
    if forecast['backhitches_per_hour'] is not None and hours:
        out['backhitches_predicted'] = round(forecast['backhitches_per_hour'] * hours, 1)
    out['backhitches_counted'] = seen.get('backhitches')
    return why


def refused(compare_to, reason):
    """The comparison's place in the reports when it cannot be made: the earlier directory and why not.

    ``reason`` is the RunError's message (``_run.load_earlier``); the
    templates show it instead of the table.
    """
    return {'earlier': {'dir': compare_to}, 'tolerance': DEFAULT_TOLERANCE, 'changes': [], 'regressions': 0,
            'improvements': 0, 'refused': reason}


def refused_against(compare_to, reason):
    """The forecast-against-observed section's place in the reports when the qualify run cannot be read."""
    return {'earlier': {'dir': compare_to}, 'pairs': [], 'compared': 0, 'class_matches': 0, 'refused': reason}


def markdown(result):
    """The Markdown section (a list of lines) of a comparison (templates/compare.md.j2)."""
    return _templates.lines(_templates.render('compare.md.j2', result=result, percent=round(100 * result['tolerance'])))
