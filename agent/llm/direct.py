"""Answers the rules give without a model: a declined change, a setting's safety, the remedies,
a moment of the window, a question outside the tool's scope.

Every figure comes from the report, the diagnosis, the catalogue's descriptor of a setting
(tier, bounds, step) or the question itself, written with `fmt`, so the grounding check
traces it (`agent.grounding.catalogue_values` for the catalogue's). Host strings pass
`core.text.printable` where the answer is printed.
"""

from __future__ import annotations

from agent.answer import advice, label, paragraph
from agent.diagnosis.fmt import fmt, pct
from agent.llm.intent import Asked
from core.diagnosis import Category, Diagnosis
from core.report import HealthReport
from primitives.base import Choice, IntRange, Primitive, Tier
from primitives.catalog import for_cause

NEVER_APPLIES = (
    "idletune never changes a setting from the chat: every change goes through its safety gate "
    "(`idletune propose`, then a person's approval or auto mode within the guardrails), "
    "which journals it and rolls it back when it harms."
)
OUT_OF_SCOPE = (
    "That is outside what idletune answers: it explains why this host's GPUs are idle or slow, "
    "from the host's report and diagnosis, and which catalogue settings could help. "
    'Ask, for instance, "why are my GPUs idle?" or "what would you change?".'
)
_TIER = {
    Tier.NONE: "tier none: no risk",
    Tier.LOW: "tier low: auto mode may apply it within its bounds",
    Tier.MEDIUM: "tier medium: a person approves every change",
    Tier.HIGH: "tier high: a person approves and the training framework must cooperate",
}


def _top(d: Diagnosis) -> str:
    top = d.top
    if top.category is Category.NONE:
        return "The diagnosis finds the host healthy"
    return f"The diagnosis' top cause is {top.category.value} ({label(top.category)}, {pct(top.confidence)})"


def _bounds(p: Primitive) -> str:
    v = p.value
    if isinstance(v, IntRange):
        unit = f" {v.unit}" if v.unit else ""
        text = f"its bounds are {v.min} to {v.max}{unit}"
    elif isinstance(v, Choice):
        text = f"its values are {v.describe()}"
    else:
        text = "its value is a list of the host's CPUs"
    if p.step is not None:
        text += f", and one step moves it at most {p.step.describe()}"
    return text


def _current(p: Primitive, report: HealthReport) -> list[str]:
    found = sorted((k, v) for k, v in report.knobs.items() if k == p.id or k.startswith(p.id + "@"))
    return [f"{k} = {fmt(float(v)) if isinstance(v, int | float) else v}" for k, v in found[:3]]


def _relevance(p: Primitive, d: Diagnosis) -> str:
    top = d.top.category
    if top is Category.NONE:
        return f"The host looks healthy, so nothing calls for changing {p.id}."
    if top in p.causes:
        return f"{p.id} is one of the catalogue's remedies for {top.value}."
    return f"{p.id} does not address {top.value}, the diagnosis' top cause."


def _setting(p: Primitive, value: float | None, report: HealthReport) -> list[str]:
    out = [f"{p.id} is {_TIER[p.tier]}; {_bounds(p)}."]
    if not p.proposable:
        out.append(f"{p.id} is never proposed unless a policy enables it.")
    now = _current(p, report)
    if now:
        out.append("Now: " + ", ".join(now) + ".")
    if value is not None and isinstance(p.value, IntRange) and not p.value.min <= value <= p.value.max:
        out.append(f"{fmt(value)} is outside those bounds: the gate would refuse it.")
    elif value is not None and p.step is not None:
        current = [v for k, v in report.knobs.items() if k == p.id and isinstance(v, int | float)]
        if current and not p.step.allows(float(current[0]), value):
            out.append(
                f"{fmt(value)} is more than one step from {fmt(float(current[0]))}: the gate would refuse it."
            )
    return out


def decline(asked: Asked, report: HealthReport, d: Diagnosis) -> str:
    """A request to change a setting: declined, with the reason and what the catalogue allows."""
    out = [f"Not done. {NEVER_APPLIES}"]
    if asked.primitive is not None:
        out += _setting(asked.primitive, asked.value, report)
        out.append(_relevance(asked.primitive, d))
    else:
        out.append("Only settings of the catalogue can be changed, each within its bounds.")
    out.append(_top(d) + ".")
    return " ".join(out)


def safety(asked: Asked, report: HealthReport, d: Diagnosis) -> str:
    """Whether changing a setting would be safe and would help: the catalogue and the diagnosis decide."""
    if asked.primitive is None:
        return remedies(report, d)
    out = [*_setting(asked.primitive, asked.value, report), f"Risk: {asked.primitive.risk}"]
    out.append(_relevance(asked.primitive, d))
    out.append(_top(d) + ".")
    out.append(
        "idletune does not apply it from the chat; `idletune propose` shows what the gate would allow."
    )
    return " ".join(out)


def remedies(report: HealthReport, d: Diagnosis) -> str:
    """What could be changed for the top cause, from the catalogue; nothing when the host is healthy."""
    top = d.top
    if top.category is Category.NONE:
        return f"{_top(d)} ({pct(top.confidence)} confident): nothing needs changing."
    found = for_cause(top.category)[:3]
    out = [_top(d) + "."]
    if found:
        out.append(
            "The catalogue's settings for it, lowest tier first: "
            + "; ".join(f"{p.id} ({p.description.lower()})" for p in found)
            + "."
        )
    else:
        out.append(f"No catalogue setting fixes {top.category.value}.")
    tip = advice(top.category)
    if tip:
        out.append(f"Also: {tip}.")
    out.append("`idletune propose` picks the values within the guardrails; the chat changes nothing.")
    return " ".join(out)


def at_time(t: float, report: HealthReport, d: Diagnosis) -> str:
    """What the diagnosis says about one moment, `t` seconds into the window."""
    t0, span = report.window.start, report.window.end - report.window.start
    if t > span:
        return (
            f"t={fmt(t)} s is past the end of the window, which covers t=0 s to t={fmt(span)} s. "
            + paragraph(report, d)
        )
    out: list[str] = []
    for s in d.lost_work:
        if s.t_start - t0 <= t <= s.t_end - t0:
            signals = ", ".join(s.signals) or "the KPIs"
            out.append(
                f"At t={fmt(t)} s the GPUs were losing work: from t={fmt(s.t_start - t0)} s "
                f"to t={fmt(s.t_end - t0)} s about {pct(s.severity)} of it, seen in {signals}."
            )
            break
    for c in d.causes[:3]:
        begun = [e for e in c.evidence if e.t_start is not None and e.t_start - t0 <= t]
        if begun and c.confidence >= 0.05 and c.category is not Category.NONE:
            e = begun[0]
            assert e.t_start is not None
            base = f" against {fmt(e.baseline)} before" if e.baseline is not None else ""
            out.append(
                f"{c.category.value}: {e.metric} was {fmt(e.observed)}{base}, "
                f"anomalous since t={fmt(e.t_start - t0)} s."
            )
    if not out:
        out.append(
            f"Nothing in the diagnosis marks t={fmt(t)} s: no lost-work span covers it "
            "and no cause's evidence had begun by then."
        )
    out.append(paragraph(report, d))
    return " ".join(out)
