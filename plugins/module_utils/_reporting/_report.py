# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Controller-side reports of a qualify run.

Private to this collection: may change without notice. Used by the
``qualify_verdict`` and ``qualify_report`` actions on the controller (never
shipped to managed hosts, no module imports it).

One run directory holds:

- ``hosts/<host>.json``: one document per host, written as soon as the host's
  verdict exists (schema ``tapeops.qualify/host-report/v1``, docs/reports.md);
- ``summary.md``: the fleet in Markdown;
- ``report.html``: one self-contained page with charts (matplotlib, inline SVG);
- ``junit.xml``: one test case per host x drive for CI systems.

The fleet reports are built only from the JSON files, so a re-run (or a run
where some hosts failed) reports on what is there.
"""

from __future__ import annotations

import datetime
import html
import io
import json
import os
import re
import tempfile
import xml.etree.ElementTree as ET

from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _verdict

from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import _compare, _fleet, _report_index, _report_mechanics
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _hba_link

SCHEMA = 'tapeops.qualify/host-report/v1'
HOSTS_DIR = 'hosts'
SUMMARY_MD = 'summary.md'
REPORT_HTML = 'report.html'
JUNIT_XML = 'junit.xml'

STATUS_OK = 'ok'
STATUS_FAILED = 'failed'
STATUS_MISSING = 'missing'

DEFAULT_FAIL_ON = (_verdict.SHOE_SHINING, _verdict.MISCONFIGURED)

_CLASS_COLORS = {
    _verdict.STREAMING: '#1a7f37',
    _verdict.SPEED_MATCHED: '#9a6700',
    _verdict.SHOE_SHINING: '#cf222e',
    _verdict.MISCONFIGURED: '#8250df',
    _verdict.INCONCLUSIVE: '#57606a',
    None: '#57606a',
}

_SAFE_NAME = re.compile(r'[^A-Za-z0-9._-]+')


class ReportError(Exception):
    """A report cannot be written; the message says what to do."""


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()


def safe_name(host):
    """File name for a host (inventory names may hold ':' or '/')."""
    name = _SAFE_NAME.sub('_', str(host)).strip('._')
    if not name:
        raise ReportError('Host name %r gives no usable file name.' % (host,))
    return name


def atomic_write(path, text):
    """Write ``text`` to ``path`` through a temporary file and a rename."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix='.%s.' % os.path.basename(path), dir=directory)
    try:
        with os.fdopen(fd, 'w', encoding='utf-8') as handle:
            handle.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


# ---------------------------------------------------------------------------
# per-host JSON


def host_document(host, status=STATUS_OK, drives=None, source=None, host_facts=None, run=None, error=None,
                  preflight=None, media=None, mechanics=None):
    """The per-host document (see docs/reports.md for every key)."""
    drives = list(drives or [])
    classes = [(d.get('verdict') or {}).get('class') for d in drives]
    return {
        'schema': SCHEMA,
        'host': str(host),
        'status': status,
        'error': error,
        'generated_at': utc_now(),
        'run': dict(run or {}),
        'host_facts': dict(host_facts or {}),
        'preflight': preflight,
        'media': media,
        'mechanics': mechanics,
        'source': source,
        'drives': drives,
        'worst_class': _verdict.worst([c for c in classes if c]),
    }


def host_json_path(run_dir, host):
    return os.path.join(run_dir, HOSTS_DIR, safe_name(host) + '.json')


def write_host(run_dir, document):
    """Write one host's JSON now (before any other host finishes)."""
    return atomic_write(host_json_path(run_dir, document['host']),
                        json.dumps(document, indent=2, sort_keys=True, default=str) + '\n')


def load_run(run_dir, expected_hosts=None):
    """All host documents of a run directory, plus a 'missing' entry for each expected host without one."""
    hosts_dir = os.path.join(run_dir, HOSTS_DIR)
    docs = []
    seen = set()
    if os.path.isdir(hosts_dir):
        for name in sorted(os.listdir(hosts_dir)):
            if not name.endswith('.json') or name.startswith('.'):
                continue
            path = os.path.join(hosts_dir, name)
            try:
                with open(path, encoding='utf-8') as handle:
                    doc = json.load(handle)
            except (OSError, ValueError) as exc:
                doc = host_document(name[:-5], STATUS_FAILED,
                                    error='Cannot read %s (%s): delete it and re-run this host.' % (path, exc))
            if doc.get('schema') != SCHEMA:
                doc = host_document(doc.get('host') or name[:-5], STATUS_FAILED,
                                    error='%s is not a %s document: it was not written by this collection.' % (
                                        path, SCHEMA))
            docs.append(doc)
            seen.add(doc['host'])
    for host in expected_hosts or ():
        if str(host) not in seen:
            docs.append(host_document(host, STATUS_MISSING,
                                      error='No result: the host was unreachable or failed before its verdict '
                                            '(see the play output); re-run with -l %s.' % host))
    docs.sort(key=lambda d: d['host'])
    return docs


# ---------------------------------------------------------------------------
# assembling a host's verdicts from the modules' results


def _device_of(item):
    """The nst path a drive entry / write result / inventory setting refers to."""
    if not isinstance(item, dict):
        return None
    for key in ('nst', 'device', 'path'):
        if item.get(key):
            return str(item[key])
    for key in ('item', 'drive'):
        inner = item.get(key)
        if isinstance(inner, dict) and _device_of(inner):
            return _device_of(inner)
    args = (item.get('invocation') or {}).get('module_args') or {}
    if args.get('device'):
        return str(args['device'])
    return None


def _match(nst, entries):
    for entry in entries or []:
        if _device_of(entry) == nst:
            return entry
    return None


def resolve_spec(info, setting):
    """DriveSpec for a drive, from the collection's one drive resolver (``_judge._resolve``).

    ``info``: the tape_drive_info entry; ``setting``: its tapeops_drives entry.
    The identity the spec rests on (with the inventory applied) and the spec
    replace ``info['generation']`` and ``info['drive_model']``, so the host
    document records the drive the verdict used.
    """
    from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _resolve

    info = info if isinstance(info, dict) else {}
    identity, spec = _resolve.resolve(info, setting or None)
    info['generation'] = identity.to_dict()
    info['drive_model'] = spec.as_dict() if spec is not None else None
    if spec is None:
        raise ReportError(
            'Cannot tell the LTO generation of %s: %s; set generation (e.g. "LTO-7") for it in tapeops_drives in '
            'the inventory.' % (_device_of(info) or _device_of(setting) or 'the drive', identity.reason))
    return spec


_SETTING_KEYS = ('block_size_bytes', 'segment_size_mb', 'immediate_filemarks', 'concurrency')


