# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Controller-side assembly of a qualify run: the host documents and the fleet's rows.

Private to this collection: may change without notice. Used by the
``qualify_verdict`` and ``qualify_report`` actions on the controller (never
shipped to managed hosts, no module imports it).

It assembles a host's document (``hosts/<host>.json``, _records.HostReport)
from the modules' records and the verdict, and builds the fleet's rows from
the documents. The run directory's files are read and written by ``_run``;
``_render`` renders the reports (templates under ``templates/``).
"""

from __future__ import annotations

from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError
from ansible_collections.tapeops.qualify.plugins.module_utils import _records, _run
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _verdict

from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import (
    _backup_settings, _compare, _report_mechanics, _words)
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _hba_link


DEFAULT_FAILING_CLASSES = (_verdict.SHOE_SHINING, _verdict.MISCONFIGURED)


class ReportError(TapeopsError):
    """A report cannot be written; the message says what to do."""


# ---------------------------------------------------------------------------
# the host document


def host_document(host, status=_run.STATUS_OK, drives=None, source=None, host_facts=None, run=None, error=None,
                  preflight=None, media=None, mechanics=None, storage_daemon=None, netbackup=None):
    """The per-host document, schema version 2 (docs/reports.md, docs/host-report.schema.json).

    ``drives`` are the assembled entries, each with its ``verdict`` (or None);
    the document keeps the drives' measurements under ``drives`` and their
    verdicts apart under ``verdicts`` (each naming its ``drive``). Every
    measurement goes through its record, so nothing of Ansible's transport
    reaches the file.
    """
    entries, verdicts = [], []
    for drive in drives or []:
        drive = dict(drive)
        verdict = drive.pop('verdict', None)
        entries.append(_records.DriveEntry.from_dict(drive))
        if verdict:
            verdicts.append(dict(verdict, drive=drive.get('id')))
    report = _records.HostReport(
        host=str(host), status=status, error=error, generated_at=_run.utc_now(), run=dict(run or {}),
        facts=dict(host_facts or {}), preflight=_records.Preflight.from_dict(preflight),
        source=_records.SourceRead.from_dict(source), drives=entries, verdicts=verdicts,
        media=_records.Media.from_dict(media) if isinstance(media, dict) else media,
        mechanics=[_records.Mechanics.from_dict(m) for m in mechanics] if mechanics else None,
        worst_class=_verdict.worst([v['class'] for v in verdicts if v.get('class')]),
        storage_daemon=_records.StorageDaemonConfig.from_result(storage_daemon),
        netbackup=_records.NetBackupBuffers.from_result(netbackup))
    return report.to_dict()


# ---------------------------------------------------------------------------
# assembling a host's verdicts from the modules' records


def _match(nst, entries):
    for entry in entries or []:
        if _records.device_of(entry) == nst:
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
            'the inventory.' % (_records.device_of(info) or _records.device_of(setting) or 'the drive',
                                identity.reason))
    return spec


def _write_hung(sweep):
    """Why the write test says the drive hung (a tape operation past its deadline), or None.

    ``sweep``: the drive's WriteSweep record (a write without a sweep keeps only its msg and reason, whether
    Ansible marked it failed or the playbook's wait registered it as a finding with failed_when: false).
    """
    if sweep is None or sweep.written:
        return None
    if sweep.msg == 'Timeout exceeded':   # async_wrapper's words when the job outlived its time limit
        return ('the write test did not end within its time limit (qualify_write_timeout): a tape operation waits '
                'on the drive.')
    if sweep.reason == 'timeout':
        return str(sweep.msg or 'a tape operation did not finish within its deadline (op_timeout).')
    return None


def _write_sweeps(write_sweep):
    """{device: WriteSweep} of write results (records, or module results as Ansible returned them)."""
    out = {}
    for result in write_sweep or []:
        record = _records.WriteSweep.from_result(result)
        if record is not None:
            out[record.device] = record
    return out


def assemble(host, drives_info=None, source=None, write_sweep=None, drive_settings=None, backup=None,
             memory_total_mb=None, options=None, target_generation=None, run=None, preflight=None,
             host_facts=None, media=None, mechanics=None, locks=None, storage_daemon=None, netbackup=None):
    """The host document with a verdict per drive (and for the what-if target, if any).

    ``locks``: the drives' tape_drive_lock records (``_records.DriveLock.from_results``): a drive another
    run or process had is BUSY (``busy`` and its sentence as ``error``), with no verdict.
    ``storage_daemon``: what tapeops.qualify.bacula_sd_info read on the host (StorageDaemonConfig): each drive's
    Device settings where the inventory gives none (``_backup_settings``). ``netbackup``: what
    tapeops.qualify.netbackup_buffers_info read (NetBackupBuffers): the drives' block size, SIZE_DATA_BUFFERS,
    where the inventory gives none.

    The measurements are records (_records): ``drives_info`` DriveIdentity,
    ``source`` SourceRead, ``write_sweep`` WriteSweep, ``preflight``
    Preflight, ``media`` Media, ``mechanics`` a list of Mechanics; dicts as
    the modules return them are turned into records here.
    """
    drives_info, source, preflight = _measured(drives_info, source, preflight)
    sd = _records.StorageDaemonConfig.from_result(storage_daemon)
    sd = sd.to_dict() if sd is not None else None
    nb = _records.NetBackupBuffers.from_result(netbackup)
    nb = nb.to_dict() if nb is not None else None
    settings = [d for d in (drive_settings or []) if isinstance(d, dict)]
    sweeps = {} if target_generation else _write_sweeps(write_sweep)
    missing = set() if target_generation else _add_missing(drives_info, settings)
    locks = {} if target_generation else _records.DriveLock.from_results(locks)
    entries = [_drive_entry(info, _match(info.get('nst'), settings) or {}, sweeps.get(info.get('nst')),
                            info.get('nst') in missing, preflight, backup, locks.get(info.get('nst')), sd, nb)
               for info in drives_info]
    if target_generation:
        entries.append(_what_if_entry(target_generation, options, backup, drives_info, preflight))
    error = _judge_entries(entries, source, memory_total_mb, options)
    for entry in entries:
        if not entry.get('what_if') and (entry.get('setting_sources') or entry['verdict']):
            entry['setting_sources'] = _backup_settings.complete_sources(
                entry.get('setting_sources'), entry['verdict'], (backup or {}).get('software'))
    status = _run.STATUS_OK if any(e['verdict'] for e in entries) else _run.STATUS_FAILED
    if status == _run.STATUS_FAILED and error is None:
        error = next((e['error'] for e in entries if e['error']), None) or \
            'No tape drive found on this host (tape_drive_info found none and tapeops_drives lists none).'
    mech = _report_mechanics.mechanics_section(mechanics)
    _report_mechanics.attach_findings(entries, mech)
    return host_document(host, status, entries, source, _facts(host_facts, memory_total_mb, backup), run,
                         error if status != _run.STATUS_OK else None, preflight, media=media_section(media),
                         mechanics=mech, storage_daemon=sd, netbackup=nb)


def _measured(drives_info, source, preflight):
    """The drives, the source read and the preflight as plain dicts of their records."""
    drives_info = [_records.DriveIdentity.from_dict(d).to_dict() for d in (drives_info or [])
                   if isinstance(d, (dict, _records.DriveIdentity))]
    source = _records.SourceRead.from_result(source)
    preflight = _records.Preflight.from_result(preflight)
    return (drives_info, source.to_dict() if source is not None else None,
            preflight.to_dict() if preflight is not None else None)


def _add_missing(drives_info, settings):
    """Add a line for each drive the inventory lists but discovery did not find; their nst paths."""
    known = set(d.get('nst') for d in drives_info)
    missing = set()
    for setting in settings:
        nst = _records.device_of(setting)
        if nst and nst not in known:
            drives_info.append(_records.DriveIdentity(nst=nst).to_dict())
            missing.add(nst)
    return missing


def _drive_entry(info, setting, sweep, missing, preflight, backup, lock=None, sd=None, nb=None):
    """One drive's entry, to be judged (``_item``) or with the error that keeps it from a verdict."""
    nst = info.get('nst')
    tape = sweep.to_dict() if sweep is not None and sweep.written else None
    # a failed write's steps stay in the document (write_sweep, with its reason and msg); only a whole sweep is judged
    kept = tape or (sweep.to_dict() if sweep is not None and sweep.measured else None)
    entry = {'id': nst, 'nst': nst, 'identity': info, 'write_sweep': kept, 'settings': setting,
             'verdict': None, 'error': None, 'label': None, 'write_note': sweep.note if sweep is not None else None}
    hung = info.get('hung') or _write_hung(sweep)
    # a drive that hung in discovery is reported as hung: its stuck tool (mt, sg_logs) still holds the node
    busy = None if missing or info.get('hung') else _verdict.busy_state(
        lock.to_dict() if lock is not None else None, sweep.to_dict() if sweep is not None else None, info)
    if busy:
        entry['busy'] = busy
        entry['error'] = _words.busy(nst, busy)
        try:
            entry['label'] = resolve_spec(info, setting).label     # the drive is known, only not ours to measure
        except (ReportError, ValueError):
            pass
        return entry
    if missing:
        entry['identity'] = None
        entry['error'] = ('%s is listed in tapeops_drives but discovery did not find it: check the cabling, '
                          'the st driver and the path.' % nst)
        return entry
    if hung:
        entry['error'] = ('%s does not answer: %s It has no verdict. Check the drive and its path (dmesg, the '
                          'drive\'s panel, the HBA), then re-run this host.' % (nst, hung.rstrip('.') + '.'))
        return entry
    try:
        spec = resolve_spec(info, setting)
    except (ReportError, ValueError) as exc:
        entry['error'] = str(exc)
        return entry
    entry['label'] = spec.label
    cfg, entry['setting_sources'] = _backup_settings.drive_config(info, setting, backup, sd, nb)
    entry['_item'] = {'spec': spec, 'drive': _with_preflight(info, preflight), 'tape': tape, 'config': cfg}
    return entry


