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

Immediate file marks (MTWEOFI): ``probe_mtweofi`` asks the st driver itself
on a drive the write benchmark already holds open for writing (an MTWEOFI
ioctl with count 0, which writes nothing); where no such drive is open
(discovery, preflight, check mode), ``mtweofi_from_st_driver`` reads the st
driver's version string, so a distribution kernel that backported the driver
is recognised whatever its version number says.
"""

from __future__ import annotations

import errno
import os
import re
import struct

from ansible_collections.tapeops.qualify.plugins.module_utils import _records
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _resolve
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _cli
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _hba_link
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _mt
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _mtx
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _scsi_inquiry
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _sg_logs
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _sg_read_attr
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _st_sysfs

SYS_ROOT = '/sys'
TOOL_TIMEOUT = 60
BLKSECTGET = 0x1267
# MTWEOFI (write file marks with IMMED set) came with Linux commit
# 3e51d3c924aea8a1f1372e6c615b0a37b528121d ("st: add MTWEOFI"), which also
# moved the st driver's verstr to "20100829" (mainline 2.6.37). The driver
# exports verstr as /sys/bus/scsi/drivers/st/version ("[20160209]\n",
# st.c version_show). Distribution drivers carry their own suffix and their date
# says nothing: RHEL 6.0-6.4 (2.6.32-71 .. -358.el6) print "20101219rh", a later date,
# and have no MTWEOFI; RHEL 6.5 (2.6.32-431.el6) brought it with "20130315rh" (read
# in the RHEL 6 kernel sources, one tree per release). Only those known strings and
# plain mainline dates are trusted; any other suffix is unknown, and the ioctl probe
# on a writable scratch tape decides.
MTWEOFI_ST_VERSTR = '20100829'
KNOWN_DISTRIBUTION_VERSTR = {
    '20101219rh': (False, 'RHEL 6.0-6.4 st driver (no MTWEOFI until RHEL 6.5)'),
    '20130315rh': (True, 'RHEL 6.5 or later st driver (MTWEOFI backported in 2.6.32-431.el6)'),
}
MTWEOFI_OP = 35  # include/uapi/linux/mtio.h
LOG_PAGES = (0x0C, 0x14, 0x17, 0x2E, 0x34)
# The drive's and its cartridge's health (docs/health.md), read in discovery beside LOG_PAGES: the write and read
# error counters, DT device status (its cleaning bits), data compression (0x1B, and LTO's 0x32), tape usage (0x30).
# LOG SENSE reads the counters and resets nothing (sg_logs resets only with -R), and moves no tape.
HEALTH_PAGES = (0x02, 0x03, 0x11, 0x1B, 0x30, 0x32)
DISCOVERY_PAGES = tuple(sorted(LOG_PAGES + HEALTH_PAGES))


def _read(path):
    return _st_sysfs.read_attr(path)


def st_driver_version(sys_root=SYS_ROOT):
    """The st driver's version string (``'20160209'``) from sysfs, or None."""
    raw = _read(os.path.join(sys_root, 'bus', 'scsi', 'drivers', 'st', 'version'))
    match = re.search(r'(\d{8}[A-Za-z0-9._-]*)', raw or '')
    return match.group(1) if match else None


def mtweofi_from_st_driver(sys_root=SYS_ROOT):
    """Whether the st driver has MTWEOFI, from its version string (no device opened).

    Returns ``(supported, basis)``: ``(True, 'st driver version 20160209')``,
    ``(False, 'st driver version 20081215 (MTWEOFI came with 20100829)')`` or
    ``(None, reason)`` when the driver exports no version (st not loaded).
    """
    version = st_driver_version(sys_root)
    if version is None:
        return None, 'unknown: the st driver exports no version (is the st module loaded?)'
    if version in KNOWN_DISTRIBUTION_VERSTR:
        supported, words = KNOWN_DISTRIBUTION_VERSTR[version]
        return supported, 'st driver version %s: %s' % (version, words)
    if not version.isdigit():
        return None, ('unknown: st driver version %s is a distribution build whose date does not tell; the '
                      'MTWEOFI probe on a writable scratch tape decides' % version)
    if version >= MTWEOFI_ST_VERSTR:
        return True, 'st driver version %s' % version
    return False, 'st driver version %s (MTWEOFI came with %s)' % (version, MTWEOFI_ST_VERSTR)


