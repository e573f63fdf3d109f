"""Raw per-interval contents of the collectors' maps, as plain Python values.

`read_*` turn a loaded collector's maps into these; everything after them
(agent/sources/bpf_convert.py) is pure and tested with fake data.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bpf.hist import Log2Hist
from bpf.loader import Collector


@dataclass
class DevCounts:
    read_ops: int = 0
    write_ops: int = 0
    read_bytes: int = 0
    write_bytes: int = 0


@dataclass
class BlockRaw:
    lat_ns: dict[int, Log2Hist] = field(default_factory=dict)  # kernel dev_t -> latency histogram
    counts: dict[int, DevCounts] = field(default_factory=dict)


# Per-thread run-queue histograms in the kernel keep TID_SLOTS slots, the
# first standing for slot TID_SLOT_BASE of the host histogram (sched.bpf.c).
TID_SLOTS = 32
TID_SLOT_BASE = 8


@dataclass
class CgroupCounts:
    """One cgroup's scheduling over an interval, summed over CPUs (sched.bpf.c, struct cg_rq)."""

    waits: int = 0
    wait_ns: int = 0
    wait_sq_us: int = 0
    switches: int = 0
    run_ns: int = 0
    blocked_ns: int = 0


@dataclass
class RunqRaw:
    host_ns: Log2Hist = field(default_factory=dict)  # this interval
    per_tid_total: dict[int, list[int]] = field(default_factory=dict)  # tid -> running TID_SLOTS counts
    cgroups: dict[int, CgroupCounts] = field(default_factory=dict)  # cgroup v2 id -> this interval


@dataclass
class OffcpuRaw:
    switches: int = 0
    migrations: int = 0
    blocked_total_ns: dict[int, int] = field(default_factory=dict)  # tid -> running total of ended sleeps
    sleeping_since_ns: dict[int, int] = field(default_factory=dict)  # tid -> ktime of a sleep in progress
    born_ns: dict[int, int] = field(default_factory=dict)  # tid -> ktime its entry was taken
    # tid -> the span (its gate's open_ns) of the thread's last event; stamps of an older one are stale
    epoch_ns: dict[int, int] = field(default_factory=dict)


@dataclass
class VmscanRaw:
    reclaim_ns: int = 0  # global direct reclaim
    reclaims: int = 0
    kswapd_wakeups: int = 0
    # Memory-cgroup limit reclaim in the charging task; None when not attached (vmscan.bpf.c).
    memcg_ns: int | None = None
    memcg_reclaims: int | None = None
    # zone_reclaim_mode reclaim in the allocating task; None when not attached.
    node_ns: int | None = None
    node_reclaims: int | None = None


@dataclass
class WritebackRaw:
    pause_jiffies: int = 0
    pauses: int = 0


@dataclass
class FilemapRaw:
    pages: int = 0


def _sum_cpus(leaf: Any) -> int:
    return int(sum(leaf))


def _u32(key: Any) -> int:
    """A scalar map key: batch reads yield plain ints, iteration yields ctypes values."""
    return key if isinstance(key, int) else int(key.value)


def read_block(c: Collector) -> BlockRaw:
    raw = BlockRaw()
    for k, leaf in c.drain_hash("lat"):
        hist = raw.lat_ns.setdefault(int(k.dev), {})
        hist[int(k.slot)] = hist.get(int(k.slot), 0) + _sum_cpus(leaf)
    for k, leaf in c.drain_hash("stats"):
        d = raw.counts.setdefault(_u32(k), DevCounts())
        for per_cpu in leaf:
            d.read_ops += int(per_cpu.read_ops)
            d.write_ops += int(per_cpu.write_ops)
            d.read_bytes += int(per_cpu.read_bytes)
            d.write_bytes += int(per_cpu.write_bytes)
    return raw


def _task(c: Collector, tid: int, nslots: int) -> Any | None:
    """A thread's entry: its slot (tid modulo the slot count) when tagged with it, else the overflow hash."""
    if nslots:
        t = c.lookup("slots", tid % nslots)
        if t is not None and int(t.tid) == tid:
            return t
    return c.lookup("tasks", tid)


