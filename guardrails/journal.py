"""What the executor records about each change, and where: the Journal interface and an in-memory one.

The executor calls `before_write` after it has read and saved the original values
and before its first write, so a durable journal (fsync'd, write-ahead) can restore
them after a crash. The in-memory journal serves tests; the durable one is
`guardrails.filejournal.FileJournal`.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from core.knob import KnobValue, knob_key
from primitives.base import Loc, Write


class ChangeRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: int
    primitive: str
    target: str | int | None
    value: KnobValue
    reason: str
    saved: list[Write] = Field(description="every location's value before the change, in save order")
    revert: list[Write] = Field(description="the ordered writes that restore `saved` exactly")
    after: list[Write] = Field(default_factory=list, description="every location's value once applied")
    pending: list[Loc] = Field(default_factory=list, description="accepted, put in force later")
    before: KnobValue | None = Field(default=None, description="the knob's value before, in catalogue terms")
    state: Literal["writing", "applied", "reverted", "released", "failed"] = "writing"

    @property
    def knob(self) -> str:
        return knob_key(self.primitive, self.target)


class Journal(Protocol):
    def next_id(self) -> int:
        """A change id never used in this journal, also by another process sharing it."""
        ...

    def before_write(self, change: ChangeRecord) -> None:
        """Record the originals; must be durable when it returns."""
        ...

    def applied(self, change: ChangeRecord) -> None: ...

    def closed(self, change: ChangeRecord) -> None:
        """The change was reverted, released to the operator, or failed and was rolled back."""
        ...

    def open_changes(self) -> list[ChangeRecord]:
        """Changes written and not yet closed, oldest first: what a restart must revert."""
        ...

    def quarantined(self, change_id: int, primitive: str) -> None:
        """The change was judged harmful: its primitive is quarantined from now, across restarts."""
        ...

    def rebased(self, change: ChangeRecord) -> None:
        """An older change under this one was taken out: its originals are now this change's."""
        ...

    def vouches(self, change: ChangeRecord) -> bool:
        """Whether this journal recorded exactly this change itself, so its saved values are ones
        idletune read (a record it cannot vouch for is restored only within the catalogue's bounds)."""
        ...

    def writing(self) -> contextlib.AbstractContextManager[None]:
        """One writer at a time (re-entrant): held from a gate's review to the journal's record."""
        ...


class MemoryJournal:
    def __init__(self) -> None:
        self.records: dict[int, ChangeRecord] = {}
        self.quarantines: dict[str, float] = {}  # primitive -> when
        self._last_id = 0
        self._lock = threading.RLock()

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        with self._lock:
            yield

    def next_id(self) -> int:
        self._last_id = max(self._last_id, *self.records, 0) + 1
        return self._last_id

    def before_write(self, change: ChangeRecord) -> None:
        self.records[change.id] = change.model_copy(deep=True)

    def applied(self, change: ChangeRecord) -> None:
        self.records[change.id] = change.model_copy(deep=True)

    def closed(self, change: ChangeRecord) -> None:
        self.records[change.id] = change.model_copy(deep=True)

    def open_changes(self) -> list[ChangeRecord]:
        open_ = ("writing", "applied")
        return [r.model_copy(deep=True) for _, r in sorted(self.records.items()) if r.state in open_]

    def rebased(self, change: ChangeRecord) -> None:
        self.records[change.id] = change.model_copy(deep=True)

    def vouches(self, change: ChangeRecord) -> bool:
        return self.records.get(change.id) == change

    def quarantined(self, change_id: int, primitive: str) -> None:
        self.quarantines[primitive] = time.time()
