"""The rule proposer: policy rules matched against the diagnosis, with hysteresis, bounded steps, reasons.

Rules are tried in order (operator files before the bundled default). A rule acts on
the most confident cause it names; its conditions and hysteresis band must hold;
its value is a goal, approached by at most the rule's step and the primitive's own
largest step, inside the primitive's bounds. Within a group only the first rule that
produces an action acts; a knob is changed by one action at most. It changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from agent.proposers import context
from agent.proposers.policy import CONFIDENCE, Band, Condition, Policy, Rule, RuleAction, load_policy
from agent.proposers.policy import default_policy_path as default_policy_path
from core.diagnosis import Category, Cause, Diagnosis
from core.knob import KnobValue, Target, knob_key
from core.proposal import Action, Proposal
from core.report import HealthReport
from core.vocabulary import matches
from primitives import catalog
from primitives.base import IntRange
from primitives.schema import action_problem


@dataclass
class Outcome:
    proposal: Proposal
    trace: list[str] = field(default_factory=list)  # why each rule did or did not act


def load_policies(paths: Sequence[str], *, with_default: bool = True) -> list[Policy]:
    """The operator's files first, so that their rules win; then the bundled default."""
    policies = [load_policy(p) for p in paths]
    if with_default:
        policies.append(load_policy(default_policy_path()))
    return policies


class RuleProposer:
    name = "rules"

    def __init__(self, policies: Sequence[Policy]) -> None:
        self.rules: list[Rule] = [r for p in policies for r in p.rules]
        # (rule, target) pairs inside their hysteresis band: kept across calls of a long-lived proposer.
        self.active: set[tuple[str, str]] = set()

    def propose(self, report: HealthReport, diagnosis: Diagnosis) -> Proposal:
        return self.explain(report, diagnosis).proposal

    def explain(self, report: HealthReport, diagnosis: Diagnosis) -> Outcome:
        actions: list[Action] = []
        noops: list[tuple[Cause, str]] = []
        idle: list[str] = []  # rules that matched a cause but changed nothing, and why
        trace: list[str] = []
        groups_done: set[str] = set()
        # A cause ranked below one the policy answers with a no-op is already explained by it:
        # the loss has a cause no knob fixes, and a weaker secondary one is no reason to act.
        ceiling = _explained_below(self.rules, diagnosis, report)
        for rule in self.rules:
            cause = _matching_cause(rule, diagnosis)
            if (
                rule.action is not None
                and cause is not None
                and ceiling is not None
                and _rank(diagnosis, cause) > _rank(diagnosis, ceiling)
            ):
                trace.append(
                    f"{rule.name} ({rule.where}) on {cause.category.value} {cause.confidence:.2f}: "
                    f"explained by {ceiling.category.value} {ceiling.confidence:.2f}, ranked above it"
                )
                idle.append(
                    f"{rule.name}: {cause.category.value} is ranked below {ceiling.category.value}, "
                    "which explains the lost work"
                )
                continue
            if cause is None:
                continue
            head = f"{rule.name} ({rule.where}) on {cause.category.value} {cause.confidence:.2f}"
            if rule.group is not None and rule.group in groups_done:
                trace.append(f"{head}: group {rule.group} already acted")
                continue
            if rule.action is None:
                # A conditional no-op ("nothing in the catalogue fits this case") holds only when
                # its conditions do; when it holds, the rest of its group does not act.
                failed = _first_failed(rule, report, cause)
                if failed is not None:
                    trace.append(f"{head}: no-op does not apply: {failed}")
                    continue
                noops.append((cause, rule.noop or rule.reason))
                trace.append(f"{head}: no-op")
                if rule.group is not None:
                    groups_done.add(rule.group)
                continue
            acted = False
            targets = context.resolve(rule.action.target, report, cause)
            if not targets:
                idle.append(f"{rule.name}: no {rule.action.target.replace('_', ' ')} found in the report")
            for target in targets:
                action, why = self._try(rule, rule.action, cause, report, target)
                if action is not None and any(_setting(a) == _setting(action) for a in actions):
                    why = f"{action.knob} is already changed by an earlier rule"
                    action = None
                    # That rule serves this one's purpose: its group's fallbacks are not needed.
                    acted = True
                if action is None:
                    idle.append(f"{rule.name}: {why}")
                    trace.append(f"{head} -> {target}: {why}")
                    continue
                actions.append(action)
                acted = True
                trace.append(f"{head} -> {action.knob} = {action.value}")
            if acted and rule.group is not None:
                groups_done.add(rule.group)
        if actions:
            return Outcome(Proposal(actions=actions), trace)
        return Outcome(Proposal.noop(_noop_reason(diagnosis, noops, idle)), trace)

    def _try(
        self, rule: Rule, act: RuleAction, cause: Cause, report: HealthReport, target: Target
    ) -> tuple[Action | None, str]:
        for cond in rule.when:
            ok, why = _holds(cond, report, act.target, target, cause)
            if not ok:
                return None, why
        if rule.band is not None:
            ok, why = self._band(rule, rule.band, cause, report, act.target, target)
            if not ok:
                return None, why
        now = context.current(report, act.primitive.id, target)
        if now is None:
            return None, f"current value of {knob_key(act.primitive.id, target)} unknown (not on this host?)"
        value, goal, why = _next_value(act, report, target, now)
        if value is None:
            return None, why
        text = rule.reason.format_map(
            {
                "current": now,
                "value": value,
                "goal": goal,
                "target": target,
                "primitive": act.primitive.id,
                "cause": cause.category.value,
                "confidence": f"{cause.confidence:.2f}",
            }
        )
        action = Action(
            primitive=act.primitive.id,
            target=target,
            value=value,
            reason=f"{cause.category.value} ({cause.confidence:.2f}): {text}",
        )
        problem = action_problem(act.primitive, action.model_dump(exclude_none=True))
        if problem is not None:
            return None, f"would not validate: {problem}"
        return action, ""

    def _band(
        self, rule: Rule, band: Band, cause: Cause, report: HealthReport, selector: str, target: Target
    ) -> tuple[bool, str]:
        key = (rule.name, str(target))
        if band.metric == CONFIDENCE:
            values = [cause.confidence]
        else:
            values = context.metric_values(report, context.fill(band.metric, selector, target), band.stat)
        if not values:
            # Nothing to hold the band against: the diagnosis alone decides.
            return True, ""
        x = max(values) if band.rising else min(values)
        past_act = x > band.act if band.rising else x < band.act
        past_release = x < band.release if band.rising else x > band.release
        if past_act:
            self.active.add(key)
        elif past_release:
            self.active.discard(key)
        if key in self.active:
            return True, ""
        side = "above" if band.rising else "below"
        state = "released" if past_release else "inside the band, not active"
        return False, f"{band.metric} {band.stat} {x:.3g} not {side} {band.act:g} ({state})"


