# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""playbooks/apply_fixes.yml on localhost, for real: a run's fixes through dp_omnirc and bacula_sd.

The run documents are the recorded lab run's measurements
(tests/unit/fixtures/lab_runs/20261123-quick) judged again by the verdict code
for a Data Protector or Bacula host, written as the qualify playbook writes
them (<run>/hosts/localhost.json). Their fixes here are ones st_tuning has no
part in (immediate file marks, segment sizes), so nothing of this machine's
st driver is touched: dp_omnirc works on a copy of /opt/omni in pytest's
temporary directory, bacula_sd on a copy of Debian's bacula-sd.conf validated
by the real ``bacula-sd -t``. Each gets check mode first (nothing changes,
the diff shows what would), then the real run, then a second real run that
changes nothing.
"""

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

# untimed (pytest.ini): no rate, class or time a loaded machine could change
pytestmark = pytest.mark.untimed

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PLAYBOOK = os.path.join(ROOT, 'playbooks', 'apply_fixes.yml')
TARGETS = os.path.join(ROOT, 'tests', 'integration', 'targets')
RECORDED = os.path.join(ROOT, 'tests', 'unit', 'fixtures', 'lab_runs', '20261123-quick')
RECAP = re.compile(r'^(\S+)\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)', re.M)
BACULA_SD = shutil.which('bacula-sd', path=os.environ.get('PATH', '') + ':/usr/sbin')


def _collections_path():
    for entry in sys.path:
        if os.path.isdir(os.path.join(entry, 'ansible_collections', 'tapeops', 'qualify')):
            return entry
    raise RuntimeError('tests/conftest.py did not make the collection importable')


def judged_run(run_dir, recorded_host, backup, mtweofi=True, host='localhost'):
    """Write <run_dir>/hosts/<host>.json: ``recorded_host``'s recorded measurements judged for ``backup``."""
    from ansible_collections.tapeops.qualify.plugins.module_utils import _run
    from ansible_collections.tapeops.qualify.plugins.module_utils._judge import _host

    with open(os.path.join(RECORDED, '%s.json' % recorded_host), encoding='utf-8') as handle:
        doc = json.load(handle)
    drives = doc['drives']
    tapes = [dict(d['write_sweep'], mtweofi_supported=mtweofi) for d in drives]
    preflight = dict(doc['preflight'], mtweofi_supported=mtweofi)
    facts = doc['facts']
    out = _host.assemble(host, [d['identity'] for d in drives], doc['source'], tapes,
                         [dict(d['settings'], nst=d['nst']) for d in drives], backup,
                         memory_total_mb=facts.get('memory_total_mb'), preflight=preflight, host_facts=facts,
                         run=doc['run']).to_dict()
    _run.save(run_dir, out)
    return out


def run_playbook(extra_vars, check=False):
    """ansible-playbook apply_fixes.yml --diff on localhost; (rc, output, changed count)."""
    cmd = [os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), PLAYBOOK, '-i', 'localhost,',
           '-c', 'local', '--diff', '-e', json.dumps(dict({'qualify_hosts': 'localhost'}, **extra_vars))]
    if check:
        cmd.append('--check')
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=_collections_path(), ANSIBLE_NOCOLOR='1',
               ANSIBLE_LOCALHOST_WARNING='false', ANSIBLE_PYTHON_INTERPRETER=sys.executable,
               ANSIBLE_RETRY_FILES_ENABLED='false')
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, check=False)
    out = proc.stdout + proc.stderr
    recap = dict((m.group(1), int(m.group(3))) for m in RECAP.finditer(out))
    return proc.returncode, out, recap.get('localhost')


def digest(path):
    out = {}
    for base, dummy, files in os.walk(path):
        for name in files:
            with open(os.path.join(base, name), 'rb') as handle:
                out[os.path.relpath(os.path.join(base, name), path)] = hashlib.sha256(handle.read()).hexdigest()
    return out


def ladder(extra, tree):
    """Check, real, real: the changed counts, the outputs, and whether check mode left ``tree`` alone."""
    before = digest(tree)
    counts, outputs = [], []
    for check in (True, False, False):
        rc, out, changed = run_playbook(extra, check=check)
        assert rc == 0, out
        counts.append(changed)
        outputs.append(out)
        if check:
            assert digest(tree) == before, out
    return counts, outputs


@pytest.fixture
def omni_home(tmp_path):
    home = tmp_path / 'omni'
    shutil.copytree(os.path.join(TARGETS, 'role_dp_omnirc', 'files', 'opt', 'omni'), str(home))
    return str(home)


