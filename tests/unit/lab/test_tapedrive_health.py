# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab drive's health (lab/tapedrive/ssc.py): its cartridge memory and its misbehaviour modes.

The real sg3_utils tools run against the emulated drive without a guest
through the sg shim (lab/tapedrive/sgshim.c): ``sg_read_attr`` reads the
cartridge memory (READ ATTRIBUTE) and ``sg_logs -a`` the log pages; the
collection's parsers (``_tools/_sg_read_attr``, ``_tools/_sg_logs``) read what
they print and its judge (``_judge/_health``) gives the status a real drive
with those signals would get: no mode OK, ``dirty`` CLEAN, a ``worn``
cartridge DEGRADED, ``hard_error`` FAILING. Time is a fake clock; data moved
only to make counters rise goes through the drive's physics (its transport),
not onto the cartridge file. The same modes read in a guest (the real tools
on lab-ma2, captured as fixtures: their READMEs) are judged too.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils import _records
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _health
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _sg_logs, _sg_read_attr, _st_sysfs
from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._tape_fixtures import read as fixture_text

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, 'lab'))

from tapedrive import media, scsi, sgshim, ssc  # noqa: E402  pylint: disable=wrong-import-position
from tapedrive.media import Cartridge  # noqa: E402  pylint: disable=wrong-import-position
from tapedrive.physics import MB  # noqa: E402  pylint: disable=wrong-import-position

MIB = 1024 * 1024
IDENTITY = {'vendor': 'HP', 'product': 'Ultrium 6-SCSI', 'rev': '35GD', 'serial': 'HU1330A002'}
# lab-ma2's drive at scale 0.25 (lab/tapelab.py SPREAD), rounded
PROFILE = {'generation': 6, 'native_mb_s': 40.0, 'speed_steps_mb_s': [40.0, 30.0, 20.0, 13.5], 'buffer_mb': 64.0,
           'backhitch_s': 3.0, 'load_s': 0.2, 'unload_s': 0.3, 'rewind_s': 1.1, 'locate_s': 0.9,
           'density_code': 0x5A}
BARCODE = 'MA2001L6'

needs_tools = pytest.mark.skipif(not (shutil.which('sg_logs') and shutil.which('sg_read_attr')),
                                 reason='sg3_utils not installed (apt-get install sg3-utils)')


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t

    def sleep(self, seconds):
        self.t += max(0.0, seconds)


def run(drive, clock, cdb, data=b''):
    """Execute ``cdb``; a Pending result is polled on the fake clock until done."""
    result = drive.execute(bytes(cdb), data)
    while isinstance(result, scsi.Pending):
        due = result.poll(clock.t)
        if isinstance(due, scsi.Result):
            return due
        clock.t = max(clock.t, due)
    return result


def write(drive, clock, data):
    return run(drive, clock, bytes((0x0A, 0)) + len(data).to_bytes(3, 'big') + b'\0', data)


def read(drive, clock, length):
    return run(drive, clock, bytes((0x08, 0)) + length.to_bytes(3, 'big') + b'\0')


def rewind(drive, clock):
    return run(drive, clock, bytes((0x01, 0, 0, 0, 0, 0)))


def read_attribute(action=0, first=0, alloc=8192, partition=0):
    return (bytes((0x8C, action, 0, 0, 0, 0, 0, partition)) + first.to_bytes(2, 'big') + alloc.to_bytes(4, 'big')
            + bytes(2))


def stream(drive, clock, tape_bytes, block=MB):
    """Push ``tape_bytes`` through the drive's physics as a host that never waits would, then drain it."""
    tr = drive.transport
    left = tape_bytes
    while left > 0:
        n = min(block, left)
        while not tr.offer(n, n, clock.t):
            clock.t = max(clock.t, tr.wake_for_room(n, clock.t))
        left -= n
    tr.begin_flush(clock.t)
    while not tr.flush_done(clock.t):
        clock.t = max(clock.t, tr.wake_for_flush(clock.t))


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def cart(tmp_path):
    c = Cartridge.create(str(tmp_path / (BARCODE + '.cart')), BARCODE, generation=6, density_code=0x5A,
                         capacity_bytes=400 * MB, manufactured='20260115')
    yield c
    c.close()


