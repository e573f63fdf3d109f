"""Property tests: no sequence of proposals, clock ticks, reverts and answers makes the gate
approve an out-of-bounds value, exceed its rate limit or a cooldown, flap a knob, or pass
tier 2/3 without a person's approval (and tier 3 without the hook)."""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.knob import KnobValue
from core.proposal import Action, Proposal
from guardrails.approvals import ApprovalStore
from guardrails.gate import Gate, GateConfig, direction
from guardrails.leases import LeaseTable
from primitives import catalog
from primitives.base import IntRange, Primitive, Tier

# One knob per tier, with values inside and outside the catalogue's bounds.
KNOBS: dict[str, tuple[str, str | int | None, list[KnobValue]]] = {
    "t0": ("vm.swappiness", None, [-5, 0, 20, 40, 60, 80, 100, 150, 200, 250]),
    "t0b": ("vm.dirty_ratio", None, [1, 5, 10, 15, 20, 30, 40, 70]),
    "t1": ("block.read_ahead_kb", "loop0", [8, 16, 128, 256, 1024, 4096, 20000]),
    "t2": ("mm.thp_enabled", None, ["always", "madvise", "never"]),
    "t3": ("trainer.batch_size", "job", [64, 128, 256, 512, 0, 100000]),
}
CAUSES = [None, "readahead_mismatch", "memory_reclaim"]

step = st.one_of(
    st.tuples(st.just("tick"), st.sampled_from([0.0, 1.0, 5.0, 20.0, 59.9, 60.0, 61.0, 200.0, 601.0])),
    st.tuples(
        st.just("propose"),
        st.lists(
            st.tuples(st.sampled_from(sorted(KNOBS)), st.integers(min_value=0, max_value=9)),
            min_size=1,
            max_size=3,
        ),
        st.sampled_from(CAUSES),
    ),
    st.tuples(st.just("revert"), st.sampled_from(sorted(KNOBS))),
    st.tuples(st.just("answer"), st.booleans()),
    st.tuples(st.just("settle"), st.sampled_from(CAUSES)),
    st.tuples(st.just("hook"), st.booleans()),
)


def _lookup() -> dict[str, Primitive]:
    table = {p.id: p for p in catalog.all_primitives()}
    for pid in ("vm.swappiness", "vm.dirty_ratio"):
        table[pid] = dataclasses.replace(table[pid], tier=Tier.NONE)
    return table


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(step, max_size=60),
    st.integers(min_value=1, max_value=4),
    st.integers(1, 3),
    st.sampled_from([0.0, 60.0]),
)
def test_no_sequence_breaks_the_gates_rules(
    steps: list[tuple],  # type: ignore[type-arg]
    rate: int,
    consensus: int,
    cooldown: float,
) -> None:
    t = [0.0]
    clock = lambda: t[0]  # noqa: E731
    table = _lookup()
    hook = [False]
    with tempfile.TemporaryDirectory() as d:
        cfg = GateConfig(
            mode="auto",
            rate_limit=rate,
            consensus=consensus,
            cooldown_s=cooldown,
            bounds={"vm.swappiness": (0, 150)},
        )
        store = ApprovalStore(Path(d) / "approvals", clock=clock)
        gate = Gate(
            cfg,
            clock=clock,
            approvals=store,
            leases=LeaseTable(clock=clock),
            lookup=table.get,
            cooperation=lambda a: None if hook[0] else "no hook",
        )
        current: dict[str, KnobValue] = {
            "vm.swappiness": 60,
            "block.read_ahead_kb@loop0": 128,
            "mm.thp_enabled": "madvise",
            "trainer.batch_size@job": 256,
            "vm.dirty_ratio": 20,
        }
        previous: dict[str, list[KnobValue]] = {k: [] for k in current}
        moves: list[tuple[float, str, str, str]] = []  # t, knob, old, new
        approved_at: list[float] = []
        last_by_primitive: dict[str, float] = {}
        person_ok: set[tuple[str, str]] = set()  # (knob, value) a person approved
        streak: dict[str, list[tuple[int, str | None, str]]] = {}
        review_no = 0
        for s in steps:
            if s[0] == "tick":
                t[0] += s[1]
            elif s[0] == "hook":
                hook[0] = s[1]
            elif s[0] == "settle":
                gate.settled(s[1])
            elif s[0] == "answer":
                for req in store.pending():
                    store.decide(req.id, s[1], "person")
                    if s[1]:
                        person_ok.add((req.action.knob, str(req.action.value)))
            elif s[0] == "revert":
                pid, target, _ = KNOBS[s[1]]
                knob = Action(primitive=pid, target=target, value=0, reason="r").knob
                if previous[knob]:
                    old, new = current[knob], previous[knob].pop()
                    current[knob] = new
                    gate.reverted(pid, target, old, new)
                    moves.append((t[0], knob, str(old), str(new)))
            else:
                _, picks, cause = s
                actions = []
                for key, i in picks:
                    pid, target, values = KNOBS[key]
                    actions.append(
                        Action(primitive=pid, target=target, value=values[i % len(values)], reason="p")
                    )
                review_no += 1
                for a in actions:
                    way = direction(current[a.knob], a.value)
                    streak.setdefault(a.knob, []).append((review_no, cause, way))
                decisions = gate.review(Proposal(actions=actions), current, cause=cause, job="job")
                assert len(decisions) == len(actions)
                for dec in decisions:
                    assert dec.rule
                    if dec.decision != "approve":
                        continue
                    a = dec.action
                    p = table[a.primitive]
                    v = p.value.normalize(a.value)
                    # bounds: the catalogue's and the operator's
                    assert not isinstance(p.value, IntRange) or p.value.min <= int(v) <= p.value.max
                    if a.primitive == "vm.swappiness":
                        assert 0 <= int(v) <= 150
                    # step
                    cur = current[a.knob]
                    if p.step is not None:
                        assert p.step.allows(float(cur), float(v))
                    # rate limit and cooldown
                    approved_at.append(t[0])
                    assert sum(1 for x in approved_at if t[0] - x < cfg.rate_window_s) <= rate
                    last = last_by_primitive.get(a.primitive)
                    assert last is None or t[0] - last >= cfg.cooldown_s
                    last_by_primitive[a.primitive] = t[0]
                    # no flap: never back to a value the knob left for this one within the window
                    for mt, mk, mold, mnew in moves:
                        if mk == a.knob and t[0] - mt <= cfg.flap_window_s:
                            assert not (mold == str(v) and mnew == str(cur)), (moves, a)
                    # tiers
                    if p.tier == Tier.LOW:
                        recent = streak[a.knob][-consensus:]
                        assert len(recent) == consensus
                        assert [r[0] for r in recent] == list(range(review_no - consensus + 1, review_no + 1))
                        assert len({(r[1], r[2]) for r in recent}) == 1
                    if p.tier >= Tier.MEDIUM:
                        assert (a.knob, str(v)) in person_ok
                        person_ok.discard((a.knob, str(v)))
                    if p.tier == Tier.HIGH:
                        assert hook[0]
                    # the executor makes it
                    previous[a.knob].append(cur)
                    current[a.knob] = v
                    moves.append((t[0], a.knob, str(cur), str(v)))
                    gate.applied(a, cur, cause, "job", dec.approval_id)
                # Streaks not in this review are broken, as the gate's are.
                for k in list(streak):
                    if k not in {a.knob for a in actions}:
                        streak[k] = []
                for dec in decisions:
                    if dec.decision == "approve":
                        streak[dec.action.knob] = []
