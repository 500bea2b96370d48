# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Library and drive mechanics: what a backup window loses between the writes.

Private to this collection: may change without notice.

Two halves:

- Pure functions (no I/O, unit-tested with worked numbers): percentiles of the
  timed operations, the per-file-mark, per-locate and per-mount overheads, the
  target drive's times scaled by the drive model's published figures, and the
  smallest object that reaches 50 % and 90 % of the drive's streaming rate.
- ``MechanicsBenchmark``: the timed cycle on one drive of one changer, each
  command the real tool (``mtx``, ``mt``) under a deadline:

  move slot -> drive (``mtx load``), load/thread to ready (``mt status`` polled
  until ONLINE), locate N file marks from BOT (``mt fsf N``), space to end of
  data (``mt eod``), rewind from there (``mt rewind``), unload (``mt offline``)
  and move back (``mtx unload``); ``repeats`` times. The file marks the locate
  needs are written once, in the first cycle, and only on a cartridge
  ``_tape_safety.media_verdict`` admits (blank, barcode in allowed_barcodes,
  or overwrite); a cartridge that holds data is only moved, loaded, spaced
  over and rewound, none of which writes. The cartridge is put back where it
  was found (its slot, or the drive), also when a step fails.

The object-size rule. An object of S MB written at R MB/s with T seconds of
overhead per object (a file mark, a locate, a mount) keeps the drive busy
S/R seconds out of S/R + T, so it reaches the fraction

    f = (S/R) / (S/R + T)        and, solved for S,        S = R * T * f / (1 - f)

