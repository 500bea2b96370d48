# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Cartridges against a target drive: what a new LTO generation can no longer read or write.

Private to this collection: may change without notice. Pure: no I/O.

* :func:`classify_label` reads a cartridge's barcode (volume tag): the last two
  characters are the LTO media ID (L1..L9, M8, LT..LZ WORM, CU cleaning).
* :func:`classify_density` does the same from the density code ``mt status``
  printed for a loaded tape (:func:`_drive_model.generation_from_density`).
* :func:`compatibility` says what a target drive does with a media ID:
  ``write``, ``read`` (read only) or ``stranded`` (cannot read it at all), from
  the drive model's ``DriveSpec.writes`` / ``reads_only`` (one table, in
  ``_drive_model._COMPAT``; sources in docs/drive-model.md "Media compatibility").
* :func:`summarize` turns an inventory (changers' ``mtx status``, loaded tapes'
  density codes, a list the user gives) into counts and capacity per class per
  library, the stranded cartridges with their slots, the migration a swap
  forces (hours, with its assumptions) and whether an old drive must be kept.
* A cartridge loaded in a drive whose memory (MAM) discovery read: near the
  end of its life (``_health``: its load count against its generation's load
  life, or the Media life / Nearing media life flags of its last load) it is
  listed apart (``end_of_life``) from the ones to migrate, and the migration
  estimate takes the data its memory says is on it (maximum less remaining
  capacity) instead of its native capacity times the fill fraction.

