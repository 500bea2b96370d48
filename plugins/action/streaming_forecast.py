# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Controller side of tapeops.qualify.streaming_forecast (documentation in plugins/modules/)."""

from __future__ import annotations


from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _drive_model
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _forecast
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _resolve
from ansible_collections.tapeops.qualify.plugins.plugin_utils._action import QualifyAction

ARGUMENT_SPEC = {
    'drive': {'type': 'dict', 'required': True},
    'feed_mb_s': {'type': 'float'},
    'feed_series_mb_s': {'type': 'list', 'elements': 'float'},
    'tape_ratio': {'type': 'float'},
    'path_mb_s': {'type': 'float'},
    'block_size_bytes': {'type': 'int'},
    'segment_size_mb': {'type': 'float'},
    'filemark_mode': {'type': 'str', 'default': 'immediate', 'choices': list(_forecast.FILEMARK_MODES)},
    'filemark_seconds': {'type': 'float'},
    'data_gb': {'type': 'float'},
    'streams': {'type': 'int'},
    'min_samples': {'type': 'int', 'default': _forecast.MIN_SAMPLES},
    'trace': {'type': 'bool', 'default': False},
}
MUTUALLY_EXCLUSIVE = [('feed_mb_s', 'feed_series_mb_s')]
REQUIRED_ONE_OF = [('feed_mb_s', 'feed_series_mb_s')]
_DRIVE_KEYS = ('generation', 'form_factor', 'vendor', 'interface')


def drive_setting(drive):
    """The ``drive`` option as the drive resolver reads a drive's tapeops_drives entry: ``generation``,
    ``form_factor``, ``vendor``, ``interface``, and its drive model fields as ``model``."""
    unknown = sorted(set(drive) - set(_DRIVE_KEYS) - set(_drive_model.OVERRIDABLE))
    if unknown:
        raise ValueError('drive has unknown keys %s; it takes %s and any drive model field (%s).' % (
            ', '.join(unknown), ', '.join(_DRIVE_KEYS), ', '.join(_drive_model.OVERRIDABLE)))
    if drive.get('generation') in (None, ''):
        raise ValueError('drive.generation is required (e.g. "LTO-9", "LTO-8 HH", 7).')
    setting = dict((k, drive.get(k)) for k in _DRIVE_KEYS)
    setting['model'] = dict((k, drive[k]) for k in _drive_model.OVERRIDABLE if drive.get(k) is not None)
    return setting


class ActionModule(QualifyAction):

    ARGUMENT_SPEC = ARGUMENT_SPEC
    MUTUALLY_EXCLUSIVE = MUTUALLY_EXCLUSIVE
    REQUIRED_ONE_OF = REQUIRED_ONE_OF
    ERRORS = (ValueError,)   # drive_setting's, the resolver's and the model's: they name the option and what it takes

    def act(self, args, task_vars):
        # a drive named, not discovered: the collection's one drive resolver, as for an inventory entry
        spec = _resolve.resolve(setting=drive_setting(args['drive']), given_in='drive')[1]
        result = _forecast.forecast(
            spec, feed_mb_s=args['feed_mb_s'], feed_series_mb_s=args['feed_series_mb_s'],
            tape_ratio=args['tape_ratio'], path_mb_s=args['path_mb_s'], segment_size_mb=args['segment_size_mb'],
            filemark_mode=args['filemark_mode'], filemark_seconds=args['filemark_seconds'],
            data_gb=args['data_gb'], block_size_bytes=args['block_size_bytes'], streams=args['streams'],
            min_samples=args['min_samples'], trace=args['trace'])
        if not args['trace']:
            result.pop('trace', None)
        result['drive_model'] = spec.as_dict()
        return result
