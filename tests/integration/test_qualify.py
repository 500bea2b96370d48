# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The qualify playbook end to end on the lab fleet.

What is real: the guests' st/sg/ch devices in front of the lab's emulated
LTO drives (lab/tapedrive: a buffer, speed steps, back-hitches), the tape
writes on the lab's allowed scratch cartridges, the source trees read through
each guest's own cgroup v2 ``io.max`` limit, the SSH connections, the reports
on the controller.

The playbook runs on the lab's inventory as ``lab/tapelab`` writes it,
nothing overridden but the profile's lengths: each drive is judged against the
scaled drive model the guest really has (``tapeops_drives[].model``), its
sources are ``tapeops_sources``. The lab's spread (docs/lab.md, "The spread")
gives one guest per class: lab-ma1's LTO-5 at scale 0.035 (4.9 .. 1.4 MB/s) with an
unthrottled source streams, lab-ma2's LTO-6 at 0.125 (20 .. 6.75 MB/s) behind a
10 MB/s source speed-matches, lab-ma3's LTO-8 at 0.10 (36.5 .. 11.2 MB/s)
behind a 3 MB/s source, below its floor, shoe-shines. So the run must give at
least three classes over the three drives, lab-ma3 SHOE-SHINING with
back-hitches in its forecast, and lab-ma1 not SHOE-SHINING (its guest also
compresses on its one CPU, and the machine's 2 shared cores carry three
guests: it is not held to STREAMING). An extra, unreachable host checks that
one dead host loses no one else's results.

The guests are measured one after the other (one run per guest, the same run
directory), then one report-only run writes the fleet reports over all of
them and the unreachable host. Measured at once, the three guests share this
machine's 2 cores: in one of four such runs the emulated drive path (TCMU and
zlib in the guest) of lab-ma2, then at scale 0.25, measured 9.7 MB/s at 256 KiB,
below its 13.5 MB/s floor (27-37 MB/s in the other three; 33.7 measured alone),
and the verdict rightly called a drive path below the floor SHOE-SHINING. Real
media agents share no CPU with each other; the lab's guests do. Measured one
after the other on a loaded machine the path still fell to 15.7 MB/s, so
lab-ma2 now runs at half that scale (0.125) behind half the source (10 MB/s).

Profile: quick, shortened so the run takes a few minutes: 40 s source reads
(above the 30 per-second samples a verdict rests on), 32 MB sweep steps at
256 KiB and 1 MiB, one 16 MB file-mark segment, and the compression probe
(8 MB of each pattern, flushed: the drive's own ratio maps the sources' sample).

Run on a private lab (so other test sessions on the shared one are not
disturbed): TAPEOPS_LAB_DIR=/var/tmp/tapeops-lab-verdict TAPEOPS_LAB_PORT_BASE=2260.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest
import yaml

import host_schema
import observe_start

from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _verdict as verdict_rules

pytestmark = pytest.mark.lab

# the verdicts' JUnit suite (the health suite beside it names the same hosts)
VERDICT_CASES = "./testsuite[@name='tapeops.qualify.qualify']/testcase"
SPREAD = ('lab-ma1', 'lab-ma2', 'lab-ma3')
PROFILE_OVERRIDES = {'source_seconds': 40, 'step_mb': 32, 'step_seconds': 10, 'block_sizes': ['256K', '1M'],
                     'filemark_segments_mb': [16], 'filemark_payload_mb': 32, 'poll_seconds': 3,
                     'compression_probe_mb': 8}


