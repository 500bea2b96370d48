# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``python3 -m tapedrive serve CONFIG.json``: the guest's drives and changer, one process.

Run inside a lab guest (lab/guest-init starts it with lab/ on PYTHONPATH,
after loading configfs, target_core_user, tcm_loop, uio, st, sg and ch). It
creates one TCMU user backstore per device, serves their rings, exports them
as LUNs of one tcm_loop target (drives on LUN 0.., the changer after them),
writes ``<state_dir>/tapedrive.ready`` and serves until SIGTERM/SIGINT, then
removes the LUNs and backstores again.

``python3 -m tapedrive check CONFIG.json`` builds the devices without
configfs (a quick test of a config). The config (written by lab/tapelab)::

    {"name": "lab-ma1", "state_dir": "/run/tapelab", "cartridge_dir": "/run/tapelab/cartridges",
     "target_wwn": "5001405aaaaaaa01", "initiator_wwn": "5001405bbbbbbb01",
     "drives": [{"name": "tape0", "identity": {"vendor", "product", "rev", "serial"},
                 "profile": {...physics.Profile fields...}}],
     "changer": {"name": "changer0", "identity": {...}, "slots": 4, "import_export": 1,
                 "mechanics": {"move_s", "load_s", "unload_s"}, "mechanics_scale": 0.02,
                 "layout": {"slots": [barcode, ...], "drives": [barcode|null, ...]}} | null,
     "health_file": "/run/tapelab/health.json",
     "trace": false}

``health_file`` (optional): the drives' health modes (ssc.py ``parse_health``:
``{"drive": "dirty"|"hard_error"|"none", "cartridges": {"MA1001L5": "worn"}}``),
read at start and again within a second of each change (lab/tapelab health
writes it); a missing file means no mode, a file that cannot be read is
logged and changes nothing.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time

from . import library as library_mod
from . import ssc
from . import tcmu


def log(text):
    print('tapedrive[%.3f]: %s' % (time.monotonic(), text), file=sys.stderr, flush=True)


def build(config, clock=time.monotonic):
    """(drives, library, changer-or-None) from ``config``."""
    state_dir = config.get('state_dir') or '.'
    drives = []
    for i, spec in enumerate(config.get('drives') or []):
        name = spec.get('name') or 'tape%d' % i
        drive = ssc.Drive(spec['identity'], spec.get('profile') or {}, clock=clock,
                          stats_path=os.path.join(state_dir, '%s-stats.json' % name), name=name)
        drive.log = log
        drive.health_file = config.get('health_file')
        changed = drive.read_health_file()
        if changed is not None:
            log('%s: health %s' % (name, changed if isinstance(changed, Exception)
                                   else json.dumps(changed, sort_keys=True)))
        drives.append(drive)
    if not drives:
        raise SystemExit('tapedrive: the config lists no drive')
    ch = config.get('changer')
    slots = int(ch.get('slots', 0)) if ch else 0
    ie = int(ch.get('import_export', 1)) if ch else 0
    lib = library_mod.Library.load(config['cartridge_dir'], drives, max(slots, 1), ie,
                                   initial=(ch or {}).get('layout') or {'slots': [], 'drives': [
                                       d.get('load') for d in config.get('drives') or []]})
    changer = None
    if ch:
        from . import smc  # pylint: disable=import-outside-toplevel
        changer = smc.Changer(lib, ch['identity'], mechanics=ch.get('mechanics') or {},
                              mechanics_scale=float(ch.get('mechanics_scale', 1.0)), clock=clock,
                              drive_luns=list(range(len(drives))),
                              state_path=os.path.join(config['cartridge_dir'], 'changer-state.json'))
    return drives, lib, changer


def serve(config):
    state_dir = config.get('state_dir') or '.'
    drives, lib, changer = build(config)
    devices = [(d.name, 'tape', d) for d in drives]
    if changer is not None:
        devices.append((config['changer'].get('name') or 'changer0', 'changer', changer))
    hba = int(config.get('hba', 0))
    created = []
    luns = []
    try:
        for name, subtype, device in devices:
            path, uio, size = tcmu.create_backstore(hba, name, subtype)
            created.append(path)
            luns.append(tcmu.Lun(name, tcmu.Ring(uio, size, name), device))
            log('%s: backstore %s on %s (%d bytes mapped)' % (name, path, uio, size))
        server = tcmu.Server(luns, log=log, trace=bool(config.get('trace')))
        stop = threading.Event()
        state = {'linked': False, 'error': None}

        def on_signal(signum, _frame):
            log('signal %d: stopping' % signum)
            stop.set()
        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)

        def link():
            try:
                tcmu.link_luns(config['target_wwn'], config['initiator_wwn'],
                               list(enumerate(created)))
                state['linked'] = True
                ready = os.path.join(state_dir, 'tapedrive.ready')
                with open(ready + '.tmp', 'w') as f:
                    json.dump({'pid': os.getpid(), 'luns': [n for n, _s, _d in devices]}, f)
                os.replace(ready + '.tmp', ready)
                log('LUNs linked: %s' % ', '.join(n for n, _s, _d in devices))
            except Exception as exc:  # pylint: disable=broad-except
                state['error'] = exc
                log('linking LUNs failed: %s' % exc)
                stop.set()
        threading.Thread(target=link, name='link', daemon=True).start()
        server.serve(until=stop.is_set)
        # Unlink while still serving: removing a LUN may send it commands.
        done = threading.Event()

        def unlink():
            try:
                tcmu.unlink_luns(config['target_wwn'])
            except Exception as exc:  # pylint: disable=broad-except
                log('unlinking LUNs failed: %s' % exc)
            done.set()
        threading.Thread(target=unlink, name='unlink', daemon=True).start()
        deadline = time.monotonic() + 10
        while not done.is_set() and time.monotonic() < deadline:
            server.run_once(max_wait=0.05)
        for d in drives:
            d.write_stats()
            if d.loaded is not None:
                d.loaded.sync()
        lib.save()
        if state['error'] is not None:
            return 1
        return 0
    finally:
        for lun in luns:
            lun.ring.close()
        for path in reversed(created):
            try:
                tcmu.remove_backstore(path)
            except tcmu.TcmuError as exc:
                log(str(exc))


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) != 2 or argv[0] not in ('serve', 'check'):
        print('usage: python3 -m tapedrive serve|check CONFIG.json', file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        config = json.load(f)
    if argv[0] == 'check':
        drives, lib, changer = build(config)
        print(json.dumps({'drives': [d.name for d in drives], 'layout': lib.layout(),
                          'changer': bool(changer)}))
        return 0
    try:
        return serve(config)
    except tcmu.TcmuError as exc:
        log('error: %s' % exc)
        return 1


if __name__ == '__main__':
    sys.exit(main())
