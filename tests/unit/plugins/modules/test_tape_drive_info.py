# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""tape_drive_info through its main(), on a recorded host: discovery end to end, the real runner and parsers.

The host is lab-ma1 of the recorded lab run tests/unit/fixtures/lab_runs/20261124-quick-v2 (IBM ULT3580-TD5 at
/dev/nst0 = sg0, an STK L700 changer at sg1). Its sysfs is laid out under tmp_path as the kernel lays it out, with
the values that run recorded in lab-ma1.json (INQUIRY strings, H:C:T:L, VPD 0x80 serial, st options and counters, st
driver 20160209), and _tape_discovery.SYS_ROOT points at it. The tools are scripts first on PATH printing real
captures (module_harness.scripted_tools), each named where it is used:

- mt status: mhVTL's IBM ULT3580-TD5 with an LTO-5 cartridge at BOT, its density named as the lab's mt-st 1.7
  names 0x58 (CentOS 6's mt-st printed "no translation"): it parses to exactly the mt_status lab-ma1 recorded
  (checked below, so the stand-in is the same answer);
- READ ELEMENT STATUS (sg_raw): captured on lab-ma1 itself (tgt cuts the drive's identifier after "10");
- mtx status: the lab's was not recorded; a real 2-drive LTO-5 library's stands in (drive 0 holds 000057L5);
- sg_logs: the lab's emulated drive (lab-ma3) for 0x00, 0x0c, 0x17 and 0x34 (lab-ma1's for 0x32), a real HP
  Ultrium 6 for 0x02, 0x03, 0x14 and 0x1b, a real IBM LTO-10 for 0x2e;
- sg_read_attr: the real HP Ultrium 6's FUJIFILM LTO-6 cartridge (the same drive's log pages above);
- sg_read_block_limits -H: not recorded; the six bytes lab-ma1's block_limits decode from, in sg3_utils' hex layout.

No /dev/sg0 exists on the test machine, so the BLKSECTGET ioctl finds nothing (hba_max_transfer_bytes null; the
lab recorded 1310720).
"""

from __future__ import annotations

import json
import os
import shutil

import pytest
import yaml

from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_discovery as D
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _sg_logs
from ansible_collections.tapeops.qualify.plugins.modules import tape_drive_info

from module_harness import (FIXTURES, Derived, Sleeps, fixture_text, module_warnings, run_module, scripted_tools,
                            tool_calls)

LAB_RUN = os.path.join(FIXTURES, 'lab_runs', '20261124-quick-v2', 'lab-ma1.json')
MT_TD5 = 'mt/mt_status_mtst__mhVTL-IBM-ULT3580-TD5-density0x58-CentOS6__1.txt'
ELEMENTS = 'mtx/read_element_status_dvcid__tgt-STK-L700-lab-IBM-ULT3580-TD5__1.txt'
MTX = 'mtx/mtx_status__pve-2drive-24slot-LTO5__1.txt'
LAB_LOGS = 'sg_logs/sg_logs_p0x%s__lab-emulated-IBM-ULT3580-TD8-shoeshine__1.txt'
MT_STATUS = Derived(fixture_text(MT_TD5).replace('(no translation)', '(LTO-5)'),
                    'mt status of %s with density 0x58 named as mt-st 1.7 names it (mt_densities fixture)' % MT_TD5)
# the lab's tgt changer cuts its READ ELEMENT STATUS answer short (ELEMENTS): warned on every host run with it
TGT_CHANGER_SAID = ['changer /dev/sg1: %s' % w for w in (
    'READ ELEMENT STATUS announced 58 bytes of element pages, 50 arrived',
    'element descriptor at byte 16 is cut short (42 of 50 bytes)',
    'device identifier of element 500 is cut short (26 of 34 bytes)')]
BLOCK_LIMITS = Derived(' 00     00 10 00 00 00 01                                 ......\n',
                       'READ BLOCK LIMITS as lab-ma1 recorded it (granularity 0, max 1048576, min 1) in the layout '
                       'sg3_utils -H prints (offset, hex bytes, ASCII)')


def recorded_drive():
    with open(LAB_RUN) as handle:
        return json.load(handle)['drives'][0]['identity']


def lab_setting(drive):
    """lab-ma1's tapeops_drives entry: what the recorded resolver says it used (generation.inventory), for nst0."""
    return dict(drive['generation']['inventory'], nst=drive['nst'])


