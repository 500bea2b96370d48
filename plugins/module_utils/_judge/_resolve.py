# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Which drive is this: the collection's one drive resolver.

Private to this collection: may change without notice.

Discovery (``tape_drive_info``), the verdict and the report
(``qualify_verdict``, ``qualify_report``) and ``dp_device_info`` all ask
:func:`resolve`, so a drive is identified once, by one rule, and the
inventory's ``tapeops_drives`` entry is applied here and nowhere else:

1. INQUIRY (vendor / product / revision) -> the mechanism
   (:func:`_drive_model.identify_inquiry`: generation, form factor, maker).
2. The inventory entry, when there is one: ``generation``, ``form_factor``,
   ``vendor`` replace what INQUIRY said (a disagreement is kept as a note),
   ``interface``, ``speed_floor_mb_s`` and ``model`` (drive model fields) go
   to the drive model lookup.
3. The loaded cartridge's density code is recorded as the *medium*. It names
   the drive only when neither the inventory nor INQUIRY does (an unknown or
   missing product ID), and the record says so (``source: density``): a
   drive writes its own and the previous generation's cartridges, so the
   cartridge may be a generation older than the drive. INQUIRY that names a
   tape technology other than LTO (DLT, DDS, AIT, 9840...) is an answer too:
   no density fallback, no generation.
4. :func:`drive_spec` looks the identity up in the drive model
   (:func:`_drive_model.lookup`) with the inventory's interface, floor and
   model fields.