def probe_mtweofi(fd, mtop, mtget, timeout=60):
    """Ask st whether it knows MTWEOFI: the ioctl with count 0 on ``fd``.

    ``fd`` must be the drive the safety gate admitted, open for writing (st
    refuses every file-mark ioctl on an O_RDONLY open with EACCES), at BOT,
    after the media gate allowed writing from BOT (the benchmark overwrites
    the tape from BOT right after, so even a drive that took the command as a
    write at BOT would lose nothing that was to be kept).
    WRITE FILEMARKS with a count of 0 writes no file mark (SSC-3 6.10);
    st.c then sets its block counter to 0 and adds 0 to its file counter,
    which changes nothing at file 0 block 0 only, so the probe runs at BOT
    and nowhere else. ``mtop(fd, op, count, timeout=)`` and
    ``mtget(fd, timeout=)`` are ``_tape_writer``'s ioctl wrappers.

    Returns ``{'supported': True|False|None, 'basis': str, 'detail': str}``:
    success = supported; EINVAL / ENOSYS / ENOTTY = the kernel does not know
    the operation; EACCES / EROFS (write-protected media) and anything else
    = inconclusive (None).
    """
    try:
        before = mtget(fd, timeout=timeout)
    except (OSError, Exception) as exc:  # pylint: disable=broad-except
        return {'supported': None, 'basis': 'ioctl probe not run',
                'detail': 'MTIOCGET failed before the probe: %s' % exc}
    if before.get('file_number') != 0 or before.get('block_number') != 0:
        return {'supported': None, 'basis': 'ioctl probe not run',
                'detail': 'not at BOT (file %s, block %s): st would reset its block counter'
                          % (before.get('file_number'), before.get('block_number'))}
    if 'WR_PROT' in (before.get('flags') or []):
        return {'supported': None, 'basis': 'ioctl probe not run',
                'detail': 'write-protected media: st refuses file-mark ioctls (EACCES)'}
    try:
        mtop(fd, MTWEOFI_OP, 0, timeout=timeout)
        out = {'supported': True, 'basis': 'ioctl probe', 'detail': 'MTWEOFI with count 0 accepted'}
    except OSError as exc:
        name = errno.errorcode.get(exc.errno, str(exc.errno))
        if exc.errno in (errno.EINVAL, errno.ENOSYS, errno.ENOTTY):
            out = {'supported': False, 'basis': 'ioctl probe',
                   'detail': 'MTWEOFI refused with %s: the st driver does not know it' % name}
        else:
            out = {'supported': None, 'basis': 'ioctl probe inconclusive',
                   'detail': 'MTWEOFI with count 0 failed with %s (%s)' % (name, exc.strerror)}
    try:
        after = mtget(fd, timeout=timeout)
    except (OSError, Exception) as exc:  # pylint: disable=broad-except
        out['detail'] += '; MTIOCGET after the probe failed: %s' % exc
        return out
    if (after.get('file_number'), after.get('block_number')) != (0, 0):
        out['detail'] += '; position after the probe is file %s block %s, not BOT' % (
            after.get('file_number'), after.get('block_number'))
        out['position_changed'] = True
    return out


def vpd80_serial(data):
    """Unit serial number from the raw VPD page 0x80 (sysfs ``vpd_pg80``).

    Returns ``(serial, raw_hex)``; ``raw_hex`` is set when the serial holds
    bytes that are not printable ASCII (they show as U+FFFD in ``serial``),
    so the exact value is not lost.
    """
    if not data or len(data) < 4 or data[1] != 0x80:
        return None, None
    length = (data[2] << 8) | data[3]
    raw = bytes(data[4:4 + length])
    serial = raw.decode('ascii', 'replace').strip() or None
    printable = all(0x20 <= b < 0x7f for b in raw.strip(b' \x00'))
    return serial, (None if printable or not raw else raw.hex())


def parse_sg_raw_hex(text):
    """The data bytes ``sg_raw -r N`` prints (after "Received N bytes of data")."""
    return _scsi_inquiry.parse_hex_bytes(
        '\n'.join(line for line in (text or '').splitlines() if not line.startswith('# ')))


