"""What each fault does to a healthy host's metrics, step by step, and the distractors.

Effects follow the physics, not the detector: a checkpoint first piles up dirty pages,
then the flush floods the device with writes, pauses writers and delays reads, and only
then does the trainer wait for data. Lost work is applied through the same couplings
for every cause (data-side: data wait up; compute-side: GPU busy share down; clocks
down: steps longer while utilization stays high).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.diagnosis import Category

if TYPE_CHECKING:
    from evals.synth import Scenario

Metrics = dict[str, float]
C = Category


def _gen_capacity(model: str) -> float:
    return 50.4e6 if model.startswith("H") else 25.2e6


@dataclass
class Ctx:
    sc: Scenario
    rng: random.Random
    max_clock: float
    limit: float
    mem_total: float
    lmax: float
    busy: list[int]
    dev_iops: dict[str, float]
    dev_req: dict[str, float]
    dev_p50: dict[str, float]
    params: dict[str, float]

    @classmethod
    def build(cls, sc: Scenario, rng: random.Random, gpu: tuple[float, float]) -> Ctx:
        busy = sorted({g for j in sc.jobs for g in j.gpus})
        return cls(
            sc=sc,
            rng=rng,
            max_clock=gpu[0],
            limit=gpu[1],
            mem_total=sc.cpus * 8192.0,
            lmax=rng.uniform(0.45, 0.7),
            busy=busy,
            dev_iops={d: rng.uniform(800, 6000) for d in sc.devices},
            dev_req={d: rng.uniform(160, 320) for d in sc.devices},
            # Local NVMe answers in about 100 µs; network or RAID volumes in about a millisecond.
            dev_p50={
                d: rng.uniform(60, 150) if rng.random() < 0.8 else rng.uniform(400, 1500) for d in sc.devices
            },
            params={},
        )

    def n(self, mu: float, rel: float) -> float:
        """mu with relative gaussian noise scaled by the scenario's noise level."""
        return mu * (1.0 + self.rng.gauss(0.0, rel * self.sc.noise))

    def level(self, t: float) -> float:
        """0..1: how far the fault has developed at `t`."""
        sc = self.sc
        if sc.onset_t is None:
            return 1.0
        ramp = 2 * sc.interval_s
        if t < sc.onset_t:
            return 0.0
        up = min(1.0, (t - sc.onset_t + sc.interval_s) / ramp)
        if sc.end_t is not None and t > sc.end_t:
            return max(0.0, up - (t - sc.end_t) / ramp)
        return up

    def sev(self, t: float) -> float:
        return self.sc.severity * self.level(t)

    def p(self, key: str, lo: float, hi: float) -> float:
        """A fault parameter drawn once per scenario."""
        if key not in self.params:
            self.params[key] = self.rng.uniform(lo, hi)
        return self.params[key]

    def healthy(self, t: float) -> Metrics:
        sc, n = self.sc, self.n
        m: Metrics = {}
        for g in range(sc.gpus):
            used = g in self.busy
            m[f"gpu.{g}.util_pct"] = n(self.p("util", 89.0, 97.0), 0.025) if used else 0.0
            m[f"gpu.{g}.sm_clock_mhz"] = self.max_clock * min(1.0, n(0.997, 0.003)) if used else 210.0
            m[f"gpu.{g}.sm_clock_max_mhz"] = self.max_clock
            m[f"gpu.{g}.power_limit_w"] = self.limit
            m[f"gpu.{g}.clock_event_reasons"] = 0.0 if used else 1.0
            m[f"gpu.{g}.temp_c"] = n(62.0, 0.03) if used else n(34.0, 0.03)
            m[f"gpu.{g}.pcie_rx_kbps"] = n(2.1e6, 0.15) if used else n(200.0, 0.3)
            m[f"gpu.{g}.pcie_tx_kbps"] = n(2.0e5, 0.2) if used else n(100.0, 0.3)
            m[f"gpu.{g}.mem_used_mib"] = n(0.75 * 81920, 0.005) if used else 0.0
        for j in sc.jobs:
            m[f"trainer.{j.name}.step_time_ms"] = n(j.step_ms, 0.02)
            dw = self.p("dw", 0.005, 0.04)
            m[f"trainer.{j.name}.data_wait_frac"] = max(0.0, dw + self.rng.gauss(0, 0.01 * sc.noise))
            m[f"sched.{j.name}.runq_lat_p99_us"] = n(self.p("jrunq0", 30.0, 120.0), 0.15)
            m[f"sched.{j.name}.offcpu_frac"] = n(self.p("off0", 0.22, 0.45), 0.08)
        for d in sc.devices:
            m[f"io.{d}.lat_p50_us"] = n(self.dev_p50[d], 0.1)
            m[f"io.{d}.lat_p99_us"] = n(self.dev_p50[d] * 3.6, 0.12)
            m[f"io.{d}.read_iops"] = n(self.dev_iops[d], 0.05)
            m[f"io.{d}.avg_req_kb"] = n(self.dev_req[d], 0.04)
            m[f"io.{d}.write_iops"] = n(40.0, 0.25)
            m[f"io.{d}.write_kbps"] = n(2500.0, 0.25)
        m["sched.runq_lat_p99_us"] = n(self.p("runq0", 30.0, 120.0), 0.15)
        m["sched.ctx_switches_per_s"] = n(300.0 * sc.cpus, 0.08)
        m["sched.migrations_per_s"] = n(12.0 * sc.cpus, 0.1)
        m["cpu.util_pct"] = n(self.p("cpu0", 20.0, 65.0), 0.08)
        m["mem.direct_reclaim_ms_per_s"] = 0.0
        m["mem.kswapd_wakeups_per_s"] = abs(n(0.1, 0.8))
        m["mem.dirty_mib"] = n(110.0, 0.3)
        m["mem.writeback_mib"] = abs(n(4.0, 0.6))
        m["mem.dirty_throttle_ms_per_s"] = 0.0
        m["mem.pagecache_miss_per_s"] = n(60000.0, 0.08)
        m["mem.available_mib"] = n(0.86 * self.mem_total, 0.005)
        m["numa.remote_frac"] = abs(n(0.03, 0.3)) if sc.numa_nodes > 1 else 0.0
        m["psi.cpu.some_avg10"] = abs(n(2.0, 0.5))
        m["psi.io.some_avg10"] = abs(n(1.0, 0.5))
        m["psi.io.full_avg10"] = abs(n(0.3, 0.6))
        m["psi.mem.some_avg10"] = 0.0
        m["psi.mem.full_avg10"] = 0.0
        return m

    def finish(self, m: Metrics) -> None:
        """Derived figures: power follows busy share and clock, throughput follows step time."""
        for g in range(self.sc.gpus):
            u = m[f"gpu.{g}.util_pct"] = min(100.0, max(0.0, m[f"gpu.{g}.util_pct"]))
            pw = f"gpu.{g}.power_w"
            if pw not in m:
                clock = m[f"gpu.{g}.sm_clock_mhz"] / self.max_clock
                m[pw] = self.n(60.0 + (0.82 * self.limit - 60.0) * (u / 100.0) * clock, 0.04)
        for j in self.sc.jobs:
            dw = f"trainer.{j.name}.data_wait_frac"
            m[dw] = min(0.98, max(0.0, m[dw]))
            m[f"trainer.{j.name}.samples_per_s"] = (
                j.batch * max(1, len(j.gpus)) * 1000.0 / m[f"trainer.{j.name}.step_time_ms"]
            )
        for d in self.sc.devices:
            m[f"io.{d}.read_kbps"] = m[f"io.{d}.read_iops"] * m[f"io.{d}.avg_req_kb"]
        m["cpu.util_pct"] = min(100.0, max(0.0, m["cpu.util_pct"]))
        m["numa.remote_frac"] = min(1.0, m["numa.remote_frac"])

    # -- lost work, applied the same way for every cause --------------------------------

    def data_loss(self, m: Metrics, loss: float) -> None:
        for j in self.sc.jobs:
            m[f"trainer.{j.name}.data_wait_frac"] += loss
            # The main thread sleeps on the batch queue while it waits.
            m[f"sched.{j.name}.offcpu_frac"] = min(0.95, m[f"sched.{j.name}.offcpu_frac"] + 0.6 * loss)
            m[f"trainer.{j.name}.step_time_ms"] /= 1.0 - 0.9 * loss
            for g in j.gpus:
                m[f"gpu.{g}.util_pct"] *= 1.0 - 0.95 * loss

    def compute_loss(self, m: Metrics, loss: float) -> None:
        for j in self.sc.jobs:
            m[f"trainer.{j.name}.step_time_ms"] /= 1.0 - loss
            for g in j.gpus:
                m[f"gpu.{g}.util_pct"] *= 1.0 - loss

    def slow_clock(self, m: Metrics, gpus: list[int], factor: float) -> None:
        """Throttled GPUs stay busy but run slower; their job's other GPUs wait for them."""
        for g in gpus:
            m[f"gpu.{g}.sm_clock_mhz"] = self.max_clock * factor * min(1.0, self.n(1.0, 0.01))
        for j in self.sc.jobs:
            if any(g in gpus for g in j.gpus):
                m[f"trainer.{j.name}.step_time_ms"] /= factor
                for g in j.gpus:
                    if g not in gpus:
                        m[f"gpu.{g}.util_pct"] *= factor

    def data_dev(self) -> str:
        return self.sc.devices[0]


