# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The fleet reports of a run directory: summary.md, report.html, junit.xml and the host pages.

Private to this collection: may change without notice. Controller side only
(the ``qualify_report`` action). ``_report`` loads the host documents and
builds the fleet's rows; this module turns them into the reports: the
Markdown and HTML through the Jinja2 templates under ``templates/``
(``_templates``), the charts as SVG (``_charts``, ``templates/chart.svg.j2``), JUnit XML with
ElementTree. The reports are built only from the JSON files, so a re-run (or a
run where some hosts failed) reports on what is there.
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET

from ansible_collections.tapeops.qualify.plugins.module_utils import _records, _run, _words
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _health
from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import (
    _charts, _compare, _fleet, _report, _report_index, _report_mechanics, _report_observed, _templates)


def health_view(health):
    """What the templates show of a drive's health (a document's dict), in ``_words``' words, or None.

    ``{'status', 'cell', 'summary', 'findings': [{'status', 'text', 'fix', 'source', 'estimate'}], 'unknown':
    [sentence]}``.
    """
    if not isinstance(health, dict):
        return None
    findings = [f for f in health.get('findings') or [] if isinstance(f, dict)]
    return {
        'status': health.get('status') or _records.HEALTH_UNKNOWN, 'cell': _words.health_cell(health),
        'summary': _words.health_summary(health),
        'findings': [{'status': f.get('status'), 'text': _words.health_finding(f), 'fix': _words.health_fix(f.get('fix')),
                      'source': _health.SOURCES.get(f.get('source'), f.get('source')), 'estimate': f.get('estimate')}
                     for f in findings],
        'unknown': [_words.health_unknown(what, str(why)) for what, why in sorted((health.get('unknown') or {}).items())],
    }


def _page_rows(docs, charts=None):
    """``_report.rows`` with what the templates show beside a verdict: its words and (HTML) its charts, and the
    drive's health (``health_view``)."""
    out = []
    for index, row in enumerate(_report.rows(docs)):
        row = dict(row, restore=None, interface=None, charts=None, health_view=health_view(row['health']))
        if row['verdict']:
            row['restore'] = _words.restore_words(row['verdict']['numbers'])
            row['interface'] = _words.interface_words(row['verdict']['numbers'])
            if charts is not None:
                row['charts'] = _drive_charts(charts, row, 'd%d' % index)
        out.append(row)
    return out


def _drive_charts(charts, row, salt):
    """[(chart name, SVG markup or None for 'no sweep')] of one drive, in page order."""
    doc, item, verdict = row['doc'], row['item'] or {}, row['verdict']
    numbers = verdict['numbers']
    source = doc.get('source') or {}
    series = [float(x) for x in ((source.get('aggregate') or {}).get('series_mb_s') or []) if x is not None]
    # a write with a note (failed, refused) has no sweep to chart, even with the steps measured before it stopped
    sweep = [] if item.get('write_note') else ((item.get('write_sweep') or {}).get('sweep')) or []
    out = [('feed', charts.feed(numbers, salt)), ('series', charts.series(series, numbers, salt))]
    curve = sorted((int(r['streams']), float(r['mean_mb_s'])) for r in (source.get('scaling') or [])
                   if isinstance(r, dict) and r.get('streams') and r.get('mean_mb_s') is not None)
    if len(curve) >= 2:
        out.append(('scaling', charts.scaling(curve, numbers, salt)))
    trace = (verdict.get('forecast') or {}).get('trace') or []
    if trace:
        out.append(('trace', charts.drive_trace(trace, numbers, salt)))
    out.append(('sweep', charts.sweep(sweep, numbers, salt) if sweep else None))
    return [(name, _templates.safe(svg) if svg else None) for name, svg in out]


def _counts(all_rows):
    counts = {}
    for row in all_rows:
        key = (row['verdict'] or {}).get('class') or (row['status'] or 'no result').upper()
        counts[key] = counts.get(key, 0) + 1
    return counts


# ---------------------------------------------------------------------------
# Markdown


