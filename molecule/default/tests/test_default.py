# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""molecule verify (testinfra) on the lab guests: devices present, settings applied, reports written."""

import glob
import json
import os

import pytest
import yaml

RUN_DIR = os.environ.get('TAPEOPS_LAB_DIR', '/var/tmp/tapeops-lab')
IDENTITY = {'lab-ma1': ('IBM', 'ULT3580-TD5'), 'lab-ma2': ('HP', 'Ultrium 6-SCSI'), 'lab-ma3': ('IBM', 'ULT3580-TD8')}


def lab_vars(name):
    with open(os.path.join(RUN_DIR, 'host_vars', name + '.yml')) as f:
        return yaml.safe_load(f)


@pytest.fixture()
def name(host):
    return host.check_output('hostname')


def test_nst0_is_the_expected_drive(host, name):
    # character device, major 9 (st)
    assert host.check_output('stat -L -c "%F %t" /dev/nst0') == 'character special file 9'
    vendor = host.file('/sys/class/scsi_tape/nst0/device/vendor').content_string.strip()
    model = host.file('/sys/class/scsi_tape/nst0/device/model').content_string.strip()
    assert (vendor, model) == IDENTITY[name]


def test_changer_lists_the_lab_barcodes(host, name):
    hv = lab_vars(name)
    out = host.check_output('mtx -f %s status' % hv['tapeops_lab_changer']['sg'])
    for barcode in hv['tapeops_lab_barcodes']:
        assert barcode in out


def test_st_settings_applied(host):
    # written by the role (the guest's /etc is an overlay on this machine's own)
    assert 'tapeops.qualify.st_tuning' in host.file('/etc/stinit.def').content_string
    # applied to the running drive: mode 1 (/dev/nst0) is variable block mode
    assert host.file('/sys/class/scsi_tape/nst0/default_blksize').content_string.strip() == '0'


def test_source_tree_mounted(host):
    mount = host.mount_point('/srv/backup-src')
    assert mount.exists and mount.filesystem == 'ext4'


def test_qualify_report_written_for_this_host(name):
    base = os.path.join(os.environ['MOLECULE_EPHEMERAL_DIRECTORY'], 'reports')
    reports = sorted(glob.glob(os.path.join(base, '*', 'hosts', name + '.json')))
    assert reports, 'no report for %s under %s' % (name, base)
    with open(reports[-1]) as f:
        data = json.load(f)
    assert data
