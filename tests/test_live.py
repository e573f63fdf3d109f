from __future__ import annotations

import shutil
from pathlib import Path

from agent.jobs import OperatorJob
from agent.live import LiveHost
from core.hostfs import HostFS
from core.sample import SourceStatus

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