Unknown is None, never a guess: a label this module cannot read has generation
None and says so in ``note``.
"""

from __future__ import annotations

import re

from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _drive_model
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _health
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _resolve

WRITE = 'write'
READ = 'read'
STRANDED = 'stranded'
CLASSES = (WRITE, READ, STRANDED)

# Where the label rules come from (full references in docs/drive-model.md, "Media compatibility").
LABEL_SOURCES = {
    'ibm-labels': 'IBM docs (diamondback 2.9.2, "LTO bar code labels"): media-type identifier Lx, x = 1..9, '
                  'T, U, V, W, X, Y, Z (WORM generation 3..9), or M8',
    'ibm-ts2290-volser': 'IBM TS2290 manual, "Cartridges and VOLSERs": xxxxxxL9 .. xxxxxxL1, WORM xxxxxxLZ .. LT, '
                         'LTO M8 xxxxxxM8, LTO Ultrium Cleaning Cartridge CLNxxxLx',
    'oracle-sl4000': 'Oracle SL4000 "Supported Media Types": M8 = LTO-7 cartridge initialized to 9 TB (only LTO-8 '
                     'drives); cleaning label CLNUnn + media ID, "CLNU01CU would be a universal LTO cleaning tape"; '
                     'diagnostic "DG nnn" + media ID',
    'hp-cleaning-l1': 'HP tape library guide (E-series, "Media label identifiers"): "The universal LTO cleaning '
                      'cartridges have a CLN and L1 media identifier on the label"',
    'dell-tl2000-cleaning': 'Dell PowerVault TL2000 guide: "LTO4 drives cannot be cleaned with an LTO1 cleaning tape. '
                            'A universal tape or at least LTO2 media is needed"',
    'lto10-media-names': 'LTO-10 media as IBM (dtl 2.12.3: "LA, PA") and FreeBSD libmt (commit 930486f9be) name '
                         'them; no LTO-10 barcode label specification was found',
    'ts4500-lto10-capture': 'a real IBM TS4500 with ULT3580-TDA (LTO-10) drives reports volume tags IBM006LA ... '
                            '(fixture mtx_status_partial__IBM-03584L32-TS4500-3drive-1840slot__1.txt)',
}

# Media ID (last two characters of the label) -> (compatibility label, WORM, sources).
_MEDIA_IDS = {
    'L1': ('L1', False, ('ibm-labels', 'ibm-ts2290-volser')),
    'L2': ('L2', False, ('ibm-labels', 'ibm-ts2290-volser')),
    'L3': ('L3', False, ('ibm-labels', 'ibm-ts2290-volser')),
    'L4': ('L4', False, ('ibm-labels', 'ibm-ts2290-volser')),
    'L5': ('L5', False, ('ibm-labels', 'ibm-ts2290-volser')),
    'L6': ('L6', False, ('ibm-labels', 'ibm-ts2290-volser')),
    'L7': ('L7', False, ('ibm-labels', 'ibm-ts2290-volser')),
    'L8': ('L8', False, ('ibm-labels', 'ibm-ts2290-volser')),
    'L9': ('L9', False, ('ibm-labels', 'ibm-ts2290-volser')),
    'M8': ('M8', False, ('ibm-labels', 'ibm-ts2290-volser', 'oracle-sl4000')),
    'LT': ('L3', True, ('ibm-labels', 'ibm-ts2290-volser')),
    'LU': ('L4', True, ('ibm-labels', 'ibm-ts2290-volser')),
    'LV': ('L5', True, ('ibm-labels', 'ibm-ts2290-volser', 'oracle-sl4000')),
    'LW': ('L6', True, ('ibm-labels', 'ibm-ts2290-volser', 'oracle-sl4000')),
    'LX': ('L7', True, ('ibm-labels', 'ibm-ts2290-volser', 'oracle-sl4000')),
    'LY': ('L8', True, ('ibm-labels', 'ibm-ts2290-volser', 'oracle-sl4000')),
    'LZ': ('L9', True, ('ibm-labels', 'ibm-ts2290-volser', 'oracle-sl4000')),
    'LA': ('LA', False, ('lto10-media-names', 'ts4500-lto10-capture')),
    'PA': ('PA', False, ('lto10-media-names',)),
}
# Labels some software treats as LTO-10 WORM; no published label table was found for it.
_UNVERIFIED_WORM = {'LR': 'LR is not in any published LTO label table found (the LTO-10 WORM media ID is not '
                          'published in the sources consulted): treated as WORM, generation unknown'}

# Media ID -> density code of its format: the drive model's density table gives the
# generation and native capacity (one source of truth for both).
_LABEL_DENSITY = {'L1': 0x40, 'L2': 0x42, 'L3': 0x44, 'L4': 0x46, 'L5': 0x58, 'L6': 0x5A, 'L7': 0x5C,
                  'M8': 0x5D, 'L8': 0x5E, 'L9': 0x60, 'LA': 0x62, 'PA': 0x63}
_DENSITY_LABEL = dict((code, label) for label, code in _LABEL_DENSITY.items())

# Native read rate of M8 media: 300 MB/s (IBM TS4500 / STAKKZ "300 MB/s (M8)"); every other
# media ID reads at its own generation's native rate (drive model, full height).
_M8_NATIVE_MB_S = 300.0

_LABEL_RE = re.compile(r'^[A-Z0-9]{6}([A-Z0-9]{2})$')
_CLEANING_RE = re.compile(r'^CLN')
_DIAGNOSTIC_RE = re.compile(r'^DG[ 0-9]')

DEFAULT_FILL_FRACTION = 1.0
DEFAULT_DRIVES_KEPT = 1


class MediaInputError(TapeopsError, ValueError):
    """Input that cannot be classified; the message says what to give instead."""


def _clean(barcode):
    if barcode is None:
        return None
    if isinstance(barcode, bytes):
        barcode = barcode.decode('ascii', 'replace')
    text = str(barcode).strip().upper()
    return text or None


def media_generation(label):
    """Generation and native capacity of a compatibility label (L1..L9, M8, LA, PA) from the drive model."""
    code = _LABEL_DENSITY.get(label)
    if code is None:
        return None
    return _drive_model.generation_from_density(code)


def _result(barcode, kind, media=None, worm=None, basis=None, note=None, sources=(), cleaning=None):
    info = media_generation(media) if media else None
    return {
        'barcode': barcode,
        'kind': kind,                       # data, worm, cleaning, diagnostic, unknown
        'media': media,                     # compatibility label L1..L9, M8, LA, PA (None: unknown)
        'generation': info['generation'] if info else None,
        'cartridge_generation': 7 if media == 'M8' else (info['generation'] if info else None),
        'capacity_gb': info['capacity_gb'] if info else None,
        'worm': worm,
        'basis': basis,                     # label, density, given, or None
        'cleaning': cleaning,
        'note': note,
        'sources': [LABEL_SOURCES.get(s, s) for s in sources],
    }


def classify_label(barcode):
    """What a barcode says about its cartridge (see the module docstring)."""
    tag = _clean(barcode)
    if tag is None:
        return _result(None, 'unknown', note='no barcode (the changer has no reader, or the label is missing)')
    if _CLEANING_RE.match(tag):
        suffix = tag[-2:] if len(tag) >= 5 else ''
        if suffix == 'CU':
            cleaning = {'universal': True, 'for_generation': None, 'flag': None}
            sources = ('oracle-sl4000',)
        elif suffix == 'L1':
            cleaning = {'universal': None, 'for_generation': 1,
                        'flag': 'CLN...L1: HP labels its universal cleaning cartridge so, but an LTO-1-only cleaning '
                                'cartridge carries the same ID (LTO-4 and newer drives cannot be cleaned with it): '
                                'check the cartridge is a universal one'}
            sources = ('hp-cleaning-l1', 'dell-tl2000-cleaning', 'ibm-ts2290-volser')
        elif suffix in _MEDIA_IDS and suffix[0] == 'L' and suffix[1].isdigit():
            gen = int(suffix[1])
            cleaning = {'universal': False, 'for_generation': gen,
                        'flag': 'cleaning cartridge labelled for LTO-%d (CLN...%s): check the target drive accepts '
                                'it, or stock universal (CLN...CU) cleaning cartridges' % (gen, suffix)}
            sources = ('ibm-ts2290-volser',)
        else:
            cleaning = {'universal': None, 'for_generation': None,
                        'flag': 'cleaning cartridge whose label does not say which drives it cleans (%s)' % tag}
            sources = ('ibm-ts2290-volser',)
        return _result(tag, 'cleaning', cleaning=cleaning, basis='label', sources=sources)
    if _DIAGNOSTIC_RE.match(tag):
        media_id = tag[-2:]
        entry = _MEDIA_IDS.get(media_id)
        return _result(tag, 'diagnostic', media=entry[0] if entry else None, basis='label',
                       note='diagnostic cartridge (DG prefix): not backup data', sources=('oracle-sl4000',))
    match = _LABEL_RE.match(tag)
    if not match:
        return _result(tag, 'unknown', note='%r is not an 8-character LTO label (six characters and a two-character '
                       'media ID; libraries set to report 6-character volume tags drop the media ID)' % tag)
    media_id = match.group(1)
    if media_id in _UNVERIFIED_WORM:
        return _result(tag, 'worm', worm=True, basis='label', note=_UNVERIFIED_WORM[media_id])
    entry = _MEDIA_IDS.get(media_id)
    if entry is None:
        return _result(tag, 'unknown', note='media ID %r is not an LTO media ID' % media_id)
    media, worm, sources = entry
    note = None
    if media == 'LA':
        note = ('LTO-10 media ID LA: the media name IBM and FreeBSD use, seen as a volume tag on a real TS4500 with '
                'LTO-10 drives; no LTO-10 label specification was found')
    elif media == 'PA':
        note = ('LTO-10 premium media ID PA: the media name IBM and FreeBSD use, not seen on a label; an estimate '
                'until the LTO-10 label specification is found')
    return _result(tag, 'worm' if worm else 'data', media=media, worm=worm, basis='label', note=note,
                   sources=sources)


def classify_density(code, barcode=None):
    """A loaded tape's media from the density code ``mt status`` printed (None: not an LTO format)."""
    try:
        info = _drive_model.generation_from_density(code)
    except ValueError:
        return None
    if info is None:
        return None
    value = int(info['code'], 16)
    media = _DENSITY_LABEL.get(value)
    if media is None:
        return None
    result = _result(_clean(barcode), 'data', media=media, basis='density',
                     note='from density code %s (%s): the format written on the tape; WORM is not visible here'
                     % (info['code'], info['media']), sources=())
    result['sources'] = [info['source']]
    return result


