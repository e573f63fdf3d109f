"""Rule policy files: YAML read node by node, so every problem names its file and line.

A policy maps diagnoses to actions (see policies/default.yaml for the format, in
words). Loading is all or nothing: the first problem raises PolicyError with one
line `FILE:LINE: problem`, and no rule of that file is used.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Literal

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from agent.proposers.expr import Expr, ExprError
from core.diagnosis import Category
from primitives import catalog
from primitives.base import CPULIST_PATTERN, Choice, CpuList, IntRange, Primitive, TargetKind

Stat = Literal["value", "mean", "median", "min", "max", "last"]
Op = Literal["above", "below", "equals", "not_equals"]
OPS: tuple[Op, ...] = ("above", "below", "equals", "not_equals")
STATS: tuple[Stat, ...] = ("value", "mean", "median", "min", "max", "last")
Selector = Literal["none", "data_device", "job", "jobs", "gpu"]
_SELECTOR_FOR: dict[TargetKind, Selector] = {
    TargetKind.NONE: "none",
    TargetKind.CPUSET: "none",
    TargetKind.BLOCK_DEVICE: "data_device",
    TargetKind.JOB: "job",
    TargetKind.GPU: "gpu",
}
CONFIDENCE = "confidence"
DEFAULT_MIN_CONFIDENCE = 0.3


class PolicyError(Exception):
    """One line: `FILE:LINE: problem`."""


@dataclass(frozen=True)
class Condition:
    """A metric or a knob against a threshold, or (`evidence`) a metric the cause acted on cites;
    `{device}`, `{job}`, `{gpu}` in names stand for the target. A metric condition may name a
    stand-in (`unmeasured`): another metric condition judged instead where a host does not measure
    the first (a source missing), rather than failing for want of the figure."""

    subject: Literal["metric", "knob", "evidence"]
    name: str
    stat: Stat
    op: Op
    threshold: float | str
    unmeasured: Condition | None = None


@dataclass(frozen=True)
class Band:
    """Act once `metric` passes `act`; keep acting until it passes `release` the other way."""

    metric: str
    stat: Stat
    rising: bool  # True: act_above / release_below; False: act_below / release_above
    act: float
    release: float


@dataclass(frozen=True)
class RuleAction:
    primitive: Primitive
    target: Selector
    value: Expr | str  # a goal: arithmetic for numbers, a literal for choices and CPU lists
    step: Expr | None
    direction: Literal["up", "down"] | None


@dataclass(frozen=True)
class Rule:
    name: str
    causes: tuple[Category, ...]
    min_confidence: float
    group: str | None
    when: tuple[Condition, ...]
    band: Band | None
    action: RuleAction | None
    noop: str | None
    reason: str
    where: str  # FILE:LINE of the rule, for traces


@dataclass(frozen=True)
class Policy:
    path: str
    rules: tuple[Rule, ...]
    enable: frozenset[str]


def default_policy_path() -> Path:
    return Path(str(resources.files("agent.proposers").joinpath("policies/default.yaml")))


# -- node helpers ------------------------------------------------------------------------------


class _Reader:
    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, node: Node, problem: str) -> PolicyError:
        return PolicyError(f"{self.path}:{node.start_mark.line + 1}: {problem}")

    def mapping(self, node: Node, what: str, allowed: tuple[str, ...]) -> dict[str, Node]:
        if not isinstance(node, MappingNode):
            raise self.fail(node, f"{what} must be a mapping")
        out: dict[str, Node] = {}
        for k, v in node.value:
            if not isinstance(k, ScalarNode):
                raise self.fail(k, f"{what}: keys must be plain words")
            if k.value not in allowed:
                raise self.fail(k, f"{what}: unknown key {k.value!r} (expected one of: {', '.join(allowed)})")
            if k.value in out:
                raise self.fail(k, f"{what}: {k.value!r} appears twice")
            out[k.value] = v
        return out

    def sequence(self, node: Node, what: str) -> list[Node]:
        if not isinstance(node, SequenceNode):
            raise self.fail(node, f"{what} must be a list")
        return list(node.value)

    def text(self, node: Node, what: str) -> str:
        if not isinstance(node, ScalarNode) or node.tag != "tag:yaml.org,2002:str" or not node.value.strip():
            raise self.fail(node, f"{what} must be non-empty text")
        return str(node.value)

    def number(self, node: Node, what: str) -> float:
        if not isinstance(node, ScalarNode) or node.tag not in (
            "tag:yaml.org,2002:int",
            "tag:yaml.org,2002:float",
        ):
            raise self.fail(node, f"{what} must be a number")
        return float(yaml.safe_load(node.value))

    def scalar(self, node: Node, what: str) -> float | str:
        if isinstance(node, ScalarNode) and node.tag in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float"):
            return self.number(node, what)
        return self.text(node, what)

    def words(self, node: Node, what: str) -> list[tuple[Node, str]]:
        if isinstance(node, ScalarNode):
            return [(node, self.text(node, what))]
        return [(n, self.text(n, what)) for n in self.sequence(node, what)]


# -- the policy ----------------------------------------------------------------------------------

_TOP = ("version", "enable", "rules")
_RULE = ("name", "cause", "min_confidence", "group", "when", "hysteresis", "action", "noop", "reason")
_COND = ("metric", "knob", "evidence", "stat", "above", "below", "equals", "not_equals", "unmeasured")
_BAND = ("metric", "stat", "act_above", "release_below", "act_below", "release_above")
_ACTION = ("primitive", "target", "value", "step", "direction")


def load_policy(path: str | Path) -> Policy:
    """Read and check one policy file; raises PolicyError naming the file and line."""
    name = str(path)
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise PolicyError(f"{name}:0: cannot read: {e.strerror or e}") from e
    return parse_policy(text, name)


def parse_policy(text: str, name: str = "<policy>") -> Policy:
    r = _Reader(name)
    try:
        root = yaml.compose(text)
    except yaml.MarkedYAMLError as e:
        line = e.problem_mark.line + 1 if e.problem_mark else 0
        raise PolicyError(f"{name}:{line}: not valid YAML: {e.problem}") from e
    except yaml.YAMLError as e:
        raise PolicyError(f"{name}:0: not valid YAML: {e}") from e
    if root is None:
        raise PolicyError(f"{name}:1: the file is empty")
    top = r.mapping(root, "policy", _TOP)
    if "version" not in top:
        raise r.fail(root, "missing `version: 1`")
    if r.number(top["version"], "version") != 1:
        raise r.fail(top["version"], "only version 1 is understood")
    enable: set[str] = set()
    for node, pid in r.words(top["enable"], "enable") if "enable" in top else []:
        if catalog.get(pid) is None:
            raise r.fail(node, f"enable: {pid!r} is not a catalogue primitive")
        enable.add(pid)
    if "rules" not in top:
        raise r.fail(root, "missing `rules:`")
    rules: list[Rule] = []
    seen: set[str] = set()
    for node in r.sequence(top["rules"], "rules"):
        rule = _rule(r, node, frozenset(enable))
        if rule.name in seen:
            raise r.fail(node, f"rule name {rule.name!r} is used twice")
        seen.add(rule.name)
        rules.append(rule)
    return Policy(path=name, rules=tuple(rules), enable=frozenset(enable))


def _rule(r: _Reader, node: Node, enable: frozenset[str]) -> Rule:
    m = r.mapping(node, "rule", _RULE)
    for required in ("name", "cause"):
        if required not in m:
            raise r.fail(node, f"rule: missing {required!r}")
    name = r.text(m["name"], "name")
    causes: list[Category] = []
    for n, word in r.words(m["cause"], f"rule {name}: cause"):
        try:
            causes.append(Category(word))
        except ValueError:
            known = ", ".join(c.value for c in Category)
            raise r.fail(n, f"rule {name}: unknown cause {word!r} (known: {known})") from None
    min_conf = DEFAULT_MIN_CONFIDENCE
    if "min_confidence" in m:
        min_conf = r.number(m["min_confidence"], f"rule {name}: min_confidence")
        if not 0.0 <= min_conf <= 1.0:
            raise r.fail(m["min_confidence"], f"rule {name}: min_confidence must lie in 0..1")
    if ("action" in m) == ("noop" in m):
        raise r.fail(node, f"rule {name}: give exactly one of `action` and `noop`")
    action = _action(r, m["action"], name, enable) if "action" in m else None
    noop = r.text(m["noop"], f"rule {name}: noop") if "noop" in m else None
    if action is not None and "reason" not in m:
        raise r.fail(node, f"rule {name}: an action needs a `reason`")
    when = (
        tuple(_condition(r, n, name) for n in r.sequence(m["when"], f"rule {name}: when"))
        if "when" in m
        else ()
    )
    return Rule(
        name=name,
        causes=tuple(causes),
        min_confidence=min_conf,
        group=r.text(m["group"], f"rule {name}: group") if "group" in m else None,
        when=when,
        band=_band(r, m["hysteresis"], name) if "hysteresis" in m else None,
        action=action,
        noop=noop,
        reason=_reason(r, m["reason"], name) if "reason" in m else (noop or ""),
        where=f"{r.path}:{node.start_mark.line + 1}",
    )


REASON_FIELDS = ("current", "value", "goal", "target", "primitive", "cause", "confidence")


def _reason(r: _Reader, node: Node, rule: str) -> str:
    text = r.text(node, f"rule {rule}: reason")
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(text) if f is not None]
    except ValueError as e:
        raise r.fail(node, f"rule {rule}: reason: {e}") from None
    for f in fields:
        if f not in REASON_FIELDS:
            known = ", ".join(REASON_FIELDS)
            raise r.fail(node, f"rule {rule}: reason: unknown field {{{f}}} (known: {known})")
    return text


def _stat(r: _Reader, m: dict[str, Node], what: str) -> Stat:
    if "stat" not in m:
        return "value"
    word = r.text(m["stat"], f"{what}: stat")
    for s in STATS:
        if s == word:
            return s
    raise r.fail(m["stat"], f"{what}: stat must be one of {', '.join(STATS)}")


def _condition(r: _Reader, node: Node, rule: str, stand_in: bool = False) -> Condition:
    what = f"rule {rule}: when" + (": unmeasured" if stand_in else "")
    m = r.mapping(node, what, _COND)
    subjects = [s for s in ("metric", "knob", "evidence") if s in m]
    if len(subjects) != 1:
        raise r.fail(node, f"{what}: give exactly one of `metric`, `knob` and `evidence`")
    subject: Literal["metric", "knob", "evidence"] = (
        "metric" if subjects[0] == "metric" else "knob" if subjects[0] == "knob" else "evidence"
    )
    if subject == "evidence":
        # The cause cites this metric among its evidence: no threshold, no stat.
        extra = [k for k in m if k != "evidence"]
        if extra:
            raise r.fail(m[extra[0]], f"{what}: `evidence` names a metric the cause cites; no {extra[0]}")
        return Condition("evidence", r.text(m["evidence"], f"{what}: evidence"), "value", "equals", "")
    name = r.text(m[subject], f"{what}: {subject}")
    if subject == "knob" and catalog.get(name.split("@", 1)[0]) is None:
        raise r.fail(m[subject], f"{what}: {name.split('@', 1)[0]!r} is not a catalogue primitive")
    ops = [o for o in OPS if o in m]
    if len(ops) != 1:
        raise r.fail(node, f"{what}: give exactly one of above, below, equals, not_equals")
    op = ops[0]
    threshold = r.scalar(m[op], f"{what}: {op}")
    if op in ("above", "below") and not isinstance(threshold, float):
        raise r.fail(m[op], f"{what}: {op} needs a number")
    if subject == "knob" and "stat" in m:
        raise r.fail(m["stat"], f"{what}: a knob has one value; `stat` is for metrics")
    unmeasured = None
    if "unmeasured" in m:
        if subject != "metric" or stand_in:
            raise r.fail(m["unmeasured"], f"{what}: only a metric condition takes an `unmeasured` stand-in")
        unmeasured = _condition(r, m["unmeasured"], rule, stand_in=True)
        if unmeasured.subject != "metric":
            raise r.fail(m["unmeasured"], f"{what}: unmeasured: the stand-in is a metric condition")
    return Condition(subject, name, _stat(r, m, what), op, threshold, unmeasured)


def _band(r: _Reader, node: Node, rule: str) -> Band:
    what = f"rule {rule}: hysteresis"
    m = r.mapping(node, what, _BAND)
    if "metric" not in m:
        raise r.fail(node, f"{what}: missing `metric` (a metric name, or `confidence`)")
    rising = "act_above" in m
    act_key, rel_key = ("act_above", "release_below") if rising else ("act_below", "release_above")
    if act_key not in m or rel_key not in m or ({"act_above", "act_below"} <= set(m)):
        raise r.fail(node, f"{what}: give act_above with release_below, or act_below with release_above")
    act, release = r.number(m[act_key], what), r.number(m[rel_key], what)
    if (rising and release >= act) or (not rising and release <= act):
        raise r.fail(m[rel_key], f"{what}: the release point must lie on the far side of the act point")
    return Band(r.text(m["metric"], what), _stat(r, m, what), rising, act, release)


def _action(r: _Reader, node: Node, rule: str, enable: frozenset[str]) -> RuleAction:
    what = f"rule {rule}: action"
    m = r.mapping(node, what, _ACTION)
    for required in ("primitive", "value"):
        if required not in m:
            raise r.fail(node, f"{what}: missing {required!r}")
    pid = r.text(m["primitive"], f"{what}: primitive")
    p = catalog.get(pid)
    if p is None:
        raise r.fail(m["primitive"], f"{what}: {pid!r} is not a catalogue primitive")
    if not p.proposable and pid not in enable:
        raise r.fail(m["primitive"], f"{what}: {pid} is off unless the file lists it under `enable:`")
    selector = _SELECTOR_FOR[p.target]
    if "target" in m:
        given = r.text(m["target"], f"{what}: target")
        if given == "jobs" and selector == "job":
            selector = "jobs"  # every job, each judged on its own
        elif given != selector:
            raise r.fail(m["target"], f"{what}: {pid} takes target `{selector}`, not {given!r}")
    value: Expr | str
    if isinstance(p.value, IntRange):
        value = _expr(r, m["value"], what)
    else:
        value = r.text(m["value"], f"{what}: value")
        if isinstance(p.value, Choice) and value not in p.value.options:
            raise r.fail(m["value"], f"{what}: {pid} takes one of {', '.join(p.value.options)}")
        if isinstance(p.value, CpuList) and re.fullmatch(CPULIST_PATTERN, value) is None:
            raise r.fail(m["value"], f"{what}: {value!r} is not a CPU list")
    numeric = isinstance(p.value, IntRange)
    for key in ("step", "direction"):
        if key in m and not numeric:
            raise r.fail(m[key], f"{what}: `{key}` is for numeric primitives")
    direction: Literal["up", "down"] | None = None
    if "direction" in m:
        word = r.text(m["direction"], f"{what}: direction")
        if word not in ("up", "down"):
            raise r.fail(m["direction"], f"{what}: direction is `up` or `down`")
        direction = "up" if word == "up" else "down"
    step = _expr(r, m["step"], what) if "step" in m else None
    return RuleAction(p, selector, value, step, direction)


def _expr(r: _Reader, node: Node, what: str) -> Expr:
    if not isinstance(node, ScalarNode):
        raise r.fail(node, f"{what}: expected a number or an expression")
    try:
        return Expr(str(node.value))
    except ExprError as e:
        raise r.fail(node, f"{what}: {e}") from None
