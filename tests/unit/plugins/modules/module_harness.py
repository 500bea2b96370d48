# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Run a module's main() in-process, the way community.crypto and community.docker unit-test modules.

- ``set_module_args(args)``: the arguments AnsibleModule reads. ansible-core 2.19 has
  ``ansible.module_utils.testing.patch_module_args``; 2.16 to 2.18 (which meta/runtime.yml also claims, and
  the unit tests run on) read ``ansible.module_utils.basic._ANSIBLE_ARGS``.
- ``run_module(main, args)`` runs it and returns ``(failed, result)``: exit_json / fail_json raise instead
  of exiting, with the result dict as the module built it.
- ``recorded_tools(tmp_path, monkeypatch, {'mt': 'mt/mt_status....txt'})``: every named tool on PATH
  is a script that prints that recorded capture (its ``#`` source header removed) and exits 0, so the
  module runs its real command runner (module_utils/_tools/_cli.py) and its real parsers on real output.
- ``scripted_tools(tmp_path, monkeypatch, {'sg_logs': [('-p 0x00 *', 'sg_logs/....txt', 0), ...]})``: the same
  with the capture chosen by the arguments, on stdout or stderr, with an exit code; ``Derived`` output (derived
  from a recorded one, saying how) and ``Sleeps`` (a tool that outlives its timeout); ``tool_calls(tmp_path)``
  lists the commands the tools received.
- ``module_warnings(monkeypatch)``: what the module passed to ``AnsibleModule.warn``, in order.
- ``run_module_process(name, args)``: the module as Ansible runs it, a child process; ``(rc, result)``.
- ``tree_state(root)``: every file's content hash, mode, size and mtime under ``root``, to prove a run read it
  only.
- ``FakeDrive``, ``fake_sys(root)``, ``fit(gate, drive, sys_root)``: the st drive the write gate
  (module_utils/_measure/_tape_safety.py) sees where no st device exists: a real descriptor of /dev/null whose
  fstat says st 9:128, the sysfs of nst0 on a sequential-access SCSI device, and the drive's MTIOCGET / read
  answers injected into the gate's probe (test_write_gate_modules, test_btape_speed_main,
  test_mechanics_benchmark_main).
