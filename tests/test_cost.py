"""What the agent costs against its budget: the window, the decision and its reason, the live host
telling when it goes over, /metrics, and the config."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from agent.cli.auto import snapshot_path, write_snapshot
from agent.config.model import AgentConfig
from agent.cost import CostBudget, CostConfig, CostReading, Share
from agent.diagnosis.engine import diagnose
from agent.live import LiveHost
from agent.service import metrics
from agent.service.guard import Guard, fs_host
from agent.service.metrics import cost_text
from agent.service.observers import Observation, ReplayObserver
from agent.service.state import ServiceState
from bpf.stats import ProgramCost
from core import statedir
from core.hostfs import HostFS
from core.window import Window
from tests.fakes.fake_kernel import fake_host
from tests.service_helpers import INCIDENT

# -- the budget ---------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_the_budget_judges_a_full_window_only_and_says_why() -> None:
    clock = Clock()
    b = CostBudget(CostConfig(budget_cores=0.01, window_s=60), clock=clock)
    cpu = bpf = 0.0
    b.observe(cpu, bpf)
    # 2 % of a core for 30 s: too early to judge.
    for _ in range(30):
        clock.t += 1
        cpu += 0.015
        bpf += 0.005
        share = b.observe(cpu, bpf)
    assert share is not None and share.total == pytest.approx(0.02)
    assert b.over_budget() is None
    for _ in range(30):
        clock.t += 1
        cpu += 0.015
        bpf += 0.005
        b.observe(cpu, bpf)
    why = b.over_budget()
    assert why is not None
    assert "2.00 % of a core over the last 60 s" in why
    assert "its process 1.50 %, its eBPF programs 0.50 %" in why
    assert "over its budget of 1 % of a core" in why


def test_the_budget_is_met_again_only_well_under_it() -> None:
    clock = Clock()
    b = CostBudget(CostConfig(budget_cores=0.01, window_s=10), clock=clock)
    cpu = 0.0

    def second(used: float) -> None:
        nonlocal cpu
        clock.t += 1
        cpu += used
        b.observe(cpu, 0.0)

    second(0.0)
    for _ in range(10):
        second(0.02)
    assert b.over_budget() is not None
    for _ in range(10):
        second(0.009)  # under the budget, not under 80 % of it
    assert b.over_budget() is not None
    for _ in range(10):
        second(0.005)
    assert b.over_budget() is None


def test_cpu_held_out_of_the_budget_is_not_counted() -> None:
    clock = Clock()
    b = CostBudget(CostConfig(budget_cores=0.01, window_s=10), clock=clock)
    b.observe(0.0, 0.0)
    clock.t += 10
    b.exclude(3.0)  # a reload's compile
    share = b.observe(3.05, 0.0)
    assert share is not None and share.agent == pytest.approx(0.005)
    assert b.over_budget() is None


def test_start_up_before_a_restart_is_not_held_against_the_budget() -> None:
    clock = Clock()
    b = CostBudget(CostConfig(budget_cores=0.01, window_s=10), clock=clock)
    b.observe(0.0, 0.0)
    clock.t += 5
    b.observe(1.0, 0.0)  # start-up: imports, the first ticks (20 % of a core)
    b.restart()  # the API is up
    cpu = 1.0
    for _ in range(11):  # the first reading after the restart starts the window
        clock.t += 1
        cpu += 0.005
        share = b.observe(cpu, 0.0)
    assert share is not None and share.span_s == 10 and share.agent == pytest.approx(0.005)
    assert b.over_budget() is None


def test_the_live_host_tells_when_it_goes_over_and_back_and_the_report_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    live = LiveHost(HostFS(tmp_path), bpf=False)
    live.budget = CostBudget(CostConfig(budget_cores=0.01, window_s=5), clock=clock)
    used = [0.0]
    monkeypatch.setattr("agent.live.process_usage", lambda: (used[0], 50 << 20))
    told: list[str | None] = []
    live.on_budget = told.append

    def second(cpu: float) -> None:
        clock.t += 1
        used[0] += cpu
        live.check_cost()

    live.check_cost()
    for _ in range(6):
        second(0.05)
    assert len(told) == 1 and told[0] is not None and "over its budget" in told[0]
    assert live.cost is not None and live.cost.over == told[0]
    assert live.cost.rss_bytes == 50 << 20
    assert live._cost_notes() == [f"cost: {told[0]}"]
    for _ in range(12):
        second(0.0)
    assert told[-1] is None and len(told) == 2
    assert live._cost_notes() == []


# -- /metrics and the config ---------------------------------------------------------------


def test_metrics_carry_each_program_and_the_agent() -> None:
    reading = CostReading(
        cpu_s=12.5,
        rss_bytes=90 << 20,
        programs={
            "sched/sched_switch": ProgramCost(3_000_000_000, 1_000_000),
            "block/block_rq_issue": ProgramCost(0, 0),
        },
        bpf_measured=True,
        bpf_how="on",
        share=Share(span_s=60, agent=0.006, bpf=0.002),
        budget_cores=0.01,
        over=None,
    )
    fams = {f.name: f for f in text_string_to_metric_families(cost_text(reading).decode())}
    run = {s.labels["program"]: s for s in fams["idletune_bpf_run_seconds"].samples}
    assert run["sched/sched_switch"].value == 3.0
    assert run["sched/sched_switch"].labels["collector"] == "sched"
    assert run["sched/sched_switch"].name == "idletune_bpf_run_seconds_total"
    events = {s.labels["program"]: s.value for s in fams["idletune_bpf_events"].samples}
    assert events["sched/sched_switch"] == 1_000_000
    assert fams["idletune_agent_cpu_seconds"].samples[0].value == 12.5
    assert fams["idletune_agent_cpu_seconds"].samples[0].name == "idletune_agent_cpu_seconds_total"
    assert fams["idletune_agent_rss_bytes"].samples[0].value == 90 << 20
    parts = {s.labels["part"]: s.value for s in fams["idletune_agent_cost_cores"].samples}
    assert parts == {"process": 0.006, "bpf": 0.002}
    assert fams["idletune_agent_cost_budget_cores"].samples[0].value == 0.01
    assert fams["idletune_agent_over_budget"].samples[0].value == 0.0
    assert fams["idletune_bpf_run_time_measured"].samples[0].value == 1.0
    assert cost_text(None) == b""


def test_cost_config_has_its_defaults_and_refuses_unknown_keys() -> None:
    cfg = AgentConfig.model_validate({"cost": {"budget_cores": 0.02}})
    assert cfg.cost.budget_cores == 0.02
    assert cfg.cost.window_s == 60 and cfg.cost.bpf_stats
    assert CostConfig().budget_cores == 0.01
    with pytest.raises(ValueError):
        AgentConfig.model_validate({"cost": {"budget": 0.02}})


# -- the service serialises what is asked for ---------------------------------------------------


class GrowingObserver:
    """A recorded incident whose window goes on filling after each observe, as the loop's does."""

    def __init__(self) -> None:
        obs = ReplayObserver(INCIDENT).observe()
        self.window = Window(horizon_s=1e9, samples=obs.window.samples[:10])
        self.rest = obs.window.samples[10:]
        self.obs = obs

    def observe(self) -> Observation:
        return replace(self.obs, window=self.window)

    def close(self) -> None:
        pass


