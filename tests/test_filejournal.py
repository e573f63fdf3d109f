"""The durable journal: originals on disk before the first write, owners, crashes, recovery."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from core.proposal import Action
from guardrails.executor import Executor
from guardrails.filejournal import FileJournal, JournalError, Owner, this_process
from guardrails.journal import ChangeRecord
from primitives.host import Host
from tests.fakes.fake_kernel import FakeKernelFS, fake_host, make_root, tree_bytes

REPO = Path(__file__).resolve().parents[1]


def _a(primitive: str, value: int | str, target: str | None = None) -> Action:
    return Action(primitive=primitive, target=target, value=value, reason="test")


def test_originals_are_on_disk_before_the_first_write(tmp_path: Path) -> None:
    fh = fake_host(tmp_path / "root")
    seen: list[list[str]] = []

    class Watching(FileJournal):
        def before_write(self, change: ChangeRecord) -> None:
            super().before_write(change)
            # What a process started now (after a crash) would read back from disk.
            other = FileJournal(tmp_path / "state")
            seen.append([str(w.value) for c in other.open_changes() for w in c.saved])
            assert fh.fs.read_value("/proc/sys/vm/dirty_bytes") == "0"

    ex = Executor(fh.host, journal=Watching(tmp_path / "state", owner=this_process()))
    res = ex.apply(_a("vm.dirty_bytes", 1 << 30))
    assert res.status == "applied"
    assert seen == [["0", "20"]]
    entry = FileJournal(tmp_path / "state").entries()[res.change_id or 0]
    assert entry.change.state == "applied" and entry.change.before == 0 and entry.t_applied is not None


def test_ids_are_unique_across_journals_sharing_a_file(tmp_path: Path) -> None:
    a, b = FileJournal(tmp_path), FileJournal(tmp_path)
    assert [a.next_id(), b.next_id(), a.next_id()] == [1, 2, 3]


def test_a_torn_last_line_is_skipped(tmp_path: Path) -> None:
    fh = fake_host(tmp_path / "root")
    j = FileJournal(tmp_path / "state", owner=this_process())
    Executor(fh.host, journal=j).apply(_a("vm.swappiness", 30))
    with open(j.path, "a") as f:
        f.write('{"t": 1, "event": "clos')
    assert [c.state for c in FileJournal(tmp_path / "state").open_changes()] == ["applied"]
    # The next append closes the torn line instead of gluing itself to it.
    assert j.next_id() == 2 and len(j.lines()) == 4


def test_an_edited_line_in_the_middle_is_an_error_not_silence(tmp_path: Path) -> None:
    j = FileJournal(tmp_path)
    j.next_id()
    with open(j.path, "a") as f:
        f.write('{"t": 1, "event": "nonsense", "id": 2}\n')
    with pytest.raises(JournalError, match="line 2"):
        j.open_changes()
    with pytest.raises(JournalError):
        j.next_id()  # no change is made on top of a journal that cannot be read


def test_owners_dead_and_alive() -> None:
    me = this_process()
    assert me.alive()
    assert not Owner(pid=me.pid, start=(me.start or 0) + 1, boot=me.boot).alive()  # pid reused
    assert not Owner(pid=me.pid, start=me.start, boot="another-boot").alive()  # rebooted since


def test_rollback_from_another_process_restores_and_closes(tmp_path: Path) -> None:
    fh = fake_host(tmp_path / "root")
    before = fh.state()
    j = FileJournal(tmp_path / "state", owner=None)  # a one-shot apply: no owner
    ex = Executor(fh.host, journal=j)
    ex.apply(_a("vm.dirty_bytes", 1 << 30))
    ex.apply(_a("block.read_ahead_kb", 1024, "vdb"))
    assert FileJournal(tmp_path / "state").orphaned() == []  # ownerless changes are kept on purpose
    later = FileJournal(tmp_path / "state", owner=this_process())
    ex2 = Executor(fh.host, journal=later)
    results = [ex2.recover(c) for c in reversed(later.open_changes())]
    assert [r.status for r in results] == ["reverted", "reverted"]
    assert fh.state() == before
    assert later.open_changes() == []
    moves = [(m.knob, m.old, m.new) for m in later.moves()]
    assert moves[-1] == ("vm.dirty_bytes", 1 << 30, 0)


def test_a_change_caught_mid_write_is_restored_from_its_saved_values(tmp_path: Path) -> None:
    fh = fake_host(tmp_path / "root")
    before = tree_bytes(fh.fs.root)
    j = FileJournal(tmp_path / "state", owner=Owner(pid=1, start=-1))  # a dead owner

    class Crashing(Executor):
        pass

    ex = Crashing(fh.host, journal=j)
    res = ex.apply(_a("vm.dirty_bytes", 1 << 30))
    # Rewind the journal to the write-ahead line only: as if killed between write and `applied`.
    lines = j.path.read_text().splitlines()
    j.path.write_text("\n".join(ln for ln in lines if '"applied"' not in ln) + "\n")
    [orphan] = j.orphaned()
    assert orphan.change.state == "writing" and orphan.change.id == res.change_id
    back = Executor(fh.host, journal=FileJournal(tmp_path / "state")).recover(orphan.change)
    assert back.status == "reverted" and "mid-write" in back.reason
    assert tree_bytes(fh.fs.root) == before


def test_a_killed_process_leaves_an_orphan_that_the_next_start_restores(tmp_path: Path) -> None:
    make_root(tmp_path / "root")
    state = tmp_path / "state"
    script = textwrap.dedent(
        f"""
        import os, signal
        from core.proposal import Action
        from guardrails.executor import Executor
        from guardrails.filejournal import FileJournal, this_process
        from tests.fakes.fake_kernel import FakeKernelFS
        from primitives.host import Host
        ex = Executor(Host(FakeKernelFS({str(tmp_path / "root")!r})),
                      journal=FileJournal({str(state)!r}, owner=this_process()))
        r = ex.apply(Action(primitive="vm.swappiness", value=30, reason="then die"))
        assert r.status == "applied", r.reason
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, env={**os.environ}, check=False)
    assert proc.returncode == -signal.SIGKILL
    assert (tmp_path / "root/proc/sys/vm/swappiness").read_text().strip() == "30"
    j = FileJournal(state, owner=this_process())
    [orphan] = j.orphaned()
    res = Executor(Host(FakeKernelFS(tmp_path / "root")), journal=j).recover(orphan.change)
    assert res.status == "reverted", res.reason
    assert (tmp_path / "root/proc/sys/vm/swappiness").read_text().strip() == "60"
    assert j.orphaned() == []


