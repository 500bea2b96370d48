# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``lab`` fixture: user-mode-linux media agents with real tape devices.

Use it in any test that needs real st/sg/ch devices over SSH::

    import pytest

    @pytest.mark.lab
    def test_something(lab):
        proc = lab.run('lab-ma1', 'mt -f /dev/nst0 status')
        assert proc.returncode == 0
        result = lab.playbook('tests/integration/targets/x/play.yml', extra_vars={'a': 1})
        assert result.rc == 0, result.stdout

The fixture is session-scoped. It brings the lab up with ``lab/tapelab up``
unless it already runs (then it is reused and left running), and brings it
down at the end of the session if it started it. Environment:

* ``TAPEOPS_LAB_INVENTORY``: use this existing inventory (a lab someone else
  runs); nothing is started or stopped.
* ``TAPEOPS_LAB_DIR``: run directory of the lab (default /var/tmp/tapeops-lab).
* ``TAPEOPS_LAB_KEEP=1``: leave a lab this session started running.
* ``TAPEOPS_LAB_GUESTS``: number of guests when the fixture starts the lab.

See docs/lab.md for the inventory variables of each guest.
"""

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TAPELAB = os.path.join(ROOT, 'lab', 'tapelab')
LAB_INVENTORY = os.path.join(ROOT, 'inventories', 'lab', 'hosts.yml')


def collections_path():
    """The directory holding ansible_collections/tapeops/qualify (see tests/conftest.py)."""
    for entry in sys.path:
        link = os.path.join(entry or '.', 'ansible_collections', 'tapeops', 'qualify')
        if os.path.isdir(link) and os.path.realpath(link) == os.path.realpath(ROOT):
            return os.path.abspath(entry)
    parts = ROOT.split(os.sep)
    if parts[-3:] == ['ansible_collections', 'tapeops', 'qualify']:
        return os.sep.join(parts[:-3]) or os.sep
    raise RuntimeError('cannot find ansible_collections/tapeops/qualify for %s: run pytest from the checkout '
                       'so that tests/conftest.py sets it up' % ROOT)


def venv_tool(name):
    here = os.path.join(os.path.dirname(sys.executable), name)
    return here if os.path.exists(here) else (shutil.which(name) or name)


@dataclass
class PlaybookResult:
    rc: int
    stdout: str
    stderr: str
    cmd: list = field(default_factory=list)

    def __bool__(self):
        return self.rc == 0


class LabHandle:
    """What the ``lab`` fixture yields.

    The tests' own commands on a guest (``run``) share one SSH connection per guest (OpenSSH's ControlMaster, as
    Ansible's connections do), kept 20 s after its last command; ``close`` ends them. A fresh connection for each
    command cost the guest a new sshd, its key exchange and its login, every system call of them traced by
    user-mode Linux: the default lab's guests took 1,155, 391 and 286 connections in one test run, most of them
    the tests' polls. The sockets live in a directory of this handle's own, so no connection outlives its lab.
    """

    CONTROL_PERSIST_S = 20

    def __init__(self, inventory, started):
        self.inventory = inventory
        self.started = started
        with open(inventory) as f:
            data = yaml.safe_load(f)
        self.hostvars = dict(data['all']['children']['media_agents']['hosts'])
        self.hosts = sorted(self.hostvars)
        # short: a socket's path must fit in 108 bytes, and %C is 40 of them
        self.control_dir = tempfile.mkdtemp(prefix='tapeops-ssh-')

    def _ssh(self, host):
        hv = self.hostvars[host]
        return (['ssh'] + shlex.split(hv.get('ansible_ssh_common_args', '')) +
                ['-o', 'ControlPath=%s' % os.path.join(self.control_dir, '%C'),
                 '-i', hv['ansible_ssh_private_key_file'], '-p', str(hv['ansible_port'])])

    def _target(self, host):
        hv = self.hostvars[host]
        return '%s@%s' % (hv.get('ansible_user', 'root'), hv['ansible_host'])

    def ssh_command(self, host, cmd):
        return (self._ssh(host) + ['-o', 'ControlMaster=auto', '-o', 'ControlPersist=%d' % self.CONTROL_PERSIST_S,
                                   self._target(host), cmd])

    def close(self):
        """End the shared connections (each master exits) and remove their directory."""
        for host in self.hosts:
            subprocess.run(self._ssh(host) + ['-O', 'exit', self._target(host)], capture_output=True,
                           timeout=30, check=False, stdin=subprocess.DEVNULL)
        shutil.rmtree(self.control_dir, ignore_errors=True)

    def run(self, host, cmd, timeout=300, check=False, input=None):  # pylint: disable=redefined-builtin
        """Run a shell command on a guest over SSH; return subprocess.CompletedProcess (text)."""
        if host not in self.hostvars:
            raise KeyError('unknown lab host %r; the lab has %s' % (host, ', '.join(self.hosts)))
        return subprocess.run(self.ssh_command(host, cmd), input=input, capture_output=True, text=True,
                              timeout=timeout, check=check, stdin=None if input is not None else subprocess.DEVNULL)

    def env(self):
        env = dict(os.environ)
        env.update({
            'ANSIBLE_COLLECTIONS_PATH': collections_path(),
            'ANSIBLE_COLLECTIONS_SCAN_SYS_PATH': 'false',
            'ANSIBLE_NOCOLOR': '1',
            'ANSIBLE_FORCE_COLOR': '0',
            'ANSIBLE_RETRY_FILES_ENABLED': 'false',
            'ANSIBLE_PIPELINING': 'true',
            'ANSIBLE_HOST_KEY_CHECKING': 'true',
            'LC_ALL': 'C.UTF-8',
        })
        return env

    def playbook(self, path, extra_vars=None, check=False, limit=None, timeout=1800, args=()):
        """Run ansible-playbook on the lab inventory.

        ``path`` is a playbook file (absolute, or relative to the collection
        root) or an FQCN such as ``tapeops.qualify.qualify``.
        """
        if not os.path.isabs(path) and os.path.exists(os.path.join(ROOT, path)):
            path = os.path.join(ROOT, path)
        cmd = [venv_tool('ansible-playbook'), '-i', self.inventory, path]
        if extra_vars:
            import json  # pylint: disable=import-outside-toplevel
            cmd += ['-e', json.dumps(extra_vars)]
        if check:
            cmd.append('--check')
        if limit:
            cmd += ['--limit', limit if isinstance(limit, str) else ','.join(limit)]
        cmd += list(args)
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=self.env(),
                              cwd=ROOT, stdin=subprocess.DEVNULL, check=False)
        return PlaybookResult(proc.returncode, proc.stdout, proc.stderr, cmd)


LAB_MESSAGES = []


def tapelab(*args, timeout=600, show=False):
    """Run lab/tapelab. With ``show``, its messages (boot times, how to stop)
    are also repeated in pytest's terminal summary, so every CI log has them."""
    proc = subprocess.run([TAPELAB] + list(args), capture_output=True, text=True, timeout=timeout, check=False)
    sys.stderr.write(proc.stderr)
    if show:
        LAB_MESSAGES.extend(proc.stderr.splitlines())
    return proc


