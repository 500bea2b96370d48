# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every action plugin's documentation against the argument spec it validates with.

An action plugin's options are documented in its stub, plugins/modules/<name>.py (DOCUMENTATION, with the
options of the doc fragments it extends): that is what ansible-doc shows. They are validated with one spec:
``ARGUMENT_SPEC`` in plugins/action/<name>.py for the collection's ``QualifyAction`` plugins (the one place
it is written; plugin_utils/_action.py validates with it), or, for an action that runs its module on the
managed host (tape_drive_lock), the module's own ``AnsibleModule`` spec. ansible-test's validate-modules
compares a module's documentation with its spec, but not a stub's that holds documentation only; this does,
for every action plugin: the option set, and each option's type, elements, default, choices, required and
aliases (sub-options likewise); options that go together (mutually exclusive, one of them required) name
each other in their descriptions, as DOCUMENTATION has no field for that.

A spec that takes a default or the choices from the code (qualify_report's failing_classes,
streaming_forecast's filemark_mode and min_samples) names the code's constant, so its documentation is
held against the code's value. And every task of the roles, playbooks and lab targets, and every example
in a stub, that calls an action plugin passes only options its spec has: a renamed option fails here, not
first in the lab.
"""

from __future__ import annotations

import ast
import copy
import glob
import importlib
import os

import pytest
import yaml

from ansible_collections.tapeops.qualify.plugins.plugin_utils._action import QualifyAction

COLLECTION = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..')
PLUGINS = 'ansible_collections.tapeops.qualify.plugins'
FQCN = 'tapeops.qualify.'
ACTIONS = sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(COLLECTION, 'plugins', 'action', '*.py'))
                 if not os.path.basename(p).startswith('_'))
# what the documentation and the spec each say of an option
KEYS = ('type', 'elements', 'default', 'choices', 'required', 'aliases')


def stub(name):
    return importlib.import_module('%s.modules.%s' % (PLUGINS, name))


def fragment_options(fragment):
    """The options of a doc fragment of this collection (``tapeops.qualify._name`` or ``..._name.variant``)."""
    parts = fragment.split('.')
    if parts[:2] != ['tapeops', 'qualify'] or len(parts) not in (3, 4):
        raise AssertionError('doc fragment %s is not one of this collection\'s: teach fragment_options() to read it'
                             % fragment)
    module = importlib.import_module('%s.doc_fragments.%s' % (PLUGINS, parts[2]))
    text = getattr(module.ModuleDocFragment, parts[3].upper() if len(parts) == 4 else 'DOCUMENTATION')
    return (yaml.safe_load(text) or {}).get('options') or {}


def documented(name):
    """{option: its documentation} of the stub plugins/modules/<name>.py, its doc fragments' options included."""
    doc = yaml.safe_load(stub(name).DOCUMENTATION)
    options = {}
    for fragment in doc.get('extends_documentation_fragment') or []:
        options.update(fragment_options(fragment))
    options.update(doc.get('options') or {})
    return options


class _SpecTaken(Exception):
    pass


def module_spec(name):
    """(argument spec, other keyword arguments) a real module (one with a main()) builds its AnsibleModule with."""
    module = stub(name)
    taken = {}

    def capture(argument_spec, **kwargs):
        taken.update(kwargs, argument_spec=argument_spec)
        raise _SpecTaken()

    original = module.AnsibleModule
    module.AnsibleModule = capture
    try:
        module.main()
    except _SpecTaken:
        pass
    finally:
        module.AnsibleModule = original
    return taken.pop('argument_spec'), taken


def just_docs(name):
    """True when plugins/modules/<name>.py is a stub (documentation only, no main())."""
    with open(stub(name).__file__, encoding='utf-8') as handle:
        tree = ast.parse(handle.read())
    return not any(isinstance(node, ast.FunctionDef) and node.name == 'main' for node in tree.body)


def validated_with(name):
    """(argument spec, {constraint: option groups}) the action plugin ``name`` validates its task's arguments with."""
    action = importlib.import_module('%s.action.%s' % (PLUGINS, name)).ActionModule
    if issubclass(action, QualifyAction):
        return action.ARGUMENT_SPEC, {'mutually_exclusive': action.MUTUALLY_EXCLUSIVE,
                                      'required_one_of': action.REQUIRED_ONE_OF}
    # an action that hands its arguments to its module on the managed host: the module validates them
    assert not just_docs(name), (
        'plugins/action/%s.py is no QualifyAction and plugins/modules/%s.py has no main(): nothing validates '
        'its arguments' % (name, name))
    return module_spec(name)


def validated(name):
    """The argument spec the action plugin ``name`` validates its task's arguments with."""
    return validated_with(name)[0]


def groups(name):
    """[(constraint, options)] of the options that go together (mutually_exclusive, required_one_of, ...)."""
    found = []
    for constraint, value in sorted(validated_with(name)[1].items()):
        if constraint in ('mutually_exclusive', 'required_one_of', 'required_together') and value:
            found.extend((constraint, tuple(group)) for group in value)
    return found


def _said(entry, key):
    """What an option's documentation or spec entry says for ``key``, as one comparable value."""
    value = entry.get(key)
    if key == 'type':
        return value or 'str'
    if key == 'required':
        return bool(value)
    if key == 'aliases':
        return sorted(value or [])
    if isinstance(value, tuple):
        return list(value)
    return value


def differences(docs, spec, where=''):
    """Where the documented options ``docs`` and the argument spec ``spec`` disagree, one line each."""
    out = []
    for option in sorted(set(docs) - set(spec)):
        out.append('%s%s: documented, not in the spec' % (where, option))
    for option in sorted(set(spec) - set(docs)):
        out.append('%s%s: in the spec, not documented' % (where, option))
    for option in sorted(set(docs) & set(spec)):
        doc, arg = docs[option] or {}, spec[option] or {}
        for key in KEYS:
            if _said(doc, key) != _said(arg, key):
                out.append('%s%s: %s is %r in DOCUMENTATION, %r in the spec' % (
                    where, option, key, _said(doc, key), _said(arg, key)))
        if doc.get('suboptions') or arg.get('options'):
            out.extend(differences(doc.get('suboptions') or {}, arg.get('options') or {}, '%s%s.' % (where, option)))
    return out


def test_every_action_plugin_is_checked():
    # the folder is read, not a list kept here: a new action plugin is checked from its first commit
    assert set(ACTIONS) >= {'qualify_verdict', 'qualify_report', 'qualify_fixes_info', 'qualify_inputs_check',
                            'streaming_forecast', 'tape_drive_lock'}


@pytest.mark.parametrize('name', ACTIONS)
def test_the_documentation_is_the_spec_the_action_validates_with(name):
    found = differences(documented(name), validated(name))
    assert not found, 'plugins/modules/%s.py DOCUMENTATION and the spec of plugins/action/%s.py differ:\n%s' % (
        name, name, '\n'.join(found))


@pytest.mark.parametrize('name', ACTIONS)
def test_options_that_go_together_name_each_other(name):
    docs = documented(name)
    unsaid = []
    for constraint, group in groups(name):
        for option in group:
            description = docs[option].get('description') or ''
            text = ' '.join(description) if isinstance(description, list) else description
            unsaid.extend('%s (%s with %s) does not name O(%s)' % (option, constraint, ', '.join(group), other)
                          for other in group if other != option and 'O(%s)' % other not in text)
    assert not unsaid, 'plugins/modules/%s.py DOCUMENTATION: %s' % (name, '; '.join(unsaid))


def test_the_groups_are_read():
    assert groups('streaming_forecast') == [('mutually_exclusive', ('feed_mb_s', 'feed_series_mb_s')),
                                            ('required_one_of', ('feed_mb_s', 'feed_series_mb_s'))]


def test_each_kind_of_drift_is_found():
    # qualify_report's own documentation, drifted one way per key: each is a line of its own
    docs, spec = documented('qualify_report'), validated('qualify_report')
    assert differences(docs, spec) == []
    drifted = copy.deepcopy(docs)
    drifted['failing_classes']['default'] = ['SHOE-SHINING']
    drifted['failing_classes']['choices'] = ['SHOE-SHINING', 'MISCONFIGURED']
    drifted['failing_classes']['elements'] = 'raw'
    drifted['report_dir']['required'] = False
    drifted['run']['type'] = 'raw'
    drifted['compare_to']['aliases'] = ['earlier']
    drifted['fail_when_failing'] = drifted.pop('fail_on_failing_drives')
    assert differences(drifted, spec) == [
        'fail_when_failing: documented, not in the spec',
        'fail_on_failing_drives: in the spec, not documented',
        "compare_to: aliases is ['earlier'] in DOCUMENTATION, [] in the spec",
        "failing_classes: elements is 'raw' in DOCUMENTATION, 'str' in the spec",
        "failing_classes: default is ['SHOE-SHINING'] in DOCUMENTATION, ['SHOE-SHINING', 'MISCONFIGURED'] in the "
        "spec",
        "failing_classes: choices is ['SHOE-SHINING', 'MISCONFIGURED'] in DOCUMENTATION, "
        "['STREAMING', 'SPEED-MATCHED', 'SHOE-SHINING', 'MISCONFIGURED'] in the spec",
        'report_dir: required is False in DOCUMENTATION, True in the spec',
        "run: type is 'raw' in DOCUMENTATION, 'dict' in the spec",
    ]
    # an option left without a type is a str on both sides; sub-options are compared as options
    assert differences({'a': {'description': 'x'}}, {'a': {}}) == []
    assert differences({'a': {'type': 'dict', 'suboptions': {'b': {'type': 'int'}}}},
                       {'a': {'type': 'dict', 'options': {'b': {'type': 'str'}}}}) == [
        "a.b: type is 'int' in DOCUMENTATION, 'str' in the spec"]


# ---------------------------------------------------------------- the tasks that call them

class _AnyTagLoader(yaml.SafeLoader):
    """A safe loader that reads Ansible's tags (!unsafe, !vault) as their plain values."""


def _untagged(loader, suffix, node):
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node)
    return loader.construct_scalar(node)


