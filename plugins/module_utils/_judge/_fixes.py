# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""From a qualify run's verdicts to the roles' variables: the one table of which role applies which fix.

Private to this collection: may change without notice. Used on the controller
by the ``qualify_fixes_info`` action, which ``playbooks/apply_fixes.yml`` calls
for each host before it runs the roles.

A verdict's ``fixes`` are ``_records.Fix`` records: an ``id`` (one of
``_verdict.FIX_ORDER``), in the verdict's order, a ``value`` and the verdict's words (``title``,
``setting``, ``why``). ``TABLE`` says, per fix and backup software, which role
takes it through which variable and what that does on the host; ``plan_host``
turns one host's document (its ``_records.HostReport``, read once by ``_run``)
into the variables of each role to run and the fixes left to do by hand
(streams, staging, the drive path, memory, and what lives outside the host,
such as Data Protector's device definitions on the Cell Manager), each with
the verdict's words. The plan's own sentences are ``_words``'.
"""

from __future__ import annotations

import collections
import copy
import json
import os

from ansible_collections.tapeops.qualify.plugins.module_utils import _records, _run, _words
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _verdict

DATA_PROTECTOR = ('data_protector',)
BACULA = ('bacula', 'bareos')
NETBACKUP = ('netbackup',)
# no role of Amanda's: its settings live in amanda.conf on the Amanda server (by hand, docs/amanda.md)
AMANDA = ('amanda',)
ANY = None

# What a role does with a fix on the host.
SETS = 'sets'              # changes the host's configuration (omnirc, Device resources)
CHECKS = 'checks'          # checks it on the host and fails before anything else changes where it does not fit
RECOMMENDS = 'recommends'  # exports it: the setting lives elsewhere (Data Protector: the Cell Manager's device)

# The roles in the order apply_fixes runs them: st_tuning first, it exports the
# HBA path's maximum transfer (st_tuning_preflight) that the others check block sizes against.
ROLE_ORDER = ('st_tuning', 'dp_omnirc', 'bacula_sd', 'netbackup_buffers')

# Fixes a backup software cannot take, with why: never planned for its hosts, not even by hand (a run judged
# before the verdict knew the software may still carry one).
NOT_OFFERED = {
    ('immediate_filemarks', 'bacula'): 'Bacula writes only synchronous file marks',
    ('immediate_filemarks', 'bareos'): 'Bareos writes only synchronous file marks',
    ('immediate_filemarks', 'netbackup'): 'NetBackup has no setting for immediate tape marks: bptm writes them '
                                          'synchronously',
    ('immediate_filemarks', 'amanda'): 'Amanda writes every file mark synchronously (its tape device\'s MTWEOF) '
                                       'and has no setting for immediate ones',
    ('streams', 'amanda'): 'Amanda writes one dump at a time to a drive (no multiplexing): its holding disk is the '
                           'stage that feeds the drive',
}

Row = collections.namedtuple('Row', 'fix software role variable per_drive convert effect what')


class FixesError(ValueError):
    """The run cannot be read, or a value cannot become a role variable; the message says what to do."""


def _positive_int(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0 or int(value) != value:
        raise FixesError(_words.not_a_positive_whole_number(value))
    return int(value)


def _kib(value):
    value = _positive_int(value)
    if value % 1024:
        raise FixesError(_words.not_whole_kb(value))
    return value // 1024


def _bacula_size(value):
    # Maximum File Size in decimal MB (Bacula's "mb" is 10^6 bytes, as the verdict's MB are), at least
    # the bacula_sd role's lower bound of 1 GB: the verdict asks for "this much or more".
    return '%dMB' % max(_positive_int(value), 1000)


def _option(name):
    """The converter of one key of a fix whose value is a dict ({'max_sg_segs': 513, 'block_size': 2097152})."""
    def convert(value):
        if not isinstance(value, dict) or name not in value:
            raise FixesError(_words.no_option_in(name, value))
        return _positive_int(value[name])
    convert.__name__ = '_option_%s' % name
    return convert


def _size_data_buffers(value):
    # NetBackup rounds a SIZE_DATA_BUFFERS that is not a multiple of 1024 down: a block size that is not one is not
    # what the verdict measured
    value = _positive_int(value)
    if value % 1024:
        raise FixesError(_words.not_whole_kib_for_netbackup(value))
    return value


def _true(value):
    if value is not True:
        raise FixesError(_words.not_true(value))
    return True


# One row per fix a role takes: (fix id, backup software or ANY) -> role, variable (for per_drive rows a
# key of that role's per-drive entries), how the verdict's value becomes the variable's, and what it does.
TABLE = (
    Row('block_size', ANY, 'st_tuning', 'st_tuning_block_size', False, _positive_int, CHECKS,
        'st_tuning checks that each drive\'s HBA path carries it (st_tuning_fail_on_preflight) and keeps the '
        'drives in variable-block mode (its st options)'),
    Row('st_direct_io', ANY, 'st_tuning', 'st_tuning_max_sg_segs', False, _option('max_sg_segs'), SETS,
        'st module option max_sg_segs in /etc/modprobe.d/st.conf (community.general.modprobe; st takes it when next '
        'loaded; where st is built in, st_tuning says what to put on the kernel command line and changes nothing)'),
    Row('st_direct_io', ANY, 'st_tuning', 'st_tuning_block_size', False, _option('block_size'), CHECKS,
        'st_tuning checks that each drive\'s HBA path carries the block size the option is for'),
    Row('block_size', BACULA, 'bacula_sd', 'bacula_sd_maximum_block_size', False, _positive_int, SETS,
        'Maximum Block Size of the tape Device resources'),
    Row('block_size', DATA_PROTECTOR, 'dp_omnirc', 'block_size_kb', True, _kib, RECOMMENDS,
        'dp_omnirc_devices: the block size (KB) for the device definition on the Cell Manager'),
    Row('immediate_filemarks', DATA_PROTECTOR, 'dp_omnirc', 'dp_omnirc_immediate_filemarks', False, _true, SETS,
        'omnirc OB2FORCESCSI=WFM and OB2IMMEDFM=1 (an OB2FORCESCSI=1 is corrected; refused where the st driver '
        'has no MTWEOFI)'),
    Row('segment_size', DATA_PROTECTOR, 'dp_omnirc', 'segment_size_mb', True, _positive_int, RECOMMENDS,
        'dp_omnirc_devices: the segment size (MB) for the device definition on the Cell Manager'),
    Row('segment_size', BACULA, 'bacula_sd', 'bacula_sd_maximum_file_size', False, _bacula_size, SETS,
        'Maximum File Size of the tape Device resources (decimal MB, at least 1 GB)'),
    Row('block_size', NETBACKUP, 'netbackup_buffers', 'netbackup_buffers_size_data_buffers', False,
        _size_data_buffers, SETS, 'SIZE_DATA_BUFFERS of the media server, the block size bptm writes to every drive '
        '(checked against the HBA path\'s maximum transfer)'),
)

# What apply_fixes gives a role it runs besides its rows' variables (st_tuning_devices ...), and for
# each of its rows' variables the value that leaves the setting as it is when the host's verdicts have
# no fix for it: a role gets these and its rows' variables, and the playbook passes exactly those
# (tests/unit/roles/test_apply_fixes_contract.py holds the playbook, the roles' argument specs and
# defaults to this table). st_tuning_block_size has no such value: st_tuning runs only for a
# block_size or st_direct_io fix, each of which sets it (to the same block size when both are there).
ROLE_VARIABLES = {
    'st_tuning': {'st_tuning_devices': [], 'st_tuning_fail_on_preflight': True, 'st_tuning_max_sg_segs': None},
    'dp_omnirc': {'dp_omnirc_immediate_filemarks': False, 'dp_omnirc_drives': []},
    'bacula_sd': {'bacula_sd_flavor': 'bacula', 'bacula_sd_maximum_block_size': None,
                  'bacula_sd_maximum_file_size': None},
    'netbackup_buffers': {'netbackup_buffers_size_data_buffers': None},
}

# The per-drive entries of a role (dp_omnirc_drives[]).
PER_DRIVE_VARIABLE = {'dp_omnirc': 'dp_omnirc_drives'}


def rows_for(fix_id, software):
    """The table's rows that apply fix ``fix_id`` for ``software`` (None: not known)."""
    return [row for row in TABLE if row.fix == fix_id and (row.software is ANY or software in row.software)]


# ---------------------------------------------------------------------------
# reading the run: the one place that knows the host document's layout


def document(data):
    """A host document's ``_records.HostReport``: itself, or the record of a dict as read from JSON (version 2).

    Any other version is a FixesError naming it.
    """
    if isinstance(data, _records.HostReport):
        return data
    try:
        return _records.HostReport.load(data)
    except (_records.RecordError, TypeError) as exc:
        raise FixesError(_words.document_refused(data.get('host') if isinstance(data, dict) else '?', exc))


def verdicts_of(doc):
    """[(drive id, Verdict)] of a host document (``document``): each verdict names its ``drive``."""
    return [(v.drive, v) for v in document(doc).verdicts or []]


def software_of(doc):
    """The backup software the run judged the host with (tapeops_backup.software), or None."""
    software = ((doc.facts or {}).get('backup') or {}).get('software')
    return software or None


def load_host(run_dir, host):
    """(HostReport, None) of ``host`` in ``run_dir``, or (None, why it cannot be used).

    The file is read by the run directory's reader (``_run.read_report``): version 2
    as written, anything else refused with its version named.
    """
    if not os.path.isdir(run_dir):
        raise FixesError(_words.no_run_dir(run_dir))
    path = _run.host_json_path(run_dir, host)
    if not os.path.exists(path):
        return None, _words.no_document(run_dir, host, path)
    try:
        doc = _run.read_report(path)
    except _run.RunError as exc:
        return None, str(exc)
    if doc.status != _run.STATUS_OK:
        return None, _words.no_verdict_to_apply(host, doc.status, doc.error)
    return doc, None


# ---------------------------------------------------------------------------
# the plan for one host


def _fix_entry(drive, fix, software):
    """One fix (a _records.Fix) of one drive with the table's rows for it, each converted (or why not)."""
    entry = {'drive': drive, 'id': fix.id, 'title': fix.title, 'value': fix.value, 'setting': fix.setting,
             'why': fix.why, 'applied_by': [], 'by_hand': True, 'note': None}
    for row in rows_for(entry['id'], software):
        try:
            value = row.convert(fix.value)
        except FixesError as exc:
            entry['note'] = _words.fix_not_taken(row.variable, exc)
            continue
        entry['applied_by'].append({'role': row.role, 'variable': row.variable, 'value': value,
                                    'effect': row.effect, 'what': row.what, 'per_drive': row.per_drive})
    entry['by_hand'] = not any(a['effect'] == SETS for a in entry['applied_by'])
    return entry


def _host_wide_conflicts(entries):
    """Drop host-wide variables the drives disagree on (one value per host): those stay by hand."""
    values = collections.defaultdict(set)
    for entry in entries:
        for applied in entry['applied_by']:
            if not applied['per_drive']:
                values[applied['variable']].add(json.dumps(applied['value']))
    for entry in entries:
        keep = []
        for applied in entry['applied_by']:
            if not applied['per_drive'] and len(values[applied['variable']]) > 1:
                entry['note'] = _words.fix_values_differ(applied['variable'], sorted(values[applied['variable']]))
                entry['by_hand'] = True
                continue
            keep.append(applied)
        entry['applied_by'] = keep


def _role_variables(entries, software, labels):
    """{role: variables} for the roles that have something to do, in ROLE_ORDER."""
    roles = {}
    drives = collections.OrderedDict()
    for entry in entries:
        for applied in entry['applied_by']:
            variables = roles.setdefault(applied['role'], copy.deepcopy(ROLE_VARIABLES[applied['role']]))
            if applied['per_drive']:
                drive = drives.setdefault((applied['role'], entry['drive']),
                                          {'name': entry['drive'], 'generation': labels.get(entry['drive'])})
                drive[applied['variable']] = applied['value']
            else:
                variables[applied['variable']] = applied['value']
            if applied['role'] == 'st_tuning' and entry['drive'] not in variables['st_tuning_devices']:
                variables['st_tuning_devices'].append(entry['drive'])
    for (role, dummy), drive in drives.items():
        roles[role][PER_DRIVE_VARIABLE[role]].append(drive)
    if 'bacula_sd' in roles:
        roles['bacula_sd']['bacula_sd_flavor'] = software
    return collections.OrderedDict((role, roles[role]) for role in ROLE_ORDER if role in roles)


def plan_host(doc, software=None):
    """What apply_fixes does on one host: the roles' variables and the fixes left to do by hand.

    ``doc`` is the host's document from the run (its HostReport, or the
    document as read from JSON); ``software`` the inventory's
    tapeops_backup.software, used when the run did not record one (a run that
    did record another one was judged for that software: an error).
    """
    doc = document(doc)
    recorded = software_of(doc)
    if recorded and software and recorded != software:
        raise FixesError(_words.software_changed(doc.host, recorded, software))
    software = recorded or software
    entries, ignored, labels = [], [], {}
    for drive, verdict in verdicts_of(doc):
        if verdict.what_if:
            ignored.append({'drive': drive, 'reason': _words.WHAT_IF_NOT_APPLIED})
            continue
        labels[drive] = verdict.drive_label
        for fix in verdict.fixes or []:
            if not fix.id:
                continue
            if (fix.id, software) in NOT_OFFERED:
                ignored.append({'drive': drive, 'id': fix.id,
                                'reason': _words.fix_not_offered(fix.id, software, NOT_OFFERED[(fix.id, software)])})
                continue
            if software not in _verdict.SOFTWARE and fix.id in _verdict.APPLICATION_FIXES:
                # judged before the verdict offered no application setting for an application it does not know
                ignored.append({'drive': drive, 'id': fix.id,
                                'reason': _words.application_fix_not_offered(fix.id, software)})
                continue
            entries.append(_fix_entry(drive, fix, software))
    _host_wide_conflicts(entries)
    manual = [{'drive': e['drive'], 'id': e['id'], 'text': _words.manual_fix(e['drive'], e)}
              for e in entries if e['by_hand']]
    applied = [_words.applied_fix(e['drive'], e['title'] or e['id'], a['role'], a['variable'], json.dumps(a['value']),
                                  a['effect'], a['what']) for e in entries for a in e['applied_by']]
    return {
        'host': doc.host,
        'run': doc.run or {},
        'software': software,
        'roles': _role_variables(entries, software, labels),
        'fixes': entries,
        'applied': applied,
        'manual': manual,
        'ignored': ignored,
    }


def plan(run_dir, host, software=None):
    """``plan_host`` for ``host`` of ``run_dir``, or {'skipped': True, 'reason': ...} when the run has no verdict for it."""
    doc, reason = load_host(run_dir, host)
    if doc is None:
        return {'host': host, 'skipped': True, 'reason': reason}
    if not verdicts_of(doc):
        return {'host': host, 'skipped': True, 'reason': _words.no_drive_verdict(host)}
    out = plan_host(doc, software)
    out['skipped'] = False
    return out
