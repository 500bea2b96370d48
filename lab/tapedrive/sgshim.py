# Copyright: tapeops.qualify contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run real sg tools (mtx, sg3_utils) against an emulated device, without a guest.

``sgshim.c`` is an LD_PRELOAD library: a program that opens ``$SGSHIM_PATH``
gets a Unix socket instead, and its SG_IO ioctls travel over that socket to
``serve()``, which hands each CDB to ``device.execute(cdb, data_out)`` (the
same call the TCMU ring handler makes) and sends back status, data-in and
sense. So the unit tests can check the emulated changer and drive with the
tools users run (``mtx status``, ``sg_inq``) and not only with our own
decoding of the bytes.

Test use only; the lab guests talk to the devices through the kernel (LIO
TCMU + tcm_loop + sg/st/ch). Needs gcc and libc headers (``build``)::

    so = sgshim.build(tmpdir)
    with sgshim.serve(changer, tmpdir + '/sock') as server:
        env = server.env(so, tmpdir + '/sg-changer')
        subprocess.run(['mtx', '-f', tmpdir + '/sg-changer', 'status'], env=env)
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socketserver
import struct
import subprocess
import threading
import time

from .scsi import Result

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'sgshim.c')

SG_DXFER_TO_DEV = -2


class ShimError(Exception):
    """The shim cannot be built or served; the message says what to install or fix."""


def build(out_dir, cc=None):
    """Compile sgshim.c into ``out_dir`` (once per source hash); return the .so path."""
    cc = cc or shutil.which('gcc') or shutil.which('cc')
    if not cc:
        raise ShimError('no C compiler: install gcc and libc6-dev (apt-get install gcc libc6-dev)')
    with open(SOURCE, 'rb') as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:12]
    out = os.path.join(out_dir, 'sgshim-%s.so' % digest)
    if os.path.exists(out):
        return out
    os.makedirs(out_dir, exist_ok=True)
    tmp = out + '.tmp'
    proc = subprocess.run([cc, '-shared', '-fPIC', '-O2', '-Wall', '-o', tmp, SOURCE, '-ldl'],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise ShimError('compiling %s failed (rc %d): %s' % (SOURCE, proc.returncode, proc.stderr.strip()))
    os.replace(tmp, out)
    return out


def _recv_exact(sock, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return bytes(buf)


class _Handler(socketserver.BaseRequestHandler):
    def handle(self):
        server = self.server
        sock = self.request
        while True:
            try:
                cdb_len, direction, dxfer_len = struct.unpack('<IiI', _recv_exact(sock, 12))
                cdb = _recv_exact(sock, cdb_len)
                data_out = _recv_exact(sock, dxfer_len) if direction == SG_DXFER_TO_DEV and dxfer_len else b''
            except (EOFError, ConnectionError):
                return
            with server.lock:
                result = server.device.execute(cdb, data_out)
                # A command that takes time (scsi.Pending): poll it on the
                # server's clock, sleeping until each due time, as the ring
                # handler does.
                while not isinstance(result, Result):
                    due = result.poll(server.clock())
                    if isinstance(due, Result):
                        result = due
                        break
                    server.sleep(max(0.0, due - server.clock()))
                server.log.append((bytes(cdb), result))
            data = bytes(result.data)
            sense = bytes(result.sense)
            sock.sendall(struct.pack('<III', result.status, len(data), len(sense)) + data + sense)


class _Server(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True
    allow_reuse_address = True


class Served:
    """A device served on a Unix socket; ``log`` holds (cdb, Result) per command."""

    def __init__(self, device, sock_path, clock=time.monotonic, sleep=time.sleep):
        if os.path.exists(sock_path):
            os.unlink(sock_path)
        self.sock_path = sock_path
        self._server = _Server(sock_path, _Handler)
        self._server.device = device
        self._server.clock = clock
        self._server.sleep = sleep
        self._server.lock = threading.Lock()
        self._server.log = []
        self.log = self._server.log
        self._thread = threading.Thread(target=self._server.serve_forever, name='sgshim', daemon=True)
        self._thread.start()

    def env(self, shim_so, device_path, base=None, ptype=None):
        """Environment for a tool run: LD_PRELOAD, the fake device path and the socket."""
        env = dict(os.environ if base is None else base)
        env['LD_PRELOAD'] = shim_so
        env['SGSHIM_PATH'] = device_path
        env['SGSHIM_SOCKET'] = self.sock_path
        env['LC_ALL'] = 'C'
        if ptype is not None:
            env['SGSHIM_TYPE'] = str(ptype)
        return env

    def close(self):
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)
        try:
            os.unlink(self.sock_path)
        except FileNotFoundError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def serve(device, sock_path, clock=time.monotonic, sleep=time.sleep):
    """Serve ``device`` (``execute(cdb, data_out) -> Result | Pending``) on ``sock_path``.

    ``clock``/``sleep`` pace Pending commands (a fake pair makes mechanical
    times cost nothing in tests while still going through every phase).
    """
    if len(sock_path.encode()) >= 108:
        raise ShimError('socket path too long for AF_UNIX (%d bytes, max 107): %s' % (len(sock_path), sock_path))
    try:
        return Served(device, sock_path, clock, sleep)
    except OSError as exc:
        raise ShimError('cannot listen on %s: %s' % (sock_path, exc)) from exc


__all__ = ['ShimError', 'build', 'serve', 'Served']
