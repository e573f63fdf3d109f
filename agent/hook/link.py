"""The hook's connection to the agent, run entirely on one daemon thread.

The training thread never touches the socket: it appends to a deque and, for
acks only, writes one byte to a wake-up pipe. The link thread connects without
blocking, retries with backoff while no agent listens, sends one metrics line a
second, drops lines the agent does not read fast enough, and hands control
messages to `on_message`.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import select
import socket
import threading
import weakref
from collections import deque
from collections.abc import Callable
from time import monotonic
from typing import Any

from agent.hook.protocol import MAX_LINE, decode, encode

log = logging.getLogger("idletune.hook")

PERIOD_S = 1.0
BACKOFF_MIN_S = 0.1
BACKOFF_MAX_S = 2.0
OUTBUF_MAX = 256 * 1024  # ~a thousand metrics lines: past this the agent is not reading

_LINKS: weakref.WeakSet[Link] = weakref.WeakSet()


class Link:
    def __init__(
        self,
        path: str,
        hello: Callable[[], dict[str, Any]],
        tick: Callable[[], dict[str, Any]],
        on_message: Callable[[dict[str, Any]], None],
    ) -> None:
        self.path = path
        self._hello = hello
        self._tick = tick
        self._on_message = on_message
        self._sock: socket.socket | None = None
        self._outbox: deque[bytes] = deque(maxlen=1024)
        self._outbuf = b""
        self._inbuf = b""
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="idletune-hook", daemon=True)
        self.connects = 0  # how many times a connection was made; tests read it
        _LINKS.add(self)

    def start(self) -> None:
        self._thread.start()

    @property
    def connected(self) -> bool:
        return self._sock is not None

    def send(self, msg: dict[str, Any]) -> None:
        """Queue a message from any thread; it goes out within milliseconds if connected."""
        self._outbox.append(encode(msg))
        with contextlib.suppress(BlockingIOError, OSError):
            os.write(self._wake_w, b"x")

    def stop(self) -> None:
        self._stop.set()
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout=2.0)
        self._disconnect()
        self._close_pipe()

    # -- link thread -------------------------------------------------------------

    def _run(self) -> None:
        backoff = BACKOFF_MIN_S
        next_connect = 0.0
        next_tick = monotonic() + PERIOD_S
        while not self._stop.is_set():
            now = monotonic()
            if self._sock is None and now >= next_connect:
                if self._connect():
                    backoff = BACKOFF_MIN_S
                else:
                    next_connect = now + backoff
                    backoff = min(backoff * 2, BACKOFF_MAX_S)
            if now >= next_tick:
                next_tick = max(next_tick + PERIOD_S, now)
                try:
                    msg = self._tick()  # taken even when unconnected: the next interval starts clean
                except Exception:
                    # A failing figure costs this line, never the link (nor training).
                    log.exception("idletune hook: could not build the metrics line")
                else:
                    if self._sock is not None:
                        self._outbox.append(encode(msg))
            self._fill_outbuf()
            wait = max(0.0, min(next_tick, next_connect if self._sock is None else next_tick) - monotonic())
            rlist: list[Any] = [self._wake_r]
            wlist: list[Any] = []
            if self._sock is not None:
                rlist.append(self._sock)
                if self._outbuf:
                    wlist.append(self._sock)
            try:
                readable, writable, _ = select.select(rlist, wlist, [], wait)
            except (OSError, ValueError):
                self._disconnect()
                continue
            if self._wake_r in readable:
                with contextlib.suppress(BlockingIOError, OSError):
                    os.read(self._wake_r, 4096)
            if self._sock is not None and self._sock in readable:
                self._receive()
            if self._sock is not None and (self._sock in writable or self._outbuf):
                self._flush()

    def _connect(self) -> bool:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.setblocking(False)
        err = s.connect_ex(self.path)
        if err != 0:
            # ENOENT / ECONNREFUSED: no agent; EAGAIN: its backlog is full. Try later.
            s.close()
            return False
        try:
            hello = encode(self._hello())
        except Exception:
            log.exception("idletune hook: could not build the hello line")
            s.close()
            return False
        self._sock = s
        self._inbuf = b""
        self._outbuf = hello
        self.connects += 1
        return True

    def _disconnect(self) -> None:
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.close()
        self._sock = None
        self._outbuf = b""
        self._inbuf = b""

    def _fill_outbuf(self) -> None:
        if self._sock is None:
            self._outbox.clear()  # nobody to tell: drop, never hoard
            return
        while self._outbox and len(self._outbuf) + len(self._outbox[0]) <= OUTBUF_MAX:
            self._outbuf += self._outbox.popleft()
        if self._outbox:
            self._outbox.clear()  # the agent is not reading: what does not fit is dropped

    def _flush(self) -> None:
        assert self._sock is not None
        try:
            n = self._sock.send(self._outbuf)
        except BlockingIOError:
            return
        except OSError as e:
            if e.errno not in (errno.EPIPE, errno.ECONNRESET, errno.ENOTCONN):
                log.debug("idletune hook: send failed: %s", e)
            self._disconnect()
            return
        self._outbuf = self._outbuf[n:]

    def _receive(self) -> None:
        assert self._sock is not None
        try:
            data = self._sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            self._disconnect()
            return
        if not data:
            self._disconnect()  # the agent went away; reconnect with backoff
            return
        self._inbuf += data
        while b"\n" in self._inbuf:
            line, self._inbuf = self._inbuf.split(b"\n", 1)
            msg = decode(line)
            if msg is not None:
                try:
                    self._on_message(msg)
                except Exception:
                    # A bug in handling one control message must not end the link,
                    # and never the training run.
                    log.exception("idletune hook: control message failed")
        if len(self._inbuf) > MAX_LINE:
            self._disconnect()

    def _close_pipe(self) -> None:
        for fd in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._wake_r = self._wake_w = -1

    def _forget_in_child(self) -> None:
        # A forked loader worker inherits the socket but not the thread; holding the
        # fd would keep the agent from seeing the trainer exit.
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.close()  # the child's copy only; the parent's link goes on
        self._sock = None
        self._close_pipe()


def _after_fork_in_child() -> None:
    for link in list(_LINKS):
        link._forget_in_child()


os.register_at_fork(after_in_child=_after_fork_in_child)