A drive that is named rather than discovered (the what-if target of
``tape_mechanics_benchmark``, ``streaming_forecast``'s ``drive``) is an
inventory entry without INQUIRY or cartridge: ``resolve(setting=...,
given_in=<the option>)``, so its errors name the option it came from.

Pure Python, nothing is run or opened.
"""

from __future__ import annotations

import dataclasses
import re

from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _drive_model

SOURCE_INVENTORY = 'inventory'
SOURCE_INQUIRY = 'inquiry'
SOURCE_DENSITY = 'density'

# The keys of a tapeops_drives entry the resolver reads (the others - block_size_bytes,
# segment_size_mb, ... - are backup settings the verdict reads). ``physics`` (false: a device without tape
# physics, such as mhvtl) is only carried in the identity's ``inventory``, for the verdict to say so.
SETTING_KEYS = ('generation', 'form_factor', 'vendor', 'interface', 'speed_floor_mb_s', 'model', 'physics')
# Where a drive's entry comes from unless a caller names the option it had it from (``given_in``).
INVENTORY = 'tapeops_drives'

# Product IDs of tape drives that are not LTO. Their density codes can look like LTO's (a StorageTek
# 9840 reports 0x42, mt-st names 0x40 "DLT1 40 GB, or Ultrium"), so INQUIRY naming one of them rules the
# density fallback out. Product IDs seen in the captures under tests/unit/fixtures: QUANTUM "SDLT320",
# "DLT-V4", "DLT7000", HP "DAT160", SONY "SDX-500C" (AIT), DEC "TZ07"; StorageTek "T9840", "T10000" and
# IBM "03592" are the product families' own names.
_NOT_LTO_RE = re.compile(r'(S?DLT|\bDDS|\bDAT\d|\bSDX-|\bAIT|T?9840|T?9940|T10000|03592|\bVXA|\bSLR|\bTZ\d)',
                         re.IGNORECASE)


class ResolveError(TapeopsError, ValueError):
    """A drive the resolver cannot turn into a drive model; the message says what to set."""


@dataclasses.dataclass(frozen=True)
class Identification:
    """Which drive model a drive is, and where each part of the answer came from.

    The resolver's answer, which ``tape_drive_info`` returns as
    ``drives[].generation``: a part of the drive's record
    (``_records.DriveIdentity``: INQUIRY, st, sg, loaded cartridge...), not the record.

    ``generation``, ``form_factor`` and ``vendor`` (the mechanism's maker, as
    :func:`_drive_model.lookup` wants it) describe the drive; ``source`` says
    where the generation came from (``inventory``, ``inquiry``, ``density``
    or None: unknown). ``medium`` is the loaded cartridge (density code,
    generation of its format), never the drive unless ``source`` is
    ``density``. ``inventory`` holds the tapeops_drives keys applied.
    """

    generation: int | None
    form_factor: str | None
    vendor: str | None
    source: str | None
    reason: str
    interface: str | None = None
    inquiry: dict = dataclasses.field(default_factory=dict)
    mechanism: dict | None = None
    medium: dict | None = None
    inventory: dict = dataclasses.field(default_factory=dict)
    notes: tuple = ()

    def to_dict(self):
        """The JSON record (tape_drive_info ``drives[].generation``)."""
        out = dataclasses.asdict(self)
        out['notes'] = list(self.notes)
        return out

    @classmethod
    def from_dict(cls, data):
        """The identity from its record; unknown keys (an older record's) are ignored."""
        names = set(f.name for f in dataclasses.fields(cls))
        kwargs = dict((k, v) for k, v in (data or {}).items() if k in names)
        kwargs.setdefault('generation', None)
        kwargs.setdefault('form_factor', None)
        kwargs.setdefault('vendor', None)
        kwargs.setdefault('source', None)
        kwargs.setdefault('reason', '')
        kwargs['notes'] = tuple(kwargs.get('notes') or ())
        return cls(**kwargs)


def setting_for(nst, settings):
    """The tapeops_drives entry for drive ``nst`` (``/dev/nst0`` or ``nst0``), or None."""
    def name(path):
        return str(path).rsplit('/', 1)[-1] if path else None
    for entry in settings or []:
        if isinstance(entry, dict) and nst and any(name(entry.get(k)) == name(nst) for k in ('nst', 'device', 'path')):
            return entry
    return None


def medium_of(density_code):
    """The loaded cartridge from its density code: ``{code, generation, media, capacity_gb, note}`` or None.

    None when there is no code or it is 0x00 ("default": no cartridge, or a
    target that reports none). A code that is not an LTO format keeps
    ``generation`` None.
    """
    if density_code in (None, '', 0, '0x00', '0x0'):
        return None
    try:
        info = _drive_model.generation_from_density(density_code)
    except ValueError as exc:
        return {'code': str(density_code), 'generation': None, 'media': None, 'capacity_gb': None,
                'note': str(exc)}
    if info is None:
        code = density_code if isinstance(density_code, str) else '0x%02x' % density_code
        return {'code': code, 'generation': None, 'media': None, 'capacity_gb': None,
                'note': 'not an LTO format the drive model knows'}
    return {'code': info['code'], 'generation': info['generation'], 'media': info['media'],
            'capacity_gb': info['capacity_gb'], 'note': info['note']}


def _inventory(setting):
    """The resolver's keys of a tapeops_drives entry that are set, checked (the entry's shape: a named drive's
    callers build it)."""
    setting = setting or {}
    if not isinstance(setting, dict):
        raise ResolveError('A tapeops_drives entry must be a mapping (nst, generation, model ...), got %r.'
                           % (setting,))
    out = dict((k, setting[k]) for k in SETTING_KEYS if setting.get(k) not in (None, '', {}))
    if 'physics' in out:
        value = out['physics']
        if isinstance(value, str) and value.lower() in ('true', 'false', 'yes', 'no'):
            value = value.lower() in ('true', 'yes')
        if not isinstance(value, bool):
            raise ResolveError('tapeops_drives[].physics must be true or false (false: a device without tape physics, '
                               'such as mhvtl), got %r.' % (value,))
        out['physics'] = value
    if 'model' in out and not isinstance(out['model'], dict):
        raise ResolveError('tapeops_drives[].model must be a mapping of drive model fields (e.g. {backhitch_s: 2.5}), '
                           'got %r.' % (out['model'],))
    return out


def _inventory_drive(inventory, given_in):
    """(generation, form_factor) the inventory gives, or (None, form_factor)."""
    form_factor = inventory.get('form_factor')
    if 'generation' not in inventory:
        return None, form_factor
    generation, text_ff = _drive_model.parse_generation(inventory['generation'])
    if text_ff and form_factor and _drive_model.normalize_form_factor(form_factor) != text_ff:
        raise ResolveError('%s: generation %r says %s but form_factor says %s; give one.'
                           % (given_in, inventory['generation'], text_ff, form_factor))
    return generation, text_ff or form_factor


def identify(vendor=None, product=None, revision=None, density_code=None, setting=None, given_in=INVENTORY):
    """The :class:`Identification` of one drive from INQUIRY, the loaded cartridge and its inventory entry.

    Raises :class:`ResolveError` for an inventory entry that cannot be read
    (a generation that is not one, conflicting form factors, a model that is
    not a mapping); an unknown drive is not an error here (generation None,
    ``reason`` says what to set), :func:`drive_spec` refuses it. ``given_in``
    names where ``setting`` came from in the errors and the reason.
    """
    inventory = _inventory(setting)
    try:
        inv_gen, inv_ff = _inventory_drive(inventory, given_in)
    except ResolveError:
        raise
    except ValueError as exc:
        raise ResolveError('%s: %s' % (given_in, exc))
    inquiry = {'vendor': vendor or None, 'product': product or None, 'revision': revision or None}
    mech = _drive_model.identify_inquiry(vendor, product)
    medium = medium_of(density_code)
    named = 'INQUIRY %r %r' % (vendor or '', product) if product else 'No INQUIRY product ID'
    notes = []
    if inv_gen is not None:
        generation, source = inv_gen, SOURCE_INVENTORY
        reason = 'generation %s set in %s' % (inventory['generation'], given_in)
        same = mech is not None and mech['generation'] == inv_gen
        if mech is not None and not same:
            notes.append('tapeops_drives says LTO-%d, %s says LTO-%d: the inventory is used'
                         % (inv_gen, named, mech['generation']))
        # INQUIRY fills in what the inventory leaves open, when both name the same generation
        form_factor = inv_ff or (mech['form_factor'] if same else None)
        maker = inventory.get('vendor') or (mech['vendor'] if same else None)
    elif mech is not None:
        generation, source, reason = mech['generation'], SOURCE_INQUIRY, mech['reason']
        form_factor = inv_ff or mech['form_factor']
        maker = inventory.get('vendor') or mech['vendor']
    elif product and _NOT_LTO_RE.search(str(product)):
        generation, source, form_factor, maker = None, None, inv_ff, inventory.get('vendor')
        reason = ('%s names a tape drive that is not LTO; this collection judges LTO drives only (set generation '
                  'in tapeops_drives if it is one after all)' % named)
    elif medium and medium['generation']:
        generation, source, form_factor, maker = medium['generation'], SOURCE_DENSITY, inv_ff, inventory.get('vendor')
        reason = ('%s names no LTO drive the drive model knows: generation taken from the loaded cartridge\'s '
                  'density code %s (%s)' % (named, medium['code'], medium['media']))
        notes.append('the drive may be a generation newer than its cartridge (an LTO drive writes its own and the '
                     'previous generation): set generation for it in tapeops_drives')
        if medium['note']:
            notes.append(medium['note'])
    else:
        generation, source, form_factor, maker = None, None, inv_ff, inventory.get('vendor')
        reason = '%s names no LTO drive the drive model knows, and no LTO cartridge is loaded' % named
    if medium and medium['generation'] and generation and source != SOURCE_DENSITY \
            and medium['generation'] != generation:
        notes.append('the loaded cartridge is %s (density %s), not LTO-%d: recorded as the medium, not the drive'
                     % (medium['media'], medium['code'], generation))
    return Identification(generation=generation, form_factor=form_factor, vendor=maker, source=source,
                          reason=reason, interface=inventory.get('interface'), inquiry=inquiry, mechanism=mech,
                          medium=medium, inventory=inventory, notes=tuple(notes))


def drive_spec(identity, given_in=INVENTORY):
    """The :class:`_drive_model.DriveSpec` of an identity, with the inventory's interface, floor and model.

    A generation that came from the cartridge's density is in the label
    (``LTO-5 (by cartridge density)``), so every sentence the verdict writes
    about the drive says it; the identity's notes join the spec's notes.
    Raises :class:`ResolveError` when the generation is unknown, or when the
    drive model refuses what ``given_in`` gave (named in the message).
    """
    if identity.generation is None:
        raise ResolveError('Cannot tell the LTO generation of the drive: %s; set generation (e.g. "LTO-7") for it '
                           'in tapeops_drives in the inventory.' % identity.reason)
    inventory = identity.inventory or {}
    try:
        spec = _drive_model.lookup(identity.generation, identity.form_factor, identity.vendor,
                                   inventory.get('speed_floor_mb_s'), interface=identity.interface,
                                   overrides=inventory.get('model') or None)
    except ValueError as exc:
        raise ResolveError('%s: %s' % (given_in, exc))
    label = spec.label + (' (by cartridge density)' if identity.source == SOURCE_DENSITY else '')
    return dataclasses.replace(spec, label=label, notes=tuple(spec.notes) + tuple(identity.notes))


def resolve(drive=None, setting=None, given_in=INVENTORY):
    """``(Identification, DriveSpec or None)`` for a discovered drive and its tapeops_drives entry.

    ``drive``: a tape_drive_info ``drives[]`` entry (or any mapping with
    ``vendor``, ``product``, ``revision``, ``density_code``); ``setting``: the
    drive's tapeops_drives entry or None. The spec is None when the generation
    is unknown (``identity.reason`` says why); an inventory entry that cannot
    be read raises :class:`ResolveError`.

    A drive named rather than discovered is ``setting`` alone (no ``drive``),
    with ``given_in`` the option that named it: ``resolve(setting={'generation':
    'LTO-9 FH', 'vendor': 'IBM'}, given_in='target_generation')``.
    """
    drive = drive if isinstance(drive, dict) else {}
    identity = identify(drive.get('vendor'), drive.get('product'), drive.get('revision'), drive.get('density_code'),
                        setting, given_in)
    spec = drive_spec(identity, given_in) if identity.generation is not None else None
    return identity, spec
