# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The safety corpus on the lab: every module that writes to a tape, against what it must never write to.

On one guest's real kernel devices (docs/lab.md), through Ansible (tests/integration/targets/safety_corpus):

* every wrong target below, for tape_write_benchmark, btape_speed and tape_mechanics_benchmark, each with
  ``overwrite: true`` (the strongest permission a user can give): refused with the reason the gate names;
* the guest's data cartridge (a tar archive the lab writes at its first boot, docs/lab.md "Cartridges") loaded,
  with each form of permission short of allowing it: no allow-list, another barcode allowed, the scratch
  barcodes allowed, a scratch barcode given as ``barcode`` and allowed (the copy-paste that overwrote a data
  cartridge before the changer's barcode won), the same in lower case and in check mode;
* for each case: the refusal reason, the drive's st write counters unchanged, the cartridge's first block and
  the bytes of every file and disk target unchanged, the changer's inventory unchanged, the tape at BOT.
"""

import json
import os
import tempfile

import pytest

# untimed (pytest.ini): no rate, class or time a loaded machine could change
pytestmark = [pytest.mark.lab, pytest.mark.untimed]

HOST = 'lab-ma1'
SCRATCH_DIR = '/tmp/safety-corpus'
PLAYBOOK = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'targets', 'safety_corpus', 'playbook.yml')


def wrong_targets(lab):
    """(path, reason the gate gives) for everything on the guest a tape writer must not touch."""
    hv = lab.hostvars[HOST]
    drive_sg, changer_sg = hv['tapeops_lab_drives'][0]['sg'], hv['tapeops_lab_changer']['sg']
    d = SCRATCH_DIR
    return [
        ('/dev/ubda', 'block_device'),                  # the guest's root disk
        (d + '/disk-link', 'block_device'),             # a symlink to it
        (d + '/file.img', 'regular_file'),
        (d + '/empty', 'regular_file'),
        (d + '/file-link', 'regular_file'),
        (d, 'directory'),
        (d + '/fifo', 'not_char_device'),
        (d + '/socket', 'not_char_device'),
        ('/dev/null', 'memory_device'),
        ('/dev/zero', 'memory_device'),
        ('/dev/full', 'memory_device'),
        ('/dev/urandom', 'memory_device'),
        ('/dev/kmsg', 'memory_device'),
        (drive_sg, 'sg_node'),                          # the drive's own sg node: bypasses st
        (changer_sg, 'sg_node'),
        ('/dev/sch0', 'changer_node'),
        ('/dev/tty', 'other_char_device'),
        ('/dev/ttyS0', 'other_char_device'),
        ('/dev/st0', 'rewinding_node'),
        ('/dev/st0l', 'rewinding_node'),
        (d + '/stale-st', 'stale_node'),                # st major 9, a minor no drive has
        (d + '/missing', 'missing'),
        ('/dev/nst0/', 'missing'),                      # a trailing slash
        (d + '/file.img/nst0', 'missing'),              # a path through a file
    ]


def cases(lab):
    """(name, module, args, reason, check) with the data cartridge loaded."""
    hv = lab.hostvars[HOST]
    scratch = hv['tapeops_allowed_barcodes']
    first = scratch[0]
    base = {'device': '/dev/nst0'}
    out = []
    for module in ('tape_write_benchmark', 'btape_speed'):
        out += [
            ('%s no allow-list' % module, module, dict(base), 'media_has_data', False),
            ('%s another barcode allowed' % module, module, dict(base, allowed_barcodes=['NOT-THIS-ONE']),
             'media_has_data', False),
            ('%s the scratch barcodes allowed' % module, module, dict(base, allowed_barcodes=scratch),
             'media_has_data', False),
            ('%s a scratch barcode given and allowed' % module, module,
             dict(base, barcode=first, allowed_barcodes=[first]), 'barcode_mismatch', False),
            ('%s the same in lower case' % module, module,
             dict(base, barcode=first.lower(), allowed_barcodes=[first.lower()]), 'barcode_mismatch', False),
            ('%s the same in check mode' % module, module,
             dict(base, barcode=first, allowed_barcodes=[first]), 'barcode_mismatch', True),
        ]
    # mechanics names the cartridge to move: another one is in the drive, so it moves nothing
    out.append(('tape_mechanics_benchmark a scratch cartridge while the data one is loaded',
                'tape_mechanics_benchmark', dict(base, barcode=first, allowed_barcodes=[first], repeats=1,
                                                 locate_files=1), 'drive_full', False))
    return out


def state(lab):
    """What must not change: st counters, the bytes of the file and disk targets, the changer, the first block."""
    script = r'''
set -e
S=/sys/class/scsi_tape/nst0/stats
echo "writes $(cat $S/write_cnt) $(cat $S/write_byte_cnt)"
echo "file $(sha256sum < %(d)s/file.img | cut -c1-64) $(stat -c %%s.%%Y %(d)s/file.img)"
echo "disk $(head -c 4194304 /dev/ubda | sha256sum | cut -c1-64)"
echo "changer $(mtx -f /dev/sch0 status | sha256sum | cut -c1-64)"
mt -f /dev/nst0 rewind
mt -f /dev/nst0 setblk 0
echo "block $(dd if=/dev/nst0 bs=1048576 count=1 2>/dev/null | sha256sum | cut -c1-64)"
mt -f /dev/nst0 rewind
mt -f /dev/nst0 status | grep -q BOT && echo "at BOT"
''' % {'d': SCRATCH_DIR}
    proc = lab.run(HOST, script, check=True)
    return proc.stdout.splitlines()


def changer(lab):
    return lab.hostvars[HOST]['tapeops_lab_changer']['sg']


def slot_of(lab, barcode):
    for line in lab.run(HOST, 'mtx -f %s status' % changer(lab), check=True).stdout.splitlines():
        if barcode in line and 'Storage Element' in line.split(':')[0]:
            return int(line.split(':')[0].split()[-1])
    raise AssertionError('%s is not in a slot of %s' % (barcode, HOST))


@pytest.fixture(scope='module')
def data_loaded(lab):
    """The guest's data cartridge in the drive (the scratch one back in its slot), restored afterwards."""
    hv = lab.hostvars[HOST]
    data = hv['tapeops_lab_data_barcodes'][0]
    slot = slot_of(lab, data)
    ch = changer(lab)
    lab.run(HOST, 'mt -f /dev/nst0 offline; mtx -f %s unload 1 0 && mtx -f %s load %d 0 && '
                  'for i in $(seq 50); do mt -f /dev/nst0 status 2>/dev/null | grep -q ONLINE && break; '
                  'sleep 0.2; done' % (ch, ch, slot), check=True)
    setup = ('rm -rf {d}; mkdir -p {d}; head -c 65536 /dev/urandom > {d}/file.img; : > {d}/empty; '
             'ln -s /dev/ubda {d}/disk-link; ln -s {d}/file.img {d}/file-link; mkfifo {d}/fifo; '
             'python3 -c "import socket; socket.socket(socket.AF_UNIX).bind(\'{d}/socket\')"; '
             'mknod {d}/stale-st c 9 5').format(d=SCRATCH_DIR)
    lab.run(HOST, setup, check=True)
    try:
        yield data
    finally:
        lab.run(HOST, 'rm -rf %s; mt -f /dev/nst0 offline; mtx -f %s unload %d 0; mtx -f %s load 1 0; '
                      'for i in $(seq 50); do mt -f /dev/nst0 status 2>/dev/null | grep -q ONLINE && break; '
                      'sleep 0.2; done' % (SCRATCH_DIR, ch, slot, ch))


def test_every_writing_module_refuses_every_wrong_target_and_the_data_cartridge(lab, data_loaded):
    targets = wrong_targets(lab)
    corpus = cases(lab)
    before = state(lab)
    assert 'at BOT' in before, before
    with tempfile.TemporaryDirectory(prefix='safety-corpus-') as tmp:
        out = os.path.join(tmp, 'results.json')
        extra = {'corpus_host': HOST, 'corpus_out': out, 'corpus_targets': [t for t, _r in targets],
                 'corpus_scratch_barcode': lab.hostvars[HOST]['tapeops_allowed_barcodes'][1],
                 'corpus_cases': [{'name': n, 'module': m, 'args': a, 'check': c} for n, m, a, _r, c in corpus]}
        played = lab.playbook(PLAYBOOK, extra_vars=extra, limit=HOST, timeout=1800)
        assert played.rc == 0, played.stdout[-4000:] + played.stderr[-2000:]
        with open(out) as handle:
            results = json.load(handle)
    after = state(lab)
    assert after == before, 'something changed:\nbefore %s\nafter  %s' % (before, after)

    wrong = []
    for module, runs in results['targets'].items():
        assert [r['item'] for r in runs] == [t for t, _r in targets]
        for run, (path, reason) in zip(runs, targets):
            if run.get('reason') != reason or 'changed' in run and run['changed']:
                wrong.append((module, path, reason, run.get('reason'), run.get('msg')))
            elif 'Traceback' in (run.get('msg') or '') or 'exception' in run:
                wrong.append((module, path, 'no traceback', run.get('msg')))
    assert not wrong, '\n'.join(map(repr, wrong))
    assert len(results['targets']) == 3 and len(targets) >= 23

    by_name = dict((r['item']['name'], r) for r in results['cases'])
    assert sorted(by_name) == sorted(n for n, _m, _a, _r, _c in corpus)
    for name, _module, args, reason, _check in corpus:
        run = by_name[name]
        assert run.get('reason') == reason, (name, run.get('reason'), run.get('msg'))
        if reason == 'barcode_mismatch':
            # names both: the changer's barcode and the one the task gave
            assert data_loaded in run['msg'] and args['barcode'] in run['msg'], run['msg']
        if reason == 'media_has_data':
            assert data_loaded in run['msg'] and 'Refusing to overwrite it' in run['msg'], run['msg']
            assert run['media']['content'] in ('data', 'unknown')
    # btape was never started on any of them
    assert not [r for r in results['cases'] if r['item']['module'] == 'btape_speed' and r.get('stdout')]
