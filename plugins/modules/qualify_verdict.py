#!/usr/bin/python
# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: qualify_verdict
short_description: Judge whether a host's backup sources keep each tape drive streaming, and write the host's report
version_added: 0.1.0
description:
  - Runs on the controller (action plugin). Takes the results of M(tapeops.qualify.tape_drive_info),
    M(tapeops.qualify.source_read_benchmark) and M(tapeops.qualify.tape_write_benchmark) for one host, plus the
    backup software's settings, and gives one verdict per drive
    (V(STREAMING), V(SPEED-MATCHED), V(SHOE-SHINING), V(MISCONFIGURED) or V(INCONCLUSIVE)) with the reasons
    in words and numbers and the fixes ranked.
  - The class comes from the streaming forecast (see M(tapeops.qualify.streaming_forecast)). The measured
    per-second source rate, the drive's share of it, is replayed through the drive's buffer, speed steps,
    back-hitches and file marks. Each fix is the forecast with that change.
  - Writes the host's JSON document to O(report_dir)/hosts/<host>.json at once, so a host's result is
    kept even when other hosts fail later. The document (schema version 2) holds the measurements as typed
    records and the verdicts, and nothing of Ansible's transport (job ids, stdout, loop items); it is
    described in docs/reports.md, and docs/host-report.schema.json is its JSON Schema.
  - The registered results it is given (O(source), O(write_sweep), O(preflight), O(media),
    O(mechanics)) may be passed as Ansible returns them (async_status, loop results); they are turned into
    records once, on entry.
  - With O(target_generation), also judges the same sources against a drive the host does not have yet
    (pre-upgrade what-if); no tape is needed for that.
  - With O(tape_ratio_from), each drive is judged at the compression ratio it measured itself over a real job in
    an earlier observe run, where it did (docs/verdict.md, "Tape ratio").
  - With O(observed) (or O(run) C(mode=observe)), writes an observe run's document instead, with no
    verdict; each drive watched by M(tapeops.qualify.tape_drive_observe) gets an C(observed) entry, its window
    judged with the drive's model as a verdict would resolve it (INQUIRY, O(drive_settings) and their C(model)
    overrides) - the class the drive showed, its data-phase rate, the back-hitches it counted and those the
    forecast replays from the same feed, the tape ratio and where it came from; a drive that wrote nothing in the
    window is idle, not judged. The Bacula job of O(jobs) goes with the drive it wrote to. docs/reports.md,
    "Observe runs".
  - The verdict logic lives in one place (the collection's private C(_verdict) module utils); see
    docs/verdict.md for every class and number.
author:
  - tapeops.qualify contributors (@tapeops)
extends_documentation_fragment:
  - tapeops.qualify._attributes
  - tapeops.qualify._attributes.action_plugin
attributes:
  check_mode:
    support: full
    details:
      - In check mode the verdict is computed and returned but the JSON file is not written.
  diff_mode:
    support: none
options:
  report_dir:
    description: The run directory on the controller. The host's JSON goes to C(hosts/<inventory_hostname>.json) in it.
    type: path
    required: true
  status:
    description:
      - V(failed) writes a document that records the host's failure (O(error)) instead of a verdict, so
        the fleet reports show it.
    type: str
    choices: [ok, failed]
    default: ok
  error:
    description: What went wrong, for O(status=failed).
    type: str
  drives:
    description: The C(drives) list returned by M(tapeops.qualify.tape_drive_info).
    type: list
    elements: dict
    default: []
  source:
    description:
      - The result of M(tapeops.qualify.source_read_benchmark) as registered (needs C(aggregate); C(streams)
        and C(compressibility) are used when present). A skipped or failed result counts as no source read.
    type: dict
  write_sweep:
    description:
      - Results of M(tapeops.qualify.tape_write_benchmark), one per drive, as registered (the
        C(results) of an async_status loop). Each is matched to its drive by its C(device) key, or by
        C(item.nst) of a registered loop result. A skipped, refused or failed result records why the drive
        has no write sweep.
    type: list
    elements: dict
    default: []
  btape:
    description:
      - Results of M(tapeops.qualify.btape_speed) on Bacula/Bareos hosts, one per drive, as registered (a loop's
        C(results)), matched to their drive by the module's C(device) argument or C(item.nst). Each is kept in
        the drive's entry; its random-data rate is set against the write sweep's at the same block size, and a
        difference beyond C(options.btape_disagree_pct) is a finding (docs/verdict.md). Skipped items are
        ignored.
    type: list
    elements: dict
    default: []
  drive_settings:
    description:
      - Per-drive settings from the inventory (C(tapeops_drives)), matched by C(nst). Keys used here
        C(generation) (for example V(LTO-7) or V(LTO-9 FH)), C(form_factor), C(vendor), C(speed_floor_mb_s)
        (the drive's speed-matching floor when the model does not know it), C(block_size_bytes),
        C(segment_size_mb), C(immediate_filemarks), C(concurrency), C(physics) (V(false) for a device without tape
        physics such as mhvtl; the verdict then says its drive path rate is no drive's, finding C(no_physics)).
    type: list
    elements: dict
    default: []
  backup:
    description:
      - The backup software's settings for the host, C(software) (V(data_protector), V(bacula), V(bareos),
        V(netbackup), V(amanda); unset or another name is an application the verdict does not know, offered none
        of its own settings' fixes), C(block_size_bytes), C(segment_size_mb) (Data Protector segment size,
        Bacula Maximum File Size, NetBackup Maximum Fragment Size, Amanda's dump or part size),
        C(immediate_filemarks) (Data Protector OB2IMMEDFM=1), C(concurrency).
    type: dict
    default: {}
  memory_total_mb:
    description: RAM of the host in MB, for the memory rule (512 MB + 512 MB per interleaved stream).
    type: int
  options:
    description:
      - Verdict options. C(tape_ratio) (the compression ratio the data gets on tape; default the ratio the drive
        measured in the observe run of O(tape_ratio_from), else estimated from the source sample, else the drive's
        nominal ratio), C(max_streams) (default 16),
        C(memory_base_mb) / C(memory_per_stream_mb) (default 512 / 512), C(filemark_loss_target) (default
        0.01), C(block_size_tolerance) (default 0.03), C(btape_disagree_pct) (default 15, see O(btape)),
        C(ratio_profile) (default true, each stretch of the sources' stream replayed at its own tape ratio,
        from the compressibility sample's windows, so that a stretch of highly compressible data is seen; false
        takes one ratio for the whole stream),
        C(target_vendor) and C(target_speed_floor_mb_s) for the what-if drive.
    type: dict
    default: {}
  target_generation:
    description: A drive generation the host does not have yet, for example V(LTO-9 FH). Adds a what-if verdict.
    type: str
  run:
    description:
      - Facts about the run stored in the document (C(id), C(mode) - V(qualify), V(upgrade_check) or V(observe),
        C(profile), C(target_generation)).
    type: dict
    default: {}
  preflight:
    description:
      - The result of M(tapeops.qualify.st_preflight_info) (st driver, HBA path maximum, links), stored in the
        document as its C(preflight) record; a failed one keeps only its message.
    type: dict
  host_facts:
    description: Other facts stored in the document's C(facts) (kernel, distribution, CPU count).
    type: dict
    default: {}
  media:
    description:
      - The registered result of M(tapeops.qualify.media_inventory) run with the target generation; its
        C(summary) becomes the document's C(media) section (a failed or skipped result is recorded as such).
    type: dict
  mechanics:
    description:
      - The registered result of M(tapeops.qualify.tape_mechanics_benchmark) (one result, or a looped task's
        result with C(results)); per drive its times, object-size forecast and size warnings become the
        document's C(mechanics) section, and a backup segment or file size below the 90 % line becomes a warning
        in that drive's verdict (the target side in the what-if's). Skipped results are left out.
    type: raw
  locks:
    description:
      - The registered result of M(tapeops.qualify.tape_drive_lock) (its C(locks)). A drive another qualify run
        or another process had (C(state=busy)) is BUSY - no verdict, the reason in C(drive_errors) and C(busy),
        and a C(busy) entry in its drive of the host document (docs/verdict.md, "BUSY").
    type: raw
  storage_daemon:
    description:
      - The registered result of M(tapeops.qualify.bacula_sd_info) on a Bacula or Bareos host. It is kept in the
        document as its C(storage_daemon) record, and each drive's tape Device (matched by its Archive Device, the
        same st device) gives the drive's block size (Maximum Block Size) and segment size (Maximum File Size) where
        O(drive_settings) and O(backup) give none; the Device's documented default applies where it sets none.
        Each drive's C(setting_sources) in the document says where each setting came from. A skipped result is
        left out; a failed one keeps its message.
    type: raw
  netbackup:
    description:
      - The registered result of M(tapeops.qualify.netbackup_buffers_info) on a NetBackup media server. It is kept
        in the document as its C(netbackup) record; C(SIZE_DATA_BUFFERS), the block size bptm writes to every drive
        of the host, gives each drive's block size where O(drive_settings) and O(backup) give none (NetBackup's
        documented default, 65536, where the file does not exist), and each verdict reports the host's buffer
        settings. A skipped result is left out; a failed one keeps its message.
    type: raw
  observed:
    description:
      - An observe run - the results of M(tapeops.qualify.tape_drive_observe), one per drive, as registered (the
        C(results) of an async_status loop). Each is matched to its drive by its C(device) key, or by C(item.nst) of a
        registered loop result; a failed, skipped or timed-out result records why its drive was not watched.
      - Given (even empty), the document is an observe run's (C(observed), no C(verdicts)); O(source),
        O(write_sweep) and O(target_generation) are then refused. Unset, and O(run) not C(mode=observe), the
        document is a qualify run's.
      - O(options) C(tape_ratio) is the compression the judgement assumes where the drive measured none.
    type: list
    elements: dict
  jobs:
    description:
      - An observe run - the results of M(tapeops.qualify.bacula_job_run) for the jobs started during the window, as
        registered. A job goes with the drive its result names (C(item.device) or C(item.nst) of a loop result),
        else with the one drive that wrote in the window, else with the host's one watched drive; one that cannot
        be placed is said in a note on each watched drive. A failed job keeps its record and its message.
    type: list
    elements: dict
    default: []
  tape_ratio_from:
    description:
      - The directory of an earlier observe run (O(observed)) on this host. Each drive whose entry there is judged
        and whose ratio the drive measured itself (C(observed.tape_ratio_source=drive), from its LOG SENSE compression
        counters over the window), matched by the drive's id (its nst), is judged at that ratio; its
        C(tape_ratio_basis) names the observe run and the Bacula job. C(tape_ratio) of O(options) still comes
        first; the source sample and the nominal ratio come after.
      - Not an error when it gives no ratio - the directory does not exist, is not an observe run or has no
        document of this host, or the drive was idle, not judged, not watched or measured no compression there;
        the verdict then uses the source sample as without it, and one of the drive's C(reasons) says why and what
        to do. The what-if's target drive was not watched; its reasons give the ratio the host's drives measured.
      - The host's document of that run is read through the run directory's store, as O(report_dir)'s.
      - Refused in an observe run.
    type: path
