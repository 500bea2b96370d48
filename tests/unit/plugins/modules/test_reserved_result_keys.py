# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""No module result and no record uses a key Ansible reserves, unless in Ansible's own meaning.

Ansible reads some keys of a task's result itself: a ``skipped`` that is
truthy marks the task skipped (``TaskResult.is_skipped``, the ``is skipped``
test), ``failed`` / ``changed`` / ``unreachable`` decide the task's state,
``results`` is a loop's, ``stdout`` gets ``stdout_lines`` beside it,
``ansible_facts`` become host variables... source_read_benchmark once
returned the entries it passed over as ``skipped``: a tree with one symlink
made Ansible report the task skipped, and the verdict said "No source read
result" (issue 28). The reserved keys come from ansible-core where it keeps
a list, plus the keys it reads by name (below, each with where).

Every module's RETURN (plugins/modules/*.py, its YAML) and every record's
fields (plugins/module_utils/_records.py: each dataclass a module returns or
the host document holds) are held against them; ALLOWED says, per module
and per record, which reserved key is used and why it is Ansible's meaning.
"""

from __future__ import annotations

import dataclasses
import glob
import importlib
import inspect
import os

import pytest
import yaml

from ansible import constants as C
from ansible.executor import task_result

from ansible_collections.tapeops.qualify.plugins.module_utils import _records

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..'))
MODULES = sorted(os.path.splitext(os.path.basename(p))[0]
                 for p in glob.glob(os.path.join(ROOT, 'plugins', 'modules', '*.py')) if not p.endswith('__init__.py'))

# The keys ansible-core lists itself (2.16 to 2.19 all have these names): a result's keys that TaskResult
# ignores / keeps when it cleans a result (``failed``, ``skipped``; ``attempts``, ``changed``, ``retries``,
# and from 2.19 ``exception``, ``warnings``, ``deprecations``, ``_ansible_no_log``), the ones it keeps under
# no_log, the keys the strategy acts on (``add_host``, ``add_group``) and those it refuses from a module
# (``ansible_facts``, ...).
FROM_ANSIBLE_CORE = (set(task_result._IGNORE) | set(task_result._PRESERVE) | set(task_result.CLEAN_EXCEPTIONS)
                     | set(C.INTERNAL_RESULT_KEYS) | set(C.RESTRICTED_RESULT_KEYS))
# Keys ansible-core reads by name without a list to import, and where.
KNOWN_OTHERS = {
    'changed', 'failed', 'skipped', 'unreachable',          # TaskResult.is_changed / is_failed / is_skipped ...
    'msg', 'rc', 'exception', 'module_stdout', 'module_stderr', 'parsed',   # a module's failure, the callbacks
    'stdout', 'stderr', 'stdout_lines', 'stderr_lines',     # TaskExecutor adds the *_lines; callbacks print them
    'results',                                              # a looped task's per-item results
    'item', 'ansible_loop_var', 'ansible_index_var', 'ansible_loop',   # a loop item's result
    'invocation', 'warnings', 'deprecations',               # AnsibleModule.exit_json adds them
    'skip_reason', 'false_condition', 'failed_when_result', 'changed_when_result',   # conditionals
    'attempts', 'retries',                                  # until / retries
    'ansible_job_id', 'started', 'finished', 'results_file', 'erased',   # async, async_status
    'diff', 'backup_file', 'censored', 'checksum_src',      # --diff; backup=true; no_log; copy's action
    'ansible_facts', 'ansible_stats', 'add_host', 'add_group',          # facts, set_stats, add_host / group_by
}
# Any _ansible_* key is Ansible's (module_response_deepcopy / strip_internal_keys); an ansible_* key would
# shadow a magic variable.
RESERVED = frozenset(FROM_ANSIBLE_CORE | KNOWN_OTHERS)


def reserved(key):
    return key in RESERVED or key.startswith('_ansible') or key.startswith('ansible_')


# Reserved keys a module returns in Ansible's own meaning, per module: (key, why that is Ansible's meaning).
ALLOWED_IN_RETURN = {
    # btape's own output (a tool run, as command's stdout; Ansible adds stdout_lines beside it)
    'btape_speed': {'stdout': 'what btape printed'},
    # the backup copy of the file changed (backup=true), as lineinfile / ini_file return it
    'dp_omnirc': {'backup_file': 'the backup of the omnirc file'},
    # true when the run has no verdict for the host: the task IS skipped for it (apply_fixes.yml: is skipped)
    'qualify_fixes_info': {'skipped': 'the host has no verdict in the run, so the task is skipped for it'},
    'qualify_amanda_tapetype': {'skipped': 'the host has no verdict in the run, so the task is skipped for it'},
    # emitted with module.warn: Ansible's warnings list, shown as [WARNING] lines
    'tape_write_benchmark': {'warnings': 'Ansible warnings (module.warn)'},
    'tape_mechanics_benchmark': {'warnings': 'Ansible warnings (module.warn)'},
}

# Reserved field names of records, per record: (field, why).
ALLOWED_IN_RECORD = {
    # never a result's top level: tape_drive_info returns the identities as a list (RV(drives)), and the host
    # document keeps each in drives[].identity
    'DriveIdentity': {'warnings': "the drive's own reading warnings, nested in tape_drive_info's drives list"},
    # what tape_write_benchmark returned as Ansible warnings (module.warn) and, for a failed write, the failed
    # task's msg: both in Ansible's meaning, kept for the report
    'WriteSweep': {'warnings': 'the Ansible warnings of the write test',
                   'msg': 'the failed write task\'s msg (its refusal or error)'},
    'Mechanics': {'warnings': 'the Ansible warnings of the mechanics test (module.warn)'},
    # a refused or failed btape run: the failed task's msg, in Ansible's meaning, kept for the verdict's words
    'BtapeSpeed': {'msg': 'the failed btape task\'s msg (its refusal or error)'},
}


def module_return(name):
    module = importlib.import_module('ansible_collections.tapeops.qualify.plugins.modules.%s' % name)
    return yaml.safe_load(module.RETURN) or {}


def records():
    return sorted((obj for _name, obj in inspect.getmembers(_records, inspect.isclass)
                   if issubclass(obj, _records.Record) and obj is not _records.Record and dataclasses.is_dataclass(obj)),
                  key=lambda cls: cls.__name__)


def test_the_reserved_list_holds_what_ansible_core_lists_and_what_records_drop():
    # the keys the collection's own test case came from, from ansible-core itself
    assert {'skipped', 'failed', 'changed', 'attempts', 'ansible_facts', 'add_host'} <= FROM_ANSIBLE_CORE
    # what a record drops as Ansible's transport (_records.TRANSPORT_KEYS) is reserved here too
    assert set(_records.TRANSPORT_KEYS) <= RESERVED
    assert MODULES and 'source_read_benchmark' in MODULES


@pytest.mark.parametrize('name', MODULES)
def test_no_module_returns_a_reserved_key_for_its_own_data(name):
    returned = module_return(name)
    used = sorted(k for k in returned if reserved(k))
    allowed = ALLOWED_IN_RETURN.get(name, {})
    assert [k for k in used if k not in allowed] == [], (
        '%s returns %s, which Ansible reads itself; give the data a name of its own (e.g. passed_over) or, if '
        'the key is used in Ansible\'s meaning, add it to ALLOWED_IN_RETURN with why' % (name, used))
    # the allow-list says nothing stale: each allowed key is still returned
    assert sorted(allowed) == [k for k in used if k in allowed]


@pytest.mark.parametrize('record', records(), ids=lambda cls: cls.__name__)
def test_no_record_field_is_a_reserved_key(record):
    used = sorted(f.name for f in dataclasses.fields(record) if reserved(f.name))
    allowed = ALLOWED_IN_RECORD.get(record.__name__, {})
    assert [k for k in used if k not in allowed] == [], (
        '%s has the field(s) %s, which Ansible reads itself when a module returns them' % (record.__name__, used))
    assert sorted(allowed) == [k for k in used if k in allowed]


def test_the_source_read_names_what_it_passed_over():
    returned = module_return('source_read_benchmark')
    assert 'skipped' not in returned and 'skipped_counts' not in returned
    assert {'passed_over', 'passed_over_counts'} <= set(returned)
    fields = set(f.name for f in dataclasses.fields(_records.SourceRead))
    assert {'passed_over', 'passed_over_counts'} <= fields and 'skipped' not in fields
