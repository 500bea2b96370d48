# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""molecule verify (testinfra) on an mhvtl machine: module, devices, report."""

import glob
import os


def test_mhvtl_module_loaded(host):
    assert 'mhvtl ' in host.file('/proc/modules').content_string


def test_tape_drive_present(host):
    assert host.file('/dev/nst0').is_character_device


def test_changer_answers(host):
    out = host.check_output('lsscsi -g')
    sgs = [line.split()[-1] for line in out.splitlines() if 'mediumx' in line]
    assert sgs, out
    assert 'Storage Changer' in host.check_output('mtx -f %s status' % sgs[0])


def test_report_written():
    base = os.path.join(os.environ['MOLECULE_EPHEMERAL_DIRECTORY'], 'reports')
    assert glob.glob(os.path.join(base, '*', 'hosts', '*.json')), base
