"""Load beside the job: `python -m evals.testbed.load hogs N`, `writer PATH`, and the background
noise a host carries that must not be blamed: `dirtier PATH MB` (a data set staged just before,
its dirty pages still flushing), `rootwriter PATH` (unrelated writes to another disk), `memhog MB`
(memory used elsewhere, not enough to push anyone into reclaim)."""

from __future__ import annotations

import os
import sys
import time

CHECKPOINT_MB = 1536
CHUNK = 4 * 1024 * 1024


def hogs(n: int) -> None:
    """Burn `n` CPUs from one session, as an unrelated batch job on the host does."""
    for _ in range(n - 1):
        if os.fork() == 0:
            break
    x = 0
    while True:
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF


def writer(path: str) -> None:
    """Write checkpoints back to back, each followed by fsync, as torch.save + fsync does."""
    chunk = os.urandom(CHUNK)
    while True:
        with open(path, "wb") as f:
            for _ in range(CHECKPOINT_MB * 1024 * 1024 // CHUNK):
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        os.unlink(path)


def dirtier(path: str, mb: int) -> None:
    """Write `mb` MiB once without fsync and stay: the kernel flushes them on its own schedule."""
    chunk = os.urandom(CHUNK)
    with open(path, "wb") as f:
        for _ in range(mb * 1024 * 1024 // CHUNK):
            f.write(chunk)
    while True:
        time.sleep(3600)


def rootwriter(path: str, mb_per_s: int = 8) -> None:
    """Steady writes at `mb_per_s` with an fsync every 64 MiB, to a file that is rewritten at 256 MiB."""
    chunk = os.urandom(CHUNK)
    per_chunk = CHUNK / (mb_per_s * 1024 * 1024)
    while True:
        with open(path, "wb") as f:
            for i in range(256 * 1024 * 1024 // CHUNK):
                t = time.monotonic()
                f.write(chunk)
                if i % 16 == 15:
                    f.flush()
                    os.fsync(f.fileno())
                time.sleep(max(0.0, per_chunk - (time.monotonic() - t)))


def memhog(mb: int) -> None:
    """Hold `mb` MiB of touched anonymous memory."""
    block = bytearray(mb * 1024 * 1024)
    for i in range(0, len(block), 4096):
        block[i] = 1
    while True:
        time.sleep(3600)


def main() -> None:
    a = sys.argv[1:]
    if len(a) >= 2 and a[0] == "hogs":
        hogs(int(a[1]))
    elif len(a) >= 2 and a[0] == "writer":
        writer(a[1])
    elif len(a) >= 3 and a[0] == "dirtier":
        dirtier(a[1], int(a[2]))
    elif len(a) >= 2 and a[0] == "rootwriter":
        rootwriter(a[1])
    elif len(a) >= 2 and a[0] == "memhog":
        memhog(int(a[1]))
    else:
        sys.exit(
            "usage: python -m evals.testbed.load hogs N | writer PATH | dirtier PATH MB | rootwriter PATH"
            " | memhog MB"
        )


if __name__ == "__main__":
    main()
