"""The demo's replay path: the bundled readahead incident through the same wiring as a live loop."""

from __future__ import annotations

import io

from rich.console import Console

from agent.demo import INCIDENT, run_replay


def test_the_replay_applies_through_the_gate_and_restores_everything() -> None:
    out = io.StringIO()
    line = run_replay(Console(file=out, width=200), "testing the replay")
    assert line.startswith(f"result: replay of {INCIDENT}")
    assert "block.read_ahead_kb@" in line and "tier1.consensus" in line, line
    assert line.endswith("all changes restored"), line
    log = out.getvalue()
    assert "live demo unavailable (testing the replay)" in log
    assert "rollback  block.read_ahead_kb@" in log and "reverted" in log
