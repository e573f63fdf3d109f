"""The durable journal: one JSON line per event, fsync'd before the executor writes, in the state dir.

Several processes share it (a running agent, `idletune apply`, `idletune rollback`),
so every append and every id reservation happens under an exclusive flock, and a
change's state is the last line written about it. Each change names its owner: the
process that must restore it on exit, identified by pid, start time and boot id so
a reused pid is not mistaken for the owner. A change without owner was made by a
one-shot command and is meant to outlive it, until `idletune rollback`.

A crash can leave at most one torn line, the last; it is skipped on reading, and
the originals it would have carried were never written over (the line is synced
before the first write).

The journal is compacted when it grows past `compact_bytes`: the lines of every
open change, and of every change touched within `retain_s` (longer than any
window the gate looks back over), are kept verbatim; the rest are dropped (the
audit log keeps the full history), and the highest id stays reserved so ids never
repeat. The compacted file is written beside the journal, synced, and renamed over
it; a process that was waiting for the lock on the old file notices the rename and
takes the lock on the new one, so no append lands in the replaced file.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from core.knob import KnobValue, knob_key
from core.statedir import state_dir
from guardrails.journal import ChangeRecord

JOURNAL_NAME = "journal.jsonl"
COMPACT_BYTES = 1 << 20
RETAIN_S = 7 * 24 * 3600.0
Event = Literal["reserve", "before_write", "applied", "closed", "adopted", "quarantined"]


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def _proc_start(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (field 22 of /proc/PID/stat)."""
    raw = _read(f"/proc/{pid}/stat")
    if raw is None:
        return None
    # The command name may hold spaces and parentheses: fields start after the last ')'.
    fields = raw[raw.rfind(")") + 2 :].split()
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


def _boot_id() -> str:
    return (_read("/proc/sys/kernel/random/boot_id") or "").strip()


def _torn(text: str) -> bool:
    """A line cut short: valid JSON never ends without its closing brace."""
    return not text.rstrip().endswith("}")


class JournalError(Exception):
    """The journal holds a line that is not the torn tail of a crash: someone edited it."""


