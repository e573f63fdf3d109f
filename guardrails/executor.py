"""The one executor of host writes: save, journal, write, read back, register the exact revert.

It knows no knob: each primitive says which locations to save, which writes apply a
value and which ordered writes restore the saved state. Results are values; a write
the host refuses is rolled back and reported, never raised.

Deferring to the operator: before a revert the executor reads every saved location
again; if any differs from what it left there, and no newer change in the journal
explains it, someone else changed the knob since, so the change is released (no longer
managed) and nothing is written back.

Stacked changes: when a newer open change sits on a location of the change being undone,
the value there is the newer change's, and what the older one found is the true original.
The older change then writes nothing there; its originals are handed down to the newer
change (recorded in the journal), whose revert now restores them. So single rollbacks in
any order, restarts and crashes all end at the values idletune first found.

Changes read back from the journal are data (guardrails.replay): only their primitive's own
locations are written, with values the journal vouches for or inside the catalogue's bounds.
Host writes and journal records happen under the journal's writer lock, one process at a time.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from core.knob import KnobValue, Target, knob_key
from core.proposal import Action
from guardrails.journal import ChangeRecord, Journal, MemoryJournal
from guardrails.replay import replay_plan
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


def _applied_left(change: ChangeRecord) -> dict[Loc, set[str] | None]:
    """What an applied change left: the values it read back, and while pending also the old ones."""
    saved = {w.loc: str(w.value) for w in change.saved}
    left: dict[Loc, set[str] | None] = {w.loc: {str(w.value)} for w in change.after}
    for loc in change.pending:
        if loc in saved:
            left[loc] = {*(left.get(loc) or set()), saved[loc]}
    return left


def _foreign(now: list[Write], left: dict[Loc, set[str] | None]) -> list[Write]:
    """Locations someone else changed since: holding none of the values the change may have left."""
    return [w for w in now if (ok := left.get(w.loc)) is not None and str(w.value) not in ok]


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

    def writing(self) -> contextlib.AbstractContextManager[None]:
        """The journal's writer lock: hold it from a gate's review to the journal's record."""
        return self.journal.writing()

    # -- apply -----------------------------------------------------------------

    def apply(self, action: Action) -> ExecResult:
        with self.writing():
            return self._apply(action)

    def _apply(self, action: Action) -> ExecResult:
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
            return self._roll_back(change, f"write failed: {e}", before)
        if after != value and not pending:
            return self._roll_back(change, f"read back {after}, expected {value}", before)
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

    def _roll_back(self, change: ChangeRecord, why: str, before: KnobValue) -> ExecResult:
        problem, _ = self._restore(change, change.revert, {w.loc for w in change.saved}, {})
        change.state = "failed"
        self.journal.closed(change)
        reason = why + ("; originals restored" if problem is None else f"; ROLLBACK FAILED: {problem}")
        return self._result(change, "failed", reason, before=before)

    def _result(self, change: ChangeRecord, status: ExecStatus, reason: str, **kw: object) -> ExecResult:
        return ExecResult.model_validate(
            {
                "status": status,
                "primitive": change.primitive,
                "target": change.target,
                "value": change.value,
                "change_id": change.id,
                "reason": reason,
                **kw,
            }
        )

    def _restore(
        self, change: ChangeRecord, plan: list[Write], top: set[Loc], keep: dict[Loc, KnobValue]
    ) -> tuple[str | None, list[str]]:
        """Play the revert plan on the `top` locations and check them against the saved values.

        `keep`: locations a newer change holds, with their values now; a write of the plan that
        resets one of them as a side effect (a scheduler switch resets nr_requests) is undone.
        Returns the problem in words (None when all is restored) and notes on restores the
        trainer put off to its next epoch, which cannot be checked yet. A file that already
        holds its value is not written: after a write failed midway, the location that
        refused was never changed. One failing write does not stop the others; the final
        comparison decides.
        """
        errors: list[str] = []
        pending: dict[Loc, str] = {}
        for w in plan:
            if w.loc not in top:
                continue
            try:
                # A trainer key is always written: it may hold a pending request to cancel.
                if w.loc.kind in ("trainer", "nvml") or str(self.host.read(w.loc)) != str(w.value):
                    why = self.host.write(w.loc, w.value)
                    if why is not None:
                        pending[w.loc] = why
            except (WriteError, OSError, LookupError, ValueError) as e:
                errors.append(str(e))
        for loc, value in keep.items():
            try:
                if str(self.host.read(loc)) != str(value):
                    self.host.write(loc, value)
            except (WriteError, OSError, LookupError, ValueError) as e:
                errors.append(str(e))
        notes = [f"pending: {why}" for why in pending.values()]
        want = [w for w in change.saved if w.loc in top] + [Write(loc, v) for loc, v in keep.items()]
        try:
            now = _snapshot(self.host, [w.loc for w in want])
        except (OSError, LookupError, ValueError) as e:
            return "; ".join([*errors, str(e)]), notes
        diff = [
            f"{a.loc}={a.value} (saved {b.value})"
            for a, b in zip(now, want, strict=True)
            if str(a.value) != str(b.value) and a.loc not in pending
        ]
        if diff:
            return "restored values differ: " + ", ".join([*diff, *errors]), notes
        return None, notes

    def in_force(self, change_id: int) -> bool | None:
        """Whether a managed change's value acts on the workload now. A trainer puts loader
        changes in force at its next epoch; readahead reaches loaders once they reopen their
        files. None: no such managed change, or its state cannot be read now (a hook gone)."""
        change = self._changes.get(change_id)
        p = self._lookup(change.primitive) if change is not None else None
        if change is None or p is None:
            return None
        try:
            return p.in_force(self.host, change.target, change.value)
        except (OSError, LookupError, ValueError):
            return None

    # -- undo ------------------------------------------------------------------

    def revert(self, change_id: int) -> ExecResult:
        """Undo a change this executor manages (the journal's record of it, which may be newer)."""
        with self.writing():
            mine = self._changes.pop(change_id, None)
            if mine is None:
                return ExecResult(status="refused", primitive="?", reason=f"no managed change {change_id}")
            record = next((c for c in self.journal.open_changes() if c.id == change_id), None)
            if record is None:
                return self._result(
                    mine, "released", "already closed in the journal (rolled back by another process)"
                )
            return self._undo(record)

    def recover(self, change: ChangeRecord) -> ExecResult:
        """Undo a change read from the journal (made by this or another process, or cut off by a
        crash). One caught mid-write has no `after` to compare with: its saved originals are put
        back wherever the host differs from them."""
        with self.writing():
            self._changes.pop(change.id, None)
            return self._undo(change)

    def _undo(self, change: ChangeRecord) -> ExecResult:
        p = self._lookup(change.primitive)
        if p is None:
            why = f"journal change {change.id} names {change.primitive[:60]!r}, not in the catalogue; skipped"
            return self._result(change, "refused", why)
        plan = replay_plan(p, change, self.host, vouched=self.journal.vouches(change))
        if isinstance(plan, str):
            return self._result(change, "refused", plan)
        left, stacked, overridden = self._stack(p, change)
        top = {w.loc for w in change.saved if w.loc not in stacked and w.loc not in overridden}
        interrupted = change.state == "writing"
        try:
            now = _snapshot(self.host, [w.loc for w in change.saved if w.loc in top])
        except (OSError, LookupError, ValueError) as e:
            self._changes[change.id] = change  # still ours: a device or hook may come back
            return self._result(change, "failed", f"cannot read: {e}")
        # Someone else's, location by location: what they wrote stays as they left it.
        theirs = {w.loc for w in _foreign(now, left)} | overridden
        restore = top - theirs
        try:
            keep = {loc: self.host.read(loc) for loc in [*stacked, *theirs]}
        except (OSError, LookupError, ValueError) as e:
            self._changes[change.id] = change
            return self._result(change, "failed", f"cannot read the changes above it: {e}")
        uppers = self._hand_down(change, stacked)
        primary = change.saved[0].loc if change.saved else None
        if not restore or primary in theirs:
            if restore:
                # The knob itself is someone else's now: what only followed from our write is too.
                theirs |= restore
            change.state = "released" if theirs else "reverted"
            self.journal.closed(change)
            if theirs:
                changed = ", ".join(f"{loc}={keep[loc]}" for loc in sorted(theirs, key=str) if loc in keep)
                why = f"changed by someone else since ({changed}); left as it is, no longer managed"
                return self._result(change, "released", why)
            ids = ", ".join(str(u) for u in uppers)
            why = f"superseded by change {ids}, whose rollback now restores what this change found"
            return self._result(change, "reverted", why)
        problem, notes = self._restore(change, plan, restore, keep)
        change.state = "reverted" if problem is None else "failed"
        self.journal.closed(change)
        if problem is not None:
            return self._result(change, "failed", f"revert failed: {problem}")
        if interrupted:
            reason = "interrupted mid-write; original values restored"
        else:
            reason = "original values restored" + (" (in force at the trainer's next epoch)" if notes else "")
        if uppers:
            reason += f"; change {', '.join(str(u) for u in uppers)} above it now restores the rest"
        if theirs:
            reason += f"; left {', '.join(sorted(map(str, theirs)))} as someone else set it"
        try:
            after: KnobValue | None = p.read(self.host, change.target)
        except (OSError, LookupError, ValueError):
            after = None
        return self._result(
            change, "reverted", reason, after=after, notes=notes + p.after_write(self.host, change.target)
        )

    def _stack(
        self, p: Primitive, change: ChangeRecord
    ) -> tuple[dict[Loc, set[str] | None], dict[Loc, ChangeRecord], set[Loc]]:
        """What the change may have left at each location, and the newer open changes on them.

        Left (None: cannot tell): applied, what it read back, and while pending also the old
        value; cut off mid-write, the old value or what its plan writes there, and at a location
        only a side effect of the plan touches, anything once a planned write took, else only the
        old value. Whether a write took is read where the change left it: in the record of the
        next change on that location, if there is one, else on the host.

        Above: for each location, the oldest newer open change that saved it too, stacked on this
        one when what it found there is a value this one left, else someone else wrote between.
        """
        newer: dict[Loc, ChangeRecord] = {}
        for other in sorted(self.journal.open_changes(), key=lambda c: c.id):
            if other.id > change.id:
                for w in other.saved:
                    newer.setdefault(w.loc, other)
        saved = {w.loc: str(w.value) for w in change.saved}
        left: dict[Loc, set[str] | None]
        if change.state == "applied":
            left = _applied_left(change)
        else:

            def then(loc: Loc) -> str:
                up = newer.get(loc)
                if up is None:
                    return str(self.host.read(loc))
                return next(str(w.value) for w in up.saved if w.loc == loc)

            try:
                planned = {w.loc: str(w.value) for w in p.apply_plan(self.host, change.target, change.value)}
                took = any(then(loc) == v != saved.get(loc) for loc, v in planned.items() if loc in saved)
            except (OSError, LookupError, ValueError):
                planned, took = {}, True
            left = {
                loc: {old, planned[loc]} if loc in planned else (None if took else {old})
                for loc, old in saved.items()
            }
        stacked: dict[Loc, ChangeRecord] = {}
        overridden: set[Loc] = set()
        for loc, up in newer.items():
            if loc not in left:
                continue
            found = next(str(w.value) for w in up.saved if w.loc == loc)
            ok = left[loc]
            if ok is None or found in ok:
                stacked[loc] = up
            else:
                overridden.add(loc)
        return left, stacked, overridden

    def _hand_down(self, change: ChangeRecord, above: dict[Loc, ChangeRecord]) -> list[int]:
        """The change's originals, where a newer change sits on them, become that change's."""
        found = {w.loc: w.value for w in change.saved}
        uppers: dict[int, ChangeRecord] = {}
        for upper in above.values():
            uppers.setdefault(upper.id, upper)
        for upper in uppers.values():
            saved = [Write(w.loc, found[w.loc]) if above.get(w.loc) is upper else w for w in upper.saved]
            pu = self._lookup(upper.primitive)
            same_knob = upper.knob == change.knob
            rebased = upper.model_copy(
                update={
                    "saved": saved,
                    "revert": pu.revert_plan({w.loc: w.value for w in saved})
                    if pu is not None
                    else upper.revert,
                    "before": change.before if same_knob else upper.before,
                }
            )
            self.journal.rebased(rebased)
            if upper.id in self._changes:
                self._changes[upper.id] = rebased.model_copy(update={"state": self._changes[upper.id].state})
        return sorted(uppers)

    # -- changes made by another process, and changes someone else overrode ---------------

    def adopt(self, change: ChangeRecord) -> None:
        """Manage a change read from the journal (made by a process now gone) as if made here."""
        self._changes[change.id] = change

    def drifted(self) -> list[tuple[ChangeRecord, list[Write]]]:
        """Managed changes whose locations someone else has written since, with what they hold now.
        A location a newer change in the journal sits on is that change's, not someone else's."""
        out: list[tuple[ChangeRecord, list[Write]]] = []
        for change in self.managed:
            try:
                now = _snapshot(self.host, [w.loc for w in change.after])
            except (OSError, LookupError, ValueError):
                continue  # a device or hook gone: not an operator's write
            foreign = _foreign(now, _applied_left(change))
            p = self._lookup(change.primitive)
            if foreign and p is not None:
                _, stacked, _ = self._stack(p, change)  # reads the journal: only when something moved
                foreign = [w for w in foreign if w.loc not in stacked]
            if foreign:
                out.append((change, foreign))
        return out

    def release(self, change_id: int, why: str) -> ExecResult:
        """Stop managing a change without writing anything: the operator took the knob over."""
        with self.writing():
            change = self._changes.pop(change_id, None)
            if change is None:
                return ExecResult(status="refused", primitive="?", reason=f"no managed change {change_id}")
            p = self._lookup(change.primitive)
            if p is not None:
                self._hand_down(change, self._stack(p, change)[1])
            change.state = "released"
            self.journal.closed(change)
            return self._result(change, "released", why)

    def revert_all(self) -> list[ExecResult]:
        """Newest first, so that changes to the same knob unwind in order."""
        return [self.revert(cid) for cid in sorted(self._changes, reverse=True)]
