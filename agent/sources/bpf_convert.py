"""From raw collector map contents (bpf.snapshot) to metrics of the spec vocabulary.

Pure functions plus two small stateful helpers (device names, blocked-time
carry-over), so that every figure can be checked against fake map data.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from bpf.hist import Log2Hist, merge, percentile
from bpf.snapshot import TID_SLOT_BASE, BlockRaw, FilemapRaw, OffcpuRaw, RunqRaw, VmscanRaw, WritebackRaw
from core.hostfs import HostFS

NS_PER_US = 1_000.0
NS_PER_MS = 1_000_000.0


def split_dev(dev: int) -> tuple[int, int]:
    """Major and minor of a kernel-internal dev_t (MKDEV: 20-bit minor), as tracepoints carry it."""
    return dev >> 20, dev & 0xFFFFF


class DeviceNames:
    """Kernel dev_t -> block device name from sysfs, cached; unknown devices get `dev<maj>_<min>`."""

    def __init__(self, fs: HostFS) -> None:
        self._fs = fs
        self._cache: dict[int, str] = {}

    def __call__(self, dev: int) -> str:
        name = self._cache.get(dev)
        if name is None:
            name = self._lookup(dev)
            self._cache[dev] = name
        return name

    def _lookup(self, dev: int) -> str:
        major, minor = split_dev(dev)
        try:
            text = self._fs.read_text(f"/sys/dev/block/{major}:{minor}/uevent")
        except OSError:
            text = ""
        for line in text.splitlines():
            if line.startswith("DEVNAME="):
                # DEVNAME may hold a path (e.g. "mapper/x"); names must not contain '.' or '/'.
                return line.split("=", 1)[1].strip().replace("/", "_").replace(".", "_")
        return f"dev{major}_{minor}"


def _us(hist: Log2Hist, q: float) -> float | None:
    v = percentile(hist, q)
    return None if v is None else v / NS_PER_US


def block_metrics(raw: BlockRaw, elapsed_s: float, name_of: DeviceNames, seen: set[int]) -> dict[str, float]:
    """Per-device latency percentiles, IOPS, KB/s and mean request size.

    `seen` holds every device met since start (updated here): an idle device
    reports zero rates rather than vanishing; its latency is not measured.
    """
    out: dict[str, float] = {}
    seen.update(raw.counts)
    seen.update(raw.lat_ns)
    for dev in sorted(seen):
        name = name_of(dev)
        hist = raw.lat_ns.get(dev, {})
        p50, p99 = _us(hist, 0.50), _us(hist, 0.99)
        if p50 is not None and p99 is not None:
            out[f"io.{name}.lat_p50_us"] = p50
            out[f"io.{name}.lat_p99_us"] = p99
        c = raw.counts.get(dev)
        r_ops = c.read_ops if c else 0
        w_ops = c.write_ops if c else 0
        r_b = c.read_bytes if c else 0
        w_b = c.write_bytes if c else 0
        out[f"io.{name}.read_iops"] = r_ops / elapsed_s
        out[f"io.{name}.write_iops"] = w_ops / elapsed_s
        out[f"io.{name}.read_kbps"] = r_b / 1024.0 / elapsed_s
        out[f"io.{name}.write_kbps"] = w_b / 1024.0 / elapsed_s
        if r_ops + w_ops:
            out[f"io.{name}.avg_req_kb"] = (r_b + w_b) / 1024.0 / (r_ops + w_ops)
    return out


class TidHists:
    """Per-interval histograms of threads from the kernel's running per-thread counts.

    A thread whose counts went down was replaced (its tid exited and was
    reused), so its counts restart from zero.
    """

    def __init__(self) -> None:
        self._prev: dict[int, list[int]] = {}
        self._carried: dict[int, Log2Hist] = {}  # counted by a replaced instance, not yet reported

    def interval(self, totals: Mapping[int, list[int]]) -> dict[int, Log2Hist]:
        out: dict[int, Log2Hist] = {}
        for tid, now in totals.items():
            prev = self._prev.get(tid)
            if prev is None or len(prev) != len(now) or any(a < b for a, b in zip(now, prev, strict=True)):
                prev = [0] * len(now)
            hist = {i + TID_SLOT_BASE: a - b for i, (a, b) in enumerate(zip(now, prev, strict=True)) if a > b}
            if hist:
                out[tid] = hist
        for tid, hist in self._carried.items():
            out[tid] = merge((out.get(tid, {}), hist))
        self._carried = {}
        self._prev = {tid: list(v) for tid, v in totals.items()}
        return out

    def handover(self, old: Mapping[int, list[int]], new: Mapping[int, list[int]]) -> None:
        """A new instance of the program replaces the one whose final totals are `old`.

        `new` are the new instance's totals read right after: it counted them
        while both were attached, so they were counted in `old` too and become
        the baseline; what `old` gained since the last interval is carried into
        the next one.
        """
        carried = self.interval(old)
        self.interval(new)
        self._carried = carried


def runq_metrics(
    raw: RunqRaw, job_tids: Mapping[str, Iterable[int]], tid_hists: TidHists
) -> dict[str, float]:
    """Host run-queue p99 and, per job, the p99 of all its threads' merged histograms."""
    out: dict[str, float] = {}
    host = _us(raw.host_ns, 0.99)
    if host is not None:
        out["sched.runq_lat_p99_us"] = host
    per_tid = tid_hists.interval(raw.per_tid_total)
    for job, tids in job_tids.items():
        merged = merge(per_tid[t] for t in set(tids) if t in per_tid)
        p99 = _us(merged, 0.99)
        if p99 is not None:
            out[f"sched.{job}.runq_lat_p99_us"] = p99
    return out


