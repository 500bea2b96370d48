# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Imports point back along the data path (docs/development.md, "Layout"): no import from a higher floor.

Every plugin file's imports of this collection are read with ``ast`` (inside functions too) and held against
FLOORS: what each folder of plugins/ (and each single-file floor of module_utils) may import.
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
    # a module names its drive on the host with the judge's resolver and model
    '_measure': {'_errors', '_records', '_tools', '_judge'},
    # the mechanics forecast reads Bacula's Maximum File Size with the config parser (_config._bacula_conf)
    '_judge': {'_errors', '_records', '_run', '_tools', '_config'},
    '_inputs': {'_errors', '_config'},
    # the mechanics section names the timed operations as the benchmark does (_measure._mechanics.OPERATIONS)
    '_reporting': {'_errors', '_records', '_run', '_tools', '_judge', '_measure'},
    'plugin_utils': {'_errors'},
    'doc_fragments': set(),
    'filter': {'_errors', '_tools'},
    'callback': {'_errors', '_records', '_run'},
    # modules run on the managed host: nothing of the controller's (reports, run directory, input checks)
    'modules': {'_errors', '_records', '_tools', '_config', '_measure', '_judge'},
    'action': {'_errors', '_records', '_run', '_tools', '_config', '_measure', '_judge', '_inputs', '_reporting',
               'plugin_utils'},
}


def floor_of(path):
    """The floor of a file under plugins/: its folder, or a module_utils folder or single-file module."""
    parts = os.path.relpath(path, PLUGINS).split(os.sep)
    if parts[0] != 'module_utils':
        return parts[0]
    return parts[1][:-3] if parts[1].endswith('.py') else parts[1]


def imported_floors(path):
    """[(line, floor)] of the collection's plugins ``path`` imports."""
    with open(path, encoding='utf-8') as handle:
        tree = ast.parse(handle.read(), path)
    out = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(PREFIX):
            rest = node.module[len(PREFIX):].split('.')
            if rest == ['module_utils']:
                names = [alias.name for alias in node.names]
            else:
                names = [rest[1] if rest[0] == 'module_utils' else rest[0]]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(PREFIX):
                    rest = alias.name[len(PREFIX):].split('.')
                    names.append(rest[1] if rest[0] == 'module_utils' and len(rest) > 1 else rest[0])
        out.extend((node.lineno, name) for name in names)
    return out


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


def test_the_rule_catches_the_import_that_went_back_up(tmp_path):
    # _judge/_fixes.py read host documents through _reporting._report before the run store had its own floor
    assert '_reporting' not in FLOORS['_judge']
    source = tmp_path / 'fixes.py'
    source.write_text('from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import _report\n'
                      'def f():\n'
                      '    from ansible_collections.tapeops.qualify.plugins.module_utils import _run, _records\n')
    assert imported_floors(str(source)) == [(1, '_reporting'), (3, '_run'), (3, '_records')]
