"""The testbed's undo log: every change undone newest first, exactly, once, from another process."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from evals.testbed.state import UndoLog


def test_knobs_restore_their_first_value(tmp_path: Path) -> None:
    knob = tmp_path / "read_ahead_kb"
    knob.write_text("128\n")
    log = UndoLog(tmp_path / "state.json")
    log.knob(str(knob), "4096")
    log.knob(str(knob), "1024")  # a second write must not overwrite the original
    assert knob.read_text() == "1024"
    # Another process (here: a second reader of the file) undoes it.
    assert UndoLog(tmp_path / "state.json").undo_all() == []
    assert knob.read_text() == "128"
    assert not (tmp_path / "state.json").exists()


def test_undo_is_idempotent_and_tolerates_gone_things(tmp_path: Path) -> None:
    made = tmp_path / "made.img"
    folder = tmp_path / "mnt"
    log = UndoLog(tmp_path / "state.json")
    log.add("file", path=str(made))
    made.write_text("x")
    log.add("dir", path=str(folder))
    folder.mkdir()
    log.add("file", path=str(tmp_path / "never-created"))
    assert log.undo_all() == []
    assert not made.exists() and not folder.exists()
    assert UndoLog(tmp_path / "state.json").undo_all() == []


def test_processes_are_killed_with_their_group(tmp_path: Path) -> None:
    # A parent with a child in its own session, as the trainer and its loader workers are.
    proc = subprocess.Popen(["sh", "-c", "sleep 60 & exec sleep 60"], start_new_session=True)
    log = UndoLog(tmp_path / "state.json")
    log.process(proc.pid)
    assert log.undo_all() == []
    assert proc.wait(timeout=5) != 0
    left = subprocess.run(["pgrep", "-g", str(proc.pid)], capture_output=True, text=True)
    # The child was re-parented to init; until init reaps it, it may linger as a zombie.
    assert all(_state(p) in ("Z", None) for p in left.stdout.split())


def _state(pid: str) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def test_a_recycled_pid_is_left_alone(tmp_path: Path) -> None:
    proc = subprocess.Popen(["sleep", "60"], start_new_session=True)
    log = UndoLog(tmp_path / "state.json")
    log.add("pid", pid=proc.pid, start="1")  # another process's start time
    assert log.undo_all() == []
    assert proc.poll() is None
    proc.kill()
    proc.wait()


def test_choice_knobs_restore_the_chosen_option(tmp_path: Path) -> None:
    knob = tmp_path / "scheduler"
    knob.write_text("[none] mq-deadline kyber bfq\n")
    log = UndoLog(tmp_path / "state.json")
    log.knob(str(knob), "mq-deadline")
    log.undo_all()
    assert knob.read_text() == "none"


def _whole_disk_of_root() -> str | None:
    """`major:minor` of the disk under `/` (blkio limits take whole disks, not partitions)."""
    st = os.stat("/")
    node = Path(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
    if not node.exists():
        return None
    disk = node.resolve()
    if (disk / "partition").exists():
        disk = disk.parent
    return (disk / "dev").read_text().strip()


@pytest.mark.root
def test_a_throttled_group_and_a_parent_left_by_a_crash_go_at_teardown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evals.testbed import hostsetup as hs

    blkio = hs.CGROUP_ROOT / "blkio"
    devno = _whole_disk_of_root()
    if os.geteuid() != 0 or not (blkio / "blkio.throttle.read_iops_device").exists() or devno is None:
        pytest.skip("needs root, cgroup v1 blkio and a disk under /")
    monkeypatch.setattr(hs, "GROUP", "idletune-testbed-unit")
    stale = blkio / "idletune-testbed-unit"
    stale.mkdir(exist_ok=True)  # what a crashed run leaves: the parent, not in any undo log
    log = UndoLog(tmp_path / "state.json")
    job = hs.make_cgroup(log, "blkio", "job")
    (job / "blkio.throttle.read_iops_device").write_text(f"{devno} 5")
    reader = hs.spawn(log, ["sh", "-c", "sleep 60"], cgroups=[job])
    deadline = time.monotonic() + 5
    while str(reader.pid) not in (job / "cgroup.procs").read_text().split() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert log.undo_all() == []
    assert not stale.exists()
    assert reader.wait(timeout=5) != 0  # killed, not left running in a group that is gone


def test_a_run_holding_the_testbed_is_never_torn_down_by_another(tmp_path: Path) -> None:
    import sys

    from evals.testbed import runner

    made = tmp_path / "made.img"
    made.write_text("x")
    UndoLog(runner.state_file(str(tmp_path))).add("file", path=str(made))  # what the run set up
    lock = runner.state_file(str(tmp_path)).with_name(runner.LOCK_NAME)
    # Another process holds the testbed, as a recording in progress does.
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from evals.testbed import runner\n"
            "with runner._held(sys.argv[1]):\n"
            "    print('held', flush=True)\n"
            "    time.sleep(60)\n",
            str(tmp_path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(runner.TestbedError, match=f"another testbed run \\(pid {holder.pid}\\)"):
            runner.stop(str(tmp_path))
        with pytest.raises(runner.TestbedError, match="another testbed run"), runner._held(str(tmp_path)):
            pass
        assert made.exists() and runner.current(str(tmp_path)) is not None  # nothing undone
    finally:
        holder.kill()  # a crash: the kernel drops the lock with the process
        holder.wait()
    assert lock.exists()
    assert runner.stop(str(tmp_path)) == []  # a dead run's setup is undone
    assert not made.exists() and runner.current(str(tmp_path)) is None


def test_the_testbed_is_held_for_the_whole_session_and_let_go_after(tmp_path: Path) -> None:
    from evals.testbed import runner

    with (
        runner._held(str(tmp_path)),
        pytest.raises(runner.TestbedError, match=f"pid {os.getpid()}"),
        runner._held(str(tmp_path)),
    ):
        pass
    with runner._held(str(tmp_path)):  # let go when the block ended
        pass