def _write_hung(tape):
    """Why the write test says the drive hung (a tape operation past its deadline), or None."""
    if not isinstance(tape, dict) or not tape.get('failed'):
        return None
    if tape.get('msg') == 'Timeout exceeded':   # async_wrapper's words when the job outlived its time limit
        return ('the write test did not end within its time limit (qualify_write_timeout): a tape operation waits '
                'on the drive.')
    if tape.get('reason') == 'timeout':
        return str(tape.get('msg') or 'a tape operation did not finish within its deadline (op_timeout).')
    return None


def assemble(host, drives_info=None, source=None, write_results=None, drive_settings=None, backup=None,
             memory_total_mb=None, options=None, target_generation=None, run=None, preflight=None,
             host_facts=None, media=None, mechanics=None):
    """The host document with a verdict per drive (and for the what-if target, if any)."""
    drives_info = [d for d in (drives_info or []) if isinstance(d, dict)]
    settings = [d for d in (drive_settings or []) if isinstance(d, dict)]
    what_if_only = bool(target_generation)
    # drives the inventory lists but discovery did not find still get a line
    known = set(_device_of(d) for d in drives_info)
    for setting in settings:
        if _device_of(setting) and _device_of(setting) not in known and not what_if_only:
            drives_info.append({'nst': _device_of(setting), 'missing': True})
    entries = []
    for info in drives_info:
        nst = _device_of(info)
        setting = _match(nst, settings) or {}
        tape = None if what_if_only else _match(nst, write_results)
        write_note = None
        hung = info.get('hung') or _write_hung(tape)
        if tape is not None and (tape.get('skipped') or tape.get('failed') or not tape.get('sweep')):
            write_note = tape.get('msg') or tape.get('skip_reason') or tape.get('reason') or 'no sweep was written'
            tape = None
        entry = {'id': nst, 'nst': nst, 'info': info, 'write_benchmark': tape, 'settings': setting,
                 'verdict': None, 'error': None, 'label': None, 'write_note': write_note}
        if info.get('missing'):
            entry['error'] = ('%s is listed in tapeops_drives but discovery did not find it: check the cabling, '
                              'the st driver and the path.' % nst)
            entries.append(entry)
            continue
        if hung:
            entry['error'] = ('%s does not answer: %s It has no verdict. Check the drive and its path (dmesg, the '
                              'drive\'s panel, the HBA), then re-run this host.' % (nst, hung.rstrip('.') + '.'))
            entries.append(entry)
            continue
        try:
            spec = resolve_spec(info, setting)
        except (ReportError, ValueError) as exc:
            entry['error'] = str(exc)
            entries.append(entry)
            continue
        entry['label'] = spec.label
        info = _with_preflight(info, preflight)
        cfg = dict(backup or {})
        cfg.update(dict((k, setting[k]) for k in _SETTING_KEYS if setting.get(k) is not None))
        entry['_item'] = {'spec': spec, 'drive': info, 'tape': tape, 'config': cfg}
        entries.append(entry)
    if target_generation:
        from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _drive_model
        generation, form_factor = _drive_model.parse_generation(target_generation)
        target = options.get('target_vendor') if options else None
        spec = _drive_model.lookup(generation, form_factor, target,
                                   (options or {}).get('target_speed_floor_mb_s'),
                                   interface=(options or {}).get('target_interface'),
                                   overrides=(options or {}).get('target_model'))
        tid = 'what-if %s' % spec.label
        links = host_links(drives_info, preflight)
        link = _hba_link.slowest([row['link'] for row in links]) or (links[0]['link'] if links else None)
        entries.append({'id': tid, 'nst': None, 'info': None, 'write_benchmark': None, 'settings': {},
                        'verdict': None, 'error': None, 'label': spec.label, 'what_if': True,
                        'link': link, 'links': links,
                        '_item': {'spec': spec, 'drive': {'link': link} if link else None, 'tape': None,
                                  'config': dict(backup or {}), 'what_if': True}})
    items = [e['_item'] for e in entries if '_item' in e]
    error = None
    if items:
        if not source:
            error = 'No source read result: the source test failed or was skipped, so no verdict is possible.'
            for entry in entries:
                entry.pop('_item', None)
                entry['error'] = entry['error'] or error
        else:
            verdict_options = dict((k, v) for k, v in (options or {}).items() if k in _verdict.DEFAULTS)
            try:
                planned = _host_verdicts(items, source, memory_total_mb, verdict_options)
            except (_verdict.VerdictInputError, ValueError) as exc:
                planned = None
                error = str(exc)
            for entry in entries:
                item = entry.pop('_item', None)
                if item is None:
                    continue
                if planned is None:
                    entry['error'] = error
                else:
                    entry['verdict'] = planned[items.index(item)]
    status = STATUS_OK if any(e['verdict'] for e in entries) else STATUS_FAILED
    if status == STATUS_FAILED and error is None:
        error = next((e['error'] for e in entries if e['error']), None) or \
            'No tape drive found on this host (tape_drive_info found none and tapeops_drives lists none).'
    facts = dict(host_facts or {})
    if memory_total_mb is not None:
        facts.setdefault('memory_total_mb', memory_total_mb)
    if backup:
        facts.setdefault('backup', backup)
    mech = _report_mechanics.mechanics_section(mechanics)
    _report_mechanics.attach_findings(entries, mech)
    return host_document(host, status, entries, source, facts, run, error if status != STATUS_OK else None,
                         preflight, media=media_section(media), mechanics=mech)


def host_links(drives_info, preflight):
    """[{'device', 'link'}] of the host's tape drives: tape_drive_info's link, else the st preflight's.

    The what-if target drive takes the place of one of them, so its link is
    the slowest known one (the first one when none is known).
    """
    out = []
    seen = set()
    for entry in list(drives_info or []) + list((preflight or {}).get('drives') or [] if isinstance(preflight, dict)
                                                else []):
        if not isinstance(entry, dict) or not isinstance(entry.get('link'), dict):
            continue
        device = _device_of(entry)
        if device in seen:
            continue
        seen.add(device)
        out.append({'device': device, 'link': entry['link']})
    return out


def _with_preflight(info, preflight):
    """The drive entry completed with what the st preflight found (HBA path maximum, kernel MTWEOFI)."""
    if not isinstance(preflight, dict):
        return info
    merged = dict(info)
    mine = _match(_device_of(info), preflight.get('drives')) or {}
    if merged.get('hba_max_transfer_bytes') is None and mine.get('hba_max_transfer_bytes'):
        merged['hba_max_transfer_bytes'] = mine['hba_max_transfer_bytes']
    if not isinstance(merged.get('link'), dict) and isinstance(mine.get('link'), dict):
        merged['link'] = mine['link']
    if preflight.get('mtweofi_supported') is False or (
            merged.get('mtweofi_supported') is None and preflight.get('mtweofi_supported') is not None):
        merged['mtweofi_supported'] = preflight['mtweofi_supported']
        merged['mtweofi_basis'] = preflight.get('mtweofi_basis')
    return merged


