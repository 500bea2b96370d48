# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The controller side of a qualify run at fleet scale, against a no-op play over the same inventory.

What the controller does in a qualify run once the hosts have measured: one
``qualify_verdict`` a host (the verdict, its forecast and the host document,
written to the run directory), then ``qualify_report`` once (summary.md,
report.html, the host pages, junit.xml). Here each host's measurements are
the ones recorded in lab run 20261123-quick
(tests/unit/fixtures/verdict_args/20261123-quick/: what the qualify role
handed the action for lab-ma1 STREAMING, lab-ma2 SPEED-MATCHED, lab-ma3
SHOE-SHINING), cycled over N hosts of an inventory whose hosts are all
``ansible_connection=local``: nothing is reached and nothing is measured.

It prints, per N, the qualify play's time against a no-op play (one
``set_fact`` a host) over the same inventory; issue 27's target is <= 3x at
1,000 hosts. It also times the verdict's arguments alone (the same templates
given to an action that does nothing with them): Ansible's own per-host work
on the measurements, part of every verdict's time and the floor of any
design with a verdict task a host. ``--forks`` and ``--strategy`` (the verdicts' play; the qualify
playbook's measuring play, where its verdicts run, is ``free``) time it with
other settings too (docs/awx.md).

    python3 bench/qualify_controller_scale.py                     # 100 and 1000 hosts
    python3 bench/qualify_controller_scale.py --hosts 1000 --forks 5 20 --strategy linear free
"""

import argparse
import json
import os
import shutil
import sys
import tempfile

from _collection import NOOP_PLAY, ROOT, import_collection, playbook_env, timed_playbook

FIXTURE = os.path.join(ROOT, 'tests', 'unit', 'fixtures', 'verdict_args', '20261123-quick')
TEMPLATES = ('lab-ma1', 'lab-ma2', 'lab-ma3')

COLLECTIONS = import_collection()

QUALIFY_PLAY = """- name: The controller side of a qualify run, from recorded host results
  hosts: media_agents
  gather_facts: false
  tasks:
    - name: Verdict per drive, written to the run directory
      tapeops.qualify.qualify_verdict:
        report_dir: "{{ bench_run_dir }}"
        drives: "{{ bench_args.drives }}"
        source: "{{ bench_args.source }}"
        write_sweep: "{{ bench_args.write_sweep }}"
        drive_settings: "{{ bench_args.drive_settings }}"
        memory_total_mb: "{{ bench_args.memory_total_mb }}"
        preflight: "{{ bench_args.preflight }}"
        run: "{{ bench_args.run }}"
        host_facts: "{{ bench_args.host_facts }}"

# a play of its own, as the qualify playbooks have it: with the free strategy a run_once task in the hosts' play
# would run when the first host reaches it, before the others' verdicts
- name: Fleet reports, once every host is judged
  hosts: media_agents
  gather_facts: false
  strategy: ansible.builtin.linear
  tasks:
    - name: Fleet reports, once
      run_once: true
      tapeops.qualify.qualify_report:
        report_dir: "{{ bench_run_dir }}"
        expected_hosts: "{{ ansible_play_hosts_all }}"
        run: "{{ bench_args.run }}"
"""


# The verdict's arguments without the verdict: the same templates, handed to an action that does nothing with them
# (FLOOR_ACTION, written to the bench's directory). What it costs over the no-op play is Ansible's own work to give
# each host a task with these measurements (templating them in the host's worker process): the floor under any
# design with a verdict task a host, which no change to the verdict's code can take away. (A set_fact of the same
# templates, timed here before, also returned and stored them as facts: 50.1 s where this took 41.9 s at 1,000 hosts.)
ARGUMENTS_PLAY = """- name: The verdict's arguments alone, templated for each host
  hosts: media_agents
  gather_facts: false
  tasks:
    - name: The same arguments, no verdict
      bench_arguments_only:
%s""" % ''.join('        %s: "{{ bench_args.%s }}"\n' % (name, name) for name in (
    'drives', 'source', 'write_sweep', 'drive_settings', 'memory_total_mb', 'preflight', 'run', 'host_facts'))

FLOOR_ACTION = """from ansible.plugins.action import ActionBase


class ActionModule(ActionBase):
    def run(self, tmp=None, task_vars=None):
        return {'changed': False, 'arguments': len(self._task.args)}
"""


def recorded():
    args = {}
    for name in TEMPLATES:
        with open(os.path.join(FIXTURE, name + '.json'), encoding='utf-8') as handle:
            args[name] = json.load(handle)
    return args


def write_inventory(path, count, templates, run_dir):
    """N hosts in three groups, one per recorded host; each group carries its host's recorded arguments."""
    groups = {}
    for index, name in enumerate(TEMPLATES):
        hosts = {'ma%04d.%s' % (i + 1, name): {} for i in range(index, count, len(TEMPLATES))}
        groups['recorded_%s' % name.replace('-', '_')] = {'hosts': hosts, 'vars': {'bench_args': templates[name]}}
    inventory = {'all': {'children': {'media_agents': {
        'vars': {'ansible_connection': 'local', 'ansible_python_interpreter': sys.executable,
                 'bench_run_dir': run_dir},
        'children': groups}}}}
    with open(path, 'w', encoding='utf-8') as handle:
        json.dump(inventory, handle)             # JSON is YAML: the inventory plugin reads it as such


def measure(count, templates, settings):
    """{'noop': s, (forks, strategy): s, ...} over an inventory of ``count`` hosts; every host page checked."""
    work = tempfile.mkdtemp(prefix='tapeops-qualify-bench-')
    try:
        inventory = os.path.join(work, 'hosts.yml')
        plays = {}
        for name, text in (('qualify', QUALIFY_PLAY), ('noop', NOOP_PLAY), ('arguments', ARGUMENTS_PLAY)):
            plays[name] = os.path.join(work, name + '.yml')
            with open(plays[name], 'w', encoding='utf-8') as handle:
                handle.write(text)
        os.mkdir(os.path.join(work, 'action_plugins'))
        with open(os.path.join(work, 'action_plugins', 'bench_arguments_only.py'), 'w', encoding='utf-8') as handle:
            handle.write(FLOOR_ACTION)
        env = dict(playbook_env(COLLECTIONS), ANSIBLE_ACTION_PLUGINS=os.path.join(work, 'action_plugins'))
        out = {}
        run_dir = os.path.join(work, 'run')
        write_inventory(inventory, count, templates, run_dir)
        out['noop'] = timed_playbook(['-i', inventory, plays['noop'], '-f', str(settings[0][0])], env)
        out['arguments'] = timed_playbook(['-i', inventory, plays['arguments'], '-f', str(settings[0][0])], env)
        for forks, strategy in settings:
            shutil.rmtree(run_dir, ignore_errors=True)
            out[(forks, strategy)] = timed_playbook(
                ['-i', inventory, plays['qualify'], '-f', str(forks)], dict(env, ANSIBLE_STRATEGY=strategy))
            documents = [n for n in os.listdir(os.path.join(run_dir, 'hosts')) if n.endswith('.json')]
            pages = [n for n in os.listdir(os.path.join(run_dir, 'hosts')) if n.endswith('.html')]
            if len(documents) != count or not os.path.exists(os.path.join(run_dir, 'report.html')):
                raise SystemExit('%d hosts: %d host documents written, report.html %s' % (
                    count, len(documents), 'written' if os.path.exists(os.path.join(run_dir, 'report.html'))
                    else 'missing'))
            out[(forks, strategy, 'pages')] = len(pages)
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n', maxsplit=1)[0])
    parser.add_argument('--hosts', type=int, nargs='+', default=[100, 1000])
    parser.add_argument('--forks', type=int, nargs='+', default=[5], help='ansible-playbook -f (default 5)')
    parser.add_argument('--strategy', nargs='+', default=['linear'], help='ANSIBLE_STRATEGY (linear, free)')
    args = parser.parse_args()
    templates = recorded()
    settings = [(forks, strategy) for forks in args.forks for strategy in args.strategy]
    for count in args.hosts:
        out = measure(count, templates, settings)
        for forks, strategy in settings:
            seconds = out[(forks, strategy)]
            print('%5d hosts, forks %d, strategy %s: qualify controller side %.1f s (%d host pages), no-op play '
                  '%.1f s: %.1fx (target <= 3x)' % (count, forks, strategy, seconds, out[(forks, strategy, 'pages')],
                                                    out['noop'], seconds / out['noop']))
        print('%5d hosts, forks %d: the verdict\'s arguments alone (the same templates given to a task a host that '
              'does nothing) %.1f s: %.1fx the no-op play' % (
                  count, settings[0][0], out['arguments'], out['arguments'] / out['noop']))


if __name__ == '__main__':
    main()
