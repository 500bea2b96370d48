#!/usr/bin/python
# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: tape_drive_observe
short_description: Watch a tape drive while real backups run on it, read-only, for any backup application
version_added: 0.1.0
description:
  - Samples the st driver's statistics of one drive (C(/sys/class/scsi_tape/<name>/stats)) once every O(interval)
    seconds during a window, and returns what went from the host to the drive in each interval, the bytes, the
    seconds the drive was active, its idle gaps and the commands other than reads and writes (file marks among them).
  - The window lasts O(duration) seconds, or with O(until_idle) it ends once the drive has been idle that many seconds
    after it was active (O(duration) is then its longest).
  - Before and after the window it reads the drive's log pages with C(sg_logs) (LOG SENSE only) on the drive's sg node -
    write error counters (0x02), data compression (0x1B, or the LTO page 0x32), TapeAlert (0x2E) and the back-hitch
    counter where the collection knows one (the lab's emulated drive, page 0x34) - and returns the compression ratio
    the drive measured over the window (its own host and tape byte counters), its back-hitches and the TapeAlert flags
    raised. A page the drive does not have is unknown (RV(unknown) says why), never an error.
  - B(Read-only.) The st node is never opened - no C(mt), no C(open()) of C(/dev/nst*) (an open would send commands
    through st; closing the auto-rewinding node would rewind the tape under the job). The drive is identified by
    stat() and sysfs. Besides sysfs and C(/proc/<pid>/fd) (which processes hold the drive open), the only commands
    sent to the drive are C(sg_logs)' LOG SENSE (with its INQUIRY), before and after the window; none changes state.
    It works beside any backup application (Data Protector, NetBackup, Commvault, Storage Protect, Bacula, tar).
  - The application must write through the st driver. One that writes through the sg driver or lin_tape
    (C(/dev/IBMtape*)) moves no st counter; where the drive's own byte counter moved by more than st's,
    RV(notes) says so.
  - docs/tape-side.md ("Observe real backups") says what each number means.
author:
  - tapeops.qualify contributors (@tapeops)
extends_documentation_fragment:
  - tapeops.qualify._attributes
attributes:
  check_mode:
    support: full
    details:
      - In check mode the module only identifies the drive (stat and sysfs reads) and returns what it would watch
        (RV(status=planned), RV(drive), RV(window)); nothing is sampled and no LOG SENSE is sent.
  diff_mode:
    support: N/A
    details:
      - This action does not modify state.
  idempotent:
    description: When run twice with the same parameters, the second run changes nothing.
    support: full
    details:
      - Observing changes nothing on the host or the drive (C(changed=false)); each run reports what the drive did
        in its own window.
  async:
    description: Supports being used with the C(async) keyword.
    support: full
    details:
      - A window longer than the connection allows (a night's backups) is run with C(async) and C(poll).
requirements:
  - The st driver with per-drive statistics (Linux 4.2 or later; RHEL 7.9's kernel has them).
  - sg3-utils (C(sg_logs)) and the sg driver for the log pages; without them the log-page figures are unknown.
options:
  device:
    description:
      - The drive - its st node (V(/dev/nst0), or V(/dev/st0) - the counters are the drive's, whichever node), its
        kernel name (V(nst0)), or a C(/dev/tape/by-id) link. Nothing is opened; the node is only stat()ed.
    type: str
    required: true
  duration:
    description:
      - The window in seconds; with O(until_idle), the longest it lasts.
    type: int
    default: 60
  until_idle:
    description:
      - End the window once the drive has been idle this many seconds after it was active (a job's end); V(0) ends it
        after O(duration). A drive that is never active in the window keeps it open for O(duration).
    type: int
    default: 0
  interval:
    description:
      - Seconds between two samples of the st statistics (one interval of RV(series)).
    type: float
    default: 1.0
  log_pages:
    description:
      - Read the drive's log pages (LOG SENSE through C(sg_logs)) before and after the window. With V(false) only
        sysfs is read, and the figures that come from the drive (RV(compression_ratio), RV(backhitches),
        RV(write_errors), RV(tape_alert)) are unknown.
    type: bool
    default: true
  tool_timeout:
    description:
      - Seconds each C(sg_logs) gets before it is stopped. A drive that does not answer is sent nothing more (the
        log pages after the window are then unknown).
    type: int
    default: 60
notes:
  - Rates are decimal MB/s (10^6 bytes per second).
  - Every counter comes from the st driver, which counts a command when it completes (drivers/scsi/st.c), so a
    WRITE that spans two intervals counts in the second.
  - The data compression pages count since the cartridge was loaded; a cartridge loaded during the window makes the
    ratio unknown (the counters go back), as does a window with no data written.
seealso:
  - module: tapeops.qualify.tape_drive_info
  - module: tapeops.qualify.tape_write_benchmark
'''

EXAMPLES = r'''
- name: Watch the drive for ten minutes
  tapeops.qualify.tape_drive_observe:
    device: /dev/nst0
    duration: 600
  register: observed

- name: Watch last night's job from its start to its end (at most 8 hours), through a connection that may drop
  tapeops.qualify.tape_drive_observe:
    device: /dev/tape/by-id/scsi-35000e11167f7b001-nst
    duration: 28800
    until_idle: 120
  async: 30000
  poll: 60
  register: night

- name: Say what the drive did
  ansible.builtin.debug:
    msg: >-
      {{ night.bytes_written }} bytes in {{ night.busy_seconds }} s active ({{ night.mb_s }} MB/s),
      {{ night.idle_gaps | selectattr('where', 'equalto', 'between') | list | length }} idle gaps,
      compression {{ night.compression_ratio | default('unknown', true) }}
'''

RETURN = r'''
device:
  description:
    - The device as given. With the keys below it is the C(ObservedWindow) record (the collection's C(_records)
      module utils); a key that does not apply is null.
  returned: always
  type: str
  sample: /dev/nst0
status:
  description: V(observed), or V(planned) in check mode (nothing sampled).
  returned: always
  type: str
drive:
  description: >-
    The drive as identified from sysfs - C(nst) (its non-rewinding node), C(name) (the kernel name of the node given),
    C(stats_dir), C(sg) (null without the sg driver), C(hctl), C(vendor), C(product), C(revision), and C(log_pages)
    (the pages that are read, empty when none can be).
  returned: always
  type: dict
  sample: {"nst": "/dev/nst0", "name": "nst0", "stats_dir": "/sys/class/scsi_tape/nst0/stats", "sg": "/dev/sg0",
           "hctl": "0:0:1:0", "vendor": "IBM", "product": "ULT3580-TD5", "revision": "G350",
           "log_pages": ["0x02", "0x1b", "0x2e", "0x32", "0x34"]}
window:
  description: >-
    The window asked and had - C(duration_s), C(until_idle_s), C(interval_s), C(started_at) and C(ended_at) (UTC),
    C(seconds) (from the first sample to the last), C(samples), C(ended_by) (V(duration), V(idle), or V(drive_gone)
    when the drive's statistics disappeared).
  returned: always
  type: dict
idle:
  description: True when no st counter moved and no command was in flight during the whole window.
  returned: always
  type: bool
bytes_written:
  description: Bytes the host wrote to the drive in the window (the st C(write_byte_cnt) difference).
  returned: always
  type: int
bytes_read:
  description: Bytes the host read from the drive in the window (C(read_byte_cnt)).
  returned: always
  type: int
busy_seconds:
  description: Seconds of the intervals in which the drive was active (a counter moved or a command was in flight).
  returned: always
  type: float
mb_s:
  description: RV(bytes_written) per active second, decimal MB/s; null when the drive was not active.
  returned: always
  type: float
window_mb_s:
  description: RV(bytes_written) per second of the whole window, decimal MB/s.
  returned: always
  type: float
idle_gaps:
  description: >-
    Runs of idle intervals, C(start_s) (from the window's start), C(seconds), C(where) - V(between) two active
    stretches (the drive stopped and had to start again), V(before) the first activity, V(after) the last, or
    V(whole) (nothing happened).
  returned: always
  type: list
  elements: dict
other_commands:
  description: >-
    Commands other than READ and WRITE that completed in the window (C(other_cnt)): file marks, positioning,
    rewind, and the status commands of each open. An upper bound of the file marks written.
  returned: always
  type: int
compression_ratio:
  description: >-
    The compression ratio the drive measured over the window - its host bytes received divided by the bytes it
    wrote to tape (RV(compression)). Null when unknown (C(compression_ratio) in RV(unknown) says why).
  returned: always
  type: float
compression:
  description: >-
    The drive's own byte counters over the window - C(page) (V(0x1b) or V(0x32)), C(host_written_bytes),
    C(tape_written_bytes) (after minus before; megabytes of 10^6 bytes plus the remainder), C(ratio).
  returned: always
  type: dict
backhitches:
  description: >-
    The drive's own back-hitches (repositions) in the window, where the collection reads a counter of them (the lab's
    emulated drive); null otherwise.
  returned: always
  type: int
write_errors:
  description: The write error counters (log page 0x02) over the window, after minus before, named as sg_logs prints them.
  returned: always
  type: dict
tape_alert:
  description: TapeAlert flags C(active_before), C(active_after) the window and C(raised) in it (log page 0x2E).
  returned: always
  type: dict
st_delta:
  description: Every st counter's difference over the window (C(in_flight) as read at the end).
  returned: always
  type: dict
series:
  description: >-
    One entry per interval, in columns of equal length - C(t) (the interval's start, seconds from the first sample),
    C(seconds) (its length), each st counter's difference over it (C(write_byte_cnt), C(write_cnt), C(write_ns),
    C(read_byte_cnt), C(read_cnt), C(read_ns), C(other_cnt), C(resid_cnt), C(io_ns)) and C(in_flight) (the commands
    in flight at its end). The host-to-drive rate of an interval is C(write_byte_cnt) / C(seconds).
  returned: always
  type: dict
holders:
  description: The processes that held one of the drive's nodes open at the window's start or end (C(pid),
    C(command), C(node), C(seen) - V(start), V(end)); the backup application, seen through C(/proc).
  returned: always
  type: list
  elements: dict
log_pages_before:
  description: The log pages read before the window (as RV(tapeops.qualify.tape_drive_info#module:drives[].log_pages)).
  returned: always
  type: dict
log_pages_after:
  description: The log pages read after the window.
  returned: always
  type: dict
unknown:
  description: For each figure that is unknown, why (C(compression_ratio), C(backhitches), C(write_errors),
    C(tape_alert), C(mb_s), C(window) in check mode).
  returned: always
  type: dict
  sample: {"backhitches": "the drive gives no back-hitch counter the collection reads (only the lab's emulated drive
           counts them, log page 0x34 parameter 0x8000)"}
notes:
  description: What the reader should know about the window (it ended while the drive was active, bytes that reached
    the drive outside st, log pages read only in part).
  returned: always
  type: list
  elements: str
'''

import traceback

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _observe
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _cli


def main():
    module = AnsibleModule(
        argument_spec=dict(
            device=dict(type='str', required=True),
            duration=dict(type='int', default=60),
            until_idle=dict(type='int', default=0),
            interval=dict(type='float', default=1.0),
            log_pages=dict(type='bool', default=True),
            tool_timeout=dict(type='int', default=_observe.TOOL_TIMEOUT),
        ),
        supports_check_mode=True,
    )
    p = module.params
    if p['tool_timeout'] <= 0:
        module.fail_json(msg='tool_timeout must be a positive number of seconds, got %d.' % p['tool_timeout'],
                         reason='bad_input')

    def runner(cmd):
        return _cli.run(cmd, timeout=p['tool_timeout'])

    try:
        observer = _observe.Observer(p['device'], p['duration'], until_idle=p['until_idle'], interval=p['interval'],
                                     log_pages=p['log_pages'], runner=runner)
        record = observer.plan() if module.check_mode else observer.run()
    except TapeopsError as exc:
        module.fail_json(**exc.refusal())
    except Exception as exc:  # pylint: disable=broad-except
        module.fail_json(msg='Observing %s stopped on an unexpected error: %s. Please report it with the traceback.'
                             % (p['device'], exc), exception=traceback.format_exc(), reason='internal_error')
    for note in record.notes or []:
        module.warn('%s: %s' % (p['device'], note))
    # the ObservedWindow record (module_utils/_records.py), the structure RETURN documents
    module.exit_json(changed=False, **record.to_dict())


if __name__ == '__main__':
    main()