def _host_verdicts(items, source, memory_total_mb, options):
    """evaluate_host over real drives; a what-if target is judged on its own (it replaces a drive)."""
    real = [i for i in items if not i.get('what_if')]
    out = {}
    if real:
        for index, verdict in enumerate(_verdict.evaluate_host(real, source, memory_total_mb=memory_total_mb,
                                                               options=options)):
            out[id(real[index])] = verdict
    for item in items:
        if item.get('what_if'):
            out[id(item)] = _verdict.evaluate(item['spec'], source, None, item.get('drive'), item['config'],
                                              memory_total_mb, 0,
                                              options, what_if=True)
    return [out[id(i)] for i in items]


# ---------------------------------------------------------------------------
# fleet rows


def measured_before(doc):
    """What a host without a verdict measured before it was lost (its source read), in words, or None."""
    aggregate = (doc.get('source') or {}).get('aggregate') if isinstance(doc.get('source'), dict) else None
    if not isinstance(aggregate, dict) or aggregate.get('mean_mb_s') is None:
        return None
    return 'Measured before: the sources delivered %s on average, %s sustained (%s per-second samples).' % (
        _verdict.fmt_rate(aggregate.get('mean_mb_s')), _verdict.fmt_rate(aggregate.get('p5_mb_s')),
        aggregate.get('samples', '?'))


def rows(docs):
    """One row per host x drive (and one per host without drives/verdicts)."""
    out = []
    for doc in docs:
        drives = doc.get('drives') or []
        if doc.get('status') != STATUS_OK or not drives:
            error = doc.get('error') or 'No tape drive found on this host.'
            if doc.get('status') != STATUS_OK and measured_before(doc):
                error = '%s %s' % (error, measured_before(doc))
            out.append({'host': doc['host'], 'drive': None, 'label': None, 'verdict': None,
                        'status': doc.get('status'), 'error': error, 'doc': doc, 'item': None})
            continue
        for item in drives:
            verdict = item.get('verdict')
            out.append({'host': doc['host'], 'drive': item.get('id') or item.get('nst'),
                        'label': (verdict or {}).get('drive_label') or item.get('label'),
                        'verdict': verdict, 'status': doc.get('status'),
                        'error': item.get('error'), 'doc': doc, 'item': item})
    return out


def failing(docs, fail_on=DEFAULT_FAIL_ON):
    """Rows whose class is in ``fail_on`` (e.g. any drive that would shoe-shine)."""
    bad = []
    for row in rows(docs):
        verdict = row['verdict'] or {}
        if verdict.get('class') in fail_on or (_verdict.SHOE_SHINING in fail_on and verdict.get('would_shoe_shine')):
            bad.append(row)
    return bad


def _n(value):
    return _verdict.fmt_rate(value).replace(' MB/s', '') if value is not None else '-'


def restore_words(numbers):
    """Restore (read-back) rate beside the backup rate, or None when the run did not read back."""
    if numbers.get('restore_mb_s') is None:
        return None
    verified = numbers.get('restore_verified')
    return 'restore (read-back) %s MB/s beside backup %s MB/s writing the same blocks (forecast feed now %s MB/s); ' \
           '%s' % (_n(numbers.get('restore_mb_s')), _n(numbers.get('restore_write_mb_s')),
                   _n(numbers.get('feed_now_mb_s')),
                   'verified' if verified else 'NOT verified' if verified is False else 'verification unknown')


def interface_words(numbers):
    """The drive's HBA link against what it takes, and how many such drives the host keeps busy; or None."""
    parts = []
    if 'link_transport' in numbers:
        name = ' '.join(str(numbers[k]) for k in ('link_transport', 'link_rate') if numbers.get(k))
        if numbers.get('link_mb_s') is not None:
            parts.append('%s link, %s MB/s usable: %s (the drive takes %s MB/s)' % (
                name, _n(numbers['link_mb_s']), 'caps the drive' if numbers.get('link_caps') else 'enough',
                _n(numbers.get('need_full_mb_s'))))
        elif numbers.get('link_transport'):
            parts.append('%s link, usable rate unknown' % name)
        else:
            parts.append('not a SAS or FC link')
    if numbers.get('drives_streaming_at_once') is not None:
        text = 'the host\'s sources keep %s streaming at once (%s from shoe-shining)' % (
            numbers['drives_streaming_at_once'], numbers.get('drives_not_shoeshining_at_once'))
        if numbers.get('memory_needed_at_once_mb') is not None:
            total = numbers.get('memory_total_mb')
            streams = numbers.get('streams_at_once')
            text += '; %s stream%s need%s %s MB by the memory rule, the host has %s' % (
                streams, '' if streams == 1 else 's', 's' if streams == 1 else '', numbers['memory_needed_at_once_mb'],
                '%d MB' % total if total is not None else 'unknown RAM')
        parts.append(text)
    return '; '.join(parts) or None


# ---------------------------------------------------------------------------
# Markdown


def _md(text):
    return str(text).replace('|', '\\|').replace('\n', ' ')


def fleet_markdown(docs, run=None):
    run = run or {}
    lines = ['# Tape qualification: fleet summary', '']
    meta = ['generated %s' % utc_now()]
    for key in ('id', 'mode', 'profile', 'target_generation'):
        if run.get(key):
            meta.append('%s %s' % (key.replace('_', ' '), run[key]))
    lines.append(', '.join(meta) + '. Rates in MB/s (10^6 bytes/s).')
    lines.append('')
    all_rows = rows(docs)
    counts = {}
    for row in all_rows:
        key = (row['verdict'] or {}).get('class') or (row['status'] or 'no result').upper()
        counts[key] = counts.get(key, 0) + 1
    lines.append('**%d host(s), %d drive verdict(s):** %s' % (
        len(docs), sum(1 for r in all_rows if r['verdict']),
        ', '.join('%s %d' % (k, counts[k]) for k in sorted(counts)) or 'nothing measured'))
    lines.append('')
    lines.append('| Host | Drive | Verdict | Sources sustained / mean | Needs floor / full | Drive path | '
                 'Feed now | First fix |')
    lines.append('|---|---|---|---|---|---|---|---|')
    for row in all_rows:
        verdict = row['verdict']
        if not verdict:
            lines.append('| %s | %s | **%s** | - | - | - | - | %s |' % (
                _md(row['host']), _md(row['drive'] or '-'), (row['status'] or 'no result').upper(),
                _md(row['error'] or '')))
            continue
        num = verdict['numbers']
        fix = verdict['fixes'][0]['title'] if verdict['fixes'] else '-'
        lines.append('| %s | %s (%s) | **%s** | %s / %s | %s / %s | %s | %s | %s |' % (
            _md(row['host']), _md(row['drive']), _md(row['label']), verdict['class'],
            _n(num.get('source_sustained_mb_s')), _n(num.get('source_mean_mb_s')),
            _n(num.get('need_floor_mb_s')), _n(num.get('need_full_mb_s')),
            _n(num.get('drive_path_mb_s')), _n(num.get('feed_now_mb_s')), _md(fix)))
    lines.append('')
    for row in all_rows:
        verdict = row['verdict']
        if not verdict:
            continue
        lines.append('## %s %s: %s' % (row['host'], row['drive'], verdict['class']))
        lines.append('')
        lines.append(verdict['summary'])
        lines.append('')
        if restore_words(verdict['numbers']):
            lines.append('**Backup and restore:** %s.' % restore_words(verdict['numbers']))
            lines.append('')
        if interface_words(verdict['numbers']):
            lines.append('**Interface and host:** %s.' % interface_words(verdict['numbers']))
            lines.append('')
        for reason in verdict['reasons']:
            lines.append('- %s' % reason)
        for finding in verdict.get('findings') or []:
            lines.append('- %s: %s' % (finding['severity'].upper(), finding['text']))
        if (row['item'] or {}).get('write_note'):
            lines.append('- No write sweep: %s' % row['item']['write_note'])
        if verdict['fixes']:
            lines.append('')
            lines.append('Fixes, in order:')
            lines.append('')
            for fix in verdict['fixes']:
                lines.append('%d. **%s** (%s). %s' % (fix['rank'], fix['title'], fix['setting'], fix['why']))
        lines.append('')
    lines.extend(media_markdown(docs))
    lines.extend(_report_mechanics.markdown(docs))
    return '\n'.join(lines).rstrip('\n') + '\n'