def loaded(clock, cart, health=None):
    drive = ssc.Drive(IDENTITY, PROFILE, clock)
    drive.set_health(health)
    drive.load_cartridge(cart)
    assert run(drive, clock, bytes(6)).sense_key == scsi.UNIT_ATTENTION     # the new cartridge, once
    return drive


@pytest.fixture
def tools(tmp_path_factory):
    """tools(drive) -> run(*argv) with 'DEV' standing for the drive, the real tool on the sg shim."""
    if not (shutil.which('gcc') or shutil.which('cc')):
        pytest.skip('no C compiler for the sg shim (apt-get install gcc libc6-dev)')
    so = sgshim.build(str(tmp_path_factory.getbasetemp() / 'sgshim'))
    servers = []

    def serve(drive, clock):
        sock_dir = tmp_path_factory.mktemp('sock')
        dev = str(sock_dir / 'sg-drive')
        server = sgshim.serve(drive, str(sock_dir / 's'), clock=clock, sleep=clock.sleep)
        servers.append(server)

        def tool(*args):
            argv = [a if a != 'DEV' else dev for a in args]
            return subprocess.run(argv, env=server.env(so, dev, ptype=1), capture_output=True, text=True,
                                  timeout=60, check=False)
        return tool
    yield serve
    for server in servers:
        server.close()


def observed(tool):
    """What the collection reads of the drive: sg_logs -a and sg_read_attr, parsed."""
    logs = tool('sg_logs', '-a', 'DEV')
    assert logs.returncode == 0, logs.stderr
    attr = tool(*_sg_read_attr.command('/dev/sg0')[:-1] + ['DEV'])
    assert attr.returncode == 0, attr.stderr
    mam = _sg_read_attr.parse(attr.stdout)
    assert mam['notes'] == [], (mam['notes'], attr.stdout)
    return _sg_logs.parse_all(logs.stdout), mam, attr.stdout


# ----------------------------------------------------------------------------- the cartridge memory

@needs_tools
def test_cartridge_memory_through_sg_read_attr_counts_loads_and_bytes(tmp_path, clock, cart, tools):
    drive = loaded(clock, cart)
    data = os.urandom(3 * MIB)                      # random: stored as is, 3 MiB on tape
    assert write(drive, clock, data).ok
    assert rewind(drive, clock).ok
    assert read(drive, clock, len(data)).data == data
    assert run(drive, clock, bytes((0x1B, 0, 0, 0, 0, 0))).ok    # unload: the memory is written
    drive.unload_cartridge()
    cart.close()
    again = Cartridge.open(str(tmp_path / (BARCODE + '.cart')))  # the memory lives in the cartridge file
    drive.load_cartridge(again)
    run(drive, clock, bytes(6))
    assert write(drive, clock, os.urandom(2 * MIB)).ok
    logs, mam, text = observed(tools(drive, clock))
    assert text.startswith('Attribute values:\n  Remaining capacity in partition [MiB]: ')
    assert mam['load_count'] == 2
    assert mam['maximum_capacity_mib'] == 400 * MB // MIB
    # the second load wrote from the beginning: what the first wrote is gone, its MiB still count below
    assert mam['remaining_capacity_mib'] == (400 * MB - 2 * MIB) // MIB
    assert (mam['total_mib_written'], mam['total_mib_read']) == (5, 3)          # tape-side, over its life
    assert (mam['mib_written_last_load'], mam['mib_read_last_load']) == (2, 0)  # this load only
    assert mam['loaded_by_last'] == {'vendor': 'HP', 'serial': 'HU1330A002'}
    assert mam['loaded_by_1'] == {'vendor': 'HP', 'serial': 'HU1330A002'} and mam['loaded_by_2'] is None
    assert (mam['medium_density_code'], mam['format_density_code']) == (0x5A, 0x5A)
    assert (mam['medium_type'], mam['medium_type_name']) == (0, 'data')
    assert (mam['medium_manufacturer'], mam['manufacture_date']) == ('TAPEOPS', '2026-01-15')
    assert mam['medium_serial'] == media.medium_serial_of(BARCODE) and len(mam['medium_serial']) == 10
    assert (mam['medium_length_m'], mam['medium_width_0_1mm'], mam['mam_capacity_bytes']) == (846, 127, 16384)
    assert 0 < mam['mam_space_remaining_bytes'] < 16384
    assert (mam['assigning_organization'], mam['medium_assigning_organization']) == ('LTO-CVE', 'LTO-CVE')
    assert mam['barcode'] == BARCODE and mam['tape_alert_flags'] == 0 and mam['tape_alert_active'] == []
    assert mam['volume_change_reference'] == 2                   # both loads wrote
    # the ids, formats and lengths are those of the real HP LTO-6 cartridge's (the lab's values, and its barcode)
    real = _sg_read_attr.parse(open(os.path.join(ROOT, 'tests', 'unit', 'fixtures', 'sg_read_attr',
                                                 'sg_read_attr__HP-Ultrium6-SCSI-35GD-FUJI-LTO6-EW7VWMVKF6__1.txt'
                                                 )).read())
    assert sorted(mam['attributes']) == sorted(set(real['attributes']) - {'0x1000', '0x1001'} | {'0x0806'})
    health = _health.judge(logs, mam)
    assert health.status == _records.HEALTH_OK and health.findings == []
    assert health.counters['cartridge_life'] == {'loads': 2, 'loads_from': 'mam', 'generation': 6,
                                                 'generation_from': 'mam:medium_density_code'}
    assert health.counters['mam']['total_mib_written'] == 5