def decode_element_status_ex(data):
    """``decode_element_status`` with ``complete`` and ``warnings``.

    A descriptor cut short (the changer returned less than its header
    announced, or a capture lost its end) is kept with the fields whose bytes
    are all there; the others are None, and a warning says so. A volume tag is
    never returned half-read; a cut identifier is kept as the prefix it is,
    with ``identifier_truncated`` (tgt sends such identifiers).
    """
    out = []
    warnings = []
    data = bytes(data or b'')
    if len(data) < 8:
        return {'elements': out, 'complete': False,
                'warnings': ['READ ELEMENT STATUS data of %d bytes is shorter than its 8-byte header' % len(data)]}
    report_bytes = (data[5] << 16) | (data[6] << 8) | data[7]
    complete = len(data) >= 8 + report_bytes
    if not complete:
        warnings.append('READ ELEMENT STATUS announced %d bytes of element pages, %d arrived'
                        % (report_bytes, len(data) - 8))
    pos = 8
    while pos + 8 <= len(data):
        flags = data[pos + 1]
        desc_len = (data[pos + 2] << 8) | data[pos + 3]
        page_bytes = (data[pos + 5] << 16) | (data[pos + 6] << 8) | data[pos + 7]
        pvoltag, avoltag = bool(flags & 0x80), bool(flags & 0x40)
        pos += 8
        end = min(len(data), pos + page_bytes)
        if pos + page_bytes > len(data):
            complete = False
        if desc_len and desc_len < 12:
            warnings.append('element descriptor length %d is shorter than the 12 bytes every descriptor has'
                            % desc_len)
            break
        while desc_len and pos + 12 <= end:
            desc = data[pos:min(pos + desc_len, end)]
            if len(desc) < desc_len:
                warnings.append('element descriptor at byte %d is cut short (%d of %d bytes)'
                                % (pos, len(desc), desc_len))
                complete = False
            entry = _element_descriptor(desc, pvoltag, avoltag, warnings)
            if entry.get('identifier_truncated'):
                complete = False
            out.append(entry)
            pos += desc_len
        pos = max(pos, end)
    return {'elements': out, 'complete': complete, 'warnings': warnings}


def _element_descriptor(desc, pvoltag, avoltag, warnings):
    """One element descriptor of READ ELEMENT STATUS: address, full, source, volume tag, identifier; what a
    cut-short descriptor lacks is None, a cut identifier its prefix with ``identifier_truncated`` (and a warning)."""
    entry = {
        'address': (desc[0] << 8) | desc[1],
        'full': bool(desc[2] & 0x01),
        'source_address': ((desc[10] << 8) | desc[11]) if desc[9] & 0x80 else None,
        'volume_tag': None,
        'identifier': None,
    }
    off = 12
    if pvoltag:
        if off + 32 <= len(desc):
            entry['volume_tag'] = bytes(desc[off:off + 32]).decode('ascii', 'replace').strip() or None
        off += 36
    if avoltag:
        off += 36
    if off + 4 <= len(desc):
        id_len = desc[off + 3]
        ident = bytes(desc[off + 4:off + 4 + id_len])
        # Some changers (tgt) send fewer identifier bytes than they announce: the prefix is kept,
        # marked, and match_drive_element accepts a prefix only when it fits exactly one drive.
        entry['identifier'] = ident.decode('ascii', 'replace').rstrip('\x00').strip() or None
        if len(ident) < id_len:
            entry['identifier_truncated'] = True
            warnings.append('device identifier of element %d is cut short (%d of %d bytes)'
                            % (entry['address'], len(ident), id_len))
    return entry


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


def sg_of(scsi_dir):
    """The sg node (``/dev/sg1``) of the SCSI device at sysfs ``scsi_dir``, or None when sg is not loaded."""
    gen = os.path.join(scsi_dir, 'scsi_generic')
    try:
        names = sorted(os.listdir(gen))
    except OSError:
        return None
    return '/dev/%s' % names[0] if names else None