def _writeback(c: Ctx, m: Metrics, t: float) -> None:
    sc = c.sc
    onset = sc.onset_t if sc.onset_t is not None else 0.0
    pile = c.p("pile_s", 10.0, 30.0)
    flush = (sc.end_t - onset) if sc.end_t is not None else c.p("flush_s", 8.0, 20.0) + 2 * sc.interval_s
    peak = min(0.25 * c.mem_total, c.p("dirty", 2000.0, 12000.0) * sc.severity)
    d = c.data_dev()
    if onset - pile <= t < onset:
        m["mem.dirty_mib"] += peak * (t - onset + pile) / pile
        m[f"io.{d}.write_kbps"] += c.n(20e3, 0.3)
    elif onset <= t < onset + flush:
        s = sc.severity
        left = 1.0 - (t - onset) / flush
        m["mem.dirty_mib"] += peak * 0.6 * left
        m["mem.writeback_mib"] += c.n(0.6 * peak, 0.1)
        m["mem.dirty_throttle_ms_per_s"] = c.n(600.0 * s, 0.15)
        m[f"io.{d}.write_kbps"] = c.n(c.p("wkbps", 0.8e6, 3e6), 0.08)
        m[f"io.{d}.write_iops"] = m[f"io.{d}.write_kbps"] / 280.0
        m[f"io.{d}.lat_p99_us"] *= 1.0 + s * c.p("lat", 20.0, 60.0)
        m[f"io.{d}.lat_p50_us"] *= 1.0 + 0.3 * s
        m["psi.io.some_avg10"] += c.n(35.0 * s, 0.15)
        c.data_loss(m, c.lmax * s)


