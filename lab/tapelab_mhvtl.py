# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""mhvtl in the lab guests (``lab/tapelab up --drive mhvtl``).

mhvtl (https://github.com/markh794/mhvtl) is a second, independent SSC/SMC
implementation: a kernel module (a pseudo SCSI HBA, ``mhvtl.ko``) and user
space daemons (``vtltape`` per drive, ``vtllibrary`` per library). Each guest
runs one library with one or two drives of its own vendor and generation
(``KINDS``), barcoded cartridges including a cleaning and a WORM cartridge,
and a data cartridge no write may touch.

The build follows ../shared/lab/MHVTL.md: the module is built against exactly
the kernel source Debian's ``user-mode-linux`` was built from (its
``Built-Using``; the guest kernel checks vermagic only), from the pinned
mhvtl source tarball (``TAPEOPS_MHVTL_SRC``, checked by sha256). The result
(~1 MB) is cached under the lab's cache directory, keyed by the
user-mode-linux version, its Built-Using kernel, gcc, the mhvtl commit and the
ptrace shim's hash (``cache_key``).

Pure functions (layouts, mhvtl's configuration files, the cache key, parsing
``device.conf`` and ``Built-Using``) are unit-tested in
tests/unit/lab/test_tapelab_mhvtl.py; lab/tapelab.py builds and boots.
"""

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# The pinned source: ../shared/vendor/README.md (git archive --prefix=mhvtl-fc22cc6/ of that commit).
MHVTL_COMMIT = 'fc22cc6c7b799d229afe56df6cf5597b52e4d3de'
MHVTL_TARBALL = 'mhvtl-fc22cc6.tar.gz'
MHVTL_SHA256 = '18462d68f1423250f5b0c877aa3842ae24dbdc3b74a54789606172cc51756cb8'
MHVTL_UPSTREAM = 'https://github.com/markh794/mhvtl'
VENDORED = os.path.join(os.path.dirname(ROOT), 'shared', 'vendor', MHVTL_TARBALL)
# What the build needs beyond the lab's own packages (tools/run setup installs them too).
BUILD_PACKAGES = ('flex', 'bison', 'libelf-dev', 'bc', 'build-essential', 'xz-utils', 'zlib1g-dev')
UML_PACKAGE = 'user-mode-linux'
UML_CONFIG = '/usr/share/doc/user-mode-linux/config.gz'
# What the cache keeps of a build (relative to the build's directory in the cache).
BINARIES = ('vtltape', 'vtllibrary', 'vtlcmd', 'mktape', 'edit_tape', 'dump_tape', 'make_vtl_media')
LIBRARIES = ('libvtlscsi.so',)

# In the guest: mhvtl's configuration and the cartridge images (a tmpfs: guest RAM).
CONFIG_DIR = '/etc/mhvtl'
HOME_DIR = '/opt/mhvtl'
LIBRARY_ID = 10
# Cartridge capacity in MiB (mhvtl.conf CAPACITY); the images live in the guest's RAM and grow as written.
DEFAULT_CAPACITY_MB = 2048

# Per guest kind (index 1..3, repeated past 3): the library and its drives. Products are ones mhvtl's
# vtltape knows (its personality table, usr/cmd/vtltape.c); serials are mhvtl-style (10 characters).
LIBRARY = {'vendor': 'STK', 'product': 'L700', 'rev': '0107'}
KINDS = (
    ({'vendor': 'IBM', 'product': 'ULT3580-TD5', 'rev': 'G350', 'generation': 5, 'maker': 'IBM'},
     {'vendor': 'HP', 'product': 'Ultrium 6-SCSI', 'rev': '35GD', 'generation': 6, 'maker': 'HPE'}),
    ({'vendor': 'QUANTUM', 'product': 'ULTRIUM-HH7', 'rev': 'N9B1', 'generation': 7, 'maker': 'Quantum'},),
    ({'vendor': 'HP', 'product': 'Ultrium 8-SCSI', 'rev': 'L5GW', 'generation': 8, 'maker': 'HPE'},
     {'vendor': 'IBM', 'product': 'ULT3580-TD9', 'rev': 'N9B1', 'generation': 9, 'maker': 'IBM'}),
)
# LTO WORM media IDs (the LTO label specification; the collection's _media.py reads them the same way).
WORM_MEDIA_ID = {3: 'LT', 4: 'LU', 5: 'LV', 6: 'LW', 7: 'LX', 8: 'LY', 9: 'LZ'}


class MhvtlError(Exception):
    """mhvtl cannot be built or configured as asked; the message says what to do."""


# ---------------------------------------------------------------------------
# Pure: layouts and mhvtl's configuration files
# ---------------------------------------------------------------------------

def kind(index):
    return (index - 1) % len(KINDS) + 1


def drives(index):
    """The drives of guest ``index``: identity, mhvtl device id, C:T:L, serial, library drive number."""
    out = []
    for n, ident in enumerate(KINDS[kind(index) - 1], start=1):
        drive = dict(ident)
        drive.update({
            'number': n,                       # the library's drive element (Drive N in library_contents)
            'id': LIBRARY_ID + n,              # mhvtl device id (vtltape -q ID)
            'channel': 0, 'target': n, 'lun': 0,
            # MHV<guest><drive><generation> + padding: unique per guest, 10 characters
            'serial': 'MHV%02d%d%d%03d' % (index, n, drive['generation'], index),
        })
        out.append(drive)
    return out


def worm_barcode(index, generation):
    return 'MA%dW01%s' % (index, WORM_MEDIA_ID[generation])


def cartridges(index, count):
    """Slots of guest ``index``'s library, in order: list of dicts (barcode, kind, generation).

    Per drive generation ``count`` scratch cartridges (MA<i>0nn for the first drive's generation,
    MA<i>1nn for the second's), then the data cartridge (MA<i>099, first generation), a WORM
    cartridge of the first generation (its LTO WORM media ID) and a cleaning cartridge (CLN<i>01L1,
    the label HP and mhvtl give a universal cleaning cartridge).
    """
    gens = []
    for d in drives(index):
        if d['generation'] not in gens:
            gens.append(d['generation'])
    slots = []
    for g_index, gen in enumerate(gens):
        for n in range(1, count + 1):
            slots.append({'barcode': 'MA%d%d%02dL%d' % (index, g_index, n, gen), 'kind': 'scratch',
                          'generation': gen})
    slots.append({'barcode': 'MA%d099L%d' % (index, gens[0]), 'kind': 'data', 'generation': gens[0]})
    slots.append({'barcode': worm_barcode(index, gens[0]), 'kind': 'worm', 'generation': gens[0]})
    slots.append({'barcode': 'CLN%d01L1' % index, 'kind': 'cleaning', 'generation': None})
    return slots


def boot_loads(index, count):
    """(slot, drive number) pairs loaded at boot: each drive gets the first scratch cartridge of its generation."""
    slots = cartridges(index, count)
    out = []
    for d in drives(index):
        for s_index, slot in enumerate(slots, start=1):
            if slot['kind'] == 'scratch' and slot['generation'] == d['generation'] and \
                    s_index not in [s for s, _n in out]:
                out.append((s_index, d['number']))
                break
    return out


def media_list(index, count, capacity_mb):
    """The cartridges guest-init creates with mktape, one 'barcode type density capacity_mb' line each.

    mhvtl's make_vtl_media guesses type and density from the barcode and knows no LTO-9 label (L9) and no
    WORM label past LTO-6 (its regex stops at LW); the lab states both, so every generation works.
    """
    first = drives(index)[0]['generation']
    lines = []
    for slot in cartridges(index, count):
        kind_ = {'worm': 'WORM', 'cleaning': 'clean'}.get(slot['kind'], 'data')
        lines.append('%s %s LTO%d %d' % (slot['barcode'], kind_, slot['generation'] or first, capacity_mb))
    return '\n'.join(lines) + '\n'


def library_serial(index):
    return 'MHVL%06d' % (index * 1111)


def naa(device_id, channel, target, lun):
    return '%02d:22:33:44:ab:%02d:%02d:%02d' % (device_id, channel, target, lun)


def device_conf(index, home_dir=HOME_DIR):
    """mhvtl's device.conf (VERSION 5) for guest ``index``: the library (id 10, target 0), then its drives."""
    lines = [
        '# Generated by lab/tapelab for lab-ma%d (lab/tapelab_mhvtl.py); mhvtl device.conf VERSION 5.' % index,
        '',
        'VERSION: 5',
        '',
        'Library: %02d CHANNEL: %02d TARGET: %02d LUN: %02d' % (LIBRARY_ID, 0, 0, 0),
        ' Vendor identification: %s' % LIBRARY['vendor'],
        ' Product identification: %s' % LIBRARY['product'],
        ' Product revision level: %s' % LIBRARY['rev'],
        ' Unit serial number: %s' % library_serial(index),
        ' NAA: %s' % naa(LIBRARY_ID, 0, 0, 0),
        ' Home directory: %s' % home_dir,
        ' PERSIST: False',
        ' Backoff: 400',
        '',
    ]
    for d in drives(index):
        lines += [
            'Drive: %02d CHANNEL: %02d TARGET: %02d LUN: %02d' % (d['id'], d['channel'], d['target'], d['lun']),
            ' Library ID: %02d Slot: %02d' % (LIBRARY_ID, d['number']),
            ' Vendor identification: %s' % d['vendor'],
            ' Product identification: %s' % d['product'],
            ' Product revision level: %s' % d['rev'],
            ' Unit serial number: %s' % d['serial'],
            ' NAA: %s' % naa(LIBRARY_ID, d['channel'], d['target'], d['lun']),
            ' Compression: factor 1 enabled 1',
            ' Compression type: lzo',
            ' Backoff: 400',
            '',
        ]
    return '\n'.join(lines)


def library_contents(index, count):
    """mhvtl's library_contents.10 (VERSION 2): drives, picker, one MAP, the slots with their barcodes."""
    lines = ['# Generated by lab/tapelab for lab-ma%d (lab/tapelab_mhvtl.py).' % index, 'VERSION: 2', '']
    lines += ['Drive %d:' % d['number'] for d in drives(index)]
    lines += ['', 'Picker 1:', '', 'MAP 1:', '']
    lines += ['Slot %d: %s' % (n, slot['barcode']) for n, slot in enumerate(cartridges(index, count), start=1)]
    return '\n'.join(lines) + '\n'


def mhvtl_conf(capacity_mb=DEFAULT_CAPACITY_MB, home_dir=HOME_DIR):
    return '\n'.join([
        '# Generated by lab/tapelab (lab/tapelab_mhvtl.py).',
        'MHVTL_HOME_PATH=%s' % home_dir,
        'CAPACITY=%d' % capacity_mb,
        'VERBOSE=0',
        'VTL_DEBUG=0',
        '',
    ])


def tmpfs_mb(mem_mb):
    """Size of the guest's tmpfs on /opt (the cartridge images, in guest RAM): 60 % of its memory."""
    return max(64, int(mem_mb * 0.6))


def guest_env_lines(index, count, mem_mb):
    """Extra guest.env variables of an mhvtl guest (lab/guest-init reads them)."""
    return [
        ('TAPELAB_MHVTL_LIBRARY', '%d:%d:%d:%d' % (LIBRARY_ID, 0, 0, 0)),
        # id:channel:target:lun:serial per drive, in library drive order
        ('TAPELAB_MHVTL_DRIVES', ' '.join('%d:%d:%d:%d:%s' % (d['id'], d['channel'], d['target'], d['lun'],
                                                              d['serial']) for d in drives(index))),
        # slot:drive element (0-based, as mtx counts) loaded at boot
        ('TAPELAB_MHVTL_LOADS', ' '.join('%d:%d' % (slot, number - 1) for slot, number in boot_loads(index, count))),
        ('TAPELAB_MHVTL_TMPFS_MB', str(tmpfs_mb(mem_mb))),
    ]


def capacity_mb(cart_mb, mem_mb):
    """mhvtl's CAPACITY (MiB per cartridge): the lab's cartridge size, but no more than the guest's tmpfs holds."""
    return max(16, min(int(cart_mb), tmpfs_mb(mem_mb) // 2))


# ---------------------------------------------------------------------------
# Pure: parsing mhvtl's device.conf, dpkg's Built-Using; the cache key
# ---------------------------------------------------------------------------

_DEVICE_HEAD = re.compile(r'^(Library|Drive):\s*(\d+)\s+CHANNEL:\s*(\d+)\s+TARGET:\s*(\d+)\s+LUN:\s*(\d+)\s*$')
_DEVICE_FIELDS = {
    'Vendor identification': 'vendor',
    'Product identification': 'product',
    'Product revision level': 'revision',
    'Unit serial number': 'serial',
    'NAA': 'naa',
    'Home directory': 'home',
    'Compression type': 'compression_type',
}
_LIBRARY_SLOT = re.compile(r'^Library ID:\s*(\d+)\s+Slot:\s*(\d+)\s*$')


def parse_device_conf(text):
    """mhvtl's device.conf as {'version': int|None, 'libraries': [...], 'drives': [...]}.

    Each device: type (library/drive), id, channel, target, lun and the fields it states (vendor,
    product, revision, serial, naa; a drive's library_id and slot). Comment lines ('#') and fields not
    listed in _DEVICE_FIELDS are passed over; a field line before any device header is an error
    (ValueError), as mhvtl itself refuses such a file.
    """
    out = {'version': None, 'libraries': [], 'drives': []}
    current = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith('#'):
            continue
        if line.startswith('VERSION:'):
            value = line.split(':', 1)[1].strip()
            out['version'] = int(value) if value.isdigit() else None
            continue
        head = _DEVICE_HEAD.match(line)
        if head:
            current = {'type': head.group(1).lower(), 'id': int(head.group(2)), 'channel': int(head.group(3)),
                       'target': int(head.group(4)), 'lun': int(head.group(5))}
            out['libraries' if current['type'] == 'library' else 'drives'].append(current)
            continue
        if not line[0].isspace():
            raise ValueError('device.conf line %d: %r is neither a Library/Drive header nor an indented field'
                             % (number, line))
        if current is None:
            raise ValueError('device.conf line %d: field %r before any Library: or Drive: header' % (number, line))
        field = line.strip()
        slot = _LIBRARY_SLOT.match(field)
        if slot:
            current['library_id'] = int(slot.group(1))
            current['slot'] = int(slot.group(2))
            continue
        if ':' not in field:
            continue
        key, value = field.split(':', 1)
        if key.strip() in _DEVICE_FIELDS:
            current[_DEVICE_FIELDS[key.strip()]] = value.strip()
    return out


def parse_built_using(text, source='linux'):
    """The version of ``source`` in a dpkg Built-Using field ('linux (= 6.1.176-1), gcc-12 (= ...)'), or None."""
    for item in text.split(','):
        match = re.match(r'^\s*([a-z0-9.+-]+)\s*\(=\s*([^)\s]+)\s*\)\s*$', item)
        if match and match.group(1) == source:
            return match.group(2)
    return None


def upstream_release(debian_version):
    """'6.1.176-1' -> '6.1.176' (what ``linux.uml --version`` prints)."""
    return debian_version.split('-', 1)[0]


def cache_key(inputs):
    """A short hex key over the build's inputs (a dict of strings): equal inputs, equal key."""
    needed = ('uml_version', 'kernel_source', 'gcc', 'mhvtl_commit', 'shim_sha256')
    missing = [k for k in needed if not inputs.get(k)]
    if missing:
        raise MhvtlError('cannot key the mhvtl build: %s unknown' % ', '.join(missing))
    blob = json.dumps({k: inputs[k] for k in needed}, sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def tarball_commit(path):
    """The commit ``git archive`` recorded in the tarball's pax header, or None."""
    try:
        with tarfile.open(path) as tar:
            comment = (tar.pax_headers or {}).get('comment', '')
    except (OSError, tarfile.TarError):
        return None
    return comment if re.match(r'^[0-9a-f]{40}$', comment or '') else None


def sha256_file(path):
    digest = hashlib.sha256()
    with open(path, 'rb') as f:
        for block in iter(lambda: f.read(1 << 20), b''):
            digest.update(block)
    return digest.hexdigest()


def source_tarball(env=None):
    """The mhvtl source tarball to build: $TAPEOPS_MHVTL_SRC, else the vendored copy; checked by sha256."""
    env = os.environ if env is None else env
    path = env.get('TAPEOPS_MHVTL_SRC') or (VENDORED if os.path.exists(VENDORED) else '')
    how = ('download it where a network is: git clone %s && git -C mhvtl archive --format=tar.gz '
           '--prefix=mhvtl-fc22cc6/ -o %s %s, and set TAPEOPS_MHVTL_SRC to its path' % (
               MHVTL_UPSTREAM, os.path.join('$PWD', MHVTL_TARBALL), MHVTL_COMMIT))
    if not path:
        raise MhvtlError('no mhvtl source: TAPEOPS_MHVTL_SRC is unset and %s does not exist; %s' % (VENDORED, how))
    if not os.path.isfile(path):
        raise MhvtlError('TAPEOPS_MHVTL_SRC=%s is not a file; %s' % (path, how))
    digest = sha256_file(path)
    if digest != MHVTL_SHA256:
        raise MhvtlError('%s has sha256 %s, not the pinned %s (mhvtl commit %s): use the pinned tarball; %s' % (
            path, digest, MHVTL_SHA256, MHVTL_COMMIT[:7], how))
    return path


# ---------------------------------------------------------------------------
# Machine side: the build and its cache
# ---------------------------------------------------------------------------

def cache_root(env=None):
    """The lab's cache directory: $TAPEOPS_LAB_CACHE, else $XDG_CACHE_HOME/tapeops-lab or ~/.cache/tapeops-lab."""
    env = os.environ if env is None else env
    if env.get('TAPEOPS_LAB_CACHE'):
        return os.path.abspath(env['TAPEOPS_LAB_CACHE'])
    base = env.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache')
    return os.path.join(base, 'tapeops-lab')


def _out(cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=False,
                          env=dict(os.environ, LC_ALL='C'))
    if proc.returncode != 0:
        raise MhvtlError('command failed (rc=%d): %s\n%s' % (proc.returncode, ' '.join(cmd), proc.stderr.strip()))
    return proc.stdout.strip()


def build_inputs(shim_source, uml='/usr/bin/linux.uml'):
    """What the build depends on, read from this machine (dpkg, gcc, the shim's source)."""
    fields = _out(['dpkg-query', '-W', '-f=${Version}\n${Built-Using}\n', UML_PACKAGE]).split('\n')
    uml_version, built_using = fields[0], (fields[1] if len(fields) > 1 else '')
    kernel = parse_built_using(built_using)
    if not kernel:
        raise MhvtlError('%s %s states no Built-Using linux version (%r): cannot tell which kernel source to build '
                         'mhvtl against' % (UML_PACKAGE, uml_version, built_using))
    with open(shim_source, 'rb') as f:
        shim = hashlib.sha256(f.read()).hexdigest()
    return {
        'uml_version': uml_version,
        'kernel_source': kernel,
        'uml_release': _out([uml, '--version']),
        'gcc': _out(['gcc', '--version']).splitlines()[0],
        'mhvtl_commit': MHVTL_COMMIT,
        'shim_sha256': shim,
    }


def cached_build(cache_dir, key):
    """The build directory for ``key`` when the cache holds a complete one, else None."""
    path = os.path.join(cache_dir, 'mhvtl', key)
    if os.path.exists(os.path.join(path, 'build.json')) and os.path.exists(os.path.join(path, 'mhvtl.ko')):
        return path
    return None


def _sh(script, cwd, log, timeout):
    with open(log, 'a') as out:
        out.write('\n$ %s\n' % script)
        out.flush()
        try:
            proc = subprocess.run(['bash', '-c', 'set -euo pipefail; ' + script], cwd=cwd, stdout=out,
                                  stderr=subprocess.STDOUT, timeout=timeout, check=False,
                                  env=dict(os.environ, LC_ALL='C'))
        except subprocess.TimeoutExpired:
            raise MhvtlError('mhvtl build step timed out after %d s: %s (log: %s)' % (timeout, script, log)) from None
    if proc.returncode != 0:
        with open(log) as f:
            tail = ''.join(f.readlines()[-15:])
        raise MhvtlError('mhvtl build step failed (rc=%d): %s\n%s(full log: %s)' % (proc.returncode, script, tail, log))


SCRATCH_MIN_FREE = 4 * 1024 ** 3


def scratch_dir(fallback, candidate='/dev/shm', min_free=SCRATCH_MIN_FREE):
    """Where the build unpacks the kernel: ``candidate`` (a tmpfs) when it has ``min_free`` bytes free, else
    ``fallback``."""
    try:
        st = os.statvfs(candidate)
    except OSError:
        return fallback
    return candidate if st.f_bavail * st.f_frsize >= min_free else fallback


def build(cache_dir, inputs, tarball, say, jobs=2):
    """Build mhvtl into ``cache_dir``/mhvtl/<key>/ (module, daemons, libraries); return (path, seconds)."""
    key = cache_key(inputs)
    done = cached_build(cache_dir, key)
    if done:
        return done, 0.0
    start = time.monotonic()
    parent = os.path.join(cache_dir, 'mhvtl')
    os.makedirs(parent, exist_ok=True)
    # the kernel tree (~1.3 GB, ~75000 files) unpacks and goes faster in memory when there is room
    work = tempfile.mkdtemp(prefix='tapeops-mhvtl-build-%s-' % key, dir=scratch_dir(parent))
    os.chmod(work, 0o755)   # apt-get download writes as _apt where it can
    log = os.path.join(parent, 'build-%s.log' % key)
    with open(log, 'w') as f:
        f.write('mhvtl build %s: %s\n' % (key, json.dumps(inputs, sort_keys=True)))
    kver = inputs['kernel_source']
    release = upstream_release(kver)
    try:
        say('mhvtl: building %s against linux-source-6.1 %s (user-mode-linux %s; log %s)' % (
            MHVTL_COMMIT[:7], kver, inputs['uml_version'], log))
        # The exact kernel source user-mode-linux was built from (never the newest linux-source-6.1).
        _sh('apt-get download -q linux-source-6.1=%s' % kver, work, log, 600)
        _sh('dpkg-deb --fsys-tarfile linux-source-6.1_%s_all.deb | tar -xO ./usr/src/linux-source-6.1.tar.xz '
            '| tar -xJ && rm -f linux-source-6.1_%s_all.deb' % (kver, kver), work, log, 600)
        _sh('mkdir kb && zcat %s > kb/.config && make -s -C linux-source-6.1 O=$PWD/kb ARCH=um olddefconfig && '
            'make -s -C linux-source-6.1 O=$PWD/kb ARCH=um -j%d modules_prepare' % (UML_CONFIG, jobs), work, log, 900)
        with open(os.path.join(work, 'kb', 'include', 'config', 'kernel.release')) as f:
            built_release = f.read().strip()
        if built_release != inputs.get('uml_release', release) or built_release != release:
            raise MhvtlError('the kernel tree is %s but linux.uml is %s: the module would be refused' % (
                built_release, inputs.get('uml_release')))
        _sh('tar -xzf %s' % shlex.quote(tarball), work, log, 120)
        src = os.path.join(work, 'mhvtl-%s' % MHVTL_COMMIT[:7])
        _sh('cd %s/kernel && KDIR=%s/linux-source-6.1 ./config.sh' % (src, work), work, log, 120)
        _sh('make -s -C kb ARCH=um M=%s/kernel modules' % src, work, log, 600)
        _sh('make -s -C %s -j%d usr' % (src, jobs), work, log, 600)
        out = os.path.join(work, 'out')
        shutil.copytree(os.path.join(src, 'usr', 'bin'), os.path.join(out, 'bin'))
        os.makedirs(os.path.join(out, 'lib'))
        for name in LIBRARIES:
            shutil.copy2(os.path.join(src, 'usr', name), os.path.join(out, 'lib'))
        shutil.copy2(os.path.join(src, 'kernel', 'mhvtl.ko'), out)
        missing = [n for n in BINARIES if not os.path.exists(os.path.join(out, 'bin', n))]
        if missing:
            raise MhvtlError('the mhvtl build made no %s (log: %s)' % (', '.join(missing), log))
        seconds = round(time.monotonic() - start, 1)
        with open(os.path.join(out, 'build.json'), 'w') as f:
            json.dump({'key': key, 'inputs': inputs, 'seconds': seconds, 'source_sha256': MHVTL_SHA256,
                       'built': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}, f, indent=1, sort_keys=True)
        final = os.path.join(parent, key)
        staged = os.path.join(parent, '.%s.tmp' % key)    # the build dir may be on another filesystem
        shutil.rmtree(staged, ignore_errors=True)
        shutil.copytree(out, staged)
        shutil.rmtree(final, ignore_errors=True)
        os.replace(staged, final)
        return final, seconds
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if done is None and os.path.exists(os.path.join(parent, key, 'build.json')):
            say('mhvtl: built in %.1f s (%.1f s with removing the kernel tree), cached in %s' % (
                seconds, time.monotonic() - start, os.path.join(parent, key)))


# ---------------------------------------------------------------------------
# On an mhvtl machine (a lab guest, or a user's own): what mhvtl runs, for molecule/mhvtl
# ---------------------------------------------------------------------------

_CONTENTS_LINE = re.compile(r'^(Drive|Picker|MAP|Slot)\s+(\d+)\s*:\s*(\S*)\s*$')


def parse_library_contents(text):
    """mhvtl's library_contents.<id>: {'version', 'drives': [n], 'pickers': [n], 'maps': {n: barcode|None},
    'slots': {n: barcode|None}}; comments and lines mhvtl does not read are passed over."""
    out = {'version': None, 'drives': [], 'pickers': [], 'maps': {}, 'slots': {}}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith('#'):
            continue
        if line.startswith('VERSION:'):
            value = line.split(':', 1)[1].strip()
            out['version'] = int(value) if value.isdigit() else None
            continue
        match = _CONTENTS_LINE.match(line)
        if not match:
            continue
        what, number, barcode = match.group(1), int(match.group(2)), match.group(3) or None
        if what == 'Drive':
            out['drives'].append(number)
        elif what == 'Picker':
            out['pickers'].append(number)
        elif what == 'MAP':
            out['maps'][number] = barcode
        else:
            out['slots'][number] = barcode
    return out


def label_kind(barcode):
    """What an LTO label says (for a machine whose media list is not the lab's): worm, cleaning or data."""
    tag = (barcode or '').strip().upper()
    if tag.startswith('CLN'):
        return 'cleaning'
    if tag[-2:] in WORM_MEDIA_ID.values():
        return 'worm'
    return 'data'


def _read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def _mhvtl_scsi_dir(device, sysfs='/sys'):
    """The sysfs dir of the mhvtl device at ``device``'s C:T:L (on a SCSI host whose driver is mhvtl), or None."""
    suffix = ':%d:%d:%d' % (device['channel'], device['target'], device['lun'])
    base = os.path.join(sysfs, 'bus', 'scsi', 'devices')
    for name in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        if not name.endswith(suffix) or name.count(':') != 3:
            continue
        host = name.split(':', 1)[0]
        if _read(os.path.join(sysfs, 'class', 'scsi_host', 'host' + host, 'proc_name')) == 'mhvtl':
            return os.path.join(base, name)
    return None


def _node(directory, cls, prefix):
    try:
        names = sorted(os.listdir(os.path.join(directory, cls)))
    except OSError:
        return None
    for name in names:
        if name.startswith(prefix) and name[len(prefix):].isdigit():
            return '/dev/' + name
    return None


def machine_facts(config_dir=CONFIG_DIR, sysfs='/sys'):
    """What mhvtl runs here, from its own configuration and sysfs: libraries, drives (by C:T:L: their H:C:T:L,
    nst and sg nodes of this boot), the library's slots and what its labels say."""
    with open(os.path.join(config_dir, 'device.conf')) as f:
        conf = parse_device_conf(f.read())
    out = {'config_dir': config_dir, 'libraries': [], 'drives': []}
    for lib in conf['libraries']:
        directory = _mhvtl_scsi_dir(lib, sysfs)
        contents = {}
        try:
            with open(os.path.join(config_dir, 'library_contents.%d' % lib['id'])) as f:
                contents = parse_library_contents(f.read())
        except OSError:
            pass
        slots = contents.get('slots') or {}
        out['libraries'].append(dict(lib, hctl=os.path.basename(directory) if directory else None,
                                     sg=_node(directory, 'scsi_generic', 'sg') if directory else None,
                                     slots=[{'slot': n, 'barcode': b, 'kind': label_kind(b) if b else None}
                                            for n, b in sorted(slots.items())]))
    for drive in conf['drives']:
        directory = _mhvtl_scsi_dir(drive, sysfs)
        out['drives'].append(dict(drive, hctl=os.path.basename(directory) if directory else None,
                                  nst=_node(directory, 'scsi_tape', 'nst') if directory else None,
                                  sg=_node(directory, 'scsi_generic', 'sg') if directory else None))
    return out


def main(argv=None):
    """``python3 tapelab_mhvtl.py facts [CONFIG_DIR]``: machine_facts() as JSON (molecule/mhvtl runs it there)."""
    import sys  # pylint: disable=import-outside-toplevel
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] != 'facts':
        print('usage: tapelab_mhvtl.py facts [CONFIG_DIR]', file=sys.stderr)
        return 2
    try:
        facts = machine_facts(args[1] if len(args) > 1 else CONFIG_DIR)
    except (OSError, ValueError) as exc:
        print('cannot read mhvtl here: %s (is mhvtl installed, its device.conf in %s?)' % (
            exc, args[1] if len(args) > 1 else CONFIG_DIR), file=sys.stderr)
        return 1
    print(json.dumps(facts, indent=1, sort_keys=True))
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
