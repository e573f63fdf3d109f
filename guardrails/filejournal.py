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

The journal is data, not a list of instructions: it lives in a state directory only root
can write (checked, with no link followed), and every line idletune writes is signed with a
key kept beside it (0600). A revert replays only the locations a primitive's own descriptor
names, and a value outside the primitive's bounds only when idletune's signature vouches
that idletune itself read it (see the executor).

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
import hashlib
import hmac
import json
import os
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from core.knob import KnobValue, knob_key
from core.statedir import (
    LockHeld,
    StateAccessError,
    StateError,
    open_file,
    pid_lock,
    read_file,
    secure_dir,
    state_dir,
)
from guardrails.journal import ChangeRecord

JOURNAL_NAME = "journal.jsonl"
KEY_NAME = "journal.key"
LOCK_NAME = "write.lock"
WRITE_WAIT_S = 30.0
# A signed line ends with its signature: the HMAC of everything before it, closed with "}".
_SIG = re.compile(r',"sig":"([0-9a-f]{64})"}\s*$')
COMPACT_BYTES = 1 << 20
RETAIN_S = 7 * 24 * 3600.0
Event = Literal["reserve", "before_write", "applied", "closed", "adopted", "quarantined", "rebased"]


def _read(path: str) -> str | None:
    """A /proc file's text, or None."""
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


class JournalError(StateError):
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
    sig: str | None = None  # written last; see _SIG


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
    change_id: int | None = None


def moves_of(entries: list[Entry]) -> list[Move]:
    """Every apply and every revert in the journal, in time order."""
    out: list[Move] = []
    for e in entries:
        c = e.change
        knob = knob_key(c.primitive, c.target)
        if e.t_applied is not None:
            out.append(
                Move(
                    t=e.t_applied, knob=knob, primitive=c.primitive, old=c.before, new=c.value, change_id=c.id
                )
            )
        if e.t_closed is not None and c.state == "reverted":
            out.append(
                Move(
                    t=e.t_closed,
                    knob=knob,
                    primitive=c.primitive,
                    old=c.value,
                    new=c.before,
                    kind="revert",
                    change_id=c.id,
                )
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
        self.write_wait_s = WRITE_WAIT_S
        self._writer = threading.RLock()
        self._writer_depth = 0

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """One writer of host knobs at a time across processes, held from a gate's review to the
        journal's record, so that the cooldown and the journal agree with the host. Re-entrant
        in this process; another process waits up to `write_wait_s`, then gets a StateError."""
        with self._writer:
            if self._writer_depth:
                self._writer_depth += 1
                try:
                    yield
                finally:
                    self._writer_depth -= 1
                return
            secure_dir(self.dir)
            path = self.dir / LOCK_NAME
            with contextlib.ExitStack() as held:
                try:
                    held.enter_context(pid_lock(path, self.write_wait_s))
                except LockHeld as e:
                    raise StateError(
                        f"another idletune process (pid {e.holder}) has been changing knobs for "
                        f"{self.write_wait_s:g} s ({path}); try again when it is done"
                    ) from None
                self._writer_depth = 1
                try:
                    yield
                finally:
                    self._writer_depth = 0

    # -- low level -------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self) -> Iterator[int]:
        """The journal opened for append under an exclusive lock (creating the state dir once)."""
        secure_dir(self.dir)  # 0755 when made: hooks must reach the socket beside it
        while True:
            new = not self.path.exists()
            fd = open_file(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
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

    def _key(self, *, create: bool) -> bytes | None:
        """This state dir's signing key (made when absent and `create`); None when it cannot be
        read (a user other than root looking at root's journal: nothing to verify then)."""
        path = self.dir / KEY_NAME
        try:
            text = read_file(path, private=True, limit=1024)
        except StateAccessError:
            return None
        if text is None:
            if not create:
                return None
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            except FileExistsError:
                return self._key(create=False)  # another process made it just now
            try:
                os.write(fd, secrets.token_hex(32).encode())
                os.fsync(fd)
            finally:
                os.close(fd)
            return self._key(create=False)
        try:
            return bytes.fromhex(text.strip())
        except ValueError:
            raise StateError(f"{path} holds no key: move it away (its lines count as unsigned)") from None

    def _text(self, line: Line, key: bytes | None) -> str:
        body = line.model_dump_json(exclude={"sig"})
        if key is None:
            return body
        sig = hmac.new(key, body.encode(), hashlib.sha256).hexdigest()
        return body[:-1] + f',"sig":"{sig}"}}'

    def _append(self, fd: int, line: Line) -> None:
        data = (self._text(line, self._key(create=True)) + "\n").encode()
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
            signed = self._signed_lines()
        except JournalError:
            return  # an edited line: leave the file as it is for a person to look at
        lines = [ln for ln, _ in signed]
        last_t: dict[int, float] = {}
        for ln in lines:
            last_t[ln.id] = max(last_t.get(ln.id, ln.t), ln.t)
        horizon = self._clock() - self.retain_s
        keep = {i for i, t in last_t.items() if t >= horizon}
        keep |= {i for i, e in entries_of(lines).items() if e.open}
        kept = [(ln, ok) for ln, ok in signed if ln.id in keep]
        if len(kept) == len(lines):
            return
        top = max(last_t, default=0)
        key = self._key(create=True)
        # Lines keep their signature only if they had one: compaction vouches for nothing new.
        texts = [self._text(ln, key if ok else None) for ln, ok in kept]
        if top not in keep:  # the highest id stays taken: next_id must never hand it out again
            texts.append(self._text(Line(t=last_t[top], event="reserve", id=top), key))
        tmp = self.path.with_name(self.path.name + ".compact")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, "".join(t + "\n" for t in texts).encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, self.path)
        dfd = os.open(self.dir, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)

    def _signed_lines(self) -> list[tuple[Line, bool]]:
        """Every readable line and whether this state dir's key signed it."""
        if not self.dir.exists():
            return []
        secure_dir(self.dir)
        raw = read_file(self.path)
        if raw is None:
            return []
        key = self._key(create=False)
        out: list[tuple[Line, bool]] = []
        texts = [t for t in raw.splitlines() if t.strip()]
        for i, text in enumerate(texts):
            try:
                line = Line.model_validate(json.loads(text))
            except (ValueError, ValidationError) as e:
                if _torn(text):
                    continue  # a crash tore this line: its write never completed
                why = str(e).splitlines()[0][:200]
                raise JournalError(f"{self.path}: line {i + 1} is unreadable ({why}); fix or move it") from e
            m = _SIG.search(text)
            ok = False
            if key is not None and m is not None:
                body = text[: m.start()] + "}"
                want = hmac.new(key, body.encode(), hashlib.sha256).hexdigest()
                ok = hmac.compare_digest(want, m.group(1))
            out.append((line, ok))
        return out

    def lines(self) -> list[Line]:
        return [ln for ln, _ in self._signed_lines()]

    def vouches(self, change: ChangeRecord) -> bool:
        """Whether the journal's latest record of this change is one idletune signed, as given."""
        latest: tuple[Line, bool] | None = None
        for ln, ok in self._signed_lines():
            if ln.id == change.id and ln.change is not None:
                latest = (ln, ok)
        if latest is None or not latest[1]:
            return False
        recorded = latest[0].change
        assert recorded is not None
        return recorded == change

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

    def rebased(self, change: ChangeRecord) -> None:
        # Another change's originals were handed down to this one; its owner stays.
        entry = self.entries().get(change.id)
        self._record("rebased", change, entry.owner if entry is not None else self.owner)

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
