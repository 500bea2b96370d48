# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Read a run directory's host document and validate it against docs/host-report.schema.json.

Every integration test that reads ``<run dir>/hosts/<host>.json`` reads it
through ``load``, so each lab run's documents are checked against the schema
the collection ships (docs/reports.md, "Host JSON").
"""

from __future__ import annotations

import functools
import json
import os

import jsonschema

SCHEMA = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                      'docs', 'host-report.schema.json')


@functools.lru_cache(maxsize=1)
def validator():
    with open(SCHEMA, encoding='utf-8') as handle:
        return jsonschema.Draft202012Validator(json.load(handle))


def load(path):
    """The host document at ``path``, validated (jsonschema.ValidationError names what does not fit)."""
    with open(path, encoding='utf-8') as handle:
        doc = json.load(handle)
    validator().validate(doc)
    return doc
