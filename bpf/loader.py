"""Loads the tracepoint programs with bcc, after probing tracefs for what each one needs.

Each collector is one `*.bpf.c` file compiled into its own BPF object, so a
tracepoint missing on this kernel disables that collector alone. Features are
probed from tracefs (event present, fields present), never from a version.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import ctypes.util
import gzip
import os
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from bpf import memory
from core.hostfs import HostFS

PROGRAM_DIR = Path(__file__).resolve().parent
TRACEFS_ROOTS = ("/sys/kernel/tracing", "/sys/kernel/debug/tracing")


class LoadError(Exception):
    """A collector could not be compiled or attached; the message is one line."""


@dataclass(frozen=True)
class Tracepoint:
    category: str
    event: str
    fields: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return f"{self.category}:{self.event}"


@dataclass(frozen=True)
class Feature:
    """Optional part of a program, compiled in (`-D<macro>`) only when all its tracepoints exist."""

    macro: str
    tracepoints: tuple[Tracepoint, ...]


@dataclass(frozen=True)
class CollectorSpec:
    name: str
    program: str
    tracepoints: tuple[Tracepoint, ...]
    optional: tuple[Feature, ...] = ()
    # A macro that builds a plainer program, compiled in when the first build does not
    # load (an older kernel's verifier refusing something): the collector stays live.
    fallback: str | None = None
    fallback_means: str = ""
    # The counting maps, which a reload carries from the old instance to the new one:
    # per-CPU arrays of running totals (read as deltas) and per-CPU hashes drained each read.
    arrays: tuple[str, ...] = ()
    drained: tuple[str, ...] = ()
    # The hot-path tracepoints, which a duty cycle detaches while the host is healthy and
    # attaches for a span (the program's `gate`, common.h); the others stay attached.
    hot: tuple[str, ...] = ()
    # Maps of starts that an earlier span may have left behind, emptied before a span opens.
    stale: tuple[str, ...] = ()

    @property
    def path(self) -> Path:
        return PROGRAM_DIR / self.program

    @property
    def duty_cycled(self) -> bool:
        return bool(self.hot)


_TP = Tracepoint
COLLECTORS: dict[str, CollectorSpec] = {
    s.name: s
    for s in (
        CollectorSpec(
            "block",
            "block.bpf.c",
            (
                _TP("block", "block_rq_issue", ("dev", "sector", "rwbs")),
                _TP("block", "block_rq_complete", ("dev", "sector", "nr_sector", "rwbs")),
            ),
            fallback="NO_ATOMICS",
            fallback_means="request starts in a hash (the kernel refused BPF atomics): slower, same figures",
            drained=("lat", "stats"),
            hot=("block:block_rq_issue", "block:block_rq_complete"),
            stale=("start",),
        ),
        # One program per hot tracepoint: run-queue latency, blocked time, switches and migrations.
        CollectorSpec(
            "sched",
            "sched.bpf.c",
            (
                _TP("sched", "sched_wakeup", ("pid",)),
                _TP("sched", "sched_wakeup_new", ("pid",)),
                _TP("sched", "sched_switch", ("prev_pid", "prev_state", "next_pid")),
                _TP("sched", "sched_migrate_task", ()),
                _TP("sched", "sched_process_exit", ("pid",)),
                _TP("sched", "sched_process_free", ("pid",)),
            ),
            arrays=("hist", "counters"),
            drained=("cgroups",),
            # Exits and frees are rare and stay attached: entries of threads that end while
            # the others are detached are still released.
            hot=(
                "sched:sched_wakeup",
                "sched:sched_wakeup_new",
                "sched:sched_switch",
                "sched:sched_migrate_task",
            ),
        ),
        CollectorSpec(
            "vmscan",
            "vmscan.bpf.c",
            (
                _TP("vmscan", "mm_vmscan_direct_reclaim_begin", ()),
                _TP("vmscan", "mm_vmscan_direct_reclaim_end", ()),
                _TP("vmscan", "mm_vmscan_wakeup_kswapd", ()),
            ),
            (
                Feature(
                    "HAVE_MEMCG_RECLAIM",
                    (
                        _TP("vmscan", "mm_vmscan_memcg_reclaim_begin", ()),
                        _TP("vmscan", "mm_vmscan_memcg_reclaim_end", ()),
                    ),
                ),
                Feature(
                    "HAVE_NODE_RECLAIM",
                    (
                        _TP("vmscan", "mm_vmscan_node_reclaim_begin", ()),
                        _TP("vmscan", "mm_vmscan_node_reclaim_end", ()),
                    ),
                ),
            ),
            arrays=("totals",),
        ),
        CollectorSpec(
            "writeback",
            "writeback.bpf.c",
            (_TP("writeback", "balance_dirty_pages", ("pause",)),),
            arrays=("totals",),
        ),
        CollectorSpec(
            "filemap",
            "filemap.bpf.c",
            (_TP("filemap", "mm_filemap_add_to_page_cache", ("order",)),),
            arrays=("misses",),
        ),
    )
}

_FIELD_RX = re.compile(r"field:[^;]*?\b(\w+)(?:\[\d*\])?;")


def find_tracefs(fs: HostFS) -> str | None:
    """The tracefs mount that lists events, or None."""
    for root in TRACEFS_ROOTS:
        if fs.exists(f"{root}/events"):
            return root
    return None


def format_fields(fs: HostFS, tracefs: str, tp: Tracepoint) -> set[str] | None:
    """Field names of a tracepoint's format file; None when the event does not exist."""
    fmt = f"{tracefs}/events/{tp.category}/{tp.event}/format"
    try:
        text = fs.read_text(fmt)
    except OSError:
        return None
    return set(_FIELD_RX.findall(text))


