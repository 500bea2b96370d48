# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The mechanics forecast: what the timed cycle's times cost the current and the target drive.

Private to this collection: may change without notice. Pure: no I/O.

``_measure/_mechanics`` times the cycle on the managed host (its ``summary``:
median and 95th percentile per operation); this module judges those times,
on the same host, for ``tape_mechanics_benchmark``'s result (``analyse``):

- the per-file-mark, per-locate and per-mount overheads (``overheads``);
- the target drive's times, scaled by the drive model's published figures
  (``scale_times``), the current and the target drive named by the
  collection's one drive resolver (``_resolve``: the drive's tapeops_drives
  entry, or the target_* options);
- the smallest object that reaches 50 % and 90 % of the drive's streaming
  rate (``forecast``, ``object_table``), and the backup software's object
  sizes below the 90 % line (``size_warnings``). Their texts and the scaling
  basis are made here, on the managed host, and kept as the module returns
  them (docs/development.md, "Reports").

The object-size rule. An object of S MB written at R MB/s with T seconds of
overhead per object (a file mark, a locate, a mount) keeps the drive busy
S/R seconds out of S/R + T, so it reaches the fraction

    f = (S/R) / (S/R + T)        and, solved for S,        S = R * T * f / (1 - f)

of the streaming rate: 50 % needs S = R*T, 90 % needs S = 9*R*T.
"""

from __future__ import annotations

from ansible_collections.tapeops.qualify.plugins.module_utils._config import _bacula_conf
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _resolve

MB = 1000 * 1000
FRACTIONS = (0.5, 0.9)
# Which drive-model figure scales which operation (``_measure/_mechanics.OPERATIONS``) for the target drive; the
# changer's moves belong to the library, which the swap keeps.
MODEL_FIELD = {'load_ready': 'load_s', 'unload': 'unload_s', 'rewind': 'rewind_s', 'locate': 'locate_s'}
MOUNT_OPERATIONS = ('move_to_drive', 'load_ready', 'rewind', 'unload', 'move_to_slot')
OBJECTS = {
    'filemark': 'a file, segment or Bacula volume file ended by a synchronous file mark',
    'locate': 'an object recalled by a locate (restore of one file, a dCache stage)',
    'mount': 'an object that costs a mount (a dCache flush or a job per cartridge: move, load, rewind, unload, '
             'move back)',
}


# ---------------------------------------------------------------- object sizes

def fraction_of_rate(size_mb, rate_mb_s, overhead_s):
    """f = (S/R) / (S/R + T): the share of the streaming rate an object of S MB reaches."""
    if not rate_mb_s or rate_mb_s <= 0 or size_mb is None or overhead_s is None:
        return None
    busy = float(size_mb) / float(rate_mb_s)
    if busy + overhead_s <= 0:
        return None
    return busy / (busy + float(overhead_s))


def object_size_mb(rate_mb_s, overhead_s, fraction):
    """S = R * T * f / (1 - f): the smallest object (MB) that reaches ``fraction`` of R.

    None when the rate or the overhead is unknown; 0 when there is no overhead.
    """
    if rate_mb_s is None or overhead_s is None or rate_mb_s <= 0:
        return None
    if not 0 < fraction < 1:
        raise ValueError('fraction must be between 0 and 1 (exclusive), got %r' % (fraction,))
    return float(rate_mb_s) * max(0.0, float(overhead_s)) * fraction / (1.0 - fraction)


def overheads(times, filemark_s=None):
    """Per-object overheads (seconds) from per-operation times ``{op: seconds}``.

    - ``filemark``: ``filemark_s`` (time lost per synchronous file mark), or None;
    - ``locate``: the locate time;
    - ``mount``: move to drive + load to ready + rewind + unload + move back
      (the locate to the append point is not counted: a mount for writing
      appends at BOT on scratch media and costs a locate otherwise).
    A sum with a missing part is None, never a partial sum.
    """
    def total(names):
        parts = [times.get(name) for name in names]
        if any(p is None for p in parts):
            return None
        return sum(parts)

    return {
        'filemark': filemark_s,
        'locate': times.get('locate'),
        'mount': total(MOUNT_OPERATIONS),
    }


def object_table(rate_mb_s, overhead):
    """Rows ``{object, overhead_s, size_50_mb, size_90_mb}`` for each overhead kind."""
    rows = []
    for kind in ('filemark', 'locate', 'mount'):
        seconds = overhead.get(kind)
        row = {'object': kind, 'description': OBJECTS[kind],
               'overhead_s': round(seconds, 4) if seconds is not None else None}
        for fraction in FRACTIONS:
            size = object_size_mb(rate_mb_s, seconds, fraction)
            row['size_%d_mb' % int(fraction * 100)] = round(size, 1) if size is not None else None
        rows.append(row)
    return rows


def _spec_value(spec, field):
    """(value, estimated) of a DriveSpec (or its as_dict()) field."""
    if spec is None:
        return None, None
    if isinstance(spec, dict):
        value = spec.get(field)
        estimated = field in (spec.get('estimated') or {})
    else:
        value = getattr(spec, field, None)
        estimated = spec.is_estimated(field)
    return (float(value) if value else None), estimated


def scale_times(medians, current, target):
    """The target drive's time per operation, from the measured medians.

    An operation with a drive-model figure (``MODEL_FIELD``) is scaled by
    target/current when BOTH drives have a published (not estimated) figure,
    or one the inventory set (the basis says which);
    otherwise (an estimate on either side, the changer's moves, the file mark)
    it is taken as measured. Returns ``{op: {measured_s, target_s, basis}}``.
    """
    out = {}
    for op, measured in sorted(medians.items()):
        if measured is None:
            continue
        field = MODEL_FIELD.get(op)
        basis = 'as measured (the library\'s robot: the swap keeps it)' if op.startswith('move') else 'as measured'
        target_s = measured
        if field:
            cur, cur_est = _spec_value(current, field)
            tgt, tgt_est = _spec_value(target, field)
            if cur and tgt and not cur_est and not tgt_est:
                target_s = measured * tgt / cur
                basis = 'scaled by %s: target %s s (%s) / current %s s (%s)' % (
                    field, _g(tgt), _origin(target, field), _g(cur), _origin(current, field))
            elif cur and tgt:
                which = ' and '.join(name for name, est in (('current', cur_est), ('target', tgt_est)) if est)
                basis = 'as measured (%s for the %s drive is an estimate in the drive model)' % (field, which)
            else:
                basis = 'as measured (no %s in the drive model)' % field
        out[op] = {'measured_s': round(measured, 4), 'target_s': round(target_s, 4), 'basis': basis}
    return out


def _g(value):
    return '%.3g' % value


def _origin(spec, field):
    """'inventory' when the drive's entry set ``field`` (the spec's notes say so), else 'published'."""
    notes = spec.get('notes') if isinstance(spec, dict) else getattr(spec, 'notes', ())
    if any(str(note).startswith('%s set per drive (inventory)' % field) for note in notes or ()):
        return 'inventory'
    return 'published'


def forecast(summary, current=None, target=None, rate_mb_s=None, filemark_s=None, rate_basis=None):
    """The object-size table for the current and the target drive.

    ``summary``: the benchmark's ``summary`` (``_measure/_mechanics.summarize``;
    the medians are used). ``current`` / ``target``: DriveSpec (or as_dict())
    or None. ``rate_mb_s``: the current
    drive's streaming rate when measured (else the model's native rate). The
    target's rate is its native rate from the drive model. ``filemark_s``:
    time lost per synchronous file mark, applied to both drives as measured
    (no vendor publishes it).
    """
    medians = dict((op, entry.get('median_s')) for op, entry in (summary or {}).items())
    cur_rate, cur_basis = rate_mb_s, rate_basis or 'measured'
    if cur_rate is None and current is not None:
        cur_rate, _est = _spec_value(current, 'native_mb_s')
        cur_basis = 'the drive model\'s native rate'
    result = {
        'formula': 'S = R * T * f / (1 - f): an object of S MB at R MB/s with T s of overhead reaches the '
                   'fraction f = (S/R) / (S/R + T) of the streaming rate',
        'current': {
            'label': _label(current), 'rate_mb_s': round(cur_rate, 3) if cur_rate else None,
            'rate_basis': cur_basis if cur_rate else 'unknown',
            'times_s': dict((op, round(v, 4)) for op, v in medians.items() if v is not None),
        },
    }
    cur_over = overheads(medians, filemark_s)
    result['current']['overheads_s'] = _rounded(cur_over)
    result['current']['objects'] = object_table(cur_rate, cur_over)
    if target is not None:
        scaled = scale_times(medians, current, target)
        tgt_times = dict((op, entry['target_s']) for op, entry in scaled.items())
        tgt_rate, _est = _spec_value(target, 'native_mb_s')
        tgt_over = overheads(tgt_times, filemark_s)
        result['target'] = {
            'label': _label(target), 'rate_mb_s': tgt_rate, 'rate_basis': 'the drive model\'s native rate',
            'times_s': tgt_times, 'scaling': scaled,
            'overheads_s': _rounded(tgt_over),
            'objects': object_table(tgt_rate, tgt_over),
        }
    return result


def _label(spec):
    if spec is None:
        return None
    if isinstance(spec, dict):
        return spec.get('label')
    return spec.label


def _rounded(mapping):
    return dict((k, round(v, 4) if v is not None else None) for k, v in mapping.items())


def size_warnings(forecast_result, sizes_mb):
    """Warnings for the backup software's object sizes below the 90 % line.

    ``sizes_mb``: ``{name: MB}`` (segment size, Bacula maximum file size, ...),
    each compared with the file-mark 90 % size of the current and the target
    drive (an object ended by a file mark). Unknown sizes or lines say nothing.
    """
    out = []
    for name, size in sorted((sizes_mb or {}).items()):
        if size is None or size <= 0:
            continue
        for side in ('current', 'target'):
            entry = (forecast_result or {}).get(side) or {}
            row = next((r for r in entry.get('objects') or [] if r['object'] == 'filemark'), None)
            if not row or row.get('size_90_mb') is None:
                continue
            if size < row['size_90_mb']:
                reached = fraction_of_rate(size, entry.get('rate_mb_s'), row['overhead_s'])
                out.append({
                    'setting': name, 'size_mb': size, 'drive': side, 'label': entry.get('label'),
                    'size_90_mb': row['size_90_mb'],
                    'reaches': round(reached, 3) if reached is not None else None,
                    'text': '%s %s MB is below the %s MB that reaches 90 %% of the %s drive\'s streaming rate (%s) '
                            'with %.2f s lost per file mark: it reaches about %s. Raise it to at least %s MB.'
                            % (name, _num(size), _num(row['size_90_mb']), side, entry.get('label') or 'this',
                               row['overhead_s'], '%.0f %%' % (reached * 100) if reached is not None else 'less',
                               _num(row['size_90_mb'])),
                })
    return out


def _num(value):
    return ('%.0f' % value) if value >= 10 else ('%.2g' % value)


def backup_sizes_mb(backup):
    """The backup software's object sizes (decimal MB) from ``tapeops_backup``.

    ``segment_size_mb`` (Data Protector segment size, MB) and
    ``maximum_file_size`` (Bacula/Bareos Maximum File Size in Bacula's own
    notation: bytes, or k/m/g/t = powers of 1024, kb/mb/gb/tb = powers of
    1000, as ``_bacula_conf.parse_size`` reads it). Anything unreadable is
    left out (never guessed).
    """
    out = {}
    backup = backup if isinstance(backup, dict) else {}
    segment = backup.get('segment_size_mb')
    if isinstance(segment, (int, float)) and not isinstance(segment, bool) and segment > 0:
        out['segment size (segment_size_mb)'] = float(segment)
    elif isinstance(segment, str):
        try:
            value = float(segment)
        except ValueError:
            value = None
        if value and value > 0:
            out['segment size (segment_size_mb)'] = value
    raw = backup.get('maximum_file_size')
    if raw not in (None, ''):
        try:
            size = _bacula_conf.parse_size(raw)
        except (ValueError, TypeError):
            size = None
        if size and size > 0:
            out['Bacula Maximum File Size (maximum_file_size %s)' % raw] = size / float(MB)
    return out


# ---------------------------------------------------------------- the benchmark's result

def current_drive(result, setting=None):
    """The drive model of the drive measured, from the collection's one drive resolver; None when it is unknown.

    ``setting``: the drive's tapeops_drives entry (or None), applied as discovery and the verdict apply it. The
    times are measured and the cartridge is back by now, so an entry the resolver cannot read costs the entry (a
    warning says why), not the run. The result's ``drive`` records the identity and the drive model used.
    """
    drive = result.get('drive') or {}
    try:
        identity, spec = _resolve.resolve(drive, setting)
    except _resolve.ResolveError as exc:
        result.setdefault('warnings', []).append(
            '%s; the current drive is forecast without its tapeops_drives entry' % exc)
        identity, spec = _resolve.resolve(drive)
    if drive:
        drive['generation'] = identity.to_dict()
        drive['drive_model'] = spec.as_dict() if spec is not None else None
    return spec


def analyse(result, setting=None, target=None, rate_mb_s=None, backup=None):
    """Add ``forecast`` (object sizes, current and target) and ``size_warnings`` to a benchmark result.

    ``setting``: the measured drive's tapeops_drives entry (:func:`current_drive`); ``target``: the target
    drive's DriveSpec or None; ``rate_mb_s``: a measured streaming rate for the current drive (else the model's
    native rate); ``backup``: ``tapeops_backup`` for the size check.
    """
    current = current_drive(result, setting)
    filemarks = result.get('filemarks') or {}
    rate_basis = 'measured (given)' if rate_mb_s else None
    out = forecast(result.get('summary') or {}, current=current, target=target, rate_mb_s=rate_mb_s,
                   filemark_s=filemarks.get('seconds_lost_per_mark'), rate_basis=rate_basis)
    result['forecast'] = out
    result['size_warnings'] = size_warnings(out, backup_sizes_mb(backup))
    return result
