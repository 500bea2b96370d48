# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The tapeops.qualify lab: user-mode-linux media-agent guests with real tape devices.

Each guest is a user-mode-linux kernel booted on this machine's root
filesystem (read-only, tmpfs overlay) with the real ``st``, ``sg`` and ``ch``
drivers. Inside it, one LTO drive and one medium changer with K barcoded
cartridges appear as ``/dev/nst0`` and a changer ``/dev/sgN``:

* ``--drive emulated`` (default): lab/tapedrive answers every SCSI command
  of both LUNs through LIO TCMU + tcm_loop, and the drive has physics (buffer,
  speed steps, back-hitches, log pages) from the collection's drive model,
  scaled per guest (``SPREAD``);
* ``--drive tgt``: Debian's ``tgt`` over open-iscsi on the guest's loopback
  (no physics; the lab before the emulated drive);
* ``--drive mhvtl``: mhvtl's kernel module and daemons (lab/tapelab_mhvtl.py),
  one library with one or two drives of a vendor and generation per guest,
  a WORM and a cleaning cartridge (no physics; someone else's SSC/SMC).

Each guest owns an ext4 source tree (a ubd block device) mounted at
``/srv/backup-src``, read through a cgroup io.max throttle where ``SPREAD``
sets one, and runs sshd reachable on ``127.0.0.1:222N`` through
``vde_switch`` + ``vde_plug`` (libslirp).

Usage: lab/tapelab up [-n N] [-k K] [--drive emulated|tgt|mhvtl] [--bacula] [--health SPEC]... |
down [--purge] | status [--json] | inventory [-o PATH] | bacula-setup [GUEST...] | bacula-stop [GUEST...] |
health [SPEC...] | ssh HOST [CMD...]

A SPEC sets an emulated drive's health mode (docs/lab.md, "Drive health"):
``lab-ma2=dirty``, ``lab-ma3=hard_error``, ``lab-ma1:MA1001L5=worn`` (a
cartridge), ``=none`` to clear.

State lives in one run directory (``TAPEOPS_LAB_DIR``, default
``/var/tmp/tapeops-lab``): pids, sockets, keys, cartridge images, logs and the
generated inventory. ``down`` stops only the processes recorded there.
See docs/lab.md.
"""

import argparse
import base64
import fcntl
import glob
import hashlib
import importlib.util
import json
import os
import random
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_RUN_DIR = '/var/tmp/tapeops-lab'
UML = '/usr/bin/linux.uml'
UML_MODULES = '/usr/lib/uml/modules'
SHIM_SOURCE = os.path.join(HERE, 'ptrace-xsave-shim.c')
GUEST_INIT = os.path.join(HERE, 'guest-init')
BASE_PORT = 2220
SOURCE_IMAGE_MB = 512
# The source tree's version, in its images' names (``source-template-2.img``, each guest's ``source-2.img``): a lab
# set up with an older tree gets the new one on its next ``up``. 2: text compresses about 2:1, not 120:1.
SOURCE_TREE_VERSION = 2
# Guests 4..8 repeat the three identities and the spread (lab-ma4 is lab-ma1's kind, with its own
# serial numbers and barcodes): enough for the parallelism bench (bench/parallel.py).
MAX_GUESTS = 8

# Packages the lab needs on this machine (Debian 12). The guests boot on this
# machine's root filesystem, so the guest-side tools come from here too.
APT_PACKAGES = (
    'user-mode-linux', 'kmod', 'tgt', 'open-iscsi', 'vde2', 'libvdeplug-slirp',
    'openssh-server', 'openssh-client', 'gcc', 'libc6-dev', 'e2fsprogs',
    'iproute2', 'mt-st', 'mtx', 'sg3-utils', 'lsscsi', 'fio', 'python3',
)
# ... and with --bacula (Director, File daemon, Storage daemon, console; lab/tapelab_bacula.py). mailutils
# answers bacula-director's dependency on a mailx without the mail server (exim4) bsd-mailx pulls in.
BACULA_APT_PACKAGES = ('bacula-director', 'bacula-director-sqlite3', 'bacula-fd', 'bacula-sd', 'bacula-console',
                       'mailutils')

# Drive identities: index 1..3. Generation is the LTO generation the
# collection should detect from vendor/product; maker and form_factor are
# what _drive_model.lookup() takes for the drive's physics.
IDENTITIES = (
    {
        'vendor': 'IBM', 'product': 'ULT3580-TD5', 'rev': 'G350', 'serial': '1068001001',
        'generation': 5, 'suffix': 'L5', 'form': 'full-height', 'maker': 'IBM', 'form_factor': 'FH',
    },
    {
        'vendor': 'HP', 'product': 'Ultrium 6-SCSI', 'rev': '35GD', 'serial': 'HU1330A002',
        'generation': 6, 'suffix': 'L6', 'form': 'full-height', 'maker': 'HPE', 'form_factor': None,
    },
    {
        'vendor': 'IBM', 'product': 'ULT3580-TD8', 'rev': 'KAJ0', 'serial': '1013003003',
        'generation': 8, 'suffix': 'L8', 'form': 'full-height', 'maker': 'IBM', 'form_factor': 'FH',
    },
)
CHANGER = {'vendor': 'STK', 'product': 'L700', 'rev': '0107'}

DRIVE_MODES = ('emulated', 'tgt', 'mhvtl')
# In a guest's dir once its Bacula is set up: the inventory variables it adds, the set-up time.
BACULA_MARKER = 'bacula.json'
# In a guest's dir: the emulated drive's health modes (lab/tapedrive/ssc.py parse_health), which the drive
# reads at start and within a second of each change.
HEALTH_FILE = 'health.json'
HEALTH_CONFIRM_S = 5.0
DEFAULT_GUESTS = 3

# The default lab's spread (docs/lab.md): per guest, the time scale of its
# drive (every rate and the buffer times ``scale``; back-hitch time as is) and
# the read limit on its source disk (cgroup v2 io.max, bytes/s; None: none).
# (rates as the drive model gives them today, times the scale)
#   lab-ma1  IBM LTO-5 at 0.035: steps 4.9..1.4 MB/s, buffer 8.96 MB; source
#            not throttled (a guest writes random data through its drive at
#            11-15 MB/s on an idle machine, and at 6.4 MB/s once on a loaded
#            CI machine, below the 7 MB/s top step it had at 0.05)  -> streaming
#   lab-ma2  HP LTO-6 at 0.125: steps 20..6.75 MB/s, buffer 36.6 MB; source
#            limited to 10 MB/s, between floor and top           -> speed-matched
#            (at 0.25, 40..13.5 MB/s behind 20 MB/s, the guest's emulated drive
#            path - TCMU and the cartridge file on one UML CPU - measured
#            15.7 MB/s on a loaded 2-core machine, below the 16.7 floor)
#   lab-ma3  IBM LTO-8 at 0.10: steps 36.5..11.2 MB/s, buffer 66 MB; source
#            limited to 3 MB/s, below the floor                  -> shoe-shining
SPREAD = {
    1: {'scale': 0.035, 'source_rbps': None, 'expect': 'streaming'},
    2: {'scale': 0.125, 'source_rbps': 10000000, 'expect': 'speed-matched'},
    3: {'scale': 0.10, 'source_rbps': 3000000, 'expect': 'shoe-shining'},
}
# Mechanical times (load, unload, rewind, locate, changer moves) run this
# many times faster than the drive model's (55 s rewind -> 1.1 s): the lab
# stays fast; their ratios stay the model's.
MECH_DIVISOR = 50.0
# Changer robot time per move (seconds, real): smc.py's default (Exabyte
# autoloader, "less than 10 seconds"), divided like the drive's mechanics.
CHANGER_MOVE_S = 10.0
DRIVE_MODEL = os.path.join(ROOT, "plugins", "module_utils", "_judge", "_drive_model.py")
# Fields of the drive model the physics uses, with the defaults used when the
# model lacks one (an IBM LTO-5 full-height drive; see lab/tapedrive/physics.py).
PROFILE_DEFAULTS = {
    'native_mb_s': 140.0, 'speed_steps_mb_s': [140.0, 122.5, 105.0, 87.5, 70.0], 'speed_floor_mb_s': 70.0,
    'buffer_mb': 256.0, 'backhitch_s': 3.0, 'load_s': 12.0, 'unload_s': 17.0, 'rewind_s': 55.0,
    'locate_s': 45.0, 'compression_ratio': 2.0, 'density_code': None, 'native_capacity_gb': 1500,
}
# The generation's own density code when the model gives none (SSC density codes, LTO-1..10).
OWN_DENSITY = {1: 0x40, 2: 0x42, 3: 0x44, 4: 0x46, 5: 0x58, 6: 0x5A, 7: 0x5C, 8: 0x5E, 9: 0x60, 10: 0x62}


class LabError(Exception):
    """A lab failure with a sentence saying what to do."""


def mhvtl_module():
    """lab/tapelab_mhvtl.py (mhvtl in the guests), imported on first use."""
    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    import tapelab_mhvtl  # pylint: disable=import-outside-toplevel
    return tapelab_mhvtl


def bacula_module():
    """lab/tapelab_bacula.py (Bacula in the guests), imported on first use: a lab without --bacula never loads it."""
    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    import tapelab_bacula  # pylint: disable=import-outside-toplevel
    return tapelab_bacula


def tapedrive_module(name):
    """lab/tapedrive/<name>.py (the emulated devices, stdlib only), imported on first use."""
    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    return importlib.import_module('tapedrive.' + name)


# ---------------------------------------------------------------------------
# Pure helpers (unit-tested in tests/unit/lab/test_tapelab.py)
# ---------------------------------------------------------------------------

def guest_name(index):
    return 'lab-ma%d' % index


def _kind(index):
    """The identity and spread row (1..3) guest ``index`` repeats."""
    return (index - 1) % len(IDENTITIES) + 1


def barcodes(index, count):
    """Barcodes of guest ``index``'s scratch cartridges: MA1001L5, MA1002L5, ..."""
    suffix = IDENTITIES[_kind(index) - 1]['suffix']
    return ['MA%d%03d%s' % (index, n, suffix) for n in range(1, count + 1)]


def data_barcode(index):
    """Barcode of guest ``index``'s data cartridge (holds a tar archive; never allowed for writes)."""
    return 'MA%d099%s' % (index, IDENTITIES[_kind(index) - 1]['suffix'])


def health_settings(items, specs, current=None):
    """Health SPECs (``GUEST=MODE``, ``GUEST:BARCODE=MODE``; several in one item, comma or blank separated)
    over ``current`` (``{guest: health}``): ``{guest: health}`` for every guest of ``specs``, each as
    lab/tapedrive/ssc.py ``parse_health`` gives it. Raises LabError saying what to write.
    """
    ssc = tapedrive_module('ssc')
    by_name = dict((spec['name'], spec) for spec in specs)
    out = {}
    for name in by_name:
        now = ssc.parse_health((current or {}).get(name))
        out[name] = {'drive': now['drive'], 'cartridges': dict(now['cartridges'])}
    usage = ('write GUEST=MODE for a drive (%s) or GUEST:BARCODE=MODE for a cartridge (%s)'
             % (', '.join(ssc.DRIVE_MODES + (ssc.NONE,)), ', '.join(ssc.CARTRIDGE_MODES + (ssc.NONE,))))
    for item in ' '.join(items or ()).replace(',', ' ').split():
        target, sep, mode = item.partition('=')
        guest, colon, barcode = target.partition(':')
        if not sep or not mode or not guest or (colon and not barcode):
            raise LabError('health %r: %s' % (item, usage))
        if guest not in by_name:
            raise LabError('health %r: no guest %s; the lab has %s' % (item, guest, ', '.join(sorted(by_name))))
        if colon:
            if barcode not in by_name[guest]['barcodes']:
                raise LabError('health %r: %s has no cartridge %s; its cartridges are %s' % (
                    item, guest, barcode, ', '.join(by_name[guest]['barcodes'])))
            if mode not in ssc.CARTRIDGE_MODES + (ssc.NONE,):
                raise LabError('health %r: %s is not a cartridge mode; %s' % (item, mode, usage))
            out[guest]['cartridges'][barcode] = mode
        elif mode in ssc.DRIVE_MODES + (ssc.NONE,):
            out[guest]['drive'] = mode
        elif mode in ssc.CARTRIDGE_MODES:
            raise LabError('health %r: %s is a cartridge mode: name the cartridge, %s:%s=%s' % (
                item, mode, guest, by_name[guest]['barcodes'][0], mode))
        else:
            raise LabError('health %r: %s is not a mode; %s' % (item, mode, usage))
    return dict((name, ssc.parse_health(health)) for name, health in out.items())


def health_words(health):
    """One line for a guest's health: 'drive dirty; cartridge MA1001L5 worn' or 'no health mode'."""
    parts = ['drive %s' % health['drive']] if health.get('drive') else []
    parts += ['cartridge %s %s' % item for item in sorted((health.get('cartridges') or {}).items())]
    return '; '.join(parts) or 'no health mode'


def guest_spec(index, carts, run_dir, port_base=BASE_PORT, drive_mode='emulated'):
    """Everything that describes guest ``index`` (1-based), as a dict."""
    if not 1 <= index <= MAX_GUESTS:
        raise LabError('guest index %d out of range: the lab has identities for 1..%d guests' % (index, MAX_GUESTS))
    if not 1 <= carts <= 20:
        raise LabError('cartridges per guest must be 1..20, got %d' % carts)
    if drive_mode not in DRIVE_MODES:
        raise LabError('drive mode must be one of %s, got %r' % (', '.join(DRIVE_MODES), drive_mode))
    ident = dict(IDENTITIES[_kind(index) - 1])
    if index != _kind(index):
        ident['serial'] = ident['serial'][:-1] + str(index)
    name = guest_name(index)
    spread = SPREAD[_kind(index)]
    return {
        'index': index,
        'name': name,
        'port': port_base + index,
        'dir': os.path.join(run_dir, name),
        'drive': dict(ident),
        'changer': dict(CHANGER, serial='L700-%04d' % (index * 1111)),
        # slots 1..K: scratch cartridges; slot K+1: the data cartridge
        'barcodes': barcodes(index, carts) + [data_barcode(index)],
        'scratch': barcodes(index, carts),
        'data': [data_barcode(index)],
        'load_slot': 1,
        'drive_mode': drive_mode,
        'scale': spread['scale'],
        'source_rbps': spread['source_rbps'],
        'expect': spread['expect'],
    } if drive_mode != 'mhvtl' else mhvtl_spec(index, carts, run_dir, port_base)


def mhvtl_spec(index, carts, run_dir, port_base=BASE_PORT):
    """guest_spec() of an mhvtl guest: its library, drives and cartridges come from lab/tapelab_mhvtl.py."""
    tm = mhvtl_module()
    drives = tm.drives(index)
    slots = tm.cartridges(index, carts)
    first = drives[0]
    loads = tm.boot_loads(index, carts)
    name = guest_name(index)
    return {
        'index': index,
        'name': name,
        'port': port_base + index,
        'dir': os.path.join(run_dir, name),
        'drive': {'vendor': first['vendor'], 'product': first['product'], 'rev': first['rev'],
                  'serial': first['serial'], 'generation': first['generation'], 'suffix': 'L%d' % first['generation'],
                  'maker': first['maker'], 'form_factor': None},
        'drives': drives,
        'changer': dict(tm.LIBRARY, serial=tm.library_serial(index)),
        'barcodes': [s['barcode'] for s in slots],
        'scratch': [s['barcode'] for s in slots if s['kind'] == 'scratch'],
        'data': [s['barcode'] for s in slots if s['kind'] == 'data'],
        'worm': [s['barcode'] for s in slots if s['kind'] == 'worm'],
        'cleaning': [s['barcode'] for s in slots if s['kind'] == 'cleaning'],
        'load_slot': loads[0][0],
        'loads': loads,
        'carts': carts,
        'drive_mode': 'mhvtl',
        'scale': None,
        'source_rbps': None,
        'expect': None,
    }


def load_drive_model(path=DRIVE_MODEL):
    """The collection's drive model module (pure Python), or None when it cannot be imported."""
    try:
        spec = importlib.util.spec_from_file_location('tapeops_lab_drive_model', path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module     # dataclasses look their module up while the class is built
        spec.loader.exec_module(module)
        return module
    except (OSError, ImportError, SyntaxError, AttributeError):
        sys.modules.pop('tapeops_lab_drive_model', None)
        return None


def model_dict(ident, model=None):
    """``lookup(generation, form_factor, maker).as_dict()`` for a lab identity, or {} (then the defaults apply)."""
    if model is None:
        return {}
    try:
        return dict(model.lookup(ident['generation'], ident.get('form_factor'), ident.get('maker')).as_dict())
    except (ValueError, TypeError, AttributeError, KeyError):
        return {}


def drive_profile(ident, scale, mech_divisor=MECH_DIVISOR, model=None):
    """The physics profile of a lab drive (lab/tapedrive/physics.py ``Profile``), from the drive model.

    ``model``: the ``lookup(...).as_dict()`` of the drive (fields missing from
    it fall back to PROFILE_DEFAULTS and are listed under ``defaulted``).
    Rates (native, steps, floor) and the buffer are multiplied by ``scale``;
    back-hitch time stays; load/unload/rewind/locate are divided by ``mech_divisor``.
    """
    if not 0 < scale <= 1:
        raise LabError('scale must be in (0, 1], got %r' % (scale,))
    model = dict(model or {})
    defaulted = []

    def get(key):
        value = model.get(key)
        if value in (None, '', []):
            defaulted.append(key)
            return PROFILE_DEFAULTS[key]
        return value

    native = float(get('native_mb_s'))
    steps = [float(v) for v in get('speed_steps_mb_s')]
    floor = float(get('speed_floor_mb_s'))
    if 'speed_steps_mb_s' in defaulted and 'native_mb_s' not in defaulted:
        steps = [native] + ([floor] if floor < native else [])
    density = model.get('density_code')
    if isinstance(density, str) and density:
        density = int(density, 16)
    if not density:
        density = OWN_DENSITY.get(int(ident['generation']), 0)
        defaulted.append('density_code')
    estimated = model.get('estimated') or {}
    return {
        'generation': int(ident['generation']),
        'label': model.get('label') or 'LTO-%d' % int(ident['generation']),
        'scale': scale,
        'mech_divisor': mech_divisor,
        'native_mb_s': round(native * scale, 6),
        'speed_steps_mb_s': [round(v * scale, 6) for v in sorted(steps, reverse=True)],
        'speed_floor_mb_s': round(min(steps + [floor]) * scale, 6),
        'buffer_mb': round(float(get('buffer_mb')) * scale, 6),
        'backhitch_s': float(get('backhitch_s')),
        'load_s': round(float(get('load_s')) / mech_divisor, 6),
        'unload_s': round(float(get('unload_s')) / mech_divisor, 6),
        'rewind_s': round(float(get('rewind_s')) / mech_divisor, 6),
        'locate_s': round(float(get('locate_s')) / mech_divisor, 6),
        'compression_ratio': float(get('compression_ratio')),
        'density_code': density,
        'native_capacity_gb': float(get('native_capacity_gb')),
        'estimated': dict(estimated) if isinstance(estimated, dict) else {},
        'defaulted': sorted(set(defaulted)),
        'real': {k: model.get(k) for k in ('native_mb_s', 'speed_floor_mb_s', 'buffer_mb', 'load_s', 'unload_s',
                                           'rewind_s', 'locate_s') if model.get(k) is not None},
    }


def tapedrive_config(spec, profile, run_dir_in_guest='/run/tapelab'):
    """The config of the guest's tapedrive process (lab/tapedrive/__main__.py)."""
    drive = spec['drive']
    index = spec['index']
    real = profile.get('real') or {}
    return {
        'name': spec['name'],
        'state_dir': run_dir_in_guest,
        'cartridge_dir': run_dir_in_guest + '/cartridges',
        'target_wwn': '5001405aaaaaa%03d' % index,
        'initiator_wwn': '5001405bbbbbb%03d' % index,
        'drives': [{
            'name': 'tape0',
            'identity': {'vendor': drive['vendor'], 'product': drive['product'], 'rev': drive['rev'],
                         'serial': drive['serial']},
            'profile': profile,
        }],
        'changer': {
            'name': 'changer0',
            'identity': {'vendor': spec['changer']['vendor'], 'product': spec['changer']['product'],
                         'revision': spec['changer']['rev'], 'serial': spec['changer']['serial']},
            'slots': len(spec['barcodes']),
            'import_export': 1,
            # real seconds; the changer multiplies them by mechanics_scale
            'mechanics': {'move_s': CHANGER_MOVE_S, 'load_s': float(real.get('load_s') or PROFILE_DEFAULTS['load_s']),
                          'unload_s': float(real.get('unload_s') or PROFILE_DEFAULTS['unload_s'])},
            'mechanics_scale': 1.0 / float(profile.get('mech_divisor') or MECH_DIVISOR),
            'layout': {'slots': list(spec['barcodes']), 'drives': [None]},
        },
        'health_file': run_dir_in_guest + '/' + HEALTH_FILE,
        'trace': False,
    }


def guest_env(spec, modroot, cart_mb, mem_mb=1024):
    """guest.env contents (sourced by lab/guest-init)."""
    drive = spec['drive']
    changer = spec['changer']
    values = [
        ('TAPELAB_NAME', spec['name']),
        ('TAPELAB_MODROOT', modroot),
        ('TAPELAB_MACHINE_ID', hashlib.md5(spec['name'].encode()).hexdigest()),
        ('TAPELAB_DRIVE_VENDOR', drive['vendor']),
        ('TAPELAB_DRIVE_PRODUCT', drive['product']),
        ('TAPELAB_DRIVE_REV', drive['rev']),
        ('TAPELAB_DRIVE_SERIAL', drive['serial']),
        ('TAPELAB_CHANGER_VENDOR', changer['vendor']),
        ('TAPELAB_CHANGER_PRODUCT', changer['product']),
        ('TAPELAB_CHANGER_REV', changer['rev']),
        ('TAPELAB_CHANGER_SERIAL', changer['serial']),
        ('TAPELAB_SLOTS', str(len(spec['barcodes']))),
        ('TAPELAB_BARCODES', ' '.join(spec['barcodes'])),
        ('TAPELAB_LOAD_SLOT', str(spec['load_slot'])),
        ('TAPELAB_DATA_SEED', ' '.join('%d:%s' % (spec['barcodes'].index(b) + 1, b) for b in spec['data'])),
        ('TAPELAB_CART_MB', str(cart_mb)),
        ('TAPELAB_DRIVE_MODE', spec.get('drive_mode', 'emulated')),
        ('TAPELAB_SOURCE_RBPS', str(spec['source_rbps']) if spec.get('source_rbps') else ''),
        ('TAPELAB_SCALE', str(spec.get('scale', ''))),
    ]
    if spec.get('drive_mode') == 'mhvtl':
        values[-1] = ('TAPELAB_SCALE', '')
        values += mhvtl_module().guest_env_lines(spec['index'], spec['carts'], mem_mb)
        values += [('TAPELAB_MHVTL_WORM', ' '.join(spec['worm'])),
                   ('TAPELAB_MHVTL_CLEANING', ' '.join(spec['cleaning']))]
    return ''.join('%s=%s\n' % (k, shlex.quote(v)) for k, v in values)


def parse_guest_env(text):
    """Parse guest.env (KEY=shell-quoted value lines, as guest_env() writes them) into a dict."""
    out = {}
    for line in text.splitlines():
        if '=' not in line or line.lstrip().startswith('#'):
            continue
        key, value = line.split('=', 1)
        words = shlex.split(value)
        out[key.strip()] = words[0] if words else ''
    return out


def apply_booted_cartridges(spec, env):
    """Make ``spec`` describe the cartridges a running guest was booted with (its guest.env).

    A lab started by an older lab/tapelab keeps its changer as it booted; the
    inventory must list what the changer really holds, not what this version
    would create.
    """
    if not env.get('TAPELAB_BARCODES'):
        return spec
    spec = dict(spec)
    spec['barcodes'] = env['TAPELAB_BARCODES'].split()
    spec['data'] = [sb.split(':', 1)[1] for sb in env.get('TAPELAB_DATA_SEED', '').split() if ':' in sb]
    # an mhvtl guest's WORM and cleaning cartridges are not scratch either
    worm = env.get('TAPELAB_MHVTL_WORM', '').split()
    cleaning = env.get('TAPELAB_MHVTL_CLEANING', '').split()
    spec['scratch'] = [b for b in spec['barcodes'] if b not in spec['data'] + worm + cleaning]
    if env.get('TAPELAB_DRIVE_MODE') == 'mhvtl':
        spec.update(worm=worm, cleaning=cleaning, drive_mode='mhvtl')
        return spec
    if env.get('TAPELAB_LOAD_SLOT', '').isdigit():
        spec['load_slot'] = int(env['TAPELAB_LOAD_SLOT'])
    # older guest.env files have no drive mode: they ran tgt
    spec['drive_mode'] = env.get('TAPELAB_DRIVE_MODE') or 'tgt'
    spec['source_rbps'] = int(env['TAPELAB_SOURCE_RBPS']) if env.get('TAPELAB_SOURCE_RBPS', '').isdigit() else None
    try:
        spec['scale'] = float(env['TAPELAB_SCALE'])
    except (KeyError, ValueError):
        pass
    return spec


def sshd_config(guest_dir_in_guest):
    return '\n'.join([
        'Port 22',
        'ListenAddress 0.0.0.0',
        'HostKey %s/ssh_host_ed25519_key' % guest_dir_in_guest,
        'PermitRootLogin prohibit-password',
        'AuthorizedKeysFile %s/authorized_keys' % guest_dir_in_guest,
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'UsePAM no',
        'UseDNS no',
        'StrictModes no',
        'PrintMotd no',
        'PidFile /run/sshd.pid',
        'MaxStartups 50:30:100',
        'MaxSessions 50',
        'Subsystem sftp /usr/lib/openssh/sftp-server',
        '',
    ])


def parse_ready(text):
    """Parse a guest's ``ready`` file (key=value lines) into a dict."""
    out = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith('#') or '=' not in line:
            continue
        key, value = line.split('=', 1)
        out[key.strip()] = value.strip()
    return out


def ssh_options(run_dir):
    """ssh -o options shared by the lab's own ssh calls and the inventory."""
    return [
        '-o', 'BatchMode=yes',
        '-o', 'IdentitiesOnly=yes',
        '-o', 'StrictHostKeyChecking=yes',
        '-o', 'UserKnownHostsFile=%s' % os.path.join(run_dir, 'ssh', 'known_hosts'),
        '-o', 'ConnectTimeout=5',
        '-o', 'ServerAliveInterval=5',
        '-o', 'ServerAliveCountMax=3',
        '-o', 'LogLevel=ERROR',
    ]


def _yaml_scalar(value):
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    return json.dumps(str(value))


def _yaml_lines(value, indent):
    pad = '  ' * indent
    lines = []
    if isinstance(value, dict):
        for key, val in value.items():
            if isinstance(val, (dict, list)) and val:
                lines.append('%s%s:' % (pad, key))
                lines.extend(_yaml_lines(val, indent + 1))
            elif isinstance(val, (dict, list)):
                lines.append('%s%s: %s' % (pad, key, '{}' if isinstance(val, dict) else '[]'))
            else:
                lines.append('%s%s: %s' % (pad, key, _yaml_scalar(val)))
    else:
        for item in value:
            if isinstance(item, dict):
                sub = _yaml_lines(item, indent + 1)
                first = sub[0].lstrip()
                lines.append('%s- %s' % (pad, first))
                lines.extend(sub[1:])
            else:
                lines.append('%s- %s' % (pad, _yaml_scalar(item)))
    return lines


def model_overrides(profile):
    """The scaled drive as ``tapeops_drives[].model`` overrides (_drive_model.OVERRIDABLE fields).

    ``sync_mark_s``: the emulated drive's synchronous file mark costs its buffer drain and then one
    reposition of ``backhitch_s`` (lab/tapedrive/physics.py, rule 6), not the drive model's estimate
    for a real drive and its application.
    """
    keys = ('native_mb_s', 'speed_steps_mb_s', 'speed_floor_mb_s', 'buffer_mb', 'backhitch_s', 'load_s',
            'unload_s', 'rewind_s', 'locate_s', 'compression_ratio')
    overrides = {k: profile[k] for k in keys if k in profile}
    if 'backhitch_s' in profile:
        overrides['sync_mark_s'] = profile['backhitch_s']
    return overrides


def mhvtl_host_vars(spec, ready, hv):
    """host_vars() of an mhvtl guest: every drive by its H:C:T:L and serial, the WORM and cleaning cartridges."""
    tm = mhvtl_module()
    drives = []
    for n, d in enumerate(spec['drives'], start=1):
        drives.append({
            'nst': ready.get('drive%d_nst' % n, ''),
            'sg': ready.get('drive%d_sg' % n, ''),
            'hctl': ready.get('drive%d_hctl' % n, ''),
            'vendor': d['vendor'],
            'product': d['product'],
            'revision': d['rev'],
            'serial': d['serial'],
            'lto_generation': d['generation'],
            'library_drive': n,
        })
    hv['tapeops_lab_drives'] = drives
    # mhvtl has no tape physics: the collection says so next to every rate it measured on these drives
    hv['tapeops_drives'] = [{'nst': d['nst'], 'physics': False} for d in drives if d['nst']]
    hv['tapeops_lab_changer']['hctl'] = ready.get('changer_hctl', '')
    loaded = [spec['barcodes'][slot - 1] for slot, _n in spec.get('loads') or []]
    hv['tapeops_lab_loaded_barcode'] = loaded[0] if loaded else ''
    hv['tapeops_lab_loaded_barcodes'] = loaded
    hv['tapeops_lab_worm_barcodes'] = list(spec.get('worm') or [])
    hv['tapeops_lab_cleaning_barcodes'] = list(spec.get('cleaning') or [])
    hv['tapeops_lab_mhvtl'] = {
        'commit': tm.MHVTL_COMMIT,
        'device_conf': tm.CONFIG_DIR + '/device.conf',
        'library_contents': '%s/library_contents.%d' % (tm.CONFIG_DIR, tm.LIBRARY_ID),
        'home': tm.HOME_DIR,
        'physics': False,
    }
    del hv['tapeops_lab_spread']
    return hv


def host_vars(spec, ready, run_dir, profile=None, bacula=None, health=None):
    """Inventory variables of one guest (documented in docs/lab.md).

    ``profile``: the emulated drive's physics profile (drive_profile()); with
    it the guest's ``tapeops_drives`` tells the collection the drive it really
    has (the model scaled as the lab runs it). ``bacula``: the variables of the
    guest's Bacula (tapelab_bacula.host_vars()) when it has one. ``health``:
    the emulated drive's health modes (its health.json, parsed).
    """
    drive = spec['drive']
    hv = {
        'ansible_host': '127.0.0.1',
        'ansible_port': spec['port'],
        'ansible_user': 'root',
        'ansible_ssh_private_key_file': os.path.join(run_dir, 'ssh', 'id_ed25519'),
        'ansible_ssh_common_args': ' '.join(ssh_options(run_dir)),
        'tapeops_lab': True,
        'tapeops_lab_run_dir': run_dir,
        'tapeops_lab_drives': [{
            'nst': ready.get('nst', '/dev/nst0'),
            'sg': ready.get('drive_sg', ''),
            'vendor': drive['vendor'],
            'product': drive['product'],
            'revision': drive['rev'],
            'serial': drive['serial'],
            'lto_generation': drive['generation'],
            'element': 500,
        }],
        'tapeops_lab_changer': {
            'sg': ready.get('changer_sg', ''),
            'vendor': spec['changer']['vendor'],
            'product': spec['changer']['product'],
            'serial': spec['changer']['serial'],
            'slots': len(spec['barcodes']),
        },
        'tapeops_lab_barcodes': list(spec['barcodes']),
        'tapeops_lab_data_barcodes': list(spec['data']),
        'tapeops_lab_loaded_barcode': spec['barcodes'][spec['load_slot'] - 1] if spec['load_slot'] else '',
        'tapeops_allowed_barcodes': list(spec['scratch']),
        'tapeops_lab_source_dir': '/srv/backup-src',
        # what a backup of this guest reads: its whole source tree (qualify reads it file by file)
        'tapeops_sources': ['/srv/backup-src'],
        'tapeops_lab_drive_mode': spec.get('drive_mode', 'emulated'),
        'tapeops_lab_spread': {
            'expect': spec.get('expect'),
            'scale': spec.get('scale'),
            'source_rbps': spec.get('source_rbps') or 0,
        },
    }
    if spec.get('drive_mode') == 'mhvtl':
        hv = mhvtl_host_vars(spec, ready, hv)
    if profile and spec.get('drive_mode', 'emulated') == 'emulated':
        hv['tapeops_lab_drive_profile'] = {k: v for k, v in profile.items() if k not in ('real', 'estimated')}
        generation = 'LTO-%d' % drive['generation']
        if drive.get('form_factor'):
            generation += ' ' + drive['form_factor']
        hv['tapeops_drives'] = [{
            'nst': ready.get('nst', '/dev/nst0'),
            'generation': generation,
            'vendor': drive.get('maker') or drive['vendor'],
            'speed_floor_mb_s': profile['speed_floor_mb_s'],
            'model': model_overrides(profile),
        }]
        health = health or {}
        hv['tapeops_lab_health'] = {'drive': health.get('drive') or 'none',
                                    'cartridges': dict(sorted((health.get('cartridges') or {}).items()))}
    if bacula:
        hv.update(bacula)
    return hv


def render_inventory(specs, readies, run_dir, profiles=None, bacula=None, health=None):
    """The generated inventory (YAML) for the given guests (``bacula``, ``health``: per guest, its Bacula
    variables and its drive's health modes)."""
    hosts = {}
    for spec in specs:
        hosts[spec['name']] = host_vars(spec, readies.get(spec['name'], {}), run_dir,
                                        (profiles or {}).get(spec['name']), (bacula or {}).get(spec['name']),
                                        (health or {}).get(spec['name']))
    tree = {'all': {'children': {'media_agents': {'hosts': hosts}}}}
    mhvtl = [s['name'] for s in specs if s.get('drive_mode') == 'mhvtl']
    if mhvtl:
        # the mhvtl guests, also as a group of their own (molecule/mhvtl, docs/lab.md)
        tree['all']['children']['lab_mhvtl'] = {'hosts': {name: {} for name in mhvtl}}
    head = [
        '# Generated by lab/tapelab inventory from %s: do not edit, it is rewritten on every `up`.' % run_dir,
        '# Static settings for the group are in inventories/lab/group_vars/media_agents.yml.',
        '---',
    ]
    return '\n'.join(head + _yaml_lines(tree, 0)) + '\n'


def source_tree_plan(seed=20260101):
    """Files of the generated source tree: list of (relative path, size, kind).

    A mix a backup really reads: many small files in nested directories,
    some medium ones and a few large ones, part random (incompressible) and
    part text (compressible). About 200 MB in total.
    """
    rng = random.Random(seed)
    plan = []
    for d in range(20):
        for f in range(60):
            size = rng.choice((512, 2048, 4096, 8192, 16384, 32768, 65536))
            kind = 'text' if f % 3 == 0 else 'random'
            plan.append(('small/d%02d/f%03d.%s' % (d, f, 'txt' if kind == 'text' else 'bin'), size, kind))
    for f in range(24):
        plan.append(('medium/m%02d.bin' % f, rng.choice((1, 2, 4)) * 1024 * 1024, 'random'))
    plan.append(('large/db-dump.sql', 32 * 1024 * 1024, 'text'))
    plan.append(('large/video.bin', 64 * 1024 * 1024, 'random'))
    plan.append(('large/archive.bin', 48 * 1024 * 1024, 'random'))
    return plan


def source_text(size=1024 * 1024, seed=20260101):
    """``size`` bytes of a SQL dump's rows: a catalogue of file checksums, each row a SHA-256 in hex, a path, a
    size, a time and a base64 signature, from a seeded generator (the same bytes every time).

    zlib level 1 (the lab drive's compressor, lab/tapedrive/physics.py) gets about 2:1 from it (1.98 over the
    dump's sample windows; the hex and base64 columns are nearly incompressible, the SQL around them is not).
    Until tree version 2 the text was one SQL line repeated, which compressed 120:1, far beyond any real dump,
    and its 32 MiB drained lab-ma2's speed-matched drive each pass (docs/tape-side.md, "Observed jobs").
    """
    rng = random.Random(seed)
    rows = []
    length = 0
    while length < size:
        signature = base64.b64encode(rng.getrandbits(192).to_bytes(24, 'big')).decode('ascii')
        row = "INSERT INTO file_checksums VALUES ('%064x', '/srv/data/%s/%08x.dat', %d, %d, '%s');\n" % (
            rng.getrandbits(256), rng.choice(('home', 'var', 'srv', 'opt')), rng.getrandbits(32),
            rng.randrange(1, 10 ** 9), 1760000000 + rng.randrange(10 ** 7), signature)
        rows.append(row)
        length += len(row)
    return ''.join(rows).encode('ascii')[:size]


def write_source_tree(directory, scale=1):
    """Write the source tree (``source_tree_plan``) under ``directory``, each size divided by ``scale``.

    Random files are incompressible; text files are rows of a SQL dump (``source_text``), a MiB of them repeated:
    zlib's window is 32 KiB, so the repeat does not show in the ratio.
    """
    text = source_text()
    for rel, size, kind in source_tree_plan():
        path = os.path.join(directory, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'wb') as f:
            left = max(1, size // scale)
            while left > 0:
                n = min(left, len(text))
                f.write(os.urandom(n) if kind == 'random' else text[:n])
                left -= n


# ---------------------------------------------------------------------------
# Machine side
# ---------------------------------------------------------------------------

def source_image(guest_dir):
    """The guest's copy of the source tree (ext4, its ``ubd0``)."""
    return os.path.join(guest_dir, 'source-%d.img' % SOURCE_TREE_VERSION)


def _remove_quietly(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def say(msg):
    print('tapelab: %s' % msg, file=sys.stderr, flush=True)


def run(cmd, check=True, **kw):
    kw.setdefault('stdout', subprocess.PIPE)
    kw.setdefault('stderr', subprocess.PIPE)
    kw.setdefault('text', True)
    env = dict(os.environ, LC_ALL='C')
    proc = subprocess.run(cmd, env=env, check=False, **kw)
    if check and proc.returncode != 0:
        raise LabError('command failed (rc=%d): %s\n%s%s' % (
            proc.returncode, ' '.join(shlex.quote(c) for c in cmd), proc.stdout or '', proc.stderr or ''))
    return proc


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open('/proc/%d/stat' % pid) as f:
            state = f.read().rsplit(')', 1)[1].split()[0]
        return state != 'Z'
    except OSError:
        return False


def port_free(port, host='127.0.0.1'):
    """True when nothing listens on host:port (the guest's SSH forward can bind it)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError:
        return False
    finally:
        sock.close()
    return True


def pid_cmdline(pid):
    try:
        with open('/proc/%d/cmdline' % pid, 'rb') as f:
            return f.read().replace(b'\0', b' ').decode(errors='replace')
    except OSError:
        return ''


def group_members(pgid):
    members = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % entry) as f:
                fields = f.read().rsplit(')', 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != 'Z':
            members.append(int(entry))
    return members


def kill_group(pgid, timeout=5.0):
    """SIGKILL what is left of process group ``pgid`` and wait for it to go."""
    deadline = time.monotonic() + timeout
    while group_members(pgid) and time.monotonic() < deadline:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            break
        time.sleep(0.05)


class Lab:
    def __init__(self, run_dir=None):
        self.run_dir = os.path.abspath(run_dir or os.environ.get('TAPEOPS_LAB_DIR') or DEFAULT_RUN_DIR)
        self.state_file = os.path.join(self.run_dir, 'lab.json')

    # -- state --------------------------------------------------------------
    def load_state(self):
        try:
            with open(self.state_file) as f:
                return json.load(f)
        except FileNotFoundError:
            return None

    def save_state(self, state):
        tmp = self.state_file + '.tmp'
        with open(tmp, 'w') as f:
            json.dump(state, f, indent=1)
        os.replace(tmp, self.state_file)

    def lock(self):
        os.makedirs(self.run_dir, exist_ok=True)
        fd = os.open(os.path.join(self.run_dir, 'lock'), os.O_CREAT | os.O_RDWR, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX)
        return fd

    def specs(self, state):
        return [guest_spec(i, state['carts'], self.run_dir, state.get('port_base', BASE_PORT),
                           state.get('drive', 'tgt'))
                for i in range(1, state['guests'] + 1)]

    # -- preparation --------------------------------------------------------
    def ensure_packages(self, extra=()):
        missing = []
        for pkg in APT_PACKAGES + tuple(extra):
            proc = run(['dpkg-query', '-W', '-f=${Status}', pkg], check=False)
            if 'install ok installed' not in proc.stdout:
                missing.append(pkg)
        if not missing:
            return
        if os.geteuid() != 0:
            raise LabError('missing packages %s: install them with apt-get as root (or run tools/run setup)' % ' '.join(missing))
        say('apt: installing %s' % ' '.join(missing))
        env = dict(os.environ, DEBIAN_FRONTEND='noninteractive')
        subprocess.run(['apt-get', 'update', '-q'], env=env, check=True, stdout=subprocess.DEVNULL)
        # No daemon of these packages must start on this machine.
        created = False
        if not os.path.exists('/usr/sbin/policy-rc.d'):
            with open('/usr/sbin/policy-rc.d', 'w') as f:
                f.write('#!/bin/sh\nexit 101\n')
            os.chmod('/usr/sbin/policy-rc.d', 0o755)
            created = True
        try:
            subprocess.run(['apt-get', 'install', '-y', '-q', '--no-install-recommends'] + missing,
                           env=env, check=True, stdout=subprocess.DEVNULL)
        finally:
            if created:
                os.unlink('/usr/sbin/policy-rc.d')

    def shim(self):
        """Compile the ptrace XSAVE shim once per source hash; return the .so path."""
        with open(SHIM_SOURCE, 'rb') as f:
            digest = hashlib.sha256(f.read()).hexdigest()[:16]
        so = os.path.join(self.run_dir, 'shim', 'ptrace-xsave-shim-%s.so' % digest)
        if not os.path.exists(so):
            os.makedirs(os.path.dirname(so), exist_ok=True)
            tmp = so + '.tmp'
            run(['gcc', '-O2', '-Wall', '-shared', '-fPIC', '-o', tmp, SHIM_SOURCE, '-ldl'])
            os.replace(tmp, so)
            say('compiled %s' % so)
        return so

    @staticmethod
    def modroot(guest_dir):
        """A directory D with D/lib/modules -> UML's modules, for `modprobe -d D`.

        It lives in the guest dir, which the guest mounts at /run/tapelab, so
        it stays reachable whatever the run dir's path (even under /tmp,
        which the guest covers with its own tmpfs).
        """
        d = os.path.join(guest_dir, 'modroot')
        link = os.path.join(d, 'lib', 'modules')
        if not os.path.islink(link):
            os.makedirs(os.path.dirname(link), exist_ok=True)
            os.symlink(UML_MODULES, link)
        return d

    def ssh_key(self):
        d = os.path.join(self.run_dir, 'ssh')
        key = os.path.join(d, 'id_ed25519')
        if not os.path.exists(key):
            os.makedirs(d, mode=0o700, exist_ok=True)
            run(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', 'tapeops-lab', '-f', key])
        return key

    def source_template(self):
        """An ext4 image with the generated source tree, shared by the guests as a template."""
        img = os.path.join(self.run_dir, 'source-template-%d.img' % SOURCE_TREE_VERSION)
        if os.path.exists(img):
            return img
        _remove_quietly(os.path.join(self.run_dir, 'source-template.img'))   # an older tree's
        data = os.path.join(self.run_dir, 'source-data.tmp')
        shutil.rmtree(data, ignore_errors=True)
        start = time.monotonic()
        write_source_tree(data)
        tmp = img + '.tmp'
        with open(tmp, 'wb') as f:
            f.truncate(SOURCE_IMAGE_MB * 1024 * 1024)
        run(['mkfs.ext4', '-q', '-F', '-L', 'backup-src', '-E', 'root_owner=0:0', '-d', data, tmp])
        shutil.rmtree(data, ignore_errors=True)
        os.replace(tmp, img)
        say('source tree template %s (%.1f s)' % (img, time.monotonic() - start))
        return img

    def prepare_guest(self, spec, state, key, model=None, mhvtl_build=None):
        d = spec['dir']
        carts = os.path.join(d, 'cartridges')
        os.makedirs(carts, exist_ok=True)
        if spec.get('drive_mode') == 'tgt':
            self.prepare_tgt_cartridges(spec, state, carts)
        elif spec.get('drive_mode') == 'mhvtl':
            self.prepare_mhvtl(spec, state, mhvtl_build)
        else:
            self.prepare_emulated(spec, state, carts, model)
        src = source_image(d)
        if not os.path.exists(src):
            _remove_quietly(os.path.join(d, 'source.img'))                  # an older tree's
            run(['cp', '--sparse=always', self.source_template(), src])
        hostkey = os.path.join(d, 'ssh_host_ed25519_key')
        if not os.path.exists(hostkey):
            run(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', spec['name'], '-f', hostkey])
        os.chmod(hostkey, 0o600)
        shutil.copyfile(key + '.pub', os.path.join(d, 'authorized_keys'))
        with open(os.path.join(d, 'guest.env'), 'w') as f:
            f.write(guest_env(spec, '/run/tapelab/modroot', state['cart_mb'], state.get('mem_mb', 1024)))
        self.modroot(d)
        with open(os.path.join(d, 'sshd_config'), 'w') as f:
            f.write(sshd_config('/run/tapelab'))
        # bacula.json: the guest's Bacula of an earlier boot (its tmpfs is gone with it); health.json: the modes
        # of an earlier lab (up writes this one's)
        for name in ('ready', 'stop', 'failed', BACULA_MARKER, HEALTH_FILE):
            try:
                os.unlink(os.path.join(d, name))
            except FileNotFoundError:
                pass

    @staticmethod
    def prepare_mhvtl(spec, state, build_dir):
        """The mhvtl build (module, daemons, libraries) and its configuration files, in the guest's dir.

        A copy, not a link: the guest sees the host's root, but its /tmp is a tmpfs of its own, and the
        cache may live there.
        """
        tm = mhvtl_module()
        if not build_dir:
            raise LabError('%s: no mhvtl build to boot with' % spec['name'])
        dst = os.path.join(spec['dir'], 'mhvtl')
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(build_dir, dst)
        conf = os.path.join(spec['dir'], 'mhvtl-conf')
        shutil.rmtree(conf, ignore_errors=True)
        os.makedirs(conf)
        files = {
            'device.conf': tm.device_conf(spec['index']),
            'library_contents.%d' % tm.LIBRARY_ID: tm.library_contents(spec['index'], spec['carts']),
            'mhvtl.conf': tm.mhvtl_conf(tm.capacity_mb(state['cart_mb'], state.get('mem_mb', 1024))),
        }
        media = tm.media_list(spec['index'], spec['carts'], tm.capacity_mb(state['cart_mb'], state.get('mem_mb', 1024)))
        for name, text in files.items():
            with open(os.path.join(conf, name), 'w') as f:
                f.write(text)
        with open(os.path.join(spec['dir'], 'mhvtl-media'), 'w') as f:
            f.write(media)
        for name in glob.glob(os.path.join(spec['dir'], 'vt*.log')) + glob.glob(os.path.join(spec['dir'], 'mhvtl-*.log')):
            os.unlink(name)

    def mhvtl_build(self):
        """The mhvtl build for this machine: from the cache, or built now (lab/tapelab_mhvtl.py)."""
        tm = mhvtl_module()
        try:
            inputs = tm.build_inputs(SHIM_SOURCE, UML)
            cache = tm.cache_root()
            key = tm.cache_key(inputs)
            cached = tm.cached_build(cache, key)
            if cached:
                say('mhvtl: cached build %s (%s)' % (key, cached))
                return cached
            self.ensure_packages(tm.BUILD_PACKAGES)
            path, _seconds = tm.build(cache, inputs, tm.source_tarball(), say)
            return path
        except tm.MhvtlError as exc:
            raise LabError(str(exc)) from None

    @staticmethod
    def prepare_tgt_cartridges(spec, state, carts):
        for b in spec['barcodes']:
            path = os.path.join(carts, b)
            if not os.path.exists(path):
                run(['tgtimg', '--op', 'new', '--device-type', 'tape', '--barcode', b,
                     '--size', str(state['cart_mb']), '--type', 'data', '--thin-provisioning', '--file', path])
        notape = os.path.join(carts, 'notape')
        if not os.path.exists(notape):
            run(['tgtimg', '--op', 'new', '--device-type', 'tape', '--barcode', 'NOTAPE',
                 '--size', '1', '--type', 'clean', '--file', notape])
        smc = os.path.join(carts, 'smc')
        if not os.path.exists(smc):
            with open(smc, 'wb') as f:
                f.write(b'\0' * 1024)

    @staticmethod
    def prepare_emulated(spec, state, carts, model):
        """Cartridge files, the tapedrive package and its config for an emulated drive."""
        if HERE not in sys.path:
            sys.path.insert(0, HERE)
        from tapedrive import media  # pylint: disable=import-outside-toplevel
        ident = spec['drive']
        profile = drive_profile(ident, spec['scale'], MECH_DIVISOR, model_dict(ident, model))
        density = profile['density_code']
        for b in spec['barcodes']:
            path = os.path.join(carts, b + '.cart')
            if os.path.exists(path):
                continue
            cart = media.Cartridge.create(path, b, generation=ident['generation'], density_code=density,
                                          capacity_bytes=int(state['cart_mb']) * 1000 * 1000)
            cart.close()
        # Every boot starts with the cartridges in their home slots (guest-init then loads one):
        # the layout a previous run left is dropped.
        for name in ('library.json', 'changer-state.json'):
            try:
                os.unlink(os.path.join(carts, name))
            except FileNotFoundError:
                pass
        pylib = os.path.join(spec['dir'], 'pylib', 'tapedrive')
        shutil.rmtree(os.path.dirname(pylib), ignore_errors=True)
        os.makedirs(pylib)
        for src in glob.glob(os.path.join(HERE, 'tapedrive', '*.py')):
            shutil.copy2(src, pylib)
        config = tapedrive_config(spec, profile)
        with open(os.path.join(spec['dir'], 'tapedrive.json'), 'w') as f:
            json.dump(config, f, indent=1)
        for name in ('tapedrive.ready', 'tapedrive.log', 'tape0-stats.json'):
            try:
                os.unlink(os.path.join(spec['dir'], name))
            except FileNotFoundError:
                pass

    def booted_profile(self, spec):
        """The drive profile a running guest was booted with (its tapedrive.json), or None."""
        try:
            with open(os.path.join(spec['dir'], 'tapedrive.json')) as f:
                return json.load(f)['drives'][0]['profile']
        except (OSError, ValueError, KeyError, IndexError, TypeError):
            return None

    def write_known_hosts(self, specs):
        lines = []
        for spec in specs:
            with open(os.path.join(spec['dir'], 'ssh_host_ed25519_key.pub')) as f:
                keytype, keydata = f.read().split()[:2]
            lines.append('[127.0.0.1]:%d %s %s\n' % (spec['port'], keytype, keydata))
        with open(os.path.join(self.run_dir, 'ssh', 'known_hosts'), 'w') as f:
            f.writelines(lines)

    # -- processes ------------------------------------------------------------
    def _spawn(self, cmd, log, env=None):
        with open(log, 'ab') as out:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True, env=env, close_fds=True)
        return proc.pid

    @staticmethod
    def _read_pidfile(path, timeout=5.0):
        deadline = time.monotonic() + timeout
        while True:
            try:
                with open(path) as f:
                    text = f.read().strip()
                if text:
                    return int(text)
            except FileNotFoundError:
                pass
            if time.monotonic() > deadline:
                raise LabError('%s was not written: vde_switch did not start (is vde2 installed?)' % path)
            time.sleep(0.02)

    def start_guest(self, spec, shim):
        d = spec['dir']
        pids = {}
        sw = os.path.join(d, 'switch')
        shutil.rmtree(sw, ignore_errors=True)
        swpid = os.path.join(d, 'vde_switch.pid')
        try:
            os.unlink(swpid)
        except FileNotFoundError:
            pass
        run(['vde_switch', '--sock', sw, '--daemon', '--pidfile', swpid])
        pids['vde_switch'] = self._read_pidfile(swpid)
        pids['vde_plug'] = self._spawn(
            ['vde_plug', 'vde://%s' % sw, 'slirp:///tcpfwd=127.0.0.1:%d:10.0.2.15:22' % spec['port']],
            os.path.join(d, 'vde_plug.log'))
        env = dict(os.environ, LD_PRELOAD=shim, TMPDIR='/dev/shm', LC_ALL='C')
        uml_dir = os.path.join(d, 'uml')
        os.makedirs(uml_dir, exist_ok=True)
        cmd = [
            UML, 'mem=%dM' % self.state_mem(), 'rootfstype=hostfs', 'rootflags=/', 'ro',
            'init=%s' % GUEST_INIT, 'TAPELAB_GUEST_DIR=%s' % d,
            'ubd0=%s' % source_image(d),
            'eth0=vde,%s' % sw,
            'con=null', 'ssl=null', 'con0=null,fd:1',
            'umid=%s' % spec['name'], 'uml_dir=%s' % uml_dir,
            'quiet',
        ]
        log = os.path.join(d, 'console.log')
        with open(log, 'w'):
            pass
        pids['uml'] = self._spawn(cmd, log, env=env)
        pids['started'] = time.time()
        with open(os.path.join(d, 'pids.json'), 'w') as f:
            json.dump(pids, f)
        return pids

    def state_mem(self):
        state = self.load_state() or {}
        return int(state.get('mem_mb', 1024))

    def guest_pids(self, spec):
        try:
            with open(os.path.join(spec['dir'], 'pids.json')) as f:
                return json.load(f)
        except (OSError, ValueError):
            return {}

    def ssh_cmd(self, spec, command, tty=False):
        cmd = ['ssh'] + ssh_options(self.run_dir) + [
            '-i', os.path.join(self.run_dir, 'ssh', 'id_ed25519'),
            '-p', str(spec['port']), 'root@127.0.0.1']
        if tty:
            cmd.insert(1, '-t')
        if command:
            cmd.append(command)
        return cmd

    def ssh_ok(self, spec, timeout=8):
        try:
            proc = subprocess.run(self.ssh_cmd(spec, 'true'), stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            return False
        return proc.returncode == 0

    def read_ready(self, spec):
        try:
            with open(os.path.join(spec['dir'], 'ready')) as f:
                return parse_ready(f.read())
        except OSError:
            return {}

    def wait_guests(self, specs, started, timeout):
        pending = {s['name']: s for s in specs}
        boot = {}
        deadline = time.monotonic() + timeout
        while pending and time.monotonic() < deadline:
            for name, spec in list(pending.items()):
                failed = os.path.join(spec['dir'], 'failed')
                if os.path.exists(failed):
                    with open(failed) as f:
                        why = f.read().strip()
                    raise LabError('%s failed to boot (%s); see %s/console.log' % (name, why, spec['dir']))
                pids = self.guest_pids(spec)
                if pids.get('uml') and not pid_alive(pids['uml']):
                    raise LabError('%s: the user-mode-linux process exited during boot; see %s/console.log' % (
                        name, spec['dir']))
                ready = self.read_ready(spec)
                if ready and self.ssh_ok(spec):
                    boot[name] = (time.monotonic() - started, ready.get('uptime', '?'))
                    del pending[name]
            time.sleep(0.2)
        if pending:
            raise LabError('guests %s not ready after %d s; see console.log in %s/<guest>/ (lab left running: '
                           'run lab/tapelab down)' % (', '.join(sorted(pending)), timeout, self.run_dir))
        return boot

    # -- commands -------------------------------------------------------------
    def status(self):
        """Return (code, per-guest dict): 0 all up, 1 partly, 3 down."""
        state = self.load_state()
        if not state:
            return 3, {}
        result = {}
        for spec in self.specs(state):
            pids = self.guest_pids(spec)
            alive = {k: pid_alive(v) for k, v in pids.items() if k in ('uml', 'vde_switch', 'vde_plug')}
            ready = self.read_ready(spec)
            running = bool(alive) and all(alive.values())
            result[spec['name']] = {
                'running': running,
                'ssh': running and bool(ready) and self.ssh_ok(spec, timeout=6),
                'port': spec['port'],
                'pids': {k: pids[k] for k in alive},
                'alive': alive,
                'ready': ready,
                'drive': ' + '.join('%s %s' % (d['vendor'], d['product']) for d in spec.get('drives') or [spec['drive']]),
                'backend': spec.get('drive_mode', 'tgt'),
                'bacula': os.path.exists(os.path.join(spec['dir'], BACULA_MARKER)),
            }
            if spec.get('drive_mode') == 'emulated':
                result[spec['name']]['health'] = self.read_health(spec)
        ups = [g['ssh'] for g in result.values()]
        if ups and all(ups):
            return 0, result
        if any(g['running'] for g in result.values()):
            return 1, result
        return 3, result

    def up(self, guests, carts, cart_mb, mem_mb, timeout, drive=None, bacula=False, health=None):
        """Bring the lab up (``health``: health SPECs for the emulated drives, see ``health_settings``)."""
        fd = self.lock()
        try:
            code, current = self.status()
            state = self.load_state()
            if code == 0:
                if state['guests'] != guests and guests is not None:
                    raise LabError('the lab is up with %d guests; run lab/tapelab down first to change it' % state['guests'])
                if drive is not None and state.get('drive', 'tgt') != drive:
                    raise LabError('the lab is up with %s drives; run lab/tapelab down first to change it' %
                                   state.get('drive', 'tgt'))
                say('already up (no change):')
                self.print_status(current)
                if health:
                    self._set_health(state, health)
                if bacula:
                    self.ensure_packages(BACULA_APT_PACKAGES)
                    self._bacula_setup(state, missing_only=True)
                self.write_inventories(state)
                return 0
            if code == 1:
                say('lab partly running: stopping it first')
                self._down()
            start = time.monotonic()
            drive = drive or os.environ.get('TAPEOPS_LAB_DRIVE') or 'emulated'
            if drive not in DRIVE_MODES:
                raise LabError('drive mode must be one of %s (TAPEOPS_LAB_DRIVE), got %r' % (
                    ', '.join(DRIVE_MODES), drive))
            state = {
                'drive': drive,
                'guests': guests or int(os.environ.get('TAPEOPS_LAB_GUESTS') or DEFAULT_GUESTS),
                'carts': carts or int(os.environ.get('TAPEOPS_LAB_CARTRIDGES') or 3), 'cart_mb': cart_mb or 4096,
                'mem_mb': mem_mb or 1024, 'source': ROOT,
                'port_base': int(os.environ.get('TAPEOPS_LAB_PORT_BASE') or BASE_PORT),
            }
            specs = self.specs(state)
            if health and drive != 'emulated':
                raise LabError('health modes (--health, TAPEOPS_LAB_HEALTH) need the emulated drive: run '
                               'lab/tapelab up --drive emulated')
            settings = health_settings(health, specs) if drive == 'emulated' else {}
            self.ensure_packages(BACULA_APT_PACKAGES if bacula else ())
            if not os.path.exists(UML):
                raise LabError('%s missing: apt-get install user-mode-linux' % UML)
            self.save_state(state)
            busy = [str(s['port']) for s in specs if not port_free(s['port'])]
            if busy:
                raise LabError('127.0.0.1 port(s) %s already in use (another lab or service?): stop it, or give this '
                               'lab other ports with TAPEOPS_LAB_PORT_BASE (guest N listens on base+N)' % ', '.join(busy))
            shim = self.shim()
            key = self.ssh_key()
            mhvtl_build = self.mhvtl_build() if drive == 'mhvtl' else None
            model = load_drive_model() if drive == 'emulated' else None
            if drive == 'emulated' and model is None:
                say('warning: cannot import %s: the drives run on the stated defaults (an LTO-5)' % DRIVE_MODEL)
            for spec in specs:
                self.prepare_guest(spec, state, key, model, mhvtl_build)
                if spec['name'] in settings:
                    self.write_health(spec, settings[spec['name']])
            self.write_known_hosts(specs)
            prepared = time.monotonic()
            say('prepared run dir %s in %.1f s' % (self.run_dir, prepared - start))
            for spec in specs:
                self.start_guest(spec, shim)
            try:
                boot = self.wait_guests(specs, prepared, timeout)
            except LabError:
                self._down()
                raise
            for spec in specs:
                secs, uptime = boot[spec['name']]
                extra = ''
                if drive == 'emulated':
                    prof = self.booted_profile(spec) or {}
                    extra = ' (emulated at scale %g: %g..%g MB/s, buffer %g MB; source %s)' % (
                        spec['scale'], prof.get('native_mb_s', 0), prof.get('speed_floor_mb_s', 0),
                        prof.get('buffer_mb', 0),
                        '%g MB/s max' % (spec['source_rbps'] / 1e6) if spec['source_rbps'] else 'not throttled')
                elif drive == 'mhvtl':
                    extra = ' (mhvtl%s)' % ''.join(', and %s %s' % (d['vendor'], d['product'])
                                                   for d in spec['drives'][1:])
                mode = settings.get(spec['name']) or {}
                if mode.get('drive') or mode.get('cartridges'):
                    extra += '; health: %s' % health_words(mode)
                say('%s up in %.1f s (guest uptime %s s at ready), ssh -p %d root@127.0.0.1, drive %s %s%s' % (
                    spec['name'], secs, uptime, spec['port'], spec['drive']['vendor'], spec['drive']['product'],
                    extra))
            state['up_seconds'] = round(time.monotonic() - start, 1)
            state['boot_seconds'] = {n: round(b[0], 1) for n, b in boot.items()}
            self.save_state(state)
            if bacula:
                try:
                    self._bacula_setup(state)
                except LabError as exc:
                    self.write_inventories(state)
                    raise LabError('%s; the guests are up (stop them with lab/tapelab down)' % exc) from None
            self.write_inventories(state)
            prefix = '' if os.path.realpath(self.run_dir) == os.path.realpath(DEFAULT_RUN_DIR) else \
                'TAPEOPS_LAB_DIR=%s ' % shlex.quote(self.run_dir)
            say('lab up in %.1f s; inventory %s; stop it with: %s%s down' % (
                time.monotonic() - start, self.inventory_path(), prefix, os.path.join(HERE, 'tapelab')))
            return 0
        finally:
            os.close(fd)

    def _stop_guest(self, spec, grace):
        pids = self.guest_pids(spec)
        uml = pids.get('uml')
        if uml and pid_alive(uml):
            with open(os.path.join(spec['dir'], 'stop'), 'w') as f:
                f.write('stop\n')
        return pids

    def _down(self, grace=8.0):
        state = self.load_state()
        if not state:
            return []
        specs = self.specs(state)
        all_pids = [(s, self._stop_guest(s, grace)) for s in specs]
        deadline = time.monotonic() + grace
        for spec, pids in all_pids:
            uml = pids.get('uml')
            while uml and pid_alive(uml) and time.monotonic() < deadline:
                time.sleep(0.1)
        stopped = []
        for spec, pids in all_pids:
            for name in ('uml', 'vde_plug', 'vde_switch'):
                pid = pids.get(name)
                if not pid or not pid_alive(pid):
                    continue
                # Only our processes: a recorded pid whose command line matches.
                expected = {'uml': 'linux', 'vde_plug': 'vde_plug', 'vde_switch': 'vde_switch'}[name]
                if expected not in pid_cmdline(pid):
                    continue
                target = -pid if name in ('uml', 'vde_plug') else pid  # session leaders: their group
                try:
                    os.kill(target, signal.SIGTERM)
                except ProcessLookupError:
                    continue
                t = time.monotonic() + 3
                while pid_alive(pid) and time.monotonic() < t:
                    time.sleep(0.05)
                if pid_alive(pid):
                    try:
                        os.kill(target, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                stopped.append('%s:%s=%d' % (spec['name'], name, pid))
            # UML's helper processes stay in the process group of the UML pid
            # (a session leader we started) and may outlive it briefly.
            uml = pids.get('uml')
            if uml:
                kill_group(uml)
            try:
                os.unlink(os.path.join(spec['dir'], 'pids.json'))
            except FileNotFoundError:
                pass
            for name in ('ready', 'stop'):
                try:
                    os.unlink(os.path.join(spec['dir'], name))
                except FileNotFoundError:
                    pass
            shutil.rmtree(os.path.join(spec['dir'], 'switch'), ignore_errors=True)
        return stopped

    def down(self, purge=False):
        fd = self.lock()
        try:
            start = time.monotonic()
            stopped = self._down()
            if stopped:
                say('stopped %s in %.1f s' % (', '.join(stopped), time.monotonic() - start))
            else:
                say('not running (nothing to stop)')
            if purge:
                for name in os.listdir(self.run_dir):
                    if name == 'lock':
                        continue
                    path = os.path.join(self.run_dir, name)
                    if os.path.isdir(path) and not os.path.islink(path):
                        shutil.rmtree(path)
                    else:
                        os.unlink(path)
                say('purged %s' % self.run_dir)
            return 0
        finally:
            os.close(fd)

    def inventory_path(self):
        return os.path.join(self.run_dir, 'inventory', 'hosts.yml')

    def booted_specs(self, state):
        """specs() as the guests were booted (their guest.env), for the inventory."""
        out = []
        for spec in self.specs(state):
            try:
                with open(os.path.join(spec['dir'], 'guest.env')) as f:
                    spec = apply_booted_cartridges(spec, parse_guest_env(f.read()))
            except OSError:
                pass
            out.append(spec)
        return out

    def write_inventories(self, state, extra=None):
        """Write the generated inventory into the run dir and the checkout's inventories/lab/."""
        specs = self.booted_specs(state)
        readies = {s['name']: self.read_ready(s) for s in specs}
        profiles = {s['name']: self.booted_profile(s) for s in specs if s.get('drive_mode') == 'emulated'}
        bacula = {s['name']: self.bacula_vars(s) for s in specs}
        health = {s['name']: self.read_health(s) for s in specs if s.get('drive_mode') == 'emulated'}
        text = render_inventory(specs, readies, self.run_dir, profiles, bacula, health)
        targets = [self.inventory_path()]
        # The checkout's inventories/lab/hosts.yml belongs to the default lab;
        # a lab in another run dir (tests, measurements) leaves it alone.
        if os.path.realpath(self.run_dir) == os.path.realpath(DEFAULT_RUN_DIR) or \
                os.environ.get('TAPEOPS_LAB_CHECKOUT_INVENTORY') == '1':
            targets.append(os.path.join(ROOT, 'inventories', 'lab', 'hosts.yml'))
        if extra:
            targets.append(extra)
        for path in targets:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = path + '.tmp'
            with open(tmp, 'w') as f:
                f.write(text)
            os.replace(tmp, path)
        # Per-host files for playbooks that run on another inventory (molecule's).
        hv_dir = os.path.join(self.run_dir, 'host_vars')
        os.makedirs(hv_dir, exist_ok=True)
        for spec in specs:
            hv = host_vars(spec, readies[spec['name']], self.run_dir, profiles.get(spec['name']), bacula[spec['name']],
                           health.get(spec['name']))
            tmp = os.path.join(hv_dir, spec['name'] + '.yml.tmp')
            with open(tmp, 'w') as f:
                f.write('# Generated by lab/tapelab: variables of %s (docs/lab.md).\n---\n' % spec['name'])
                f.write('\n'.join(_yaml_lines(hv, 0)) + '\n')
            os.replace(tmp, tmp[:-4])
        # group_vars next to the run-dir copy, so that it works on its own too.
        gv_src = os.path.join(ROOT, 'inventories', 'lab', 'group_vars')
        if os.path.isdir(gv_src):
            gv_dst = os.path.join(self.run_dir, 'inventory', 'group_vars')
            shutil.rmtree(gv_dst, ignore_errors=True)
            shutil.copytree(gv_src, gv_dst)
        return targets

    # -- Bacula in the guests (lab/tapelab_bacula.py) -----------------------------
    @staticmethod
    def bacula_vars(spec):
        """The inventory variables of the guest's Bacula (its bacula.json), or None when it has none."""
        try:
            with open(os.path.join(spec['dir'], BACULA_MARKER)) as f:
                return json.load(f)['vars']
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def _bacula_specs(self, state, names):
        specs = self.booted_specs(state)
        known = [s['name'] for s in specs]
        unknown = [n for n in names or () if n not in known]
        if unknown:
            raise LabError('unknown guest %s; the lab has %s' % (', '.join(unknown), ', '.join(known)))
        return [s for s in specs if not names or s['name'] in names]

    def _bacula_in_guest(self, spec, script, timeout):
        """Run a set-up or stop script (sh) in the guest over SSH; its CompletedProcess, or LabError."""
        try:
            proc = run(self.ssh_cmd(spec, 'sh -s'), check=False, input=script, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise LabError('%s: the Bacula script did not finish within %d s (see %s/log/bacula.log in the guest)' % (
                spec['name'], timeout, bacula_module().BACULA_DIR)) from None
        if proc.returncode != 0:
            tail = '\n'.join((proc.stderr or '').strip().splitlines()[-8:])
            raise LabError('%s: the Bacula script failed (rc=%d):\n%s' % (spec['name'], proc.returncode, tail))
        return proc

    def _bacula_setup_guest(self, spec):
        tb = bacula_module()
        ready = self.read_ready(spec)
        if not ready.get('changer_sg'):
            raise LabError('%s is not up (no ready file with its changer): run lab/tapelab up first' % spec['name'])
        try:
            script = tb.setup_script(spec, ready['changer_sg'], ready.get('nst', '/dev/nst0'))
            variables = tb.host_vars(spec)
        except tb.BaculaSetupError as exc:
            raise LabError(str(exc)) from None
        start = time.monotonic()
        proc = self._bacula_in_guest(spec, script, timeout=300)
        seconds = round(time.monotonic() - start, 1)
        marker = os.path.join(spec['dir'], BACULA_MARKER)
        with open(marker + '.tmp', 'w') as f:
            json.dump({'vars': variables, 'setup_seconds': seconds, 'label_output': proc.stdout,
                       'setup_log': proc.stderr}, f, indent=1)
        os.replace(marker + '.tmp', marker)
        say('%s: Bacula set up in %.1f s: job %s, volumes %s in pool %s, bconsole -c %s' % (
            spec['name'], seconds, variables['tapeops_bacula']['job'], ' '.join(variables['tapeops_bacula']['volumes']),
            variables['tapeops_bacula']['pool'], variables['tapeops_bacula']['bconsole_config']))
        return seconds

    def _bacula_setup(self, state, names=None, missing_only=False):
        """Set Bacula up in the guests (all, or ``names``), in parallel; LabError naming each that failed."""
        specs = self._bacula_specs(state, names)
        if missing_only:
            specs = [s for s in specs if self.bacula_vars(s) is None]
        errors = []

        def one(spec):
            try:
                self._bacula_setup_guest(spec)
            except LabError as exc:
                errors.append(str(exc))
        threads = [threading.Thread(target=one, args=(spec,)) for spec in specs]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if errors:
            raise LabError('Bacula set-up failed: %s' % '; '.join(sorted(errors)))
        return [s['name'] for s in specs]

    def bacula_setup(self, names=None):
        fd = self.lock()
        try:
            state = self.load_state()
            if not state or self.status()[0] != 0:
                raise LabError('the lab in %s is not up: run lab/tapelab up --bacula' % self.run_dir)
            self.ensure_packages(BACULA_APT_PACKAGES)
            self._bacula_setup(state, names)
            self.write_inventories(state)
            return 0
        finally:
            os.close(fd)

    def bacula_stop(self, names=None):
        fd = self.lock()
        try:
            state = self.load_state()
            if not state:
                raise LabError('no lab in %s' % self.run_dir)
            tb = bacula_module()
            running = self.status()[1]
            errors = []
            for spec in self._bacula_specs(state, names):
                # a guest named is stopped even without its marker (a set-up that failed half-way)
                if not names and self.bacula_vars(spec) is None:
                    continue
                ready = self.read_ready(spec)
                if (running.get(spec['name']) or {}).get('ssh') and ready.get('changer_sg'):
                    start = time.monotonic()
                    try:
                        self._bacula_in_guest(spec, tb.stop_script(spec, ready['changer_sg'],
                                                                   ready.get('nst', '/dev/nst0')), timeout=120)
                    except LabError as exc:
                        errors.append(str(exc))
                        continue
                    say('%s: Bacula stopped in %.1f s' % (spec['name'], time.monotonic() - start))
                try:
                    os.unlink(os.path.join(spec['dir'], BACULA_MARKER))
                except FileNotFoundError:
                    pass
            self.write_inventories(state)
            if errors:
                raise LabError('; '.join(errors))
            return 0
        finally:
            os.close(fd)

    # -- the emulated drives' health modes (docs/lab.md, "Drive health") ---------

    @staticmethod
    def read_health(spec):
        """A guest's health modes (its health.json, parsed); none when it has no file or one that does not read."""
        ssc = tapedrive_module('ssc')
        try:
            with open(os.path.join(spec['dir'], HEALTH_FILE)) as f:
                return ssc.parse_health(json.load(f))
        except FileNotFoundError:
            return ssc.parse_health(None)
        except (OSError, ValueError) as exc:
            say('warning: %s: %s does not read (%s): taken as no health mode' % (spec['name'], HEALTH_FILE, exc))
            return ssc.parse_health(None)

    @staticmethod
    def write_health(spec, health):
        path = os.path.join(spec['dir'], HEALTH_FILE)
        tmp = path + '.tmp'
        with open(tmp, 'w') as f:
            json.dump(health, f, sort_keys=True)
            f.write('\n')
        os.replace(tmp, path)

    def _confirmed(self, spec, health, timeout=HEALTH_CONFIRM_S):
        """True once the guest's drive says (in its statistics file) it runs with ``health``."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                with open(os.path.join(spec['dir'], 'tape0-stats.json')) as f:
                    if json.load(f).get('health') == health:
                        return True
            except (OSError, ValueError):
                pass
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.2)

    def _set_health(self, state, items):
        specs = [s for s in self.booted_specs(state) if s.get('drive_mode') == 'emulated']
        if not specs:
            raise LabError('health modes need the emulated drive; the lab in %s runs %s drives (run lab/tapelab '
                           'down, then up --drive emulated)' % (self.run_dir, state.get('drive', 'tgt')))
        current = dict((s['name'], self.read_health(s)) for s in specs)
        settings = health_settings(items, specs, current)
        # a guest named whose modes were already those: said too, so that every SPEC gets an answer
        named = set(item.partition('=')[0].partition(':')[0] for item in ' '.join(items).replace(',', ' ').split())
        for spec in specs:
            if settings[spec['name']] == current[spec['name']]:
                if spec['name'] in named:
                    say('%s: %s, as before' % (spec['name'], health_words(settings[spec['name']])))
                continue
            self.write_health(spec, settings[spec['name']])
            if self._confirmed(spec, settings[spec['name']]):
                say('%s: %s' % (spec['name'], health_words(settings[spec['name']])))
            else:
                say('warning: %s: %s written, but the drive did not say it runs with it within %g s (see %s)' % (
                    spec['name'], health_words(settings[spec['name']]), HEALTH_CONFIRM_S,
                    os.path.join(spec['dir'], 'tapedrive.log')))
        return settings

    def health(self, items=None):
        """``lab/tapelab health [SPEC...]``: set modes on a running lab's drives, or print them."""
        fd = self.lock()
        try:
            state = self.load_state()
            if not state:
                raise LabError('no lab in %s: run lab/tapelab up first' % self.run_dir)
            if items:
                if self.status()[0] != 0:
                    raise LabError('the lab in %s is not up: run lab/tapelab up --health %s' % (
                        self.run_dir, ' '.join(shlex.quote(i) for i in items)))
                self._set_health(state, items)
                self.write_inventories(state)
                return 0
            for spec in self.booted_specs(state):
                if spec.get('drive_mode') == 'emulated':
                    print('%-8s %s' % (spec['name'], health_words(self.read_health(spec))))
                else:
                    print('%-8s no health modes (%s drive)' % (spec['name'], spec.get('drive_mode')))
            return 0
        finally:
            os.close(fd)

    @staticmethod
    def print_status(result):
        for name, g in sorted(result.items()):
            ready = g['ready']
            print('%-8s %-8s ssh=%-3s port=%d backend=%s drive=%s nst=%s changer=%s pids=%s' % (
                name, 'running' if g['running'] else 'stopped', 'ok' if g['ssh'] else 'no', g['port'],
                g.get('backend', '-'), g['drive'], ready.get('nst', '-'), ready.get('changer_sg', '-'),
                ','.join('%s:%d' % kv for kv in sorted(g['pids'].items())) or '-'))


def main(argv=None):
    parser = argparse.ArgumentParser(prog='lab/tapelab', description=__doc__.split('\n\n', maxsplit=1)[0])
    parser.add_argument('--run-dir', help='run directory (default: $TAPEOPS_LAB_DIR or %s)' % DEFAULT_RUN_DIR)
    sub = parser.add_subparsers(dest='cmd', required=True)
    p_up = sub.add_parser('up', help='bring the guests up (no-op when already up)')
    p_up.add_argument('-n', '--guests', type=int, choices=range(1, MAX_GUESTS + 1),
                      help='number of guests (default $TAPEOPS_LAB_GUESTS or %d)' % DEFAULT_GUESTS)
    p_up.add_argument('--drive', choices=DRIVE_MODES,
                      help='emulated: lab/tapedrive with physics (default, or $TAPEOPS_LAB_DRIVE); '
                           'tgt: Debian tgt over iSCSI, no physics; mhvtl: mhvtl built for the guest kernel '
                           '(source $TAPEOPS_MHVTL_SRC, cache $TAPEOPS_LAB_CACHE), no physics')
    p_up.add_argument('-k', '--cartridges', type=int, help='cartridges per guest (default $TAPEOPS_LAB_CARTRIDGES or 3)')
    p_up.add_argument('--cartridge-mb', type=int, default=4096, help='cartridge capacity in MB (sparse image)')
    p_up.add_argument('--mem-mb', type=int, default=1024, help='guest RAM in MiB (a file in /dev/shm)')
    p_up.add_argument('--timeout', type=int, default=180, help='seconds to wait for the guests')
    p_up.add_argument('--bacula', action='store_true',
                      help='also set up Bacula in each guest (Director, File and Storage daemons, SQLite catalog, '
                           'labelled scratch cartridges; docs/lab.md)')
    p_up.add_argument('--health', action='append', metavar='SPEC',
                      help='an emulated drive\'s health mode: GUEST=dirty|hard_error|none or GUEST:BARCODE=worn|none '
                           '(repeatable; default $TAPEOPS_LAB_HEALTH; docs/lab.md, "Drive health")')
    p_down = sub.add_parser('down', help='stop the processes the lab recorded (safe to repeat)')
    p_down.add_argument('--purge', action='store_true', help='also delete the run directory (cartridges, keys)')
    p_st = sub.add_parser('status', help='print the guests; exit 0 all up, 1 partly, 3 down')
    p_st.add_argument('--json', action='store_true')
    p_inv = sub.add_parser('inventory', help='(re)write the generated inventory')
    p_inv.add_argument('-o', '--output', help='also write it to this path')
    p_bs = sub.add_parser('bacula-setup', help='set Bacula up in running guests (all, or those named)')
    p_bs.add_argument('guests', nargs='*')
    p_bx = sub.add_parser('bacula-stop', help='stop the Bacula of guests (all, or those named), boot cartridge back')
    p_bx.add_argument('guests', nargs='*')
    p_he = sub.add_parser('health', help='set health modes of the running emulated drives (GUEST=MODE, '
                                         'GUEST:BARCODE=MODE), or print them')
    p_he.add_argument('specs', nargs='*', metavar='SPEC')
    p_ssh = sub.add_parser('ssh', help='ssh into a guest: tapelab ssh lab-ma1 [command]')
    p_ssh.add_argument('host')
    p_ssh.add_argument('command', nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    lab = Lab(args.run_dir)
    try:
        if args.cmd == 'up':
            health = args.health
            if health is None and os.environ.get('TAPEOPS_LAB_HEALTH'):
                health = [os.environ['TAPEOPS_LAB_HEALTH']]
            return lab.up(args.guests, args.cartridges, args.cartridge_mb, args.mem_mb, args.timeout, args.drive,
                          args.bacula, health)
        if args.cmd == 'health':
            return lab.health(args.specs)
        if args.cmd == 'bacula-setup':
            return lab.bacula_setup(args.guests)
        if args.cmd == 'bacula-stop':
            return lab.bacula_stop(args.guests)
        if args.cmd == 'down':
            return lab.down(args.purge)
        if args.cmd == 'status':
            code, result = lab.status()
            if args.json:
                print(json.dumps({'code': code, 'run_dir': lab.run_dir, 'guests': result}, indent=1))
            elif not result:
                print('lab not set up in %s' % lab.run_dir)
            else:
                lab.print_status(result)
            return code
        state = lab.load_state()
        if not state:
            raise LabError('no lab in %s: run lab/tapelab up first' % lab.run_dir)
        if args.cmd == 'inventory':
            for path in lab.write_inventories(state, args.output):
                print(path)
            return 0
        if args.cmd == 'ssh':
            specs = {s['name']: s for s in lab.specs(state)}
            if args.host not in specs:
                raise LabError('unknown guest %s; the lab has %s' % (args.host, ', '.join(sorted(specs))))
            cmd = lab.ssh_cmd(specs[args.host], ' '.join(args.command),
                              tty=not args.command and sys.stdin.isatty())
            os.execvp(cmd[0], cmd)
    except LabError as exc:
        say('error: %s' % exc)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main())