@needs_tools
def test_read_attribute_service_actions_and_refusals(clock, cart, tools):
    drive = loaded(clock, cart)
    tool = tools(drive, clock)
    listed = tool('sg_read_attr', '--sa=al', 'DEV')
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith('Attribute list:\n  Remaining capacity in partition [MiB]\n')
    assert listed.stdout.endswith('  Medium type information\n  Barcode\n')
    supported = tool('sg_read_attr', '--sa=sa', 'DEV')
    assert supported.stdout.replace('Supported attribute list:', 'Attribute list:') == listed.stdout
    assert tool('sg_read_attr', '--sa=pl', 'DEV').stdout == (
        'Partition number list:\n  First partition number: 0\n  Number of partitions available: 1\n')
    assert 'Number of logical volumes available: 1' in tool('sg_read_attr', '--sa=lvl', 'DEV').stdout
    one = tool('sg_read_attr', '-f', '0x806', 'DEV')
    assert one.stdout == '  Barcode: %-32s\n' % BARCODE              # as the blog capture prints it
    # an SMC-2 service action, a partition the lab does not have: ILLEGAL REQUEST, as sg_read_attr says it
    for args in (('--sa=smc',), ('--partition=1',)):
        refused = tool('sg_read_attr', *args, 'DEV')
        assert refused.returncode != 0
        assert _sg_read_attr.classify_failure(refused.returncode, refused.stdout, refused.stderr)[0] == \
            'unsupported'
    # first attribute and allocation length as SPC-4 has them
    body = run(drive, clock, read_attribute(first=0x0400)).data
    assert body[4:6] == bytes((0x04, 0x00)) and len(body) == 4 + int.from_bytes(body[:4], 'big')
    cut = run(drive, clock, read_attribute(alloc=16)).data
    assert len(cut) == 16 and int.from_bytes(cut[:4], 'big') > 16
    assert run(drive, clock, read_attribute(action=0, first=0x0900)).data == bytes(4)


@needs_tools
def test_no_cartridge_is_not_ready_for_sg_read_attr(clock, tools):
    drive = ssc.Drive(IDENTITY, PROFILE, clock)
    out = tools(drive, clock)('sg_read_attr', '--readonly', 'DEV')
    assert out.returncode != 0
    assert _sg_read_attr.classify_failure(out.returncode, out.stdout, out.stderr)[0] == 'not_ready'


def test_a_cartridge_made_before_its_memory_was_kept_opens(tmp_path):
    path = str(tmp_path / 'OLD001L5.cart')
    meta = {'barcode': 'OLD001L5', 'generation': 5, 'density_code': 0x58, 'capacity_bytes': 10 ** 8,
            'write_protected': False, 'worm': False, 'medium_type': 0, 'loads': 7}
    body = media.MAGIC + json.dumps(meta).encode() + b'\n'
    with open(path, 'wb') as f:
        f.write(body + b' ' * (media.HEADER_SIZE - len(body)))
    os.utime(path, (1767225600, 1767225600))                     # 2026-01-01 UTC
    old = Cartridge.open(path)
    assert (old.loads, old.medium_serial, old.manufactured) == (7, media.medium_serial_of('OLD001L5'), '20260101')
    assert old.memory['life_written'] == 0 and old.memory['loaded_by'] == []
    old.count_load('IBM', '1068001001')
    old.close()
    again = Cartridge.open(path)
    assert again.loads == 8 and again.memory['loaded_by'] == [['IBM', '1068001001']]
    assert again.manufactured == '20260101'
    again.close()


