"""The metric vocabulary of spec/incident-v1.md: names, units, subsystems, aggregation.

Names carry a placeholder for the device (<dev>), GPU index (<i>) or job (<job>).
Replay ignores names that do not match; live sources must only emit names that do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from functools import cache, lru_cache


class Agg(StrEnum):
    """How a metric is summarised over a window."""

    MEAN = "mean"  # rates, shares, gauges
    MEDIAN = "median"  # per-interval percentiles: the window's typical value
    LAST = "last"  # bitmasks and limits: the state now
    MAX = "max"


@dataclass(frozen=True)
class MetricDef:
    template: str
    unit: str
    subsystem: str
    agg: Agg
    meaning: str
    # Not in spec/incident-v1.md: an idletune addition a recorder of the spec's names lacks.
    extension: bool = False

    @property
    def family(self) -> str:
        """The template with its placeholder removed, e.g. `io.lat_p99_us`."""
        return _family(self.template)


@cache
def _family(template: str) -> str:
    # Cached: the service asks it of every name of every sample in its window each refresh.
    return re.sub(r"\.<(dev|i|job)>", "", template)


_D = MetricDef


def _X(template: str, unit: str, subsystem: str, agg: Agg, meaning: str) -> MetricDef:
    return MetricDef(template, unit, subsystem, agg, meaning, extension=True)


METRICS: tuple[MetricDef, ...] = (
    _D("gpu.<i>.util_pct", "%", "gpu", Agg.MEAN, "share of time a kernel ran"),
    _D("gpu.<i>.sm_clock_mhz", "MHz", "gpu", Agg.MEAN, "current SM clock"),
    _D("gpu.<i>.sm_clock_max_mhz", "MHz", "gpu", Agg.LAST, "maximum SM clock"),
    _D("gpu.<i>.power_w", "W", "gpu", Agg.MEAN, "power draw"),
    _D("gpu.<i>.power_limit_w", "W", "gpu", Agg.LAST, "enforced power limit"),
    _D("gpu.<i>.clock_event_reasons", "bitmask", "gpu", Agg.LAST, "clock event (throttle) reasons"),
    _D("gpu.<i>.temp_c", "°C", "gpu", Agg.MEAN, "temperature"),
    _D("gpu.<i>.pcie_rx_kbps", "KB/s", "gpu", Agg.MEAN, "PCIe traffic into the GPU"),
    _D("gpu.<i>.pcie_tx_kbps", "KB/s", "gpu", Agg.MEAN, "PCIe traffic out of the GPU"),
    _D("gpu.<i>.mem_used_mib", "MiB", "gpu", Agg.MEAN, "device memory used"),
    _D("trainer.<job>.step_time_ms", "ms", "trainer", Agg.MEAN, "mean training step time"),
    _D("trainer.<job>.data_wait_frac", "0..1", "trainer", Agg.MEAN, "share of step time waiting for data"),
    _D("trainer.<job>.samples_per_s", "1/s", "trainer", Agg.MEAN, "training throughput"),
    _D("io.<dev>.lat_p50_us", "µs", "io", Agg.MEDIAN, "block request latency p50, issue to complete"),
    _D("io.<dev>.lat_p99_us", "µs", "io", Agg.MEDIAN, "block request latency p99, issue to complete"),
    _D("io.<dev>.read_iops", "1/s", "io", Agg.MEAN, "completed reads"),
    _D("io.<dev>.write_iops", "1/s", "io", Agg.MEAN, "completed writes"),
    _D("io.<dev>.read_kbps", "KB/s", "io", Agg.MEAN, "bytes read"),
    _D("io.<dev>.write_kbps", "KB/s", "io", Agg.MEAN, "bytes written"),
    _D("io.<dev>.avg_req_kb", "KB", "io", Agg.MEAN, "mean request size"),
    _D("sched.runq_lat_p99_us", "µs", "sched", Agg.MEDIAN, "host run-queue latency p99"),
    _D("sched.<job>.runq_lat_p99_us", "µs", "sched", Agg.MEDIAN, "run-queue latency p99, job threads"),
    _D("sched.<job>.offcpu_frac", "0..1", "sched", Agg.MEAN, "share of time the main thread slept"),
    _D("sched.ctx_switches_per_s", "1/s", "sched", Agg.MEAN, "context switches"),
    _D("sched.migrations_per_s", "1/s", "sched", Agg.MEAN, "task migrations"),
    _D("cpu.util_pct", "%", "cpu", Agg.MEAN, "host CPU busy share"),
    _D("mem.direct_reclaim_ms_per_s", "ms/s", "mem", Agg.MEAN, "time in direct reclaim"),
    _D("mem.kswapd_wakeups_per_s", "1/s", "mem", Agg.MEAN, "kswapd wake-ups"),
    _D("mem.dirty_mib", "MiB", "mem", Agg.MEAN, "dirty page cache"),
    _D("mem.writeback_mib", "MiB", "mem", Agg.MEAN, "page cache under writeback"),
    _D("mem.dirty_throttle_ms_per_s", "ms/s", "mem", Agg.MEAN, "writers paused in balance_dirty_pages"),
    _D("mem.pagecache_miss_per_s", "1/s", "mem", Agg.MEAN, "pages added to the page cache"),
    _D("mem.available_mib", "MiB", "mem", Agg.MEAN, "MemAvailable"),
    _D("numa.remote_frac", "0..1", "numa", Agg.MEAN, "numa_miss / (numa_hit + numa_miss)"),
    _D("psi.cpu.some_avg10", "%", "psi", Agg.MEAN, "CPU pressure, some, 10 s"),
    _D("psi.io.some_avg10", "%", "psi", Agg.MEAN, "I/O pressure, some, 10 s"),
    _D("psi.io.full_avg10", "%", "psi", Agg.MEAN, "I/O pressure, full, 10 s"),
    _D("psi.mem.some_avg10", "%", "psi", Agg.MEAN, "memory pressure, some, 10 s"),
    _D("psi.mem.full_avg10", "%", "psi", Agg.MEAN, "memory pressure, full, 10 s"),
    # --- idletune extensions -------------------------------------------------------
    # Not in spec/incident-v1.md, which lets a source add names. Most carry what procfs
    # can tell without eBPF (reclaim scans, dirty limits, device busy time), so a host
    # without eBPF still shows its memory and disk state. The recorder writes them like
    # any known name; an incident without them replays exactly as before.
    _X("mem.pgscan_direct_per_s", "1/s", "mem", Agg.MEAN, "pages scanned by direct reclaim"),
    _X("mem.pgscan_kswapd_per_s", "1/s", "mem", Agg.MEAN, "pages scanned by kswapd"),
    _X("mem.allocstall_per_s", "1/s", "mem", Agg.MEAN, "allocations that entered direct reclaim"),
    # eBPF, not procfs: /proc/vmstat leaves cgroup reclaim out, so this is its only sign.
    _X("mem.memcg_reclaim_ms_per_s", "ms/s", "mem", Agg.MEAN, "time in memory-cgroup limit reclaim"),
    _X("mem.major_faults_per_s", "1/s", "mem", Agg.MEAN, "page faults that needed I/O"),
    _X("mem.refaults_per_s", "1/s", "mem", Agg.MEAN, "evicted pages read back (workingset refaults)"),
    _X("mem.dirty_threshold_mib", "MiB", "mem", Agg.LAST, "dirty level at which writers are throttled"),
    _X("mem.dirty_bg_threshold_mib", "MiB", "mem", Agg.LAST, "dirty level that starts background writeback"),
    _X("cpu.iowait_pct", "%", "cpu", Agg.MEAN, "host CPU share idle while I/O was outstanding"),
    _X("sched.procs_running", "tasks", "sched", Agg.MEAN, "runnable tasks"),
    _X("sched.procs_blocked", "tasks", "sched", Agg.MEAN, "tasks blocked on I/O"),
    _X("io.<dev>.util_pct", "%", "io", Agg.MEAN, "share of time the device had requests in flight"),
    _X("io.<dev>.await_ms", "ms", "io", Agg.MEAN, "mean time a request spent queued and serviced"),
)

_PLACEHOLDER = {"<i>": r"(?P<gpu>\d+)", "<dev>": r"(?P<dev>[^.\s]+)", "<job>": r"(?P<job>[^\s]+?)"}


@dataclass(frozen=True)
class MetricName:
    """A parsed metric name: its definition and the device, GPU or job it names."""

    name: str
    definition: MetricDef
    dev: str | None = None
    gpu: int | None = None
    job: str | None = None


def _compile(template: str) -> re.Pattern[str]:
    pattern = re.escape(template)
    for ph, rx in _PLACEHOLDER.items():
        pattern = pattern.replace(re.escape(ph), rx)
    return re.compile(f"^{pattern}$")


_COMPILED: tuple[tuple[re.Pattern[str], MetricDef], ...] = tuple((_compile(d.template), d) for d in METRICS)
# Host-wide names ("sched.runq_lat_p99_us") must win over job names that could match
# "sched.<job>.…"; exact templates are tried first.
_EXACT = {d.template: d for d in METRICS if "<" not in d.template}


@lru_cache(maxsize=65536)
def parse(name: str) -> MetricName | None:
    """Parse a metric name of the vocabulary; None when it is not one."""
    exact = _EXACT.get(name)
    if exact is not None:
        return MetricName(name, exact)
    for rx, d in _COMPILED:
        if "<" not in d.template:
            continue
        m = rx.match(name)
        if m:
            g = m.groupdict()
            return MetricName(
                name,
                d,
                dev=g.get("dev"),
                gpu=int(g["gpu"]) if g.get("gpu") is not None else None,
                job=g.get("job"),
            )
    return None


# The largest magnitude a recorded value may have, whatever its unit: far above any real
# figure (1e15 KB/s is an exabyte per second), low enough that sums and means of a long
# series stay finite, and below 2**53, so an integer in the file is exact as a float.
MAX_MAGNITUDE = 1e15

# The spec states a scale for shares (0..1) and percentages; both allow 5 % of full scale
# either side: real recordings overshoot by measurement skew (a counter read a little late
# against its interval, NVML rounding), and generated ones carry zero-mean noise near zero.
# Other units state no range: any finite value within MAX_MAGNITUDE.
_UNIT_RANGES: dict[str, tuple[float, float]] = {
    "%": (-5.0, 105.0),
    "0..1": (-0.05, 1.05),
    "°C": (-273.15, MAX_MAGNITUDE),  # nothing is colder than absolute zero
}


def unit_range(unit: str) -> tuple[float, float]:
    """The (lowest, highest) value a recorded metric of `unit` may take."""
    return _UNIT_RANGES.get(unit, (-MAX_MAGNITUDE, MAX_MAGNITUDE))


def is_known(name: str) -> bool:
    return parse(name) is not None


def name_for(template: str, *, dev: str | None = None, gpu: int | None = None, job: str | None = None) -> str:
    """Fill a template: name_for("io.<dev>.lat_p99_us", dev="vdb") -> "io.vdb.lat_p99_us"."""
    out = template
    if dev is not None:
        out = out.replace("<dev>", dev)
    if gpu is not None:
        out = out.replace("<i>", str(gpu))
    if job is not None:
        out = out.replace("<job>", job)
    if "<" in out:
        raise ValueError(f"template {template!r} needs a placeholder value")
    return out


def matches(pattern: str, name: str) -> bool:
    """Evidence patterns of the spec: a trailing `*` matches any device or job."""
    if pattern.endswith("*"):
        return name.startswith(pattern[:-1])
    if "*" in pattern:
        return re.fullmatch(re.escape(pattern).replace(r"\*", r"[^.]+"), name) is not None
    return name == pattern