def test_an_operator_change_after_a_crash_is_released_not_overwritten(tmp_path: Path) -> None:
    fh = fake_host(tmp_path / "root")
    j = FileJournal(tmp_path / "state", owner=Owner(pid=1, start=-1))
    Executor(fh.host, journal=j).apply(_a("vm.swappiness", 30))
    fh.fs.write_text("/proc/sys/vm/swappiness", "45")
    [orphan] = j.orphaned()
    res = Executor(fh.host, journal=FileJournal(tmp_path / "state")).recover(orphan.change)
    assert res.status == "released"
    assert fh.fs.read_value("/proc/sys/vm/swappiness") == "45"


def test_drift_is_found_and_released_without_a_write(tmp_path: Path) -> None:
    fh = fake_host(tmp_path / "root")
    ex = Executor(fh.host, journal=FileJournal(tmp_path / "state", owner=this_process()))
    res = ex.apply(_a("vm.swappiness", 30))
    assert ex.drifted() == []
    fh.fs.write_text("/proc/sys/vm/swappiness", "45")
    [(change, foreign)] = ex.drifted()
    assert change.id == res.change_id and [str(w.value) for w in foreign] == ["45"]
    n = len(fh.fs.writes)
    rel = ex.release(change.id, "operator")
    assert rel.status == "released" and ex.managed == [] and len(fh.fs.writes) == n


def _change(i: int, state: str = "reverted") -> ChangeRecord:
    return ChangeRecord.model_validate(
        {
            "id": i,
            "primitive": "vm.swappiness",
            "target": None,
            "value": 30,
            "before": 60,
            "state": state,
            "reason": "test",
            "saved": [],
            "revert": [],
        }
    )