# ----------------------------------------------------------------------------- the modes, judged

def _evidence(health, code):
    return [f.evidence for f in health.findings if f.code == code]


@needs_tools
@pytest.mark.parametrize('mode', ['none', 'dirty', 'worn', 'hard_error'])
def test_each_mode_gives_the_signals_a_real_drive_gives_and_is_judged(clock, cart, tools, mode):
    health_setting = {'drive': mode if mode in ssc.DRIVE_MODES else None,
                      'cartridges': {BARCODE: 'worn'} if mode == 'worn' else {}}
    drive = loaded(clock, cart, health_setting)
    assert write(drive, clock, os.urandom(MIB)).ok           # every mode still writes
    stream(drive, clock, 1200 * MB)                          # 1.2 GB through the physics: counters to judge
    logs, mam, _text = observed(tools(drive, clock))
    health = _health.judge(logs, mam)
    flags = _sg_logs.tape_alert_flags(logs['pages']['0x2e'])['active']
    errors = _sg_logs.error_counters(logs['pages']['0x02'])
    if mode == 'none':
        assert health.status == _records.HEALTH_OK and health.findings == [] and flags == []
        assert errors['rewrites_or_rereads'] == 0
        assert health.counters['write_errors']['rewrites_per_gb'] == 0
        return
    if mode == 'dirty':
        assert health.status == _records.HEALTH_CLEAN and flags == [20]
        assert _evidence(health, 'tape_alert') == [{'page': '0x2e', 'flag': 20, 'name': 'Cleaning required',
                                                    'type': 'C', 'category': 'cleaning'}]
        assert _evidence(health, 'cleaning_requested') == [{'pages': ['0x0c']}]
        # rewrites and corrections rise with the bytes moved (5 per GB), under the judge's 10 per GB
        gb = health.counters['write_errors']['gb']
        assert gb == pytest.approx(1.2 + MIB / 1e9, abs=0.001)
        assert errors['rewrites_or_rereads'] == int(gb * ssc.DIRTY_REWRITES_PER_GB) == 6
        assert errors['corrected_with_delay'] == errors['corrected'] == 6 and errors['uncorrected'] == 0
        assert health.counters['write_errors']['rewrites_per_gb'] == pytest.approx(5, abs=0.05)
        assert [f.status for f in health.findings] == [_records.HEALTH_CLEAN] * 2
        return
    if mode == 'worn':
        assert health.status == _records.HEALTH_DEGRADED and flags == [19]
        assert mam['load_count'] == 19501                         # 0.975 of the 20,000 loads, plus this one
        assert _evidence(health, 'cartridge_loads') == [{
            'counter': 'load_count', 'from': 'mam', 'value': 19501, 'limit': 20000, 'generation': 6,
            'near_end': 0.9}]
        assert mam['tape_alert_active'] == [19]                   # its previous load raised it too
        assert [e['flag'] for e in _evidence(health, 'cartridge_tape_alert')] == [19]
        assert [e['flag'] for e in _evidence(health, 'tape_alert')] == [19]
        assert _sg_logs.volume_statistics(logs['pages']['0x17'])['thread_count'] == 19501
        return
    assert mode == 'hard_error'
    assert health.status == _records.HEALTH_FAILING and flags == [30]
    assert _evidence(health, 'tape_alert') == [{'page': '0x2e', 'flag': 30, 'name': 'Hardware A', 'type': 'C',
                                                'category': 'hardware'}]


