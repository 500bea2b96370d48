"""Tests for the tool runner: locale, evidence on failure, timeouts."""

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
    # subprocess.run would read the pipe until the grandchild (sleep 9) closes it; the runner
    # kills the tool, gives it KILL_GRACE_S and returns with what the tool printed.
    start = time.monotonic()
    with pytest.raises(_cli.CliError) as err:
        _cli.run(['sh', '-c', 'echo started; sleep 9 & wait'], timeout=0.5)
    took = time.monotonic() - start
    assert took < 0.5 + _cli.KILL_GRACE_S + 2
    assert 'did not finish within 0.5 seconds' in err.value.msg
    assert err.value.timed_out and not err.value.hung
    assert err.value.stdout == 'started\n'
    assert not _cli.ABANDONED
