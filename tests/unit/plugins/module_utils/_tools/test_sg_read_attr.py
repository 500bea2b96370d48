# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""sg_read_attr's output read into the cartridge's memory, on real output (tests/unit/fixtures/sg_read_attr/, each
with its source): an HP Ultrium 6 (35GD) with a FUJIFILM LTO-6 cartridge, a one-attribute read (-f 0x806) from a
blog, a transport failure from an sg3_utils issue; and what the real sg_read_attr of sg3_utils 1.46 prints for
those bytes with -q, for its --enumerate, and for a synthetic response holding the two usage histories
(produced/, regenerate.sh; the synthetic one says so in its header)."""

from __future__ import annotations

import os
import random

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils import _records
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _sg_read_attr
from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._tape_fixtures import derived, read

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'fixtures', 'sg_read_attr')


def fixture(name):
    return read('sg_read_attr/' + name)


HP6 = 'sg_read_attr__HP-Ultrium6-SCSI-35GD-FUJI-LTO6-EW7VWMVKF6__1.txt'
HP6_Q = 'produced/sg_read_attr_q__hp6-35gd-fuji-ew7vwmvkf6__sg3_utils-1.46__1.txt'
ENUM = 'produced/sg_read_attr_e__sg3_utils-1.46__1.txt'
HISTORIES = 'produced/sg_read_attr__synthetic-usage-histories__sg3_utils-1.46__1.txt'
BARCODE = 'sg_read_attr_f0x806__LTO6-frederickding-blog__1.txt'
DID_ABORT = 'sg_read_attr_fail__LTO4-Adaptec-DID_ABORT-sg3_utils-issue101__1.txt'


def test_hp_ultrium6_fujifilm_lto6_cartridge():
    mam = _sg_read_attr.parse(fixture(HP6))
    assert mam['notes'] == [] and mam['read'] == 32
    assert (mam['medium_manufacturer'], mam['medium_serial'], mam['manufacture_date']) == (
        'FUJIFILM', 'EW7VWMVKF6', '2017-08-24')
    assert mam['medium_density_code'] == mam['format_density_code'] == 0x5a
    assert mam['load_count'] == 1 and mam['initialization_count'] == 0
    assert mam['remaining_capacity_mib'] == mam['maximum_capacity_mib'] == 2499053
    assert mam['total_mib_written'] == 0 and mam['mam_capacity_bytes'] == 16384
    assert mam['medium_length_m'] == 846 and mam['medium_width_0_1mm'] == 127
    assert mam['medium_type'] == 0 and mam['medium_type_name'] == 'data'
    assert mam['tape_alert_flags'] == 0 and mam['tape_alert_active'] == []
    assert mam['loaded_by_last'] == {'vendor': 'HP', 'serial': 'HUJ808A5L4'}
    assert mam['loaded_by_1'] == {'vendor': 'HP', 'serial': None}
    # both "Assigning organization" lines: the device's (0x0005) first, the medium's (0x0404) second
    assert mam['assigning_organization'] == mam['medium_assigning_organization'] == 'LTO-CVE'
    # the two-line name of 0x0225 and "<unknown> [ff]": read, and unknown
    assert mam['attributes']['0x0225'] == '<unknown> [ff]' and mam['first_unencrypted_block'] is None
    # vendor attributes are kept as their hex
    assert mam['attributes']['0x1001'].split()[-8:] == ['57', '4d', '56', '4b', '46', '36', '00', '20']
    # what the cartridge did not give stays unknown
    for key in ('barcode', 'last_written', 'application_vendor', 'volume_identifier', 'user_medium_text_label'):
        assert mam[key] is None, key


def test_minus_q_reads_the_same():
    full, quiet = _sg_read_attr.parse(fixture(HP6)), _sg_read_attr.parse(fixture(HP6_Q))
    assert quiet == full


def test_one_attribute_read_with_filter():
    mam = _sg_read_attr.parse(fixture(BARCODE))
    assert mam['barcode'] == 'FJK663L6' and mam['read'] == 1
    assert mam['load_count'] is None and mam['medium_serial'] is None
    # the published command line above the output is not an attribute
    assert len(mam['notes']) == 1 and 'not read' in mam['notes'][0]


def test_transport_failure_reads_nothing_and_says_why():
    text = fixture(DID_ABORT)
    mam = _sg_read_attr.parse(text)
    assert mam['read'] == 0 and all(mam[key] is None for key in _sg_read_attr.KEYS)
    assert _sg_read_attr.classify_failure(99, '', text) == (
        'error', 'read attribute: transport: Host_status=0x05 [DID_ABORT]')


@pytest.mark.parametrize('stderr,kind', [
    # sg_read_attr.c's messages with sg3_utils' names of its exit statuses (lib/sg_lib_data.c sg_exit_str_arr)
    ('Read attribute command: Device not ready\nsg_read_attr failed: Device not ready\n', 'not_ready'),
    ('Read attribute command not supported\n', 'unsupported'),
    ('Read attribute command: Illegal request\n', 'unsupported'),
    ('open error: /dev/sg9: No such file or directory\n', 'error'),
])
def test_classify_failure(stderr, kind):
    assert _sg_read_attr.classify_failure(2, '', stderr)[0] == kind


def test_usage_histories_as_sg_read_attr_prints_them():
    """The synthetic response (produced/, made-up counters) as the real sg_read_attr 1.46 prints it."""
    mam = _sg_read_attr.parse(fixture(HISTORIES))
    assert mam['notes'] == []
    medium, partition = mam['usage_history']['0x0340'], mam['usage_history']['0x0341']
    assert medium['Load count'] == 13 and medium['Total amount of data written [MiB]'] == 9
    assert partition['partition initialization count'] == 115 and len(medium) == len(partition) == 15
    # the histories' "Load count" lines are not the cartridge's load count attribute
    assert mam['load_count'] is None


def test_enumerate_names_the_attributes_as_parse_reads_them():
    """The installed sg_read_attr's own table (--enumerate, sg3_utils 1.46) against ATTRIBUTES' names and ids."""
    listed = _sg_read_attr.parse_enumerate(fixture(ENUM))
    assert listed['service_actions'] == {0: 'av', 1: 'al', 2: 'lvl', 3: 'pl', 4: 'smc', 5: 'sa'}
    for attr, (dummy, name, dummy2) in _sg_read_attr.ATTRIBUTES.items():
        assert listed['attributes'][attr]['name'] == name, hex(attr)
    for attr, name in _sg_read_attr.OTHER_ATTRIBUTES.items():
        if attr != 0x080B:
            assert listed['attributes'][attr]['name'] == name, hex(attr)
    # up to 1.47 sg_read_attr lists "Application format version" as 0x080a too (1.48 gives it 0x080b)
    assert listed['duplicates'] == [(0x080A, 'Application format version')]
    assert 0x080B not in listed['attributes']


def test_tape_alert_flags_of_the_previous_load():
    """HP Ultrium TRM Q1530-90901: 1 bit per flag, flag 1 the most significant. Derived from the real capture by
    setting the Media flag (4) and the Cleaning required flag (20)."""
    text = derived(fixture(HP6), '  TapeAlert flags: 0\n', '  TapeAlert flags: %d\n' % (1 << 60 | 1 << 44))
    assert _sg_read_attr.parse(text)['tape_alert_active'] == [4, 20]
    assert _sg_read_attr.tape_alert_active(1) == [64] and _sg_read_attr.tape_alert_active(1 << 63) == [1]
    assert _sg_read_attr.tape_alert_active(None) is None and _sg_read_attr.tape_alert_active(-1) is None


def test_values_that_do_not_read_are_unknown_with_a_warning():
    """Derived from the real capture: a load count and a manufacture date that are not numbers."""
    text = derived(fixture(HP6), '  Load count: 1\n', '  Load count: one\n')
    text = derived(text, '  Medium manufacture date: 20170824\n', '  Medium manufacture date: 20171324\n')
    mam = _sg_read_attr.parse(text)
    assert mam['load_count'] is None and mam['manufacture_date'] is None
    assert len(mam['notes']) == 2 and mam['attributes']['0x0003'] == 'one'


def test_command_is_read_only_service_action_zero():
    assert _sg_read_attr.command('/dev/sg3') == ['sg_read_attr', '--readonly', '/dev/sg3']
    assert _sg_read_attr.command('/dev/sg3', partition=1) == [
        'sg_read_attr', '--readonly', '--partition=1', '/dev/sg3']
    for bad in ('sg3', None, '-e'):
        with pytest.raises(ValueError):
            _sg_read_attr.command(bad)
    with pytest.raises(ValueError):
        _sg_read_attr.command('/dev/sg3', partition=256)


def test_record_of_the_real_capture():
    record = _records.CartridgeMemory.from_parse(_sg_read_attr.parse(fixture(HP6)))
    assert record.medium_serial == 'EW7VWMVKF6' and record.load_count == 1 and record.medium_type_name == 'data'
    assert record.loaded_by[0] == {'vendor': 'HP', 'serial': 'HUJ808A5L4'} and len(record.loaded_by) == 4
    assert record.barcode is None and record.notes is None
    assert _records.CartridgeMemory.from_dict(record.to_dict()) == record
    with pytest.raises(_records.RecordError):
        _records.CartridgeMemory.from_parse('Attribute values:')


def test_cut_output_gives_no_value_the_capture_does_not():
    raw = fixture(HP6).encode('utf-8')
    full = _sg_read_attr.parse(raw)
    offsets = [i + 1 for i, byte in enumerate(raw) if byte == 0x0a] + random.Random(1).sample(range(len(raw)), 60)
    for offset in offsets:
        cut = _sg_read_attr.parse(raw[:offset])
        for key in _sg_read_attr.KEYS:
            if cut[key] is not None:
                assert cut[key] == full[key], 'cut at %d: %s=%r, the capture gives %r' % (
                    offset, key, cut[key], full[key])
        last = raw[:offset].split(b'\n')[-1]
        if last.strip() and not last.startswith(b'# '):
            assert any('cut line' in w for w in cut['notes']), offset


def test_damaged_output_never_raises():
    raw = bytearray(fixture(HP6).encode('utf-8'))
    rng = random.Random(2)
    for dummy in range(200):
        damaged = bytearray(raw)
        for dummy2 in range(10):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        mam = _sg_read_attr.parse(bytes(damaged))
        _records.CartridgeMemory.from_parse(mam)
        _sg_read_attr.parse_enumerate(bytes(damaged))
        _sg_read_attr.classify_failure(1, bytes(damaged), None)
    assert _sg_read_attr.parse(None)['read'] == 0


def test_every_fixture_keeps_its_source_header():
    names = sorted(os.path.relpath(os.path.join(d, f), FIXTURES) for d, dummy, files in os.walk(FIXTURES)
                   for f in files if f.endswith('.txt'))
    with open(os.path.join(FIXTURES, 'README.md'), encoding='utf-8') as handle:
        readme = handle.read()
    assert len(names) >= 6
    for name in names:
        lines = fixture(name).splitlines()[:3]
        assert [line[:2] for line in lines] == ['# '] * 3, name
        # a published capture names its address; one made in the lab (mhvtl, the emulated drive) says so and
        # is in the folder's README with the command that made it
        lab = lines[2].endswith('(lab capture)')
        assert lab or lines[0].startswith(('# source: https://', '# source: PRODUCED')), name
        assert not lab or '`%s`' % name in readme, name