def scsi_device(root, hctl, attrs, sg=None):
    """A SCSI device directory as the kernel lays it out under an iSCSI session of hostH; bus/scsi/devices links it."""
    host, channel, target, _lun = hctl.split(':')
    path = root / 'devices' / 'platform' / ('host%s' % host) / 'session1' / (
        'target%s:%s:%s' % (host, channel, target)) / hctl
    path.mkdir(parents=True)
    for name, value in attrs.items():
        (path / name).write_bytes(value if isinstance(value, bytes) else (value + '\n').encode())
    if sg:
        (path / 'scsi_generic' / sg).mkdir(parents=True)
    bus = root / 'bus' / 'scsi' / 'devices'
    bus.mkdir(parents=True, exist_ok=True)
    (bus / hctl).symlink_to(path)
    return path


def st_driver(root, version='[20160209]'):
    drv = root / 'bus' / 'scsi' / 'drivers' / 'st'
    drv.mkdir(parents=True)
    (drv / 'version').write_text(version + '\n')


def tape_node(root, name, device, options=None, stats=None):
    node = root / 'class' / 'scsi_tape' / name
    node.mkdir(parents=True)
    (node / 'device').symlink_to(device)
    if options is not None:
        (node / 'options').write_text(options + '\n')
        for attr in ('default_blksize', 'default_density', 'default_compression'):
            (node / attr).write_text('-1\n')
    if stats is not None:
        (node / 'stats').mkdir()
        for key, value in stats.items():
            (node / 'stats' / key).write_text('%d\n' % value)


def vpd_pg80(serial):
    """VPD page 0x80 as sysfs vpd_pg80 holds it: 00 80, the length, the serial."""
    return bytes([0, 0x80, 0, len(serial)]) + serial.encode('ascii')


def lab_ma1_sysfs(root, drive=None, vendor=None, product=None):
    drive = drive or recorded_drive()
    st_driver(root)
    device = scsi_device(root, drive['hctl'], {
        'vendor': '%-8s' % (vendor or drive['vendor']), 'model': '%-16s' % (product or drive['product']),
        'rev': drive['revision'], 'type': '1', 'vpd_pg80': vpd_pg80(drive['serial'])}, sg='sg0')
    tape_node(root, 'nst0', device, options=drive['st_options']['value'], stats=drive['stats'])
    # the changer: tgt's STK L700 (tests/integration/test_lab.py reads these INQUIRY strings on the lab)
    scsi_device(root, '0:0:2:0', {'vendor': 'STK     ', 'model': 'L700            ', 'rev': '0104', 'type': '8'},
                sg='sg1')


HP6 = 'sg_logs/sg_logs_p0x%s__HP-Ultrium6-SCSI-35GD-FUJI-LTO6-loaded__1.txt'
LAB_SG_LOGS = [
    ('-p 0x00 /dev/sg0', LAB_LOGS % '00', 0),
    ('-p 0x02 /dev/sg0', HP6 % '02', 0),
    ('-p 0x03 /dev/sg0', HP6 % '03', 0),
    ('-p 0x0c /dev/sg0', LAB_LOGS % '0c', 0),
    ('-p 0x14 /dev/sg0', HP6 % '14', 0),
    ('-p 0x17 /dev/sg0', LAB_LOGS % '17', 0),
    ('-p 0x1b /dev/sg0', HP6 % '1b', 0),
    ('-p 0x2e /dev/sg0', 'sg_logs/sg_logs_p0x2e__IBM-ULT3580-TDA-T3S0-LTO10__1.txt', 0),
    ('-H -p 0x32 /dev/sg0', 'sg_logs/sg_logs_p0x32_H__lab-emulated-IBM-ULT3580-TD5-observe-after__1.txt', 0),
    ('-H -p 0x34 /dev/sg0', 'sg_logs/sg_logs_p0x34_H__lab-emulated-IBM-ULT3580-TD8-shoeshine__1.txt', 0),
]
MAM_HP6 = 'sg_read_attr/sg_read_attr__HP-Ultrium6-SCSI-35GD-FUJI-LTO6-EW7VWMVKF6__1.txt'


def lab_ma1_tools(tmp_path, monkeypatch, **replace):
    tools = {
        'mt': [('-f /dev/nst0 status', MT_STATUS, 0)],
        'sg_read_block_limits': [('-H /dev/sg0', BLOCK_LIMITS, 0)],
        'mtx': [('-f /dev/sg1 status', MTX, 0)],
        'sg_raw': [('-r 4096 /dev/sg1 b8 *', ELEMENTS, 0)],
        'sg_logs': LAB_SG_LOGS,
        'sg_read_attr': [('--readonly /dev/sg0', MAM_HP6, 0)],
    }
    tools.update(replace)
    return scripted_tools(tmp_path, monkeypatch, tools)


