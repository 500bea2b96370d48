#!/usr/bin/python
# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: source_read_benchmark
short_description: Measure how fast backup sources can be read file by file, as a backup agent reads them
version_added: 0.1.0
description:
  - Reads the backup sources the way backup software does (Data Protector Disk Agents, Bacula/Bareos file
    daemons) - file by file, in directory order, one file open at a time, single-threaded per stream - and
    reports per stream and in aggregate the mean rate, the sustained floor (5th percentile and minimum of the
    per-second series), files per second, bytes, duration and the per-second series itself.
  - One stream per entry of O(paths), all streams in parallel (one agent per volume, interleaved by the
    backup software onto a drive).
  - fio does the reading (C(fio --readonly), C(ioengine=psync), C(file_service_type=sequential),
    C(openfiles=1)), with JSON output and 1-second bandwidth logs. Every byte of every file is read
    (fio alone would skip each file's tail below one block).
  - Without O(paths), a synthetic data set (a size mix of web files, office documents, images and large files)
    is laid out in a private scratch directory inside O(synthetic_dir), read back cold and removed.
  - FIFOs, sockets and device nodes inside a tree are passed over by type and never opened; symlinks are not
    followed unless O(follow_symlinks) (then loops are detected); unreadable files and directories are
    passed over. Everything passed over is listed in RV(passed_over) and counted in RV(passed_over_counts).
  - A compressibility estimate of a bounded sample of the data (read-only, access times kept) is returned for
    the drive model.
  - B(Long enough to trust.) A tree read before the time budget ends is read again (each file's cached pages evicted
    again before it is read) until the budget, or until the byte budget is reached; the result says how many passes
    and seconds it rests on, and marks it RV(inconclusive) below O(min_samples) one-second samples.
  - B(Measured scaling.) The aggregate is measured at 1, 2, 4, ... streams up to the main stream count (or at
    O(scaling_streams)), each step with the full budget, and returned as RV(scaling). Streams are split over the
    sources as backup software splits its concurrency - each stream reads whole sources, one file at a time;
    only when there are more streams than sources is a source cut into contiguous parts (by directory where
    possible). No file is read by two streams.
  - B(All drives at once.) With O(drives), one read runs all drives' streams together (O(drives) times
    O(streams_per_drive)), the host's load during a backup window, and RV(per_drive) apportions it per drive.
  - B(Competing ingest.) With O(ingest), the read at the main stream count is repeated while fio writes, at a rate
    or flat out, into a private scratch directory inside O(ingest.path) (never a source - refused when it is,
    contains or lies inside one), bounded to O(ingest.size) and removed afterwards; RV(ingest) shows the source
    rate with and without it.
  - B(What the tree looks like.) RV(file_sizes) is a histogram of the sizes of the files in the tree (every file
    the walk listed, read or not) and the most files per second reached. Directories are read in a spread order,
    so that a read bounded in time reaches a cross-section of the tree.
author:
  - tapeops.qualify contributors (@tapeops)
extends_documentation_fragment:
  - tapeops.qualify._attributes
  - tapeops.qualify._attributes.benchmark
attributes:
  idempotent:
    details:
      - A measurement. Sources are only read (fio C(--readonly)); a synthetic data set and the competing ingest's
        files are removed after the run, so the module always reports C(changed=false).
requirements:
  - fio (3.x) on the managed host.
notes:
  - Rates are decimal MB/s (10^6 bytes per second), as tape drive vendors quote them.
  - Run with C(become=true) so that every file is readable, as the backup agent (root) reads it.
  - The run takes about O(time_budget) times the number of stream counts measured (plus one with O(ingest)).
  - See docs/source-read.md in the collection for how to read the numbers.
