"""Putting originals back from the journal: after a crash, on `rollback`, at shutdown.

Restoring goes through the executor (it releases rather than overwrites a knob the
operator changed since) and is never gated. Newest first, so that two changes to
one knob unwind in order.
"""

from __future__ import annotations

from collections.abc import Callable

from guardrails.audit import AuditLog, Trigger
from guardrails.executor import ExecResult, Executor
from guardrails.filejournal import Entry, FileJournal


def _restore(
    ex: Executor, select: Callable[[], list[Entry]], audit: AuditLog | None, trigger: Trigger
) -> list[ExecResult]:
    """The selected open changes, read and restored under the writer lock, newest first: a change
    stacked on another unwinds before it, and no other process moves a knob meanwhile."""
    results: list[ExecResult] = []
    with ex.writing():
        for e in sorted(select(), key=lambda e: e.change.id, reverse=True):
            res = ex.recover(e.change.model_copy(deep=True))
            results.append(res)
            if audit is not None:
                audit.write(
                    trigger, knob=e.change.knob, rollback=res.model_dump(mode="json"), reason=res.reason
                )
    return results


def restore_orphans(ex: Executor, journal: FileJournal, audit: AuditLog | None = None) -> list[ExecResult]:
    """Changes whose owner died (kill -9, a crash): put their originals back."""
    return _restore(ex, journal.orphaned, audit, "recovery")


def adopt_orphans(ex: Executor, journal: FileJournal) -> list[Entry]:
    """Take orphaned changes over instead: this process manages them from now on (and restores
    them at its own exit). A change caught mid-write is restored, never adopted: its state on
    the host is unknown."""
    adopted: list[Entry] = []
    for e in journal.orphaned():
        if e.change.state != "applied":
            ex.recover(e.change.model_copy(deep=True))
            continue
        journal.adopt(e.change)
        ex.adopt(e.change.model_copy(deep=True))
        adopted.append(e)
    return adopted


def rollback_all(ex: Executor, journal: FileJournal, audit: AuditLog | None = None) -> list[ExecResult]:
    """Every open change in the journal, whoever made it."""
    return _restore(ex, journal.open_entries, audit, "rollback")


def rollback_one(
    ex: Executor, journal: FileJournal, change_id: int, audit: AuditLog | None = None
) -> ExecResult | None:
    found = _restore(
        ex, lambda: [e for e in journal.open_entries() if e.change.id == change_id], audit, "rollback"
    )
    return found[0] if found else None


def restore_mine(ex: Executor, journal: FileJournal, audit: AuditLog | None = None) -> list[ExecResult]:
    """At shutdown: the changes this process owns (made or adopted), whatever the executor holds."""
    # Changes the executor holds are reverted through it, so that its records stay in step.
    held = {c.id for c in ex.managed}
    results = [ex.revert(cid) for cid in sorted(held, reverse=True)]
    if audit is not None:
        for res in results:
            audit.write("shutdown", rollback=res.model_dump(mode="json"), reason=res.reason)
    return results + _restore(
        ex, lambda: [e for e in journal.mine() if e.change.id not in held], audit, "shutdown"
    )
