# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The st_tuning role's st module options, applied for real with ansible-playbook on localhost.

community.general.modprobe cannot be pointed at another root, so these runs need a mount namespace around
ansible-playbook (below) and stay here. The roles' ladders on laid-out files (dp_omnirc, bacula_sd,
netbackup_buffers, st_tuning's definition file) are ansible-test integration targets:
tests/integration/targets/role_* (docs/development.md, "Role targets").
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
TARGETS = os.path.join(ROOT, 'tests', 'integration', 'targets')
BIN = os.path.dirname(sys.executable)
RECAP = re.compile(r'^(\S+)\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)', re.M)


def _collections_path():
    for entry in sys.path:
        if os.path.isdir(os.path.join(entry, 'ansible_collections', 'tapeops', 'qualify')):
            return entry
    raise RuntimeError('tests/conftest.py did not make the collection importable')


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


def changed_pattern(counts):
    return ['changed' if c else 'not changed' for c in counts]


# ---------------------------------------------------------------- st_tuning: the st module options

# community.general.modprobe writes /etc/modprobe.d/st.conf and /etc/modules-load.d/st.conf, reads /proc/modules and
# runs modprobe, none of which it lets a caller redirect. The playbook runs in a mount namespace of its own
# (unshare -m, as root) where those are the test's: tmpfs over /sys/bus and /sys/module (st's driver attributes
# as lab-ma2 recorded them), a /proc of links to the real one with a /proc/modules of the test's, the two /etc
# directories bound to temporary ones, and a modprobe that logs its arguments and, for a load, makes st appear
# as the kernel would. Nothing of this machine is read or changed; no kernel module is loaded.
MODPROBE_PLAYBOOK = os.path.join(TARGETS, 'st_tuning_modprobe', 'playbook.yml')
ST_GREP = os.path.join(ROOT, 'tests', 'unit', 'fixtures', 'sysfs_st_tuning',
                       'grep_sysfs__HP-Ultrium6-SCSI-35GD-lab-ma2-tuned__1.txt')
ST_PROC_MODULES_LINE = 'st 69632 0 - Live 0x0000000000000000'
UNSHARE = shutil.which('unshare')

NAMESPACE = r'''
set -eu
base=$1; shift
mkdir -p "$base/realproc" "$base/proc"
mount --rbind /proc "$base/realproc"
mount -t tmpfs tapeops-proc "$base/proc"
for entry in "$base"/realproc/*; do ln -s "$entry" "$base/proc/${entry##*/}"; done
rm -f "$base/proc/modules"
if [ -f "$base/modules" ]; then cp "$base/modules" "$base/proc/modules"; fi
mount --bind "$base/proc" /proc
for dir in sys/bus sys/module etc/modprobe.d etc/modules-load.d; do mount --bind "$base/$dir" "/$dir"; done
# /lib/modules/<release>: the test's only (an overlay keeps what is written or removed there in $base)
lib=$(readlink -f /lib)
mkdir -p "$base/lib-upper" "$base/lib-work"
mount -t overlay tapeops-lib -o "lowerdir=$lib,upperdir=$base/lib-upper,workdir=$base/lib-work" "$lib"
rm -rf "/lib/modules/$(uname -r)"
if [ -d "$base/lib/modules" ]; then mkdir -p /lib/modules && cp -a "$base/lib/modules/." /lib/modules/; fi
mount --bind "$base/modprobe" "$(readlink -f "$(command -v modprobe)")"
exec "$@"
'''

FAKE_MODPROBE = r'''#!/bin/sh
# modprobe in the test's mount namespace: logs its arguments; a load (no -n, -r) makes st appear as the kernel would
# (in this run's /proc/modules, and in the next runs' through the file they start from)
echo "$*" >> "%(base)s/modprobe.log"
for arg in "$@"; do case $arg in -n|-r|--first-time) exit 0;; esac; done
shift
echo "%(line)s" >> /proc/modules
echo "%(line)s" >> "%(base)s/modules"
mkdir -p /sys/module/st /sys/bus/scsi/drivers/st
echo live > /sys/module/st/initstate
for arg in "$@"; do
  case $arg in
    max_sg_segs=*) echo "${arg#*=}" > /sys/bus/scsi/drivers/st/max_sg_segs ;;
    buffer_kbs=*) echo $(( ${arg#*=} * 1024 )) > /sys/bus/scsi/drivers/st/fixed_buffer_size ;;
  esac
done
'''


