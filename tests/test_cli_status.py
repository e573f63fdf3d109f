"""`idletune status`: what the journal holds, what waits for approval, the last verdicts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.cli.main import _register_all, app
from core.proposal import Action
from guardrails.approvals import ApprovalStore
from guardrails.audit import AuditLog
from tests.fakes.fake_kernel import make_root

_register_all()
runner = CliRunner()


def test_status_shows_managed_pending_and_verdicts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_root(tmp_path / "root", devices=("loop0",))
    monkeypatch.setenv("IDLETUNE_ROOT", str(tmp_path / "root"))
    r = runner.invoke(app, ["status"])
    assert r.exit_code == 0 and "agent: not running" in r.output and "managed knobs: none" in r.output
    assert runner.invoke(app, ["apply", "block.read_ahead_kb@loop0=1024", "--yes"]).exit_code == 0
    a = ApprovalStore().request(Action(primitive="mm.thp_enabled", value="never", reason="r"), 2, None)
    AuditLog().write(
        "verdict",
        knob="block.read_ahead_kb@loop0",
        verdict="beneficial",
        kpi="k",
        kpi_before=100.0,
        kpi_after=400.0,
    )
    r = runner.invoke(app, ["status"])
    assert (
        "block.read_ahead_kb@loop0: 128 -> 1024" in r.output and "kept until `idletune rollback`" in r.output
    )
    assert f"idletune approve {a.id}" in r.output
    assert "beneficial on k (100.0 -> 400.0)" in r.output
    doc = json.loads(runner.invoke(app, ["status", "--json"]).output)
    assert doc["managed"][0]["value"] == 1024 and doc["pending_approvals"][0]["id"] == a.id