options:
  paths:
    description:
      - Backup source directories (or single files), absolute. One read stream per path.
      - Mutually exclusive with O(synthetic_dir).
    type: list
    elements: path
  synthetic_dir:
    description:
      - Existing directory on the source filesystem in which a private scratch directory is created for a
        synthetic data set, used when there is no real tree to read. Free space is checked first
        (O(synthetic_size) times O(synthetic_streams), plus 1 GiB or 5 % of the filesystem).
    type: path
  synthetic_size:
    description: Size of the synthetic data set per stream (K/M/G/T are powers of 1024).
    type: str
    default: 1G
  synthetic_mix:
    description:
      - Size mix of the synthetic files. C(mixed) is 5 % web files (2-60 KB), 25 % office documents
        (20 KB-3 MB), 30 % images (0.2-8 MB), 40 % large files (64-512 MB) by bytes.
    type: str
    choices: [mixed, office, web, images, large]
    default: mixed
  synthetic_streams:
    description: Number of synthetic streams (one subtree each).
    type: int
    default: 1
  synthetic_compressible_fraction:
    description: Share of each synthetic file that is zeros (the rest random), setting its compressibility.
    type: float
    default: 0.5
  time_budget:
    description:
      - Seconds each step reads (fio C(runtime)); a tree read sooner is read again until then. C(0) means no time
        limit (each tree is read once, unless O(byte_budget) asks for more).
    type: int
    default: 60
  byte_budget:
    description:
      - Bytes each stream may read at most (fio C(io_size)), e.g. C(20G); a smaller tree is read again until then.
        Unset means no byte limit.
    type: str
  block_size:
    description:
      - Size of each read call. Disk I/O size is set by kernel readahead in the default O(cache=evict) mode,
        so this mostly sets the CPU cost; with O(cache=direct) it is the disk I/O size.
    type: str
    default: 64k
  cache:
    description:
      - How the page cache is kept out of the number.
      - C(evict) (default) evicts each file's cached pages just before it is read (fio C(invalidate=1),
        C(posix_fadvise(DONTNEED))) and reads buffered with readahead, as backup agents do. Needs no privilege
        and leaves the rest of the host's cache alone.
      - C(drop) syncs and drops the whole host's page cache first (needs root; hurts other workloads).
      - C(direct) reads with O_DIRECT (no cache, no readahead), a pessimistic bound.
      - C(keep) leaves the cache alone; RV(cache.note) says when the data set fits in RAM.
    type: str
    choices: [evict, drop, direct, keep]
    default: evict
  follow_symlinks:
    description: Follow symbolic links inside the trees (loops are detected and skipped).
    type: bool
    default: false
  one_file_system:
    description: Do not descend into other filesystems mounted below a source path.
    type: bool
    default: true
  max_files:
    description:
      - Most files read per stream; the rest are counted in RV(passed_over_counts). fio's memory pool is sized for
        the list (C(--alloc-size)).
    type: int
    default: 1000000
  compressibility_sample:
    description:
      - Bytes sampled for the compressibility estimate; C(0) disables it.
      - Taken as 128 KiB windows at evenly spaced points of the stream the walked files make, so each part of
        the tree weighs the bytes it sends to the drive.
    type: str
    default: 8M
  fio_path:
    description: Path of the fio binary; default is fio from E(PATH).
    type: path
  streams:
    description:
      - Streams of the main measurement (the backup's concurrency). Default is one per source path (or per
        synthetic stream). Mutually exclusive with O(drives).
    type: int
  drives:
    description:
      - Tape drives the host feeds at once. One read runs O(drives) times O(streams_per_drive) streams together
        and RV(per_drive) apportions the result per drive.
    type: int
  streams_per_drive:
    description:
      - Streams each drive gets (Data Protector device concurrency, Bacula/Bareos concurrent jobs per device).
        Default is the number of source paths divided by O(drives), rounded up. Needs O(drives).
    type: int
  scaling:
    description:
      - Measure the aggregate at 1, 2, 4, ... streams up to the main stream count (or O(scaling_max_streams)),
        each step with the full O(time_budget). V(false) measures the main stream count only.
    type: bool
    default: true
  scaling_streams:
    description: Stream counts to measure instead of the powers of two; the main stream count is always measured.
    type: list
    elements: int
  scaling_max_streams:
    description:
      - Measure the powers of two up to this many streams, also beyond the main stream count (to see whether
        more streams would help). Default is the main stream count.
    type: int
  min_samples:
    description:
      - One-second samples of the aggregate below which the result is marked RV(inconclusive). The default of 10
        is an estimate with a rule; with fewer, the 5th percentile is in effect the slowest second.
      - The default is also the verdict's own minimum (C(qualify_verdict) judges no read of fewer samples, nor one
        of less data than the drive's buffer or 64 MB, see docs/verdict.md); a lower value here does not lower
        it.
    type: int
    default: 10
  ingest:
    description:
      - Competing ingest - a fio write job beside the source read, as on media agents that stage new data to disk
        while they feed tape. The read at the main stream count is run again with it, and RV(ingest) reports
        both.
    type: dict
    suboptions:
      path:
        description:
          - Existing directory on the disk that takes the ingest. A private C(.tapeops-ingest-*) directory is
            created inside it and removed afterwards, also on failure.
          - Refused when it is a source, contains one or lies inside one (by resolved path and by device and inode,
            so bind mounts and symlinks count), or lacks O(ingest.size) plus 5 % of its filesystem (at least 64 MiB)
            free.
        type: path
        required: true
      rate_mb_s:
        description: Write rate in MB/s (10^6 bytes per second). Unset writes flat out.
        type: float
      size:
        description: Bytes of files the ingest writes and rewrites (its bound on disk), K/M/G as powers of 1024.
        type: str
        default: 1G
      block_size:
        description: Size of each write (a multiple of 4 KiB).
        type: str
        default: 1M
      direct:
        description:
          - O_DIRECT writes, so the disk sees every byte at the rate written. V(false) writes through the page
            cache with an C(fdatasync) every 32 blocks (for filesystems that refuse O_DIRECT).
        type: bool
        default: true
