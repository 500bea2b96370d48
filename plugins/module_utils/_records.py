# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Typed records of what the modules measure: the joint between _measure and _judge.

Private to this collection: may change without notice.

tape_drive_info (each drive), tape_write_benchmark, source_read_benchmark,
st_preflight_info, tape_mechanics_benchmark (``Mechanics.measured``),
media_inventory (its ``summary``: ``Media.summary``), bacula_sd_info
(``StorageDaemonConfig``, what it read), bacula_job_run (``BaculaJob``) and
netbackup_buffers_info (``NetBackupBuffers``) exit with their record
as their documented RETURN structure (``to_dict``; a unit test holds RETURN
and record to the same keys). The controller turns whatever
Ansible hands it (a module result, an ``async_status`` result, a looped
task's ``results`` entry) into the same record ONCE with ``from_result``:
``from_dict`` keeps the record's fields and drops everything Ansible adds in
transport (``ansible_job_id``, ``results_file``, ``stdout_lines``,
``invocation``, ``item``, ``changed``, ``started``/``finished``, ...). After
that, the verdict and the reports read records only.

``HostReport`` is the per-host JSON document (schema version 2,
docs/host-report.schema.json); ``HostReport.load`` reads it and refuses any
other schema, naming it. Its drives' verdicts are ``Verdict`` records (with
their ``Finding``s, ``Fix``es and ``Forecast``s), made by ``_judge._host`` and
worded by ``_words``; the verdict's classes are named here (``CLASSES``), so
that whatever reads a document reads them without the judge. An observe run's
document has no verdicts: its ``observed`` holds each watched drive's
``ObservedDrive`` (the window judged, the job it watched).

Importable on Python 3.9 managed hosts: no ``X | Y`` types at runtime, no
``match``.
"""

from __future__ import annotations

import dataclasses
import math
import re
import typing as t

SCHEMA_VERSION = 2

# A drive's verdict class (docs/verdict.md): the judge decides it, every report reads it
STREAMING = 'STREAMING'
SPEED_MATCHED = 'SPEED-MATCHED'
SHOE_SHINING = 'SHOE-SHINING'
MISCONFIGURED = 'MISCONFIGURED'
INCONCLUSIVE = 'INCONCLUSIVE'
CLASSES = (STREAMING, SPEED_MATCHED, SHOE_SHINING, MISCONFIGURED, INCONCLUSIVE)
# An observed window's back-hitches make it SHOE-SHINING only when the lower bound of their rate at this
# confidence reaches the line (_judge/_observed.backhitches_per_hour_low): a choice, not a measurement.
BACKHITCH_CONFIDENCE = 0.9

# Keys Ansible adds to a module's result on its way to the controller, or that
# only say how the task ran. Records never carry them; ``transport_keys``
# lists the ones a dict still holds (tests use it on every written document).
# No record has a field of Ansible's reserved result keys in another meaning
# (tests/unit/plugins/modules/test_reserved_result_keys.py): a list named ``skipped``
# made Ansible see the source read as a skipped task (issue 28).
TRANSPORT_KEYS = frozenset((
    'ansible_job_id', 'results_file', 'started', 'finished', 'attempts', 'stdout', 'stdout_lines', 'stderr',
    'stderr_lines', 'invocation', 'item', 'ansible_loop_var', 'ansible_index_var', 'ansible_loop', 'changed',
    'failed', 'failed_when_result', 'changed_when_result', 'skip_reason', 'false_condition',
    'deprecations', '_ansible_no_log', '_ansible_verbose_always', '_ansible_item_label', 'ansible_facts',
))


class RecordError(ValueError):
    """Input that is not a record of the expected kind; the message says what to pass instead."""


def finite(value):
    """``value`` as a finite float, or None (None, a bool, text that is no number, NaN and infinity)."""
    if value is None or isinstance(value, bool):
        return None
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    if math.isnan(value) or math.isinf(value):
        return None
    return value


def bisect(below, low, high, rounds=80):
    """The point between ``low`` and ``high`` where ``below(x)`` turns from True to False."""
    for _round in range(rounds):
        mid = (low + high) / 2.0
        if below(mid):
            low = mid
        else:
            high = mid
    return low


def _plain(value):
    """``value`` with nested records turned into dicts (lists and dicts walked)."""
    if isinstance(value, Record):
        return value.to_dict()
    if isinstance(value, dict):
        return dict((k, _plain(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _without_none(data, keys):
    """``data`` without those of ``keys`` whose value is None (fields added later: older documents lack them)."""
    return dict((k, v) for k, v in data.items() if k not in keys or v is not None)


def _informational(cls, result, always, module):
    """The record of an informational module's result (``cls``); None when it was skipped.

    ``always`` is a key every successful result has. A task with ``failed_when: false`` keeps the play going and
    its failure is then only in ``msg``: the record keeps only the error.
    """
    if isinstance(result, cls):
        return result
    if not isinstance(result, dict) or result.get('skipped') or not result:
        return None
    if result.get('failed') or (always not in result and result.get('msg')):
        return cls(error=str(result.get('msg') or '%s failed' % module))
    return cls.from_dict(result)


def _nested(kind, many=False):
    """Field metadata: the field holds a record (or a list of records) of class ``kind``."""
    return {'record': kind, 'many': many}


# Field metadata of a field whose key in the document is a Python keyword (``class``)
_CLASS_KEY = {'key': 'class'}


def key_of(field):
    """The key a record's field has in its dict (its name, or the ``key`` its metadata gives)."""
    return field.metadata.get('key', field.name)


def keys_of(cls):
    """The keys of a record class's dict, in field order."""
    return [key_of(f) for f in dataclasses.fields(cls)]


def transport_keys(data):
    """The keys of ``data`` (a dict) that belong to Ansible's transport, not to a measurement."""
    return sorted(k for k in (data or {}) if k in TRANSPORT_KEYS or str(k).startswith('_ansible'))


@dataclasses.dataclass
class Record:
    """Base of every record: ``to_dict`` / ``from_dict`` over the dataclass fields."""

    def to_dict(self):
        """The record as plain JSON data (a copy: every dict and list is new)."""
        return dict((key_of(f), _plain(getattr(self, f.name))) for f in dataclasses.fields(self))

    @classmethod
    def from_dict(cls, data):
        """The record from a dict; keys that are not fields (Ansible's transport among them) are dropped."""
        if data is None:
            return None
        if isinstance(data, cls):
            return data
        if not isinstance(data, dict):
            raise RecordError('%s: expected a mapping, got %s (%r).' % (
                cls.__name__, type(data).__name__, str(data)[:80]))
        values = {}
        for field in dataclasses.fields(cls):
            if key_of(field) not in data:
                continue
            value = data[key_of(field)]
            kind = field.metadata.get('record')
            if kind is not None and value is not None:
                if field.metadata.get('many'):
                    value = [kind.from_dict(v) for v in value or [] if isinstance(v, dict)]
                elif isinstance(value, dict):
                    value = kind.from_dict(value)
            values[field.name] = value     # not copied here: to_dict copies
        return cls(**values)