@pytest.fixture(scope='module')
def qualified(lab, tmp_path_factory):
    """One qualify run over the lab fleet plus an unreachable host."""
    if not set(SPREAD) <= set(lab.hosts):
        pytest.fail('the lab must have %s (the spread: lab/tapelab up without -n), it has %s'
                    % (', '.join(SPREAD), ', '.join(lab.hosts)))
    modes = dict((h, lab.hostvars[h].get('tapeops_lab_drive_mode')) for h in SPREAD)
    if set(modes.values()) != {'emulated'}:
        pytest.skip('the spread needs the emulated drives (tgt has no streaming physics): %s' % modes)
    base = tmp_path_factory.mktemp('qualify')
    extra_inventory = base / 'gone.yml'
    extra_inventory.write_text(
        'all:\n  children:\n    media_agents:\n      hosts:\n'
        '        lab-gone: {ansible_host: 127.0.0.1, ansible_port: 9, ansible_connection: ansible.builtin.ssh}\n')
    run_dir = base / 'run'

    def qualify(limit, **extra):
        extra_vars = {'qualify_run_dir': str(run_dir), 'qualify_profile': 'quick',
                      'qualify_profile_overrides': PROFILE_OVERRIDES}
        extra_vars.update(extra)
        return lab.playbook('tapeops.qualify.qualify', extra_vars=extra_vars, limit=limit,
                            args=['-i', str(extra_inventory)], timeout=900)
    # lab-gone is unreachable while lab-ma1 is measured in the same run
    runs = {'lab-ma1': qualify('lab-ma1,lab-gone')}
    for host in SPREAD[1:]:
        runs[host] = qualify(host)
    fleet = qualify(None, qualify_report_only=True)
    return {'runs': runs, 'fleet': fleet, 'run_dir': str(run_dir), 'lab': lab}


def _recap(result):
    return dict((line.split()[0], line) for line in result.stdout.split('PLAY RECAP')[-1].splitlines()
                if ':' in line and 'ok=' in line)


def _doc(run_dir, host):
    return host_schema.load(os.path.join(run_dir, 'hosts', host + '.json'))


def _verdict(run_dir, host):
    return _doc(run_dir, host)['verdicts'][0]


def test_all_four_report_kinds_written(qualified):
    run_dir, runs, fleet = qualified['run_dir'], qualified['runs'], qualified['fleet']
    # lab-ma1's run, rc 4: lab-gone is unreachable (the play's last task also fails because lab-gone
    # has no verdict, after every report was written); nothing else may fail
    result = runs['lab-ma1']
    assert result.rc == 4, result.stdout[-4000:] + result.stderr[-2000:]
    assert 'No verdict for lab-gone' in result.stdout
    recap = _recap(result)
    # (the run-once last task counts its failure on lab-ma1: the fatal lines below tell whose it is)
    assert 'rescued=0' in recap['lab-ma1'], recap['lab-ma1']
    assert 'unreachable=1' in recap['lab-gone']
    # the only failures: lab-gone unreachable, and the last task saying lab-gone has no verdict
    fatal = [line for line in result.stdout.splitlines() if line.startswith('fatal: [')]
    assert fatal and all(('lab-gone' in line and 'UNREACHABLE' in line) or 'No verdict for lab-gone' in line
                         for line in fatal), fatal
    for host in SPREAD[1:]:
        assert runs[host].rc == 0, runs[host].stdout[-4000:] + runs[host].stderr[-2000:]
        assert 'rescued=0' in _recap(runs[host])[host], _recap(runs[host])
    # the fleet reports over everything: lab-gone still has no verdict (rc 2), the others lost nothing
    assert fleet.rc == 2, fleet.stdout[-4000:] + fleet.stderr[-2000:]
    assert 'No verdict for lab-gone' in fleet.stdout
    for name in ['hosts/%s.json' % h for h in SPREAD] + ['summary.md', 'report.html', 'junit.xml']:
        path = os.path.join(run_dir, name)
        assert os.path.getsize(path) > 100, '%s missing or empty\n%s' % (name, fleet.stdout[-4000:])
    page = open(os.path.join(run_dir, 'report.html'), encoding='utf-8').read()
    assert page.count('<section class="drive"') == len(SPREAD)
    for host in SPREAD:
        assert ' data-host="%s" data-class="%s">' % (host, _verdict(run_dir, host)['class']) in page
    # per drive: the feed, the source series, the forecast's buffer trace and the sweep
    assert page.count('<figure class="chart" data-chart="trace"><svg') == len(SPREAD)
    assert page.count('<figure class="chart" data-chart="sweep"><svg') == len(SPREAD)