def _reclaim(c: Ctx, m: Metrics, t: float) -> None:
    s = c.sev(t)
    if c.sc.onset_t is not None and t < c.sc.onset_t:
        # Memory fills up before the stalls start.
        frac = max(0.0, 1.0 - (c.sc.onset_t - t) / 30.0)
        m["mem.available_mib"] *= 1.0 - 0.8 * frac
        return
    m["mem.available_mib"] = c.n(0.02 * c.mem_total, 0.05)
    m["mem.direct_reclaim_ms_per_s"] = c.n(c.p("dr", 60.0, 400.0) * s, 0.2)
    m["mem.kswapd_wakeups_per_s"] = c.n(c.p("ksw", 10.0, 150.0) * s, 0.2)
    m["psi.mem.some_avg10"] = c.n(c.p("psi", 15.0, 50.0) * s, 0.15)
    m["psi.mem.full_avg10"] = c.n(8.0 * s, 0.2)
    m["mem.pagecache_miss_per_s"] *= 1.0 + 1.5 * s
    m["cpu.util_pct"] += 6.0 * s
    c.data_loss(m, c.lmax * s)


def _storage(c: Ctx, m: Metrics, t: float) -> None:
    s = c.sev(t)
    if s <= 0:
        return
    d = c.data_dev()
    m[f"io.{d}.lat_p99_us"] *= 1.0 + s * c.p("p99", 6.0, 30.0)
    m[f"io.{d}.lat_p50_us"] *= 1.0 + s * c.p("p50", 3.0, 12.0)
    m[f"io.{d}.read_iops"] *= 1.0 - 0.4 * s
    m["psi.io.some_avg10"] += c.n(c.p("psi", 15.0, 45.0) * s, 0.15)
    m["psi.io.full_avg10"] += c.n(8.0 * s, 0.2)
    c.data_loss(m, c.lmax * s)