@dataclass
class TasksRaw:
    """Per-thread entries of the scheduler collector: running totals, a sleep in progress."""

    hist_total: dict[int, list[int]] = field(default_factory=dict)  # tid -> running TID_SLOTS counts
    blocked_total_ns: dict[int, int] = field(default_factory=dict)
    sleeping_since_ns: dict[int, int] = field(default_factory=dict)
    born_ns: dict[int, int] = field(default_factory=dict)
    epoch_ns: dict[int, int] = field(default_factory=dict)


def read_tasks(cs: Sequence[Collector], tids: Iterable[int]) -> list[TasksRaw]:
    """The entries of `tids` in each of `cs`, one thread's entries read back to back.

    Each watched thread's entry is looked up once per collector; with two
    instances of the program (a reload), a thread's two entries are read
    microseconds apart.
    """
    out = [TasksRaw() for _ in cs]
    nslots = [len(c.table("slots")) for c in cs]
    for tid in tids:
        for c, n, raw in zip(cs, nslots, out, strict=True):
            t = _task(c, tid, n)
            if t is None:
                continue
            raw.hist_total[tid] = [int(x) for x in t.hist]
            raw.blocked_total_ns[tid] = int(t.blocked_ns)
            raw.born_ns[tid] = int(t.born_ns)
            raw.epoch_ns[tid] = int(t.epoch)
            if t.slept_ns:
                raw.sleeping_since_ns[tid] = int(t.slept_ns)
    return out


def offcpu_of(tasks: TasksRaw, switches: int = 0, migrations: int = 0) -> OffcpuRaw:
    return OffcpuRaw(
        switches=switches,
        migrations=migrations,
        blocked_total_ns=tasks.blocked_total_ns,
        sleeping_since_ns=tasks.sleeping_since_ns,
        born_ns=tasks.born_ns,
        epoch_ns=tasks.epoch_ns,
    )


def read_sched(c: Collector, watch_tids: Iterable[int]) -> tuple[RunqRaw, OffcpuRaw]:
    """One read of the scheduler collector's maps.

    Run-queue side: the host histogram of the interval, the running histograms
    of `watch_tids`, every cgroup's counts of the interval (drained, so each
    event is read once). Off-CPU side: switches and migrations of the interval,
    blocked totals and sleeps in progress of `watch_tids`. Each watched
    thread's entry is looked up once for both.
    """
    switches, migrations = c.array_delta("counters")
    rq = RunqRaw(host_ns={i: n for i, n in enumerate(c.array_delta("hist")) if n})
    (tasks,) = read_tasks([c], watch_tids)
    rq.per_tid_total = tasks.hist_total
    off = offcpu_of(tasks, switches, migrations)
    for k, leaf in c.drain_hash("cgroups"):
        cg = rq.cgroups.setdefault(_u32(k), CgroupCounts())
        for per_cpu in leaf:
            cg.waits += int(per_cpu.waits)
            cg.wait_ns += int(per_cpu.wait_ns)
            cg.wait_sq_us += int(per_cpu.wait_sq_us)
            cg.switches += int(per_cpu.switches)
            cg.run_ns += int(per_cpu.run_ns)
            cg.blocked_ns += int(per_cpu.blocked_ns)
    return rq, off


def read_vmscan(c: Collector) -> VmscanRaw:
    t = c.array_delta("totals")
    raw = VmscanRaw(reclaim_ns=t[0], reclaims=t[1], kswapd_wakeups=t[2])
    if "HAVE_MEMCG_RECLAIM" in c.features:
        raw.memcg_ns, raw.memcg_reclaims = t[3], t[4]
    if "HAVE_NODE_RECLAIM" in c.features:
        raw.node_ns, raw.node_reclaims = t[5], t[6]
    return raw


def read_writeback(c: Collector) -> WritebackRaw:
    jiffies, n = c.array_delta("totals")
    return WritebackRaw(pause_jiffies=jiffies, pauses=n)


def read_filemap(c: Collector) -> FilemapRaw:
    (pages,) = c.array_delta("misses")
    return FilemapRaw(pages=pages)
