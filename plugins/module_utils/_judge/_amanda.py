# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""An Amanda tapetype from a qualify run: what amtapetype's hours-long pass would measure, from the run's numbers.

Private to this collection: may change without notice. Controller side: the
``qualify_amanda_tapetype`` action reads a host's document from a run directory
(``_fixes.load_host``, through ``_run``) and hands each drive to :func:`tapetype`,
which decides each number of the tapetype as data, with where it comes from
(``basis``: measured, modelled, set); ``_words`` says it, ``_config._amanda``
writes the ``define tapetype`` block (docs/amanda.md).

What Amanda means by each (amanda.conf(5), "TAPETYPE SECTION"; Amanda 3.5.1):

- ``length``: "How much data will fit on a tape, expressed in kbytes", used only
  to plan the run (the planner adds each dump's size to a total it keeps under
  ``length`` x ``runtapes``: server-src/planner.c). The data Amanda writes: with
  its own compression (``compress client fast``, the dumptype's default) the
  drive gets data that does not compress again, so the cartridge's native
  capacity, as amtapetype measures with random data (what the loaded cartridge's
  memory says it holds where it was read, else its generation's); with
  ``hardware_compression`` the native capacity times the tape compression the
  run estimated for the sources (the verdict's ``tape_ratio``).
- ``blocksize``: the block size the verdict recommends (its block size fix),
  else the one it judged (numbers.block_size_bytes), else the sweep's best.
- ``speed``: "How fast the drive will accept data ... NOT currently used by
  Amanda"; amtapetype writes what it measured writing random data at the block
  size (``kps``: 1024 bytes a second). Here: the write sweep's rate of
  incompressible data at that block size.
- ``filemark``: "How large a file mark (tape mark) is, measured in kbytes":
  tape space, which the planner adds once a dump (planner.c: ``tt_blocksize_kb
  + csize + tape_mark``) and amreport once a part (perl/Amanda/Report/human.pm).
  amtapetype measures it as the capacity one large file holds less what 100
  smaller ones hold, over the marks between them (amtapetype.pl,
  ``make_tapetype``). The run measures the TIME a synchronous mark costs, not the
  space: a back-hitch repositions the tape and writes nothing, so the seconds
  are no filemark size. The space is modelled as FILEMARK_BLOCKS blocks, above
  every amtapetype measurement on LTO that Amanda publishes; the time is stated
  beside it.
"""

from __future__ import annotations

import re

from ansible_collections.tapeops.qualify.plugins.module_utils import _words
from ansible_collections.tapeops.qualify.plugins.module_utils._config import _amanda
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _drive_model

# The space a file mark uses, in blocks of the tapetype's block size: amtapetype's measurements on LTO in
# Amanda's own examples are 0 kbytes (example/template.d/tapetypes: LTO-1, LTO-2, LTO-3) and 328, 713, 3206
# and 5419 kbytes at 256 KiB, 512 KiB, 1 MiB and 4 MiB blocks on an LTO-6 (example/quick/tapetypes, in
# tests/unit/fixtures/amanda/): 1.3 to 3.1 blocks. 4 blocks is above all of them.
FILEMARK_BLOCKS = 4
# The pattern amtapetype writes (Amanda::Xfer::Source::Random): the sweep's incompressible data
SPEED_PATTERN = 'random'


class TapetypeError(ValueError):
    """No tapetype can be made of a drive; the message says why and what to do."""


def _number(value):
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None


def block_size(verdict):
    """(bytes, basis id) of the block size the tapetype takes: the verdict's fix, judged, the sweep's best."""
    for fix in verdict.fixes or []:
        if fix.id == 'block_size' and _number(fix.value):
            return int(fix.value), 'fix'
    numbers = verdict.numbers or {}
    if _number(numbers.get('block_size_bytes')):
        return int(numbers['block_size_bytes']), 'judged'
    if _number(numbers.get('best_block_size_bytes')):
        return int(numbers['best_block_size_bytes']), 'sweep_best'
    return None, 'amanda_default'


def _loaded(identity):
    """The loaded cartridge ({capacity_gb, media, code}) of a drive's identity: tape_drive_info's ``medium``, else
    its density code read again (documents written before tape_drive_info named the medium), or {}."""
    medium = (identity.generation or {}).get('medium') if identity is not None else None
    if isinstance(medium, dict) and _number(medium.get('capacity_gb')):
        return medium
    if identity is None or not identity.density_code:
        return {}
    try:
        return _drive_model.generation_from_density(identity.density_code) or {}
    except ValueError:
        return {}


def capacity(entry):
    """(GB, what, basis id) of the cartridge: the loaded one's generation's native capacity (its density code), else
    the drive generation's; what the loaded cartridge's memory says its partition holds (MAM attribute 0x0001,
    Maximum capacity in partition, MiB: SPC-4 READ ATTRIBUTE, sg_read_attr) where that is less (a partitioned or a
    short cartridge). The native capacity is the conservative side where the memory says more: amtapetype measured
    more than it on a real LTO-6 (test_amanda)."""
    identity = entry.identity
    memory = getattr(identity, 'cartridge_memory', None)
    mib = _number(getattr(memory, 'maximum_capacity_mib', None))
    native = _native(identity)
    if mib and (native is None or mib * 1048576 / 1e9 < native[0]):
        return mib * 1048576 / 1e9, 'cartridge %s, whose memory says it holds %d MiB (MAM, Maximum capacity in ' \
            'partition)' % (getattr(memory, 'barcode', None) or 'loaded', mib), 'mam'
    if native is None:
        raise TapetypeError(_words.tapetype_no_capacity(entry.id))
    return native


def _native(identity):
    """(GB, what, basis id): the loaded cartridge's generation's native capacity, else the drive generation's; or
    None."""
    medium = _loaded(identity)
    if _number(medium.get('capacity_gb')):
        return medium['capacity_gb'], '%s cartridge loaded (density %s)' % (medium.get('media'), medium.get('code')), \
            'medium'
    model = (identity.drive_model or {}) if identity is not None else {}
    if _number(model.get('native_capacity_gb')):
        return model['native_capacity_gb'], '%s cartridge of the drive\'s own generation' % model.get('label'), \
            'drive_generation'
    return None


def speed(entry, block, verdict):
    """(MB/s, basis id) the drive path took of incompressible data at ``block``, or (None, 'not_measured')."""
    for step in (entry.write_sweep.sweep if entry.write_sweep is not None else None) or []:
        if isinstance(step, dict) and step.get('block_size') == block and step.get('pattern') == SPEED_PATTERN \
                and _number(step.get('mb_s')) and not step.get('error'):
            return float(step['mb_s']), 'measured'
    numbers = verdict.numbers or {}
    if block is not None and numbers.get('block_size_bytes') == block and _number(numbers.get('drive_path_mb_s')):
        return float(numbers['drive_path_mb_s']), 'verdict'
    return None, 'not_measured'


def mark_seconds(entry, verdict):
    """(seconds, basis id) a synchronous file mark costs the drive: measured by the write test, else modelled."""
    numbers = verdict.numbers or {}
    if _number(numbers.get('filemark_seconds_sync')):
        return float(numbers['filemark_seconds_sync']), 'measured'
    model = (entry.identity.drive_model or {}) if entry.identity is not None else {}
    if _number(model.get('sync_mark_s')):
        return float(model['sync_mark_s']), 'modelled'
    return None, None


def default_name(host, entry, label):
    """'LTO-6-lab-ma2-nst0': the drive's label, host and node, as an amanda.conf identifier."""
    text = '%s-%s-%s' % (label or 'tape', host, (entry.nst or entry.id or 'drive').rsplit('/', 1)[-1])
    text = re.sub(r'[^A-Za-z0-9_-]+', '-', text).strip('-')
    return text if text[:1].isalpha() else 'tape-' + text


def tapetype(doc, drive_id, name=None, hardware_compression=False):
    """The tapetype of drive ``drive_id`` of the host document ``doc`` (a HostReport), as data with its text.

    TapetypeError when the drive has no verdict to take it from, or no cartridge capacity is known.
    """
    entry = next((d for d in doc.drives or [] if d.id == drive_id), None)
    verdict = doc.verdict_of(drive_id)
    if entry is None or verdict is None or verdict.what_if:
        raise TapetypeError(_words.tapetype_no_verdict(doc.host, drive_id, [
            v.drive for v in doc.verdicts or [] if not v.what_if]))
    data = {'host': doc.host, 'drive': drive_id, 'run': (doc.run or {}).get('id'), 'label': verdict.drive_label,
            'hardware_compression': bool(hardware_compression)}
    data['product'] = ' '.join(str(getattr(entry.identity, k)) for k in ('vendor', 'product')
                               if getattr(entry.identity, k, None))
    data['device'] = entry.nst or drive_id
    data['block_size'], data['block_basis'] = block_size(verdict)
    gb, data['cartridge'], data['length_basis'] = capacity(entry)
    length_bytes = gb * 1e9
    numbers = verdict.numbers or {}
    if hardware_compression:
        data['tape_ratio'], data['tape_ratio_basis'] = numbers.get('tape_ratio') or 1.0, numbers.get('tape_ratio_basis')
        length_bytes *= data['tape_ratio']
    data['capacity_gb'], data['length_kbytes'] = gb, int(length_bytes // _amanda.KIB)
    data['speed_mb_s'], data['speed_basis'] = speed(entry, data['block_size'], verdict)
    data['speed_how'] = numbers.get('drive_path_basis') if data['speed_basis'] == 'verdict' else None
    data['best_block_size'], data['best_mb_s'] = numbers.get('best_block_size_bytes'), numbers.get(
        'drive_path_best_mb_s')
    data['speed_kps'] = int(data['speed_mb_s'] * 1e6 // _amanda.KIB) if data['speed_mb_s'] else None
    block = data['block_size'] or _amanda.MIN_BLOCK
    data['filemark_kbytes'] = -(-FILEMARK_BLOCKS * block // _amanda.KIB)
    data['mark_seconds'], data['mark_basis'] = mark_seconds(entry, verdict)
    data['name'] = name or default_name(doc.host, entry, verdict.drive_label)
    data['text'] = _amanda.render(
        data['name'], _words.tapetype_comment(data), data['length_kbytes'], data['filemark_kbytes'],
        data['speed_kps'], data['block_size'], _words.tapetype_notes(data, FILEMARK_BLOCKS))
    return data


def tapetypes(doc, drive=None, name=None, hardware_compression=False):
    """{'tapetypes': [...], 'skipped': [{drive, reason}]} of a host document: every drive with a verdict, or
    ``drive`` alone (an error when it has none). ``name`` with one drive only: two tapetypes need two names."""
    drives = [drive] if drive else [v.drive for v in doc.verdicts or [] if not v.what_if]
    if name and len(drives) > 1:
        raise TapetypeError(_words.tapetype_name_needs_drive(doc.host, name, drives))
    out = {'tapetypes': [], 'skipped': []}
    for drive_id in drives:
        try:
            out['tapetypes'].append(tapetype(doc, drive_id, name, hardware_compression))
        except TapetypeError as exc:
            if drive:
                raise
            out['skipped'].append({'drive': drive_id, 'reason': str(exc)})
    return out
