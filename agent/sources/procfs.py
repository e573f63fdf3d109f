"""procfs source: PSI, memory, vmstat, CPU and per-disk rates, readable without root.

Parsers are pure functions over file text so they can be tested against recorded
files; the source only reads files and keeps the previous snapshot for deltas.
A counter that went backwards (reset, 32-bit wrap) yields no rate for that
interval rather than a negative or absurd one.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass

from agent.host import block_devices, looks_like_partition
from core.hostfs import HostFS
from core.sample import SourceStatus

_SECTOR_BYTES = 512  # /proc/diskstats counts 512-byte sectors whatever the device's block size
_PSI_NAMES = {
    ("cpu", "some"): "psi.cpu.some_avg10",
    ("io", "some"): "psi.io.some_avg10",
    ("io", "full"): "psi.io.full_avg10",
    ("memory", "some"): "psi.mem.some_avg10",
    ("memory", "full"): "psi.mem.full_avg10",
}
_DEVICE_REFRESH_S = 10.0  # loop and zram devices come and go; re-check sysfs this often


def _delta(prev: int, cur: int) -> int | None:
    return cur - prev if cur >= prev else None


# --- PSI ----------------------------------------------------------------------------


def parse_psi(text: str) -> dict[str, float]:
    """`some avg10=1.00 …` / `full avg10=…` lines -> {"some": 1.0, "full": …}."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        kind, _, rest = line.partition(" ")
        for field in rest.split():
            key, _, value = field.partition("=")
            if key == "avg10":
                with contextlib.suppress(ValueError):
                    out[kind] = float(value)
    return out


def psi_metrics(texts: dict[str, str]) -> dict[str, float]:
    """resource (cpu, io, memory) -> file text, to vocabulary names. The host-wide
    `cpu full` line is always zero by definition, so it is not reported."""
    out: dict[str, float] = {}
    for resource, text in texts.items():
        for kind, value in parse_psi(text).items():
            name = _PSI_NAMES.get((resource, kind))
            if name is not None:
                out[name] = value
    return out


# --- /proc/meminfo ------------------------------------------------------------------


