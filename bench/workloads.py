"""Workloads for the collector benchmark and the accuracy test: pipe ping-pong and O_DIRECT reads.

Run one in its own process: `python -m bench.workloads pingpong SECONDS` or
`python -m bench.workloads dio DEVICE SECONDS`; it prints the operations done.
"""

from __future__ import annotations

import contextlib
import json
import mmap
import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

BLOCK = 4096


@contextlib.contextmanager
def _pipe_pair(cpu: int | None) -> Iterator[tuple[int, int]]:
    """A child that echoes each byte it reads back: yields (write to it, read its echo).

    With `cpu`, both sides share that CPU, so a round trip measures the switch path itself
    rather than where the scheduler happened to place the two sides.
    """
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    a_r, a_w = os.pipe()
    b_r, b_w = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        os.close(a_w)
        os.close(b_r)
        while os.read(a_r, 1) == b"x":
            os.write(b_w, b"x")
        os._exit(0)
    os.close(a_r)
    os.close(b_w)
    try:
        yield a_w, b_r
    finally:
        os.write(a_w, b"q")
        os.close(a_w)
        os.waitpid(child, 0)
        os.close(b_r)


def pingpong(seconds: float, cpu: int | None = None) -> int:
    """Two processes bounce one byte over a pair of pipes; returns round trips.

    Every round trip blocks and wakes each side once: two context switches.
    """
    trips = 0
    with _pipe_pair(cpu) as (out, back):
        deadline = time.monotonic() + seconds
        while True:
            # Check the clock every 256 trips: the clock read would otherwise dominate.
            for _ in range(256):
                os.write(out, b"x")
                os.read(back, 1)
            trips += 256
            if time.monotonic() >= deadline:
                break
    return trips


def pingpong_slots(seconds: float, cpu: int | None, slot_s: float = 0.05) -> list[tuple[float, int]]:
    """The ping-pong of `pingpong`, its round trips counted per slot of about `slot_s`:
    (CLOCK_MONOTONIC at the slot's end, round trips in it), the first slot starting at the first
    entry's time minus its length. The clock is the system's, so another process can line its
    own readings up with these."""
    with _pipe_pair(cpu) as (out, back):
        slots: list[tuple[float, int]] = [(time.monotonic(), 0)]
        deadline = slots[0][0] + seconds
        trips = 0
        while True:
            for _ in range(64):  # about 0.2 ms here: the slot ends within that of `slot_s`
                os.write(out, b"x")
                os.read(back, 1)
            trips += 64
            now = time.monotonic()
            if now - slots[-1][0] >= slot_s:
                slots.append((now, trips))
                trips = 0
                if now >= deadline:
                    break
    return slots


def direct_reads(path: str, seconds: float, block: int = BLOCK) -> int:
    """Random O_DIRECT reads of `block` bytes from `path` for `seconds`; returns reads done."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    try:
        size = os.lseek(fd, 0, os.SEEK_END)
        blocks = max(size // block, 1)
        buf = mmap.mmap(-1, block)  # page aligned, as O_DIRECT requires
        rng = random.Random(1)
        done = 0
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for _ in range(64):
                os.preadv(fd, [buf], rng.randrange(blocks) * block)
            done += 64
        return done
    finally:
        os.close(fd)


@contextlib.contextmanager
def loop_device(workdir: Path, size_mb: int = 256) -> Iterator[str]:
    """A loop device over a fresh backing file in `workdir`, detached and removed on exit."""
    backing = workdir / "idletune-loop.img"
    with open(backing, "wb") as f:
        # Real blocks rather than a hole: reads of a hole never reach the backing device.
        chunk = os.urandom(1 << 20)
        for _ in range(size_mb):
            f.write(chunk)
    dev = ""
    try:
        dev = subprocess.run(
            ["losetup", "--find", "--show", str(backing)], check=True, capture_output=True, text=True
        ).stdout.strip()
        yield dev
    finally:
        if dev:
            subprocess.run(["losetup", "-d", dev], check=False, capture_output=True)
        backing.unlink(missing_ok=True)


def spawn(*args: str) -> subprocess.Popen[str]:
    """Start a workload in its own process (its output is its operation count)."""
    root = Path(__file__).resolve().parent.parent
    return subprocess.Popen(
        [sys.executable, "-m", "bench.workloads", *args], cwd=root, stdout=subprocess.PIPE, text=True
    )


def main(argv: list[str]) -> int:
    if len(argv) in (2, 3) and argv[0] == "pingpong":
        print(pingpong(float(argv[1]), int(argv[2]) if len(argv) == 3 else None))
        return 0
    if len(argv) == 3 and argv[0] == "pingpong-slots":
        print(json.dumps(pingpong_slots(float(argv[1]), int(argv[2]))))
        return 0
    if len(argv) == 3 and argv[0] == "dio":
        print(direct_reads(argv[1], float(argv[2])))
        return 0
    print(
        "usage: python -m bench.workloads pingpong SECONDS [CPU] | pingpong-slots SECONDS CPU"
        " | dio PATH SECONDS",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
