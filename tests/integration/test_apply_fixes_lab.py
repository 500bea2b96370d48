# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""playbooks/apply_fixes.yml on lab guests: check mode changes nothing, the real run sets the verdict's values.

One guest per backup application, the two at once (neither asserts a rate or a time): lab-ma1 for a Bacula host
and lab-ma2 for a Data Protector host, each with the real st driver and its drive. Each run document is the
recorded lab run's lab-ma2 measurements (tests/unit/fixtures/lab_runs/20261123-quick) judged again by the
verdict code for a host configured with 1 MiB blocks and 64 MB segments, written under the guest's name: its
fixes are 64 KiB blocks (st_tuning checks them against the guest's HBA path and writes the st options; bacula_sd
sets Maximum Block Size) and 17000 MB segments (Maximum File Size) for Bacula, 64 KiB blocks and immediate file
marks (omnirc OB2IMMEDFM, asked of the guest's st driver) for Data Protector.

The guests' roots are tmpfs overlays; the test keeps its files under /var/tmp/tapeops-apply-fixes there and puts
/etc/stinit.def and the drive's options back afterwards, as test_roles_lab.py does.
"""

import json
import os
import re
import threading

import pytest

from test_apply_fixes import judged_run, TARGETS

HOSTS = {'bacula': 'lab-ma1', 'data_protector': 'lab-ma2'}
PLAYBOOK = 'playbooks/apply_fixes.yml'
WORK = '/var/tmp/tapeops-apply-fixes'
RECAP = re.compile(r'^(\S+)\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)', re.M)
RESET = ('for n in nst0 nst0l; do mt -f /dev/$n stsetoptions buffer-writes async-writes read-ahead can-bsr && '
         'mt -f /dev/$n stclearoptions scsi2logical two-fms && mt -f /dev/$n defblksize -1 && '
         'mt -f /dev/$n defcompression -1 || exit 1; done; '
         'rm -f /etc/stinit.def.*~ /etc/udev/rules.d/61-tapeops-stinit.rules; rm -rf ' + WORK)
BACKUP = {'block_size_bytes': 1048576, 'segment_size_mb': 64, 'immediate_filemarks': False}

# untimed (pytest.ini): no rate, class or time a loaded machine could change
pytestmark = [pytest.mark.lab, pytest.mark.untimed]


def _prepare(lab, host, original):
    """``host`` with this machine's stinit.def, the driver's default options, an omnirc template and a
    bacula-sd.conf."""
    reset(lab, host, original)
    for source, dest in ((os.path.join(TARGETS, 'role_dp_omnirc', 'files', 'opt', 'omni', '.omnirc.TMPL'),
                          WORK + '/omni/.omnirc.TMPL'),
                         (os.path.join(TARGETS, 'role_bacula_sd', 'files', 'bacula-sd.conf'),
                          WORK + '/bacula/bacula-sd.conf')):
        with open(source, encoding='utf-8') as handle:
            proc = lab.run(host, 'mkdir -p %s && cat > %s' % (os.path.dirname(dest), dest), input=handle.read())
        assert proc.returncode == 0, proc.stderr


def reset(lab, host, original):
    proc = lab.run(host, 'cat > /etc/stinit.def && ' + RESET, input=original)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def state(lab, host):
    """What apply_fixes may change on the guest: the files (sha256) and the drive's options in sysfs."""
    proc = lab.run(host, 'cd / && sha256sum /etc/stinit.def $(find %s -type f | sort) && '
                         'cat /sys/class/scsi_tape/nst0/options /sys/class/scsi_tape/nst0/default_blksize' % WORK)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def apply_fixes(lab, host, run, check):
    extra = {'qualify_run_dir': run, 'dp_omnirc_omni_home': WORK + '/omni',
             'bacula_sd_config': WORK + '/bacula/bacula-sd.conf'}
    result = lab.playbook(PLAYBOOK, extra_vars=extra, check=check, limit=host, args=('--diff',))
    assert result.rc == 0, result.stdout + result.stderr
    recap = dict((m.group(1), int(m.group(3))) for m in RECAP.finditer(result.stdout))
    return recap[host], result.stdout


def ladder(lab, host, run):
    """--check --diff (nothing changes on the guest), real, real again (nothing more to change)."""
    before = state(lab, host)
    changed, check_out = apply_fixes(lab, host, run, check=True)
    assert changed > 0, check_out
    assert state(lab, host) == before, check_out
    changed, real_out = apply_fixes(lab, host, run, check=False)
    assert changed > 0, real_out
    assert state(lab, host) != before
    changed, again = apply_fixes(lab, host, run, check=False)
    assert changed == 0, again
    return check_out, real_out


def st_options(lab, host):
    proc = lab.run(host, 'cat /sys/class/scsi_tape/nst0/options /sys/class/scsi_tape/nst0/default_blksize')
    options, blksize = proc.stdout.split()
    return int(options, 16), int(blksize)


@pytest.fixture(scope='module')
def ladders(lab, tmp_path_factory):
    """Both ladders at once, one thread per guest: {software: {'host', 'doc', 'check_out', 'real_out'} or
    {'host', 'error'}}. The tests read each guest as its ladder left it; both guests are put back afterwards."""
    for host in HOSTS.values():
        if host not in lab.hosts:
            pytest.skip('the lab has no %s' % host)
    with open('/etc/stinit.def', encoding='utf-8') as handle:
        original = handle.read()
    results = {}
    runs = dict((software, str(tmp_path_factory.mktemp('apply-fixes-' + software))) for software in HOSTS)

    def one(software, host):
        try:
            _prepare(lab, host, original)
            run = runs[software]
            doc = judged_run(run, 'lab-ma2', dict(BACKUP, software=software), host=host)
            check_out, real_out = ladder(lab, host, run)
            results[software] = {'host': host, 'doc': doc, 'check_out': check_out, 'real_out': real_out}
        except Exception as exc:  # pylint: disable=broad-exception-caught  # reported by the test of its guest
            results[software] = {'host': host, 'error': '%s: %s' % (type(exc).__name__, exc)}
    threads = [threading.Thread(target=one, args=item, name='apply-fixes-' + item[0]) for item in HOSTS.items()]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=1200)
        yield results
    finally:
        for host in HOSTS.values():
            reset(lab, host, original)