@pytest.fixture
def host(tmp_path, monkeypatch):
    root = tmp_path / 'sys'
    lab_ma1_sysfs(root)
    monkeypatch.setattr(D, 'SYS_ROOT', str(root))
    return root


def return_keys(section):
    spec = yaml.safe_load(tape_drive_info.RETURN)
    return set(spec[section]['contains'])


@pytest.fixture(autouse=True)
def said(monkeypatch):
    """What the module warned, in order."""
    return module_warnings(monkeypatch)


LAB_CALLS = [
    'mtx -f /dev/sg1 status',
    'sg_raw -r 4096 /dev/sg1 b8 04 00 00 00 40 03 00 10 00 00 00',
    'sg_read_block_limits -H /dev/sg0',
    'mt -f /dev/nst0 status',
    'sg_logs -p 0x00 /dev/sg0',
    # the health pages the drive lists (0x02, 0x03, 0x1b, 0x32) beside the others; it lists no 0x11 or 0x30
    'sg_logs -p 0x02 /dev/sg0',
    'sg_logs -p 0x03 /dev/sg0',
    'sg_logs -p 0x0c /dev/sg0',
    'sg_logs -p 0x14 /dev/sg0',
    'sg_logs -p 0x17 /dev/sg0',
    'sg_logs -p 0x1b /dev/sg0',
    'sg_logs -p 0x2e /dev/sg0',
    'sg_logs -H -p 0x32 /dev/sg0',
    'sg_logs -H -p 0x34 /dev/sg0',
    # a cartridge is loaded: its memory, read-only
    'sg_read_attr --readonly /dev/sg0',
]


def test_the_mt_stand_in_gives_the_status_lab_ma1_recorded():
    from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _mt
    assert _mt.parse_mt_status(MT_STATUS.text) == recorded_drive()['mt_status']


@pytest.mark.parametrize('check_mode', [False, True], ids=['run', 'check_mode'])
def test_a_lab_host_is_discovered_as_the_recorded_run_found_it(tmp_path, monkeypatch, host, check_mode, said,
                                                               recorded_lab_run):
    recorded = recorded_lab_run.strip(recorded_drive())
    lab_ma1_tools(tmp_path, monkeypatch)
    # the drive settings as today's lab inventory gives them (their sync_mark_s: tests/unit/conftest.py)
    setting = recorded_lab_run.settings(lab_setting(recorded))
    failed, result = run_module(tape_drive_info.main, {'drive_settings': [setting]}, monkeypatch,
                                check_mode=check_mode)
    assert not failed, result
    assert result['changed'] is False
    assert tool_calls(tmp_path) == LAB_CALLS     # read-only: the same commands in check mode
    (drive,) = result['drives']
    # the cartridge memory was read: no reason why not
    assert set(drive) == return_keys('drives') - {'cartridge_memory_reason'}
    same = ('nst', 'st', 'sg', 'hctl', 'vendor', 'product', 'revision', 'serial', 'serial_hex', 'block_limits',
            'block_size', 'density_code', 'media_loaded', 'write_protected', 'busy', 'mt_status', 'mt_error',
            'st_options', 'stats', 'mtweofi_supported', 'mtweofi_basis', 'hung', 'link', 'generation', 'drive_model',
            'warnings')
    assert recorded_lab_run.strip({k: drive[k] for k in same}) == {k: recorded[k] for k in same}
    assert drive['drive_model']['sync_mark_s'] == 3.0 and 'sync_mark_s' not in drive['drive_model']['estimated']
    # the drive's identity as the one resolver gave it: LTO-5 FH from the inventory, the cartridge as the medium
    assert drive['generation']['generation'] == 5 and drive['generation']['source'] == 'inventory'
    assert drive['generation']['medium']['code'] == '0x58'
    assert drive['hba_max_transfer_bytes'] is None or os.path.exists('/dev/sg0')
    # tgt cut the identifier after "10": matched as the only drive it is a prefix of (lab-ma1 recorded a full one)
    assert drive['changer'] == {'sg': '/dev/sg1', 'element': 0, 'element_address': 500, 'matched_by': 'serial_prefix'}
    assert drive['barcode'] == '000057L5'
    logs = drive['log_pages']
    assert logs['supported'] == [0x00, 0x02, 0x03, 0x0c, 0x14, 0x17, 0x1b, 0x2e, 0x32, 0x34]
    assert sorted(logs['pages']) == ['0x02', '0x03', '0x0c', '0x14', '0x17', '0x1b', '0x2e', '0x32', '0x34']
    assert logs['errors'] == {} and logs['unsupported_reason'] is None
    assert logs['pages']['0x17']['volume_serial_number'] == 'MA3001L8'
    # the health pages as the judge reads them: the HP Ultrium 6's counters, the lab drive's 0x32 read as hex
    assert _sg_logs.error_counters(logs['pages']['0x03'], 0x03)['rewrites_or_rereads'] == 0
    assert _sg_logs.data_compression(logs['pages']['0x32'], 0x32)['tape_written_bytes'] is not None
    memory = drive['cartridge_memory']
    assert (memory['medium_serial'], memory['load_count'], memory['maximum_capacity_mib']) == (
        'EW7VWMVKF6', 1, 2499053)
    assert memory['medium_type_name'] == 'data' and memory['tape_alert_active'] == []
    (changer,) = result['changers']
    assert set(changer) == return_keys('changers') | {'hctl', 'revision'}
    assert (changer['hctl'], changer['sg']) == ('0:0:2:0', '/dev/sg1')
    assert (changer['vendor'], changer['product']) == ('STK', 'L700')
    assert changer['error'] is None
    assert changer['warnings'] == ['READ ELEMENT STATUS announced 58 bytes of element pages, 50 arrived',
                                   'element descriptor at byte 16 is cut short (42 of 50 bytes)',
                                   'device identifier of element 500 is cut short (26 of 34 bytes)']
    assert [e['address'] for e in changer['elements']] == [500]
    # the changer's warnings are warned too, not only returned
    assert said == TGT_CHANGER_SAID == ['changer /dev/sg1: %s' % w for w in changer['warnings']]