def test_the_spread_gives_three_classes(qualified):
    run_dir, lab = qualified['run_dir'], qualified['lab']
    verdicts = dict((h, _verdict(run_dir, h)) for h in SPREAD)
    classes = dict((h, v['class']) for h, v in verdicts.items())
    assert 'INCONCLUSIVE' not in classes.values(), dict((h, v.get('inconclusive_reason'))
                                                        for h, v in verdicts.items())
    assert len(set(classes.values())) >= 3, dict((h, (v['class'], v['summary'])) for h, v in verdicts.items())
    for host, verdict in verdicts.items():
        # judged against the drive the guest has: the inventory's scaled model reached the verdict
        model = lab.hostvars[host]['tapeops_drives'][0]['model']
        assert verdict['numbers']['native_mb_s'] == model['native_mb_s'], (host, verdict['numbers'])
        assert verdict['numbers']['speed_floor_mb_s'] == model['speed_floor_mb_s'], (host, verdict['numbers'])
    slow, fast = verdicts['lab-ma3'], verdicts['lab-ma1']
    # lab-ma3: the 3 MB/s source limit is what the test measured, below what the floor needs
    limit = lab.hostvars['lab-ma3']['tapeops_lab_spread']['source_rbps'] / 1e6
    assert slow['numbers']['source_mean_mb_s'] <= limit * 1.1, slow['numbers']
    assert slow['numbers']['feed_now_mb_s'] < slow['numbers']['need_floor_mb_s'], slow['numbers']
    assert classes['lab-ma3'] == 'SHOE-SHINING' and slow['would_shoe_shine'] is True, slow['reasons']
    assert slow['numbers']['backhitches_per_hour_now'] > 0, slow['numbers']
    assert slow['forecast']['now']['backhitches_per_hour'] > 0, slow['forecast']['now']
    assert slow['forecast']['now']['class'] == 'SHOE-SHINING'
    # lab-ma1: an unthrottled source feeds its 4.9 MB/s drive
    assert classes['lab-ma1'] != 'SHOE-SHINING' and fast['would_shoe_shine'] is False, fast['reasons']
    assert fast['numbers']['source_mean_mb_s'] >= fast['numbers']['need_floor_mb_s'], fast['numbers']


def test_drives_identified_and_written_on_scratch_media(qualified):
    run_dir, lab = qualified['run_dir'], qualified['lab']
    for host in SPREAD:
        doc = _doc(run_dir, host)
        entry = doc['drives'][0]
        generation = lab.hostvars[host]['tapeops_lab_drives'][0]['lto_generation']
        assert entry['label'].split()[0] == 'LTO-%d' % generation, entry['label']
        # one resolver: the inventory entry (the scaled drive) named the drive in discovery and in the verdict,
        # and the loaded cartridge (the drive's own generation in the lab) is recorded as the medium
        ident, model = entry['identity']['generation'], lab.hostvars[host]['tapeops_drives'][0]['model']
        assert (ident['source'], ident['generation'], ident['medium']['generation']) == (
            'inventory', generation, generation), ident
        assert ident['inventory']['model'] == model
        assert entry['identity']['drive_model']['buffer_mb'] == model['buffer_mb']
        if entry['write_sweep'] is None:
            pytest.fail('%s wrote no sweep: %s' % (host, entry.get('write_note')))
        assert entry['write_sweep']['plan']['barcode'] in lab.hostvars[host]['tapeops_allowed_barcodes']
        rates = [r['mb_s'] for r in entry['write_sweep']['sweep'] if r.get('mb_s')]
        assert rates and min(rates) > 0
        assert doc['verdicts'][0]['drive'] == entry['id']
        assert doc['verdicts'][0]['numbers']['drive_path_mb_s'] > 0
        # the compression probe (8 MB of random and of 2.5:1 data, flushed) gave the drive's own line, which maps
        # the sources' sample: the lab drive compresses with zlib, so its line is close to the identity
        probe = entry['write_sweep']['compression_probe']
        assert probe['skipped'] is None and [r['pattern'] for r in probe['patterns']] == ['random', '2.5:1'], probe
        assert all(r['drive']['host_written_bytes'] == r['bytes'] for r in probe['patterns']), probe
        calibration = verdict_rules.probe_calibration(entry['write_sweep'])
        assert len(calibration['points']) == 2 and calibration['b'] == pytest.approx(1.0, abs=0.15), calibration
        basis = doc['verdicts'][0]['numbers']['tape_ratio_basis']
        assert "mapped by this drive's own compressor as the write test measured it (random data" in basis, basis
        assert basis in ' '.join(doc['verdicts'][0]['reasons']), host


