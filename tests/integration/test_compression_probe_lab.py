# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The write benchmark's compression probe on the lab: what the drive's own compressor makes of each pattern.

tape_write_benchmark with compression_probe_mb writes, after its sweep, 16 MB of each pattern but zeros on
lab-ma1's allowed scratch cartridge, flushes the drive's buffer after each with MTWEOF 0 (WRITE FILEMARKS of
count 0 through the real st driver: no mark on the tape) and reads the lab drive's data compression page (0x1B)
before and after. The lab drive compresses each block with zlib (lab/tapedrive/physics.py ``Compressor``) and
counts what it received and what it wrote to its cartridge file: so the flushed counters hold every byte of the
pattern on both sides, and the ratio is the drive's own. The verdict then maps the sources' sample by this
drive's compressor (_judge/_verdict.probe_calibration).

Nothing asserted here changes with the machine's load: byte counts and compression ratios only.
"""

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _verdict

from test_tape_side import mt_status, run_module

HOST = 'lab-ma1'
PROBE_MB = 16

pytestmark = [pytest.mark.lab, pytest.mark.untimed]


def bench(lab, **extra):
    args = {'device': '/dev/nst0', 'allowed_barcodes': lab.hostvars[HOST]['tapeops_allowed_barcodes'],
            'step_mb': 4, 'block_sizes': ['256K'], 'patterns': ['zeros', 'random', '2:1', '2.5:1'],
            'compression_probe_mb': PROBE_MB}
    args.update(extra)
    return run_module(lab, HOST, 'tape_write_benchmark', args, timeout=600)


def test_the_probe_reads_the_drive_s_own_ratio_of_each_pattern(lab, lab_record):
    result = bench(lab)
    assert result['_rc'] == 0, result.get('msg')
    probe = result['compression_probe']
    assert probe['skipped'] is None and probe['block_size'] == 262144 and probe['bytes_per_pattern'] == PROBE_MB * 10 ** 6
    assert result['plan']['compression_probe']['patterns'] == ['random', '2:1', '2.5:1']
    rows = dict((row['pattern'], row) for row in probe['patterns'])
    assert sorted(rows) == ['2.5:1', '2:1', 'random'], probe
    for row in rows.values():
        assert row['error'] is None and row['why_unknown'] is None, row
        # flushed: every byte the probe wrote reached the drive, and all of it is on the tape side of the page
        assert row['bytes'] == row['drive']['host_written_bytes'] >= PROBE_MB * 10 ** 6, row
        assert row['drive']['page'] == '0x1b' and row['drive']['tape_written_bytes'] > 0, row
    # random data passes through the lab drive's compressor whole; the calibrated patterns compress about as
    # zlib (level 1, as the sources' sample) says, the drive packing each block on its own
    assert rows['random']['drive']['ratio'] == pytest.approx(1.0, abs=0.01)
    assert rows['random']['software_ratio'] == pytest.approx(1.0, abs=0.01)
    for pattern in ('2:1', '2.5:1'):
        assert rows[pattern]['drive']['ratio'] == pytest.approx(rows[pattern]['software_ratio'], rel=0.10), rows[pattern]
    assert 1.5 < rows['2:1']['drive']['ratio'] < rows['2.5:1']['drive']['ratio']
    # the verdict's map from the sample to this drive: close to the identity on the lab's zlib drive
    calibration = _verdict.probe_calibration(result)
    assert calibration is not None and len(calibration['points']) == 3, calibration
    assert calibration['b'] == pytest.approx(1.0, abs=0.15) and abs(calibration['a']) < 0.3, calibration
    assert result['rewound'] is True and 'BOT' in mt_status(lab, HOST)
    lab_record('compression_probe_%s' % HOST, {'host': HOST, 'compression_probe': probe, 'calibration': calibration})


def test_without_log_pages_the_probe_writes_nothing_and_says_why(lab):
    result = bench(lab, log_pages=False, patterns=['random', '2:1'])
    assert result['_rc'] == 0, result.get('msg')
    probe = result['compression_probe']
    assert probe['patterns'] == [] and 'log pages are not read' in probe['skipped'], probe
    # the sweep wrote its two steps and nothing more: the probe's bytes were not written
    assert result['st_stats_delta']['write_byte_cnt'] == sum(s['bytes'] for s in result['sweep']), result