'''

EXAMPLES = r'''
- name: How fast do the two data volumes feed a backup? (two streams, 2 minutes each)
  tapeops.qualify.source_read_benchmark:
    paths:
      - /srv/data1
      - /srv/data2
    time_budget: 120
  become: true
  register: source_read

- name: No real tree at hand - lay out 4 GiB of mixed files per stream, read them cold, remove them
  tapeops.qualify.source_read_benchmark:
    synthetic_dir: /srv/backup-src
    synthetic_size: 4G
    synthetic_streams: 2
  become: true

- name: Feed the verdict
  tapeops.qualify.qualify_verdict:
    source: "{{ source_read }}"

- name: Both drives of the host at once, 3 streams each, with the curve up to 8 streams (40 s per step)
  tapeops.qualify.source_read_benchmark:
    paths: [/srv/data1, /srv/data2, /srv/data3]
    drives: 2
    streams_per_drive: 3
    scaling_max_streams: 8
    time_budget: 40
  become: true
  register: source_read

- name: Does the staging ingest (80 MB/s into /srv/spool) slow the sources down?
  tapeops.qualify.source_read_benchmark:
    paths: [/srv/data1]
    time_budget: 30
    ingest:
      path: /srv/spool
      rate_mb_s: 80
      size: 4G
  become: true

- name: What would be read, with which streams and ingest (nothing is read or written)
  tapeops.qualify.source_read_benchmark:
    paths: [/srv/data1, /srv/data2]
    ingest:
      path: /srv/spool
  check_mode: true
'''

RETURN = r'''
streams:
  description: One entry per stream (per source path).
  returned: success, not in check mode
  type: list
  elements: dict
  contains:
    path:
      description: Source path read.
      type: str
    bytes:
      description: Bytes read.
      type: int
    files:
      description: Files read in full.
      type: int
    duration_s:
      description: Seconds the stream read.
      type: float
    mean_mb_s:
      description: Mean rate in MB/s (10^6 bytes per second).
      type: float
    p5_mb_s:
      description: 5th percentile of the 1-second series (the last, partial, second left out).
      type: float
    min_mb_s:
      description: Lowest 1-second rate (the last, partial, second left out).
      type: float
    files_per_s:
      description: Files read per second.
      type: float
    series_mb_s:
      description: Rate of each 1-second window in MB/s.
      type: list
      elements: float
    complete:
      description: Whether every file of the tree was read (no budget reached).
      type: bool
    tree_files:
      description: Files with data found in the tree.
      type: int
    tree_bytes:
      description: Bytes found in the tree.
      type: int
    empty_files:
      description: Zero-byte files found (nothing to read).
      type: int
    scan_s:
      description:
        - Seconds the module took to walk the tree (directory reads and C(lstat) of every entry) before fio
          started. fio's timing covers opening and reading the files, not this scan, which a backup also
          pays; on a tree of many small files with a cold inode cache, compare it with RV(streams[].duration_s).
      type: float
    filesystem:
      description: "Mount of the path: C(mount_point), C(fstype), C(source), C(device), C(network), C(memory)."
      type: dict
    cpu_pct:
      description: CPU use of fio for the stream (user plus system, in percent of one core).
      type: float
    passes:
      description: Times the stream read its files, fractional (2.4 is two whole passes and 40 % of a third).
      type: float
    samples:
      description: One-second samples of the stream's floor.
      type: int
    paths:
      description: Sources the stream read, one after another.
      type: list
      elements: str
    parts:
      description:
        - Sources the stream read only a part of (C(path), C(part) as [number, of], C(files)), when there were more
          streams than sources; empty otherwise.
      type: list
      elements: dict
  sample:
    - path: /srv/data1
      bytes: 3000000000
      files: 1523
      duration_s: 40.1
      mean_mb_s: 74.8
      p5_mb_s: 61.2
      min_mb_s: 58.9
      files_per_s: 38.0
      series_mb_s: [80.1, 75.3, 61.9]
