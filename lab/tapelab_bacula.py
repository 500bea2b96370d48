# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Real Bacula in a lab guest: a Director, a File daemon and a Storage daemon (``lab/tapelab up --bacula``).

Debian 12's Bacula 9.6.7, as ../shared/lab/BACULA.md verified it: the guests
boot on this machine's root, so the host's bacula-director, bacula-fd,
bacula-sd and bacula-console are the guest's programs. Everything Bacula
keeps lives in a tmpfs the setup mounts at ``BACULA_DIR`` in the guest
(configuration, working directories, the SQLite catalog, pid files, the
log), so nothing outlives the guest and nothing under /etc/bacula is used
but the changer script. The three daemons listen on the guest's 127.0.0.1
(9101 Director, 9102 File daemon, 9103 Storage daemon); the setup runs over
the guest's SSH, so they live in the cgroup whose io.max throttles the
source disk, as a real agent's daemons would.

One Full job per guest backs the guest's source tree up to its own drive
through its own changer. Its pool holds the guest's scratch cartridges
except the one the guest loads at boot: the lab's other tests write that one
from its beginning (docs/lab.md), which would wipe a Bacula label. The setup
blanks those cartridges (a file mark at the beginning: a Bacula label left by
an earlier lab would make ``label`` refuse them), labels them with
``label barcodes``, and puts the boot cartridge back in the drive. The
storage daemon opens the drive only while it uses it (``AlwaysOpen = no``):
between jobs the drive is free for the lab's other tests.

Pure functions here (configurations, the setup and stop scripts, the
inventory variables) are unit-tested in tests/unit/lab/test_tapelab.py;
lab/tapelab.py runs the scripts in the guests.
"""

import shlex

# Where Bacula lives in a guest: a tmpfs of its own (the guest's overlay is small).
BACULA_DIR = '/srv/bacula'
BACULA_TMPFS_MB = 384
DIR_PORT, FD_PORT, SD_PORT = 9101, 9102, 9103
# Names inside each guest (each guest has its own Director, so they need not differ between guests).
STORAGE = 'Library'          # the Director's Storage and the SD's Autochanger
DEVICE = 'Drive-0'           # the SD's Device on /dev/nst0
POOL = 'LabTapes'
FILESET = 'SourceTree'
CATALOG = 'LabCatalog'
SOURCE_DIR = '/srv/backup-src'
# 256 KiB blocks: what BACULA.md measured on lab-ma2; fewer commands through the guest's TCMU ring than
# Bacula's default 64512 bytes. Maximum File Size is left at Bacula's default (1000000000 bytes).
BLOCK_SIZE = 262144
CHANGER_COMMAND = '/etc/bacula/scripts/mtx-changer %c %o %S %a %d'
# Packages the guests need (APT_PACKAGES of lab/tapelab.py and tools/run carry them).
PACKAGES = ('bacula-director', 'bacula-director-sqlite3', 'bacula-fd', 'bacula-sd', 'bacula-console')


class BaculaSetupError(Exception):
    """The guest cannot get Bacula as asked; the message says what to do."""


def names(guest):
    """The Bacula names of guest ``guest``: its Director, Client, Storage daemon and jobs."""
    return {
        'director': '%s-dir' % guest,
        'client': '%s-fd' % guest,
        'storage_daemon': '%s-sd' % guest,
        'job': '%s-backup' % guest,
        'restore_job': '%s-restore' % guest,
    }


def paths():
    """Files and directories of the guest's Bacula (all under BACULA_DIR)."""
    etc = BACULA_DIR + '/etc'
    return {
        'dir': BACULA_DIR,
        'etc': etc,
        'director_config': etc + '/bacula-dir.conf',
        'sd_config': etc + '/bacula-sd.conf',
        'fd_config': etc + '/bacula-fd.conf',
        'bconsole_config': etc + '/bconsole.conf',
        'work': BACULA_DIR + '/work',
        'run': BACULA_DIR + '/run',
        'log': BACULA_DIR + '/log/bacula.log',
        'restore': BACULA_DIR + '/restore',
    }


