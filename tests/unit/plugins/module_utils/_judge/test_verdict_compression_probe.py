# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The verdict's tape ratio mapped by the drive's own compressor (the write benchmark's compression probe).

The probe is lab-ma1's, recorded by tests/integration/test_compression_probe_lab.py
(tests/unit/fixtures/lab_documents/20261127-compression-probe/, its README): the lab drive compresses with zlib
level 1, as the sources' sample is measured, so its line is the identity and the sample's estimate stays what the
default model gives. The drive that compresses less than zlib is constructed from it (said in its test).
"""

from __future__ import annotations

import copy
import json
import os

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils import _words
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _drive_model, _verdict

FIXTURE = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'fixtures', 'lab_documents',
                       '20261127-compression-probe', 'compression_probe__lab-ma1.json')
SPEC = {'compression_ratio': 2.0, 'label': 'LTO-5 HH'}
SOURCE = {'compressibility': {'ratio': 1.6, 'sample_bytes': 8388608, 'compressor': 'zlib-1'}}


def recorded_tape():
    with open(FIXTURE, encoding='utf-8') as handle:
        case = json.load(handle)
    sweep = [{'block_size': 262144, 'pattern': 'random', 'mb_s': 7.0, 'error': None}]
    return {'device': '/dev/nst0', 'sweep': sweep, 'compression_probe': case['compression_probe']}, case


def test_the_lab_drive_s_line_is_the_identity_and_leaves_the_estimate_as_it_was():
    tape, case = recorded_tape()
    calibration = _verdict.probe_calibration(tape)
    assert calibration == case['calibration']
    assert calibration['a'] == pytest.approx(0.0, abs=0.01) and calibration['b'] == pytest.approx(1.0, abs=0.01)
    ratio, basis = _verdict.tape_ratio(SPEC, SOURCE, tape=tape)
    default, _default_basis = _verdict.tape_ratio(SPEC, SOURCE)
    assert ratio == pytest.approx(default, abs=0.01) and basis['default_estimate'] == pytest.approx(default)
    assert basis['calibration']['points'][1] == ['2:1', 1.9921, 1.993]
    words = _words.BASES['ratio_sampled'](basis)
    assert "mapped by this drive's own compressor as the write test measured it (random data (zlib 1.00) at " \
           "1.00:1, 2:1 data (zlib 1.99) at 1.99:1, 2.5:1 data (zlib 2.49) at 2.49:1; the default model gave 1.60)" \
           in words, words


def test_a_drive_that_compresses_less_than_zlib_lowers_the_estimate_and_says_both():
    """Constructed from the recording: each pattern's drive ratio keeps 60 % of zlib's gain over 1:1."""
    tape, _case = recorded_tape()
    for row in tape['compression_probe']['patterns']:
        row['drive'] = dict(row['drive'], ratio=round(1.0 + 0.6 * (row['software_ratio'] - 1.0), 3))
    ratio, basis = _verdict.tape_ratio(SPEC, SOURCE, tape=tape)
    a, b = basis['calibration']['a'], basis['calibration']['b']
    assert b == pytest.approx(0.6, abs=0.01) and a == pytest.approx(0.4, abs=0.01)
    assert ratio == pytest.approx(1.0 + 0.6 * 0.6, abs=0.01) and basis['default_estimate'] == 1.6
    assert ratio == pytest.approx(_drive_model.tape_ratio_from_software(1.6, a=a, b=b, max_ratio=2.0))


@pytest.mark.parametrize('change, why', [
    (lambda t: t['compression_probe'].update(patterns=t['compression_probe']['patterns'][:1]), 'one pattern'),
    (lambda t: [r.update(why_unknown='flushed badly') for r in t['compression_probe']['patterns'][1:]],
     'the others unknown'),
    (lambda t: t.update(compression_probe=None), 'no probe'),
    (lambda t: t.update(msg='EIO', reason='write_error'), 'a failed sweep'),
    (lambda t: t['compression_probe'].update(patterns=[{'pattern': 'x', 'software_ratio': 'two',
                                                        'drive': 'broken'}, 7]), 'odd rows'),
])
def test_without_two_measured_patterns_the_default_model_maps_the_sample(change, why):
    tape, _case = recorded_tape()
    tape = copy.deepcopy(tape)
    change(tape)
    assert _verdict.probe_calibration(tape) is None, why
    ratio, basis = _verdict.tape_ratio(SPEC, SOURCE, tape=tape)
    assert 'calibration' not in basis and ratio == pytest.approx(1.6), why