def _identify(drive, settings):
    """The drive's identity and drive model through the one resolver, with its tapeops_drives entry.

    A tapeops_drives entry the resolver cannot read costs the drive model (a
    warning says why), never the discovery.
    """
    setting = _resolve.setting_for(drive['nst'], settings)
    try:
        identity, spec = _resolve.resolve(drive, setting)
    except _resolve.ResolveError as exc:
        drive['warnings'].append('%s; the drive is identified without its tapeops_drives entry' % exc)
        identity, spec = _resolve.resolve(drive, None)
    return identity.to_dict(), (spec.as_dict() if spec is not None else None)


def _run(runner, cmd):
    try:
        return runner(cmd)
    except _cli.CliError as exc:
        return _result_of(exc, cmd)


def _result_of(exc, cmd):
    """A tool that failed to run or finish (CliError) as a CliResult: rc -1 when it has none, the error on stderr.

    A tool that is not installed says so with the package to install (``_cli.TOOL_PACKAGES``).
    """
    said = '%s %s' % (exc.msg, exc.hint) if exc.missing and exc.hint else exc.msg
    return _cli.CliResult(exc.cmd or cmd, exc.rc if exc.rc is not None else -1, exc.stdout or '',
                          exc.stderr or said)


def read_log_pages(sg, runner, pages=LOG_PAGES):
    """Log pages of the drive at ``sg``: ``{supported, unsupported_reason, pages, errors, warnings}``.

    Never called while the benchmark writes. Never raises on what sg_logs
    prints: a page that cannot be decoded becomes an entry in ``errors`` and
    ``warnings``, so a caller that already wrote to the tape keeps its
    measurements.
    """
    out = {'supported': [], 'unsupported_reason': None, 'pages': {}, 'errors': {}, 'warnings': []}
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
        try:
            decoded = _sg_logs.decode_page(page, result.stdout)
        except Exception as exc:  # pylint: disable=broad-except
            # decode_page is built not to raise; if it ever does, the page is lost, not the run.
            out['errors'][key] = 'could not decode sg_logs output: %s' % exc
            out['warnings'].append('log page %s: could not decode sg_logs output (%s)' % (key, exc))
            continue
        out['pages'][key] = decoded
        for warning in decoded.get('warnings') or []:
            out['warnings'].append('log page %s: %s' % (key, warning))
    return out


def read_cartridge_memory(drive, runner):
    """``(CartridgeMemory as a dict, None)`` of the cartridge loaded in ``drive``, or ``(None, why not)``.

    READ ATTRIBUTE through ``sg_read_attr --readonly`` (``_sg_read_attr.command``): it reads the cartridge's
    memory chip and moves no tape. Sent only when ``mt status`` said a cartridge is loaded, and never to a drive
    that did not answer. A drive or a tool that cannot (no sg node, sg_read_attr not installed, no READ
    ATTRIBUTE, not ready) leaves the memory unknown with the reason; nothing here fails discovery. The first
    command after a cartridge moved gets a UNIT ATTENTION: it is sent once more then.
    """
    sg = drive.get('sg')
    if not sg:
        return None, 'no sg node for this drive (load the sg module)'
    if getattr(runner, 'reason', lambda path: None)(sg):
        return None, 'not asked: the drive does not answer'
    if drive.get('media_loaded') is not True:
        return None, ('no cartridge loaded' if drive.get('media_loaded') is False else
                      'not known whether a cartridge is loaded (mt status did not say)')
    cmd = _sg_read_attr.command(sg)
    result = _run(runner, cmd)
    if result.rc == SG_UNIT_ATTENTION or 'unit attention' in (result.stderr or '').lower():
        result = _run(runner, cmd)
    if result.rc != 0:
        kind, line = _sg_read_attr.classify_failure(result.rc, result.stdout, result.stderr)
        return None, ('the drive has no READ ATTRIBUTE: %s' % line if kind == 'unsupported' else
                      'the drive is not ready: %s' % line if kind == 'not_ready' else line)
    parsed = _sg_read_attr.parse(result.stdout)
    if not parsed['read']:
        return None, 'sg_read_attr printed no attribute (%s)' % (
            '; '.join(parsed['notes'][:2]) or 'empty output')
    return _records.CartridgeMemory.from_parse(parsed).to_dict(), None