seealso:
  - module: tapeops.qualify.tape_drive_observe
  - module: tapeops.qualify.bacula_job_run
  - module: tapeops.qualify.bacula_sd_info
  - module: tapeops.qualify.netbackup_buffers_info
  - module: tapeops.qualify.qualify_report
'''

EXAMPLES = r'''
- name: Verdict for this host, written to the run directory
  tapeops.qualify.qualify_verdict:
    report_dir: "{{ qualify_run_dir }}"
    drives: "{{ __drives.drives }}"
    source: "{{ __source }}"
    write_sweep: "{{ __write_sweep.results }}"
    drive_settings: "{{ tapeops_drives | default([]) }}"
    backup: "{{ tapeops_backup | default({}) }}"
    memory_total_mb: "{{ ansible_facts.memtotal_mb }}"

- name: An observe run's document - the windows watched, judged with each drive's model
  tapeops.qualify.qualify_verdict:
    report_dir: "{{ qualify_run_dir }}"
    drives: "{{ __drives.drives }}"
    observed: "{{ __observed.results }}"
    jobs: "{{ __jobs.results | default([]) }}"
    drive_settings: "{{ tapeops_drives | default([]) }}"
    run: {id: observe-20261127T220000Z, mode: observe, profile: observe}

- name: Pre-upgrade what-if, no tape writes
  tapeops.qualify.qualify_verdict:
    report_dir: /var/tmp/tapeops-reports/upgrade
    source: "{{ __source }}"
    target_generation: LTO-9 FH
    options:
      target_vendor: IBM