def _readahead(c: Ctx, m: Metrics, t: float) -> None:
    s = c.sev(t)
    if s <= 0:
        return
    d = c.data_dev()
    ra = float(c.sc.knobs.get(f"block.read_ahead_kb@{d}", 4096))
    if c.sc.variant == "small":
        need = m[f"io.{d}.read_iops"] * m[f"io.{d}.avg_req_kb"] * (1.0 - 0.5 * s)
        m[f"io.{d}.avg_req_kb"] = min(ra, c.dev_req[d]) * c.n(0.92, 0.04)
        m[f"io.{d}.read_iops"] = need / m[f"io.{d}.avg_req_kb"]
        m[f"io.{d}.lat_p99_us"] *= 1.0 + 0.5 * s
        # Loaders stalled on the device for most of the time the trainer waits (0.5-1 of it on the
        # testbed's recordings), read system-wide as a share of the busy cores.
        readers = sum(j.workers + 1 for j in c.sc.jobs)
        share = min(1.0, readers / c.sc.cpus)
        m["psi.io.some_avg10"] += c.n(70.0 * c.lmax * s * share, 0.2)
    else:
        m[f"io.{d}.avg_req_kb"] = min(ra, c.p("req", 768.0, 2048.0)) * c.n(1.0, 0.05)
        kbps = m[f"io.{d}.read_iops"] * c.dev_req[d] * (1.0 + s * c.p("waste", 2.0, 5.0))
        m[f"io.{d}.read_iops"] = kbps / m[f"io.{d}.avg_req_kb"]
        m["mem.pagecache_miss_per_s"] *= 1.0 + s * c.p("miss", 1.5, 3.5)
        m[f"io.{d}.lat_p99_us"] *= 1.0 + s * c.p("lat", 1.0, 3.0)
        m["psi.io.some_avg10"] += c.n(20.0 * s, 0.2)
    c.data_loss(m, c.lmax * s)


def _starvation(c: Ctx, m: Metrics, t: float) -> None:
    s = c.sev(t)
    if s <= 0:
        return
    m["cpu.util_pct"] -= 10.0 * s
    c.data_loss(m, c.lmax * s)


def _cpu_crowded(c: Ctx, m: Metrics, s: float) -> None:
    m["cpu.util_pct"] = c.n(96.0 + 3.0 * s, 0.01)
    m["sched.runq_lat_p99_us"] *= 1.0 + s * c.p("runq", 8.0, 40.0)
    for j in c.sc.jobs:
        m[f"sched.{j.name}.runq_lat_p99_us"] *= 1.0 + s * c.p("jrunq", 10.0, 60.0)
    m["sched.ctx_switches_per_s"] *= 1.0 + s * c.p("ctx", 1.0, 4.0)
    m["psi.cpu.some_avg10"] += c.n(c.p("psi", 20.0, 60.0) * s, 0.15)


