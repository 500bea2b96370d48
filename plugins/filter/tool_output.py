# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: tool_output
short_description: Parse the output of a tape tool that a host printed or a user pasted
version_added: 0.1.0
author:
  - tapeops.qualify contributors (@tapeops)
description:
  - Turns the text of C(mt status), C(mtx status), FreeBSD C(chio status), C(lsscsi), C(/proc/scsi/scsi),
    C(lshw -class tape), sysstat C(tapestat) (text or C(-o JSON)), the st driver's sysfs statistics, C(tapeinfo),
    C(sg_inq), C(sg_read_block_limits) or C(sg_logs) into data, with the collection's own parsers (the ones its
    modules use, tested on recorded real output of each tool).
  - For hosts where the collection's modules cannot run (another OS, no SSH, a support case's pasted output), and
    for tools the modules do not run themselves (C(chio), C(tapestat), C(lshw)).
  - What a tool did not say is null, never a guess; a truncated output gives C(complete=false) and warnings where
    the parser can tell. Ansible strips the last newline of a registered C(stdout) and of a file lookup, so the
    filter reads the last line as whole (a capture cut in the middle of its last line cannot be told).
options:
  _input:
    description: The tool's output (text).
    type: str
    required: true
  tool:
    description: Which tool printed it.
    type: str
    required: true
    choices: [mt, mtx, chio, lsscsi, proc_scsi_scsi, lshw, tapestat, st_stats, st_stats_listing, tapeinfo, sg_inq,
              sg_read_block_limits, sg_logs]
'''

EXAMPLES = r'''
- name: Read a pasted mtx status
  ansible.builtin.debug:
    msg: "{{ lookup('ansible.builtin.file', 'case-1234/mtx.txt') | tapeops.qualify.tool_output('mtx') }}"

- name: Tape drives in /proc/scsi/scsi of a host without lsscsi
  ansible.builtin.command: cat /proc/scsi/scsi
  register: proc_scsi
  changed_when: false

- name: Show their vendor and model
  ansible.builtin.debug:
    msg: "{{ (proc_scsi.stdout | tapeops.qualify.tool_output('proc_scsi_scsi')).devices | selectattr('type', 'equalto', 'Sequential-Access') }}"
'''

RETURN = r'''
_value:
  description:
    - The parsed output in the parser's layout, as the modules use it (for example
      RV(tapeops.qualify.tape_drive_info#module:drives[].mt_status) for C(mt)); C(complete) and C(warnings) where
      the tool's output can be cut short.
    - A list for C(lsscsi) (devices) and C(st_stats_listing) (counter names), a dictionary for every other tool.
  type: raw
'''

from ansible.errors import AnsibleFilterError
from ansible.module_utils.common.text.converters import to_text

from ansible_collections.tapeops.qualify.plugins.module_utils._errors import TapeopsError
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _chio, _mt, _mtx, _scsi_inquiry, _sg_logs
from ansible_collections.tapeops.qualify.plugins.module_utils._tools import _st_sysfs

PARSERS = {
    'mt': _mt.parse_mt_status,
    'mtx': _mtx.parse_mtx_status,
    'chio': _chio.parse_chio_status,
    'lsscsi': _scsi_inquiry.parse_lsscsi,
    'proc_scsi_scsi': _scsi_inquiry.parse_proc_scsi_scsi,
    'lshw': _scsi_inquiry.parse_lshw_tape,
    'tapestat': _st_sysfs.parse_tapestat,
    'st_stats': _st_sysfs.parse_stats_text,
    'st_stats_listing': _st_sysfs.parse_stats_listing,
    'tapeinfo': _scsi_inquiry.parse_tapeinfo,
    'sg_inq': _scsi_inquiry.parse_sg_inq,
    'sg_read_block_limits': _scsi_inquiry.parse_read_block_limits_text,
    'sg_logs': _sg_logs.parse_all,
}


def tool_output(text, tool):
    """The parsed output of ``tool`` (see DOCUMENTATION)."""
    if tool not in PARSERS:
        raise AnsibleFilterError('tool_output: unknown tool %r; use one of %s.' % (tool, ', '.join(sorted(PARSERS))))
    if text is None:
        raise AnsibleFilterError('tool_output: no %s output to read (the input is null).' % tool)
    if isinstance(text, (list, tuple)):   # a registered stdout_lines
        text = '\n'.join(to_text(line, errors='surrogate_or_replace') for line in text)
    text = to_text(text, errors='surrogate_or_replace')
    # Ansible strips the last newline of a registered stdout and of a file lookup; the parsers take a last line
    # without one as cut short (and drop it), so it is put back
    if text and not text.endswith('\n'):
        text += '\n'
    try:
        return PARSERS[tool](text)
    except (TapeopsError, ValueError) as exc:
        raise AnsibleFilterError('tool_output(%s): %s' % (tool, exc)) from exc


class FilterModule:
    """Parsers of tape tool output."""

    def filters(self):
        return {'tool_output': tool_output}
