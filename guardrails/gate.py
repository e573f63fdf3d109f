"""The tiered safety gate: what happens to each proposed action, and the rule that decided it.

Tier 0 applies at once; tier 1 after `consensus` consecutive reviews proposed the
same move for the same cause; tier 2 waits for a person's approval; tier 3 needs
approval and the trainer hook's cooperation. Before the tiers, every action must
pass: the mode, primitives the operator switched off, the catalogue's bounds (and the
operator's narrower ones; the operator may also raise a primitive's tier, never lower it), knobs
the operator took over, quarantine, the flap freeze, one step at most, one change
at a time per cause, the primitive's cooldown, the host-wide rate limit and the
knob's lease. The first rule that says no decides, and is named in the Decision.

Restores are never gated: putting an original value back can only leave the host
as the agent found it.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from core.knob import KnobValue, knob_key
from core.proposal import Action, Proposal
from guardrails.approvals import ApprovalStore
from guardrails.filejournal import Move
from guardrails.leases import LeaseTable
from primitives import catalog
from primitives.base import Primitive, TargetKind
from primitives.schema import action_problem

Mode = Literal["observe", "recommend", "auto"]
Ruling = Literal["approve", "ask", "deny"]
Origin = Literal["agent", "operator"]


class GateConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    mode: Mode = "recommend"
    consensus: int = Field(default=3, ge=1, description="agreeing reviews before a tier-1 change")
    cooldown_s: float = Field(default=60.0, ge=0, description="per primitive, between changes")
    rate_limit: int = Field(default=5, ge=1, description="changes per rate window, host-wide")
    rate_window_s: float = Field(default=60.0, gt=0)
    flap_window_s: float = Field(default=600.0, ge=0, description="A->B->A inside it freezes the knob")
    quarantine_s: float = Field(default=3600.0, ge=0, description="after a harmful verdict")
    bounds: dict[str, tuple[float, float]] = Field(
        default_factory=dict, description="operator's bounds per primitive id, inside the catalogue's"
    )
    priorities: dict[str, int] = Field(default_factory=dict, description="job -> lease priority")
    disabled: frozenset[str] = Field(
        default_factory=frozenset, description="primitive ids the operator switched off"
    )
    cooldowns: dict[str, float] = Field(
        default_factory=dict, description="operator's cooldown per primitive id, instead of cooldown_s"
    )
    tiers: dict[str, int] = Field(
        default_factory=dict, description="operator's tier per primitive id; only ever stricter than its own"
    )


class Decision(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: Action
    decision: Ruling
    rule: str = Field(description="the rule that decided, e.g. tier0, cooldown, flap")
    reason: str
    tier: int | None = None
    cause: str | None = None
    approval_id: str | None = None
    would: Ruling | None = Field(default=None, description="in recommend mode: what auto would do")
    current: KnobValue | None = None


@dataclass
class _Streak:
    cause: str | None
    value: str
    count: int
    review: int


def _num(v: KnobValue | None) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int | float):
        return float(v)
    try:
        return float(v)
    except ValueError:
        return None


def _same(a: KnobValue | None, b: KnobValue | None) -> bool:
    na, nb = _num(a), _num(b)
    if na is not None and nb is not None:
        return na == nb
    return str(a) == str(b)


def direction(cur: KnobValue | None, value: KnobValue) -> str:
    """`up`/`down` for a numeric move, else the value asked for."""
    nc, nv = _num(cur), _num(value)
    if nc is None or nv is None or nc == nv:
        return f"={value}"
    return "up" if nv > nc else "down"


class Gate:
    def __init__(
        self,
        config: GateConfig | None = None,
        *,
        clock: Callable[[], float] = time.time,
        approvals: ApprovalStore | None = None,
        leases: LeaseTable | None = None,
        lookup: Callable[[str], Primitive | None] = catalog.get,
        cooperation: Callable[[Action], str | None] | None = None,
        history: Iterable[Move] = (),
        quarantines: Mapping[str, float] | None = None,
    ) -> None:
        self.config = config or GateConfig()
        self._clock = clock
        self.approvals = approvals if approvals is not None else ApprovalStore(clock=clock)
        self.leases = leases if leases is not None else LeaseTable(clock=clock)
        self._lookup = lookup
        # Why tier 3 cannot run without the hook: the default says so for every action.
        self._cooperation = cooperation or (lambda a: "no trainer hook is attached to cooperate")
        self.moves: deque[Move] = deque(sorted(history, key=lambda m: m.t))
        self._approved: deque[float] = deque(m.t for m in self.moves if m.kind == "apply")
        self._last_change: dict[str, float] = {}
        for m in self.moves:
            if m.kind == "revert":
                continue
            self._last_change[m.primitive] = max(self._last_change.get(m.primitive, m.t), m.t)
        self.quarantined: dict[str, float] = {}  # primitive -> until
        for primitive, since in (quarantines or {}).items():  # recorded by this or an earlier process
            until = since + self.config.quarantine_s
            if until > self._clock():
                self.quarantined[primitive] = until
        self.frozen: dict[str, float] = {}  # knob -> until
        self.operator_knobs: dict[str, str] = {}  # knob -> what the operator did
        self.busy: dict[str, str] = {}  # cause -> knob whose effect is being judged
        self._streaks: dict[str, _Streak] = {}
        self._reviews = 0

    @property
    def mode(self) -> Mode:
        return self.config.mode

    # -- review ------------------------------------------------------------------------

    def review(
        self,
        proposal: Proposal,
        current: Callable[[Action], KnobValue | None] | Mapping[str, KnobValue],
        *,
        cause: str | None = None,
        job: str | None = None,
        origin: Origin = "agent",
        approved_by: str | None = None,
        cause_of: Callable[[Action], str | None] | None = None,
    ) -> list[Decision]:
        """Decide every action of one proposal. Call once per diagnosis (a no-op too), which
        is what makes tier-1 streaks consecutive. `approved_by`: the person who asked for it
        (a manual apply), which stands for the approval of tier 2 and 3. `cause_of` names
        the cause of an action the proposal made for another reason (a PID loop)."""
        now = self._clock()
        self._reviews += 1
        self._expire(now)
        read = current if callable(current) else (lambda a, m=current: m.get(a.knob))
        causes = [cause_of(a) if cause_of is not None else cause for a in proposal.actions]
        currents = [read(a) for a in proposal.actions]
        self._count_streaks(proposal.actions, causes, currents)
        out: list[Decision] = []
        taken_causes: set[str] = set()
        taken_settings: set[str] = set()
        for action, cause, cur in zip(proposal.actions, causes, currents, strict=True):
            d = self._decide(action, cur, cause, job, origin, approved_by, now)
            if d.decision == "approve" and self._setting(action) in taken_settings:
                d = self._no(d, "one_per_knob", f"{action.knob} is already being changed in this review")
            if d.decision == "approve" and cause is not None and cause in taken_causes:
                d = self._no(d, "one_per_cause", f"another change for {cause} goes first")
            if d.decision in ("approve", "ask") and self.mode == "recommend" and origin == "agent":
                d = d.model_copy(
                    update={
                        "would": d.decision,
                        "decision": "deny",
                        "rule": "mode.recommend",
                        "reason": f"recommend mode applies nothing; in auto: {d.rule}: {d.reason}",
                    }
                )
            if d.decision == "approve":
                self._approved.append(now)
                self._last_change[action.primitive] = now
                taken_settings.add(self._setting(action))
                if cause is not None:
                    taken_causes.add(cause)
                self._streaks.pop(action.knob, None)
            out.append(d)
        return out

    def switched_off(self, primitive: str) -> str | None:
        """Why the operator's config forbids any change of `primitive`, or None."""
        if primitive in self.config.disabled:
            return f"{primitive} is switched off in the operator's config"
        return None

    def outside_bounds(self, primitive: str, value: KnobValue) -> str | None:
        """Why `value` lies outside the operator's bounds for `primitive`, or None."""
        lim = self.config.bounds.get(primitive)
        nv = _num(value)
        if lim is not None and (nv is None or not lim[0] <= nv <= lim[1]):
            return f"{value} is outside the operator's bounds {lim[0]:g}..{lim[1]:g}"
        return None

    def tier_of(self, p: Primitive) -> int:
        """The primitive's tier, or the operator's when stricter (a lower one is never taken)."""
        return max(int(p.tier), self.config.tiers.get(p.id, 0))

    def _no(self, d: Decision, rule: str, reason: str) -> Decision:
        return d.model_copy(update={"decision": "deny", "rule": rule, "reason": reason})

    def _setting(self, action: Action) -> str:
        """What the action changes on the host: a ratio and its bytes twin are one setting."""
        p = self._lookup(action.primitive)
        return p.setting(action.target) if p is not None else action.knob

    def _decide(
        self,
        action: Action,
        cur: KnobValue | None,
        cause: str | None,
        job: str | None,
        origin: Origin,
        approved_by: str | None,
        now: float,
    ) -> Decision:
        p = self._lookup(action.primitive)
        tier = self.tier_of(p) if p is not None else None
        base = Decision(
            action=action, decision="deny", rule="", reason="", tier=tier, cause=cause, current=cur
        )

        def deny(rule: str, reason: str) -> Decision:
            return self._no(base, rule, reason)

        knob = action.knob
        if origin == "agent" and self.mode == "observe":
            return deny("mode.observe", "observe mode changes nothing")
        if p is None:
            return deny("catalogue", f"{action.primitive} is not in the catalogue")
        off = self.switched_off(p.id)
        if off is not None:
            return deny("disabled", off)
        problem = action_problem(p, action.model_dump(exclude_none=True))
        if problem is not None:
            return deny("bounds", problem)
        value = p.value.normalize(action.value)
        nv = _num(value)
        outside = self.outside_bounds(p.id, value)
        if outside is not None:
            return deny("bounds.operator", outside)
        if origin == "agent" and knob in self.operator_knobs:
            return deny(
                "operator_owns", f"{knob} was taken over by the operator: {self.operator_knobs[knob]}"
            )
        if p.id in self.quarantined:
            return deny("quarantine", f"{p.id} is quarantined after a harmful change")
        if knob in self.frozen:
            return deny("flap.frozen", f"{knob} is frozen after moving back and forth")
        if cur is None:
            return deny("current_unknown", f"the current value of {knob} cannot be read")
        if _same(cur, value):
            return deny("unchanged", f"{knob} is already {value}")
        nc = _num(cur)
        if p.step is not None and nv is not None and nc is not None and not p.step.allows(nc, nv):
            return deny("step", f"{cur} -> {value} is a larger step than {p.step.describe()}")
        back = self._returns(knob, cur, value, now)
        if back is not None:
            self.frozen[knob] = now + self.config.flap_window_s
            return deny("flap", f"{knob} moved {value} -> {cur} at {back.t:.0f}; moving back would flap")
        if cause is not None and cause in self.busy:
            return deny(
                "one_per_cause", f"the change to {self.busy[cause]} for {cause} is still being judged"
            )
        last = self._last_change.get(p.id)
        cooldown = self.config.cooldowns.get(p.id, self.config.cooldown_s)
        if last is not None and now - last < cooldown:
            wait = cooldown - (now - last)
            return deny("cooldown", f"{p.id} changed {now - last:.0f} s ago; cooldown {wait:.0f} s more")
        recent = sum(1 for t in self._approved if now - t < self.config.rate_window_s)
        if recent >= self.config.rate_limit:
            return deny(
                "rate_limit",
                f"{recent} changes in the last {self.config.rate_window_s:g} s "
                f"(limit {self.config.rate_limit})",
            )
        if p.target is not TargetKind.JOB and job is not None:
            held = self.leases.conflict(knob, job, self.config.priorities.get(job, 0))
            if held is not None:
                return deny("lease", f"job {held.job} (priority {held.priority}) holds the lease on {knob}")
        return self._tier(base, action, p, cause, approved_by)

    def _tier(
        self, base: Decision, action: Action, p: Primitive, cause: str | None, approved_by: str | None
    ) -> Decision:
        tier = self.tier_of(p)
        if tier == 0:
            return base.model_copy(update={"decision": "approve", "rule": "tier0", "reason": "no-risk knob"})
        if tier == 1:
            if approved_by is not None:
                return base.model_copy(
                    update={
                        "decision": "approve",
                        "rule": "tier1.person",
                        "reason": f"asked by {approved_by}",
                    }
                )
            s = self._streaks.get(action.knob)
            n = s.count if s is not None else 0
            if n >= self.config.consensus:
                return base.model_copy(
                    update={
                        "decision": "approve",
                        "rule": "tier1.consensus",
                        "reason": f"{n} consecutive diagnoses agree",
                    }
                )
            return self._no(base, "tier1.consensus", f"{n} of {self.config.consensus} diagnoses agree so far")
        if tier == 3:
            why = self._cooperation(action)
            if why is not None:
                return self._no(base, "tier3.cooperation", why)
        if approved_by is not None:
            return base.model_copy(
                update={
                    "decision": "approve",
                    "rule": f"tier{tier}.person",
                    "reason": f"asked by {approved_by}",
                }
            )
        answer = self.approvals.answer_for(action)
        if answer is not None and answer.status == "approved":
            return base.model_copy(
                update={
                    "decision": "approve",
                    "rule": f"tier{tier}.approved",
                    "reason": f"approved by {answer.decided_by} ({answer.id})",
                    "approval_id": answer.id,
                }
            )
        if answer is not None and answer.status == "rejected":
            return self._no(base, f"tier{tier}.rejected", f"rejected by {answer.decided_by} ({answer.id})")
        req = self.approvals.request(action, tier, cause)
        return base.model_copy(
            update={
                "decision": "ask",
                "rule": f"tier{tier}.approval",
                "reason": f"needs a person's approval: idletune approve {req.id}",
                "approval_id": req.id,
            }
        )

    # -- what happened after the decision ---------------------------------------------------

    def applied(
        self,
        action: Action,
        old: KnobValue | None,
        cause: str | None,
        job: str | None,
        approval_id: str | None = None,
        change_id: int | None = None,
    ) -> None:
        """The executor made the change: record the move, the cause's busy slot, the lease;
        an approval is used up."""
        now = self._clock()
        if approval_id is not None:
            self.approvals.use(approval_id)
        p = self._lookup(action.primitive)
        self.moves.append(
            Move(
                t=now,
                knob=action.knob,
                primitive=action.primitive,
                old=old,
                new=action.value,
                change_id=change_id,
            )
        )
        self._last_change[action.primitive] = now
        if cause is not None:
            self.busy[cause] = action.knob
        if p is not None and p.target is not TargetKind.JOB and job is not None:
            self.leases.acquire(action.knob, job, self.config.priorities.get(job, 0))

    def reverted(
        self,
        primitive: str,
        target: str | int | None,
        old: KnobValue,
        new: KnobValue,
        change_id: int | None = None,
    ) -> None:
        self.moves.append(
            Move(
                t=self._clock(),
                knob=knob_key(primitive, target),
                primitive=primitive,
                old=old,
                new=new,
                kind="revert",
                change_id=change_id,
            )
        )

    def catch_up(self, moves: Iterable[Move]) -> None:
        """Moves other processes made since this gate was built (read from the journal under its
        writer lock): the cooldown, the rate limit and the flap rule count them too."""
        seen = {(m.change_id, m.kind) for m in self.moves if m.change_id is not None}
        now = self._clock()
        horizon = max(self.config.flap_window_s, self.config.cooldown_s, self.config.rate_window_s)
        new = [
            m
            for m in moves
            if m.change_id is not None and (m.change_id, m.kind) not in seen and now - m.t <= horizon
        ]
        if not new:
            return
        self.moves = deque(sorted([*self.moves, *new], key=lambda m: m.t))
        applies = [m.t for m in new if m.kind == "apply"]
        self._approved = deque(sorted([*self._approved, *applies]))
        for m in new:
            if m.kind == "apply":
                self._last_change[m.primitive] = max(self._last_change.get(m.primitive, m.t), m.t)

    def settled(self, cause: str | None) -> None:
        """The effect of the cause's change is judged: the next change for it may come."""
        if cause is not None:
            self.busy.pop(cause, None)

    def quarantine(self, primitive: str) -> None:
        self.quarantined[primitive] = self._clock() + self.config.quarantine_s

    def operator_took(self, knob: str, what: str) -> None:
        self.operator_knobs[knob] = what

    # -- internals ------------------------------------------------------------------------------

    def _count_streaks(
        self, actions: list[Action], causes: list[str | None], currents: list[KnobValue | None]
    ) -> None:
        """Agreement is the same cause moving the knob the same way (up, down, or to the same
        choice): a controller's goal may shift a little from one review to the next."""
        seen: set[str] = set()
        for a, cause, cur in zip(actions, causes, currents, strict=True):
            s = self._streaks.get(a.knob)
            way = direction(cur, a.value)
            same = s is not None and s.cause == cause and s.value == way and s.review == self._reviews - 1
            if s is not None and same:
                s.count += 1
                s.review = self._reviews
            else:
                self._streaks[a.knob] = _Streak(cause=cause, value=way, count=1, review=self._reviews)
            seen.add(a.knob)
        for k in [k for k in self._streaks if k not in seen]:
            del self._streaks[k]

    def _returns(self, knob: str, cur: KnobValue, value: KnobValue, now: float) -> Move | None:
        """A move of this knob from `value` to `cur` inside the flap window: going back would flap."""
        for m in reversed(self.moves):
            if now - m.t > self.config.flap_window_s:
                break
            if m.knob == knob and _same(m.old, value) and _same(m.new, cur):
                return m
        return None

    def _expire(self, now: float) -> None:
        for table in (self.quarantined, self.frozen):
            for k in [k for k, until in table.items() if until <= now]:
                del table[k]
        while self._approved and now - self._approved[0] >= max(self.config.rate_window_s, 0):
            self._approved.popleft()
        horizon = max(self.config.flap_window_s, self.config.cooldown_s)
        while self.moves and now - self.moves[0].t > horizon:
            self.moves.popleft()