def probe(spec: CollectorSpec, fs: HostFS, tracefs: str) -> str | None:
    """Why `spec` cannot run on this kernel, or None when every tracepoint and field it reads exists."""
    for tp in spec.tracepoints:
        fields = format_fields(fs, tracefs, tp)
        if fields is None:
            return f"tracepoint {tp.id} not in this kernel"
        missing = [f for f in tp.fields if f not in fields]
        if missing:
            return f"tracepoint {tp.id} lacks field {', '.join(missing)}"
    return None


def probe_features(spec: CollectorSpec, fs: HostFS, tracefs: str) -> frozenset[str]:
    """Macros of the optional parts of `spec` whose tracepoints and fields this kernel has."""
    out: set[str] = set()
    for feat in spec.optional:
        if all(
            (fields := format_fields(fs, tracefs, tp)) is not None and set(tp.fields) <= fields
            for tp in feat.tracepoints
        ):
            out.add(feat.macro)
    return frozenset(out)


def headers_reason(fs: HostFS, release: str) -> str | None:
    """Why bcc would find no kernel headers, or None when it can."""
    if fs.exists(f"/lib/modules/{release}/build/include") or fs.exists("/sys/kernel/kheaders.tar.xz"):
        return None
    return f"no kernel headers for {release}: run `make bootstrap` as root (links generic headers)"


