# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""molecule verify (testinfra) on mhvtl: the collection's findings against mhvtl's own idea of its devices.

- identity and generation per drive, against mhvtl's own device.conf (read on the target);
- the changer's slots and barcodes, against mhvtl's library_contents;
- the WORM and the cleaning cartridge (listed in allowed_barcodes) and an unlisted data cartridge refused by
  the write test, each drive's st write counter unchanged by them;
- one verdict per drive, whose report says the drive rate came from a device without tape physics (mhvtl has
  no timing, so no speed class is asserted);
- discovery decodes every log page mhvtl serves of those it reads, and judges each drive's health from them,
  with what mhvtl does not serve left unknown;
- the media inventory reads every cartridge of library_contents where mhvtl put it, each by its label: its
  generation from the media ID, WORM and cleaning cartridges as such.
"""

import glob
import importlib.util
import json
import os
import re
import xml.etree.ElementTree as ET

import pytest
import yaml

EPHEMERAL = os.environ.get('MOLECULE_EPHEMERAL_DIRECTORY', '')
TARGET = os.environ.get('TAPEOPS_MHVTL_TARGET') or 'lab'
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
_spec = importlib.util.spec_from_file_location('tapelab_mhvtl', os.path.join(ROOT, 'lab', 'tapelab_mhvtl.py'))
tm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tm)
# The write test's refusal for each kind of cartridge: WORM by its label (mhvtl's log page 0x17 says WORM: 0
# even for a WORM cartridge); a data cartridge that is not listed is not overwritten; a cleaning cartridge by
# its label (the changer's barcode), before the drive is opened: with one in it the mhvtl drive stays not ready
# and the st driver's open blocks (seen with mhvtl fc22cc6: the gate gave up at its deadline, op_timeout).
REFUSED_AS = {'worm': 'worm', 'cleaning': 'cleaning', 'data': 'media_has_data'}
NO_PHYSICS = 'came from a device without tape physics'
# The log pages discovery reads (plugins/module_utils/_measure/_tape_discovery.py DISCOVERY_PAGES: the write
# benchmark's and the health pages), and those of them every LTO drive mhvtl fc22cc6 emulates here serves (its
# sg_logs -p 0x00: tests/unit/fixtures/sg_logs/sg_logs_p0x00__mhvtl-*). Its IBM drives also serve DT device
# status (0x11), its HP ones not; none serves device statistics (0x14), data compression 0x1B or HP's page 0x34.
DISCOVERY_PAGES = ('0x02', '0x03', '0x0c', '0x11', '0x14', '0x17', '0x1b', '0x2e', '0x30', '0x32', '0x34')
MHVTL_PAGES = ('0x02', '0x03', '0x0c', '0x17', '0x2e', '0x30', '0x32')
# Health pages mhvtl serves whatever the drive holds
DRIVE_PAGES = ('0x02', '0x03', '0x2e')
# LTO label media IDs (the LTO label specification): data L1..L9, WORM LT..LZ for LTO-3..LTO-9 (the lab's table)
GENERATION_OF = dict(('L%d' % g, g) for g in range(1, 10))
GENERATION_OF.update((media_id, g) for g, media_id in tm.WORM_MEDIA_ID.items())


def _json(name):
    path = os.path.join(EPHEMERAL, name)
    assert os.path.exists(path), '%s is missing: did prepare and converge run?' % path
    with open(path) as f:
        return json.load(f)


def _run_dir():
    runs = sorted(d for d in glob.glob(os.path.join(EPHEMERAL, 'reports', '*'))
                  if os.path.isdir(os.path.join(d, 'hosts')))
    assert runs, 'no run directory under %s/reports' % EPHEMERAL
    return runs[-1]


def _generation(product):
    """LTO generation in an IBM, HP or Quantum product ID (ULT3580-TD5, Ultrium 6-SCSI, ULTRIUM-HH7)."""
    match = re.search(r'(?:TD|HH)(\d)$|^Ultrium (\d)-', product)
    assert match, 'not an LTO product ID mhvtl emulates: %r' % product
    return int(match.group(1) or match.group(2))


@pytest.fixture()
def conf(host):
    """mhvtl's own device.conf, as the target runs it."""
    return tm.parse_device_conf(host.file(tm.CONFIG_DIR + '/device.conf').content_string)


@pytest.fixture()
def facts():
    return _json('mhvtl-facts.json')


