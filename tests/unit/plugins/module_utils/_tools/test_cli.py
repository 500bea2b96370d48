"""Tests for the tool runner: locale, evidence on failure, timeouts."""

import os
import time

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _cli


def test_run_forces_c_locale(monkeypatch):
    monkeypatch.setenv('LC_ALL', 'de_DE.UTF-8')
    result = _cli.run(['sh', '-c', 'echo "$LC_ALL/$LANG"'])
    assert result.ok
    assert result.stdout.strip() == 'C/C'


def test_failure_carries_evidence_and_hint():
    with pytest.raises(_cli.CliError) as info:
        _cli.run(['sh', '-c', 'echo out; echo err >&2; exit 3'], check=True, hint='Do this instead.')
    kwargs = info.value.as_fail_kwargs()
    assert kwargs['rc'] == 3
    assert kwargs['stdout'] == 'out\n'
    assert kwargs['stderr'] == 'err\n'
    assert kwargs['cmd'][0] == 'sh'
    assert kwargs['msg'].endswith('Do this instead.')


def test_timeout_is_an_error_not_a_hang():
    with pytest.raises(_cli.CliError) as info:
        _cli.run(['sleep', '5'], timeout=0.2)
    assert 'did not finish within 0.2 seconds' in info.value.msg


def test_missing_tool_says_what_to_install():
    with pytest.raises(_cli.CliError) as info:
        _cli.find_tool('surely-not-a-real-tool-xyz')
    assert 'bindep.txt' in info.value.as_fail_kwargs()['msg']
    assert _cli.find_tool('surely-not-a-real-tool-xyz', required=False) is None


def test_output_that_is_not_utf8_is_decoded_with_replacement():
    # A vendor string with a Latin-1 byte, as a drive or changer may return it.
    result = _cli.run(['printf', 'Vendor: \\377HP\\n'])
    assert result.ok and result.stdout == 'Vendor: \ufffdHP\n'
    assert result.stdout_bytes == b'Vendor: \xffHP\n'


def test_failure_with_non_utf8_stderr_keeps_evidence():
    with pytest.raises(_cli.CliError) as info:
        _cli.run(['sh', '-c', 'printf "\\376err" >&2; exit 2'], check=True)
    assert info.value.stderr == '\ufffderr'


def test_timeout_is_bounded_when_a_child_of_the_tool_keeps_its_output_open():
    # subprocess.run would read the pipe until the grandchild (sleep 60) closes it; the runner
    # kills the tool, gives it KILL_GRACE_S and returns with what the tool printed. The bound leaves 20 s more
    # for a loaded machine (the unit tests may run in an idle CPU group), far from the grandchild's minute.
    start = time.monotonic()
    with pytest.raises(_cli.CliError) as err:
        _cli.run(['sh', '-c', 'echo started; sleep 60 & wait'], timeout=0.5)
    took = time.monotonic() - start
    assert took < 0.5 + _cli.KILL_GRACE_S + 20
    assert 'did not finish within 0.5 seconds' in err.value.msg
    assert err.value.timed_out and not err.value.hung
    assert err.value.stdout == 'started\n'
    assert not _cli.ABANDONED


# ---------------------------------------------------------------- tool lookup: PATH first, then /usr/sbin, /sbin

def real_sbin_tool(name):
    """The path of a tool installed in /usr/sbin or /sbin on this machine (mtx from Debian's mtx package)."""
    for directory in _cli.SBIN_DIRS:
        path = os.path.join(directory, name)
        if os.access(path, os.X_OK):
            return path
    pytest.skip('%s is not installed in /usr/sbin or /sbin here (Debian package mtx; tools/run setup)' % name)


def shadow(tmp_path, name, text):
    bindir = tmp_path / 'bin'
    bindir.mkdir()
    script = bindir / name
    script.write_text('#!/bin/sh\necho "%s"\n' % text)
    script.chmod(0o755)
    return str(script)


