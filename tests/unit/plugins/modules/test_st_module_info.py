# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""st_module_info through its main(), on hosts laid out under tmp_path, and the pure planning of _st_module.

The driver's attributes are lab-ma2's as `grep .` recorded them (tests/unit/fixtures/sysfs_st_tuning: st 20160209,
fixed_buffer_size 32768, max_sg_segs 256); /sys/module/st/initstate, /proc/modules, modules.builtin / modules.dep
and the modprobe.d files are laid out in the formats the kernel and kmod write (st.c, kernel/module/sysfs.c,
modprobe.d(5)), and the st.conf lines as community.general.modprobe 11.4.2 writes them.
"""

from __future__ import annotations

import pytest

from ansible_collections.tapeops.qualify.plugins.module_utils._config import _st_module
from ansible_collections.tapeops.qualify.plugins.modules import st_module_info

from module_harness import fixture_text, module_warnings, run_module

GREP = 'sysfs_st_tuning/grep_sysfs__HP-Ultrium6-SCSI-35GD-lab-ma2-tuned__1.txt'
RELEASE = '6.1.0-27-amd64'
# A /proc/modules line of a loaded st (name, size, users, dependents, state, address), as Linux prints it.
PROC_MODULES_ST = 'st 69632 0 - Live 0x0000000000000000\nsg 45056 0 - Live 0x0000000000000000\n'
PROC_MODULES_NO_ST = 'sg 45056 0 - Live 0x0000000000000000\n'


class Host:
    """A host's files under tmp_path: /sys (st's driver attributes), /proc, /lib/modules, modprobe.d."""

    def __init__(self, root):
        self.root = root
        self.sys = root / 'sys'
        self.proc = root / 'proc'
        self.modules = root / 'lib' / 'modules'
        self.etc = root / 'etc' / 'modprobe.d'
        self.lib = root / 'usr' / 'lib' / 'modprobe.d'
        for path in (self.sys, self.proc, self.modules / RELEASE, self.etc, self.lib):
            path.mkdir(parents=True)
        (self.proc / 'cmdline').write_text('BOOT_IMAGE=/boot/vmlinuz-%s root=/dev/sda1 ro quiet\n' % RELEASE)

    def driver(self):
        """st registered, with lab-ma2's recorded driver attributes."""
        for line in fixture_text(GREP).splitlines():
            path, value = line.split(':', 1)
            if path.startswith('bus/scsi/drivers/st/'):
                target = self.sys / path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(value + '\n')
        return self

    def loaded(self):
        self.driver()
        (self.sys / 'module' / 'st').mkdir(parents=True)
        (self.sys / 'module' / 'st' / 'initstate').write_text('live\n')
        (self.proc / 'modules').write_text(PROC_MODULES_ST)
        (self.modules / RELEASE / 'modules.dep').write_text(
            'kernel/drivers/scsi/st.ko.xz: kernel/drivers/scsi/scsi_mod.ko.xz\n')
        return self

    def not_loaded(self):
        (self.proc / 'modules').write_text(PROC_MODULES_NO_ST)
        (self.modules / RELEASE / 'modules.dep').write_text(
            'kernel/drivers/scsi/sg.ko.xz: kernel/drivers/scsi/scsi_mod.ko.xz\n'
            'kernel/drivers/scsi/st.ko.xz: kernel/drivers/scsi/scsi_mod.ko.xz\n')
        return self

    def builtin(self, listed=True):
        self.driver()
        if listed:
            (self.modules / RELEASE / 'modules.builtin').write_text(
                'kernel/drivers/scsi/scsi_mod.ko\nkernel/drivers/scsi/st.ko\n')
        return self

    def patch(self, monkeypatch):
        monkeypatch.setattr(st_module_info, 'SYS_ROOT', str(self.sys))
        monkeypatch.setattr(st_module_info, 'PROC_ROOT', str(self.proc))
        monkeypatch.setattr(st_module_info, 'MODULES_ROOT', str(self.modules))
        monkeypatch.setattr(st_module_info, 'MODPROBE_DIRS', (str(self.etc), str(self.lib)))
        monkeypatch.setattr(_st_module, 'ETC_MODPROBE_D', str(self.etc))
        monkeypatch.setattr(st_module_info.os, 'uname', lambda: ('Linux', 'ma', RELEASE, '#1', 'x86_64'))
        return self


@pytest.fixture
def host(tmp_path, monkeypatch):
    return Host(tmp_path).patch(monkeypatch)


def run(monkeypatch, options=None, check_mode=False):
    return run_module(st_module_info.main, {'options': options or {}}, monkeypatch, check_mode=check_mode)


# ---------------------------------------------------------------- where st is