@dataclass
class Collector:
    """One loaded BPF object. Arrays are read as deltas of their running totals."""

    name: str
    bpf: Any
    features: frozenset[str] = frozenset()  # optional parts compiled in (Feature.macro)
    _prev: dict[str, list[int]] = field(default_factory=dict)
    # What a replaced instance counted after its last read, added to this one's next read.
    _carried: dict[str, list[int]] = field(default_factory=dict)
    _carried_items: dict[str, list[tuple[Any, Any]]] = field(default_factory=dict)
    # Hot-path tracepoints detached now (CollectorSpec.hot); bcc attached all of them at load.
    _detached: set[str] = field(default_factory=set)
    # Held while tracepoints are attached or detached and at close: a detach runs off the
    # collecting thread and must not meet a close of the same object. Reentrant, so a close
    # from a signal handler in the middle of an attach returns (the attach then stops).
    _attach_lock: threading.RLock = field(default_factory=threading.RLock)
    _tables: dict[str, Any] = field(default_factory=dict)

    def table(self, name: str) -> Any:
        # bcc's get_table builds a new table object each call (type descriptions decoded from
        # JSON, the possible CPUs read from sysfs): one per map, for the object's life.
        t = self._tables.get(name)
        if t is None:
            t = self._tables[name] = self.bpf.get_table(name.encode())
        return t

    def array_totals(self, name: str) -> list[int]:
        """Sum over CPUs of every element of a per-CPU array (running totals)."""
        t = self.table(name)
        return [int(sum(t[t.Key(i)])) for i in range(len(t))]

    def array_delta(self, name: str) -> list[int]:
        """What each element of a per-CPU array gained since the previous call.

        Arrays are never cleared: zeroing an element races with an increment
        between the read and the write, while differences of totals lose nothing.
        """
        now = self.array_totals(name)
        prev = self._prev.get(name, [0] * len(now))
        self._prev[name] = now
        delta = [a - b for a, b in zip(now, prev, strict=True)]
        carried = self._carried.pop(name, None)
        return delta if carried is None else [a + b for a, b in zip(delta, carried, strict=True)]

    def drain_hash(self, name: str) -> list[tuple[Any, Any]]:
        """Read and delete every entry of a hash map (per-CPU leaves stay per CPU)."""
        carried = self._carried_items.pop(name, [])
        t = self.table(name)
        try:
            # One syscall that reads and deletes each entry atomically: nothing
            # added between the read and the delete can be lost.
            return carried + list(t.items_lookup_and_delete_batch())
        except Exception:
            items = list(t.items())
            for k, _ in items:
                with contextlib.suppress(KeyError):
                    del t[k]
            return carried + items

    def lookup(self, name: str, key: int) -> Any | None:
        """The value under a u32 key of a shared hash map or an array, or None."""
        t = self.table(name)
        try:
            return t[t.Key(key)]
        except KeyError:
            return None

    def drops(self) -> int:
        return sum(self.array_totals("drops"))

    def programs(self) -> dict[str, int]:
        """The descriptor of each loaded program, by the event of its tracepoint.

        bcc names a TRACEPOINT_PROBE(category, event) function `tracepoint__category__event`
        and keeps its descriptor in `funcs` until cleanup.
        """
        out: dict[str, int] = {}
        for name, fn in dict(getattr(self.bpf, "funcs", None) or {}).items():
            text = name.decode() if isinstance(name, bytes) else str(name)
            if text.startswith("tracepoint__"):
                out[text.split("__", 2)[-1]] = int(fn.fd)
        return out

    def layout_differs(self, old: Collector) -> str | None:
        """Why `old`'s counting maps cannot be carried into this instance's, or None when they can."""
        spec = COLLECTORS[self.name]
        for name in (*spec.arrays, *spec.drained):
            a, b = _layout(old.table(name)), _layout(self.table(name))
            if a != b:
                return f"map {name} changed layout ({a} -> {b})"
        return None

    def take_over(self, old: Collector) -> None:
        """Carry into this instance what `old` counted since its last read, and no more.

        Both instances are attached and count the same events; this one's counts
        so far were counted by `old` too. So each counting map of `old` is read
        one last time and this instance's is read right after it, element by
        element, and taken as this instance's baseline: the next read gets old's
        last counts plus what this instance counted after its baseline. An event
        that lands between the two reads of one element (microseconds) is counted
        by neither, never by both.
        """
        spec = COLLECTORS[self.name]
        for name in spec.arrays:
            ot, nt = old.table(name), self.table(name)
            old_now: list[int] = []
            new_now: list[int] = []
            for i in range(len(ot)):
                old_now.append(int(sum(ot[ot.Key(i)])))
                new_now.append(int(sum(nt[nt.Key(i)])))
            prev = old._prev.get(name, [0] * len(old_now))
            before = old._carried.get(name, [0] * len(old_now))
            self._carried[name] = [a - b + c for a, b, c in zip(old_now, prev, before, strict=True)]
            self._prev[name] = new_now
        for name in spec.drained:
            items = old.drain_hash(name)
            self.drain_hash(name)
            self._carried_items[name] = items

    # -- duty cycle ------------------------------------------------------

    @property
    def hot_attached(self) -> bool:
        return not self._detached

    def set_gate(self, open_ns: int, shut_ns: int = 0) -> None:
        """Measure from `open_ns` until `shut_ns` (0: no end), monotonic ns (common.h, struct span)."""
        t = self.table("gate")
        t[t.Key(0)] = t.Leaf(open_ns, shut_ns)

    def gate(self) -> tuple[int, int]:
        t = self.table("gate")
        leaf = t[t.Key(0)]
        return int(leaf.open_ns), int(leaf.shut_ns)

    def empty_stale(self) -> None:
        """Empty the maps of starts an earlier span left behind; call while the hot path is detached."""
        for name in COLLECTORS[self.name].stale:
            self.drain_hash(name)

    def attach_hot(self) -> None:
        """Attach the hot-path tracepoints that are detached (tens of microseconds each)."""
        with self._attach_lock:
            if self.bpf is None:
                return
            for tp in sorted(self._detached):
                if self.bpf is None:
                    return
                self.bpf.attach_tracepoint(tp=tp.encode(), fn_name=_fn_name(tp))
                self._detached.discard(tp)

    def detach_hot(self) -> None:
        """Detach the hot-path tracepoints that are attached.

        Each detach waits for an RCU grace period (~30 ms here) and uses almost no
        CPU; they run side by side, so they share their waits.
        """
        with self._attach_lock:
            if self.bpf is None:
                return
            bpf = self.bpf
            todo = [tp for tp in COLLECTORS[self.name].hot if tp not in self._detached]
            if not todo:
                return

            def one(tp: str) -> None:
                bpf.detach_tracepoint(tp=tp.encode())

            failed: list[BaseException] = []
            with ThreadPoolExecutor(max_workers=len(todo), thread_name_prefix="idletune-detach") as pool:
                for tp, fut in [(tp, pool.submit(one, tp)) for tp in todo]:
                    err = fut.exception()
                    if err is None:
                        self._detached.add(tp)
                    else:
                        failed.append(err)
            if failed:
                raise LoadError(f"detaching {self.name} failed: {failed[0]}")

    def close(self) -> None:
        with self._attach_lock:
            bpf, self.bpf = self.bpf, None
            self._tables.clear()
        if bpf is not None:
            bpf.cleanup()
            # bcc registers cleanup at exit, which keeps every closed object alive:
            # a daemon that reloads its collectors would pile them up.
            with contextlib.suppress(Exception):
                atexit.unregister(bpf.cleanup)


