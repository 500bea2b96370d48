# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's emulated LTO tape drive and medium changer (LIO TCMU, user space).

Runs inside a lab guest with the host's python3 (stdlib only) as
``python3 -m tapedrive CONFIG.json`` with ``lab/`` on PYTHONPATH. Modules:

- ``scsi``: Result, sense data, CDB/INQUIRY/VPD/mode/log helpers (both devices)
- ``media``: ``Cartridge``, one file per cartridge (blocks + file marks)
- ``library``: ``Library``, slots / drives / import-export elements
- ``ssc``: the drive (SSC commands, log pages)
- ``smc``: the changer (SMC commands)
- ``physics``: buffer, speed steps, back-hitches, time scale, compression
- ``tcmu``: the uio ring handler and configfs setup/teardown
"""