def test_unreachable_host_is_reported_and_loses_nobody_else(qualified):
    run_dir = qualified['run_dir']
    assert not os.path.exists(os.path.join(run_dir, 'hosts', 'lab-gone.json'))
    cases = ET.parse(os.path.join(run_dir, 'junit.xml')).getroot().findall(VERDICT_CASES)
    by_host = {c.get('classname'): c for c in cases}
    assert set(by_host) == set(SPREAD) | {'lab-gone'}
    assert by_host['lab-gone'].find('error').get('type') == 'MISSING'
    assert by_host['lab-ma3'].find('failure').get('type') == 'SHOE-SHINING'
    md = open(os.path.join(run_dir, 'summary.md'), encoding='utf-8').read()
    assert '| lab-gone | - | **MISSING** |' in md


def test_report_only_rerun_fails_on_shoe_shining(qualified):
    lab, run_dir = qualified['lab'], qualified['run_dir']
    before = os.path.getmtime(os.path.join(run_dir, 'summary.md'))
    result = lab.playbook('tapeops.qualify.qualify', extra_vars={
        'qualify_run_dir': run_dir, 'qualify_report_only': True, 'qualify_fail_on_failing_drives': True,
        'qualify_failing_classes': ['SHOE-SHINING']}, timeout=300)
    assert result.rc == 2, result.stdout[-3000:]
    assert 'lab-ma3 /dev/nst0' in result.stdout and 'SHOE-SHINING' in result.stdout
    assert os.path.getmtime(os.path.join(run_dir, 'summary.md')) >= before
    # the re-run measured nothing: the host documents are the first run's
    assert _verdict(run_dir, 'lab-ma3')['class'] == 'SHOE-SHINING'


def test_report_only_compared_with_an_earlier_run_marks_a_regression(qualified, tmp_path):
    lab, run_dir = qualified['lab'], qualified['run_dir']
    now_dir, earlier_dir = tmp_path / 'now', tmp_path / 'earlier'
    shutil.copytree(run_dir, str(now_dir))
    shutil.copytree(os.path.join(run_dir, 'hosts'), str(earlier_dir / 'hosts'))
    # the earlier run had twice lab-ma2's drive path: measured now, it is a regression
    earlier_doc = earlier_dir / 'hosts' / 'lab-ma2.json'
    doc = json.loads(earlier_doc.read_text())
    numbers = doc['verdicts'][0]['numbers']
    numbers['drive_path_best_mb_s'] = 2 * numbers['drive_path_best_mb_s']
    earlier_doc.write_text(json.dumps(doc))
    result = lab.playbook('tapeops.qualify.qualify', extra_vars={
        'qualify_run_dir': str(now_dir), 'qualify_report_only': True, 'qualify_compare_to': str(earlier_dir),
        'qualify_fail_on_regression': True, 'qualify_fail_on_missing': False}, timeout=300)
    assert result.rc == 2, result.stdout[-3000:]
    assert '1 drive(s) regressed since' in result.stdout and 'lab-ma2 /dev/nst0: best drive path' in result.stdout
    summary = (now_dir / 'summary.md').read_text()
    assert '| lab-ma2 | /dev/nst0 | **REGRESSED** |' in summary
    for host in ('lab-ma1', 'lab-ma3'):
        assert '| %s | /dev/nst0 | unchanged |' % host in summary, summary[-2000:]
    suite = ET.parse(str(now_dir / 'junit.xml')).getroot().find("testsuite[@name='tapeops.qualify.compare']")
    assert suite.get('failures') == '1'
    assert [c.get('classname') for c in suite.findall('testcase') if c.find('failure') is not None] == ['lab-ma2']