# ---------------------------------------------------------------------------
# JUnit XML


def junit_xml(docs, fail_on=DEFAULT_FAIL_ON, run=None, comparison=None, fail_on_regression=False):
    run = run or {}
    suite_name = 'tapeops.qualify.%s' % (run.get('mode') or 'qualify')
    suites = ET.Element('testsuites', name='tapeops.qualify')
    suite = ET.SubElement(suites, 'testsuite', name=suite_name, timestamp=utc_now())
    tests = failures = errors = 0
    for row in rows(docs):
        tests += 1
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
        if verdict['class'] in fail_on or (_verdict.SHOE_SHINING in fail_on and verdict.get('would_shoe_shine')):
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
    suite.set('skipped', '0')
    if comparison is not None:
        _junit_comparison(suites, comparison, fail_on_regression)
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding='unicode') + '\n'


def _junit_comparison(suites, comparison, fail_on_regression):
    """A test suite 'compare': one case per host x drive, a failure per regression when asked."""
    suite = ET.SubElement(suites, 'testsuite', name='tapeops.qualify.compare', timestamp=utc_now())
    failures = 0
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


def comparison_html(comparison):
    """The HTML section of a comparison with an earlier run."""
    esc = html.escape
    earlier = comparison['earlier']
    title = str(earlier.get('id') or earlier.get('dir') or 'the earlier run')
    parts = ['<section id="compare"><h2>Changes since %s</h2>' % esc(title),
             '<p>%d regression(s), %d improvement(s) (a rate counts when it moved by more than %d %%).</p>' % (
                 comparison['regressions'], comparison['improvements'], round(100 * comparison['tolerance'])),
             '<table><tr><th>Host</th><th>Drive</th><th>Change</th><th>Class before &rarr; now</th>'
             '<th>Why</th></tr>']
    for change in comparison['changes']:
        before, after = change['before'] or {}, change['after'] or {}
        status = change['status']
        parts.append('<tr%s><td>%s</td><td>%s</td><td>%s</td><td>%s &rarr; %s</td><td>%s</td></tr>' % (
            ' class="regressed"' if status == 'regressed' else '', esc(change['host']), esc(change['drive']),
            '<b class="err">REGRESSED</b>' if status == 'regressed' else esc(status),
            _badge(before.get('class')) if before else '-', _badge(after.get('class')) if after else '-',
            esc('; '.join(change['reasons']) or '-')))
    parts.append('</table></section>')
    return '\n'.join(parts)


def settings_html(settings):
    """The HTML section of the fleet settings table (``_fleet``), one table per drive generation."""
    esc = html.escape
    parts = ['<section id="settings"><h2>Settings across the fleet</h2>',
             '<p>Per drive generation, the drives a settings change helps most first (gain: the forecast backup '
             'rate with the setting fixes less the rate now).</p>']
    label = None
    for row in settings:
        if row['label'] != label:
            if label is not None:
                parts.append('</table>')
            label = row['label']
            parts.append('<h3>%s</h3><table class="settings"><tr>%s</tr>' % (
                esc(label), ''.join('<th>%s</th>' % esc(h) for h in _fleet.HEADER)))
        values = list(_fleet.cells(row))
        values[2] = _badge(row['class'])
        parts.append('<tr>%s</tr>' % ''.join('<td>%s</td>' % (v if i == 2 else esc(str(v)))
                                             for i, v in enumerate(values)))
    parts.append('</table></section>')
    return '\n'.join(parts)


def load_comparison(compare_to, docs, tolerance=_compare.DEFAULT_TOLERANCE):
    """Compare ``docs`` with the run in directory ``compare_to`` (its host JSONs)."""
    if not os.path.isdir(compare_to):
        raise ReportError('qualify_compare_to=%s is not a run directory: give the directory of an earlier run '
                          '(it holds hosts/<host>.json), e.g. reports/20261123T101500Z.' % compare_to)
    earlier = [d for d in load_run(compare_to) if d.get('status') != STATUS_MISSING]
    if not earlier:
        raise ReportError('%s holds no host results (hosts/*.json): give the directory of an earlier run.'
                          % compare_to)
    earlier_run = dict(next((d.get('run') for d in earlier if d.get('run')), {}) or {})
    earlier_run['dir'] = compare_to
    return _compare.compare(earlier, docs, tolerance, earlier_run)


# ---------------------------------------------------------------------------
# charts (matplotlib -> inline SVG)