@pytest.mark.parametrize('with_sbin_on_path', [False, True], ids=['path_without_sbin', 'path_with_sbin_last'])
def test_a_tool_first_on_path_wins_over_the_one_in_sbin(tmp_path, monkeypatch, with_sbin_on_path):
    installed = real_sbin_tool('mtx')
    mine = shadow(tmp_path, 'mtx', 'mtx from PATH')
    rest = '/usr/bin:/bin' + (':/usr/sbin:/sbin' if with_sbin_on_path else '')
    monkeypatch.setenv('PATH', '%s:%s' % (os.path.dirname(mine), rest))
    assert os.path.exists(installed)
    assert _cli.find_tool('mtx') == mine
    # a module does not change the order (AnsibleModule.get_bin_path would put its opt_dirs before PATH)
    assert _cli.find_tool('mtx', module=object()) == mine
    assert _cli.run([_cli.find_tool('mtx')]).stdout == 'mtx from PATH\n'


def test_a_tool_only_in_sbin_is_found_when_path_lacks_sbin(monkeypatch):
    installed = real_sbin_tool('mtx')
    monkeypatch.setenv('PATH', '/usr/bin:/bin')
    found = _cli.find_tool('mtx')
    assert found == installed
    # the real mtx 1.3.12 (Debian 12) says its version and usage on "mtx --version", exit code 1
    result = _cli.run([found, '--version'])
    assert 'mtx version' in result.stdout + result.stderr


def test_the_search_order_is_path_then_usr_sbin_then_sbin(monkeypatch):
    monkeypatch.setenv('PATH', '/opt/x/bin::/usr/bin:/sbin')
    # an empty PATH entry is dropped (a shell would read it as the current directory); a sbin directory already
    # on PATH keeps its place
    assert _cli.tool_search_path() == '/opt/x/bin:/usr/bin:/sbin:/usr/sbin'
    assert _cli.tool_search_path('') == '/usr/sbin:/sbin'


def test_a_missing_tool_names_where_it_was_looked_for(monkeypatch):
    monkeypatch.setenv('PATH', '/usr/bin:/bin')
    with pytest.raises(_cli.CliError) as info:
        _cli.find_tool('surely-not-a-real-tool-xyz', hint='Install xyz.')
    assert info.value.as_fail_kwargs()['msg'] == (
        'surely-not-a-real-tool-xyz was not found on this host (searched /usr/bin:/bin:/usr/sbin:/sbin). Install xyz.')


# ---------------------------------------------------------------- a tool that is not installed: its package

# Every tool the collection runs, with the words of its package: (Debian/Ubuntu, RHEL) for one package, the two
# backup products' storage packages for btape. The package names are bindep.txt's (mt-st, mtx, sg3-utils /
# sg3_utils, lsscsi, fio), the distributions' storage daemon packages (Debian bacula-sd, Fedora/RHEL
# bacula-storage; Bareos' bareos-storage-tape ships btape, bareos-storage the daemon) and consoles (bacula-console
# in Debian and Fedora/EPEL, bareos-bconsole).
def one_package(deb, rpm):
    return 'Install the %s package (Debian/Ubuntu: apt install %s; RHEL: dnf install %s) and run again.' % (
        deb, deb, rpm)