class StHost:
    """The files the namespace puts in place, laid out under ``base``."""

    def __init__(self, base):
        self.base = base
        for name in ('sys/bus', 'sys/module', 'etc/modprobe.d', 'etc/modules-load.d'):
            os.makedirs(os.path.join(base, name))
        with open(os.path.join(base, 'modprobe'), 'w') as handle:
            handle.write(FAKE_MODPROBE % {'base': base, 'line': ST_PROC_MODULES_LINE})
        os.chmod(os.path.join(base, 'modprobe'), 0o755)
        self.stinit_def = os.path.join(base, 'stinit.def')

    def driver(self):
        """st registered with lab-ma2's recorded driver attributes."""
        with open(ST_GREP) as handle:
            for line in handle:
                if line.startswith('bus/scsi/drivers/st/'):
                    path, value = line.rstrip('\n').split(':', 1)
                    target = os.path.join(self.base, 'sys', path)
                    os.makedirs(os.path.dirname(target), exist_ok=True)
                    with open(target, 'w') as out:
                        out.write(value + '\n')

    def loaded(self):
        self.driver()
        os.makedirs(os.path.join(self.base, 'sys', 'module', 'st'))
        self.write('sys/module/st/initstate', 'live\n')
        self.write('modules', ST_PROC_MODULES_LINE + '\n')

    def write(self, relpath, text):
        with open(os.path.join(self.base, relpath), 'w') as handle:
            handle.write(text)

    def read(self, relpath):
        path = os.path.join(self.base, relpath)
        if not os.path.exists(path):
            return None
        with open(path) as handle:
            return handle.read()

    def modprobe_calls(self):
        return (self.read('modprobe.log') or '').splitlines()

    def etc(self):
        return {name: tree_digest(os.path.join(self.base, 'etc', name)) for name in ('modprobe.d', 'modules-load.d')}


def run_in_namespace(host, playbook, extra_vars, check=False):
    """run_playbook inside the test's mount namespace."""
    cmd = [os.path.join(BIN, 'ansible-playbook'), playbook, '-i', 'localhost,', '-e', json.dumps(extra_vars), '--diff']
    if check:
        cmd.append('--check')
    env = dict(os.environ)
    env.update({
        'ANSIBLE_COLLECTIONS_PATH': _collections_path(),
        'ANSIBLE_NOCOLOR': '1',
        'ANSIBLE_LOCALHOST_WARNING': 'false',
        'ANSIBLE_PYTHON_INTERPRETER': sys.executable,
        'ANSIBLE_RETRY_FILES_ENABLED': 'false',
    })
    proc = subprocess.run([UNSHARE, '-m', '--propagation', 'private', 'sh', '-c', NAMESPACE, 'namespace',
                           host.base] + cmd, env=env, capture_output=True, text=True, timeout=600, check=False)
    out = proc.stdout + proc.stderr
    recap = {m.group(1): {'ok': int(m.group(2)), 'changed': int(m.group(3)), 'failed': int(m.group(5))}
             for m in RECAP.finditer(out)}
    return proc.returncode, out, recap


def _namespace_works():
    if os.geteuid() != 0 or UNSHARE is None:
        return 'needs root and unshare (util-linux) for a mount namespace'
    proc = subprocess.run([UNSHARE, '-m', '--propagation', 'private', 'true'], capture_output=True, text=True,
                          check=False)
    return None if proc.returncode == 0 else 'unshare -m fails here: %s' % proc.stderr.strip()


NO_NAMESPACE = _namespace_works()
needs_namespace = pytest.mark.skipif(NO_NAMESPACE is not None, reason=NO_NAMESPACE or '')


@pytest.fixture
def st_host(tmp_path):
    return StHost(str(tmp_path / 'host'))


def st_ladder(host, extra_vars):
    counts, outputs = [], []
    for check in (True, False, True, False):
        rc, out, recap = run_in_namespace(host, MODPROBE_PLAYBOOK, extra_vars, check=check)
        assert rc == 0, out
        counts.append(recap['localhost']['changed'])
        outputs.append(out)
    return counts, outputs


def _module_task(out):
    """The community.general.modprobe task's line of one run: 'changed', 'ok' or 'skipping'."""
    match = re.search(r'TASK \[tapeops\.qualify\.st_tuning : Set the st module options persistently[^\n]*\n'
                      r'(changed|ok|skipping): \[localhost\]', out)
    assert match, out
    return match.group(1)