# ---------------------------------------------------------------------------
# a drive's and its cartridge's health (docs/health.md): read from the drive's log pages and the cartridge's
# memory, judged by _judge/_health; in the host document as each drive's
# identity.cartridge_memory and health

# A drive's health status, best first: the judge decides it (``_judge._health.judge``), whatever reads it reads
# it here. UNKNOWN: the drive's TapeAlert page was not read and nothing else read crossed a line.
HEALTH_OK = 'OK'
HEALTH_CLEAN = 'CLEAN'
HEALTH_DEGRADED = 'DEGRADED'
HEALTH_FAILING = 'FAILING'
HEALTH_UNKNOWN = 'UNKNOWN'
HEALTH_STATUSES = (HEALTH_OK, HEALTH_CLEAN, HEALTH_DEGRADED, HEALTH_FAILING, HEALTH_UNKNOWN)


def _first_of(order, values):
    """The first of ``order`` that is among ``values``, or None."""
    return next((value for value in order if value in values), None)


def worst_health(statuses):
    """The worst of health statuses (FAILING, DEGRADED, CLEAN, then OK, UNKNOWN), or None."""
    return _first_of((HEALTH_FAILING, HEALTH_DEGRADED, HEALTH_CLEAN, HEALTH_OK, HEALTH_UNKNOWN), statuses)


@dataclasses.dataclass
class CartridgeMemory(Record):
    """A cartridge's Medium Auxiliary Memory as READ ATTRIBUTE gives it (``_tools._sg_read_attr.parse``).

    Every field None when the cartridge did not give it. Capacities and byte counts in MiB, as the drive keeps
    them; ``tape_alert_flags`` the 64-bit TapeAlert flags of the cartridge's previous load and
    ``tape_alert_active`` their numbers; ``loaded_by`` the last four drives that loaded it, newest first
    (``{'vendor', 'serial'}``); ``medium_type`` 0x00 data, 0x01 cleaning, 0x80 WORM (``medium_type_name``);
    ``manufacture_date`` and ``last_written`` ISO text.
    """

    medium_serial: t.Optional[str] = None
    medium_manufacturer: t.Optional[str] = None
    manufacture_date: t.Optional[str] = None
    medium_density_code: t.Optional[int] = None
    format_density_code: t.Optional[int] = None
    medium_type: t.Optional[int] = None
    medium_type_name: t.Optional[str] = None
    medium_length_m: t.Optional[int] = None
    load_count: t.Optional[int] = None
    initialization_count: t.Optional[int] = None
    remaining_capacity_mib: t.Optional[int] = None
    maximum_capacity_mib: t.Optional[int] = None
    total_mib_written: t.Optional[int] = None
    total_mib_read: t.Optional[int] = None
    mib_written_last_load: t.Optional[int] = None
    mib_read_last_load: t.Optional[int] = None
    tape_alert_flags: t.Optional[int] = None
    tape_alert_active: t.Optional[list] = None
    loaded_by: t.Optional[list] = None
    barcode: t.Optional[str] = None
    volume_identifier: t.Optional[str] = None
    application_vendor: t.Optional[str] = None
    application_name: t.Optional[str] = None
    last_written: t.Optional[str] = None
    mam_capacity_bytes: t.Optional[int] = None
    mam_space_remaining_bytes: t.Optional[int] = None
    notes: t.Optional[list] = None

    @classmethod
    def from_parse(cls, parsed):
        """The record of ``_sg_read_attr.parse``'s result (its raw ``attributes`` and other keys are not kept)."""
        if not isinstance(parsed, dict):
            raise RecordError('CartridgeMemory: expected the dict _sg_read_attr.parse returns, got %s.'
                              % type(parsed).__name__)
        loads = [parsed.get(k) for k in ('loaded_by_last', 'loaded_by_1', 'loaded_by_2', 'loaded_by_3')]
        data = dict(parsed)
        data['loaded_by'] = [v for v in loads if isinstance(v, dict)] or None
        data['notes'] = list(parsed.get('notes') or []) or None
        return cls.from_dict(data)


@dataclasses.dataclass
class HealthFinding(Record):
    """One thing that makes a drive's health worse than OK, as data (``_words.health_finding`` words it).

    ``code``: what was found (``tape_alert``, ``cleaning_requested``, ``uncorrected_errors``, ``error_rate``,
    ``cartridge_errors``, ``retry_rate``, ``cartridge_loads``, ``cartridge_passes``, ``cartridge_tape_alert``);
    ``status``: the status it gives (CLEAN, DEGRADED or FAILING); ``evidence``: the flag or counter behind it
    (page, name, value, and the limit it crossed); ``fix``: what to do (``clean_drive``, ``retire_cartridge``,
    ``call_service``, ...); ``source``: the key of the source of its meaning or limit (``_judge._health.SOURCES``);
    ``estimate``: the limit is an estimate, not a vendor's figure.
    """

    code: t.Optional[str] = None
    status: t.Optional[str] = None
    evidence: t.Optional[dict] = None
    fix: t.Optional[str] = None
    source: t.Optional[str] = None
    estimate: bool = False


@dataclasses.dataclass
class Health(Record):
    """A drive's health and its cartridge's (``_judge._health.judge``): the status, what makes it so, what was read.

    ``findings`` worst first; ``counters`` every counter the judgement read, by page; ``thresholds`` the limits it
    used, each ``{'value', 'estimate', 'source'}``; ``unknown`` what could not be judged and why (a reason id).
    """

    status: t.Optional[str] = None
    findings: t.Optional[list] = dataclasses.field(default=None, metadata=_nested(HealthFinding, many=True))
    counters: t.Optional[dict] = None
    thresholds: t.Optional[dict] = None
    unknown: t.Optional[dict] = None


# ---------------------------------------------------------------------------
# what the modules measure


