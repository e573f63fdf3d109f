"""Pending approvals: the gate asks, a person answers with `idletune approve ID` or `reject ID`.

One JSON file per request in `<state dir>/approvals/`, replaced atomically, so the
person's command runs in another process than the agent that asked. An id is six hex
digits and nothing else: it names a file, so `../x` is no id. An approval
covers exactly one action (primitive, target, value) and is used up by the change
it allowed; unanswered requests expire.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import secrets
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from core.proposal import Action
from core.statedir import StateError, open_file, read_file, secure_dir, state_dir, write_file

DEFAULT_TTL_S = 3600.0
ID_PATTERN = r"^[0-9a-f]{6}$"
ApprovalStatus = Literal["pending", "approved", "rejected", "used", "expired"]


class Approval(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    action: Action
    tier: int
    cause: str | None = None
    status: ApprovalStatus = "pending"
    created: float
    expires: float
    decided_by: str | None = None
    decided_at: float | None = None

    def matches(self, action: Action) -> bool:
        return (
            self.action.primitive == action.primitive
            and self.action.target == action.target
            and str(self.action.value) == str(action.value)
        )


class ApprovalStore:
    def __init__(
        self,
        directory: str | os.PathLike[str] | None = None,
        *,
        ttl_s: float = DEFAULT_TTL_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.dir = Path(directory) if directory is not None else Path(state_dir()) / "approvals"
        self.ttl_s = ttl_s
        self._clock = clock

    @contextlib.contextmanager
    def _lock(self) -> Iterator[None]:
        secure_dir(self.dir.parent)
        secure_dir(self.dir, mode=0o700)
        fd = open_file(self.dir / ".lock", os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _save(self, a: Approval) -> None:
        write_file(self.dir / f"{a.id}.json", a.model_dump_json())

    def _load(self, approval_id: str) -> Approval | None:
        """The request, or None for an id that is not one, a file that is missing, unsafe or unreadable."""
        if not re.fullmatch(ID_PATTERN, approval_id):
            return None
        try:
            text = read_file(self.dir / f"{approval_id}.json", limit=1 << 20)
            if text is None:
                return None
            a = Approval.model_validate_json(text)
        except (OSError, ValueError, ValidationError, StateError):
            return None
        if a.id != approval_id:
            return None  # a file renamed to another id is not that request
        if a.status == "pending" and a.expires <= self._clock():
            a.status = "expired"
        return a

    def all(self) -> list[Approval]:
        if not self.dir.is_dir():
            return []
        secure_dir(self.dir.parent)
        secure_dir(self.dir, mode=0o700)
        found = (self._load(p.stem) for p in self.dir.glob("*.json"))
        return sorted((a for a in found if a is not None), key=lambda a: a.created)

    def pending(self) -> list[Approval]:
        return [a for a in self.all() if a.status == "pending"]

    def get(self, approval_id: str) -> Approval | None:
        return self._load(approval_id)

    def request(self, action: Action, tier: int, cause: str | None) -> Approval:
        """The open request for this action, or a new one; asking twice does not pile up requests."""
        with self._lock():
            for a in self.all():
                if a.status in ("pending", "approved") and a.matches(action):
                    return a
            now = self._clock()
            a = Approval(
                id=secrets.token_hex(3),
                action=action,
                tier=tier,
                cause=cause,
                created=now,
                expires=now + self.ttl_s,
            )
            self._save(a)
            return a

    def answer_for(self, action: Action) -> Approval | None:
        """The latest answered (approved or rejected), unexpired request for exactly this action."""
        now = self._clock()
        answered = [
            a
            for a in self.all()
            if a.matches(action) and a.status in ("approved", "rejected") and a.expires > now
        ]
        return answered[-1] if answered else None

    def decide(self, approval_id: str, approve: bool, by: str) -> tuple[Approval | None, str]:
        """Record a person's answer; returns the request and, when it could not be answered, why."""
        with self._lock():
            a = self._load(approval_id)
            if a is None:
                if not re.fullmatch(ID_PATTERN, approval_id):
                    return None, f"{approval_id[:40]!r} is not an approval id (six hex digits, see `status`)"
                return None, f"no approval request {approval_id}"
            if a.status != "pending":
                return a, f"request {approval_id} is already {a.status}"
            a.status = "approved" if approve else "rejected"
            a.decided_by, a.decided_at = by, self._clock()
            self._save(a)
            return a, ""

    def use(self, approval_id: str) -> None:
        """The approved change was made: the approval does not cover another one."""
        with self._lock():
            a = self._load(approval_id)
            if a is not None and a.status == "approved":
                a.status = "used"
                self._save(a)
