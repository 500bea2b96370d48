# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Every parser against every real fixture, cut and damaged the way the world cuts and damages them.

- Each fixture cut at every line boundary and at random byte offsets, through
  its own parsers: no exception but the parser's documented parse error, and
  no value the full text does not give (a cut capture yields None or fewer
  entries, never a different number or barcode).
- Random byte flips (bytes that are not UTF-8 included) of every fixture, and
  arbitrary text, through every parser: no exception but the documented one.

Hypothesis runs derandomized (the same examples on every run, so CI is
reproducible) and without its example database. For a longer random hunt:
``TAPEOPS_FUZZ_EXAMPLES=5000 tools/run pytest tests/unit -k fuzz`` (random
seeds then).
"""

from __future__ import annotations

import glob
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _bconsole
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _btape
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _chio
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _fio
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _mt
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _mtx
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _scsi_inquiry as inq
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _sg_logs
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _sg_read_attr
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _st_sysfs
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _tape_discovery as disc
from ansible_collections.tapeops.qualify.plugins.module_utils._measure import _source_step
from ansible_collections.tapeops.qualify.plugins.module_utils._config import _amanda
from ansible_collections.tapeops.qualify.plugins.module_utils._config import _netbackup
from ansible_collections.tapeops.qualify.plugins.module_utils._config import _sd_config

from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._tape_fixtures import FIXTURES

_HUNT = int(os.environ.get('TAPEOPS_FUZZ_EXAMPLES') or 0)
FUZZ = settings(deadline=None, max_examples=_HUNT or 150, derandomize=not _HUNT, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _element_status(text):
    return disc.decode_element_status_ex(disc.parse_sg_raw_hex(text))


def _fio_log(text):
    return _fio.parse_log(text, [])


def _netbackup_files(data):
    # a NetBackup buffer file read as each of the settings (bytes as read from the file, or text)
    return [_netbackup.parse_value(key, data) for key, dummy, dummy2, dummy3 in _netbackup.SETTINGS]


# name: (function, the one exception it may raise or None)
PARSERS = {
    'sg_logs.parse_all': (_sg_logs.parse_all, None),
    'sg_logs.split_all': (_sg_logs.split_all, None),
    'sg_logs.parse_page': (_sg_logs.parse_page, None),
    'sg_logs.decode_page_0x0c': (lambda t: _sg_logs.decode_page(0x0c, t), None),
    'sg_logs.decode_page_0x2e': (lambda t: _sg_logs.decode_page(0x2e, t), None),
    'sg_logs.decode_page_0x34': (lambda t: _sg_logs.decode_page(0x34, t), None),
    'sg_logs.parse_hex_page': (_sg_logs.parse_hex_page, None),
    'sg_logs.parse_supported_pages': (_sg_logs.parse_supported_pages, None),
    'sg_logs.classify_failure': (lambda t: _sg_logs.classify_failure(1, t, t), None),
    'sg_read_attr.parse': (_sg_read_attr.parse, None),
    'sg_read_attr.parse_enumerate': (_sg_read_attr.parse_enumerate, None),
    'mt.parse_mt_status': (_mt.parse_mt_status, None),
    'mtx.parse_mtx_status': (_mtx.parse_mtx_status, None),
    'chio.parse_chio_status': (_chio.parse_chio_status, _chio.ChioParseError),
    'inq.parse_lsscsi': (inq.parse_lsscsi, None),
    'inq.parse_sg_inq': (inq.parse_sg_inq, None),
    'inq.parse_tapeinfo': (inq.parse_tapeinfo, None),
    'inq.parse_hex_bytes': (inq.parse_hex_bytes, None),
    'inq.parse_proc_scsi_scsi': (inq.parse_proc_scsi_scsi, inq.InquiryParseError),
    'inq.parse_lshw_tape': (inq.parse_lshw_tape, inq.InquiryParseError),
    'sysfs.parse_stats_text': (_st_sysfs.parse_stats_text, None),
    'sysfs.parse_stats_listing': (_st_sysfs.parse_stats_listing, None),
    'sysfs.parse_tapestat': (_st_sysfs.parse_tapestat, _st_sysfs.TapestatParseError),
    'sysfs.decode_options': (_st_sysfs.decode_options, None),
    'meminfo.mem_total_bytes': (_source_step.mem_total_bytes, None),
    'discovery.element_status': (_element_status, None),
    'fio.parse_json': (_fio.parse_json, _fio.FioParseError),
    'fio.parse_log': (_fio_log, _fio.FioParseError),
    'btape.parse_speed': (_btape.parse_speed, _btape.BtapeParseError),
    'sd_config.parse_daemon_version': (_sd_config.parse_daemon_version, None),
    'bconsole.parse_run': (_bconsole.parse_run, _bconsole.BconsoleParseError),
    'bconsole.parse_mount': (_bconsole.parse_mount, None),
    'bconsole.parse_wait': (_bconsole.parse_wait, _bconsole.BconsoleParseError),
    'bconsole.parse_cancel': (_bconsole.parse_cancel, None),
    'bconsole.parse_llist': (_bconsole.parse_llist, None),
    'bconsole.parse_joblog': (_bconsole.parse_joblog, None),
    'netbackup.parse_value': (_netbackup_files, None),
    'amanda.parse': (_amanda.parse, _amanda.AmandaConfError),
}
# Byte parsers: fed the raw bytes of every fixture.
BYTE_PARSERS = {
    'sg_logs.parse_log_parameters': (_sg_logs.parse_log_parameters, _sg_logs.SgLogsParseError),
    'discovery.decode_element_status_ex': (disc.decode_element_status_ex, None),
    'discovery.vpd80_serial': (disc.vpd80_serial, None),
    'inq.decode_read_block_limits': (inq.decode_read_block_limits, inq.InquiryParseError),
    'netbackup.parse_value': (_netbackup_files, None),
}

# The parsers that are meant for each fixture directory, with the check that a cut text gives no new value.
OWN = {
    'sg_logs': ('sg_logs.parse_all',),
    'sg_read_attr': ('sg_read_attr.parse',),
    'mt': ('mt.parse_mt_status',),
    'mtx': ('mtx.parse_mtx_status',),
    'chio': ('chio.parse_chio_status',),
    'proc_scsi_scsi': ('inq.parse_proc_scsi_scsi',),
    'lshw': ('inq.parse_lshw_tape',),
    'tapestat': ('sysfs.parse_tapestat',),
    'fio': ('fio.parse_log',),
    'btape': ('btape.parse_speed',),
    'lsscsi': ('inq.parse_lsscsi',),
    'tapeinfo': ('inq.parse_tapeinfo',),
    'sysfs': ('sysfs.parse_stats_text',),
    'bacula_sd': ('sd_config.parse_daemon_version',),
    # a cut file holds a shorter number (the file is the number): only that the cut parses without a traceback
    'netbackup': ('netbackup.parse_value',),
    # a cut tapetype is not closed (an error) or ends at a closing brace: no size it does not give whole
    'amanda': ('amanda.parse',),
    'proc_meminfo': ('meminfo.mem_total_bytes',),
}


def _all_fixtures():
    out = []
    for path in sorted(glob.glob(os.path.join(FIXTURES, '**', '*.txt'), recursive=True)):
        with open(path, 'rb') as handle:
            out.append((os.path.relpath(path, FIXTURES), handle.read()))
    return out


FIXTURE_BYTES = _all_fixtures()
FIXTURE_NAMES = [name for name, _raw in FIXTURE_BYTES]
RAW = dict(FIXTURE_BYTES)


def call(name, text):
    """Run parser ``name``; its declared error counts as an answer (returns None)."""
    func, error = PARSERS[name] if name in PARSERS else BYTE_PARSERS[name]
    try:
        return func(text)
    except Exception as exc:  # pylint: disable=broad-except
        if error is not None and isinstance(exc, error):
            return None
        raise AssertionError('%s raised %s: %s' % (name, type(exc).__name__, exc)) from exc


def own_parsers(fixture_name):
    directory = fixture_name.split(os.sep)[0]
    parsers = OWN.get(directory, ())
    if directory == 'fio' and '_json' in fixture_name:
        parsers = ('fio.parse_json',)
    if directory == 'bconsole':
        command = os.path.basename(fixture_name).split('__')[0]
        parsers = {'bconsole_run': ('bconsole.parse_run',), 'bconsole_run_unknown_job': ('bconsole.parse_run',),
                   'bconsole_mount': ('bconsole.parse_mount',), 'bconsole_wait': ('bconsole.parse_wait',),
                   'bconsole_cancel': ('bconsole.parse_cancel',),
                   'bconsole_llist_jobid': ('bconsole.parse_llist',),
                   'bconsole_list_joblog': ('bconsole.parse_joblog',)}.get(command, ())
    return parsers


# ------------------------------------------------------------ "no value it did not read"

def _same_or_none(cut, full, keys, where):
    for key in keys:
        if cut.get(key) is not None:
            assert cut[key] == full.get(key), '%s: %s=%r, the full text gives %r' % (
                where, key, cut[key], full.get(key))


def check_no_new_value(parser, cut, full, where):
    """A parse of a cut text holds no value the full text does not give."""
    if cut is None or full is None:
        return
    if parser == 'mt.parse_mt_status':
        if cut['format'] == full['format']:
            _same_or_none(cut, full, ('file_number', 'block_number', 'partition', 'block_size', 'density_code',
                                      'soft_errors', 'status_bits', 'write_protected', 'bot', 'media_loaded'), where)
    elif parser == 'mtx.parse_mtx_status':
        for kind in ('drives', 'slots'):
            full_by = dict((e['element'], e) for e in full[kind])
            for entry in cut[kind]:
                if entry['element'] in full_by and entry['barcode'] is not None:
                    assert entry['barcode'] == full_by[entry['element']]['barcode'], where
    elif parser == 'chio.parse_chio_status':
        for kind in ('slots', 'portals', 'drives'):
            full_by = dict((e['unit'], e) for e in full[kind])
            for entry in cut[kind]:
                if entry['barcode'] is not None:
                    assert entry['barcode'] == full_by[entry['unit']]['barcode'], where
    elif parser == 'sg_logs.parse_all':
        for code, page in cut['pages'].items():
            other = full['pages'].get(code)
            if not isinstance(other, dict):
                continue
            for key, value in page.items():
                if isinstance(value, int) and not isinstance(value, bool) and key in other \
                        and key not in ('length', 'page', 'subpage'):
                    assert value == other[key], '%s: page %s %s=%r, full %r' % (where, code, key, value, other[key])
            for key, value in (page.get('parameters') or {}).items():
                if key in (other.get('parameters') or {}):
                    assert value == other['parameters'][key], '%s: page %s parameter %s' % (where, code, key)
    elif parser == 'sg_read_attr.parse':
        _same_or_none(cut, full, _sg_read_attr.KEYS, where)
    elif parser == 'sysfs.parse_tapestat':
        for index, report in enumerate(cut['reports']):
            if index < len(full['reports']) and cut['format'] == 'text':
                full_rows = dict((t['device'], t) for t in full['reports'][index]['tapes'])
                for row in report['tapes']:
                    assert row == full_rows.get(row['device']), where
    elif parser in ('inq.parse_proc_scsi_scsi',):
        full_by = dict((d['hctl'], d) for d in full['devices'])
        for device in cut['devices']:
            _same_or_none(device, full_by[device['hctl']], ('vendor', 'model', 'revision', 'type'), where)
    elif parser == 'inq.parse_lshw_tape':
        for index, tape in enumerate(cut['tapes']):
            _same_or_none(tape, full['tapes'][index], ('product', 'vendor', 'logical_name', 'serial', 'version'),
                          where)
    elif parser == 'fio.parse_log':
        assert cut == full[:len(cut)], where
    elif parser == 'bconsole.parse_joblog':
        _same_or_none(cut, full, ('termination', 'sd_bytes', 'fd_bytes', 'volume_bytes', 'rate_mb_s', 'data_seconds',
                                  'data_mb_s'), where)
        assert cut['errors'] == full['errors'][:len(cut['errors'])], where
    elif parser == 'bconsole.parse_llist':
        for key, value in cut.items():
            if value not in (None, '') and key != 'comment':
                assert value == full[key], '%s: %s=%r, the full text gives %r' % (where, key, value, full[key])
    elif parser in ('bconsole.parse_wait', 'bconsole.parse_run'):
        assert cut == full, where
    elif parser == 'amanda.parse':
        assert cut == full[:len(cut)], where
    elif parser == 'bconsole.parse_cancel':
        assert not cut or full, where
    elif parser == 'btape.parse_speed':
        for index, test in enumerate(cut['tests']):
            _same_or_none(test, full['tests'][index], ('total_rate_mb_s', 'block_size', 'total_bytes'), where)


def _text(raw):
    return raw.decode('utf-8', 'replace')


OWN_CASES = [(name, parser) for name in FIXTURE_NAMES for parser in own_parsers(name)]


@pytest.mark.parametrize('name,parser', OWN_CASES, ids=['%s-%s' % c for c in OWN_CASES])
def test_cut_at_every_line_gives_no_value_the_capture_does_not(name, parser):
    raw = RAW[name]
    full = call(parser, _text(raw))
    offsets = [i + 1 for i, byte in enumerate(raw) if byte == 0x0a]
    for offset in [0] + offsets:
        cut = call(parser, _text(raw[:offset]))
        check_no_new_value(parser, cut, full, '%s cut at byte %d' % (name, offset))


@FUZZ
@given(data=st.data())
def test_cut_at_random_bytes_gives_no_value_the_capture_does_not(data):
    name, parser = data.draw(st.sampled_from(OWN_CASES))
    raw = RAW[name]
    full = call(parser, _text(raw))
    offset = data.draw(st.integers(min_value=0, max_value=len(raw)))
    cut = call(parser, _text(raw[:offset]))
    check_no_new_value(parser, cut, full, '%s cut at byte %d' % (name, offset))


@FUZZ
@given(data=st.data())
def test_byte_flips_in_any_fixture_through_any_parser(data):
    name = data.draw(st.sampled_from(FIXTURE_NAMES))
    raw = bytearray(RAW[name])
    for _flip in range(data.draw(st.integers(min_value=1, max_value=8))):
        if raw:
            raw[data.draw(st.integers(min_value=0, max_value=len(raw) - 1))] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(min_value=0, max_value=len(raw)))
    blob = bytes(raw[:cut])
    # How tool output reaches a parser: decoded with replacement (_cli), or with surrogateescape
    # (Ansible's default decoding of command output elsewhere).
    for text in (blob.decode('utf-8', 'replace'), blob.decode('utf-8', 'surrogateescape')):
        for parser in PARSERS:
            call(parser, text)
    for parser in BYTE_PARSERS:
        call(parser, blob)


@FUZZ
@given(text=st.text(max_size=400))
def test_arbitrary_text_through_any_parser(text):
    for parser in PARSERS:
        call(parser, text)


@FUZZ
@given(blob=st.binary(max_size=300))
def test_arbitrary_bytes_through_byte_parsers(blob):
    for parser in BYTE_PARSERS:
        call(parser, blob)


@FUZZ
@given(data=st.data())
def test_fixture_lines_shuffled_into_other_tools_parsers(data):
    # Real lines of one tool inside another's output: parsers meet foreign formats on pasted input.
    names = data.draw(st.lists(st.sampled_from(FIXTURE_NAMES), min_size=1, max_size=3))
    lines = []
    for name in names:
        source = _text(RAW[name]).splitlines()
        if source:
            start = data.draw(st.integers(0, len(source) - 1))
            lines.extend(source[start:start + data.draw(st.integers(1, 30))])
    text = '\n'.join(lines) + data.draw(st.sampled_from(['', '\n']))
    for parser in PARSERS:
        call(parser, text)


def test_every_fixture_is_covered_by_a_parser_of_its_own():
    # mhvtl_device_conf: mhvtl's own configuration, read by the lab (lab/tapelab_mhvtl.parse_device_conf, tested in
    # tests/unit/lab), not by the collection
    uncovered = [name for name in FIXTURE_NAMES if not own_parsers(name)
                 and not name.startswith(('sg_inq', 'mt_densities', 'omnirc', 'bareos', 'sysfs_st_tuning',
                                          'mhvtl_device_conf'))]
    assert uncovered == []
