# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The emulated drive's streaming physics (lab/tapedrive/physics.py) on a fake clock.

Each scenario's expected numbers are worked out by hand from the rules in the
module docstring (buffer, steps, 0.5 s control loop, back-hitch, restart at
50 %), so a test fails when the physics stops following them.
"""

from __future__ import annotations

import math
import os
import sys
import zlib

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, 'lab'))

from tapedrive import physics  # noqa: E402  pylint: disable=wrong-import-position
from tapedrive.physics import MB, Profile, Transport  # noqa: E402  pylint: disable=wrong-import-position


def profile(**kw):
    spec = {'speed_steps_mb_s': [20.0, 10.0], 'buffer_mb': 10.0, 'backhitch_s': 1.0}
    spec.update(kw)
    return Profile(spec)


def feed(tr, rate_mb_s, seconds, block=50_000, t=0.0):
    """A host writing ``block``-byte blocks at ``rate_mb_s`` (tape side) for ``seconds``; returns the end time."""
    gap = block / (rate_mb_s * MB)
    end = t + seconds
    while t < end - 1e-12:
        while not tr.offer(block, block, t):
            t = tr.wake_for_room(block, t)
        t += gap
    return t


def flush(tr, t):
    tr.begin_flush(t)
    while not tr.flush_done(t):
        t = tr.wake_for_flush(t)
    return t


def test_feed_below_the_floor_back_hitches_each_cycle():
    # 2 MB/s into a 10 MB buffer, floor 10 MB/s, 1 s back-hitch. Fill to 5 MB (50 %) by
    # 2.5 s, start at the floor (arrival 2 MB/s is below every step), drain at 8 MB/s net:
    # dry at 3.125 s. Then every 3.125 s: reposition 1 s while the buffer refills, restart
    # at 5 MB (2.5 s after the stop), dry again 0.625 s later. Dry times 3.125 k <= 30 s: 9.
    tr = Transport(profile(), 0.0)
    t = feed(tr, 2.0, 30.0)
    snap = tr.snapshot(t)
    assert snap['backhitches'] == 9
    assert snap['reposition_s'] == pytest.approx(9.0, abs=0.01)
    assert set(snap['speed_time_s']) == {'10'}          # never above the floor
    t = flush(tr, t)
    assert tr.snapshot(t)['backhitches'] == 9           # a flush that empties the buffer is no back-hitch
    assert tr.counters['tape_bytes_written'] == pytest.approx(60 * MB, rel=1e-6)


def test_feed_between_floor_and_top_is_speed_matched():
    # 15 MB/s with steps 20/15/10: the 5 MB restart level is reached in 0.33 s, the arrival
    # since the load is 15 MB/s: the drive starts at 15 and the buffer stays where it is.
    # It never runs dry: no back-hitch, and the time-weighted speed is the feed.
    tr = Transport(profile(speed_steps_mb_s=[20.0, 15.0, 10.0]), 0.0)
    t = feed(tr, 15.0, 60.0)
    snap = tr.snapshot(t)
    assert snap['backhitches'] == 0
    moving = sum(snap['speed_time_s'].values())
    mean = sum(float(k) * v for k, v in snap['speed_time_s'].items()) / moving
    assert mean == pytest.approx(15.0, rel=0.03)
    assert moving == pytest.approx(t - 1 / 3.0, abs=0.1)   # moving from the first start to the end


def test_fast_host_streams_at_top_and_is_blocked_by_a_full_buffer():
    tr = Transport(profile(), 0.0)
    t = feed(tr, 50.0, 10.0)            # offered 500 MB at 50 MB/s; the drive takes 20 MB/s
    written = tr.counters['host_bytes_written']
    assert tr.snapshot(t)['backhitches'] == 0
    # elapsed = (bytes - one buffer) / top speed + the first fill, so the effective rate is ~20
    assert written / t / MB == pytest.approx(20.0, rel=0.05)
    assert tr.fill() > 0.75


def test_full_buffer_blocks_until_the_drain_makes_room():
    tr = Transport(profile(), 0.0)
    assert tr.offer(10 * MB, 10 * MB, 0.0)              # exactly full; starts moving (>= 50 %)
    assert not tr.offer(MB, MB, 0.0)                    # no room: the WRITE waits
    # 10 MB arrived at once (counted over the 0.1 s minimum window: 100 MB/s): the drive starts
    # at its top step, 20 MB/s; 1 MB of room takes 0.05 s
    wake = tr.wake_for_room(MB, 0.0)
    assert wake == pytest.approx(0.05)
    assert not tr.offer(MB, MB, 0.02)
    assert tr.offer(MB, MB, wake)


def test_control_loop_moves_to_the_arrival_rate_at_least_one_step():
    steps = [30.0, 20.0, 10.0]
    # start: 50 MB over 4.9 s, 10 MB/s over the last second -> the 10 MB/s step
    tr = Transport(profile(speed_steps_mb_s=steps, buffer_mb=100.0), 0.0)
    for i in range(50):
        tr.offer(MB, MB, i * 0.1)
    assert tr.state == physics.MOVING and tr.step == 2
    tr.offer(40 * MB, 40 * MB, 4.95)    # a burst: 89 %, 88 MB/s over the last 0.5 s
    tr.advance(4.99)
    assert tr.step == 2                 # no tick yet (every 0.5 s from the load)
    tr.advance(5.0)                     # > 75 % and the host keeps up: to the highest step <= 88 MB/s
    assert tr.step == 0
    # a host blocked by a full buffer keeps up by definition, and its rate is taken over the time it
    # was not waiting on the drive (1 MB every 10 ms when not held: 100 MB/s): up to the top at once
    tr2 = Transport(profile(speed_steps_mb_s=steps, buffer_mb=10.0), 0.0)
    t = 0.0
    for _i in range(6):                 # 6 MB at 12 MB/s: restart at 50 % on the 10 MB/s step
        tr2.offer(MB, MB, t)
        t += 1 / 12.0
    assert tr2.steps[tr2.step] == 10 * MB
    while t < 0.99:                     # then a fast host: the buffer fills, WRITEs wait
        while not tr2.offer(MB, MB, t):
            t = tr2.wake_for_room(MB, t)
        t += 0.01
    assert tr2.steps[tr2.step] == 30 * MB   # the tick at 0.5 s
    assert 0.0 < tr2.held_seconds(0.99, 0.5) < 0.5
    # falling behind below 25 %: straight down to the step the arrival rate allows (here the floor)
    tr3 = Transport(profile(speed_steps_mb_s=steps, buffer_mb=100.0), 0.0)
    tr3.offer(60 * MB, 60 * MB, 0.0)    # 60 %, all at once: starts at the top (30)
    tr3.advance(1.49)                   # ticks at 0.5 and 1.0: 45 %, then 30 %: no change
    assert tr3.step == 0
    tr3.advance(1.5)                    # 15 %, nothing arriving: to the floor
    assert tr3.step == 2


def test_sync_filemark_waits_for_the_drain_then_costs_a_reposition():
    tr = Transport(profile(), 0.0)
    t = feed(tr, 40.0, 0.5)             # 20 MB offered: the buffer fills, the drive streams at 20
    tr.advance(t)
    level = tr.level
    assert level > 5 * MB
    tr.filemark(False, t)
    t_done = t
    while not tr.flush_done(t_done):
        t_done = tr.wake_for_flush(t_done)
    # drained at the current step (20 MB/s; the buffer stays above 25 % until near the end,
    # then one step down to 10 MB/s): between level/20 and level/10 seconds
    assert level / (20 * MB) - 1e-6 <= t_done - t <= level / (10 * MB) + 0.5
    assert tr.snapshot(t_done)['backhitches'] == 0      # not yet: the drive stopped
    t2 = feed(tr, 40.0, 0.2, t=t_done)                 # the next data: reposition first (counted)
    assert tr.snapshot(t2)['backhitches'] == 1
    assert tr.state == physics.REPOSITIONING


def test_immediate_filemark_costs_nothing():
    tr = Transport(profile(), 0.0)
    t = feed(tr, 40.0, 0.5)
    tr.advance(t)
    state, level = tr.state, tr.level
    tr.filemark(True, t)
    assert (tr.state, tr.level, tr.flushes) == (state, level, 0)
    t2 = feed(tr, 40.0, 0.5, t=t)
    assert tr.snapshot(t2)['backhitches'] == 0


def test_first_start_after_load_or_rewind_is_no_back_hitch():
    tr = Transport(profile(), 0.0)
    t = feed(tr, 2.0, 3.0)              # dry once at 3.125? not yet (3.0 s)
    t = flush(tr, t)
    tr.repositioned(t)
    t = feed(tr, 40.0, 0.3, t=t)
    assert tr.snapshot(t)['backhitches'] == 0
    assert tr.state == physics.MOVING


def test_restart_step_follows_the_arrival_rate_of_the_last_second():
    steps = [40.0, 30.0, 20.0, 10.0]
    tr = Transport(profile(speed_steps_mb_s=steps, buffer_mb=100.0), 0.0)
    t = feed(tr, 25.0, 2.5)             # 62.5 MB: start when 50 MB are in (2.0 s), arrival 25 MB/s
    assert tr.state == physics.MOVING
    assert tr.steps[tr.step] == 20 * MB  # highest step <= 25


def test_block_compression_zeros_shrink_random_does_not():
    zeros = bytes(262144)
    random_block = os.urandom(262144)
    tape_z, packed_z = physics.compress_block(zeros)
    tape_r, packed_r = physics.compress_block(random_block)
    assert tape_z < 2000 and packed_z is not None
    assert physics.decompress_block(packed_z) == zeros
    assert tape_r == len(random_block) and packed_r is None
    text = b'INSERT INTO t VALUES (1, 2, 3);\n' * 8192
    tape_t, packed_t = physics.compress_block(text)
    # the same size as zlib level 1 on the block alone (minus zlib's 6-byte header and trailer)
    assert abs(tape_t - (len(zlib.compress(text, 1)) - 6)) <= 8
    assert physics.decompress_block(packed_t) == text


def test_incompressible_blocks_pass_through_on_the_probe_alone():
    """LTO's SLDC pass-through: a large block whose probe samples do not shrink is stored raw.

    The decision rests on the samples only (start, middle, end): a block random
    there and zeros elsewhere passes through, one whose samples compress is
    compressed whole; a block smaller than the probe's minimum is compressed.
    """
    comp = physics.BlockCompressor()
    size, probe = 262144, comp.PROBE_BYTES
    last = size - probe
    starts = [last * i // (comp.PROBE_SAMPLES - 1) for i in range(comp.PROBE_SAMPLES)]
    block = bytearray(size)
    for at in starts:
        block[at:at + probe] = os.urandom(probe)
    assert comp(bytes(block)) == (size, None)
    # one compressible sample among random ones still makes the drive compress the whole block
    mixed = bytearray(os.urandom(size))
    mixed[starts[1]:] = bytes(size - starts[1])
    tape, packed = comp(bytes(mixed))
    assert packed is not None and tape < 0.7 * size
    assert physics.decompress_block(packed) == bytes(mixed)
    small = os.urandom(comp.PROBE_MIN - 1)
    assert comp(small) == (len(small), None)
    assert comp(bytes(comp.PROBE_MIN - 1))[1] is not None


class CountingCompressor(physics.BlockCompressor):
    """A BlockCompressor that keeps the length of every piece it deflated."""

    def __init__(self):
        super().__init__()
        self.packed = []

    def _pack(self, data):
        self.packed.append(len(data))
        return super()._pack(data)


@pytest.mark.parametrize('size', [64512, 32768, 8192])
def test_blocks_under_64_kib_go_through_the_same_probe(size):
    """Bacula's default 64512-byte blocks, and smaller ones, are probed too (issue 22 item 6).

    Random data passes through on three samples of an eighth of the block
    (a 64512-byte random block costs 3 x 8064 bytes of deflate, not 64512);
    text-like data is compressed whole, to the same bytes as before.
    """
    comp = CountingCompressor()
    sample = comp.probe_bytes(size)
    assert sample == min(comp.PROBE_BYTES, size // 8)
    noise = os.urandom(size)
    assert comp(noise) == (size, None)
    assert comp.packed == [sample] * comp.PROBE_SAMPLES
    assert sum(comp.packed) <= 3 * size // 8
    comp.packed = []
    text = (b'tapeops lab source tree line %d\n' * 4096)[:size]
    tape, packed = comp(text)
    assert packed is not None and tape < size // 4
    assert physics.decompress_block(packed) == text
    assert comp.packed == [sample] * comp.PROBE_SAMPLES + [size]


def test_profile_defaults_when_the_model_lacks_fields():
    prof = Profile({'native_mb_s': 35.0, 'buffer_mb': 64.0})
    assert prof.steps_mb_s == [35.0]
    assert 'backhitch_s' in prof.missing and 'speed_steps_mb_s' in prof.missing
    assert prof.backhitch_s == physics.DEFAULTS['backhitch_s']
    prof2 = Profile({'native_mb_s': 35.0, 'speed_floor_mb_s': 17.5})
    assert prof2.steps_mb_s == [35.0, 17.5]
    assert Profile({'density_code': '0x5a'}).density_code == 0x5A
    with pytest.raises(ValueError, match='buffer_mb'):
        Profile({'buffer_mb': 0})


def test_arrival_rate_leaves_out_the_time_the_host_waited():
    """Rules 3 and 4: a WRITE waiting for room, or a flush, is not the host being slow."""
    tr = Transport(profile(speed_steps_mb_s=[30.0, 20.0, 10.0], buffer_mb=10.0), 0.0)
    assert tr.offer(10 * MB, 10 * MB, 0.0)          # full; the drive starts (a flush-free 100 %)
    assert not tr.offer(MB, MB, 0.0)                # waits for room from t = 0
    tr.advance(0.4)
    assert tr.held_seconds(0.4, 0.5) == pytest.approx(0.4)
    # 10 MB in the 0.1 s the host was not held: 100 MB/s, not the 20 MB/s of the whole 0.5 s
    assert tr.arrival_rate(0.4, 0.5) == pytest.approx(100 * MB)
    # held back the whole window: no rate of its own, faster than any step
    assert tr.arrival_rate(0.4, 0.3) == math.inf
    tr.begin_flush(0.4)
    assert set(tr.hold_open) == {'room', 'flush'}
    assert tr.held_seconds(0.45, 0.5) == pytest.approx(0.45)   # overlapping waits counted once
