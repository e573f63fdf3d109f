"""Ranked options: every complete answer a decision allows, as text the model scores, and back as JSON.

The candidates are each value of each narrowed option (agent.proposers.narrow), the rule
proposer's own proposal, and the explicit no-op, always. Each is one short line
(`block.read_ahead_kb@vdb = 1024`, `no change`) so that scoring all of them costs a few
dozen tokens; the chosen one becomes the JSON document the decode path would have
produced and is validated the same way (agent.proposers.validate).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agent.llm.render import quote
from agent.proposers import context, narrow
from agent.proposers.examples import Example, Key, key_of
from core.diagnosis import Cause, Diagnosis
from core.knob import KnobValue, knob_key
from core.proposal import Proposal
from core.report import HealthReport
from core.vocabulary import is_known
from primitives.catalog import for_cause, get

NOOP = "no change"
# Words only: the reason pattern refuses digits, and the head added by validation carries the figures.
REASON = "ranked first by the model among the options, beside the nearest recorded cases"
NOOP_REASON = "the model ranked no change first among the options, beside the nearest recorded cases"
MAX_EVIDENCE = 2  # metric names per cause in a case: each costs about ten tokens
INTRO = (
    "Decisions of idletune on GPU training hosts. Each case gives the measured causes with their "
    "evidence and the settings that could change; the answer is one change or no change."
)


@dataclass(frozen=True)
class Candidate:
    text: str  # what the model scores, after "Answer: "
    actions: tuple[tuple[str, Any, KnobValue], ...] = ()  # (primitive, target, value); empty: the no-op
    rules: bool = False  # the rule proposer's own proposal


@dataclass
class Decision:
    """What a ranked decision offers: its candidates, the options they validate against, its case text."""

    candidates: list[Candidate]
    options: list[narrow.Option]
    case: str
    key: Key
    notes: list[str] = field(default_factory=list)

    def document(self, i: int) -> str:
        """Candidate `i` as the JSON a decoding model would have written, for validation."""
        c = self.candidates[i]
        if not c.actions:
            return json.dumps({"actions": [], "noop_reason": NOOP_REASON})
        acts = []
        for pid, target, value in c.actions:
            raw: dict[str, Any] = {"primitive": pid}
            if target is not None:
                raw["target"] = target
            raw.update(value=value, reason=REASON)
            acts.append(raw)
        return json.dumps({"actions": acts})


def action_text(pid: str, target: object, value: KnobValue) -> str:
    return f"{knob_key(pid, target)} = {value}"  # type: ignore[arg-type]


def _cause_for(pid: str, diagnosis: Diagnosis) -> Cause:
    p = get(pid)
    for c in diagnosis.causes:
        if p is not None and p in for_cause(c.category):
            return c
    return diagnosis.top


def _with_rules(
    opts: list[narrow.Option], rules: Proposal, report: HealthReport, diagnosis: Diagnosis
) -> tuple[list[narrow.Option], Candidate | None]:
    """The options widened by the rules' values, and the rules' proposal as one candidate
    (None when it is the no-op or names a knob whose current value the report lacks)."""
    if not rules.actions:
        return opts, None
    out = list(opts)
    acts: list[tuple[str, Any, KnobValue]] = []
    for a in rules.actions:
        p = get(a.primitive)
        if p is None or isinstance(a.value, list):
            return opts, None
        key = knob_key(a.primitive, a.target)
        at = next((i for i, o in enumerate(out) if o.knob == key), None)
        if at is not None:
            o = out[at]
            if a.value not in o.values:
                out[at] = narrow.Option(o.primitive, o.target, o.current, (*o.values, a.value), o.cause)
        else:
            now = context.current(report, p.id, a.target)
            if now is None:
                return opts, None
            out.append(narrow.Option(p, a.target, now, (a.value,), _cause_for(p.id, diagnosis)))
        acts.append((a.primitive, a.target, a.value))
    text = "; ".join(action_text(*x) for x in acts)
    return out, Candidate(text, tuple(acts), rules=True)


def _shown(v: KnobValue) -> str:
    return str(v) if isinstance(v, int | float) else quote(str(v))


def case_text(diagnosis: Diagnosis, opts: Sequence[narrow.Option]) -> str:
    """Two lines: the top causes with their evidence metrics, and the current values of the knobs."""
    parts = []
    for c in narrow.top_causes(diagnosis):
        names = [e.metric for e in c.evidence if is_known(e.metric)][:MAX_EVIDENCE]
        parts.append(f"{c.category.value} {c.confidence:.2f} ({', '.join(names)})")
    causes = "; ".join(parts) or f"none {diagnosis.top.confidence:.2f}"
    knobs = ", ".join(f"{o.knob}={_shown(o.current)}" for o in opts) or "none"
    return f"Causes: {causes}\nSettings now: {knobs}"


def decision(
    report: HealthReport, diagnosis: Diagnosis, hints: narrow.Hints | None, rules: Proposal
) -> Decision:
    opts = narrow.options(report, diagnosis, hints)
    opts, ruled = _with_rules(opts, rules, report, diagnosis)
    cands: list[Candidate] = [Candidate(NOOP)]
    seen = {NOOP}
    if ruled is not None:
        cands.append(ruled)
        seen.add(ruled.text)
    for o in opts:
        for v in o.values:
            text = action_text(o.primitive.id, o.target, v)
            if text not in seen:
                seen.add(text)
                cands.append(Candidate(text, ((o.primitive.id, o.target, v),)))
    causes = [c.category.value for c in narrow.top_causes(diagnosis)] or [diagnosis.top.category.value]
    now: dict[str, KnobValue] = {}
    for o in opts:
        now.setdefault(o.primitive.id, o.current)
    key = key_of(diagnosis, causes, now)
    return Decision(cands, opts, case_text(diagnosis, opts), key)


def prompt(case: str, examples: Sequence[Example]) -> str:
    """The constant introduction, the worked examples, then this case up to its answer."""
    shots = "".join(f"\n\n{e.case}\nAnswer: {e.answer}" for e in examples)
    return f"{INTRO}{shots}\n\n{case}\nAnswer:"


def continuation(c: Candidate) -> str:
    """What is scored: the option and the line's end, so that an option cut short is unlikely."""
    return f" {c.text}\n"