@dataclasses.dataclass
class DriveIdentity(Record):
    """One drive as tapeops.qualify.tape_drive_info found it (INQUIRY, st, sg, loaded cartridge, counters)."""

    nst: t.Optional[str] = None
    st: t.Optional[str] = None
    sg: t.Optional[str] = None
    hctl: t.Optional[str] = None
    vendor: t.Optional[str] = None
    product: t.Optional[str] = None
    revision: t.Optional[str] = None
    serial: t.Optional[str] = None
    serial_hex: t.Optional[str] = None
    generation: t.Optional[dict] = None
    block_limits: t.Optional[dict] = None
    hba_max_transfer_bytes: t.Optional[int] = None
    link: t.Optional[dict] = None
    block_size: t.Optional[int] = None
    density_code: t.Optional[str] = None
    media_loaded: t.Optional[bool] = None
    write_protected: t.Optional[bool] = None
    busy: t.Optional[bool] = None
    mt_status: t.Optional[dict] = None
    mt_error: t.Optional[str] = None
    barcode: t.Optional[str] = None
    changer: t.Optional[dict] = None
    mtweofi_supported: t.Optional[bool] = None
    mtweofi_basis: t.Optional[str] = None
    warnings: t.Optional[list] = None
    st_options: t.Optional[dict] = None
    stats: t.Optional[dict] = None
    log_pages: t.Optional[dict] = None
    drive_model: t.Optional[dict] = None
    hung: t.Optional[str] = None
    # the loaded cartridge's memory (READ ATTRIBUTE), or None with the reason it was not read
    cartridge_memory: t.Optional[CartridgeMemory] = dataclasses.field(
        default=None, metadata=_nested(CartridgeMemory))
    cartridge_memory_reason: t.Optional[str] = None

    def to_dict(self):
        # absent, not null, where discovery did not say (documents and results written before it read them)
        return _without_none(super().to_dict(), ('cartridge_memory', 'cartridge_memory_reason'))


@dataclasses.dataclass
class FilemarkCost(Record):
    """One file-mark run of the write benchmark: a payload written in segments, each closed by a mark."""

    kind: t.Optional[str] = None
    segment_mb: t.Optional[float] = None
    block_size: t.Optional[int] = None
    bytes: t.Optional[int] = None
    seconds: t.Optional[float] = None
    mb_s: t.Optional[float] = None
    marks: t.Optional[int] = None
    mark_seconds: t.Optional[float] = None
    seconds_lost_per_mark: t.Optional[float] = None
    error: t.Optional[str] = None
    # 'measured' (written), 'computed' (a segment the run would close fewer than twice: its rate from the cost per
    # mark measured at computed_from_segment_mb), None (not run: error says why)
    basis: t.Optional[str] = None
    computed_from_segment_mb: t.Optional[float] = None

    def to_dict(self):
        # runs recorded before basis was kept read back as they were written
        return _without_none(super().to_dict(), ('basis', 'computed_from_segment_mb'))


# What a failed write result keeps of its measurements (WriteSweep.from_result)
_FAILED_KEEPS = ('sweep', 'filemarks', 'sweep_stopped', 'rewound')


@dataclasses.dataclass
class WriteSweep(Record):
    """What tapeops.qualify.tape_write_benchmark measured on one drive.

    A failed write (reason, msg) keeps the steps and file-mark runs measured before it stopped (``sweep``,
    ``filemarks``, ``sweep_stopped``, ``rewound``); it is not ``written``: no verdict reads its partial sweep.
    A refusal or a skip has reason and msg only.
    """

    device: t.Optional[str] = None
    plan: t.Optional[dict] = None
    drive: t.Optional[dict] = None
    media: t.Optional[dict] = None
    media_decision: t.Optional[str] = None
    sweep: t.Optional[list] = None
    ceiling_block_size: t.Optional[int] = None
    sweep_stopped: t.Optional[str] = None
    best: t.Optional[dict] = None
    filemarks: t.Optional[list] = dataclasses.field(default=None, metadata=_nested(FilemarkCost, many=True))
    st_stats_delta: t.Optional[dict] = None
    log_pages_before: t.Optional[dict] = None
    log_pages_after: t.Optional[dict] = None
    rewound: t.Optional[bool] = None
    mtweofi_supported: t.Optional[bool] = None
    mtweofi_basis: t.Optional[str] = None
    mtweofi: t.Optional[dict] = None
    read_back: t.Optional[dict] = None
    pool_seconds: t.Optional[float] = None
    contention: t.Optional[dict] = None       # others' use of the drive during the sweep (_contention.drive)
    # what the drive's compressor made of each pattern (_measure/_tape_compression), when the run asked for it
    compression_probe: t.Optional[dict] = None
    warnings: t.Optional[list] = None
    reason: t.Optional[str] = None
    msg: t.Optional[str] = None

    @property
    def failed(self):
        """True for a write that failed, was refused or skipped (it says why: reason or msg)."""
        return self.reason is not None or self.msg is not None

    @property
    def written(self):
        """True for a sweep that ran to its end: the one a verdict judges."""
        return bool(self.sweep) and not self.failed

    @property
    def measured(self):
        """True when the drive wrote anything measured (a sweep step or a file-mark run), failed or not."""
        return bool(self.sweep or self.filemarks)

    @property
    def note(self):
        """Why there is no sweep (refused media, barcode not allowed, failed, skipped), or None."""
        if self.written:
            return None
        return str(self.msg or self.reason or 'no sweep was written')

    @classmethod
    def from_result(cls, result):
        """The record of one task result (the module's, async_status's, a loop item's); None for a non-dict.

        A result that failed or wrote no sweep keeps its device, why (``msg``,
        ``reason``) and what was measured before it stopped (the steps, the
        file-mark runs, ``sweep_stopped``, ``rewound``): a refusal is a
        finding, a failed write's steps are measurements, not a sweep to judge.
        """
        if isinstance(result, cls):
            return result
        if not isinstance(result, dict):
            return None
        device = device_of(result)
        if result.get('skipped') or result.get('failed') or not result.get('sweep'):
            kept = cls.from_dict(dict((k, result.get(k)) for k in _FAILED_KEEPS))
            kept.device = device
            kept.reason = result.get('reason')
            kept.msg = (result.get('msg') or result.get('skip_reason') or result.get('reason')
                        or ('the write test failed' if result.get('failed') else None))
            return kept
        record = cls.from_dict(result)
        record.device = record.device or device
        return record

    def to_dict(self):
        # sweeps recorded without them (or run without the probe) read back as they were written
        return _without_none(super().to_dict(), ('contention', 'compression_probe'))


