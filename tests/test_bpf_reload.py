"""Reloading the eBPF collectors: a new instance attached before the old one goes, counts
carried over, nothing counted twice; a new build that does not load leaves the old one
running. Fakes of bcc for the order and the arithmetic, the real kernel for the rest."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest

from agent.sources.bpf_convert import BlockedCarry, TidHists
from agent.sources.bpf_source import BpfSource
from bench.workloads import loop_device
from bpf.loader import COLLECTORS
from bpf.snapshot import OffcpuRaw
from core.hostfs import HostFS
from tests.bpf_helpers import NVME, FakeBcc, FakeBPF, FakeTable, block_maps, fake_host, sched_maps, tid_counts

S = 10**9  # one second in ns
T0 = 1000 * S  # the clock at the first collect


def task(
    tid: int, *, hist: dict[int, int] | None = None, blocked: int = 0, slept: int = 0, born: int = 1
) -> object:
    """A thread's entry in the scheduler program's slots."""
    counts = tid_counts(hist or {})
    return SimpleNamespace(tid=tid, hist=counts, blocked_ns=blocked, slept_ns=slept, born_ns=born, epoch=0)


def switches(b: FakeBPF, n: int) -> None:
    """`n` context switches seen by one instance of the scheduler program (on CPU 0)."""
    counters = b.tables["counters"].array
    assert counters is not None
    counters[0][0] += n


def reads(b: FakeBPF, n: int) -> None:
    """`n` 4 KiB reads of the NVMe disk completed, seen by one instance of the block program."""
    leaf = SimpleNamespace(read_ops=n, write_ops=0, read_bytes=n * 4096, write_bytes=0)
    b.tables["stats"].items.append((NVME, [leaf]))


@pytest.fixture
def host(tmp_path: Path) -> Path:
    """A fake host root: tracefs, headers, HZ, one NVMe disk, jobs 42 (threads 42, 43) and 44."""
    return fake_host(tmp_path, ((42, 42), (42, 43), (44, 44)))


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    now = [T0]
    monkeypatch.setattr(time, "monotonic_ns", lambda: now[0])
    return now


@pytest.fixture
def bcc(monkeypatch: pytest.MonkeyPatch) -> FakeBcc:
    fake = FakeBcc()
    fake.tables = {"block": block_maps(), "sched": sched_maps()}
    monkeypatch.setitem(sys.modules, "bcc", fake)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    return fake


def on_settle(monkeypatch: pytest.MonkeyPatch, bcc: FakeBcc, fn: Callable[[FakeBPF], None]) -> None:
    """Run `fn(new instance)` while a reload has both instances attached (its settle sleep)."""
    monkeypatch.setattr(time, "sleep", lambda _s: fn(bcc.loaded[-1]))


def started(host: Path, collectors: list[str], jobs: dict[str, list[int]]) -> BpfSource:
    src = BpfSource(HostFS(host), jobs=lambda: jobs, collectors=collectors)
    assert src.start().live
    return src


def test_new_instance_is_attached_before_the_old_is_detached_and_counts_are_carried(
    host: Path, bcc: FakeBcc, clock: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    (host / "proc/46/task/46").mkdir(parents=True)
    src = started(host, ["block", "sched"], {"train": [42], "eval": [46]})
    old = {b.name: b for b in bcc.loaded}
    # Thread 42 (main of "train") runs; 46 (main of "eval") went to sleep before the first collect.
    old["sched"].tables["slots"].lookups.update(
        {42: task(42, hist={10: 5}), 46: task(46, blocked=7 * S, slept=T0 - S)}
    )
    src.collect()

    # Before the reload only the old instances are attached.
    switches(old["sched"], 100)
    reads(old["block"], 40)
    bcc.pending = {"block": block_maps(), "sched": sched_maps()}

    def overlap(new: FakeBPF) -> None:
        was = old[new.name]
        assert was.cleanups == 0, "the old instance must still run while the new one is attached"
        # Events while both are attached are seen by both.
        if new.name == "block":
            reads(was, 6)
            reads(new, 6)
            return
        switches(was, 30)
        switches(new, 30)
        # 42 sleeps from T0 + 0.4 s, seen by both; 46 sleeps on, and the new instance never saw it begin.
        asleep = T0 + 4 * S // 10
        was.tables["slots"].lookups[42] = task(42, hist={10: 8}, slept=asleep)
        new.tables["slots"].lookups[42] = task(42, hist={10: 3}, slept=asleep + 50, born=T0 + S // 10)
        clock[0] = T0 + 6 * S // 10  # the swap

    on_settle(monkeypatch, bcc, overlap)
    ok, line = src.reload()
    assert (ok, line) == (True, "block, sched reloaded")
    new = {b.name: b for b in bcc.loaded if b not in old.values()}
    assert [(what, b.name, b in new.values()) for what, b in bcc.log] == [
        ("attach", "block", False),
        ("attach", "sched", False),
        ("attach", "block", True),
        ("detach", "block", False),
        ("attach", "sched", True),
        ("detach", "sched", False),
    ]
    assert all(b.cleanups == 1 for b in old.values()) and all(b.cleanups == 0 for b in new.values())

    # After the swap only the new instances count: 42 wakes at T0 + 1.2 s, 46 at T0 + 1.5 s.
    switches(new["sched"], 50)
    reads(new["block"], 10)
    new["sched"].tables["slots"].lookups.update(
        {
            42: task(42, hist={10: 7}, blocked=8 * S // 10, born=T0 + S // 10),
            46: task(46, born=T0 + 15 * S // 10),
        }
    )
    clock[0] = T0 + 2 * S
    m = src.collect()
    # Each event once: before (old), while both ran (old's count, new's left out), after (new).
    assert m["sched.ctx_switches_per_s"] == (100 + 30 + 50) / 2
    assert m["io.nvme0n1.read_iops"] == (40 + 6 + 10) / 2
    # 42 slept 0.8 s, seen begin by both instances; 46 slept until its wakeup at 1.5 s.
    assert m["sched.train.offcpu_frac"] == pytest.approx(0.4)
    assert m["sched.eval.offcpu_frac"] == pytest.approx(0.75)

    clock[0] = T0 + 3 * S
    m = src.collect()
    assert m["sched.ctx_switches_per_s"] == 0.0 and m["io.nvme0n1.read_iops"] == 0.0
    assert m["sched.train.offcpu_frac"] == 0.0 and m["sched.eval.offcpu_frac"] == 0.0
    src.close()
    assert all(b.cleanups == 1 for b in bcc.loaded)


def test_a_new_build_that_does_not_compile_leaves_the_old_one_running(
    host: Path, bcc: FakeBcc, clock: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    src = started(host, ["sched"], {})
    (old,) = bcc.loaded
    src.collect()
    switches(old, 10)
    bcc.fail = {"sched"}
    monkeypatch.setattr(time, "sleep", lambda _s: pytest.fail("nothing to settle without a new instance"))
    ok, line = src.reload()
    assert not ok and "\n" not in line
    assert line.startswith("sched kept running: compile/attach of sched.bpf.c failed: Failed to compile")
    assert bcc.loaded == [old] and old.cleanups == 0
    assert src.collector_status()["sched"].live
    clock[0] += S
    assert src.collect()["sched.ctx_switches_per_s"] == 10.0
    src.close()


def test_a_new_build_whose_maps_changed_is_refused(
    host: Path, bcc: FakeBcc, clock: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    src = started(host, ["sched"], {})
    (old,) = bcc.loaded
    src.collect()
    bcc.pending = {"sched": sched_maps(hist_len=65)}
    on_settle(monkeypatch, bcc, lambda new: None)
    (r,) = src.reload_each()
    assert not r.ok and "map hist changed layout" in r.reason and "restart" in r.reason
    new = bcc.loaded[-1]
    assert new is not old and new.cleanups == 1 and old.cleanups == 0
    switches(old, 4)
    clock[0] += S
    assert src.collect()["sched.ctx_switches_per_s"] == 4.0
    src.close()


def test_a_reload_that_meets_a_close_or_another_reload(
    host: Path, bcc: FakeBcc, clock: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    src = started(host, ["sched"], {})
    bcc.pending = {"sched": sched_maps()}
    second: list[tuple[bool, str]] = []
    on_settle(monkeypatch, bcc, lambda new: second.append(src.reload()))
    first = src.reload()
    assert first == (True, "sched reloaded")
    assert second == [(False, "sched not reloaded: a reload is already under way")]

    bcc.pending = {"sched": sched_maps()}
    on_settle(monkeypatch, bcc, lambda new: src.close())
    assert src.reload_each()[0].reason == "not reloaded: the source was closed meanwhile"
    assert len(bcc.loaded) == 3 and all(b.cleanups == 1 for b in bcc.loaded)
    assert src.reload() == (True, "no collector running")


def test_drops_of_a_replaced_instance_still_count(
    host: Path, bcc: FakeBcc, clock: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    bcc.tables["sched"]["drops"] = FakeTable(array=[[1, 2]])
    src = started(host, ["sched"], {})
    bcc.pending = {"sched": sched_maps()}
    bcc.pending["sched"]["drops"] = FakeTable(array=[[0, 1]])
    on_settle(monkeypatch, bcc, lambda new: None)
    assert src.reload()[0]
    assert src.drops() == {"sched": 4}
    src.close()
    assert src.drops() == {"sched": 4}


def test_every_counting_map_of_a_program_is_carried() -> None:
    """A counting map left out of its spec would lose the old instance's last counts at a reload."""
    rx = re.compile(r"^BPF_(PERCPU_ARRAY|PERCPU_HASH)\((\w+)", re.MULTILINE)
    for spec in COLLECTORS.values():
        maps = {name: kind for kind, name in rx.findall(spec.path.read_text()) if name != "drops"}
        assert {n for n, k in maps.items() if k == "PERCPU_ARRAY"} == set(spec.arrays), spec.name
        assert {n for n, k in maps.items() if k == "PERCPU_HASH"} == set(spec.drained), spec.name