def _noop_reason(diagnosis: Diagnosis, noops: list[tuple[Cause, str]], idle: list[str]) -> str:
    if noops:
        noops.sort(key=lambda cr: -cr[0].confidence)
        return "; ".join(f"{c.category.value} ({c.confidence:.2f}): {why}" for c, why in noops)
    top = diagnosis.top
    if idle:
        return f"nothing to change for {top.category.value} ({top.confidence:.2f}): " + "; ".join(idle)
    return (
        f"no rule of the policy acts on {top.category.value} at confidence {top.confidence:.2f}; "
        "nothing is changed"
    )


def _rank(diagnosis: Diagnosis, cause: Cause) -> int:
    return next(i for i, c in enumerate(diagnosis.causes) if c is cause)


def _explained_below(rules: Sequence[Rule], diagnosis: Diagnosis, report: HealthReport) -> Cause | None:
    """The highest-ranked believed cause (above `none`, at the confidence its rules ask for) that the
    policy answers only with a no-op now: no rule acts on it, or a no-op of its own applies."""
    actionable = {c for r in rules if r.action is not None for c in r.causes}
    for cause in diagnosis.causes:
        if cause.category is Category.NONE:
            return None
        mine = [r for r in rules if cause.category in r.causes]
        believed = any(cause.confidence >= r.min_confidence for r in mine)
        if believed and (
            cause.category not in actionable
            or any(r.action is None and r.when and _first_failed(r, report, cause) is None for r in mine)
        ):
            return cause
        if believed and cause.category in actionable:
            return None  # the top believed cause has a knob: what acts on it is not overruled
    return None


