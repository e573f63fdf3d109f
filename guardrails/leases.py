"""Leases on host-wide knobs, so that two jobs sharing a host never fight over one global knob.

A job that changes a global knob (a sysctl, a device's queue) takes its lease for
`ttl_s`. Until the lease expires, only that job or a job of higher priority may move
the knob; an equal or lower priority waits. Knobs that belong to one job (its loader
workers) need no lease: the job is their target.

Kept in a JSON file in the state dir when given a path, so that a manual
`idletune apply --job` in another process sees the agent's leases.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from core.statedir import open_file, read_file, secure_dir, write_file

DEFAULT_TTL_S = 600.0


class Lease(BaseModel):
    model_config = ConfigDict(extra="forbid")

    knob: str
    job: str
    priority: int
    expires: float


class LeaseTable:
    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        ttl_s: float = DEFAULT_TTL_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = Path(path) if path is not None else None
        self.ttl_s = ttl_s
        self._clock = clock
        self._mem: dict[str, Lease] = {}

    @contextlib.contextmanager
    def _table(self, write: bool) -> Iterator[dict[str, Lease]]:
        """The live leases, locked against other processes while the block runs."""
        if self.path is None:
            yield self._mem
            return
        secure_dir(self.path.parent)  # 0755 when made: trainer hooks reach their socket in it
        lock = open_file(f"{self.path}.lock", os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            table: dict[str, Lease] = {}
            with contextlib.suppress(OSError, ValueError, ValidationError, TypeError):
                for raw in json.loads(read_file(self.path) or "[]"):
                    lease = Lease.model_validate(raw)
                    table[lease.knob] = lease
            yield table
            if write:
                write_file(self.path, json.dumps([v.model_dump() for v in table.values()]))
        finally:
            os.close(lock)

    def holder(self, knob: str) -> Lease | None:
        with self._table(write=False) as table:
            lease = table.get(knob)
        return lease if lease is not None and lease.expires > self._clock() else None

    def conflict(self, knob: str, job: str, priority: int) -> Lease | None:
        """The lease that keeps `job` off `knob`, or None when it may move it."""
        lease = self.holder(knob)
        if lease is None or lease.job == job or priority > lease.priority:
            return None
        return lease

    def acquire(self, knob: str, job: str, priority: int) -> Lease | None:
        """Take or renew the lease; returns the blocking lease instead when another job keeps it."""
        now = self._clock()
        with self._table(write=True) as table:
            held = table.get(knob)
            if held is not None and held.expires > now and held.job != job and priority <= held.priority:
                return held
            table[knob] = Lease(knob=knob, job=job, priority=priority, expires=now + self.ttl_s)
            for k in [k for k, v in table.items() if v.expires <= now]:
                del table[k]
        return None

    def release(self, knob: str, job: str) -> None:
        with self._table(write=True) as table:
            if knob in table and table[knob].job == job:
                del table[knob]

    def all(self) -> list[Lease]:
        now = self._clock()
        with self._table(write=False) as table:
            return [v for v in table.values() if v.expires > now]