'''

RETURN = r'''
verdicts:
  description:
    - One verdict per drive (and the what-if target), as the document's C(verdicts) holds them; the full
      structure is in docs/verdict.md.
  returned: always
  type: list
  elements: dict
  contains:
    drive:
      description: The drive (its nst path) or C(what-if <label>), the C(id) of its entry in the document's C(drives).
      type: str
      sample: /dev/nst0
    id:
      description: The same as C(drive).
      type: str
      sample: /dev/nst0
    class:
      description: STREAMING, SPEED-MATCHED, SHOE-SHINING, MISCONFIGURED or INCONCLUSIVE (see C(inconclusive_reason)).
      type: str
      sample: SHOE-SHINING
    summary:
      description: One sentence with the numbers.
      type: str
      sample: LTO-5 would shoe-shine, 42.0 MB/s is below the 280 MB/s floor.
    reasons:
      description: The reasoning, in words and numbers.
      type: list
      elements: str
    fixes:
      description: Ranked fixes (rank, id, title, setting, value, why, feed_after_mb_s).
      type: list
      elements: dict
    numbers:
      description: Every number the verdict used.
      type: dict
    forecast:
      description:
        - The streaming forecast at the current settings (C(now)) and with the setting fixes
          (C(after_setting_fixes)).
        - C(trace), the buffer level and speed step over time that the report's chart draws, is in the host's
          document (RV(path)) and not in this result; it is most of a verdict's size, and every byte of a task's
          result is handled again by the controller's main process, one host after the other.
      type: dict
    inconclusive_reason:
      description: Why the measurement is too short to judge, or null.
      type: str