@pytest.fixture()
def doc():
    path = os.path.join(_run_dir(), 'hosts', 'mhvtl-host.json')
    assert os.path.exists(path), path
    with open(path) as f:
        return json.load(f)


def test_mhvtl_module_loaded(host):
    assert 'mhvtl ' in host.file('/proc/modules').content_string


def test_every_drive_is_what_device_conf_says_in_sysfs_and_in_the_report(host, conf, facts, doc):
    assert conf['drives'], 'device.conf names no drive'
    nst_of = {(d['channel'], d['target'], d['lun']): d['nst'] for d in facts['drives']}
    reported = {d['nst']: d for d in doc['drives']}
    for drive in conf['drives']:
        nst = nst_of[(drive['channel'], drive['target'], drive['lun'])]
        sysfs = '/sys/class/scsi_tape/%s/device/' % os.path.basename(nst)
        # the kernel's INQUIRY of the drive at that address
        assert (host.file(sysfs + 'vendor').content_string.strip(),
                host.file(sysfs + 'model').content_string.strip()) == (drive['vendor'], drive['product']), nst
        # the collection's report: the same identity, serial and LTO generation
        entry = reported[nst]
        identity = entry['identity']
        assert (identity['vendor'], identity['product'], identity['serial']) == (
            drive['vendor'], drive['product'], drive['serial']), nst
        assert identity['generation']['generation'] == _generation(drive['product']), nst
        assert identity['generation']['inventory'] == {'physics': False}, nst


def test_the_changer_holds_the_slots_and_barcodes_of_library_contents(host, facts):
    library = facts['libraries'][0]
    contents = tm.parse_library_contents(
        host.file('%s/library_contents.%d' % (tm.CONFIG_DIR, library['id'])).content_string)
    out = host.check_output('timeout -k 5 60 mtx -f %s status' % library['sg'])
    head = re.search(r'(\d+) Drives, (\d+) Slots \( (\d+) Import/Export \)', out)
    assert head, out
    slots = len(contents['slots']) + len(contents['maps'])     # mtx counts the import/export slots as slots
    assert [int(n) for n in head.groups()] == [len(contents['drives']), slots, len(contents['maps'])]
    tags = re.findall(r'VolumeTag ?= ?(\S+)', out)
    assert sorted(tags) == sorted(b for b in contents['slots'].values() if b)


def test_worm_cleaning_and_unlisted_data_cartridges_are_refused_and_not_written():
    refusals = _json('refusals.json')
    kinds = sorted(r['kind'] for r in refusals)
    if TARGET == 'lab':
        assert kinds == ['cleaning', 'data', 'worm'], refusals
    assert refusals, 'no cartridge was offered (set TAPEOPS_MHVTL_DATA_BARCODES for a data cartridge)'
    for offer in refusals:
        what = '%s %s' % (offer['kind'], offer['barcode'])
        # refused: the gate's reason, no decision to write, nothing written
        assert offer['reason'] == REFUSED_AS[offer['kind']], '%s: %s %s' % (what, offer['msg'], offer['media_decision'])
        assert offer['media_decision'] is None, what
        assert offer['write_cnt_after'] == offer['write_cnt_before'], '%s was written to' % what
        # ... the WORM and the cleaning cartridge although their barcodes were allowed
        assert offer['listed'] == (offer['kind'] != 'data'), what


def test_a_verdict_per_drive_and_each_says_its_rate_came_from_a_device_without_physics(doc):
    assert doc['host'] == 'mhvtl-host' and doc['error'] is None, doc.get('error')
    for drive in doc['drives']:
        verdicts = [v for v in doc['verdicts'] if v['drive'] == drive['id']]
        assert len(verdicts) == 1 and verdicts[0]['class'] and verdicts[0]['summary'], drive['nst']
        # no speed class is asserted: mhvtl has no timing; the report must say where its rate came from
        said = [f for f in verdicts[0]['findings'] if f['id'] == 'no_physics']
        assert len(said) == 1 and NO_PHYSICS in said[0]['text'], drive['nst']
    with open(os.path.join(_run_dir(), 'summary.md')) as f:
        assert f.read().count(NO_PHYSICS) == len(doc['drives'])


def test_junit_has_one_case_per_drive_and_no_error(doc):
    suite = ET.parse(os.path.join(_run_dir(), 'junit.xml')).getroot().find('testsuite')
    cases = suite.findall('testcase')
    assert sorted(c.get('classname') for c in cases) == ['mhvtl-host'] * len(doc['drives'])
    assert suite.get('errors') == '0'
    assert all(c.find('error') is None for c in cases)