def test_a_host_without_tape_drives_or_changers_reports_none_and_runs_no_tool(tmp_path, monkeypatch, said):
    root = tmp_path / 'sys'
    st_driver(root)        # st loaded, nothing bound to it (the kernel still has class/scsi_tape)
    (root / 'class' / 'scsi_tape').mkdir(parents=True)
    monkeypatch.setattr(D, 'SYS_ROOT', str(root))
    lab_ma1_tools(tmp_path, monkeypatch)
    failed, result = run_module(tape_drive_info.main, {}, monkeypatch)
    assert not failed and result == {'changed': False, 'drives': [], 'changers': []}
    assert tool_calls(tmp_path) == [] and said == []


def test_a_host_without_sysfs_scsi_is_the_same_empty_answer(tmp_path, monkeypatch):
    monkeypatch.setattr(D, 'SYS_ROOT', str(tmp_path / 'no-sys'))
    failed, result = run_module(tape_drive_info.main, {}, monkeypatch, check_mode=True)
    assert not failed and (result['drives'], result['changers']) == ([], [])


def test_missing_tools_leave_the_drive_reported_with_what_failed(tmp_path, monkeypatch, host, said):
    # None of mt, sg3_utils, mtx installed: the drive is still there from sysfs, each unknown says why
    empty = tmp_path / 'empty-bin'
    empty.mkdir()
    monkeypatch.setenv('PATH', str(empty))
    failed, result = run_module(tape_drive_info.main, {}, monkeypatch)
    assert not failed, result
    (drive,) = result['drives']
    recorded = recorded_drive()
    assert (drive['vendor'], drive['product'], drive['serial']) == (recorded['vendor'], recorded['product'],
                                                                    recorded['serial'])
    # mt is not installed: said so with its package, as mtx below
    assert drive['mt_error'] == ('mt is not installed on this host (not found on PATH %s). Install the mt-st package '
                                 '(Debian/Ubuntu: apt install mt-st; RHEL: dnf install mt-st) and run again.' % empty)
    assert (drive['mt_status'], drive['media_loaded'], drive['write_protected'], drive['density_code']) == (
        None, None, None, None)
    assert drive['block_limits'] == {'min': None, 'max': None, 'granularity': None}
    assert drive['log_pages']['supported'] == [] and drive['log_pages']['pages'] == {}
    assert drive['hung'] is None and drive['barcode'] is None and drive['changer'] is None
    # INQUIRY alone names the drive; with no cartridge known there is no medium
    assert drive['generation']['generation'] == 5 and drive['generation']['source'] == 'inquiry'
    assert drive['generation']['medium'] is None
    (changer,) = result['changers']
    # mtx that is not installed is said to be missing, with its package; not mtx's "could not open the changer",
    # which a missing tool's "No such file or directory" used to read as
    missing = 'mtx is not installed on this host (not found on PATH %s).' % empty
    assert changer['error'] == missing
    assert changer['status']['error_hint'] == ('Install the mtx package (Debian/Ubuntu: apt install mtx; RHEL: '
                                               'dnf install mtx) and run again.')
    assert changer['elements'] == [] and changer['warnings'] == []
    assert said == ['changer /dev/sg1: %s %s' % (missing, changer['status']['error_hint'])]