def _ran(ladders, software):
    got = ladders.get(software)
    assert got is not None, 'the %s ladder did not end' % software
    assert 'error' not in got, '%s on %s: %s' % (software, got['host'], got['error'])
    return got['host'], got['doc'], got['check_out'], got['real_out']


def test_apply_fixes_bacula_host(lab, ladders):
    host, doc, check_out, real_out = _ran(ladders, 'bacula')
    assert [(f['id'], f['value']) for f in doc['verdicts'][0]['fixes']][:2] == [
        ('block_size', 65536), ('segment_size', 17000)]
    # The check run showed what it would write.
    assert '+  Maximum Block Size = 65536' in check_out and '+  Maximum File Size = 17000MB' in check_out
    assert re.search(r'^\+  mode1 .*blocksize=0', check_out, re.M), check_out
    conf = lab.run(host, 'cat %s/bacula/bacula-sd.conf' % WORK).stdout
    block = conf[conf.index('Name = LTO-3'):]
    block = block[:block.index('\n}')].splitlines()
    assert '  Maximum Block Size = 65536' in block and '  Maximum File Size = 17000MB' in block
    # The daemon's own test passes on the guest.
    proc = lab.run(host, 'bacula-sd -t -c %s/bacula/bacula-sd.conf' % WORK)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # st_tuning: the drive in variable-block mode with the collection's options, read back from sysfs.
    options, blksize = st_options(lab, host)
    assert options & 0x907 == 0x907 and blksize == 0
    assert "64 KiB" in ' '.join(real_out.split()) and 'bacula_sd_maximum_block_size = 65536' in real_out


def test_apply_fixes_data_protector_host(lab, ladders):
    host, doc, check_out, real_out = _ran(ladders, 'data_protector')
    assert [(f['id'], f['value']) for f in doc['verdicts'][0]['fixes']][:2] == [
        ('block_size', 65536), ('immediate_filemarks', True)]
    assert '+OB2IMMEDFM=1' in check_out
    omnirc = lab.run(host, 'cat %s/omni/.omnirc' % WORK).stdout.splitlines()
    assert [line for line in omnirc if line and not line.startswith('#')] == ['OB2FORCESCSI=WFM', 'OB2IMMEDFM=1']
    # The guest's own st driver was asked whether it has MTWEOFI (Linux 6.1: it has).
    assert 'Refuse immediate file marks where the st driver has no MTWEOFI' in real_out
    devices = re.search(r'"devices_for_the_cell_manager": (\[.*?\])\s*\}', real_out, re.S).group(1)
    # The device block size for the Cell Manager is the verdict's 64 KB; the segment size (no fix) DP's rule.
    keys = ('name', 'drive_label', 'block_size_kb', 'block_size_limited_by', 'segment_size_mb', 'segment_size_basis',
            'native_capacity_gb')
    assert [dict((k, d[k]) for k in keys) for d in json.loads(devices)] == [
        {'name': '/dev/nst0', 'drive_label': 'LTO-6', 'block_size_kb': 64, 'block_size_limited_by': 'verdict',
         'segment_size_mb': 2500 * 1000 // 50, 'segment_size_basis': 'rule', 'native_capacity_gb': 2500}]
    options, blksize = st_options(lab, host)
    assert options & 0x907 == 0x907 and blksize == 0
