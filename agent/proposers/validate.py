"""Decoded model output checked again, as if no grammar had constrained it.

llama.cpp's grammar does not enforce minimum/maximum and a remote server may ignore the
schema altogether, so the text is parsed and checked against the narrowed schema, the
full catalogue proposal schema, every primitive's bounds and step limit, and the
Proposal model. Anything that fails is rejected with the first reason; nothing
unvalidated leaves this module.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator
from pydantic import ValidationError

from agent.diagnosis.fmt import fmt
from agent.proposers.narrow import Option
from core.knob import knob_key
from core.proposal import Action, Proposal
from primitives.base import IntRange, Primitive
from primitives.catalog import get, proposal_schema
from primitives.schema import action_problem


@dataclass(frozen=True)
class Checked:
    proposal: Proposal | None
    problem: str = ""


@lru_cache(maxsize=1)
def _full() -> Draft202012Validator:
    return Draft202012Validator(proposal_schema())


def _first_error(v: Draft202012Validator, doc: Any, what: str) -> str | None:
    errors = sorted(v.iter_errors(doc), key=lambda e: (len(list(e.absolute_path)), e.message))
    if not errors:
        return None
    e = errors[0]
    where = ".".join(str(x) for x in e.absolute_path) or "proposal"
    return f"{what}: {where}: {e.message[:160]}"


def _bounds_problem(p: Primitive, value: Any, current: Any) -> str | None:
    """The numeric checks a grammar leaves out: type, minimum, maximum, and the step from now."""
    v = p.value
    if not isinstance(v, IntRange):
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        return f"{p.id}: value {value!r} is not an integer"
    if not v.min <= value <= v.max:
        return f"{p.id}: value {value} outside {v.min}..{v.max}"
    if isinstance(current, int | float) and p.step is not None and not p.step.allows(float(current), value):
        return f"{p.id}: {fmt(float(current))} -> {value} is more than one step ({p.step.describe()})"
    if isinstance(current, int | float) and float(current) == value:
        return f"{p.id}: value {value} is the current value"
    return None


def _action(raw: dict[str, Any], by_knob: dict[str, Option]) -> tuple[Action | None, str]:
    pid = raw.get("primitive")
    p = get(pid) if isinstance(pid, str) else None
    if p is None:
        return None, f"unknown primitive {pid!r}"
    opt = by_knob.get(knob_key(p.id, raw.get("target")))
    if opt is None or not p.proposable:
        return None, f"{knob_key(p.id, raw.get('target'))} is not among this decision's options"
    problem = action_problem(p, raw) or _bounds_problem(p, raw.get("value"), opt.current)
    if problem is None and raw.get("value") not in opt.values:
        problem = f"{p.id}: value {raw.get('value')!r} is not one of {list(opt.values)}"
    if problem is not None:
        return None, problem
    c = opt.cause
    head = f"{c.category.value} ({c.confidence:.2f}): {opt.knob} {opt.current} -> {raw['value']}"
    reason = f"{head}: {raw['reason']}"
    try:
        return Action(primitive=p.id, target=opt.target, value=raw["value"], reason=reason), ""
    except ValidationError as e:
        return None, f"{p.id}: {e.errors()[0]['msg']}"


def _which_action(doc: Any) -> str | None:
    """The catalogue's one-line reason for the first bad action: a `oneOf` miss names none."""
    actions = doc.get("actions") if isinstance(doc, dict) else None
    for raw in actions if isinstance(actions, list) else []:
        pid = raw.get("primitive") if isinstance(raw, dict) else None
        p = get(pid) if isinstance(pid, str) else None
        if p is None:
            return f"outside the catalogue schema: unknown primitive {pid!r}"
        if (why := action_problem(p, raw)) is not None:
            return f"outside the catalogue schema: {why}"
    return None


def check(text: str, narrowed: dict[str, Any], opts: list[Option]) -> Checked:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        return Checked(None, f"not JSON ({e.msg} at {e.pos})")
    problem = _first_error(Draft202012Validator(narrowed), doc, "outside the decision schema")
    full = _first_error(_full(), doc, "outside the catalogue schema")
    problem = problem or (full and (_which_action(doc) or full))
    if problem is not None:
        return Checked(None, problem)
    by_knob = {o.knob: o for o in opts}
    actions: list[Action] = []
    for raw in doc["actions"]:
        action, why = _action(raw, by_knob)
        if action is None:
            return Checked(None, why)
        if any(a.knob == action.knob for a in actions):
            return Checked(None, f"{action.knob} changed twice")
        actions.append(action)
    try:
        proposal = Proposal(actions=actions) if actions else Proposal.noop(str(doc["noop_reason"]))
    except ValidationError as e:
        return Checked(None, f"not a proposal: {e.errors()[0]['msg']}")
    final = _first_error(_full(), proposal.model_dump(mode="json"), "outside the catalogue schema")
    return Checked(None, final) if final else Checked(proposal)