def test_output_cut_short_or_garbage_is_a_warning_not_a_failure(tmp_path, monkeypatch, host, said):
    status = MT_STATUS.text
    cut = status[:status.index('Soft error count')]
    lab_ma1_tools(tmp_path, monkeypatch, **{
        'mt': [('-f /dev/nst0 status', Derived(cut, 'the mt status above cut before its soft error count and '
                                                    'status bits, as a capture that lost its end'), 0)],
        'mt-st': [('-f /dev/nst0 status', Derived(cut, 'the same cut mt status'), 0)],
        'mtx': [('-f /dev/sg1 status', 'mtx/mtx_status_partial__mhVTL-STK-L700-after-load-elided__2.txt', 0)],
        'sg_read_block_limits': [('-H /dev/sg0', Derived('\xff\xfe garbage\n', 'bytes that are no hex dump'), 0)],
        'sg_logs': [('-p 0x00 /dev/sg0', LAB_LOGS % '00', 0),
                    ('*', Derived(' 00     34\n', 'a log page cut after its first byte'), 0)],
    })
    failed, result = run_module(tape_drive_info.main, {}, monkeypatch)
    assert not failed, result
    (drive,) = result['drives']
    assert drive['mt_error'] is None and drive['mt_status']['complete'] is False
    assert drive['density_code'] == '0x58' and drive['block_size'] == 0
    # the status bits were cut off: loaded and write protection are unknown, never "no"
    assert (drive['media_loaded'], drive['write_protected']) == (None, None)
    assert drive['block_limits'] == {'min': None, 'max': None, 'granularity': None}
    assert drive['barcode'] == 'F01039L5'
    pages = ('0x02', '0x03', '0x0c', '0x14', '0x17', '0x1b', '0x2e', '0x32', '0x34')
    assert tuple(sorted(drive['log_pages']['pages'])) == pages
    cut_page = 'LOG SENSE data of 1 bytes is shorter than its 4-byte header'
    assert drive['warnings'] == ['mt-st output without status bits (cut short?): those fields are unknown'] + [
        'log page %s: %s' % (page, cut_page) for page in pages]
    # whether a cartridge is loaded is unknown: its memory is not asked for
    assert 'sg_read_attr' not in ' '.join(tool_calls(tmp_path))
    assert drive['cartridge_memory_reason'] == 'not known whether a cartridge is loaded (mt status did not say)'
    assert said[:len(drive['warnings'])] == ['/dev/nst0: %s' % w for w in drive['warnings']]
    assert tool_calls(tmp_path)[3:5] == ['mt -f /dev/nst0 status', 'mt-st -f /dev/nst0 status']
    (changer,) = result['changers']
    assert changer['error'] is None and changer['status']['complete'] is False
    assert changer['warnings'] == [
        "unrecognised line: '[root@centos1 ~]# mtx -f /dev/sg9 status'", "unrecognised line: '.....'",
        'the header announces 4 drives and 43 slots, the listing has 4 and 0',
        'READ ELEMENT STATUS announced 58 bytes of element pages, 50 arrived',
        'element descriptor at byte 16 is cut short (42 of 50 bytes)',
        'device identifier of element 500 is cut short (26 of 34 bytes)']
    assert said[len(drive['warnings']):] == ['changer /dev/sg1: %s' % w for w in changer['warnings']]


def test_a_changer_that_fails_is_named_with_what_mtx_said(tmp_path, monkeypatch, host, said):
    lab_ma1_tools(tmp_path, monkeypatch, mtx=[
        ('-f /dev/sg1 status', 'mtx/mtx_status_error__IBM-33614LX-not-ready__1.txt:stderr', 1)])
    failed, result = run_module(tape_drive_info.main, {}, monkeypatch)
    assert not failed
    (changer,) = result['changers']
    assert changer['error'] == 'READ ELEMENT STATUS Command Failed'
    assert changer['status']['sense']['sense_key'] == 'Not Ready'
    # the drive still matches its element from READ ELEMENT STATUS; its barcode is unknown without mtx status
    (drive,) = result['drives']
    assert drive['changer']['element_address'] == 500 and drive['barcode'] is None
    assert said == ['changer /dev/sg1: READ ELEMENT STATUS Command Failed %s'
                    % changer['status']['error_hint']] + TGT_CHANGER_SAID


