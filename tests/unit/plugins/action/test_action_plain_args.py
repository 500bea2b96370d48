# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The collection's actions validate their arguments as plain data (plugins/plugin_utils/_action.py, ``plain``).

Templating hands a task's values over in types of its own (ansible-core 2.19 wraps each with its origin and trust;
older releases mark strings unsafe). ``plain`` gives the same values in the builtin types, so the validator's deep
copy is a plain one; the values and their structure are unchanged.
"""

from __future__ import annotations

import collections
import copy
import json
import os

from ansible_collections.tapeops.qualify.plugins.action import qualify_verdict
from ansible_collections.tapeops.qualify.plugins.plugin_utils._action import plain

from action_harness import VERDICT_ARGS, make_action, recorded


class Wrapped(str):
    """A string in a type of its own, as templating's are."""


class WrappedInt(int):
    """An int in a type of its own."""


class WrappedFloat(float):
    """A float in a type of its own."""


class WrappedDict(dict):
    """A dict in a type of its own."""


class WrappedList(list):
    """A list in a type of its own."""


def wrap(value):
    """``value`` with every dict, list, str, int and float in a type of its own (bool cannot be subclassed)."""
    if isinstance(value, dict):
        return WrappedDict((wrap(k), wrap(v)) for k, v in value.items())
    if isinstance(value, list):
        return WrappedList(wrap(v) for v in value)
    for builtin, own in ((bool, None), (str, Wrapped), (int, WrappedInt), (float, WrappedFloat)):
        if isinstance(value, builtin):
            return own(value) if own else value
    return value


def kinds(value):
    """Every type in ``value``, walked."""
    if isinstance(value, dict):
        return {type(value)} | set().union(*[kinds(k) | kinds(v) for k, v in value.items()])
    if isinstance(value, (list, tuple)):
        return {type(value)} | set().union(*[kinds(v) for v in value])
    return {type(value)}


def test_wrapped_values_become_the_same_values_in_builtin_types():
    value = collections.OrderedDict([(Wrapped('a'), (WrappedInt(1), WrappedFloat(2.5), True, None)),
                                     ('b', WrappedList([Wrapped('x'), WrappedDict(c=Wrapped(''))]))])
    out = plain(value)
    assert out == {'a': [1, 2.5, True, None], 'b': ['x', {'c': ''}]}
    assert kinds(out) == {dict, list, str, int, float, bool, type(None)}


def test_a_verdicts_recorded_arguments_as_templating_hands_them_over_are_validated_as_plain_data(tmp_path):
    args = dict(recorded(VERDICT_ARGS, 'lab-ma1'), report_dir=str(tmp_path))
    wrapped = wrap(copy.deepcopy(args))
    assert kinds(wrapped) == {WrappedDict, WrappedList, Wrapped, WrappedInt, WrappedFloat, bool, type(None)}
    validated = make_action(qualify_verdict, wrapped).validated_args()
    assert kinds(validated) <= {dict, list, str, int, float, bool, type(None)}
    assert json.dumps(validated['write_sweep'], sort_keys=True) == json.dumps(args['write_sweep'], sort_keys=True)
    assert validated['report_dir'] == os.path.abspath(str(tmp_path)) and validated['btape'] == []
