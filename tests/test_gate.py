"""The gate: every rule decides with its name, tiers in order, approvals across processes, leases."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from core.knob import KnobValue
from core.proposal import Action, Proposal
from guardrails.approvals import ApprovalStore
from guardrails.gate import Gate, GateConfig
from guardrails.leases import LeaseTable
from primitives import catalog
from primitives.base import Primitive, Tier


class Clock:
    def __init__(self, t: float = 1000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def _a(primitive: str, value: int | str, target: str | int | None = None) -> Action:
    return Action(primitive=primitive, target=target, value=value, reason="test")


def _lookup_with_tier0(pid: str = "vm.swappiness") -> dict[str, Primitive]:
    table = {p.id: p for p in catalog.all_primitives()}
    table[pid] = dataclasses.replace(table[pid], tier=Tier.NONE)
    return table


def _gate(tmp_path: Path, clock: Clock, quarantines: dict[str, float] | None = None, **cfg: object) -> Gate:
    config = GateConfig.model_validate({"mode": "auto", **cfg})
    table = _lookup_with_tier0()
    return Gate(
        config,
        clock=clock,
        approvals=ApprovalStore(tmp_path / "approvals", clock=clock),
        leases=LeaseTable(tmp_path / "leases.json", clock=clock),
        lookup=table.get,
        quarantines=quarantines,
    )


CUR: dict[str, KnobValue] = {
    "vm.swappiness": 60,
    "vm.dirty_ratio": 20,
    "block.read_ahead_kb@loop0": 128,
    "mm.thp_enabled": "madvise",
}


def one(
    gate: Gate, action: Action, cause: str | None = "readahead_mismatch", **kw: object
) -> tuple[str, str]:
    [d] = gate.review(Proposal(actions=[action]), CUR, cause=cause, **kw)  # type: ignore[arg-type]
    assert d.rule, "every decision names its rule"
    return d.decision, d.rule


def test_tier0_applies_at_once_and_tier1_waits_for_consensus(tmp_path: Path) -> None:
    g = _gate(tmp_path, Clock())
    assert one(g, _a("vm.swappiness", 40)) == ("approve", "tier0")
    g2 = _gate(tmp_path, Clock())
    ra = _a("block.read_ahead_kb", 1024, "loop0")
    assert one(g2, ra) == ("deny", "tier1.consensus")
    assert one(g2, ra) == ("deny", "tier1.consensus")
    assert one(g2, ra) == ("approve", "tier1.consensus")


def test_consensus_needs_consecutive_agreeing_reviews(tmp_path: Path) -> None:
    g = _gate(tmp_path, Clock())
    ra = _a("block.read_ahead_kb", 1024, "loop0")
    one(g, ra)
    one(g, ra)
    g.review(Proposal.noop("healthy"), CUR)  # a diagnosis that disagrees breaks the streak
    assert one(g, ra) == ("deny", "tier1.consensus")
    one(g, ra)
    assert one(g, ra, cause="storage_latency") == ("deny", "tier1.consensus")  # another cause, new streak


def test_tier2_asks_then_a_person_in_another_process_approves(tmp_path: Path) -> None:
    clock = Clock()
    g = _gate(tmp_path, clock)
    act = _a("mm.thp_enabled", "never")
    [d] = g.review(Proposal(actions=[act]), CUR, cause="memory_reclaim")
    assert d.decision == "ask" and d.approval_id is not None and d.rule == "tier2.approval"
    other = ApprovalStore(tmp_path / "approvals", clock=clock)  # the `idletune approve` process
    assert [a.id for a in other.pending()] == [d.approval_id]
    other.decide(d.approval_id, True, "alice")
    [d2] = g.review(Proposal(actions=[act]), CUR, cause="memory_reclaim")
    assert (d2.decision, d2.rule) == ("approve", "tier2.approved") and "alice" in d2.reason
    g.applied(act, "madvise", "memory_reclaim", None, d2.approval_id)
    assert other.get(d.approval_id).status == "used"  # type: ignore[union-attr]


def test_a_rejected_request_denies_and_an_approval_covers_only_its_value(tmp_path: Path) -> None:
    clock = Clock()
    g = _gate(tmp_path, clock)
    [d] = g.review(Proposal(actions=[_a("mm.thp_enabled", "never")]), CUR)
    g.approvals.decide(d.approval_id or "", False, "bob")
    assert one(g, _a("mm.thp_enabled", "never"))[1] == "tier2.rejected"
    assert one(g, _a("mm.thp_enabled", "always")) == ("ask", "tier2.approval")


def test_tier3_needs_the_hook_and_approval(tmp_path: Path) -> None:
    g = _gate(tmp_path, Clock())
    cur = {"trainer.batch_size@resnet": 256}
    [d] = g.review(Proposal(actions=[_a("trainer.batch_size", 512, "resnet")]), cur)
    assert (d.decision, d.rule) == ("deny", "tier3.cooperation")
    g._cooperation = lambda a: None
    [d] = g.review(Proposal(actions=[_a("trainer.batch_size", 512, "resnet")]), cur)
    assert (d.decision, d.rule) == ("ask", "tier3.approval")


def test_bounds_step_and_operator_bounds(tmp_path: Path) -> None:
    g = _gate(tmp_path, Clock(), bounds={"vm.swappiness": (30, 180)})
    assert one(g, _a("vm.swappiness", 500)) == ("deny", "bounds")
    assert one(g, _a("vm.swappiness", 10)) == ("deny", "bounds.operator")
    assert one(g, _a("vm.swappiness", 150)) == ("deny", "step")  # ±40 at most
    assert one(g, _a("vm.swappiness", 60)) == ("deny", "unchanged")


def test_modes(tmp_path: Path) -> None:
    g = _gate(tmp_path, Clock(), mode="observe")
    assert one(g, _a("vm.swappiness", 40)) == ("deny", "mode.observe")
    g = _gate(tmp_path, Clock(), mode="recommend")
    [d] = g.review(Proposal(actions=[_a("vm.swappiness", 40)]), CUR)
    assert (d.decision, d.rule, d.would) == ("deny", "mode.recommend", "approve")
    # A person's manual change is not the agent's: recommend mode does not stop it.
    [d] = g.review(Proposal(actions=[_a("vm.swappiness", 40)]), CUR, origin="operator", approved_by="op")
    assert d.decision == "approve"


def test_a_ratio_and_its_bytes_twin_are_one_setting_in_a_review(tmp_path: Path) -> None:
    g = _gate(tmp_path, Clock(), consensus=1)
    both = Proposal(actions=[_a("vm.dirty_ratio", 10), _a("vm.dirty_bytes", 64 << 20)])
    first, second = g.review(both, {**CUR, "vm.dirty_bytes": 0}, cause=None)
    assert first.decision == "approve"
    assert (second.decision, second.rule) == ("deny", "one_per_knob")


def test_cooldown_rate_limit_and_one_change_per_cause(tmp_path: Path) -> None:
    clock = Clock()
    g = _gate(tmp_path, clock, rate_limit=2)
    a = _a("vm.swappiness", 40)
    assert one(g, a)[0] == "approve"
    g.applied(a, 60, "readahead_mismatch", None)
    cur2: dict[str, KnobValue] = {**CUR, "vm.swappiness": 40}
    [d] = g.review(Proposal(actions=[_a("vm.swappiness", 20)]), cur2, cause="x")
    assert d.rule == "cooldown"
    [d] = g.review(Proposal(actions=[_a("vm.swappiness", 20)]), cur2, cause="readahead_mismatch")
    assert d.rule == "one_per_cause"
    g.settled("readahead_mismatch")
    clock.t += 61
    t0 = {"vm.dirty_ratio": Tier.NONE}
    for pid, tier in t0.items():
        g._lookup = {**_lookup_with_tier0(), pid: dataclasses.replace(catalog.get(pid), tier=tier)}.get  # type: ignore[type-var]
    ds = g.review(Proposal(actions=[_a("vm.swappiness", 20), _a("vm.dirty_ratio", 15)]), cur2, cause=None)
    assert [d.decision for d in ds] == ["approve", "approve"]
    clock.t += 1
    g._last_change.clear()
    [d] = g.review(Proposal(actions=[_a("vm.swappiness", 30)]), {"vm.swappiness": 20})
    assert d.rule == "rate_limit"
    clock.t += 60
    [d] = g.review(Proposal(actions=[_a("vm.swappiness", 30)]), {"vm.swappiness": 20})
    assert d.decision == "approve"


def test_moving_back_within_the_window_freezes_the_knob(tmp_path: Path) -> None:
    clock = Clock()
    g = _gate(tmp_path, clock, cooldown_s=0)
    g.applied(_a("vm.swappiness", 40), 60, None, None)
    clock.t += 100
    [d] = g.review(Proposal(actions=[_a("vm.swappiness", 60)]), {"vm.swappiness": 40})
    assert d.rule == "flap"
    [d] = g.review(Proposal(actions=[_a("vm.swappiness", 30)]), {"vm.swappiness": 40})
    assert d.rule == "flap.frozen"
    clock.t += 601
    [d] = g.review(Proposal(actions=[_a("vm.swappiness", 60)]), {"vm.swappiness": 40})
    assert d.decision == "approve"


def test_quarantine_and_operator_takeover(tmp_path: Path) -> None:
    clock = Clock()
    g = _gate(tmp_path, clock)
    g.quarantine("vm.swappiness")
    assert one(g, _a("vm.swappiness", 40)) == ("deny", "quarantine")
    clock.t += 3601
    g.operator_took("vm.swappiness", "set to 45 by someone else")
    assert one(g, _a("vm.swappiness", 40)) == ("deny", "operator_owns")


def test_quarantines_recorded_earlier_hold_until_they_expire(tmp_path: Path) -> None:
    clock = Clock()
    g = _gate(tmp_path, clock, quarantines={"vm.swappiness": clock.t - 60, "vm.dirty_ratio": clock.t - 3601})
    assert one(g, _a("vm.swappiness", 40)) == ("deny", "quarantine")
    assert set(g.quarantined) == {"vm.swappiness"}
    clock.t += 3541
    assert one(g, _a("vm.swappiness", 40))[0] == "approve"


def test_a_lease_keeps_a_global_knob_against_lower_priority_jobs(tmp_path: Path) -> None:
    clock = Clock()
    g = _gate(tmp_path, clock, priorities={"big": 10, "small": 1, "urgent": 20}, cooldown_s=0)
    a = _a("vm.swappiness", 40)
    assert one(g, a, job="big")[0] == "approve"
    g.applied(a, 60, None, "big")
    cur = {"vm.swappiness": 40}
    [d] = g.review(Proposal(actions=[_a("vm.swappiness", 20)]), cur, job="small")
    assert d.rule == "lease" and "big" in d.reason
    # Another process (a manual apply for a job) sees the same lease.
    assert LeaseTable(tmp_path / "leases.json", clock=clock).holder("vm.swappiness").job == "big"  # type: ignore[union-attr]
    [d] = g.review(Proposal(actions=[_a("vm.swappiness", 20)]), cur, job="urgent")
    assert d.decision == "approve"
    clock.t += 601
    [d] = g.review(Proposal(actions=[_a("vm.swappiness", 20)]), cur, job="small")
    assert d.decision == "approve"


def test_job_knobs_need_no_lease(tmp_path: Path) -> None:
    leases = LeaseTable(clock=Clock())
    assert leases.acquire("x", "a", 5) is None
    assert leases.acquire("x", "b", 5) is not None
    assert leases.acquire("x", "b", 6) is None
    leases.release("x", "b")
    assert leases.holder("x") is None


def test_a_primitive_the_operator_switched_off_is_never_changed(tmp_path: Path) -> None:
    gate = _gate(tmp_path, Clock(), disabled=["vm.swappiness"])
    assert one(gate, _a("vm.swappiness", 30))[0:1] == ("deny",)
    [d] = gate.review(Proposal(actions=[_a("vm.swappiness", 30)]), CUR, cause="x")  # type: ignore[arg-type]
    assert d.rule == "disabled"
    # A person's action is refused too: the config, not the origin, says it is off.
    [d] = gate.review(
        Proposal(actions=[_a("vm.swappiness", 30)]),
        CUR,
        origin="operator",
        approved_by="ops",  # type: ignore[arg-type]
    )
    assert d.rule == "disabled"


def test_an_operator_tier_is_only_ever_stricter(tmp_path: Path) -> None:
    # vm.swappiness is tier 0 in this table: the operator's tier 2 makes it wait for a person.
    gate = _gate(tmp_path, Clock(), tiers={"vm.swappiness": 2})
    [d] = gate.review(Proposal(actions=[_a("vm.swappiness", 30)]), CUR, cause="x")  # type: ignore[arg-type]
    assert (d.decision, d.rule, d.tier) == ("ask", "tier2.approval", 2)
    # A tier below the primitive's own is never taken: vm.dirty_ratio stays tier 1 (consensus).
    gate = _gate(tmp_path, Clock(), tiers={"vm.dirty_ratio": 0})
    [d] = gate.review(Proposal(actions=[_a("vm.dirty_ratio", 10)]), CUR, cause="x")  # type: ignore[arg-type]
    assert d.rule == "tier1.consensus" and d.decision == "deny"


def test_a_primitive_may_have_its_own_cooldown(tmp_path: Path) -> None:
    clock = Clock()
    gate = _gate(tmp_path, clock, cooldown_s=60, cooldowns={"vm.swappiness": 600})
    assert one(gate, _a("vm.swappiness", 40), cause="a") == ("approve", "tier0")
    gate.applied(_a("vm.swappiness", 40), 60, "a", None, None, change_id=1)
    gate.settled("a")
    clock.t += 120  # past the host-wide cooldown, inside the primitive's own
    assert one(gate, _a("vm.swappiness", 30), cause="b") == ("deny", "cooldown")
    clock.t += 600
    assert one(gate, _a("vm.swappiness", 30), cause="b") == ("approve", "tier0")
