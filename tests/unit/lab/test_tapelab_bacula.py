# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bacula in the lab (lab/tapelab_bacula.py): the pool, the configurations, the scripts, the inventory."""

import importlib.util
import os
import shutil
import subprocess
import sys

import pytest
import yaml

from ansible_collections.tapeops.qualify.plugins.module_utils._config import _sd_config

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
LAB = os.path.join(ROOT, 'lab')


def _load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(LAB, name + '.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


tapelab = _load('tapelab')
tb = _load('tapelab_bacula')
INSTALLED = all(shutil.which(p, path=os.environ.get('PATH', '') + ':/usr/sbin') for p in
                ('bacula-dir', 'bacula-sd', 'bacula-fd', 'bconsole', 'sqlite3'))


def spec(index=2, carts=3):
    return tapelab.guest_spec(index, carts, '/var/tmp/tapeops-lab')


def test_the_pool_is_the_scratch_cartridges_but_the_one_loaded_at_boot():
    # slot 1 (loaded at boot) is the cartridge the lab's other tests write from its beginning; slot 4 holds data
    assert tb.pool_slots(spec()) == [(2, 'MA2002L6'), (3, 'MA2003L6')]
    assert tb.pool_slots(spec(1, 5)) == [(2, 'MA1002L5'), (3, 'MA1003L5'), (4, 'MA1004L5'), (5, 'MA1005L5')]
    for slot, barcode in tb.pool_slots(spec(3, 20)):
        assert barcode in spec(3, 20)['scratch'] and barcode not in spec(3, 20)['data'] and slot != 1
    with pytest.raises(tb.BaculaSetupError, match=r'lab-ma2 has no scratch cartridge for Bacula besides the one it '
                                                  r'loads at boot \(MA2001L6\).*-k 3 --bacula'):
        tb.pool_slots(spec(2, 1))


def test_the_scripts_are_sh_and_touch_only_the_pools_cartridges():
    script = tb.setup_script(spec(), '/dev/sg1')
    for text in (script, tb.stop_script(spec(), '/dev/sg1')):
        assert subprocess.run(['sh', '-n'], input=text, text=True, check=False).returncode == 0
    # each cartridge is blanked only after mtx says its slot holds it
    assert '[ "$(slot_barcode 2)" = MA2002L6 ] || fail' in script
    assert '[ "$(slot_barcode 3)" = MA2003L6 ] || fail' in script
    assert 'slot_barcode 1)' not in script and 'slot_barcode 4)' not in script
    assert 'MA2099L6' not in script and 'MA2001L6' not in script
    assert "label barcodes storage=Library pool=LabTapes slots=2,3 drive=0\\nyes\\n" in script
    # each daemon's configuration checked before it starts
    for daemon, conf in (('bacula-dir', 'bacula-dir.conf'), ('bacula-sd', 'bacula-sd.conf'),
                         ('bacula-fd', 'bacula-fd.conf')):
        assert script.index('%s -t -c /srv/bacula/etc/%s' % (daemon, conf)) < script.index(
            '%s -c /srv/bacula/etc/%s' % (daemon, conf))
    # the boot cartridge back in the drive at the end
    assert script.rstrip().endswith('log "ready: job lab-ma2-backup, pool LabTapes"')
    assert 'load_slot 1\n' in script[script.index('drive released'):]


def test_the_storage_daemon_lets_go_of_the_drive_between_jobs():
    conf = tb.storage_config(spec(), '/dev/sg1')
    assert 'AlwaysOpen = no' in conf and 'Archive Device = /dev/nst0' in conf and 'Changer Device = /dev/sg1' in conf
    assert 'Maximum Block Size = 262144' in conf and 'Media Type = LTO-6' in conf
    assert 'Media Type = LTO-6' in tb.director_config(spec())


def test_the_collection_reads_the_generated_storage_daemon_configuration(tmp_path):
    """qualify reads the guest's bacula-sd.conf (qualify_sd_config) with bacula_sd_info's reader."""
    path = tmp_path / 'bacula-sd.conf'
    path.write_text(tb.storage_config(spec(), '/dev/sg1'))
    out = _sd_config.read_storage_daemon('bacula', str(path), resolve=lambda p: p)
    assert out['error'] is None and out['not_read'] == [] and out['working_directory'] == '/srv/bacula/work/sd'
    [device] = out['devices']
    assert (device['name'], device['archive_device'], device['st'], device['media_type']) == (
        'Drive-0', '/dev/nst0', 'st0', 'LTO-6')
    assert (device['maximum_block_size']['source'], device['maximum_block_size']['value']) == ('configuration', 262144)
    assert (device['maximum_file_size']['source'], device['maximum_file_size']['value']) == ('default', 1000000000)


@pytest.mark.skipif(not INSTALLED, reason='needs bacula-director, bacula-sd, bacula-fd, bacula-console (tools/run setup)')
def test_the_daemons_take_their_configurations(tmp_path):
    """``-t -c``, as the set-up checks them in the guest, with the guest's paths moved under tmp_path."""
    root = str(tmp_path)
    for sub in ('work/dir', 'work/sd', 'work/fd', 'run', 'log', 'restore'):
        os.makedirs(os.path.join(root, sub))
    tables = subprocess.run(['sed', '-e', 's/XXX_DBNAME_XXX/bacula/', '-e', 's|^cd /var/lib/bacula|cd %s/work/dir|' % root,
                             '/usr/share/bacula-director/make_sqlite3_tables'], capture_output=True, text=True,
                            check=True).stdout
    assert subprocess.run(['sh'], input=tables, capture_output=True, text=True, check=False).returncode == 0
    env = dict(os.environ, PATH=os.environ.get('PATH', '') + ':/usr/sbin', LC_ALL='C')
    for daemon, text in (('bacula-dir', tb.director_config(spec())), ('bacula-sd', tb.storage_config(spec(), '/dev/sg1')),
                         ('bacula-fd', tb.file_daemon_config(spec())), ('bconsole', tb.bconsole_config(spec()))):
        conf = tmp_path / (daemon + '.conf')
        conf.write_text(text.replace(tb.BACULA_DIR, root))
        proc = subprocess.run([daemon, '-t', '-c', str(conf)], capture_output=True, text=True, env=env, check=False)
        assert proc.returncode == 0, (daemon, proc.stdout, proc.stderr)


def test_the_inventory_of_a_guest_with_bacula():
    specs = [spec(1), spec(2)]
    readies = {'lab-ma2': {'nst': '/dev/nst0', 'drive_sg': '/dev/sg0', 'changer_sg': '/dev/sg1'}}
    plain = tapelab.render_inventory(specs, readies, '/r')
    # without Bacula the inventory is what it was
    assert tapelab.render_inventory(specs, readies, '/r', None, {'lab-ma1': None, 'lab-ma2': None}) == plain
    assert 'bacula' not in plain and 'qualify_sd_config' not in plain
    hosts = yaml.safe_load(tapelab.render_inventory(specs, readies, '/r', None, {'lab-ma2': tb.host_vars(spec(2))}))[
        'all']['children']['media_agents']['hosts']
    assert 'tapeops_bacula' not in hosts['lab-ma1']
    ma2 = hosts['lab-ma2']
    assert ma2['tapeops_backup'] == {'software': 'bacula'}
    assert ma2['qualify_sd_config'] == '/srv/bacula/etc/bacula-sd.conf'
    assert ma2['tapeops_bacula'] == {
        'job': 'lab-ma2-backup', 'level': 'Full', 'bconsole_config': '/srv/bacula/etc/bconsole.conf',
        'storage': 'Library', 'pool': 'LabTapes', 'drive': 0, 'slots': [2, 3], 'volumes': ['MA2002L6', 'MA2003L6'],
        'director': 'lab-ma2-dir', 'client': 'lab-ma2-fd', 'fileset': 'SourceTree', 'restore_job': 'lab-ma2-restore',
        'config_dir': '/srv/bacula/etc', 'log': '/srv/bacula/log/bacula.log'}
    # Bacula only labels cartridges writes are allowed on
    assert set(ma2['tapeops_bacula']['volumes']) <= set(ma2['tapeops_allowed_barcodes'])


def test_a_lab_without_bacula_never_loads_it():
    out = subprocess.run([sys.executable, '-c', 'import sys; sys.path.insert(0, %r); import tapelab; '
                          'print("tapelab_bacula" in sys.modules)' % LAB], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == 'False'
