"""The collection loop with fake sources: precedence, failures, interval, signals."""

from __future__ import annotations

import itertools
import os
import signal
import sys
import threading
import time

import pytest

from agent.collector import Collector, UnavailableSource
from core.sample import SourceStatus


class FakeSource:
    def __init__(
        self,
        name: str,
        metrics: dict[str, float],
        *,
        live: bool = True,
        fail_on: int | None = None,
        start_raises: bool = False,
        drops: dict[str, int] | None = None,
    ) -> None:
        self.name = name
        self.metrics = metrics
        self.live = live
        self.fail_on = fail_on
        self.start_raises = start_raises
        self._drops = drops
        self.collects = 0
        self.closed = 0

    def start(self) -> SourceStatus:
        if self.start_raises:
            raise RuntimeError("boom at start\nsecond line")
        return SourceStatus(live=self.live, reason="" if self.live else "not root")

    def collect(self) -> dict[str, float]:
        self.collects += 1
        if self.fail_on is not None and self.collects >= self.fail_on:
            raise OSError("map gone")
        return dict(self.metrics)

    def close(self) -> None:
        self.closed += 1

    def drops(self) -> dict[str, int]:
        return dict(self._drops or {})


def test_earlier_source_wins_on_shared_names() -> None:
    bpf = FakeSource("bpf", {"io.vda.read_iops": 100.0, "io.vda.lat_p99_us": 900.0})
    procfs = FakeSource("procfs", {"io.vda.read_iops": 90.0, "cpu.util_pct": 40.0})
    c = Collector([bpf, procfs])
    c.start()
    s = c.tick()
    assert s.m == {"io.vda.read_iops": 100.0, "io.vda.lat_p99_us": 900.0, "cpu.util_pct": 40.0}
    c.close()


def test_not_live_sources_are_skipped_and_reported() -> None:
    off = FakeSource("bpf", {"x": 1.0}, live=False)
    bad = FakeSource("nvml", {"y": 1.0}, start_raises=True)
    ok = FakeSource("procfs", {"cpu.util_pct": 1.0})
    c = Collector([off, bad, ok])
    st = c.start()
    assert st["bpf"] == SourceStatus(live=False, reason="not root")
    assert not st["nvml"].live
    assert st["nvml"].reason == "start failed: RuntimeError: boom at start"
    assert st["procfs"].live
    assert c.tick().m == {"cpu.util_pct": 1.0}
    assert off.collects == 0 and bad.collects == 0
    assert off.closed >= 1 and bad.closed >= 1


def test_source_that_raises_is_dropped_for_the_rest_of_the_run() -> None:
    flaky = FakeSource("bpf", {"io.vda.read_iops": 5.0}, fail_on=2)
    steady = FakeSource("procfs", {"io.vda.read_iops": 4.0})
    c = Collector([flaky, steady])
    c.start()
    assert c.tick().m["io.vda.read_iops"] == 5.0
    assert c.tick().m["io.vda.read_iops"] == 4.0  # the fallback takes over
    c.tick()
    assert flaky.collects == 2
    assert c.statuses["bpf"] == SourceStatus(live=False, reason="collect failed: OSError: map gone")
    assert flaky.closed == 1
    c.close()


def test_non_finite_values_are_dropped() -> None:
    c = Collector([FakeSource("a", {"x": float("nan"), "y": float("inf"), "z": 2.0})])
    c.start()
    assert c.tick().m == {"z": 2.0}


def test_drops_are_prefixed_and_survive_close() -> None:
    c = Collector([FakeSource("bpf", {}, drops={"block": 3}), FakeSource("procfs", {})])
    c.start()
    c.tick()
    c.close()
    assert c.drops() == {"bpf.block": 3}


def test_run_keeps_interval_and_closes_sources() -> None:
    a = FakeSource("a", {"cpu.util_pct": 1.0})
    c = Collector([a], interval_s=0.05)
    c.start()
    seen: list[float] = []
    t0 = time.monotonic()
    w = c.run(0.25, on_sample=lambda s: seen.append(s.t))
    elapsed = time.monotonic() - t0
    assert len(w) == 5 and len(seen) == 5
    assert a.collects == 6  # one priming collect for the deltas, then one per interval
    assert a.closed == 1
    assert 0.2 <= elapsed < 1.0
    gaps = [b - x for x, b in itertools.pairwise(seen)]
    assert all(0.02 < g < 0.2 for g in gaps)


