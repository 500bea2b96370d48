# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab itself: real st/sg/ch devices in every guest, reachable over SSH.

Every assertion runs the real tools (mt, mtx, dd, sysfs) inside the
user-mode-linux guests; nothing is mocked.
"""

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TAPELAB = os.path.join(ROOT, 'lab', 'tapelab')

EXPECTED_DRIVES = {
    'lab-ma1': ('IBM', 'ULT3580-TD5'),
    'lab-ma2': ('HP', 'Ultrium 6-SCSI'),
    'lab-ma3': ('IBM', 'ULT3580-TD8'),
}


@pytest.mark.lab
def test_lab_has_two_media_agents(lab):
    assert len(lab.hosts) >= 2
    assert {'lab-ma1', 'lab-ma2'} <= set(lab.hosts)
    for host in lab.hosts:
        hv = lab.hostvars[host]
        assert hv['tapeops_lab'] is True
        assert hv['tapeops_allowed_barcodes'], host
        assert hv['tapeops_lab_changer']['sg'].startswith('/dev/sg'), hv['tapeops_lab_changer']


@pytest.mark.lab
@pytest.mark.parametrize('host', ['lab-ma1', 'lab-ma2'])
def test_nst0_is_st_char_device_with_identity(lab, host):
    vendor, product = EXPECTED_DRIVES[host]
    drive = lab.hostvars[host]['tapeops_lab_drives'][0]
    assert (drive['vendor'], drive['product']) == (vendor, product)
    proc = lab.run(host, 'stat -L -c "%F %t" /dev/nst0; readlink -f /sys/class/scsi_tape/nst0/device/driver; '
                         'cat /sys/class/scsi_tape/nst0/device/vendor /sys/class/scsi_tape/nst0/device/model')
    assert proc.returncode == 0, proc.stderr
    lines = [ln.strip() for ln in proc.stdout.splitlines()]
    # character special file, major 9 (st) in hex
    assert lines[0] == 'character special file 9', lines
    assert lines[1].endswith('/drivers/st'), lines
    assert lines[2] == vendor and lines[3] == product, lines


@pytest.mark.lab
@pytest.mark.parametrize('host', ['lab-ma1', 'lab-ma2'])
def test_mt_status_reports_loaded_tape_at_bot(lab, host):
    proc = lab.run(host, 'mt -f /dev/nst0 rewind && mt -f /dev/nst0 status')
    assert proc.returncode == 0, proc.stderr
    assert 'ONLINE' in proc.stdout, proc.stdout
    assert 'BOT' in proc.stdout, proc.stdout
    if lab.hostvars[host].get('tapeops_lab_drive_mode', 'tgt') == 'tgt':
        assert re.search(r'Density code 0x0\b', proc.stdout), proc.stdout  # tgt: always 0 (docs/lab.md)
    else:
        # the emulated drive reports its cartridge's density: the generation's own
        density = {5: '0x58', 6: '0x5a', 8: '0x5e'}[lab.hostvars[host]['tapeops_lab_drives'][0]['lto_generation']]
        assert re.search(r'Density code %s\b' % density, proc.stdout), proc.stdout


@pytest.mark.lab
@pytest.mark.parametrize('host', ['lab-ma1', 'lab-ma2'])
def test_mtx_status_lists_barcodes(lab, host):
    hv = lab.hostvars[host]
    changer = hv['tapeops_lab_changer']['sg']
    proc = lab.run(host, 'mtx -f %s status' % changer)
    assert proc.returncode == 0, proc.stderr
    tags = re.findall(r'VolumeTag\s*=\s*([A-Z0-9]+)\s*$', proc.stdout, re.M)
    assert sorted(tags) == sorted(hv['tapeops_lab_barcodes']), proc.stdout
    assert re.search(r'Data Transfer Element 0:Full .*VolumeTag = %s' % hv['tapeops_lab_loaded_barcode'], proc.stdout)
    inq = lab.run(host, 'cat /sys/class/scsi_generic/%s/device/vendor /sys/class/scsi_generic/%s/device/model' % (
        os.path.basename(changer), os.path.basename(changer)))
    assert inq.stdout.split() == ['STK', 'L700'], inq.stdout


def _loaded_barcode(lab, host):
    changer = lab.hostvars[host]['tapeops_lab_changer']['sg']
    out = lab.run(host, 'mtx -f %s status' % changer).stdout
    m = re.search(r'Data Transfer Element 0:Full .*VolumeTag\s*=\s*(\S+)', out)
    return m.group(1) if m else None


@pytest.mark.lab
@pytest.mark.parametrize('host', ['lab-ma1', 'lab-ma2'])
def test_dd_round_trip_on_scratch_cartridge(lab, host):
    barcode = _loaded_barcode(lab, host)
    # Safety: only write to a cartridge the inventory allows.
    assert barcode in lab.hostvars[host]['tapeops_allowed_barcodes'], barcode
    script = (
        'set -e; f=/tmp/labdd.$$; head -c 8388608 /dev/urandom >$f; sha256sum <$f | cut -d" " -f1; '
        'mt -f /dev/nst0 setblk 0; mt -f /dev/nst0 rewind; dd if=$f of=/dev/nst0 bs=256k 2>/dev/null; mt -f /dev/nst0 weof 1; '
        'mt -f /dev/nst0 rewind; dd if=/dev/nst0 bs=256k 2>/dev/null | sha256sum | cut -d" " -f1; '
        'mt -f /dev/nst0 rewind; rm -f $f'
    )
    proc = lab.run(host, script)
    assert proc.returncode == 0, proc.stderr
    written, read = proc.stdout.split()
    assert written == read


WAIT_READY = 'for i in $(seq 50); do mt -f /dev/nst0 status >/dev/null 2>&1 && break; sleep 0.2; done; '


def _restore_loaded(lab, host):
    """Put the boot-time cartridge back into the drive, whatever a test left there."""
    hv = lab.hostvars[host]
    changer = hv['tapeops_lab_changer']['sg']
    want = hv['tapeops_lab_loaded_barcode']
    out = lab.run(host, 'mtx -f %s status' % changer).stdout
    m = re.search(r'Data Transfer Element 0:Full \(Storage Element (\d+) Loaded\):VolumeTag\s*=\s*(\S+)', out)
    if m and m.group(2) == want:
        return
    if m:
        lab.run(host, 'mt -f /dev/nst0 rewind; mtx -f %s unload %s 0' % (changer, m.group(1)))
    lab.run(host, 'mtx -f %s load %d 0; %s' % (changer, hv['tapeops_lab_barcodes'].index(want) + 1, WAIT_READY))


@pytest.mark.lab
@pytest.mark.parametrize('host', ['lab-ma1', 'lab-ma2'])
def test_data_cartridge_holds_a_tar_archive_and_is_not_allowed(lab, host):
    hv = lab.hostvars[host]
    if not hv.get('tapeops_lab_data_barcodes'):
        pytest.skip('this lab was started by a version without data cartridges: lab/tapelab down && lab/tapelab up')
    data = hv['tapeops_lab_data_barcodes'][0]
    assert data in hv['tapeops_lab_barcodes']
    assert data not in hv['tapeops_allowed_barcodes']
    changer = hv['tapeops_lab_changer']['sg']
    out = lab.run(host, 'mtx -f %s status' % changer).stdout
    slot = re.search(r'Storage Element (\d+):Full :VolumeTag=%s' % data, out).group(1)
    home = hv['tapeops_lab_barcodes'].index(hv['tapeops_lab_loaded_barcode']) + 1
    script = ('set -e; mt -f /dev/nst0 rewind; mtx -f {c} unload {h} 0 >&2; mtx -f {c} load {s} 0 >&2; ' + WAIT_READY +
              'mt -f /dev/nst0 setblk 0; mt -f /dev/nst0 rewind; tar -b 128 -tf /dev/nst0; mt -f /dev/nst0 rewind; '
              'mtx -f {c} unload {s} 0 >&2; mtx -f {c} load {h} 0 >&2; ' + WAIT_READY).format(c=changer, h=home, s=slot)
    try:
        proc = lab.run(host, script)
    finally:
        _restore_loaded(lab, host)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ['os-release', 'hostname'], proc.stdout
    assert _loaded_barcode(lab, host) == hv['tapeops_lab_loaded_barcode']


@pytest.mark.lab
@pytest.mark.parametrize('host', ['lab-ma1', 'lab-ma2'])
def test_source_tree_mounted_with_data(lab, host):
    src = lab.hostvars[host]['tapeops_lab_source_dir']
    proc = lab.run(host, 'findmnt -n -o SOURCE,FSTYPE %s && find %s -type f | wc -l && du -sm %s' % (src, src, src))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split('\n')
    assert lines[0].split() == ['/dev/ubda', 'ext4'], lines
    assert int(lines[1]) > 1000, lines
    assert 100 < int(lines[2].split()[0]) < 400, lines


@pytest.mark.lab
def test_ansible_reaches_every_guest(lab):
    play = os.path.join(tempfile.mkdtemp(), 'ping.yml')
    with open(play, 'w') as f:
        f.write('- name: Lab ping\n  hosts: media_agents\n  gather_facts: false\n  tasks:\n'
                '    - name: Ping\n      ansible.builtin.ping:\n')
    result = lab.playbook(play)
    assert result.rc == 0, result.stdout + result.stderr
    for host in lab.hosts:
        assert re.search(r'%s\s+: ok=1 ' % re.escape(host), result.stdout), result.stdout


@pytest.mark.lab
def test_shim_lets_uml_boot_on_this_machine():
    """The ptrace XSAVE shim compiled by the lab lets linux.uml run its init here."""
    tmp_path = pathlib.Path(tempfile.mkdtemp(prefix='tapeops-shim-test-', dir='/var/tmp'))
    so = tmp_path / 'shim.so'
    subprocess.run(['gcc', '-O2', '-shared', '-fPIC', '-o', str(so), os.path.join(ROOT, 'lab', 'ptrace-xsave-shim.c'),
                    '-ldl'], check=True)
    init = tmp_path / 'init'
    init.write_text('#!/bin/sh\nmount -t proc proc /proc\necho TAPELAB-INIT-RAN "$(cat /proc/version)"\n'
                    'echo o >/proc/sysrq-trigger\nsleep 5\n')
    init.chmod(0o755)
    env = dict(os.environ, LD_PRELOAD=str(so), TMPDIR='/dev/shm')
    proc = subprocess.run(['/usr/bin/linux.uml', 'mem=128M', 'rootfstype=hostfs', 'rootflags=/', 'ro',
                           'init=%s' % init, 'con=null', 'ssl=null', 'con0=null,fd:1', 'umid=tapelab-shimtest-%d' % os.getpid(),
                           'uml_dir=%s' % tmp_path], env=env, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL, check=False)
    out = proc.stdout + proc.stderr
    shutil.rmtree(tmp_path, ignore_errors=True)
    assert 'ptrace set fp regs failed' not in out, out
    assert 'TAPELAB-INIT-RAN Linux version 6.' in out, out


@pytest.mark.lab
def test_up_status_down_is_idempotent_in_own_run_dir():
    """A second, one-guest lab on other ports: up, up again (no-op), down twice, nothing left."""
    # Not pytest's tmp_path: a concurrent pytest run may prune /tmp/pytest-of-<user>.
    run_dir = tempfile.mkdtemp(prefix='tapeops-lab-test-', dir='/var/tmp')
    env = dict(os.environ, TAPEOPS_LAB_DIR=run_dir, TAPEOPS_LAB_PORT_BASE='2240')

    def tl(*args, timeout=300):
        return subprocess.run([TAPELAB] + list(args), env=env, capture_output=True, text=True, timeout=timeout,
                              check=False)

    try:
        up = tl('up', '-n', '1', '-k', '2', '--cartridge-mb', '64')
        assert up.returncode == 0, up.stderr
        assert re.search(r'lab-ma1 up in [0-9.]+ s', up.stderr), up.stderr
        again = tl('up')
        assert again.returncode == 0 and 'already up' in again.stderr, again.stderr
        st = tl('status', '--json')
        assert st.returncode == 0, st.stdout
        info = json.loads(st.stdout)['guests']['lab-ma1']
        assert info['ssh'] is True and info['port'] == 2241
        pids = list(info['pids'].values())
        assert len(pids) == 3
    finally:
        down = tl('down')
    assert down.returncode == 0, down.stderr
    for pid in pids:
        assert not os.path.exists('/proc/%d' % pid) or 'Z' in open('/proc/%d/stat' % pid).read().split()[2]
    down2 = tl('down')
    assert down2.returncode == 0 and 'nothing to stop' in down2.stderr, down2.stderr
    st = tl('status')
    assert st.returncode == 3, st.stdout
    shutil.rmtree(run_dir, ignore_errors=True)


def _molecule(*args, timeout=600):
    """Run molecule from the collection root with this venv and collection path."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    try:
        from conftest import collections_path  # pylint: disable=import-outside-toplevel
    finally:
        sys.path.pop(0)
    bindir = os.path.dirname(sys.executable)
    # molecule keeps a scenario's state (created, converged, the instance config) in
    # ~/.ansible/tmp/molecule.<checksum of the project folder's name>.<scenario>: every checkout's
    # mirror is named 'qualify', so two runs on one machine would share it (one skips create because the
    # other created). Its own folder beside the scenario's lab run dir keeps runs apart.
    scenario = args[args.index('-s') + 1] if '-s' in args else 'default'
    lab_dir = os.environ.get('TAPEOPS_MOLECULE_LAB_DIR') or '/var/tmp/tapeops-lab-molecule'
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get('PATH', ''),
               ANSIBLE_COLLECTIONS_PATH=collections_path(), ANSIBLE_COLLECTIONS_SCAN_SYS_PATH='false',
               ANSIBLE_NOCOLOR='1', NO_COLOR='1', PY_COLORS='0',
               MOLECULE_EPHEMERAL_DIRECTORY=os.environ.get('MOLECULE_EPHEMERAL_DIRECTORY') or
               os.path.join(lab_dir + '-molecule-state', scenario))
    molecule = os.path.join(bindir, 'molecule')
    return subprocess.run([molecule if os.path.exists(molecule) else 'molecule'] + list(args), cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, check=False)


