"""The live eBPF source: block latency, run-queue latency, blocked time, reclaim, throttling, misses.

The hot-path collectors (scheduler, block) can measure in spans (open_span,
end_span) while the others run all the time; see agent/sources/bpf_spans.py.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import threading
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
from agent.sources.bpf_spans import Spans
from bpf import loader, snapshot
from bpf.snapshot import CgroupCounts, OffcpuRaw
from bpf.stats import BpfCalls, CostLedger, ProgramCost, RunTimeStats
from core.hostfs import HostFS
from core.sample import SourceStatus

Jobs = Callable[[], dict[str, list[int]]]

# How long a reload leaves both instances attached before the new one takes over:
# what began before the new one was attached (a block request, a run-queue wait,
# a reclaim) ends meanwhile and is measured by the old one, which saw it begin.
SETTLE_S = 0.25


@dataclass(frozen=True)
class Reloaded:
    """What a reload did to one collector: `ok` when a new instance took over; `reason` is one line."""

    collector: str
    ok: bool
    reason: str


@dataclass(frozen=True)
class CgroupReading:
    """Every cgroup's scheduling counts over the last measured interval, and when it ended (wall time).

    `elapsed_s` is the time measured: the interval, or the part of it a span of the hot path covered.
    """

    t: float
    elapsed_s: float
    counts: dict[int, CgroupCounts]


@dataclass(frozen=True)
class Watch:
    """The threads the scheduler collector reads: each job's, and each job's main thread."""

    by_job: dict[str, set[int]]
    mains: dict[str, int]

    @property
    def tids(self) -> set[int]:
        return set(self.mains.values()).union(*self.by_job.values())


def _live_status(spec: loader.CollectorSpec, c: loader.Collector) -> SourceStatus:
    lacking = [f.macro for f in spec.optional if f.macro not in c.features]
    # Live either way; what an optional part would have measured is said, not hidden.
    notes = [f"without {', '.join(lacking)} (tracepoints not in this kernel)"] if lacking else []
    if spec.fallback is not None and spec.fallback in c.features:
        notes.append(f"{spec.fallback}: {spec.fallback_means}")
    return SourceStatus(live=True, reason="; ".join(notes))


class BpfSource:
    """Source protocol over the tracepoint collectors of `bpf/`.

    Collectors whose tracepoints this kernel lacks, or that fail to compile,
    are disabled one by one; the source is live while any collector runs.
    reload() swaps the running programs for fresh builds while collecting.

    The hot-path collectors (scheduler, block: CollectorSpec.hot) start
    measuring; end_span() detaches their hot tracepoints at the next collect and
    open_span() attaches them again, the same loaded programs and maps, for a
    span. A collect gives their figures over the part of its interval a span
    covered: rates per second of that time, percentiles of what it measured,
    nothing when no span covered any of it. coverage() says which share.
    """

    name = "bpf"

    def __init__(
        self,
        fs: HostFS | None = None,
        jobs: Jobs | None = None,
        collectors: Iterable[str] | None = None,
        *,
        run_time_stats: bool = True,
        bpf_calls: BpfCalls | None = None,
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
        self._drops_before: dict[str, int] = {}  # drops of instances a reload replaced
        # Held while maps are read or instances swapped: a reload may come from another
        # thread. Reentrant, so a close from a signal handler in the middle of one returns.
        self._lock = threading.RLock()
        self._reloading = threading.Lock()
        # The hot path's spans. Held while a span opens or ends, a collect reads, or a hot
        # collector is reloaded; taken before _lock, never inside it.
        self._hot_lock = threading.Lock()
        self._spans = Spans()
        self._closing = False  # the next collect ends the span
        self._detaching: threading.Thread | None = None
        self._coverage: dict[str, float] = {}
        # What the programs cost: the kernel counts it while run_time holds statistics on.
        self._measure_run_time = run_time_stats
        self._run_time = RunTimeStats(self._fs, bpf_calls)
        self._costs = CostLedger()

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
        if self._hot():
            self._spans.loaded(self._last_ns)
        live = sorted(self._loaded)
        if live and self._measure_run_time:
            self._run_time.start()
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
        self._status[name] = _live_status(spec, self._loaded[name])

    def close(self) -> None:
        """Detach every collector; idempotent, and safe after an interrupted start or collect.

        Takes no lock a collect or a span change holds across a wait, so a close from a
        signal handler returns; a detach under way finishes first (loader.Collector.close).
        """
        with self._lock:
            while self._loaded:
                # Pop before cleaning up so a second close (say, from a signal handler
                # that fires meanwhile) never detaches the same object twice.
                name, c = self._loaded.popitem()
                with contextlib.suppress(Exception):
                    self._drops[name] = self._drops_before.get(name, 0) + c.drops()
                self._see_costs(name, c)
                c.close()
                self._status[name] = SourceStatus(live=False, reason="closed")
            self._costs.settle(set())
            self._run_time.close()

    # -- reload ------------------------------------------------------------

    def reload(self, settle_s: float = SETTLE_S) -> tuple[bool, str]:
        """Replace every running collector with a fresh build of its program, counts carried over.

        True when each one was replaced; the line names what was done to each.

        The next collect covers its whole interval across the swap. What it
        holds, exactly and where not:
        - Event counts and histograms (switches, migrations, block ops and
          bytes, latency, reclaim, throttling, misses): each event once; one
          landing between the two reads of a map element at the swap
          (microseconds apart) is counted by neither (loader.Collector.take_over).
        - Watched threads' run-queue histograms and blocked time: carried
          thread by thread; a sleep in progress at the swap goes on being
          counted, up to the wakeup the new instance sees (BlockedCarry).
        - Not measured: a duration that began before the new instance was
          attached and is still going at the swap, `settle_s` later (a block
          request, a run-queue wait, a reclaim): the new instance never saw it
          begin. Its block request still counts in ops and bytes.
        - Per-cgroup counts (cgroups()): per thread, what it had not yet
          flushed to its cgroup at the swap (normally under 8 ms of its
          activity, sched.bpf.c FLUSH_NS) may be counted twice or not at all,
          and the time on CPU of a thread that ran through the whole overlap
          without a switch is lost.
        """
        done = self.reload_each(settle_s)
        if not done:
            return True, "no collector running"
        replaced = [r.collector for r in done if r.ok]
        parts = [f"{', '.join(replaced)} reloaded"] if replaced else []
        parts += [f"{r.collector} {r.reason}" for r in done if not r.ok]
        return all(r.ok for r in done), "; ".join(parts)

    def reload_each(self, settle_s: float = SETTLE_S) -> list[Reloaded]:
        """Reload each running collector in turn (see reload); one result per collector.

        Collectors that are not running are left alone: what kept them from
        starting is in collector_status().
        """
        if not self._reloading.acquire(blocking=False):
            return [Reloaded(n, False, "not reloaded: a reload is already under way") for n in self._loaded]
        try:
            names = list(self._loaded)
            if not names:
                return []
            try:
                bcc = importlib.import_module("bcc")
            except Exception as e:
                why = f"kept running: bcc not importable ({type(e).__name__})"
                return [Reloaded(n, False, why) for n in names]
            tracefs = loader.find_tracefs(self._fs)
            if tracefs is None:
                return [Reloaded(n, False, "kept running: tracefs not mounted") for n in names]
            done = [self._reload_one(n, bcc, tracefs, settle_s) for n in names]
            loader.release_compiler_memory()
            return done
        finally:
            self._reloading.release()

    def _reload_one(self, name: str, bcc: ModuleType, tracefs: str, settle_s: float) -> Reloaded:
        """Load and attach a new instance, let both run `settle_s`, then swap them.

        The new instance is attached before the old one is read for the last
        time and detached, so no event goes unseen; loader.Collector.take_over
        says how nothing is counted twice meanwhile. When the new instance
        cannot be built, the old one keeps running.

        A hot collector's new instance measures in the old one's span: it takes
        the old gate at its load and again at the swap (a span may have opened
        or ended meanwhile; what it counted outside the span is its baseline,
        so left out), and is detached after the swap when no span is open.
        """
        spec = loader.COLLECTORS[name]
        missing = loader.probe(spec, self._fs, tracefs)
        if missing is not None:
            return Reloaded(name, False, f"kept running: {missing}")
        feats = loader.probe_features(spec, self._fs, tracefs)
        try:
            new = loader.load(spec, bcc, feats)
        except loader.LoadError as e:
            return Reloaded(name, False, f"kept running: {e}")
        retired = new  # whichever instance is left over: the new one until the swap
        try:
            if spec.duty_cycled and (was := self._loaded.get(name)) is not None:
                new.set_gate(*was.gate())
            time.sleep(settle_s)
            watch = self._watch() if name == "sched" else None
            # Not across the build and the settle: a collect would wait seconds for them.
            with self._hot_lock if spec.duty_cycled else contextlib.nullcontext():
                with self._lock:
                    old = self._loaded.get(name)
                    if old is None:
                        return Reloaded(name, False, "not reloaded: the source was closed meanwhile")
                    differs = new.layout_differs(old)
                    if differs is not None:
                        why = f"kept running: the new build's {differs}; restart idletune"
                        return Reloaded(name, False, why)
                    if spec.duty_cycled:
                        new.set_gate(*old.gate())
                    self._swap(name, old, new, watch)
                    self._loaded[name] = new
                    self._status[name] = _live_status(spec, new)
                    retired = old
                if spec.duty_cycled and not self._spans.is_open:
                    try:
                        new.detach_hot()
                    except loader.LoadError as e:
                        self._status[name] = SourceStatus(live=True, reason=f"{e}; it stays attached")
            return Reloaded(name, True, "reloaded")
        finally:
            # Outside the lock: detaching waits for RCU grace periods (tens of ms per
            # tracepoint). The old instance counts on until then, into maps no one reads.
            retired.close()

    def _swap(self, name: str, old: loader.Collector, new: loader.Collector, watch: Watch | None) -> None:
        """Carry what `old` counted since the last collect into `new`'s next one."""
        with contextlib.suppress(Exception):
            self._drops_before[name] = self._drops_before.get(name, 0) + old.drops()
        self._see_costs(name, old)  # its last totals, kept when the next reading retires it
        new.take_over(old)
        if watch is None:
            return
        # The per-thread running totals of the watched threads, read from both.
        cut_ns = time.monotonic_ns()
        was, now = snapshot.read_tasks([old, new], watch.tids)
        self._tid_hists.handover(was.hist_total, now.hist_total)
        if self._spans.is_open:
            self._carry.handover(
                snapshot.offcpu_of(was), snapshot.offcpu_of(now), watch.mains.values(), cut_ns
            )
        else:
            # Between spans nothing is counted: a sleep in progress was counted up to the span's end.
            self._carry.rebase(now.blocked_total_ns)

    # -- the hot path's spans ------------------------------------------------

    def _hot(self) -> list[loader.Collector]:
        return [c for name, c in self._loaded.items() if loader.COLLECTORS[name].duty_cycled]

    def hot_collectors(self) -> list[str]:
        """The running collectors that measure in spans (scheduler, block)."""
        with self._lock:
            return [c.name for c in self._hot()]

    @property
    def span_open(self) -> bool:
        """Whether the hot path measures now (a span ending at the next collect included)."""
        return self._spans.is_open

    def open_span(self) -> bool:
        """Measure the hot path from now on: attach its tracepoints if they are detached.

        Cancels an end_span() not yet carried out. Returns quickly (tens of
        microseconds per tracepoint), once a detach still under way is done.
        True when the hot path measures; False when no hot collector runs.
        """
        with self._hot_lock:
            self._closing = False
            if self._spans.is_open:
                return True
            self.wait_detached()
            with self._lock:
                hot = self._hot()
                if not hot:
                    return False
                for c in list(hot):
                    c.empty_stale()  # while detached: no start is added meanwhile
                    try:
                        # The gate is still shut at the last span's end: nothing counts until it opens.
                        c.attach_hot()
                    except Exception as e:  # bcc raises bare Exception; the kernel took it at load
                        self._drop(c, f"attaching again failed: {str(e).strip() or type(e).__name__}")
                        hot.remove(c)
                if not hot:
                    return False
                opened = time.monotonic_ns()
                for c in hot:
                    c.set_gate(opened)
                self._spans.open(opened)
            return True

    def _drop(self, c: loader.Collector, reason: str) -> None:
        """Stop a collector that cannot go on: half attached, its figures would be wrong."""
        self._loaded.pop(c.name, None)
        with contextlib.suppress(Exception):
            self._drops[c.name] = self._drops_before.get(c.name, 0) + c.drops()
        c.close()
        self._status[c.name] = SourceStatus(live=False, reason=reason.splitlines()[0])

    def end_span(self) -> None:
        """End the hot path's span at the next collect, which shuts the gates before it reads the
        maps and then detaches the hot tracepoints off the collecting thread."""
        with self._hot_lock:
            self._closing = self._spans.is_open

    def gates(self) -> dict[str, tuple[int, int]]:
        """Each hot collector's gate now: the span it measures, (open_ns, shut_ns), monotonic ns;
        shut 0 while it is open, open 0 while it measures from its load."""
        with self._lock:
            return {c.name: c.gate() for c in self._hot()}

    def coverage(self) -> dict[str, float]:
        """Metric -> share of the last collect's interval it was measured over, for the hot-path
        figures measured over less than the whole of it."""
        return dict(self._coverage)

    def _shut(self, now: int) -> list[loader.Collector]:
        """Shut the gates at `now` (the collect's reading time); the collectors to detach."""
        hot = self._hot()
        for c in hot:
            c.set_gate(self._spans.gate_open, now)
        self._spans.shut(now)
        self._closing = False
        return hot

    def _detach_later(self, hot: list[loader.Collector]) -> None:
        # Detaching waits for RCU grace periods (~30 ms here) and costs almost no CPU: off
        # the collecting thread. The gates are shut, so the programs count nothing meanwhile.
        def run() -> None:
            for c in hot:
                try:
                    c.detach_hot()
                except loader.LoadError as e:
                    self._status[c.name] = SourceStatus(live=True, reason=f"{e}; it stays attached")

        self._detaching = threading.Thread(target=run, name="idletune-bpf-detach", daemon=True)
        self._detaching.start()

    def wait_detached(self) -> None:
        """Return once a detach under way (after a span's end) is done."""
        t, self._detaching = self._detaching, None
        if t is not None:
            t.join()

    # -- reading -----------------------------------------------------------

    def collect(self) -> dict[str, float]:
        watch = self._watch() if self._loaded else None
        with self._hot_lock:
            with self._lock:
                out, shut = self._collect(watch)
            if shut:
                self._detach_later(shut)
        return out

    def _collect(self, watch: Watch | None) -> tuple[dict[str, float], list[loader.Collector]]:
        if not self._loaded:
            return {}, []
        now = time.monotonic_ns()
        shut = self._shut(now) if self._closing and self._spans.is_open else []
        elapsed_ns = now - self._last_ns
        elapsed_s = max(elapsed_ns, 1_000_000) / 1e9
        measured_ns = self._spans.measured_ns(self._last_ns, now)
        measured_s = max(measured_ns, 1_000_000) / 1e9
        # Nothing measured: the hot collectors are not read, and what they may hold (events
        # microseconds from the gate's edges) stays for the next span's first collect.
        covered = measured_ns > 0 or self._spans.is_open
        self._last_ns = now
        out: dict[str, float] = {}
        hot: dict[str, float] = {}
        loaded = dict(self._loaded)
        if (c := loaded.get("block")) is not None and covered:
            hot.update(block_metrics(snapshot.read_block(c), measured_s, self._names, self._seen_devs))
        if (c := loaded.get("sched")) is not None and covered:
            watch = watch or Watch({}, {})
            rq, off = snapshot.read_sched(c, watch.tids)
            hot.update(runq_metrics(rq, watch.by_job, self._tid_hists))
            self._cgroups = CgroupReading(t=time.time(), elapsed_s=measured_s, counts=rq.cgroups)
            self._asleep_since_opening(off, watch.mains)
            until = now if shut else time.monotonic_ns()
            hot.update(offcpu_metrics(off, measured_s, watch.mains, self._carry, until))
        if shut:
            self._carry.end_span()
        share = min(measured_ns / elapsed_ns, 1.0) if elapsed_ns > 0 else 1.0
        self._coverage = {k: round(share, 4) for k in hot} if share < 1.0 else {}
        out.update(hot)
        if (c := loaded.get("vmscan")) is not None:
            out.update(vmscan_metrics(snapshot.read_vmscan(c), elapsed_s))
        if (c := loaded.get("writeback")) is not None:
            out.update(writeback_metrics(snapshot.read_writeback(c), elapsed_s, self._hz))
        if (c := loaded.get("filemap")) is not None:
            out.update(filemap_metrics(snapshot.read_filemap(c), elapsed_s))
        return out, shut

    def _asleep_since_opening(self, off: OffcpuRaw, mains: dict[str, int]) -> None:
        """Main threads with no scheduler event since the span opened: their state then is their
        state now (anything else takes an event), which /proc tells; asleep, they slept since then."""
        opened = self._spans.gate_open
        if not opened:
            return
        for tid in mains.values():
            epoch = off.epoch_ns.get(tid)
            # No entry: a thread this instance never saw is counted from its first event, as
            # at load; a reload's sleep not seen begin is counted by BlockedCarry.
            if epoch is None or epoch == opened or self._carry.awaiting(tid):
                continue
            if self._sleeping(tid):
                off.sleeping_since_ns[tid] = opened
            else:
                off.sleeping_since_ns.pop(tid, None)

    def _sleeping(self, tid: int) -> bool:
        """Whether a thread is off CPU and not runnable now (/proc/<tid>/stat's state)."""
        try:
            text = self._fs.read_text(f"/proc/{tid}/stat")
        except OSError:
            return False
        rest = text[text.rfind(")") + 1 :].split()
        return bool(rest) and rest[0] not in ("R", "Z", "X")

    def cgroups(self) -> CgroupReading | None:
        """Per-cgroup counts of the last collect (None before one, or without the sched collector)."""
        return self._cgroups

    def _watch(self) -> Watch:
        """The threads of each job, read before taking the lock (it lists /proc)."""
        jobs = self._jobs() if self._jobs is not None else {}
        return Watch(
            by_job={job: self._tids(pids) for job, pids in jobs.items() if pids},
            mains={job: pids[0] for job, pids in jobs.items() if pids},
        )

    def _tids(self, pids: list[int]) -> set[int]:
        """Threads of the given processes (a process that exited contributes none)."""
        out: set[int] = set()
        for pid in pids:
            out.update(int(t) for t in self._fs.listdir(f"/proc/{pid}/task") if t.isdigit())
        return out

    def drops(self) -> dict[str, int]:
        """Events lost to full maps since start, per collector."""
        with self._lock:
            out = dict(self._drops)
            for name, c in self._loaded.items():
                out[name] = self._drops_before.get(name, 0) + c.drops()
            return out

    def collector_status(self) -> dict[str, SourceStatus]:
        return dict(self._status)

    # -- cost --------------------------------------------------------------

    def program_costs(self) -> dict[str, ProgramCost]:
        """Run time and runs of each program since start, by `collector/event`, across reloads.

        Zero while the kernel does not count (run_time_status says why).
        """
        with self._lock:
            running: set[int] = set()
            for name, c in self._loaded.items():
                running |= self._see_costs(name, c)
            self._costs.settle(running)
            return self._costs.totals()

    def run_time_status(self) -> tuple[bool, str]:
        """Whether the kernel counts the programs' run time, and how or why not (one line)."""
        if not self._measure_run_time:
            return False, "not measured: turned off (cost.bpf_stats: false)"
        return self._run_time.on, self._run_time.how

    def _see_costs(self, name: str, c: loader.Collector) -> set[int]:
        """Record the totals of each program of `c`; the kernel ids of those read."""
        seen: set[int] = set()
        try:
            fds = c.programs()
        except Exception:  # a collector closed meanwhile has no programs to read
            return seen
        for event, fd in fds.items():
            try:
                cost = self._run_time.calls.program_cost(fd)
            except OSError:
                continue
            self._costs.see(f"{name}/{event}", cost)
            seen.add(cost.id)
        return seen