def fleet_markdown(docs, run=None):
    """summary.md (templates/fleet.md.j2 with the observed drives, the media and mechanics sections).

    The verdicts' table is there unless every row is an observe run's (then the observed drives' part alone).
    """
    all_rows = _page_rows(docs)
    measured = [r for r in all_rows if not r['observe']]
    with_health = _report.health_read(measured)
    text = _templates.render(
        'fleet.md.j2', docs=docs, run=run or {}, generated=_run.utc_now(), rows=measured, with_health=with_health,
        health_totals=_words.health_totals(_report.health_totals(measured)) if with_health else None,
        qualifying=bool(measured) or len(measured) == len(all_rows),
        observed=_report_observed.markdown(docs, all_rows),
        counts=_counts(measured), verdicts=sum(1 for r in measured if r['verdict']),
        media='\n'.join(media_markdown(docs)), mechanics='\n'.join(_report_mechanics.markdown(docs)))
    return text.rstrip('\n') + '\n'


def _media_docs(docs):
    return [(d['host'], d['media']) for d in docs if isinstance(d.get('media'), dict)]


_MEDIA_ORDER = dict((m, i) for i, m in enumerate(['L1', 'L2', 'L3', 'L4', 'L5', 'L6', 'L7', 'M8', 'L8', 'L9', 'LA',
                                                 'PA', 'unknown']))


def _media_mix(lib):
    """[(media ID, count, class)] of a library, oldest media first."""
    cls_of = {}
    for key in ('stranded', 'read_only'):
        for row in lib.get(key) or []:
            cls_of[row.get('media')] = 'stranded' if key == 'stranded' else 'read'
    out = []
    for media, count in sorted((lib.get('by_generation') or {}).items(), key=lambda kv: _MEDIA_ORDER.get(kv[0], 99)):
        cls = None if media == 'unknown' else cls_of.get(media, 'write')
        out.append((None if media == 'unknown' else media, count, cls))
    return out


def media_markdown(docs):
    """Lines of the Markdown media section (empty when no host has one; templates/media.md.j2)."""
    items = _media_docs(docs)
    if not items:
        return []
    return _templates.lines(_templates.render('media.md.j2', items=items))


def media_html(docs, charts=None):
    """HTML parts of the media section (empty when no host has one; templates/media.html.j2)."""
    items = _media_docs(docs)
    if not items:
        return []
    bars = [('%s %s' % (host, lib['id']), _media_mix(lib)) for host, media in items if media.get('status') == 'ok'
            for lib in media['libraries']]
    chart = None
    if charts is not None and not isinstance(charts, _report.ReportError) and bars:
        chart = _templates.safe(charts.media(bars, 'media'))
    return [_templates.render('media.html.j2', items=items, chart=chart).rstrip('\n')]


# ---------------------------------------------------------------------------
# JUnit XML