@dataclasses.dataclass
class BtapeSpeed(Record):
    """What tapeops.qualify.btape_speed measured on one drive: the storage daemon's own writer (Bacula/Bareos).

    ``tests`` as ``_btape.parse_speed`` gives them (data, structure, block_size, total_rate_mb_s, errors ...).
    A refusal, a failure or a skip has ``reason`` and ``msg`` (and the tests btape finished before it failed).
    """

    device: t.Optional[str] = None
    command: t.Optional[str] = None
    btape_version: t.Optional[str] = None
    summary: t.Optional[dict] = None
    tests: t.Optional[list] = None
    errors: t.Optional[list] = None
    barcode: t.Optional[str] = None
    write_allowed_because: t.Optional[str] = None
    rewound: t.Optional[bool] = None
    reason: t.Optional[str] = None
    msg: t.Optional[str] = None

    @property
    def ran(self):
        """True when btape finished at least one test with a rate."""
        return any(isinstance(test, dict) and finite(test.get('total_rate_mb_s')) is not None
                   for test in self.tests or [])

    @classmethod
    def from_result(cls, result):
        """The record of one btape_speed result (a loop item's); None for a non-dict or a skipped item."""
        if isinstance(result, cls):
            return result
        if not isinstance(result, dict) or result.get('skipped'):
            return None
        item = result.get('item') if isinstance(result.get('item'), dict) else {}
        # the module returns the gate's device (a mapping); a record, as a host document keeps it, its path
        given = result.get('device')
        gate = given if isinstance(given, dict) else {}
        record = cls.from_dict(dict((k, v) for k, v in result.items() if k != 'device'))
        record.device = str((given if isinstance(given, str) else None) or _module_arg(result, 'device')
                            or item.get('nst') or gate.get('path') or '') or None
        if result.get('failed') and not record.reason:
            record.reason = 'failed'
        if result.get('failed') or record.reason:
            record.msg = str(result.get('msg') or record.reason)
        return record


@dataclasses.dataclass
class SourceRead(Record):
    """What tapeops.qualify.source_read_benchmark measured: the sources read file by file, as a backup reads."""

    streams: t.Optional[list] = None
    aggregate: t.Optional[dict] = None
    passes: t.Optional[float] = None
    seconds: t.Optional[float] = None
    samples: t.Optional[int] = None
    min_samples: t.Optional[int] = None
    inconclusive: t.Optional[dict] = None     # {reason} below min_samples one-second samples, else None
    scaling: t.Optional[list] = None
    per_drive: t.Optional[dict] = None
    ingest: t.Optional[dict] = None
    file_sizes: t.Optional[dict] = None
    compressibility: t.Optional[dict] = None
    cache: t.Optional[dict] = None
    passed_over: t.Optional[list] = None        # [{path, kind, reason}] entries of the trees not read
    passed_over_counts: t.Optional[dict] = None  # {kind: n}
    warnings_list: t.Optional[list] = None
    synthetic: t.Optional[dict] = None
    plan: t.Optional[dict] = None
    contention: t.Optional[dict] = None       # others' reads of the sources' devices (_contention.sources)
    fio_version: t.Optional[str] = None
    fio_cmd: t.Optional[list] = None

    @classmethod
    def from_result(cls, result):
        """The record of source_read_benchmark's (or async_status's) result; None when it measured nothing."""
        if isinstance(result, cls):
            return result
        if not isinstance(result, dict) or result.get('skipped') is True or result.get('failed') or not result:
            return None
        return cls.from_dict(result)

    def to_dict(self):
        return _without_none(super().to_dict(), ('contention',))


@dataclasses.dataclass
class DriveLock(Record):
    """One drive's lock as tapeops.qualify.tape_drive_lock left it (taken, renewed, busy, released).

    ``busy`` with ``reason`` ``locked`` (another run holds the drive's lease) or
    ``open`` (``users``: processes with the drive's st/sg nodes open).
    """

    device: t.Optional[str] = None
    address: t.Optional[str] = None
    state: t.Optional[str] = None
    reason: t.Optional[str] = None
    holder: t.Optional[dict] = None
    users: t.Optional[list] = None
    replaced: t.Optional[dict] = None
    lease_path: t.Optional[str] = None

    @property
    def busy(self):
        return self.state == 'busy'

    @classmethod
    def from_results(cls, registered):
        """{device: DriveLock} of tape_drive_lock's registered result (its ``locks``), a list of locks, or None.

        A list of registered results (the first lease, then its renewals) reads them in order: a device's last
        word wins, so a drive found busy at a renewal is busy.
        """
        if isinstance(registered, list) and any(isinstance(r, dict) and ('locks' in r or 'skipped' in r)
                                                for r in registered):
            out = {}
            for result in registered:
                out.update(cls.from_results(result))
            return out
        if isinstance(registered, dict):
            registered = registered.get('locks') if not registered.get('skipped') else None
        out = {}
        for entry in registered or []:
            record = cls.from_dict(entry) if isinstance(entry, (dict, cls)) else None
            if record is not None and record.device:
                out[record.device] = record
        return out


@dataclasses.dataclass
class Preflight(Record):
    """What tapeops.qualify.st_preflight_info read (st driver, MTWEOFI, HBA path maximum, links)."""

    kernel: t.Optional[str] = None
    mtweofi_supported: t.Optional[bool] = None
    mtweofi_basis: t.Optional[str] = None
    st_driver_version: t.Optional[str] = None
    st_driver: t.Optional[dict] = None
    hba_max_transfer_bytes: t.Optional[int] = None
    block_size_fits: t.Optional[bool] = None
    drives: t.Optional[list] = None
    error: t.Optional[str] = None

    @classmethod
    def from_result(cls, result):
        """The record of st_preflight_info's result; a failed one (it is informational) keeps only its error."""
        return _informational(cls, result, 'kernel', 'st_preflight_info')


@dataclasses.dataclass
class Mechanics(Record):
    """One drive's tapeops.qualify.tape_mechanics_benchmark (status ok, failed with reason, or planned)."""

    device: t.Optional[str] = None
    status: str = 'ok'
    error: t.Optional[str] = None
    reason: t.Optional[str] = None
    barcode: t.Optional[str] = None
    slot: t.Optional[int] = None
    restored: t.Optional[bool] = None
    final_location: t.Optional[dict] = None
    summary: t.Optional[dict] = None
    filemarks: t.Optional[dict] = None
    locate_error: t.Optional[str] = None
    forecast: t.Optional[dict] = None
    size_warnings: t.Optional[list] = None
    warnings: t.Optional[list] = None

    _FILEMARK_KEYS = ('written', 'refused', 'reason', 'msg', 'marks', 'files', 'file_mb', 'bytes', 'rate_mb_s',
                      'seconds_lost_per_mark', 'media_decision')

    @classmethod
    def measured(cls, result):
        """The record of what the benchmark returned on the host (``_measure._mechanics.MechanicsBenchmark.run``,
        then ``_judge._mechanics.analyse``).

        A run that timed nothing (check mode: no ``summary``) is ``planned``.
        The file marks keep what a report needs (not the media read at BOT
        nor the two write runs behind ``seconds_lost_per_mark``).
        """
        record = cls.from_dict(result)
        record.status, record.error, record.reason = 'ok', None, None
        record.warnings = list(result.get('warnings') or [])
        if 'summary' not in result:
            record.status = 'planned'
            record.error = 'check mode: nothing was moved or timed'
        if isinstance(record.filemarks, dict):
            record.filemarks = dict((k, record.filemarks[k]) for k in cls._FILEMARK_KEYS if k in record.filemarks)
        return record

    @classmethod
    def from_result(cls, result):
        """The record of one module result as Ansible registered it (None for a skipped loop item)."""
        if isinstance(result, cls):
            return result
        if not isinstance(result, dict) or result.get('skipped'):
            return None
        if result.get('status') in ('ok', 'failed', 'planned') and not result.get('failed'):
            return cls.from_dict(result)        # the module's record, or a host document's section
        item = result.get('item') if isinstance(result.get('item'), dict) else {}
        # a result written before the module returned its record has no status: measured() sets it
        record = cls.measured(result)
        record.device = result.get('device') or _module_arg(result, 'device') or item.get('nst')
        # failed_when: false keeps the play going: the refusal is then only in reason / msg
        if result.get('failed') or result.get('reason') or ('summary' not in result and result.get('msg')):
            record.status = 'failed'
            record.error = str(result.get('msg') or 'tape_mechanics_benchmark failed')
            record.reason = result.get('reason')
        return record

    @classmethod
    def from_results(cls, registered):
        """Records of a registered result (one, a looped task's, or a list); None when nothing was asked."""
        out = [cls.from_result(r) for r in _results(registered)]
        return [r for r in out if r is not None] or None

    def to_dict(self):
        # absent operations stay absent in the document (docs/reports.md, "The mechanics section")
        return dict((k, v) for k, v in super().to_dict().items()
                    if v is not None or k in ('device', 'status', 'error'))


