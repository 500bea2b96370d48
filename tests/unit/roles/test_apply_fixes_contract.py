# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fix -> role variable contract, written once in _judge/_fixes.py, holds in every file that repeats it.

_fixes.TABLE (with ROLE_VARIABLES, PER_DRIVE_VARIABLE, ROLE_ORDER) is the source. For every row and every
backup software it applies to, a host whose verdict carries that fix is planned (_fixes.plan_host), and
what the plan gives each role is checked against:

- the role: roles/<role>/ exists; its meta/argument_specs.yml takes every variable (ansible-core's own
  validator, as the role's argument validation runs it, and the Python type the spec names); each
  variable has a default in defaults/main.yml or is required; a key of per-drive entries is named in the
  comment above its list's default;
- playbooks/apply_fixes.yml: it runs the roles in ROLE_ORDER, each when the plan names it, passing exactly
  the variables the plan gives it, each from the plan;
- docs/roles.md "Applying a run's fixes": its table has the table's rows.

A fix a backup software cannot take (_fixes.NOT_OFFERED: immediate file marks on Bacula, Bareos, NetBackup) is
in no row for it, and the plan neither applies it nor leaves it by hand.

The other way round, every variable of these roles' specs that no fix sets is listed below
(FROM_THE_INVENTORY): a new spec variable fails here until it is mapped in _fixes.TABLE or listed.
"""

from __future__ import annotations

import collections
import os
import re

import pytest
import yaml

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.tapeops.qualify.plugins.module_utils import _records
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _fixes, _verdict

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
THIS = os.path.relpath(os.path.abspath(__file__), ROOT)
PLAYBOOK = 'playbooks/apply_fixes.yml'
DOCS = 'docs/roles.md'

# The fixes no role applies: left by hand with the verdict's words.
BY_HAND = {'streams', 'staging', 'drive_path', 'memory', 'job_size'}

# A verdict's value for each fix id the table maps: block_size of the recorded lab run
# (tests/unit/fixtures/lab_runs/20261123-quick, every host), a segment size and immediate marks as
# the verdict asks for them (test_fixes.py judges the recorded measurements for Data Protector and Bacula).
# st_direct_io as the verdict asks for it where st's max_sg_segs (256) keeps 2 MiB blocks from direct I/O on an HBA
# whose sg_tablesize is larger (test_verdict.py's st_direct_io tests).
VALUES = {'block_size': 65536, 'immediate_filemarks': True, 'segment_size': 17000,
          'st_direct_io': {'max_sg_segs': 513, 'block_size': 2097152}, 'streams': 4}

# None: not named. It and Amanda (no role of its own) take only the rows of any software; an application not known
# takes none of its own settings' fixes (test_a_fix_of_an_application_not_known_is_never_planned)
SOFTWARE = (None,) + _fixes.AMANDA + _fixes.DATA_PROTECTOR + _fixes.BACULA + _fixes.NETBACKUP

# The variables of the fix roles' specs no fix sets: the inventory gives them, as for any use of the role
# (docs/roles.md). A variable a fix could set belongs in _fixes.TABLE instead.
FROM_THE_INVENTORY = {
    'st_tuning': {'st_tuning_config', 'st_tuning_definitions', 'st_tuning_apply_now', 'st_tuning_udev',
                  'st_tuning_manage_packages', 'st_tuning_backup', 'st_tuning_buffer_kbs'},
    'dp_omnirc': {'dp_omnirc_omni_home', 'dp_omnirc_keys', 'dp_omnirc_backup', 'dp_omnirc_mtweofi_supported',
                  'dp_omnirc_dp_version', 'dp_omnirc_hba_max_transfer_bytes', 'dp_omnirc_max_block_kb',
                  # keys of dp_omnirc_drives[] entries: the plan names the drive and its generation only
                  'dp_omnirc_drives[].form_factor', 'dp_omnirc_drives[].vendor', 'dp_omnirc_drives[].interface',
                  'dp_omnirc_drives[].model', 'dp_omnirc_drives[].discovered',
                  'dp_omnirc_drives[].native_capacity_gb', 'dp_omnirc_drives[].hba_max_transfer_bytes'},
    'bacula_sd': {'bacula_sd_config', 'bacula_sd_devices', 'bacula_sd_minimum_block_size',
                  'bacula_sd_maximum_network_buffer_size', 'bacula_sd_spool_directory', 'bacula_sd_maximum_spool_size',
                  'bacula_sd_maximum_job_spool_size', 'bacula_sd_extra_directives', 'bacula_sd_hba_max_transfer_bytes',
                  'bacula_sd_block_granularity', 'bacula_sd_validate', 'bacula_sd_backup', 'bacula_sd_restart'},
    # the verdict judges NUMBER_DATA_BUFFERS and NET_BUFFER_SZ but asks for no value of them: no fix sets them
    'netbackup_buffers': {'netbackup_buffers_path', 'netbackup_buffers_number_data_buffers',
                          'netbackup_buffers_number_data_buffers_restore', 'netbackup_buffers_net_buffer_sz',
                          'netbackup_buffers_hba_max_transfer_bytes', 'netbackup_buffers_backup'},
}

# Python types of a value the role's spec takes without converting it (float also takes a whole number).
TYPES = {'int': (int,), 'str': (str,), 'path': (str,), 'bool': (bool,), 'list': (list,), 'dict': (dict,),
         'float': (int, float)}


def _read(path):
    with open(os.path.join(ROOT, path), encoding='utf-8') as handle:
        return handle.read()


def _yaml(path):
    return yaml.safe_load(_read(path)) or {}


def spec_path(role):
    return 'roles/%s/meta/argument_specs.yml' % role


def defaults_path(role):
    return 'roles/%s/defaults/main.yml' % role


def options_of(role):
    path = spec_path(role)
    assert os.path.isfile(os.path.join(ROOT, path)), (
        '_fixes.TABLE names the role %s, but %s does not exist: name a role of roles/ in the table, or add the '
        'role with its argument spec.' % (role, path))
    return _yaml(path)['argument_specs']['main']['options']


def host_document(fix_id, software):
    """A host document whose one drive's verdict asks ``fix_id`` (schema version 2, as test_fixes.py's hand-made)."""
    fix = {'id': fix_id, 'value': VALUES[fix_id], 'title': 'T', 'setting': 'S', 'why': 'W'}
    return {'schema_version': _records.SCHEMA_VERSION, 'host': 'ma', 'status': 'ok', 'error': None,
            'run': {'id': 'r'}, 'facts': {'backup': {'software': software}} if software else {},
            'drives': [{'id': '/dev/nst0', 'nst': '/dev/nst0', 'label': 'LTO-6'}],
            'verdicts': [{'drive': '/dev/nst0', 'class': _verdict.MISCONFIGURED, 'drive_label': 'LTO-6',
                          'what_if': False, 'fixes': [fix]}]}


def cases():
    """(row, software) for each table row and each backup software it applies to (None: not named)."""
    out = []
    for row in _fixes.TABLE:
        assert row.fix in VALUES, (
            '_fixes.TABLE maps the fix %s, which %s has no verdict value for: add one to VALUES.' % (
                row.fix, THIS))
        for software in SOFTWARE:
            if row.software is _fixes.ANY or software in row.software:
                out.append((row, software))
    return out


CASES = cases()


def _id(case):
    return '%s-%s-%s-%s' % (case[0].fix, case[1], case[0].role, case[0].variable)


def planned(row, software):
    plan = _fixes.plan_host(host_document(row.fix, software))
    assert row.role in plan['roles'], (
        'The fix %s (%s) planned for %s gives no %s variables: %s' % (
            row.fix, row.variable, software, row.role, plan))
    return plan['roles'][row.role]


def _type_errors(options, variables, where):
    """Values whose Python type is not the one the spec names (None only where the spec has no default)."""
    errors = []
    for name, value in variables.items():
        option = options.get(name)
        if option is None:
            continue    # the validator names it
        kind = option.get('type', 'str')
        if value is None:
            if option.get('required') or option.get('default') is not None:
                errors.append('%s: %s is null, which the spec refuses (it has %s): give a value of type %s' % (
                    where, name, 'required: true' if option.get('required') else 'a default', kind))
            continue
        if kind in TYPES and (not isinstance(value, TYPES[kind]) or (kind != 'bool' and isinstance(value, bool))):
            errors.append('%s: %s is %r (%s), the spec says type %s' % (where, name, value, type(value).__name__, kind))
        if kind == 'list' and isinstance(value, list):
            elements = option.get('elements')
            for index, element in enumerate(value):
                if elements == 'dict' and isinstance(element, dict):
                    errors.extend(_type_errors(option.get('options') or {}, element,
                                               '%s: %s[%d]' % (where, name, index)))
                elif elements in TYPES and not isinstance(element, TYPES[elements]):
                    errors.append('%s: %s[%d] is %r, the spec says elements %s' % (
                        where, name, index, element, elements))
    return errors


def check_against_the_spec(role, variables, what):
    """ansible-core's validator (as the role's argument validation) and the spec's types, each error named."""
    options = options_of(role)
    result = ArgumentSpecValidator(options).validate(variables)
    errors = ['%s: %s' % (spec_path(role), message) for message in result.error_messages]
    errors.extend(_type_errors(options, variables, spec_path(role)))
    assert not errors, '%s gives the %s role variables its argument spec refuses:\n  %s' % (
        what, role, '\n  '.join(errors))


