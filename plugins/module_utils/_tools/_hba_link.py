# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The link between a tape drive and its HBA, from sysfs: SAS negotiated rate, FC port speed.

Private to this collection: may change without notice. Pure functions on a
sysfs root (``/sys`` or a test tree), read-only: they read attributes and
follow symlinks, nothing else.

Where the kernel puts it (drivers/scsi/scsi_transport_sas.c, torvalds/linux):

- a SAS phy is a device named ``phy-H:N`` (an HBA phy, parent ``hostH``) or
  ``phy-H:T:N`` (an expander phy) (``sas_phy_alloc``); its transport class
  directory ``<phy>/sas_phy/<phy>/`` holds ``negotiated_linkrate``, also
  reached as ``/sys/class/sas_phy/<phy>/negotiated_linkrate``;
- a SAS port is a device ``port-H:N`` (``port-H:T:N`` below an expander),
  holding one symlink per member phy named after it (``sas_port_create_link``:
  ``sysfs_create_link(&port->dev.kobj, &phy->dev.kobj, dev_name(&phy->dev))``);
- the drive hangs below its port: ``hostH/port-H:N/end_device-H:N/targetH:0:N/H:0:N:0``,
  or through an expander ``hostH/port-H:0/expander-H:0/port-H:0:5/end_device-H:0:5/...``;
  ``/sys/class/scsi_tape/nst0/device`` resolves to that last directory;
- ``negotiated_linkrate`` prints one of ``sas_linkspeed_names``: "Unknown",
  "Phy disabled", "Link Rate failed", "Spin-up hold", "1.5 Gbit", "3.0 Gbit",
  "6.0 Gbit", "12.0 Gbit", "22.5 Gbit".