@dataclasses.dataclass
class Media(Record):
    """The media section: tapeops.qualify.media_inventory's summary against the target drive."""

    status: str = 'ok'
    error: t.Optional[str] = None
    target: t.Optional[dict] = None
    parameters: t.Optional[dict] = None
    libraries: t.Optional[list] = None
    totals: t.Optional[dict] = None
    migration: t.Optional[dict] = None
    keep_old_drive_libraries: t.Optional[list] = None
    findings: t.Optional[list] = None

    @classmethod
    def summary(cls, summary):
        """media_inventory's ``summary``: the classification against the target drive (``_media.summarize``)."""
        record = cls.from_dict(summary)
        record.status, record.error = 'ok', None
        return record

    @classmethod
    def from_result(cls, media):
        """The record of a media_inventory result (None when the run read no media)."""
        if isinstance(media, cls):
            return media
        if not isinstance(media, dict) or not media:
            return None
        if media.get('status') in ('ok', 'failed', 'skipped'):
            return cls.from_dict(media)     # a host document's section
        if media.get('skipped'):
            return cls(status='skipped', error=media.get('skip_reason') or media.get('msg') or 'skipped')
        if media.get('failed'):
            return cls(status='failed', error=str(media.get('msg') or 'media_inventory failed'))
        summary = media.get('summary') if 'summary' in media else media
        if not isinstance(summary, dict) or 'libraries' not in summary or 'target' not in summary:
            # A failure the play kept going past (failed_when: false) still carries the module's message.
            return cls(status='failed', error=str(
                media.get('msg') or 'media_inventory returned no classification (no target generation?)'))
        return cls.summary(summary)     # the module's record, or a summary written before it returned one

    def to_dict(self):
        out = super().to_dict()
        if self.status != 'ok':
            return {'status': self.status, 'error': self.error}
        return out


@dataclasses.dataclass
class ObservedWindow(Record):
    """What tapeops.qualify.tape_drive_observe saw a drive do during a window (``planned`` in check mode).

    Read-only: the st driver's counters once an interval, the drive's log pages
    before and after. ``series`` holds one entry per interval in columns (``t``,
    ``seconds`` and each st counter's difference, ``in_flight`` as read at the
    interval's end), so a forecast can replay the host-to-drive bytes second by
    second (``write_rates_mb_s``). An observe run's host document keeps it per drive
    (``ObservedDrive.window``) without its series and log pages (``in_document``).
    """

    device: t.Optional[str] = None
    status: str = 'observed'
    drive: t.Optional[dict] = None
    window: t.Optional[dict] = None
    idle: t.Optional[bool] = None
    bytes_written: t.Optional[int] = None
    bytes_read: t.Optional[int] = None
    busy_seconds: t.Optional[float] = None
    mb_s: t.Optional[float] = None
    window_mb_s: t.Optional[float] = None
    idle_gaps: t.Optional[list] = None
    other_commands: t.Optional[int] = None
    compression_ratio: t.Optional[float] = None
    compression: t.Optional[dict] = None
    backhitches: t.Optional[int] = None
    write_errors: t.Optional[dict] = None
    tape_alert: t.Optional[dict] = None
    st_delta: t.Optional[dict] = None
    series: t.Optional[dict] = None
    holders: t.Optional[list] = None
    log_pages_before: t.Optional[dict] = None
    log_pages_after: t.Optional[dict] = None
    unknown: t.Optional[dict] = None
    notes: t.Optional[list] = None

    @property
    def observed(self):
        return self.status == 'observed'

    def write_rates_mb_s(self):
        """The host-to-drive rate of each interval in decimal MB/s (``write_byte_cnt`` / ``seconds``)."""
        series = self.series or {}
        return [round(b / s / 1e6, 6) if s else 0.0
                for b, s in zip(series.get('write_byte_cnt') or [], series.get('seconds') or [])]

    def in_document(self):
        """A copy without the per-interval ``series`` and the log pages (null): what a host document keeps.

        An 8-hour window is 28,800 intervals of 12 columns; the judgement keeps what the series and the pages
        gave (the data phase's bytes, rate, back-hitches and compression).
        """
        return dataclasses.replace(self, series=None, log_pages_before=None, log_pages_after=None)


@dataclasses.dataclass
class ObservedJudgement(Record):
    """An observed window judged (_judge/_observed.judge): what the drive did, what the forecast predicts from its feed.

    ``status``: ``judged``, ``idle`` (the drive wrote nothing in the window: not judged) or ``not_observed``.
    ``observed``: the data phase's class (``class_basis``: ``backhitches_and_rate`` when the drive counted its own
    back-hitches, ``rate`` otherwise), rate (``mb_s`` as fed; ``class_mb_s``, the one the class sets against the
    drive's needs: where the drive counted no back-hitch, what it took from the end of its buffer's fill, the
    seconds it paced at least at its full speed),
    back-hitches (an hour as counted, and ``backhitches_per_hour_low``: the lower bound of their rate at
    BACKHITCH_CONFIDENCE, which the class sets against the line) and the compression used (``tape_ratio_source``:
    ``drive``, ``given`` or ``incompressible``). ``forecast``: the same data phase
    replayed once through the drive model, its back-hitches judged the same way.
    ``agreement``: ``class_match``, ``rate_delta_pct`` (forecast against observed), ``backhitch_delta`` (predicted
    minus counted).
    """

    device: t.Optional[str] = None
    status: t.Optional[str] = None
    observed: t.Optional[dict] = None
    forecast: t.Optional[dict] = None
    agreement: t.Optional[dict] = None
    notes: t.Optional[list] = None