observed:
  description:
    - An observe run's drives as the document's C(observed) holds them (docs/reports.md, "Observe runs"), each with
      C(id), the same as its C(drive).
  returned: in an observe run
  type: list
  elements: dict
  contains:
    drive:
      description: The drive (its nst path), the C(id) of its entry in the document's C(drives).
      type: str
      sample: /dev/nst0
    status:
      description:
        - V(judged), V(idle) (wrote nothing in the window), V(not_judged) (its model is unknown) or
          V(not_observed).
      type: str
      sample: judged
    observed:
      description:
        - The data phase - C(class), C(mb_s), C(backhitches) (counted by the drive), C(tape_ratio),
          C(tape_ratio_source) ...
      type: dict
    forecast:
      description: The same feed replayed once through the drive model - C(class), C(effective_mb_s), C(backhitches) ...
      type: dict
drive_errors:
  description: Drives that got no verdict, with the reason.
  returned: always
  type: list
  elements: dict
busy:
  description: The BUSY drives (another run or process had them), each with C(id) and C(reason) (V(locked), V(open), V(busy)).
  returned: always
  type: list
  elements: dict
worst_class:
  description: The worst class of the host's drives.
  returned: always
  type: str
  sample: SPEED-MATCHED
status:
  description:
    - V(ok) when at least one drive has a verdict (in an observe run, was watched - judged or idle), else V(failed).
  returned: always
  type: str
path:
  description: The host's JSON document.
  returned: always
  type: str
  sample: /var/tmp/tapeops-reports/20260101T000000Z/hosts/ma1.json
'''