def test_loaded_module_plans_modprobe_and_says_when_the_options_take_effect(host, monkeypatch):
    host.loaded()
    warnings = module_warnings(monkeypatch)
    failed, result = run(monkeypatch, {'max_sg_segs': 513, 'buffer_kbs': None})
    assert not failed, result
    assert result['changed'] is False
    assert result['where'] == 'loaded' and result['basis'] == 'a loaded module (/sys/module/st/initstate: live)'
    assert result['running'] == {'buffer_kbs': 32, 'max_sg_segs': 256}
    assert result['wanted'] == {'max_sg_segs': 513}
    assert result['apply'] is True
    assert result['params'] == 'max_sg_segs=513'
    assert result['conf_path'] == '%s/st.conf' % host.etc
    assert result['conf_content'] == 'options st max_sg_segs=513\n'
    assert result['pending'] == {'max_sg_segs': {'running': 256, 'wanted': 513}}
    assert 'runs with max_sg_segs=256; max_sg_segs=513 in %s/st.conf take effect when st is next loaded' % host.etc \
        in result['message']
    assert '"modprobe -r st && modprobe st" while no tape drive is open' in result['message']
    assert warnings == [result['message']]


def test_options_already_running_are_nothing_pending(host, monkeypatch):
    host.loaded()
    (host.etc / 'st.conf').write_text('options st max_sg_segs=256\n')
    warnings = module_warnings(monkeypatch)
    failed, result = run(monkeypatch, {'max_sg_segs': 256})
    assert not failed
    assert result['pending'] == {} and warnings == []
    assert result['persistent'] == {'max_sg_segs': '256'}
    assert result['message'] == 'st is a loaded module (/sys/module/st/initstate: live) and runs with ' \
                                'max_sg_segs=256; %s/st.conf keeps them for the next load.' % host.etc


def test_a_module_not_loaded_is_loaded_with_the_options(host, monkeypatch):
    host.not_loaded()
    failed, result = run(monkeypatch, {'buffer_kbs': 256})
    assert not failed
    assert result['where'] == 'not_loaded'
    assert result['running'] == {'buffer_kbs': None, 'max_sg_segs': None}
    assert result['apply'] and result['params'] == 'buffer_kbs=256' and result['pending'] == {}
    assert 'community.general.modprobe loads it with buffer_kbs=256 now' in result['message']


@pytest.mark.parametrize('listed, basis', [
    (True, 'built into the kernel (modules.builtin lists st.ko)'),
    # no modules.builtin (a kernel without /lib/modules, as the lab's user-mode-linux guests): the registered
    # driver without initstate, on a kernel without loadable modules (no /proc/modules)
    (False, 'built into the kernel (the st driver is registered, /sys/module/st/initstate is absent and the '
            'kernel has no loadable modules)'),
])
def test_builtin_st_changes_nothing_and_says_what_to_put_on_the_kernel_command_line(host, monkeypatch, listed, basis):
    host.builtin(listed)
    warnings = module_warnings(monkeypatch)
    failed, result = run(monkeypatch, {'max_sg_segs': 513, 'buffer_kbs': 64})
    assert not failed
    assert result['where'] == 'builtin' and result['basis'] == basis
    assert result['apply'] is False and result['params'] == '' and result['conf_content'] is None
    assert result['pending'] == {'buffer_kbs': {'running': 32, 'wanted': 64},
                                 'max_sg_segs': {'running': 256, 'wanted': 513}}
    assert 'Add st.buffer_kbs=64 st.max_sg_segs=513 to it' in result['message']
    assert 'and reboot. Nothing was changed.' in result['message']
    assert warnings == [result['message']]


def test_builtin_st_with_the_options_already_on_the_command_line_needs_a_reboot(host, monkeypatch):
    host.builtin()
    (host.proc / 'cmdline').write_text('BOOT_IMAGE=/boot/vmlinuz root=/dev/sda1 ro st.max_sg_segs=513\n')
    failed, result = run(monkeypatch, {'max_sg_segs': 513})
    assert not failed
    assert result['kernel_cmdline'] == {'max_sg_segs': '513'}
    assert 'the kernel command line has st.max_sg_segs=513, which the running kernel does not: reboot' in \
        result['message']


def test_absent_st_fails_saying_what_to_install(host, monkeypatch):
    (host.modules / RELEASE / 'modules.dep').write_text('kernel/drivers/scsi/sg.ko.xz:\n')
    failed, result = run(monkeypatch, {'max_sg_segs': 513})
    assert failed and result['reason'] == 'no_st'
    assert result['msg'].startswith('The st driver is not loaded, not built in, and modules.dep does not list st.ko '
                                    '(kernel %s): install' % RELEASE)


def test_nothing_asked_for_only_reports(host, monkeypatch):
    host.loaded()
    failed, result = run(monkeypatch)
    assert not failed and not result['apply'] and result['message'] == 'No st module option asked for: nothing to do.'


