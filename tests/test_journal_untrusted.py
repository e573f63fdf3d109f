"""The journal, the state directory and its files are data, never instructions to root."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent.cli.main import _register_all, app
from agent.service.auth import load_token
from core.hostfs import HostFS
from core.proposal import Action
from core.statedir import StateError
from guardrails.approvals import ApprovalStore
from guardrails.executor import Executor
from guardrails.filejournal import FileJournal, this_process
from guardrails.recovery import rollback_all
from primitives.host import Host
from tests.fakes.fake_kernel import FakeKernelFS, make_root

_register_all()
runner = CliRunner()
SWAP = "/proc/sys/vm/swappiness"


def _change(
    cid: int, primitive: str, where: str, saved: str, after: str, target: str | None = None
) -> dict[str, Any]:
    loc = {"kind": "file", "where": where, "key": ""}
    return {
        "id": cid,
        "primitive": primitive,
        "target": target,
        "value": after,
        "reason": "crafted",
        "saved": [{"loc": loc, "value": saved}],
        "revert": [{"loc": loc, "value": saved}],
        "after": [{"loc": loc, "value": after}],
        "state": "applied",
    }


def _plant(state: Path, *changes: dict[str, Any]) -> None:
    """Lines nobody signed, appended as an editor (or another user) would."""
    state.mkdir(parents=True, exist_ok=True)
    with open(state / "journal.jsonl", "a") as f:
        for c in changes:
            f.write(
                json.dumps({"t": 1.0, "event": "applied", "id": c["id"], "owner": None, "change": c}) + "\n"
            )


def _setup(tmp_path: Path) -> tuple[FakeKernelFS, Path, Path]:
    fs = make_root(tmp_path / "root")
    passwd = tmp_path / "root" / "etc" / "passwd"
    passwd.parent.mkdir(parents=True)
    passwd.write_text("root:x:0:0::/root:/bin/sh\n")
    return fs, tmp_path / "state", passwd


def _rollback_all(fs: FakeKernelFS, state: Path) -> list[Any]:
    j = FileJournal(state, owner=this_process())
    return rollback_all(Executor(Host(fs), journal=j), j)


@pytest.mark.parametrize(
    "where",
    ["/etc/passwd", "/proc/sys/vm/../../../etc/passwd", "/sys/block/nvme0n1/queue/read_ahead_kb"],
)
def test_a_revert_goes_only_to_the_primitives_own_locations(tmp_path: Path, where: str) -> None:
    fs, state, passwd = _setup(tmp_path)
    (tmp_path / "root" / SWAP.lstrip("/")).write_text("40\n")
    _plant(state, _change(1, "vm.swappiness", where, "owned::0:0::/:/bin/sh", "40"))
    _plant(state, _change(2, "vm.swappiness", SWAP, "60", "40"))
    results = _rollback_all(fs, state)
    assert [(r.change_id, r.status) for r in results] == [(2, "reverted"), (1, "refused")]
    assert "does not save" in results[1].reason and "skipped" in results[1].reason
    assert passwd.read_text() == "root:x:0:0::/root:/bin/sh\n"
    assert all(path.startswith(("/proc/sys/vm/swappiness",)) for path, _ in fs.writes)
    assert (tmp_path / "root" / SWAP.lstrip("/")).read_text().strip() == "60"


def test_an_unknown_primitive_is_reported_and_the_rest_restored(tmp_path: Path) -> None:
    fs, state, _ = _setup(tmp_path)
    ex = Executor(Host(fs), journal=FileJournal(state))
    assert ex.apply(Action(primitive="vm.swappiness", value=40, reason="t")).status == "applied"
    _plant(state, _change(7, "vm.turbo_mode", "/proc/sys/vm/turbo", "1", "0"))
    results = _rollback_all(fs, state)
    assert {r.change_id: r.status for r in results} == {7: "refused", 1: "reverted"}
    assert "not in the catalogue" in results[0].reason
    assert (tmp_path / "root" / SWAP.lstrip("/")).read_text().strip() == "60"
    assert [c.id for c in FileJournal(state).open_changes()] == [7]  # left for a person to look at


def test_unsigned_values_outside_the_bounds_are_refused_signed_ones_are_trusted(tmp_path: Path) -> None:
    fs, state, _ = _setup(tmp_path)
    swap = tmp_path / "root" / SWAP.lstrip("/")
    swap.write_text("40\n")
    _plant(state, _change(1, "vm.swappiness", SWAP, "100000", "40"))
    [res] = _rollback_all(fs, state)
    assert res.status == "refused" and "unsigned" in res.reason
    assert swap.read_text().strip() == "40"

    # idletune read 32768 itself (a setting outside the catalogue's 16..16384): its own signed
    # record restores it; the same record copied without the signature does not.
    state2 = tmp_path / "state2"
    ra = tmp_path / "root" / "sys/block/vdb/queue/read_ahead_kb"
    ra.write_text("32768\n")
    j = FileJournal(state2)
    act = Action(primitive="block.read_ahead_kb", target="vdb", value=16384, reason="t")
    res2 = Executor(Host(fs), journal=j).apply(act)
    assert res2.status == "applied", res2
    copied = [json.loads(x) for x in (state2 / "journal.jsonl").read_text().splitlines()]
    [rec] = [c["change"] for c in copied if c["event"] == "applied"]
    state3 = tmp_path / "state3"
    _plant(state3, rec)
    [refused] = _rollback_all(fs, state3)
    assert refused.status == "refused" and ra.read_text().strip() == "16384"
    [restored] = _rollback_all(fs, state2)
    assert restored.status == "reverted" and ra.read_text().strip() == "32768"


def test_a_symlinked_journal_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    fs, state, passwd = _setup(tmp_path)
    state.mkdir()
    (state / "journal.jsonl").symlink_to(passwd)
    with pytest.raises(StateError, match="symbolic link"):
        Executor(Host(fs), journal=FileJournal(state)).apply(
            Action(primitive="vm.swappiness", value=40, reason="t")
        )
    assert passwd.read_text() == "root:x:0:0::/root:/bin/sh\n"
    assert (tmp_path / "root" / SWAP.lstrip("/")).read_text().strip() == "60"


def test_a_state_dir_open_to_others_or_a_journal_of_another_owner_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    with pytest.raises(StateError, match="writable by group or others"):
        FileJournal(shared).lines()
    assert (os.stat(shared).st_mode & 0o7777) == 0o1777  # never chmod'ed
    monkeypatch.setenv("IDLETUNE_STATE_DIR", str(shared))
    r = runner.invoke(app, ["rollback", "--all"])
    assert r.exit_code == 2 and "chmod go-w" in r.output and len(r.output.strip().splitlines()) == 1

    state = tmp_path / "state"
    state.mkdir()
    (state / "journal.jsonl").write_text("")
    if os.geteuid() == 0:
        os.chown(state / "journal.jsonl", 65534, 65534)
        with pytest.raises(StateError, match="owned by uid 65534"):
            FileJournal(state).lines()
    os.chmod(state / "journal.jsonl", 0o666)
    with pytest.raises(StateError):
        FileJournal(state).lines()


def test_the_token_is_created_never_adopted(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    secret = tmp_path / "secret"
    secret.write_text("x" * 40 + "\n")
    os.chmod(secret, 0o644)
    (state / "token").symlink_to(secret)
    with pytest.raises(StateError, match="symbolic link"):
        load_token(state)
    assert (os.stat(secret).st_mode & 0o777) == 0o644  # not chmod'ed through the link
    (state / "token").unlink()
    (state / "token").write_text("y" * 40 + "\n")
    os.chmod(state / "token", 0o644)
    with pytest.raises(StateError, match="open to group or others"):
        load_token(state)
    assert (os.stat(state / "token").st_mode & 0o777) == 0o644
    fresh = tmp_path / "fresh"
    token = load_token(fresh)
    assert len(token) >= 32 and (os.stat(fresh / "token").st_mode & 0o777) == 0o600
    assert load_token(fresh) == token


def test_host_paths_never_leave_the_root(tmp_path: Path) -> None:
    fs = HostFS(tmp_path / "root")
    (tmp_path / "root" / "proc").mkdir(parents=True)
    (tmp_path / "outside").write_text("keep\n")
    for bad in ("/proc/../../outside", "/../outside", "relative", "/proc/\0x"):
        with pytest.raises(ValueError):
            fs.path(bad)
    (tmp_path / "root" / "proc" / "link").symlink_to(tmp_path / "outside")
    with pytest.raises(ValueError, match="through a link"):
        fs.path("/proc/link")
    (tmp_path / "root" / "proc" / "knob").symlink_to(tmp_path / "root" / "proc" / "real")
    (tmp_path / "root" / "proc" / "real").write_text("1\n")
    with pytest.raises(OSError):
        fs.write_text("/proc/knob", "2")  # a link as the knob itself is never written through
    assert (tmp_path / "outside").read_text() == "keep\n"


def test_approval_ids_name_no_file_outside_the_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state = tmp_path / "state"
    monkeypatch.setenv("IDLETUNE_STATE_DIR", str(state))
    outside = tmp_path / "x.json"
    outside.write_text("{}")
    store = ApprovalStore(state / "approvals")
    a, why = store.decide("../../x", True, "me")
    assert a is None and "not an approval id" in why
    r = runner.invoke(app, ["approve", "../../x"])
    assert r.exit_code != 0 and "not an approval id" in r.output
    assert outside.read_text() == "{}"


def test_journal_strings_reach_the_terminal_cleaned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fs, _, _ = _setup(tmp_path)
    state = Path(os.environ["IDLETUNE_STATE_DIR"])
    monkeypatch.setenv("IDLETUNE_ROOT", str(fs.root))
    evil = "\x1b]0;pwned\x07\x1b[2J"
    _plant(state, _change(1, "vm.swappiness" + evil, SWAP, "60", "40", target=evil))
    r = runner.invoke(app, ["rollback", "--all"])
    assert r.exit_code == 1 and "refused:" in r.output
    assert "\x1b" not in r.output and "\x07" not in r.output