@dataclasses.dataclass
class BaculaJob(Record):
    """A Bacula / Bareos job tapeops.qualify.bacula_job_run started and waited for, as bconsole reported it.

    From the catalog (``llist jobid=N``): the job's id and names, ``status`` (Bacula's JobStatus: T = OK),
    ``level``, ``files``, ``bytes`` (the File daemon's), ``error_count`` and its start and end. From its log
    (``list joblog jobid=N``): Bacula's ``Rate`` over the whole job (``rate_mb_s``), the storage daemon's data
    phase (``data_seconds``, ``data_mb_s``: its bytes over the whole seconds from the first data to the last),
    its bytes (``sd_bytes``), the volumes and their last byte count, the termination line and the log's error and
    warning messages. Rates in decimal MB/s. An observe run's host document keeps it with the drive it wrote to
    (``ObservedDrive.job``).
    """

    jobid: t.Optional[int] = None
    job: t.Optional[str] = None
    name: t.Optional[str] = None
    client: t.Optional[str] = None
    fileset: t.Optional[str] = None
    pool: t.Optional[str] = None
    status: t.Optional[str] = None
    status_text: t.Optional[str] = None
    level: t.Optional[str] = None
    files: t.Optional[int] = None
    bytes: t.Optional[int] = None
    error_count: t.Optional[int] = None
    start_time: t.Optional[str] = None
    end_time: t.Optional[str] = None
    elapsed_seconds: t.Optional[int] = None
    rate_mb_s: t.Optional[float] = None
    data_seconds: t.Optional[int] = None
    data_mb_s: t.Optional[float] = None
    sd_bytes: t.Optional[int] = None
    volume_bytes: t.Optional[int] = None
    volumes: t.Optional[list] = None
    termination: t.Optional[str] = None
    messages: t.Optional[list] = None

    @property
    def ok(self):
        return self.status in ('T', 'W')


@dataclasses.dataclass
class ObservedDrive(Record):
    """One drive of an observe run (the host document's ``observed``): its window judged, and the job it watched.

    ``drive``: the id of its entry in the document's ``drives``. ``status``: ``judged``, ``idle`` (the drive wrote
    nothing in the window: not judged), ``not_judged`` (it wrote, but its drive model is unknown: ``error`` says what
    to set) or ``not_observed`` (the watch failed or returned no whole series: ``error`` or ``notes`` say why).
    ``window``: tape_drive_observe's ObservedWindow without its series and log pages (``ObservedWindow.in_document``).
    ``observed``, ``forecast``, ``agreement``, ``notes``: the window judged with the drive's model
    (``ObservedJudgement``, _judge/_observed). ``job``: the Bacula / Bareos job started for the window
    (``BaculaJob``), ``job_error`` the job task's message when it failed.
    """

    drive: t.Optional[str] = None
    status: t.Optional[str] = None
    window: t.Optional[ObservedWindow] = dataclasses.field(default=None, metadata=_nested(ObservedWindow))
    observed: t.Optional[dict] = None
    forecast: t.Optional[dict] = None
    agreement: t.Optional[dict] = None
    notes: t.Optional[list] = None
    job: t.Optional[BaculaJob] = dataclasses.field(default=None, metadata=_nested(BaculaJob))
    job_error: t.Optional[str] = None
    error: t.Optional[str] = None


@dataclasses.dataclass
class SdSetting(Record):
    """One directive of a storage daemon Device: as set (``configuration``), or the default that applies.

    ``source``: ``configuration`` (``text`` as written, ``where`` file:line, ``error`` when the daemon would refuse
    it), ``default`` (``basis``: where the default is documented) or ``unknown`` (``basis`` says why).
    """

    text: t.Optional[str] = None
    value: t.Any = None
    source: t.Optional[str] = None
    basis: t.Optional[str] = None
    where: t.Optional[str] = None
    error: t.Optional[str] = None


_SD_SETTING = _nested(SdSetting)


@dataclasses.dataclass
class SdDevice(Record):
    """One tape Device resource of a Bacula / Bareos storage daemon (tapeops.qualify.bacula_sd_info's devices)."""

    name: t.Optional[str] = None
    file: t.Optional[str] = None
    line: t.Optional[int] = None
    archive_device: t.Optional[str] = None
    device_path: t.Optional[str] = None       # the node the Archive Device leads to on the host (links followed)
    st: t.Optional[str] = None                # its st device (st0 for /dev/nst0, /dev/st0, by-id links to them)
    device_note: t.Optional[str] = None       # why there is no st device
    device_type: t.Optional[str] = None
    media_type: t.Optional[str] = None
    maximum_block_size: t.Optional[SdSetting] = dataclasses.field(default=None, metadata=_SD_SETTING)
    minimum_block_size: t.Optional[SdSetting] = dataclasses.field(default=None, metadata=_SD_SETTING)
    maximum_file_size: t.Optional[SdSetting] = dataclasses.field(default=None, metadata=_SD_SETTING)
    spool_directory: t.Optional[SdSetting] = dataclasses.field(default=None, metadata=_SD_SETTING)
    maximum_spool_size: t.Optional[SdSetting] = dataclasses.field(default=None, metadata=_SD_SETTING)
    maximum_job_spool_size: t.Optional[SdSetting] = dataclasses.field(default=None, metadata=_SD_SETTING)
    maximum_concurrent_jobs: t.Optional[SdSetting] = dataclasses.field(default=None, metadata=_SD_SETTING)


@dataclasses.dataclass
class StorageDaemonConfig(Record):
    """What tapeops.qualify.bacula_sd_info read of a storage daemon's configuration on the host.

    A failed or skipped run keeps only its ``error``; files that could not be read are in ``not_read``
    ({path, reason, included_from}) beside what was read.
    """

    software: t.Optional[str] = None
    config_path: t.Optional[str] = None
    layout: t.Optional[str] = None
    relative_to: t.Optional[str] = None
    version: t.Optional[str] = None
    files: t.Optional[list] = None
    not_read: t.Optional[list] = None
    working_directory: t.Optional[str] = None
    devices: t.Optional[list] = dataclasses.field(default=None, metadata=_nested(SdDevice, many=True))
    other_devices: t.Optional[list] = None
    error: t.Optional[str] = None

    @classmethod
    def from_result(cls, result):
        """The record of bacula_sd_info's result; None when it was skipped (not a Bacula / Bareos host)."""
        return _informational(cls, result, 'software', 'bacula_sd_info')


