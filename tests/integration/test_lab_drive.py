# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's emulated drive end to end: real sources, real st, the drive's own log pages.

In the guests the drive is lab/tapedrive (LIO TCMU + tcm_loop) with the
streaming physics of lab/tapedrive/physics.py at the guest's scale
(docs/lab.md, "The spread"). What each test runs is real: a backup-like
writer (lab/tapedrive/writer.py: read the source tree's files, write each
block to /dev/nst0, a file mark per file) or the collection's
tape_write_benchmark module; what it asserts is what the drive reports
through LOG SENSE, read with sg_logs in the guest:

- lab-ma3 (LTO-8 at 0.1, floor 11.2 MB/s), source throttled to 3 MB/s by
  cgroup io.max: the drive back-hitches, and as often as the physics says
  for the arrival series the writer recorded (replayed offline);
- lab-ma1 (LTO-5 at 0.035, top 4.9 MB/s), a source in the page cache and
  immediate file marks: no back-hitch, the drive at its top step;
- lab-ma1, tape_write_benchmark: a synchronous file mark (MTWEOF) costs the
  drain of a full buffer (buffer_mb / top, the last quarter possibly at the
  floor), an immediate one (MTWEOFI) nothing.

Each test records the numbers a forecast comparison needs (the source's
per-second series, the drive's back-hitches and bytes, elapsed time) with
``lab_record`` (conftest.py): a JSON file per test under
<lab run dir>/e2e/ and a line in pytest's terminal summary.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import pytest

import observe_start

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, 'lab'))

from tapedrive import physics  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _forecast  # noqa: E402

pytestmark = pytest.mark.lab

MB = 1000 * 1000
WRITER = 'cd /run/tapelab/pylib && python3 -m tapedrive.writer'


def emulated(lab, host):
    hv = lab.hostvars.get(host)
    if hv is None:
        pytest.fail('the lab has no %s (it has %s): start the default lab (3 guests)' % (host, lab.hosts))
    if hv.get('tapeops_lab_drive_mode') != 'emulated':
        pytest.skip('%s runs tgt drives (lab/tapelab up --drive tgt): no physics to test' % host)
    return hv


def profile_of(hv):
    prof = hv['tapeops_lab_drive_profile']
    return {k: (float(v) if isinstance(v, str) and k != 'label' else v) for k, v in prof.items()}


def log_params(lab, host, page):
    """LOG SENSE ``page`` read with ``sg_logs -H`` in the guest: {parameter code: value}."""
    sg = lab.hostvars[host]['tapeops_lab_drives'][0]['sg']
    proc = lab.run(host, 'LC_ALL=C sg_logs -H -p 0x%02x %s' % (page, sg), timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = bytearray()
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) > 1 and len(parts[0]) == 2 and all(len(p) == 2 for p in parts[1:]):
            try:
                if int(parts[0], 16) == len(data):
                    data += bytes(int(p, 16) for p in parts[1:17])
            except ValueError:
                continue
    assert data and data[0] & 0x3F == page, proc.stdout
    end = 4 + int.from_bytes(data[2:4], 'big')
    out = {}
    off = 4
    while off + 4 <= end:
        code = int.from_bytes(data[off:off + 2], 'big')
        n = data[off + 3]
        out[code] = int.from_bytes(data[off + 4:off + 4 + n], 'big')
        off += 4 + n
    return out