class BlockedCarry:
    """Blocked time of watched threads per interval, including sleeps still in progress.

    The kernel keeps, per thread, the running total of ended sleeps and the
    start of a sleep in progress. A sleep in progress at a read is counted up
    to that read; when it ends, the part already counted is taken off, so each
    nanosecond of a long sleep lands in exactly one interval.

    Across a reload (handover), a sleep that began before the new instance of
    the program was attached is unknown to it: its entry appears only at the
    thread's wakeup, when it is taken (born_ns). Until then the thread is still
    asleep and is counted so here; then the sleep is counted up to that wakeup.
    """

    def __init__(self) -> None:
        self._total: dict[int, int] = {}  # tid -> running total at the previous read
        self._counted: dict[int, tuple[int, int]] = {}  # tid -> (sleep start ktime, ns already counted)
        # tid -> ktime counted up to, of a sleep the running instance did not see begin
        self._unseen: dict[int, int] = {}
        self._carried: dict[int, int] = {}  # tid -> ns counted by a replaced instance, not yet reported

    def blocked_ns(self, tid: int, raw: OffcpuRaw, now_ns: int) -> int:
        total = raw.blocked_total_ns.get(tid, 0)
        prev_total = self._total.get(tid, 0)
        # A total that went down belongs to a new thread that reused the tid.
        ns = total - prev_total if total >= prev_total else total
        self._total[tid] = total
        prev = self._counted.pop(tid, None)
        if prev is not None:
            ns -= prev[1]
        since = raw.sleeping_since_ns.get(tid)
        if since is not None and since <= now_ns:
            part = now_ns - since
            ns += part
            self._counted[tid] = (since, part)
        return max(ns, 0) + self._unseen_ns(tid, raw, now_ns) + self._carried.pop(tid, 0)

    def _unseen_ns(self, tid: int, raw: OffcpuRaw, now_ns: int) -> int:
        upto = self._unseen.pop(tid, None)
        if upto is None:
            return 0
        if tid not in raw.blocked_total_ns:
            # No entry: the program has seen neither a wakeup nor a switch of it, so it still sleeps.
            self._unseen[tid] = max(upto, now_ns)
            return max(now_ns - upto, 0)
        # Its first event in this instance, which took the entry, was the wakeup.
        woke = min(raw.born_ns.get(tid, upto), now_ns)
        return max(woke - upto, 0)

    def handover(self, old: OffcpuRaw, new: OffcpuRaw, tids: Iterable[int], cut_ns: int) -> None:
        """A new instance of the program replaces the one whose final reading, at `cut_ns`, is `old`.

        `new` is the new instance's reading right after; what it counted so far
        was counted by `old` too, so its totals become the baseline. What `old`
        gained since the last interval, a sleep in progress up to `cut_ns`
        included, is carried into the next one. That sleep goes on in `new`:
        seen begin there (its part up to `cut_ns` is taken off when it ends), or
        not (counted here until the thread's entry appears at its wakeup).
        """
        for tid in tids:
            self._carried[tid] = self.blocked_ns(tid, old, cut_ns)
            self._total[tid] = new.blocked_total_ns.get(tid, 0)
            counted = self._counted.pop(tid, None)
            if counted is None:
                continue
            born = new.born_ns.get(tid)
            if born is None or born >= cut_ns:
                self._unseen[tid] = cut_ns
            elif tid in new.sleeping_since_ns:
                self._counted[tid] = (new.sleeping_since_ns[tid], counted[1])

    def awaiting(self, tid: int) -> bool:
        """Whether a sleep of `tid` that a reloaded instance did not see begin is being counted."""
        return tid in self._unseen

    def end_span(self) -> None:
        """The hot path's span ended at the last read: sleeps in progress were counted up to it,
        and the program adds nothing of them after it (it counts inside spans only)."""
        self._counted.clear()
        self._unseen.clear()

    def rebase(self, totals: Mapping[int, int]) -> None:
        """A new instance of the program, loaded between spans, whose running totals are `totals`."""
        for tid in list(self._total):
            self._total[tid] = totals.get(tid, 0)

    def forget_except(self, tids: Iterable[int]) -> None:
        keep = set(tids)
        for d in (self._total, self._counted, self._unseen, self._carried):
            for tid in [t for t in d if t not in keep]:
                del d[tid]


