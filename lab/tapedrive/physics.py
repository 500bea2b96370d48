# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Streaming physics of the lab's emulated drive: buffer, speed steps, back-hitches.

The collection's forecast (plugins/module_utils/_judge/_forecast.py) implements the
SAME rules independently, so an end-to-end test can compare its prediction
with what this drive reports. Where vendors publish no number the rule is an
estimate and says so.

Units: the buffer holds TAPE-SIDE bytes (after the drive's compression):
host bytes / ratio = tape bytes. Rates in decimal MB/s.

Drive parameters (fields of ``_drive_model.DriveSpec``, from ``lookup(...).as_dict()``,
written by lab/tapelab into the guest's drive profile, see ``Profile``):
native_mb_s, speed_steps_mb_s (fastest first), speed_floor_mb_s (= last step),
buffer_mb, backhitch_s, load_s, unload_s, rewind_s, locate_s,
compression_ratio (nominal), density_code, estimated.

Rules:

1. Host writes go into the buffer while it has room; when it is full the host
   is blocked (a WRITE does not complete) until the drive has drained enough.
2. A moving drive drains the buffer at its current speed step v_k (tape MB/s).
3. Control loop, every ADAPT_S = 0.5 s (estimate): the drive compares the
   host's arrival rate over that interval (tape-side) with its step. Buffer
   more than 75 % full and the host keeping up (arrival >= step, or a WRITE
   waited for room in the interval): up to the highest step not above the
   arrival rate, at least one step. Buffer less than 25 % full and the host
   falling behind (arrival < step): down to the highest step not above the
   arrival rate (the floor when below it), at least one step. (Here the
   ticks fall on a fixed grid, every 0.5 s from the load.)
4. If the buffer runs dry while the drive moves: the drive stops and that is
   ONE back-hitch (reposition). The reposition takes backhitch_s (no data
   written; the host can keep filling the buffer). The drive restarts when
   the reposition is over AND (level >= 50 % of the buffer, or a flush is
   pending: synchronous file mark, rewind/unload, close). On (re)start it
   picks the highest step <= the host's arrival rate (tape-side) over the
   last 1 s, or since it stopped if that is shorter, clamped to [floor, top].
   In rules 3 and 4 the arrival rate leaves out the time the host waited on
   the drive (a WRITE waiting for room, a flush): the drive knows it held the
   host, and that time says nothing of the host's rate; a host held back for
   the whole interval counts as faster than any step.
5. First start after load/rewind: like a restart but no back-hitch counted and
   no reposition time.
6. Synchronous file mark (WRITE FILEMARKS with IMMED=0): the command completes
   only when the buffer is empty (drained at the current step, the control
   loop still running); then the drive stops: the next data needs a
   reposition (backhitch_s, counted as a back-hitch) before the tape moves
   again. The host is unblocked as soon as the buffer is empty. (Here: the
   reposition starts when the restart condition of rule 4 next holds, and the
   drive moves when it is over.)
7. Immediate file mark (IMMED=1): goes into the buffer as a marker and returns
   at once; costs nothing.
8. Rewind/unload/space/locate flush the buffer first (like rule 6) and then
   take their own times (rewind_s, locate_s, ...); after them the next start
   is a first start (rule 5).

A drive's data rate can be lowered by a factor (``Transport.rate_factor``, 1
by default): the tape still moves at its step, but only that fraction of the
step is the host's data (the rest: rewrites of what a dirty head did not write
well, lab/tapedrive/ssc.py ``DIRTY_RATE_FACTOR``). The buffer then drains at
step x factor, and rules 3 and 4 compare the host's arrival rate with the
steps' data rates; the speed steps themselves (the tape's speeds, as the log
pages report them) do not change.

Lab time scale (``--scale S``, e.g. 0.25): every rate (steps, native) and the
buffer size are multiplied by S; back-hitch time stays as it is, so the time
behaviour (seconds of buffer, seconds per back-hitch) is that of the real
drive at S of its throughput. Mechanical times (load, unload, rewind, locate)
are divided by a separate factor so the lab stays fast. lab/tapelab applies
both when it writes the profile; this module takes the profile as given.