def _facts(host_facts, memory_total_mb, backup):
    """The host's facts, with the memory and the backup settings the verdict used."""
    facts = dict(host_facts or {})
    if memory_total_mb is not None:
        facts.setdefault('memory_total_mb', memory_total_mb)
    if backup:
        facts.setdefault('backup', backup)
    return facts


def _what_if_entry(target_generation, options, backup, drives_info, preflight):
    """The drive entry of the what-if target (a drive the host does not have yet)."""
    from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _drive_model
    options = options or {}
    generation, form_factor = _drive_model.parse_generation(target_generation)
    spec = _drive_model.lookup(generation, form_factor, options.get('target_vendor'),
                               options.get('target_speed_floor_mb_s'), interface=options.get('target_interface'),
                               overrides=options.get('target_model'))
    links = host_links(drives_info, preflight)
    link = _hba_link.slowest([row['link'] for row in links]) or (links[0]['link'] if links else None)
    return {'id': 'what-if %s' % spec.label, 'nst': None, 'identity': None, 'write_sweep': None, 'settings': {},
            'verdict': None, 'error': None, 'label': spec.label, 'what_if': True, 'link': link, 'links': links,
            '_item': {'spec': spec, 'drive': {'link': link} if link else None, 'tape': None,
                      'config': dict(backup or {}), 'what_if': True}}