def classify_given(entry):
    """A cartridge the user listed: {'barcode', 'generation' (optional: 5, 'LTO-5', 'L5', 'M8', 'LA')}."""
    if isinstance(entry, str):
        entry = {'barcode': entry}
    if not isinstance(entry, dict):
        raise MediaInputError('media entries are barcodes or {barcode: ..., generation: ...}, got %r.' % (entry,))
    barcode = _clean(entry.get('barcode'))
    given = entry.get('generation', entry.get('media'))
    result = classify_label(barcode)
    if given in (None, ''):
        return result
    text = str(given).strip().upper()
    media = text if text in _LABEL_DENSITY else None
    if media is None:
        try:
            gen, _ff = _drive_model.parse_generation(given)
        except ValueError:
            raise MediaInputError(
                'media %s: generation %r is not one of 1-10, "LTO-5", or a media ID (L1..L9, M8, LA, PA).'
                % (barcode or '(no barcode)', given))
        media = 'LA' if gen == 10 else 'L%d' % gen
    worm = result['worm'] if result['media'] == media else None
    out = _result(barcode, 'worm' if worm else 'data', media=media, worm=worm, basis='given',
                  note='generation given in the inventory' + (
                      '; the label says %s' % result['media'] if result['media'] and result['media'] != media else ''))
    return out