def pool_slots(spec):
    """``[(slot, barcode)]`` of the cartridges Bacula may label in guest ``spec`` (a guest_spec).

    The scratch cartridges (every one in tapeops_allowed_barcodes, never a data cartridge) except the one the
    guest loads at boot, which the lab's other tests write from its beginning.
    """
    barcodes = list(spec['barcodes'])
    boot = barcodes[spec['load_slot'] - 1] if spec.get('load_slot') else None
    slots = [(barcodes.index(b) + 1, b) for b in spec['scratch'] if b != boot and b not in spec['data']]
    if not slots:
        raise BaculaSetupError(
            '%s has no scratch cartridge for Bacula besides the one it loads at boot (%s), which the lab\'s other '
            'tests write: start the lab with two or more cartridges per guest (lab/tapelab down; lab/tapelab up '
            '-k 3 --bacula)' % (spec['name'], boot))
    return slots


def _password(guest):
    # The daemons listen on the guest's loopback only (the lab forwards nothing but SSH into a guest).
    return 'tapeops-lab-%s' % guest


def _quote(text):
    """A Bacula configuration string in double quotes."""
    if '"' in text or '\n' in text:
        raise BaculaSetupError('cannot quote %r in a Bacula configuration' % text)
    return '"%s"' % text


def director_config(spec):
    n, p = names(spec['name']), paths()
    media_type = 'LTO-%d' % spec['drive']['generation']
    return '''# Generated by lab/tapelab for %(guest)s (docs/lab.md "Bacula in the lab")
Director {
  Name = %(director)s
  DIRport = %(dir_port)d
  DirAddress = 127.0.0.1
  QueryFile = "/etc/bacula/scripts/query.sql"
  WorkingDirectory = %(work_dir)s
  PidDirectory = %(run)s
  Maximum Concurrent Jobs = 1
  Password = %(password)s
  Messages = Daemon
}

Catalog {
  Name = %(catalog)s
  dbname = "bacula"; dbuser = ""; dbpassword = ""
}

Client {
  Name = %(client)s
  Address = 127.0.0.1
  FDPort = %(fd_port)d
  Catalog = %(catalog)s
  Password = %(password)s
  AutoPrune = no
}

Storage {
  Name = %(storage)s
  Address = 127.0.0.1
  SDPort = %(sd_port)d
  Password = %(password)s
  Device = %(storage)s
  Media Type = %(media_type)s
  Autochanger = yes
  Maximum Concurrent Jobs = 1
}

Pool {
  Name = %(pool)s
  Pool Type = Backup
  Storage = %(storage)s
  Recycle = no
  AutoPrune = no
  Volume Retention = 365 days
}

FileSet {
  Name = %(fileset)s
  Include {
    Options {
      signature = MD5
    }
    File = %(source)s
  }
}

Job {
  Name = %(job)s
  Type = Backup
  Level = Full
  Client = %(client)s
  FileSet = %(fileset)s
  Storage = %(storage)s
  Pool = %(pool)s
  Messages = Standard
  Spool Data = no
  Spool Attributes = yes
  Write Bootstrap = "%(work)s/dir/%%c.bsr"
  Priority = 10
}

Job {
  Name = %(restore_job)s
  Type = Restore
  Client = %(client)s
  FileSet = %(fileset)s
  Storage = %(storage)s
  Pool = %(pool)s
  Messages = Standard
  Where = %(restore)s
}

Messages {
  Name = Standard
  console = all, !skipped, !saved
  append = "%(log)s" = all, !skipped
  catalog = all, !skipped, !saved
}

Messages {
  Name = Daemon
  console = all, !skipped, !saved
  append = "%(log)s" = all, !skipped
}
''' % dict(n, guest=spec['name'], dir_port=DIR_PORT, fd_port=FD_PORT, sd_port=SD_PORT, work_dir=_quote(p['work'] + '/dir'),
           run=_quote(p['run']), password=_quote(_password(spec['name'])), catalog=CATALOG, storage=STORAGE,
           media_type=media_type, pool=POOL, fileset=FILESET, source=SOURCE_DIR, work=p['work'],
           restore=_quote(p['restore']), log=p['log'])


