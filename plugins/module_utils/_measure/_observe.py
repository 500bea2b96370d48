# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Watch a tape drive while any backup application uses it, read-only (tape_drive_observe).

Private to this collection: may change without notice.

What is read, and nothing else:

- the st driver's counters of the drive (``/sys/class/scsi_tape/<name>/stats``,
  ``_st_sysfs.read_stats``), once an interval during the window;
- before and after the window, log pages with ``sg_logs`` (LOG SENSE, which
  reads the drive's counters and moves no tape) on the drive's sg node
  (``_tape_discovery.read_log_pages``): 0x02 write errors, 0x1B / 0x32 data
  compression, 0x2E TapeAlert, 0x34 (the lab drive's back-hitch counter);
- which processes hold the drive's nodes open (``/proc/<pid>/fd``,
  ``_drive_lock.users_of``), at the start and at the end.

The st node is never opened: an open sends TEST UNIT READY and MODE SENSE
through st (they would count in ``other_cnt``), and closing the
auto-rewinding node would rewind the tape under a running job. The drive is
identified by stat() and sysfs alone (``_tape_safety.check_tape_device``).

The st driver counts a command when it completes (drivers/scsi/st.c
``st_do_stats``): ``write_byte_cnt`` / ``write_cnt`` / ``write_ns`` for
WRITE, the ``read_*`` for READ, ``other_cnt`` for every other command (file
marks, positioning, rewind, the status commands of an open), ``io_ns`` for
all of them, ``resid_cnt`` for transfers that came back short; ``in_flight``
is the number of commands submitted and not yet complete. An interval of the
window is *active* when a counter moved or a command was in flight at its
start or its end (a synchronous file mark that takes seconds keeps
``in_flight`` at 1 while nothing completes).

The pure parts (``Window``, ``Series``, ``summarize``, ``drive_counters``)
work on counter dicts and log-page dicts only; ``watch`` takes its reader,
clock and sleep as arguments, so each is tested on recorded values.
"""

from __future__ import annotations

import datetime
import math
import os
import time

from ansible_collections.tapeops.qualify.plugins.module_utils import _records
from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _drive_lock
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_discovery
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_safety
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _cli
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _sg_logs
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _st_sysfs

# Where the host is read, and the clock: read when an Observer is made (not at import), so the unit tests run the
# module's main() on a sysfs tree and a clock of their own; internal, not options of the module.
SYS_ROOT = '/sys'
PROC_ROOT = '/proc'
STAT = os.stat
CLOCK = time.monotonic
SLEEP = time.sleep
WALL = time.time
TOOL_TIMEOUT = 60
# 0x02 write errors, 0x1B and 0x32 data compression, 0x2E TapeAlert, 0x34 the lab drive's back-hitch counter
OBSERVE_PAGES = (0x02, 0x1B, 0x2E, 0x32, 0x34)
# the counters whose difference is an interval's figure; in_flight is a level (kept as read at the interval's end)
COUNTERS = tuple(f for f in _st_sysfs.STAT_FIELDS if f != 'in_flight')
SERIES_KEYS = ('t', 'seconds') + _st_sysfs.STAT_FIELDS
MB = 1000 * 1000
# the drive's own count of host bytes may exceed st's by what st did not pass (another path to the drive)
BYPASS_FLOOR = 1024 * 1024
BYPASS_TOLERANCE = 0.01
OBSERVE_HINT = (' Set device to the drive\'s st node, such as /dev/nst0 or its /dev/tape/by-id link '
                '(tapeops.qualify.tape_drive_info lists the drives).')
NO_BACKHITCH_COUNTER = ('the drive gives no back-hitch counter the collection reads (only the lab\'s emulated drive '
                        'counts them, log page %s parameter %s)'
                        % (_sg_logs.BACKHITCH_PAGE, _sg_logs.BACKHITCH_PARAMETER))


class ObserveError(TapeopsError):
    """The drive cannot be observed, or the window asked is not one; the message says what to do."""


def _utc(epoch):
    return datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).isoformat(timespec='seconds')


def _seconds(value):
    """True for a finite number (not a bool, not NaN or infinity)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


class Window:
    """How long the window lasts and when it ends.

    ``duration``: its length in seconds; with ``until_idle`` its longest.
    ``until_idle``: end once the drive has been idle this many seconds after
    it was active (0: the window lasts ``duration``). A drive that is never
    active keeps the window open for ``duration``.
    """

    def __init__(self, duration, until_idle=0, interval=1.0):
        if not _seconds(duration) or duration <= 0:
            raise ObserveError('duration must be a positive number of seconds (the window, or its longest with '
                               'until_idle), got %r.' % (duration,), 'bad_window')
        if not _seconds(interval) or interval <= 0:
            raise ObserveError('interval must be a positive number of seconds between samples (1 is the default), '
                               'got %r.' % (interval,), 'bad_window')
        if interval > duration:
            raise ObserveError('interval (%g s) is longer than the window (duration %g s): nothing would be sampled. '
                               'Give a longer duration or a shorter interval.' % (interval, duration), 'bad_window')
        until_idle = until_idle or 0
        if not _seconds(until_idle) or until_idle < 0:
            raise ObserveError('until_idle must be a number of seconds (0 to end after duration), got %r.'
                               % (until_idle,), 'bad_window')
        if until_idle and until_idle < interval:
            raise ObserveError('until_idle (%g s) is shorter than one interval (%g s): give at least one interval.'
                               % (until_idle, interval), 'bad_window')
        self.duration = float(duration)
        self.until_idle = float(until_idle)
        self.interval = float(interval)

    def ended(self, elapsed, active_seen, idle_s):
        """Why the window ends after ``elapsed`` seconds (``'idle'``, ``'duration'``), or None while it goes on.

        ``idle_s``: how long the drive has been idle since it was last active.
        A small tolerance takes the clock's jitter (a sample a few ms early).
        """
        slack = min(0.05, self.interval / 10.0)
        if self.until_idle and active_seen and idle_s + slack >= self.until_idle:
            return 'idle'
        if elapsed + slack >= self.duration:
            return 'duration'
        return None

    def asked(self):
        return {'duration_s': self.duration, 'until_idle_s': self.until_idle or None, 'interval_s': self.interval}


def interval_active(before, after):
    """True when a counter moved between two samples or a command was in flight at either of them."""
    for key in COUNTERS:
        if key in before and key in after and after[key] != before[key]:
            return True
    return bool(before.get('in_flight') or after.get('in_flight'))


class Series:
    """The window's intervals as columns (``SERIES_KEYS``), built sample by sample.

    ``t`` is each interval's start in seconds from the window's first sample,
    ``seconds`` its length; each counter column is the counter's difference
    over the interval (a counter missing in a sample is 0 there), except
    ``in_flight``: the level read at the interval's end.
    """

    def __init__(self):
        self.columns = dict((key, []) for key in SERIES_KEYS)
        self.active = []

    def __len__(self):
        return len(self.active)

    def add(self, t0, before, t1, after):
        cols = self.columns
        cols['t'].append(round(t0, 3))
        cols['seconds'].append(round(t1 - t0, 3))
        for key in COUNTERS:
            cols[key].append(after[key] - before[key] if key in before and key in after else 0)
        cols['in_flight'].append(after.get('in_flight', 0))
        self.active.append(interval_active(before, after))

    @classmethod
    def of(cls, samples):
        """The series of ``[(t, counters), ...]`` (recorded samples)."""
        series = cls()
        for (t0, before), (t1, after) in zip(samples, samples[1:]):
            series.add(t0, before, t1, after)
        return series

    def as_dict(self):
        return dict((key, list(values)) for key, values in self.columns.items())


def watch(read, window, clock, sleep):
    """Sample ``read()`` once an interval until ``window`` ends.

    ``read()`` returns the counters (``_st_sysfs.read_stats``) or None when the
    drive's statistics are gone (the drive was removed). Samples are due on a
    fixed grid from the first one (``interval``, ``2 * interval``, ...); after
    a sleep that overran (a loaded host) the next sample is due at the next
    point of the grid, so an interval is then longer, never empty. Returns ``(first, last, series, ended_by)``,
    ``ended_by`` being ``'idle'``, ``'duration'`` or ``'drive_gone'``.
    """
    start = clock()
    first = read()
    if first is None:
        raise ObserveError('The drive\'s st statistics could not be read at the start of the window (the drive is '
                           'gone?). Check that it is still listed by tapeops.qualify.tape_drive_info.', 'drive_gone')
    series = Series()
    prev_t, prev = 0.0, first
    active_seen, idle_s = False, 0.0
    while True:
        # the next point of the grid after now: a sleep that overran costs samples, never a zero-length interval
        tick = int((clock() - start) / window.interval) + 1
        delay = start + tick * window.interval - clock()
        if delay > 0:
            sleep(delay)
        now = clock() - start
        counters = read()
        if counters is None:
            return first, prev, series, 'drive_gone'
        series.add(prev_t, prev, now, counters)
        if series.active[-1]:
            active_seen, idle_s = True, 0.0
        else:
            idle_s += now - prev_t
        prev_t, prev = now, counters
        ended = window.ended(now, active_seen, idle_s)
        if ended:
            return first, prev, series, ended


def idle_gaps(series):
    """Runs of inactive intervals: ``[{'start_s', 'seconds', 'where'}]``.

    ``where``: ``'between'`` (between two active stretches: the drive stopped
    and had to start again), ``'before'`` (from the window's start to the
    first activity), ``'after'`` (from the last activity to the end), or
    ``'whole'`` (nothing happened in the window).
    """
    cols = series.columns
    active = series.active
    gaps = []
    i = 0
    while i < len(active):
        if active[i]:
            i += 1
            continue
        j = i
        while j < len(active) and not active[j]:
            j += 1
        seconds = round(sum(cols['seconds'][i:j]), 3)
        if i == 0 and j == len(active):
            where = 'whole'
        elif i == 0:
            where = 'before'
        elif j == len(active):
            where = 'after'
        else:
            where = 'between'
        gaps.append({'start_s': cols['t'][i], 'seconds': seconds, 'where': where})
        i = j
    return gaps


def summarize(first, last, series):
    """The window's figures from its first and last sample and its series (see ObservedWindow)."""
    cols = series.columns
    delta = _st_sysfs.stats_delta(first, last) or {}
    window_s = round(sum(cols['seconds']), 3)
    busy_s = round(sum(s for s, a in zip(cols['seconds'], series.active) if a), 3)
    written = delta.get('write_byte_cnt')
    out = {
        'idle': not any(series.active) if len(series) else None,
        'bytes_written': written,
        'bytes_read': delta.get('read_byte_cnt'),
        'busy_seconds': busy_s,
        'idle_gaps': idle_gaps(series),
        'other_commands': delta.get('other_cnt'),
        'st_delta': delta,
        'mb_s': round(written / busy_s / MB, 3) if written is not None and busy_s > 0 else None,
        'window_mb_s': round(written / window_s / MB, 3) if written is not None and window_s > 0 else None,
        'window_seconds': window_s,
        'samples': len(series) + 1,
    }
    return out


def _pages(log_pages):
    return ((log_pages or {}).get('pages') or {}) if isinstance(log_pages, dict) else {}


def not_read(before, after):
    """Why the drive's log pages say nothing about the window as a whole (not read, no LOG SENSE), else None."""
    for pages in (before, after):
        if not isinstance(pages, dict):
            return 'the drive\'s log pages were not read both before and after the window'
    for pages in (after, before):
        if pages.get('unsupported_reason'):
            return 'the drive answers no LOG SENSE (%s)' % pages['unsupported_reason']
        if (pages.get('errors') or {}).get('0x00'):
            return 'sg_logs could not list the drive\'s log pages: %s' % pages['errors']['0x00']
    return None


def _page_missing(before, after, codes, what):
    """Why page(s) ``codes`` gave nothing: sg_logs failed on them, or the drive does not list them."""
    for pages in (after, before):
        failed = ['%s: %s' % (c, pages['errors'][c]) for c in codes if c in (pages.get('errors') or {})]
        if failed:
            return 'sg_logs failed on the %s: %s' % (what, '; '.join(failed))
    listed = set(after.get('supported') or []) & set(before.get('supported') or [])
    if not any(int(c, 16) in listed for c in codes):
        return 'the drive has no %s (it does not list page %s)' % (what, ' or '.join(codes))
    return 'the drive\'s %s holds none of the counters read here' % what


def compression(before, after):
    """``(figures, why_unknown)``: the drive's compression ratio over the window, from its own byte counters.

    ``figures``: ``{'page', 'host_written_bytes', 'tape_written_bytes',
    'ratio'}`` (the differences between the after and before reads; ratio
    host / tape) or None. Page 0x1B (SSC-4) first, then 0x32 (LTO).
    """
    for page in _sg_logs.COMPRESSION_PAGES:
        b = _sg_logs.compression_counters(_pages(before).get(page)) or {}
        a = _sg_logs.compression_counters(_pages(after).get(page)) or {}
        values = (b.get('host_written_bytes'), b.get('tape_written_bytes'), a.get('host_written_bytes'),
                  a.get('tape_written_bytes'))
        if None in values:
            continue
        host, tape = values[2] - values[0], values[3] - values[1]
        figures = {'page': page, 'host_written_bytes': host, 'tape_written_bytes': tape, 'ratio': None}
        if host < 0 or tape < 0:
            return None, ('the drive\'s byte counters on page %s went back during the window (they count since the '
                          'cartridge was loaded: another cartridge was loaded, or they were reset)' % page)
        if host == 0:
            return figures, 'the drive received no data in the window'
        if tape == 0:
            return figures, ('the drive wrote none of the %d bytes it received to tape before the last read (they '
                             'were still in its buffer)' % host)
        figures['ratio'] = round(float(host) / tape, 3)
        return figures, None
    return None, not_read(before, after) or _page_missing(before, after, _sg_logs.COMPRESSION_PAGES,
                                                          'data compression log page')


def backhitches(before, after):
    """``(count, why_unknown)``: the drive's own back-hitches over the window, where it counts them."""
    b, a = _sg_logs.backhitch_count(before), _sg_logs.backhitch_count(after)
    if b is None or a is None:
        return None, not_read(before, after) or NO_BACKHITCH_COUNTER
    if a < b:
        return None, 'the drive\'s back-hitch counter went back during the window (another cartridge was loaded)'
    return a - b, None


def _int_items(page):
    return dict((k, v) for k, v in (page or {}).items()
                if isinstance(v, int) and not isinstance(v, bool) and not k.startswith('_'))


def write_errors(before, after):
    """``(delta, why_unknown)``: the write error counters (page 0x02) over the window, named as sg_logs names them."""
    b, a = _int_items(_pages(before).get('0x02')), _int_items(_pages(after).get('0x02'))
    keys = sorted(set(b) & set(a))
    if not keys:
        return None, not_read(before, after) or _page_missing(before, after, ('0x02',), 'write error counter page')
    delta = dict((k, a[k] - b[k]) for k in keys)
    if any(v < 0 for v in delta.values()):
        return None, ('the write error counters went back during the window (another cartridge was loaded, or they '
                      'were reset)')
    return delta, None


def tape_alert(before, after):
    """``(flags, why_unknown)``: TapeAlert flags set before and after the window, and those raised in it."""
    b, a = _pages(before).get('0x2e'), _pages(after).get('0x2e')
    if not isinstance(a, dict) or not isinstance(b, dict) or 'active' not in a or 'active' not in b:
        return None, not_read(before, after) or _page_missing(before, after, ('0x2e',), 'TapeAlert log page')
    return {'active_before': list(b['active']), 'active_after': list(a['active']),
            'raised': sorted(set(a['active']) - set(b['active']))}, None


def drive_counters(before, after, why_not=None):
    """What the drive counted itself over the window, from the log pages read before and after it.

    Returns ``(figures, unknown)``: ``figures`` holds ``compression``,
    ``compression_ratio``, ``backhitches``, ``write_errors``, ``tape_alert``
    (each None when unknown); ``unknown`` says why for each one that is.
    ``why_not``: why the pages were not read (then every one is unknown for it).
    """
    names = ('compression_ratio', 'backhitches', 'write_errors', 'tape_alert')
    if why_not:
        return dict.fromkeys(names + ('compression',)), dict.fromkeys(names, why_not)
    figures, unknown = {}, {}
    figures['compression'], why = compression(before, after)
    figures['compression_ratio'] = (figures['compression'] or {}).get('ratio')
    unknown['compression_ratio'] = why
    figures['backhitches'], unknown['backhitches'] = backhitches(before, after)
    figures['write_errors'], unknown['write_errors'] = write_errors(before, after)
    figures['tape_alert'], unknown['tape_alert'] = tape_alert(before, after)
    return figures, dict((k, v) for k, v in unknown.items() if v)


def cross_check(st_bytes, comp):
    """A note when the drive received more bytes than st passed (the application bypasses st), else None.

    An application writing through the sg driver (or lin_tape, or another host
    on a shared drive) moves the drive's counters but not st's: sysstat issue
    291 (https://github.com/sysstat/sysstat/issues/291), an IBM LTO-7 on RHEL
    7.9 whose st write counters stayed 0 while IBM HPSS wrote through sg.
    """
    if st_bytes is None or not comp or comp.get('host_written_bytes') is None:
        return None
    drive = comp['host_written_bytes']
    others = drive - st_bytes
    if others > max(BYPASS_FLOOR, BYPASS_TOLERANCE * st_bytes):
        return ('the drive received %d bytes in the window (log page %s) and the st driver passed %d: %d bytes reached '
                'it another way (an application writing through the sg driver or lin_tape, or another host on a '
                'shared drive); the series shows only what went through st' % (drive, comp['page'], st_bytes, others))
    return None


def identify(device, sys_root=None, stat_func=None):
    """The drive behind ``device`` (``/dev/nst0``, ``/dev/st0``, ``nst0``, a /dev/tape/by-id link), from stat and sysfs.

    Raises ObserveError (with the gate's reason) for anything that is not an
    st tape node, and ``no_st_stats`` when the kernel keeps no statistics.
    """
    sys_root = SYS_ROOT if sys_root is None else sys_root
    stat_func = stat_func or STAT
    path = device if not device or '/' in device else '/dev/%s' % device
    try:
        ident = _tape_safety.check_tape_device(path, sys_root=sys_root, stat_func=stat_func, hint=OBSERVE_HINT,
                                               rewinding_ok=True)
    except _tape_safety.TapeSafetyError as exc:
        raise ObserveError(exc.msg, exc.reason)
    stats = _st_sysfs.stats_dir(ident.name, sys_root)
    if not os.path.isdir(stats):
        raise ObserveError(
            '%s (%s) has no st statistics: %s is missing. The st driver keeps them from Linux 4.2 (RHEL 7.9\'s '
            'kernel has them too); this host runs %s. Observe the drive on a host whose kernel has them; nothing '
            'else here can count its bytes without opening it.' % (path, ident.name, stats, os.uname()[2]),
            'no_st_stats')
    scsi_dir = os.path.realpath(os.path.join(ident.sysfs, 'device'))
    read = _st_sysfs.read_attr
    return {
        'nst': '/dev/nst%d' % ident.index if ident.index is not None else path,
        'name': ident.name,
        'stats_dir': stats,
        'sg': _tape_discovery.sg_of(scsi_dir),
        'hctl': ident.scsi_device,
        'vendor': read(os.path.join(scsi_dir, 'vendor')),
        'product': read(os.path.join(scsi_dir, 'model')),
        'revision': read(os.path.join(scsi_dir, 'rev')),
    }


def holders(drive, sys_root, proc_root):
    """The processes holding the drive's st, nst or sg nodes open: ``[{pid, command, node}]``."""
    nodes = _drive_lock.drive_nodes(drive['hctl'], sys_root=sys_root)
    return _drive_lock.users_of(nodes, proc_root=proc_root) if nodes else []


def _merge_holders(start, end):
    out = {}
    for when, users in (('start', start), ('end', end)):
        for user in users or []:
            key = (user.get('pid'), user.get('node'))
            entry = out.setdefault(key, dict(user, seen=[]))
            entry['seen'].append(when)
    return [out[k] for k in sorted(out, key=lambda k: (k[0] or 0, str(k[1])))]


class Observer:
    """One observation of one drive (tape_drive_observe's ``main`` hands its parameters here)."""

    def __init__(self, device, duration, until_idle=0, interval=1.0, log_pages=True, runner=None, sys_root=None,
                 proc_root=None, stat_func=None, clock=None, sleep=None, wall=None):
        self.window = Window(duration, until_idle, interval)
        self.device = device
        self.log_pages = log_pages
        self.sys_root = SYS_ROOT if sys_root is None else sys_root
        self.proc_root = PROC_ROOT if proc_root is None else proc_root
        if runner is None:
            def runner(cmd):
                return _cli.run(cmd, timeout=TOOL_TIMEOUT)
        self.runner = _tape_discovery.HungGuard(runner, self.sys_root)
        self.stat_func = stat_func or STAT
        self.clock, self.sleep, self.wall = clock or CLOCK, sleep or SLEEP, wall or WALL

    def plan(self):
        """The record of what would be watched (check mode): the drive identified, nothing sampled or sent."""
        drive = identify(self.device, self.sys_root, self.stat_func)
        window = dict(self.window.asked(), started_at=None, ended_at=None, ended_by=None, samples=0, seconds=None)
        pages = ['0x%02x' % p for p in OBSERVE_PAGES] if self.log_pages and drive['sg'] else []
        return _records.ObservedWindow(
            device=self.device, status='planned', drive=dict(drive, log_pages=pages), window=window,
            unknown={'window': 'check mode: nothing was sampled and no LOG SENSE was sent'})

    def _read_pages(self, drive):
        if not self.log_pages:
            return None
        return _tape_discovery.read_log_pages(drive['sg'], self.runner, pages=OBSERVE_PAGES)

    def run(self):
        """Observe: log pages, the window, log pages again; the ObservedWindow record."""
        record = self.plan()
        drive = record.drive
        record.status, record.unknown, notes = 'observed', {}, []
        users_start = holders(drive, self.sys_root, self.proc_root)
        before = self._read_pages(drive)
        started = self.wall()
        first, last, series, ended_by = watch(lambda: _st_sysfs.read_stats(drive['name'], self.sys_root),
                                              self.window, clock=self.clock, sleep=self.sleep)
        ended = self.wall()
        hung = self.runner.reason(drive['sg']) if drive['sg'] else None
        after, why_not = None, None
        if not self.log_pages:
            why_not = 'log_pages=false: the drive\'s log pages were not read'
        elif ended_by == 'drive_gone':
            why_not = 'the drive was gone at the end of the window: no log page was read after it'
            notes.append('the drive\'s st statistics disappeared %.0f s into the window (the drive was removed or its '
                         'driver unbound): the window ends there' % sum(series.columns['seconds']))
        elif hung:
            why_not = 'the drive did not answer LOG SENSE before the window (%s): nothing more was sent to it' % hung
        else:
            after = self._read_pages(drive)
        users_end = holders(drive, self.sys_root, self.proc_root) if ended_by != 'drive_gone' else []
        figures = summarize(first, last, series)
        record.window.update(started_at=_utc(started), ended_at=_utc(ended), ended_by=ended_by,
                             samples=figures.pop('samples'), seconds=figures.pop('window_seconds'))
        for key, value in figures.items():
            setattr(record, key, value)
        record.series = series.as_dict()
        counted, unknown = drive_counters(before, after, why_not)
        for key, value in counted.items():
            setattr(record, key, value)
        record.unknown.update(unknown)
        if record.mb_s is None:
            record.unknown['mb_s'] = 'the drive was not active in the window'
        record.log_pages_before, record.log_pages_after = before, after
        record.holders = _merge_holders(users_start, users_end)
        if series.active and series.active[0]:
            notes.append('the drive was writing in the window\'s first second: a job that began before the window is '
                         'not whole in it (start the window before the job)')
        if series.active and series.active[-1] and ended_by == 'duration':
            notes.append('the window ended while the drive was still active: the job went on after it')
        bypass = cross_check(record.bytes_written, record.compression)
        if bypass:
            notes.append(bypass)
        for pages in (before, after):
            notes.extend(w for w in (pages or {}).get('warnings') or [] if w not in notes)
        record.notes = notes
        return record
