# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Controller side of tapeops.qualify.qualify_verdict (documentation in plugins/modules/)."""

from __future__ import annotations

from ansible.errors import AnsibleActionFail

from ansible_collections.tapeops.qualify.plugins.module_utils import _records, _run, _words
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _host
from ansible_collections.tapeops.qualify.plugins.plugin_utils._action import QualifyAction, host_of, unwritable

ARGUMENT_SPEC = {
    'report_dir': {'type': 'path', 'required': True},
    'status': {'type': 'str', 'default': 'ok', 'choices': ['ok', 'failed']},
    'error': {'type': 'str'},
    'drives': {'type': 'list', 'elements': 'dict', 'default': []},
    'source': {'type': 'dict'},
    'write_sweep': {'type': 'list', 'elements': 'dict', 'default': []},
    'btape': {'type': 'list', 'elements': 'dict', 'default': []},
    'drive_settings': {'type': 'list', 'elements': 'dict', 'default': []},
    'backup': {'type': 'dict', 'default': {}},
    'memory_total_mb': {'type': 'int'},
    'options': {'type': 'dict', 'default': {}},
    'target_generation': {'type': 'str'},
    'run': {'type': 'dict', 'default': {}},
    'preflight': {'type': 'dict'},
    'host_facts': {'type': 'dict', 'default': {}},
    'media': {'type': 'dict'},
    'mechanics': {'type': 'raw'},
    'locks': {'type': 'raw'},
    'storage_daemon': {'type': 'raw'},
    'netbackup': {'type': 'raw'},
    'observed': {'type': 'list', 'elements': 'dict'},
    'jobs': {'type': 'list', 'elements': 'dict', 'default': []},
    'tape_ratio_from': {'type': 'path'},
}


class ActionModule(QualifyAction):

    ARGUMENT_SPEC = ARGUMENT_SPEC
    ERRORS = (ValueError,)   # the assembly's, on measurements it cannot judge: they say which

    def act(self, args, task_vars):
        host = host_of(task_vars)
        path = _run.host_json_path(args['report_dir'], host)
        try:
            measured = records_of(args)
        except _records.RecordError as exc:
            raise AnsibleActionFail(_words.not_a_record(exc))
        observing = observe_run(args)
        # the JSON boundary: the document becomes data once, for the file and for the task's result
        doc = (self._observe_document(host, args, measured) if observing else
               self._document(host, args, measured)).to_dict()
        result = {
            'verdicts': [result_verdict(v) for v in doc['verdicts']],
            'drive_errors': [{'id': d['id'], 'error': d['error']} for d in doc['drives'] if d.get('error')],
            'busy': [{'id': d['id'], 'reason': d['busy']['reason']} for d in doc['drives'] if d.get('busy')],
            'worst_class': doc['worst_class'],
            'status': doc['status'],
            'path': path,
        }
        if observing:
            result['observed'] = [dict(o, id=o['drive']) for o in doc['observed']]
        if self.check_mode:
            result['msg'] = _words.would_write(path)
            return result
        try:
            _run.save(args['report_dir'], doc)
        except OSError as exc:
            raise unwritable(path, exc)
        result['changed'] = True
        result['msg'] = (_words.observed_message(doc['observed'], doc['error']) if observing else
                         _words.verdict_message(result['verdicts'], doc['error']))
        return result

    @staticmethod
    def _observe_document(host, args, measured):
        """An observe run's host document (a _records.HostReport with ``observed``, no verdicts)."""
        if args['status'] == 'failed':
            return _host.host_document(
                host, _run.STATUS_FAILED, run=args['run'], host_facts=args['host_facts'],
                preflight=measured['preflight'], error=args['error'] or _words.FAILED_BEFORE_WATCH,
                storage_daemon=measured['storage_daemon'], netbackup=measured['netbackup'], observed=[])
        return _host.observe(
            host, drives_info=measured['drives'], observed=args['observed'], jobs=args['jobs'],
            drive_settings=args['drive_settings'], options=dict(args['options']), run=args['run'],
            host_facts=args['host_facts'], preflight=measured['preflight'], storage_daemon=measured['storage_daemon'],
            netbackup=measured['netbackup'], backup=args['backup'], memory_total_mb=args['memory_total_mb'])

    @staticmethod
    def _document(host, args, measured):
        """The host document (version 2, a _records.HostReport) from the records."""
        if args['status'] == 'failed':
            return _host.host_document(
                host, _run.STATUS_FAILED, source=measured['source'], run=args['run'], host_facts=args['host_facts'],
                preflight=measured['preflight'], error=args['error'] or _words.FAILED_BEFORE_VERDICT,
                media=measured['media'], mechanics=measured['mechanics'], storage_daemon=measured['storage_daemon'],
                netbackup=measured['netbackup'])
        return _host.assemble(
            host, drives_info=measured['drives'], source=measured['source'], write_sweep=measured['write_sweep'],
            drive_settings=args['drive_settings'], backup=args['backup'], memory_total_mb=args['memory_total_mb'],
            options=dict(args['options']), target_generation=args['target_generation'], run=args['run'],
            preflight=measured['preflight'], host_facts=args['host_facts'], media=measured['media'],
            mechanics=measured['mechanics'], locks=measured['locks'], storage_daemon=measured['storage_daemon'],
            netbackup=measured['netbackup'], tape_ratio_from=tape_ratio_from(args['tape_ratio_from'], host),
            btape=measured['btape'])


