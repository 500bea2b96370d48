# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The roles, applied for real with ansible-playbook on localhost.

dp_omnirc runs on a directory that mirrors /opt/omni; bacula_sd on a copy of
Debian's packaged bacula-sd.conf validated by the real ``bacula-sd -t`` (and
on a Bareos-layout tree, whose daemon is not packaged here). Nothing outside
pytest's temporary directory is written. Each role gets the idempotence
ladder (check, real, check, real: changed, changed, not changed, not changed)
and a bad-values run that must fail with a message before any file changes.
"""

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TARGETS = os.path.join(ROOT, 'tests', 'integration', 'targets')
BIN = os.path.dirname(sys.executable)
RECAP = re.compile(r'^(\S+)\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)', re.M)


def _collections_path():
    for entry in sys.path:
        if os.path.isdir(os.path.join(entry, 'ansible_collections', 'tapeops', 'qualify')):
            return entry
    raise RuntimeError('tests/conftest.py did not make the collection importable')


def run_playbook(playbook, extra_vars, check=False, diff=True):
    """Run ansible-playbook; return (rc, output, {host: {ok, changed, failed}})."""
    cmd = [os.path.join(BIN, 'ansible-playbook'), playbook, '-i', 'localhost,', '-e', json.dumps(extra_vars)]
    if check:
        cmd.append('--check')
    if diff:
        cmd.append('--diff')
    env = dict(os.environ)
    env.update({
        'ANSIBLE_COLLECTIONS_PATH': _collections_path(),
        'ANSIBLE_NOCOLOR': '1',
        'ANSIBLE_LOCALHOST_WARNING': 'false',
        'ANSIBLE_PYTHON_INTERPRETER': sys.executable,
        'ANSIBLE_RETRY_FILES_ENABLED': 'false',
    })
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, check=False)
    out = proc.stdout + proc.stderr
    recap = {m.group(1): {'ok': int(m.group(2)), 'changed': int(m.group(3)), 'failed': int(m.group(5))}
             for m in RECAP.finditer(out)}
    return proc.returncode, out, recap


def tree_digest(path):
    """{relative path: sha256} of every file under ``path`` (or of the file)."""
    if os.path.isfile(path):
        with open(path, 'rb') as handle:
            return {os.path.basename(path): hashlib.sha256(handle.read()).hexdigest()}
    out = {}
    for base, dummy, files in os.walk(path):
        for name in files:
            full = os.path.join(base, name)
            with open(full, 'rb') as handle:
                out[os.path.relpath(full, path)] = hashlib.sha256(handle.read()).hexdigest()
    return out


def ladder(playbook, extra_vars):
    """Check, real, check, real: return the four changed counts and the outputs."""
    counts, outputs = [], []
    for check in (True, False, True, False):
        rc, out, recap = run_playbook(playbook, extra_vars, check=check)
        assert rc == 0, out
        counts.append(recap['localhost']['changed'])
        outputs.append(out)
    return counts, outputs


def changed_pattern(counts):
    return ['changed' if c else 'not changed' for c in counts]


# ---------------------------------------------------------------- dp_omnirc

@pytest.fixture
def omni_home(tmp_path):
    home = tmp_path / 'opt' / 'omni'
    shutil.copytree(os.path.join(TARGETS, 'dp_omnirc_tree', 'files', 'opt', 'omni'), str(home))
    return str(home)


DP_PLAYBOOK = os.path.join(TARGETS, 'dp_omnirc_tree', 'playbook.yml')


def test_dp_omnirc_idempotence_ladder(omni_home):
    extra = {'dp_omnirc_omni_home': omni_home,
             'dp_omnirc_keys': {'OB2DEVSLEEP': 2000},
             # LTO-6 from the drive model (2500 GB native), LTO-9's capacity given directly.
             'dp_omnirc_drives': [{'name': '/dev/nst0', 'generation': 'LTO-6'},
                                  {'name': '/dev/nst1', 'native_capacity_gb': 18000,
                                   'hba_max_transfer_bytes': 524288}]}
    counts, outputs = ladder(DP_PLAYBOOK, extra)
    assert changed_pattern(counts) == ['changed', 'changed', 'not changed', 'not changed'], outputs
    omnirc = os.path.join(omni_home, '.omnirc')
    with open(omnirc) as handle:
        lines = handle.read().splitlines()
    with open(os.path.join(omni_home, '.omnirc.TMPL')) as handle:
        template = handle.read().splitlines()
    # Created from the template: every template line kept, three keys activated; the immediate file-mark pair is
    # seed 001's two lines exactly.
    assert [line for line in lines if line not in ('OB2FORCESCSI=WFM', 'OB2IMMEDFM=1', 'OB2DEVSLEEP=2000')] == template
    assert [line for line in lines if line and not line.startswith('#')] == [
        'OB2FORCESCSI=WFM', 'OB2IMMEDFM=1', 'OB2DEVSLEEP=2000']
    assert lines[lines.index('#OB2IMMEDFM=0') + 1] == 'OB2IMMEDFM=1'
    # First check run planned the creation; the real run made it; no backup of a file that did not exist.
    assert 'from %s/.omnirc.TMPL' % omni_home in outputs[0]
    assert not [n for n in os.listdir(omni_home) if n.startswith('.omnirc.') and n != '.omnirc.TMPL']
    # Recommendations exported for the report.
    assert '"segment_size_mb": 50000' in outputs[3] or "'segment_size_mb': 50000" in outputs[3]
    assert re.search(r"""['"]block_size_limited_by['"]: ['"]hba['"]""", outputs[3])


def test_dp_omnirc_corrects_forcescsi_1_ladder(omni_home):
    # an omnirc the role wrote before issue 23 item 1 (OB2FORCESCSI=1): corrected to WFM in place, with a diff
    # and a backup; check mode changes nothing; the second run changes nothing
    fixture = os.path.join(ROOT, 'tests', 'unit', 'fixtures', 'omnirc',
                           'omnirc__dp_omnirc-before-issue23-forcescsi-1__1.txt')
    omnirc = os.path.join(omni_home, '.omnirc')
    shutil.copy(fixture, omnirc)
    with open(fixture) as handle:
        before = handle.read()
    counts, outputs = ladder(DP_PLAYBOOK, {'dp_omnirc_omni_home': omni_home})
    assert changed_pattern(counts) == ['changed', 'changed', 'not changed', 'not changed'], outputs
    assert '-OB2FORCESCSI=1' in outputs[0] and '+OB2FORCESCSI=WFM' in outputs[0]
    assert '+OB2IMMEDFM' not in outputs[0]
    with open(omnirc) as handle:
        assert handle.read() == before.replace('\nOB2FORCESCSI=1\n', '\nOB2FORCESCSI=WFM\n')
    backups = [n for n in os.listdir(omni_home) if n.startswith('.omnirc.') and n != '.omnirc.TMPL']
    assert len(backups) == 1
    with open(os.path.join(omni_home, backups[0])) as handle:
        assert handle.read() == before


def test_dp_omnirc_change_keeps_backup(omni_home):
    rc, out, recap = run_playbook(DP_PLAYBOOK, {'dp_omnirc_omni_home': omni_home})
    assert rc == 0, out
    rc, out, recap = run_playbook(DP_PLAYBOOK, {'dp_omnirc_omni_home': omni_home,
                                                'dp_omnirc_keys': {'OB2IMMEDFM': 0}})
    assert rc == 0 and recap['localhost']['changed'] == 1, out
    backups = [n for n in os.listdir(omni_home) if n.startswith('.omnirc.') and n != '.omnirc.TMPL']
    assert len(backups) == 1
    with open(os.path.join(omni_home, backups[0])) as handle:
        assert 'OB2IMMEDFM=1' in handle.read().splitlines()
    assert '-OB2IMMEDFM=1' in out and '+OB2IMMEDFM=0' in out


def test_dp_omnirc_sizes_a_discovered_drive_as_the_verdict_identifies_it(omni_home):
    # an HP Ultrium 6-SCSI (lsscsi capture, LTFS issue 354) holding an LTO-5 cartridge (density 0x58, mt-st
    # issue 10), as tape_drive_info reports it; the inventory's model sets the capacity of the second one
    hp6 = {'nst': '/dev/nst0', 'vendor': 'HP', 'product': 'Ultrium 6-SCSI', 'revision': '338D',
           'density_code': '0x58'}
    rc, out, _recap = run_playbook(DP_PLAYBOOK, {'dp_omnirc_omni_home': omni_home, 'dp_omnirc_drives': [
        {'name': '/dev/nst0', 'discovered': hp6},
        {'name': '/dev/nst1', 'discovered': dict(hp6, nst='/dev/nst1'), 'model': {'native_capacity_gb': 2400}}]})
    assert rc == 0, out
    devices = re.findall(r'"name": "(/dev/nst\d)",\s+"native_capacity_gb": (\d+),\s+"segment_size_basis": "rule",'
                         r'\s+"segment_size_mb": (\d+)', out)
    # the drive, not its cartridge: LTO-6's 2500 GB (not LTO-5's 1500), / 50 per segment; the inventory's 2400
    assert devices == [('/dev/nst0', '2500', '50000'), ('/dev/nst1', '2400', '48000')], out


@pytest.mark.parametrize('extra, message', [
    ({'dp_omnirc_keys': {'ob2immedfm': 1}}, 'ob2immedfm are not in Data Protector format'),
    ({'dp_omnirc_mtweofi_supported': False}, 'The st driver has no MTWEOFI (set by dp_omnirc_mtweofi_supported)'),
    ({'dp_omnirc_dp_version': 'A.09.00'}, 'does not support OB2IMMEDFM (A.09.05 and later do)'),
    ({'dp_omnirc_drives': [{'name': 'x', 'native_capacity_gb': 2500, 'hba_max_transfer_bytes': 32768}]},
     'below the 64 KB minimum'),
    ({'dp_omnirc_immediate_filemarks': 'maybe'}, 'dp_omnirc_immediate_filemarks'),
])
def test_dp_omnirc_bad_values_touch_nothing(omni_home, extra, message):
    before = tree_digest(omni_home)
    extra = dict(extra, dp_omnirc_omni_home=omni_home)
    rc, out, recap = run_playbook(DP_PLAYBOOK, extra)
    assert rc != 0
    assert message in ' '.join(out.split()), out
    assert tree_digest(omni_home) == before


def test_dp_omnirc_missing_dp_says_what_to_do(tmp_path):
    rc, out, recap = run_playbook(DP_PLAYBOOK, {'dp_omnirc_omni_home': str(tmp_path / 'nothing')})
    assert rc != 0
    assert 'install the Data Protector Media Agent' in out
    assert not (tmp_path / 'nothing').exists()


# ---------------------------------------------------------------- bacula_sd

SD_PLAYBOOK = os.path.join(TARGETS, 'bacula_sd_localhost', 'playbook.yml')
BACULA_SD = shutil.which('bacula-sd', path=os.environ.get('PATH', '') + ':/usr/sbin')


@pytest.fixture
def sd_conf(tmp_path):
    path = tmp_path / 'bacula' / 'bacula-sd.conf'
    path.parent.mkdir()
    shutil.copy(os.path.join(TARGETS, 'bacula_sd_localhost', 'files', 'bacula-sd.conf'), str(path))
    return str(path)


def _bacula_test(path):
    return subprocess.run([BACULA_SD, '-t', '-c', path], capture_output=True, text=True, check=False)


@pytest.mark.skipif(BACULA_SD is None, reason='bacula-sd is not installed (tools/run setup installs it)')
def test_bacula_sd_idempotence_ladder_validated_by_bacula_sd(sd_conf):
    assert _bacula_test(sd_conf).returncode == 0
    counts, outputs = ladder(SD_PLAYBOOK, {'bacula_sd_config': sd_conf})
    assert changed_pattern(counts) == ['changed', 'changed', 'not changed', 'not changed'], outputs
    # The daemon's own test passes on the result.
    res = _bacula_test(sd_conf)
    assert res.returncode == 0, res.stdout + res.stderr
    with open(sd_conf) as handle:
        text = handle.read()
    block = text[text.index('Name = LTO-3'):]
    block = block[:block.index('\n}')]
    assert '  Maximum Block Size = 1048576' in block.splitlines()
    assert '  Maximum File Size = 50G' in block.splitlines()
    # The block size warning reaches the user.
    assert 'must be read back with it' in ' '.join(outputs[1].split())
    backups = [n for n in os.listdir(os.path.dirname(sd_conf)) if n != 'bacula-sd.conf']
    assert len(backups) == 1


@pytest.mark.skipif(BACULA_SD is None, reason='bacula-sd is not installed (tools/run setup installs it)')
def test_bacula_sd_daemon_rejection_keeps_old_file(sd_conf):
    before = tree_digest(os.path.dirname(sd_conf))
    # Bacula's parser rejects a directive it does not know in a Device resource.
    rc, out, recap = run_playbook(SD_PLAYBOOK, {'bacula_sd_config': sd_conf,
                                                'bacula_sd_extra_directives': {'Bogus Directive': 3}})
    assert rc != 0
    msg = re.search(r'"msg": "([^"\\]*(?:\\.[^"\\]*)*)"', out).group(1)
    assert 'The storage daemon rejected the new configuration: Keyword \\"BogusDirective\\" not permitted ' \
           'in this resource.' in msg
    assert 'Nothing was changed' in msg
    assert tree_digest(os.path.dirname(sd_conf)) == before


@pytest.mark.parametrize('extra, message', [
    ({'bacula_sd_maximum_block_size': 1000000}, 'not a multiple of 1024 bytes'),
    ({'bacula_sd_maximum_block_size': 2097152, 'bacula_sd_hba_max_transfer_bytes': 1048576},
     'larger than the HBA path can carry'),
    ({'bacula_sd_maximum_file_size': '-1G'}, 'for example 1048576 or 50G'),
    ({'bacula_sd_maximum_file_size': '100T'}, 'absurd'),
    ({'bacula_sd_maximum_block_size': 'big'}, 'bacula_sd_maximum_block_size'),
    ({'bacula_sd_devices': ['LTO-9']}, 'No tape Device resource named LTO-9'),
])
def test_bacula_sd_bad_values_touch_nothing(sd_conf, extra, message):
    before = tree_digest(os.path.dirname(sd_conf))
    rc, out, recap = run_playbook(SD_PLAYBOOK, dict(extra, bacula_sd_config=sd_conf))
    assert rc != 0
    assert message in ' '.join(out.split()), out
    assert tree_digest(os.path.dirname(sd_conf)) == before


def test_bacula_sd_bareos_layout_ladder(tmp_path):
    """Bareos layout through the same editing code; bareos-sd is not packaged here, so no -t test."""
    conf = tmp_path / 'bareos'
    shutil.copytree(os.path.join(ROOT, 'tests', 'unit', 'fixtures', 'bareos', 'etc-bareos'), str(conf))
    extra = {'bacula_sd_flavor': 'bareos', 'bacula_sd_config': str(conf), 'bacula_sd_validate': '',
             'bacula_sd_maximum_file_size': '200GB'}
    file_device = tree_digest(str(conf / 'bareos-sd.d' / 'device' / 'FileStorage.conf'))
    counts, outputs = ladder(SD_PLAYBOOK, extra)
    assert changed_pattern(counts) == ['changed', 'changed', 'not changed', 'not changed'], outputs
    with open(str(conf / 'bareos-sd.d' / 'device' / 'Tape-0.conf')) as handle:
        lines = handle.read().splitlines()
    assert '  MaximumBlockSize = 1048576; MaximumConcurrentJobs = 1' in lines
    assert '  MaximumFileSize = 200GB              # default: 1000000000 (1GB)' in lines
    assert tree_digest(str(conf / 'bareos-sd.d' / 'device' / 'FileStorage.conf')) == file_device