def test_data_protector_immediate_file_marks_from_the_verdict(tmp_path, omni_home):
    run = str(tmp_path / 'run')
    doc = judged_run(run, 'lab-ma2', {'software': 'data_protector', 'block_size_bytes': 262144,
                                      'segment_size_mb': 64, 'immediate_filemarks': False})
    assert [f['id'] for f in doc['verdicts'][0]['fixes']] == ['immediate_filemarks', 'drive_path', 'memory']
    extra = {'qualify_run_dir': run, 'dp_omnirc_omni_home': omni_home, 'dp_omnirc_mtweofi_supported': True}
    counts, outputs = ladder(extra, omni_home)
    assert counts == [1, 1, 0], outputs
    # The check run showed the lines it would add.
    assert '+OB2IMMEDFM=1' in outputs[0] and '+OB2FORCESCSI=WFM' in outputs[0]
    with open(os.path.join(omni_home, '.omnirc'), encoding='utf-8') as handle:
        lines = handle.read().splitlines()
    assert [line for line in lines if line and not line.startswith('#')] == ['OB2FORCESCSI=WFM', 'OB2IMMEDFM=1']
    # What no role applies is listed with the verdict's words.
    text = ' '.join(outputs[1].split())
    assert '"/dev/nst0: Make the host-to-drive path faster. Where: HBA, cabling, st driver buffer' in text
    assert '"/dev/nst0: Give the host at least 1024 MB of RAM. Where: RAM.' in text


def test_data_protector_segment_size_is_the_verdicts(tmp_path, omni_home):
    """Without MTWEOFI the verdict asks for 17000 MB segments: dp_omnirc recommends exactly that, not its 50000."""
    shutil.copy(os.path.join(omni_home, '.omnirc.TMPL'), os.path.join(omni_home, '.omnirc'))
    run = str(tmp_path / 'run')
    doc = judged_run(run, 'lab-ma2', {'software': 'data_protector', 'block_size_bytes': 262144,
                                      'segment_size_mb': 64, 'immediate_filemarks': False}, mtweofi=False)
    assert [(f['id'], f['value']) for f in doc['verdicts'][0]['fixes'] if f['id'] == 'segment_size'] == [
        ('segment_size', 17000)]
    before = digest(omni_home)
    rc, out, changed = run_playbook({'qualify_run_dir': run, 'dp_omnirc_omni_home': omni_home})
    assert rc == 0 and changed == 0, out
    assert digest(omni_home) == before
    devices = re.search(r'"devices_for_the_cell_manager": (\[.*?\])\s*\}', out, re.S).group(1)
    keys = ('name', 'drive_label', 'segment_size_mb', 'segment_size_basis', 'native_capacity_gb',
            'catalog_segment_limit_mb', 'block_size_kb', 'block_size_limited_by')
    assert [dict((k, d[k]) for k in keys) for d in json.loads(devices)] == [
        {'name': '/dev/nst0', 'drive_label': 'LTO-6', 'segment_size_mb': 17000, 'segment_size_basis': 'verdict',
         'native_capacity_gb': 2500, 'catalog_segment_limit_mb': 12, 'block_size_kb': 1024,
         'block_size_limited_by': 'dp'}]


@pytest.mark.skipif(BACULA_SD is None, reason='bacula-sd is not installed (tools/run setup installs it)')
def test_bacula_maximum_file_size_from_the_verdict(tmp_path):
    conf = tmp_path / 'bacula' / 'bacula-sd.conf'
    conf.parent.mkdir()
    shutil.copy(os.path.join(TARGETS, 'role_bacula_sd', 'files', 'bacula-sd.conf'), str(conf))
    run = str(tmp_path / 'run')
    doc = judged_run(run, 'lab-ma1', {'software': 'bacula', 'block_size_bytes': 262144, 'segment_size_mb': 64})
    assert [(f['id'], f['value']) for f in doc['verdicts'][0]['fixes']] == [
        ('segment_size', 4400), ('memory', 1024)]
    counts, outputs = ladder({'qualify_run_dir': run, 'bacula_sd_config': str(conf)}, str(conf.parent))
    assert counts == [1, 1, 0], outputs
    assert '+  Maximum File Size = 4400MB' in outputs[0]
    with open(str(conf), encoding='utf-8') as handle:
        text = handle.read()
    block = text[text.index('Name = LTO-3'):]
    block = block[:block.index('\n}')].splitlines()
    assert '  Maximum File Size = 4400MB' in block
    # No block size fix in the run: Maximum Block Size is left as it was (not the role's default 1048576).
    assert not [line for line in block if 'Maximum Block Size' in line]
    res = subprocess.run([BACULA_SD, '-t', '-c', str(conf)], capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stdout + res.stderr


def test_a_host_without_a_verdict_is_skipped_with_the_reason(tmp_path):
    run = tmp_path / 'run'
    (run / 'hosts').mkdir(parents=True)
    rc, out, changed = run_playbook({'qualify_run_dir': str(run)})
    assert rc == 0 and changed == 0, out
    assert ('Skipped: %s has no document for localhost (%s/hosts/localhost.json): the host was not in that run or '
            'did not get that far; qualify it first (-l localhost).' % (run, run)) in ' '.join(out.split())
    # No role ran for it.
    assert not re.search(r'TASK \[tapeops\.qualify\.(st_tuning|dp_omnirc|bacula_sd) :', out), out


@pytest.mark.parametrize('extra, message', [
    ({'qualify_run_dir': '/nonexistent/reports/20261123T195725Z'},
     'The run directory /nonexistent/reports/20261123T195725Z does not exist: give a directory the qualify playbook '
     'wrote'),
    ({}, 'Give the run whose fixes to apply: -e qualify_run_dir=reports/<run>'),
])
def test_no_run_is_a_clear_error(extra, message):
    rc, out, changed = run_playbook(extra)
    assert rc != 0
    assert message in ' '.join(out.split()), out