def _judge_entries(entries, source, memory_total_mb, options):
    """Set each entry's verdict (or error) from its '_item'; the host's error, or None."""
    items = [e['_item'] for e in entries if '_item' in e]
    if not items:
        return None
    planned = error = None
    if not source:
        error = 'No source read result: the source test failed or was skipped, so no verdict is possible.'
    else:
        verdict_options = dict((k, v) for k, v in (options or {}).items() if k in _verdict.DEFAULTS)
        try:
            planned = _host_verdicts(items, source, memory_total_mb, verdict_options)
        except (_verdict.VerdictInputError, ValueError) as exc:
            error = str(exc)
    for entry in entries:
        item = entry.pop('_item', None)
        if item is None:
            continue
        if planned is None:
            entry['error'] = entry['error'] or error
        else:
            entry['verdict'] = planned[items.index(item)]
    return error


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
        device = _records.device_of(entry)
        if device in seen:
            continue
        seen.add(device)
        out.append({'device': device, 'link': entry['link']})
    return out


def _with_preflight(info, preflight):
    """The drive entry completed with what the st preflight found (HBA path maximum and sg_tablesize, st's direct I/O,
    kernel MTWEOFI)."""
    if not isinstance(preflight, dict):
        return info
    merged = dict(info)
    mine = _match(_records.device_of(info), preflight.get('drives')) or {}
    if merged.get('hba_max_transfer_bytes') is None and mine.get('hba_max_transfer_bytes'):
        merged['hba_max_transfer_bytes'] = mine['hba_max_transfer_bytes']
    if not isinstance(merged.get('link'), dict) and isinstance(mine.get('link'), dict):
        merged['link'] = mine['link']
    # what st's direct I/O takes (the verdict's st_direct_io fix): the HBA's sg_tablesize, st's max_sg_segs
    for key in ('host_sg_tablesize', 'direct_io_max_bytes'):
        if merged.get(key) is None and mine.get(key) is not None:
            merged[key] = mine[key]
    driver = preflight.get('st_driver') if isinstance(preflight.get('st_driver'), dict) else {}
    for key, name in (('st_max_sg_segs', 'max_sg_segs'), ('st_try_direct_io', 'try_direct_io')):
        if merged.get(key) is None and driver.get(name) is not None:
            merged[key] = driver[name]
    if preflight.get('mtweofi_supported') is False or (
            merged.get('mtweofi_supported') is None and preflight.get('mtweofi_supported') is not None):
        merged['mtweofi_supported'] = preflight['mtweofi_supported']
        merged['mtweofi_basis'] = preflight.get('mtweofi_basis')
    return merged