def test_tools_that_time_out_stop_the_commands_to_their_device(tmp_path, monkeypatch, host, said):
    # sg_read_block_limits on the drive's sg node and mtx on the changer sleep past tool_timeout (1 s): each is
    # stopped, and discovery sends nothing more to that node (HungGuard); the drive's st node still answers.
    lab_ma1_tools(tmp_path, monkeypatch, sg_read_block_limits=[('*', Sleeps(30), 0)], mtx=[('*', Sleeps(30), 0)])
    failed, result = run_module(tape_drive_info.main, {'tool_timeout': 1}, monkeypatch)
    assert not failed, result
    assert tool_calls(tmp_path) == ['mtx -f /dev/sg1 status', 'sg_read_block_limits -H /dev/sg0',
                                    'mt -f /dev/nst0 status']
    (changer,) = result['changers']
    assert changer['error'] == 'The changer does not answer: mtx did not finish within 1 seconds.'
    assert changer['elements'] == []
    (drive,) = result['drives']
    assert drive['hung'] == 'sg_read_block_limits did not finish within 1 seconds.'
    assert drive['mt_status']['density_code'] == 0x58
    assert drive['log_pages']['errors'] == {'0x00': 'Not run: sg_read_block_limits did not finish within 1 seconds.'}
    assert said == [
        '/dev/nst0 does not answer: sg_read_block_limits did not finish within 1 seconds.',
        'changer /dev/sg1: The changer does not answer: mtx did not finish within 1 seconds. %s'
        % changer['status']['error_hint']]


def test_a_drive_the_model_does_not_know_is_reported_with_what_to_set(tmp_path, monkeypatch):
    root = tmp_path / 'sys'
    lab_ma1_sysfs(root, vendor='ACME', product='TAPE 3000')
    monkeypatch.setattr(D, 'SYS_ROOT', str(root))
    lab_ma1_tools(tmp_path, monkeypatch)
    failed, result = run_module(tape_drive_info.main, {'log_pages': False}, monkeypatch)
    assert not failed
    (drive,) = result['drives']
    assert (drive['vendor'], drive['product']) == ('ACME', 'TAPE 3000')
    generation = drive['generation']
    # no LTO drive in the product ID: the LTO-5 cartridge's density names the generation, with the caveat
    assert (generation['generation'], generation['source']) == (5, 'density')
    assert generation['mechanism'] is None or generation['mechanism']['generation'] is None
    assert generation['notes'] and drive['drive_model']['generation'] == 5
    assert drive['log_pages'] is None
    assert 'sg_logs' not in ' '.join(tool_calls(tmp_path))


def test_an_inventory_entry_the_resolver_cannot_read_costs_only_the_entry(tmp_path, monkeypatch, host, said):
    lab_ma1_tools(tmp_path, monkeypatch)
    failed, result = run_module(tape_drive_info.main, {'log_pages': False, 'drive_settings': [
        {'nst': '/dev/nst0', 'generation': 'LTO-99'}]}, monkeypatch)
    assert not failed
    (drive,) = result['drives']
    assert drive['generation']['source'] == 'inquiry' and drive['generation']['inventory'] == {}
    (warning,) = drive['warnings']
    assert warning.endswith('; the drive is identified without its tapeops_drives entry')
    assert said == ['/dev/nst0: %s' % warning] + TGT_CHANGER_SAID


@pytest.mark.parametrize('devices,found', [(['/dev/nst0'], ['/dev/nst0']), (['nst0'], ['/dev/nst0']),
                                           (['/dev/nst1'], [])])
def test_only_the_devices_asked_for(tmp_path, monkeypatch, host, devices, found):
    lab_ma1_tools(tmp_path, monkeypatch)
    failed, result = run_module(tape_drive_info.main, {'devices': devices, 'log_pages': False}, monkeypatch)
    assert not failed and [d['nst'] for d in result['drives']] == found
    assert len(result['changers']) == 1