def comment_above(path, variable):
    """The comment lines right above ``variable:`` in a YAML file."""
    lines = _read(path).splitlines()
    at = [i for i, line in enumerate(lines) if line.startswith('%s:' % variable)]
    assert at, '%s has no %s' % (path, variable)
    comment = []
    for line in reversed(lines[:at[0]]):
        if not line.startswith('#'):
            break
        comment.append(line)
    return '\n'.join(reversed(comment))


def playbook_roles():
    """[(role, vars, when)] of the include_role tasks of apply_fixes.yml, in order."""
    out = []
    for task in _yaml(PLAYBOOK)[0]['tasks']:
        include = task.get('ansible.builtin.include_role')
        if include:
            out.append((include['name'].split('.')[-1], task.get('vars') or {}, task.get('when')))
    return out


# --------------------------------------------------------------- each row, each software it applies to

@pytest.mark.parametrize('row, software', CASES, ids=[_id(c) for c in CASES])
def test_the_role_takes_what_the_plan_gives_it(row, software):
    variables = planned(row, software)
    if row.per_drive:
        entries = variables[_fixes.PER_DRIVE_VARIABLE[row.role]]
        assert [e.get(row.variable) for e in entries] == [row.convert(VALUES[row.fix])], (row, variables)
    else:
        assert variables[row.variable] == row.convert(VALUES[row.fix]), (row, variables)
    check_against_the_spec(row.role, variables, 'The plan for a %s fix (%s)' % (row.fix, software))