def junit_xml(docs, failing_classes=_report.DEFAULT_FAILING_CLASSES, run=None, comparison=None,
              fail_on_regression=False, against=None):
    """junit.xml: a case per host x drive (an observe run's: ``_report_observed.junit_case``), a suite for the
    comparison with an earlier run (``comparison``) and one for the forecast against observed (``against``)."""
    run = run or {}
    suite_name = 'tapeops.qualify.%s' % (run.get('mode') or 'qualify')
    suites = ET.Element('testsuites', name='tapeops.qualify')
    suite = ET.SubElement(suites, 'testsuite', name=suite_name, timestamp=_run.utc_now())
    tests = failures = errors = skipped = 0
    for row in _report.rows(docs):
        tests += 1
        if row['observe']:
            added = _report_observed.junit_case(suite, row, failing_classes)
            failures, errors, skipped = failures + added[0], errors + added[1], skipped + added[2]
            continue
        verdict = row['verdict']
        name = '%s (%s)' % (row['drive'], row['label']) if row['drive'] else 'qualify'
        case = ET.SubElement(suite, 'testcase', classname=row['host'], name=name)
        if not verdict:
            errors += 1
            err = ET.SubElement(case, 'error', type=(row['status'] or 'missing').upper(),
                                message=row['error'] or 'no result')
            err.text = row['error'] or 'no result'
            continue
        body = '\n'.join([verdict['summary'], ''] + verdict['reasons'] + [''] + [
            '%d. %s: %s. %s' % (f['rank'], f['title'], f['setting'], f['why']) for f in verdict['fixes']])
        if verdict['class'] in failing_classes or (
                _records.SHOE_SHINING in failing_classes and verdict.get('would_shoe_shine')):
            failures += 1
            fail = ET.SubElement(case, 'failure', type=verdict['class'], message=verdict['summary'])
            fail.text = body
        else:
            out = ET.SubElement(case, 'system-out')
            out.text = body
        props = ET.SubElement(case, 'properties')
        for key in ('source_sustained_mb_s', 'need_floor_mb_s', 'need_full_mb_s', 'feed_now_mb_s'):
            ET.SubElement(props, 'property', name=key, value=str(verdict['numbers'].get(key)))
        ET.SubElement(props, 'property', name='class', value=verdict['class'])
    for element in (suites, suite):
        element.set('tests', str(tests))
        element.set('failures', str(failures))
        element.set('errors', str(errors))
    suite.set('skipped', str(skipped))
    if skipped:
        suites.set('skipped', str(skipped))
    if _report.health_read(_report.rows(docs)):
        _junit_health(suites, _report.rows(docs))
    if comparison is not None:
        _junit_comparison(suites, comparison, fail_on_regression)
    if against is not None:
        _report_observed.against_junit(suites, against)
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding='unicode') + '\n'


def _junit_health(suites, all_rows):
    """A test suite 'health': one case per drive with a health entry. FAILING is a failure; CLEAN and DEGRADED
    pass with a ``severity`` property ``warning`` and the findings on system-err (JUnit has no warning); a drive
    whose health was not read is skipped; OK passes."""
    suite = ET.SubElement(suites, 'testsuite', name='tapeops.qualify.health', timestamp=_run.utc_now())
    tests = failures = skipped = 0
    for row in all_rows:
        view = health_view(row['health'])
        if view is None:
            continue
        tests += 1
        case = ET.SubElement(suite, 'testcase', classname=row['host'], name='%s health' % row['drive'])
        lines = ['%s: %s %s' % (f['status'], f['text'], f['fix']) for f in view['findings']]
        body = '\n'.join([view['summary']] + lines + view['unknown'])
        status = view['status']
        if status == _records.HEALTH_FAILING:
            failures += 1
            ET.SubElement(case, 'failure', type=status, message=view['summary']).text = body
        elif status == _records.HEALTH_UNKNOWN:
            skipped += 1
            ET.SubElement(case, 'skipped', message=view['summary']).text = body
        elif status in (_records.HEALTH_CLEAN, _records.HEALTH_DEGRADED):
            ET.SubElement(case, 'system-err').text = 'WARNING %s' % body
        else:
            ET.SubElement(case, 'system-out').text = body
        props = ET.SubElement(case, 'properties')
        ET.SubElement(props, 'property', name='health', value=status)
        ET.SubElement(props, 'property', name='severity', value=(
            'error' if status == _records.HEALTH_FAILING else 'warning' if status in (
                _records.HEALTH_CLEAN, _records.HEALTH_DEGRADED) else 'none'))
    for key, value in (('tests', tests), ('failures', failures), ('errors', 0), ('skipped', skipped)):
        suite.set(key, str(value))
    suites.set('tests', str(int(suites.get('tests')) + tests))
    suites.set('failures', str(int(suites.get('failures')) + failures))
    if skipped:
        suites.set('skipped', str(int(suites.get('skipped') or 0) + skipped))


