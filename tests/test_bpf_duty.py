"""The hot path on a duty cycle, with a fake bcc: spans open and end, gates, rates over the time
measured, the share of each interval, blocked time across spans, reloads between spans."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from agent.sources.bpf_source import BpfSource
from agent.sources.bpf_spans import Spans
from bpf.loader import COLLECTORS
from core.hostfs import HostFS
from tests.bpf_helpers import (
    NVME,
    FakeBcc,
    FakeBPF,
    FakeGate,
    FakeTable,
    block_maps,
    fake_host,
    sched_maps,
    tid_counts,
)

S = 10**9
T0 = 1000 * S
HOT_SCHED = set(COLLECTORS["sched"].hot)
HOT_BLOCK = set(COLLECTORS["block"].hot)


def task(tid: int, *, blocked: int = 0, slept: int = 0, epoch: int = 0) -> object:
    return SimpleNamespace(
        tid=tid, hist=tid_counts({}), blocked_ns=blocked, slept_ns=slept, born_ns=1, epoch=epoch
    )


def vmscan_maps() -> dict[str, FakeTable]:
    return {"totals": FakeTable(array=[[0, 0], [0, 0], [0, 0]]), "drops": FakeTable(array=[[0, 0]])}


@pytest.fixture
def host(tmp_path: Path) -> Path:
    return fake_host(tmp_path)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    now = [T0]
    monkeypatch.setattr(time, "monotonic_ns", lambda: now[0])
    return now


@pytest.fixture
def bcc(monkeypatch: pytest.MonkeyPatch) -> FakeBcc:
    fake = FakeBcc()
    fake.tables = {"block": block_maps(), "sched": sched_maps(), "vmscan": vmscan_maps()}
    monkeypatch.setitem(sys.modules, "bcc", fake)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    return fake


def started(host: Path, collectors: list[str] | None = None) -> BpfSource:
    src = BpfSource(
        HostFS(host), jobs=lambda: {"train": [42]}, collectors=collectors or ["block", "sched", "vmscan"]
    )
    assert src.start().live
    return src


def prog(bcc: FakeBcc, name: str) -> FakeBPF:
    return next(b for b in bcc.loaded if b.name == name and b.cleanups == 0)


def gate(b: FakeBPF) -> tuple[int, int]:
    g = b.tables["gate"]
    assert isinstance(g, FakeGate)
    return g.value.open_ns, g.value.shut_ns


def counted(bcc: FakeBcc, *, switches: int = 0, reads: int = 0, kswapd: int = 0) -> None:
    """Events the programs counted (inside a span, as the kernel's gate allows)."""
    prog(bcc, "sched").tables["counters"].array[0][0] += switches  # type: ignore[index]
    if reads:
        leaf = SimpleNamespace(read_ops=reads, write_ops=0, read_bytes=reads * 4096, write_bytes=0)
        prog(bcc, "block").tables["stats"].items.append((NVME, [leaf]))
        lat = SimpleNamespace(dev=NVME, slot=16)
        prog(bcc, "block").tables["lat"].items.append((lat, [reads]))
    prog(bcc, "vmscan").tables["totals"].array[2][0] += kswapd  # type: ignore[index]


def test_spans_cover_the_part_of_each_interval_they_measured() -> None:
    sp = Spans()
    sp.loaded(0)
    assert sp.measured_ns(0, 10) == 10
    sp.shut(15)
    assert sp.measured_ns(10, 20) == 5
    assert sp.measured_ns(20, 30) == 0
    sp.open(34)
    assert sp.gate_open == 34 and sp.is_open
    assert sp.measured_ns(30, 40) == 6
    sp.shut(50)
    assert sp.measured_ns(40, 50) == 10
    assert not sp.is_open and sp.measured_ns(50, 60) == 0
    with pytest.raises(ValueError):
        sp.shut(70)


def test_a_span_ends_at_a_collect_which_shuts_the_gates_then_detaches_the_hot_path(
    host: Path, bcc: FakeBcc, clock: list[int]
) -> None:
    src = started(host)
    assert src.span_open and src.hot_collectors() == ["block", "sched"]
    clock[0] += S
    counted(bcc, switches=1000, reads=10, kswapd=5)
    m = src.collect()
    assert m["sched.ctx_switches_per_s"] == 1000 and m["io.nvme0n1.read_iops"] == 10
    assert src.coverage() == {}  # measured the whole interval

    src.end_span()
    assert bcc.tp_log == []  # nothing happens until the collect
    clock[0] += S
    counted(bcc, switches=500, reads=4, kswapd=2)
    m = src.collect()
    src.wait_detached()
    # The gates were shut at the collect's time, before the maps were read; the span covered it all.
    assert gate(prog(bcc, "sched")) == (0, T0 + 2 * S) and gate(prog(bcc, "block")) == (0, T0 + 2 * S)
    assert m["sched.ctx_switches_per_s"] == 500 and m["io.nvme0n1.read_iops"] == 4
    detached = {(tp, b.name) for what, tp, b in bcc.tp_log if what == "detach"}
    assert detached == {(tp, "sched") for tp in HOT_SCHED} | {(tp, "block") for tp in HOT_BLOCK}
    assert not src.span_open

    # Between spans: no hot-path figure at all (procfs gives the disk's rates), the rest as ever.
    clock[0] += S
    counted(bcc, kswapd=3)
    m = src.collect()
    assert m["mem.kswapd_wakeups_per_s"] == 3
    assert not any(k.startswith(("sched.", "io.")) for k in m)
    assert src.coverage() == {}
    assert all(b.cleanups == 0 for b in bcc.loaded)  # the same programs, still loaded


def test_rates_are_over_the_time_measured_and_say_their_share(
    host: Path, bcc: FakeBcc, clock: list[int]
) -> None:
    src = started(host)
    clock[0] += S
    src.collect()
    src.end_span()
    clock[0] += S
    src.collect()
    src.wait_detached()
    bcc.tp_log.clear()

    # A trigger 1.5 s into a 2 s interval: the hot path is attached again, the gates open then.
    clock[0] += 3 * S // 2
    assert src.open_span()
    opened = clock[0]
    assert {(what, b.name) for what, _, b in bcc.tp_log} == {("attach", "sched"), ("attach", "block")}
    assert {tp for _, tp, _ in bcc.tp_log} == HOT_SCHED | HOT_BLOCK
    assert gate(prog(bcc, "sched")) == (opened, 0) and gate(prog(bcc, "block")) == (opened, 0)
    clock[0] += S // 2
    counted(bcc, switches=600, reads=40, kswapd=8)
    m = src.collect()
    assert m["sched.ctx_switches_per_s"] == 1200  # 600 in the half second measured
    assert m["io.nvme0n1.read_iops"] == 80
    assert m["io.nvme0n1.read_kbps"] == 80 * 4
    assert m["io.nvme0n1.avg_req_kb"] == 4.0
    assert 65.536 <= m["io.nvme0n1.lat_p99_us"] < 131.072  # percentiles of what was measured
    assert m["mem.kswapd_wakeups_per_s"] == 4  # always on: over the whole 2 s
    cov = src.coverage()
    assert cov["sched.ctx_switches_per_s"] == 0.25 and cov["io.nvme0n1.lat_p99_us"] == 0.25
    assert "mem.kswapd_wakeups_per_s" not in cov
    cg = src.cgroups()
    assert cg is not None and cg.elapsed_s == 0.5

    # Opening again while open changes nothing; an end not yet carried out is cancelled.
    src.end_span()
    assert src.open_span()
    clock[0] += S
    src.collect()
    assert src.span_open and src.coverage() == {}
    src.close()


def test_blocked_time_counts_inside_spans_only(host: Path, bcc: FakeBcc, clock: list[int]) -> None:
    src = started(host, ["sched"])
    slots = prog(bcc, "sched").tables["slots"].lookups
    (host / "proc/42/stat").write_text("42 (train) S 1 2 3\n")
    # 42 fell asleep 0.2 s into the first interval and sleeps on.
    slots[42] = task(42, slept=T0 + S // 5)
    clock[0] += S
    src.end_span()
    m = src.collect()
    src.wait_detached()
    assert m["sched.train.offcpu_frac"] == pytest.approx(0.8)

    # Off for 2 s: nothing is read, nothing is counted.
    clock[0] += 2 * S
    assert "sched.train.offcpu_frac" not in src.collect()

    # A new span: 42 had no event in it yet (its entry's epoch is the old span's), and /proc
    # says it sleeps, so it has slept since the opening.
    clock[0] += S // 2
    assert src.open_span()
    opened = clock[0]
    clock[0] += S // 2
    m = src.collect()
    assert m["sched.train.offcpu_frac"] == pytest.approx(1.0)
    assert src.coverage()["sched.train.offcpu_frac"] == 0.5
    # It wakes 0.25 s later: the program counts the sleep from the opening (its first event in the
    # span), of which 0.5 s were counted already; it then runs.
    slots[42] = task(42, blocked=3 * S // 4, epoch=opened)
    (host / "proc/42/stat").write_text("42 (train) R 1 2 3\n")
    clock[0] += S
    m = src.collect()
    assert m["sched.train.offcpu_frac"] == pytest.approx(0.25)
    src.close()


def test_a_reload_between_spans_leaves_the_new_programs_detached_and_shut(
    host: Path, bcc: FakeBcc, clock: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(time, "sleep", lambda _s: None)
    src = started(host, ["block", "sched"])
    clock[0] += S
    src.end_span()
    src.collect()
    src.wait_detached()
    shut = gate(prog(bcc, "sched"))
    bcc.pending = {"block": block_maps(), "sched": sched_maps()}
    bcc.tp_log.clear()
    ok, line = src.reload()
    assert ok, line
    new = {b.name: b for b in bcc.loaded if b.cleanups == 0}
    assert gate(new["sched"]) == shut and gate(new["block"]) == shut
    assert {
        tp for what, tp, b in bcc.tp_log if what == "detach" and b is new[b.name]
    } == HOT_SCHED | HOT_BLOCK
    bcc.tp_log.clear()
    clock[0] += S
    assert src.open_span()
    assert {b.name for what, _, b in bcc.tp_log if what == "attach"} == {"sched", "block"}
    assert all(b is new[b.name] for _, _, b in bcc.tp_log)
    src.close()


def test_a_collector_that_cannot_attach_again_is_stopped(host: Path, bcc: FakeBcc, clock: list[int]) -> None:
    src = started(host, ["block", "sched"])
    clock[0] += S
    src.end_span()
    src.collect()
    src.wait_detached()

    def refuse(tp: bytes, fn_name: bytes) -> None:
        raise Exception("Failed to attach BPF program\nmore")

    prog(bcc, "block").attach_tracepoint = refuse  # type: ignore[method-assign]
    assert src.open_span()
    status = src.collector_status()
    assert (
        not status["block"].live
        and status["block"].reason == "attaching again failed: Failed to attach BPF program"
    )
    assert src.hot_collectors() == ["sched"]
    src.close()


def test_a_span_that_opens_during_a_reload_is_the_new_programs_span(
    host: Path, bcc: FakeBcc, clock: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    src = started(host, ["block", "sched"])
    clock[0] += S
    src.end_span()
    src.collect()
    src.wait_detached()
    shut = gate(prog(bcc, "sched"))
    bcc.pending = {"block": block_maps(), "sched": sched_maps()}

    def settle(_s: float) -> None:
        # Block is reloaded first: a trigger while its new build settles.
        if bcc.loaded[-1].name == "block":
            assert gate(bcc.loaded[-1]) == shut  # the old gate from its load: it counts nothing yet
            clock[0] += S
            assert src.open_span()

    monkeypatch.setattr(time, "sleep", settle)
    ok, line = src.reload()
    assert ok, line
    new = {b.name: b for b in bcc.loaded if b.cleanups == 0}
    assert gate(new["sched"])[1] == 0 and gate(new["block"])[1] == 0  # open, as the old one was
    assert new["sched"].detached == set() and new["block"].detached == set()
    assert src.span_open
    src.close()