def _changer_elements(sg, runner):
    result = _run(runner, ['sg_raw', '-r', '4096', sg, 'b8', '04', '00', '00', '00', '40', '03', '00', '10', '00',
                           '00', '00'])
    if result.rc != 0:
        return {'elements': [], 'complete': False, 'warnings': []}
    # sg_raw prints the data dump on stderr or stdout depending on its version.
    return decode_element_status_ex(parse_sg_raw_hex((result.stdout or '') + '\n' + (result.stderr or '')))


def _mtx_run(runner, sg):
    """``(CliResult, status)`` of ``mtx -f sg status``; a missing mtx is said to be missing, with its package.

    An mtx that is not installed fails to start: the tool runner says so and names the package (``_cli.missing_tool``).
    Its "No such file or directory" is not mtx's own message for a changer node that does not open, which
    ``_mtx.parse_mtx_result`` reads stderr for, so the runner's words are the changer's error and hint.
    """
    cmd = ['mtx', '-f', sg, 'status']
    try:
        return runner(cmd), None
    except _cli.CliError as exc:
        if not exc.missing:
            return _result_of(exc, cmd), None
        status = _mtx.parse_mtx_status('')
        status.update(error=exc.msg, error_hint=exc.hint, complete=False)
        return _result_of(exc, cmd), status


def changer_drive_barcode(runner, sg, element):
    """``(barcode, error)`` of the cartridge in drive ``element`` of the changer at ``sg``, from one ``mtx status``.

    What the write gate asks right before a write that rests on the barcode (``_tape_safety.WriteGate.admit``):
    the changer alone, not the whole discovery again. ``barcode`` is None for an empty drive or an unlabelled
    cartridge; ``error`` is the changer's failure, or None.
    """
    result, status = _mtx_run(runner, sg)
    status = status or _mtx.parse_mtx_result(result)
    if result.rc != 0 or status.get('error'):
        return None, status.get('error') or (result.stderr or '').strip() or 'mtx status failed'
    return _mtx.drive_barcode(status, element), None


def discover_changers(runner, sys_root=None):
    """Every SCSI medium changer (type 8) under ``sys_root`` (default SYS_ROOT) with its mtx status and elements."""
    sys_root = SYS_ROOT if sys_root is None else sys_root
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
        sg = sg_of(scsi_dir)
        changer = {
            'hctl': entry, 'sg': sg,
            'vendor': _read(os.path.join(scsi_dir, 'vendor')),
            'product': _read(os.path.join(scsi_dir, 'model')),
            'revision': _read(os.path.join(scsi_dir, 'rev')),
            'status': None, 'error': None, 'elements': [], 'warnings': [],
        }
        if sg:
            result, status = _mtx_run(runner, sg)
            status = status or _mtx.parse_mtx_result(result)
            if result.rc != 0 or status['error']:
                changer['error'] = status['error'] or (result.stderr or '').strip() or 'mtx status failed'
            changer['status'] = status
            found = _changer_elements(sg, runner)
            changer['elements'] = found['elements']
            changer['warnings'] = list(status.get('warnings') or []) + found['warnings']
            unanswered = getattr(runner, 'reason', lambda path: None)(sg)
            if unanswered:
                changer['error'] = 'The changer does not answer: %s' % unanswered
        changers.append(changer)
    return changers


def _mt_status(runner, nst):
    """``mt status`` of ``nst``, preferring output with the st status bits.

    ``mt`` may be GNU cpio's mt (no status bits: loaded / write protected
    unknown); when it is, mt-st's own binary (Debian installs it as
    ``mt-st`` beside the ``mt`` alternative) is asked too.
    """
    result = _run(runner, ['mt', '-f', nst, 'status'])
    text = (result.stdout or '') + (result.stderr or '')
    status = _mt.parse_mt_status(result.stdout if result.rc == 0 else '')
    if result.rc == 0 and status['status_bits'] is None:
        other = _run(runner, ['mt-st', '-f', nst, 'status'])
        parsed = _mt.parse_mt_status(other.stdout if other.rc == 0 else '')
        if other.rc == 0 and parsed['status_bits'] is not None:
            return parsed, other, (other.stdout or '') + (other.stderr or '')
    return status, result, text


