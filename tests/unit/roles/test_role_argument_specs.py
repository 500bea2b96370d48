# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every role's defaults/main.yml and meta/argument_specs.yml agree (as community.sops' CI checks).

A variable in defaults is documented in every entry point's spec; where the spec gives a default, a
literal default in defaults/main.yml is the same (a templated one, such as dp_omnirc's, is described in
words); a spec option with a default has it in defaults/main.yml.
"""

from __future__ import annotations

import os

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
ROLES = sorted(d for d in os.listdir(os.path.join(ROOT, 'roles'))
               if os.path.isfile(os.path.join(ROOT, 'roles', d, 'meta', 'argument_specs.yml')))


def _load(role, *path):
    with open(os.path.join(ROOT, 'roles', role, *path), encoding='utf-8') as handle:
        return yaml.safe_load(handle) or {}


@pytest.mark.parametrize('role', ROLES)
def test_defaults_and_argument_specs_agree(role):
    defaults = _load(role, 'defaults', 'main.yml')
    specs = _load(role, 'meta', 'argument_specs.yml')['argument_specs']
    for entry_point, spec in specs.items():
        options = spec.get('options') or {}
        missing = sorted(set(defaults) - set(options))
        assert not missing, '%s %s: in defaults/main.yml, not in argument_specs: %s' % (role, entry_point, missing)
        for name, value in defaults.items():
            if (isinstance(value, str) and '{{' in value) or 'default' not in options[name]:
                continue
            assert options[name].get('default') == value, (role, entry_point, name, options[name].get('default'), value)
        undefaulted = sorted(n for n, o in options.items() if 'default' in o and n not in defaults)
        assert not undefaulted, '%s %s: a spec default without a defaults/main.yml entry: %s' % (
            role, entry_point, undefaulted)


def test_the_qualify_role_has_its_four_entry_points_and_profiles():
    specs = _load('qualify', 'meta', 'argument_specs.yml')['argument_specs']
    assert sorted(specs) == ['main', 'observe', 'report', 'run']
    assert specs['main']['options']['qualify_profile']['choices'] == ['quick', 'full', 'what_if', 'observe']
    profiles = _load('qualify', 'vars', 'main.yml')['__qualify_profiles']
    assert sorted(profiles) == ['full', 'observe', 'quick', 'what_if']
    # the observe entry point measures nothing of its own: its profile sets only how often the waits ask
    assert profiles['observe'] == {'poll_seconds': 30}
    # the what-if reads the scaling curve up to twice the streams and writes no tape: it has no sweep keys
    assert profiles['what_if']['source_scaling_factor'] == 2 and 'block_sizes' not in profiles['what_if']
    assert profiles['full']['mechanics'] is True and profiles['quick']['mechanics'] is False
