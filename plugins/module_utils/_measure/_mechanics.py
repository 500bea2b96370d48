# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Library and drive mechanics: the timed cycle, on the managed host.

Private to this collection: may change without notice.

``MechanicsBenchmark`` times the cycle on one drive of one changer, each
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

``summarize`` is what the module returns of the times (``summary``: median and
95th percentile per operation, worked by hand in the unit tests), and
``start_of`` where the cartridge starts, from ``mtx status``. What the times
cost a backup (overheads, object sizes, the target drive's times) is judged by
``_judge/_mechanics``.
"""

from __future__ import annotations

import math
import os
import time

from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_safety
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_writer as W
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _cli
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _mt
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _mtx

MB = 1000 * 1000
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


# ---------------------------------------------------------------- the times

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


# ---------------------------------------------------------------- where the cartridge is

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


def start_of(status, barcode, drive_element, changer, device):
    """``(where, slot)``: where the cartridge starts (``slot`` or ``drive``) and the slot it is cycled from.

    ``status``: the changer's parsed ``mtx status``. Raises :class:`MechanicsError` when the changer could not
    be read, has no such drive, does not hold the cartridge or holds it in another drive, cannot say which slot
    a loaded cartridge came from, or has another cartridge in the drive.
    """
    if status.get('error'):
        raise MechanicsError('mtx status on %s failed: %s. %s' % (
            changer, status['error'], status.get('error_hint') or ''), 'changer_error')
    where, element = find_cartridge(status, barcode)
    in_drive = drive_entry(status, drive_element)
    if in_drive is None:
        raise MechanicsError('The changer %s has no data transfer element %s (mtx status lists %s).' % (
            changer, drive_element, [d['element'] for d in status.get('drives') or []]), 'no_drive_element')
    if where is None:
        raise MechanicsError('Cartridge %s is not in the changer %s (not in any slot or drive in mtx status). '
                             'Give the barcode of a cartridge the changer holds.' % (barcode, changer), 'no_cartridge')
    if where == 'drive' and element != drive_element:
        raise MechanicsError('Cartridge %s is in drive %s of the changer, not in drive %s (%s). Unload it first '
                             'or benchmark that drive.' % (barcode, element, drive_element, device),
                             'cartridge_elsewhere')
    if where == 'slot':
        if in_drive.get('full'):
            raise MechanicsError('Drive %s (%s) holds another cartridge (%s); the benchmark moves only %s. Unload '
                                 'the drive first.' % (drive_element, device, in_drive.get('barcode') or 'no barcode',
                                                       barcode), 'drive_full')
        return where, element
    slot = in_drive.get('source_element')
    if slot is None:
        raise MechanicsError('Cartridge %s is in drive %s but the changer does not say which slot it came from; '
                             'unload it to a slot first (mtx unload SLOT %s).' % (barcode, drive_element,
                                                                                  drive_element), 'no_source_slot')
    return where, slot


def write_locate_files(fd, files, file_mb, op_timeout):
    """``(marked run, baseline run)`` on the drive open for writing as ``fd``: ``files`` files of ``file_mb`` MB
    of random data (256 KiB blocks), each ended by a file mark, then as many bytes without a mark (the rate
    baseline), then a rewind, also when a write fails. A run slower than 1 MB/s is called hung (``W.TapeTimeout``).
    """
    pool = W.make_pool('random', size=16 * W.MIB, seed=7)
    views = W.block_views(pool, 262144)
    payload = files * file_mb * MB
    try:
        W.mtop(fd, W.MTSETBLK, 0, timeout=op_timeout)
        deadline = 2 * payload / float(MB) + op_timeout   # >= 1 MB/s or we call it hung
        marked = W.call_with_timeout(
            lambda: W.filemark_run(fd, views, payload, file_mb * MB,
                                   lambda f: W.mtop(f, W.MTWEOF, 1, timeout=op_timeout)),
            deadline, 'Writing the files for the locate')
        baseline = W.call_with_timeout(lambda: W.write_stream(fd, views, payload), deadline, 'Writing the baseline')
    finally:
        W.mtop(fd, W.MTREW, 1, timeout=op_timeout)
    return marked, baseline


class MechanicsBenchmark:
    """The timed move/load/locate/rewind/unload cycle on one drive; see the module docstring.

    ``runner(cmd, timeout)`` runs a command and returns a ``_cli.CliResult``
    (the module passes ``_cli.run``); ``clock`` and ``sleep`` are
    ``time.monotonic`` / ``time.sleep`` outside tests. :meth:`run` takes the
    steps: :meth:`identify` the drive, :func:`start_of` the cartridge,
    :meth:`plan`, ``repeats`` times :meth:`_cycle` (the first one writes the
    file marks, :meth:`_write_marks`), and :meth:`_restore`.
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
        self.slot = None
        self.samples = dict((op, []) for op in OPERATIONS)

    # -------------------------------------------------------------- commands
    def _run(self, cmd, what):
        """Run ``cmd`` under the deadline; (result, seconds). A non-zero exit raises MechanicsError."""
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
        result, _seconds = self._run(['mtx', '-f', self.changer, 'status'], 'Reading the changer (mtx status)')
        return _mtx.parse_mtx_result(result)

    def _mt_status(self):
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
        """The benchmark's result: the plan (all that check mode does), then the cycles timed and the cartridge
        put back; ``summary`` and ``restored`` also when a cycle fails (the error's ``partial``)."""
        drive = self.identify()
        where, slot = start_of(self._mtx_status(), self.barcode, self.drive_element, self.changer, self.device)
        plan = self.plan(where, slot)
        self.result = {'device': self.device, 'plan': plan, 'drive': drive, 'changed': False, 'warnings': [],
                       'barcode': self.barcode, 'slot': slot}
        if check_mode:
            return self.result
        self.slot = slot
        self.result['changed'] = True
        try:
            if where == 'drive':
                self._run([self.mt, '-f', self.device, 'offline'], 'Unloading the drive before the first cycle')
                self._run(['mtx', '-f', self.changer, 'unload', str(slot), str(self.drive_element)],
                          'Moving the cartridge to its slot before the first cycle')
            for cycle in range(self.repeats):
                self._cycle(cycle)
        finally:
            # Also on failure: the cartridge goes back, and what was measured is kept.
            self.result['restored'] = self._restore(where)
            self.result['summary'] = summarize(self.samples)
        return self.result

    def _cycle(self, cycle):
        """One timed cycle: in, ready, (the first time: the file marks), locate, to EOD, rewind, unload, out."""
        self._timed('move_to_drive', ['mtx', '-f', self.changer, 'load', str(self.slot), str(self.drive_element)])
        self._wait_ready()
        if cycle == 0:
            self.result['filemarks'] = self._write_marks()
        if self.result['filemarks'].get('written') or self.result.get('locate_error') is None:
            self._locate()
        self._timed('space_eod', [self.mt, '-f', self.device, 'eod'])
        self._timed('rewind', [self.mt, '-f', self.device, 'rewind'])
        self._timed('unload', [self.mt, '-f', self.device, 'offline'])
        self._timed('move_to_slot', ['mtx', '-f', self.changer, 'unload', str(self.slot), str(self.drive_element)])

    def _locate(self):
        """The timed locate over ``locate_files`` file marks from BOT, and where the drive says it stopped.

        On a cartridge the benchmark did not write, a locate that fails (fewer marks than asked) is not measured
        (``locate_error``) and is not tried again.
        """
        result = self.result
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

    def _write_marks(self):
        """File marks for the locate, through the safety gate and the write benchmark's writer; or why not."""
        record = {'written': False, 'media': None, 'files': self.locate_files, 'file_mb': self.file_mb}
        if not self._admitted(record):
            return record
        marked, baseline = self._write_files()
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

    def _admitted(self, record):
        """Whether the media rule lets the benchmark write on the cartridge now loaded; ``record`` gets what the
        gate read at BOT and its decision, or why it refused (a refusal is a warning, not an error)."""
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
            return False
        return True

    def _write_files(self):
        """``(marked run, baseline run)`` of :func:`write_locate_files`, through the gate's one open for writing."""
        try:
            fd = self.gate.open_for_write()
        except _tape_safety.TapeSafetyError as exc:
            raise MechanicsError(exc.msg, exc.reason, partial=self.result) from None
        try:
            return write_locate_files(fd, self.locate_files, self.file_mb, self.op_timeout)
        finally:
            os.close(fd)

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
