# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Imports point back along the data path (docs/development.md, "Layout"): no import from a higher floor.

Every plugin file's imports of this collection are read with ``ast`` (inside functions too) and held against
FLOORS: what each folder of plugins/ (and each single-file floor of module_utils) may import; and against
NOT_FROM: the modules of an allowed floor a floor still may not use (the reports render what the judge
decided, they never decide).
"""

from __future__ import annotations

import ast
import os

import pytest

PLUGINS = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'plugins')
PREFIX = 'ansible_collections.tapeops.qualify.plugins.'

# floor -> the floors it may import (itself always). The ground floor first, the managed host's modules and the
# controller's plugins last.
FLOORS = {
    '_errors': set(),
    '_records': set(),
    '_tools': {'_errors'},
    # the records' one reading of an st node name (_records.st_name)
    '_config': {'_errors', '_records'},
    '_run': {'_errors', '_records'},
    # the one place of the controller's sentences, worded from data: the judge and the reports both use it
    '_words': {'_records', '_tools'},
    # a module names its drive on the host with the judge's resolver and model
    '_measure': {'_errors', '_records', '_tools', '_judge'},
    # the mechanics forecast reads Bacula's Maximum File Size with the config parser (_config._bacula_conf)
    '_judge': {'_errors', '_records', '_run', '_tools', '_words', '_config'},
    '_inputs': {'_errors', '_config'},
    # the mechanics section names the timed operations as the benchmark does (_measure._mechanics.OPERATIONS)
    # and the mechanics forecast's model fields (_judge._mechanics.MODEL_FIELD)
    '_reporting': {'_errors', '_records', '_run', '_tools', '_words', '_judge', '_measure'},
    'plugin_utils': {'_errors'},
    'doc_fragments': set(),
    'filter': {'_errors', '_tools'},
    'callback': {'_errors', '_records', '_run'},
    # modules run on the managed host: nothing of the controller's (reports, run directory, input checks)
    'modules': {'_errors', '_records', '_tools', '_config', '_measure', '_judge'},
    'action': {'_errors', '_records', '_run', '_tools', '_words', '_config', '_measure', '_judge', '_inputs',
               '_reporting', 'plugin_utils'},
}

# floor -> modules (of floors it may import) it may not import: the reports render the host documents the judge
# made; the verdict, the forecast and the host document's assembly are the judge's alone (issue 24)
NOT_FROM = {
    '_reporting': {'_judge._verdict', '_judge._forecast', '_judge._host', '_judge._backup_settings'},
}


def floor_of(path):
    """The floor of a file under plugins/: its folder, or a module_utils folder or single-file module."""
    parts = os.path.relpath(path, PLUGINS).split(os.sep)
    if parts[0] != 'module_utils':
        return parts[0]
    return parts[1][:-3] if parts[1].endswith('.py') else parts[1]


def _module_utils_module(parts, name=None):
    """``_judge._verdict`` / ``_records`` of module_utils ``parts`` (after ``module_utils``), importing ``name``."""
    if len(parts) == 1 and name is not None and os.path.isdir(os.path.join(PLUGINS, 'module_utils', parts[0])):
        return '%s.%s' % (parts[0], name)      # from module_utils._judge import _verdict: a module of the folder
    return '.'.join(parts[:2])


def imported_modules(path):
    """[(line, module)] of the collection's plugins ``path`` imports: a module_utils module by its name there
    (``_judge._verdict``, ``_records``), anything else by its plugins/ folder (``plugin_utils``)."""
    with open(path, encoding='utf-8') as handle:
        tree = ast.parse(handle.read(), path)
    out = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(PREFIX):
            rest = node.module[len(PREFIX):].split('.')
            if rest[0] != 'module_utils':
                names = [rest[0]]
            elif len(rest) == 1:
                names = [alias.name for alias in node.names]
            else:
                names = [_module_utils_module(rest[1:], alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(PREFIX):
                    rest = alias.name[len(PREFIX):].split('.')
                    names.append(_module_utils_module(rest[1:]) if rest[0] == 'module_utils' and len(rest) > 1
                                 else rest[0])
        out.extend((node.lineno, name) for name in sorted(set(names), key=names.index))
    return out


def imported_floors(path):
    """[(line, floor)] of the collection's plugins ``path`` imports."""
    return [(line, module.split('.')[0]) for line, module in imported_modules(path)]


def plugin_files():
    for directory, _dirs, files in os.walk(PLUGINS):
        for name in sorted(files):
            if name.endswith('.py') and name != '__init__.py':
                yield os.path.join(directory, name)


def test_every_floor_is_known():
    floors = set(floor_of(path) for path in plugin_files())
    assert floors <= set(FLOORS), 'give the new floor its place in FLOORS: %s' % sorted(floors - set(FLOORS))
    for allowed in FLOORS.values():
        assert allowed <= set(FLOORS)


@pytest.mark.parametrize('path', sorted(plugin_files()), ids=lambda p: os.path.relpath(p, PLUGINS))
def test_no_import_from_a_higher_floor(path):
    mine = floor_of(path)
    wrong = ['line %d imports %s' % (line, name) for line, name in imported_floors(path)
             if name != mine and name not in FLOORS[mine]]
    assert not wrong, '%s (floor %s, which may import %s): %s' % (
        os.path.relpath(path, PLUGINS), mine, ', '.join(sorted(FLOORS[mine])) or 'nothing', '; '.join(wrong))


@pytest.mark.parametrize('path', sorted(p for p in plugin_files() if floor_of(p) in NOT_FROM),
                         ids=lambda p: os.path.relpath(p, PLUGINS))
def test_no_import_of_a_module_the_floor_may_not_use(path):
    mine = floor_of(path)
    wrong = ['line %d imports %s' % (line, module) for line, module in imported_modules(path)
             if module in NOT_FROM[mine]]
    assert not wrong, '%s (floor %s, which may not use %s): %s' % (
        os.path.relpath(path, PLUGINS), mine, ', '.join(sorted(NOT_FROM[mine])), '; '.join(wrong))


def test_the_rule_catches_a_report_that_judges(tmp_path):
    # _reporting/_report.py assembled the host document and ran the verdict before _judge/_host.py owned it
    source = tmp_path / 'report.py'
    prefix = 'from ansible_collections.tapeops.qualify.plugins.module_utils'
    source.write_text('%s._judge import _verdict, _drive_model\n'
                      '%s._judge._forecast import forecast\n'
                      'def f():\n'
                      '    %s import _words, _records\n'
                      '    %s._records import Verdict\n' % (prefix, prefix, prefix, prefix))
    assert imported_modules(str(source)) == [
        (1, '_judge._verdict'), (1, '_judge._drive_model'), (2, '_judge._forecast'), (4, '_words'), (4, '_records'),
        (5, '_records')]
    assert [m for _line, m in imported_modules(str(source)) if m in NOT_FROM['_reporting']] == [
        '_judge._verdict', '_judge._forecast']


def test_the_rule_catches_the_import_that_went_back_up(tmp_path):
    # _judge/_fixes.py read host documents through _reporting._report before the run store had its own floor
    assert '_reporting' not in FLOORS['_judge']
    source = tmp_path / 'fixes.py'
    source.write_text('from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import _report\n'
                      'def f():\n'
                      '    from ansible_collections.tapeops.qualify.plugins.module_utils import _run, _records\n')
    assert imported_floors(str(source)) == [(1, '_reporting'), (3, '_run'), (3, '_records')]