def _junit_comparison(suites, comparison, fail_on_regression):
    """A test suite 'compare': one case per host x drive, a failure per regression when asked."""
    suite = ET.SubElement(suites, 'testsuite', name='tapeops.qualify.compare', timestamp=_run.utc_now())
    failures = errors = 0
    if comparison.get('refused'):
        # no comparison could be made: with fail_on_regression that is an error (the run is not shown sound)
        case = ET.SubElement(suite, 'testcase', classname='compare', name='compared with %s' % (
            comparison['earlier'].get('dir') or 'the earlier run'))
        if fail_on_regression:
            errors = 1
            ET.SubElement(case, 'error', type='NOT_COMPARED', message=comparison['refused']).text = comparison['refused']
        else:
            ET.SubElement(case, 'system-out').text = comparison['refused']
        suite.set('tests', '1')
        suite.set('failures', '0')
        suite.set('errors', str(errors))
        suite.set('skipped', '0')
        suites.set('tests', str(int(suites.get('tests')) + 1))
        suites.set('errors', str(int(suites.get('errors')) + errors))
        return
    for change in comparison['changes']:
        case = ET.SubElement(suite, 'testcase', classname=change['host'], name='%s compared with %s' % (
            change['drive'], comparison['earlier'].get('id') or 'the earlier run'))
        text = '%s: %s' % (change['status'], '; '.join(change['reasons']) or 'no change')
        if change['status'] == 'regressed' and fail_on_regression:
            failures += 1
            ET.SubElement(case, 'failure', type='REGRESSION', message=text).text = text
        else:
            ET.SubElement(case, 'system-out').text = text
    suite.set('tests', str(len(comparison['changes'])))
    suite.set('failures', str(failures))
    suite.set('errors', '0')
    suite.set('skipped', '0')
    suites.set('tests', str(int(suites.get('tests')) + len(comparison['changes'])))
    suites.set('failures', str(int(suites.get('failures')) + failures))


# ---------------------------------------------------------------------------
# HTML


def comparison_html(comparison):
    """The HTML section of a comparison with an earlier run (templates/compare.html.j2)."""
    return _templates.render('compare.html.j2', comparison=comparison,
                             percent=round(100 * comparison['tolerance'])).rstrip('\n')


def settings_html(settings):
    """The HTML section of the fleet settings table (``_fleet``), one table per drive generation."""
    return _templates.render('settings.html.j2', groups=_fleet.groups(settings, with_rows=True),
                             header=_fleet.HEADER).rstrip('\n')


def fleet_html(docs, run=None, charts=None, host=None, host_pages=None, sections=()):
    """The self-contained HTML page (templates/fleet.html.j2; no external files, no scripts).

    ``host``: the page of that one host (a link back to the fleet report);
    ``host_pages``: {host: link} listed under the heading; ``sections``: more
    HTML sections (settings, comparison) at the end.
    """
    if charts is None:
        try:
            charts = _charts.Charts()
        except _report.ReportError as exc:
            charts = exc
    charts_error = None
    if isinstance(charts, _report.ReportError):
        charts_error = str(charts)
        charts = None
    extra = [_templates.safe(p) for p in media_html(docs, charts) + _report_mechanics.html(docs) + list(sections)]
    all_rows = _page_rows(docs, charts)
    measured = [r for r in all_rows if not r['observe']]
    observed = _report_observed.html(all_rows)
    with_health = _report.health_read(measured)
    return _templates.render(
        'fleet.html.j2', run=run or {}, generated=_run.utc_now(), rows=measured, with_health=with_health,
        health_totals=_words.health_totals(_report.health_totals(measured)) if with_health else None,
        health_rows=[r for r in measured if r['health_view']],
        qualifying=bool(measured) or len(measured) == len(all_rows),
        observed=_templates.safe(observed) if observed else None,
        charts_error=charts_error, host=host, fleet_link=_run.REPORT_HTML,
        host_pages=sorted((host_pages or {}).items()), sections=extra)


# ---------------------------------------------------------------------------
# everything at once


def host_page_link(host):
    """A host page's path relative to the run directory (and so to report.html)."""
    return _run.host_page(host)


# Host pages are written by this many processes at most (the controller's cores); fewer pages than
# PARALLEL_MIN_PAGES a process are not worth a fork.
PARALLEL_MIN_PAGES = 20


