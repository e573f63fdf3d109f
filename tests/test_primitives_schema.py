"""The proposal schema validates exactly when every primitive exists and every value is in bounds."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from primitives.base import Choice, IntRange, Primitive, TargetKind
from primitives.catalog import all_primitives, get, proposal_schema
from primitives.schema import action_problem

VALIDATOR = Draft202012Validator(proposal_schema())
PRIMS = all_primitives()
IDS = [p.id for p in PRIMS]
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:-]{0,127}")
_MISSING = object()


# -- an oracle written from the descriptors' bounds, not from the schema ----------------------


def _int_ok(v: Any, lo: int, hi: int) -> bool:
    if isinstance(v, bool):
        return False
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return isinstance(v, int) and lo <= v <= hi


def _cpulist_ok(v: Any) -> bool:
    if not isinstance(v, str) or not re.fullmatch(r"\d+(-\d+)?(,\d+(-\d+)?)*", v):
        return False
    return all(int(n) <= 4095 and (n == "0" or not n.startswith("0")) for n in re.findall(r"\d+", v))


def _value_ok(p: Primitive, v: Any) -> bool:
    spec = p.value
    if isinstance(spec, IntRange):
        return _int_ok(v, spec.min, spec.max)
    if isinstance(spec, Choice):
        return isinstance(v, str) and v in spec.options
    return _cpulist_ok(v)


def _target_ok(p: Primitive, t: Any) -> bool:
    kind = p.target
    if kind is TargetKind.NONE:
        return t is _MISSING or t is None
    if kind is TargetKind.CPUSET:
        return t is _MISSING or t is None or _cpulist_ok(t)
    if t is _MISSING:
        return False
    if kind is TargetKind.GPU:
        return _int_ok(t, 0, 1 << 62)
    return isinstance(t, str) and _NAME.fullmatch(t) is not None


def expected_valid(action: dict[str, Any]) -> bool:
    p = get(action.get("primitive", ""))
    if p is None or set(action) - {"primitive", "target", "value", "reason"}:
        return False
    reason = action.get("reason")
    return (
        isinstance(reason, str)
        and len(reason) > 0
        and "value" in action
        and _value_ok(p, action["value"])
        and _target_ok(p, action.get("target", _MISSING))
    )


# -- strategies -------------------------------------------------------------------------------


def _values(p: Primitive) -> st.SearchStrategy[Any]:
    spec = p.value
    if isinstance(spec, IntRange):
        # The edges are where a wrong bound shows: drawn as often as the whole inside.
        edges = st.sampled_from([spec.min - 1, spec.min, spec.max, spec.max + 1])
        inside = st.integers(spec.min, spec.max)
        odd = st.one_of(
            inside.map(float),
            st.floats(allow_nan=False, allow_infinity=False),
            st.booleans(),
            inside.map(str),
        )
        return st.one_of(edges, inside, odd)
    if isinstance(spec, Choice):
        near_misses = [o.upper() for o in spec.options] + [o + " " for o in spec.options] + ["", "x"]
        return st.one_of(
            st.sampled_from(spec.options), st.sampled_from(near_misses), st.text(max_size=12), st.integers()
        )
    return st.one_of(CPULISTS, st.text(alphabet="0123456789,- x", max_size=10), st.integers())


_CPU_IDS = st.one_of(st.integers(0, 64), st.sampled_from([4094, 4095, 4096, 10000]))
CPULISTS = st.lists(st.tuples(_CPU_IDS, _CPU_IDS), min_size=1, max_size=4).map(
    lambda rs: ",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in rs)
)


def _targets(p: Primitive) -> st.SearchStrategy[Any]:
    good: st.SearchStrategy[Any]
    if p.target is TargetKind.GPU:
        good = st.integers(0, 16)
    elif p.target in (TargetKind.BLOCK_DEVICE, TargetKind.JOB):
        good = st.from_regex(_NAME, fullmatch=True)
    elif p.target is TargetKind.CPUSET:
        good = st.one_of(CPULISTS, st.none(), st.just(_MISSING))
    else:
        good = st.one_of(st.none(), st.just(_MISSING))
    bad = st.sampled_from(["../etc", "", "a/b", "x@y", -1, 1.5, True, "0", "0-3"])
    return st.one_of(good, good, bad)


@st.composite
def actions(draw: st.DrawFn, only: Primitive | None = None) -> dict[str, Any]:
    if only is None and draw(st.integers(0, 19)) == 0:
        pid = draw(st.sampled_from(["vm.overcommit_memory", "block.rotational", "", "VM.SWAPPINESS"]))
        p = PRIMS[0]
    else:
        p = only or draw(st.sampled_from(PRIMS))
        pid = p.id
    action: dict[str, Any] = {"primitive": pid, "value": draw(_values(p)), "reason": "why"}
    target = draw(_targets(p))
    if target is not _MISSING:
        action["target"] = target
    if draw(st.integers(0, 29)) == 0:
        action["reason"] = ""
    if draw(st.integers(0, 29)) == 0:
        action["extra"] = 1
    return action


@settings(max_examples=600, deadline=None)
@given(st.lists(actions(), max_size=4), st.one_of(st.none(), st.just(""), st.just("healthy")))
def test_proposal_validates_exactly_when_everything_is_in_bounds(
    acts: list[dict[str, Any]], noop: Any
) -> None:
    doc: dict[str, Any] = {"actions": acts}
    if noop is not None:
        doc["noop_reason"] = noop
    noop_ok = bool(noop) if not acts else noop is None
    expected = all(expected_valid(a) for a in acts) and noop_ok
    assert VALIDATOR.is_valid(doc) == expected, (doc, list(VALIDATOR.iter_errors(doc)))


@pytest.mark.parametrize("pid", IDS)
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_each_primitive_schema_agrees_with_the_oracle(pid: str, data: st.DataObject) -> None:
    p = get(pid)
    assert p is not None
    action = data.draw(actions(only=p))
    assert (action_problem(p, action) is None) == expected_valid(action), action
    assert VALIDATOR.is_valid({"actions": [action]}) == expected_valid(action), action


def test_problem_is_one_readable_line() -> None:
    p = get("vm.dirty_background_ratio")
    assert p is not None
    problem = action_problem(p, {"primitive": p.id, "value": 80, "reason": "r"})
    assert problem is not None and "value" in problem and "\n" not in problem


def test_unknown_primitive_and_out_of_bounds_value_do_not_validate() -> None:
    ok = {"actions": [{"primitive": "vm.swappiness", "value": 10, "reason": "r"}]}
    assert VALIDATOR.is_valid(ok)
    assert not VALIDATOR.is_valid({"actions": [{"primitive": "vm.swapiness", "value": 10, "reason": "r"}]})
    assert not VALIDATOR.is_valid({"actions": [{"primitive": "vm.swappiness", "value": 201, "reason": "r"}]})
    assert not VALIDATOR.is_valid({"actions": []})
    assert VALIDATOR.is_valid({"actions": [], "noop_reason": "healthy host"})
