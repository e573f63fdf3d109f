from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from agent import live as live_module
from agent.jobs import OperatorJob
from agent.live import LiveHost
from core.hostfs import HostFS
from core.sample import Sample, SourceStatus
from core.window import Window

FIXTURES = Path(__file__).parent / "fixtures" / "proc"


def fake_root(tmp_path: Path) -> HostFS:
    shutil.copytree(FIXTURES / "t0", tmp_path / "proc")
    (tmp_path / "sys" / "block").mkdir(parents=True)
    (tmp_path / "proc" / "sys" / "vm").mkdir(parents=True)
    (tmp_path / "proc" / "sys" / "vm" / "dirty_ratio").write_text("20\n")
    (tmp_path / "proc" / "sys" / "kernel").mkdir(parents=True)
    (tmp_path / "proc" / "sys" / "kernel" / "osrelease").write_text("6.1.0-test\n")
    return HostFS(tmp_path)


def test_sources_in_precedence_order_with_bpf_off(tmp_path: Path) -> None:
    live = LiveHost(fake_root(tmp_path), bpf=False, state_dir=str(tmp_path / "state"))
    assert [s.name for s in live.collector.sources] == ["bpf", "nvml", "trainer", "procfs"]
    assert live.collector.sources[0].start() == SourceStatus(live=False, reason="turned off by the operator")


def test_observe_builds_a_report_with_knobs_jobs_and_sources(tmp_path: Path) -> None:
    fs = fake_root(tmp_path)
    job = OperatorJob("trainer", 1)
    live = LiveHost(fs, interval_s=0.05, bpf=False, operator_jobs=[job], state_dir=str(tmp_path / "state"))
    window, report = live.observe(0.2)
    assert len(window) >= 2
    assert report.sources["procfs"].live
    assert not report.sources["bpf"].live
    # The knob comes from the catalogue, read through the fake root.
    assert report.knobs.get("vm.dirty_ratio") == 20
    assert "mem.available_mib" in report.metrics
    assert report.host.kernel == "6.1.0-test"


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The length of each window the live host summarises, from now on."""
    out: list[int] = []
    real = live_module.build_report

    def counted(window: Window, *args: Any, **kw: Any) -> Any:
        out.append(len(window))
        return real(window, *args, **kw)

    monkeypatch.setattr(live_module, "build_report", counted)
    return out


def test_report_later_takes_the_window_now_and_summarises_when_called(
    tmp_path: Path, made: list[int]
) -> None:
    fs = fake_root(tmp_path)
    live = LiveHost(fs, interval_s=0.05, bpf=False, state_dir=str(tmp_path / "state"))
    window, _ = live.observe(0.2)
    made.clear()
    n = len(window)
    later = live.report_later(window)
    assert made == []  # nothing summarised yet
    window.add(Sample(t=(window.end or 0.0) + 1.0, m={"cpu.util_pct": 50.0}))  # the loop goes on
    report = later()
    assert made == [n] and report.window.samples == n  # the samples as of the call
    assert report.knobs.get("vm.dirty_ratio") == 20


def test_the_service_makes_a_report_only_for_a_refresh_somebody_reads(
    tmp_path: Path, made: list[int]
) -> None:
    from agent.service.guard import Guard, fs_host
    from agent.service.observers import LoopObserver
    from agent.service.state import ServiceState
    from primitives.host import Host

    fs = fake_root(tmp_path)
    live = LiveHost(fs, interval_s=0.05, bpf=False, state_dir=str(tmp_path / "state"))
    live.start()
    live.collector.tick()
    window = Window(horizon_s=600.0)
    guard = Guard(tmp_path / "g", lambda: fs_host(Host(fs)))
    state = ServiceState(LoopObserver(live, window, live.report_later), guard)
    for _ in range(5):  # the loop's ticks: a sample, then a refresh
        window.add(live.tick())
        state.refresh()
    assert made == []
    snap = state.snapshot()
    assert snap.report is snap.report and made == [5]
    assert snap.report_json and snap.diagnosis is not None and made == [5]
    live.close()