aggregate:
  description: All streams together; the series is the per-second sum.
  returned: success, not in check mode
  type: dict
  contains:
    mean_mb_s:
      description: Total bytes over the duration of the longest stream, in MB/s.
      type: float
    p5_mb_s:
      description: 5th percentile of the summed series.
      type: float
    min_mb_s:
      description: Lowest second of the summed series.
      type: float
    bytes:
      description: Bytes read by all streams.
      type: int
    files:
      description: Files read by all streams.
      type: int
    duration_s:
      description: Duration of the longest stream.
      type: float
    files_per_s:
      description: Files per second of all streams together.
      type: float
    series_mb_s:
      description: Summed 1-second series.
      type: list
      elements: float
    streams:
      description: Number of streams.
      type: int
    passes:
      description: The fewest passes any stream made over its files.
      type: float
    samples:
      description: One-second samples of the summed series used for the floor (the last, partial, one left out).
      type: int
passes:
  description: Passes the main measurement rests on (the fewest of its streams); below 1 when a budget cut it short.
  returned: success, not in check mode
  type: float
  sample: 5.7
seconds:
  description: Seconds the main measurement read.
  returned: success, not in check mode
  type: float
  sample: 60.02
samples:
  description: One-second samples of the main measurement's aggregate series (the floor rests on them).
  returned: success, not in check mode
  type: int
  sample: 59
min_samples:
  description: The O(min_samples) applied.
  returned: success, not in check mode
  type: int
inconclusive:
  description:
    - Null when the main measurement rests on at least O(min_samples) one-second samples; otherwise a dict with
      C(reason), a sentence saying why and which budget to raise. The verdict shows it instead of a class.
  returned: success
  type: dict
  sample: {reason: "Only 3 one-second samples (at least 10 needed): the time budget of 4 s is too short; give at least 11 s."}
contention:
  description:
    - Whether others read the sources' block devices during the main measurement (docs/verdict.md,
      "Contention"). C(device_read_bytes) is what the devices (C(devices), major:minor) read in that time,
      C(ours_read_bytes) what this read returned, C(others_read_bytes) the difference. C(contended) is true
      when others read more than 16 MiB and more than a tenth of ours (our own read may come partly from the
      page cache, so this is a lower bound). The verdict is then marked contended.
    - Null when no source lies on a block device (tmpfs, NFS).
  returned: success
  type: dict
  sample: {contended: true, devices: ["98:0"], device_read_bytes: 2147483648, ours_read_bytes: 1073741824,
           others_read_bytes: 1073741824}
scaling:
  description:
    - The aggregate at each stream count measured, ascending. Each step read for the full budget (rule of
      O(time_budget)); a step that could not be measured carries C(error) instead of figures.
  returned: success, not in check mode
  type: list
  elements: dict
  contains:
    streams:
      description: Streams read in parallel.
      type: int
    mean_mb_s:
      description: Aggregate mean in MB/s.
      type: float
    p5_mb_s:
      description: 5th percentile of the summed 1-second series.
      type: float
    min_mb_s:
      description: Slowest second of the summed series.
      type: float
    series_mb_s:
      description: Summed 1-second series.
      type: list
      elements: float
    seconds:
      description: Seconds the step read.
      type: float
    passes:
      description: Fewest passes of any stream.
      type: float
    samples:
      description: One-second samples of the step.
      type: int
    inconclusive:
      description: Null, or C(reason) when the step has fewer than O(min_samples) samples.
      type: dict
    files_per_s:
      description: Files read per second, all streams.
      type: float
    bytes:
      description: Bytes read.
      type: int
    files:
      description: Files read in full.
      type: int
    split:
      description: Whether a source was cut into parts to give every stream its own files.
      type: bool
  sample:
    - {streams: 1, mean_mb_s: 60.2, p5_mb_s: 55.0, seconds: 60.0, passes: 0.4, samples: 59, split: false}
    - {streams: 2, mean_mb_s: 78.1, p5_mb_s: 70.3, seconds: 60.0, passes: 0.3, samples: 59, split: false}