def compatibility(media, spec):
    """``write``, ``read`` or ``stranded`` for media ID ``media`` in drive ``spec``; None if media is unknown."""
    if not media:
        return None
    if media in spec.writes:
        return WRITE
    if media in spec.reads_only:
        return READ
    return STRANDED


def matrix(generations=_drive_model.GENERATIONS):
    """{drive generation: {media ID: class}} for every drive generation and media ID, from the drive model."""
    labels = list(_LABEL_DENSITY)
    return dict((gen, dict((label, compatibility(label, _drive_model.lookup(gen))) for label in labels))
                for gen in generations)


def drives_that_read(labels):
    """Drive generations that can read every media ID in ``labels`` (read or write), oldest first."""
    labels = set(labels)
    out = []
    for gen in _drive_model.GENERATIONS:
        spec = _drive_model.lookup(gen)
        if labels <= set(spec.writes) | set(spec.reads_only):
            out.append(gen)
    return out


def read_rate(media, old_drives=()):
    """Native MB/s at which a cartridge of ``media`` is read for migration, with the rule in words.

    The media's own generation's native rate (drive model; M8 300 MB/s), capped by the
    fastest old drive on the host that reads it when the host's drives are known.
    """
    info = media_generation(media)
    if info is None:
        return None, None
    if media == 'M8':
        rate, why = _M8_NATIVE_MB_S, 'M8 media read at 300 MB/s native (IBM TS4500 "300 MB/s (M8)")'
    else:
        spec = _drive_model.lookup(info['generation'])
        rate, why = spec.native_mb_s, '%s media read at LTO-%d native %s MB/s (drive model)' % (
            media, info['generation'], _fmt(spec.native_mb_s))
    readers = [s for s in old_drives if compatibility(media, s) in (WRITE, READ)]
    if readers:
        best = max(s.native_mb_s for s in readers)
        if best < rate:
            rate, why = best, '%s media read at %s MB/s, the native rate of the host\'s fastest drive that reads it' % (
                media, _fmt(best))
    return rate, why


def _fmt(value):
    return ('%.1f' % value).rstrip('0').rstrip('.')


def migration_estimate(cartridges, drives_kept=DEFAULT_DRIVES_KEPT, fill_fraction=DEFAULT_FILL_FRACTION,
                       old_drives=()):
    """Hours to copy ``cartridges`` (classified, with ``media``) off with ``drives_kept`` old drives.

    Each cartridge: capacity x fill fraction at its read rate (:func:`read_rate`), plus its
    old drive's load, rewind and unload times (drive model). The drives work in parallel;
    the total is never below the longest single cartridge. The target drives and the
    network are assumed to keep up (the old drives' reads are the limit).
    """
    drives_kept = _positive_int(drives_kept, 'drives_kept')
    fill_fraction = _fraction(fill_fraction)
    per = []
    unknown = []
    rules = []
    data_gb = 0.0
    measured = 0
    for cart in cartridges:
        rate, why = read_rate(cart.get('media'), old_drives)
        written = written_gb(cart.get('memory'))
        if rate is None or (cart.get('capacity_gb') is None and written is None):
            unknown.append(cart.get('barcode'))
            continue
        spec = _drive_model.lookup(cart['generation'] if cart.get('media') != 'M8' else 8)
        overhead = spec.load_s + spec.rewind_s + spec.unload_s
        gb = written if written is not None else cart['capacity_gb'] * fill_fraction
        measured += written is not None
        data_gb += gb
        per.append(gb * 1000.0 / rate + overhead)
        if why not in rules:
            rules.append(why)
    total_s = sum(per)
    wall_s = max(total_s / drives_kept, *per) if per else 0.0
    out = {
        'cartridges': len(per),
        'data_gb': round(data_gb, 1),
        'drives_kept': drives_kept,
        'fill_fraction': fill_fraction,
        'hours': round(wall_s / 3600.0, 2),
        'drive_hours': round(total_s / 3600.0, 2),
        'not_estimated': list(unknown),
        'assumptions': [
            'every cartridge %d %% full (fill_fraction %s%s)' % (
                round(fill_fraction * 100), fill_fraction,
                ', the default: an upper bound' if fill_fraction == DEFAULT_FILL_FRACTION else ''),
            'read at the native rate (incompressible data; compressible data reads faster in host bytes '
            'but the same on tape)',
        ] + rules + [
            'per cartridge the old drive\'s load + rewind + unload times from the drive model',
            '%d old drive%s kept, copying in parallel; the target drives and the network keep up' % (
                drives_kept, '' if drives_kept == 1 else 's'),
            'rates are the drive model\'s published figures, not measured on this host',
        ],
    }
    if measured:
        # only where a cartridge's memory was read: an estimate without one reads as it did
        out['from_memory'] = measured
        out['assumptions'].insert(0, _from_memory_words(measured))
    return out


