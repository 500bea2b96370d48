"""FreeBSD chio(1) status on a real capture and the chio documentation example."""

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _chio

from ansible_collections.tapeops.qualify.tests.unit.plugins.module_utils._tape_fixtures import fixture, fixtures, header

IBM_33614 = 'chio_status_freebsd__IBM-33614LX-termpad__1.txt'


@pytest.mark.parametrize('name,text', fixtures('chio'), ids=[n for n, _t in fixtures('chio')])
def test_every_capture_keeps_its_source_and_parses(name, text):
    assert len(header(text)) == 3
    r = _chio.parse_chio_status(text)
    assert r['drives'] and r['complete'] is True and r['warnings'] == []


def test_ibm_33614lx_wrapped_terminal_copy():
    r = _chio.parse_chio_status(fixture('chio', IBM_33614))
    assert len(r['pickers']) == 1 and len(r['slots']) == 2 and len(r['portals']) == 36 and len(r['drives']) == 2
    # Lines wrapped at column 132 are joined: portal 0 keeps its scsi field, portal 10 its tag.
    full = [p for p in r['portals'] if p['full']]
    assert [(p['unit'], p['barcode']) for p in full] == [(0, 'UN0101L3'), (10, 'UN0102L3'), (20, None),
                                                         (26, 'UN0103L3')]
    assert r['portals'][0]['flags'] == ['INEAB', 'EXENAB', 'ACCESS', 'IMPEXP', 'FULL']
    assert r['portals'][0]['address'] == 1280 and r['drives'][1]['address'] == 129
    assert not any(d['full'] for d in r['drives']) and _chio.drive_barcode(r, 0) is None


def test_status_without_voltags_has_no_barcodes():
    r = _chio.parse_chio_status(fixture('chio', 'doc_chio_status__amanda-chg-chio-comment__1.txt'))
    assert [s['full'] for s in r['slots']] == [False, True, True]
    assert r['drives'][0]['full'] and r['drives'][0]['barcode'] is None


@pytest.mark.parametrize('text', ['', '\n', 'chio: /dev/ch0: No such file or directory\n'])
def test_empty_status_is_an_error_not_an_empty_library(text):
    with pytest.raises(_chio.ChioParseError) as info:
        _chio.parse_chio_status(text)
    assert 'not an empty library' in str(info.value) and 'camcontrol devlist' in str(info.value)


def test_cut_last_line_keeps_no_half_barcode():
    text = fixture('chio', IBM_33614)
    cut = text[:text.index('UN0103L3') + 5]
    r = _chio.parse_chio_status(cut)
    assert r['complete'] is False and r['portals'][-1]['unit'] == 26 and r['portals'][-1]['barcode'] is None
