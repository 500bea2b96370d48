# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The write gate refuses a cleaning cartridge by its label, before it opens the drive.

On mhvtl fc22cc6 in the lab (molecule/mhvtl) a drive holding the cleaning cartridge CLN101L1 blocked the
write test's open until its time limit: the gate gave up with ``timeout`` instead of refusing. The labels are
the ones of the recorded captures (tests/unit/fixtures: mhvtl's CLN101L1, HP's CLN101L4 and CLN102L5) and the
vendors' conventions _judge/_media cites (CLNxxxLx; the universal cleaning media ID CU).
"""

from __future__ import annotations

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_safety as S

BLANK = {'online': True, 'write_protected': False, 'worm': None, 'content': 'blank', 'detail': 'EOD at BOT'}


@pytest.mark.parametrize('barcode', ['CLN101L1', 'cln102l5', 'CLNU01CU', 'ABC001CU'])
def test_a_cleaning_label_is_refused_whatever_admits_data(barcode):
    with pytest.raises(S.TapeSafetyError) as info:
        S.media_verdict(BLANK, overwrite=True, allowed_barcodes=[barcode], barcode=barcode)
    assert info.value.reason == 'cleaning'
    assert 'cleaning cartridge' in str(info.value) and 'Load a scratch data cartridge' in str(info.value)


@pytest.mark.parametrize('barcode', ['MA2001L6', 'E01001L8', 'ABC123LW', None, ''])
def test_data_labels_are_not_cleaning(barcode):
    assert S.is_cleaning_barcode(barcode) is False


def test_the_gate_refuses_a_cleaning_cartridge_without_opening_the_drive():
    opened = []

    def opener(*args):
        opened.append(args)
        raise AssertionError('the drive was opened')

    gate = S.WriteGate('/dev/nst0', overwrite=True, barcode='CLN101L1', opener=opener)
    gate.identity = object()    # the device check passed (not what this test is about)
    with pytest.raises(S.TapeSafetyError) as info:
        gate.probe(worm=None)
    assert info.value.reason == 'cleaning' and opened == []
