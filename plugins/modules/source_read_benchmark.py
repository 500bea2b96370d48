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
  - FIFOs, sockets and device nodes inside a tree are skipped by type and never opened; symlinks are not
    followed unless O(follow_symlinks) (then loops are detected); unreadable files and directories are
    skipped and listed in RV(skipped).
  - A compressibility estimate of a bounded sample of the data (read-only, access times kept) is returned for
    the drive model.
author:
  - tapeops.qualify contributors (@tapeops)
extends_documentation_fragment:
  - tapeops.qualify._attributes
  - tapeops.qualify._attributes.benchmark
attributes:
  idempotent:
    details:
      - A measurement. Sources are only read (fio C(--readonly)); a synthetic data set is removed after the
        run, so the module always reports C(changed=false).
requirements:
  - fio (3.x) on the managed host.
notes:
  - Rates are decimal MB/s (10^6 bytes per second), as tape drive vendors quote them.
  - Run with C(become=true) so that every file is readable, as the backup agent (root) reads it.
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
    description: Seconds each stream may read at most (fio C(runtime)). C(0) means no time limit.
    type: int
    default: 60
  byte_budget:
    description: Bytes each stream may read at most (fio C(io_size)), e.g. C(20G). Unset means no byte limit.
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
      - Most files read per stream; the rest are listed in RV(skipped_counts). fio's memory pool is sized for
        the list (C(--alloc-size)).
    type: int
    default: 1000000
  compressibility_sample:
    description: Bytes sampled (spread over the files) for the compressibility estimate; C(0) disables it.
    type: str
    default: 8M
  fio_path:
    description: Path of the fio binary; default is fio from E(PATH).
    type: path
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
compressibility:
  description:
    - Compression estimate of a sample of the data (zlib level 1, from the drive model), plus C(files_sampled).
    - Null when O(compressibility_sample=0).
  returned: success, not in check mode
  type: dict
  sample: {ratio: 1.98, sample_bytes: 8388608, compressed_bytes: 4236000, compressor: zlib-1, files_sampled: 8}
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
skipped:
  description: Entries not read (at most 100 per stream listed), with the reason.
  returned: always
  type: list
  elements: dict
  sample: [{path: /srv/data1/run/pipe, kind: fifo, reason: "FIFO (named pipe): never opened, a read would block"}]
skipped_counts:
  description: Number of skipped entries per kind (fifo, socket, char_device, symlink, symlink_loop, hardlink, ...).
  returned: always
  type: dict
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
  description: In check mode, what would be read (streams with files and bytes, cache mode, budgets).
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

from ansible_collections.tapeops.qualify.plugins.module_utils._source_read import (
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
        ),
        mutually_exclusive=[('paths', 'synthetic_dir')],
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
    module.exit_json(**result)


if __name__ == '__main__':
    main()
