# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fleet reports at 100 and 1,000 hosts: rebuild time and file sizes, and the scale ratio.

Generates N host documents from the recorded lab run
(tests/unit/fixtures/lab_runs/20261123-quick/: lab-ma1 STREAMING, lab-ma2
SPEED-MATCHED, lab-ma3 SHOE-SHINING), cycling through the three with new host
names, writes them to a run directory, and times the report-only rebuild
(``_render.write_fleet``: what ``qualify_report_only=true`` runs), printing
seconds, the size of report.html (the page a person opens first), of the
largest host page when there are host pages, and of summary.md.

Targets (issue "Fleet scale"): report.html under 3 MB at 1,000 hosts, and the
rebuild linear: 1,000 hosts in at most 12 x the time of 100.

With ``--playbook``, it also times what a user runs: ``ansible-playbook
tapeops.qualify.qualify -e qualify_report_only=true`` over an inventory of the
same N hosts (``ansible_connection=local``: nothing is reached), against a no-op
play over the same inventory (one ``set_fact`` a host), and prints both ratios
of issue 27: the rebuild against the no-op play (target <= 2x) and the largest
N's rebuild against the smallest's (target <= 10x for 1,000 against 100).

    python3 bench/report_scale.py              # 100 and 1000 hosts, write_fleet alone
    python3 bench/report_scale.py --playbook   # and the playbook's report-only run against a no-op play
    python3 bench/report_scale.py --hosts 10 100 --keep /tmp/report-bench
"""

import argparse
import copy
import glob
import os
import shutil
import sys
import tempfile
import time

from _collection import NOOP_PLAY, ROOT, import_collection, playbook_env, timed_playbook

FIXTURE = os.path.join(ROOT, 'tests', 'unit', 'fixtures', 'lab_runs', '20261123-quick')

COLLECTIONS = import_collection()
from ansible_collections.tapeops.qualify.plugins.module_utils import _run  # noqa: E402
from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import _render  # noqa: E402


def recorded():
    docs = []
    for path in sorted(glob.glob(os.path.join(FIXTURE, '*.json'))):
        docs.append(_run.load(path))
    if not docs:
        raise SystemExit('no host documents in %s' % FIXTURE)
    return docs


def make_run(run_dir, count, templates):
    os.makedirs(os.path.join(run_dir, 'hosts'))
    hosts = []
    for index in range(count):
        doc = copy.deepcopy(templates[index % len(templates)])
        doc['host'] = 'ma%04d.%s' % (index + 1, doc['host'])
        _run.save(run_dir, doc)
        hosts.append(doc['host'])
    return hosts


def size_mb(path):
    return os.path.getsize(path) / 1e6 if os.path.exists(path) else None


def mb(value):
    return '-' if value is None else '%.2f' % value


def measure(count, templates, keep=None):
    run_dir = os.path.join(keep, 'hosts-%d' % count) if keep else tempfile.mkdtemp(prefix='tapeops-report-bench-')
    if keep and os.path.exists(run_dir):
        shutil.rmtree(run_dir)
    try:
        hosts = make_run(run_dir, count, templates)
        start = time.monotonic()
        _render.write_fleet(run_dir, hosts)
        seconds = time.monotonic() - start
        pages = glob.glob(os.path.join(run_dir, 'hosts', '*.html'))
        return {
            'hosts': count, 'seconds': seconds,
            'index_mb': size_mb(os.path.join(run_dir, _run.REPORT_HTML)),
            'largest_host_page_mb': max(size_mb(p) for p in pages) if pages else None,
            'summary_mb': size_mb(os.path.join(run_dir, _run.SUMMARY_MD)),
        }
    finally:
        if not keep:
            shutil.rmtree(run_dir, ignore_errors=True)


def write_inventory(path, hosts):
    with open(path, 'w', encoding='utf-8') as handle:
        handle.write('all:\n  children:\n    media_agents:\n      vars:\n        ansible_connection: local\n'
                     '        ansible_python_interpreter: %s\n      hosts:\n' % sys.executable)
        for host in hosts:
            handle.write('        %s: {}\n' % host)


def measure_playbook(count, templates):
    """(report-only rebuild s, no-op play s) over an inventory of ``count`` hosts."""
    work = tempfile.mkdtemp(prefix='tapeops-report-play-')
    try:
        run_dir = os.path.join(work, 'run')
        hosts = make_run(run_dir, count, templates)
        inventory = os.path.join(work, 'hosts.yml')
        write_inventory(inventory, hosts)
        noop = os.path.join(work, 'noop.yml')
        with open(noop, 'w', encoding='utf-8') as handle:
            handle.write(NOOP_PLAY)
        env = playbook_env(COLLECTIONS)
        noop_s = timed_playbook(['-i', inventory, noop], env)
        rebuild_s = timed_playbook(['-i', inventory, 'tapeops.qualify.qualify', '-e', 'qualify_report_only=true',
                                    '-e', 'qualify_run_dir=%s' % run_dir], env)
        return rebuild_s, noop_s
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n', maxsplit=1)[0])
    parser.add_argument('--hosts', type=int, nargs='+', default=[100, 1000])
    parser.add_argument('--keep', help='write the runs under this directory and keep them')
    parser.add_argument('--playbook', action='store_true',
                        help='also time the playbook\'s report-only run against a no-op play (ansible-playbook on PATH)')
    args = parser.parse_args()
    templates = recorded()
    results = []
    for count in args.hosts:
        result = measure(count, templates, args.keep)
        results.append(result)
        largest = result['largest_host_page_mb']
        print('%5d hosts: rebuild %.1f s, report.html %s MB, largest host page %s, summary.md %s MB' % (
            result['hosts'], result['seconds'], mb(result['index_mb']),
            '%s MB' % mb(largest) if largest else '- (no host pages)', mb(result['summary_mb'])))
    if len(results) >= 2:
        small, large = results[0], results[-1]
        ratio = large['seconds'] / small['seconds']
        hosts_ratio = large['hosts'] / float(small['hosts'])
        print('scale: %d / %d hosts = %.1fx the hosts, %.1fx the time (target <= %.1fx); report.html at %d hosts '
              '%s MB (target < 3 MB)' % (large['hosts'], small['hosts'], hosts_ratio, ratio, 1.2 * hosts_ratio,
                                         large['hosts'], mb(large['index_mb'])))
    if args.playbook:
        plays = []
        for count in args.hosts:
            rebuild_s, noop_s = measure_playbook(count, templates)
            plays.append((count, rebuild_s))
            print('%5d hosts: ansible-playbook report-only %.1f s, no-op play %.1f s: %.1fx (target <= 2x)' % (
                count, rebuild_s, noop_s, rebuild_s / noop_s))
        if len(plays) >= 2:
            print('playbook scale: %d / %d hosts, %.1fx the time (target <= 10x)' % (
                plays[-1][0], plays[0][0], plays[-1][1] / plays[0][1]))


if __name__ == '__main__':
    main()
