# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A backup-like writer for the lab's end-to-end tests: source files -> tape, with a record.

``python3 -m tapedrive.writer [options] PATH...`` (in a guest) reads the
files under PATH in order, in blocks of ``--block-size`` bytes, and writes
each block to the tape device as one tape block (st variable-block mode),
like a backup agent streaming a file system. After each file it writes a
file mark: ``--filemarks sync`` (MTWEOF, WRITE FILEMARKS IMMED=0),
``immediate`` (MTWEOFI, IMMED=1) or ``none``. It prints one JSON object:
bytes, seconds, the per-second series of bytes read from the source and
written to tape, file-mark count and time. Reads go through the page cache
unless ``--drop-caches`` (echo 3 > /proc/sys/vm/drop_caches first).
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import struct
import sys
import time

MTIOCTOP = 0x40086D01
MTWEOF = 5
MTREW = 6
MTSETBLK = 20
MTWEOFI = 35


def mtop(fd, op, count=1):
    fcntl.ioctl(fd, MTIOCTOP, struct.pack('hi', op, count))


def files_under(paths):
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, names in os.walk(path):
                dirs.sort()
                for name in sorted(names):
                    yield os.path.join(root, name)
        else:
            yield path


def main(argv=None):
    ap = argparse.ArgumentParser(prog='python3 -m tapedrive.writer')
    ap.add_argument('paths', nargs='+')
    ap.add_argument('--device', default='/dev/nst0')
    ap.add_argument('--block-size', type=int, default=262144)
    ap.add_argument('--filemarks', choices=('sync', 'immediate', 'none'), default='sync')
    ap.add_argument('--max-bytes', type=int, default=0, help='stop after this many bytes (0: all)')
    ap.add_argument('--rewind', action='store_true', help='rewind before writing')
    ap.add_argument('--drop-caches', action='store_true')
    args = ap.parse_args(argv)
    if args.drop_caches:
        os.sync()
        with open('/proc/sys/vm/drop_caches', 'w') as f:
            f.write('3\n')
    fd = os.open(args.device, os.O_WRONLY)
    read_series = [0]
    write_series = [0]
    marks = 0
    mark_seconds = 0.0
    total = 0
    files = 0
    try:
        mtop(fd, MTSETBLK, 0)
        if args.rewind:
            mtop(fd, MTREW)
        start = time.monotonic()

        def second():
            n = int(time.monotonic() - start)
            while len(read_series) <= n:
                read_series.append(0)
                write_series.append(0)
            return n
        done = False
        for path in files_under(args.paths):
            with open(path, 'rb', buffering=0) as src:
                while True:
                    want = args.block_size
                    if args.max_bytes:
                        want = min(want, args.max_bytes - total)
                    if want <= 0:
                        done = True
                        break
                    block = src.read(want)
                    if not block:
                        break
                    read_series[second()] += len(block)
                    os.write(fd, block)
                    write_series[second()] += len(block)
                    total += len(block)
            files += 1
            if args.filemarks != 'none':
                t = time.monotonic()
                mtop(fd, MTWEOF if args.filemarks == 'sync' else MTWEOFI)
                mark_seconds += time.monotonic() - t
                marks += 1
            if done:
                break
        seconds = time.monotonic() - start
    finally:
        os.close(fd)         # st writes a file mark (a flush) on close after writing
    closed = time.monotonic() - start
    print(json.dumps({
        'bytes': total, 'files': files, 'seconds': round(seconds, 3), 'seconds_with_close': round(closed, 3),
        'mb_s': round(total / seconds / 1e6, 3) if seconds > 0 else None,
        'source_series_bytes': read_series, 'write_series_bytes': write_series,
        'filemarks': args.filemarks, 'marks': marks, 'mark_seconds': round(mark_seconds, 3),
        'block_size': args.block_size,
    }))
    return 0


if __name__ == '__main__':
    sys.exit(main())