@pytest.mark.parametrize('timeout', [0, -5])
def test_tool_timeout_must_be_positive(monkeypatch, timeout):
    failed, result = run_module(tape_drive_info.main, {'tool_timeout': timeout}, monkeypatch)
    assert failed and result['msg'] == 'tool_timeout must be a positive number of seconds, got %d.' % timeout


def test_an_lto10_drive_without_vpd_in_sysfs_serial_from_sg_inq_and_no_log_sense(tmp_path, monkeypatch, said):
    # The IBM LTO-10 of a TS4500 as one public test report captured it (nst1, sg2, no cartridge): sg_inq and mt
    # status from that report; this kernel exports no vpd_pg80, so the serial comes from sg_inq. H:C:T:L and the
    # missing changer are this test's choice. sg_logs answers as tgt does (captured on lab-ma1, in
    # test_tape_discovery.py): no LOG SENSE, which is reported, not a failure.
    root = tmp_path / 'sys'
    st_driver(root)
    device = scsi_device(root, '2:0:1:0', {'vendor': 'IBM     ', 'model': 'ULT3580-TDA     ', 'rev': 'T3S0',
                                           'type': '1'}, sg='sg2')
    tape_node(root, 'nst1', device)
    monkeypatch.setattr(D, 'SYS_ROOT', str(root))
    scripted_tools(tmp_path, monkeypatch, {
        'sg_inq': [('-p 0x80 /dev/sg2', 'sg_inq/sg_inq__IBM-ULT3580-TDA-T3S0-LTO10__1.txt', 0)],
        'sg_read_block_limits': [('-H /dev/sg2', BLOCK_LIMITS, 0)],
        'mt': [('-f /dev/nst1 status', 'mt/mt_status_mtst__IBM-ULT3580-TDA-LTO10-no-tape__1.txt', 0)],
        'sg_logs': [('-p 0x00 /dev/sg2', Derived('log_sense: not supported\nsg_logs failed: Illegal request, '
                                                 'Invalid opcode\n', "tgt's answer to LOG SENSE on lab-ma1",
                                                 stream='stderr'), 9)],
    })
    failed, result = run_module(tape_drive_info.main, {}, monkeypatch)
    assert not failed, result
    assert tool_calls(tmp_path) == ['sg_inq -p 0x80 /dev/sg2', 'sg_read_block_limits -H /dev/sg2',
                                    'mt -f /dev/nst1 status', 'sg_logs -p 0x00 /dev/sg2']
    assert result['changers'] == []
    (drive,) = result['drives']
    assert (drive['nst'], drive['st'], drive['sg'], drive['hctl']) == ('/dev/nst1', '/dev/st1', '/dev/sg2', '2:0:1:0')
    assert (drive['serial'], drive['serial_hex']) == ('607B811E03', None)
    assert (drive['media_loaded'], drive['density_code'], drive['block_size']) == (False, '0x00', 0)
    assert (drive['st_options'], drive['stats']) == (None, None)      # this tree has neither
    generation = drive['generation']
    assert (generation['generation'], generation['source'], generation['medium']) == (10, 'inquiry', None)
    assert drive['drive_model']['generation'] == 10
    logs = drive['log_pages']
    assert logs['supported'] == [] and logs['errors'] == {} and logs['pages'] == {}
    assert 'Invalid opcode' in logs['unsupported_reason']
    assert said == []


def test_log_sense_after_a_unit_attention_is_asked_once_more_then_reported(tmp_path, monkeypatch, host, said):
    # sg3_utils exits 6 (SG_LIB_CAT_UNIT_ATTENTION) on a unit attention; this drive keeps answering with one
    lab_ma1_tools(tmp_path, monkeypatch, sg_logs=[('-p 0x00 /dev/sg0', Derived(
        'log_sense: Unit attention\n', 'the unit attention sg3_utils reports after a cartridge change',
        stream='stderr'), 6)])
    failed, result = run_module(tape_drive_info.main, {}, monkeypatch)
    assert not failed
    assert [c for c in tool_calls(tmp_path) if c.startswith('sg_logs')] == ['sg_logs -p 0x00 /dev/sg0'] * 2
    logs = result['drives'][0]['log_pages']
    assert logs['errors'] == {'0x00': 'unit attention (media changed or mode parameters changed); retry once'}
    assert logs['unsupported_reason'] is None and logs['pages'] == {}
    assert said == TGT_CHANGER_SAID  # the unit attention is the page's error, not a warning