def test_the_flags_of_a_load_are_in_the_cartridge_memory_at_the_next(clock, cart):
    drive = loaded(clock, cart, {'drive': 'dirty'})
    drive.unload_cartridge()                                   # the dirty drive's flag goes into the memory
    drive.set_health(None)                                     # cleaned
    drive.load_cartridge(cart)
    run(drive, clock, bytes(6))
    attrs = dict((ident, value) for ident, _fmt, value in drive.mam_attributes(cart))
    assert _sg_read_attr.tape_alert_active(int.from_bytes(attrs[0x0002], 'big')) == [20]
    assert drive.tape_alert_flags() == []
    # a drive's flags of the cartridge's last load are that drive's: listed, not judged
    mam = {'tape_alert_flags': int.from_bytes(attrs[0x0002], 'big'), 'tape_alert_active': [20]}
    assert _health.judge({'pages': {'0x2e': 'Tape alert page (ssc-3) [0x2e]\n  Cleaning required: 0\n'}},
                         mam).status == _records.HEALTH_OK


def test_a_worn_cartridge_past_its_life_raises_media_life(clock, cart):
    drive = loaded(clock, cart, {'cartridges': {BARCODE: 'worn'}})
    assert drive.tape_alert_flags() == [19]
    drive.unload_cartridge()
    for _load in range(498):                                   # its first load, 498 elsewhere, this one: 500
        cart.count_load()
    drive.load_cartridge(cart)
    assert drive.cartridge_loads(cart) == 20000 and drive.tape_alert_flags() == [7]
    drive.set_health({'cartridges': {BARCODE: 'none'}})        # without the mode: its own 500 loads
    assert drive.cartridge_loads(cart) == 500 and drive.tape_alert_flags() == []


def test_the_dirty_drive_writes_slower_than_the_clean_one(tmp_path):
    rates = {}
    for mode in ('none', 'dirty'):
        clock = Clock()
        cart = Cartridge.create(str(tmp_path / ('%s.cart' % mode)), BARCODE, generation=6, density_code=0x5A)
        drive = loaded(clock, cart, {'drive': mode})
        start = clock.t
        stream(drive, clock, 2000 * MB)                       # a host faster than any step: the drive sets the pace
        rates[mode] = 2000 * MB / (clock.t - start)
        assert drive.stats()['step_mb_s'] == 40.0             # the tape at its top step either way
        cart.close()
    ratio = rates['dirty'] / rates['none']
    assert ratio == pytest.approx(ssc.DIRTY_RATE_FACTOR, rel=0.02) and ratio < 1


def test_health_file_is_read_when_it_changes(tmp_path, clock, cart):
    drive = loaded(clock, cart)
    drive.health_file = str(tmp_path / 'health.json')
    logged = []
    drive.log = logged.append
    assert drive.read_health_file() is None                   # the file is missing: no mode, nothing changed
    with open(drive.health_file, 'w') as f:
        json.dump({'drive': 'hard_error', 'cartridges': {BARCODE: 'worn'}}, f)
    assert drive.periodic(clock.t) == {'drive': 'hard_error', 'cartridges': {BARCODE: 'worn'}}
    assert drive.tape_alert_flags() == [19, 30] and logged and 'hard_error' in logged[-1]
    assert drive.periodic(clock.t) is None                    # unchanged file: not read again
    with open(drive.health_file, 'w') as f:
        f.write('{"drive": "sticky"}')
    error = drive.periodic(clock.t)
    assert isinstance(error, ssc.HealthError) and 'dirty, hard_error, none' in str(error)
    assert drive.tape_alert_flags() == [19, 30]               # the setting in force stays
    os.unlink(drive.health_file)
    assert drive.periodic(clock.t) == {'drive': None, 'cartridges': {}} and drive.tape_alert_flags() == []


@pytest.mark.parametrize('setting,message', [
    ('dirty', 'must be a mapping'),
    ({'drives': 'dirty'}, 'unknown key'),
    ({'drive': 'worn'}, "drive mode 'worn' is not one of dirty, hard_error, none"),
    ({'cartridges': {BARCODE: 'dirty'}}, 'cartridge MA2001L6: mode'),
    ({'cartridges': ['worn']}, 'must map barcodes'),
])
def test_bad_health_settings_say_what_is_allowed(setting, message):
    with pytest.raises(ssc.HealthError, match=message):
        ssc.parse_health(setting)


def test_load_life_is_the_judges():
    assert ssc.LOAD_LIFE == _health.LOAD_LIFE


# ----------------------------------------------------------------------------- the modes in a guest, judged

GUEST_LOGS = 'sg_logs/sg_logs_p0x%s__lab-emulated-HP-Ultrium6-SCSI-%s-guest__1.txt'
GUEST_MAM = 'sg_read_attr/sg_read_attr__lab-emulated-HP-Ultrium6-SCSI-%s-MA2001L6__1.txt'
GUEST_ST = 'sysfs/sysfs_st_stats_grep__lab-emulated-HP-Ultrium6-SCSI-dirty-guest__1.txt'


