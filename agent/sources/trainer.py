"""Trainer source: listens for trainer hooks on `$IDLETUNE_STATE_DIR/trainer.sock`.

Produces `trainer.<job>.step_time_ms`, `data_wait_frac` and `samples_per_s`,
keeps the jobs the hooks announce (name, pid per rank, loader workers, knobs in
force, capabilities), and carries control requests to them (TrainerControl).
One thread serves every connection; a hook that misbehaves loses its connection,
never the agent.
"""

from __future__ import annotations

import contextlib
import grp
import itertools
import logging
import os
import selectors
import socket
import stat
import struct
import threading
from collections.abc import Callable
from typing import Any

from agent.hook.protocol import KEYS, MAX_LINE, PROTOCOL_VERSION, decode, encode, safe_job_name, socket_path
from agent.sources.trainer_state import AnnouncedJob, Peer, Pool, announced
from core.sample import SourceStatus

log = logging.getLogger("idletune.trainer")

SOCKET_MODE = 0o660
SOCKET_GROUP = "idletune"  # when it exists, trainers in this group may connect without root

AckHandler = Callable[[int, dict[str, Any]], None]


class _Conn:
    def __init__(self, sock: socket.socket, conn_id: int) -> None:
        self.sock = sock
        self.peer = Peer(conn_id)
        self.inbuf = b""
        self.outbuf = b""
        # The kernel's word for the peer's pid, in this (the agent's) pid namespace. A
        # hook in a container announces its own namespace's pid, useless on the host.
        self.host_pid = _peer_pid(sock)
        self.same_ns = True


def _peer_pid(sock: socket.socket) -> int | None:
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except OSError:
        return None
    pid = struct.unpack("3i", raw)[0]
    return pid if pid > 0 else None


