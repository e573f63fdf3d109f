"""`idletune apply`, `rollback`, `approve`/`reject` on a fake root, each as its own process would."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.cli.main import _register_all, app
from guardrails.approvals import ApprovalStore
from guardrails.filejournal import FileJournal
from tests.fakes.fake_kernel import make_root

_register_all()
runner = CliRunner()


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    make_root(tmp_path / "root", devices=("loop0",))
    monkeypatch.setenv("IDLETUNE_ROOT", str(tmp_path / "root"))
    return tmp_path / "root"


def _ra(root: Path) -> str:
    return (root / "sys/block/loop0/queue/read_ahead_kb").read_text().strip()


def test_apply_then_rollback_all_restores(root: Path) -> None:
    r = runner.invoke(app, ["apply", "block.read_ahead_kb@loop0=1024", "--yes", "--reason", "test"])
    assert r.exit_code == 0, r.output
    assert "applied: block.read_ahead_kb@loop0 128 -> 1024" in r.output
    assert _ra(root) == "1024"
    r = runner.invoke(app, ["apply", "vm.dirty_background_ratio=5", "--yes"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["rollback", "--all"])
    assert r.exit_code == 0, r.output
    assert r.output.count("reverted:") == 2
    assert _ra(root) == "128"
    assert (root / "proc/sys/vm/dirty_background_ratio").read_text().strip() == "10"
    assert FileJournal().open_changes() == []
    audit = [json.loads(x) for x in (Path(os.environ["IDLETUNE_STATE_DIR"]) / "audit.jsonl").open()]
    assert [a["trigger"] for a in audit] == ["manual", "manual", "rollback", "rollback"]
    assert audit[0]["rule"] == "tier1.person"


def test_apply_is_gated(root: Path) -> None:
    r = runner.invoke(app, ["apply", "block.read_ahead_kb@loop0=99999", "--yes"])
    assert r.exit_code == 1 and "(bounds)" in r.output
    assert runner.invoke(app, ["apply", "block.read_ahead_kb@loop0=1024", "--yes"]).exit_code == 0
    # Another command a second later: the primitive's cooldown, kept across processes by the journal.
    r = runner.invoke(app, ["apply", "block.read_ahead_kb@loop0=2048", "--yes"])
    assert r.exit_code == 1 and "(cooldown)" in r.output
    assert _ra(root) == "1024"


def test_apply_without_a_terminal_needs_yes(root: Path) -> None:
    r = runner.invoke(app, ["apply", "block.read_ahead_kb@loop0=1024"])
    assert r.exit_code == 2 and "--yes" in r.output
    assert _ra(root) == "128"


def test_rollback_one_and_errors(root: Path) -> None:
    assert runner.invoke(app, ["rollback"]).exit_code == 2
    assert "nothing to roll back" in runner.invoke(app, ["rollback", "--all"]).output
    runner.invoke(app, ["apply", "block.read_ahead_kb@loop0=1024", "--yes"])
    assert runner.invoke(app, ["rollback", "99"]).exit_code == 2
    [c] = FileJournal().open_changes()
    r = runner.invoke(app, ["rollback", str(c.id)])
    assert r.exit_code == 0 and _ra(root) == "128"


def test_operator_write_after_apply_is_released_by_rollback(root: Path) -> None:
    runner.invoke(app, ["apply", "block.read_ahead_kb@loop0=1024", "--yes"])
    (root / "sys/block/loop0/queue/read_ahead_kb").write_text("512\n")
    r = runner.invoke(app, ["rollback", "--all"])
    assert "released:" in r.output and _ra(root) == "512"


def test_approve_and_reject_from_the_command_line(root: Path) -> None:
    from core.proposal import Action

    store = ApprovalStore()
    a = store.request(Action(primitive="mm.thp_enabled", value="never", reason="r"), 2, "memory_reclaim")
    r = runner.invoke(app, ["approvals"])
    assert a.id in r.output and "mm.thp_enabled -> never" in r.output
    r = runner.invoke(app, ["approve", a.id, "--by", "alice"])
    assert r.exit_code == 0 and "approved" in r.output
    assert store.get(a.id).status == "approved"  # type: ignore[union-attr]
    r = runner.invoke(app, ["reject", a.id])
    assert r.exit_code == 2 and "already approved" in r.output
    assert runner.invoke(app, ["approve", "nope"]).exit_code == 2