INSTALL = {
    'mt': one_package('mt-st', 'mt-st'),
    'mt-st': one_package('mt-st', 'mt-st'),
    'stinit': one_package('mt-st', 'mt-st'),
    'mtx': one_package('mtx', 'mtx'),
    'tapeinfo': one_package('mtx', 'mtx'),
    'loaderinfo': one_package('mtx', 'mtx'),
    'sg_inq': one_package('sg3-utils', 'sg3_utils'),
    'sg_logs': one_package('sg3-utils', 'sg3_utils'),
    'sg_raw': one_package('sg3-utils', 'sg3_utils'),
    'sg_read_block_limits': one_package('sg3-utils', 'sg3_utils'),
    'lsscsi': one_package('lsscsi', 'lsscsi'),
    'fio': one_package('fio', 'fio'),
    'btape': ('Install the bacula-sd package for Bacula (Debian/Ubuntu: apt install bacula-sd; RHEL: dnf install '
              'bacula-storage) or the bareos-storage-tape package for Bareos (Debian/Ubuntu: apt install '
              'bareos-storage-tape; RHEL: dnf install bareos-storage-tape) and run again.'),
    'bacula-sd': ('Install the bacula-sd package for Bacula (Debian/Ubuntu: apt install bacula-sd; RHEL: dnf install '
                  'bacula-storage) and run again.'),
    'bareos-sd': ('Install the bareos-storage package for Bareos (Debian/Ubuntu: apt install bareos-storage; RHEL: '
                  'dnf install bareos-storage) and run again.'),
    'bconsole': ('Install the bacula-console package for Bacula (Debian/Ubuntu: apt install bacula-console; RHEL: dnf '
                 'install bacula-console) or the bareos-bconsole package for Bareos (Debian/Ubuntu: apt install '
                 'bareos-bconsole; RHEL: dnf install bareos-bconsole) and run again.'),
}


@pytest.fixture
def no_tools(tmp_path, monkeypatch):
    """A host without the tools: PATH is an empty directory, and so are the sbin directories searched after it."""
    empty, sbin = tmp_path / 'empty-bin', tmp_path / 'empty-sbin'
    empty.mkdir()
    sbin.mkdir()
    monkeypatch.setenv('PATH', str(empty))
    monkeypatch.setattr(_cli, 'SBIN_DIRS', (str(sbin),))
    return str(empty), str(sbin)


@pytest.mark.parametrize('tool', sorted(INSTALL))
def test_a_tool_that_is_not_installed_says_so_and_names_its_package_when_run(no_tools, tool):
    empty, _sbin = no_tools
    with pytest.raises(_cli.CliError) as info:
        _cli.run([tool, '--version'], timeout=5)
    error = info.value
    assert (error.msg, error.hint, error.missing) == (
        '%s is not installed on this host (not found on PATH %s).' % (tool, empty), INSTALL[tool], tool)
    assert error.as_fail_kwargs() == {'msg': '%s %s' % (error.msg, INSTALL[tool]), 'cmd': [tool, '--version']}
    assert _cli.install_hint(tool) == INSTALL[tool]


@pytest.mark.parametrize('tool', sorted(INSTALL))
def test_a_tool_that_is_not_installed_says_so_and_names_its_package_when_looked_up(no_tools, tool):
    empty, sbin = no_tools
    with pytest.raises(_cli.CliError) as info:
        _cli.find_tool(tool)
    assert info.value.as_fail_kwargs()['msg'] == '%s is not installed on this host (not found in %s:%s). %s' % (
        tool, empty, sbin, INSTALL[tool])
    assert info.value.missing == tool
    # a caller's hint says what else can be done, after the package
    with pytest.raises(_cli.CliError) as info:
        _cli.find_tool(tool, hint='Or set validate.')
    assert info.value.hint == '%s Or set validate.' % INSTALL[tool]


def test_a_tool_the_table_does_not_list_points_at_bindep(no_tools):
    empty, _sbin = no_tools
    with pytest.raises(_cli.CliError) as info:
        _cli.run(['surely-not-a-real-tool-xyz'])
    assert info.value.msg == 'surely-not-a-real-tool-xyz is not installed on this host (not found on PATH %s).' % empty
    assert info.value.hint == 'Install it (see bindep.txt at the collection root for package names).'


def test_a_path_that_does_not_exist_is_not_a_package_to_install(tmp_path):
    # a tool named by its path (fio_path, find_tool's answer) that is not there: its path is wrong, not a package
    gone = str(tmp_path / 'mtx')
    with pytest.raises(_cli.CliError) as info:
        _cli.run([gone, 'status'], hint='Fix mtx_path.')
    assert info.value.msg == "Cannot run %s: [Errno 2] No such file or directory: '%s'." % (gone, gone)
    assert info.value.hint == 'Fix mtx_path.' and info.value.missing is None
