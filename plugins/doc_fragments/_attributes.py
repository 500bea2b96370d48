# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations


class ModuleDocFragment:
    """Attribute documentation shared by the collection's modules (private)."""

    # Standard documentation fragment
    DOCUMENTATION = r'''
options: {}
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
'''

    # Should be used together with the standard fragment
    INFO_MODULE = r'''
options: {}
attributes:
  check_mode:
    support: full
    details:
      - This action does not modify state.
  diff_mode:
    support: N/A
    details:
      - This action does not modify state.
'''

    # Should be used together with the standard fragment: measurement modules
    BENCHMARK = r'''
options: {}
attributes:
  check_mode:
    support: full
    details:
      - In check mode nothing is read from sources nor written to a tape; the module validates its
        input and safety checks and returns the plan it would run.
  diff_mode:
    support: none
  idempotent:
    description: When run twice with the same parameters, the second run changes nothing.
    support: N/A
'''

    # Should be used together with the standard fragment: modules backed by a
    # controller-side action plugin
    ACTION_PLUGIN = r'''
options: {}
attributes:
  action:
    description: Indicates this has a corresponding action plugin so some parts of the options can be executed on the controller.
    support: full
  async:
    description: Supports being used with the C(async) keyword.
    support: none
'''

    FACTS = r'''
options: {}
attributes:
  facts:
    description: Action returns an C(ansible_facts) dictionary that will update existing host facts.
'''
