# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Run command-line tools with a fixed locale and fail with evidence.

Private to this collection: may change without notice.

Modeled on community.docker's ``_common_cli`` (one place runs the tool; a
failure carries ``cmd``, ``rc``, ``stdout``, ``stderr``) and community.general's
``CmdRunner`` (``LC_ALL=C`` before any output is parsed).

Tool output is read as bytes and decoded as UTF-8 with replacement: a vendor
string or serial with bytes that are not UTF-8 shows U+FFFD instead of
stopping the run with UnicodeDecodeError; the bytes themselves stay in
``CliResult.stdout_bytes`` / ``stderr_bytes`` for the callers that need them.
"""

from __future__ import annotations

import os
import shutil
import subprocess

from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError

C_LOCALE_ENV = {'LC_ALL': 'C', 'LANG': 'C', 'LANGUAGE': 'C'}

# How long a tool killed after its timeout gets to end. A tool waiting on a hung
# tape drive sits in the kernel (uninterruptible, state D): SIGKILL takes effect
# only when the device answers, so waiting for it to die would make the timeout
# unbounded (subprocess.run does exactly that). After this grace it is left
# behind, named in the error, and ends by itself when the device answers.
KILL_GRACE_S = 5

# Tools left behind in the kernel (see KILL_GRACE_S): kept referenced so the
# interpreter does not warn about a child it never waited for.
ABANDONED = []


class CliError(TapeopsError):
    """A tool failed. Carries the evidence and a sentence saying what to do."""

    def __init__(self, msg, cmd=None, rc=None, stdout=None, stderr=None, hint=None, hung=False, timed_out=False,
                 missing=None):
        super().__init__(msg)
        # the tool's name when it is not installed (see missing_tool), else None
        self.missing = missing
        # True when the tool did not finish within its timeout (it was stopped, or see hung)
        self.timed_out = timed_out or hung
        # True when the tool could not be stopped: it waits in the kernel for a device that does not answer
        self.hung = hung
        self.msg = msg
        self.cmd = cmd
        self.rc = rc
        self.stdout = stdout
        self.stderr = stderr
        self.hint = hint

    def as_fail_kwargs(self):
        """Keyword arguments for ``AnsibleModule.fail_json``."""
        msg = self.msg if not self.hint else '%s %s' % (self.msg, self.hint)
        result = {'msg': msg}
        for key in ('cmd', 'rc', 'stdout', 'stderr'):
            value = getattr(self, key)
            if value is not None:
                result[key] = value
        return result


def decode(data):
    """Tool output as text: UTF-8, undecodable bytes as U+FFFD (never raises)."""
    if data is None:
        return ''
    if isinstance(data, bytes):
        return data.decode('utf-8', 'replace')
    return data


class CliResult:
    """Outcome of one command; ``stdout``/``stderr`` are text, ``*_bytes`` what the tool wrote."""

    __slots__ = ('cmd', 'rc', 'stdout', 'stderr', 'stdout_bytes', 'stderr_bytes')

    def __init__(self, cmd, rc, stdout, stderr, stdout_bytes=None, stderr_bytes=None):
        self.cmd = cmd
        self.rc = rc
        self.stdout = decode(stdout)
        self.stderr = decode(stderr)
        self.stdout_bytes = stdout_bytes if stdout_bytes is not None else (
            stdout if isinstance(stdout, bytes) else self.stdout.encode('utf-8'))
        self.stderr_bytes = stderr_bytes if stderr_bytes is not None else (
            stderr if isinstance(stderr, bytes) else self.stderr.encode('utf-8'))

    @property
    def ok(self):
        return self.rc == 0


# Which package installs each tool the collection runs, one alternative per backup product where there are two:
# (for whom, Debian/Ubuntu package, RHEL package); bindep.txt lists the packages of the managed hosts. Every sg_*
# tool (sg_inq, sg_logs, sg_raw, sg_read_block_limits, ...) is sg3_utils'.
MT_ST = ((None, 'mt-st', 'mt-st'),)
MTX = ((None, 'mtx', 'mtx'),)
SG3_UTILS = ((None, 'sg3-utils', 'sg3_utils'),)
BACULA_SD = (('Bacula', 'bacula-sd', 'bacula-storage'),)
BAREOS_SD = (('Bareos', 'bareos-storage', 'bareos-storage'),)
TOOL_PACKAGES = {
    'mt': MT_ST,
    'mt-st': MT_ST,
    'stinit': MT_ST,
    'mtx': MTX,
    'tapeinfo': MTX,
    'loaderinfo': MTX,
    'lsscsi': ((None, 'lsscsi', 'lsscsi'),),
    'fio': ((None, 'fio', 'fio'),),
    'btape': BACULA_SD + (('Bareos', 'bareos-storage-tape', 'bareos-storage-tape'),),
    'bacula-sd': BACULA_SD,
    'bareos-sd': BAREOS_SD,
    'bconsole': (('Bacula', 'bacula-console', 'bacula-console'), ('Bareos', 'bareos-bconsole', 'bareos-bconsole')),
}


def packages_of(name):
    """The packages that install tool ``name`` (see TOOL_PACKAGES), or None for a tool not listed."""
    name = os.path.basename(name)
    if name.startswith('sg_'):
        return SG3_UTILS
    return TOOL_PACKAGES.get(name)


def install_hint(name):
    """The sentence saying which package to install for tool ``name``, or None for a tool not listed.

    ``Install the mtx package (Debian/Ubuntu: apt install mtx; RHEL: dnf install mtx) and run again.``
    """
    packages = packages_of(name)
    if not packages:
        return None
    each = ['the %s package%s (Debian/Ubuntu: apt install %s; RHEL: dnf install %s)' % (
        deb, ' for %s' % who if who else '', deb, rpm) for who, deb, rpm in packages]
    return 'Install %s and run again.' % ' or '.join(each)


def missing_tool(name, searched, cmd=None):
    """The CliError of a tool that is not installed: what was searched, the package to install.

    ``searched``: the words naming where it was looked for (``on PATH /usr/bin:/bin``).
    """
    name = os.path.basename(name)
    hint = install_hint(name) or 'Install it (see bindep.txt at the collection root for package names).'
    return CliError('%s is not installed on this host (not found %s).' % (name, searched), cmd=cmd, hint=hint,
                    missing=name)


# Where a tool is looked for after PATH: root's shell finds mtx, btape and stinit there, and an Ansible
# connection's PATH (a non-login shell, sudo's secure_path) may lack them.
SBIN_DIRS = ('/usr/sbin', '/sbin')


def tool_search_path(path=None):
    """The directories ``find_tool`` searches, in order: ``path`` (default $PATH), then SBIN_DIRS not in it."""
    dirs = [d for d in (os.environ.get('PATH', '') if path is None else path).split(os.pathsep) if d]
    return os.pathsep.join(dirs + [d for d in SBIN_DIRS if d not in dirs])


def find_tool(name, module=None, required=True, hint=None):
    """Return the path of ``name``; raise CliError when it is required and missing.

    PATH first, then /usr/sbin and /sbin, as a shell does for root: a tool put
    first on PATH (another btape build, a test's recorded tool) is the one run.
    ``AnsibleModule.get_bin_path(opt_dirs=...)`` searches its ``opt_dirs``
    before PATH, so it is not used; ``module`` is accepted for the callers
    that pass it and does not change the search.
    """
    del module  # the search is the same with or without a module (see above)
    path = shutil.which(name, path=tool_search_path())
    if path is None and required:
        if packages_of(name):
            # the package comes from TOOL_PACKAGES; ``hint`` adds what else the caller can do
            error = missing_tool(name, 'in %s' % tool_search_path())
            if hint:
                error.hint = '%s %s' % (error.hint, hint)
            raise error
        raise CliError(
            '%s was not found on this host (searched %s).' % (name, tool_search_path()),
            hint=hint or 'Install it (see bindep.txt at the collection root for package names).',
            missing=name,
        )
    return path


def run(cmd, module=None, check=False, hint=None, timeout=None, data=None):
    """Run ``cmd`` (a list) with ``LC_ALL=C``; return a CliResult.

    With ``module`` (an AnsibleModule), ``module.run_command`` is used so the
    command shows up in Ansible's logs the usual way; otherwise subprocess.
    ``check=True`` raises CliError on a non-zero exit, with ``hint`` as the
    sentence saying what to do.
    """
    cmd = [str(c) for c in cmd]
    if module is not None and timeout is None:
        # encoding=None: bytes back, decoded below with replacement.
        rc, out, err = module.run_command(cmd, environ_update=dict(C_LOCALE_ENV), data=data,
                                          binary_data=data is not None, encoding=None)
    else:
        env = dict(os.environ)
        env.update(C_LOCALE_ENV)
        if isinstance(data, str):
            data = data.encode('utf-8')
        rc, out, err = _run_bounded(cmd, env, timeout, data, hint)
    result = CliResult(cmd, rc, out, err)
    if check and rc != 0:
        raise CliError('%s failed with exit code %d.' % (' '.join(cmd), rc), cmd=cmd, rc=rc,
                       stdout=result.stdout, stderr=result.stderr, hint=hint)
    return result


def _run_bounded(cmd, env, timeout, data, hint):
    """``(rc, stdout, stderr)`` of ``cmd``; never waits longer than ``timeout`` + KILL_GRACE_S."""
    try:
        proc = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE if data is not None else subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except FileNotFoundError as exc:
        if os.sep in cmd[0]:
            # a path given that does not exist (an option naming the tool): not a package to install
            raise CliError('Cannot run %s: %s.' % (cmd[0], exc), cmd=cmd,
                           hint=hint or 'Install the tool or fix its path.') from exc
        raise missing_tool(cmd[0], 'on PATH %s' % env.get('PATH', ''), cmd=cmd) from exc
    except OSError as exc:
        raise CliError('Cannot run %s: %s.' % (cmd[0], exc), cmd=cmd,
                       hint=hint or 'Install the tool or fix its path.') from exc
    try:
        out, err = proc.communicate(input=data, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        proc.kill()
        out, err = exc.stdout, exc.stderr
        try:
            more_out, more_err = proc.communicate(timeout=KILL_GRACE_S)
            out, err = (out or b'') + (more_out or b''), (err or b'') + (more_err or b'')
        except subprocess.TimeoutExpired:
            # the tool is dead but a child of it holds its output open, or the tool cannot die (state D)
            for pipe in (proc.stdout, proc.stderr):
                if pipe is not None:
                    pipe.close()
        if proc.poll() is not None:
            raise CliError('%s did not finish within %s seconds.' % (cmd[0], timeout), cmd=cmd,
                           stdout=_text(out), stderr=_text(err),
                           hint=hint or 'Check that the device is not hung (dmesg) and retry.',
                           timed_out=True) from exc
        ABANDONED.append(proc)
        raise CliError(
            '%s did not finish within %s seconds and does not end when killed: process %d waits in the kernel '
            'for its device, which does not answer (the device or its path is hung).' % (cmd[0], timeout, proc.pid),
            cmd=cmd, stdout=_text(out), stderr=_text(err),
            hint='Check the drive and its path (dmesg, the drive\'s panel, the HBA); the process ends by itself '
                 'when the device answers or is reset.',
            hung=True) from exc
    return proc.returncode, out, err


def _text(value):
    if value is None:
        return None
    return decode(value)