def _fn_name(tp: str) -> bytes:
    """The function bcc's TRACEPOINT_PROBE(category, event) defines."""
    category, event = tp.split(":")
    return f"tracepoint__{category}__{event}".encode()


def _layout(t: Any) -> tuple[int, int | None, int | None]:
    """Capacity, key size and value size of a map (sizes None where the table has no ctypes types)."""

    def size(typ: Any) -> int | None:
        try:
            return ctypes.sizeof(typ)
        except TypeError:
            return None

    # A hash's len() is what it holds now; its capacity is max_entries.
    entries = getattr(t, "max_entries", None)
    capacity = int(len(t) if entries is None else entries)
    return capacity, size(getattr(t, "Key", None)), size(getattr(t, "Leaf", None))


def load(spec: CollectorSpec, bcc: ModuleType, with_features: frozenset[str] = frozenset()) -> Collector:
    """Compile and attach one collector with optional parts, then with its fallback if that fails.

    Raises LoadError with the first failure's one-line reason when neither loads.
    """
    try:
        return _load(spec, bcc, with_features)
    except LoadError as first:
        if spec.fallback is None:
            raise
        try:
            return _load(spec, bcc, with_features | {spec.fallback})
        except LoadError:
            raise first from None


def cflags(with_features: frozenset[str] = frozenset()) -> list[str]:
    """The compiler flags of a collector program: its folder for common.h, then its macros."""
    return [f"-I{PROGRAM_DIR}", *(f"-D{m}" for m in sorted(with_features))]


def _load(spec: CollectorSpec, bcc: ModuleType, with_features: frozenset[str]) -> Collector:
    try:
        bpf = bcc.BPF(src_file=str(spec.path).encode(), cflags=cflags(with_features))
    except Exception as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise LoadError(f"compile/attach of {spec.program} failed: {first}") from e
    return Collector(spec.name, bpf, with_features)


def release_compiler_memory() -> None:
    """Return the compiler's freed heap to the OS (LLVM leaves ~40 MB behind), and drop the
    pages of its code the compile left resident (~70 MB more; bpf/memory.py)."""
    libc_name = ctypes.util.find_library("c")
    if not libc_name:
        return
    libc = ctypes.CDLL(libc_name)
    trim = getattr(libc, "malloc_trim", None)
    if trim is not None:
        trim(0)
    memory.drop_compiler_pages()


_COMMON_HZ = (100, 250, 300, 1000)


def kernel_hz(fs: HostFS, release: str | None = None) -> tuple[int, str]:
    """The kernel's HZ (jiffies per second) and where it came from.

    CONFIG_HZ from /proc/config.gz or /boot/config-<release>; failing both, it is
    measured from the jiffies timestamp in /proc/schedstat against the
    monotonic clock and rounded to the nearest HZ the kernel offers.
    """
    release = release or os.uname().release
    for path in ("/proc/config.gz", f"/boot/config-{release}"):
        try:
            raw = fs.path(path).read_bytes()
            text = gzip.decompress(raw).decode() if path.endswith(".gz") else raw.decode()
        except (OSError, EOFError, gzip.BadGzipFile, UnicodeDecodeError):
            continue
        m = re.search(r"^CONFIG_HZ=(\d+)$", text, re.MULTILINE)
        if m:
            return int(m.group(1)), path
    measured = _measure_hz(fs)
    if measured is not None:
        return measured, "measured from /proc/schedstat jiffies"
    return 250, "assumed (no kernel config, no /proc/schedstat)"


def _schedstat_jiffies(fs: HostFS) -> int | None:
    try:
        text = fs.read_text("/proc/schedstat")
    except OSError:
        return None
    m = re.search(r"^timestamp (\d+)$", text, re.MULTILINE)
    return int(m.group(1)) if m else None


def _measure_hz(fs: HostFS, span_s: float = 0.2) -> int | None:
    j0, t0 = _schedstat_jiffies(fs), time.monotonic()
    if j0 is None:
        return None
    time.sleep(span_s)
    j1, t1 = _schedstat_jiffies(fs), time.monotonic()
    if j1 is None or t1 <= t0:
        return None
    rate = (j1 - j0) / (t1 - t0)
    return min(_COMMON_HZ, key=lambda hz: abs(hz - rate))
