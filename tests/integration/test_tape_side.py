# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tape side on the lab: discovery, the benchmark end to end, and every refusal.

The modules run through Ansible against the lab guests' real kernel st/sg/ch
devices. Behind them is either the lab's emulated drive (lab/tapedrive, the
default: SSC answers of a real LTO drive, log pages, streaming physics) or tgt
(``lab/tapelab up --drive tgt``: no log pages, density 0, no physics); the
host variable ``tapeops_lab_drive_mode`` says which, and the checks of what
the drive itself answers follow it. The benchmark tests use lab-ma1; lab-ma2's
drive may be used by the Bacula tests. Each refusal also checks that nothing
was written: the st write counter of the drive does not move.

What the lab cannot show: write-protected and WORM media, blank media once a
cartridge has been written, and a path that rejects a block size with EINVAL
below READ BLOCK LIMITS (neither drive does). With tgt also the benefit of
immediate file marks (tgt ignores IMMED); the emulated drive shows it (a
synchronous mark drains the buffer and costs the next data a reposition).
Those the lab cannot show are unit-tested in
tests/unit/plugins/module_utils/_measure/test_tape_*.py.
"""

import json
import os
import shlex
import subprocess
import sys
import tempfile
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOST = 'lab-ma1'

pytestmark = pytest.mark.lab


def run_module(lab, host, module, args, check=False, timeout=900):
    """Run tapeops.qualify.<module> on ``host``; return its result dict."""
    with tempfile.TemporaryDirectory(prefix='tape-side-') as tree:
        env = lab.env()
        env.update({'ANSIBLE_LOAD_CALLBACK_PLUGINS': '1', 'ANSIBLE_CALLBACKS_ENABLED': 'tree',
                    'ANSIBLE_CALLBACK_TREE_DIR': tree})
        ansible = os.path.join(os.path.dirname(sys.executable), 'ansible')
        cmd = [ansible, host, '-i', lab.inventory, '-m', 'tapeops.qualify.%s' % module]
        if args:
            # '-a {}' would reach the module as a raw parameter string, which modules refuse
            cmd += ['-a', json.dumps(args)]
        if check:
            cmd.append('--check')
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT,
                              stdin=subprocess.DEVNULL, check=False)
        path = os.path.join(tree, host)
        assert os.path.exists(path), 'no result for %s (rc=%d):\n%s\n%s' % (
            host, proc.returncode, proc.stdout, proc.stderr)
        with open(path) as handle:
            result = json.load(handle)
        # The tree callback does not keep 'failed': the exit code of ansible tells it.
        result['_rc'] = proc.returncode
        return result


def st_writes(lab, host):
    proc = lab.run(host, 'cat /sys/class/scsi_tape/nst0/stats/write_cnt', check=True)
    return int(proc.stdout.strip())


def mt_status(lab, host):
    return lab.run(host, 'mt -f /dev/nst0 status', check=True).stdout


def loaded_barcode(lab, host):
    return lab.hostvars[host]['tapeops_lab_loaded_barcode']


def emulated(lab, host):
    """True for the lab's emulated drive, False for tgt (``lab/tapelab up --drive tgt``)."""
    mode = lab.hostvars[host].get('tapeops_lab_drive_mode')
    assert mode in ('emulated', 'tgt'), 'unknown tapeops_lab_drive_mode %r on %s' % (mode, host)
    return mode == 'emulated'


# SCSI density codes per LTO generation (docs: /work/shared/reference/lto-facts.md, "Density codes":
# LTFS tape_ops.h and FreeBSD mt). The emulated drive's cartridges are of the drive's own generation.
LTO_DENSITY = {5: '0x58', 6: '0x5a', 7: '0x5c', 8: '0x5e', 9: '0x60'}
# LOG SENSE pages the emulated drive lists (lab/tapedrive/ssc.py SUPPORTED_LOG_PAGES, docs/lab.md "Log pages")
EMULATED_LOG_PAGES = [0x00, 0x02, 0x03, 0x0C, 0x14, 0x17, 0x1B, 0x2E, 0x32, 0x34]
# the ones the write benchmark decodes before and after its writes (_tape_discovery.LOG_PAGES) ...
BENCHMARK_LOG_PAGES = {'0x0c', '0x14', '0x17', '0x2e', '0x34'}
# ... and discovery: those and the health pages the drive lists (error counters, compression)
DECODED_LOG_PAGES = BENCHMARK_LOG_PAGES | {'0x02', '0x03', '0x1b', '0x32'}


def perf_counters(log_pages):
    """HP "Performance Data" page 0x34 as decoded: {'0x8000': back-hitches, ...}."""
    return log_pages['pages']['0x34']['parameters']