class Charts:
    """Draws the three charts of a drive with matplotlib, as inline SVG text."""

    def __init__(self):
        try:
            import matplotlib
            from matplotlib.figure import Figure
        except ImportError as exc:
            raise ReportError('matplotlib is not installed on the controller (%s): pip install matplotlib '
                              '(it is in meta/ee-requirements.txt for execution environments).' % exc)
        self._matplotlib = matplotlib
        self._figure = Figure

    def _svg(self, fig, salt):
        rc = {'svg.fonttype': 'none', 'svg.hashsalt': salt}
        with self._matplotlib.rc_context(rc):
            buf = io.StringIO()
            # Fixed margins (set per chart) instead of bbox_inches='tight' or a layout
            # engine: a quarter of the drawing time, which adds up over a fleet.
            fig.savefig(buf, format='svg', metadata={'Date': None})
        text = buf.getvalue()
        start = text.find('<svg')
        text = text[start:] if start >= 0 else text
        # The RDF metadata block only names the tool; drop it to keep the page small.
        return re.sub(r'\s*<metadata>.*?</metadata>', '', text, count=1, flags=re.S)

    def feed(self, numbers, salt):
        """Source sustained/mean against the drive's floor and full speed."""
        fig = self._figure(figsize=(6.4, 2.6))
        fig.subplots_adjust(left=0.3, right=0.95, bottom=0.2, top=0.88)
        ax = fig.add_subplot()
        labels = ['sources sustained (p5)', 'sources mean', 'feed now', 'drive needs: floor', 'drive needs: full']
        values = [numbers.get('source_sustained_mb_s'), numbers.get('source_mean_mb_s'),
                  numbers.get('feed_now_mb_s'), numbers.get('need_floor_mb_s'), numbers.get('need_full_mb_s')]
        colors = ['#0969da', '#54aeff', '#1f2328', '#d4a72c', '#1a7f37']
        values = [v or 0 for v in values]
        ax.barh(labels[::-1], values[::-1], color=colors[::-1])
        for index, value in enumerate(values[::-1]):
            ax.text(value, index, ' %s' % _verdict.fmt_rate(value), va='center', fontsize=8)
        ax.set_xlabel('MB/s')
        ax.set_xlim(0, max(values + [1]) * 1.25)
        ax.set_title('Feed vs what the drive needs')
        return self._svg(fig, salt + '-feed')

    def series(self, series, numbers, salt):
        """Aggregate source rate over time against the speed-matching band."""
        fig = self._figure(figsize=(6.4, 2.6))
        fig.subplots_adjust(left=0.12, right=0.97, bottom=0.2, top=0.88)
        ax = fig.add_subplot()
        floor = numbers.get('need_floor_mb_s') or 0
        full = numbers.get('need_full_mb_s') or 0
        xs = list(range(1, len(series) + 1))
        ax.axhspan(floor, full, color='#d4a72c', alpha=0.25, label='speed-matching band')
        ax.axhline(full, color='#1a7f37', linewidth=1, label='full speed %s' % _verdict.fmt_rate(full))
        ax.axhline(floor, color='#cf222e', linewidth=1, label='floor %s' % _verdict.fmt_rate(floor))
        if series:
            ax.plot(xs, series, color='#0969da', linewidth=1.2, label='sources (aggregate)')
        ax.set_xlabel('seconds')
        ax.set_ylabel('MB/s')
        ax.set_ylim(0, max([full * 1.1] + [s * 1.1 for s in series] + [1]))
        ax.set_title('Source rate over time')
        ax.legend(fontsize=7, loc='upper right')
        return self._svg(fig, salt + '-series')

    def drive_trace(self, trace, numbers, salt):
        """The forecast: drive buffer level and speed step over the replayed interval."""
        fig = self._figure(figsize=(6.4, 2.6))
        fig.subplots_adjust(left=0.12, right=0.88, bottom=0.2, top=0.88)
        ax = fig.add_subplot()
        xs = [point['t_s'] for point in trace]
        ax.fill_between(xs, [point['buffer_pct'] for point in trace], color='#54aeff', alpha=0.35,
                        label='buffer %', step='post')
        ax.set_ylim(0, 105)
        ax.set_ylabel('buffer %')
        ax.set_xlabel('seconds (replayed feed)')
        speed = ax.twinx()
        speed.step(xs, [point['step_mb_s'] for point in trace], where='post', color='#1f2328', linewidth=1,
                   label='speed step (0 = stopped)')
        floor = numbers.get('speed_floor_mb_s') or 0
        if floor:
            speed.axhline(floor, color='#cf222e', linewidth=0.8, linestyle='--')
        speed.set_ylabel('tape MB/s')
        speed.set_ylim(0, max([p['step_mb_s'] for p in trace] + [floor, 1]) * 1.15)
        ax.set_title('What the drive does: buffer and speed step (forecast)')
        lines = ax.get_legend_handles_labels()
        more = speed.get_legend_handles_labels()
        ax.legend(lines[0] + more[0], lines[1] + more[1], fontsize=7, loc='lower right')
        return self._svg(fig, salt + '-trace')

    def scaling(self, curve, numbers, salt):
        """The sources' measured aggregate rate by stream count, against what the drive needs."""
        fig = self._figure(figsize=(6.4, 2.6))
        fig.subplots_adjust(left=0.12, right=0.97, bottom=0.2, top=0.88)
        ax = fig.add_subplot()
        xs = [point[0] for point in curve]
        ax.plot(xs, [point[1] for point in curve], marker='o', color='#0969da', label='sources (measured)')
        share = numbers.get('feed_share') or 1.0
        for key, color, words in (('need_full_mb_s', '#1a7f37', 'full speed'), ('need_floor_mb_s', '#cf222e', 'floor')):
            if numbers.get(key):
                ax.axhline(numbers[key] / share, color=color, linewidth=1, linestyle='--',
                           label='%s (this drive%s)' % (words, '' if share >= 1 else ', host total'))
        ax.set_xlabel('parallel streams')
        ax.set_ylabel('MB/s')
        ax.set_xticks(xs)
        ax.set_ylim(0, max([p[1] for p in curve] + [(numbers.get('need_full_mb_s') or 0) / share, 1]) * 1.15)
        ax.set_title('Source rate by number of streams (measured)')
        ax.legend(fontsize=7, loc='lower right')
        return self._svg(fig, salt + '-scaling')

    def sweep(self, sweep, numbers, salt):
        """Block-size sweep: MB/s per block size and pattern."""
        fig = self._figure(figsize=(6.4, 2.6))
        fig.subplots_adjust(left=0.12, right=0.97, bottom=0.2, top=0.88)
        ax = fig.add_subplot()
        by_pattern = {}
        for row in sweep:
            if row.get('error') or row.get('mb_s') is None:
                continue
            by_pattern.setdefault(str(row.get('pattern')), []).append((int(row['block_size']), float(row['mb_s'])))
        for pattern, points in sorted(by_pattern.items()):
            points.sort()
            ax.plot([p[0] / 1024 for p in points], [p[1] for p in points], marker='o', label=pattern)
        if by_pattern:
            ax.set_xscale('log', base=2)
            sizes = sorted(set(p[0] for points in by_pattern.values() for p in points))
            ax.set_xticks([size / 1024 for size in sizes])
            ax.set_xticklabels([_verdict.fmt_bytes(size).replace(' KiB', 'K').replace(' MiB', 'M') for size in sizes])
            ax.minorticks_off()
        for key, color in (('need_full_mb_s', '#1a7f37'), ('need_floor_mb_s', '#cf222e')):
            if numbers.get(key):
                ax.axhline(numbers[key], color=color, linewidth=1, linestyle='--')
        ax.set_xlabel('block size (KiB)')
        ax.set_ylabel('MB/s')
        ax.set_title('Block-size sweep (drive path)')
        if by_pattern:
            ax.legend(fontsize=7)
        return self._svg(fig, salt + '-sweep')

    def media(self, bars, salt):
        """Cartridges by media ID per library, coloured by what the target drive does with them.

        bars: [(label, [(media ID, count, class), ...]), ...].
        """
        colors = {'write': '#1a7f37', 'read': '#d4a72c', 'stranded': '#cf222e', None: '#8c959f'}
        fig = self._figure(figsize=(6.4, 0.9 + 0.45 * max(len(bars), 1)))
        fig.subplots_adjust(left=0.3, right=0.97, bottom=0.35 if len(bars) < 3 else 0.2, top=0.85)
        ax = fig.add_subplot()
        seen = set()
        for index, (_label, segments) in enumerate(bars[::-1]):
            left = 0
            for media, count, cls in segments:
                name = {'write': 'target writes', 'read': 'target reads only', 'stranded': 'stranded',
                        None: 'unknown'}[cls]
                ax.barh(index, count, left=left, color=colors[cls], edgecolor='white',
                        label=None if name in seen else name)
                seen.add(name)
                ax.text(left + count / 2.0, index, media or '?', ha='center', va='center', fontsize=7, color='white')
                left += count
        ax.set_yticks(range(len(bars)))
        ax.set_yticklabels([label for label, _s in bars[::-1]], fontsize=7)
        ax.set_xlabel('cartridges')
        ax.set_title('Media by generation per library')
        if seen:
            ax.legend(fontsize=7, loc='lower right')
        return self._svg(fig, salt + '-media')


