#!/usr/bin/python
# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: st_module_info
short_description: Where the st tape driver is, the module options it runs with, and how to set new ones
version_added: 0.1.0
description:
  - Finds out whether the st driver is a loaded module (C(/sys/module/st/initstate), C(/proc/modules)), built into
    the kernel (C(modules.builtin) of the running kernel lists C(st.ko), or the driver is registered without
    C(initstate)), a module of the running kernel that is not loaded (C(modules.dep)), or absent.
  - Reads the options st runs with (C(/sys/bus/scsi/drivers/st/fixed_buffer_size) and C(max_sg_segs)), the
    C(options st) lines of the modprobe.d directories and the C(st.) words of the kernel command line.
  - With O(options), plans them for the st_tuning role, which sets them with C(community.general.modprobe);
    RV(params) for its C(params), RV(conf_content) for the C(/etc/modprobe.d/st.conf) it writes, RV(pending)
    for what the running st does not have yet and RV(message) for what it takes (also a warning while anything is
    pending). Where st is built in, only the
    kernel command line sets them, so RV(apply) is false and the message says what to add. Fails, before anything
    is changed, on a value st does not take, or where an option asked for is also set by a line
    C(community.general.modprobe) leaves in place (two options on one line, or another modprobe.d directory).
  - Reads files only; changes nothing.
author:
  - tapeops.qualify contributors (@tapeops)
extends_documentation_fragment:
  - tapeops.qualify._attributes
  - tapeops.qualify._attributes.info_module
options:
  options:
    description:
      - The st module options to plan, C(buffer_kbs) (driver buffer for fixed-block mode, KB, 1 to 2097151) and
        C(max_sg_segs) (scatter/gather segments of one command, 8 to 65535); a null value is left out.
    type: dict
    default: {}
'''

EXAMPLES = r'''
- name: Plan max_sg_segs=513 for the st driver
  tapeops.qualify.st_module_info:
    options:
      max_sg_segs: 513
  register: st_module
'''

RETURN = r'''
where:
  description: V(loaded), V(not_loaded) (a module of the running kernel), V(builtin) or V(absent).
  returned: always
  type: str
  sample: loaded
basis:
  description: How RV(where) was found out.
  returned: always
  type: str
  sample: 'a loaded module (/sys/module/st/initstate: live)'
running:
  description: The options the running st driver has (C(buffer_kbs), C(max_sg_segs)); null where st is not loaded.
  returned: always
  type: dict
  sample: {"buffer_kbs": 32, "max_sg_segs": 256}
persistent:
  description: The st options the modprobe.d directories set (C(*.conf) in kmod's order, a later line winning).
  returned: always
  type: dict
  sample: {"max_sg_segs": "513"}
kernel_cmdline:
  description: The C(st.NAME=VALUE) words of the kernel command line.
  returned: always
  type: dict
  sample: {}
wanted:
  description: The options planned (O(options) without null values).
  returned: always
  type: dict
  sample: {"max_sg_segs": 513}
apply:
  description: Whether C(community.general.modprobe) is to set them (st is a loadable module and options are asked for).
  returned: always
  type: bool
params:
  description: >-
    The C(params) for C(community.general.modprobe): the single-option lines of C(/etc/modprobe.d) it would
    otherwise comment out, and the options asked for; empty when RV(apply) is false.
  returned: always
  type: str
  sample: max_sg_segs=513
conf_path:
  description: The file C(community.general.modprobe) writes the options to.
  returned: always
  type: str
  sample: /etc/modprobe.d/st.conf
conf_content:
  description: That file's content for RV(params), or null when RV(apply) is false.
  returned: always
  type: str
  sample: "options st max_sg_segs=513\n"
pending:
  description: The options asked for that the running st does not have, each C(running) and C(wanted).
  returned: always
  type: dict
  sample: {"max_sg_segs": {"running": 256, "wanted": 513}}
message:
  description: What the options take on this host, in one sentence.
  returned: always
  type: str
'''

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.tapeops.qualify.plugins.module_utils._config import _st_module

SYS_ROOT = '/sys'
PROC_ROOT = '/proc'
MODULES_ROOT = '/lib/modules'
MODPROBE_DIRS = (_st_module.ETC_MODPROBE_D,) + _st_module.OTHER_MODPROBE_DIRS


def main():
    module = AnsibleModule(
        argument_spec=dict(options=dict(type='dict', default={})),
        supports_check_mode=True,
    )
    release = os.uname()[2]
    where, basis, running, persistent, cmdline = _st_module.read_state(SYS_ROOT, PROC_ROOT, MODULES_ROOT, release,
                                                                       MODPROBE_DIRS)
    try:
        result = _st_module.plan(where, basis, running, persistent, cmdline, module.params['options'], release)
    except _st_module.StModuleError as exc:
        module.fail_json(where=where, basis=basis, running=running, persistent=persistent['options'],
                         **exc.refusal())
    if result['pending']:
        # a reboot or a reload of st is still to come: said on every run until the running st has them
        module.warn(result['message'])
    module.exit_json(changed=False, **result)


if __name__ == '__main__':
    main()