def _from_memory_words(count):
    one = count == 1
    return '%d cartridge%s: the data %s memory says is on %s (MAM maximum less remaining capacity), not the fill ' \
           'fraction' % (count, '' if one else 's', 'its' if one else 'their', 'it' if one else 'them')


MIB = 1024 * 1024


def written_gb(memory):
    """GB (10^9 bytes) of data on a cartridge by its memory (MAM): maximum less remaining capacity, in MiB there;
    None without both, or when they do not make sense (remaining above maximum)."""
    memory = memory if isinstance(memory, dict) else {}
    most, left = memory.get('maximum_capacity_mib'), memory.get('remaining_capacity_mib')
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in (most, left)) or left > most:
        return None
    return round((most - left) * MIB / 1e9, 3)


def end_of_life(memory):
    """The findings (``_health``'s, as dicts) that say a cartridge is near the end of its life, from its memory
    alone: its load count against its generation's load life, the Media life (7) or Nearing media life (19) flags
    of its last load. [] when none, or no memory."""
    if not isinstance(memory, dict):
        return []
    try:
        health = _health.judge(None, memory)
    except (ValueError, TypeError):     # a memory of no form discovery returns
        return []
    return [f.to_dict() for f in health.findings if f.code == 'cartridge_loads' or (
        f.code == 'cartridge_tape_alert' and (f.evidence or {}).get('flag') in (7, 19))]


def _positive_int(value, name):
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise MediaInputError('%s must be a whole number of drives of at least 1, got %r.' % (name, value))
    if number < 1 or isinstance(value, bool):
        raise MediaInputError('%s must be a whole number of drives of at least 1, got %r.' % (name, value))
    return number


def _fraction(value):
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise MediaInputError('fill_fraction must be a number above 0 and at most 1 (1 = full), got %r.' % (value,))
    if isinstance(value, bool) or not 0 < number <= 1:
        raise MediaInputError('fill_fraction must be a number above 0 and at most 1 (1 = full), got %r.' % (value,))
    return number


# ---------------------------------------------------------------------------
# inventory -> classified cartridges per library


def _loaded_density(drives, changer_sg, element):
    """The density code, nst and cartridge memory of the discovered drive in ``changer_sg``'s drive ``element``."""
    for drive in drives or []:
        changer = drive.get('changer') or {}
        if changer.get('sg') == changer_sg and changer.get('element') == element:
            return drive.get('density_code'), drive.get('nst'), drive.get('cartridge_memory')
    return None, None, None


def _with_memory(cart, memory):
    """``cart`` with the loaded cartridge's memory (discovery's), where it was read."""
    if isinstance(memory, dict):
        cart['memory'] = memory
    return cart


def _classified(barcode, density=None):
    """Label first; where the label says nothing about the generation, the loaded tape's density code."""
    label = classify_label(barcode)
    if label['kind'] in ('cleaning', 'diagnostic') or label['media']:
        return label
    if density:
        by_density = classify_density(density, barcode)
        if by_density:
            if label['note']:
                by_density['note'] = '%s; %s' % (label['note'], by_density['note'])
            if label['worm']:
                by_density['worm'] = True
                by_density['kind'] = 'worm'
            return by_density
    return label


