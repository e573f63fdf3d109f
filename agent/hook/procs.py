"""The hook's view of its own loader workers, and pinning them to CPUs."""

from __future__ import annotations

import os

from agent.proctree import descendants
from core.hostfs import HostFS

_FS = HostFS("/")


def worker_pids(pid: int | None = None) -> list[int]:
    """Loader workers of this process: every descendant (workers, and what they spawn)."""
    return descendants(_FS, os.getpid() if pid is None else pid)


def usable_cpus() -> set[int]:
    """CPUs this process may run on (its cpuset), the only ones a worker can be pinned to."""
    return set(os.sched_getaffinity(0))


def pin(pids: list[int], cpus: set[int]) -> list[int]:
    """Pin every thread of each pid to `cpus`; returns the pids pinned (gone ones are skipped)."""
    pinned: list[int] = []
    for pid in pids:
        # sched_setaffinity acts on one thread; a worker's threads (pin-memory,
        # decoders) live under /proc/<pid>/task.
        try:
            tids = [int(t) for t in _FS.listdir(f"/proc/{pid}/task")] or [pid]
        except OSError:
            continue  # exited since it was listed
        done = False
        for tid in tids:
            try:
                os.sched_setaffinity(tid, cpus)
                done = True
            except ProcessLookupError:
                continue
        if done:
            pinned.append(pid)
    return pinned