@dataclasses.dataclass
class NbSetting(Record):
    """One NetBackup tuning file of a media server (SIZE_DATA_BUFFERS ...): as bptm reads it, or its default.

    ``source``: ``configuration`` (the file exists: ``text`` as written, ``value`` what bptm uses, ``note`` when
    that differs from the text, ``error`` when bptm would not take it), ``default`` (no file: ``basis``, where
    the default is documented) or ``unknown`` (no file and no documented default, or a file that cannot be read:
    ``basis`` or ``error`` says why).
    """

    name: t.Optional[str] = None
    path: t.Optional[str] = None
    text: t.Optional[str] = None
    value: t.Optional[int] = None
    source: t.Optional[str] = None
    basis: t.Optional[str] = None
    error: t.Optional[str] = None
    note: t.Optional[str] = None


_NB_SETTING = _nested(NbSetting)


@dataclasses.dataclass
class NetBackupBuffers(Record):
    """What tapeops.qualify.netbackup_buffers_info read of a NetBackup media server's buffer settings.

    A failed or skipped run, or a host without the NetBackup directory, keeps only its ``error``.
    """

    netbackup_dir: t.Optional[str] = None
    config_dir: t.Optional[str] = None
    size_data_buffers: t.Optional[NbSetting] = dataclasses.field(default=None, metadata=_NB_SETTING)
    number_data_buffers: t.Optional[NbSetting] = dataclasses.field(default=None, metadata=_NB_SETTING)
    number_data_buffers_restore: t.Optional[NbSetting] = dataclasses.field(default=None, metadata=_NB_SETTING)
    net_buffer_sz: t.Optional[NbSetting] = dataclasses.field(default=None, metadata=_NB_SETTING)
    error: t.Optional[str] = None

    @classmethod
    def from_result(cls, result):
        """The record of netbackup_buffers_info's result; None when it was skipped (not a NetBackup host)."""
        return _informational(cls, result, 'netbackup_dir', 'netbackup_buffers_info')


def _module_arg(result, name):
    return ((result.get('invocation') or {}).get('module_args') or {}).get(name)


def _results(registered):
    """A registered result of a looped task, a list, or one result -> list of dicts (and records, as they are)."""
    if isinstance(registered, dict) and isinstance(registered.get('results'), list):
        registered = registered['results']
    if isinstance(registered, (dict, Record)):
        registered = [registered]
    return [r for r in (registered or []) if isinstance(r, (dict, Record))]


_ST_NODE = re.compile(r'^/dev/n?st(\d+)[lma]?$')


def st_name(path):
    """``st0`` for ``/dev/nst0``, ``/dev/st0`` and their mode nodes (``nst0a``, ``st0l``): one st device; else None."""
    match = _ST_NODE.match(str(path or ''))
    return 'st%s' % match.group(1) if match else None


def device_of(entry):
    """The nst path a drive entry, an inventory setting or a module result refers to (None when none).

    The one place that digs a device out of Ansible's loop output (``item``,
    ``invocation.module_args``); records carry it as ``nst`` / ``device``.
    """
    if isinstance(entry, Record):
        entry = entry.to_dict()
    if not isinstance(entry, dict):
        return None
    for key in ('nst', 'device', 'path'):
        if entry.get(key):
            return str(entry[key])
    for key in ('item', 'drive'):
        if isinstance(entry.get(key), dict) and device_of(entry[key]):
            return device_of(entry[key])
    return str(_module_arg(entry, 'device')) if _module_arg(entry, 'device') else None


# ---------------------------------------------------------------------------
# the verdict (docs/verdict.md): decided by _judge, worded by _words


@dataclasses.dataclass
class Forecast(Record):
    """One streaming forecast (``_judge._forecast.forecast``) as a verdict keeps it: without its trace."""

    class_: t.Optional[str] = dataclasses.field(default=None, metadata=_CLASS_KEY)
    inconclusive_reason: t.Optional[str] = None
    drive_label: t.Optional[str] = None
    effective_mb_s: t.Optional[float] = None
    tape_mb_s: t.Optional[float] = None
    backhitches: t.Optional[int] = None
    backhitches_filemark: t.Optional[int] = None
    backhitches_per_hour: t.Optional[float] = None
    backhitches_per_tb: t.Optional[float] = None
    filemarks: t.Optional[int] = None
    filemark_wait_s: t.Optional[float] = None
    shoeshine_threshold_per_hour: t.Optional[float] = None
    time_share: t.Optional[dict] = None
    need_full_mb_s: t.Optional[float] = None
    need_floor_mb_s: t.Optional[float] = None
    feed: t.Optional[dict] = None
    feed_measured: t.Optional[bool] = None
    simulated_seconds: t.Optional[float] = None
    replays: t.Optional[float] = None
    window_hours: t.Optional[float] = None
    inputs: t.Optional[dict] = None
    drive: t.Optional[dict] = None
    job_boundaries: t.Optional[int] = None      # only with the application's jobs (job_size_mb)

    def to_dict(self):
        # forecasts without jobs keep their documents as they were
        return _without_none(super().to_dict(), ('job_boundaries',))


_FORECAST = _nested(Forecast)


@dataclasses.dataclass
class VerdictForecasts(Record):
    """A verdict's forecasts: at the current settings (with its trace) and with the setting fixes."""

    now: t.Optional[Forecast] = dataclasses.field(default=None, metadata=_FORECAST)
    after_setting_fixes: t.Optional[Forecast] = dataclasses.field(default=None, metadata=_FORECAST)
    trace: t.Optional[list] = None


@dataclasses.dataclass
class Finding(Record):
    """A verdict's finding in words: ``severity`` error, warning or info."""

    id: t.Optional[str] = None
    severity: t.Optional[str] = None
    text: t.Optional[str] = None


@dataclasses.dataclass
class Fix(Record):
    """One fix of a verdict, in its rank: the value to set, the forecast with it, and its words.

    ``title`` / ``setting`` (where to set it, in the backup software's words) / ``why``; ``forecast`` only for a
    fix the forecast judged (not memory, staging or a faster path).
    """

    id: t.Optional[str] = None
    rank: t.Optional[int] = None
    value: t.Any = None
    feed_after_mb_s: t.Optional[float] = None
    forecast: t.Optional[Forecast] = dataclasses.field(default=None, metadata=_FORECAST)
    title: t.Optional[str] = None
    setting: t.Optional[str] = None
    why: t.Optional[str] = None

    def to_dict(self):
        return _without_none(super().to_dict(), ('forecast',))


