"""Load beside the job: `python -m evals.testbed.load hogs N` or `... writer PATH`."""

from __future__ import annotations

import os
import sys

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


def main() -> None:
    if len(sys.argv) >= 3 and sys.argv[1] == "hogs":
        hogs(int(sys.argv[2]))
    elif len(sys.argv) >= 3 and sys.argv[1] == "writer":
        writer(sys.argv[2])
    else:
        sys.exit("usage: python -m evals.testbed.load hogs N | writer PATH")


if __name__ == "__main__":
    main()
