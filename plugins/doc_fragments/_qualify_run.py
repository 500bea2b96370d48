# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations


class ModuleDocFragment:
    """The run directory a controller-side module reads a qualify run's host documents from (private)."""

    DOCUMENTATION = r'''
options:
  run_dir:
    description:
      - The run directory of a qualify run (it holds C(hosts/<host>.json)), for example
        C(reports/20261123T195725Z). A directory that does not exist is an error.
    type: path
    required: true
'''