def _allowed():
    """The barcodes qualify was allowed to write: the lab guest's, or TAPEOPS_MHVTL_ALLOWED_BARCODES."""
    if TARGET == 'lab':
        with open(os.path.join(os.environ['TAPEOPS_LAB_DIR'], 'host_vars', 'lab-ma1.yml')) as f:
            return set(yaml.safe_load(f)['tapeops_allowed_barcodes'])
    return set(yaml.safe_load(os.environ.get('TAPEOPS_MHVTL_ALLOWED_BARCODES') or '[]') or [])


def test_qualify_wrote_to_a_drive_only_when_its_cartridge_is_allowed(doc):
    allowed = _allowed()
    for drive in doc['drives']:
        barcode = drive['identity'].get('barcode')
        steps = (drive.get('write_sweep') or {}).get('sweep') or []
        if barcode in allowed:
            assert steps, '%s holds allowed %s but was not measured' % (drive['nst'], barcode)
        else:
            assert not steps, '%s holds %s, not allowed, and was written to' % (drive['nst'], barcode)


def test_discovery_decodes_every_log_page_mhvtl_serves_and_judges_the_drives_health(doc):
    for drive in doc['drives']:
        nst, read = drive['nst'], drive['identity']['log_pages']
        supported = set('0x%02x' % p for p in read['supported'])
        assert set(MHVTL_PAGES) <= supported, (nst, sorted(supported))
        # every page discovery reads that this drive serves is decoded, and no other is asked for
        served = [c for c in DISCOVERY_PAGES if c in supported]
        wanted = served if drive['identity'].get('media_loaded') else [c for c in DRIVE_PAGES if c in served]
        for code in wanted:
            assert read['pages'].get(code) and code not in read['errors'], (nst, code, read['errors'])
        for code in DISCOVERY_PAGES:
            if code not in supported:
                assert code not in read['pages'] and code not in read['errors'], (nst, code)
        health = drive['health']
        assert health['status'] in ('OK', 'CLEAN', 'DEGRADED', 'FAILING'), (nst, health)
        counters = health['counters']
        assert counters['tape_alert']['page'] == '0x2e' and counters['tape_alert']['read'] > 0, (nst, counters)
        for name, code in (('write_errors', '0x02'), ('read_errors', '0x03')):
            assert counters[name]['page'] == code and isinstance(counters[name]['uncorrected'], int), (nst, name)
        # device statistics (0x14) not served: unknown, never a zero
        assert 'device' not in counters, (nst, counters.get('device'))


def test_the_media_inventory_reads_every_cartridge_where_mhvtl_put_it_by_its_label(host, facts):
    library = facts['libraries'][0]
    contents = tm.parse_library_contents(
        host.file('%s/library_contents.%d' % (tm.CONFIG_DIR, library['id'])).content_string)
    inventory = _json('media-inventory.json')
    [lib] = [entry for entry in inventory['libraries'] if entry['id'] == library['sg']]
    assert lib['error'] is None and lib['complete'] is True, lib
    # every barcode mhvtl's library holds, in a slot, the import/export element or a drive (moved from its slot)
    listed = sorted(b for b in list(contents['slots'].values()) + list(contents['maps'].values()) if b)
    assert sorted(c['barcode'] for c in lib['cartridges']) == listed
    kinds = set()
    for cart in lib['cartridges']:
        barcode, label = cart['barcode'], tm.label_kind(cart['barcode'])
        kinds.add(label)
        assert cart['kind'] == label, (barcode, cart['kind'])
        if label == 'cleaning':
            assert cart['cleaning'], barcode
            continue
        assert cart['generation'] == GENERATION_OF[barcode[-2:]] and cart['basis'] == 'label', (barcode, cart)
        assert cart['worm'] is (label == 'worm'), (barcode, cart['worm'])
    if TARGET == 'lab':
        assert kinds == {'data', 'worm', 'cleaning'}, kinds
    # the classification against an LTO-9: its cleaning cartridges listed apart, none counted as data
    [summary] = [entry for entry in inventory['summary']['libraries'] if entry['id'] == library['sg']]
    cleaning = sorted(c['barcode'] for c in lib['cartridges'] if c['kind'] == 'cleaning')
    assert sorted(c['barcode'] for c in summary['cleaning']) == cleaning