drivers/scsi/scsi_transport_fc.c: ``/sys/class/fc_host/hostH/speed`` (the
directory ``hostH/fc_host/hostH/`` below the HBA) prints "unknown" for
FC_PORTSPEED_UNKNOWN, else the ``fc_port_speed_names`` of the bits set, joined
with ", ": "1 Gbit", "2 Gbit", "4 Gbit", "10 Gbit", "8 Gbit", "16 Gbit",
"32 Gbit", "20 Gbit", "40 Gbit", "50 Gbit", "100 Gbit", "25 Gbit", "64 Gbit",
"128 Gbit", "Not Negotiated". An FC tape sits below ``hostH/rport-H:0-R/``.
This is the HBA port's speed; the drive's own port may run slower (the drive
model's interface figures cover that side).

Usable MB/s (10^6 bytes per second, one direction), the line encoding taken off:

- SAS 1.5/3/6/12 Gbit use 8b/10b: usable = Gbit x 100 MB/s (6 Gbit -> 600 MB/s,
  12 Gbit -> 1200 MB/s: IBM's SAS burst figures, source key interface-links in
  docs/drive-model.md, TrueNAS's interconnect table; the Oracle 6 Gb SAS HBA
  guide: a narrow port 600 MB/s, a 4-lane wide port 2400 MB/s); 22.5 Gbit
  (SAS-4) uses 128b/150b: 22.5 x 128/150 / 8 = 2400 MB/s ("24G SAS",
  Synopsys "Decoding SAS 24G").
- FC: the throughput the FC speed names carry (InfoStor 2010, "16GFC standard
  doubles Fibre Channel speed", table 1: 1GFC 100, 2GFC 200, 4GFC 400, 8GFC 800
  MB/s at 8b/10b; 10GFC 1200, 16GFC 1600 MB/s at 64b/66b); 32GFC 3200 MB/s
  (IBM's LTO-10 FC burst, interface-links). Speeds with no cited figure (20,
  25, 40, 50, 64, 100, 128 Gbit) stay unknown. docs/drive-model.md has the
  table with the addresses.

A SAS hop is one port: its usable rate is the sum of its linked phys (a wide
port's lanes). Through an expander the drive's path has two hops, the HBA's
(often wide, shared by every device behind the expander) and the drive's own
narrow one; the slower caps the drive.
"""

from __future__ import annotations

import math
import os
import re

from ansible_collections.tapeops.qualify.plugins.module_utils._tools._st_sysfs import read_attr as _read

SYS_ROOT = '/sys'

# negotiated_linkrate text -> (usable MB/s, encoding); sas_linkspeed_names in scsi_transport_sas.c
SAS_RATES = {
    '1.5 Gbit': (150.0, '8b/10b'),
    '3.0 Gbit': (300.0, '8b/10b'),
    '6.0 Gbit': (600.0, '8b/10b'),
    '12.0 Gbit': (1200.0, '8b/10b'),
    '22.5 Gbit': (2400.0, '128b/150b'),
}
# the other names the kernel prints: no link
SAS_NOT_LINKED = ('Unknown', 'Phy disabled', 'Link Rate failed', 'Spin-up hold')

# fc_host speed text -> (usable MB/s, encoding); fc_port_speed_names in scsi_transport_fc.c
FC_SPEEDS = {
    '1 Gbit': (100.0, '8b/10b'),
    '2 Gbit': (200.0, '8b/10b'),
    '4 Gbit': (400.0, '8b/10b'),
    '8 Gbit': (800.0, '8b/10b'),
    '10 Gbit': (1200.0, '64b/66b'),
    '16 Gbit': (1600.0, '64b/66b'),
    '32 Gbit': (3200.0, '256b/257b'),
}

_HOST = re.compile(r'^host(\d+)$')
_PORT = re.compile(r'^port-\d+(?::\d+)+$')
_PHY = re.compile(r'^phy-\d+(?::\d+)+$')
_SAS_NODE = re.compile(r'^(?:port|end_device|expander)-\d+(?::\d+)+$')
_RPORT = re.compile(r'^rport-\d+:\d+-\d+$')


def _fmt(value):
    return '%.0f MB/s' % value


def parse_sas_rate(text):
    """``negotiated_linkrate`` text -> {raw, linked, usable_mb_s, encoding}.

    ``linked`` is True for a rate, False for a state the kernel names as no
    link ("Phy disabled", "Unknown", ...), None for text it never prints.
    """
    raw = None if text is None else str(text).strip()
    usable, encoding = SAS_RATES.get(raw, (None, None))
    if usable is not None:
        linked = True
    elif raw in SAS_NOT_LINKED:
        linked = False
    else:
        linked = None
    return {'raw': raw, 'linked': linked, 'usable_mb_s': usable, 'encoding': encoding}


def parse_fc_speed(text):
    """fc_host ``speed`` text -> {raw, usable_mb_s, encoding}; unknown, odd or uncited speeds give None."""
    raw = None if text is None else str(text).strip()
    usable, encoding = FC_SPEEDS.get(raw, (None, None))
    return {'raw': raw, 'usable_mb_s': usable, 'encoding': encoding}


def _phy_rate(port_dir, phy, sys_root):
    """negotiated_linkrate of the phy a port links to, or None."""
    for path in (os.path.join(port_dir, phy, 'sas_phy', phy, 'negotiated_linkrate'),
                 os.path.join(sys_root, 'class', 'sas_phy', phy, 'negotiated_linkrate')):
        value = _read(path)
        if value is not None:
            return value
    return None


def _sas_hop(port_dir, sys_root):
    try:
        phys = sorted(n for n in os.listdir(port_dir) if _PHY.match(n))
    except OSError:
        phys = []
    rows = []
    for phy in phys:
        rate = parse_sas_rate(_phy_rate(port_dir, phy, sys_root))
        rows.append(dict(rate, phy=phy))
    linked = [r for r in rows if r['linked']]
    usable = sum(r['usable_mb_s'] for r in linked) if linked else None
    rates = sorted(set(r['raw'] for r in linked))
    return {
        'port': os.path.basename(port_dir),
        'phys': rows,
        'lanes': len(linked),
        'rate': rates[0] if len(rates) == 1 else (', '.join(rates) if rates else None),
        'usable_mb_s': usable,
    }


def _hop_text(hop):
    if hop['usable_mb_s'] is None:
        states = ', '.join('%s %s' % (r['phy'], r['raw'] if r['raw'] is not None else 'unreadable')
                           for r in hop['phys']) or 'no phys'
        return '%s unknown (%s)' % (hop['port'], states)
    return '%s %dx %s = %s' % (hop['port'], hop['lanes'], hop['rate'], _fmt(hop['usable_mb_s']))


def device_link(device_dir, sys_root=SYS_ROOT):
    """The link of the SCSI device at ``device_dir`` (a resolved sysfs device directory).

    Returns {transport: 'SAS'|'FC'|None, host, rate, lanes, usable_mb_s,
    encoding, hops, text}. usable_mb_s is None whenever the rate is not known
    (not a SAS or FC link, no link, a value this table has no figure for).
    """
    out = {'transport': None, 'host': None, 'rate': None, 'lanes': None, 'usable_mb_s': None,
           'encoding': None, 'hops': [], 'text': None}
    real = os.path.realpath(device_dir) if device_dir else ''
    parts = [p for p in real.split(os.sep) if p]
    host_index = next((i for i in range(len(parts) - 1, -1, -1) if _HOST.match(parts[i])), None)
    if not real or not os.path.isdir(real) or host_index is None:
        out['text'] = 'link unknown: no SCSI host in the device path %s' % (real or device_dir or '(none)')
        return out
    host = parts[host_index]
    out['host'] = host
    host_dir = os.sep + os.path.join(*parts[:host_index + 1])
    below = parts[host_index + 1:]
    if any(_SAS_NODE.match(p) for p in below):
        out['transport'] = 'SAS'
        hops = []
        for index, part in enumerate(below):
            if _PORT.match(part):
                hops.append(_sas_hop(os.sep + os.path.join(*parts[:host_index + 2 + index]), sys_root))
        out['hops'] = hops
        known = [h for h in hops if h['usable_mb_s'] is not None]
        if known:
            slowest = min(known, key=lambda h: h['usable_mb_s'])
            out['rate'] = slowest['rate']
            out['lanes'] = slowest['lanes']
            out['usable_mb_s'] = slowest['usable_mb_s']
            encodings = sorted(set(r['encoding'] for r in slowest['phys'] if r['encoding']))
            out['encoding'] = encodings[0] if len(encodings) == 1 else None
        out['text'] = 'SAS via %s: %s%s' % (
            host, '; '.join(_hop_text(h) for h in hops) or 'no SAS port in the device path',
            ('; the drive gets at most %s' % _fmt(out['usable_mb_s'])) if out['usable_mb_s'] is not None
            else '; usable rate unknown')
        return out
    speed_text = _read(os.path.join(host_dir, 'fc_host', host, 'speed'))
    if speed_text is None:
        speed_text = _read(os.path.join(sys_root, 'class', 'fc_host', host, 'speed'))
    if speed_text is not None or any(_RPORT.match(p) for p in below):
        speed = parse_fc_speed(speed_text)
        out['transport'] = 'FC'
        out['rate'] = speed['raw']
        out['lanes'] = 1
        out['usable_mb_s'] = speed['usable_mb_s']
        out['encoding'] = speed['encoding']
        if speed['usable_mb_s'] is not None:
            out['text'] = 'FC via %s: HBA port %s = %s (%s)' % (host, speed['raw'], _fmt(speed['usable_mb_s']),
                                                                speed['encoding'])
        else:
            out['text'] = 'FC via %s: HBA port speed %s, usable rate unknown' % (
                host, repr(speed['raw']) if speed['raw'] is not None else 'unreadable')
        return out
    out['text'] = 'not a SAS or FC link (%s has no sas_phy or fc_host in sysfs)' % host
    return out


def slowest(links):
    """The link with the lowest known usable rate among ``links`` (dicts), or None."""
    known = [link for link in links or () if isinstance(link, dict) and _usable(link) is not None]
    return min(known, key=_usable) if known else None


def _usable(link):
    value = link.get('usable_mb_s')
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        return None
    return float(value)
