"""The decision's action space: catalogue primitives for the diagnosis' top causes, as options and a schema.

Narrowing is the safety of the LLM proposer, not its manners: the model can only decode
what the schema allows, and the schema is built from the catalogue, the diagnosis, the
rule policy and the report's knob values, never from text the host supplied. Targets
are names the report lists that also pass the catalogue's name pattern; values are one
step of the primitive's own step limit from the current value, inside its bounds.

Where the operator's policy has rules for a cause, they say which primitives address it
and which way to move them (`direction`, or the literal a choice is set to): the
options keep to those, so a 135M model chooses among moves the operator already
considers sound instead of among every direction of every knob.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agent.proposers import context
from agent.proposers.policy import Policy, Rule
from core.diagnosis import Category, Cause, Diagnosis
from core.knob import KnobValue, Target, knob_key
from core.report import HealthReport
from primitives.base import Choice, CpuList, Primitive, TargetKind, valid_name
from primitives.catalog import for_cause

# The rule policy's default: below it a cause is too weak to act on.
MIN_CONFIDENCE = 0.3
TOP_CAUSES = 2
MAX_TARGETS = 4
MAX_OPTIONS = 8
MAX_ACTIONS = 1
# Reasons are words only: a digit the model makes up cannot pass for a figure of the report.
REASON_PATTERN = r"^[A-Za-z][A-Za-z ,.;:'()-]{3}[A-Za-z ,.;:'()-]*$"
# An unbounded pattern keeps llama.cpp's grammar small (a bounded repetition expands into nested
# rules that slow every decoded token several times over); the length is checked after decoding.
REASON_SCHEMA: dict[str, Any] = {"type": "string", "pattern": REASON_PATTERN, "maxLength": 120}


@dataclass
class Hint:
    """What the policy's rules do with one primitive for one cause."""

    directions: set[str] = field(default_factory=set)  # "up", "down"; empty: either way
    literals: set[str] = field(default_factory=set)  # values a choice is set to


Hints = Mapping[tuple[Category, str], Hint]


def policy_hints(policies: Iterable[Policy | Rule]) -> dict[tuple[Category, str], Hint]:
    """Per (cause, primitive), the directions and literals of the rules acting on it, in rule order."""
    out: dict[tuple[Category, str], Hint] = {}
    rules = (r for p in policies for r in (p.rules if isinstance(p, Policy) else [p]))
    for rule in rules:
        act = rule.action
        if act is None:
            # A no-op rule: the operator explains this cause; "" marks it for _primitives.
            for cause in rule.causes:
                out.setdefault((cause, ""), Hint())
            continue
        for cause in rule.causes:
            h = out.setdefault((cause, act.primitive.id), Hint())
            if act.direction is not None:
                h.directions.add(act.direction)
            elif isinstance(act.value, str):
                h.literals.add(act.value)
    return out


@dataclass(frozen=True)
class Option:
    primitive: Primitive
    target: Target
    current: KnobValue
    values: tuple[KnobValue, ...]
    cause: Cause

    @property
    def knob(self) -> str:
        return knob_key(self.primitive.id, self.target)


def top_causes(d: Diagnosis) -> list[Cause]:
    """Causes ranked above `none`, confident enough to act on, most likely first."""
    out: list[Cause] = []
    for c in d.causes:
        if c.category is Category.NONE:
            break
        if c.confidence >= MIN_CONFIDENCE:
            out.append(c)
    return out[:TOP_CAUSES]


def candidate_values(p: Primitive, current: KnobValue) -> tuple[KnobValue, ...]:
    v = p.value
    if isinstance(v, Choice):
        return tuple(o for o in v.options if o != str(current).strip())
    if isinstance(v, CpuList) or isinstance(current, str):
        # The report does not carry which CPUs belong to which node: no CPU list can be derived.
        return ()
    cur = float(current)
    step = p.step
    if step is None:
        ends: tuple[float, ...] = (v.min, v.max)
    elif cur == 0 and step.from_zero:
        # 0 means the paired knob is in force; leaving it switches mode, which is no step.
        return ()
    else:
        ends = (step.clamp(cur, v.min), step.clamp(cur, v.max))
    out = sorted({min(max(round(x), v.min), v.max) for x in ends} - {round(cur)})
    return tuple(x for x in out if step is None or step.allows(cur, x))