_AnyTagLoader.add_multi_constructor('!', _untagged)

TASK_FILES = sorted(
    path for pattern in ('roles/*/tasks/*.yml', 'roles/*/handlers/*.yml', 'playbooks/*.yml', 'molecule/*/*.yml',
                         'tests/integration/targets/*/*.yml', 'tests/integration/targets/*/tasks/*.yml')
    for path in glob.glob(os.path.join(COLLECTION, pattern)))


def calls(data, where):
    """[(where, action, its arguments)] of every call of an action plugin (by FQCN) anywhere in ``data``."""
    out = []
    if isinstance(data, dict):
        for key, value in data.items():
            name = key[len(FQCN):] if isinstance(key, str) and key.startswith(FQCN) else None
            if name in ACTIONS:
                out.append((where, name, value))
            else:
                out.extend(calls(value, where))
    elif isinstance(data, list):
        for item in data:
            out.extend(calls(item, where))
    return out


def every_call():
    found = []
    for path in TASK_FILES:
        with open(path, encoding='utf-8') as handle:
            found.extend(calls(list(yaml.load_all(handle, Loader=_AnyTagLoader)),
                               os.path.relpath(path, COLLECTION)))
    for name in ACTIONS:
        found.extend(calls(yaml.safe_load(stub(name).EXAMPLES), 'plugins/modules/%s.py EXAMPLES' % name))
    return found


def test_the_roles_playbooks_and_examples_call_the_actions_with_their_options():
    found = every_call()
    # the role's verdict, report and lock tasks, and each stub's examples, are among them
    called = set((where, name) for where, name, _args in found)
    assert {('roles/qualify/tasks/verdict.yml', 'qualify_verdict'),
            ('roles/qualify/tasks/report.yml', 'qualify_report'),
            ('roles/qualify/tasks/lock.yml', 'tape_drive_lock')} <= called
    assert set(name for where, name in called if where.endswith('EXAMPLES')) == set(ACTIONS)
    wrong = []
    for where, name, args in found:
        spec = validated(name)
        known = set(spec) | set(alias for option in spec.values() for alias in option.get('aliases') or [])
        given = set(args) if isinstance(args, dict) else set()
        wrong.extend('%s: tapeops.qualify.%s has no option %s' % (where, name, option)
                     for option in sorted(given - known))
    assert not wrong, '\n'.join(wrong)
