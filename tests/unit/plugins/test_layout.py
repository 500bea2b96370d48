# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The unit tests of module_utils mirror the source (docs/development.md, "Layout").

A test of ``plugins/module_utils/<folder>/_<name>.py`` is
``tests/unit/plugins/module_utils/<folder>/test_<name>[_<part>].py``; a test of a ground-floor file
(``plugins/module_utils/_<name>.py``) sits in ``tests/unit/plugins/module_utils/`` itself. A test that runs
several modules together is named after the first and says so: ``test_<name>_<part>_spans_<other>.py``,
``<other>`` a source file too. Each test folder is a package (an empty ``__init__.py``): pytest's default
import mode names a test module after its file alone unless its folder is a package, and
``_judge/test_mechanics.py`` and ``_measure/test_mechanics.py`` would then be one module. ``ALLOWED`` names
the files that are no test of one source file, with why; an entry whose file is gone fails the test.
"""

from __future__ import annotations

import os
import re

ROOT = os.path.join(os.path.dirname(__file__), '..', '..', '..')
SOURCE = os.path.join(ROOT, 'plugins', 'module_utils')
TESTS = os.path.join(ROOT, 'tests', 'unit', 'plugins', 'module_utils')

# path under tests/unit/plugins/module_utils/ -> why it is not named after one source file
ALLOWED = {
    # helpers the tests import by their full name (ansible_collections.tapeops.qualify.tests.unit...), no tests
    '_lab_replay.py': "helper: the recorded lab drives played back through the write benchmark",
    '_tape_fixtures.py': "helper: reads the real captures under tests/unit/fixtures/",
    'report_cases.py': "helper: drives, sources and write sweeps shaped like the modules' results",
    # spans the floors: the parsers of _tools, _measure/_tape_discovery and _config, every one on every fixture
    'test_parsers_fuzz.py': "every parser against every real fixture, cut and damaged",
}


def sources(source=SOURCE):
    """``{folder: {name}}``: each source file's name without its leading underscore, '' for the ground floor."""
    found = {}
    for entry in sorted(os.listdir(source)):
        path = os.path.join(source, entry)
        if entry.startswith('_') and entry.endswith('.py') and entry != '__init__.py':
            found.setdefault('', set()).add(entry[1:-3])
        elif entry.startswith('_') and os.path.isfile(os.path.join(path, '__init__.py')):
            found[entry] = set(f[1:-3] for f in os.listdir(path)
                               if f.startswith('_') and f.endswith('.py') and f != '__init__.py')
    return found


def _named_after(stem, names):
    return any(stem == name or stem.startswith(name + '_') for name in names)


def _misnamed(folder, file_name, floors):
    """Why ``<folder>/<file_name>`` is not named after a source file of ``folder``, or None."""
    where = 'plugins/module_utils/%s' % (folder + '/' if folder else '')
    match = re.match(r'test_(\w+)\.py$', file_name)
    if not match:
        return 'not a test_*.py file'
    stem = match.group(1)
    if not _named_after(stem, floors[folder]):
        return 'named after no source file of %s (%s)' % (where, ', '.join(sorted('_%s.py' % n for n in floors[folder])))
    if '_spans_' in stem and not _named_after(stem.split('_spans_', 1)[1], set().union(*floors.values())):
        return 'spans no source file of plugins/module_utils/ after "_spans_"'
    return None


def _test_folder_problems(tests, floors, allowed):
    for folder in sorted(os.listdir(tests)):
        path = os.path.join(tests, folder)
        if not os.path.isdir(path) or folder == '__pycache__':
            continue
        if folder not in floors:
            yield folder + '/', 'no folder plugins/module_utils/%s/ to mirror' % folder
        elif not os.path.isfile(os.path.join(path, '__init__.py')):
            yield folder + '/', 'no __init__.py: pytest would take its test_<name>.py for another folder\'s'
    for directory, dirs, files in os.walk(tests):
        dirs[:] = sorted(d for d in dirs if d != '__pycache__')
        folder = os.path.relpath(directory, tests).replace(os.sep, '/')
        folder = '' if folder == '.' else folder
        for file_name in sorted(files):
            rel = folder + '/' + file_name if folder else file_name
            if rel in allowed or (folder and file_name == '__init__.py'):
                continue
            if folder not in floors:
                yield rel, 'in no folder that mirrors plugins/module_utils/'
                continue
            why = _misnamed(folder, file_name, floors)
            if why:
                yield rel, why