def test_a_snapshot_is_serialised_when_first_asked_from_what_the_refresh_saw(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[str] = []
    real = metrics.gauges_text

    def counted(*args: Any) -> bytes:
        made.append("gauges")
        return real(*args)

    def diagnosed(*args: Any) -> Any:
        made.append("diagnosis")
        return diagnose(*args)

    monkeypatch.setattr("agent.service.state.gauges_text", counted)
    monkeypatch.setattr("agent.service.state.diagnose", diagnosed)
    observer = GrowingObserver()
    fh = fake_host(tmp_path / "root")
    state = ServiceState(observer, Guard(tmp_path / "state", lambda: fs_host(fh.host)))
    snap = state.refresh()
    assert made == []  # nobody asked yet
    observer.window.add(observer.rest[0])  # the loop goes on after the refresh
    assert snap.kpi_json == snap.kpi_json and snap.gauges is snap.gauges
    assert made == ["diagnosis", "gauges"]
    assert snap.diagnosis is snap.diagnosis and made == ["diagnosis", "gauges"]
    assert len(snap.kpi.points) == 10  # not 11: the samples as of the refresh


def test_the_status_snapshot_is_written_when_it_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IDLETUNE_STATE_DIR", str(tmp_path))
    writes: list[str] = []
    real = statedir.write_file

    def counted(path: Any, text: str, mode: int = 0o600) -> None:
        writes.append(text)
        real(path, text, mode)

    monkeypatch.setattr(statedir, "write_file", counted)
    loop = SimpleNamespace(snapshot=lambda: {"mode": "observe"})
    for _ in range(3):
        write_snapshot(loop)  # type: ignore[arg-type]
    assert len(writes) == 1
    loop.snapshot = lambda: {"mode": "auto"}
    write_snapshot(loop)  # type: ignore[arg-type]
    assert len(writes) == 2
    snapshot_path().unlink()  # gone: written again though unchanged
    write_snapshot(loop)  # type: ignore[arg-type]
    assert len(writes) == 3 and snapshot_path().exists()


def test_serve_restarts_the_budget_once_the_api_listens() -> None:
    """`idletune serve` starts its budget's window when uvicorn is up, not before its imports."""
    import socket
    import threading

    import uvicorn

    from agent.cli.serve import _quiet_server

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])

    async def app(scope: Any, receive: Any, send: Any) -> None:  # pragma: no cover - never called
        pass

    serving = threading.Event()
    server = _quiet_server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"), serving.set)
    t = threading.Thread(target=server.run, daemon=True)
    t.start()
    assert serving.wait(10)
    with socket.create_connection(("127.0.0.1", port), timeout=5):
        pass  # it listens when told
    server.should_exit = True
    t.join(10)
    assert not t.is_alive()
