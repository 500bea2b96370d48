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
design with a verdict task a host; the same verdict task with every
simulation already run (``SIMULATED_ACTION``: the verdict with its
forecasts' simulations taken away, the most any cheaper simulation could
give a verdict task a host); and a prototype of the other design,
every host's verdict in one task on the controller, then the fleet reports
(``ONE_TASK_ACTION``, not part of the collection). ``--forks`` and ``--strategy`` (the verdicts' play; the qualify
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
# (FLOOR_ACTION, written to the bench's directory), which leaves them in the worker as the collection's actions do
# (QualifyAction._keep_arguments, called on it). What it costs over the no-op play is Ansible's own work to give each
# host a task with these measurements (templating them in the host's worker process): the floor under any design
# with a verdict task a host, which no change to the verdict's code can take away. (Sent back to the main process,
# as they were before the actions kept them, the same arguments took 41.9 s at 1,000 hosts where kept they took
# 16.2 s; a set_fact of them, timed here before that, 50.1 s.)
ARGUMENT_NAMES = ('drives', 'source', 'write_sweep', 'drive_settings', 'memory_total_mb', 'preflight', 'run',
                  'host_facts')
ARGUMENTS_PLAY = """- name: The verdict's arguments alone, templated for each host
  hosts: media_agents
  gather_facts: false
  tasks:
    - name: The same arguments, no verdict
      bench_arguments_only:
%s""" % ''.join('        %s: "{{ bench_args.%s }}"\n' % (name, name) for name in ARGUMENT_NAMES)

FLOOR_ACTION = """from ansible.plugins.action import ActionBase

from ansible_collections.tapeops.qualify.plugins.plugin_utils._action import QualifyAction


class ActionModule(ActionBase):
    def run(self, tmp=None, task_vars=None):
        count = len(self._task.args)
        QualifyAction._keep_arguments(self)     # as the collection's actions do: not sent back
        return {'changed': False, 'arguments': count}
"""


# The verdict task with its simulations taken away: the collection's verdict action, whose module runs the recorded
# hosts' verdicts once when it is imported. ansible-playbook's main process imports an action's class before it
# forks a host's worker (the strategy asks it whether it bypasses the host loop), so every worker starts with the
# simulations kept (_forecast._SIMULATED, by their inputs, which hold no host name) and runs none: the module's
# simulation is replaced by one that fails. What is left is all a verdict task a host costs but its simulations:
# the most that any cheaper simulation, giving the same results, could take off it. The fleet reports follow, as in
# the qualify play.
SIMULATED_ACTION = """import json
import os

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.tapeops.qualify.plugins.action import qualify_verdict
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _forecast

RECORDED = %r
WARMED_IN = os.getpid()
_forecast.SIMULATED_KEPT = 1000
for _path in RECORDED:
    with open(_path, encoding='utf-8') as _handle:
        _raw = json.load(_handle)
    _raw['report_dir'] = os.path.dirname(_path)     # required by the validation; _document writes nothing
    _args = ArgumentSpecValidator(qualify_verdict.ARGUMENT_SPEC).validate(_raw).validated_parameters
    qualify_verdict.ActionModule._document('warm-up', _args, qualify_verdict.records_of(_args))


def _no_simulation(*args, **kwargs):
    raise RuntimeError('a worker ran a simulation the main process had not run')


_forecast._simulate = _no_simulation


class ActionModule(qualify_verdict.ActionModule):
    def run(self, tmp=None, task_vars=None):
        if os.getpid() == WARMED_IN:
            return {'failed': True, 'msg': 'the simulations were run in this worker, not before it was forked'}
        return super().run(tmp, task_vars)
""" % ([os.path.join(FIXTURE, name + '.json') for name in TEMPLATES],)

SIMULATED_PLAY = QUALIFY_PLAY.replace('tapeops.qualify.qualify_verdict:', 'bench_simulations_run:', 1)


# The other design, for comparison (docs/awx.md): every host's verdict in one task on the controller once all have
# measured, the measurements read from each host's variables as they are (no templating), the hosts shared over
# the controller's cores (forked processes, as the fleet reports write their host pages), each host's forecasts
# its own (the kept simulations cleared before each host, as a verdict task of its own starts without them). A
# prototype for this bench, not part of the collection: it keeps none of what a verdict task a host guarantees.
ONE_TASK_ACTION = """import os

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.plugins.action import ActionBase

from ansible_collections.tapeops.qualify.plugins.action import qualify_verdict
from ansible_collections.tapeops.qualify.plugins.module_utils import _run
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _forecast
from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import _render
from ansible_collections.tapeops.qualify.plugins.plugin_utils._action import plain

KEYS = %r


def judge(host, raw):
    _forecast._SIMULATED.clear()
    args = ArgumentSpecValidator(qualify_verdict.ARGUMENT_SPEC).validate(raw).validated_parameters
    doc = qualify_verdict.ActionModule._document(host, args, qualify_verdict.records_of(args)).to_dict()
    _run.save(args['report_dir'], doc)


class ActionModule(ActionBase):
    def run(self, tmp=None, task_vars=None):
        todo = []
        for host in task_vars['ansible_play_hosts_all']:
            held = task_vars['hostvars'].raw_get(host)
            raw = dict((key, plain(held['bench_args'][key])) for key in KEYS)
            raw['report_dir'] = str(held['bench_run_dir'])
            todo.append((host, raw))
        workers = len(os.sched_getaffinity(0))

        def write(share):
            for host, raw in share:
                judge(host, raw)
        _render._pages_in_parallel([todo[i::workers] for i in range(workers)], write)
        return {'changed': True, 'judged': len(todo)}
""" % (ARGUMENT_NAMES,)

ONE_TASK_PLAY = """- name: Every host's verdict in one task on the controller (a prototype of the other design)
  hosts: media_agents
  gather_facts: false
  tasks:
    - name: Every verdict, once
      run_once: true
      bench_one_task_verdicts:

""" + QUALIFY_PLAY[QUALIFY_PLAY.index('- name: Fleet reports, once every host is judged'):]


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


def _check_run(run_dir, count):
    """The number of host pages written; exits when a host document or report.html is missing."""
    documents = [n for n in os.listdir(os.path.join(run_dir, 'hosts')) if n.endswith('.json')]
    pages = [n for n in os.listdir(os.path.join(run_dir, 'hosts')) if n.endswith('.html')]
    if len(documents) != count or not os.path.exists(os.path.join(run_dir, 'report.html')):
        raise SystemExit('%d hosts: %d host documents written, report.html %s' % (
            count, len(documents), 'written' if os.path.exists(os.path.join(run_dir, 'report.html')) else 'missing'))
    return len(pages)


def measure(count, templates, settings):
    """{'noop': s, (forks, strategy): s, ...} over an inventory of ``count`` hosts; every host page checked."""
    work = tempfile.mkdtemp(prefix='tapeops-qualify-bench-')
    try:
        inventory = os.path.join(work, 'hosts.yml')
        plays = {}
        for name, text in (('qualify', QUALIFY_PLAY), ('noop', NOOP_PLAY), ('arguments', ARGUMENTS_PLAY),
                           ('one_task', ONE_TASK_PLAY), ('simulated', SIMULATED_PLAY)):
            plays[name] = os.path.join(work, name + '.yml')
            with open(plays[name], 'w', encoding='utf-8') as handle:
                handle.write(text)
        os.mkdir(os.path.join(work, 'action_plugins'))
        for plugin, text in (('bench_arguments_only', FLOOR_ACTION), ('bench_one_task_verdicts', ONE_TASK_ACTION),
                             ('bench_simulations_run', SIMULATED_ACTION)):
            with open(os.path.join(work, 'action_plugins', plugin + '.py'), 'w', encoding='utf-8') as handle:
                handle.write(text)
        env = dict(playbook_env(COLLECTIONS), ANSIBLE_ACTION_PLUGINS=os.path.join(work, 'action_plugins'))
        out = {}
        run_dir = os.path.join(work, 'run')
        write_inventory(inventory, count, templates, run_dir)
        out['noop'] = timed_playbook(['-i', inventory, plays['noop'], '-f', str(settings[0][0])], env)
        out['arguments'] = timed_playbook(['-i', inventory, plays['arguments'], '-f', str(settings[0][0])], env)
        out['one_task'] = timed_playbook(['-i', inventory, plays['one_task'], '-f', str(settings[0][0])], env)
        _check_run(run_dir, count)
        shutil.rmtree(run_dir)
        out['simulated'] = timed_playbook(['-i', inventory, plays['simulated'], '-f', str(settings[0][0])], env)
        _check_run(run_dir, count)
        shutil.rmtree(run_dir)
        for forks, strategy in settings:
            shutil.rmtree(run_dir, ignore_errors=True)
            out[(forks, strategy)] = timed_playbook(
                ['-i', inventory, plays['qualify'], '-f', str(forks)], dict(env, ANSIBLE_STRATEGY=strategy))
            out[(forks, strategy, 'pages')] = _check_run(run_dir, count)
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
        print('%5d hosts, forks %d: a verdict task a host with every simulation run before (what any cheaper '
              'simulation could take off at most), then the fleet reports %.1f s: %.1fx the no-op play' % (
                  count, settings[0][0], out['simulated'], out['simulated'] / out['noop']))
        print('%5d hosts, forks %d: every verdict in one task on the controller, then the fleet reports (a prototype '
              'of that design, docs/awx.md) %.1f s: %.1fx the no-op play' % (
                  count, settings[0][0], out['one_task'], out['one_task'] / out['noop']))


if __name__ == '__main__':
    main()