# ---------------------------------------------------------------- what modprobe.d already says

def test_other_single_option_lines_are_kept_in_the_params(host, monkeypatch):
    # community.general.modprobe comments out the st option lines it is not given: the plan gives it them back
    host.loaded()
    (host.etc / 'tape.conf').write_text('# tape host\noptions st try_direct_io=1\noptions st max_sg_segs=300\n')
    failed, result = run(monkeypatch, {'max_sg_segs': 513})
    assert not failed
    assert result['persistent'] == {'try_direct_io': '1', 'max_sg_segs': '300'}
    assert result['params'] == 'try_direct_io=1 max_sg_segs=513'
    assert result['conf_content'] == 'options st try_direct_io=1\noptions st max_sg_segs=513\n'


@pytest.mark.parametrize('where, text', [
    ('etc', 'options st buffer_kbs=64 max_sg_segs=512\n'),
    ('lib', 'options st max_sg_segs=128\n'),
])
def test_a_line_modprobe_would_leave_in_place_fails_naming_it(host, monkeypatch, where, text):
    host.loaded()
    path = (host.etc if where == 'etc' else host.lib) / 'vendor.conf'
    path.write_text('# vendor\n' + text)
    failed, result = run(monkeypatch, {'max_sg_segs': 513})
    assert failed and result['reason'] == 'conflict'
    assert '%s:2 "%s"' % (path, text.strip()) in result['msg']
    assert 'Put each option on a line of its own' in result['msg'] and 'Nothing was changed.' in result['msg']


def test_a_line_setting_other_options_only_is_no_conflict(host, monkeypatch):
    host.loaded()
    (host.lib / 'vendor.conf').write_text('options st try_direct_io=1 try_rdio=1\n')
    failed, result = run(monkeypatch, {'max_sg_segs': 513})
    assert not failed and result['params'] == 'max_sg_segs=513'


@pytest.mark.parametrize('options, message', [
    ({'max_sg_segs': 4}, 'st max_sg_segs must be a whole number from 8 to 65535, got 4 (st ignores a max_sg_segs '
                         'below 8 and keeps 256).'),
    ({'buffer_kbs': 0}, 'st buffer_kbs must be a whole number from 1 to 2097151, got 0.'),
    ({'max_sg_segs': '513'}, "got '513'"),
    ({'max_sg_segs': True}, 'got True'),
    ({'try_direct_io': 0}, 'try_direct_io is not an st module option st_tuning sets: use buffer_kbs or max_sg_segs.'),
])
def test_bad_values_fail_with_what_to_write(host, monkeypatch, options, message):
    host.loaded()
    failed, result = run(monkeypatch, options)
    assert failed and result['reason'] == 'bad_option'
    assert message in result['msg']


# ---------------------------------------------------------------- the parsers

def test_option_lines_follow_modprobe_d():
    text = ('# comment\noptions st buffer_kbs=64 \\\n  max_sg_segs=512 # two\noptions sg def_reserved_size=1\n'
            'options  st   try_direct_io=0\nblacklist st\n')
    lines = _st_module.option_lines(text)
    assert [(line['line'], line['options']) for line in lines] == [
        (2, [('buffer_kbs', '64'), ('max_sg_segs', '512')]), (5, [('try_direct_io', '0')])]


def test_modprobe_files_hide_a_name_in_a_later_directory(tmp_path):
    etc, lib = tmp_path / 'etc', tmp_path / 'lib'
    etc.mkdir()
    lib.mkdir()
    (etc / 'b.conf').write_text('options st max_sg_segs=1\n')
    (lib / 'b.conf').write_text('options st max_sg_segs=2\n')
    (lib / 'a.conf').write_text('options st buffer_kbs=3\n')
    (etc / 'c.txt').write_text('options st buffer_kbs=4\n')
    files = _st_module.modprobe_files((str(etc), str(lib)))
    assert [path for path, dummy in files] == [str(lib / 'a.conf'), str(etc / 'b.conf')]


@pytest.mark.parametrize('text, listed', [
    ('kernel/drivers/scsi/st.ko\n', True),
    ('kernel/drivers/scsi/st.ko.zst: kernel/drivers/scsi/scsi_mod.ko.zst\n', True),
    ('kernel/drivers/scsi/sg.ko:\nkernel/drivers/scsi/osst.ko:\n', False),
    ('kernel/drivers/ata/libata-st.ko\n', False),
    (None, False),
])
def test_lists_st(text, listed):
    assert _st_module.lists_st(text) is listed


def test_kernel_cmdline_options():
    assert _st_module.kernel_cmdline_options('ro st.max_sg_segs=513 st=buffer_kbs:64 sg.x=1 st.buffer_kbs=128') == {
        'max_sg_segs': '513', 'buffer_kbs': '128'}