def _matching_cause(rule: Rule, diagnosis: Diagnosis) -> Cause | None:
    ranked = diagnosis.causes
    if Category.NONE not in rule.causes:
        # A cause ranked below "healthy" is one the diagnosis itself does not believe in.
        healthy = next((i for i, c in enumerate(ranked) if c.category is Category.NONE), len(ranked))
        ranked = ranked[:healthy]
    found = [c for c in ranked if c.category in rule.causes and c.confidence >= rule.min_confidence]
    return max(found, key=lambda c: c.confidence) if found else None


def _first_failed(rule: Rule, report: HealthReport, cause: Cause) -> str | None:
    """Why the first of a no-op rule's conditions does not hold for `cause` (placeholders match any
    target), or None."""
    for cond in rule.when:
        ok, why = _holds(cond, report, "none", None, cause)
        if not ok:
            return why
    return None


def _holds(
    cond: Condition, report: HealthReport, selector: str, target: Target, cause: Cause
) -> tuple[bool, str]:
    name = context.fill(cond.name, selector, target)
    if cond.subject == "evidence":
        if any(matches(name, e.metric) for e in cause.evidence):
            return True, ""
        return False, f"{cause.category.value} cites no {name}"
    values: list[KnobValue]
    if cond.subject == "knob":
        pid, _, on = name.partition("@")
        value = context.current(report, pid, on or None) if "*" not in on else None
        values = [] if value is None else [value]
    else:
        values = list(context.metric_values(report, name, cond.stat))
    if not values:
        if cond.unmeasured is not None:
            ok, why = _holds(cond.unmeasured, report, selector, target, cause)
            return ok, f"{name} not measured, and its stand-in: {why}" if why else ""
        return False, f"{name} not measured"
    for v in values:
        if _compare(v, cond.op, cond.threshold):
            return True, ""
    shown = ", ".join(f"{v:.4g}" if isinstance(v, float) else str(v) for v in values)
    return False, f"{name} is {shown}, not {cond.op.replace('_', ' ')} {cond.threshold}"


def _setting(a: Action) -> str:
    return catalog.setting(a.primitive, a.target)


def _compare(v: KnobValue, op: str, threshold: float | str) -> bool:
    if op in ("above", "below"):
        if isinstance(v, str):
            return False
        return v > float(threshold) if op == "above" else v < float(threshold)
    same = (
        float(v) == float(threshold)
        if not isinstance(v, str) and not isinstance(threshold, str)
        else str(v) == str(threshold)
    )
    return same if op == "equals" else not same


def _next_value(
    act: RuleAction, report: HealthReport, target: Target, now: KnobValue
) -> tuple[KnobValue | None, KnobValue, str]:
    """The value one step toward the rule's goal, the goal, and why there is none when there is none."""
    p = act.primitive
    if isinstance(act.value, str):
        if str(now) == act.value:
            return None, act.value, f"{p.id} is already {act.value}"
        return act.value, act.value, ""
    if not isinstance(p.value, IntRange) or isinstance(now, str):
        return None, now, f"{p.id} has no numeric current value ({now!r})"
    cur = float(now)
    top = context.peak(report, p.id)
    names = {
        **context.host_names(report, act.target, target),
        "current": cur,
        "peak": cur if top is None else top,
    }
    goal = min(max(act.value.evaluate(names), p.value.min), p.value.max)
    shown = round(goal)
    if (act.direction == "up" and goal <= cur) or (act.direction == "down" and goal >= cur) or goal == cur:
        return None, shown, f"{p.id} is {now}, already at or past the goal {goal:g}"
    if act.step is not None:
        limit = abs(act.step.evaluate(names))
        goal = cur + max(-limit, min(limit, goal - cur))
    if p.step is not None:
        goal = p.step.clamp(cur, goal)
    value = int(min(max(round(goal), p.value.min), p.value.max))
    if value == cur:
        return None, shown, f"one step from {now} does not change {p.id}"
    return value, shown, ""
