# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""molecule verify (testinfra) on an mhvtl machine: module, devices, and what the converge must have produced
on any mhvtl host: one report for the host with no error, every mhvtl drive in it identified by its own INQUIRY
strings and judged, JUnit with one case per drive, and no cartridge written whose barcode is not allowed."""

import glob
import json
import os
import xml.etree.ElementTree as ET

import pytest

EPHEMERAL = os.environ.get('MOLECULE_EPHEMERAL_DIRECTORY', '')


def _run_dir():
    runs = sorted(d for d in glob.glob(os.path.join(EPHEMERAL, 'reports', '*'))
                  if os.path.isdir(os.path.join(d, 'hosts')))
    assert runs, 'no run directory under %s/reports' % EPHEMERAL
    return runs[-1]


def _st_nodes(host):
    names = host.check_output('ls /sys/class/scsi_tape').split()
    return sorted(n for n in names if n.startswith('nst') and n[3:].isdigit())


@pytest.fixture()
def doc():
    path = os.path.join(_run_dir(), 'hosts', 'mhvtl-host.json')
    assert os.path.exists(path), path
    with open(path) as f:
        return json.load(f)


def test_mhvtl_module_loaded(host):
    assert 'mhvtl ' in host.file('/proc/modules').content_string


def test_tape_drive_present(host):
    assert host.file('/dev/nst0').is_character_device


def test_changer_answers(host):
    out = host.check_output('lsscsi -g')
    sgs = [line.split()[-1] for line in out.splitlines() if 'mediumx' in line]
    assert sgs, out
    assert 'Storage Changer' in host.check_output('mtx -f %s status' % sgs[0])


def test_the_report_has_every_mhvtl_drive_with_its_own_identity_and_a_verdict(host, doc):
    assert doc['host'] == 'mhvtl-host' and doc['error'] is None, doc.get('error')
    nodes = _st_nodes(host)
    assert sorted(d['nst'] for d in doc['drives']) == ['/dev/%s' % n for n in nodes]
    for drive in doc['drives']:
        sysfs = '/sys/class/scsi_tape/%s/device/' % os.path.basename(drive['nst'])
        vendor = host.file(sysfs + 'vendor').content_string.strip()
        model = host.file(sysfs + 'model').content_string.strip()
        # the drive is what its INQUIRY says (mhvtl answers as an IBM, HP or Quantum drive), not its cartridge
        assert (drive['identity']['vendor'], drive['identity']['product']) == (vendor, model), drive['nst']
        # host document version 2: the verdicts apart from the drives, each naming its drive
        verdicts = [v for v in doc['verdicts'] if v['drive'] == drive['id']]
        assert len(verdicts) == 1 and verdicts[0]['class'] and verdicts[0]['summary'], drive['nst']


def test_junit_has_one_case_per_drive_and_no_error(host):
    suite = ET.parse(os.path.join(_run_dir(), 'junit.xml')).getroot().find('testsuite')
    cases = suite.findall('testcase')
    assert sorted(c.get('classname') for c in cases) == ['mhvtl-host'] * len(_st_nodes(host))
    assert suite.get('errors') == '0'
    assert all(c.find('error') is None for c in cases)


def test_no_cartridge_written_unless_its_barcode_is_allowed(host, doc):
    with open(os.path.join(EPHEMERAL, 'st-write-counts-before.json')) as f:
        before = json.load(f)
    allowed = set(json.loads(os.environ.get('TAPEOPS_MHVTL_ALLOWED_BARCODES') or '[]'))
    for drive in doc['drives']:
        node = os.path.basename(drive['nst'])
        after = host.file('/sys/class/scsi_tape/%s/stats/write_cnt' % node).content_string.strip()
        if drive['identity'].get('barcode') not in allowed:
            assert after == before[node], '%s (%s) was written to' % (drive['nst'], drive['identity'].get('barcode'))