@pytest.mark.parametrize('host', ['lab-ma1', 'lab-ma2', 'lab-ma3'])
def test_discovery_finds_the_drive_and_its_changer(lab, host):
    if host not in lab.hosts:
        pytest.skip('the lab runs %s only (lab/tapelab up -n)' % ', '.join(lab.hosts))
    expected = lab.hostvars[host]['tapeops_lab_drives'][0]
    changer = lab.hostvars[host]['tapeops_lab_changer']
    result = run_module(lab, host, 'tape_drive_info', {'log_pages': True})
    assert result['_rc'] == 0, result
    assert result['changed'] is False
    drive = [d for d in result['drives'] if d['nst'] == expected['nst']][0]
    assert (drive['vendor'], drive['product'], drive['revision'], drive['serial']) == (
        expected['vendor'], expected['product'], expected['revision'], expected['serial'])
    assert drive['sg'] == expected['sg'] and drive['st'] == '/dev/st0'
    assert drive['generation']['generation'] == expected['lto_generation']
    assert drive['generation']['source'] == 'inquiry'
    assert drive['generation']['inquiry'] == {'vendor': expected['vendor'], 'product': expected['product'],
                                              'revision': expected['revision']}
    assert drive['hba_max_transfer_bytes'] >= 1048576
    assert drive['mtweofi_supported'] is True
    assert drive['st_options']['value'].startswith('0x')
    assert set(drive['stats']) >= {'write_ns', 'write_byte_cnt', 'io_ns'}
    logs = drive['log_pages']
    if emulated(lab, host):
        # READ BLOCK LIMITS 1 B .. 1 MiB (the largest transfer tcm_loop passes), granularity 0
        assert drive['block_limits'] == {'min': 1, 'max': 1048576, 'granularity': 0}
        # the block descriptor carries the loaded cartridge's density: the drive's own generation
        assert drive['density_code'] == LTO_DENSITY[expected['lto_generation']]
        # ... recorded as the medium, apart from the drive
        assert (drive['generation']['medium']['code'], drive['generation']['medium']['generation']) == (
            LTO_DENSITY[expected['lto_generation']], expected['lto_generation'])
        assert logs['supported'] == EMULATED_LOG_PAGES and logs['unsupported_reason'] is None
        assert logs['errors'] == {} and logs['warnings'] == [], logs
        assert set(logs['pages']) == DECODED_LOG_PAGES
        assert logs['pages']['0x17']['volume_barcode'] == loaded_barcode(lab, host)
        assert logs['pages']['0x2e']['active'] == []
        # HP's 0x34 (hex-dumped by sg_logs, decoded by the collection): the native rate and the
        # buffer size in 100 KB/s and 100 KB units are the drive's scaled model
        profile = lab.hostvars[host]['tapeops_lab_drive_profile']
        perf = perf_counters(logs)
        assert perf['0x0004'] == round(profile['native_mb_s'] * 10), perf
        assert perf['0x8005'] == round(profile['buffer_mb'] * 10), perf
        assert {'0x8000', '0x8001', '0x8002', '0x8003', '0x8004'} <= set(perf)
    else:
        # tgt's READ BLOCK LIMITS: granularity in byte 0 must not leak into the maximum.
        assert drive['block_limits'] == {'min': 4, 'max': 1048576, 'granularity': 9}
        assert drive['density_code'] == '0x00'  # tgt hard-codes density 0
        assert drive['generation']['medium'] is None
        assert logs['supported'] == []
        assert 'Invalid opcode' in logs['unsupported_reason']
    # The drive sits in the lab changer's drive element 0, matched by serial.
    assert drive['changer']['sg'] == changer['sg'] and drive['changer']['element'] == 0
    assert drive['changer']['element_address'] == expected['element']
    assert drive['changer']['matched_by'] in ('serial', 'serial_prefix')
    ch = [c for c in result['changers'] if c['sg'] == changer['sg']][0]
    assert (ch['vendor'], ch['product']) == (changer['vendor'], changer['product'])
    slot_tags = [s['barcode'] for s in ch['status']['slots'] if s['barcode']]
    in_drive = [d['barcode'] for d in ch['status']['drives'] if d['full']]
    assert sorted(slot_tags + in_drive) == sorted(lab.hostvars[host]['tapeops_lab_barcodes'])
    if not drive['busy']:
        assert drive['media_loaded'] is True
        assert drive['barcode'] == loaded_barcode(lab, host)


