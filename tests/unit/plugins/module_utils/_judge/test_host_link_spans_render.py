# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The upgrade check's link and host line: st_preflight_info's drives[].link -> what-if verdict -> reports."""

from __future__ import annotations

from ansible_collections.tapeops.qualify.plugins.module_utils import _records, _words
from ansible_collections.tapeops.qualify.plugins.module_utils._reporting import _render, _report
from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _host


def source(rate, streams=1, seconds=60):
    return {'streams': [{'path': '/src/%d' % i, 'mean_mb_s': rate / streams} for i in range(streams)],
            'aggregate': {'mean_mb_s': float(rate), 'series_mb_s': [float(rate)] * seconds, 'streams': streams,
                          'samples': seconds, 'duration_s': float(seconds)}}


def link(transport, rate, usable, host='host0'):
    return {'transport': transport, 'host': host, 'rate': rate, 'lanes': 1 if usable else None,
            'usable_mb_s': usable, 'encoding': '8b/10b' if usable else None, 'hops': [],
            'text': '%s via %s: %s' % (transport, host, rate) if transport else
            'not a SAS or FC link (%s has no sas_phy or fc_host in sysfs)' % host}


def what_if(preflight, rate=900.0, memory=2048):
    return _host.assemble('ma1', drives_info=[], source=source(rate, streams=4), memory_total_mb=memory,
                          options={'target_interface': 'SAS', 'tape_ratio': 2.5}, target_generation='LTO-9 FH',
                          run={'mode': 'upgrade_check'}, preflight=preflight).to_dict()


def test_the_slowest_tape_link_of_the_host_caps_the_what_if_and_the_reports_say_so():
    preflight = {'drives': [{'device': '/dev/nst0', 'link': link('SAS', '12.0 Gbit', 1200.0)},
                            {'device': '/dev/nst1', 'link': link('SAS', '6.0 Gbit', 600.0)}]}
    doc = what_if(preflight)
    entry = doc['drives'][0]
    assert entry['what_if'] and entry['link']['rate'] == '6.0 Gbit'
    assert [row['device'] for row in entry['links']] == ['/dev/nst0', '/dev/nst1']
    num = doc['verdicts'][0]['numbers']
    assert (num['link_mb_s'], num['link_caps'], num['need_full_mb_s']) == (600.0, True, 1000.0)
    assert doc['verdicts'][0]['forecast']['now']['inputs']['path_mb_s'] == 600.0
    words = _words.interface_words(num)
    assert words.startswith('SAS 6.0 Gbit link, 600 MB/s usable: caps the drive (the drive takes 1000 MB/s)')
    markdown = _render.fleet_markdown([doc])
    assert '**Interface and host:** SAS 6.0 Gbit link, 600 MB/s usable: caps the drive' in markdown
    assert 'the link, not the sources (900 MB/s), caps the drive' in markdown
    page = _render.fleet_html([doc], charts=_report.ReportError('no charts in this test'))
    assert '<p class="interface"><b>Interface and host:</b> SAS 6.0 Gbit link, 600 MB/s usable' in page


def test_the_host_line_gives_drives_at_once_and_memory():
    doc = what_if({'drives': [{'device': '/dev/nst0', 'link': link('SAS', '12.0 Gbit', 1200.0)}]}, rate=2000.0)
    num = doc['verdicts'][0]['numbers']
    # 2000 MB/s over 4 streams, 2.5:1: 2 LTO-9 drives get 1000 each (full speed); 4 streams -> 512 + 4 x 512
    assert (num['drives_streaming_at_once'], num['streams_at_once'], num['memory_needed_at_once_mb']) == (2, 4, 2560)
    words = _words.interface_words(num)
    assert 'enough (the drive takes 1000 MB/s)' in words
    assert "the host's sources keep 2 streaming at once" in words
    assert '4 streams need 2560 MB by the memory rule, the host has 2048 MB' in words


def test_the_lab_virtual_host_and_no_preflight_at_all():
    lab = what_if({'drives': [{'device': '/dev/nst0', 'link': link(None, None, None, host='host2')}]})
    num = lab['verdicts'][0]['numbers']
    assert num['link_transport'] is None and num['link_caps'] is False
    assert _words.interface_words(num).startswith('not a SAS or FC link')
    assert 'HBA link: not a SAS or FC link (host2 has no sas_phy or fc_host in sysfs).' in \
        lab['verdicts'][0]['reasons']
    bare = what_if(None)
    assert bare['drives'][0]['link'] is None and bare['drives'][0]['links'] == []
    assert bare['verdicts'][0]['numbers']['link_transport'] is None


def test_a_real_drive_takes_its_link_from_the_preflight_when_discovery_had_none():
    preflight = _records.Preflight(drives=[{'device': '/dev/nst0', 'link': link('FC', '8 Gbit', 800.0)}])
    merged = _host._with_preflight(_records.DriveIdentity(nst='/dev/nst0'), preflight)
    assert merged['link']['usable_mb_s'] == 800.0
    own = _host._with_preflight(_records.DriveIdentity(nst='/dev/nst0', link=link('SAS', '3.0 Gbit', 300.0)),
                                preflight)
    assert own['link']['rate'] == '3.0 Gbit'
