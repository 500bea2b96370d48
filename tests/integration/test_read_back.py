# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read-back on the lab: tape_write_benchmark writes a sweep, then reads it back through the guest's real st
driver from the lab drive, which hands back the blocks it stored (lab/tapedrive/ssc.py: READ(6) in
variable-block mode, ILI with the residue for a block shorter than the transfer, a negative residue for a
longer one, which st turns into ENOMEM).

- every block written is read back and verified, the read rate is reported beside the write rate, and the
  reads went through st (its read counters grew by exactly the bytes verified);
- a read buffer larger than the blocks (1 MiB over 256 KiB blocks: the ILI short reads) verifies too;
- a read buffer smaller than the blocks (64 KiB over 256 KiB) fails with the sentence that says the block
  size the tape was written with, not ENOMEM; the write measurements are attached and the tape is rewound.

The lab drive has no read physics (docs/lab.md): its read rate is what the guest, tcmu and the cartridge
file give, not a drive's. What the numbers show is that the read-back measures and verifies at all, on the
real st read path. Uses lab-ma1 and its allowed scratch cartridge, like test_tape_side.py.
"""

import pytest

from test_tape_side import mt_status, run_module

HOST = 'lab-ma1'

pytestmark = pytest.mark.lab


def st_read_bytes(lab, host):
    proc = lab.run(host, 'cat /sys/class/scsi_tape/nst0/stats/read_byte_cnt', check=True)
    return int(proc.stdout.strip())


def bench(lab, **extra):
    args = {'device': '/dev/nst0', 'allowed_barcodes': lab.hostvars[HOST]['tapeops_allowed_barcodes'],
            'log_pages': False, 'read_back': True}
    args.update(extra)
    return run_module(lab, HOST, 'tape_write_benchmark', args, timeout=600)


def test_read_back_verifies_the_sweep_and_reports_a_read_rate(lab, lab_record):
    before = st_read_bytes(lab, HOST)
    result = bench(lab, step_mb=8, block_sizes=['64K', '256K', '1M'], patterns=['random', '2.5:1'])
    assert result['_rc'] == 0, result.get('msg')
    steps = result['sweep']
    assert all(s['error'] is None and s['bytes'] >= 8 * 10 ** 6 for s in steps)
    rb = result['read_back']
    assert rb['error'] is None and rb['verified'] is True and rb['mismatched_blocks'] == 0, rb
    assert rb['verification'] == 'regenerated' and rb['block_size'] is None
    # every step read back whole, at the block size it was written with
    assert [(r['block_size'], r['pattern'], r['read_size'], r['blocks'], r['bytes']) for r in rb['steps']] == [
        (s['block_size'], s['pattern'], s['block_size'], s['blocks'], s['bytes']) for s in steps]
    assert rb['bytes'] == sum(s['bytes'] for s in steps)
    # the bytes came from the drive through st: its read counter grew by what was verified (plus the
    # benchmark's one read at BOT before writing, at most READ BLOCK LIMITS' 1 MiB)
    grew = st_read_bytes(lab, HOST) - before
    assert rb['bytes'] <= grew <= rb['bytes'] + 1048576, (grew, rb['bytes'])
    # a read rate beside the write rate of the same blocks, per step and in total
    assert rb['mb_s'] > 0 and rb['write_mb_s'] > 0
    assert rb['mb_s'] == pytest.approx(rb['bytes'] / rb['seconds'] / 1e6, abs=0.1)
    written_rate = dict(((s['block_size'], s['pattern']), s['mb_s']) for s in steps)
    for r in rb['steps']:
        assert r['mb_s'] > 0 and r['write_mb_s'] == written_rate[(r['block_size'], r['pattern'])]
    # the compare did not cap what it measured: a small share of the read time, far below its own ceiling
    assert rb['verify_capped'] is False and rb['verify_share'] < 0.1, rb
    assert rb['verify_capacity_mb_s'] > 5 * rb['mb_s'], rb
    assert rb['rewound'] is True and result['rewound'] is True
    status = mt_status(lab, HOST)
    assert 'File number=0, block number=0' in status and 'BOT' in status
    lab_record('read_back_%s' % HOST, {
        'host': HOST, 'read_mb_s': rb['mb_s'], 'write_mb_s': rb['write_mb_s'], 'bytes': rb['bytes'],
        'read_seconds': rb['seconds'], 'verify_share': rb['verify_share'],
        'verify_capacity_mb_s': rb['verify_capacity_mb_s'],
        'steps': [{k: r[k] for k in ('block_size', 'pattern', 'mb_s', 'write_mb_s', 'series_mb_s')}
                  for r in rb['steps']]})


def test_a_larger_read_buffer_reads_the_smaller_blocks(lab):
    result = bench(lab, step_mb=4, block_sizes=['256K'], patterns=['2.5:1'], read_back_block_size='1M')
    assert result['_rc'] == 0, result.get('msg')
    rb = result['read_back']
    assert rb['verified'] is True and rb['block_size'] == 1048576, rb
    (step,) = rb['steps']
    assert (step['block_size'], step['read_size']) == (262144, 1048576)
    assert step['blocks'] == result['sweep'][0]['blocks'] and step['bytes'] == result['sweep'][0]['bytes']


def test_a_read_smaller_than_the_written_blocks_says_so(lab):
    result = bench(lab, step_mb=4, block_sizes=['256K'], patterns=['random'], read_back_block_size='64K')
    assert result['_rc'] != 0
    assert result['reason'] == 'read_back_block_size_too_small', result.get('msg')
    msg = result['msg']
    assert 'the tape was written with 256 KiB blocks: read with at least that' in msg, msg
    assert 'read_back_block_size to 256 KiB or more' in msg
    assert 'Errno' not in msg and 'Traceback' not in msg and 'exception' not in result
    # what was measured before is attached: the sweep, and the read-back that stopped at its first block
    assert result['sweep'][0]['bytes'] >= 4 * 10 ** 6 and result['sweep'][0]['error'] is None
    rb = result['read_back']
    assert rb['steps'][0]['blocks'] == 0 and rb['steps'][0]['read_size'] == 65536 and rb['rewound'] is True
    assert 'BOT' in mt_status(lab, HOST)