class TrainerSource:
    name = "trainer"

    def __init__(self, state_dir: str | None = None) -> None:
        self.path = socket_path(state_dir)
        self._lock = threading.Lock()
        self._conns: dict[int, _Conn] = {}
        self._pools: dict[str, Pool] = {}
        self._ids = itertools.count(1)
        self._listener: socket.socket | None = None
        self._sel: selectors.BaseSelector | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._wake_r, self._wake_w = -1, -1
        self._inode: int | None = None
        self.on_ack: AckHandler | None = None  # set by TrainerControl
        self.on_disconnect: Callable[[int], None] | None = None

    # -- Source ----------------------------------------------------------------------

    def start(self) -> SourceStatus:
        try:
            self._listen()
        except OSError as e:
            return SourceStatus(live=False, reason=f"cannot listen on {self.path}: {e.strerror or e}")
        except RuntimeError as e:
            return SourceStatus(live=False, reason=str(e))
        self._thread = threading.Thread(target=self._serve, name="idletune-trainer", daemon=True)
        self._thread.start()
        return SourceStatus(live=True)

    def collect(self) -> dict[str, float]:
        with self._lock:
            pools, self._pools = self._pools, {}
        out: dict[str, float] = {}
        for job, pool in sorted(pools.items()):
            out.update(pool.metrics(job))
        return out

    def close(self) -> None:
        self._stop.set()
        self._wake()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=2.0)
        self._thread = None
        with self._lock:
            conns = list(self._conns.values())
            self._conns.clear()
        for c in conns:
            with contextlib.suppress(OSError):
                c.sock.close()
        if self._listener is not None:
            self._listener.close()
            self._listener = None
            self._unlink_if_ours()
        if self._sel is not None:
            self._sel.close()
            self._sel = None
        for fd in (self._wake_r, self._wake_w):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._wake_r = self._wake_w = -1

    # -- what the hooks announced -------------------------------------------------------

    def jobs(self) -> list[AnnouncedJob]:
        with self._lock:
            by_job: dict[str, list[Peer]] = {}
            for c in self._conns.values():
                if c.peer.job is not None:
                    by_job.setdefault(c.peer.job, []).append(c.peer)
            return [announced(name, peers) for name, peers in sorted(by_job.items())]

    def peers(self, job: str) -> list[Peer]:
        with self._lock:
            return [c.peer for c in self._conns.values() if c.peer.job == job]

    def send(self, conn_id: int, msg: dict[str, Any]) -> bool:
        """Queue a message to one hook; False when that hook is gone."""
        with self._lock:
            c = self._conns.get(conn_id)
            if c is None:
                return False
            c.outbuf += encode(msg)
        self._wake()
        return True

    # -- listener -----------------------------------------------------------------------

    def _listen(self) -> None:
        directory = os.path.dirname(self.path)
        os.makedirs(directory, mode=0o755, exist_ok=True)
        if os.path.exists(self.path):
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                if probe.connect_ex(self.path) == 0:
                    raise RuntimeError(f"another idletune agent listens on {self.path}")
            finally:
                probe.close()
        # Bound under a temporary name and renamed over the path: hooks never see a
        # socket without its final mode, and a stale one from a crash is replaced.
        tmp = f"{self.path}.{os.getpid()}.tmp"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        lst = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            lst.bind(tmp)
            os.chmod(tmp, SOCKET_MODE)
            with contextlib.suppress(KeyError, PermissionError):
                os.chown(tmp, -1, grp.getgrnam(SOCKET_GROUP).gr_gid)
            lst.listen(64)
            lst.setblocking(False)
            os.rename(tmp, self.path)
        except OSError:
            lst.close()
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
        self._inode = os.stat(self.path).st_ino
        self._listener = lst
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._sel = selectors.DefaultSelector()
        self._sel.register(lst, selectors.EVENT_READ, None)
        self._sel.register(self._wake_r, selectors.EVENT_READ, None)

    def _unlink_if_ours(self) -> None:
        # A newer agent may have replaced the socket; removing its path would orphan it.
        with contextlib.suppress(FileNotFoundError):
            st = os.stat(self.path)
            if stat.S_ISSOCK(st.st_mode) and st.st_ino == self._inode:
                os.unlink(self.path)

    def _wake(self) -> None:
        if self._wake_w >= 0:
            with contextlib.suppress(BlockingIOError, OSError):
                os.write(self._wake_w, b"x")

    # -- serving thread -----------------------------------------------------------------

    def _serve(self) -> None:
        assert self._sel is not None
        while not self._stop.is_set():
            self._update_interest()
            for key, events in self._sel.select(timeout=0.5):
                if key.fileobj is self._listener:
                    self._accept()
                elif key.fileobj == self._wake_r:
                    with contextlib.suppress(BlockingIOError, OSError):
                        os.read(self._wake_r, 4096)
                else:
                    conn: _Conn = key.data
                    if events & selectors.EVENT_READ:
                        self._read(conn)
                    if events & selectors.EVENT_WRITE and conn.peer.conn_id in self._conns:
                        self._write(conn)

    def _update_interest(self) -> None:
        assert self._sel is not None
        with self._lock:
            conns = list(self._conns.values())
        for c in conns:
            want = selectors.EVENT_READ | (selectors.EVENT_WRITE if c.outbuf else 0)
            with contextlib.suppress(KeyError, ValueError):
                if self._sel.get_key(c.sock).events != want:
                    self._sel.modify(c.sock, want, c)

    def _accept(self) -> None:
        assert self._listener is not None and self._sel is not None
        while True:
            try:
                sock, _ = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return
            sock.setblocking(False)
            conn = _Conn(sock, next(self._ids))
            with self._lock:
                self._conns[conn.peer.conn_id] = conn
            self._sel.register(sock, selectors.EVENT_READ, conn)

    def _read(self, conn: _Conn) -> None:
        try:
            data = conn.sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._drop(conn)
            return
        conn.inbuf += data
        while b"\n" in conn.inbuf:
            line, conn.inbuf = conn.inbuf.split(b"\n", 1)
            msg = decode(line)
            if msg is None:
                continue
            try:
                self._handle(conn, msg)
            except Exception:
                # A message this code mishandles costs that hook its connection (it will
                # reconnect), never the listener and the other jobs.
                log.exception("trainer source: dropping a hook after a message it could not handle")
                self._drop(conn)
                return
            if conn.peer.conn_id not in self._conns:
                return  # dropped while handling
        if len(conn.inbuf) > MAX_LINE:
            self._drop(conn)

    def _write(self, conn: _Conn) -> None:
        with self._lock:
            data = conn.outbuf
        try:
            n = conn.sock.send(data)
        except BlockingIOError:
            return
        except OSError:
            self._drop(conn)
            return
        with self._lock:
            conn.outbuf = conn.outbuf[n:]

    def _drop(self, conn: _Conn) -> None:
        assert self._sel is not None
        with contextlib.suppress(KeyError, ValueError):
            self._sel.unregister(conn.sock)
        with contextlib.suppress(OSError):
            conn.sock.close()
        with self._lock:
            self._conns.pop(conn.peer.conn_id, None)
        if self.on_disconnect is not None:
            self.on_disconnect(conn.peer.conn_id)

    def _handle(self, conn: _Conn, msg: dict[str, Any]) -> None:
        kind = msg.get("type")
        peer = conn.peer
        if kind == "hello":
            if msg.get("v") != PROTOCOL_VERSION or not isinstance(msg.get("job"), str):
                self._drop(conn)  # a hook of another protocol version: not ours to guess at
                return
            pid, rank = msg.get("pid"), msg.get("rank")
            said = pid if isinstance(pid, int) and pid > 0 else None
            with self._lock:
                peer.job = safe_job_name(msg["job"])
                peer.pid = conn.host_pid or said
                conn.same_ns = conn.host_pid is None or said == conn.host_pid
                peer.rank = rank if isinstance(rank, int) and rank >= 0 else None
                peer.update(msg, worker_pids=conn.same_ns)
        elif kind == "metrics" and peer.job is not None:
            with self._lock:
                peer.update(msg, worker_pids=conn.same_ns)
                self._pools.setdefault(peer.job, Pool()).add(peer.conn_id, msg)
        elif kind == "ack":
            key, value = msg.get("key"), msg.get("value")
            if msg.get("ok") is True and not msg.get("pending") and isinstance(value, int | float | str):
                with self._lock:
                    # The value now in force, ahead of the next metrics line's knobs.
                    if isinstance(key, str) and key in KEYS:
                        peer.knobs[key] = value
            if self.on_ack is not None:
                self.on_ack(peer.conn_id, msg)