@dataclasses.dataclass
class Verdict(Record):
    """One drive's verdict (docs/verdict.md); ``drive`` is the id of its entry in the document's drives."""

    drive: t.Optional[str] = None
    class_: t.Optional[str] = dataclasses.field(default=None, metadata=_CLASS_KEY)
    class_at_current_settings: t.Optional[str] = None
    class_after_setting_fixes: t.Optional[str] = None
    would_shoe_shine: t.Optional[bool] = None
    inconclusive_reason: t.Optional[str] = None
    what_if: bool = False
    drive_label: t.Optional[str] = None
    numbers: t.Optional[dict] = None
    forecast: t.Optional[VerdictForecasts] = dataclasses.field(default=None, metadata=_nested(VerdictForecasts))
    summary: t.Optional[str] = None
    reasons: t.Optional[list] = None
    findings: t.Optional[list] = dataclasses.field(default=None, metadata=_nested(Finding, many=True))
    fixes: t.Optional[list] = dataclasses.field(default=None, metadata=_nested(Fix, many=True))
    # True when others used the drive or the sources while they were measured (a 'contended' finding says how)
    contended: t.Optional[bool] = None

    def to_dict(self):
        return _without_none(super().to_dict(), ('contended',))


def worst(classes):
    """The worst verdict class of a list (a host's, a fleet line's), or None."""
    return _first_of((MISCONFIGURED, SHOE_SHINING, SPEED_MATCHED, INCONCLUSIVE, STREAMING), classes)


# ---------------------------------------------------------------------------
# the host document


@dataclasses.dataclass
class DriveEntry(Record):
    """One drive of a host document: what identifies it and what was measured on it (no verdict: see verdicts)."""

    id: t.Optional[str] = None
    nst: t.Optional[str] = None
    label: t.Optional[str] = None
    what_if: bool = False
    identity: t.Optional[DriveIdentity] = dataclasses.field(default=None, metadata=_nested(DriveIdentity))
    settings: t.Optional[dict] = None
    write_sweep: t.Optional[WriteSweep] = dataclasses.field(default=None, metadata=_nested(WriteSweep))
    write_note: t.Optional[str] = None
    error: t.Optional[str] = None
    busy: t.Optional[dict] = None             # {reason, holder, users}: another run or process had the drive
    link: t.Optional[dict] = None
    links: t.Optional[list] = None
    # where each setting the verdict used came from: {key: {from, value, ...}} (docs/reports.md)
    setting_sources: t.Optional[dict] = None
    # the drive's and its cartridge's health (_judge._health, docs/health.md); None for a drive not found, the
    # what-if target and documents written before health was judged
    health: t.Optional[Health] = dataclasses.field(default=None, metadata=_nested(Health))
    # btape's speed test on the drive (Bacula/Bareos hosts, the profile's btape), absent where it did not run
    btape: t.Optional[BtapeSpeed] = dataclasses.field(default=None, metadata=_nested(BtapeSpeed))

    def to_dict(self):
        return _without_none(super().to_dict(), ('busy', 'setting_sources', 'health', 'btape'))


@dataclasses.dataclass
class HostReport(Record):
    """The per-host document, ``hosts/<host>.json`` (docs/reports.md, docs/host-report.schema.json)."""

    schema_version: int = SCHEMA_VERSION
    host: str = ''
    status: str = 'ok'
    error: t.Optional[str] = None
    generated_at: t.Optional[str] = None
    run: t.Optional[dict] = None
    facts: t.Optional[dict] = None
    preflight: t.Optional[Preflight] = dataclasses.field(default=None, metadata=_nested(Preflight))
    source: t.Optional[SourceRead] = dataclasses.field(default=None, metadata=_nested(SourceRead))
    drives: t.Optional[list] = dataclasses.field(default=None, metadata=_nested(DriveEntry, many=True))
    verdicts: t.Optional[list] = dataclasses.field(default=None, metadata=_nested(Verdict, many=True))
    media: t.Optional[Media] = dataclasses.field(default=None, metadata=_nested(Media))
    mechanics: t.Optional[list] = dataclasses.field(default=None, metadata=_nested(Mechanics, many=True))
    worst_class: t.Optional[str] = None
    storage_daemon: t.Optional[StorageDaemonConfig] = dataclasses.field(
        default=None, metadata=_nested(StorageDaemonConfig))
    netbackup: t.Optional[NetBackupBuffers] = dataclasses.field(default=None, metadata=_nested(NetBackupBuffers))
    # an observe run's document (run.mode observe): each watched drive's window judged, no verdicts; absent otherwise
    observed: t.Optional[list] = dataclasses.field(default=None, metadata=_nested(ObservedDrive, many=True))

    def to_dict(self):
        return _without_none(super().to_dict(), ('storage_daemon', 'netbackup', 'observed'))

    @property
    def observe_run(self):
        """True for an observe run's document (it has an ``observed`` list, empty when nothing was watched)."""
        return self.observed is not None

    @classmethod
    def load(cls, data):
        """The record of a document read from a file (schema version 2).

        Raises RecordError naming the version found and the one expected for
        anything else.
        """
        if not isinstance(data, dict):
            raise RecordError('not a host document (a JSON %s, expected an object with schema_version %d).' % (
                type(data).__name__, SCHEMA_VERSION))
        if data.get('schema_version') == SCHEMA_VERSION:
            return cls.from_dict(data)
        found = data.get('schema_version', data.get('schema'))
        raise RecordError(
            'schema %s, but this collection reads schema_version %d: %s' % (
                'version %r' % (found,) if found is not None else 'not named (no schema_version or schema key)',
                SCHEMA_VERSION,
                'it was written by a newer tapeops.qualify: report it with that version.'
                if isinstance(found, int) and found > SCHEMA_VERSION else
                'write it again with this collection (re-run the host).'))

    def verdict_of(self, drive_id):
        for verdict in self.verdicts or []:
            if verdict.drive == drive_id:
                return verdict
        return None


def observe_document(doc):
    """True for an observe run's host document (a dict): it has an ``observed`` list (empty when none was watched)."""
    return isinstance(doc, dict) and isinstance(doc.get('observed'), list)


def drives_with_observed(doc):
    """[(drive entry, its observed entry or None)] of an observe run's document (a dict), in the drives' order."""
    by_drive = dict((o.get('drive'), o) for o in doc.get('observed') or [] if isinstance(o, dict))
    return [(d, by_drive.get(d.get('id'))) for d in doc.get('drives') or [] if isinstance(d, dict)]


def drives_with_verdicts(doc):
    """[(drive entry, verdict or None)] of a version 2 host document (a dict), in the drives' order."""
    by_drive = dict((v.get('drive'), v) for v in doc.get('verdicts') or [] if isinstance(v, dict))
    return [(d, by_drive.get(d.get('id'))) for d in doc.get('drives') or [] if isinstance(d, dict)]