@pytest.mark.parametrize('row, software', CASES, ids=[_id(c) for c in CASES])
def test_every_variable_the_plan_gives_has_a_default(row, software):
    variables = planned(row, software)
    options = options_of(row.role)
    defaults = _yaml(defaults_path(row.role))
    missing = sorted(n for n in variables if n not in defaults and not (options.get(n) or {}).get('required'))
    assert not missing, (
        '%s has no default for %s, which apply_fixes sets from _fixes.TABLE (a %s fix): add the value the role '
        'behaves with when it is not set (or make it required in %s).' % (
            defaults_path(row.role), ', '.join(missing), row.fix, spec_path(row.role)))
    # the keys of per-drive entries: the list's default is [], its comment names the keys an entry takes
    per_drive = _fixes.PER_DRIVE_VARIABLE.get(row.role)
    if per_drive in variables:
        comment = comment_above(defaults_path(row.role), per_drive)
        keys = sorted(set(k for entry in variables[per_drive] for k in entry))
        unnamed = [k for k in keys if not re.search(r'\b%s\b' % re.escape(k), comment)]
        assert not unnamed, (
            '%s: the comment above %s does not name %s, a key of its entries that apply_fixes sets (_fixes.TABLE, '
            'a %s fix): add it to the list of keys there.' % (
                defaults_path(row.role), per_drive, ', '.join(unnamed), row.fix))


