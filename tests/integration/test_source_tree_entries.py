# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A real backup tree - files beside a symlink, a FIFO and a file root cannot open - gets its verdict.

Before issue 28, source_read_benchmark returned the entries it did not read as
``skipped``; Ansible read that key as "the task was skipped", the qualify role
handed the verdict no source (``source if source is not skipped else omit``)
and the host's verdict said "No source read result". And a file that root
could not open (os.access says yes to root, open() did not) stopped fio's whole
job. targets/source_tree_entries/playbook.yml builds such a tree on one guest
(the unopenable file is a write-only sysfs attribute bind-mounted onto a file
of the tree: see the playbook), reads it, judges it through qualify_verdict as
the role does, and removes it; the tree's state (every entry's path, type, size,
mode and mtime, every regular file's sha256) is compared before and after.
"""

import json
import os

import pytest

import host_schema

HOST = 'lab-ma1'
ROOT_NAME = '.tapeops-test-entries'

# untimed (pytest.ini): no rate, class or time a loaded machine could change
pytestmark = [pytest.mark.lab, pytest.mark.untimed]


def test_a_tree_with_a_symlink_a_fifo_and_an_unopenable_file_gets_its_verdict(lab, tmp_path):
    out = tmp_path / 'run'
    out.mkdir()
    result = lab.playbook('tests/integration/targets/source_tree_entries/playbook.yml', limit=HOST,
                          extra_vars={'entries_out': str(out)}, timeout=900)
    with open(str(out / ('%s.result.json' % HOST)), encoding='utf-8') as handle:
        got = json.load(handle)
    assert result, result.stdout[-4000:] + result.stderr[-2000:]

    # the read: Ansible did not take it for skipped, and it lists what it passed over, each with why
    source = got['source']
    assert got['source_skipped'] is False and source.get('skipped') is None
    assert source['failed'] is False and source['aggregate']['files'] >= 9, source.get('msg')
    tree = '/srv/backup-src/' + ROOT_NAME
    passed = dict((os.path.relpath(e['path'], tree), e) for e in source['passed_over'])
    assert sorted(passed) == ['link', 'locked', 'pipe'], source['passed_over']
    assert passed['link']['kind'] == 'symlink' and 'not followed' in passed['link']['reason']
    assert passed['pipe']['kind'] == 'fifo' and 'never opened' in passed['pipe']['reason']
    assert passed['locked']['kind'] == 'permission_denied'
    assert passed['locked']['reason'] == 'permission denied: open() refused to uid 0'
    assert source['passed_over_counts'] == {'symlink': 1, 'fifo': 1, 'permission_denied': 1}
    assert source['streams'][0]['tree_files'] == 9 and source['streams'][0]['tree_bytes'] == 9 * 8 * 1048576

    # the verdict: a class from the measured source, not "No source read result"
    doc = host_schema.load(str(out / 'hosts' / ('%s.json' % HOST)))
    assert doc['error'] is None and doc['status'] == 'ok', doc['error']
    [verdict] = doc['verdicts']
    assert verdict['class'] in ('STREAMING', 'SPEED-MATCHED', 'SHOE-SHINING', 'MISCONFIGURED'), verdict
    assert not any('No source read result' in r for r in verdict.get('reasons') or [])
    assert sorted(e['kind'] for e in doc['source']['passed_over']) == ['fifo', 'permission_denied', 'symlink']
    assert doc['source']['aggregate']['bytes'] == source['aggregate']['bytes']

    # the tree: byte for byte as it was (taken before the bind mount and after the unmount), then removed
    assert got['umount_rc'] == 0
    assert got['before'] and got['after'] == got['before']
    assert got['gone'] is True
    assert lab.run(HOST, 'test -e %s; echo $?' % tree).stdout.strip() == '1'
    assert lab.run(HOST, 'grep -c %s /proc/mounts || true' % ROOT_NAME).stdout.strip() == '0'