def inventory_libraries(changers=(), drives=(), given=()):
    """Classified cartridges per library from discovery (tape_drive_info's changers and drives) and a given list.

    Returns [{'id', 'vendor', 'product', 'source', 'error', 'complete', 'cartridges': [...]}]:
    one entry per changer, one per standalone drive with a loaded tape, and 'given' for the user's list.
    """
    libraries = []
    seen = set()
    for changer in changers or []:
        status = changer.get('status') or {}
        lib = {'id': changer.get('sg') or changer.get('hctl') or 'changer', 'vendor': changer.get('vendor'),
               'product': changer.get('product'), 'source': 'mtx status',
               'error': changer.get('error') or status.get('error'), 'complete': bool(status.get('complete')),
               'cartridges': []}
        for drive in status.get('drives') or []:
            if not drive.get('full'):
                continue
            density, nst, memory = _loaded_density(drives, changer.get('sg'), drive.get('element'))
            cart = _with_memory(_classified(drive.get('barcode'), density), memory)
            cart['location'] = {'kind': 'drive', 'element': drive.get('element'), 'nst': nst,
                                'source_slot': drive.get('source_element')}
            lib['cartridges'].append(cart)
            if nst:
                seen.add(nst)
        for slot in status.get('slots') or []:
            if not slot.get('full'):
                continue
            cart = _classified(slot.get('barcode'))
            cart['location'] = {'kind': 'import_export' if slot.get('import_export') else 'slot',
                                'element': slot.get('element')}
            lib['cartridges'].append(cart)
        libraries.append(lib)
    for drive in drives or []:
        if drive.get('nst') in seen or drive.get('changer') or not drive.get('media_loaded'):
            continue
        cart = _with_memory(_classified(drive.get('barcode'), drive.get('density_code')), drive.get('cartridge_memory'))
        cart['location'] = {'kind': 'drive', 'element': None, 'nst': drive.get('nst')}
        libraries.append({'id': drive.get('nst'), 'vendor': drive.get('vendor'), 'product': drive.get('product'),
                          'source': 'standalone drive (mt status)', 'error': None, 'complete': True,
                          'cartridges': [cart]})
    if given:
        lib = {'id': 'given', 'vendor': None, 'product': None, 'source': 'inventory list (media)', 'error': None,
               'complete': True, 'cartridges': []}
        for entry in given:
            cart = classify_given(entry)
            location = entry.get('location') if isinstance(entry, dict) else None
            cart['location'] = {'kind': 'given', 'element': None, 'where': location}
            lib['cartridges'].append(cart)
        libraries.append(lib)
    return libraries


def old_drive_specs(drives=()):
    """Drive model specs of the host's current drives (tape_drive_info entries), for read rates.

    Each from the collection's one drive resolver, with the tapeops_drives
    entry discovery applied (``generation.inventory``), if any.
    """
    specs = []
    for drive in drives or []:
        if not isinstance(drive, dict):
            continue
        recorded = drive.get('generation') if isinstance(drive.get('generation'), dict) else {}
        try:
            spec = _resolve.resolve(drive, recorded.get('inventory') or None)[1]
        except ValueError:
            continue
        if spec is not None:
            specs.append(spec)
    return specs


# ---------------------------------------------------------------------------
# summary against a target


def target_spec(target_generation, vendor=None, form_factor=None, interface=None):
    generation, text_ff = _drive_model.parse_generation(target_generation)
    return _drive_model.lookup(generation, form_factor or text_ff, vendor, interface=interface)


def _location_text(loc):
    loc = loc or {}
    if loc.get('kind') == 'slot':
        return 'slot %s' % loc.get('element')
    if loc.get('kind') == 'import_export':
        return 'import/export slot %s' % loc.get('element')
    if loc.get('kind') == 'drive':
        return 'drive %s' % (loc.get('element') if loc.get('element') is not None else loc.get('nst'))
    return loc.get('where') or 'listed'