def test_compaction_keeps_open_and_recent_changes_and_never_reuses_an_id(tmp_path: Path) -> None:
    now = [1_000_000.0]
    j = FileJournal(tmp_path, owner=this_process(), clock=lambda: now[0], compact_bytes=4096, retain_s=3600)
    # An old change that is still applied (never closed): it must survive any compaction.
    held = _change(j.next_id(), "applied")
    j.before_write(held.model_copy(update={"state": "writing"}))
    j.applied(held)
    # Many old changes, applied then reverted a day ago.
    for _ in range(20):
        c = _change(j.next_id(), "applied")
        j.applied(c)
        j.closed(c.model_copy(update={"state": "reverted"}))
    now[0] += 86_400
    recent = _change(j.next_id(), "applied")
    j.applied(recent)
    j.closed(recent.model_copy(update={"state": "reverted"}))
    top = recent.id
    assert j.path.stat().st_size < 4096  # compacted on the way
    other = FileJournal(tmp_path)
    ids = {ln.id for ln in other.lines()}
    assert ids <= {held.id, top} and {held.id, top} <= ids
    assert [c.id for c in other.open_changes()] == [held.id]
    assert other.entries()[held.id].owner == this_process() and other.entries()[held.id].t_applied is not None
    assert [m.kind for m in other.moves() if m.t >= now[0] - 3600] == ["apply", "revert"]
    assert FileJournal(tmp_path).next_id() == top + 1


def test_compaction_drops_the_newest_id_only_as_a_reservation(tmp_path: Path) -> None:
    now = [5_000.0]
    j = FileJournal(tmp_path, clock=lambda: now[0], compact_bytes=1, retain_s=10)
    c = _change(j.next_id(), "applied")
    j.applied(c)
    now[0] += 100
    j.closed(c.model_copy(update={"state": "reverted"}))  # still recent: kept
    now[0] += 100
    j.next_id()  # id 2 reserved; its append compacts id 1 away
    lines = FileJournal(tmp_path).lines()
    assert [(ln.event, ln.id) for ln in lines] == [("reserve", 2)]
    assert FileJournal(tmp_path).next_id() == 3


def test_an_append_waiting_on_a_compacted_file_goes_to_the_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fcntl

    j = FileJournal(tmp_path)
    j.next_id()
    real_flock = fcntl.flock
    swapped: list[bool] = []

    def flock_after_a_compaction(fd: int, op: int) -> None:
        if not swapped:  # another process compacts while this one waits for the lock
            swapped.append(True)
            replacement = tmp_path / "replacement"
            replacement.write_text(j.path.read_text())
            os.replace(replacement, j.path)
        real_flock(fd, op)

    monkeypatch.setattr(fcntl, "flock", flock_after_a_compaction)
    assert j.next_id() == 2
    assert [ln.id for ln in FileJournal(tmp_path).lines()] == [1, 2]


def test_an_edited_journal_is_not_compacted(tmp_path: Path) -> None:
    j = FileJournal(tmp_path, compact_bytes=1, retain_s=0)
    j.next_id()
    with open(j.path, "a") as f:
        f.write('{"t": 1, "event": "bogus", "id": 9}\n')
    before = j.path.read_text()
    with pytest.raises(JournalError):
        j.next_id()  # the id reservation reads the file, and refuses the edited line
    assert j.path.read_text() == before


def test_quarantines_are_durable_and_shared(tmp_path: Path) -> None:
    now = [100.0]
    j = FileJournal(tmp_path, clock=lambda: now[0])
    j.quarantined(7, "vm.swappiness")
    now[0] = 200.0
    j.quarantined(9, "vm.swappiness")
    j.quarantined(9, "block.read_ahead_kb")
    assert FileJournal(tmp_path).quarantines() == {"vm.swappiness": 200.0, "block.read_ahead_kb": 200.0}
    assert FileJournal(tmp_path).entries() == {}  # no change record: nothing to restore


def test_a_second_writer_waits_then_is_refused_naming_the_holder(tmp_path: Path) -> None:
    from core.statedir import StateError

    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from guardrails.filejournal import FileJournal\n"
            "with FileJournal(sys.argv[1]).writing():\n"
            "    print('writing', flush=True)\n"
            "    time.sleep(60)\n",
            str(tmp_path),
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "writing"
        journal = FileJournal(tmp_path)
        journal.write_wait_s = 0.2
        with (
            pytest.raises(StateError, match=f"pid {holder.pid}\\) has been changing knobs for 0.2 s"),
            journal.writing(),
        ):
            pass
    finally:
        holder.kill()  # the kernel drops its lock with it
        holder.wait()
    with FileJournal(tmp_path).writing():  # free once its holder is gone
        pass