@pytest.mark.parametrize('row, software', CASES, ids=[_id(c) for c in CASES])
def test_the_playbook_passes_exactly_what_the_plan_gives(row, software):
    variables = planned(row, software)
    passed = dict((role, (names, when)) for role, names, when in playbook_roles())
    assert row.role in passed, '%s runs no %s role, which _fixes.TABLE gives the %s fix to.' % (
        PLAYBOOK, row.role, row.fix)
    names, when = passed[row.role]
    missing, extra = sorted(set(variables) - set(names)), sorted(set(names) - set(variables))
    assert not missing, '%s does not pass %s to the %s role; the plan (_fixes.TABLE, a %s fix) gives it.' % (
        PLAYBOOK, ', '.join(missing), row.role, row.fix)
    assert not extra, ('%s passes %s to the %s role, which the plan for a %s fix does not give: take it out of the '
                       'playbook, or give it a value in _fixes.ROLE_VARIABLES.' % (
                           PLAYBOOK, ', '.join(extra), row.role, row.fix))
    for name, value in names.items():
        assert value == '{{ __apply_fixes.roles.%s.%s }}' % (row.role, name), (
            '%s: the %s role\'s %s is %r, not the plan\'s value.' % (PLAYBOOK, row.role, name, value))
    assert when == "'%s' in __apply_fixes.roles" % row.role, (
        '%s runs the %s role when %r, not when the plan names it.' % (PLAYBOOK, row.role, when))


# --------------------------------------------------------------- the table as a whole

def test_the_roles_run_in_the_tables_order():
    in_table = set(row.role for row in _fixes.TABLE)
    assert set(_fixes.ROLE_ORDER) == in_table == set(_fixes.ROLE_VARIABLES), (
        '_fixes.ROLE_ORDER %s, the roles of _fixes.TABLE %s and of _fixes.ROLE_VARIABLES %s differ.' % (
            sorted(_fixes.ROLE_ORDER), sorted(in_table), sorted(_fixes.ROLE_VARIABLES)))
    assert [role for role, dummy, dummy2 in playbook_roles()] == list(_fixes.ROLE_ORDER), (
        '%s runs %s; _fixes.ROLE_ORDER says %s.' % (
            PLAYBOOK, [role for role, dummy, dummy2 in playbook_roles()], list(_fixes.ROLE_ORDER)))
    for role, per_drive in _fixes.PER_DRIVE_VARIABLE.items():
        assert per_drive in _fixes.ROLE_VARIABLES[role], (role, per_drive)


@pytest.mark.parametrize('role', _fixes.ROLE_ORDER)
def test_the_values_that_leave_a_setting_alone_are_ones_the_role_takes(role):
    """ROLE_VARIABLES: what the playbook passes for a variable the host's verdicts have no fix for."""
    check_against_the_spec(role, dict(_fixes.ROLE_VARIABLES[role]), '_fixes.ROLE_VARIABLES')


def test_every_fix_is_either_in_the_table_or_left_by_hand():
    assert set(r.fix for r in _fixes.TABLE) | BY_HAND == set(_verdict.FIX_ORDER), (
        'the verdict\'s fixes %s: each is mapped in _fixes.TABLE or left by hand (%s)' % (
            sorted(_verdict.FIX_ORDER), sorted(BY_HAND)))
    assert not set(r.fix for r in _fixes.TABLE) & BY_HAND