per_drive:
  description:
    - With O(drives), the all-drives-at-once read apportioned per drive; null otherwise.
    - C(drives), C(streams_per_drive); C(aggregate) (C(mean_mb_s), C(p5_mb_s), C(min_mb_s), C(files_per_s), C(bytes),
      C(duration_s), C(streams)) and C(series_mb_s) are the host's divided by the number of drives (the backup
      software spreads streams evenly); C(groups) are the streams given to each drive, measured (C(drive), C(streams),
      C(paths), C(mean_mb_s), C(p5_mb_s), C(min_mb_s), C(series_mb_s)); C(basis) says so in words.
  returned: success, not in check mode
  type: dict
  sample:
    drives: 2
    streams_per_drive: 2
    aggregate: {mean_mb_s: 47.0, p5_mb_s: 41.5, min_mb_s: 40.2, streams: 2}
    series_mb_s: [47.1, 46.8]
ingest:
  description:
    - With O(ingest), the source read at the main stream count without and with the competing write job; null
      otherwise.
    - C(without) and C(with) hold C(mean_mb_s), C(p5_mb_s), C(min_mb_s), C(files_per_s), C(bytes), C(files),
      C(series_mb_s), C(seconds), C(passes), C(samples), C(inconclusive); C(rate_mb_s) is the rate the ingest
      wrote, C(target) the O(ingest.rate_mb_s) asked for (null is flat out, C(target_text) says it in words),
      C(change_pct) the change of the source mean, C(bytes_written), C(series_mb_s) (the ingest's), C(removed)
      (its scratch directory is gone), C(error) (why a side was not measured, else null).
  returned: success, not in check mode
  type: dict
  sample:
    target: 5.0
    rate_mb_s: 5.0
    with: {mean_mb_s: 15.0, p5_mb_s: 14.8}
    without: {mean_mb_s: 20.0, p5_mb_s: 19.7}
    change_pct: -24.9
    removed: true
file_sizes:
  description:
    - What the tree looks like - sizes of the files the walk listed (each once, read or not).
    - C(histogram) holds, for each bound (64 KiB, 1 MiB, 16 MiB, 256 MiB, 4 GiB), C(below_bytes) and the share of the
      files (C(files_share)) and of the bytes (C(bytes_share)) in files smaller than it (cumulative).
    - C(files_per_s_ceiling) is the most files per second any step reached; C(small_file_bound) is true when at least
      half the files are under 64 KiB (an estimate, rule in C(small_file_rule)); C(text) says it in a sentence;
      C(files), C(bytes), C(mean_file_bytes).
  returned: success, not in check mode
  type: dict
  sample:
    histogram: [{below_bytes: 65536, files_share: 0.62, bytes_share: 0.03}]
    files_per_s_ceiling: 830.0
    small_file_bound: true
    text: >-
      62 % of the files are under 64 KiB (3 % of the bytes); mean file size 210 KiB. At most 830 files/s were read.
      This source is file-count bound: the time per file, not the disk's bandwidth, sets its rate.
compressibility:
  description:
    - Compression estimate of a sample of the data (zlib level 1, from the drive model), plus C(files_sampled).
    - C(profile) is the ratio along the stream the walked files make (C(stream_bytes)), window by window
      (C(window_bytes) each, evenly spaced over the stream, in the order a backup reads the files; null for a
      window nothing could be read in). The forecast replays each stretch at its own ratio, so a stretch of highly
      compressible data that asks more of the sources while it passes is seen.
    - Null when O(compressibility_sample=0).
  returned: success, not in check mode
  type: dict
  sample:
    ratio: 1.21
    sample_bytes: 8388608
    compressed_bytes: 6932734
    compressor: zlib-1
    files_sampled: 62
    profile: {stream_bytes: 230450176, window_bytes: 131072, ratios: [1.0, 1.0, 122.155, 121.251, 1.0, 3.855]}
cache:
  description: How the page cache was kept out of the number.
  returned: success, not in check mode
  type: dict
  contains:
    method:
      description: The O(cache) mode used.
      type: str
    dropped:
      description: The host's page cache was dropped before the run.
      type: bool
    bypassed:
      description: Cached pages of the files were evicted or bypassed (O_DIRECT).
      type: bool
    data_bytes:
      description: Bytes read.
      type: int
    ram_bytes:
      description: The host's RAM in bytes.
      type: int
    data_vs_ram:
      description: RV(cache.data_bytes) divided by RV(cache.ram_bytes).
      type: float
    note:
      description: One sentence on the cache state, including when it could not be bypassed.
      type: str
passed_over:
  description:
    - Entries of the trees not read (at most 100 per stream listed) - C(path), C(kind) (as in
      RV(passed_over_counts)) and C(reason), a sentence.
    - Not named C(skipped), which Ansible reads as "the task was skipped".
  returned: always
  type: list
  elements: dict
  sample: [{path: /srv/data1/run/pipe, kind: fifo, reason: "FIFO (named pipe): never opened, a read would block"}]
passed_over_counts:
  description:
    - Number of entries passed over per kind (fifo, socket, char_device, block_device, symlink, broken_symlink,
      symlink_loop, permission_denied, unreadable, other_filesystem, vanished, hardlink, max_files, ...).
  returned: always
  type: dict
  sample: {fifo: 1, symlink: 2}
warnings_list:
  description:
    - Warnings about the measurement (network filesystem, memory filesystem, empty streams, no budget), also
      emitted as Ansible warnings.
  returned: always
  type: list
  elements: str
synthetic:
  description: The synthetic data set (C(directory), C(path), C(bytes), C(files), C(mix), C(removed)), or null.
  returned: success
  type: dict
plan:
  description:
    - In check mode, what would be read and written - C(streams) (per source, files and bytes), C(steps) (each stream
      count with the sources every stream would read), C(concurrency), C(drives), C(streams_per_drive), C(ingest)
      (the directory, size and rate, after the checks), C(estimated_seconds), cache mode and budgets. Nothing is
      read or written.
  returned: check mode
  type: dict
fio_version:
  description: The version string of fio.
  returned: success, not in check mode
  type: str
fio_cmd:
  description: The fio command line that ran.
  returned: success, not in check mode
  type: list
  elements: str
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.tapeops.qualify.plugins.module_utils import _records
from ansible_collections.tapeops.qualify.plugins.module_utils._measure._source_read import (
    SourceReadBenchmark,
    SourceReadError,
)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            paths=dict(type='list', elements='path'),
            synthetic_dir=dict(type='path'),
            synthetic_size=dict(type='str', default='1G'),
            synthetic_mix=dict(type='str', default='mixed', choices=['mixed', 'office', 'web', 'images', 'large']),
            synthetic_streams=dict(type='int', default=1),
            synthetic_compressible_fraction=dict(type='float', default=0.5),
            time_budget=dict(type='int', default=60),
            byte_budget=dict(type='str'),
            block_size=dict(type='str', default='64k'),
            cache=dict(type='str', default='evict', choices=['evict', 'drop', 'direct', 'keep']),
            follow_symlinks=dict(type='bool', default=False),
            one_file_system=dict(type='bool', default=True),
            max_files=dict(type='int', default=1000000),
            compressibility_sample=dict(type='str', default='8M'),
            fio_path=dict(type='path'),
            streams=dict(type='int'),
            drives=dict(type='int'),
            streams_per_drive=dict(type='int'),
            scaling=dict(type='bool', default=True),
            scaling_streams=dict(type='list', elements='int'),
            scaling_max_streams=dict(type='int'),
            min_samples=dict(type='int', default=10),
            ingest=dict(type='dict', options=dict(
                path=dict(type='path', required=True),
                rate_mb_s=dict(type='float'),
                size=dict(type='str', default='1G'),
                block_size=dict(type='str', default='1M'),
                direct=dict(type='bool', default=True),
            )),
        ),
        mutually_exclusive=[('paths', 'synthetic_dir'), ('streams', 'drives')],
        required_by={'streams_per_drive': 'drives'},
        required_one_of=[('paths', 'synthetic_dir')],
        supports_check_mode=True,
    )
    if module.params['max_files'] < 1:
        module.fail_json(msg='max_files must be at least 1.')
    if not 0.0 <= module.params['synthetic_compressible_fraction'] < 1.0:
        module.fail_json(msg='synthetic_compressible_fraction must be within 0 (random) .. 0.99.')
    try:
        result = SourceReadBenchmark(module.params, module=module, check_mode=module.check_mode).run()
    except SourceReadError as exc:
        module.fail_json(**exc.fail_kwargs)
    for warning in result.get('warnings_list', []):
        module.warn(warning)
    # the SourceRead record (module_utils/_records.py), the structure RETURN documents
    module.exit_json(changed=bool(result.get('changed')), **_records.SourceRead.from_dict(result).to_dict())


if __name__ == '__main__':
    main()
