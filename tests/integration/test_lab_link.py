# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's tape drives have no SAS or FC link: the link facts say so cleanly.

The guests reach their drive through LIO's tcm_loop (emulated mode) or open-iscsi
(tgt mode): SCSI hosts with no SAS or FC transport class, so /sys/class/sas_phy and
/sys/class/fc_host are empty and the drive's link is unknown (None), never an
error or a made-up rate. Discovery and the preflight read the same sysfs and agree.
"""

import pytest

import host_schema

from test_tape_side import run_module

HOST = 'lab-ma1'

# untimed (pytest.ini): no rate, class or time a loaded machine could change
pytestmark = [pytest.mark.lab, pytest.mark.untimed]


def test_lab_drive_link_is_not_a_sas_or_fc_link(lab):
    device = lab.run(HOST, 'readlink -f /sys/class/scsi_tape/nst0/device', check=True).stdout.strip()
    assert '/host' in device and 'port-' not in device and 'rport-' not in device, device
    transports = lab.run(HOST, 'ls /sys/class/sas_phy /sys/class/fc_host 2>/dev/null | grep -c . || true').stdout
    assert transports.strip() in ('', '0'), transports
    pre = run_module(lab, HOST, 'st_preflight_info', {})
    assert pre['_rc'] == 0, pre.get('msg')
    assert pre['drives'], pre
    for entry in pre['drives']:
        link = entry['link']
        assert (link['transport'], link['usable_mb_s'], link['rate']) == (None, None, None), link
        assert link['text'].startswith('not a SAS or FC link'), link
        if entry['device'] == '/dev/nst0':
            assert link['host'] in device.split('/'), (link, device)
    info = run_module(lab, HOST, 'tape_drive_info', {'log_pages': False})
    assert info['_rc'] == 0, info.get('msg')
    nst0 = [d for d in info['drives'] if d['nst'] == '/dev/nst0'][0]
    assert nst0['link'] == [d for d in pre['drives'] if d['device'] == '/dev/nst0'][0]['link']


def test_upgrade_check_reports_the_lab_link_and_the_host_section_without_writing(lab, tmp_path):
    counters = 'cat /sys/class/scsi_tape/nst0/stats/write_cnt /sys/class/scsi_tape/nst0/stats/write_byte_cnt'
    before = lab.run(HOST, counters, check=True).stdout.split()
    run_dir = tmp_path / 'run'
    result = lab.playbook('tapeops.qualify.upgrade_check', limit=HOST, extra_vars={
        'qualify_run_dir': str(run_dir), 'qualify_target_generation': 'LTO-9 FH', 'qualify_target_vendor': 'IBM',
        'qualify_target_interface': 'SAS', 'qualify_media': False, 'qualify_fail_on_missing': False,
        'qualify_profile_overrides': {'source_seconds': 12}, 'qualify_verdict_options': {'tape_ratio': 1.0},
        'tapeops_sources': ['/srv/backup-src/large']}, timeout=900)
    assert result, result.stdout[-3000:] + result.stderr[-2000:]
    assert lab.run(HOST, counters, check=True).stdout.split() == before
    doc = host_schema.load(str(run_dir / 'hosts' / ('%s.json' % HOST)))
    entry = [d for d in doc['drives'] if d.get('what_if')][0]
    assert [row['device'] for row in entry['links']] == ['/dev/nst0'], entry['links']
    assert entry['link']['transport'] is None and entry['link']['usable_mb_s'] is None
    [verdict] = [v for v in doc['verdicts'] if v['drive'] == entry['id']]
    num = verdict['numbers']
    assert (num['link_transport'], num['link_mb_s'], num['link_caps']) == (None, None, False)
    assert any(r.startswith('HBA link: not a SAS or FC link') for r in verdict['reasons']), verdict['reasons']
    summary = (run_dir / 'summary.md').read_text()
    assert '**Interface and host:** not a SAS or FC link' in summary
    if verdict['class'] != 'INCONCLUSIVE':
        # the host section: the count is the forecast's, the memory the rule's for that many streams
        assert num['drives_not_shoeshining_at_once'] >= num['drives_streaming_at_once'] >= 0
        if num['drives_not_shoeshining_at_once']:
            assert num['memory_needed_at_once_mb'] == 512 + 512 * num['streams_at_once']
        assert '**Interface and host:** not a SAS or FC link; the host\'s sources keep' in summary
    assert '<p class="interface"><b>Interface and host:</b> not a SAS or FC link' in (run_dir / 'report.html').read_text()
