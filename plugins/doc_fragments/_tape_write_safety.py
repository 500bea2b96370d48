# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations


class ModuleDocFragment:
    """The safety gate's options, for every module that writes to a tape (private).

    The options are declared once in code too:
    ``plugins/module_utils/_measure/_tape_safety.py`` (``WRITE_SAFETY_ARGSPEC``).
    """

    DOCUMENTATION = r'''
options:
  overwrite:
    description:
      - Allow writing over a cartridge that holds data or could not be proven blank by the read at BOT.
      - Write-protected and WORM cartridges, and cartridges whose write protection the drive does not report, are
        refused regardless.
    type: bool
    default: false
  allowed_barcodes:
    description:
      - Barcodes of scratch cartridges that may be written even when they hold data (compared without regard to
        case). The loaded cartridge's barcode is the one its changer reports; a O(barcode) given by the task is
        used only where no changer reports one, and one that differs from the changer's is refused.
      - When this list is what would admit a cartridge holding data, the changer is asked again right before
        writing. A barcode no changer can vouch for (the changer failed, or a changer on the host could not say
        which drives it holds) admits nothing (C(barcode_unconfirmed)).
    type: list
    elements: str
    default: []
  op_timeout:
    description:
      - Deadline in seconds for each tape operation (an open, a status, a rewind, a file mark, a command); a drive
        that does not answer within it stops the run.
    type: int
    default: 900
notes:
  - >-
    B(Safety gate.) This module opens a tape for writing only through the collection's one safety gate, the same
    for every module that writes. Before anything is opened, the device must be a non-rewinding st node
    (C(/dev/nstN)) bound to a SCSI sequential-access device; disks, partitions, regular files, C(/dev/null), sg
    nodes, changers and other character devices are refused. Every open is checked with C(fstat) to be that very
    device (a node replaced after the check is refused, C(device_changed)). The cartridge is written only when it
    is loaded, its write protection is known and off, it is not WORM, and a read at BOT finds it blank, unless
    its barcode is in O(allowed_barcodes) or O(overwrite=true).
  - >-
    A refusal fails the task with C(msg) (what was found and what to do) and C(reason), one machine-readable key
    (for example C(regular_file), C(block_device), C(memory_device), C(sg_node), C(rewinding_node), C(busy),
    C(device_changed), C(no_media), C(write_protected), C(write_protect_unknown), C(worm), C(cleaning),
    C(media_has_data),
    C(barcode_mismatch), C(barcode_unconfirmed)).
'''