def reset_counters(lab, host):
    """LOG SELECT with PCR (sg_logs --reset): the drive's counters start from zero."""
    sg = lab.hostvars[host]['tapeops_lab_drives'][0]['sg']
    proc = lab.run(host, 'mt -f /dev/nst0 rewind && sg_logs --reset %s' % sg, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert log_params(lab, host, 0x34)[0x8000] == 0


def drive_stats(lab, host):
    proc = lab.run(host, 'cat %s' % observe_start.DRIVE_STATS, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def write(lab, host, args, timeout=600):
    proc = lab.run(host, '%s --rewind %s' % (WRITER, args), timeout=timeout)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def replay(profile, series_bytes, block_size, filemarks='none', file_bytes=None):
    """The physics offline on the writer's per-second arrival series (blocks spread evenly in each second).

    Returns the back-hitch count the rules give for that feed (tape side =
    host side: the test files are random data, incompressible).
    """
    tr = physics.Transport(physics.Profile(profile), 0.0)
    t = 0.0
    for second, nbytes in enumerate(series_bytes):
        blocks = max(1, nbytes // block_size)
        for i in range(blocks):
            now = second + i / float(blocks)
            t = max(t, now)
            while not tr.offer(block_size, block_size, t):
                t = tr.wake_for_room(block_size, t)
    tr.begin_flush(t)
    while not tr.flush_done(t):
        t = tr.wake_for_flush(t)
    return tr.snapshot(t)['backhitches'], t


def test_throttled_source_makes_the_drive_back_hitch(lab, lab_record):
    host = 'lab-ma3'
    hv = emulated(lab, host)
    prof = profile_of(hv)
    rbps = hv['tapeops_lab_spread']['source_rbps']
    assert 0 < rbps < prof['speed_floor_mb_s'] * MB, 'lab-ma3 must read its source below its drive floor'
    reset_counters(lab, host)
    run = write(lab, host, '--drop-caches --filemarks none /srv/backup-src/large/video.bin')
    lab.run(host, 'mt -f /dev/nst0 rewind', timeout=120)       # the flush: the drive writes its buffer out
    perf = log_params(lab, host, 0x34)
    seq = log_params(lab, host, 0x0C)
    stats = drive_stats(lab, host)
    expected, _t = replay(prof, run['source_series_bytes'], run['block_size'])
    lab_record('throttled_source_backhitches', {
        'host': host, 'profile': prof, 'source_rbps': rbps, 'writer': run,
        'drive_backhitches': perf[0x8000], 'repositions_per_100mb': perf[0x0000],
        'drive_host_bytes': seq[0], 'drive_tape_bytes': seq[1], 'reposition_ms': perf[0x8002],
        'speed_time_s': stats['speed_time_s'], 'physics_replay_backhitches': expected,
    })
    # the source really was throttled, below the drive's floor
    assert run['mb_s'] < prof['speed_floor_mb_s'] / 2, run
    assert seq[0] == run['bytes'] == 64 * 1024 * 1024
    # the drive reports back-hitches in its log page, as many as the rules give for this feed
    assert perf[0x8000] >= 1, perf
    assert abs(perf[0x8000] - expected) <= 1, (perf[0x8000], expected)
    assert perf[0x8002] == perf[0x8000] * int(prof['backhitch_s'] * 1000)
    # it never left its floor step (the source is far below it)
    assert set(stats['speed_time_s']) == {'%g' % prof['speed_floor_mb_s']}, stats['speed_time_s']

    # The collection's forecast, fed the source's recorded per-second series and the drive's profile,
    # predicts what the drive reported. It replays the series in whole cycles (at least 1800 s), so
    # its count per cycle is compared: the drive's count is a handful in one pass, so the stated
    # tolerance is one back-hitch (the counting resolution), and the backup's rate within 15 % (the
    # writer's rate includes the final flush and the first fill, which the cycles average out).
    series = [b / float(MB) for b in run['source_series_bytes']]
    forecast = _forecast.forecast(prof, feed_series_mb_s=series, tape_ratio=1.0, min_samples=0, trace=False)
    per_cycle = forecast['backhitches'] / float(forecast['replays'])
    lab_record('throttled_source_forecast', {
        'forecast_class': forecast['class'], 'forecast_backhitches_per_cycle': per_cycle,
        'forecast_effective_mb_s': forecast['effective_mb_s'], 'drive_backhitches': perf[0x8000],
        'writer_mb_s': run['mb_s']})
    assert forecast['class'] == _forecast.SHOE_SHINING
    assert abs(per_cycle - perf[0x8000]) <= 1.0, (per_cycle, perf[0x8000])
    assert forecast['effective_mb_s'] == pytest.approx(run['mb_s'], rel=0.15)


def test_fast_source_with_immediate_filemarks_streams_without_back_hitch(lab, lab_record):
    host = 'lab-ma1'
    hv = emulated(lab, host)
    prof = profile_of(hv)
    assert not hv['tapeops_lab_spread']['source_rbps']
    files = '/srv/backup-src/large/video.bin /srv/backup-src/medium'
    # the source in the page cache: the guest feeds 11-15 MB/s (its one CPU compresses too),
    # above the drive's top step at this scale
    top_mb_s = prof['speed_steps_mb_s'][0]
    assert top_mb_s < 10, 'lab-ma1 must run its drive below what a guest writes (%s MB/s)' % top_mb_s
    warm = lab.run(host, 'cat /srv/backup-src/medium/* /srv/backup-src/large/video.bin >/dev/null', timeout=300)
    assert warm.returncode == 0, warm.stderr
    reset_counters(lab, host)
    run = write(lab, host, '--filemarks immediate %s' % files)
    lab.run(host, 'mt -f /dev/nst0 rewind', timeout=120)
    perf = log_params(lab, host, 0x34)
    stats = drive_stats(lab, host)
    lab_record('fast_source_immediate_marks', {
        'host': host, 'profile': prof, 'writer': run, 'drive_backhitches': perf[0x8000],
        'sync_flushes': perf[0x8001], 'speed_time_s': stats['speed_time_s'],
        'drive_host_bytes': stats['host_bytes_written'], 'drive_tape_bytes': stats['tape_bytes_written'],
    })
    # an immediate mark waits for no drain: each took a small share of what one buffer's drain at the top step takes
    # (a synchronous one waits at least that long), by the drive's own count no flush at all; not an absolute time,
    # which a loaded guest stretches (25 marks took 0.508 s in one rehearsal, 20 ms each against a 1.8 s drain)
    drain_s = prof['buffer_mb'] / top_mb_s
    assert run['marks'] == run['files'] >= 20 and run['mark_seconds'] / run['marks'] < 0.1 * drain_s, run
    assert perf[0x8001] == 0, perf
    assert perf[0x8000] == 0, (perf, run['source_series_bytes'])
    # The drive never stopped and mostly ran at its top step; where the guest's one CPU (reading,
    # compressing, writing) fell behind, it speed-matched instead of stopping (seen in CI: 68 % of
    # the time at the top, the rest at 4.5-4.9 MB/s). Either way the drive moved at the pace the
    # data came. The writer finishes when its last block is in the buffer, a buffer's worth before the
    # drive does, so its rate is the drive's time-weighted pace x written / (written - buffer) (CI: 123.7
    # MB written through a 12.8 MB buffer at 7.0 MB/s -> 7.81 predicted, 7.78 measured); within 10 %.
    speeds = dict((float(step), spent) for step, spent in stats['speed_time_s'].items())
    moving = sum(speeds.values())
    top = prof['speed_steps_mb_s'][0]
    assert max(speeds, key=speeds.get) == top, stats['speed_time_s']
    pace = sum(step * spent for step, spent in speeds.items()) / moving
    written_mb = stats['host_bytes_written'] / float(MB)
    ahead = written_mb / (written_mb - prof['buffer_mb'])
    assert pace * ahead == pytest.approx(run['mb_s'], rel=0.10), (pace, ahead, run['mb_s'])
    assert run['mb_s'] <= top * 1.6, run
    # the forecast of the recorded feed agrees: no back-hitch. (The writer read only as fast as the
    # drive took its blocks, so the recorded series is the drive's pace, at or just under its top
    # step: streaming or speed-matched at the top, never shoe-shining.)
    series = [b / float(MB) for b in run['source_series_bytes']]
    forecast = _forecast.forecast(prof, feed_series_mb_s=series, tape_ratio=1.0, min_samples=0,
                                  filemark_mode='immediate', trace=False)
    assert forecast['backhitches'] == 0 and forecast['class'] != _forecast.SHOE_SHINING, forecast


def run_module(lab, host, module, args, timeout=900):
    """Run tapeops.qualify.<module> on ``host`` with ansible; return its result dict."""
    with tempfile.TemporaryDirectory(prefix='lab-drive-') as tree:
        env = lab.env()
        env.update({'ANSIBLE_LOAD_CALLBACK_PLUGINS': '1', 'ANSIBLE_CALLBACKS_ENABLED': 'tree',
                    'ANSIBLE_CALLBACK_TREE_DIR': tree})
        ansible = os.path.join(os.path.dirname(sys.executable), 'ansible')
        cmd = [ansible, host, '-i', lab.inventory, '-m', 'tapeops.qualify.%s' % module, '-a', json.dumps(args)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT,
                              stdin=subprocess.DEVNULL, check=False)
        path = os.path.join(tree, host)
        assert os.path.exists(path), 'no result for %s (rc=%d):\n%s\n%s' % (
            host, proc.returncode, proc.stdout, proc.stderr)
        with open(path) as handle:
            result = json.load(handle)
        result['_rc'] = proc.returncode
        return result


def test_sync_filemark_costs_the_buffer_drain_immediate_costs_nothing(lab, lab_record):
    host = 'lab-ma1'
    hv = emulated(lab, host)
    prof = profile_of(hv)
    top = prof['speed_steps_mb_s'][0]
    buffer_mb = prof['buffer_mb']
    segment_mb = int(2 * buffer_mb) + 1      # the buffer is full when each mark comes
    reset_counters(lab, host)
    result = run_module(lab, host, 'tape_write_benchmark', {
        'device': '/dev/nst0', 'step_mb': 8, 'block_sizes': ['256K'], 'patterns': ['random'],
        'allowed_barcodes': hv['tapeops_allowed_barcodes'],
        'filemark_segments_mb': [segment_mb], 'filemark_payload_mb': 2 * segment_mb,
        'filemark_block_size': 262144, 'filemark_pattern': 'random', 'log_pages': False,
    })
    assert result['_rc'] == 0, result.get('msg')
    marks = {m['kind']: m for m in result['filemarks']}
    sync, immediate = marks['sync'], marks['immediate']
    floor = prof['speed_steps_mb_s'][-1]
    # a full buffer written out at the top step while it is above 25 %; a control tick that sees it
    # below 25 % with no data arriving drops to the floor for the rest: between these two
    drain = buffer_mb / top
    drain_max = 0.75 * buffer_mb / top + 0.25 * buffer_mb / floor
    perf = log_params(lab, host, 0x34)
    lab_record('filemark_cost', {
        'host': host, 'profile': prof, 'expected_drain_s': drain, 'expected_drain_max_s': drain_max,
        'filemarks': result['filemarks'],
        'drive_backhitches': perf[0x8000], 'sync_flushes': perf[0x8001],
    })
    assert sync['marks'] == immediate['marks'] == 2 and not sync['error'] and not immediate['error']
    per_sync = sync['mark_seconds'] / sync['marks']
    per_immediate = immediate['mark_seconds'] / immediate['marks']
    # MTWEOF waits for the drain of the full buffer (the host may not have quite filled it: -15 %;
    # the guest's scheduling: +10 %)
    assert drain * 0.85 <= per_sync <= drain_max * 1.10, (per_sync, drain, drain_max)
    assert per_immediate < 0.1, per_immediate
    # and each synchronous mark cost the next data a reposition: counted by the drive
    assert perf[0x8000] >= sync['marks'], perf
    assert sync['seconds_lost_per_mark'] > immediate['seconds_lost_per_mark'] + prof['backhitch_s'] * 0.5, marks