def test_sample_time_is_wall_anchored_and_monotonic() -> None:
    mono = iter([0.0, 1.0, 2.5, 2.5])
    c = Collector([FakeSource("a", {})], clock=lambda: next(mono), wall=lambda: 1000.0)
    c.start()
    assert c.tick().t == 1001.0
    assert c.tick().t == 1002.5


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_signal_stops_run_early_and_restores_handlers(signum: int) -> None:
    a = FakeSource("a", {"cpu.util_pct": 1.0})
    c = Collector([a], interval_s=0.05)
    c.start()
    before = signal.getsignal(signum)
    timer = threading.Timer(0.3, os.kill, args=(os.getpid(), signum))
    timer.start()
    t0 = time.monotonic()
    try:
        w = c.run(30.0)
    finally:
        timer.cancel()
    elapsed = time.monotonic() - t0
    assert elapsed < 5.0
    assert 1 <= len(w) <= 20
    assert a.closed == 1
    assert signal.getsignal(signum) is before


def test_sources_closed_even_when_callback_raises() -> None:
    before = signal.getsignal(signal.SIGINT)  # ignored when the tests run in the background
    a = FakeSource("a", {"cpu.util_pct": 1.0})
    c = Collector([a], interval_s=0.01)
    c.start()

    def boom(_: object) -> None:
        raise ValueError("callback bug")

    with pytest.raises(ValueError):
        c.run(1.0, on_sample=boom)
    assert a.closed == 1
    assert signal.getsignal(signal.SIGINT) is before


def test_bad_interval() -> None:
    with pytest.raises(ValueError):
        Collector([], interval_s=0)


def test_unavailable_source_reports_reason() -> None:
    c = Collector([UnavailableSource("bpf", "no bcc"), FakeSource("procfs", {"x": 1.0})])
    st = c.start()
    assert st["bpf"] == SourceStatus(live=False, reason="no bcc")
    assert c.tick().m == {"x": 1.0}


class SlowStart(FakeSource):
    def start(self) -> SourceStatus:
        time.sleep(0.5)  # like bcc compiling programs
        return super().start()


def test_signal_during_slow_start_stops_cleanly() -> None:
    before = signal.getsignal(signal.SIGINT)  # ignored when the tests run in the background
    a = SlowStart("bpf", {"cpu.util_pct": 1.0})
    c = Collector([a], interval_s=0.05)
    timer = threading.Timer(0.1, os.kill, args=(os.getpid(), signal.SIGINT))
    timer.start()
    t0 = time.monotonic()
    try:
        with c.stopping_on_signals():
            c.start()
            w = c.run(30.0)
    finally:
        timer.cancel()
    assert time.monotonic() - t0 < 5.0
    assert len(w) == 0 and a.collects == 0
    assert a.closed == 1
    assert signal.getsignal(signal.SIGINT) is before


def test_stop_before_run_returns_at_once() -> None:
    a = FakeSource("a", {"x": 1.0})
    c = Collector([a], interval_s=0.05)
    c.start()
    c.stop()
    assert len(c.run(30.0)) == 0
    assert a.closed == 1


class DutySource(FakeSource):
    """A source whose hot figures were measured over part of the interval."""

    def coverage(self) -> dict[str, float]:
        return {"io.vda.lat_p99_us": 0.25, "io.vda.read_iops": 0.25}


def test_a_figures_share_of_the_interval_follows_the_source_that_gave_it() -> None:
    bpf = DutySource("bpf", {"io.vda.lat_p99_us": 900.0, "io.vda.read_iops": 120.0})
    procfs = FakeSource("procfs", {"io.vda.read_iops": 90.0, "cpu.util_pct": 40.0})
    c = Collector([bpf, procfs])
    c.start()
    seen: list[float] = []
    c.after_tick.append(lambda s: seen.append(s.m["cpu.util_pct"]))
    s = c.tick()
    assert s.cover == {"io.vda.lat_p99_us": 0.25, "io.vda.read_iops": 0.25}
    assert seen == [40.0]
    # Between spans the eBPF source gives no disk figure: procfs's rate covers the whole interval.
    bpf.metrics = {}
    s = c.tick()
    assert s.m["io.vda.read_iops"] == 90.0 and s.cover == {}
