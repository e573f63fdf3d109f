"""`idletune auto` collects as the daemon does: the hot path on a duty cycle, or throughout with
--collection full; the level shows in its view and in the snapshot `idletune status` reads."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from agent.cli.auto import render, snapshot_path, write_snapshot
from agent.cli.main import _register_all, app
from bpf.loader import COLLECTORS
from core import statedir
from core.collection import CollectionLevel
from tests.bpf_helpers import FakeBcc, all_maps, fake_host

_register_all()
runner = CliRunner()
DUTY = CollectionLevel(
    level="duty",
    reason="no trigger: all calm",
    cause="no_trigger",
    since=1.0,
    duty_on_s=1.0,
    duty_period_s=10.0,
)


def _auto(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *args: str
) -> tuple[FakeBcc, list[dict[str, Any]]]:
    """`idletune auto` for a second on a fake eBPF host (bcc faked, no kernel); the status
    snapshots it wrote while it ran."""
    bcc = FakeBcc()
    bcc.tables = all_maps()
    monkeypatch.setitem(sys.modules, "bcc", bcc)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    # The kernel's run-time statistics stay out of a test: the fake host has no bpf(2).
    monkeypatch.setattr("bpf.stats.RunTimeStats.start", lambda self: False)
    monkeypatch.setenv("IDLETUNE_ROOT", str(fake_host(tmp_path / "root")))
    snaps: list[dict[str, Any]] = []
    real = statedir.write_file

    def recorded(path: Any, text: str, mode: int = 0o600) -> None:
        if Path(path) == snapshot_path():
            snaps.append(json.loads(text))
        real(path, text, mode)

    monkeypatch.setattr(statedir, "write_file", recorded)
    r = runner.invoke(app, ["auto", "--duration", "1", "--mode", "observe", "--no-view", *args])
    assert r.exit_code == 0, r.output
    assert snaps, r.output
    return bcc, snaps


def test_auto_runs_the_hot_path_on_a_duty_cycle_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bcc, snaps = _auto(tmp_path, monkeypatch)
    # One interval in ten: the first interval's span ended at the first collect, the hot
    # tracepoints detached, the programs left loaded.
    detached = {tp for what, tp, _ in bcc.tp_log if what == "detach"}
    assert detached == {tp for name in ("sched", "block") for tp in COLLECTORS[name].hot}
    col = snaps[-1]["collection"]
    assert col["level"] == "duty" and col["cause"] == "no_trigger" and col["duty_period_s"] == 10.0
    assert "reason" not in col


def test_auto_collection_full_keeps_the_hot_path_attached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bcc, snaps = _auto(tmp_path, monkeypatch, "--collection", "full")
    assert bcc.tp_log == []
    col = snaps[-1]["collection"]
    assert col["level"] == "full" and col["cause"] == "duty_off"


def test_the_view_and_status_say_the_level() -> None:
    loop = SimpleNamespace(
        snapshot=lambda: {
            "mode": "observe",
            "safe_mode": "normal",
            "diagnosis": None,
            "managed": [],
            "judging": [],
        },
        events=[],
    )
    console = Console(record=True, width=200)
    console.print(render(loop, DUTY))  # type: ignore[arg-type]
    assert "collection duty: no trigger: all calm" in console.export_text()
    write_snapshot(loop, DUTY)  # type: ignore[arg-type]
    out = runner.invoke(app, ["status"]).output
    assert "collection: duty, hot path 1 s in every 10 s (no trigger)" in out, out
    asked = DUTY.model_copy(update={"level": "full", "cause": "asked", "hot_path": False})
    write_snapshot(loop, asked)  # type: ignore[arg-type]
    out = runner.invoke(app, ["status"]).output
    assert "collection: full (asked); no hot-path collector runs" in out, out