def write_host_pages(run_dir, docs, run, charts, workers=None):
    """One page per host with a result (``hosts/<host>.html``): its drives with their charts.

    The pages are independent files: with ``workers`` > 1 (default: the controller's CPUs) and enough pages,
    forked processes write a share each (:func:`_pages_in_parallel`). Returns {host: link relative to the run
    directory}.
    """
    todo = [doc for doc in docs if doc.get('status') != _run.STATUS_MISSING]
    links = dict((doc['host'], host_page_link(doc['host'])) for doc in todo)

    def write(share):
        for doc in share:
            _run.atomic_write(os.path.join(run_dir, links[doc['host']]),
                              fleet_html([doc], run, charts, host=str(doc['host'])))
    if workers is None:
        workers = len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else (os.cpu_count() or 1)
    workers = max(1, min(int(workers), len(todo) // PARALLEL_MIN_PAGES))
    if workers > 1 and hasattr(os, 'fork'):
        _pages_in_parallel([todo[i::workers] for i in range(workers)], write)
    else:
        write(todo)
    return links


def _pages_in_parallel(shares, write):
    """``write(share)`` for each share: the first here, each other in a forked child.

    A child that fails (its exit status not 0) has its share written again here, so that its error is raised as
    it would be without the children, and no page is left unwritten.
    """
    children = []
    for share in shares[1:]:
        pid = os.fork()
        if pid == 0:                 # the child: write, and leave without the parent's exit handlers
            status = 1
            try:
                write(share)
                status = 0
            finally:
                os._exit(status)     # pylint: disable=protected-access
        children.append((pid, share))
    try:
        write(shares[0])
    finally:
        failed = [share for pid, share in children if os.waitpid(pid, 0)[1] != 0]
    for share in failed:
        write(share)


def read_run(run_dir, expected_hosts=None):
    """The host documents of ``run_dir`` (``_run.load_run``); a RunError when the directory does not exist."""
    if not os.path.isdir(run_dir):
        raise _run.RunError('Run directory %s does not exist: run the qualify playbook first, or point '
                            'qualify_run_dir at an existing run.' % run_dir)
    return _run.load_run(run_dir, expected_hosts)


def _comparison(run_dir, docs, compare_to):
    """(the comparison with the run at ``compare_to``, or None; the forecast against observed, or None; why they
    could not be made, or None): ``_report.load_comparison``.

    A comparison that cannot be made is said in the reports (and fails the task with fail_on_regression,
    qualify_report): the reports of this run are written all the same.
    """
    if not compare_to:
        return None, None, None
    try:
        if os.path.realpath(compare_to) == os.path.realpath(run_dir):
            raise _run.RunError('qualify_compare_to is this run\'s own directory (%s): give an earlier run.'
                                % run_dir, reason='compare_refused')
        return _report.load_comparison(compare_to, docs) + (None,)
    except _run.RunError as exc:
        return None, None, str(exc)


def _compared_sections(docs, compare_to, comparison, against, error):
    """(Markdown lines, HTML sections, the comparison JUnit shows, the forecast against observed JUnit shows) of
    the comparisons with ``compare_to``: what changed (a qualify run) and the forecast against observed (an
    observe run); a refused one in the place of each that this run's documents ask for."""
    if not compare_to:
        return [], [], None, None
    watching = any(_records.observe_document(d) for d in docs)
    if error:
        comparison = None if watching and all(_records.observe_document(d) for d in docs) else \
            _compare.refused(compare_to, error)
        against = _compare.refused_against(compare_to, error) if watching else None
    lines, sections = [], []
    if comparison is not None:
        lines.extend(_compare.markdown(comparison))
        sections.append(comparison_html(comparison))
    if against is not None:
        lines.extend(([''] if lines else []) + _report_observed.against_markdown(against))
        sections.append(_report_observed.against_html(against))
    return lines, sections, comparison, against


def write_against_observed(run_dir, run, against):
    """Write against_observed.json: the forecast against observed the reports show (``_compare.against_observed``,
    or the refused one), with this run's ``run``; {'against_observed': its path}. Without one, an earlier
    rebuild's file is removed, so that the run directory holds no comparison its reports do not; {}."""
    path = os.path.join(run_dir, _run.AGAINST_OBSERVED_JSON)
    if against is None:
        try:
            os.remove(path)
        except FileNotFoundError:
            pass
        return {}
    return {'against_observed': _run.atomic_write(
        path, json.dumps(dict(against, run=run), indent=2, sort_keys=True, default=str) + '\n')}


def write_fleet(run_dir, expected_hosts=None, run=None, failing_classes=_report.DEFAULT_FAILING_CLASSES,
                compare_to=None, fail_on_regression=False):
    """Write summary.md, report.html, junit.xml and the host pages from the run's JSON files.

    report.html is one page with every drive when the fleet has at most
    ``_report_index.INLINE_MAX_HOSTS`` hosts, else the index (``_report_index``);
    hosts/<host>.html has one host's drives with their charts.

    compare_to: the directory of an earlier run; the reports then say per host x
    drive what changed (``_compare``), and JUnit marks a regression as a failure
    when ``fail_on_regression``.

    A comparison that cannot be made (``compare_to`` missing, this run's own
    directory, or any of its documents unreadable or of another schema:
    ``_run.load_earlier``) is not made: the reports say why, JUnit counts
    it as an error with ``fail_on_regression``, and ``comparison_error``
    holds the reason; everything else is written as without ``compare_to``.

    An observe run's documents are compared with ``compare_to`` as the forecast against what the drives did
    (``_compare.against_observed``: the reports' "Forecast against observed" and its JUnit suite).

    Returns {'docs', 'paths', 'failing', 'comparison', 'against_observed', 'comparison_error'}.
    """
    docs = read_run(run_dir, expected_hosts)
    if not run:
        run = next((d.get('run') for d in docs if d.get('run')), {}) or {}
    try:
        charts = _charts.Charts()
    except _report.ReportError as exc:
        charts = exc
    host_pages = write_host_pages(run_dir, docs, run, charts)
    markdown = fleet_markdown(docs, run)
    sections = []
    settings = _fleet.settings_rows(docs)
    if settings:
        markdown = markdown.rstrip('\n') + '\n\n' + '\n'.join(_fleet.settings_markdown(settings)).rstrip('\n') + '\n'
        sections.append(settings_html(settings))
    comparison, against, comparison_error = _comparison(run_dir, docs, compare_to)
    lines, parts, shown, shown_against = _compared_sections(docs, compare_to, comparison, against, comparison_error)
    if lines:
        markdown = markdown.rstrip('\n') + '\n\n' + '\n'.join(lines).rstrip('\n') + '\n'
        sections.extend(parts)
    if len(docs) <= _report_index.INLINE_MAX_HOSTS:
        # a small fleet: one page with every drive and its charts, linking the host pages
        page = fleet_html(docs, run, charts, host_pages=host_pages, sections=sections)
    else:
        page = _report_index.index_html(docs, _report.rows(docs), run, lambda host: host_pages.get(host) or '#',
                                        _run.utc_now(), sections)
    paths = {
        'json': [_run.host_json_path(run_dir, d['host']) for d in docs if d['status'] != _run.STATUS_MISSING],
        'markdown': _run.atomic_write(os.path.join(run_dir, _run.SUMMARY_MD), markdown),
        'junit': _run.atomic_write(os.path.join(run_dir, _run.JUNIT_XML), junit_xml(
            docs, failing_classes, run, shown if (comparison or comparison_error) else None, fail_on_regression,
            shown_against)),
        'html': _run.atomic_write(os.path.join(run_dir, _run.REPORT_HTML), page),
        'host_pages': [os.path.join(run_dir, link) for link in host_pages.values()],
    }
    paths.update(write_against_observed(run_dir, run, shown_against))
    return {'docs': docs, 'paths': paths, 'failing': _report.failing(docs, failing_classes), 'comparison': comparison,
            'against_observed': against, 'comparison_error': comparison_error}