def summarize(libraries, spec, drives_kept=DEFAULT_DRIVES_KEPT, fill_fraction=DEFAULT_FILL_FRACTION,
              old_drives=()):
    """Counts, capacity, stranded cartridges, migration and old-drive need per library and in total."""
    drives_kept = _positive_int(drives_kept, 'drives_kept')
    fill_fraction = _fraction(fill_fraction)
    out_libs = []
    all_stranded = []
    totals = {'cartridges': 0, 'counts': dict((c, 0) for c in CLASSES + ('unknown', 'cleaning', 'diagnostic')),
              'capacity_gb': dict((c, 0) for c in CLASSES)}
    findings = []
    for lib in libraries:
        lib_out = _library(lib, spec)
        stranded = [c for c in lib['cartridges'] if c.get('class') == STRANDED]
        all_stranded.extend(stranded)
        lib_out['migration'] = migration_estimate(stranded, drives_kept, fill_fraction, old_drives) \
            if stranded else None
        out_libs.append(lib_out)
        totals['cartridges'] += len(lib['cartridges'])
        for key, value in lib_out['counts'].items():
            totals['counts'][key] += value
        for key, value in lib_out['capacity_gb'].items():
            totals['capacity_gb'][key] += value
        findings.extend(_library_findings(lib, lib_out))
    migration = migration_estimate(all_stranded, drives_kept, fill_fraction, old_drives) if all_stranded else None
    if all_stranded:
        findings.insert(0, _stranded_finding(all_stranded, spec, migration, drives_kept))
    if totals['counts'][READ]:
        findings.append({'severity': 'info', 'text': '%d cartridge%s the %s reads but cannot write' % (
            totals['counts'][READ], '' if totals['counts'][READ] == 1 else 's', spec.label)})
    return {
        'target': {'label': spec.label, 'generation': spec.generation, 'writes': list(spec.writes),
                   'reads_only': list(spec.reads_only)},
        'libraries': out_libs,
        'totals': totals,
        'migration': migration,
        'keep_old_drive_libraries': [lib['id'] for lib in out_libs if lib['keep_old_drive']['required']],
        'findings': findings,
        'parameters': {'drives_kept': drives_kept, 'fill_fraction': fill_fraction},
    }


def _library(lib, spec):
    """One library's cartridges against ``spec``: counts, capacity, the lists and whether to keep an old drive.

    Sets each data cartridge's ``class``; the caller adds ``migration``.
    """
    counts = dict((c, 0) for c in CLASSES + ('unknown', 'cleaning', 'diagnostic'))
    capacity = dict((c, 0) for c in CLASSES)
    by_generation = {}
    stranded, read_only, unknown, cleaning, worn = [], [], [], [], []
    for cart in lib['cartridges']:
        if cart['kind'] == 'cleaning':
            counts['cleaning'] += 1
            cleaning.append({'barcode': cart['barcode'], 'where': _location_text(cart.get('location')),
                             'universal': cart['cleaning']['universal'],
                             'for_generation': cart['cleaning']['for_generation'],
                             'flag': cart['cleaning']['flag']})
            continue
        if cart['kind'] == 'diagnostic':
            counts['diagnostic'] += 1
            continue
        cls = compatibility(cart['media'], spec)
        cart['class'] = cls
        key = cart['media'] or 'unknown'
        by_generation[key] = by_generation.get(key, 0) + 1
        if cls is None:
            counts['unknown'] += 1
            unknown.append({'barcode': cart['barcode'], 'where': _location_text(cart.get('location')),
                            'note': cart['note']})
            continue
        counts[cls] += 1
        capacity[cls] += cart['capacity_gb'] or 0
        row = {'barcode': cart['barcode'], 'media': cart['media'], 'worm': cart['worm'],
               'basis': cart['basis'], 'where': _location_text(cart.get('location')),
               'element': (cart.get('location') or {}).get('element'),
               'capacity_gb': cart['capacity_gb']}
        if 'memory' in cart:
            row['written_gb'] = written_gb(cart['memory'])
        worn_by = end_of_life(cart.get('memory'))
        if worn_by:
            # listed apart from the ones to migrate: copy its data off and retire it (the estimate still counts it)
            worn.append(dict(row, **{'class': cls, 'findings': worn_by}))
        elif cls == STRANDED:
            stranded.append(row)
        elif cls == READ:
            read_only.append(row)
    out = {
        'id': lib['id'], 'vendor': lib.get('vendor'), 'product': lib.get('product'), 'source': lib.get('source'),
        'error': lib.get('error'), 'complete': lib.get('complete'),
        'cartridges': len(lib['cartridges']), 'counts': counts, 'capacity_gb': capacity,
        'by_generation': by_generation, 'stranded': stranded, 'read_only': read_only, 'unknown': unknown,
        'cleaning': cleaning, 'keep_old_drive': _keep_old_drive(
            stranded + [w for w in worn if w['class'] == STRANDED], read_only, spec),
        'migration': None,
    }
    if any('memory' in c for c in lib['cartridges']):
        # only where a cartridge's memory was read: a library without one reads as it did
        out['end_of_life'] = worn
    return out


