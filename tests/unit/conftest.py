# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Fixtures shared by the unit tests of every plugin type."""

from __future__ import annotations

import copy

import pytest


class RecordedLabRun:
    """A recorded lab run (tests/unit/fixtures/lab_runs/) judged by today's drive model.

    The drive model gained ``sync_mark_s`` (the cost of a synchronous file mark beyond its drain) after
    the lab runs were recorded. Today's lab inventory sets it per drive to the emulated drive's back-hitch
    (lab/tapelab.py, model_overrides: the emulator's rule 6), which is what the recorded run's forecasts
    used then; ``settings`` gives the recorded settings that value, and ``strip`` takes the field out
    of what is compared, so that every other number of the recorded documents is still pinned.
    """

    @staticmethod
    def model(model):
        model = dict(model or {})
        if 'backhitch_s' in model and 'sync_mark_s' not in model:
            model['sync_mark_s'] = model['backhitch_s']
        return model

    @classmethod
    def settings(cls, settings):
        settings = dict(settings)
        if 'model' in settings:
            settings['model'] = cls.model(settings['model'])
        return settings

    @classmethod
    def doc(cls, doc):
        doc = copy.deepcopy(doc)
        for drive in doc.get('drives') or []:
            if isinstance(drive.get('settings'), dict):
                drive['settings'] = cls.settings(drive['settings'])
        return doc

    @classmethod
    def strip(cls, value):
        if isinstance(value, dict):
            return dict((k, cls.strip(v)) for k, v in value.items() if k != 'sync_mark_s')
        if isinstance(value, list):
            # the field, in a list of estimated fields, and the model's note that the inventory set it
            return [cls.strip(v) for v in value
                    if v != 'sync_mark_s' and not (isinstance(v, str) and v.startswith('sync_mark_s set per drive'))]
        return value


@pytest.fixture
def recorded_lab_run():
    """:class:`RecordedLabRun`: a recorded lab run as today's lab inventory gives it."""
    return RecordedLabRun