# ---------------------------------------------------------------------------
# HTML

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2em;color:#1f2328;max-width:78em}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #d0d7de;padding:.3em .6em;text-align:left}
th{background:#f6f8fa}.cls{color:#fff;padding:.1em .5em;border-radius:.3em;font-weight:600;white-space:nowrap}
section.drive{border-top:2px solid #d0d7de;margin-top:2em;padding-top:.5em}
.charts{display:flex;flex-wrap:wrap;gap:1em}figure.chart{margin:0;flex:1 1 30em}figure.chart svg{max-width:100%;height:auto}
.err{color:#cf222e}small{color:#57606a}
"""


def _badge(cls):
    return '<span class="cls" style="background:%s">%s</span>' % (_CLASS_COLORS.get(cls, '#57606a'),
                                                                  html.escape(cls or 'NO RESULT'))


def fleet_html(docs, run=None, charts=None):
    """The self-contained HTML page (no external files, no scripts)."""
    run = run or {}
    esc = html.escape
    if charts is None:
        try:
            charts = Charts()
        except ReportError as exc:
            charts = exc
    parts = ['<!DOCTYPE html>', '<html lang="en"><head><meta charset="utf-8">',
             '<title>Tape qualification report</title>', '<style>%s</style></head><body>' % _CSS,
             '<h1>Tape qualification report</h1>',
             '<p><small>generated %s%s. Rates in MB/s (10<sup>6</sup> bytes/s).</small></p>' % (
                 esc(utc_now()), ''.join(', %s %s' % (esc(k), esc(str(run[k]))) for k in
                                         ('id', 'mode', 'profile', 'target_generation') if run.get(k)))]
    if isinstance(charts, ReportError):
        parts.append('<p class="err">No charts: %s</p>' % esc(str(charts)))
        charts = None
    all_rows = rows(docs)
    parts.append('<table id="fleet"><tr><th>Host</th><th>Drive</th><th>Verdict</th><th>Sources sustained / mean</th>'
                 '<th>Needs floor / full</th><th>Feed now</th><th>First fix</th></tr>')
    for row in all_rows:
        verdict = row['verdict']
        if not verdict:
            parts.append('<tr class="nores"><td>%s</td><td>%s</td><td>%s</td><td colspan="4" class="err">%s</td></tr>' % (
                esc(row['host']), esc(row['drive'] or '-'), _badge(None), esc(row['error'] or '')))
            continue
        num = verdict['numbers']
        parts.append('<tr><td>%s</td><td>%s (%s)</td><td>%s</td><td>%s / %s</td><td>%s / %s</td><td>%s</td>'
                     '<td>%s</td></tr>' % (
                         esc(row['host']), esc(str(row['drive'])), esc(str(row['label'])), _badge(verdict['class']),
                         _n(num.get('source_sustained_mb_s')), _n(num.get('source_mean_mb_s')),
                         _n(num.get('need_floor_mb_s')), _n(num.get('need_full_mb_s')),
                         _n(num.get('feed_now_mb_s')),
                         esc(verdict['fixes'][0]['title']) if verdict['fixes'] else '-'))
    parts.append('</table>')
    for index, row in enumerate(all_rows):
        verdict = row['verdict']
        if not verdict:
            continue
        doc, item = row['doc'], row['item'] or {}
        salt = 'd%d' % index
        parts.append('<section class="drive" id="drive-%d" data-host="%s" data-class="%s">' % (
            index, esc(row['host']), esc(verdict['class'])))
        parts.append('<h2>%s %s %s %s</h2>' % (
            esc(row['host']), esc(str(row['drive'])), esc(str(row['label'])), _badge(verdict['class'])))
        if restore_words(verdict['numbers']):
            parts.append('<p class="restore"><b>Backup and restore:</b> %s.</p>' % esc(restore_words(verdict['numbers'])))
        if interface_words(verdict['numbers']):
            parts.append('<p class="interface"><b>Interface and host:</b> %s.</p>' % esc(
                interface_words(verdict['numbers'])))
        parts.append('<p>%s</p><ul>' % esc(verdict['summary']))
        parts.extend('<li>%s</li>' % esc(r) for r in verdict['reasons'])
        parts.extend('<li><b>%s</b>: %s</li>' % (esc(f['severity']), esc(f['text']))
                     for f in verdict.get('findings') or [])
        if item.get('write_note'):
            parts.append('<li>No write sweep: %s</li>' % esc(str(item['write_note'])))
        parts.append('</ul>')
        if verdict['fixes']:
            parts.append('<ol class="fixes">')
            parts.extend('<li><b>%s</b> <small>(%s)</small><br>%s</li>' % (
                esc(f['title']), esc(f['setting']), esc(f['why'])) for f in verdict['fixes'])
            parts.append('</ol>')
        if charts is not None:
            series = [float(x) for x in (((doc.get('source') or {}).get('aggregate') or {}).get('series_mb_s') or [])
                      if x is not None]
            sweep = ((item.get('write_benchmark') or {}).get('sweep')) or []
            parts.append('<div class="charts">')
            parts.append('<figure class="chart" data-chart="feed">%s</figure>' % charts.feed(verdict['numbers'], salt))
            parts.append('<figure class="chart" data-chart="series">%s</figure>' % charts.series(
                series, verdict['numbers'], salt))
            curve = sorted((int(r['streams']), float(r['mean_mb_s'])) for r in
                           ((doc.get('source') or {}).get('scaling') or [])
                           if isinstance(r, dict) and r.get('streams') and r.get('mean_mb_s') is not None)
            if len(curve) >= 2:
                parts.append('<figure class="chart" data-chart="scaling">%s</figure>' % charts.scaling(
                    curve, verdict['numbers'], salt))
            trace = (verdict.get('forecast') or {}).get('trace') or []
            if trace:
                parts.append('<figure class="chart" data-chart="trace">%s</figure>' % charts.drive_trace(
                    trace, verdict['numbers'], salt))
            if sweep:
                parts.append('<figure class="chart" data-chart="sweep">%s</figure>' % charts.sweep(
                    sweep, verdict['numbers'], salt))
            else:
                parts.append('<figure class="chart" data-chart="sweep"><figcaption>No block-size sweep: the drive '
                             'was not written to (no allowed scratch medium, or a what-if).</figcaption></figure>')
            parts.append('</div>')
        parts.append('</section>')
    parts.extend(media_html(docs, charts))
    parts.extend(_report_mechanics.html(docs))
    parts.append('</body></html>')
    return '\n'.join(parts) + '\n'


# ---------------------------------------------------------------------------
# media section (upgrade check: media_inventory's summary against the target drive)


def media_section(media):
    """The host document's ``media`` from a media_inventory result (None when the run read no media)."""
    if not isinstance(media, dict) or not media:
        return None
    if media.get('skipped'):
        return {'status': 'skipped', 'error': media.get('skip_reason') or media.get('msg') or 'skipped'}
    if media.get('failed'):
        return {'status': 'failed', 'error': str(media.get('msg') or 'media_inventory failed')}
    summary = media.get('summary') if 'summary' in media else media
    if not isinstance(summary, dict) or 'libraries' not in summary or 'target' not in summary:
        # A failure the play kept going past (failed_when: false) still carries the module's message.
        return {'status': 'failed', 'error': str(media.get('msg') or 'media_inventory returned no classification '
                                                                     '(no target generation?)')}
    return dict(summary, status='ok')


def _media_docs(docs):
    return [(d['host'], d['media']) for d in docs if isinstance(d.get('media'), dict)]


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


_MEDIA_ORDER = dict((m, i) for i, m in enumerate(['L1', 'L2', 'L3', 'L4', 'L5', 'L6', 'L7', 'M8', 'L8', 'L9', 'LA',
                                                 'PA', 'unknown']))


def _fmt_hours(value):
    return ('%.1f' % value) if value is not None else '-'


def media_markdown(docs):
    """Lines of the Markdown media section (empty when no host has one)."""
    items = _media_docs(docs)
    if not items:
        return []
    lines = ['## Media against the target drive', '']
    lines.append('| Host | Library | Target writes | Target reads only | Stranded | Unknown | Cleaning | '
                 'Stranded native TB | Migration h (drives kept) | Keep an old drive |')
    lines.append('|---|---|---|---|---|---|---|---|---|---|')
    for host, media in items:
        if media.get('status') != 'ok':
            lines.append('| %s | - | %s |  |  |  |  |  |  |  |' % (_md(host), _md('no media inventory: %s' % media.get(
                'error'))))
            continue
        for lib in media['libraries']:
            c = lib['counts']
            mig = lib.get('migration') or {}
            lines.append('| %s | %s | %d | %d | %d | %d | %d | %s | %s | %s |' % (
                _md(host), _md(lib['id']), c['write'], c['read'], c['stranded'], c['unknown'], c['cleaning'],
                '%.1f' % (lib['capacity_gb']['stranded'] / 1000.0),
                '%s (%s)' % (_fmt_hours(mig.get('hours')), mig.get('drives_kept')) if mig else '-',
                'yes' if lib['keep_old_drive']['required'] else 'no'))
    lines.append('')
    for host, media in items:
        if media.get('status') != 'ok':
            continue
        lines.append('### %s: media against the %s' % (host, media['target']['label']))
        lines.append('')
        for lib in media['libraries']:
            if not lib['stranded'] and not lib['read_only'] and not lib['error']:
                lines.append('- %s: %d cartridge%s, nothing stranded or read-only: the %s writes every one of '
                             'known generation' % (lib['id'], lib['cartridges'], '' if lib['cartridges'] == 1 else 's',
                                                   media['target']['label']))
            if lib['stranded']:
                lines.append('- %s, stranded: %s' % (lib['id'], ', '.join(
                    '%s (%s, %s)' % (r['barcode'] or 'no barcode', r['media'], r['where']) for r in lib['stranded'])))
            if lib['keep_old_drive'].get('why'):
                lines.append('- %s: %s' % (lib['id'], lib['keep_old_drive']['why']))
            for row in lib.get('cleaning') or []:
                lines.append('- %s, cleaning %s (%s): %s' % (lib['id'], row['barcode'], row['where'],
                                                             row['flag'] or 'universal'))
        for finding in media.get('findings') or []:
            lines.append('- %s: %s' % (finding['severity'].upper(), finding['text']))
        mig = media.get('migration')
        if mig:
            lines.append('')
            lines.append('Migration of the stranded cartridges: **%s h** for %d cartridges (%.1f TB native) with %d '
                         'old drive(s) kept. Assumptions:' % (
                             _fmt_hours(mig['hours']), mig['cartridges'], mig['data_gb'] / 1000.0, mig['drives_kept']))
            lines.append('')
            lines.extend('- %s' % a for a in mig['assumptions'])
        lines.append('')
    return lines


def media_html(docs, charts=None):
    """HTML parts of the media section (empty when no host has one)."""
    items = _media_docs(docs)
    if not items:
        return []
    esc = html.escape
    parts = ['<section class="media" id="media"><h2>Media against the target drive</h2>',
             '<table id="media-table"><tr><th>Host</th><th>Library</th><th>Target writes</th><th>Reads only</th>'
             '<th>Stranded</th><th>Unknown</th><th>Cleaning</th><th>Stranded native TB</th>'
             '<th>Migration h (drives kept)</th><th>Keep an old drive</th></tr>']
    bars = []
    for host, media in items:
        if media.get('status') != 'ok':
            parts.append('<tr><td>%s</td><td colspan="9" class="err">no media inventory: %s</td></tr>' % (
                esc(host), esc(str(media.get('error')))))
            continue
        for lib in media['libraries']:
            c = lib['counts']
            mig = lib.get('migration') or {}
            parts.append('<tr data-host="%s" data-library="%s"><td>%s</td><td>%s</td><td>%d</td><td>%d</td>'
                         '<td>%d</td><td>%d</td><td>%d</td><td>%.1f</td><td>%s</td><td>%s</td></tr>' % (
                             esc(host), esc(lib['id']), esc(host), esc(lib['id']), c['write'], c['read'],
                             c['stranded'], c['unknown'], c['cleaning'], lib['capacity_gb']['stranded'] / 1000.0,
                             esc('%s (%s)' % (_fmt_hours(mig.get('hours')), mig.get('drives_kept')) if mig else '-'),
                             'yes' if lib['keep_old_drive']['required'] else 'no'))
            bars.append(('%s %s' % (host, lib['id']), _media_mix(lib)))
    parts.append('</table>')
    for host, media in items:
        if media.get('status') != 'ok':
            continue
        parts.append('<h3>%s: media against the %s</h3><ul>' % (esc(host), esc(media['target']['label'])))
        for lib in media['libraries']:
            if not lib['stranded'] and not lib['read_only'] and not lib['error']:
                parts.append('<li>%s: %d cartridge%s, nothing stranded or read-only: the %s writes every one of '
                             'known generation</li>' % (esc(lib['id']), lib['cartridges'],
                                                        '' if lib['cartridges'] == 1 else 's',
                                                        esc(media['target']['label'])))
            if lib['stranded']:
                parts.append('<li class="stranded">%s, stranded: %s</li>' % (esc(lib['id']), esc(', '.join(
                    '%s (%s, %s)' % (r['barcode'] or 'no barcode', r['media'], r['where']) for r in lib['stranded']))))
            if lib['keep_old_drive'].get('why'):
                parts.append('<li>%s: %s</li>' % (esc(lib['id']), esc(lib['keep_old_drive']['why'])))
            for row in lib.get('cleaning') or []:
                parts.append('<li class="cleaning">%s, cleaning %s (%s): %s</li>' % (
                    esc(lib['id']), esc(str(row['barcode'])), esc(row['where']), esc(row['flag'] or 'universal')))
        for finding in media.get('findings') or []:
            parts.append('<li><b>%s</b>: %s</li>' % (esc(finding['severity']), esc(finding['text'])))
        parts.append('</ul>')
        mig = media.get('migration')
        if mig:
            parts.append('<p class="migration">Migration of the stranded cartridges: <b>%s h</b> for %d cartridges '
                         '(%.1f TB native) with %d old drive(s) kept.</p><ul class="assumptions">' % (
                             _fmt_hours(mig['hours']), mig['cartridges'], mig['data_gb'] / 1000.0, mig['drives_kept']))
            parts.extend('<li>%s</li>' % esc(a) for a in mig['assumptions'])
            parts.append('</ul>')
    if charts is not None and not isinstance(charts, ReportError) and bars:
        parts.append('<div class="charts"><figure class="chart" data-chart="media">%s</figure></div>' % charts.media(
            bars, 'media'))
    parts.append('</section>')
    return parts


# ---------------------------------------------------------------------------
# everything at once


def host_page_link(host):
    """A host page's path relative to the run directory (and so to report.html)."""
    return '%s/%s.html' % (HOSTS_DIR, safe_name(host))


def write_host_pages(run_dir, docs, run, charts):
    """One page per host with a result (``hosts/<host>.html``): its drives with their charts.

    Returns {host: link relative to the run directory}.
    """
    links = {}
    for doc in docs:
        if doc.get('status') == STATUS_MISSING:
            continue
        link = host_page_link(doc['host'])
        page = fleet_html([doc], run, charts).replace(
            '<h1>Tape qualification report</h1>',
            '<p><small><a href="../%s">Fleet report</a></small></p><h1>Tape qualification report: %s</h1>' % (
                REPORT_HTML, html.escape(str(doc['host']))), 1)
        atomic_write(os.path.join(run_dir, link), page)
        links[doc['host']] = link
    return links


def write_fleet(run_dir, expected_hosts=None, run=None, fail_on=DEFAULT_FAIL_ON, compare_to=None,
                fail_on_regression=False):
    """Write summary.md, report.html, junit.xml and the host pages from the run's JSON files.

    report.html is one page with every drive when the fleet has at most
    ``_report_index.INLINE_MAX_HOSTS`` hosts, else the index (``_report_index``);
    hosts/<host>.html has one host's drives with their charts.

    compare_to: the directory of an earlier run; the reports then say per host x
    drive what changed (``_compare``), and JUnit marks a regression as a failure
    when ``fail_on_regression``.

    Returns {'docs', 'paths', 'failing', 'comparison'}.
    """
    if not os.path.isdir(run_dir):
        raise ReportError('Run directory %s does not exist: run the qualify playbook first, or point '
                          'qualify_run_dir at an existing run.' % run_dir)
    docs = load_run(run_dir, expected_hosts)
    if not run:
        run = next((d.get('run') for d in docs if d.get('run')), {}) or {}
    comparison = None
    try:
        charts = Charts()
    except ReportError as exc:
        charts = exc
    host_pages = write_host_pages(run_dir, docs, run, charts)
    markdown = fleet_markdown(docs, run)
    if len(docs) <= _report_index.INLINE_MAX_HOSTS:
        # a small fleet: one page with every drive and its charts, linking the host pages
        page = fleet_html(docs, run, charts).replace('<h1>Tape qualification report</h1>', (
            '<h1>Tape qualification report</h1><p id="host-pages"><small>Host pages: %s</small></p>' % ', '.join(
                '<a href="%s">%s</a>' % (html.escape(host_pages[h]), html.escape(h)) for h in sorted(host_pages))
            if host_pages else '<h1>Tape qualification report</h1>'), 1)
    else:
        page = _report_index.index_html(docs, rows(docs), run, _badge, _CSS, _CLASS_COLORS,
                                        lambda host: host_pages.get(host) or '#', utc_now())
    settings = _fleet.settings_rows(docs)
    if settings:
        markdown = markdown.rstrip('\n') + '\n\n' + '\n'.join(_fleet.settings_markdown(settings)).rstrip('\n') + '\n'
        page = page.replace('</body></html>', settings_html(settings) + '\n</body></html>')
    if compare_to:
        if os.path.realpath(compare_to) == os.path.realpath(run_dir):
            raise ReportError('qualify_compare_to is this run\'s own directory (%s): give an earlier run.' % run_dir)
        comparison = load_comparison(compare_to, docs)
        markdown = markdown.rstrip('\n') + '\n\n' + '\n'.join(_compare.markdown(comparison)).rstrip('\n') + '\n'
        page = page.replace('</body></html>', comparison_html(comparison) + '\n</body></html>')
    paths = {
        'json': [host_json_path(run_dir, d['host']) for d in docs if d['status'] != STATUS_MISSING],
        'markdown': atomic_write(os.path.join(run_dir, SUMMARY_MD), markdown),
        'junit': atomic_write(os.path.join(run_dir, JUNIT_XML), junit_xml(docs, fail_on, run, comparison,
                                                                          fail_on_regression)),
        'html': atomic_write(os.path.join(run_dir, REPORT_HTML), page),
        'host_pages': [os.path.join(run_dir, link) for link in host_pages.values()],
    }
    return {'docs': docs, 'paths': paths, 'failing': failing(docs, fail_on), 'comparison': comparison}