def storage_config(spec, changer_sg, nst='/dev/nst0'):
    n, p = names(spec['name']), paths()
    return '''# Generated by lab/tapelab for %(guest)s (docs/lab.md "Bacula in the lab")
Storage {
  Name = %(storage_daemon)s
  SDPort = %(sd_port)d
  SDAddress = 127.0.0.1
  WorkingDirectory = %(work_dir)s
  Pid Directory = %(run)s
  Maximum Concurrent Jobs = 20
}

Director {
  Name = %(director)s
  Password = %(password)s
}

Autochanger {
  Name = %(storage)s
  Device = %(device)s
  Changer Command = %(changer_command)s
  Changer Device = %(changer)s
}

Device {
  Name = %(device)s
  Drive Index = 0
  Media Type = %(media_type)s
  Archive Device = %(nst)s
  AutoChanger = yes
  AutomaticMount = yes
  AlwaysOpen = no
  RemovableMedia = yes
  RandomAccess = no
  Maximum Block Size = %(block_size)d
}

Messages {
  Name = Standard
  director = %(director)s = all
}
''' % dict(n, guest=spec['name'], sd_port=SD_PORT, work_dir=_quote(p['work'] + '/sd'), run=_quote(p['run']),
           password=_quote(_password(spec['name'])), storage=STORAGE, device=DEVICE,
           changer_command=_quote(CHANGER_COMMAND), changer=changer_sg, media_type='LTO-%d' % spec['drive']['generation'],
           nst=nst, block_size=BLOCK_SIZE)


def file_daemon_config(spec):
    n, p = names(spec['name']), paths()
    return '''# Generated by lab/tapelab for %(guest)s (docs/lab.md "Bacula in the lab")
FileDaemon {
  Name = %(client)s
  FDport = %(fd_port)d
  FDAddress = 127.0.0.1
  WorkingDirectory = %(work_dir)s
  Pid Directory = %(run)s
  Maximum Concurrent Jobs = 20
}

Director {
  Name = %(director)s
  Password = %(password)s
}

Messages {
  Name = Standard
  director = %(director)s = all, !skipped, !restored
}
''' % dict(n, guest=spec['name'], fd_port=FD_PORT, work_dir=_quote(p['work'] + '/fd'), run=_quote(p['run']),
           password=_quote(_password(spec['name'])))


def bconsole_config(spec):
    n = names(spec['name'])
    return '''# Generated by lab/tapelab for %(guest)s (docs/lab.md "Bacula in the lab")
Director {
  Name = %(director)s
  DIRport = %(dir_port)d
  address = 127.0.0.1
  Password = %(password)s
}
''' % dict(n, guest=spec['name'], dir_port=DIR_PORT, password=_quote(_password(spec['name'])))


# Shell functions both scripts use (POSIX sh in the guest).
_COMMON = r'''
B=%(dir)s
CH=%(changer)s
log() { echo "bacula-setup[$(cut -d' ' -f1 /proc/uptime)]: $*" >&2; }
fail() { echo "bacula-setup: FAILED: $*" >&2; exit 1; }
wait_ready() {
    i=0
    while [ $i -lt 100 ]; do
        mt -f %(nst)s status 2>/dev/null | grep -q ONLINE && return 0
        sleep 0.2
        i=$((i + 1))
    done
    fail "the drive is not ready after loading a cartridge (mt -f %(nst)s status)"
}
# the slot whose cartridge is in drive 0, or nothing
loaded_slot() {
    mtx -f "$CH" status | sed -n 's/^Data Transfer Element 0:Full (Storage Element \([0-9]*\) Loaded).*/\1/p'
}
# slot_barcode N: the barcode mtx reports in storage slot N
slot_barcode() {
    mtx -f "$CH" status | sed -n "s/^ *Storage Element $1:Full *:VolumeTag *= *\([^ ]*\).*/\1/p"
}
unload_drive() {
    s=$(loaded_slot)
    if [ -n "$s" ]; then
        mt -f %(nst)s rewind 2>/dev/null
        mtx -f "$CH" unload "$s" 0 >/dev/null || fail "mtx unload $s 0"
    fi
}
load_slot() {
    mtx -f "$CH" load "$1" 0 >/dev/null || fail "mtx load $1 0"
    wait_ready
}
stop_daemons() {
    for f in "$B"/run/*.pid; do
        [ -f "$f" ] || continue
        kill "$(cat "$f")" 2>/dev/null
    done
    i=0
    while [ $i -lt 100 ]; do
        alive=
        for f in "$B"/run/*.pid; do
            [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null && alive=1
        done
        [ -z "$alive" ] && return 0
        sleep 0.1
        i=$((i + 1))
    done
    fail "the Bacula daemons did not stop (pid files in $B/run)"
}
# true while the storage daemon holds the drive open (one ls: a readlink per fd of every process is slow in UML)
sd_holds_drive() {
    for f in "$B"/run/bacula-sd.*.pid; do
        [ -f "$f" ] || continue
        ls -l "/proc/$(cat "$f")/fd" 2>/dev/null | grep -q -e ' %(nst)s$' -e ' /dev/st0$' && return 0
    done
    return 1
}
'''


