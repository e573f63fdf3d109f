"""The live eBPF source: block latency, run-queue latency, blocked time, reclaim, throttling, misses."""

from __future__ import annotations

import contextlib
import importlib
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import ModuleType

from agent.sources.bpf_convert import (
    BlockedCarry,
    DeviceNames,
    TidHists,
    block_metrics,
    filemap_metrics,
    offcpu_metrics,
    runq_metrics,
    vmscan_metrics,
    writeback_metrics,
)
from bpf import loader, snapshot
from bpf.snapshot import CgroupCounts
from core.hostfs import HostFS
from core.sample import SourceStatus

Jobs = Callable[[], dict[str, list[int]]]


@dataclass(frozen=True)
class CgroupReading:
    """Every cgroup's scheduling counts over the last interval, and when it ended (wall time)."""

    t: float
    elapsed_s: float
    counts: dict[int, CgroupCounts]


class BpfSource:
    """Source protocol over the tracepoint collectors of `bpf/`.

    Collectors whose tracepoints this kernel lacks, or that fail to compile,
    are disabled one by one; the source is live while any collector runs.
    """

    name = "bpf"

    def __init__(
        self,
        fs: HostFS | None = None,
        jobs: Jobs | None = None,
        collectors: Iterable[str] | None = None,
    ) -> None:
        self._fs = fs or HostFS()
        self._jobs = jobs
        wanted = list(collectors) if collectors is not None else list(loader.COLLECTORS)
        unknown = [c for c in wanted if c not in loader.COLLECTORS]
        if unknown:
            raise ValueError(f"unknown collectors {unknown}; known: {sorted(loader.COLLECTORS)}")
        self._wanted = wanted
        self._loaded: dict[str, loader.Collector] = {}
        self._status: dict[str, SourceStatus] = {}
        self._drops: dict[str, int] = {}
        self._hz = 250
        self._names = DeviceNames(self._fs)
        self._seen_devs: set[int] = set()
        self._carry = BlockedCarry()
        self._tid_hists = TidHists()
        self._last_ns = 0
        self._cgroups: CgroupReading | None = None

    # -- lifecycle ---------------------------------------------------------

    def start(self) -> SourceStatus:
        reason = self._preflight()
        if reason is not None:
            return self._all_down(reason)
        try:
            bcc = importlib.import_module("bcc")
        except Exception as e:  # ImportError, or a broken libbcc raising OSError
            why = type(e).__name__
            return self._all_down(f"bcc not importable ({why}): install python3-bpfcc (make bootstrap)")
        tracefs = loader.find_tracefs(self._fs)
        if tracefs is None:
            return self._all_down("tracefs not mounted: mount -t tracefs nodev /sys/kernel/tracing")
        headers = loader.headers_reason(self._fs, os.uname().release)
        if headers is not None:
            return self._all_down(headers)
        if "writeback" in self._wanted:
            self._hz, _ = loader.kernel_hz(self._fs)
        for name in self._wanted:
            self._start_one(name, bcc, tracefs)
        loader.release_compiler_memory()
        self._last_ns = time.monotonic_ns()
        live = sorted(self._loaded)
        if not live:
            why = "; ".join(f"{n}: {s.reason}" for n, s in self._status.items())
            return SourceStatus(live=False, reason=f"no eBPF collector could start ({why})")
        down = [f"{n} ({s.reason})" for n, s in self._status.items() if not s.live]
        return SourceStatus(live=True, reason=f"disabled: {'; '.join(down)}" if down else "")

    def _preflight(self) -> str | None:
        if os.geteuid() != 0:
            return "not root: eBPF collectors need root; run idletune as root (sudo)"
        return None

    def _all_down(self, reason: str) -> SourceStatus:
        for name in self._wanted:
            self._status[name] = SourceStatus(live=False, reason=reason)
        return SourceStatus(live=False, reason=reason)

    def _start_one(self, name: str, bcc: ModuleType, tracefs: str) -> None:
        spec = loader.COLLECTORS[name]
        missing = loader.probe(spec, self._fs, tracefs)
        if missing is not None:
            self._status[name] = SourceStatus(live=False, reason=missing)
            return
        feats = loader.probe_features(spec, self._fs, tracefs)
        try:
            self._loaded[name] = loader.load(spec, bcc, feats)
        except loader.LoadError as e:
            self._status[name] = SourceStatus(live=False, reason=str(e))
            return
        lacking = [f.macro for f in spec.optional if f.macro not in feats]
        # Live either way; what an optional part would have measured is said, not hidden.
        notes = [f"without {', '.join(lacking)} (tracepoints not in this kernel)"] if lacking else []
        if spec.fallback is not None and spec.fallback in self._loaded[name].features:
            notes.append(f"{spec.fallback}: {spec.fallback_means}")
        why = "; ".join(notes)
        self._status[name] = SourceStatus(live=True, reason=why)

    def close(self) -> None:
        """Detach every collector; idempotent, and safe after an interrupted start or collect."""
        while self._loaded:
            # Pop before cleaning up so a second close (say, from a signal handler
            # that fires meanwhile) never detaches the same object twice.
            name, c = self._loaded.popitem()
            with contextlib.suppress(Exception):
                self._drops[name] = c.drops()
            c.close()
            self._status[name] = SourceStatus(live=False, reason="closed")

    # -- reading -----------------------------------------------------------

    def collect(self) -> dict[str, float]:
        if not self._loaded:
            return {}
        now = time.monotonic_ns()
        elapsed_s = max((now - self._last_ns) / 1e9, 1e-3)
        self._last_ns = now
        jobs = self._jobs() if self._jobs is not None else {}
        out: dict[str, float] = {}
        loaded = dict(self._loaded)
        if (c := loaded.get("block")) is not None:
            out.update(block_metrics(snapshot.read_block(c), elapsed_s, self._names, self._seen_devs))
        if (c := loaded.get("sched")) is not None:
            tids = {job: self._tids(pids) for job, pids in jobs.items() if pids}
            mains = {job: pids[0] for job, pids in jobs.items() if pids}
            watch = set(mains.values()).union(*tids.values())
            rq, off = snapshot.read_sched(c, watch)
            out.update(runq_metrics(rq, tids, self._tid_hists))
            self._cgroups = CgroupReading(t=time.time(), elapsed_s=elapsed_s, counts=rq.cgroups)
            out.update(offcpu_metrics(off, elapsed_s, mains, self._carry, time.monotonic_ns()))
        if (c := loaded.get("vmscan")) is not None:
            out.update(vmscan_metrics(snapshot.read_vmscan(c), elapsed_s))
        if (c := loaded.get("writeback")) is not None:
            out.update(writeback_metrics(snapshot.read_writeback(c), elapsed_s, self._hz))
        if (c := loaded.get("filemap")) is not None:
            out.update(filemap_metrics(snapshot.read_filemap(c), elapsed_s))
        return out

    def cgroups(self) -> CgroupReading | None:
        """Per-cgroup counts of the last collect (None before one, or without the sched collector)."""
        return self._cgroups

    def _tids(self, pids: list[int]) -> set[int]:
        """Threads of the given processes (a process that exited contributes none)."""
        out: set[int] = set()
        for pid in pids:
            out.update(int(t) for t in self._fs.listdir(f"/proc/{pid}/task") if t.isdigit())
        return out

    def drops(self) -> dict[str, int]:
        """Events lost to full maps since start, per collector."""
        out = dict(self._drops)
        for name, c in list(self._loaded.items()):
            out[name] = c.drops()
        return out

    def collector_status(self) -> dict[str, SourceStatus]:
        return dict(self._status)