@needs_namespace
def test_st_module_options_ladder_on_a_loaded_st(st_host):
    # a tape host whose st is loaded, with an option of its own in another file, which community.general.modprobe
    # comments out there and the role carries into st.conf
    st_host.loaded()
    st_host.write('etc/modprobe.d/tape.conf', '# tape host\noptions st try_direct_io=1\n')
    extra = {'st_tuning_config': st_host.stinit_def, 'st_tuning_max_sg_segs': 513}
    counts, outputs = st_ladder(st_host, extra)
    assert changed_pattern(counts) == ['changed', 'changed', 'not changed', 'not changed'], outputs
    assert [_module_task(out) for out in outputs] == ['changed', 'changed', 'ok', 'ok']
    assert st_host.read('etc/modprobe.d/st.conf') == 'options st try_direct_io=1\noptions st max_sg_segs=513\n'
    assert st_host.read('etc/modules-load.d/st.conf') == 'st\n'
    assert [line for line in st_host.read('etc/modprobe.d/tape.conf').splitlines() if line] == [
        '# tape host', '#options st try_direct_io=1']
    # st was loaded: nothing was loaded or unloaded
    assert st_host.modprobe_calls() == []
    # diff mode shows the file in the check run and the real run, and nothing once it is there
    added = '+options st max_sg_segs=513'
    assert [added in out for out in outputs] == [True, True, False, False], outputs
    # the running st keeps 256 until it is loaded again, and each run says so
    for out in outputs:
        text = ' '.join(out.split())
        assert 'runs with max_sg_segs=256; max_sg_segs=513 in /etc/modprobe.d/st.conf take effect when st is next ' \
               'loaded' in text, out
        assert '"pending": { "max_sg_segs": { "running": 256, "wanted": 513 } }' in text, out


@needs_namespace
def test_st_module_options_load_an_st_not_loaded_with_them(st_host):
    # st is a module of the running kernel (modules.dep lists it), not loaded: community.general.modprobe loads it
    # with the options
    release = os.uname()[2]
    os.makedirs(os.path.join(st_host.base, 'lib', 'modules', release))
    st_host.write('lib/modules/%s/modules.dep' % release,
                  'kernel/drivers/scsi/st.ko.xz: kernel/drivers/scsi/scsi_mod.ko.xz\n')
    # a kernel's modules.builtin (community.general.modprobe reads it when /proc/modules lacks the module)
    st_host.write('lib/modules/%s/modules.builtin' % release, 'kernel/drivers/scsi/scsi_common.ko\n')
    st_host.write('modules', 'sg 45056 0 - Live 0x0000000000000000\n')
    extra = {'st_tuning_config': st_host.stinit_def, 'st_tuning_buffer_kbs': 256}
    counts, outputs = st_ladder(st_host, extra)
    assert changed_pattern(counts) == ['changed', 'changed', 'not changed', 'not changed'], outputs
    assert [_module_task(out) for out in outputs] == ['changed', 'changed', 'ok', 'ok']
    # a dry run in check mode, then one load with the option; never an unload
    assert st_host.modprobe_calls() == ['-n st buffer_kbs=256', 'st buffer_kbs=256']
    assert st_host.read('etc/modprobe.d/st.conf') == 'options st buffer_kbs=256\n'
    assert 'community.general.modprobe loads it with buffer_kbs=256 now' in ' '.join(outputs[0].split())
    # loaded with it: nothing pending afterwards
    assert '"pending": {}' in ' '.join(outputs[3].split()), outputs[3]


@needs_namespace
def test_st_module_options_on_a_builtin_st_change_nothing_and_say_what_to_do(st_host):
    # st built in (the lab's user-mode-linux guests: no loadable modules, no /proc/modules)
    st_host.driver()
    before = st_host.etc()
    rc, out, recap = run_in_namespace(st_host, MODPROBE_PLAYBOOK, {'st_tuning_config': st_host.stinit_def,
                                                                   'st_tuning_max_sg_segs': 513})
    assert rc == 0, out
    assert _module_task(out) == 'skipping'
    assert st_host.etc() == before and st_host.modprobe_calls() == []
    text = ' '.join(out.split())
    assert '[WARNING]: st is built into the kernel (the st driver is registered, /sys/module/st/initstate is absent ' \
           'and the kernel has no loadable modules): its options are set only on the kernel command line' in text, out
    assert 'Add st.max_sg_segs=513 to it' in text and 'Nothing was changed.' in text


@needs_namespace
def test_st_module_option_bad_value_fails_before_anything_changes(st_host):
    st_host.loaded()
    before = st_host.etc()
    rc, out, recap = run_in_namespace(st_host, MODPROBE_PLAYBOOK, {'st_tuning_config': st_host.stinit_def,
                                                                   'st_tuning_max_sg_segs': 4})
    assert rc != 0
    assert 'st max_sg_segs must be a whole number from 8 to 65535, got 4' in out, out
    assert st_host.etc() == before and st_host.read('stinit.def') is None