Compression: the drive compresses what it receives with zlib level 1 per block
(never more tape bytes than host bytes: a block that does not compress is
stored raw, and a large block whose probe samples do not compress passes
through uncompressed, as LTO's SLDC does; see BlockCompressor), and the tape-side bytes are what fill and drain the buffer
(``compress_block``).

Time comes from a clock the caller passes in (``now`` arguments), so unit tests
run the physics on a fake clock in milliseconds.
"""

from __future__ import annotations

import collections
import math
import zlib

MB = 1000 * 1000
ADAPT_S = 0.5          # control-loop period (estimate, rule 3)
HIGH_WATER = 0.75      # step up above this fill (rule 3)
LOW_WATER = 0.25       # step down below this fill (rule 3)
RESTART_FILL = 0.50    # restart at this fill (rule 4)
RATE_WINDOW_S = 1.0    # arrival rate window for the (re)start step (rule 4)
MIN_WINDOW_S = 0.1     # shortest restart window: the forecast's tick (plugins/module_utils/_judge/_forecast.py TICK_S)
_EPS = 1e-9
_BYTE_EPS = 1e-3

# Defaults when a profile lacks a field (the drive model is gaining fields):
# an IBM LTO-5 full-height drive, _drive_model.lookup(5, 'FH', 'IBM') at scale 1.
DEFAULTS = {
    'generation': 5,
    'native_mb_s': 140.0,
    'speed_steps_mb_s': [140.0, 122.5, 105.0, 87.5, 70.0],
    'buffer_mb': 256.0,
    'backhitch_s': 3.0,        # estimate: no vendor publishes it (see _drive_model.BACKHITCH_RULE)
    'load_s': 12.0,
    'unload_s': 17.0,
    'rewind_s': 55.0,
    'locate_s': 45.0,
    'compression_ratio': 2.0,
    'density_code': 0x58,
    'native_capacity_gb': 1500,
    'scale': 1.0,
    'mech_divisor': 1.0,
}


class BlockCompressor:
    """zlib level 1 per block, as the drive's compression engine (raw deflate).

    One compressor object is kept and flushed with Z_FULL_FLUSH after every
    block: the output of each block is then a complete, byte-aligned raw
    deflate segment with no reference to earlier blocks (the same bytes as
    compressing the block on its own, without zlib's 6-byte header/trailer),
    and the compressor's memory is not allocated again per block (in a UML
    guest every fresh allocation costs page faults: 20 ms against 6 ms per
    256 KiB random block, measured).

    Incompressible data passes through, as in an LTO drive: LTO's data
    compression (SLDC, ECMA-321) switches to its pass-through scheme when the
    data does not compress, so a drive's throughput on random data is its
    native rate, not its compressor's. A block of ``PROBE_MIN`` bytes or more
    is first probed: ``PROBE_SAMPLES`` samples (start, middle, end) of an
    eighth of the block, ``PROBE_BYTES`` at most; when together they do not
    shrink by ``PROBE_GAIN`` the block is stored raw without compressing the
    rest. zlib-1 takes 34 MB/s of random data on one core of the CI machine
    and a guest's writer shares that core: compressing every random block
    held the lab drive path to 6 MB/s (against 35 MB/s for 2.5:1 data), below
    lab-ma2's floor. Blocks under 64 KiB (Bacula's default 64512 B) are probed
    the same way, in smaller samples: the lab then measures what the block
    size costs the drive path, not zlib on the guest's CPU.
    """

    PROBE_BYTES = 8192
    PROBE_SAMPLES = 3
    PROBE_MIN = 8192        # smaller blocks are compressed whole: the probe would cost as much
    PROBE_GAIN = 0.02

    def __init__(self, level=1):
        self.level = level
        self._c = zlib.compressobj(level, zlib.DEFLATED, -15)

    def _pack(self, data):
        return self._c.compress(data) + self._c.flush(zlib.Z_FULL_FLUSH)

    def incompressible(self, data):
        """True when the probe samples of a large block do not shrink (the block passes through)."""
        size = len(data)
        if size < self.PROBE_MIN:
            return False
        sample = self.probe_bytes(size)
        last = size - sample
        starts = [last * i // (self.PROBE_SAMPLES - 1) for i in range(self.PROBE_SAMPLES)]
        packed = sum(len(self._pack(data[at:at + sample])) for at in starts)
        return packed >= (1.0 - self.PROBE_GAIN) * self.PROBE_SAMPLES * sample

    @classmethod
    def probe_bytes(cls, size):
        """The length of each probe sample for a block of ``size`` bytes: an eighth of it, PROBE_BYTES at most."""
        return min(cls.PROBE_BYTES, size // 8)

    def __call__(self, data):
        """(tape_bytes, raw-deflate bytes or None): None when the block does not shrink (stored raw)."""
        if not data:
            return 0, None
        if self.incompressible(data):
            return len(data), None
        packed = self._pack(data)
        if len(packed) < len(data):
            return len(packed), packed
        return len(data), None


def decompress_block(packed):
    """The host bytes of a block ``BlockCompressor`` packed."""
    return zlib.decompressobj(-15).decompress(packed)


_COMPRESSOR = BlockCompressor(1)


def compress_block(data):
    """(tape_bytes, raw-deflate or None) for one block: zlib level 1 (see BlockCompressor).

    A block that does not get smaller is stored raw: tape bytes = host bytes.
    """
    return _COMPRESSOR(data)


class Profile:
    """The numbers the physics needs, from a drive-model dict (already scaled by lab/tapelab).

    Missing fields fall back to ``DEFAULTS``; a missing step list falls back to
    the native rate (top) and the floor. ``missing`` lists what was defaulted.
    """

    def __init__(self, spec=None):
        spec = dict(spec or {})
        self.raw = spec
        self.missing = sorted(k for k in DEFAULTS if spec.get(k) in (None, '', []))

        def get(key):
            value = spec.get(key)
            return DEFAULTS[key] if value in (None, '', []) else value

        self.generation = int(get('generation'))
        self.native_mb_s = float(get('native_mb_s'))
        steps = spec.get('speed_steps_mb_s')
        if not steps:
            floor = spec.get('speed_floor_mb_s')
            steps = [self.native_mb_s] + ([float(floor)] if floor and float(floor) < self.native_mb_s else [])
            if 'speed_steps_mb_s' not in self.missing:
                self.missing.append('speed_steps_mb_s')
        self.steps_mb_s = sorted((float(s) for s in steps), reverse=True)
        if any(s <= 0 for s in self.steps_mb_s):
            raise ValueError('speed steps must be positive MB/s, got %r' % (steps,))
        self.buffer_mb = float(get('buffer_mb'))
        if self.buffer_mb <= 0:
            raise ValueError('buffer_mb must be positive, got %r' % self.buffer_mb)
        self.backhitch_s = float(get('backhitch_s'))
        self.load_s = float(get('load_s'))
        self.unload_s = float(get('unload_s'))
        self.rewind_s = float(get('rewind_s'))
        self.locate_s = float(get('locate_s'))
        self.compression_ratio = float(get('compression_ratio'))
        density = get('density_code')
        self.density_code = int(density, 16) if isinstance(density, str) else int(density)
        self.native_capacity_gb = float(get('native_capacity_gb'))
        self.scale = float(get('scale'))
        self.mech_divisor = float(get('mech_divisor'))

    @property
    def top_mb_s(self):
        return self.steps_mb_s[0]

    @property
    def floor_mb_s(self):
        return self.steps_mb_s[-1]

    def as_dict(self):
        return {
            'generation': self.generation, 'native_mb_s': self.native_mb_s,
            'speed_steps_mb_s': list(self.steps_mb_s), 'speed_floor_mb_s': self.floor_mb_s,
            'buffer_mb': self.buffer_mb, 'backhitch_s': self.backhitch_s, 'load_s': self.load_s,
            'unload_s': self.unload_s, 'rewind_s': self.rewind_s, 'locate_s': self.locate_s,
            'compression_ratio': self.compression_ratio, 'density_code': self.density_code,
            'native_capacity_gb': self.native_capacity_gb, 'scale': self.scale,
            'mech_divisor': self.mech_divisor, 'defaulted': list(self.missing),
        }


STOPPED = 'stopped'
MOVING = 'moving'
REPOSITIONING = 'repositioning'


class Transport:
    """The buffer and the tape motion of one drive (rules 1-8), advanced lazily.

    Every public method takes ``now`` (seconds on the caller's clock, never
    decreasing). Between calls nothing runs: ``advance(now)`` replays the
    events (control ticks, running dry, end of a reposition) up to ``now``.
    """

    def __init__(self, profile, now=0.0):
        self.profile = profile
        self.steps = [s * MB for s in profile.steps_mb_s]      # bytes/s, fastest first
        self.capacity = profile.buffer_mb * MB                  # bytes (tape side)
        self.t = float(now)
        self.tick0 = float(now)
        self.level = 0.0
        self.objects = collections.deque()                      # tape bytes left per buffered object
        self.state = STOPPED
        self.step = 0
        self.stopped_at = float(now)                            # start of the restart rate window (rule 4)
        self.blocked = False                                    # a WRITE waited for room this control interval
        self.needs_reposition = False
        self.reposition_end = None
        self.flushes = 0                                        # pending flush requests
        self.arrivals = collections.deque()                     # (t, tape bytes) of the last RATE_WINDOW_S
        self.holds = collections.deque()                        # (start, end) the host waited on the drive
        self.hold_open = {}                                     # 'room' / 'flush' -> start of an open wait
        self.counters = collections.Counter()
        self.session = None                                     # write session since load/rewind
        self.events = collections.deque(maxlen=4096)            # (t, what, detail) for the trace
        self.speed_time = collections.Counter()                 # seconds moving per step (MB/s key)
        self.new_session = False
        self.rate_factor = 1.0                                  # data rate / tape speed (see the docstring)
        self.reset_session(now)

    # ------------------------------------------------------------ helpers
    def reset_session(self, now):
        self.session = {'start': None, 'last': None, 'host_bytes': 0, 'tape_bytes': 0}

    def _rate(self, index):
        """The data rate (bytes/s) at step ``index``: the step times the rate factor."""
        return self.steps[index] * self.rate_factor

    def set_rate_factor(self, factor, now):
        """From ``now`` on only ``factor`` (0 < factor <= 1) of the tape speed carries the host's data."""
        factor = float(factor)
        if not 0 < factor <= 1:
            raise ValueError('rate factor must be in (0, 1], got %r' % (factor,))
        self.advance(now)
        self.rate_factor = factor

    def _event(self, what, detail=None):
        self.events.append((round(self.t, 6), what, detail))

    def fill(self):
        return self.level / self.capacity

    def _hold(self, kind):
        """The host starts waiting on the drive: a WRITE for room ('room'), a flush ('flush')."""
        self.hold_open.setdefault(kind, self.t)

    def _release(self, kind):
        start = self.hold_open.pop(kind, None)
        if start is not None and self.t > start + _EPS:
            self.holds.append((start, self.t))

    def held_seconds(self, now, window):
        """Seconds of the last ``window`` the host waited on the drive (overlaps counted once)."""
        low = now - window
        spans = sorted([(max(a, low), min(b, now)) for a, b in self.holds if b > low]
                       + [(max(a, low), now) for a in self.hold_open.values()])
        total, reach = 0.0, low
        for a, b in spans:
            a = max(a, reach)
            if b > a:
                total += b - a
                reach = b
        return total

    def arrival_rate(self, now, window=RATE_WINDOW_S):
        """Tape-side bytes/s accepted from the host over the last ``window`` seconds.

        The seconds the host waited on the drive (a full buffer, a flush) are
        left out: they say nothing of the host's rate. A host held back for
        (nearly) the whole window has shown no rate of its own: infinite, at
        least any step (the forecast's ``_host_rate``).
        """
        while self.arrivals and self.arrivals[0][0] <= now - RATE_WINDOW_S:
            self.arrivals.popleft()
        while self.holds and self.holds[0][1] <= now - RATE_WINDOW_S:
            self.holds.popleft()
        if window <= _EPS:
            return 0.0
        free = window - self.held_seconds(now, window)
        if free < MIN_WINDOW_S / 2.0:
            return math.inf
        return sum(n for t, n in self.arrivals if t > now - window - _EPS) / free

    def _highest_step(self, rate):
        """Index (0 = top) of the highest step not above ``rate``; the floor when below every step."""
        for i in range(len(self.steps)):
            if self._rate(i) <= rate * (1 + 1e-9) + _EPS:
                return i
        return len(self.steps) - 1

    def _pick_step(self):
        # the last second, or since the stop if shorter; at least MIN_WINDOW_S (the forecast's tick),
        # so a burst that arrives all at once counts as fast, not as nothing
        window = max(MIN_WINDOW_S, min(RATE_WINDOW_S, self.t - self.stopped_at))
        return self._highest_step(self.arrival_rate(self.t, window))

    def _next_tick(self, t):
        n = int((t - self.tick0) / ADAPT_S + _EPS) + 1
        return self.tick0 + n * ADAPT_S

    def _start_moving(self):
        self.state = MOVING
        self.step = self._pick_step()
        self._event('start', self.steps[self.step] / MB)

    def _try_restart(self):
        if self.state != STOPPED or self.level <= _BYTE_EPS:
            return
        if self.level < RESTART_FILL * self.capacity - _EPS and not self.flushes:
            return
        if self.needs_reposition:
            self._begin_reposition('after stop')
        else:
            self._start_moving()

    def _begin_reposition(self, why):
        self.counters['backhitches'] += 1
        self.state = REPOSITIONING
        self.reposition_end = self.t + self.profile.backhitch_s
        self._event('backhitch', why)

    def _drain(self, seconds, index, everything=False):
        amount = self.level if everything else min(self.level, self._rate(index) * seconds)
        self.level -= amount
        self.counters['tape_bytes_written'] += amount
        self.speed_time[round(self.steps[index] / MB, 3)] += seconds
        while amount > _EPS and self.objects:
            head = self.objects[0]
            if head <= amount + _EPS:
                amount -= head
                self.objects.popleft()
            else:
                self.objects[0] = head - amount
                amount = 0
        if everything or self.level <= _BYTE_EPS:
            self.level = 0.0
            self.objects.clear()

    # ------------------------------------------------------------ time
    def advance(self, now):
        """Replay the physics up to ``now``."""
        now = float(now)
        guard = 0
        while self.t < now - _EPS:
            guard += 1
            if guard > 10_000_000:
                raise RuntimeError('physics did not converge')
            if self.state == MOVING:
                v = self._rate(self.step)
                t_dry = self.t + self.level / v
                t_tick = self._next_tick(self.t)
                if t_dry <= min(now, t_tick):
                    self._drain(t_dry - self.t, self.step, everything=True)
                    self.t = max(self.t, t_dry)
                    self._ran_dry()
                    continue
                t_next = min(now, t_tick)
                self._drain(t_next - self.t, self.step)
                self.t = t_next
                if t_next >= t_tick - _EPS:
                    self._control()
            elif self.state == REPOSITIONING:
                t_next = min(now, self.reposition_end)
                self.counters['reposition_s'] += t_next - self.t
                self.t = t_next
                if self.t >= self.reposition_end - _EPS:
                    self.state = STOPPED
                    self.needs_reposition = False
                    self.reposition_end = None
                    self._try_restart()
            else:
                self.t = now
        self.t = max(self.t, now)

    def _control(self):
        fill = self.fill()
        arrival = self.arrival_rate(self.t, ADAPT_S)
        speed = self._rate(self.step)
        keeping_up = self.blocked or arrival >= speed * (1 - 1e-9)
        self.blocked = False
        if fill > HIGH_WATER and self.step > 0 and keeping_up:
            self.step = min(self._highest_step(arrival), self.step - 1)
            self._event('step_up', self.steps[self.step] / MB)
        elif fill < LOW_WATER and self.step < len(self.steps) - 1 and not keeping_up:
            self.step = max(self._highest_step(arrival), self.step + 1)
            self._event('step_down', self.steps[self.step] / MB)

    def _ran_dry(self):
        self.level = 0.0
        self.stopped_at = self.t
        if self.flushes:
            # rule 6: a flush empties the buffer; the drive stops, the next data repositions
            self._release('flush')
            self.state = STOPPED
            self.needs_reposition = True
            self._event('flushed')
        else:
            # rule 4: ran dry while streaming: one back-hitch
            self.state = STOPPED
            self._begin_reposition('ran dry')

    def next_event(self):
        """Time of the next change without host input (None: nothing will change)."""
        if self.state == MOVING:
            v = self._rate(self.step)
            return min(self.t + self.level / v, self._next_tick(self.t))
        if self.state == REPOSITIONING:
            return self.reposition_end
        return None

    # ------------------------------------------------------------ host side
    def offer(self, tape_bytes, host_bytes, now):
        """A WRITE of one block: True when accepted into the buffer, False when the host must wait."""
        self.advance(now)
        room = self.capacity - self.level
        if tape_bytes > room + _BYTE_EPS and not (self.level <= _BYTE_EPS and tape_bytes > self.capacity):
            self.blocked = True
            self._hold('room')
            return False
        self._release('room')
        self.level += tape_bytes
        self.objects.append(float(tape_bytes))
        self.arrivals.append((self.t, tape_bytes))
        self.counters['host_bytes_written'] += host_bytes
        self.counters['tape_bytes_accepted'] += tape_bytes
        self.counters['blocks_written'] += 1
        if self.new_session:
            self.reset_session(self.t)
            self.new_session = False
        s = self.session
        if s['start'] is None:
            s['start'] = self.t
        s['last'] = self.t
        s['host_bytes'] += host_bytes
        s['tape_bytes'] += tape_bytes
        self._try_restart()
        return True

    def wake_for_room(self, tape_bytes, now):
        """When a blocked WRITE of ``tape_bytes`` should be offered again."""
        self.advance(now)
        nxt = self.next_event()
        if self.state == MOVING:
            need = self.level + tape_bytes - self.capacity
            t_room = self.t + max(need, 0.0) / self._rate(self.step)
            nxt = min(nxt, t_room) if nxt is not None else t_room
        return nxt if nxt is not None else now + ADAPT_S

    def filemark(self, immediate, now):
        """Count a file mark; a synchronous one also requests a flush (see ``flush``)."""
        self.advance(now)
        self.counters['filemarks_immediate' if immediate else 'filemarks_sync'] += 1
        self.objects.append(0.0)
        if not immediate:
            self.begin_flush(now)

    def begin_flush(self, now):
        """Ask for the buffer to be written out (sync file mark, rewind, unload, space, locate)."""
        self.advance(now)
        self.flushes += 1
        self._hold('flush')
        self._try_restart()

    def flush_done(self, now):
        """True once the buffer is empty; ends the flush request (call until True)."""
        self.advance(now)
        if self.level > _BYTE_EPS:
            return False
        self.flushes = max(0, self.flushes - 1)
        self._release('flush')
        return True

    def wake_for_flush(self, now):
        self.advance(now)
        nxt = self.next_event()
        return nxt if nxt is not None else now + ADAPT_S

    def repositioned(self, now):
        """After rewind/locate/space/load: the next start is a first start (rule 5, 8).

        The write session (the data rates of the performance log page) starts
        again with the next WRITE, so a LOG SENSE after a rewind still shows
        the last run's rates.
        """
        self.advance(now)
        self.state = STOPPED
        self.needs_reposition = False
        self.reposition_end = None
        self.arrivals.clear()
        self.holds.clear()
        self.hold_open.clear()
        self.stopped_at = self.t
        self.new_session = True

    def count_read(self, host_bytes, tape_bytes):
        self.counters['host_bytes_read'] += host_bytes
        self.counters['tape_bytes_read'] += tape_bytes
        self.counters['blocks_read'] += 1

    # ------------------------------------------------------------ reporting
    def blocks_in_buffer(self):
        return len(self.objects)

    def snapshot(self, now):
        self.advance(now)
        c = self.counters
        s = self.session
        span = (s['last'] - s['start']) if s['start'] is not None and s['last'] is not None else 0.0
        return {
            't': round(self.t, 6),
            'state': self.state,
            'step_mb_s': round(self.steps[self.step] / MB, 3),
            'level_bytes': int(self.level),
            'fill': round(self.fill(), 4),
            'backhitches': int(c['backhitches']),
            'reposition_s': round(c['reposition_s'], 3),
            'host_bytes_written': int(c['host_bytes_written']),
            'tape_bytes_accepted': int(c['tape_bytes_accepted']),
            'tape_bytes_written': int(round(c['tape_bytes_written'])),
            'host_bytes_read': int(c['host_bytes_read']),
            'tape_bytes_read': int(c['tape_bytes_read']),
            'filemarks_sync': int(c['filemarks_sync']),
            'filemarks_immediate': int(c['filemarks_immediate']),
            'session_host_bytes': int(s['host_bytes']),
            'session_tape_bytes': int(s['tape_bytes']),
            'session_seconds': round(span, 6),
            'speed_time_s': {('%g' % k): round(v, 3) for k, v in sorted(self.speed_time.items())},
        }
