# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""st_tuning and btape_speed on the lab guests (real st driver, drive served by tgt).

Only lab-ma2 is used (lab-ma1 belongs to the tape benchmark tests). Its /etc
is a tmpfs overlay: the fixture puts back this machine's /etc/stinit.def and
the drive's driver options after each test. btape writes to the loaded
cartridge only because the lab inventory lists it in tapeops_allowed_barcodes.
"""

import re

import pytest

HOST = 'lab-ma2'
ST_PLAYBOOK = 'tests/integration/targets/st_tuning_lab/playbook.yml'
BTAPE_PLAYBOOK = 'tests/integration/targets/bacula_sd_lab/playbook.yml'
RECAP = re.compile(r'^(\S+)\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)', re.M)
RESET = ('for n in nst0 nst0l; do mt -f /dev/$n stsetoptions buffer-writes async-writes read-ahead can-bsr && '
         'mt -f /dev/$n stclearoptions scsi2logical two-fms && mt -f /dev/$n defblksize -1 && '
         'mt -f /dev/$n defcompression -1 || exit 1; done; '
         'rm -f /etc/stinit.def.*~ /etc/stinit-tapeops.def* /etc/udev/rules.d/61-tapeops-stinit.rules')

# untimed (pytest.ini): no rate, class or time a loaded machine could change
pytestmark = [pytest.mark.lab, pytest.mark.untimed]


def _changed(result):
    recap = {m.group(1): int(m.group(3)) for m in RECAP.finditer(result.stdout)}
    assert HOST in recap, result.stdout + result.stderr
    return recap[HOST]


def _sysfs(lab, node='nst0'):
    proc = lab.run(HOST, 'cat /sys/class/scsi_tape/%s/options /sys/class/scsi_tape/%s/default_blksize' % (node, node))
    assert proc.returncode == 0, proc.stderr
    options, blksize = proc.stdout.split()
    return int(options, 16), int(blksize)


def _digest(lab, path='/etc/stinit.def'):
    return lab.run(HOST, 'sha256sum %s' % path).stdout.split()[0]


@pytest.fixture
def st_clean(lab):
    """lab-ma2 with this machine's stinit.def and the driver's default options; restored afterwards."""
    with open('/etc/stinit.def') as handle:
        original = handle.read()

    def reset():
        proc = lab.run(HOST, 'cat > /etc/stinit.def && ' + RESET, input=original)
        assert proc.returncode == 0, proc.stdout + proc.stderr

    reset()
    yield lab
    reset()


def test_st_tuning_idempotence_ladder_and_sysfs_read_back(st_clean):
    lab = st_clean
    before_options, before_blksize = _sysfs(lab)
    assert not before_options & 0x800 and before_blksize == -1
    before_digest = _digest(lab)
    counts = []
    for check in (True, False, True, False):
        result = lab.playbook(ST_PLAYBOOK, check=check, limit=HOST)
        assert result.rc == 0, result.stdout + result.stderr
        counts.append(_changed(result))
        if len(counts) == 1:
            # The first check run planned its two changes (the file, the drive) and made none: the files and the
            # drive's options as they were.
            assert counts[0] == 2, result.stdout
            assert (_digest(lab), _sysfs(lab)) == (before_digest, (before_options, before_blksize))
    assert ['changed' if c else 'not changed' for c in counts] == ['changed', 'changed', 'not changed', 'not changed']
    options, blksize = _sysfs(lab)
    # Read back from sysfs: scsi2logical (0x800), can-bsr (0x100), buffer/async/read-ahead, variable blocks.
    assert options & 0x907 == 0x907 and blksize == 0
    text = lab.run(HOST, 'cat /etc/stinit.def').stdout
    assert 'Ansible managed' in text and '  mode1 buffer-writes=1' in text
    assert lab.run(HOST, 'ls /etc/stinit.def.*~').stdout.count('stinit.def.') == 1
    # Debian's mt-st udev rule already runs stinit with /etc/stinit.def: no rule of ours.
    assert lab.run(HOST, 'test -e /etc/udev/rules.d/61-tapeops-stinit.rules').returncode != 0


@pytest.mark.parametrize('extra, message', [
    ({'st_tuning_definitions': [{'options': {'blocksiz': 0}}]}, "unknown stinit keyword 'blocksiz'"),
    ({'st_tuning_definitions': [{'modes': [{'mode': 1, 'blocksize': 1023}]}]}, 'not a multiple of 4 bytes'),
    ({'st_tuning_block_size': 8388608, 'st_tuning_fail_on_preflight': True},
     'does not fit the HBA path: the HBA driver caps one command at'),
])
def test_st_tuning_bad_values_touch_nothing(st_clean, extra, message):
    lab = st_clean
    before = (_digest(lab), _sysfs(lab), _sysfs(lab, 'nst0l'))
    result = lab.playbook(ST_PLAYBOOK, extra_vars=extra, limit=HOST)
    assert result.rc != 0
    assert message in ' '.join((result.stdout + result.stderr).split()), result.stdout
    assert (_digest(lab), _sysfs(lab), _sysfs(lab, 'nst0l')) == before


def test_st_tuning_own_udev_rule_for_another_config_path(st_clean):
    """Debian's mt-st rule runs stinit with /etc/stinit.def; another path needs the role's own rule."""
    lab = st_clean
    assert lab.run(HOST, 'test -e /lib/udev/rules.d/60-mt-st.rules').returncode == 0
    result = lab.playbook(ST_PLAYBOOK, extra_vars={'st_tuning_config': '/etc/stinit-tapeops.def'}, limit=HOST)
    assert result.rc == 0, result.stdout + result.stderr
    rule = lab.run(HOST, 'cat /etc/udev/rules.d/61-tapeops-stinit.rules').stdout
    assert 'RUN+="/sbin/stinit -f /etc/stinit-tapeops.def /dev/%k"' in rule
    assert 'KERNEL=="nst[0-9]*", KERNEL!="nst*[alm]"' in rule
    # The drive was tuned from that file and reads back as asked.
    options, blksize = _sysfs(lab)
    assert options & 0x907 == 0x907 and blksize == 0


def _write_bytes(lab):
    return int(lab.run(HOST, 'cat /sys/class/scsi_tape/nst0/stats/write_byte_cnt').stdout.strip())


def test_btape_speed_on_lab_drive(lab):
    before = _write_bytes(lab)
    result = lab.playbook(BTAPE_PLAYBOOK, limit=HOST)
    assert result.rc == 0, result.stdout + result.stderr
    rate = float(re.search(r'"zero_block_mb_s": ([\d.]+)', result.stdout).group(1))
    assert rate > 0
    assert '"version": "9.6.7"' in result.stdout
    assert 'is in allowed_barcodes' in result.stdout
    # btape really wrote its 1 GB file through the st driver.
    assert _write_bytes(lab) - before >= 1073000000


def test_btape_speed_refuses_cartridge_with_data_not_allowed(lab):
    # After the previous test the cartridge holds btape's volume; without the allow-list it must be refused.
    before = _write_bytes(lab)
    result = lab.playbook(BTAPE_PLAYBOOK, limit=HOST, args=('-e', '{"tapeops_allowed_barcodes": []}'))
    assert result.rc != 0
    assert 'Refusing to overwrite it' in result.stdout
    assert _write_bytes(lab) == before