def _targets(p: Primitive, report: HealthReport, cause: Cause) -> list[Target]:
    if p.target in (TargetKind.NONE, TargetKind.CPUSET):
        return [None]  # a CPU-list target is optional: the whole host
    found: list[Target]
    if p.target is TargetKind.BLOCK_DEVICE:
        found = [d for d in context.devices(report) if valid_name(d)]
    elif p.target is TargetKind.JOB:
        found = [j for j in context.jobs(report) if valid_name(j)]
    else:
        found = list(context.gpus(report))
    named = [t for t in found if str(t) == str(cause.target or "").removeprefix("gpu")]
    return named or found[:MAX_TARGETS]


def _keep(values: tuple[KnobValue, ...], current: KnobValue, hint: Hint | None) -> tuple[KnobValue, ...]:
    if hint is None:
        return values
    if hint.literals and all(isinstance(v, str) for v in values):
        return tuple(v for v in values if v in hint.literals)
    if len(hint.directions) != 1 or isinstance(current, str):
        return values
    up = "up" in hint.directions
    return tuple(v for v in values if not isinstance(v, str) and (v > current if up else v < current))


def _primitives(cause: Cause, hints: Hints) -> list[Primitive]:
    """The policy's primitives for the cause in rule order when it has any; none when the policy
    only explains the cause (no-op rules alone); else the catalogue's."""
    catalogue = [p for p in for_cause(cause.category) if p.proposable]
    ruled = [p.id for p in catalogue if (cause.category, p.id) in hints]
    if not ruled:
        return [] if (cause.category, "") in hints else catalogue
    order = [pid for (cat, pid) in hints if cat is cause.category]
    return sorted((p for p in catalogue if p.id in ruled), key=lambda p: order.index(p.id))


def options(report: HealthReport, diagnosis: Diagnosis, hints: Hints | None = None) -> list[Option]:
    out: dict[str, Option] = {}
    for cause in top_causes(diagnosis):
        for p in _primitives(cause, hints or {}):
            for target in _targets(p, report, cause):
                now = context.current(report, p.id, target)
                if now is None:
                    continue  # not on this host: unavailable primitives are never offered
                values = _keep(candidate_values(p, now), now, (hints or {}).get((cause.category, p.id)))
                key = knob_key(p.id, target)
                if values and key not in out:
                    out[key] = Option(p, target, now, values, cause)
    return list(out.values())[:MAX_OPTIONS]


def _action_schema(o: Option) -> dict[str, Any]:
    props: dict[str, Any] = {"primitive": {"const": o.primitive.id}}
    if o.target is not None:
        props["target"] = {"const": o.target}
    props["value"] = {"enum": list(o.values)}
    props["reason"] = REASON_SCHEMA
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


def noop_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"actions": {"const": []}, "noop_reason": REASON_SCHEMA},
        "required": ["actions", "noop_reason"],
        "additionalProperties": False,
    }


def decision_schema(opts: list[Option], max_actions: int = MAX_ACTIONS) -> dict[str, Any]:
    """Either up to `max_actions` of the options, or the explicit no-op with its reason."""
    if not opts:
        return noop_schema()
    acting = {
        "type": "object",
        "properties": {
            "actions": {
                "type": "array",
                "items": {"oneOf": [_action_schema(o) for o in opts]},
                "minItems": 1,
                "maxItems": max_actions,
            }
        },
        "required": ["actions"],
        "additionalProperties": False,
    }
    return {"oneOf": [acting, noop_schema()]}