def parse_meminfo(text: str) -> dict[str, int]:
    """`Dirty:  152 kB` lines -> {"Dirty": 152} (kB; unitless counts as given)."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        key, sep, rest = line.partition(":")
        parts = rest.split()
        if not sep or not parts:
            continue
        try:
            out[key.strip()] = int(parts[0])
        except ValueError:
            continue
    return out


def meminfo_metrics(fields: dict[str, int]) -> dict[str, float]:
    out: dict[str, float] = {}
    for key, name in (
        ("Dirty", "mem.dirty_mib"),
        ("Writeback", "mem.writeback_mib"),
        ("MemAvailable", "mem.available_mib"),
    ):
        if key in fields:
            out[name] = fields[key] / 1024.0
    return out


# --- /proc/vmstat -------------------------------------------------------------------


def parse_vmstat(text: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) != 2:
            continue
        try:
            out[parts[0]] = int(parts[1])
        except ValueError:
            continue
    return out


def _sum_prefix(fields: dict[str, int], prefix: str) -> int | None:
    # allocstall is split per zone (allocstall_normal, _movable, ...); older kernels
    # had one counter. Summing the family covers both.
    vals = [v for k, v in fields.items() if k == prefix or k.startswith(prefix + "_")]
    return sum(vals) if vals else None


def vmstat_gauges(cur: dict[str, int], page_size: int) -> dict[str, float]:
    out: dict[str, float] = {}
    mib = page_size / (1024.0 * 1024.0)
    if "nr_dirty_threshold" in cur:
        out["mem.dirty_threshold_mib"] = cur["nr_dirty_threshold"] * mib
    if "nr_dirty_background_threshold" in cur:
        out["mem.dirty_bg_threshold_mib"] = cur["nr_dirty_background_threshold"] * mib
    return out


def vmstat_rates(prev: dict[str, int], cur: dict[str, int], dt: float) -> dict[str, float]:
    """Rates and shares over the interval between two vmstat snapshots."""
    out: dict[str, float] = {}
    if dt <= 0:
        return out
    if all(k in prev and k in cur for k in ("numa_hit", "numa_miss")):
        hit = _delta(prev["numa_hit"], cur["numa_hit"])
        miss = _delta(prev["numa_miss"], cur["numa_miss"])
        # No allocations in the interval means no evidence either way, not 0 %.
        if hit is not None and miss is not None and hit + miss > 0:
            out["numa.remote_frac"] = miss / (hit + miss)
    for key, name in (
        ("pgscan_direct", "mem.pgscan_direct_per_s"),
        ("pgscan_kswapd", "mem.pgscan_kswapd_per_s"),
        ("pgmajfault", "mem.major_faults_per_s"),
    ):
        if key in prev and key in cur:
            d = _delta(prev[key], cur[key])
            if d is not None:
                out[name] = d / dt
    a, b = _sum_prefix(prev, "allocstall"), _sum_prefix(cur, "allocstall")
    if a is not None and b is not None and (d := _delta(a, b)) is not None:
        out["mem.allocstall_per_s"] = d / dt
    # Pages read back soon after reclaim evicted them (workingset_refault_file/_anon; one counter
    # on older kernels). Counted for cgroup reclaim too, which pgscan_* in this file is not.
    a, b = _sum_prefix(prev, "workingset_refault"), _sum_prefix(cur, "workingset_refault")
    if a is not None and b is not None and (d := _delta(a, b)) is not None:
        out["mem.refaults_per_s"] = d / dt
    return out


# --- /proc/stat ---------------------------------------------------------------------


@dataclass(frozen=True)
class StatSnapshot:
    busy: int  # jiffies: user+nice+system+irq+softirq+steal
    iowait: int
    total: int  # busy + idle + iowait; guest time is already inside user
    ctxt: int | None
    procs_running: int | None
    procs_blocked: int | None


def parse_stat(text: str) -> StatSnapshot | None:
    cpu: list[int] | None = None
    extra: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "cpu":
            try:
                cpu = [int(x) for x in parts[1:9]]
            except ValueError:
                return None
        elif parts[0] in ("ctxt", "procs_running", "procs_blocked") and len(parts) > 1:
            try:
                extra[parts[0]] = int(parts[1])
            except ValueError:
                continue
    if cpu is None or len(cpu) < 4:
        return None
    cpu += [0] * (8 - len(cpu))  # very old kernels print fewer columns
    user, nice, system, idle, iowait, irq, softirq, steal = cpu
    busy = user + nice + system + irq + softirq + steal
    return StatSnapshot(
        busy=busy,
        iowait=iowait,
        total=busy + idle + iowait,
        ctxt=extra.get("ctxt"),
        procs_running=extra.get("procs_running"),
        procs_blocked=extra.get("procs_blocked"),
    )


def stat_gauges(cur: StatSnapshot) -> dict[str, float]:
    out: dict[str, float] = {}
    if cur.procs_running is not None:
        out["sched.procs_running"] = float(cur.procs_running)
    if cur.procs_blocked is not None:
        out["sched.procs_blocked"] = float(cur.procs_blocked)
    return out


def stat_rates(prev: StatSnapshot, cur: StatSnapshot, dt: float) -> dict[str, float]:
    out: dict[str, float] = {}
    total = _delta(prev.total, cur.total)
    busy = _delta(prev.busy, cur.busy)
    iowait = _delta(prev.iowait, cur.iowait)
    if total and busy is not None and iowait is not None:
        out["cpu.util_pct"] = 100.0 * busy / total
        out["cpu.iowait_pct"] = 100.0 * iowait / total
    if dt > 0 and prev.ctxt is not None and cur.ctxt is not None:
        d = _delta(prev.ctxt, cur.ctxt)
        if d is not None:
            out["sched.ctx_switches_per_s"] = d / dt
    return out


# --- /proc/diskstats ----------------------------------------------------------------


@dataclass(frozen=True)
class DiskCounters:
    reads: int
    read_sectors: int
    read_ms: int
    writes: int
    write_sectors: int
    write_ms: int
    io_ms: int  # time with requests in flight

    def is_zero(self) -> bool:
        return not any((self.reads, self.read_sectors, self.writes, self.write_sectors, self.io_ms))


def parse_diskstats(text: str) -> dict[str, DiskCounters]:
    out: dict[str, DiskCounters] = {}
    for line in text.splitlines():
        parts = line.split()
        # major minor name + at least the 11 classic fields (discard/flush columns are newer).
        if len(parts) < 14:
            continue
        try:
            f = [int(x) for x in parts[3:14]]
        except ValueError:
            continue
        out[parts[2]] = DiskCounters(
            reads=f[0],
            read_sectors=f[2],
            read_ms=f[3],
            writes=f[4],
            write_sectors=f[6],
            write_ms=f[7],
            io_ms=f[9],
        )
    return out


def disk_selection(counters: dict[str, DiskCounters], devices: Collection[str] | None) -> list[str]:
    """Names worth reporting: in `devices` (whole disks from sysfs) when known,
    otherwise by name. Idle zram and unbound loops are dropped either way."""
    out: list[str] = []
    for name, c in counters.items():
        if devices is not None:
            keep = name in devices
        else:
            # Without sysfs, go by name: ramdisks and partitions never, zram and loop
            # devices only once they have done any I/O.
            unused = name.startswith(("zram", "loop")) and c.is_zero()
            keep = not (name.startswith("ram") or looks_like_partition(name) or unused)
        if keep:
            out.append(name)
    return sorted(out)


def disk_rates(
    prev: dict[str, DiskCounters], cur: dict[str, DiskCounters], dt: float, names: Collection[str]
) -> dict[str, float]:
    out: dict[str, float] = {}
    if dt <= 0:
        return out
    for name in names:
        a, b = prev.get(name), cur.get(name)
        if a is None or b is None:
            continue
        deltas = [_delta(x, y) for x, y in zip(_fields(a), _fields(b), strict=True)]
        if any(d is None for d in deltas):
            continue  # reset or wrap: skip the device for this one interval
        reads, rsect, rms, writes, wsect, wms, io_ms = (d or 0 for d in deltas)
        read_kb, write_kb = rsect * _SECTOR_BYTES / 1024.0, wsect * _SECTOR_BYTES / 1024.0
        p = f"io.{name}."
        out[p + "read_iops"] = reads / dt
        out[p + "write_iops"] = writes / dt
        out[p + "read_kbps"] = read_kb / dt
        out[p + "write_kbps"] = write_kb / dt
        out[p + "util_pct"] = min(100.0, 100.0 * io_ms / (dt * 1000.0))
        ios = reads + writes
        if ios:
            out[p + "avg_req_kb"] = (read_kb + write_kb) / ios
            out[p + "await_ms"] = (rms + wms) / ios
    return out


def _fields(c: DiskCounters) -> tuple[int, ...]:
    return (c.reads, c.read_sectors, c.read_ms, c.writes, c.write_sectors, c.write_ms, c.io_ms)


# --- the source ---------------------------------------------------------------------


@dataclass
class _Snapshot:
    t: float
    vmstat: dict[str, int] | None
    stat: StatSnapshot | None
    disks: dict[str, DiskCounters] | None


class ProcfsSource:
    """Host-wide figures from /proc; the fallback for everything eBPF measures better."""

    name = "procfs"

    def __init__(
        self,
        fs: HostFS | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        page_size: int | None = None,
    ) -> None:
        self.fs = fs or HostFS()
        self._clock = clock
        self._page_size = page_size or os.sysconf("SC_PAGE_SIZE")
        self._prev: _Snapshot | None = None
        self._devices: list[str] | None = None
        self._devices_at: float | None = None

    def _read(self, path: str) -> str | None:
        try:
            return self.fs.read_text(path)
        except OSError:
            # Missing or unsupported (psi=0 makes the PSI files fail with EOPNOTSUPP).
            return None

    def start(self) -> SourceStatus:
        missing = [p for p in ("/proc/stat", "/proc/meminfo") if self._read(p) is None]
        if missing:
            return SourceStatus(live=False, reason=f"cannot read {', '.join(missing)}")
        if self._read("/proc/pressure/cpu") is None:
            # Live, but say what is absent: the kernel lacks CONFIG_PSI or booted with psi=0.
            return SourceStatus(live=True, reason="no PSI (kernel built without it or booted with psi=0)")
        return SourceStatus(live=True)

    def _whole_disks(self, now: float) -> list[str] | None:
        if self._devices_at is None or now - self._devices_at >= _DEVICE_REFRESH_S:
            self._devices = block_devices(self.fs)
            self._devices_at = now
        return self._devices

    def collect(self) -> dict[str, float]:
        now = self._clock()
        out: dict[str, float] = {}
        psi = {r: t for r in ("cpu", "io", "memory") if (t := self._read(f"/proc/pressure/{r}")) is not None}
        out.update(psi_metrics(psi))
        if (text := self._read("/proc/meminfo")) is not None:
            out.update(meminfo_metrics(parse_meminfo(text)))
        vm_text, stat_text, disk_text = (self._read(f"/proc/{f}") for f in ("vmstat", "stat", "diskstats"))
        cur = _Snapshot(
            t=now,
            vmstat=parse_vmstat(vm_text) if vm_text is not None else None,
            stat=parse_stat(stat_text) if stat_text is not None else None,
            disks=parse_diskstats(disk_text) if disk_text is not None else None,
        )
        if cur.vmstat is not None:
            out.update(vmstat_gauges(cur.vmstat, self._page_size))
        if cur.stat is not None:
            out.update(stat_gauges(cur.stat))
        prev, self._prev = self._prev, cur
        if prev is None:
            return out
        dt = now - prev.t
        if prev.vmstat is not None and cur.vmstat is not None:
            out.update(vmstat_rates(prev.vmstat, cur.vmstat, dt))
        if prev.stat is not None and cur.stat is not None:
            out.update(stat_rates(prev.stat, cur.stat, dt))
        if prev.disks is not None and cur.disks is not None:
            names = disk_selection(cur.disks, self._whole_disks(now))
            out.update(disk_rates(prev.disks, cur.disks, dt, names))
        return out

    def close(self) -> None:
        self._prev = None