def _oversub(c: Ctx, m: Metrics, t: float) -> None:
    s = c.sev(t)
    if s <= 0:
        return
    _cpu_crowded(c, m, s)
    c.data_loss(m, 0.6 * c.lmax * s)
    c.compute_loss(m, 0.3 * c.lmax * s)


def _contention(c: Ctx, m: Metrics, t: float) -> None:
    s = c.sev(t)
    if s <= 0:
        return
    _cpu_crowded(c, m, s)
    c.data_loss(m, c.lmax * s)


def _numa(c: Ctx, m: Metrics, t: float) -> None:
    s = c.sev(t)
    if s <= 0:
        return
    m["numa.remote_frac"] = c.n(0.2 + 0.45 * s, 0.05)
    m["sched.migrations_per_s"] *= 1.0 + s
    c.compute_loss(m, 0.7 * c.lmax * s)
    c.data_loss(m, 0.2 * c.lmax * s)


def _affected(c: Ctx) -> list[int]:
    if not c.busy:
        return []
    if c.p("one", 0.0, 1.0) < 0.3:
        return [c.busy[int(c.p("which", 0, len(c.busy) - 0.01))]]
    return list(c.busy)


def _power(c: Ctx, m: Metrics, t: float) -> None:
    s = c.sev(t)
    if s <= 0:
        return
    lowered = c.sc.onset_t is not None and c.p("lowered", 0.0, 1.0) < 0.4
    factor = 1.0 - c.p("clk", 0.25, 0.45) * s
    bits = 0x4 if c.p("brake", 0.0, 1.0) < 0.7 else 0x80 | 0x8
    gpus = _affected(c)
    for g in gpus:
        limit = c.limit * (1.0 - 0.35 * s) if lowered else c.limit
        m[f"gpu.{g}.power_limit_w"] = limit
        m[f"gpu.{g}.power_w"] = limit * min(1.0, c.n(0.985, 0.01))
        m[f"gpu.{g}.clock_event_reasons"] = float(bits)
    c.slow_clock(m, gpus, factor)


def _thermal(c: Ctx, m: Metrics, t: float) -> None:
    s = c.sev(t)
    if s <= 0:
        return
    factor = 1.0 - c.p("clk", 0.25, 0.45) * s
    bits = 0x20 if c.p("hw", 0.0, 1.0) < 0.6 else 0x40 | 0x8
    gpus = _affected(c)
    for g in gpus:
        m[f"gpu.{g}.temp_c"] = c.n(84.0 + 9.0 * s, 0.01)
        m[f"gpu.{g}.clock_event_reasons"] = float(bits)
    c.slow_clock(m, gpus, factor)


def _pcie(c: Ctx, m: Metrics, t: float) -> None:
    s = c.sev(t)
    if s <= 0:
        return
    cap = _gen_capacity(c.sc.gpu_model)
    for g in c.busy:
        m[f"gpu.{g}.pcie_rx_kbps"] = cap * c.n(0.78 + 0.14 * s, 0.02)
    c.compute_loss(m, c.lmax * s)


def _comm(c: Ctx, m: Metrics, t: float) -> None:
    s = c.sev(t)
    if s <= 0:
        return
    for j in c.sc.jobs:
        m[f"sched.{j.name}.offcpu_frac"] = min(0.95, m[f"sched.{j.name}.offcpu_frac"] + 0.25 * s)
    c.compute_loss(m, c.lmax * s)


def _host_overhead(c: Ctx, m: Metrics, t: float) -> None:
    s = c.sev(t)
    if s <= 0:
        return
    for j in c.sc.jobs:
        busy = c.n(c.p("busy", 0.02, 0.1), 0.2)
        m[f"sched.{j.name}.offcpu_frac"] += (busy - m[f"sched.{j.name}.offcpu_frac"]) * c.level(t)
    m["cpu.util_pct"] += 100.0 / c.sc.cpus
    c.compute_loss(m, c.lmax * s)


