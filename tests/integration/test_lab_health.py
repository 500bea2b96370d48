# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The emulated drive's health modes in a guest, the drive side (docs/lab.md, "Drive health").

On a running lab, ``lab/tapelab health lab-ma2=dirty`` makes lab-ma2's drive ask
to be cleaned; in the guest the real ``sg_logs`` then reads TapeAlert flag 20
(Cleaning required) on page 0x2E and "Cleaning action required" on page 0x0C,
both read with the collection's own parsers (``_tools/_sg_logs``). The drive's
mode is put back to what it was before the test whatever happens (the other lab
tests expect a clean drive), and the flag and the cleaning bit are checked gone.

The verdict on such a drive (CLEAN, "health is the likely cause") is not tested
here: tests/unit/lab/test_tapedrive_health.py judges the same drive through the
sg shim and the captures of this guest.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _sg_logs

# untimed (pytest.ini): no rate, class or time a loaded machine could change
pytestmark = [pytest.mark.lab, pytest.mark.untimed]

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TAPELAB = os.path.join(ROOT, 'lab', 'tapelab')
HOST = 'lab-ma2'
CLEANING_REQUIRED = 20


def tapelab(run_dir, *args):
    """lab/tapelab on the lab the inventory names (its run dir), whatever TAPEOPS_LAB_DIR says."""
    proc = subprocess.run([TAPELAB, '--run-dir', run_dir] + list(args), capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, 'lab/tapelab %s (rc=%d):\n%s\n%s' % (
        ' '.join(args), proc.returncode, proc.stdout, proc.stderr)
    return proc


def drive_mode(run_dir):
    """lab-ma2's drive mode as the running lab says it (status --json): 'dirty', 'hard_error' or None."""
    proc = subprocess.run([TAPELAB, '--run-dir', run_dir, 'status', '--json'], capture_output=True, text=True,
                          timeout=120, check=False)
    guest = json.loads(proc.stdout)['guests'][HOST]
    return (guest.get('health') or {}).get('drive')


def drive_says(lab, sg):
    """(TapeAlert flags set on page 0x2E, page 0x0C's cleaning bit) as sg_logs prints them in the guest."""
    out = {}
    for code in (0x2E, 0x0C):
        proc = lab.run(HOST, 'LC_ALL=C sg_logs -p 0x%02x %s' % (code, shlex.quote(sg)), timeout=60)
        assert proc.returncode == 0, 'sg_logs -p 0x%02x %s on %s (rc=%d): %s' % (
            code, sg, HOST, proc.returncode, proc.stderr)
        out[code] = proc.stdout
    flags = _sg_logs.tape_alert_flags(_sg_logs.decode_page(0x2E, out[0x2E]))
    assert flags is not None, 'no TapeAlert flag in sg_logs -p 0x2e:\n%s' % out[0x2E]
    return flags['active'], _sg_logs.parse_sequential_access(out[0x0C])['cleaning_required']


def test_a_dirty_drive_raises_cleaning_required_in_the_guest(lab):
    hv = lab.hostvars.get(HOST)
    if hv is None:
        pytest.fail('the lab has no %s (it has %s): start a lab of 2 or 3 guests' % (HOST, ', '.join(lab.hosts)))
    if hv.get('tapeops_lab_drive_mode', 'emulated') != 'emulated':
        pytest.skip('%s runs %s drives: health modes need the emulated drive' % (HOST, hv['tapeops_lab_drive_mode']))
    run_dir = hv['tapeops_lab_run_dir']
    sg = hv['tapeops_lab_drives'][0]['sg']
    assert sg, 'the inventory gives no sg device for %s\'s drive: %s' % (HOST, hv['tapeops_lab_drives'])
    before = drive_mode(run_dir)
    if before != 'dirty':
        flags, cleaning = drive_says(lab, sg)
        assert CLEANING_REQUIRED not in flags and cleaning is False, (before, flags, cleaning)
    try:
        assert '%s: drive dirty' % HOST in tapelab(run_dir, 'health', '%s=dirty' % HOST).stderr
        flags, cleaning = drive_says(lab, sg)
        assert CLEANING_REQUIRED in flags and cleaning is True, (flags, cleaning)
    finally:
        tapelab(run_dir, 'health', '%s=%s' % (HOST, before or 'none'))
    assert drive_mode(run_dir) == before
    if before is None:
        flags, cleaning = drive_says(lab, sg)
        assert CLEANING_REQUIRED not in flags and cleaning is False, (flags, cleaning)