# -- the carry of per-thread running totals, on plain data ------------------------------


def off(
    total: dict[int, int], since: dict[int, int] | None = None, born: dict[int, int] | None = None
) -> OffcpuRaw:
    return OffcpuRaw(blocked_total_ns=total, sleeping_since_ns=since or {}, born_ns=born or {})


def test_a_sleep_seen_begin_by_both_instances_is_counted_once() -> None:
    carry = BlockedCarry()
    assert carry.blocked_ns(1, off({1: 0}), 0) == 0
    # The new instance is attached at 0.2 s; the thread sleeps from 0.3 s; the swap is at 0.6 s.
    asleep = 3 * S // 10
    carry.handover(off({1: 0}, {1: asleep}), off({1: 0}, {1: asleep + 20}, {1: S // 5}), [1], 6 * S // 10)
    # It wakes at 0.8 s: the new instance counts the whole sleep.
    assert carry.blocked_ns(1, off({1: S // 2 + 20}, born={1: S // 5}), S) == S // 2 + 20
    assert carry.blocked_ns(1, off({1: S // 2 + 20}, born={1: S // 5}), 2 * S) == 0


def test_a_sleep_the_new_instance_did_not_see_begin_runs_until_the_thread_appears() -> None:
    carry = BlockedCarry()
    assert carry.blocked_ns(1, off({1: 0}, {1: -S // 2}), 0) == S // 2
    carry.handover(off({1: 0}, {1: -S // 2}), off({}), [1], S // 2)
    assert carry.blocked_ns(1, off({}), S) == S  # no entry yet: asleep all along
    # A second reload: still unseen by the next instance either.
    carry.handover(off({}), off({}), [1], 12 * S // 10)
    assert carry.blocked_ns(1, off({}), 2 * S) == S
    # Its entry is taken at its wakeup, at 2.5 s; it sleeps again from 2.9 s.
    assert carry.blocked_ns(1, off({1: 0}, {1: 29 * S // 10}, {1: 25 * S // 10}), 3 * S) == S // 2 + S // 10
    assert carry.blocked_ns(1, off({1: S // 10}, born={1: 25 * S // 10}), 4 * S) == 0


def test_a_thread_that_woke_between_the_two_reads_is_counted_up_to_its_wakeup() -> None:
    carry = BlockedCarry()
    assert carry.blocked_ns(1, off({1: 0}, {1: 0}), S) == S
    # Asleep in the old instance's last reading; the new one took its entry at its wakeup, just after.
    carry.handover(off({1: 0}, {1: 0}), off({1: 0}, born={1: 2 * S + 100}), [1], 2 * S)
    assert carry.blocked_ns(1, off({1: 0}, born={1: 2 * S + 100}), 3 * S) == S + 100


def test_thread_histograms_carry_the_old_part_and_leave_out_the_overlap() -> None:
    hists = TidHists()
    assert hists.interval({1: tid_counts({10: 5})}) == {1: {10: 5}}
    # Old gained 3 (2 of them while both ran); the new instance counted those 2 as well.
    hists.handover({1: tid_counts({10: 8}), 2: tid_counts({12: 1})}, {1: tid_counts({10: 2})})
    assert hists.interval({1: tid_counts({10: 6, 11: 1}), 2: tid_counts({12: 1})}) == {
        1: {10: 3 + 4, 11: 1},
        2: {12: 1 + 1},
    }


# -- the real kernel -------------------------------------------------------------------

_READER = textwrap.dedent(
    """
    import mmap, os, random, signal, sys
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)
    blocks = os.lseek(fd, 0, os.SEEK_END) // 4096
    buf, rng, n = mmap.mmap(-1, 4096), random.Random(1), 0
    print("ready", flush=True)
    while not stop:
        os.preadv(fd, [buf], rng.randrange(blocks) * 4096)
        n += 1
    print(n, flush=True)
    """
)
# Blocks on its stdin, which is a sleep; once woken, says when and spins until stopped.
_SLEEPER = textwrap.dedent(
    """
    import signal, sys, time
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    print("asleep", flush=True)
    sys.stdin.read(1)
    print(time.monotonic_ns(), flush=True)
    while not stop:
        pass
    """
)


def _spawn(code: str, *args: str) -> subprocess.Popen[str]:
    p = subprocess.Popen(
        [sys.executable, "-c", code, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert p.stdout is not None
    p.stdout.readline()
    return p


def _stop(p: subprocess.Popen[str]) -> int:
    p.terminate()
    out, _ = p.communicate(timeout=30)
    return int(out.split()[-1])


def _bpf_fds() -> int:
    """This process's perf events and BPF objects: attached programs hold one of each."""
    n = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        n += "perf_event" in target or "bpf" in target
    return n


@pytest.mark.root
@pytest.mark.slow
@pytest.mark.skipif(
    os.geteuid() != 0
    or importlib.util.find_spec("bcc") is None
    or not Path("/sys/kernel/tracing/events").is_dir()
    or shutil.which("losetup") is None,
    reason="needs root, bcc, tracefs and losetup",
)
def test_a_reload_under_load_loses_nothing_and_counts_nothing_twice(tmp_path: Path) -> None:
    """Reads of a loop device and a sleeping job across a reload, then after it."""
    pids: list[int] = []
    src = BpfSource(collectors=["block", "sched"], jobs=lambda: {"sleeper": pids})
    sleeper: subprocess.Popen[str] | None = None
    try:
        assert src.start().live
        # It falls asleep under the first instance, which sees the sleep begin.
        sleeper = _spawn(_SLEEPER)
        pids.append(sleeper.pid)
        with loop_device(tmp_path, 32) as loop:
            dev = Path(loop).name
            fds = _bpf_fds()
            time.sleep(0.5)  # past the reads of the device's probing at attach
            src.collect()
            t0 = time.monotonic_ns()
            reader = _spawn(_READER, loop)
            time.sleep(0.5)
            ok, line = src.reload()
            time.sleep(0.3)
            n1 = _stop(reader)
            m1 = src.collect()
            t1 = time.monotonic_ns()
            cg = src.cgroups()
            assert cg is not None
            elapsed1 = cg.elapsed_s

            assert (ok, line) == (True, "block, sched reloaded")
            assert _bpf_fds() == fds, "the old instances must be detached and closed"
            # Every read once: counting the reload's overlap twice (SETTLE_S: thousands of reads) would show.
            assert n1 > 5000
            assert m1[f"io.{dev}.read_iops"] * elapsed1 == pytest.approx(n1, rel=0.002, abs=5)
            # Asleep the whole interval, though the instance now running never saw the sleep begin.
            assert m1["sched.sleeper.offcpu_frac"] > 0.97

            # After the reload: the new instances count, and see the sleeper wake.
            reader = _spawn(_READER, loop)
            time.sleep(0.4)
            assert sleeper.stdin is not None and sleeper.stdout is not None
            sleeper.stdin.write("x")
            sleeper.stdin.flush()
            woke = int(sleeper.stdout.readline())
            time.sleep(0.6)
            n2 = _stop(reader)
            m2 = src.collect()
            t2 = time.monotonic_ns()
            cg = src.cgroups()
            assert cg is not None
            assert m2[f"io.{dev}.read_iops"] * cg.elapsed_s == pytest.approx(n2, rel=0.002, abs=5)
            assert m2["sched.sleeper.offcpu_frac"] == pytest.approx((woke - t1) / (t2 - t1), abs=0.03)
            assert t1 - t0 > 0
    finally:
        src.close()
        if sleeper is not None:
            sleeper.kill()
            sleeper.wait()