of the streaming rate: 50 % needs S = R*T, 90 % needs S = 9*R*T.
"""

from __future__ import annotations

import math
import os
import time

from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError

MB = 1000 * 1000
FRACTIONS = (0.5, 0.9)
# Timed operations, in cycle order.
OPERATIONS = ('move_to_drive', 'load_ready', 'locate', 'space_eod', 'rewind', 'unload', 'move_to_slot')
OPERATION_LABELS = {
    'move_to_drive': 'changer move slot -> drive (mtx load)',
    'load_ready': 'load/thread to ready (mt status until ONLINE)',
    'locate': 'locate N file marks from BOT (mt fsf N)',
    'space_eod': 'space to end of data (mt eod)',
    'rewind': 'rewind from end of data (mt rewind)',
    'unload': 'unload (mt offline)',
    'move_to_slot': 'changer move drive -> slot (mtx unload)',
}
# Which drive-model figure scales which operation for the target drive; the
# changer's moves belong to the library, which the swap keeps.
MODEL_FIELD = {'load_ready': 'load_s', 'unload': 'unload_s', 'rewind': 'rewind_s', 'locate': 'locate_s'}
MOUNT_OPERATIONS = ('move_to_drive', 'load_ready', 'rewind', 'unload', 'move_to_slot')
OBJECTS = {
    'filemark': 'a file, segment or Bacula volume file ended by a synchronous file mark',
    'locate': 'an object recalled by a locate (restore of one file, a dCache stage)',
    'mount': 'an object that costs a mount (a dCache flush or a job per cartridge: move, load, rewind, unload, '
             'move back)',
}


# ---------------------------------------------------------------- statistics

def percentile(values, pct):
    """Percentile ``pct`` (0-100) of ``values`` by linear interpolation between ranks.

    The same rule as numpy's default ("linear"): rank r = (n-1)*pct/100, the
    value between the two neighbours of r. None for no values.
    """
    data = sorted(float(v) for v in values if v is not None)
    if not data:
        return None
    if len(data) == 1:
        return data[0]
    rank = (len(data) - 1) * float(pct) / 100.0
    low = int(math.floor(rank))
    high = min(low + 1, len(data) - 1)
    return data[low] + (data[high] - data[low]) * (rank - low)


def summarize(samples):
    """``{op: [seconds, ...]}`` -> ``{op: {n, median_s, p95_s, min_s, max_s, samples_s}}``.

    Operations without a sample are left out (never reported as 0).
    """
    out = {}
    for op in list(OPERATIONS) + sorted(set(samples or {}) - set(OPERATIONS)):
        values = [float(v) for v in (samples or {}).get(op) or [] if v is not None]
        if not values:
            continue
        out[op] = {
            'n': len(values),
            'median_s': round(percentile(values, 50), 4),
            'p95_s': round(percentile(values, 95), 4),
            'min_s': round(min(values), 4),
            'max_s': round(max(values), 4),
            'samples_s': [round(v, 4) for v in values],
        }
    return out


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

    ``summary``: :func:`summarize` output (medians are used). ``current`` /
    ``target``: DriveSpec (or as_dict()) or None. ``rate_mb_s``: the current
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
    from ansible_collections.tapeops.qualify.plugins.module_utils._config import _bacula_conf
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


# ---------------------------------------------------------------- the timed cycle

class MechanicsError(TapeopsError):
    """Stops the benchmark; ``reason`` is machine-readable, ``msg`` says what to do."""

    def __init__(self, msg, reason, partial=None):
        super().__init__(msg, reason)
        self.partial = partial or {}


def find_cartridge(status, barcode):
    """Where ``barcode`` is in a parsed ``mtx status``: ``('slot', N)``, ``('drive', N)`` or ``(None, None)``."""
    tag = (barcode or '').strip().upper()
    for slot in (status or {}).get('slots') or []:
        if slot.get('full') and (slot.get('barcode') or '').strip().upper() == tag:
            return 'slot', slot['element']
    for drive in (status or {}).get('drives') or []:
        if drive.get('full') and (drive.get('barcode') or '').strip().upper() == tag:
            return 'drive', drive['element']
    return None, None


def drive_entry(status, element):
    """The ``mtx status`` entry of data transfer element ``element`` (or None)."""
    for drive in (status or {}).get('drives') or []:
        if drive.get('element') == element:
            return drive
    return None


class MechanicsBenchmark:
    """The timed move/load/locate/rewind/unload cycle on one drive; see the module docstring.

    ``runner(cmd, timeout)`` runs a command and returns a ``_cli.CliResult``
    (the module passes ``_cli.run``); ``clock`` and ``sleep`` are
    ``time.monotonic`` / ``time.sleep`` outside tests.
    """

    def __init__(self, device, barcode, changer=None, drive_element=None, repeats=3, locate_files=4,
                 file_mb=8, allowed_barcodes=(), overwrite=False, op_timeout=900, poll_interval=0.05,
                 runner=None, sys_root=None, clock=time.monotonic, sleep=time.sleep, mt='mt'):
        if not barcode or not str(barcode).strip():
            raise ValueError('barcode is required: the benchmark moves exactly the cartridge you name. Give the '
                             'barcode of a cartridge in the changer (mtx status lists them).')
        if repeats < 1 or repeats > 100:
            raise ValueError('repeats must be between 1 and 100, got %s.' % repeats)
        if locate_files < 1:
            raise ValueError('locate_files must be at least 1, got %s.' % locate_files)
        if file_mb < 1:
            raise ValueError('file_mb must be at least 1, got %s.' % file_mb)
        if op_timeout <= 0:
            raise ValueError('op_timeout must be a positive number of seconds, got %s.' % op_timeout)
        self.device = device
        self.barcode = str(barcode).strip()
        self.changer = changer
        self.drive_element = drive_element
        self.repeats = int(repeats)
        self.locate_files = int(locate_files)
        self.file_mb = int(file_mb)
        self.allowed_barcodes = list(allowed_barcodes or [])
        self.overwrite = overwrite
        self.op_timeout = op_timeout
        self.poll_interval = poll_interval
        self.runner = runner
        self.sys_root = sys_root
        self.clock = clock
        self.sleep = sleep
        self.mt = mt
        self.gate = None
        self.identity = None
        self.result = None
        self.samples = dict((op, []) for op in OPERATIONS)

    # -------------------------------------------------------------- commands
    def _run(self, cmd, what):
        """Run ``cmd`` under the deadline; (result, seconds). A non-zero exit raises MechanicsError."""
        from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _cli
        start = self.clock()
        try:
            result = self.runner(cmd, self.op_timeout)
        except _cli.CliError as exc:
            raise MechanicsError('%s: %s %s' % (what, exc.msg, exc.hint or ''), 'timeout' if exc.rc is None
                                 else 'command_failed', partial=self.result)
        seconds = self.clock() - start
        if result.rc != 0:
            said = (result.stderr or result.stdout or '').strip().splitlines()
            raise MechanicsError('%s failed (%s exited %s: %s). Check the changer and the drive (mtx status, '
                                 'mt status, dmesg) and retry.' % (what, ' '.join(cmd), result.rc,
                                                                   said[-1] if said else 'no message'),
                                 'command_failed', partial=self.result)
        return result, seconds

    def _mtx_status(self):
        from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_discovery
        result, _seconds = self._run(['mtx', '-f', self.changer, 'status'], 'Reading the changer (mtx status)')
        return _tape_discovery._mtx_status(result)  # pylint: disable=protected-access

    def _mt_status(self):
        from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _mt
        result = self.runner([self.mt, '-f', self.device, 'status'], self.op_timeout)
        if result.rc != 0 and 'busy' in ((result.stderr or '') + (result.stdout or '')).lower():
            raise MechanicsError('%s is busy: another process has the drive open (st allows one open at a time). '
                                 'Wait for the backup or tool using it to finish, then retry.' % self.device, 'busy',
                                 partial=self.result)
        return _mt.parse_mt_status(result.stdout if result.rc == 0 else '')

    def _timed(self, op, cmd):
        _result, seconds = self._run(cmd, OPERATION_LABELS[op])
        self.samples[op].append(seconds)
        return seconds

    def _wait_ready(self):
        """Poll ``mt status`` until the drive reports ONLINE; the seconds it took."""
        start = self.clock()
        while True:
            status = self._mt_status()
            if status.get('online'):
                seconds = self.clock() - start
                self.samples['load_ready'].append(seconds)
                return status
            if self.clock() - start > self.op_timeout:
                raise MechanicsError('The drive %s did not become ready within %s s after the load (mt status shows '
                                     'no ONLINE). Check the drive and the cartridge.' % (self.device, self.op_timeout),
                                     'not_ready', partial=self.result)
            self.sleep(self.poll_interval)

    # -------------------------------------------------------------- plan
    def identify(self):
        """The safety gate's device check and discovery of the drive; the changer link from it."""
        from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_safety
        kwargs = {'sys_root': self.sys_root} if self.sys_root else {}

        def runner(cmd):
            return self.runner(cmd, self.op_timeout)
        # The barcode is the cartridge this run names and moves, not what is loaded now: the gate learns it
        # once the changer has loaded it (``_write_marks``), and checks it against the changer there.
        self.gate = _tape_safety.WriteGate(self.device, overwrite=self.overwrite,
                                           allowed_barcodes=self.allowed_barcodes, op_timeout=self.op_timeout,
                                           runner=runner, **kwargs)
        drive = self.gate.identify()
        self.identity = self.gate.identity
        link = drive.get('changer') or {}
        if self.changer is None:
            self.changer = link.get('sg')
        if self.drive_element is None:
            self.drive_element = link.get('element')
        if not self.changer or self.drive_element is None:
            raise MechanicsError('No changer is known for %s (discovery matched none). Give changer (its /dev/sgN) '
                                 'and drive_element (mtx\'s data transfer element number).' % self.device,
                                 'no_changer')
        return drive

    def plan(self, where, element):
        steps = []
        if where == 'drive':
            steps.append('unload %s from %s (mt offline) and put it back in its slot %s (mtx unload), untimed'
                         % (self.barcode, self.device, element))
        steps.append('%d times: %s' % (self.repeats, '; '.join(OPERATION_LABELS[op] for op in OPERATIONS)))
        steps.append('first cycle only, when the media rule allows it: write %d files of %d MB, each ended by a '
                     'file mark, then the same amount without marks (the rate baseline), then rewind'
                     % (self.locate_files, self.file_mb))
        if where == 'drive':
            steps.append('load %s back into drive %s, where it was' % (self.barcode, self.drive_element))
        return {
            'device': self.device, 'changer': self.changer, 'drive_element': self.drive_element,
            'barcode': self.barcode, 'start': {'where': where, 'slot': element},
            'repeats': self.repeats, 'locate_files': self.locate_files, 'file_mb': self.file_mb,
            'max_bytes_written': 2 * self.locate_files * self.file_mb * MB,
            'media_rule': 'file marks only on blank media, a barcode in allowed_barcodes, or overwrite=true; '
                          'a cartridge with data is only moved, loaded, spaced over and rewound',
            'steps': steps,
        }

    # -------------------------------------------------------------- run
    def run(self, check_mode=False):
        drive = self.identify()
        status = self._mtx_status()
        if status.get('error'):
            raise MechanicsError('mtx status on %s failed: %s. %s' % (
                self.changer, status['error'], status.get('error_hint') or ''), 'changer_error')
        where, element = find_cartridge(status, self.barcode)
        in_drive = drive_entry(status, self.drive_element)
        if in_drive is None:
            raise MechanicsError('The changer %s has no data transfer element %s (mtx status lists %s).' % (
                self.changer, self.drive_element, [d['element'] for d in status.get('drives') or []]),
                'no_drive_element')
        if where is None:
            raise MechanicsError('Cartridge %s is not in the changer %s (not in any slot or drive in mtx status). '
                                 'Give the barcode of a cartridge the changer holds.' % (self.barcode, self.changer),
                                 'no_cartridge')
        if where == 'drive' and element != self.drive_element:
            raise MechanicsError('Cartridge %s is in drive %s of the changer, not in drive %s (%s). Unload it first '
                                 'or benchmark that drive.' % (self.barcode, element, self.drive_element,
                                                               self.device), 'cartridge_elsewhere')
        slot = element
        if where == 'drive':
            slot = in_drive.get('source_element')
            if slot is None:
                raise MechanicsError('Cartridge %s is in drive %s but the changer does not say which slot it came '
                                     'from; unload it to a slot first (mtx unload SLOT %s).' % (
                                         self.barcode, self.drive_element, self.drive_element), 'no_source_slot')
        elif in_drive.get('full'):
            raise MechanicsError('Drive %s (%s) holds another cartridge (%s); the benchmark moves only %s. Unload '
                                 'the drive first.' % (self.drive_element, self.device,
                                                       in_drive.get('barcode') or 'no barcode', self.barcode),
                                 'drive_full')
        plan = self.plan(where, slot)
        result = {'device': self.device, 'plan': plan, 'drive': drive, 'changed': False, 'warnings': [],
                  'barcode': self.barcode, 'slot': slot}
        self.result = result
        if check_mode:
            return result
        self.slot = slot
        result['changed'] = True
        try:
            if where == 'drive':
                self._run([self.mt, '-f', self.device, 'offline'], 'Unloading the drive before the first cycle')
                self._run(['mtx', '-f', self.changer, 'unload', str(slot), str(self.drive_element)],
                          'Moving the cartridge to its slot before the first cycle')
            for cycle in range(self.repeats):
                self._cycle(cycle)
        finally:
            # Also on failure: the cartridge goes back, and what was measured is kept.
            result['restored'] = self._restore(where)
            result['summary'] = summarize(self.samples)
        return result

    def _cycle(self, cycle):
        result = self.result
        self._timed('move_to_drive', ['mtx', '-f', self.changer, 'load', str(self.slot), str(self.drive_element)])
        self._wait_ready()
        if cycle == 0:
            result['filemarks'] = self._write_marks()
        fsf_ok = result['filemarks'].get('written') or result.get('locate_error') is None
        if fsf_ok:
            try:
                self._run([self.mt, '-f', self.device, 'rewind'], 'Rewinding before the locate')
                self._timed('locate', [self.mt, '-f', self.device, 'fsf', str(self.locate_files)])
                position = self._mt_status()
                if position.get('file_number') is not None and position['file_number'] != self.locate_files:
                    result['warnings'].append('after mt fsf %d the drive is at file %s, not %d' % (
                        self.locate_files, position['file_number'], self.locate_files))
            except MechanicsError as exc:
                if result['filemarks'].get('written'):
                    raise
                # A cartridge we may not write: fewer marks than asked, the locate is not measured.
                result['locate_error'] = exc.msg
                result['warnings'].append('locate not measured: %s' % exc.msg)
        self._timed('space_eod', [self.mt, '-f', self.device, 'eod'])
        self._timed('rewind', [self.mt, '-f', self.device, 'rewind'])
        self._timed('unload', [self.mt, '-f', self.device, 'offline'])
        self._timed('move_to_slot', ['mtx', '-f', self.changer, 'unload', str(self.slot), str(self.drive_element)])

    def _write_marks(self):
        """File marks for the locate, through the safety gate and the write benchmark's writer; or why not."""
        from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_safety
        from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_writer as W
        record = {'written': False, 'media': None, 'files': self.locate_files, 'file_mb': self.file_mb}
        self.gate.loaded(self.barcode)   # moved into the drive by this barcode: the changer must still agree
        try:
            record['media'] = self.gate.probe()
        except _tape_safety.TapeSafetyError as exc:  # the drive could not be opened: busy, swapped node, no media
            raise MechanicsError(exc.msg, exc.reason, partial=self.result) from None
        try:
            record['media_decision'] = self.gate.admit()
        except _tape_safety.TapeSafetyError as exc:
            # a cartridge the media rule does not admit is only moved, spaced over and rewound
            record.update(refused=True, reason=exc.reason, msg=exc.msg)
            self.result['warnings'].append('no file marks written for the locate: %s' % exc.msg)
            return record
        pool = W.make_pool('random', size=16 * W.MIB, seed=7)
        views = W.block_views(pool, 262144)
        payload = self.locate_files * self.file_mb * MB
        try:
            fd = self.gate.open_for_write()
        except _tape_safety.TapeSafetyError as exc:
            raise MechanicsError(exc.msg, exc.reason, partial=self.result) from None
        try:
            try:
                W.mtop(fd, W.MTSETBLK, 0, timeout=self.op_timeout)
                deadline = 2 * payload / float(MB) + self.op_timeout   # >= 1 MB/s or we call it hung
                marked = W.call_with_timeout(
                    lambda: W.filemark_run(fd, views, payload, self.file_mb * MB,
                                           lambda f: W.mtop(f, W.MTWEOF, 1, timeout=self.op_timeout)),
                    deadline, 'Writing the files for the locate')
                baseline = W.call_with_timeout(lambda: W.write_stream(fd, views, payload), deadline,
                                               'Writing the baseline')
            finally:
                W.mtop(fd, W.MTREW, 1, timeout=self.op_timeout)
        finally:
            os.close(fd)
        record.update(written=True, marks=marked['marks'], bytes=marked['bytes'] + baseline['bytes'],
                      marked_run=marked, baseline_run=dict((k, v) for k, v in baseline.items()
                                                           if k != 'series_mb_s'))
        if marked.get('error') or baseline.get('error'):
            raise MechanicsError('Writing the file marks for the locate stopped: %s.' % (
                marked.get('error') or baseline.get('error')), 'write_error', partial=self.result)
        base_rate = baseline['bytes'] / baseline['seconds'] if baseline['seconds'] else None
        record['rate_mb_s'] = round(base_rate / MB, 3) if base_rate else None
        if marked['marks'] and base_rate:
            record['seconds_lost_per_mark'] = round(
                max(0.0, marked['seconds'] - marked['bytes'] / base_rate) / marked['marks'], 4)
        return record

    def _restore(self, where):
        """Put the cartridge back where it was; True when mtx status confirms it, else False."""
        try:
            status = self._mtx_status()
            now, element = find_cartridge(status, self.barcode)
            if now == 'drive' and where == 'slot':
                self.runner([self.mt, '-f', self.device, 'offline'], self.op_timeout)
                self._run(['mtx', '-f', self.changer, 'unload', str(self.slot), str(self.drive_element)],
                          'Putting the cartridge back in its slot')
            elif now == 'slot' and where == 'drive':
                self._run(['mtx', '-f', self.changer, 'load', str(element), str(self.drive_element)],
                          'Loading the cartridge back into the drive')
                self._wait_ready()
                self.samples['load_ready'].pop()
            status = self._mtx_status()
            now, element = find_cartridge(status, self.barcode)
            expected = self.slot if where == 'slot' else self.drive_element
            ok = now == where and element == expected
        except Exception as exc:  # pylint: disable=broad-except
            self.result['warnings'].append('could not put %s back (%s): %s' % (self.barcode, where, exc))
            self.result['final_location'] = None
            return False
        self.result['final_location'] = {'where': now, 'element': element}
        if not ok:
            self.result['warnings'].append('%s is in %s %s, not back in %s %s: put it back by hand (mtx -f %s ...)'
                                           % (self.barcode, now, element, where, expected, self.changer))
        return ok