def _device_key(path, sys_root):
    """The SCSI device (H:C:T:L) behind a /dev node, so its st, nst and sg nodes count as one device."""
    try:
        rdev = os.stat(path).st_rdev
    except OSError:
        return path
    link = os.path.join(sys_root, 'dev', 'char', '%d:%d' % (os.major(rdev), os.minor(rdev)), 'device')
    return os.path.basename(os.path.realpath(link)) if os.path.exists(link) else path


class HungGuard:
    """A runner that sends nothing more to a device once a tool on it timed out.

    A tool waiting on a hung drive may not even be killable (it sits in the
    kernel, state D: see _cli.KILL_GRACE_S); every further command to that
    device would wait out its own timeout the same way. After the first, the
    device's commands are answered at once with the first one's error, so
    discovery of a host with a hung drive or changer ends within one tool
    timeout (plus the kill grace) per device that does not answer.
    """

    def __init__(self, runner, sys_root=SYS_ROOT):
        self.runner = runner
        self.sys_root = sys_root
        self.hung = {}

    def reason(self, path):
        return self.hung.get(_device_key(path, self.sys_root)) if path else None

    def __call__(self, cmd):
        devices = [a for a in cmd if isinstance(a, str) and a.startswith('/dev/')]
        for dev in devices:
            said = self.reason(dev)
            if said:
                raise _cli.CliError('Not run: %s' % said, cmd=cmd, hung=True)
        try:
            return self.runner(cmd)
        except _cli.CliError as exc:
            if exc.timed_out:
                for dev in devices:
                    self.hung[_device_key(dev, self.sys_root)] = exc.msg
            raise


def _drive_of(name, scsi_dir, runner, sys_root):
    """Drive ``name`` (nstN) as sysfs, its serial, READ BLOCK LIMITS, its HBA path and ``mt status`` describe it."""
    sg = sg_of(scsi_dir)
    drive = {
        'nst': '/dev/%s' % name, 'st': '/dev/%s' % name[1:], 'sg': sg, 'hctl': os.path.basename(scsi_dir),
        'vendor': _read(os.path.join(scsi_dir, 'vendor')),
        'product': _read(os.path.join(scsi_dir, 'model')),
        'revision': _read(os.path.join(scsi_dir, 'rev')),
        'serial': None,
        'serial_hex': None,
        'warnings': [],
    }
    drive['serial'], drive['serial_hex'] = _serial(scsi_dir, sg, runner)
    drive['block_limits'] = _block_limits(sg, runner)
    drive['hba_max_transfer_bytes'] = hba_max_transfer(sg)
    drive['link'] = _hba_link.device_link(scsi_dir, sys_root)
    _read_mt_status(drive, runner)
    return drive


def _serial(scsi_dir, sg, runner):
    """``(serial, serial_hex)``: VPD page 0x80 as sysfs holds it, else the serial ``sg_inq`` reads (no hex then)."""
    serial = serial_hex = None
    try:
        with open(os.path.join(scsi_dir, 'vpd_pg80'), 'rb') as handle:
            serial, serial_hex = vpd80_serial(handle.read())
    except OSError:
        pass
    if not serial and sg:
        result = _run(runner, ['sg_inq', '-p', '0x80', sg])
        serial = _scsi_inquiry.parse_sg_inq(result.stdout)['serial']
    return serial, serial_hex


# sg3_utils' exit status for a UNIT ATTENTION (sg_lib.h, SG_LIB_CAT_UNIT_ATTENTION)
SG_UNIT_ATTENTION = 6


def _block_limits(sg, runner):
    """READ BLOCK LIMITS (``sg_read_block_limits``); every limit None when it cannot be read.

    The first command after a cartridge was loaded or moved (by a changer, another
    process) gets a UNIT ATTENTION instead of its answer: it is sent once more then,
    as the log pages are.
    """
    if sg:
        cmd = ['sg_read_block_limits', '-H', sg]
        result = _run(runner, cmd)
        if result.rc == SG_UNIT_ATTENTION or 'unit attention' in (result.stderr or '').lower():
            result = _run(runner, cmd)
        data = _scsi_inquiry.parse_hex_bytes(result.stdout) if result.rc == 0 else b''
        if len(data) >= 6:
            return _scsi_inquiry.decode_read_block_limits(data)
    return {'min': None, 'max': None, 'granularity': None}