"""

from __future__ import annotations

import contextlib
import json
import os
import stat

from ansible.module_utils import basic
from ansible.module_utils.common.text.converters import to_bytes

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures')


class ModuleExit(SystemExit):
    """exit_json or fail_json was called; ``result`` is what the module returned.

    A SystemExit, as the sys.exit() that ends exit_json / fail_json is: a module's ``except Exception`` around a
    call that fails the module does not catch it here either.
    """

    def __init__(self, failed, result):
        super().__init__(result.get('msg'))
        self.failed = failed
        self.result = result


@contextlib.contextmanager
def set_module_args(args):
    try:
        from ansible.module_utils.testing import patch_module_args  # pylint: disable=import-outside-toplevel
    except ImportError:  # ansible-core before 2.19
        saved = getattr(basic, '_ANSIBLE_ARGS', None)
        basic._ANSIBLE_ARGS = to_bytes(json.dumps({'ANSIBLE_MODULE_ARGS': args}))  # pylint: disable=protected-access
        try:
            yield
        finally:
            basic._ANSIBLE_ARGS = saved  # pylint: disable=protected-access
    else:
        with patch_module_args(args):
            yield


def run_module(main, args, monkeypatch, check_mode=False, diff=False):
    """(failed, result) of one run of ``main`` with ``args``."""
    def exit_json(self, **kwargs):  # pylint: disable=unused-argument
        kwargs.setdefault('changed', False)
        raise ModuleExit(False, kwargs)

    def fail_json(self, msg=None, **kwargs):  # pylint: disable=unused-argument
        kwargs['msg'] = msg
        kwargs['failed'] = True
        raise ModuleExit(True, kwargs)

    monkeypatch.setattr(basic.AnsibleModule, 'exit_json', exit_json)
    monkeypatch.setattr(basic.AnsibleModule, 'fail_json', fail_json)
    payload = dict(args)
    if check_mode:
        payload['_ansible_check_mode'] = True
    if diff:
        payload['_ansible_diff'] = True
    with set_module_args(payload):
        try:
            main()
        except ModuleExit as done:
            return done.failed, done.result
    raise AssertionError('the module returned without exit_json or fail_json')


def fixture_text(relpath):
    """A recorded capture without its source header (the leading '# ' lines)."""
    with open(os.path.join(FIXTURES, relpath)) as handle:
        lines = handle.read().splitlines(True)
    while lines and lines[0].startswith('# '):
        lines.pop(0)
    return ''.join(lines)


def recorded_tools(tmp_path, monkeypatch, tools):
    """Put a script per tool first on PATH that prints its recorded output; returns the bin directory."""
    bindir = tmp_path / 'recorded-bin'
    bindir.mkdir(exist_ok=True)
    for name, relpath in tools.items():
        out = tmp_path / ('%s.out' % name)
        out.write_text(fixture_text(relpath))
        script = bindir / name
        script.write_text('#!/bin/sh\nexec cat %s\n' % out)
        script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    monkeypatch.setenv('PATH', '%s%s%s' % (bindir, os.pathsep, os.environ.get('PATH', '')))
    return bindir


class Derived:
    """Tool output not recorded as such, derived from a recorded one; ``how`` says from what (kept in the script).

    ``stream``: ``'stdout'`` or ``'stderr'``, where the tool prints it.
    """

    def __init__(self, text, how, stream='stdout'):
        self.text = text
        self.how = how
        self.stream = stream


class Sleeps:
    """A tool that prints nothing and sleeps ``seconds`` (exec'd, so the runner's kill ends it), for timeouts."""

    def __init__(self, seconds):
        self.seconds = seconds


def _glob_for_sh(pattern):
    """``pattern`` as a sh ``case`` pattern: ``*`` and ``?`` stay wildcards, every other character is literal."""
    return ''.join(c if c.isalnum() or c in '*?' else '\\' + c for c in pattern)


def scripted_tools(tmp_path, monkeypatch, tools):
    """Like ``recorded_tools``, with the output chosen by the tool's arguments.

    ``tools`` maps a tool name to ``[(glob on "$*", output, rc), ...]``, the first match wins; ``output`` is a
    fixture path (its source header removed), a ``Derived`` or a ``Sleeps``; ``rc`` the exit code. A fixture
    path ending in ``:stderr`` goes to stderr. Arguments no glob matches exit 99 saying so. Every call is logged
    (see ``tool_calls``). Returns the bin directory, put first on PATH.
    """
    bindir = tmp_path / 'scripted-bin'
    bindir.mkdir(exist_ok=True)
    log = tmp_path / 'tool-calls.log'
    for name, cases in tools.items():
        lines = ['#!/bin/sh', 'echo "%s $*" >>%s' % (name, log), 'case "$*" in']
        for index, (pattern, output, rc) in enumerate(cases):
            if isinstance(output, Sleeps):
                lines.append('  %s) exec sleep %s;;' % (_glob_for_sh(pattern), output.seconds))
                continue
            stream = ''
            if isinstance(output, Derived):
                lines.insert(1, '# %s' % output.how.replace('\n', ' '))
                text = output.text
                stream = ' >&2' if output.stream == 'stderr' else ''
            else:
                if output.endswith(':stderr'):
                    output, stream = output[:-len(':stderr')], ' >&2'
                text = fixture_text(output)
            out = tmp_path / ('%s.%d.out' % (name, index))
            out.write_text(text)
            lines.append('  %s) cat %s%s; exit %d;;' % (_glob_for_sh(pattern), out, stream, rc))
        lines.append('  *) echo "no recorded output for: %s $*" >&2; exit 99;;' % name)
        lines.append('esac')
        script = bindir / name
        script.write_text('\n'.join(lines) + '\n')
        script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    monkeypatch.setenv('PATH', '%s%s%s' % (bindir, os.pathsep, os.environ.get('PATH', '')))
    return bindir


def tool_calls(tmp_path):
    """The calls ``scripted_tools``' tools received, in order, as ``'name arg1 arg2'`` lines."""
    log = tmp_path / 'tool-calls.log'
    return log.read_text().splitlines() if log.exists() else []


def module_warnings(monkeypatch):
    """The list AnsibleModule.warn appends to from now on, in order.

    ansible-core 2.19 sends a module's warnings to the controller's Display once any test has imported controller
    code (``_internal.is_controller``); recording them at ``warn`` reads the same on every minor and test order.
    """
    said = []
    monkeypatch.setattr(basic.AnsibleModule, 'warn', lambda self, warning, **kwargs: said.append(warning))
    return said


