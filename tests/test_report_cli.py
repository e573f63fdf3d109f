"""`idletune report` end to end over a fake host root (IDLETUNE_ROOT), eBPF off."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from agent.cli.report import capability_lines, register, with_unit
from core.hostfs import ROOT_ENV
from core.sample import SourceStatus

FIX = Path(__file__).parent / "fixtures" / "proc"
FAST = ["--duration", "0.3", "--interval", "0.1"]


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        pass

    register(app)
    return app


@pytest.fixture
def fake_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(FIX / "t0", tmp_path / "proc")
    (tmp_path / "proc/sys/kernel").mkdir(parents=True)
    (tmp_path / "proc/sys/kernel/osrelease").write_text("6.1.0-fake\n")
    (tmp_path / "sys/devices/system/cpu").mkdir(parents=True)
    (tmp_path / "sys/devices/system/cpu/online").write_text("0-7\n")
    (tmp_path / "sys/block/vda").mkdir(parents=True)
    (tmp_path / "sys/block/vda/size").write_text("1000\n")
    monkeypatch.setenv(ROOT_ENV, str(tmp_path))
    return tmp_path


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(_app(), ["report", *args])
    return result.exit_code, result.stdout, result.stderr


def test_json_has_metrics_and_sources(fake_root: Path) -> None:
    code, out, _ = _run(*FAST, "--no-bpf", "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["metrics"]["mem.available_mib"] == pytest.approx(24319932 / 1024)
    assert doc["metrics"]["psi.cpu.some_avg10"] == 0.01
    # The files do not change under a fake root, so every rate is a true zero.
    assert doc["metrics"]["io.vda.read_iops"] == 0.0
    assert doc["sources"]["bpf"] == {"live": False, "reason": "turned off by the operator"}
    assert doc["sources"]["procfs"] == {"live": True, "reason": ""}
    # GPU and trainer sources always report, live or not, so a reader sees what is missing.
    assert {"nvml", "trainer"} <= set(doc["sources"])
    assert doc["host"] == {
        "cpus": 8,
        "numa_nodes": 1,
        "gpus": 0,
        "gpu_model": None,
        "kernel": "6.1.0-fake",
        "block_devices": ["vda"],
    }
    assert doc["window"]["samples"] == 3
    # The fake root has no /proc/sys: no knob to read, none invented.
    assert doc["knobs"] == {}


def test_tables_and_one_line_per_missing_piece(fake_root: Path) -> None:
    shutil.rmtree(fake_root / "proc/pressure")
    code, out, _ = _run(*FAST, "--no-bpf")
    assert code == 0  # degraded, not failed
    for heading in ("io", "sched", "mem", "sources"):
        assert any(line.strip() == heading for line in out.splitlines()), heading
    assert "mem.available_mib" in out and "MiB" in out
    assert "psi." not in out
    missing = [ln for ln in out.splitlines() if " off: " in ln or " partial: " in ln]
    assert "eBPF collectors off: turned off by the operator — missing: block and scheduler latency" in missing
    assert "procfs partial: no PSI (kernel built without it or booted with psi=0)" in missing
    # Every line of the kind names one source, once.
    assert len(missing) == len({ln.split(" off: ")[0].split(" partial: ")[0] for ln in missing})


def test_no_live_source_is_one_line_error(fake_root: Path) -> None:
    (fake_root / "proc/stat").unlink()
    code, out, err = _run(*FAST, "--no-bpf")
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("idletune: no source could run")


def test_root_without_proc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ROOT_ENV, str(tmp_path))
    code, _, err = _run(*FAST, "--no-bpf")
    assert code == 2 and ROOT_ENV in err


def test_interval_longer_than_duration(fake_root: Path) -> None:
    code, _, err = _run("--duration", "0.2", "--interval", "1", "--no-bpf")
    assert code == 2 and "--interval" in err


def test_capability_lines() -> None:
    lines = capability_lines(
        {
            "bpf": SourceStatus(live=False, reason="not root"),
            "trainer": SourceStatus(live=False, reason="not root: run as root to read other users' jobs"),
            "nvml": SourceStatus(live=False, reason="no NVIDIA driver"),
            "procfs": SourceStatus(live=True),
            "custom": SourceStatus(live=False),
        }
    )
    assert lines == [
        "eBPF collectors off: not root — run as root for block and scheduler latency",
        "custom off: not running",
        "NVML off: no NVIDIA driver — missing: GPU utilisation, clocks and power",
        "trainer hook off: not root: run as root to read other users' jobs"
        " — missing: step time and data wait",
    ]


@pytest.mark.parametrize(
    ("v", "unit", "text"),
    [
        (0.0, "%", "0.00 %"),
        (0.5, "tasks", "0.50 tasks"),
        (0.004, "ms", "0.004 ms"),
        (23708.4, "MiB", "23,708 MiB"),
        (0.25, "0..1", "0.250"),
        (3.0, "bitmask", "0x3"),
    ],
)
def test_value_format(v: float, unit: str, text: str) -> None:
    assert with_unit(v, unit) == text


def test_the_collection_level_is_one_line(fake_root: Path) -> None:
    code, out, _ = _run(*FAST, "--no-bpf")
    assert code == 0
    lines = [ln for ln in out.splitlines() if ln.startswith("collection:")]
    assert lines == [
        "collection: full: a person asked: a one-shot command measures without a break"
        " — no hot-path collector runs, so the level changes nothing"
    ]
    code, out, _ = _run(*FAST, "--no-bpf", "--json")
    assert json.loads(out)["collection"]["level"] == "full"


def test_collection_line_says_the_cycle_and_the_share_measured() -> None:
    from agent.cli.report import collection_line
    from core.collection import CollectionLevel
    from core.report import HostInfo, build_report
    from core.sample import Sample
    from core.window import Window

    w = Window(
        samples=[Sample(t=0.0, m={"sched.migrations_per_s": 1.0})]
        + [Sample(t=float(t), m={"cpu.util_pct": 1.0}) for t in range(1, 10)]
    )
    lvl = CollectionLevel(
        level="duty", reason="no trigger", cause="no_trigger", duty_on_s=1.0, duty_period_s=10.0
    )
    report = build_report(w, HostInfo(cpus=2), collection=lvl)
    assert collection_line(report) == (
        "collection: duty (hot path 1 s in every 10 s, measured over 10% of the window): no trigger"
    )
    trig = CollectionLevel(level="full", reason="trigger: x", cause="trigger")
    full = build_report(w, HostInfo(cpus=2), collection=trig)
    assert collection_line(full) == "collection: full (hot path measured over 10% of the window): trigger: x"
    assert collection_line(build_report(w, HostInfo(cpus=2))) is None
    assert report.hot_share() == full.hot_share() == pytest.approx(0.1)
    off = build_report(w, HostInfo(cpus=2), collection=trig.model_copy(update={"hot_path": False}))
    assert off.hot_share() is None and build_report(w, HostInfo(cpus=2)).hot_share() is None
