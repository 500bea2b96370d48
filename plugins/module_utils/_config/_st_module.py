# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The st driver's module options: where the driver is, what it runs with, what modprobe.d asks for.

Private to this collection: may change without notice. Pure functions on the
text of the files involved, plus one reader (``read_state``) taking its roots,
used by the ``st_module_info`` module that the st_tuning role runs before
``community.general.modprobe``.

- st takes ``buffer_kbs`` and ``max_sg_segs`` only when it is loaded
  (drivers/scsi/st.c: ``module_param_named(..., 0)``, read once by
  ``validate_options()`` at init; the values it runs with are the driver's
  attributes ``/sys/bus/scsi/drivers/st/{fixed_buffer_size,max_sg_segs}``).
  A loadable st takes them from ``options st ...`` lines of modprobe.d(5); a
  built-in st only from the kernel command line (``st.max_sg_segs=N``; st's
  own ``st=`` syntax calls max_sg_segs obsolete).
- ``community.general.modprobe`` with ``persistent: present`` writes
  ``/etc/modprobe.d/st.conf`` (one ``options st NAME=VALUE`` line per option,
  in the order of ``params``) and ``/etc/modules-load.d/st.conf``; it counts
  the options already set as the ``options st NAME=VALUE`` lines of one option
  each in the files of ``/etc/modprobe.d``, and comments those out in the
  other files when they differ from ``params``. A line setting two options,
  or a file in another modprobe.d directory, is out of its reach:
  ``conflicts`` names those that set an option asked for.