def _read_mt_status(drive, runner):
    """What ``mt status`` says of the drive (busy, block size, density, loaded, write protected) into ``drive``."""
    status, result, text = _mt_status(runner, drive['nst'])
    drive['busy'] = 'busy' in text.lower()
    drive['mt_status'] = status if result.rc == 0 else None
    drive['mt_error'] = None if result.rc == 0 else text.strip()
    drive['warnings'].extend(status['warnings'] if result.rc == 0 else [])
    drive['block_size'] = status['block_size']
    drive['density_code'] = '0x%02x' % status['density_code'] if status['density_code'] is not None else None
    # None = mt did not say (GNU/Solaris/FreeBSD mt print no status bits), never "no".
    drive['media_loaded'] = status['media_loaded'] if result.rc == 0 else None
    drive['write_protected'] = status['write_protected'] if result.rc == 0 else None


def _changer_link(drive, changers):
    """``(changer, barcode)``: the changer element holding the drive (matched by serial) and the barcode of the
    cartridge in it; ``(None, None)`` when no changer holds it."""
    for changer in changers:
        index, how = match_drive_element(drive, changer['elements'])
        if index is None:
            continue
        element = changer['elements'][index]
        link = {'sg': changer['sg'], 'element': index, 'element_address': element['address'], 'matched_by': how}
        return link, (_mtx.drive_barcode(changer['status'], index) if changer['status'] else None)
    return None, None


def discover(runner=None, sys_root=None, log_pages=True, only=None, settings=None, cartridge_memory=True):
    """``{'drives': [...], 'changers': [...]}`` for this host (see tape_drive_info RETURN).

    ``settings``: the inventory's tapeops_drives; a drive's entry (matched by
    nst) reaches the resolver with its INQUIRY and loaded cartridge.
    ``sys_root`` None reads SYS_ROOT when called (not when imported), so the
    unit tests run tape_drive_info's main() on a recorded sysfs tree by setting
    this module's SYS_ROOT; internal, not an option of the module.
    ``log_pages``: read LOG_PAGES and the health pages (HEALTH_PAGES); ``cartridge_memory``: read the loaded
    cartridge's memory (``read_cartridge_memory``).
    """
    sys_root = SYS_ROOT if sys_root is None else sys_root
    if runner is None:
        def runner(cmd):
            return _cli.run(cmd, timeout=TOOL_TIMEOUT)
    runner = HungGuard(runner, sys_root)
    changers = discover_changers(runner, sys_root)
    drives = []
    tape_class = os.path.join(sys_root, 'class', 'scsi_tape')
    try:
        names = sorted(n for n in os.listdir(tape_class) if re.match(r'^nst\d+$', n))
    except OSError:
        names = []
    weofi, weofi_basis = mtweofi_from_st_driver(sys_root)
    for name in names:
        nst = '/dev/%s' % name
        if only and nst not in only and name not in only:
            continue
        drive = _drive_of(name, os.path.realpath(os.path.join(tape_class, name, 'device')), runner, sys_root)
        drive['generation'], drive['drive_model'] = _identify(drive, settings)
        drive['mtweofi_supported'] = weofi
        drive['mtweofi_basis'] = weofi_basis
        drive['st_options'] = _st_sysfs.read_options(name, sys_root)
        drive['stats'] = _st_sysfs.read_stats(name, sys_root)
        drive['changer'], drive['barcode'] = _changer_link(drive, changers)
        drive['log_pages'] = read_log_pages(drive['sg'], runner, DISCOVERY_PAGES) if log_pages else None
        if drive['log_pages']:
            drive['warnings'].extend(drive['log_pages']['warnings'])
        drive['cartridge_memory'], drive['cartridge_memory_reason'] = (
            read_cartridge_memory(drive, runner) if cartridge_memory else (None, 'not asked (cartridge_memory: false)'))
        # a drive that hung in discovery gets no write test: it would only hang the same way
        drive['hung'] = runner.reason(nst) or runner.reason(drive['sg'])
        drives.append(drive)
    return {'drives': drives, 'changers': changers}
