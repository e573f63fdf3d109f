"""Per-cgroup state vectors for schedulers and RL agents that place work across hosts.

From the sched collector's in-kernel per-cgroup counts of one interval (seconds
old, not a scrape's 15-60 s; each thread's counts reach its cgroup within 8 ms,
see bpf/sched.bpf.c), for every cgroup whose tasks waited on a run queue:

    log1p(mean run-queue wait, µs), log1p(its standard deviation, µs),
    off-CPU ratio (blocked / (blocked + waiting + running), 0..1),
    log1p(context switches per second), memory PSI some avg10 as a share 0..1.

log1p keeps heavy-tailed latencies and rates on one scale without losing zero.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field

from agent.sources.cgroupfs import CgroupPaths, workload_of
from bpf.snapshot import CgroupCounts

FEATURES = (
    "log1p_runq_mean_us",
    "log1p_runq_std_us",
    "offcpu_ratio",
    "log1p_ctx_switches_per_s",
    "mem_psi_some",
)


class CgroupFeatures(BaseModel):
    model_config = ConfigDict(extra="forbid")

    cgroup_id: int
    path: str | None = Field(description="relative to the cgroup v2 root; null when the cgroup is gone")
    name: str | None = Field(description="pod-<uid>/<container>, <runtime>-<container>, or a systemd unit")
    container_id: str | None = None
    pod_uid: str | None = None
    vector: list[float | None] = Field(description="the features, in the order of `features`")
    waits: int = Field(description="run-queue waits behind the figures")
    runq_mean_us: float
    runq_std_us: float


class FeaturesDoc(BaseModel):
    model_config = ConfigDict(extra="forbid")

    live: bool
    reason: str = ""
    t: float | None = Field(default=None, description="end of the interval measured (unix time)")
    interval_s: float | None = None
    features: list[str] = Field(default_factory=lambda: list(FEATURES))
    cgroups: list[CgroupFeatures] = Field(default_factory=list)


def vector(c: CgroupCounts, elapsed_s: float, psi: float | None) -> tuple[list[float | None], float, float]:
    """The normalised features of one cgroup, and its raw mean and std in µs."""
    mean_us = c.wait_ns / c.waits / 1000.0 if c.waits else 0.0
    # Squares are summed over whole µs in the kernel; rounding can take the variance below 0.
    var = c.wait_sq_us / c.waits - mean_us * mean_us if c.waits else 0.0
    std_us = math.sqrt(max(var, 0.0))
    tracked = c.blocked_ns + c.wait_ns + c.run_ns
    offcpu = c.blocked_ns / tracked if tracked else 0.0
    rate = c.switches / elapsed_s if elapsed_s > 0 else 0.0
    return [math.log1p(mean_us), math.log1p(std_us), offcpu, math.log1p(rate), psi], mean_us, std_us


def build(
    counts: dict[int, CgroupCounts],
    elapsed_s: float,
    t: float,
    paths: CgroupPaths,
    psi: Callable[[str], float | None] | None = None,
) -> FeaturesDoc:
    """Vectors of every cgroup with run-queue waits in the interval, busiest first."""
    read_psi = psi if psi is not None else paths.memory_pressure
    out: list[CgroupFeatures] = []
    for cgid, c in counts.items():
        if c.waits == 0:
            continue
        path = paths.path(cgid)
        w = workload_of(path) if path is not None else None
        vec, mean_us, std_us = vector(c, elapsed_s, read_psi(path) if path is not None else None)
        out.append(
            CgroupFeatures(
                cgroup_id=cgid,
                path=path,
                name=w.name if w is not None else None,
                container_id=w.container_id if w is not None else None,
                pod_uid=w.pod_uid if w is not None else None,
                vector=vec,
                waits=c.waits,
                runq_mean_us=mean_us,
                runq_std_us=std_us,
            )
        )
    out.sort(key=lambda f: (-f.waits, f.cgroup_id))
    return FeaturesDoc(live=True, t=t, interval_s=elapsed_s, cgroups=out)