def test_discovery_applies_the_inventory_entry_through_the_resolver(lab):
    """The guest's tapeops_drives entry (the drive as the lab scales it) reaches discovery's drive model."""
    settings = lab.hostvars[HOST].get('tapeops_drives')
    if not settings:
        pytest.skip('%s has no tapeops_drives (tgt drive)' % HOST)
    result = run_module(lab, HOST, 'tape_drive_info', {'log_pages': False, 'drive_settings': settings})
    assert result['_rc'] == 0, result
    drive = [d for d in result['drives'] if d['nst'] == settings[0]['nst']][0]
    ident, model = drive['generation'], drive['drive_model']
    assert ident['source'] == 'inventory' and ident['inventory']['model'] == settings[0]['model']
    assert ident['generation'] == lab.hostvars[HOST]['tapeops_lab_drives'][0]['lto_generation']
    for field, value in settings[0]['model'].items():
        expected = [float(v) for v in value] if isinstance(value, list) else float(value)
        assert model[field] == expected, field
    assert model['notes'].count('buffer_mb set per drive (inventory): %s' % settings[0]['model']['buffer_mb']) == 1


def test_check_mode_writes_nothing_and_reports_the_plan(lab):
    before = st_writes(lab, HOST)
    result = run_module(lab, HOST, 'tape_write_benchmark',
                        {'device': '/dev/nst0', 'block_sizes': ['64K', '1M', '2M'], 'filemark_segments_mb': [10]},
                        check=True)
    assert result['_rc'] == 0, result
    assert result['changed'] is False
    plan = result['plan']
    assert plan['block_sizes'] == [65536, 1048576]
    assert plan['skipped_block_sizes'][0]['block_size'] == 2097152
    assert plan['barcode'] == loaded_barcode(lab, HOST)
    assert plan['max_bytes_written'] == 2 * 4 * 1000 * 10 ** 6 + 3 * 16000 * 10 ** 6
    # the module returns its record: nothing measured, so no sweep and no media probe
    assert not result.get('sweep') and result.get('media') is None and result.get('best') is None
    assert st_writes(lab, HOST) == before


def test_sweep_and_filemark_cost_end_to_end(lab):
    barcode = loaded_barcode(lab, HOST)
    before = st_writes(lab, HOST)
    step = 8 * 10 ** 6
    result = run_module(lab, HOST, 'tape_write_benchmark', {
        'device': '/dev/nst0', 'step_mb': 8, 'block_sizes': ['64K', '256K', '1M', '2M'],
        'allowed_barcodes': lab.hostvars[HOST]['tapeops_allowed_barcodes'],
        'filemark_segments_mb': [2, 8], 'filemark_payload_mb': 8,
    })
    assert result['_rc'] == 0, result.get('msg')
    assert result['changed'] is True
    assert 'allowed_barcodes' in result['media_decision'] and barcode in result['media_decision']
    steps = result['sweep']
    assert [(s['block_size'], s['pattern']) for s in steps] == [
        (size, pattern) for size in (65536, 262144, 1048576) for pattern in ('zeros', 'random', '2:1', '2.5:1')]
    for s in steps:
        assert s['error'] is None and s['bytes'] >= step and s['mb_s'] > 0
        # Every byte went through the st driver (one async block may still be in flight).
        delta = s['st_stats_delta']
        assert s['bytes'] - s['block_size'] <= delta['write_byte_cnt'] <= s['bytes'] + s['block_size']
        assert delta['write_ns'] > 0
    assert result['ceiling_block_size'] == 1048576
    assert result['plan']['skipped_block_sizes'] == [
        {'block_size': 2097152, 'reason': 'above READ BLOCK LIMITS maximum 1048576'}]
    assert result['best']['mb_s'] == max(s['mb_s'] for s in steps)
    marks = result['filemarks']
    assert [(m['kind'], m['segment_mb'], m['marks']) for m in marks] == [
        ('none', None, 0), ('sync', 2, 4), ('immediate', 2, 4), ('sync', 8, 0), ('immediate', 8, 0)]
    for m in marks[:3]:
        assert m['error'] is None and m['bytes'] >= 8 * 10 ** 6 and m['mb_s'] > 0 and m['basis'] == 'measured'
    for m in marks[1:3]:
        assert m['mark_seconds'] > 0 and m['seconds_lost_per_mark'] is not None
    # an 8 MB segment in an 8 MB run would close one mark or none: it is computed from the 2 MB
    # segment's cost per mark (one such cost per 8 MB at the baseline rate), and nothing is written for it
    base_rate = marks[0]['bytes'] / marks[0]['seconds']
    for m, measured in zip(marks[3:], marks[1:3]):
        assert m['basis'] == 'computed' and m['computed_from_segment_mb'] == 2 and m['bytes'] == 0, m
        assert m['seconds_lost_per_mark'] == measured['seconds_lost_per_mark']
        segment = 8 * 10 ** 6
        expected = segment / (segment / base_rate + max(0.0, measured['seconds_lost_per_mark'])) / 10 ** 6
        assert m['mb_s'] == pytest.approx(expected, abs=0.051), (m, expected)
    before_logs, after_logs = result['log_pages_before'], result['log_pages_after']
    if emulated(lab, HOST):
        for logs in (before_logs, after_logs):
            assert logs['unsupported_reason'] is None and logs['errors'] == {}, logs
            assert set(logs['pages']) == BENCHMARK_LOG_PAGES
        # the drive counted what the host wrote between the two reads (volume statistics 0x17:
        # whole megabytes written since the load)
        written = sum(s['bytes'] for s in steps) + sum(m['bytes'] for m in marks)
        grew = after_logs['pages']['0x17']['last_mount_megabytes_written'] - \
            before_logs['pages']['0x17']['last_mount_megabytes_written']
        assert written // 10 ** 6 - 1 <= grew <= written // 10 ** 6 + 1, (grew, written)
        # the synchronous marks were synchronous on the drive (each one a flush) and each of the
        # first three cost the next segment a reposition (docs/lab.md, streaming rule 6)
        perf_before, perf_after = perf_counters(before_logs), perf_counters(after_logs)
        backhitch_s = lab.hostvars[HOST]['tapeops_lab_drive_profile']['backhitch_s']
        assert perf_after['0x8001'] - perf_before['0x8001'] >= 4, (perf_before, perf_after)
        assert perf_after['0x8000'] - perf_before['0x8000'] >= 3, (perf_before, perf_after)
        assert perf_after['0x8002'] - perf_before['0x8002'] >= 3 * backhitch_s * 1000 * 0.99
        # ... which the benchmark measured: an immediate mark costs next to nothing, a
        # synchronous one the drain plus a reposition
        sync, immediate = marks[1], marks[2]
        assert immediate['seconds_lost_per_mark'] < 0.5 * backhitch_s, immediate
        assert sync['seconds_lost_per_mark'] - immediate['seconds_lost_per_mark'] >= 0.5 * backhitch_s, marks
    else:
        assert 'Invalid opcode' in before_logs['unsupported_reason']
        assert 'Invalid opcode' in after_logs['unsupported_reason']
    assert result['rewound'] is True
    status = mt_status(lab, HOST)
    assert 'File number=0, block number=0' in status and 'BOT' in status
    assert st_writes(lab, HOST) - before >= sum(s['blocks'] for s in steps)


