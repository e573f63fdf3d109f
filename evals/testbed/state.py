"""The undo log of a testbed run: every host change is recorded before it is made.

The log is a JSON file under $IDLETUNE_STATE_DIR, so `idletune testbed stop` in
another process (or after a crash) can undo what a run set up. Entries are undone
newest first; each undo tolerates a change that is already gone, so stop is
idempotent and a half-finished setup is undone as far as it went.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from core.statedir import read_file, secure_dir, state_dir, write_file

STATE_NAME = "testbed.json"

_VM = "/proc/sys/vm/"
_PAIR_LIST = (("dirty_ratio", "dirty_bytes"), ("dirty_background_ratio", "dirty_background_bytes"))
_PAIRS: dict[str, tuple[str, ...]] = {
    _VM + name: (_VM + a, _VM + b) for a, b in _PAIR_LIST for name in (a, b)
}


def state_file(explicit_dir: str | None = None) -> Path:
    return Path(state_dir(explicit_dir)) / STATE_NAME


def _proc_start(pid: int) -> str | None:
    """The process's start time in ticks: tells a live pid from a recycled one."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


class UndoLog:
    """Append-only list of undo entries persisted after each append."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: list[dict[str, Any]] = []
        self.info: dict[str, Any] = {}
        # Root replays this log: it is read only from a state dir only root can write, through no link.
        text = read_file(path) if path.parent.exists() and secure_dir(path.parent) else None
        if text is not None:
            data = json.loads(text or "{}")
            self.entries = list(data.get("undo", []))
            self.info = dict(data.get("info", {}))

    def _save(self) -> None:
        secure_dir(self.path.parent)
        write_file(self.path, json.dumps({"info": self.info, "undo": self.entries}, indent=1))

    def add(self, kind: str, **fields: Any) -> None:
        self.entries.append({"kind": kind, **fields})
        self._save()

    def note(self, **fields: Any) -> None:
        self.info.update(fields)
        self._save()

    def knob(self, path: str, value: str) -> None:
        """Write a sysfs/procfs knob, logging its original value first (once per path).

        The vm.dirty_*bytes/_ratio pairs are one setting in two forms: writing one
        zeroes the other, and the kernel refuses 0 for dirty_bytes. Both are logged,
        and the undo writes whichever form was in force.
        """
        paths = _PAIRS.get(path, (path,))
        if not any(e["kind"] == "knob" and e["path"] in paths for e in self.entries):
            for p in paths:
                self.add("knob", path=p, value=_current(Path(p).read_text()))
        Path(path).write_text(value)

    def process(self, pid: int) -> None:
        self.add("pid", pid=pid, start=_proc_start(pid))

    def forget_process(self, pid: int) -> None:
        self.entries = [e for e in self.entries if not (e["kind"] == "pid" and e["pid"] == pid)]
        self._save()

    def undo_all(self) -> list[str]:
        """Undo newest first; returns one line per problem (empty when all went well)."""
        problems: list[str] = []
        for entry in self.entries:
            if entry["kind"] == "cgroup":
                _lift_throttles(Path(entry["path"]))
        while self.entries:
            entry = self.entries[-1]
            try:
                _undo(entry)
            except (OSError, subprocess.SubprocessError) as e:
                problems.append(f"{entry['kind']} {_what(entry)}: {e}")
            self.entries.pop()
            self._save()
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        return problems


def _current(text: str) -> str:
    """A knob's value as it must be written back: sysfs choice lists mark it `[like this]`."""
    chosen = re.search(r"\[([^\]]+)\]", text)
    return chosen.group(1) if chosen else text.strip()


def _what(entry: dict[str, Any]) -> str:
    for key in ("path", "dev", "pid", "file"):
        if key in entry:
            return str(entry[key])
    return ""


def _undo(e: dict[str, Any]) -> None:
    kind = e["kind"]
    if kind == "knob":
        if e["path"] in _PAIRS and str(e["value"]) == "0":
            return  # the other form of the pair was in force; its own entry restores it
        Path(e["path"]).write_text(str(e["value"]))
    elif kind == "pid":
        kill_group(int(e["pid"]), e.get("start"))
    elif kind == "mount":
        if os.path.ismount(e["path"]):
            subprocess.run(["umount", e["path"]], check=True, capture_output=True, timeout=60)
    elif kind == "loop":
        # The device may have been reused by someone else since: detach only ours.
        back = Path(f"/sys/block/{Path(e['dev']).name}/loop/backing_file")
        if back.exists() and back.read_text().strip() == e["file"]:
            subprocess.run(["losetup", "-d", e["dev"]], check=True, capture_output=True, timeout=30)
    elif kind == "cgroup":
        _remove_cgroup(Path(e["path"]))
    elif kind == "file":
        with contextlib.suppress(FileNotFoundError):
            Path(e["path"]).unlink()
    elif kind == "dir":
        with contextlib.suppress(FileNotFoundError, OSError):
            Path(e["path"]).rmdir()
    else:
        raise OSError(f"unknown undo kind {kind!r}")


def kill_group(pid: int, start: str | None) -> None:
    """Kill the process and its process group (loader workers, hogs' children); wait until gone."""
    if _proc_start(pid) is None or (start is not None and _proc_start(pid) != start):
        return  # gone, or the pid now belongs to someone else
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, sig)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
        # After SIGKILL a task may still sleep in the kernel (a read it waits for): give it time.
        deadline = time.monotonic() + (3.0 if sig == signal.SIGTERM else 20.0)
        while time.monotonic() < deadline:
            if not _group_alive(pid):
                return
            time.sleep(0.05)


def _stat_fields(pid: str) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def _group_alive(pgid: int) -> bool:
    """Whether any member of the process group still runs (zombies do not count)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        fields = _stat_fields(entry)
        if fields is not None and fields[2] == str(pgid) and fields[0] != "Z":
            return True
    return False


_THROTTLES = tuple(f"blkio.throttle.{d}_{u}_device" for d in ("read", "write") for u in ("iops", "bps"))


def _lift_throttles(path: Path) -> None:
    """Take a blkio group's device limits off before its tasks are killed: a task asleep on a
    throttled read exits only once its queued reads are let through, which at a few IOPS takes
    longer than any wait for it."""
    for name in _THROTTLES:
        try:
            rules = (path / name).read_text().splitlines()
        except OSError:
            continue  # not a blkio group, or gone
        for rule in rules:
            fields = rule.split()
            if len(fields) == 2:
                with contextlib.suppress(OSError):
                    (path / name).write_text(f"{fields[0]} 0")


def _remove_cgroup(path: Path) -> None:
    """Move leftover tasks to the hierarchy's root, then remove the (empty) group."""
    if not path.exists():
        return
    procs = path / "cgroup.procs"
    top = path.parent
    while (top.parent / "cgroup.procs").exists():
        top = top.parent
    parent = top / "cgroup.procs"  # the hierarchy's root: the testbed's own parent group goes too
    for _ in range(50):
        pids = [p for p in procs.read_text().split() if p]
        if not pids:
            break
        for p in pids:
            with contextlib.suppress(OSError):
                parent.write_text(p)
        time.sleep(0.02)
    # Tasks that just left, or a child group removed a moment ago, can keep a group busy until the
    # kernel has let go of them: retry for a while before calling it a problem.
    deadline = time.monotonic() + 10.0
    while True:
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError as e:
            if e.errno != errno.EBUSY or time.monotonic() > deadline:
                raise
            time.sleep(0.05)
