"""The trainer hook against a real Unix socket: metrics, control, refusals, agent restarts, no agent."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import agent.hook.link as link_mod
from agent.hook import WatchedLoader, watch
from agent.sources.trainer import TrainerSource
from agent.sources.trainer_control import TrainerControl
from tests.hook_helpers import FakeLoader, Rebuilds, TrainLoop, collect_for, wait_for

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    """Metrics every 0.2 s and quick reconnects, so tests take seconds, not minutes."""
    monkeypatch.setattr(link_mod, "PERIOD_S", 0.2)
    monkeypatch.setattr(link_mod, "BACKOFF_MAX_S", 0.3)


@pytest.fixture
def state(tmp_path: Path) -> str:
    return str(tmp_path / "state")


@pytest.fixture
def agent(state: str) -> Iterator[TrainerSource]:
    src = TrainerSource(state)
    assert src.start().live
    yield src
    src.close()


@pytest.fixture
def hooks() -> Iterator[list[WatchedLoader[Any]]]:
    made: list[WatchedLoader[Any]] = []
    yield made
    for w in made:
        w.close()


def watched(hooks: list[WatchedLoader[Any]], loader: Any, state: str, **kw: Any) -> WatchedLoader[Any]:
    w = watch(loader, kw.pop("job", "resnet50"), state_dir=state, **kw)
    hooks.append(w)
    return w


def run_until(loop: TrainLoop, cond: Any, timeout: float = 10.0) -> None:
    loop.start()
    try:
        assert wait_for(cond, timeout), "condition not reached while training"
    finally:
        loop.stop.set()
        loop.join(timeout=5)
    assert loop.error is None, repr(loop.error)


# -- metrics ------------------------------------------------------------------------------


@pytest.mark.usefixtures("fast")
def test_metrics_arrive(agent: TrainerSource, state: str, hooks: list[WatchedLoader[Any]]) -> None:
    # 3 ms waiting for each batch, 7 ms of compute: a 10 ms step, 30% data wait, 4 samples a batch.
    w = watched(hooks, FakeLoader(100_000, fetch_s=0.003, batch_size=4), state)
    loop = TrainLoop(w, epochs=1, step_s=0.007)
    loop.start()
    samples = collect_for(agent, 2.0)
    loop.stop.set()
    loop.join(5)
    assert loop.error is None
    merged = samples[-1]
    assert 9.0 < merged["trainer.resnet50.step_time_ms"] < 60.0  # sleeps overshoot on a busy host
    assert 0.15 < merged["trainer.resnet50.data_wait_frac"] < 0.6
    per_step = merged["trainer.resnet50.samples_per_s"] * merged["trainer.resnet50.step_time_ms"] / 1000
    assert per_step == pytest.approx(4.0, rel=0.35)
    (job,) = agent.jobs()
    assert job.name == "resnet50" and job.pids == [os.getpid()]
    assert job.knobs["loader.workers"] == 4 and job.knobs["loader.prefetch_factor"] == 2
    assert job.capabilities["trainer.batch_size"]["tier"] == 3


def test_stalled_loader_shows_as_data_wait_while_it_stalls(
    agent: TrainerSource, state: str, hooks: list[WatchedLoader[Any]], fast: None
) -> None:
    w = watched(hooks, FakeLoader(3, fetch_s=1.5), state)
    loop = TrainLoop(w, epochs=1, step_s=0.0)
    loop.start()
    samples = collect_for(agent, 1.2)
    loop.stop.set()
    assert any(m.get("trainer.resnet50.data_wait_frac", 0) > 0.9 for m in samples)
    assert not any("trainer.resnet50.step_time_ms" in m for m in samples)  # no step has finished
    loop.join(5)


def test_at_most_one_metrics_line_a_second(tmp_path: Path, hooks: list[WatchedLoader[Any]]) -> None:
    state = str(tmp_path)
    lst = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    lst.bind(os.path.join(state, "trainer.sock"))
    lst.listen(1)
    w = watched(hooks, FakeLoader(1_000_000), state)
    loop = TrainLoop(w, epochs=1, step_s=0.0005)
    loop.start()
    conn, _ = lst.accept()
    conn.settimeout(0.1)
    data = b""
    end = time.monotonic() + 2.6
    while time.monotonic() < end:
        with contextlib.suppress(TimeoutError):
            data += conn.recv(65536)
    loop.stop.set()
    loop.join(5)
    kinds = [json.loads(line)["type"] for line in data.splitlines()]
    assert kinds[0] == "hello"
    assert 2 <= kinds.count("metrics") <= 3
    conn.close()
    lst.close()


# -- control --------------------------------------------------------------------------------


@pytest.mark.usefixtures("fast")
def test_workers_change_applies_at_next_epoch_and_is_acked(
    agent: TrainerSource, state: str, hooks: list[WatchedLoader[Any]]
) -> None:
    rebuilds = Rebuilds(20)
    w = watched(hooks, FakeLoader(20), state, rebuild=rebuilds)
    control = TrainerControl(agent, timeout_s=5.0)
    assert wait_for(lambda: control.jobs() == ["resnet50"])
    assert "loader.workers" in control.capabilities("resnet50")
    loop = TrainLoop(w, epochs=1000, step_s=0.005)  # 0.1 s epochs
    loop.start()
    try:
        ack = control.set("resnet50", "loader.workers", 6)
        assert ack.ok and ack.value == 6, ack
        assert rebuilds.calls == [{"workers": 6, "prefetch_factor": 2}]
        assert control.get("resnet50", "loader.workers") == 6
        # Batches after the change come from the new loader; none mixed into an old epoch.
        assert wait_for(lambda: any(b[0] == 1 for b in loop.batches))
        first_new = next(i for i, b in enumerate(loop.batches) if b[0] == 1)
        assert first_new % 20 == 0
        ack = control.set("resnet50", "loader.prefetch_factor", 4)
        assert ack.ok and ack.value == 4
        assert rebuilds.calls[-1] == {"workers": 6, "prefetch_factor": 4}
    finally:
        loop.stop.set()
        loop.join(5)
    assert loop.error is None


@pytest.mark.usefixtures("fast")
def test_a_change_pending_past_the_timeout_reports_the_value_in_force(
    agent: TrainerSource, state: str, hooks: list[WatchedLoader[Any]]
) -> None:
    rebuilds = Rebuilds(20)
    w = watched(hooks, FakeLoader(60), state, rebuild=rebuilds)
    control = TrainerControl(agent)
    assert wait_for(lambda: control.jobs() == ["resnet50"])
    loop = TrainLoop(w, epochs=2, step_s=0.02)  # a 1.2 s first epoch
    loop.start()
    time.sleep(0.1)
    ack = control.set("resnet50", "loader.workers", 8, timeout_s=0.3)
    assert ack.ok and ack.value == 4 and "next epoch" in ack.reason
    assert wait_for(lambda: control.get("resnet50", "loader.workers") == 8, timeout=5)
    loop.stop.set()
    loop.join(5)
    assert loop.error is None and rebuilds.calls == [{"workers": 8, "prefetch_factor": 2}]


@pytest.mark.usefixtures("fast")
def test_affinity_pins_running_workers_at_once(
    agent: TrainerSource, state: str, hooks: list[WatchedLoader[Any]]
) -> None:
    usable = sorted(os.sched_getaffinity(0))
    target = str(usable[-1])
    worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        watched(hooks, FakeLoader(10), state)
        control = TrainerControl(agent)
        assert wait_for(lambda: control.jobs() == ["resnet50"])
        assert control.get("resnet50", "loader.cpu_affinity") == _cpulist(usable)
        ack = control.set("resnet50", "loader.cpu_affinity", target)  # no training running: at once
        assert ack.ok and ack.value == target, ack
        assert os.sched_getaffinity(worker.pid) == {int(target)}
        assert os.sched_getaffinity(0) == set(usable)  # the trainer itself is left alone
    finally:
        worker.kill()
        worker.wait()


@pytest.mark.usefixtures("fast")
@pytest.mark.parametrize(
    ("key", "value", "words"),
    [
        ("loader.workers", 100_000, "outside"),
        ("loader.workers", -1, "outside"),
        ("loader.workers", 2.5, "whole number"),
        ("loader.workers", "many", "whole number"),
        ("loader.prefetch_factor", 0, "outside [1, 16]"),
        ("loader.prefetch_factor", 17, "outside [1, 16]"),
        ("loader.cpu_affinity", "4096-4100", "not usable"),
        ("loader.cpu_affinity", "x", "not a CPU list"),
        ("trainer.batch_size", 64, "on_batch_size"),
        ("vm.swappiness", 10, "unknown key"),
    ],
)
def test_out_of_bound_values_are_refused(
    agent: TrainerSource, state: str, hooks: list[WatchedLoader[Any]], key: str, value: Any, words: str
) -> None:
    rebuilds = Rebuilds(10)
    w = watched(hooks, FakeLoader(10), state, rebuild=rebuilds)
    control = TrainerControl(agent)
    assert wait_for(lambda: control.jobs() == ["resnet50"])
    ack = control.set("resnet50", key, value)
    assert not ack.ok and words in ack.reason, ack
    list(w)  # an epoch boundary: nothing was queued to apply
    assert rebuilds.calls == []


@pytest.mark.usefixtures("fast")
def test_plain_iterable_without_rebuild_refuses_worker_changes(
    agent: TrainerSource, state: str, hooks: list[WatchedLoader[Any]]
) -> None:
    watched(hooks, [1, 2, 3], state)
    control = TrainerControl(agent)
    assert wait_for(lambda: control.jobs() == ["resnet50"])
    assert control.capabilities("resnet50") == {"loader.cpu_affinity"}
    ack = control.set("resnet50", "loader.workers", 2)
    assert not ack.ok and "rebuild" in ack.reason
    assert not control.reopen_files("resnet50").ok


@pytest.mark.usefixtures("fast")
def test_batch_size_through_the_script_callback(
    agent: TrainerSource, state: str, hooks: list[WatchedLoader[Any]]
) -> None:
    asked: list[int] = []

    def on_batch_size(n: int) -> FakeLoader:
        asked.append(n)
        return FakeLoader(10, batch_size=n, tag=9)

    w = watched(hooks, FakeLoader(10), state, on_batch_size=on_batch_size)
    control = TrainerControl(agent)
    assert wait_for(lambda: control.jobs() == ["resnet50"])
    assert "trainer.batch_size" in control.capabilities("resnet50")
    loop = TrainLoop(w, epochs=1000, step_s=0.002)
    run_until(loop, lambda: loop.is_alive() and control.set("resnet50", "trainer.batch_size", 8).ok)
    assert asked == [8] and control.get("resnet50", "trainer.batch_size") == 8
    assert w._counters.batch_size == 8


@pytest.mark.usefixtures("fast")
def test_reopen_files_rebuilds_with_the_same_settings(
    agent: TrainerSource, state: str, hooks: list[WatchedLoader[Any]]
) -> None:
    rebuilds = Rebuilds(10)
    w = watched(hooks, FakeLoader(10), state, rebuild=rebuilds)
    control = TrainerControl(agent)
    assert wait_for(lambda: control.jobs() == ["resnet50"])
    assert "reopen_files" in control.capabilities("resnet50")
    loop = TrainLoop(w, epochs=1000, step_s=0.002)
    loop.start()
    ack = control.reopen_files("resnet50")
    loop.stop.set()
    loop.join(5)
    assert ack.ok and rebuilds.calls == [{"workers": 4, "prefetch_factor": 2}]


@pytest.mark.usefixtures("fast")
def test_a_reopen_put_off_to_the_next_epoch_is_confirmed_when_it_happens(
    agent: TrainerSource, state: str, hooks: list[WatchedLoader[Any]]
) -> None:
    rebuilds = Rebuilds(20)
    w = watched(hooks, FakeLoader(150), state, rebuild=rebuilds)
    control = TrainerControl(agent)
    assert wait_for(lambda: control.jobs() == ["resnet50"])
    loop = TrainLoop(w, epochs=2, step_s=0.02)  # a 3 s first epoch
    loop.start()
    time.sleep(0.1)
    ack = control.reopen_files("resnet50", timeout_s=0.3)
    assert ack.ok and ack.pending and control.awaiting("resnet50", "reopen_files")
    assert rebuilds.calls == []
    assert wait_for(lambda: not control.awaiting("resnet50", "reopen_files"), timeout=10)
    assert rebuilds.calls == [{"workers": 4, "prefetch_factor": 2}]  # the epoch boundary reopened them
    loop.stop.set()
    loop.join(5)
    assert loop.error is None


@pytest.mark.usefixtures("fast")
def test_a_failing_rebuild_is_refused_and_training_goes_on(
    agent: TrainerSource, state: str, hooks: list[WatchedLoader[Any]]
) -> None:
    def broken(**kw: Any) -> FakeLoader:
        raise RuntimeError("dataset moved")

    w = watched(hooks, FakeLoader(10), state, rebuild=broken)
    control = TrainerControl(agent)
    assert wait_for(lambda: control.jobs() == ["resnet50"])
    loop = TrainLoop(w, epochs=1000, step_s=0.002)
    loop.start()
    ack = control.set("resnet50", "loader.workers", 2)
    time.sleep(0.1)
    loop.stop.set()
    loop.join(5)
    assert not ack.ok and "dataset moved" in ack.reason
    assert loop.error is None and len(loop.batches) > 20
    assert control.get("resnet50", "loader.workers") == 4


# -- the agent goes away ------------------------------------------------------------------

_AGENT = textwrap.dedent(
    """
    import json, sys, time
    from agent.sources.trainer import TrainerSource
    src = TrainerSource(sys.argv[1])
    print(json.dumps({"live": src.start().live}), flush=True)
    while True:
        time.sleep(0.2)
        m = src.collect()
        if m:
            print(json.dumps(m), flush=True)
    """
)


def _spawn_agent(state: str) -> subprocess.Popen[str]:
    p = subprocess.Popen([sys.executable, "-c", _AGENT, state], cwd=REPO, stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None
    assert json.loads(p.stdout.readline()) == {"live": True}
    return p


def test_agent_killed_and_restarted_mid_run(state: str, hooks: list[WatchedLoader[Any]], fast: None) -> None:
    first = _spawn_agent(state)
    w = watched(hooks, FakeLoader(1_000_000), state)
    loop = TrainLoop(w, epochs=1, step_s=0.005)
    loop.start()
    try:
        assert first.stdout is not None and "trainer.resnet50.step_time_ms" in first.stdout.readline()
        first.kill()  # SIGKILL: no goodbye, a stale socket file left behind
        first.wait()
        killed_at = time.perf_counter()
        time.sleep(1.0)
        second = _spawn_agent(state)
        try:
            assert second.stdout is not None and "trainer.resnet50.step_time_ms" in second.stdout.readline()
        finally:
            second.kill()
            second.wait()
        # The second agent heard from the hook: it reconnected (a dying listener can take
        # one more connection in its backlog before the kernel closes it, hence >=).
        assert w.link.connects >= 2
        assert loop.is_alive() and loop.error is None
    finally:
        loop.stop.set()
        loop.join(5)
    before = sorted(d for t, d in loop.step_times if t < killed_at)
    during = sorted(d for t, d in loop.step_times if killed_at <= t < killed_at + 1.0)
    assert before and during
    # Training did not notice: median step as before (a few ms of slack for a busy 2-core
    # box), and no step stalled on the dead socket.
    assert during[len(during) // 2] < before[len(before) // 2] + 0.005
    assert max(during) < 0.25


# -- no agent -------------------------------------------------------------------------------


def _per_batch_s(iterable: Any, n: int) -> float:
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        for _ in iterable:
            pass
        best = min(best, time.perf_counter() - t)
    return best / n


def test_no_agent_does_not_slow_iteration(
    tmp_path: Path, hooks: list[WatchedLoader[Any]], fast: None
) -> None:
    n = 20_000
    raw = range(n)
    w = watched(hooks, raw, str(tmp_path / "nobody-here"))
    overhead = _per_batch_s(w, n) - _per_batch_s(raw, n)
    assert overhead < 20e-6  # 0.2% of a 10 ms step; measured ~1-3 µs
    assert not w.link.connected and w.link.connects == 0


def test_an_agent_that_never_reads_does_not_block(
    tmp_path: Path, hooks: list[WatchedLoader[Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A thousand lines a second fill the socket buffer and the link's own in ~2 s.
    monkeypatch.setattr(link_mod, "PERIOD_S", 0.001)
    lst = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    lst.bind(str(tmp_path / "trainer.sock"))
    lst.listen(1)
    w = watched(hooks, FakeLoader(1_000_000), str(tmp_path))
    loop = TrainLoop(w, epochs=1, step_s=0.001)
    loop.start()
    assert wait_for(lambda: len(w.link._outbuf) > link_mod.OUTBUF_MAX // 2, timeout=15)
    time.sleep(0.5)  # well past full: lines are being dropped now
    loop.stop.set()
    loop.join(5)
    assert loop.error is None
    assert w.link.connected and len(w.link._outbuf) <= link_mod.OUTBUF_MAX
    # Never blocked: no step took more than a scheduler hiccup.
    assert max(d for _, d in loop.step_times) < 0.5
    lst.close()


def _cpulist(cpus: list[int]) -> str:
    from core.cpulist import format_cpulist

    return format_cpulist(cpus)


@pytest.mark.usefixtures("fast")
def test_a_failing_metrics_line_does_not_end_the_link(
    agent: TrainerSource, state: str, hooks: list[WatchedLoader[Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    import agent.hook.procs as procs_mod
    import agent.hook.watcher as watcher_mod

    calls = [0]
    real = procs_mod.worker_pids

    def flaky(pid: int | None = None) -> list[int]:
        calls[0] += 1
        if calls[0] == 2:  # the first tick's worker listing
            raise RuntimeError("bug")
        return real(pid)

    monkeypatch.setattr(procs_mod, "worker_pids", flaky)
    monkeypatch.setattr(watcher_mod, "_WORKERS_EVERY", 1)
    w = watched(hooks, FakeLoader(100_000, batch_size=4), state)
    loop = TrainLoop(w, epochs=1, step_s=0.005)
    loop.start()
    samples = collect_for(agent, 1.0)
    loop.stop.set()
    loop.join(5)
    assert calls[0] >= 3 and any("trainer.resnet50.step_time_ms" in m for m in samples)
    assert w.link._thread.is_alive()


@pytest.mark.usefixtures("fast")
def test_wrapping_again_replaces_the_jobs_hook(
    agent: TrainerSource, state: str, hooks: list[WatchedLoader[Any]]
) -> None:
    first = watched(hooks, FakeLoader(10), state)
    assert wait_for(lambda: len(agent.peers("resnet50")) == 1)
    second = watched(hooks, FakeLoader(10), state)
    assert not first.link._thread.is_alive()
    assert wait_for(lambda: len(agent.peers("resnet50")) == 1 and second.link.connected)
    assert len(list(second)) == 10


@pytest.mark.usefixtures("fast")
def test_explicit_steps(agent: TrainerSource, state: str, hooks: list[WatchedLoader[Any]]) -> None:
    from agent import hook

    w = watched(hooks, FakeLoader(100_000, batch_size=4), state)
    end = time.monotonic() + 0.8
    for i, _ in enumerate(w, 1):  # two batches per optimiser step (gradient accumulation)
        time.sleep(0.005)
        if i % 2 == 0:
            hook.step()
        if time.monotonic() > end:
            break
    during = collect_for(agent, 0.3)[0]  # what arrived while training ran
    step_s = during["trainer.resnet50.step_time_ms"] / 1000
    assert step_s > 0.009  # two batches a step, not one
    assert during["trainer.resnet50.samples_per_s"] * step_s == pytest.approx(8.0, rel=0.35)
