"""What the agent knows of each job whose trainer hook is connected, and its pooled figures.

The ranks of a distributed job (one hook per rank, one job name) pool into one
job: step time and data wait are pooled over every rank's steps, throughput is
the sum of the ranks' rates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.knob import KnobValue


def _num(msg: dict[str, Any], key: str) -> float:
    v = msg.get(key)
    if isinstance(v, bool) or not isinstance(v, int | float) or v != v or v < 0:
        return 0.0
    return float(v)


@dataclass
class Pool:
    """Figures since the last collect, from every rank of one job."""

    steps: float = 0.0
    step_s: float = 0.0
    wait_s: float = 0.0
    active_s: float = 0.0
    # per rank (connection): (samples, seconds), so a rank's rate is its own samples over its own time
    rates: dict[int, tuple[float, float]] = field(default_factory=dict)

    def add(self, rank_key: int, msg: dict[str, Any]) -> None:
        self.steps += _num(msg, "steps")
        self.step_s += _num(msg, "step_s")
        self.wait_s += _num(msg, "wait_s")
        self.active_s += _num(msg, "active_s")
        if msg.get("samples") is not None:
            samples, seconds = self.rates.get(rank_key, (0.0, 0.0))
            self.rates[rank_key] = (samples + _num(msg, "samples"), seconds + _num(msg, "interval_s"))

    def metrics(self, job: str) -> dict[str, float]:
        out: dict[str, float] = {}
        if self.steps > 0:
            out[f"trainer.{job}.step_time_ms"] = 1000.0 * self.step_s / self.steps
        if self.active_s > 0:
            out[f"trainer.{job}.data_wait_frac"] = min(1.0, self.wait_s / self.active_s)
        rates = [s / t for s, t in self.rates.values() if t > 0]
        if rates:
            out[f"trainer.{job}.samples_per_s"] = sum(rates)
        return out


@dataclass
class Peer:
    """One connected hook: one process (one rank) of a job."""

    conn_id: int
    job: str | None = None
    pid: int | None = None
    rank: int | None = None
    knobs: dict[str, KnobValue] = field(default_factory=dict)
    capabilities: dict[str, dict[str, Any]] = field(default_factory=dict)
    workers: list[int] = field(default_factory=list)

    def update(self, msg: dict[str, Any], *, worker_pids: bool = True) -> None:
        """Take what a hello or metrics line says; worker pids only when they are in our pid namespace."""
        knobs = msg.get("knobs")
        if isinstance(knobs, dict):
            self.knobs = {str(k): v for k, v in knobs.items() if isinstance(v, int | float | str)}
        workers = msg.get("workers")
        if worker_pids and isinstance(workers, list):
            self.workers = [int(w) for w in workers if isinstance(w, int) and not isinstance(w, bool)]
        caps = msg.get("capabilities")
        if isinstance(caps, dict):
            self.capabilities = {str(k): v for k, v in caps.items() if isinstance(v, dict)}


@dataclass(frozen=True)
class AnnouncedJob:
    """A job as its hooks announced it: main pids (one per rank, rank 0 first) and loader workers."""

    name: str
    pids: list[int]
    workers: list[int]
    knobs: dict[str, KnobValue]
    capabilities: dict[str, dict[str, Any]]


def announced(name: str, peers: list[Peer]) -> AnnouncedJob:
    ordered = sorted(peers, key=lambda p: (p.rank if p.rank is not None else 1 << 30, p.pid or 0))
    first = ordered[0]
    workers = sorted({w for p in ordered for w in p.workers})
    return AnnouncedJob(
        name=name,
        pids=list(dict.fromkeys(p.pid for p in ordered if p.pid is not None)),
        workers=workers,
        knobs=dict(first.knobs),
        capabilities=dict(first.capabilities),
    )