def setup_script(spec, changer_sg, nst='/dev/nst0'):
    """The guest's Bacula from nothing: tmpfs, configurations checked with -t, catalog, daemons, labelled pool.

    Run with ``sh -s`` over the guest's SSH. Safe to repeat: an earlier setup's daemons are stopped and its
    tmpfs replaced. It prints ``label`` lines (the bconsole output) and ends with the boot cartridge in the drive.
    """
    p, n = paths(), names(spec['name'])
    slots = pool_slots(spec)
    boot_slot = spec.get('load_slot') or 0
    files = (
        (p['director_config'], director_config(spec)),
        (p['sd_config'], storage_config(spec, changer_sg, nst)),
        (p['fd_config'], file_daemon_config(spec)),
        (p['bconsole_config'], bconsole_config(spec)),
    )
    out = ['set -u', _COMMON % {'dir': BACULA_DIR, 'changer': shlex.quote(changer_sg), 'nst': nst}]
    out.append(r'''
log "start"
if mountpoint -q "$B"; then
    stop_daemons
    umount "$B" || fail "umount $B"
fi
mkdir -p "$B" && mount -t tmpfs -o size=%(mb)dm,mode=0700 tapelab-bacula "$B" || fail "tmpfs on $B"
mkdir -p "$B/etc" "$B/work/dir" "$B/work/sd" "$B/work/fd" "$B/run" "$B/log" "$B/restore"
''' % {'mb': BACULA_TMPFS_MB})
    for path, text in files:
        out.append("cat >%s <<'TAPELAB_EOF'\n%sTAPELAB_EOF\n" % (shlex.quote(path), text))
    out.append(r'''
# the catalog: Debian's table script with its database name and directory filled in
sed -e 's/XXX_DBNAME_XXX/bacula/' -e "s|^cd /var/lib/bacula|cd $B/work/dir|" \
    /usr/share/bacula-director/make_sqlite3_tables >"$B/work/make_sqlite3_tables" || fail "make_sqlite3_tables"
sh "$B/work/make_sqlite3_tables" >/dev/null || fail "creating the SQLite catalog"
log "catalog created"
# each configuration as its daemon reads it, before anything starts
bacula-dir -t -c %(dir_conf)s || fail "bacula-dir -t -c %(dir_conf)s"
bacula-sd -t -c %(sd_conf)s || fail "bacula-sd -t -c %(sd_conf)s"
bacula-fd -t -c %(fd_conf)s || fail "bacula-fd -t -c %(fd_conf)s"
bconsole -t -c %(bc_conf)s || fail "bconsole -t -c %(bc_conf)s"
log "configurations checked"
''' % {'dir_conf': p['director_config'], 'sd_conf': p['sd_config'], 'fd_conf': p['fd_config'],
       'bc_conf': p['bconsole_config']})
    # Blank the pool's cartridges before the storage daemon runs: check each slot's barcode first.
    out.append('unload_drive\n')
    for slot, barcode in slots:
        out.append(r'''[ "$(slot_barcode %(slot)d)" = %(bc)s ] || fail "slot %(slot)d does not hold %(bc)s (mtx status)"
load_slot %(slot)d
mt -f %(nst)s rewind && mt -f %(nst)s weof 1 && mt -f %(nst)s rewind || fail "blanking %(bc)s"
mtx -f "$CH" unload %(slot)d 0 >/dev/null || fail "mtx unload %(slot)d 0"
log "blanked %(bc)s"
''' % {'slot': slot, 'bc': shlex.quote(barcode), 'nst': nst})
    out.append(r'''log "pool cartridges blanked: %(barcodes)s"
bacula-fd -c %(fd_conf)s || fail "starting bacula-fd"
bacula-sd -c %(sd_conf)s || fail "starting bacula-sd"
bacula-dir -c %(dir_conf)s || fail "starting bacula-dir"
i=0
until echo "status director" | bconsole -c %(bc_conf)s 2>/dev/null | grep -q "Daemon started"; do
    i=$((i + 1))
    [ $i -lt 100 ] || fail "the Director does not answer bconsole (see $B/log/bacula.log)"
    sleep 0.1
done
log "daemons started"
printf 'label barcodes storage=%(storage)s pool=%(pool)s slots=%(slots)s drive=0\nyes\n' |
    bconsole -c %(bc_conf)s >"$B/log/label.out" 2>&1
cat "$B/log/label.out"
log "labelled"
''' % {'barcodes': ' '.join(barcode for slot, barcode in slots), 'fd_conf': p['fd_config'], 'sd_conf': p['sd_config'],
       'dir_conf': p['director_config'], 'bc_conf': p['bconsole_config'], 'storage': STORAGE, 'pool': POOL,
       'slots': ','.join(str(slot) for slot, barcode in slots)})
    for barcode in [barcode for slot, barcode in slots]:
        out.append('grep -q %s "$B/log/label.out" || fail %s\n' % (
            shlex.quote('Catalog record for Volume "%s", Slot' % barcode),
            shlex.quote('Bacula did not label %s (see %s/log/label.out)' % (barcode, BACULA_DIR))))
    out.append(r'''# the storage daemon lets go of the drive between jobs (AlwaysOpen = no): release it, then the boot cartridge
printf 'release storage=%(storage)s drive=0\n' | bconsole -c %(bc_conf)s >/dev/null 2>&1
i=0
while sd_holds_drive; do
    i=$((i + 1))
    [ $i -lt 100 ] || fail "bacula-sd still holds %(nst)s open after the labels (AlwaysOpen = no in $B/etc/bacula-sd.conf?)"
    sleep 0.1
done
log "drive released"
unload_drive
if [ %(boot)d -gt 0 ]; then
    load_slot %(boot)d
fi
log "ready: job %(job)s, pool %(pool)s"
''' % {'storage': STORAGE, 'bc_conf': p['bconsole_config'], 'nst': nst, 'boot': boot_slot, 'job': n['job'],
       'pool': POOL})
    return ''.join(out)