def test_a_log_page_that_fails_is_an_error_of_that_page_only(tmp_path, monkeypatch, host):
    refused = Derived('log_sense: Illegal request, Invalid field in cdb\n', 'an ILLEGAL REQUEST as sg3_utils '
                      'words it, for a page the drive lists but refuses', stream='stderr')
    lab_ma1_tools(tmp_path, monkeypatch, sg_logs=[
        case if case[0] != '-p 0x14 /dev/sg0' else (case[0], refused, 5) for case in LAB_SG_LOGS])
    failed, result = run_module(tape_drive_info.main, {}, monkeypatch)
    assert not failed
    logs = result['drives'][0]['log_pages']
    assert logs['errors'] == {'0x14': 'log_sense: Illegal request, Invalid field in cdb'}
    assert sorted(logs['pages']) == ['0x02', '0x03', '0x0c', '0x17', '0x1b', '0x2e', '0x32', '0x34']
    assert logs['pages']['0x17']['volume_serial_number'] == 'MA3001L8'


MAM_CUT = Derived(fixture_text(MAM_HP6)[:fixture_text(MAM_HP6).index('Load count') + 7],
                  'the HP Ultrium 6 cartridge memory above cut in its fourth attribute, as a capture that lost its end')


@pytest.mark.parametrize('answer,rc,memory,reason', [
    # sg3_utils issue 101's LTO-4 on an Adaptec card: READ ATTRIBUTE fails in transport
    ('sg_read_attr/sg_read_attr_fail__LTO4-Adaptec-DID_ABORT-sg3_utils-issue101__1.txt:stderr', 3, None,
     'read attribute: transport: Host_status=0x05 [DID_ABORT]'),
    # a drive without READ ATTRIBUTE (tgt answers every unknown command so), sg_read_attr's own words
    (Derived('Read attribute command not supported\n', "sg_read_attr's message (src/sg_read_attr.c) for an invalid "
             'opcode', stream='stderr'), 9, None,
     'the drive has no READ ATTRIBUTE: Read attribute command not supported'),
    (Derived('\xff\xfe garbage\n', 'bytes that are no attribute listing'), 0, None,
     "sg_read_attr printed no attribute (line not read: '\xff\xfe garbage')"),
    (MAM_CUT, 0, {'remaining_capacity_mib': 2499053, 'maximum_capacity_mib': 2499053, 'load_count': None}, None),
], ids=['transport-failure', 'unsupported', 'garbage', 'cut-short'])
def test_a_cartridge_memory_that_cannot_be_read_stays_unknown_and_discovery_goes_on(
        tmp_path, monkeypatch, host, said, answer, rc, memory, reason):
    lab_ma1_tools(tmp_path, monkeypatch, sg_read_attr=[('--readonly /dev/sg0', answer, rc)])
    failed, result = run_module(tape_drive_info.main, {}, monkeypatch)
    assert not failed, result
    (drive,) = result['drives']
    assert drive.get('cartridge_memory_reason') == reason
    if memory is None:
        assert 'cartridge_memory' not in drive
    else:
        assert dict((k, drive['cartridge_memory'][k]) for k in memory) == memory
    # the rest of discovery as on the whole host
    assert drive['barcode'] == '000057L5' and len(drive['log_pages']['pages']) == 9
    assert said == TGT_CHANGER_SAID


def test_sg_read_attr_not_installed_says_which_package(tmp_path, monkeypatch, host):
    bindir = lab_ma1_tools(tmp_path, monkeypatch)
    (bindir / 'sg_read_attr').unlink()
    # the scripted tools' own cat, and no sg_read_attr anywhere on PATH
    shell = tmp_path / 'shell-bin'
    shell.mkdir()
    (shell / 'cat').symlink_to(shutil.which('cat'))
    monkeypatch.setenv('PATH', '%s%s%s' % (bindir, os.pathsep, shell))
    failed, result = run_module(tape_drive_info.main, {}, monkeypatch)
    assert not failed, result
    reason = result['drives'][0]['cartridge_memory_reason']
    assert reason.startswith('sg_read_attr is not installed on this host') and 'sg3-utils' in reason, reason


def test_cartridge_memory_false_sends_no_read_attribute(tmp_path, monkeypatch, host):
    lab_ma1_tools(tmp_path, monkeypatch)
    failed, result = run_module(tape_drive_info.main, {'cartridge_memory': False}, monkeypatch)
    assert not failed
    assert tool_calls(tmp_path) == LAB_CALLS[:-1]
    assert result['drives'][0]['cartridge_memory_reason'] == 'not asked (cartridge_memory: false)'
