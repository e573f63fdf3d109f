"""The one executor of host writes: save, journal, write, read back, register the exact revert.

It knows no knob: each primitive says which locations to save, which writes apply a
value and which ordered writes restore the saved state. Results are values; a write
the host refuses is rolled back and reported, never raised.

Deferring to the operator: before a revert the executor reads every saved location
again; if any differs from what it left there, someone else changed the knob since,
so the change is released (no longer managed) and nothing is written back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from core.knob import KnobValue, Target, knob_key
from core.proposal import Action
from guardrails.journal import ChangeRecord, Journal, MemoryJournal
from primitives import catalog
from primitives.base import Loc, Primitive, Write
from primitives.host import Host, WriteError
from primitives.schema import action_problem

# pending: accepted and registered for revert, but put in force later (a trainer's next epoch).
ExecStatus = Literal["applied", "pending", "unchanged", "refused", "failed", "reverted", "released"]


class ExecResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    status: ExecStatus
    primitive: str
    target: str | int | None = None
    value: KnobValue | None = None
    reason: str = Field(description="why it acted, or why it did not")
    change_id: int | None = None
    before: KnobValue | None = None
    after: KnobValue | None = None
    notes: list[str] = Field(default_factory=list)

    @property
    def knob(self) -> str:
        return knob_key(self.primitive, self.target)


def _snapshot(host: Host, locs: list[Loc]) -> list[Write]:
    return [Write(loc, host.read(loc)) for loc in locs]


def _same(a: list[Write], b: list[Write]) -> bool:
    return [(w.loc, str(w.value)) for w in a] == [(w.loc, str(w.value)) for w in b]


def _foreign(now: list[Write], change: ChangeRecord) -> list[Write]:
    """Locations someone else changed since we applied: neither our value nor, while pending, the old."""
    saved = {w.loc: str(w.value) for w in change.saved}
    ours = {w.loc: str(w.value) for w in change.after}
    return [
        w
        for w in now
        if str(w.value) != ours[w.loc] and not (w.loc in change.pending and str(w.value) == saved[w.loc])
    ]


class Executor:
    def __init__(
        self,
        host: Host,
        journal: Journal | None = None,
        lookup: Callable[[str], Primitive | None] = catalog.get,
    ) -> None:
        self.host = host
        self.journal: Journal = journal if journal is not None else MemoryJournal()
        self._lookup = lookup
        self._changes: dict[int, ChangeRecord] = {}

    @property
    def managed(self) -> list[ChangeRecord]:
        """Changes applied and not yet reverted or released, oldest first."""
        return list(self._changes.values())

    # -- apply -----------------------------------------------------------------

    def apply(self, action: Action) -> ExecResult:
        p = self._lookup(action.primitive)

        def result(status: ExecStatus, reason: str, **kw: object) -> ExecResult:
            return ExecResult.model_validate(
                {
                    "status": status,
                    "primitive": action.primitive,
                    "target": action.target,
                    "value": action.value,
                    "reason": reason,
                    **kw,
                }
            )

        if p is None:
            return result("refused", f"{action.primitive} is not in the catalogue")
        problem = action_problem(p, action.model_dump(exclude_none=True))
        if problem is not None:
            return result("refused", problem)
        target: Target = action.target
        value = p.value.normalize(action.value)
        avail = p.available(self.host, target)
        if not avail.ok:
            return result("refused", f"{p.id} is not available: {avail.reason}")
        try:
            problem = p.check(self.host, target, value)
            before = p.read(self.host, target)
            saved = _snapshot(self.host, p.locations(self.host, target))
        except (OSError, LookupError, ValueError) as e:
            return result("refused", f"cannot read {p.id}: {e}")
        if problem is not None:
            return result("refused", problem, before=before)
        if before == value:
            return result("unchanged", f"{p.id} is already {value}", before=before, after=before)
        numeric = isinstance(before, int | float) and isinstance(value, int | float)
        if p.step is not None and numeric and not p.step.allows(float(before), float(value)):
            return result(
                "refused",
                f"{before} -> {value} is a larger step than {p.id} allows ({p.step.describe()})",
                before=before,
            )
        change = ChangeRecord(
            id=self.journal.next_id(),
            primitive=p.id,
            target=target,
            value=value,
            reason=action.reason,
            saved=saved,
            revert=p.revert_plan({w.loc: w.value for w in saved}),
            before=before,
        )
        self.journal.before_write(change)
        pending: dict[Loc, str] = {}
        plan = p.apply_plan(self.host, target, value)
        try:
            for w in plan:
                why = self.host.write(w.loc, w.value)
                if why is not None:
                    pending[w.loc] = why
            after = p.read(self.host, target)
            now = _snapshot(self.host, p.locations(self.host, target))
        except (WriteError, OSError, LookupError, ValueError) as e:
            return self._roll_back(p, change, f"write failed: {e}", before)
        if after != value and not pending:
            return self._roll_back(p, change, f"read back {after}, expected {value}", before)
        # A pending location will hold what we asked for once the trainer puts it in force.
        requested = {w.loc: w.value for w in plan}
        change.after = [Write(w.loc, requested[w.loc]) if w.loc in pending else w for w in now]
        change.pending = list(pending)
        change.state = "applied"
        self._changes[change.id] = change
        self.journal.applied(change)
        notes = [f"pending: {why}" for why in pending.values()]
        notes += p.after_write(self.host, target)
        if p.reaches_note:
            notes.insert(0, f"reaches: {p.reaches_note}")
        return result(
            "pending" if pending else "applied",
            action.reason,
            value=value,
            change_id=change.id,
            before=before,
            after=after,
            notes=notes,
        )

    def _roll_back(self, p: Primitive, change: ChangeRecord, why: str, before: KnobValue) -> ExecResult:
        restored, _ = self._restore(change)
        change.state = "failed"
        self.journal.closed(change)
        reason = why + ("; originals restored" if restored is None else f"; ROLLBACK FAILED: {restored}")
        return ExecResult(
            status="failed",
            primitive=p.id,
            target=change.target,
            value=change.value,
            reason=reason,
            change_id=change.id,
            before=before,
        )

    def _restore(self, change: ChangeRecord) -> tuple[str | None, list[str]]:
        """Play the revert plan and check every saved location.

        Returns the problem in words (None when all is restored) and notes on restores the
        trainer put off to its next epoch, which cannot be checked yet. A file that already
        holds its value is not written: after a write failed midway, the location that
        refused was never changed. One failing write does not stop the others; the final
        comparison decides.
        """
        errors: list[str] = []
        pending: dict[Loc, str] = {}
        for w in change.revert:
            try:
                # A trainer key is always written: it may hold a pending request to cancel.
                if w.loc.kind in ("trainer", "nvml") or str(self.host.read(w.loc)) != str(w.value):
                    why = self.host.write(w.loc, w.value)
                    if why is not None:
                        pending[w.loc] = why
            except (WriteError, OSError, LookupError, ValueError) as e:
                errors.append(str(e))
        notes = [f"pending: {why}" for why in pending.values()]
        try:
            now = _snapshot(self.host, [w.loc for w in change.saved])
        except (OSError, LookupError, ValueError) as e:
            return "; ".join([*errors, str(e)]), notes
        diff = [
            f"{a.loc}={a.value} (saved {b.value})"
            for a, b in zip(now, change.saved, strict=True)
            if str(a.value) != str(b.value) and a.loc not in pending
        ]
        if diff:
            return "restored values differ: " + ", ".join([*diff, *errors]), notes
        return None, notes

    # -- revert ----------------------------------------------------------------

    def revert(self, change_id: int) -> ExecResult:
        change = self._changes.get(change_id)
        if change is None:
            return ExecResult(status="refused", primitive="?", reason=f"no managed change {change_id}")
        p = self._lookup(change.primitive)
        assert p is not None, "a managed change names a catalogue primitive"
        base = {"primitive": p.id, "target": change.target, "value": change.value, "change_id": change.id}
        try:
            now = _snapshot(self.host, [w.loc for w in change.after])
        except (OSError, LookupError, ValueError) as e:
            return ExecResult.model_validate({**base, "status": "failed", "reason": f"cannot read: {e}"})
        del self._changes[change_id]
        foreign = _foreign(now, change)
        if foreign:
            change.state = "released"
            self.journal.closed(change)
            changed = ", ".join(f"{w.loc}={w.value}" for w in foreign)
            return ExecResult.model_validate(
                {
                    **base,
                    "status": "released",
                    "reason": f"changed by someone else since ({changed}); left as it is, no longer managed",
                }
            )
        problem, notes = self._restore(change)
        change.state = "reverted" if problem is None else "failed"
        self.journal.closed(change)
        if problem is not None:
            return ExecResult.model_validate(
                {**base, "status": "failed", "reason": f"revert failed: {problem}"}
            )
        return ExecResult.model_validate(
            {
                **base,
                "status": "reverted",
                "reason": "original values restored"
                + (" (in force at the trainer's next epoch)" if notes else ""),
                "after": p.read(self.host, change.target),
                "notes": notes + p.after_write(self.host, change.target),
            }
        )

    # -- changes made by another process, and changes someone else overrode ---------------

    def adopt(self, change: ChangeRecord) -> None:
        """Manage a change read from the journal (made by a process now gone) as if made here."""
        self._changes[change.id] = change

    def recover(self, change: ChangeRecord) -> ExecResult:
        """Restore a change from the journal. One caught mid-write has no `after` to compare
        with: its saved originals are put back wherever the host differs from them."""
        if change.state == "applied":
            self.adopt(change)
            return self.revert(change.id)
        base = {"primitive": change.primitive, "target": change.target, "value": change.value}
        problem, notes = self._restore(change)
        change.state = "reverted" if problem is None else "failed"
        self.journal.closed(change)
        if problem is not None:
            return ExecResult.model_validate(
                {**base, "change_id": change.id, "status": "failed", "reason": f"revert failed: {problem}"}
            )
        return ExecResult.model_validate(
            {
                **base,
                "change_id": change.id,
                "status": "reverted",
                "reason": "interrupted mid-write; original values restored",
                "notes": notes,
            }
        )

    def drifted(self) -> list[tuple[ChangeRecord, list[Write]]]:
        """Managed changes whose locations someone else has written since, with what they hold now."""
        out: list[tuple[ChangeRecord, list[Write]]] = []
        for change in self.managed:
            try:
                now = _snapshot(self.host, [w.loc for w in change.after])
            except (OSError, LookupError, ValueError):
                continue  # a device or hook gone: not an operator's write
            foreign = _foreign(now, change)
            if foreign:
                out.append((change, foreign))
        return out

    def release(self, change_id: int, why: str) -> ExecResult:
        """Stop managing a change without writing anything: the operator took the knob over."""
        change = self._changes.pop(change_id, None)
        if change is None:
            return ExecResult(status="refused", primitive="?", reason=f"no managed change {change_id}")
        change.state = "released"
        self.journal.closed(change)
        return ExecResult(
            status="released",
            primitive=change.primitive,
            target=change.target,
            value=change.value,
            change_id=change.id,
            reason=why,
        )

    def revert_all(self) -> list[ExecResult]:
        """Newest first, so that changes to the same knob unwind in order."""
        return [self.revert(cid) for cid in sorted(self._changes, reverse=True)]