def _healthy(c: Ctx, m: Metrics, t: float) -> None:
    return None


FAULTS: dict[Category, Callable[[Ctx, Metrics, float], None]] = {
    C.WRITEBACK_BURST: _writeback,
    C.MEMORY_RECLAIM: _reclaim,
    C.STORAGE_LATENCY: _storage,
    C.READAHEAD_MISMATCH: _readahead,
    C.DATALOADER_STARVATION: _starvation,
    C.LOADER_OVERSUBSCRIPTION: _oversub,
    C.CPU_CONTENTION: _contention,
    C.NUMA_REMOTE: _numa,
    C.GPU_POWER_THROTTLE: _power,
    C.GPU_THERMAL_THROTTLE: _thermal,
    C.PCIE_BOTTLENECK: _pcie,
    C.COMM_WAIT: _comm,
    C.HOST_OVERHEAD: _host_overhead,
    C.NONE: _healthy,
}


# -- distractors: anomalies that cost no work ------------------------------------------


def _free_start(c: Ctx, length: float) -> float:
    """A start time away from the fault, so the distractor overlaps no lost work."""
    sc = c.sc
    end = (sc.samples - 1) * sc.interval_s
    busy: tuple[float, float] = (-1.0, -1.0)
    if sc.onset_t is not None and sc.category != C.NONE:
        busy = (sc.onset_t - 40.0, (sc.end_t if sc.end_t is not None else end) + 15.0)
    for _ in range(50):
        t0 = c.rng.uniform(0.0, max(0.0, end - length))
        if t0 + length < busy[0] or t0 > busy[1]:
            return t0
    return -1e9  # nowhere free: the distractor never fires


def _spike(c: Ctx) -> Callable[[Metrics, float], None]:
    t0 = _free_start(c, 3 * c.sc.interval_s)
    length = c.rng.randint(1, 3) * c.sc.interval_s
    kind = c.rng.choice(["io", "cpu", "psi", "numa", "dirty"])
    d = c.rng.choice(c.sc.devices)

    def apply(m: Metrics, t: float) -> None:
        if not t0 <= t < t0 + length:
            return
        if kind == "io":
            m[f"io.{d}.lat_p99_us"] *= 12.0
        elif kind == "cpu":
            m["cpu.util_pct"] = 97.0
        elif kind == "psi":
            m["psi.cpu.some_avg10"] += 30.0
        elif kind == "numa":
            m["numa.remote_frac"] += 0.3
        else:
            m["mem.dirty_mib"] += 1200.0

    return apply


def _busy_cpu(c: Ctx) -> Callable[[Metrics, float], None]:
    level = c.rng.uniform(82.0, 93.0)

    def apply(m: Metrics, t: float) -> None:
        m["cpu.util_pct"] = c.n(level, 0.02)
        m["sched.ctx_switches_per_s"] *= 1.4

    return apply


def _small_checkpoint(c: Ctx) -> Callable[[Metrics, float], None]:
    t0 = _free_start(c, 12 * c.sc.interval_s)
    size = c.rng.uniform(200.0, 900.0)
    d = c.rng.choice(c.sc.devices)
    fill = 6 * c.sc.interval_s

    def apply(m: Metrics, t: float) -> None:
        if t0 <= t < t0 + fill:
            m["mem.dirty_mib"] += size * (t - t0) / fill
        elif t0 + fill <= t < t0 + fill + 3 * c.sc.interval_s:
            m["mem.writeback_mib"] += size / 3
            m[f"io.{d}.write_kbps"] += size * 1024 / (3 * c.sc.interval_s)
            m[f"io.{d}.write_iops"] += size * 4

    return apply


DISTRACTORS: dict[str, Callable[[Ctx], Callable[[Metrics, float], None]]] = {
    "spike": _spike,
    "busy_cpu": _busy_cpu,
    "small_checkpoint": _small_checkpoint,
}
