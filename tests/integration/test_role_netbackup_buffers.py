# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The netbackup_buffers role, applied for real with ansible-playbook on localhost.

No NetBackup package exists for the test machines, so the role runs on a NetBackup directory laid out in
pytest's temporary directory with the files a public Puppet module writes
(tests/unit/fixtures/netbackup/README.md: SIZE_DATA_BUFFERS 262144 and NUMBER_DATA_BUFFERS 256 without a line
end, NET_BUFFER_SZ 0); the files hold one number each, so that is the real thing. Nothing outside pytest's
temporary directory is written. The idempotence ladder (check, real, check, real: changed, changed, not
changed, not changed) and bad values that must fail with a message before any file changes, as the other
roles' ladders in test_roles.py.
"""

import hashlib
import json
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PLAYBOOK = os.path.join(ROOT, 'tests', 'integration', 'targets', 'netbackup_buffers_localhost', 'playbook.yml')
FIXTURES = os.path.join(ROOT, 'tests', 'unit', 'fixtures', 'netbackup')
RECAP = re.compile(r'^(\S+)\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)', re.M)


def _collections_path():
    for entry in sys.path:
        if os.path.isdir(os.path.join(entry, 'ansible_collections', 'tapeops', 'qualify')):
            return entry
    raise RuntimeError('tests/conftest.py did not make the collection importable')


def run_playbook(extra_vars, check=False):
    """ansible-playbook --diff on localhost; (rc, output, changed count)."""
    cmd = [os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), PLAYBOOK, '-i', 'localhost,',
           '--diff', '-e', json.dumps(extra_vars)]
    if check:
        cmd.append('--check')
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=_collections_path(), ANSIBLE_NOCOLOR='1',
               ANSIBLE_LOCALHOST_WARNING='false', ANSIBLE_PYTHON_INTERPRETER=sys.executable,
               ANSIBLE_RETRY_FILES_ENABLED='false')
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, check=False)
    out = proc.stdout + proc.stderr
    recap = dict((m.group(1), int(m.group(3))) for m in RECAP.finditer(out))
    return proc.returncode, out, recap.get('localhost')


def tree_digest(path):
    out = {}
    for base, dummy, files in os.walk(path):
        for name in files:
            with open(os.path.join(base, name), 'rb') as handle:
                out[os.path.relpath(os.path.join(base, name), path)] = hashlib.sha256(handle.read()).hexdigest()
    return out


def body(name):
    """A fixture's file bytes (after its three '# ' source lines)."""
    with open(os.path.join(FIXTURES, name), 'rb') as handle:
        return handle.read().split(b'\n', 3)[3]


def read(path):
    with open(path, 'rb') as handle:
        return handle.read()


@pytest.fixture
def netbackup(tmp_path):
    """/usr/openv/netbackup as the public Puppet module leaves it."""
    root = tmp_path / 'usr' / 'openv' / 'netbackup'
    (root / 'db' / 'config').mkdir(parents=True)
    for name in ('SIZE_DATA_BUFFERS', 'NUMBER_DATA_BUFFERS'):
        (root / 'db' / 'config' / name).write_bytes(body('%s__puppet-netbackup-tune__1.txt' % name))
    (root / 'NET_BUFFER_SZ').write_bytes(body('NET_BUFFER_SZ__puppet-netbackup-tune__1.txt'))
    return str(root)


def test_netbackup_buffers_idempotence_ladder(netbackup):
    extra = {'netbackup_buffers_path': netbackup, 'netbackup_buffers_size_data_buffers': 524288,
             'netbackup_buffers_number_data_buffers': 128, 'netbackup_buffers_number_data_buffers_restore': 64,
             'netbackup_buffers_net_buffer_sz': 0}
    before = tree_digest(netbackup)
    counts, outputs = [], []
    for check in (True, False, True, False):
        rc, out, changed = run_playbook(extra, check=check)
        assert rc == 0, out
        counts.append(changed)
        outputs.append(out)
        if check and len(counts) == 1:
            assert tree_digest(netbackup) == before, out
    assert ['changed' if c else 'not changed' for c in counts] == [
        'changed', 'changed', 'not changed', 'not changed'], outputs
    config = os.path.join(netbackup, 'db', 'config')
    # written as echo N > FILE writes them; NET_BUFFER_SZ already held 0 (no line end, Puppet's) and is left alone
    assert read(os.path.join(config, 'SIZE_DATA_BUFFERS')) == b'524288\n'
    assert read(os.path.join(config, 'NUMBER_DATA_BUFFERS')) == b'128\n'
    assert read(os.path.join(config, 'NUMBER_DATA_BUFFERS_RESTORE')) == b'64\n'
    assert read(os.path.join(netbackup, 'NET_BUFFER_SZ')) == b'0'
    # the check run's diff showed each change; the real run kept a backup of each file it replaced
    assert '-262144' in outputs[0] and '+524288' in outputs[0] and '+64' in outputs[0]
    assert '"netbackup_buffers_block_size_changed": true' in outputs[1]
    backups = sorted(n for n in os.listdir(config) if n.count('.') >= 2)
    assert [b.split('.')[0] for b in backups] == ['NUMBER_DATA_BUFFERS', 'SIZE_DATA_BUFFERS']
    assert read(os.path.join(config, [b for b in backups if b.startswith('SIZE')][0])) == b'262144'
    assert '"netbackup_buffers_changes": []' in outputs[3]


def test_netbackup_buffers_with_nothing_given_changes_nothing(netbackup):
    before = tree_digest(netbackup)
    rc, out, changed = run_playbook({'netbackup_buffers_path': netbackup})
    assert rc == 0 and changed == 0, out
    assert tree_digest(netbackup) == before


@pytest.mark.parametrize('extra, message', [
    ({'netbackup_buffers_size_data_buffers': 262656}, 'SIZE_DATA_BUFFERS = 262656 is not a multiple of 1024 bytes'),
    ({'netbackup_buffers_size_data_buffers': 2097152, 'netbackup_buffers_hba_max_transfer_bytes': 1310720},
     'larger than the HBA path can carry in one transfer (1310720 bytes'),
    ({'netbackup_buffers_size_data_buffers': 524288, 'netbackup_buffers_number_data_buffers': 0},
     'NUMBER_DATA_BUFFERS = 0: bptm needs at least one buffer. Nothing was changed.'),
    ({'netbackup_buffers_size_data_buffers': 'big'}, 'netbackup_buffers_size_data_buffers'),
])
def test_netbackup_buffers_bad_values_touch_nothing(netbackup, extra, message):
    before = tree_digest(netbackup)
    rc, out, changed = run_playbook(dict(extra, netbackup_buffers_path=netbackup))
    assert rc != 0
    assert message in ' '.join(out.split()), out
    assert tree_digest(netbackup) == before


def test_netbackup_buffers_without_netbackup_says_what_to_do(tmp_path):
    rc, out, changed = run_playbook({'netbackup_buffers_path': str(tmp_path / 'netbackup'),
                                     'netbackup_buffers_size_data_buffers': 262144})
    assert rc != 0
    assert 'install the NetBackup media server on this host' in out
    assert not (tmp_path / 'netbackup').exists()