def _host_verdicts(items, source, memory_total_mb, options):
    """evaluate_host over real drives; a what-if target is judged on its own (it replaces a drive). Worded."""
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
    return _words.verdicts([out[id(i)] for i in items])


# ---------------------------------------------------------------------------
# fleet rows


def rows(docs):
    """One row per host x drive (and one per host without drives/verdicts)."""
    out = []
    for doc in docs:
        drives = doc.get('drives') or []
        if (doc.get('status') != _run.STATUS_OK and not any(d.get('busy') for d in drives)) or not drives:
            error = doc.get('error') or 'No tape drive found on this host.'
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
                _verdict.SHOE_SHINING in failing_classes and verdict.get('would_shoe_shine')):
            bad.append(row)
    return bad


def load_comparison(compare_to, docs, tolerance=_compare.DEFAULT_TOLERANCE):
    """Compare ``docs`` with the run in directory ``compare_to`` (its host JSONs; ``load_earlier``)."""
    earlier = _run.load_earlier(compare_to)
    earlier_run = dict(next((d.get('run') for d in earlier if d.get('run')), {}) or {})
    earlier_run['dir'] = compare_to
    return _compare.compare(earlier, docs, tolerance, earlier_run)


# ---------------------------------------------------------------------------
# media section (upgrade check: media_inventory's summary against the target drive)


def media_section(media):
    """The host document's ``media`` from a media_inventory result (None when the run read no media)."""
    record = _records.Media.from_result(media)
    return record.to_dict() if record is not None else None