def _molecule_test(scenario, timeout, run_dir):
    """``molecule test -s scenario`` passes, and its lab in ``run_dir`` is destroyed: nothing left running."""
    proc = _molecule('test', '-s', scenario, timeout=timeout)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-6000:]
    status = subprocess.run([TAPELAB, 'status'], env=dict(os.environ, TAPEOPS_LAB_DIR=run_dir),
                            capture_output=True, text=True, check=False)
    assert status.returncode == 3, status.stdout


@pytest.mark.parametrize('scenario', ['mhvtl', 'default'])
def test_molecule_syntax(scenario):
    proc = _molecule('syntax', '-s', scenario)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]


@pytest.mark.lab
@pytest.mark.skipif(os.environ.get('TAPEOPS_MOLECULE_TEST', '1') == '0', reason='TAPEOPS_MOLECULE_TEST=0')
def test_molecule_test_default():
    """molecule test -s default: lab up in its own run dir, converge, testinfra verify, lab down."""
    _molecule_test('default', 3000, os.environ.get('TAPEOPS_MOLECULE_LAB_DIR') or '/var/tmp/tapeops-lab-molecule')


@pytest.mark.lab
@pytest.mark.skipif(os.environ.get('TAPEOPS_MOLECULE_TEST', '1') == '0', reason='TAPEOPS_MOLECULE_TEST=0')
def test_molecule_test_mhvtl():
    """molecule test -s mhvtl: an mhvtl lab guest in its own run dir (mhvtl built once per machine), qualify,
    the refusals, testinfra against mhvtl's own configuration, lab down."""
    _molecule_test('mhvtl', 1800, os.environ.get('TAPEOPS_MOLECULE_MHVTL_LAB_DIR') or '/var/tmp/tapeops-lab-mhvtl')