def misplaced(tests=TESTS, source=SOURCE, allowed=None):
    """``[(path under tests, why)]``: the files of ``tests`` that do not mirror ``source``."""
    return list(_test_folder_problems(tests, sources(source), ALLOWED if allowed is None else allowed))


def test_every_test_file_sits_in_the_folder_of_its_source_and_starts_with_its_name():
    wrong = ['tests/unit/plugins/module_utils/%s: %s' % item for item in misplaced()]
    assert not wrong, (
        'a test of plugins/module_utils/<folder>/_<name>.py is tests/unit/plugins/module_utils/<folder>/'
        'test_<name>[_<part>].py (ground-floor files: no <folder>); one that runs several modules is '
        'test_<name>_<part>_spans_<other>.py; anything else goes into ALLOWED in %s with why:\n%s'
        % (os.path.basename(__file__), '\n'.join(wrong)))


def test_every_allowed_entry_is_still_there():
    gone = [path for path in sorted(ALLOWED) if not os.path.isfile(os.path.join(TESTS, path))]
    assert not gone, 'gone: remove from ALLOWED in %s:\n%s' % (os.path.basename(__file__), '\n'.join(gone))


def _tree(base, files):
    for rel, text in files.items():
        path = os.path.join(str(base), rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w', encoding='utf-8') as handle:
            handle.write(text)


def test_the_rule_names_each_misplaced_file_and_why(tmp_path):
    _tree(tmp_path / 'src', {'_run.py': '', '_judge/__init__.py': '', '_judge/_verdict.py': '',
                             '_judge/_host.py': '', '_tools/__init__.py': '', '_tools/_mt.py': '',
                             '_reporting/__init__.py': '', '_reporting/_render.py': ''})
    _tree(tmp_path / 'tests', {
        'test_run.py': '', 'report_cases.py': '', 'test_run_store.py': '',
        '_judge/__init__.py': '', '_judge/test_verdict.py': '', '_judge/test_verdict_link.py': '',
        '_judge/test_host_spans_render.py': '',
        '_judge/test_verdicts.py': '',                 # verdicts is no source: verdict is
        '_judge/test_host_spans_report.py': '',        # _report.py is no source here
        '_tools/__init__.py': '', '_tools/test_verdict.py': '',     # _verdict.py is in _judge
        '_reporting/test_render.py': '',               # no __init__.py in _reporting/
        '_lost/test_mt.py': '',                        # no plugins/module_utils/_lost/
        '_judge/deeper/test_verdict.py': '',
        'test_verdict.py': '',                         # _verdict.py is not on the ground floor
        '_judge/verdict_cases.py': ''})
    found = dict(misplaced(str(tmp_path / 'tests'), str(tmp_path / 'src'), allowed={'report_cases.py': 'helper'}))
    assert sorted(found) == ['_judge/deeper/test_verdict.py', '_judge/test_host_spans_report.py',
                             '_judge/test_verdicts.py', '_judge/verdict_cases.py', '_lost/', '_lost/test_mt.py',
                             '_reporting/', '_tools/test_verdict.py', 'test_verdict.py']
    assert found['_tools/test_verdict.py'] == 'named after no source file of plugins/module_utils/_tools/ (_mt.py)'
    assert found['_judge/test_host_spans_report.py'].startswith('spans no source file')
    assert found['_reporting/'].startswith('no __init__.py')
    assert found['_judge/verdict_cases.py'] == 'not a test_*.py file'