"""

from __future__ import annotations

import os
import re

from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError
from ansible_collections.tapeops.qualify.plugins.module_utils._config._stinit import st_driver_params

# The options st_tuning sets, with the values st takes: st.c validate_options() ignores a max_sg_segs below
# ST_FIRST_SG (8); the tape buffer counts its segments in an unsigned short; buffer_kbs * 1024 is an int.
LIMITS = {'buffer_kbs': (1, 2097151), 'max_sg_segs': (8, 65535)}
OPTIONS = tuple(sorted(LIMITS))
# Where community.general.modprobe writes (and reads) the options; kmod's other configuration directories,
# which it does not touch (modprobe.d(5)).
ETC_MODPROBE_D = '/etc/modprobe.d'
OTHER_MODPROBE_DIRS = ('/run/modprobe.d', '/usr/local/lib/modprobe.d', '/usr/lib/modprobe.d', '/lib/modprobe.d')
CONF_NAME = 'st.conf'

# Where st is.
LOADED = 'loaded'            # a loadable module, loaded now
NOT_LOADED = 'not_loaded'    # a loadable module of the running kernel, not loaded
BUILTIN = 'builtin'          # built into the kernel: options only on the kernel command line
ABSENT = 'absent'            # neither

_ST_KO = re.compile(r'(^|/)st\.ko(\.gz|\.xz|\.zst)?$')
# community.general.modprobe's own pattern of an option line it manages (re_get_params_and_values)
_SINGLE = re.compile(r'^options st (\w+=\S+) *(?:[#;].*)?\n?\Z')


class StModuleError(TapeopsError, ValueError):
    """Options st would not take, or a configuration community.general.modprobe cannot bring to them."""


def validate_options(options):
    """``{name: int}`` of the options asked for (None values dropped); a StModuleError says what to write."""
    out = {}
    for name, value in sorted((options or {}).items()):
        if value is None:
            continue
        if name not in LIMITS:
            raise StModuleError('%s is not an st module option st_tuning sets: use %s.' % (name, ' or '.join(OPTIONS)),
                                reason='bad_option')
        low, high = LIMITS[name]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise StModuleError('st %s must be a whole number from %d to %d, got %r%s.' % (
                name, low, high, value,
                ' (st ignores a max_sg_segs below 8 and keeps 256)' if name == 'max_sg_segs' else ''),
                reason='bad_option')
        out[name] = value
    return out


def option_lines(text, module='st'):
    """The ``options MODULE ...`` lines of a modprobe.d file: [{'line', 'text', 'options': [(name, value)]}].

    modprobe.d(5): ``#`` starts a comment line, a line ending in ``\\`` continues on the next; module names
    treat ``-`` and ``_`` alike.
    """
    out = []
    logical, start = '', None
    for number, raw in enumerate((text or '').splitlines(), 1):
        if start is None:
            start = number
        if raw.endswith('\\'):
            logical += raw[:-1] + ' '
            continue
        logical += raw
        words = logical.split()
        if len(words) >= 2 and words[0] == 'options' and words[1].replace('-', '_') == module.replace('-', '_'):
            pairs = []
            for word in words[2:]:
                if word.startswith('#'):
                    break
                name, sep, value = word.partition('=')
                pairs.append((name, value if sep else None))
            out.append({'line': start, 'text': logical.strip(), 'options': pairs})
        logical, start = '', None
    return out


def lists_st(text):
    """Whether a modules.builtin / modules.dep / modules.order text names st.ko (``kernel/drivers/scsi/st.ko``)."""
    for line in (text or '').splitlines():
        path = line.split(':', 1)[0].strip()
        if _ST_KO.search(path):
            return True
    return False


def in_proc_modules(text, module='st'):
    """Whether /proc/modules lists ``module`` (its first word on a line)."""
    return any(line.split()[:1] == [module] for line in (text or '').splitlines())


def kernel_cmdline_options(text, module='st'):
    """``{name: value}`` of ``module.name=value`` words of /proc/cmdline."""
    out = {}
    for word in (text or '').split():
        key, sep, value = word.partition('=')
        if sep and key.startswith(module + '.'):
            out[key[len(module) + 1:]] = value
    return out


def locate(initstate, proc_modules, builtin_list, dep_list, driver_registered):
    """(where st is, how that was found): LOADED, NOT_LOADED, BUILTIN or ABSENT.

    ``initstate``: the text of /sys/module/st/initstate (only a loadable module has it) or None;
    ``proc_modules``: /proc/modules or None (a kernel without loadable modules has none);
    ``builtin_list`` / ``dep_list``: modules.builtin / modules.dep of the running kernel or None;
    ``driver_registered``: /sys/bus/scsi/drivers/st exists.
    """
    if initstate is not None or in_proc_modules(proc_modules):
        return LOADED, 'a loaded module (%s)' % (
            '/sys/module/st/initstate: %s' % initstate.strip() if initstate is not None else '/proc/modules')
    if lists_st(builtin_list):
        return BUILTIN, 'built into the kernel (modules.builtin lists st.ko)'
    if driver_registered:
        return BUILTIN, ('built into the kernel (the st driver is registered, /sys/module/st/initstate is absent%s)' % (
            ' and the kernel has no loadable modules' if proc_modules is None else ''))
    if lists_st(dep_list):
        return NOT_LOADED, 'a module of the running kernel, not loaded (modules.dep lists st.ko)'
    return ABSENT, 'not loaded, not built in, and modules.dep %s' % (
        'does not list st.ko' if dep_list is not None else 'of the running kernel is missing')


def persistent_options(files):
    """What modprobe.d asks st for, and which of it community.general.modprobe manages.

    ``files``: [(path, text)] of the *.conf files of the modprobe.d directories in kmod's order. Returns
    {'options': {name: value} (a later line wins), 'managed': [(name, value)] (the single-option lines of
    /etc/modprobe.d, in order), 'lines': [{'path', 'line', 'text', 'options', 'managed'}]}.
    """
    options, managed, lines = {}, [], []
    for path, text in files:
        in_etc = os.path.dirname(path) == ETC_MODPROBE_D
        for entry in option_lines(text):
            single = in_etc and _SINGLE.match(entry['text']) is not None and len(entry['options']) == 1
            lines.append(dict(entry, path=path, managed=single))
            for name, value in entry['options']:
                options[name] = value
                if single:
                    managed.append((name, value))
    return {'options': options, 'managed': managed, 'lines': lines}


def conflicts(lines, wanted):
    """The option lines community.general.modprobe leaves in place that set an option asked for."""
    return [line for line in lines if not line['managed'] and any(name in wanted for name, dummy in line['options'])]


def params_for(managed, wanted):
    """The ``params`` for community.general.modprobe: the managed options kept (it comments out what it is not
    given), the ones asked for set, one ``NAME=VALUE`` each, in a stable order."""
    order, values = [], {}
    for name, value in managed:
        if name not in values:
            order.append(name)
        values[name] = value
    for name in sorted(wanted):
        if name not in values:
            order.append(name)
        values[name] = str(wanted[name])
    return ' '.join('%s=%s' % (name, values[name]) for name in order if values[name] is not None)


def conf_content(params):
    """/etc/modprobe.d/st.conf as community.general.modprobe writes it for ``params``."""
    return ''.join('options st %s\n' % param for param in params.split())


def _builtin_message(basis, wanted, cmdline, pending, words):
    """What to do for options of an st built into the kernel: only the kernel command line sets them."""
    have = dict((name, cmdline.get(name)) for name in wanted)
    on_line = all(str(wanted[name]) == have[name] for name in wanted)
    args = ' '.join('st.%s=%d' % (name, value) for name, value in sorted(wanted.items()))
    if not pending:
        return 'st is %s and runs with %s: nothing to do.' % (basis, words)
    if on_line:
        return ('st is %s; the kernel command line has %s, which the running kernel does not: reboot '
                'to apply it. Nothing was changed.' % (basis, args))
    return ('st is %s: its options are set only on the kernel command line, not in modprobe.d. '
            'Add %s to it (Debian: GRUB_CMDLINE_LINUX in /etc/default/grub, then update-grub; '
            'RHEL: grubby --update-kernel=ALL --args="%s") and reboot. Nothing was changed.' % (basis, args, args))


def plan(where, basis, running, persistent, cmdline, wanted, release):
    """What st_tuning does with the options asked for, as data, with the sentence that says it.

    Returns {'where', 'basis', 'running', 'persistent', 'kernel_cmdline', 'wanted', 'apply', 'params',
    'conf_path', 'conf_content', 'pending', 'message'}. ``apply``: community.general.modprobe is to run
    (st is a loadable module). ``pending``: {name: {'running', 'wanted'}} of the options the running st
    does not have yet. Raises StModuleError where nothing can bring st to them.
    """
    wanted = validate_options(wanted)
    out = {'where': where, 'basis': basis, 'running': running, 'persistent': persistent['options'],
           'kernel_cmdline': cmdline, 'wanted': wanted, 'apply': False, 'params': '',
           'conf_path': os.path.join(ETC_MODPROBE_D, CONF_NAME), 'conf_content': None, 'pending': {},
           'message': None}
    if not wanted:
        out['message'] = 'No st module option asked for: nothing to do.'
        return out
    if where == ABSENT:
        raise StModuleError('The st driver is %s (kernel %s): install the kernel\'s modules (Debian: '
                            'linux-image-%s; RHEL: kernel-modules) or a kernel with st, then run again.' % (
                                basis, release, release), reason='no_st')
    out['pending'] = dict((name, {'running': running.get(name), 'wanted': value}) for name, value in wanted.items()
                          if running.get(name) != value and where != NOT_LOADED)
    words = ' '.join('%s=%d' % (name, value) for name, value in sorted(wanted.items()))
    if where == BUILTIN:
        out['message'] = _builtin_message(basis, wanted, cmdline, out['pending'], words)
        return out
    found = conflicts(persistent['lines'], wanted)
    if found:
        raise StModuleError(
            'community.general.modprobe manages st\'s options only as lines of one option each in %s, and these '
            'lines set %s too: %s. Put each option on a line of its own in %s (or remove the line), then run again. '
            'Nothing was changed.' % (
                ETC_MODPROBE_D, ' or '.join(sorted(wanted)),
                '; '.join('%s:%d "%s"' % (line['path'], line['line'], line['text']) for line in found), ETC_MODPROBE_D),
            reason='conflict')
    out['apply'] = True
    out['params'] = params_for(persistent['managed'], wanted)
    out['conf_content'] = conf_content(out['params'])
    if where == NOT_LOADED:
        out['message'] = ('st is %s: community.general.modprobe loads it with %s now and makes it load with them at '
                          'every boot.' % (basis, words))
    elif out['pending']:
        out['message'] = ('st is %s and runs with %s; %s in %s take effect when st is next loaded: at the next boot, '
                          'or by "modprobe -r st && modprobe st" while no tape drive is open (that removes and '
                          'creates every st device node again).' % (
                              basis, ' '.join('%s=%s' % (name, running.get(name)) for name in sorted(wanted)),
                              words, out['conf_path']))
    else:
        out['message'] = 'st is %s and runs with %s; %s keeps them for the next load.' % (basis, words,
                                                                                          out['conf_path'])
    return out


# ---------------------------------------------------------------------------
# reading the host


def _read(path):
    try:
        with open(path, 'rb') as handle:
            return handle.read().decode('utf-8', 'replace')
    except OSError:
        return None


def modprobe_files(dirs):
    """[(path, text)] of the *.conf files kmod reads from ``dirs`` (earlier directories first), a name in an
    earlier directory hiding the same name in a later one, in the order of their names (modprobe.d(5))."""
    chosen = {}
    for directory in dirs:
        try:
            names = os.listdir(directory)
        except OSError:
            continue
        for name in names:
            path = os.path.join(directory, name)
            if name.endswith('.conf') and name not in chosen and os.path.isfile(path):
                chosen[name] = path
    out = []
    for name in sorted(chosen):
        text = _read(chosen[name])
        if text is not None:
            out.append((chosen[name], text))
    return out


def read_state(sys_root='/sys', proc_root='/proc', modules_root='/lib/modules', release=None,
               dirs=(ETC_MODPROBE_D,) + OTHER_MODPROBE_DIRS):
    """(where, basis, running {buffer_kbs, max_sg_segs}, persistent_options(...), kernel command line options)."""
    release = release or os.uname()[2]
    kernel = os.path.join(modules_root, release)
    where, basis = locate(
        _read(os.path.join(sys_root, 'module', 'st', 'initstate')),
        _read(os.path.join(proc_root, 'modules')),
        _read(os.path.join(kernel, 'modules.builtin')),
        _read(os.path.join(kernel, 'modules.dep')),
        os.path.isdir(os.path.join(sys_root, 'bus', 'scsi', 'drivers', 'st')))
    driver = st_driver_params(sys_root)
    running = {'buffer_kbs': driver['fixed_buffer_size'] // 1024 if driver['fixed_buffer_size'] else None,
               'max_sg_segs': driver['max_sg_segs']}
    persistent = persistent_options(modprobe_files(dirs))
    cmdline = kernel_cmdline_options(_read(os.path.join(proc_root, 'cmdline')))
    return where, basis, running, persistent, cmdline
