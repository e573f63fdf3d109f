"""A change read back from the journal is data: what may be replayed of it, and what is refused.

A revert writes only to the locations the primitive's own descriptor names for the change's
target, in the order and with the quirks of the descriptor's revert plan (recomputed from the
saved values; the plan stored in the record is never replayed). A saved value is written only
when the journal vouches that idletune itself recorded it (its signature), or when it lies
inside the primitive's catalogue bounds. Anything else is refused in one line, and the caller
goes on with the rest.
"""

from __future__ import annotations

from core.knob import KnobValue
from guardrails.journal import ChangeRecord
from primitives.base import Loc, Primitive, Write
from primitives.host import Host
from primitives.schema import target_problem, value_problem


def replay_plan(p: Primitive, change: ChangeRecord, host: Host, *, vouched: bool) -> list[Write] | str:
    """The writes that restore the change's saved values, or why none may be made."""
    head = f"journal change {change.id} ({change.knob})"
    problem = target_problem(p, change.target)
    if problem is not None:
        return f"{head}: {problem}; skipped"
    try:
        expected = p.locations(host, change.target)
    except (OSError, LookupError, ValueError) as e:
        return f"{head}: cannot locate its knob here ({e}); skipped"
    saved: dict[Loc, KnobValue] = {}
    for w in change.saved:
        if w.loc not in expected or w.loc in saved:
            return f"{head}: names {str(w.loc)[:120]!r}, which {p.id} does not save; skipped"
        saved[w.loc] = w.value
    for w in change.after:
        if w.loc not in expected:
            return f"{head}: names {str(w.loc)[:120]!r}, which {p.id} does not write; skipped"
    # The descriptor's order, so that its quirks (what a write resets) replay as it intends.
    plan = p.revert_plan({loc: saved[loc] for loc in expected if loc in saved})
    if vouched:
        return plan
    for w in plan:
        if w.loc != expected[0]:
            return f"{head}: unsigned record restores {w.loc} beside {p.id}'s own knob; skipped"
        try:
            value = p.value.normalize(w.value)
        except (TypeError, ValueError):
            return f"{head}: unsigned record holds {str(w.value)[:60]!r}, not a {p.id} value; skipped"
        problem = value_problem(p, value)
        if problem is not None:
            return f"{head}: unsigned record, and {problem}; skipped"
    return plan