def drive_spec(generation, form_factor=None, vendor=None, interface=None, model=None):
    """``_drive_model.lookup`` for the mechanics forecast; None when the generation is unknown."""
    from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _drive_model
    if generation in (None, ''):
        return None
    return _drive_model.lookup(generation, form_factor=form_factor, vendor=vendor, interface=interface,
                               overrides=model or None)


def analyse(result, current=None, target=None, rate_mb_s=None, backup=None):
    """Add ``forecast`` (object sizes, current and target) and ``size_warnings`` to a benchmark result.

    ``current``: the drive's DriveSpec (None: from the discovered generation);
    ``rate_mb_s``: a measured streaming rate for the current drive (else the
    model's native rate); ``backup``: ``tapeops_backup`` for the size check.
    """
    if current is None:
        gen = ((result.get('drive') or {}).get('generation') or {})
        if gen.get('generation'):
            current = drive_spec(gen['generation'], gen.get('form_factor'), gen.get('vendor'))
    filemarks = result.get('filemarks') or {}
    rate_basis = 'measured (given)' if rate_mb_s else None
    out = forecast(result.get('summary') or {}, current=current, target=target, rate_mb_s=rate_mb_s,
                   filemark_s=filemarks.get('seconds_lost_per_mark'), rate_basis=rate_basis)
    result['forecast'] = out
    result['size_warnings'] = size_warnings(out, backup_sizes_mb(backup))
    return result