# -- real Bacula jobs watched by the observe playbook, against this module's qualify run (issue 22 item 3)

TAPELAB = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'lab', 'tapelab')
OBSERVE_SECONDS = 400


def _tapelab(lab, *args):
    env = dict(os.environ, TAPEOPS_LAB_DIR=lab.hostvars[SPREAD[0]]['tapeops_lab_run_dir'])
    return subprocess.run([TAPELAB] + list(args), env=env, capture_output=True, text=True, timeout=600, check=False)


def _bacula_vars(lab, host):
    """The guest's tapeops_bacula as lab/tapelab bacula-setup wrote it into the inventory."""
    with open(lab.inventory, encoding='utf-8') as handle:
        return yaml.safe_load(handle)['all']['children']['media_agents']['hosts'][host]['tapeops_bacula']


# Where a real job agrees with the qualify verdict and with the replay of its own feed, as issue 22 asks:
# - lab-ma1 (source unthrottled, drive-bound): when its drive ran at its top step all along (the lab drive's own
#   account: its seconds at each speed step, read around the play), observed STREAMING (the seconds the drive paced
#   count at its full speed, whatever their data's compression: docs/tape-side.md) and, replayed as drive-bound,
#   the forecast is STREAMING within a few % of the data-phase rate, no back-hitch either way, as qualify forecast.
#   In CI (2026-11-28) such a job, 39 of 43 s drive-bound and its drive at 4.9 MB/s throughout, read 5.30 MB/s
#   against 5.36 at the window's 1.094:1 and SPEED-MATCHED before the seconds the drive paced were counted so.
#   Its job runs as fast as the guest's one CPU moves the File and Storage daemons and the emulated drive (which
#   compresses in software what a real drive compresses in its hardware, now about 2:1 for the tree's text), its
#   tree read cold from a file on this machine's disk. In one of
#   the first two runs on tree version 2 the guest fell behind its drive for most of the job (6.4 MB/s, 16 of 37 s
#   drive-bound, SPEED-MATCHED, replayed so within 0.0 %; the other ran at 7.75 MB/s, STREAMING); what slowed it
#   was not pinned down. Such a job's pace is the guest's, which qualify's forecast of the sources alone does not
#   see (real media agents share no CPU with their drives): when the drive's own account says it slowed, the replay
#   of the job's own feed must still agree with it, and the class is the job's, not qualify's.
# - lab-ma2 (10 MB/s source): SPEED-MATCHED observed and replayed. The tree's text (its 32 MiB SQL dump, a third of
#   its small files) compresses about 2:1, the rest not at all: the qualify forecast replays each stretch at its
#   own ratio (the verdict's ratio_profile). The dump at 2:1 gives the drive 5 MB/s of tape at 10 MB/s, below its
#   6.75 MB/s floor, for the 3 s it lasts: the buffer drains and holds, and the drive slows and does not stop.
#   (Until the tree's version 2 its text was one SQL line repeated, 120:1, and the drive ran dry once or twice a
#   pass while the dump went by: tests/unit/plugins/module_utils/_judge/test_forecast_ratio_profile.py keeps that
#   job.)
# - lab-ma3 (3 MB/s source): SHOE-SHINING observed and replayed, the back-hitches the drive counted.
# Each job reads its tree cold, as a night's backup does: the qualify run has just read it, and from the page
# cache lab-ma2's job ran at 15-20 MB/s through its 10 MB/s throttle, for a few seconds of data.
OBSERVED = SPREAD


