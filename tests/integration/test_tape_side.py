# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tape side on the lab: discovery, the benchmark end to end, and every refusal.

The modules run through Ansible against the lab guests' real kernel st/sg/ch
devices (tgt behind them). The benchmark tests use lab-ma1; lab-ma2's drive
may be used by the Bacula tests. Each refusal also checks that nothing was
written: the st write counter of the drive does not move.

What the lab cannot show (tgt): write-protected and WORM media, blank media
once a cartridge has been written (no erase), a path that rejects a block
size with EINVAL below READ BLOCK LIMITS, and the benefit of immediate file
marks (tgt ignores IMMED). Those are unit-tested in
tests/unit/plugins/module_utils/test_tape_*.py.
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
        cmd = [ansible, host, '-i', lab.inventory, '-m', 'tapeops.qualify.%s' % module, '-a', json.dumps(args)]
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


@pytest.mark.parametrize('host', ['lab-ma1', 'lab-ma2'])
def test_discovery_finds_the_drive_and_its_changer(lab, host):
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
    # tgt's READ BLOCK LIMITS: granularity in byte 0 must not leak into the maximum.
    assert drive['block_limits'] == {'min': 4, 'max': 1048576, 'granularity': 9}
    assert drive['hba_max_transfer_bytes'] >= 1048576
    assert drive['density_code'] == '0x00'  # tgt hard-codes density 0
    assert drive['mtweofi_supported'] is True
    assert drive['st_options']['value'].startswith('0x')
    assert set(drive['stats']) >= {'write_ns', 'write_byte_cnt', 'io_ns'}
    assert drive['log_pages']['supported'] == []
    assert 'Invalid opcode' in drive['log_pages']['unsupported_reason']
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
    assert 'sweep' not in result and 'media' not in result
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
    for m in marks:
        assert m['error'] is None and m['bytes'] >= 8 * 10 ** 6 and m['mb_s'] > 0
    for m in marks[1:3]:
        assert m['mark_seconds'] > 0 and m['seconds_lost_per_mark'] is not None
    assert 'Invalid opcode' in result['log_pages_before']['unsupported_reason']
    assert 'Invalid opcode' in result['log_pages_after']['unsupported_reason']
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


def test_refuses_the_backup_source_disk(lab):
    result = refused(lab, '/dev/ubda', 'block_device')
    assert 'block device (a disk or a partition)' in result['msg'] and '/dev/nst0' in result['msg']


def test_refuses_a_regular_file(lab):
    lab.run(HOST, 'head -c 4096 /dev/zero > /tmp/not-a-tape.img', check=True)
    result = refused(lab, '/tmp/not-a-tape.img', 'regular_file')
    assert lab.run(HOST, 'stat -c %s /tmp/not-a-tape.img').stdout.strip() == '4096'
    assert 'regular file' in result['msg']


def test_refuses_dev_null(lab):
    assert 'memory device' in refused(lab, '/dev/null', 'memory_device')['msg']


def test_refuses_the_drives_sg_node(lab):
    assert 'SCSI generic' in refused(lab, '/dev/sg1', 'sg_node')['msg']


def test_refuses_the_changer_and_other_char_devices(lab):
    refused(lab, '/dev/sch0', 'changer_node')
    refused(lab, '/dev/tty', 'other_char_device')


def test_refuses_the_rewinding_node(lab):
    assert 'Use /dev/nst0' in refused(lab, '/dev/st0', 'rewinding_node')['msg']


def test_refuses_media_with_data_without_permission(lab):
    # Earlier tests (and the lab's own) wrote to the loaded cartridge.
    result = refused(lab, '/dev/nst0', 'media_has_data', allowed_barcodes=['NOT-THIS-ONE'])
    assert loaded_barcode(lab, HOST) in result['msg'] and 'allowed_barcodes' in result['msg']
    assert result['media']['content'] in ('data', 'unknown')
    assert 'BOT' in mt_status(lab, HOST)


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