def guest_pages(mode, *codes):
    return {'pages': dict(('0x' + code, fixture_text(GUEST_LOGS % (code, mode))) for code in codes)}


def guest_mam(name):
    mam = _sg_read_attr.parse(fixture_text(GUEST_MAM % name))
    assert mam['notes'] == [], mam['notes']
    return mam


def test_a_dirty_drive_in_a_guest_is_judged_clean():
    """lab-ma2 dirty in a guest (tests/unit/fixtures/*/README.md): 1.2 GB written, 512 MiB read back, the real
    sg_logs, sg_read_attr and st's own counters read there."""
    pages = guest_pages('dirty', '2e', '02', '03', '0c')
    health = _health.judge(pages, guest_mam('dirty-guest'))
    assert health.status == _records.HEALTH_CLEAN
    assert [(f.code, f.status) for f in health.findings] == [
        ('tape_alert', _records.HEALTH_CLEAN), ('cleaning_requested', _records.HEALTH_CLEAN)]
    assert _sg_logs.tape_alert_flags(_sg_logs.decode_page(0x2E, pages['pages']['0x2e']))['active'] == [20]
    assert _sg_logs.parse_sequential_access(pages['pages']['0x0c'])['cleaning_required'] is True
    st = _st_sysfs.parse_stats_text(fixture_text(GUEST_ST))
    for code, st_bytes in ((0x02, None), (0x03, st['read_byte_cnt'])):
        errors = _sg_logs.error_counters(_sg_logs.decode_page(code, pages['pages']['0x%02x' % code]), code)
        # the rewrites (0x02) and rereads (0x03) of the bytes the drive says it moved, at the lab's rate per GB
        assert errors['rewrites_or_rereads'] == int(errors['processed'] / 1e9 * ssc.DIRTY_REWRITES_PER_GB) > 0
        assert errors['corrected_with_delay'] == errors['rewrites_or_rereads'] and errors['uncorrected'] == 0
        if st_bytes is not None:
            assert errors['processed'] == st_bytes == 512 * MIB      # what st read is what the drive says
    # page 0x0C counts whole GB: 1 GB written, 0 read; the judge's rate is per those GB, still under its limit
    assert health.counters['write_errors']['gb'] == 1.0 and health.counters['write_errors']['rewrites_per_gb'] == 6
    assert health.unknown['read_error_rate'] == 'too_little_data'
    # the cartridge memory: the first load, the bytes it moved in MiB; at the next load, flag 20 of this one
    mam = guest_mam('dirty-guest')
    assert (mam['load_count'], mam['tape_alert_active']) == (1, [])
    assert (mam['mib_written_last_load'], mam['mib_read_last_load']) == (1152, 512)
    again = guest_mam('dirty-guest-reloaded')
    assert (again['load_count'], again['tape_alert_active']) == (2, [20])
    assert (again['total_mib_written'], again['mib_written_last_load']) == (1152, 0)


def test_a_worn_cartridge_in_a_guest_is_judged_degraded():
    health = _health.judge(guest_pages('worn', '2e', '17'), guest_mam('worn-guest'))
    assert health.status == _records.HEALTH_DEGRADED
    loads = int(ssc.WORN_FRACTION * ssc.LOAD_LIFE[6]) + 2                  # the mode's, and its own two loads
    assert [e['value'] for e in _evidence(health, 'cartridge_loads')] == [loads]
    assert _sg_logs.volume_statistics(_sg_logs.decode_page(0x17, fixture_text(GUEST_LOGS % ('17', 'worn'))))[
        'thread_count'] == loads
    assert [e['flag'] for e in _evidence(health, 'tape_alert')] == [19]
    # its memory: 19 from the mode, 20 from its previous load in the dirty drive
    assert guest_mam('worn-guest')['tape_alert_active'] == [19, 20]


def test_a_hard_error_drive_in_a_guest_is_judged_failing():
    health = _health.judge(guest_pages('hard_error', '2e'))
    assert health.status == _records.HEALTH_FAILING
    assert [e['flag'] for e in _evidence(health, 'tape_alert')] == [30]