class Owner(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pid: int
    start: int | None = None
    boot: str = ""

    def alive(self) -> bool:
        if self.boot and self.boot != _boot_id():
            return False
        start = _proc_start(self.pid)
        if start is None:
            return False
        return self.start is None or start == self.start

    def __str__(self) -> str:
        return f"pid {self.pid}"


def this_process() -> Owner:
    pid = os.getpid()
    return Owner(pid=pid, start=_proc_start(pid), boot=_boot_id())


class Line(BaseModel):
    model_config = ConfigDict(extra="forbid")

    t: float
    event: Event
    id: int
    owner: Owner | None = None
    change: ChangeRecord | None = None
    primitive: str | None = None  # on "quarantined": what the gate must not touch for a while


class Entry(BaseModel):
    """A change as the journal knows it now: its last record, owner, and when it was applied and closed."""

    model_config = ConfigDict(extra="forbid")

    change: ChangeRecord
    owner: Owner | None
    t_applied: float | None = None
    t_closed: float | None = None

    @property
    def open(self) -> bool:
        return self.change.state in ("writing", "applied")


class Move(BaseModel):
    """A knob moved from one value to another at a time: what the gate's flap and rate rules count."""

    model_config = ConfigDict(extra="forbid")

    t: float
    knob: str
    primitive: str
    old: KnobValue | None
    new: KnobValue | None
    kind: Literal["apply", "revert"] = "apply"


def moves_of(entries: list[Entry]) -> list[Move]:
    """Every apply and every revert in the journal, in time order."""
    out: list[Move] = []
    for e in entries:
        c = e.change
        knob = knob_key(c.primitive, c.target)
        if e.t_applied is not None:
            out.append(Move(t=e.t_applied, knob=knob, primitive=c.primitive, old=c.before, new=c.value))
        if e.t_closed is not None and c.state == "reverted":
            out.append(
                Move(t=e.t_closed, knob=knob, primitive=c.primitive, old=c.value, new=c.before, kind="revert")
            )
    return sorted(out, key=lambda m: m.t)


def entries_of(lines: list[Line]) -> dict[int, Entry]:
    """The changes journal lines describe, keyed by id, each in its latest state."""
    out: dict[int, Entry] = {}
    for ln in lines:
        if ln.change is None:
            continue
        e = out.get(ln.id)
        if e is None:
            e = out[ln.id] = Entry(change=ln.change, owner=ln.owner)
        e.change, e.owner = ln.change, ln.owner
        if ln.event == "applied":
            e.t_applied = ln.t
        elif ln.event == "closed":
            e.t_closed = ln.t
    return dict(sorted(out.items()))


class FileJournal:
    def __init__(
        self,
        directory: str | os.PathLike[str] | None = None,
        *,
        owner: Owner | None = None,
        clock: Callable[[], float] = time.time,
        compact_bytes: int = COMPACT_BYTES,
        retain_s: float = RETAIN_S,
    ) -> None:
        self.dir = Path(directory if directory is not None else state_dir())
        self.path = self.dir / JOURNAL_NAME
        self.owner = owner
        self._clock = clock
        self.compact_bytes = compact_bytes
        self.retain_s = retain_s

    # -- low level -------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self) -> Iterator[int]:
        """The journal opened for append under an exclusive lock (creating the state dir once)."""
        if not self.dir.is_dir():
            self.dir.mkdir(parents=True, exist_ok=True, mode=0o755)  # hooks must reach the socket beside it
        while True:
            new = not self.path.exists()
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                current = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                current = False
            except BaseException:
                os.close(fd)
                raise
            if current:
                break
            os.close(fd)  # compacted (renamed over) while this process waited: lock the new file
        try:
            if new:
                # The file's own name must survive a crash too.
                dfd = os.open(self.dir, os.O_RDONLY)
                try:
                    os.fsync(dfd)
                finally:
                    os.close(dfd)
            yield fd
        finally:
            os.close(fd)  # closing drops the lock

    def _append(self, fd: int, line: Line) -> None:
        data = (line.model_dump_json() + "\n").encode()
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data  # close a torn line left by a crash, so it stays one bad line
        # One write(2) in append mode: a crash tears at most this last line.
        os.write(fd, data)
        os.fsync(fd)
        if size + len(data) > self.compact_bytes:
            self._compact()

    def _compact(self) -> None:
        """Rewrite the journal without the changes closed before the retention window (lock held)."""
        try:
            lines = self.lines()
        except JournalError:
            return  # an edited line: leave the file as it is for a person to look at
        last_t: dict[int, float] = {}
        for ln in lines:
            last_t[ln.id] = max(last_t.get(ln.id, ln.t), ln.t)
        horizon = self._clock() - self.retain_s
        keep = {i for i, t in last_t.items() if t >= horizon}
        keep |= {i for i, e in entries_of(lines).items() if e.open}
        kept = [ln for ln in lines if ln.id in keep]
        if len(kept) == len(lines):
            return
        top = max(last_t, default=0)
        if top not in keep:  # the highest id stays taken: next_id must never hand it out again
            kept.append(Line(t=last_t[top], event="reserve", id=top))
        tmp = self.path.with_name(self.path.name + ".compact")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, "".join(ln.model_dump_json() + "\n" for ln in kept).encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, self.path)
        dfd = os.open(self.dir, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)

    def lines(self) -> list[Line]:
        raw = _read(str(self.path))
        if raw is None:
            return []
        out: list[Line] = []
        texts = [t for t in raw.splitlines() if t.strip()]
        for i, text in enumerate(texts):
            try:
                out.append(Line.model_validate(json.loads(text)))
            except (ValueError, ValidationError) as e:
                if _torn(text):
                    continue  # a crash tore this line: its write never completed
                raise JournalError(f"{self.path}: line {i + 1} is unreadable ({e}); fix or move it") from e
        return out

    def _record(self, event: Event, change: ChangeRecord, owner: Owner | None) -> None:
        with self._locked() as fd:
            self._append(fd, Line(t=self._clock(), event=event, id=change.id, owner=owner, change=change))

    # -- Journal ---------------------------------------------------------------

    def next_id(self) -> int:
        with self._locked() as fd:
            n = max((ln.id for ln in self.lines()), default=0) + 1
            self._append(fd, Line(t=self._clock(), event="reserve", id=n, owner=self.owner))
        return n

    def before_write(self, change: ChangeRecord) -> None:
        self._record("before_write", change, self.owner)

    def applied(self, change: ChangeRecord) -> None:
        self._record("applied", change, self.owner)

    def closed(self, change: ChangeRecord) -> None:
        # The closer need not be the owner (rollback from another process): keep the owner on record.
        entry = self.entries().get(change.id)
        self._record("closed", change, entry.owner if entry is not None else self.owner)

    def open_changes(self) -> list[ChangeRecord]:
        return [e.change for e in self.entries().values() if e.open]

    def quarantined(self, change_id: int, primitive: str) -> None:
        with self._locked() as fd:
            self._append(fd, Line(t=self._clock(), event="quarantined", id=change_id, primitive=primitive))

    def quarantines(self) -> dict[str, float]:
        """When each primitive was last quarantined after a harmful change, by any process."""
        out: dict[str, float] = {}
        for ln in self.lines():
            if ln.event == "quarantined" and ln.primitive is not None:
                out[ln.primitive] = max(out.get(ln.primitive, ln.t), ln.t)
        return out

    # -- queries ---------------------------------------------------------------

    def entries(self) -> dict[int, Entry]:
        """Every change ever written, keyed by id, each in its latest state."""
        return entries_of(self.lines())

    def open_entries(self) -> list[Entry]:
        return [e for e in self.entries().values() if e.open]

    def orphaned(self) -> list[Entry]:
        """Open changes whose owning process is gone (killed, crashed): a restart must restore them."""
        return [e for e in self.open_entries() if e.owner is not None and not e.owner.alive()]

    def mine(self) -> list[Entry]:
        return [e for e in self.open_entries() if self.owner is not None and e.owner == self.owner]

    def adopt(self, change: ChangeRecord) -> None:
        """Take over an orphaned change: this process now restores it on exit."""
        self._record("adopted", change, self.owner)

    def disown(self, change: ChangeRecord) -> None:
        """Keep a change past this process: only `idletune rollback` restores it now."""
        self._record("adopted", change, None)

    def moves(self) -> list[Move]:
        return moves_of(list(self.entries().values()))
