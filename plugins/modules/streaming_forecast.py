#!/usr/bin/python
# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: streaming_forecast
short_description: Forecast whether a host feed keeps an LTO drive streaming, speed-matching or shoe-shining
version_added: 0.1.0
description:
  - Runs on the controller (action plugin) and changes nothing. Replays a host feed, constant or one
    sample per second as M(tapeops.qualify.source_read_benchmark) records it, through the drive's buffer,
    speed-matching steps, back-hitches (stop, reposition, restart) and file marks, and says what the
    drive does with it.
  - The drive comes from the collection's drive model (generation, vendor, form factor, interface);
    any model field can be overridden, for example a measured back-hitch time or buffer size.
  - The rules, the class boundaries and their sources are in docs/drive-model.md and docs/verdict.md;
    the verdict of M(tapeops.qualify.qualify_verdict) is built on the same forecast.
author:
  - tapeops.qualify contributors (@tapeops)
extends_documentation_fragment:
  - tapeops.qualify._attributes
  - tapeops.qualify._attributes.info_module
  - tapeops.qualify._attributes.action_plugin
attributes:
  idempotent:
    description: When run twice with the same parameters, the second run changes nothing.
    support: full
    details:
      - The forecast is a pure function of its inputs.
options:
  drive:
    description:
      - The drive. V(generation) is required (V(LTO-9), V(LTO-8 HH), V(7)); V(vendor) (the mechanism's
        maker, V(IBM) or V(HPE); others use IBM's published tables, marked as estimates), V(form_factor)
        (V(FH) or V(HH)) and V(interface) (V(SAS), V(FC), V(SCSI)) refine it.
      - Any drive model field overrides the model, for example V(buffer_mb), V(backhitch_s), V(sync_mark_s)
        (what a synchronous file mark costs beyond its buffer drain; 7 s estimated when not given),
        V(speed_steps_mb_s), V(speed_floor_mb_s), V(native_mb_s), V(compressed_max_mb_s).
    type: dict
    required: true
  feed_mb_s:
    description:
      - A constant host feed, MB/s (10^6 bytes per second) of uncompressed data.
      - Exactly one of O(feed_mb_s) and O(feed_series_mb_s) is given.
    type: float
  feed_series_mb_s:
    description:
      - The host feed, one sample per second (the C(aggregate.series_mb_s) of
        M(tapeops.qualify.source_read_benchmark)). A series shorter than O(min_samples) gives
        V(INCONCLUSIVE).
      - Exactly one of O(feed_mb_s) and O(feed_series_mb_s) is given.
    type: list
    elements: float
  tape_ratio:
    description: Compression the drive gets on this data (host bytes per tape byte). Default 1.0 (incompressible).
    type: float
  path_mb_s:
    description: What the host-to-drive path carries at the block size in use (the write sweep's rate), if it limits.
    type: float
  block_size_bytes:
    description: The tape block size in use. Recorded with the result; its effect comes through O(path_mb_s).
    type: int
  segment_size_mb:
    description: Data between file marks (Data Protector segment size, Bacula/Bareos Maximum File Size), MB.
    type: float
  filemark_mode:
    description: V(sync) marks empty the drive buffer and cost a reposition; V(immediate) ones cost nothing.
    type: str
    choices: [sync, immediate]
    default: immediate
  filemark_seconds:
    description: A measured reposition cost per synchronous file mark (beyond its buffer drain), replacing the drive
      model's O(drive) V(sync_mark_s) for marks.
    type: float
  data_gb:
    description: The backup's size in GB, for RV(window_hours).
    type: float
  streams:
    description: Parallel streams behind the feed. Recorded with the result.
    type: int
  min_samples:
    description:
      - Fewest per-second samples a measured series needs. The default is the verdict's minimum (docs/verdict.md,
        "Too little data"); with fewer, the 5th percentile of the series is its slowest second alone.
    type: int
    default: 10
  trace:
    description: Return RV(trace), the buffer level and speed step over time (up to 600 points).
    type: bool
    default: false
'''

EXAMPLES = r'''
- name: A constant 200 MB/s into an IBM LTO-9 full-height drive
  tapeops.qualify.streaming_forecast:
    drive:
      generation: LTO-9
      vendor: IBM
      form_factor: FH
    feed_mb_s: 200
  register: lto9

- name: The measured source series into a half-height LTO-8, 10 GB segments with synchronous file marks
  tapeops.qualify.streaming_forecast:
    drive:
      generation: LTO-8 HH
      vendor: IBM
      interface: SAS
    feed_series_mb_s: "{{ source.aggregate.series_mb_s }}"
    tape_ratio: 1.6
    segment_size_mb: 10000
    filemark_mode: sync
    data_gb: 4000
    trace: true
  register: lto8

- name: A drive whose back-hitch time was measured
  tapeops.qualify.streaming_forecast:
    drive:
      generation: 6
      vendor: HPE
      backhitch_s: 2.2
    feed_mb_s: 90
'''

RETURN = r'''
class:
  description: V(STREAMING), V(SPEED-MATCHED), V(SHOE-SHINING), or V(INCONCLUSIVE) (see RV(inconclusive_reason)).
  returned: always
  type: str
  sample: SPEED-MATCHED
inconclusive_reason:
  description: Why the feed is not enough to judge, or null.
  returned: always
  type: str
effective_mb_s:
  description: What the backup gets, MB/s of host data.
  returned: always
  type: float
  sample: 200.0
tape_mb_s:
  description: What the drive writes to tape, MB/s after compression.
  returned: always
  type: float
backhitches:
  description: Back-hitches in the simulated interval (RV(simulated_seconds)).
  returned: always
  type: int
backhitches_filemark:
  description: Of those, the repositions after synchronous file marks.
  returned: always
  type: int
backhitches_per_hour:
  description: Back-hitches an hour; 60 or more is shoe-shining (docs/verdict.md).
  returned: always
  type: float
backhitches_per_tb:
  description: Back-hitches per TB of host data.
  returned: always
  type: float
filemarks:
  description: File marks written in the simulated interval.
  returned: always
  type: int
filemark_wait_s:
  description: Seconds the host waited per file mark.
  returned: always
  type: float
time_share:
  description:
    - Share of the time at each speed step (C(steps), keyed by MB/s), at the top step, stopped,
      repositioning, and with the host blocked by a full buffer.
  returned: always
  type: dict
need_full_mb_s:
  description: Host feed for full speed at O(tape_ratio).
  returned: always
  type: float
need_floor_mb_s:
  description: Host feed at the slowest speed step.
  returned: always
  type: float
feed:
  description: The feed's mean, 5th percentile, minimum, maximum and sample count.
  returned: always
  type: dict
simulated_seconds:
  description: Seconds simulated (a short series is replayed in whole cycles, RV(replays)).
  returned: always
  type: float
replays:
  description: How many times the series was replayed.
  returned: always
  type: int
window_hours:
  description: Hours to back up O(data_gb) at RV(effective_mb_s), plus load, rewind and unload.
  returned: when O(data_gb) is given
  type: float
inputs:
  description: The inputs the forecast used.
  returned: always
  type: dict
drive:
  description: The drive numbers the simulation used and which of them are estimates.
  returned: always
  type: dict
drive_model:
  description: The whole drive model entry, with its sources and estimates.
  returned: always
  type: dict
trace:
  description: Buffer level (C(buffer_pct)), speed step (C(step_mb_s), 0 when stopped) and feed over time (C(t_s)).
  returned: when O(trace=true)
  type: list
  elements: dict
'''