@pytest.fixture(scope='module')
def observed_jobs(qualified, tmp_path_factory):
    """Bacula set up on every guest at once (lab/tapelab sets the guests up in parallel; nothing is timed
    there), then each guest's job in turn (BACULA.md: the guests share 2 cores, and the daemons of the guests
    waiting their turn sit idle): its first cartridge mounted (so the window reads the drive's since-load counters
    whole), then ``tapeops.qualify.observe -l <guest> -e qualify_observe_run_jobs=true`` watches the guest's Full
    job until the drive has been idle 6 s. Bacula is stopped on every guest at the end, whatever happened. Then the
    reports over them against the qualify run (qualify_compare_to)."""
    lab = qualified['lab']
    run_dir = str(tmp_path_factory.mktemp('observe') / 'run')
    runs, drives, series = {}, {}, {}
    try:
        setup = _tapelab(lab, 'bacula-setup', *OBSERVED)
        assert setup.returncode == 0, setup.stderr[-3000:]
        for host in OBSERVED:
            bacula = _bacula_vars(lab, host)
            mount = lab.run(host, "echo 'mount storage=\"%s\" slot=%s drive=%s' | bconsole -c %s" % (
                bacula['storage'], bacula['slots'][0], bacula['drive'], bacula['bconsole_config']), timeout=300)
            assert mount.returncode == 0, mount.stdout + mount.stderr
            cold = lab.run(host, 'sync && echo 3 > /proc/sys/vm/drop_caches', timeout=120)
            assert cold.returncode == 0, cold.stdout + cold.stderr
            before = _drive_stats(lab, host)
            runs[host] = lab.playbook('tapeops.qualify.observe', limit=host, timeout=OBSERVE_SECONDS + 600,
                                      extra_vars={'qualify_run_dir': run_dir, 'qualify_observe_run_jobs': True,
                                                  'qualify_observe_seconds': OBSERVE_SECONDS,
                                                  'qualify_observe_until_idle': 6})
            drives[host] = _speed_time(before, _drive_stats(lab, host))
            series[host] = _window_series(lab, host)
    finally:
        stop = _tapelab(lab, 'bacula-stop', *OBSERVED)
        assert stop.returncode == 0, stop.stderr[-3000:]
    fleet = lab.playbook('tapeops.qualify.observe', limit=','.join(OBSERVED), timeout=600, extra_vars={
        'qualify_run_dir': run_dir, 'qualify_report_only': True, 'qualify_compare_to': qualified['run_dir']})
    return {'runs': runs, 'fleet': fleet, 'run_dir': run_dir, 'drives': drives, 'series': series}


