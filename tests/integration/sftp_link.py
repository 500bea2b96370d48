# Copyright (c) tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""A file server behind a link of known speed: sftp-server with a shared byte budget and a round-trip time.

sshfs runs this as its ``ssh_command`` (it ignores the ssh arguments sshfs
passes): the real OpenSSH sftp-server serves a local directory, and every byte
in either direction (read replies and write requests alike) draws on one token
bucket of ``--rate`` bytes per second, so a writer and a reader share the link
the way they share a file server's disks. ``--rtt`` milliseconds are added to
every message (half each way) without holding others up, so one synchronous
reader is latency bound while several parallel ones reach the rate.

    sshfs -o ssh_command=WRAPPER localhost:/export /mnt   (WRAPPER: exec sftp_link.py --rate 20e6 --rtt 20)
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import threading
import time

BURST = 262144


class Bucket:
    def __init__(self, rate):
        self.rate = float(rate)
        self.tokens = float(BURST)
        self.at = time.monotonic()
        self.lock = threading.Lock()

    def take(self, count):
        while True:
            with self.lock:
                now = time.monotonic()
                self.tokens = min(BURST, self.tokens + (now - self.at) * self.rate)
                self.at = now
                if self.tokens >= 0:
                    self.tokens -= count
                    return
                wait = -self.tokens / self.rate
            time.sleep(wait)


def pump(source, target, delay, bucket):
    """Copy ``source`` to ``target``: each chunk leaves ``delay`` s after it arrived, within the bucket's rate.

    The link holds at most its bandwidth-delay product (at least 1 MiB) in flight; beyond that the sender
    waits, as on a real link, instead of queueing without bound.
    """
    queue = collections.deque()
    ready = threading.Condition()
    limit = max(1048576, int(2 * bucket.rate * delay))
    held = [0]

    def reader():
        while True:
            with ready:
                while held[0] >= limit:
                    ready.wait()
            try:
                data = os.read(source, 65536)
            except OSError:
                data = b''
            with ready:
                queue.append((time.monotonic() + delay, data))
                held[0] += len(data)
                ready.notify_all()
            if not data:
                return

    threading.Thread(target=reader, daemon=True).start()
    while True:
        with ready:
            while not queue:
                ready.wait()
            due, data = queue.popleft()
            held[0] -= len(data)
            ready.notify_all()
        pause = due - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        if not data:
            break
        bucket.take(len(data))
        try:
            os.write(target, data)
        except OSError:
            break
    try:
        os.close(target)
    except OSError:
        pass


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n', maxsplit=1)[0])
    parser.add_argument('--rate', type=float, required=True, help='bytes per second, both directions together')
    parser.add_argument('--rtt', type=float, default=0.0, help='round-trip time in milliseconds')
    parser.add_argument('--server', default='/usr/lib/openssh/sftp-server')
    opts, _ssh_args = parser.parse_known_args()
    bucket = Bucket(opts.rate)
    server = subprocess.Popen([opts.server], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    half = opts.rtt / 2000.0
    threading.Thread(target=pump, args=(0, server.stdin.fileno(), half, bucket), daemon=True).start()
    pump(server.stdout.fileno(), 1, half, bucket)
    server.wait()


if __name__ == '__main__':
    main()
