#!/usr/bin/python
# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: qualify_report
short_description: Write the fleet reports (Markdown, HTML with charts, JUnit XML) of a qualify run
version_added: 0.1.0
description:
  - Runs on the controller (action plugin). Reads every C(hosts/*.json) that
    M(tapeops.qualify.qualify_verdict) wrote to O(report_dir) and writes C(summary.md), C(report.html) (one
    self-contained page; charts as inline SVG written by the collection's templates) and C(junit.xml) (one test case per
    host x drive) next to them.
  - Works from the files only, so it can report on an earlier or partly failed run.
  - Hosts listed in O(expected_hosts) without a JSON file are reported as missing (unreachable, or failed
    before their verdict).
author:
  - tapeops.qualify contributors (@tapeops)
extends_documentation_fragment:
  - tapeops.qualify._attributes
  - tapeops.qualify._attributes.action_plugin
attributes:
  check_mode:
    support: full
    details:
      - In check mode nothing is written; the number of host documents found is returned.
  diff_mode:
    support: none
options:
  report_dir:
    description: The run directory written by M(tapeops.qualify.qualify_verdict).
    type: path
    required: true
  expected_hosts:
    description: Hosts that should have a document; those without one are reported as missing.
    type: list
    elements: str
    default: []
  run:
    description: Facts about the run shown in the reports (C(id), C(mode), C(profile), C(target_generation)).
    type: dict
    default: {}
  failing_classes:
    description: Classes that count as failing (JUnit failures, and O(fail_on_failing_drives)).
    type: list
    elements: str
    choices: [STREAMING, SPEED-MATCHED, SHOE-SHINING, MISCONFIGURED]
    default: [SHOE-SHINING, MISCONFIGURED]
  fail_on_failing_drives:
    description: Fail the task (after writing every report) when any drive's class is in O(failing_classes).
    type: bool
    default: false
  compare_to:
    description:
      - The directory of an earlier run (it holds C(hosts/<host>.json)). The reports then say per host x drive
        what changed since (class, the forecast backup rate, the measured drive path) and mark regressions (a
        class that fell, a rate more than 10 % lower, a drive that had a verdict and has none now).
      - This is the run admins make after any change (HBA, block size, kernel, streams).
      - An earlier run that cannot be compared with - a missing directory, this run's own, or any host document of
        it unreadable (truncated, not JSON) or of another schema version - is refused as a comparison, with the
        reason, in the reports and in RV(comparison_error); everything else is written as without it.
    type: path
  fail_on_regression:
    description:
      - With O(compare_to), a regression is a JUnit failure, and the task fails (after writing every report).
      - A comparison that cannot be made fails the task too (a C(NOT_COMPARED) JUnit error), since no regression
        shown is not the same as none.
    type: bool
    default: false
seealso:
  - module: tapeops.qualify.qualify_verdict
'''

EXAMPLES = r'''
- name: Fleet reports; fail when any drive would shoe-shine
  tapeops.qualify.qualify_report:
    report_dir: "{{ qualify_run_dir }}"
    expected_hosts: "{{ groups['media_agents'] }}"
    failing_classes: [SHOE-SHINING]
    fail_on_failing_drives: true

- name: Fleet reports of this run, compared with last week's; fail on a regression
  tapeops.qualify.qualify_report:
    report_dir: "{{ qualify_run_dir }}"
    compare_to: reports/20261116T020000Z
    fail_on_regression: true
'''

RETURN = r'''
paths:
  description: The files written.
  returned: success
  type: dict
  contains:
    json:
      description: The host documents read.
      type: list
      elements: str
    markdown:
      description: Fleet summary.
      type: str
      sample: /var/tmp/tapeops-reports/20260101T000000Z/summary.md
    html:
      description: The page with charts.
      type: str
    junit:
      description: JUnit XML.
      type: str
    against_observed:
      description:
        - An observe run with O(compare_to) naming a qualify run, its forecast against observed as JSON (the
          RV(against_observed) result with this run's C(run)); absent otherwise, and an earlier rebuild's file is
          removed.
      type: str
      returned: with O(compare_to), in an observe run
      sample: /var/tmp/tapeops-reports/observe-20260101T000000Z/against_observed.json
against_observed:
  description:
    - An observe run with O(compare_to) naming a qualify run, per host x drive the qualify run's forecast against
      what the drive did in the window (summary.md's and report.html's "Forecast against observed", as data).
  returned: with O(compare_to), in an observe run whose comparison could be made
  type: dict
  contains:
    earlier:
      description: The qualify run compared with (its directory and run record).
      type: dict
    pairs:
      description:
        - One per host x drive - host, drive, label, status (V(compared) or V(not compared)), forecast (class,
          feed_mb_s, backhitches_per_hour), observed (class, mb_s, data_seconds, backhitches), class_match,
          rate_delta_pct (the forecast's rate against the observed one, in %), backhitches_predicted (the forecast's
          rate an hour times the observed data hours), backhitches_counted (by the drive; null without its counter)
          and reasons (the comparison in words).
      type: list
      elements: dict
    compared:
      description: How many pairs were compared.
      type: int
    class_matches:
      description: How many compared pairs have the same class on both sides.
      type: int
fleet:
  description: One line per host x drive (host, drive, label, class, status, summary).
  returned: success
  type: list
  elements: dict
failing:
  description: Host x drive lines whose class is in O(failing_classes).
  returned: success
  type: list
  elements: dict
missing:
  description: Hosts without a verdict (failed, unreachable), or with a drive that was BUSY (no verdict for it).
  returned: success
  type: list
  elements: str
busy:
  description: The BUSY drives (host, drive, reason) - another qualify run or another process had them.
  returned: success
  type: list
  elements: dict
comparison_error:
  description:
    - With O(compare_to), why no comparison was made (the earlier run is missing, this run's own directory, or one of
      its documents cannot be read or is of another schema version). The task's message adds how to rebuild the
      reports with the right directory.
  returned: when the comparison could not be made
  type: str
regressions:
  description: With O(compare_to), the host x drive changes marked as regressions (host, drive, reasons).
  returned: success
  type: list
  elements: dict
'''
