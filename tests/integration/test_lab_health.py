# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The emulated drive's health modes in a guest, the drive side (docs/lab.md, "Drive health").

On a running lab, ``lab/tapelab health lab-ma2=dirty`` makes lab-ma2's drive ask
to be cleaned; in the guest the real ``sg_logs`` then reads TapeAlert flag 20
(Cleaning required) on page 0x2E and "Cleaning action required" on page 0x0C,
both read with the collection's own parsers (``_tools/_sg_logs``). The drive's
mode is put back to what it was before the test whatever happens (the other lab
tests expect a clean drive), and the flag and the cleaning bit are checked gone.

Then the verdict on such a drive, end to end: a qualify run over lab-ma2 and
lab-ma3 with lab-ma2's drive dirty reports lab-ma2 CLEAN, with TapeAlert flag 20
and the cleaning request as its evidence and "clean the drive" as its first fix
(the dirty drive writes at 0.8 of its model's rate, so its sweep is slower than
the model: health is the likely cause), and lab-ma3 OK (its LTO-8 writes the
sweep's 640 MB step at up to 36 MB/s, in a fifth of the time lab-ma1's 4.9 MB/s
LTO-5 took, and the clean drive's health is all that is asked of it). Nothing asserted depends
on how fast the machine is: a sweep slowed further by a loaded machine is still
slower than the model, and the class is not asserted.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess

import pytest

import host_schema

from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _sg_logs

# untimed (pytest.ini): no rate, class or time a loaded machine could change
pytestmark = [pytest.mark.lab, pytest.mark.untimed]

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TAPELAB = os.path.join(ROOT, 'lab', 'tapelab')
HOST = 'lab-ma2'
CLEAN_HOST = 'lab-ma3'
CLEANING_REQUIRED = 20
# A short quick profile: one block size, one pattern. The drive's health comes from discovery; the sweep shows the
# dirty drive slower than its model: its one step is many buffers long (lab-ma2's buffer is 36.6 MB, which a
# 32 MB step fills at the host's speed), 640 MB at the dirty drive's 16 MB/s, about 17 MB/s with the buffer's
# head start, below the 20 MB/s of random data its model takes. A source read of 15 s gives the 10 per-second
# samples a verdict needs.
PROFILE_OVERRIDES = {'source_seconds': 15, 'step_mb': 640, 'step_seconds': 90, 'block_sizes': ['256K'],
                     'patterns': ['random'], 'filemark_segments_mb': [16], 'filemark_payload_mb': 32,
                     'poll_seconds': 3}


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


def _emulated(lab, host):
    hv = lab.hostvars.get(host)
    if hv is None:
        pytest.fail('the lab has no %s (it has %s): start a lab of 2 or 3 guests' % (host, ', '.join(lab.hosts)))
    if hv.get('tapeops_lab_drive_mode', 'emulated') != 'emulated':
        pytest.skip('%s runs %s drives: health modes need the emulated drive' % (host, hv['tapeops_lab_drive_mode']))
    return hv


def test_a_dirty_drive_raises_cleaning_required_in_the_guest(lab):
    hv = _emulated(lab, HOST)
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


def test_a_qualify_run_reports_the_dirty_drive_clean_with_its_flag_and_the_cleaning_fix_first(lab, tmp_path):
    run_dir = _emulated(lab, HOST)['tapeops_lab_run_dir']
    _emulated(lab, CLEAN_HOST)
    before = drive_mode(run_dir)
    reports = tmp_path / 'run'
    try:
        tapelab(run_dir, 'health', '%s=dirty' % HOST)
        result = lab.playbook('tapeops.qualify.qualify', limit='%s,%s' % (CLEAN_HOST, HOST), extra_vars={
            'qualify_run_dir': str(reports), 'qualify_profile': 'quick',
            'qualify_profile_overrides': PROFILE_OVERRIDES}, timeout=900)
    finally:
        tapelab(run_dir, 'health', '%s=%s' % (HOST, before or 'none'))
    assert result.rc == 0, result.stdout[-4000:]
    dirty = host_schema.load(str(reports / 'hosts' / (HOST + '.json')))
    [drive] = dirty['drives']
    health = drive['health']
    assert health['status'] == 'CLEAN', health
    flags = [f['evidence']['flag'] for f in health['findings'] if f['code'] == 'tape_alert']
    assert CLEANING_REQUIRED in flags, health['findings']
    assert any(f['code'] == 'cleaning_requested' for f in health['findings']), health['findings']
    [verdict] = dirty['verdicts']
    first = verdict['fixes'][0]
    assert first['id'] == 'health_clean_drive' and first['rank'] == 1, verdict['fixes']
    assert 'health is the likely cause' in first['why'], first
    assert any(f['id'] == 'health_likely_cause' for f in verdict['findings']), verdict['findings']
    assert verdict['summary'].endswith('First fix: %s.' % first['title']), verdict['summary']
    clean = host_schema.load(str(reports / 'hosts' / (CLEAN_HOST + '.json')))
    assert clean['drives'][0]['health']['status'] == 'OK', clean['drives'][0]['health']
    assert not any(f['id'].startswith('health_') for v in clean['verdicts'] for f in v['fixes'])
    summary = (reports / 'summary.md').read_text(encoding='utf-8')
    assert 'Clean the drive' in summary
