"""Scores of one replayed incident against its ground truth, and their summary.

Matching follows spec/incident-v1.md: a proposed action matches a step when the
primitive ids are equal, the target is equal (or the step names none), and the
value lies in [min, max] (or equals `value`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from core.incident import ActionStep, ForbiddenAction, Truth
from core.vocabulary import matches as metric_matches


class ProposedAction(Protocol):
    @property
    def primitive(self) -> str: ...
    @property
    def target(self) -> str | int | None: ...
    @property
    def value(self) -> float | int | str | list[int]: ...


def _same_target(step_target: str | int | None, target: str | int | None) -> bool:
    if step_target is None:
        return True
    return target is not None and str(step_target) == str(target)


def _as_number(v: object) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int | float):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            return None
    return None


def step_matches(action: ProposedAction, step: ActionStep) -> bool:
    if action.primitive != step.primitive or not _same_target(step.target, action.target):
        return False
    if step.value is not None:
        a, b = _as_number(action.value), _as_number(step.value)
        if a is not None and b is not None:
            return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
        return str(action.value) == str(step.value)
    if step.min is None and step.max is None:
        return True
    v = _as_number(action.value)
    if v is None:
        return False
    lo = step.min if step.min is not None else -math.inf
    hi = step.max if step.max is not None else math.inf
    return lo <= v <= hi


def is_forbidden(action: ProposedAction, forbidden: Sequence[ForbiddenAction]) -> bool:
    return any(action.primitive == f.primitive and _same_target(f.target, action.target) for f in forbidden)


def actions_acceptable(actions: Sequence[ProposedAction], truth: Truth) -> bool:
    """Doing nothing counts when noop is correct; otherwise some alternative is fully covered."""
    if not actions:
        return truth.noop_correct
    if any(is_forbidden(a, truth.forbidden_actions) for a in actions):
        return False
    return any(all(any(step_matches(a, s) for a in actions) for s in alt) for alt in truth.acceptable_actions)


def evidence_recall(cited: Sequence[str], truth: Truth) -> float | None:
    """Share of the truth's evidence patterns that some cited metric matches; None without any."""
    if not truth.evidence:
        return None
    hit = sum(1 for pattern in truth.evidence if any(metric_matches(pattern, m) for m in cited))
    return hit / len(truth.evidence)


class IncidentScore(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    ac1: bool
    ac3: bool
    action_ok: bool
    forbidden: int
    restraint: bool | None = Field(description="None unless no action is acceptable")
    schema_valid: bool
    evidence_recall: float | None
    latency_ms: float
    tokens: int = 0


def score_incident(
    incident_id: str,
    truth: Truth,
    causes: Sequence[str],
    actions: Sequence[ProposedAction],
    cited: Sequence[str],
    *,
    schema_valid: bool,
    latency_ms: float,
    tokens: int = 0,
) -> IncidentScore:
    want = truth.root_causes[0].value
    nothing_acceptable = not truth.acceptable_actions
    return IncidentScore(
        id=incident_id,
        ac1=bool(causes) and causes[0] == want,
        ac3=want in list(causes)[:3],
        action_ok=actions_acceptable(actions, truth),
        forbidden=sum(1 for a in actions if is_forbidden(a, truth.forbidden_actions)),
        restraint=(not actions) if nothing_acceptable else None,
        schema_valid=schema_valid,
        evidence_recall=evidence_recall(cited, truth),
        latency_ms=latency_ms,
        tokens=tokens,
    )


class Summary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    incidents: int
    invalid: int
    ac1: float
    ac3: float
    action_match_rate: float
    forbidden_actions: int
    restraint: float | None
    schema_valid_rate: float
    evidence_recall: float | None
    latency_p50_ms: float
    latency_p95_ms: float
    tokens: int


def _percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    # Nearest-rank: the figure is one that was really observed.
    k = max(0, math.ceil(q * len(ordered)) - 1)
    return ordered[k]


def summarise(scores: Sequence[IncidentScore], invalid: int = 0) -> Summary:
    n = len(scores)

    def rate(flags: Sequence[bool]) -> float:
        return sum(flags) / len(flags) if flags else 0.0

    restraint = [s.restraint for s in scores if s.restraint is not None]
    recalls = [s.evidence_recall for s in scores if s.evidence_recall is not None]
    lat = [s.latency_ms for s in scores]
    return Summary(
        incidents=n,
        invalid=invalid,
        ac1=rate([s.ac1 for s in scores]),
        ac3=rate([s.ac3 for s in scores]),
        action_match_rate=rate([s.action_ok for s in scores]),
        forbidden_actions=sum(s.forbidden for s in scores),
        restraint=rate(restraint) if restraint else None,
        schema_valid_rate=rate([s.schema_valid for s in scores]),
        evidence_recall=statistics.fmean(recalls) if recalls else None,
        latency_p50_ms=_percentile(lat, 0.50),
        latency_p95_ms=_percentile(lat, 0.95),
        tokens=sum(s.tokens for s in scores),
    )
