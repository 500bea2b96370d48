# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Find every tape drive and medium changer on this host, read-only.

Private to this collection: may change without notice.

Sources, in order of trust: sysfs (what the kernel bound: st nodes, sg nodes,
INQUIRY strings, VPD 0x80 serial, st options and statistics), then the tools
(``mt status``, ``sg_read_block_limits -H``, ``mtx status``, ``sg_raw`` READ
ELEMENT STATUS with DVCID for the drive <-> changer element match,
``sg_logs``), each run with LC_ALL=C and a timeout through ``_cli.run``.
Nothing here writes to a device: the only opens are O_RDONLY|O_NONBLOCK on
sg nodes for the BLKSECTGET ioctl.
"""

from __future__ import annotations

import os
import re
import struct

from ansible_collections.tapeops.qualify.plugins.module_utils import _cli
from ansible_collections.tapeops.qualify.plugins.module_utils import _mt
from ansible_collections.tapeops.qualify.plugins.module_utils import _mtx
from ansible_collections.tapeops.qualify.plugins.module_utils import _scsi_inquiry
from ansible_collections.tapeops.qualify.plugins.module_utils import _sg_logs
from ansible_collections.tapeops.qualify.plugins.module_utils import _st_sysfs

SYS_ROOT = '/sys'
TOOL_TIMEOUT = 60
BLKSECTGET = 0x1267
# MTWEOFI ("write file marks, immediate") is in Linux since 2.6.37 (st.c, mtio.h).
MTWEOFI_SINCE = (2, 6, 37)
LOG_PAGES = (0x0C, 0x14, 0x17, 0x2E, 0x34)


def _read(path):
    return _st_sysfs.read_attr(path)


def kernel_supports_mtweofi(release=None):
    release = release or os.uname().release
    numbers = tuple(int(x) for x in re.findall(r'\d+', release)[:3])
    return numbers >= MTWEOFI_SINCE


def vpd80_serial(data):
    """Unit serial number from the raw VPD page 0x80 (sysfs ``vpd_pg80``)."""
    if not data or len(data) < 4 or data[1] != 0x80:
        return None
    length = (data[2] << 8) | data[3]
    return data[4:4 + length].decode('ascii', 'replace').strip() or None


def parse_sg_raw_hex(text):
    """The data bytes ``sg_raw -r N`` prints (after "Received N bytes of data")."""
    return _scsi_inquiry.parse_hex_bytes(
        '\n'.join(line for line in (text or '').splitlines() if not line.startswith('# ')))


def decode_element_status(data):
    """READ ELEMENT STATUS data (SMC-3 6.11) of data transfer elements.

    Returns ``[{'address', 'full', 'source_address', 'volume_tag', 'identifier'}]``.
    The identifier (DVCID) is the drive's device identification, often
    vendor(8) + product(16) + serial; some changers (tgt) cut it short.
    """
    out = []
    if len(data) < 16:
        return out
    pos = 8
    while pos + 8 <= len(data):
        flags = data[pos + 1]
        desc_len = (data[pos + 2] << 8) | data[pos + 3]
        page_bytes = (data[pos + 5] << 16) | (data[pos + 6] << 8) | data[pos + 7]
        pvoltag, avoltag = bool(flags & 0x80), bool(flags & 0x40)
        pos += 8
        end = min(len(data), pos + page_bytes)
        while desc_len and pos + 12 <= end:
            desc = data[pos:min(pos + desc_len, end)]
            entry = {
                'address': (desc[0] << 8) | desc[1],
                'full': bool(desc[2] & 0x01),
                'source_address': ((desc[10] << 8) | desc[11]) if desc[9] & 0x80 else None,
                'volume_tag': None,
                'identifier': None,
            }
            off = 12
            if pvoltag:
                entry['volume_tag'] = bytes(desc[off:off + 32]).decode('ascii', 'replace').strip() or None
                off += 36
            if avoltag:
                off += 36
            if off + 4 <= len(desc):
                id_len = desc[off + 3]
                ident = bytes(desc[off + 4:off + 4 + id_len])
                entry['identifier'] = ident.decode('ascii', 'replace').rstrip('\x00').strip() or None
            out.append(entry)
            pos += desc_len
        pos = max(pos, end)
    return out


def match_drive_element(drive, elements):
    """Index (mtx numbering) of the element holding ``drive``, matched by serial.

    The DVCID identifier is compared with vendor(8)+product(16)+serial; a
    changer that truncates it (tgt) still matches when the shortened text is
    a prefix of exactly one drive's identity. Returns ``(index, how)`` or
    ``(None, None)``.
    """
    serial = (drive.get('serial') or '').strip()
    identity = '%-8s%-16s%s' % (drive.get('vendor') or '', drive.get('product') or '', serial)
    squash = re.sub(r'\s+', ' ', identity).strip()
    hits = []
    for index, element in enumerate(elements):
        ident = element.get('identifier')
        if not ident:
            continue
        ident_squash = re.sub(r'\s+', ' ', ident).strip()
        if serial and serial in ident:
            hits.append((index, 'serial'))
        elif len(ident_squash) > len((drive.get('vendor') or '') + (drive.get('product') or '')) + 1 \
                and squash.startswith(ident_squash):
            hits.append((index, 'serial_prefix'))
    exact = [h for h in hits if h[1] == 'serial']
    if len(exact) == 1:
        return exact[0]
    if len(hits) == 1:
        return hits[0]
    return None, None


def hba_max_transfer(sg_path):
    """Largest transfer the HBA path takes for this device (BLKSECTGET on sg), or None."""
    if not sg_path:
        return None
    try:
        import fcntl
        fd = os.open(sg_path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        raw = fcntl.ioctl(fd, BLKSECTGET, struct.pack('i', 0))
        value = struct.unpack('i', raw)[0]
        return value if value > 0 else None
    except OSError:
        return None
    finally:
        os.close(fd)


def _sg_of(scsi_dir):
    gen = os.path.join(scsi_dir, 'scsi_generic')
    try:
        names = sorted(os.listdir(gen))
    except OSError:
        return None
    return '/dev/%s' % names[0] if names else None


def _generation(vendor, product, density):
    try:
        from ansible_collections.tapeops.qualify.plugins.module_utils import _drive_model
    except ImportError:
        return None
    gen = _drive_model.identify_inquiry(vendor, product)
    if gen:
        gen = dict(gen, source='inquiry')
        return gen
    if density:
        by_density = _drive_model.generation_from_density(density)
        if by_density:
            return dict(by_density, source='density')
    return None


def _run(runner, cmd):
    try:
        return runner(cmd)
    except _cli.CliError as exc:
        return _cli.CliResult(exc.cmd or cmd, exc.rc if exc.rc is not None else -1, exc.stdout or '',
                              exc.stderr or exc.msg)


def read_log_pages(sg, runner, pages=LOG_PAGES):
    """Log pages of the drive at ``sg``: ``{supported, unsupported_reason, pages, errors}``.

    Never called while the benchmark writes.
    """
    out = {'supported': [], 'unsupported_reason': None, 'pages': {}, 'errors': {}}
    if not sg:
        out['unsupported_reason'] = 'no sg node for this drive (load the sg module)'
        return out
    result = _run(runner, ['sg_logs', '-p', '0x00', sg])
    if result.rc != 0:
        kind, reason = _sg_logs.classify_failure(result.rc, result.stdout, result.stderr)
        if kind == 'retry':
            result = _run(runner, ['sg_logs', '-p', '0x00', sg])
        if result.rc != 0:
            kind, reason = _sg_logs.classify_failure(result.rc, result.stdout, result.stderr)
            out['unsupported_reason'] = reason if kind == 'unsupported' else None
            if kind != 'unsupported':
                out['errors']['0x00'] = reason
            return out
    out['supported'] = _sg_logs.parse_supported_pages(result.stdout)
    for page in pages:
        if page not in out['supported']:
            continue
        cmd = ['sg_logs', '-p', '0x%02x' % page, sg]
        if page >= 0x30:
            cmd.insert(1, '-H')
        result = _run(runner, cmd)
        key = '0x%02x' % page
        if result.rc != 0:
            out['errors'][key] = _sg_logs.classify_failure(result.rc, result.stdout, result.stderr)[1]
            continue
        out['pages'][key] = _sg_logs.decode_page(page, result.stdout)
    return out


def _changer_elements(sg, runner):
    result = _run(runner, ['sg_raw', '-r', '4096', sg, 'b8', '04', '00', '00', '00', '40', '03', '00', '10', '00',
                           '00', '00'])
    if result.rc != 0:
        return []
    # sg_raw prints the data dump on stderr or stdout depending on its version.
    return decode_element_status(parse_sg_raw_hex((result.stdout or '') + '\n' + (result.stderr or '')))


def discover_changers(runner, sys_root=SYS_ROOT):
    changers = []
    base = os.path.join(sys_root, 'bus', 'scsi', 'devices')
    try:
        entries = sorted(os.listdir(base))
    except OSError:
        entries = []
    for entry in entries:
        scsi_dir = os.path.join(base, entry)
        if _read(os.path.join(scsi_dir, 'type')) != '8':
            continue
        sg = _sg_of(scsi_dir)
        changer = {
            'hctl': entry, 'sg': sg,
            'vendor': _read(os.path.join(scsi_dir, 'vendor')),
            'product': _read(os.path.join(scsi_dir, 'model')),
            'revision': _read(os.path.join(scsi_dir, 'rev')),
            'status': None, 'error': None, 'elements': [],
        }
        if sg:
            result = _run(runner, ['mtx', '-f', sg, 'status'])
            status = _mtx.parse_mtx_status(result.stdout + '\n' + result.stderr)
            if result.rc != 0 or status['error']:
                changer['error'] = status['error'] or (result.stderr or '').strip() or 'mtx status failed'
            changer['status'] = status
            changer['elements'] = _changer_elements(sg, runner)
        changers.append(changer)
    return changers


def discover(runner=None, sys_root=SYS_ROOT, log_pages=True, only=None):
    """``{'drives': [...], 'changers': [...]}`` for this host (see tape_drive_info RETURN)."""
    if runner is None:
        def runner(cmd):
            return _cli.run(cmd, timeout=TOOL_TIMEOUT)
    changers = discover_changers(runner, sys_root)
    drives = []
    tape_class = os.path.join(sys_root, 'class', 'scsi_tape')
    try:
        names = sorted(n for n in os.listdir(tape_class) if re.match(r'^nst\d+$', n))
    except OSError:
        names = []
    weofi = kernel_supports_mtweofi()
    for name in names:
        nst = '/dev/%s' % name
        if only and nst not in only and name not in only:
            continue
        scsi_dir = os.path.realpath(os.path.join(tape_class, name, 'device'))
        sg = _sg_of(scsi_dir)
        drive = {
            'nst': nst, 'st': '/dev/%s' % name[1:], 'sg': sg, 'hctl': os.path.basename(scsi_dir),
            'vendor': _read(os.path.join(scsi_dir, 'vendor')),
            'product': _read(os.path.join(scsi_dir, 'model')),
            'revision': _read(os.path.join(scsi_dir, 'rev')),
            'serial': None,
        }
        try:
            with open(os.path.join(scsi_dir, 'vpd_pg80'), 'rb') as handle:
                drive['serial'] = vpd80_serial(handle.read())
        except OSError:
            pass
        if not drive['serial'] and sg:
            result = _run(runner, ['sg_inq', '-p', '0x80', sg])
            drive['serial'] = _scsi_inquiry.parse_sg_inq(result.stdout)['serial']
        limits = None
        if sg:
            result = _run(runner, ['sg_read_block_limits', '-H', sg])
            data = _scsi_inquiry.parse_hex_bytes(result.stdout) if result.rc == 0 else b''
            if len(data) >= 6:
                limits = _scsi_inquiry.decode_read_block_limits(data)
        drive['block_limits'] = limits or {'min': None, 'max': None, 'granularity': None}
        drive['hba_max_transfer_bytes'] = hba_max_transfer(sg)
        result = _run(runner, ['mt', '-f', nst, 'status'])
        text = (result.stdout or '') + (result.stderr or '')
        status = _mt.parse_mt_status(result.stdout if result.rc == 0 else '')
        drive['busy'] = 'busy' in text.lower()
        drive['mt_status'] = status if result.rc == 0 else None
        drive['mt_error'] = None if result.rc == 0 else text.strip()
        drive['block_size'] = status['block_size']
        drive['density_code'] = '0x%02x' % status['density_code'] if status['density_code'] is not None else None
        drive['media_loaded'] = status['media_loaded']
        drive['write_protected'] = status['write_protected'] if result.rc == 0 else None
        drive['generation'] = _generation(drive['vendor'], drive['product'], status['density_code'])
        drive['mtweofi_supported'] = weofi
        drive['st_options'] = _st_sysfs.read_options(name, sys_root)
        drive['stats'] = _st_sysfs.read_stats(name, sys_root)
        drive['changer'] = None
        drive['barcode'] = None
        for changer in changers:
            index, how = match_drive_element(drive, changer['elements'])
            if index is None:
                continue
            element = changer['elements'][index]
            drive['changer'] = {'sg': changer['sg'], 'element': index, 'element_address': element['address'],
                                'matched_by': how}
            if changer['status']:
                drive['barcode'] = _mtx.drive_barcode(changer['status'], index)
            break
        drive['log_pages'] = read_log_pages(sg, runner) if log_pages else None
        drives.append(drive)
    return {'drives': drives, 'changers': changers}
