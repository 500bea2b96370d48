# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The backup application's settings a drive is judged with, and where each came from.

Private to this collection: may change without notice. Controller side:
``_host`` calls it as it assembles a host's document.

Precedence, per setting (block size, segment size):

1. the inventory: the drive's ``tapeops_drives`` entry, then ``tapeops_backup``;
2. the storage daemon's configuration on the host (Bacula / Bareos,
   tapeops.qualify.bacula_sd_info): the tape Device whose Archive Device is
   this drive (the same st device: ``/dev/nst0``, ``/dev/st0``, a
   ``/dev/tape/by-id`` link to either), its Maximum Block Size and Maximum File
   Size as set there, or the daemon's documented default where the Device
   sets none; on a NetBackup media server (tapeops.qualify.netbackup_buffers_info),
   SIZE_DATA_BUFFERS, the block size bptm writes to every drive of the host,
   or NetBackup's documented default (65536) where the file does not exist;
3. what the verdict takes itself: the application's default block size
   (``_verdict.DEFAULT_BLOCK_BYTES``: Amanda's 32 KiB), else the drive's st
   block size; the application's default segment (``_verdict.DEFAULT_SEGMENT_MB``).

The drive's document entry keeps the outcome as ``setting_sources``; the
verdict gets the values, their basis (``sources``) and what the configuration
said for the drive (``sd``: the ``sd_config`` fact; ``netbackup``: the
``netbackup_config`` fact).
"""

from __future__ import annotations

from ansible_collections.tapeops.qualify.plugins.module_utils import _records
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _verdict

# What a Device sets none of reads as: not set, no value, no basis
_NOT_SET = _records.SdSetting()

# The settings a storage daemon's tape Device gives the verdict: (verdict config key, SdDevice field, directive)
SD_SETTINGS = (('block_size_bytes', 'maximum_block_size', 'Maximum Block Size'),
               ('segment_size_mb', 'maximum_file_size', 'Maximum File Size'))
INVENTORY = ('tapeops_drives', 'tapeops_backup')
# The keys of a tapeops_drives entry that override tapeops_backup's for that drive
SETTING_KEYS = ('block_size_bytes', 'segment_size_mb', 'immediate_filemarks', 'concurrency', 'job_size_mb',
                'job_gap_s')


def _st_names(info):
    names = set(_records.st_name(getattr(info, key, None)) for key in ('nst', 'st'))
    names.discard(None)
    return names


def sd_devices_for(info, sd):
    """The storage daemon's tape Devices on this drive (the same st device), in the configuration's order.

    ``info``: the drive's DriveIdentity; ``sd``: the host's StorageDaemonConfig. SdDevice records.
    """
    names = _st_names(info)
    return [d for d in (sd.devices if sd is not None else None) or [] if d.st in names]


def _value(key, setting):
    """The verdict's value of a Device setting (bytes for the block size, decimal MB for the segment), or None."""
    if setting.error or not isinstance(setting.value, int) or isinstance(setting.value, bool) or setting.value <= 0:
        return None
    return setting.value if key == 'block_size_bytes' else setting.value / 1e6


def _inventory(key, setting, backup):
    """(where, value) of the inventory's ``key`` for the drive, or (None, None)."""
    for where, data in zip(INVENTORY, (setting, backup)):
        if isinstance(data, dict) and data.get(key) is not None:
            return where, data[key]
    return None, None


def _sd_fact(info, sd):
    """What the configuration says for this drive, as the ``sd_config`` fact's data; and the Device read, or None."""
    base = {'software': sd.software, 'config_path': sd.config_path, 'files': sd.files or [],
            'not_read': sd.not_read or [], 'nst': info.nst}
    if sd.error or not sd.files:
        return dict(base, status='not_read', error=sd.error or 'nothing was read'), None
    matched = sd_devices_for(info, sd)
    if not matched:
        devices = [{'name': d.name, 'archive_device': d.archive_device, 'st': d.st, 'note': d.device_note}
                   for d in sd.devices or []]
        return dict(base, status='no_device', devices=devices, other_devices=len(sd.other_devices or [])), None
    device = matched[0]
    return dict(base, status='matched', device=device.name, file=device.file, line=device.line,
                archive_device=device.archive_device, others=[d.name for d in matched[1:]], settings=[]), device


def drive_config(info, setting, backup, sd, nb=None):
    """``(config, setting_sources)`` of one drive: the settings the verdict judges it with, and where each is from.

    ``info``: the drive's DriveIdentity; ``setting``: its tapeops_drives entry; ``backup``: tapeops_backup;
    ``sd``: the host's StorageDaemonConfig or None; ``nb``: the host's NetBackupBuffers or None. ``config`` is
    what ``_verdict.evaluate`` takes (with ``sources``, ``sd`` and ``netbackup``); ``setting_sources`` the drive
    entry's, None when nothing was set.
    """
    setting = setting if isinstance(setting, dict) else {}
    backup = backup if isinstance(backup, dict) else {}
    config = dict(backup)
    config.update(dict((k, setting[k]) for k in SETTING_KEYS if setting.get(k) is not None))
    sources = {}
    for key in SETTING_KEYS:
        where, value = _inventory(key, setting, backup)
        if where:
            sources[key] = {'from': 'inventory', 'where': '%s.%s' % (where, key), 'value': value}
    fact = device = None
    if sd is not None:
        fact, device = _sd_fact(info, sd)
    for key, field, directive in SD_SETTINGS if device else ():
        read = getattr(device, field) or _NOT_SET
        value = _value(key, read)
        entry = {'key': key, 'directive': directive, 'text': read.text, 'value': read.value, 'source': read.source,
                 'basis': read.basis, 'where': read.where, 'error': read.error, 'used': False}
        from_sd = {'from': 'sd_config' if read.source == 'configuration' else 'sd_default', 'value': value,
                   'software': fact['software'], 'device': fact['device'], 'file': fact['file'],
                   'directive': directive, 'text': read.text, 'where': read.where, 'basis': read.basis}
        if key in sources:
            entry['overridden_by'] = sources[key]['where']
            sources[key]['overrides'] = from_sd
        elif value is not None:
            entry['used'] = True
            config[key] = value
            sources[key] = from_sd
        fact['settings'].append(entry)
    if fact is not None:
        config['sd'] = fact
    if nb is not None:
        config['netbackup'] = netbackup_settings(nb, config, sources)
    config['sources'] = dict((k, v['from']) for k, v in sources.items())
    return config, sources or None


def complete_sources(sources, numbers, software=None):
    """``setting_sources`` with what the verdict took itself (the drive's block size, the application's default
    block size or segment).

    ``numbers``: the drive's verdict's numbers (None: no verdict).
    """
    numbers = numbers or {}
    out = dict(sources or {})
    if 'block_size_bytes' not in out and numbers.get('block_size_basis') == 'drive':
        out['block_size_bytes'] = {'from': 'drive', 'value': numbers.get('block_size_bytes'),
                                   'where': 'the drive\'s st block size (tape_drive_info block_size)'}
    if 'block_size_bytes' not in out and numbers.get('block_size_basis') == 'default':
        out['block_size_bytes'] = {'from': 'default', 'value': numbers.get('block_size_bytes'), 'software': software,
                                   'basis': _verdict.DEFAULT_BLOCK_BASIS.get(software)}
    if 'segment_size_mb' not in out and numbers.get('segment_size_basis') == 'default':
        out['segment_size_mb'] = {'from': 'default', 'value': numbers.get('segment_size_mb'), 'software': software,
                                  'basis': _verdict.DEFAULT_SEGMENT_BASIS.get(software)}
    return out or None


# ---------------------------------------------------------------------------
# NetBackup: the media server's buffer files, one set for every drive of the host (bptm reads them for each job)

# The settings a NetBackup media server's files give the verdict: (verdict config key, NetBackupBuffers field,
# NetBackup's name)
NB_SETTINGS = (('block_size_bytes', 'size_data_buffers', 'SIZE_DATA_BUFFERS'),)
# The files the ``netbackup_config`` fact reports, in NetBackupBuffers' order
NB_FILES = ('size_data_buffers', 'number_data_buffers', 'number_data_buffers_restore', 'net_buffer_sz')


def _nb_count(read):
    value = read.value if read is not None else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 and not read.error else None


def netbackup_settings(nb, config, sources):
    """The ``netbackup_config`` fact of a drive; SIZE_DATA_BUFFERS set in ``config`` and ``sources`` where the
    inventory gives no block size.

    ``nb``: the host's NetBackupBuffers record; ``config`` and ``sources`` are drive_config's, changed in
    place. The fact lists every file read (``files``), how each of NB_SETTINGS was used (``settings``) and the
    shared memory NUMBER_DATA_BUFFERS x SIZE_DATA_BUFFERS of one drive (of one multiplexed stream), or None when
    either is not known.
    """
    fact = {'netbackup_dir': nb.netbackup_dir, 'settings': []}
    if nb.error or nb.size_data_buffers is None:
        return dict(fact, status='not_read', error=nb.error or 'nothing was read')
    keys = ('name', 'path', 'text', 'value', 'source', 'basis', 'error', 'note')
    fact['files'] = [dict((k, getattr(getattr(nb, key), k)) for k in keys) for key in NB_FILES
                     if getattr(nb, key) is not None]
    for key, field, name in NB_SETTINGS:
        read = getattr(nb, field) or _records.NbSetting()
        value = _value(key, read)
        entry = {'key': key, 'directive': name, 'text': read.text, 'value': read.value, 'source': read.source,
                 'basis': read.basis, 'where': read.path, 'error': read.error, 'used': False}
        from_nb = {'from': 'netbackup_config' if read.source == 'configuration' else 'netbackup_default',
                   'value': value, 'software': 'netbackup', 'file': read.path, 'directive': name,
                   'text': read.text, 'where': read.path, 'basis': read.basis}
        if key in sources:
            entry['overridden_by'] = sources[key]['where']
            sources[key]['overrides'] = from_nb
        elif value is not None:
            entry['used'] = True
            config[key] = value
            sources[key] = from_nb
        fact['settings'].append(entry)
    size, number = _nb_count(nb.size_data_buffers), _nb_count(nb.number_data_buffers)
    fact.update(status='read', size_data_buffers=size, number_data_buffers=number,
                shared_memory_bytes=size * number if size and number else None)
    return fact