def offcpu_metrics(
    raw: OffcpuRaw, elapsed_s: float, main_tids: Mapping[str, int], carry: BlockedCarry, now_ns: int
) -> dict[str, float]:
    """Context switches and migrations per second; per job, the main thread's blocked share."""
    out = {
        "sched.ctx_switches_per_s": raw.switches / elapsed_s,
        "sched.migrations_per_s": raw.migrations / elapsed_s,
    }
    interval_ns = elapsed_s * 1e9
    for job, tid in main_tids.items():
        frac = carry.blocked_ns(tid, raw, now_ns) / interval_ns
        out[f"sched.{job}.offcpu_frac"] = min(max(frac, 0.0), 1.0)
    carry.forget_except(main_tids.values())
    return out


def vmscan_metrics(raw: VmscanRaw, elapsed_s: float) -> dict[str, float]:
    """Reclaim in the tasks that needed memory, of every kind, and kswapd wake-ups.

    Memory-cgroup limit reclaim and node reclaim run synchronously in the task that
    asked for memory, which is direct reclaim in the spec's meaning, so they count in
    `mem.direct_reclaim_ms_per_s`; the cgroup part is also given alone, so that reclaim
    forced by a cgroup's limit (the host may have plenty) can be told from global reclaim.
    """
    direct_ns = raw.reclaim_ns + (raw.memcg_ns or 0) + (raw.node_ns or 0)
    out = {
        "mem.direct_reclaim_ms_per_s": direct_ns / NS_PER_MS / elapsed_s,
        "mem.kswapd_wakeups_per_s": raw.kswapd_wakeups / elapsed_s,
    }
    if raw.memcg_ns is not None:
        out["mem.memcg_reclaim_ms_per_s"] = raw.memcg_ns / NS_PER_MS / elapsed_s
    return out


def writeback_metrics(raw: WritebackRaw, elapsed_s: float, hz: int) -> dict[str, float]:
    return {"mem.dirty_throttle_ms_per_s": raw.pause_jiffies * 1000.0 / hz / elapsed_s}


def filemap_metrics(raw: FilemapRaw, elapsed_s: float) -> dict[str, float]:
    return {"mem.pagecache_miss_per_s": raw.pages / elapsed_s}