def stop_script(spec, changer_sg, nst='/dev/nst0'):
    """Stop the guest's Bacula, drop its tmpfs and put the boot cartridge back in the drive (sh -s)."""
    boot_slot = spec.get('load_slot') or 0
    return ''.join([
        'set -u', _COMMON % {'dir': BACULA_DIR, 'changer': shlex.quote(changer_sg), 'nst': nst},
        r'''
if mountpoint -q "$B"; then
    stop_daemons
    umount "$B" || fail "umount $B"
fi
if [ %(boot)d -gt 0 ] && [ "$(loaded_slot)" != %(boot)d ]; then
    unload_drive
    load_slot %(boot)d
fi
log "stopped"
''' % {'boot': boot_slot}])


def host_vars(spec):
    """What a user's own Bacula host gives the collection: the inventory variables of a guest with Bacula.

    ``tapeops_backup.software`` makes qualify read the storage daemon's configuration (``qualify_sd_config``,
    the generated bacula-sd.conf) for the drive's block size and Maximum File Size; ``tapeops_bacula`` names
    the job, where bconsole's configuration is, and the storage, pool and cartridges it uses.
    """
    n, p = names(spec['name']), paths()
    slots = pool_slots(spec)
    return {
        'tapeops_backup': {'software': 'bacula'},
        'qualify_sd_config': p['sd_config'],
        'tapeops_bacula': {
            'job': n['job'],
            'level': 'Full',
            'bconsole_config': p['bconsole_config'],
            'storage': STORAGE,
            'pool': POOL,
            'drive': 0,
            'slots': [slot for slot, barcode in slots],
            'volumes': [barcode for slot, barcode in slots],
            'director': n['director'],
            'client': n['client'],
            'fileset': FILESET,
            'restore_job': n['restore_job'],
            'config_dir': p['etc'],
            'log': p['log'],
        },
    }