def test_overwrite_flag_allows_media_with_data(lab):
    result = run_module(lab, HOST, 'tape_write_benchmark', {
        'device': '/dev/nst0', 'step_mb': 2, 'block_sizes': ['256K'], 'patterns': ['random'], 'overwrite': True,
        'log_pages': False})
    assert result['_rc'] == 0, result.get('msg')
    assert result['media']['content'] in ('data', 'unknown')
    assert result['media_decision'].startswith('overwrite=true')
    assert 'BOT' in mt_status(lab, HOST)


def refused(lab, device, reason, host=HOST, **extra):
    before = st_writes(lab, host)
    args = {'device': device, 'step_mb': 1}
    args.update(extra)
    result = run_module(lab, host, 'tape_write_benchmark', args)
    assert result['_rc'] != 0, result
    assert result['reason'] == reason, result['msg']
    assert st_writes(lab, host) == before, 'a refusal wrote to the drive'
    return result


# Every wrong target (disks, files, memory and sg nodes, the changer, rewinding and stale nodes, bad paths) for
# every writing module, and the data cartridge with each allow-list form: tests/integration/test_safety_corpus.py.


def test_refuses_a_busy_drive(lab):
    holder = ('setsid python3 -c "import os,time; fd=os.open(\'/dev/nst0\', os.O_RDONLY|os.O_NONBLOCK); '
              'open(\'/tmp/holder.ready\',\'w\').close(); time.sleep(120)" >/dev/null 2>&1 & echo $!')
    lab.run(HOST, 'rm -f /tmp/holder.ready', check=True)
    pid = lab.run(HOST, holder, check=True).stdout.strip()
    try:
        for _attempt in range(100):
            if lab.run(HOST, 'test -e /tmp/holder.ready').returncode == 0:
                break
            time.sleep(0.1)
        assert lab.run(HOST, 'kill -0 %s' % shlex.quote(pid)).returncode == 0, 'the holder did not start'
        result = refused(lab, '/dev/nst0', 'busy', overwrite=True)
        assert 'busy' in result['msg'] and 'one open at a time' in result['msg']
    finally:
        lab.run(HOST, 'kill %s' % shlex.quote(pid))