def _drive_stats(lab, host):
    """The lab drive's own statistics (lab/tapedrive), fresh: a LOG SENSE makes the drive write them."""
    sg = lab.hostvars[host]['tapeops_lab_drives'][0]['sg']
    proc = lab.run(host, 'sg_logs -p 0x1b %s >/dev/null && cat %s' % (sg, observe_start.DRIVE_STATS), timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def _speed_time(before, after):
    """What the drive did between two of its statistics: seconds moving at each speed step (MB/s), back-hitches,
    bytes written to tape."""
    steps = {}
    for step, seconds in after['speed_time_s'].items():
        spent = seconds - before['speed_time_s'].get(step, 0.0)
        if spent > 0:
            steps[step] = round(spent, 3)
    return {'speed_time_s': steps, 'backhitches': after['backhitches'] - before['backhitches'],
            'tape_bytes_written': after['tape_bytes_written'] - before['tape_bytes_written']}


def _window_series(lab, host):
    """The window's per-interval series as tape_drive_observe returned it (the host document leaves it out), from
    the module's async result that Ansible leaves in the guest; None when there is none."""
    proc = lab.run(host, "grep -l '\"series\"' /root/.ansible_async/* 2>/dev/null | xargs -r ls -t | head -1 "
                   "| xargs -r cat", timeout=60)
    try:
        return json.loads(proc.stdout).get('series')
    except ValueError:
        return None


def _observed_job(observed_jobs, host):
    """The guest's judged observe entry: its job ended well, and its window, begun before the job, holds all of it
    (every byte of the volume), the compression measured by the drive over it, its data phase at the rate the
    storage daemon logged for it (within 10 %)."""
    result = observed_jobs['runs'][host]
    assert result.rc == 0, result.stdout[-4000:]
    doc = _doc(observed_jobs['run_dir'], host)
    assert doc['run']['mode'] == 'observe' and doc['verdicts'] == []
    [seen] = doc['observed']
    assert seen['job'] and seen['job']['status'] == 'T', seen.get('job')
    assert seen['status'] == 'judged', seen
    assert seen['window']['bytes_written'] == seen['job']['volume_bytes'], (seen['window'], seen['job'])
    assert seen['observed']['tape_ratio_source'] == 'drive', seen['observed']
    if seen['job'].get('data_mb_s'):
        assert seen['observed']['mb_s'] == pytest.approx(seen['job']['data_mb_s'], rel=0.10), seen
    return seen


# The drive's own pace against its top step that the observed class must call STREAMING (the forecast's line,
# _forecast.FULL_SPEED_TOLERANCE), and below which it must call it SPEED-MATCHED. Between the two the window's
# estimate of the pace (host bytes a second, at the window's compression) may land either side of the line.
STREAMED_PACE, SLOWED_PACE = 0.99, 0.97


def _drive_pace(drive, host_vars):
    """The lab drive's time-weighted speed while it moved over the job, as a share of its top step."""
    moving = sum(drive['speed_time_s'].values())
    top = float(host_vars['tapeops_lab_drive_profile']['speed_steps_mb_s'][0])
    return sum(float(step) * spent for step, spent in drive['speed_time_s'].items()) / moving / top


@pytest.mark.parametrize('host', OBSERVED)
def test_a_real_bacula_job_agrees_with_the_qualify_verdict(qualified, observed_jobs, host, lab_record):
    """The job's observed class is what the drive did by its own account, and the qualify verdict's; the forecast
    replayed from the observed feed, with the compression the drive measured, is within 10 % of the data-phase
    rate and within one back-hitch of the drive's own count (issue 22: what an observed job must show)."""
    seen = _observed_job(observed_jobs, host)
    observed, agreement = seen['observed'], seen['agreement']
    verdict = _verdict(qualified['run_dir'], host)
    qualify_class = verdict['class']
    drive = observed_jobs['drives'][host]
    pace = _drive_pace(drive, qualified['lab'].hostvars[host])
    lab_record('qualify_observed_job_%s' % host, {
        'host': host, 'qualify_class': qualify_class, 'observed_class': observed['class'], 'mb_s': observed['mb_s'],
        'class_mb_s': observed['class_mb_s'], 'tape_ratio': observed['tape_ratio'],
        'backhitches': observed['backhitches'], 'data_seconds': observed['data_seconds'],
        'drive_bound_s': observed['drive_bound_s'], 'rate_delta_pct': agreement['rate_delta_pct'],
        'backhitch_delta': agreement['backhitch_delta'], 'drive_pace': round(pace, 4), 'observed': seen,
        'drive': drive, 'series': observed_jobs['series'][host], 'verdict': verdict})
    # the drive's own account (lab/tapedrive's statistics, read around the play): the window held its back-hitches
    # and what it wrote to tape
    assert observed['backhitches'] == drive['backhitches'], (host, observed, drive)
    assert seen['window']['compression']['tape_written_bytes'] == drive['tape_bytes_written'], (seen['window'], drive)
    if not drive['backhitches'] and pace >= STREAMED_PACE:
        assert observed['class'] == 'STREAMING', (host, pace, observed, drive)
    elif not drive['backhitches'] and pace < SLOWED_PACE and host != 'lab-ma1':
        # (not lab-ma1's guest falling behind its drive: there the tree's text, fed above the drive's full speed in a
        # few seconds, can offset in the window's mean the seconds the drive slowed in)
        assert observed['class'] == 'SPEED-MATCHED', (host, pace, observed, drive)
    if host == 'lab-ma1' and pace < STREAMED_PACE:
        # the guest fell behind its drive (the comment above OBSERVED): the job's class is its own feed's
        assert agreement['class_match'], (host, pace, seen)              # the job's class, replayed
    else:
        assert observed['class'] == qualify_class, (host, pace, observed, qualify_class)
    assert abs(agreement['rate_delta_pct']) <= 10.0, (host, seen)
    assert abs(agreement['backhitch_delta']) <= 1, (host, seen)


def test_the_observe_reports_set_the_forecast_against_what_the_jobs_did(qualified, observed_jobs, lab_record):
    fleet = observed_jobs['fleet']
    assert fleet.rc == 0, fleet.stdout[-4000:]
    run_dir = observed_jobs['run_dir']
    with open(os.path.join(run_dir, 'summary.md'), encoding='utf-8') as handle:
        summary = handle.read()
    assert 'Forecast against observed' in summary
    for host in OBSERVED:
        assert host in summary
    with open(os.path.join(run_dir, 'report.html'), encoding='utf-8') as handle:
        page = handle.read()
    assert '<section id="against-observed">' in page
    # the same comparison as data: each pair is the qualify run's verdict against the observe run's document
    with open(os.path.join(run_dir, 'against_observed.json'), encoding='utf-8') as handle:
        against = json.load(handle)
    lab_record('qualify_against_observed', against)
    assert against['earlier']['dir'].rstrip('/') == qualified['run_dir'].rstrip('/'), against['earlier']
    pairs = dict((pair['host'], pair) for pair in against['pairs'])
    assert sorted(pairs) == sorted(OBSERVED) and against['compared'] == len(OBSERVED), against
    for host in OBSERVED:
        pair, observed = pairs[host], _doc(run_dir, host)['observed'][0]['observed']
        assert pair['status'] == 'compared', pair
        assert pair['forecast']['class'] == _verdict(qualified['run_dir'], host)['class'], pair
        assert pair['observed']['class'] == observed['class'] and pair['observed']['mb_s'] == observed['mb_s'], pair
        assert pair['backhitches_counted'] == observed['backhitches'], pair
        assert pair['class_match'] == (pair['forecast']['class'] == observed['class']), pair
        # qualify's forecast rate against the job's data-phase rate (issue 22: within 10 %; 2026-11-28: lab-ma1
        # -3.5 %, lab-ma2 +1.1 %, lab-ma3 +0.4 %), where the job's class is held to qualify's (not lab-ma1's guest
        # falling behind its drive, the comment above OBSERVED)
        pace = _drive_pace(observed_jobs['drives'][host], qualified['lab'].hostvars[host])
        if host != 'lab-ma1' or pace >= STREAMED_PACE:
            assert abs(pair['rate_delta_pct']) <= 10.0, (host, pace, pair)
    assert against['class_matches'] == sum(1 for pair in pairs.values() if pair['class_match']), against
    junit = ET.parse(os.path.join(observed_jobs['run_dir'], 'junit.xml')).getroot()
    names = [suite.get('name') for suite in junit.findall('./testsuite')]
    assert len(names) >= 2, names