def _keep_old_drive(stranded, read_only, spec):
    """Whether a library must keep a drive that reads its stranded cartridges, which generations do, and why."""
    stranded_media = sorted(set(r['media'] for r in stranded), key=lambda m: _LABEL_DENSITY[m])
    keep = {'required': bool(stranded), 'readers': drives_that_read(stranded_media) if stranded else [],
            'why': None}
    if stranded:
        readers = keep['readers']
        keep['why'] = ('%d cartridge%s (%s) the %s cannot read: keep a drive that reads %s (%s) in this library '
                       'until they are copied or expire' % (
                           len(stranded), '' if len(stranded) == 1 else 's', ', '.join(stranded_media),
                           spec.label, ' and '.join(stranded_media),
                           ', '.join('LTO-%d' % g for g in readers) if readers else
                           'no single generation reads them all: one drive per media ID'))
    elif read_only:
        keep['why'] = ('%d cartridge%s the %s reads but cannot write: no old drive needed to restore, but the '
                       'backup software must not append to them' % (
                           len(read_only), '' if len(read_only) == 1 else 's', spec.label))
    return keep


def _library_findings(lib, lib_out):
    """A library's findings: it could not be read, its listing was cut short, cleaning flags, unknown media."""
    findings = []
    if lib_out['error']:
        findings.append({'severity': 'warning', 'text': 'library %s: %s (its cartridges are not counted)' % (
            lib['id'], lib_out['error'])})
    elif lib.get('complete') is False:
        findings.append({'severity': 'warning', 'text': 'library %s: the mtx status listing was incomplete; '
                                                        'counts may be short' % lib['id']})
    for row in lib_out['cleaning']:
        if row['flag']:
            findings.append({'severity': 'info', 'text': 'library %s, %s (%s): %s' % (
                lib['id'], row['barcode'], row['where'], row['flag'])})
    for row in lib_out.get('end_of_life') or []:
        loads = [f['evidence'] for f in row['findings'] if f['code'] == 'cartridge_loads']
        findings.append({'severity': 'warning', 'text': 'library %s, %s (%s): near the end of its life (%s): copy '
                                                        'its data to another cartridge and retire it' % (
                                                            lib['id'], row['barcode'] or 'no barcode', row['where'],
                                                            '%s loads of %s' % (loads[0]['value'], loads[0]['limit'])
                                                            if loads else 'its memory\'s TapeAlert flags %s' % ', '.join(
                                                                str(f['evidence']['flag']) for f in row['findings']))})
    unknown = lib_out['unknown']
    if unknown:
        findings.append({'severity': 'info', 'text': 'library %s: %d cartridge%s of unknown generation (%s): '
                                                     'give their generation in tapeops_media' % (
                                                         lib['id'], len(unknown), '' if len(unknown) == 1 else 's',
                                                         ', '.join(str(u['barcode']) for u in unknown[:10]))})
    return findings


def _stranded_finding(all_stranded, spec, migration, drives_kept):
    """The first finding: how many cartridges the target cannot read and how long copying them takes."""
    media_ids = ', '.join(sorted(set(c['media'] for c in all_stranded), key=lambda m: _LABEL_DENSITY[m]))
    text = ('%d cartridge%s the %s cannot read (%s): copying them takes about %s h with %d old drive%s kept; '
            'assumed: %s' % (len(all_stranded), '' if len(all_stranded) == 1 else 's', spec.label, media_ids,
                             _fmt(migration['hours']), drives_kept, '' if drives_kept == 1 else 's',
                             migration['assumptions'][0]))
    return {'severity': 'warning', 'text': text}