@pytest.mark.parametrize('role', _fixes.ROLE_ORDER)
def test_every_spec_variable_is_set_by_a_fix_or_listed_as_the_inventorys(role):
    options = options_of(role)
    names = set(options)
    per_drive = _fixes.PER_DRIVE_VARIABLE.get(role)
    if per_drive:
        names |= set('%s[].%s' % (per_drive, key) for key in options[per_drive].get('options') or {})
    set_by_fixes = set()
    for row, software in CASES:
        if row.role == role:
            variables = planned(row, software)
            set_by_fixes |= set(variables)
            for entry in variables.get(per_drive) or []:
                set_by_fixes |= set('%s[].%s' % (per_drive, key) for key in entry)
    unmapped = sorted(names - set_by_fixes - FROM_THE_INVENTORY[role])
    assert not unmapped, (
        '%s has %s, which no fix sets: map a fix to it in _fixes.TABLE, or list it in FROM_THE_INVENTORY of %s '
        '(the inventory gives it).' % (spec_path(role), ', '.join(unmapped), THIS))
    stale = sorted(FROM_THE_INVENTORY[role] - names)
    assert not stale, 'FROM_THE_INVENTORY of %s lists %s, not in %s: take it out of the list.' % (
        THIS, ', '.join(stale), spec_path(role))
    both = sorted(FROM_THE_INVENTORY[role] & set_by_fixes)
    assert not both, 'FROM_THE_INVENTORY of %s lists %s, which a fix sets (_fixes.TABLE): take it out of the list.' % (
        THIS, ', '.join(both))


@pytest.mark.parametrize('fix_id, software', sorted(_fixes.NOT_OFFERED))
def test_a_fix_the_software_cannot_take_is_in_no_row_and_never_planned(fix_id, software):
    """NOT_OFFERED: not a role's, not by hand either; the plan names it under ignored with the reason."""
    assert fix_id in VALUES, fix_id
    assert not _fixes.rows_for(fix_id, software), (
        '_fixes.TABLE maps %s for %s, which _fixes.NOT_OFFERED says it cannot take.' % (fix_id, software))
    plan = _fixes.plan_host(host_document(fix_id, software))
    assert (plan['roles'], plan['fixes'], plan['manual'], plan['applied']) == ({}, [], [], [])
    assert plan['ignored'] == [{'drive': '/dev/nst0', 'id': fix_id, 'reason': 'the %s fix is not for a %s host: %s.' % (
        fix_id, software, _fixes.NOT_OFFERED[(fix_id, software)])}]


@pytest.mark.parametrize('software', [None, 'veeam'])
@pytest.mark.parametrize('fix_id', _verdict.APPLICATION_FIXES)
def test_a_fix_of_an_application_not_known_is_never_planned(fix_id, software):
    """The application's own settings, for a host whose application is unset or not known: ignored, saying why."""
    plan = _fixes.plan_host(host_document(fix_id, software))
    assert (plan['roles'], plan['fixes'], plan['manual'], plan['applied']) == ({}, [], [], [])
    assert [(i['id'], i['reason'].split(':')[0]) for i in plan['ignored']] == [
        (fix_id, 'the %s fix is a setting of the backup application' % fix_id)]


def test_the_software_without_immediate_marks_is_offered_none():
    """The verdict does not model immediate marks for this software; the plan refuses one a run may still carry."""
    assert set(_verdict.NO_IMMEDIATE_MARKS) == set(
        software for fix_id, software in _fixes.NOT_OFFERED if fix_id == 'immediate_filemarks')


def test_the_docs_table_is_the_tables_rows():
    """docs/roles.md "Applying a run's fixes": one line per row, fix, software, role and variable as in TABLE."""
    text = _read(DOCS).split("## Applying a run's fixes", 1)[1].split('\n## ', 1)[0]
    rows = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if len(cells) == 5 and cells[0].startswith('`'):
            rows.append((cells[0].strip('`'), cells[1], cells[2].strip('`'), cells[3].split('`')[1]))

    def software(row):
        return 'any' if row.software is _fixes.ANY else ', '.join(row.software)

    def variable(row):
        return '%s[].%s' % (_fixes.PER_DRIVE_VARIABLE[row.role], row.variable) if row.per_drive else row.variable

    table = [(row.fix, software(row), row.role, variable(row)) for row in _fixes.TABLE]
    only_docs = list((collections.Counter(rows) - collections.Counter(table)).elements())
    only_table = list((collections.Counter(table) - collections.Counter(rows)).elements())
    assert not only_docs and not only_table, (
        '%s "Applying a run\'s fixes" lists %s, which _fixes.TABLE does not have, and lacks %s, which it has '
        '(fix, software, role, variable): make its table say what _fixes.TABLE says.' % (DOCS, only_docs, only_table))
