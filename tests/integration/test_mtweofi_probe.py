# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""MTWEOFI found out from the st driver on the lab's real st devices.

The write benchmark asks st with an MTWEOFI ioctl of count 0 on the drive the
safety gate admitted, open for writing, at BOT; discovery and the preflight,
which open no drive for writing, read the st driver's version string. The
lab guests run Linux 6.1 (st verstr 20160209), so every way must say
"supported", and the probe must leave the tape where it was: at BOT, with
nothing written by the probe itself. Both lab drives write nothing for a
WRITE FILEMARKS of count 0 (the emulated one, lab/tapedrive/ssc.py, returns
at once with IMMED set; tgt's loop runs zero times, usr/bs_ssc.c), so a
probe that wrote a mark would be the collection's doing.
"""

import pytest

from test_tape_side import run_module

HOST = 'lab-ma1'

# untimed (pytest.ini): no rate, class or time a loaded machine could change
pytestmark = [pytest.mark.lab, pytest.mark.untimed]


def st_counter(lab, host, name):
    return int(lab.run(host, 'cat /sys/class/scsi_tape/nst0/stats/%s' % name, check=True).stdout.strip())


def test_st_driver_version_is_exported_and_recent(lab):
    version = lab.run(HOST, 'cat /sys/bus/scsi/drivers/st/version', check=True).stdout.strip()
    assert version.startswith('[') and version.endswith(']') and version[1:-1] >= '20100829'


def test_preflight_and_discovery_read_the_st_driver_version(lab):
    version = lab.run(HOST, 'cat /sys/bus/scsi/drivers/st/version', check=True).stdout.strip()[1:-1]
    pre = run_module(lab, HOST, 'st_preflight_info', {})
    assert pre['_rc'] == 0, pre.get('msg')
    assert pre['mtweofi_supported'] is True
    assert pre['mtweofi_basis'] == 'st driver version %s' % version and pre['st_driver_version'] == version
    info = run_module(lab, HOST, 'tape_drive_info', {'log_pages': False})
    assert info['_rc'] == 0, info.get('msg')
    drive = info['drives'][0]
    assert (drive['mtweofi_supported'], drive['mtweofi_basis']) == (True, 'st driver version %s' % version)


def test_check_mode_sends_only_discovery_and_uses_the_version(lab):
    # Check mode identifies the drive (discovery's read-only `mt status`: st opens it and asks
    # TEST UNIT READY and the like) and sends nothing more: no open for writing, no MTWEOFI probe.
    # So it moves st's command counters exactly as much as discovery alone does.
    writes, others = st_counter(lab, HOST, 'write_cnt'), st_counter(lab, HOST, 'other_cnt')
    info = run_module(lab, HOST, 'tape_drive_info', {'log_pages': False})
    assert info['_rc'] == 0, info.get('msg')
    discovery = st_counter(lab, HOST, 'other_cnt') - others
    assert discovery > 0, 'discovery sent the drive no command: st stats do not count what this test needs'
    others = st_counter(lab, HOST, 'other_cnt')
    result = run_module(lab, HOST, 'tape_write_benchmark', {'device': '/dev/nst0'}, check=True)
    assert result['_rc'] == 0, result.get('msg')
    assert result['mtweofi_supported'] is True and result['mtweofi_basis'].startswith('st driver version')
    assert st_counter(lab, HOST, 'write_cnt') == writes
    assert st_counter(lab, HOST, 'other_cnt') - others == discovery


def test_ioctl_probe_on_the_admitted_drive_leaves_the_tape_at_bot(lab):
    result = run_module(lab, HOST, 'tape_write_benchmark', {
        'device': '/dev/nst0', 'step_mb': 2, 'block_sizes': ['256K'], 'patterns': ['random'],
        'allowed_barcodes': lab.hostvars[HOST]['tapeops_allowed_barcodes'], 'log_pages': False})
    assert result['_rc'] == 0, result.get('msg')
    probe = result['mtweofi']
    assert (probe['supported'], probe['basis']) == (True, 'ioctl probe'), probe
    # (a module's result carries 'warnings' only when it has some)
    assert 'position_changed' not in probe and not [w for w in result.get('warnings', []) if 'MTWEOFI' in w]
    assert result['drive']['mtweofi_basis'] == 'ioctl probe'
    status = lab.run(HOST, 'mt -f /dev/nst0 status', check=True).stdout
    assert 'File number=0, block number=0' in status and 'BOT' in status
    # The probe ran at BOT before the sweep: had it written a file mark, the first record would be
    # empty. The first record is the sweep's first 256 KiB block.
    proc = lab.run(HOST, 'dd if=/dev/nst0 of=/dev/null bs=1M count=1 2>&1; mt -f /dev/nst0 rewind', check=True)
    assert '0+1 records in' in proc.stdout and '262144 bytes' in proc.stdout, proc.stdout