def result_verdict(verdict):
    """A document's verdict as the task's result holds it: with ``id``, its forecast without the trace (the chart's
    points, most of the verdict: about 43 of 48 KB on lab-ma1's drive), which the document keeps."""
    out = dict(verdict, id=verdict['drive'])
    if isinstance(out.get('forecast'), dict) and 'trace' in out['forecast']:
        out['forecast'] = dict((k, v) for k, v in out['forecast'].items() if k != 'trace')
    return out


def observe_run(args):
    """True for an observe run (``observed`` given, or the run's mode ``observe``); raises when it is given a
    qualify run's measurements too (an observe run's document holds no verdict)."""
    observing = args['observed'] is not None or (args['run'] or {}).get('mode') == 'observe'
    if observing and (args['source'] or args['write_sweep'] or args['target_generation'] or args['tape_ratio_from']):
        raise AnsibleActionFail(_words.OBSERVE_NOT_QUALIFY)
    return observing


def tape_ratio_from(run_dir, host):
    """The observe run the drives' own tape ratios come from, as ``_host.assemble`` takes it, or None (not given).

    ``{'run_dir', 'report'}``: the host's document of that run; ``{'run_dir', 'refused'}`` when there is none (no
    such directory, not an observe run, no document of this host, one that cannot be read): not an error, the
    verdict uses the sources' sample and each drive's reasons say why the observed ratio was not used.
    """
    if not run_dir:
        return None
    try:
        return {'run_dir': run_dir, 'report': _run.read_observed(run_dir, host)}
    except _run.RunError as exc:
        return {'run_dir': run_dir, 'refused': {'why': exc.reason, 'path': getattr(exc, 'path', None),
                                                'detail': str(exc), 'host': str(host)}}


def records_of(args):
    """The measurements in the task's arguments as records, once: Ansible's loop and async output stops here.

    ``drives`` is tape_drive_info's list, ``source`` the source read's
    (async_status) result, ``write_sweep`` the write sweeps' async_status
    loop results, ``btape`` btape_speed's loop results, ``preflight``, ``media``, ``mechanics``, ``storage_daemon``
    (bacula_sd_info's) and ``netbackup`` (netbackup_buffers_info's) the
    registered results. Returns the records (``_host.assemble`` judges them
    as they are).
    """
    sweeps = [_records.WriteSweep.from_result(r) for r in args['write_sweep'] or []]
    return {
        'drives': [_records.DriveIdentity.from_dict(d) for d in args['drives'] or []],
        'source': _records.SourceRead.from_result(args['source']),
        'write_sweep': [s for s in sweeps if s is not None],
        'btape': [b for b in (_records.BtapeSpeed.from_result(r) for r in args.get('btape') or []) if b is not None],
        'preflight': _records.Preflight.from_result(args['preflight']),
        'media': _records.Media.from_result(args['media']),
        'mechanics': _records.Mechanics.from_results(args['mechanics']),
        'locks': list(_records.DriveLock.from_results(args.get('locks')).values()),
        'storage_daemon': _records.StorageDaemonConfig.from_result(args.get('storage_daemon')),
        'netbackup': _records.NetBackupBuffers.from_result(args.get('netbackup')),
    }