def run_module_process(name, args, check_mode=False, timeout=120, env=None, cwd='/', user=None):
    """``(rc, result)`` of module ``name`` run as Ansible runs it: a child process given its arguments as JSON.

    For what an in-process ``run_module`` cannot show: the exit code, the JSON on stdout, a module that exits
    before it reaches main(). ``env`` is added to this process's environment (LC_ALL=C and the collection on
    PYTHONPATH are always set). ``user``: a uid to run the module as (through setpriv; the caller is root).
    """
    import subprocess  # pylint: disable=import-outside-toplevel
    import sys  # pylint: disable=import-outside-toplevel
    import tempfile  # pylint: disable=import-outside-toplevel

    import ansible_collections  # pylint: disable=import-outside-toplevel
    payload = dict(args)
    if check_mode:
        payload['_ansible_check_mode'] = True
    handle, args_path = tempfile.mkstemp(prefix='tapeops-args-', suffix='.json')
    with os.fdopen(handle, 'w') as out:
        json.dump({'ANSIBLE_MODULE_ARGS': payload}, out)
    os.chmod(args_path, 0o644)  # readable by ``user``
    cmd = [sys.executable, '-m', 'ansible_collections.tapeops.qualify.plugins.modules.' + name, args_path]
    if user is not None:
        cmd = ['setpriv', '--reuid=%d' % user, '--regid=%d' % user, '--clear-groups'] + cmd
    collections_base = os.path.dirname(list(ansible_collections.__path__)[0])
    environ = dict(os.environ, PYTHONPATH=collections_base, LC_ALL='C')
    environ.update(env or {})
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=environ, cwd=cwd,
                              check=False)
    finally:
        os.unlink(args_path)
    try:
        return proc.returncode, json.loads(proc.stdout)
    except ValueError:
        raise AssertionError('%s printed no JSON (rc %d): %s %s' % (name, proc.returncode, proc.stdout, proc.stderr))


def tree_state(root):
    """Recursive content hash, mode, size and mtime of everything under root (symlinks by target): equal
    before and after a run that must only read ``root``."""
    import hashlib  # pylint: disable=import-outside-toplevel

    state = {}
    for directory, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(dirs + files):
            path = os.path.join(directory, name)
            st = os.lstat(path)
            entry = (stat.S_IFMT(st.st_mode), st.st_mode & 0o7777, st.st_size, st.st_mtime_ns)
            if stat.S_ISREG(st.st_mode):
                digest = hashlib.sha256()
                with open(path, 'rb') as handle:
                    for block in iter(lambda: handle.read(1048576), b''):
                        digest.update(block)
                entry += (digest.hexdigest(),)
            elif stat.S_ISLNK(st.st_mode):
                entry += (os.readlink(path),)
            state[os.path.relpath(path, root)] = entry
    return state


# ---------------------------------------------------------------- a fake st drive for the write gate

class FakeStat:
    def __init__(self, mode, major=0, minor=0):
        self.st_mode = mode
        self.st_rdev = os.makedev(major, minor)


def fake_sys(root):
    """The sysfs of one st drive nst0 (9:128) on a sequential-access SCSI device, as the kernel lays it out."""
    devices = root / 'devices' / 'platform' / 'host0' / 'target0:0:0' / '0:0:0:0'
    devices.mkdir(parents=True)
    (devices / 'type').write_text('1\n')
    node = devices / 'scsi_tape' / 'nst0'
    node.mkdir(parents=True)
    (node / 'device').symlink_to(devices)
    (root / 'dev' / 'char').mkdir(parents=True)
    (root / 'dev' / 'char' / '9:128').symlink_to(node)
    return str(root)


class FakeDrive:
    """An st drive behind a descriptor: status flags, what one read at BOT returns, every open recorded."""

    def __init__(self, flags, read_result=b''):
        self.flags = list(flags)
        self.read_result = read_result
        self.opens = []

    def opener(self, path, flags):
        self.opens.append(flags)
        return os.open(os.devnull, os.O_RDONLY)  # a real descriptor to close; fstat below says it is st 9:128

    @staticmethod
    def fstat(fd):
        return FakeStat(stat.S_IFCHR | 0o660, 9, 128)

    @staticmethod
    def stat(path):
        return FakeStat(stat.S_IFCHR | 0o660, 9, 128)

    def mtget(self, fd, timeout=None):
        return {'flags': list(self.flags), 'file_number': 0, 'block_number': 0}

    def mtop(self, fd, op, count=1, timeout=None):
        pass

    def read(self, fd, size):
        return self.read_result

    def wrote(self):
        return [flags for flags in self.opens if flags & (os.O_WRONLY | os.O_RDWR)]


def fit(gate, drive, sys_root):
    gate.sys_root = sys_root
    gate.stat_func, gate.opener, gate.fstat = drive.stat, drive.opener, drive.fstat
    gate.probe_io = {'mtget': drive.mtget, 'mtop': drive.mtop, 'read': drive.read}
    return gate
