# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parallelism: N lab guests qualify in how many times the wall time of one?

Brings up a private lab of N guests (default 4: lab-ma1..3 and lab-ma4, a
second lab-ma1 kind; see docs/lab.md), runs the qualify playbook on lab-ma1
alone and then on all N at once, with the same short profile and forks >= N
(the playbook's free strategy and async measurements do the rest), and prints
both wall times and their ratio. Target (issue 27): 4 guests in at most
1.15 x the time of one (1.3 x before it).

Every guest is a user-mode-linux kernel on this machine, and each runs its
own drive emulation, fio and the collection's writer: on a machine with
fewer cores than guests the ratio measures this machine's CPU as much as the
playbook. The script prints the core count and the load beside the ratio.

    python3 bench/parallel.py                 # 4 guests (lab up, runs, lab down)
    python3 bench/parallel.py --guests 3 --keep
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from _collection import ROOT, import_collection

LAB = os.path.join(ROOT, 'lab', 'tapelab')
TARGET = 1.15          # issue 27: 4 guests in at most 1.15 x the time of one
# a short run that still has every phase: source read, write sweep with file marks, verdict, fleet report
OVERRIDES = {'source_seconds': 15, 'step_mb': 64, 'step_seconds': 8, 'block_sizes': ['256K', '1M'],
             'patterns': ['random'], 'filemark_segments_mb': [16], 'filemark_payload_mb': 32, 'poll_seconds': 2}


def lab_env(args):
    return dict(os.environ, TAPEOPS_LAB_DIR=args.lab_dir, TAPEOPS_LAB_PORT_BASE=str(args.port_base))


def qualify(args, hosts, collections, inventory):
    run_dir = tempfile.mkdtemp(prefix='tapeops-parallel-')
    extra = {'qualify_run_dir': run_dir, 'qualify_profile': 'quick', 'qualify_profile_overrides': OVERRIDES}
    env = dict(lab_env(args), ANSIBLE_COLLECTIONS_PATH=collections, ANSIBLE_FORKS=str(max(5, len(hosts))),
               ANSIBLE_STDOUT_CALLBACK='tapeops.qualify.progress')
    cmd = [os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), '-i', inventory,
           'tapeops.qualify.qualify', '--limit', ','.join(hosts), '-e', json.dumps(extra)]
    start = time.monotonic()
    proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
    took = time.monotonic() - start
    classes = {}
    for host in hosts:
        try:
            with open(os.path.join(run_dir, 'hosts', host + '.json'), encoding='utf-8') as handle:
                doc = json.load(handle)
            verdicts = dict((v.get('drive'), v) for v in doc.get('verdicts') or [])
            classes[host] = ','.join(verdicts.get(d.get('id'), {}).get('class') or 'none' for d in doc.get('drives') or [])
        except (OSError, ValueError):
            classes[host] = 'no report'
    if proc.returncode not in (0, 2):
        sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-2000:])
    return took, proc.returncode, classes


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n', 1)[0])
    parser.add_argument('--guests', type=int, default=4)
    parser.add_argument('--lab-dir', default='/var/tmp/tapeops-lab-bench-parallel')
    parser.add_argument('--port-base', type=int, default=2400)
    parser.add_argument('--keep', action='store_true', help='leave the lab running')
    args = parser.parse_args()
    collections = import_collection()
    subprocess.run([LAB, 'up', '-n', str(args.guests)], env=lab_env(args), check=True, stdout=subprocess.DEVNULL)
    try:
        inventory = subprocess.run([LAB, 'inventory'], env=lab_env(args), check=True, capture_output=True,
                                   text=True).stdout.strip().splitlines()[-1]
        hosts = ['lab-ma%d' % n for n in range(1, args.guests + 1)]
        one, rc1, classes1 = qualify(args, hosts[:1], collections, inventory)
        many, rc_n, classes_n = qualify(args, hosts, collections, inventory)
    finally:
        if not args.keep:
            subprocess.run([LAB, 'down', '--purge'], env=lab_env(args), check=False, stdout=subprocess.DEVNULL)
    print('cores %d, load average %s' % (os.cpu_count(), ' '.join('%.1f' % x for x in os.getloadavg())))
    print('1 guest : %6.1f s (rc %d) %s' % (one, rc1, classes1))
    print('%d guests: %6.1f s (rc %d) %s' % (args.guests, many, rc_n, classes_n))
    ratio = many / one
    print('ratio %d:1 = %.2f (target <= %.2f): %s' % (args.guests, ratio, TARGET,
                                                      'within' if ratio <= TARGET else 'OVER'))
    return 0


if __name__ == '__main__':
    sys.exit(main())