# Wall time per test file (setup, call and teardown of its tests), in the terminal summary of every run:
# where the test command's time goes (docs/development.md, "Test budget").
FILE_SECONDS = {}


def pytest_runtest_logreport(report):
    path = report.nodeid.split('::', 1)[0]
    if CLAIMED.get(path) is False:
        return                                  # a file the other lab runs (pytest_runtest_setup)
    FILE_SECONDS[path] = FILE_SECONDS.get(path, 0.0) + report.duration


# tools/run test runs the lab's timed test files on two labs (docs/development.md, "Test budget"): the default lab
# from the first file on, the second lab from the last file back once its untimed tests are done. Each session,
# given TAPEOPS_TIMED_CLAIMS (a directory both share), claims a file when it reaches the file's first test (mkdir:
# atomic, so exactly one lab runs it) and skips the tests of a file the other lab has claimed.
CLAIMED = {}


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    claims = os.environ.get('TAPEOPS_TIMED_CLAIMS')
    if not claims:
        return
    path = item.nodeid.split('::', 1)[0]
    if path not in CLAIMED:
        os.makedirs(claims, exist_ok=True)
        try:
            os.mkdir(os.path.join(claims, path.replace('/', '_')))
            CLAIMED[path] = True
        except FileExistsError:
            CLAIMED[path] = False
    if not CLAIMED[path]:
        pytest.skip('run on the other lab (TAPEOPS_TIMED_CLAIMS: %s)' % claims)


