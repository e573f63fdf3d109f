"""Stacked changes keep the original: rollbacks in any order, restarts, operators, concurrent applies."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.cli.main import _register_all, app
from core.proposal import Action
from guardrails.executor import Executor
from guardrails.filejournal import FileJournal, this_process
from guardrails.recovery import rollback_all, rollback_one
from primitives.host import Host
from tests.fakes.fake_kernel import FakeKernelFS, make_root

_register_all()
runner = CliRunner()
RA = "sys/block/loop0/queue/read_ahead_kb"


def _ra(root: Path) -> str:
    return (root / RA).read_text().strip()


def _apply(fs: FakeKernelFS, state: Path, value: int) -> int:
    """One `idletune apply` as its own process makes it: a fresh executor, no owner."""
    res = Executor(Host(fs), journal=FileJournal(state)).apply(
        Action(primitive="block.read_ahead_kb", target="loop0", value=value, reason="test")
    )
    assert res.status == "applied" and res.change_id is not None, res
    return res.change_id


def _rollback(fs: FakeKernelFS, state: Path, change_id: int) -> str:
    j = FileJournal(state, owner=this_process())
    res = rollback_one(Executor(Host(fs), journal=j), j, change_id)
    assert res is not None
    return res.status


@pytest.mark.parametrize("order", [(0, 1), (1, 0)])
def test_single_rollbacks_of_stacked_changes_restore_the_original_in_any_order(
    tmp_path: Path, order: tuple[int, int]
) -> None:
    fs = make_root(tmp_path / "root", devices=("loop0",))
    state = tmp_path / "state"
    ids = [_apply(fs, state, 256), _apply(fs, state, 1024)]
    assert _ra(tmp_path / "root") == "1024"
    first, second = ids[order[0]], ids[order[1]]
    assert _rollback(fs, state, first) == "reverted"
    # Undoing the older change first writes nothing: the newer change is still in force.
    assert _ra(tmp_path / "root") == ("1024" if first == ids[0] else "256")
    assert _rollback(fs, state, second) == "reverted"
    assert _ra(tmp_path / "root") == "128"
    assert FileJournal(state).open_changes() == []


def test_the_cli_rolls_back_the_older_change_first_without_losing_the_original(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    fs = make_root(root, devices=("loop0",))
    state = Path(os.environ["IDLETUNE_STATE_DIR"])
    monkeypatch.setenv("IDLETUNE_ROOT", str(root))
    ids = [_apply(fs, state, 256), _apply(fs, state, 1024)]
    r = runner.invoke(app, ["rollback", str(ids[0])])
    assert r.exit_code == 0 and "superseded by change" in r.output, r.output
    r = runner.invoke(app, ["rollback", str(ids[1])])
    assert r.exit_code == 0 and "reverted:" in r.output, r.output
    assert _ra(root) == "128"


def test_an_orphan_under_a_live_change_hands_its_original_up(tmp_path: Path) -> None:
    """A crashed agent's change under a manual one: the restart restores nothing it would lose."""
    fs = make_root(tmp_path / "root", devices=("loop0",))
    state = tmp_path / "state"
    _apply(fs, state, 256)
    top = _apply(fs, state, 1024)
    j = FileJournal(state, owner=this_process())
    results = rollback_all(Executor(Host(fs), journal=j), j)
    assert [r.status for r in results] == ["reverted", "reverted"]
    assert _ra(tmp_path / "root") == "128"
    assert top == max(r.change_id or 0 for r in results)


def test_an_operator_write_between_two_changes_is_respected(tmp_path: Path) -> None:
    fs = make_root(tmp_path / "root", devices=("loop0",))
    state = tmp_path / "state"
    older = _apply(fs, state, 256)
    (tmp_path / "root" / RA).write_text("512\n")  # the operator
    newer = _apply(fs, state, 1024)
    assert _rollback(fs, state, older) == "released"
    assert _rollback(fs, state, newer) == "reverted"
    assert _ra(tmp_path / "root") == "512"


def test_the_agent_does_not_take_a_manual_change_on_its_knob_for_an_operator(tmp_path: Path) -> None:
    """A running agent's change with `idletune apply` stacked on it: not drift; the agent's
    own revert at shutdown hands the original up, and the manual change's rollback restores it."""
    fs = make_root(tmp_path / "root", devices=("loop0",))
    state = tmp_path / "state"
    agent = Executor(Host(fs), journal=FileJournal(state, owner=this_process()))
    mine = agent.apply(Action(primitive="block.read_ahead_kb", target="loop0", value=256, reason="agent"))
    manual = _apply(fs, state, 1024)
    assert agent.drifted() == []
    assert mine.change_id is not None and agent.revert(mine.change_id).status == "reverted"
    assert _ra(tmp_path / "root") == "1024"
    assert _rollback(fs, state, manual) == "reverted"
    assert _ra(tmp_path / "root") == "128"


def _cli(root: Path, state: Path, spec: str) -> subprocess.Popen[str]:
    env = {**os.environ, "IDLETUNE_ROOT": str(root), "IDLETUNE_STATE_DIR": str(state)}
    return subprocess.Popen(
        [sys.executable, "-m", "agent.cli.main", "apply", spec, "--yes"],
        env=env,
        cwd=Path(__file__).resolve().parents[1],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


@pytest.mark.slow
def test_two_applies_at_once_never_both_pass_and_the_journal_matches_the_host(tmp_path: Path) -> None:
    for trial in range(8):
        root, state = tmp_path / f"root{trial}", tmp_path / f"state{trial}"
        make_root(root, devices=("loop0",))
        procs = [
            _cli(root, state, "block.read_ahead_kb@loop0=256"),
            _cli(root, state, "block.read_ahead_kb@loop0=1024"),
        ]
        outs = [(p.wait(timeout=60), p.stdout.read() if p.stdout else "") for p in procs]
        passed = [out for code, out in outs if code == 0]
        assert len(passed) == 1, outs
        assert any("(cooldown)" in out for code, out in outs if code != 0), outs
        [c] = FileJournal(state).open_changes()
        assert str(c.value) == _ra(root) and f"-> {_ra(root)}" in passed[0], (outs, c)


@pytest.mark.slow
def test_apply_reads_the_knob_only_under_the_writer_lock(tmp_path: Path) -> None:
    """A knob another writer is halfway through (the file truncated, the lock held) is not read
    as `no value`: the apply waits for the lock and confirms the value the writer left."""
    root, state = tmp_path / "root", tmp_path / "state"
    make_root(root, devices=("loop0",))
    with FileJournal(state).writing():
        (root / RA).write_text("")
        proc = _cli(root, state, "block.read_ahead_kb@loop0=256")
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(timeout=8)  # still waiting for the lock, not failed on the empty file
        (root / RA).write_text("512")
    code, out = proc.wait(timeout=60), proc.stdout.read() if proc.stdout else ""
    assert code == 0 and "512 -> 256" in out, out
    assert _ra(root) == "256"
