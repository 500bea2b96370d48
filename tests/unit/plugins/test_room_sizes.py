# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Smaller rooms: no class over 300 lines and no function over 60 anywhere in plugins/.

Every class and function (methods and nested functions too) is measured with ``ast`` from its ``class`` / ``def``
line to its last line, docstring included. ``ALLOWED`` names the one that may be longer: the forecast's time-step
loop (on purpose, with its reason). An entry that no longer needs its place fails the test, so the list only
shrinks.
"""

from __future__ import annotations

import ast
import os

PLUGINS = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'plugins')

MAX_LINES = {'class': 300, 'function': 60}

# (path under plugins/, qualified name) -> why it may be longer
ALLOWED = {
    ('module_utils/_judge/_forecast.py', '_simulate'):
        "the forecast's time-step loop: the state of every simulated tick (buffer, speed step, head motion, "
        "timers, the marks' flush, the trace) changes together; split up, it would pass that state back and "
        "forth on every tick of hours of simulated time",
}


def rooms(source, filename='<source>'):
    """[(qualified name, 'class' or 'function', first line, lines)] of every class and function in ``source``."""
    out = []

    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                kind = 'class' if isinstance(child, ast.ClassDef) else 'function'
                out.append((name, kind, child.lineno, child.end_lineno - child.lineno + 1))
                walk(child, name + '.')
            else:
                walk(child, prefix)

    walk(ast.parse(source, filename), '')
    return out


def oversized():
    """{(path under plugins/, qualified name): (kind, first line, lines)} of every room over its size."""
    found = {}
    for directory, _dirs, files in os.walk(PLUGINS):
        for file_name in sorted(files):
            if not file_name.endswith('.py'):
                continue
            path = os.path.join(directory, file_name)
            relpath = os.path.relpath(path, PLUGINS).replace(os.sep, '/')
            with open(path, encoding='utf-8') as handle:
                source = handle.read()
            for name, kind, line, lines in rooms(source, path):
                if lines > MAX_LINES[kind]:
                    found[(relpath, name)] = (kind, line, lines)
    return found


def test_no_class_or_function_is_over_its_size():
    over = ['%s:%d %s %s: %d lines (at most %d)' % (path, line, kind, name, lines, MAX_LINES[kind])
            for (path, name), (kind, line, lines) in sorted(oversized().items()) if (path, name) not in ALLOWED]
    assert not over, 'split these into named steps (small functions or classes, each one job):\n' + '\n'.join(over)


def test_every_allowed_entry_still_needs_its_place():
    found = oversized()
    stale = ['%s %s' % key for key in sorted(ALLOWED) if key not in found]
    assert not stale, 'now within the sizes (or gone): remove from ALLOWED in %s:\n%s' % (
        os.path.basename(__file__), '\n'.join(stale))


def test_the_measure_counts_methods_nested_functions_and_docstrings():
    body = '\n'.join('        x = %d' % i for i in range(58))
    source = ('class Big:\n'
              '    def step(self):\n'
              '        """One job."""\n'
              '%s\n'
              '\n'
              '        def inner():\n'
              '            return 1\n'
              '        return inner\n' % body)
    measured = dict((name, (kind, line, lines)) for name, kind, line, lines in rooms(source))
    # the class from line 1 to the last line, 65; the method from its def (line 2): 64; the nested function 2
    assert measured == {'Big': ('class', 1, 65), 'Big.step': ('function', 2, 64),
                        'Big.step.inner': ('function', 63, 2)}
    assert measured['Big.step'][2] > MAX_LINES['function'] >= measured['Big.step.inner'][2]
