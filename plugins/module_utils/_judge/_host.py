# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The host document: a host's measurements judged, drive by drive.

Private to this collection: may change without notice. Controller side: the
``qualify_verdict`` action calls :func:`assemble` (or :func:`host_document`
for a host that failed before its verdict) and saves what it returns through
``_run``.

:func:`assemble` takes the modules' records (``_records``: DriveIdentity,
SourceRead, WriteSweep, Preflight, Media, Mechanics, DriveLock,
StorageDaemonConfig; a module's result as Ansible returned it becomes its
record here) and returns the host's ``_records.HostReport``: each drive's
entry, named by the one drive resolver (``_resolve``) and judged with the
settings of ``_backup_settings``, and its verdict (``_verdict.evaluate_host``,
a what-if target on its own), worded once by ``_words`` into a
``_records.Verdict``; a drive without a verdict keeps why (BUSY, hung, not
found, not nameable, no source). The document stays a record until it is
saved: ``_run.save`` (or the action's result) makes it data.
"""

from __future__ import annotations

import dataclasses

from ansible_collections.tapeops.qualify.plugins.module_utils import _records, _run, _words
from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import (
    _backup_settings, _drive_model, _health, _observed, _resolve, _verdict)
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _hba_link


class DriveError(TapeopsError, ValueError):
    """A drive cannot be judged (its generation is unknown); the message says what to do."""


def _field(entry, key):
    """``key`` of a record or a dict (the preflight's drives are dicts), or None."""
    if isinstance(entry, dict):
        return entry.get(key)
    return getattr(entry, key, None)


# ---------------------------------------------------------------------------
# the document


def _document(host, status, drives, verdicts, source=None, host_facts=None, run=None, error=None, preflight=None,
              media=None, mechanics=None, storage_daemon=None, netbackup=None, observed=None):
    """The HostReport of records: ``drives`` DriveEntry, ``verdicts`` Verdict (each naming its ``drive``);
    ``observed`` ObservedDrive (an observe run's, else None)."""
    return _records.HostReport(
        host=str(host), status=status, error=error, generated_at=_run.utc_now(), run=dict(run or {}),
        facts=dict(host_facts or {}), preflight=preflight, source=source, drives=drives, verdicts=verdicts,
        media=media, mechanics=mechanics, worst_class=_records.worst([v.class_ for v in verdicts if v.class_]),
        storage_daemon=storage_daemon, netbackup=netbackup, observed=observed)


def host_document(host, status=_run.STATUS_OK, drives=None, source=None, host_facts=None, run=None, error=None,
                  preflight=None, media=None, mechanics=None, storage_daemon=None, netbackup=None, observed=None):
    """The per-host document, schema version 2 (docs/reports.md, docs/host-report.schema.json): a HostReport.

    For a host without a judged drive (it failed before its verdict), or a
    document made by hand: ``drives`` are drive entries (dicts or
    DriveEntry), each with its ``verdict`` (or None) as a dict; the document
    keeps the drives' measurements under ``drives`` and their verdicts apart
    under ``verdicts`` (each naming its ``drive``). Every measurement becomes
    its record, so nothing of Ansible's transport reaches the file.
    ``observed``: an observe run's entries (ObservedDrive or dicts; ``[]`` for an
    observe run's host that failed before its drives were watched).
    """
    entries, verdicts = [], []
    for drive in drives or []:
        drive = dict(drive)
        verdict = drive.pop('verdict', None)
        entries.append(_records.DriveEntry.from_dict(drive))
        if verdict:
            verdicts.append(_records.Verdict.from_dict(dict(verdict, drive=drive.get('id'))))
    return _document(host, status, entries, verdicts, _records.SourceRead.from_dict(source), host_facts, run,
                     error, _records.Preflight.from_dict(preflight), _records.Media.from_result(media),
                     [_records.Mechanics.from_dict(m) for m in mechanics] if mechanics else None,
                     _records.StorageDaemonConfig.from_result(storage_daemon),
                     _records.NetBackupBuffers.from_result(netbackup),
                     None if observed is None else [_records.ObservedDrive.from_dict(o) for o in observed])


# ---------------------------------------------------------------------------
# assembling a host's verdicts from the modules' records


class _Drive:
    """One drive of the host on its way into the document: its entry, what to judge it on, its verdict."""

    def __init__(self, entry, item=None):
        self.entry = entry
        # {'spec', 'drive', 'tape', 'config'(, 'what_if', 'observed_ratio')}: evaluate's inputs, or None
        self.item = item
        self.verdict = None


def _match(nst, entries):
    for entry in entries or []:
        if _records.device_of(entry) == nst:
            return entry
    return None


def resolve_spec(info, setting):
    """DriveSpec for a drive, from the collection's one drive resolver (``_judge._resolve``).

    ``info``: the drive's DriveIdentity record (tape_drive_info's entry); ``setting``: its tapeops_drives
    entry. The identity the spec rests on (with the inventory applied) and the spec replace ``info.generation``
    and ``info.drive_model``, so the host document records the drive the verdict used. Raises DriveError when
    the generation is unknown.
    """
    info = _records.DriveIdentity.from_dict(info) if isinstance(info, dict) else info
    inquiry = dict((k, _field(info, k)) for k in ('vendor', 'product', 'revision', 'density_code'))
    identity, spec = _resolve.resolve(inquiry, setting or None)
    if info is not None:
        info.generation = identity.to_dict()
        info.drive_model = spec.as_dict() if spec is not None else None
    if spec is None:
        raise DriveError(_words.generation_unknown(
            _field(info, 'nst') or _records.device_of(setting) or 'the drive', identity.reason))
    return spec


def _write_hung(sweep):
    """Why the write test says the drive hung (a tape operation past its deadline), as data, or None.

    ``sweep``: the drive's WriteSweep record (a write without a sweep keeps only its msg and reason, whether
    Ansible marked it failed or the playbook's wait registered it as a finding with failed_when: false).
    """
    if sweep is None or sweep.written:
        return None
    if sweep.msg == 'Timeout exceeded':   # async_wrapper's words when the job outlived its time limit
        return {'id': 'write_time_limit'}
    if sweep.reason == 'timeout':
        return {'id': 'op_deadline', 'msg': sweep.msg}
    return None


def _write_sweeps(write_sweep):
    """{device: WriteSweep} of write results (records, or module results as Ansible returned them)."""
    out = {}
    for result in write_sweep or []:
        record = _records.WriteSweep.from_result(result)
        if record is not None:
            out[record.device] = record
    return out


def _btapes(btape):
    """{device: BtapeSpeed} of btape_speed's results (records, or module results as Ansible returned them)."""
    out = {}
    for result in btape or []:
        record = _records.BtapeSpeed.from_result(result)
        if record is not None and record.device:
            out[record.device] = record
    return out


def _attach_btape(drives, btapes):
    """Each drive's btape record (``{device: BtapeSpeed}``): kept in its entry, and judged with it."""
    for drive in drives:
        drive.entry.btape = btapes.get(drive.entry.nst)
        if drive.item is not None and drive.entry.btape is not None:
            drive.item['btape'] = drive.entry.btape


def assemble(host, drives_info=None, source=None, write_sweep=None, drive_settings=None, backup=None,
             memory_total_mb=None, options=None, target_generation=None, run=None, preflight=None,
             host_facts=None, media=None, mechanics=None, locks=None, storage_daemon=None, netbackup=None,
             tape_ratio_from=None, btape=None):
    """The host's HostReport with a verdict per drive (and for the what-if target, if any).

    ``locks``: the drives' tape_drive_lock records (``_records.DriveLock.from_results``): a drive another
    run or process had is BUSY (``busy`` and its sentence as ``error``), with no verdict.
    ``storage_daemon``: what tapeops.qualify.bacula_sd_info read on the host (StorageDaemonConfig): each drive's
    Device settings where the inventory gives none (``_backup_settings``). ``netbackup``: what
    tapeops.qualify.netbackup_buffers_info read (NetBackupBuffers): the drives' block size, SIZE_DATA_BUFFERS,
    where the inventory gives none. ``tape_ratio_from``: the observe run the drives' own compression ratios come
    from (``qualify_tape_ratio_from``), ``{'run_dir', 'report'}`` (the host's HostReport of that run,
    ``_run.read_observed``) or ``{'run_dir', 'refused': {'why', 'path', 'detail', 'host'}}`` (why there is
    none); each drive to be judged gets ``_observed.drive_ratio``'s answer, matched by its id
    (``_verdict.tape_ratio``). ``btape``: btape_speed's results (BtapeSpeed), kept and judged (``_attach_btape``).

    The measurements are records (_records): ``drives_info`` DriveIdentity,
    ``source`` SourceRead, ``write_sweep`` WriteSweep, ``preflight``
    Preflight, ``media`` Media, ``mechanics`` a list of Mechanics; dicts as
    the modules return them are turned into records here.
    """
    # copies: the resolver writes each identity's generation and model into it
    drives_info = [dataclasses.replace(_records.DriveIdentity.from_dict(d)) for d in (drives_info or [])
                   if isinstance(d, (dict, _records.DriveIdentity))]
    source = _records.SourceRead.from_result(source)
    preflight = _records.Preflight.from_result(preflight)
    sd = _records.StorageDaemonConfig.from_result(storage_daemon)
    nb = _records.NetBackupBuffers.from_result(netbackup)
    settings = [d for d in (drive_settings or []) if isinstance(d, dict)]
    sweeps = {} if target_generation else _write_sweeps(write_sweep)
    missing = set() if target_generation else _add_missing(drives_info, settings)
    locks = {} if target_generation else _records.DriveLock.from_results(locks)
    drives = [_drive(info, _match(info.nst, settings) or {}, sweeps.get(info.nst), info.nst in missing, preflight,
                     backup, locks.get(info.nst), sd, nb)
              for info in drives_info]
    _attach_btape(drives, {} if target_generation else _btapes(btape))
    if target_generation:
        drives.append(_what_if(target_generation, options, backup, drives_info, preflight))
    if tape_ratio_from:
        for drive in drives:
            if drive.item is not None:
                drive.item['observed_ratio'] = _observed.drive_ratio(
                    None if drive.entry.what_if else drive.entry.id, tape_ratio_from['run_dir'],
                    tape_ratio_from.get('report'), tape_ratio_from.get('refused'))
    error = _judge(drives, source, memory_total_mb, options)
    for drive in drives:
        if not drive.entry.what_if and (drive.entry.setting_sources or drive.verdict):
            drive.entry.setting_sources = _backup_settings.complete_sources(
                drive.entry.setting_sources, drive.verdict.numbers if drive.verdict else None,
                (backup or {}).get('software'))
    status = _run.STATUS_OK if any(d.verdict for d in drives) else _run.STATUS_FAILED
    if status == _run.STATUS_FAILED and error is None:
        error = next((d.entry.error for d in drives if d.entry.error), None) or _words.NO_DRIVE
    mech = _records.Mechanics.from_results(mechanics)
    attach_findings(drives, mech)
    return _document(host, status, [d.entry for d in drives], [d.verdict for d in drives if d.verdict], source,
                     _facts(host_facts, memory_total_mb, backup), run, error if status != _run.STATUS_OK else None,
                     preflight, media=_records.Media.from_result(media), mechanics=mech, storage_daemon=sd,
                     netbackup=nb)


def _add_missing(drives_info, settings):
    """Add a line for each drive the inventory lists but discovery did not find; their nst paths."""
    known = set(d.nst for d in drives_info)
    missing = set()
    for setting in settings:
        nst = _records.device_of(setting)
        if nst and nst not in known:
            drives_info.append(_records.DriveIdentity(nst=nst))
            missing.add(nst)
    return missing


def _drive(info, setting, sweep, missing, preflight, backup, lock=None, sd=None, nb=None):
    """One drive, to be judged (``item``) or with the error that keeps it from a verdict."""
    nst = info.nst
    tape = sweep if sweep is not None and sweep.written else None
    # a failed write's steps stay in the document (write_sweep, with its reason and msg); only a whole sweep is judged
    kept = tape or (sweep if sweep is not None and sweep.measured else None)
    entry = _records.DriveEntry(id=nst, nst=nst, identity=info, write_sweep=kept, settings=setting,
                                write_note=sweep.note if sweep is not None else None)
    drive = _Drive(entry)
    if not missing:
        # what the drive says of its own and its cartridge's health, busy, hung or not: what discovery read of it
        entry.health = _health.of_drive(info)
    hung = info.hung or _write_hung(sweep)
    # a drive that hung in discovery is reported as hung: its stuck tool (mt, sg_logs) still holds the node
    busy = None if missing or info.hung else _verdict.busy_state(lock, sweep, info)
    if busy:
        entry.busy = busy
        entry.error = _words.busy(nst, busy)
        try:
            entry.label = resolve_spec(info, setting).label     # the drive is known, only not ours to measure
        except (DriveError, ValueError):
            pass
        return drive
    if missing:
        entry.identity = None
        entry.error = _words.not_discovered(nst)
        return drive
    if hung:
        entry.error = _words.not_answering(nst, hung)
        return drive
    try:
        spec = resolve_spec(info, setting)
    except (DriveError, ValueError) as exc:
        entry.error = str(exc)
        return drive
    entry.label = spec.label
    cfg, entry.setting_sources = _backup_settings.drive_config(info, setting, backup, sd, nb)
    drive.item = {'spec': spec, 'drive': _with_preflight(info, preflight), 'tape': tape, 'config': cfg,
                  'health': entry.health}
    return drive


def _facts(host_facts, memory_total_mb, backup):
    """The host's facts, with the memory and the backup settings the verdict used."""
    facts = dict(host_facts or {})
    if memory_total_mb is not None:
        facts.setdefault('memory_total_mb', memory_total_mb)
    if backup:
        facts.setdefault('backup', backup)
    return facts


def _what_if(target_generation, options, backup, drives_info, preflight):
    """The what-if target (a drive the host does not have yet), to be judged."""
    options = options or {}
    generation, form_factor = _drive_model.parse_generation(target_generation)
    spec = _drive_model.lookup(generation, form_factor, options.get('target_vendor'),
                               options.get('target_speed_floor_mb_s'), interface=options.get('target_interface'),
                               overrides=options.get('target_model'))
    links = host_links(drives_info, preflight)
    link = _hba_link.slowest([row['link'] for row in links]) or (links[0]['link'] if links else None)
    entry = _records.DriveEntry(id='what-if %s' % spec.label, settings={}, label=spec.label, what_if=True, link=link,
                                links=links)
    return _Drive(entry, {'spec': spec, 'drive': {'link': link} if link else None, 'tape': None,
                          'config': dict(backup or {}), 'what_if': True})


def _judge(drives, source, memory_total_mb, options):
    """Give each drive to be judged its verdict (or the error that keeps it from one); the host's error, or None."""
    judged = [d for d in drives if d.item is not None]
    if not judged:
        return None
    planned = error = None
    if not source:
        error = _words.NO_SOURCE
    else:
        verdict_options = dict((k, v) for k, v in (options or {}).items() if k in _verdict.DEFAULTS)
        try:
            planned = _host_verdicts([d.item for d in judged], source, memory_total_mb, verdict_options)
        except (_verdict.VerdictInputError, ValueError) as exc:
            error = str(exc)
    for index, drive in enumerate(judged):
        if planned is None:
            drive.entry.error = drive.entry.error or error
        else:
            drive.verdict = _words.verdict(planned[index], drive=drive.entry.id)
    return error


def host_links(drives_info, preflight):
    """[{'device', 'link'}] of the host's tape drives: tape_drive_info's link, else the st preflight's.

    The what-if target drive takes the place of one of them, so its link is
    the slowest known one (the first one when none is known).
    """
    out = []
    seen = set()
    for entry in list(drives_info or []) + list(_field(preflight, 'drives') or []):
        if not isinstance(entry, (dict, _records.DriveIdentity)) or not isinstance(_field(entry, 'link'), dict):
            continue
        device = _field(entry, 'nst') or _records.device_of(entry)
        if device in seen:
            continue
        seen.add(device)
        out.append({'device': device, 'link': _field(entry, 'link')})
    return out


def _with_preflight(info, preflight):
    """What the verdict judges the drive with: its identity completed with what the st preflight found (HBA path
    maximum and sg_tablesize, st's direct I/O, kernel MTWEOFI).

    ``info``: the drive's DriveIdentity; ``preflight``: the host's Preflight, or None (then the identity as it
    is). With a preflight, a dict of the identity's fields (not copied) and the preflight's: the verdict reads
    both alike.
    """
    if preflight is None:
        return info
    merged = dict((f.name, getattr(info, f.name)) for f in dataclasses.fields(info))
    mine = _match(info.nst, preflight.drives) or {}
    if merged.get('hba_max_transfer_bytes') is None and mine.get('hba_max_transfer_bytes'):
        merged['hba_max_transfer_bytes'] = mine['hba_max_transfer_bytes']
    if not isinstance(merged.get('link'), dict) and isinstance(mine.get('link'), dict):
        merged['link'] = mine['link']
    # what st's direct I/O takes (the verdict's st_direct_io fix): the HBA's sg_tablesize, st's max_sg_segs
    for key in ('host_sg_tablesize', 'direct_io_max_bytes'):
        if merged.get(key) is None and mine.get(key) is not None:
            merged[key] = mine[key]
    driver = preflight.st_driver if isinstance(preflight.st_driver, dict) else {}
    for key, name in (('st_max_sg_segs', 'max_sg_segs'), ('st_try_direct_io', 'try_direct_io')):
        if merged.get(key) is None and driver.get(name) is not None:
            merged[key] = driver[name]
    if preflight.mtweofi_supported is False or (
            merged.get('mtweofi_supported') is None and preflight.mtweofi_supported is not None):
        merged['mtweofi_supported'] = preflight.mtweofi_supported
        merged['mtweofi_basis'] = preflight.mtweofi_basis
    return merged


def _host_verdicts(items, source, memory_total_mb, options):
    """evaluate_host over real drives; a what-if target is judged on its own (it replaces a drive): decisions."""
    real = [i for i in items if not i.get('what_if')]
    out = {}
    if real:
        for index, verdict in enumerate(_verdict.evaluate_host(real, source, memory_total_mb=memory_total_mb,
                                                               options=options)):
            out[id(real[index])] = verdict
    for item in items:
        if item.get('what_if'):
            out[id(item)] = _verdict.evaluate(item['spec'], source, None, item.get('drive'), item['config'],
                                              memory_total_mb, 0, options, what_if=True,
                                              observed_ratio=item.get('observed_ratio'))
    return [out[id(i)] for i in items]


# ---------------------------------------------------------------------------
# an observe run: the drives watched during a window, judged, no verdict


def observe(host, drives_info=None, observed=None, jobs=None, drive_settings=None, options=None, run=None,
            host_facts=None, preflight=None, storage_daemon=None, netbackup=None, backup=None, memory_total_mb=None):
    """The HostReport of an observe run: each drive's entry and its window judged (``observed``), no verdicts.

    ``observed``: tape_drive_observe's results, one per drive (as registered: the async_status loop's results),
    matched to the drives by their device. Each window is judged (``_observed.observed_drive``) with the drive's
    model as the verdict would resolve it (``resolve_spec``: INQUIRY, the inventory's ``tapeops_drives`` entry
    and its ``model`` overrides) and ``options['tape_ratio']`` where the drive measured no compression. ``jobs``:
    bacula_job_run's results (``_place_jobs``). The document is ``ok`` when at least one drive was watched
    (judged or idle), else ``failed`` with why.
    """
    drives_info = [dataclasses.replace(_records.DriveIdentity.from_dict(d)) for d in (drives_info or [])
                   if isinstance(d, (dict, _records.DriveIdentity))]
    settings = [d for d in (drive_settings or []) if isinstance(d, dict)]
    missing = _add_missing(drives_info, settings)
    windows = dict((_records.device_of(r), r) for r in (observed or []) if isinstance(r, dict))
    tape_ratio = (options or {}).get('tape_ratio')
    entries, watched = [], []
    for info in drives_info:
        entry, seen = _observed_drive(info, _match(info.nst, settings) or {}, windows.get(info.nst),
                                      info.nst in missing, tape_ratio)
        entries.append(entry)
        if seen is not None:
            watched.append(seen)
    _place_jobs(watched, jobs)
    status = _run.STATUS_OK if any(o.status in (_observed.STATUS_JUDGED, _observed.STATUS_IDLE) for o in watched) \
        else _run.STATUS_FAILED
    error = None
    if status == _run.STATUS_FAILED:
        error = next((e for e in [o.error for o in watched] + [e.error for e in entries] if e), None) or (
            _words.NOTHING_OBSERVED if entries else _words.NO_DRIVE)
    return _document(host, status, entries, [], host_facts=_facts(host_facts, memory_total_mb, backup), run=run,
                     error=error, preflight=_records.Preflight.from_result(preflight),
                     storage_daemon=_records.StorageDaemonConfig.from_result(storage_daemon),
                     netbackup=_records.NetBackupBuffers.from_result(netbackup), observed=watched)


def _observed_drive(info, setting, result, missing, tape_ratio):
    """(the drive's entry, its ObservedDrive or None when it was not watched: not found, or hung in discovery)."""
    nst = info.nst
    entry = _records.DriveEntry(id=nst, nst=nst, identity=info, settings=setting)
    if missing:
        entry.identity = None
        entry.error = _words.not_discovered(nst)
        return entry, None
    if info.hung:
        entry.error = _words.not_answering(nst, info.hung)
        return entry, None
    spec = error = None
    try:
        spec = resolve_spec(info, setting)
        entry.label = spec.label
    except (DriveError, ValueError) as exc:
        entry.error = error = str(exc)
    return entry, _observed.observed_drive(nst, result, spec, error, tape_ratio)


def _place_jobs(watched, jobs):
    """Give each bacula_job_run result (``jobs``) to the drive it wrote to.

    That drive is the one the result names (``item``: a job started in a loop over entries with ``device``), else
    the one drive that wrote in the window, else the host's one watched drive. A job that cannot be placed is
    said in a note on every watched drive.
    """
    for result in jobs or []:
        if not isinstance(result, dict) or result.get('skipped'):
            continue
        job = _records.BaculaJob.from_dict(result)
        error = str(result.get('msg') or 'the job failed') if result.get('failed') else None
        named = _records.device_of(result)
        wrote = [o for o in watched if o.status in (_observed.STATUS_JUDGED, _observed.STATUS_NOT_JUDGED)]
        target = next((o for o in watched if o.drive == named), None) if named else (
            wrote[0] if len(wrote) == 1 else watched[0] if len(watched) == 1 else None)
        if target is None:
            for seen in watched:
                seen.notes.append(_words.job_not_placed(job, named))
            continue
        target.job, target.job_error = job, error


# ---------------------------------------------------------------------------
# the mechanics' findings (tape_mechanics_benchmark) in the verdicts


def attach_findings(drives, mechanics):
    """Add the mechanics findings to the verdicts of ``drives`` (``_Drive``s, or ``(entry, verdict)`` pairs).

    ``mechanics``: the host's Mechanics records. A drive's verdict gets its own measurement's findings (current
    drive); the what-if's gets the target side of every drive's forecast.
    """
    for mech in mechanics or []:
        if mech.status != 'ok':
            continue
        for drive in drives:
            entry, verdict = (drive.entry, drive.verdict) if isinstance(drive, _Drive) else drive
            if not verdict:
                continue
            if entry.what_if:
                side = 'target'
            elif entry.nst and entry.nst == mech.device:
                side = 'current'
            else:
                continue
            found = _verdict.mechanics_findings(mech, side)
            verdict.findings.extend(_words.finding(f) for f in found)