def pytest_terminal_summary(terminalreporter):
    if LAB_MESSAGES:
        terminalreporter.section('lab')
        for line in LAB_MESSAGES:
            terminalreporter.write_line(line)
    if FILE_SECONDS:
        terminalreporter.section('time by file')
        for path, seconds in sorted(FILE_SECONDS.items(), key=lambda item: -item[1]):
            terminalreporter.write_line('%7.1f s  %s' % (seconds, path))
        terminalreporter.write_line('%7.1f s  in all' % sum(FILE_SECONDS.values()))
    others = sorted(path for path, mine in CLAIMED.items() if not mine)
    if others:
        terminalreporter.section('run on the other lab')
        for path in others:
            terminalreporter.write_line(path)


@pytest.fixture(scope='session')
def lab():
    given = os.environ.get('TAPEOPS_LAB_INVENTORY')
    if given:
        if not os.path.exists(given):
            pytest.fail('TAPEOPS_LAB_INVENTORY=%s does not exist: unset it to let the fixture start the lab' % given)
        handle = LabHandle(given, started=False)
        try:
            yield handle
        finally:
            handle.close()
        return
    started = False
    if tapelab('status').returncode != 0:
        proc = tapelab('up', show=True)
        if proc.returncode != 0:
            # a half-started lab is stopped too: nothing may outlive the session
            tapelab('down', show=True)
            pytest.fail('lab/tapelab up failed (rc=%d):\n%s\n%s' % (proc.returncode, proc.stdout, proc.stderr))
        started = True
        # SIGTERM (a CI timeout, a killed run) unwinds like Ctrl-C, so the finally below stops the lab.
        previous = signal.getsignal(signal.SIGTERM)

        def on_term(_signum, _frame):
            raise KeyboardInterrupt('SIGTERM: stopping the lab')
        if previous in (signal.SIG_DFL, None):
            signal.signal(signal.SIGTERM, on_term)
    proc = tapelab('inventory')
    if proc.returncode != 0:
        pytest.fail('lab/tapelab inventory failed:\n%s' % proc.stderr)
    # First line: the inventory in the run dir (with a copy of group_vars);
    # the checkout's inventories/lab/hosts.yml is written for the default lab.
    paths = proc.stdout.split()
    inventory = LAB_INVENTORY if LAB_INVENTORY in paths else paths[0]
    handle = LabHandle(inventory, started=started)
    try:
        yield handle
    finally:
        handle.close()
        if started and os.environ.get('TAPEOPS_LAB_KEEP', '') not in ('1', 'yes', 'true'):
            tapelab('down', show=True)


@pytest.fixture
def lab_record(lab, request):
    """``lab_record(name, data)``: keep a test's measurements (JSON) for later comparisons.

    Written to <lab run dir>/e2e/<name>.json (the run dir of the first guest)
    and summarised in pytest's terminal summary, so every CI log carries the
    numbers (source series, drive-reported back-hitches and bytes, times).
    """
    run_dir = lab.hostvars[lab.hosts[0]].get('tapeops_lab_run_dir') or '/var/tmp/tapeops-lab'
    out_dir = os.path.join(run_dir, 'e2e')

    def record(name, data):
        os.makedirs(out_dir, exist_ok=True)
        safe = re.sub(r'[^A-Za-z0-9_.-]+', '_', name)
        path = os.path.join(out_dir, safe + '.json')
        data = dict(data, test=request.node.nodeid)
        with open(path, 'w') as handle:
            json.dump(data, handle, indent=1, sort_keys=True)
        brief = {k: v for k, v in data.items() if isinstance(v, (int, float, str)) and k != 'test'}
        LAB_MESSAGES.append('%s: %s (%s)' % (name, json.dumps(brief, sort_keys=True), path))
        return path
    return record
