"""The control loop: collector tick → window → report → diagnose → proposer → gate → executor → effect.

Every `interval` a sample is added; every `review_every_s` the recent window is
summarised, diagnosed, and what the proposer suggests goes through the gate; an
approved action goes to the executor and is then watched by the effect tracker,
which keeps it or rolls it back. Each tick also looks for knobs the operator has
taken over (released, never written back), for eBPF faults and the agent's own
CPU use (safe mode), and for changes whose effect window has passed.

The loop owns no clock and no source: `clock` and `sample` are injected, so a test
or a replay drives it tick by tick with a simulated clock and gets the same
decisions every time.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agent.proposers.base import Proposer
from core.diagnosis import Diagnosis
from core.knob import KnobValue, knob_key
from core.proposal import Action, Proposal
from core.report import HealthReport
from core.sample import Sample, SourceStatus
from core.window import Window
from guardrails.audit import AuditLog, Trigger
from guardrails.effect import EffectConfig, EffectTracker, Judgement, pick_kpi
from guardrails.executor import ExecResult, Executor
from guardrails.filejournal import FileJournal
from guardrails.gate import Decision, Gate
from guardrails.pid import Pid, PidConfig
from guardrails.safemode import Level, SafeMode
from primitives import catalog
from primitives.base import TargetKind

EventKind = Literal[
    "diagnosis", "decision", "applied", "verdict", "rollback", "operator", "safe_mode", "info"
]


class PidLoop(BaseModel):
    """A continuous knob driven toward a setpoint of one metric."""

    model_config = ConfigDict(extra="forbid")

    primitive: str
    target: str | int | None = None
    metric: str = Field(description="the measured figure, e.g. trainer.<job>.data_wait_frac")
    pid: PidConfig


class LoopConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    interval_s: float = Field(default=1.0, gt=0)
    review_every_s: float = Field(default=5.0, gt=0, description="seconds between diagnoses")
    diagnosis_window_s: float = Field(default=30.0, gt=0, description="how much history a diagnosis reads")
    min_samples: int = Field(default=5, ge=1, description="before the first diagnosis")
    job: str | None = Field(default=None, description="the job whose KPI judges changes (default: any)")
    keep_on_exit: bool = Field(default=False, description="leave changes in place at shutdown")
    effect: EffectConfig = Field(default_factory=EffectConfig)
    pid: list[PidLoop] = Field(default_factory=list)


class LoopEvent(BaseModel):
    model_config = ConfigDict(extra="forbid")

    t: float
    kind: EventKind
    text: str
    data: dict[str, Any] = Field(default_factory=dict)


class ControlLoop:
    def __init__(
        self,
        config: LoopConfig,
        *,
        sample: Callable[[], Sample],
        report: Callable[[Window], HealthReport],
        diagnose: Callable[[Window, HealthReport], Diagnosis],
        proposer: Proposer,
        gate: Gate,
        executor: Executor,
        audit: AuditLog,
        safe: SafeMode,
        clock: Callable[[], float] = time.time,
        statuses: Callable[[], dict[str, SourceStatus]] | None = None,
        on_event: Callable[[LoopEvent], None] | None = None,
    ) -> None:
        self.config = config
        self._sample, self._report, self._diagnose = sample, report, diagnose
        self.proposer, self.gate, self.executor, self.audit, self.safe = proposer, gate, executor, audit, safe
        self.tracker = EffectTracker(config.effect)
        self._clock = clock
        self._statuses = statuses
        self._on_event = on_event
        horizon = max(600.0, 3 * (config.effect.window_s + config.effect.settle_s), config.diagnosis_window_s)
        self.window = Window(horizon_s=horizon)
        self.events: deque[LoopEvent] = deque(maxlen=200)
        self.verdicts: deque[Judgement] = deque(maxlen=20)
        self.last_diagnosis: Diagnosis | None = None
        self.last_report: HealthReport | None = None
        self.pending: dict[str, Decision] = {}  # approval id -> the decision that asked
        self._last_review: float | None = None
        self._bpf_live: bool | None = None
        self._restored_for_safe_mode = False
        self._causes: dict[int, str | None] = {}  # change id -> cause it was made for
        self._pids: dict[str, tuple[Pid, float]] = {}
        self.stopping = threading.Event()

    # -- events ----------------------------------------------------------------------

    def _event(self, kind: EventKind, text: str, **data: Any) -> None:
        ev = LoopEvent(t=self._clock(), kind=kind, text=text, data=data)
        self.events.append(ev)
        if self._on_event is not None:
            self._on_event(ev)

    # -- one tick --------------------------------------------------------------------

    def step(self) -> None:
        """Collect one sample and do whatever is due."""
        self.window.add(self._sample())
        now = self._clock()
        self._watch_sources()
        self.safe.check_cpu()
        if self.safe.level >= Level.OBSERVE and not self._restored_for_safe_mode:
            self._restored_for_safe_mode = True
            self._restore_all("safe_mode", f"safe mode: {self.safe.reason}")
        self._operator_first()
        # A change is judged from when it acts: a trainer's next epoch, loaders reopening files.
        for tr in self.tracker.waiting():
            if self.executor.in_force(tr.change_id):
                self.tracker.took_effect(tr.change_id, now)
                waited = now - tr.t_requested
                self._event(
                    "info",
                    f"{tr.action.knob}: in force after {waited:.0f} s; judged from now",
                    change_id=tr.change_id,
                    in_force_after_s=waited,
                )
        for j in self.tracker.due(self.window, now):
            self._judge(j)
        due = self._last_review is None or now - self._last_review >= self.config.review_every_s - 1e-9
        if due and len(self.window) >= self.config.min_samples:
            self._last_review = now
            self.review()

    def _watch_sources(self) -> None:
        if self._statuses is None:
            return
        st = self._statuses().get("bpf")
        if st is None:
            return
        if self._bpf_live and not st.live:
            self.safe.bpf_fault(st.reason or "the eBPF source stopped")
            self._event("safe_mode", f"eBPF fault: {st.reason}")
        self._bpf_live = st.live

    def _operator_first(self) -> None:
        """A managed knob someone else changed stops being managed; it is never written back."""
        for change, foreign in self.executor.drifted():
            knob = change.knob
            what = ", ".join(f"{w.loc}={w.value}" for w in foreign)
            who = "someone other than this agent"
            why = f"changed by {who} at {time.strftime('%H:%M:%S', time.localtime(self._clock()))}: {what}"
            res = self.executor.release(change.id, why + "; released, not written back")
            self.gate.operator_took(knob, why)
            self.tracker.forget(change.id)
            self.gate.settled(self._causes.pop(change.id, None))
            self.audit.write("operator", knob=knob, reason=res.reason, execution=res.model_dump(mode="json"))
            self._event("operator", f"{knob} {why}; no longer managed")

    def _judge(self, j: Judgement) -> None:
        c = j.comparison
        self.verdicts.append(j)
        self.gate.settled(j.cause)
        self._causes.pop(j.change_id, None)
        rollback: ExecResult | None = None
        if not j.keep:
            rollback = self.executor.revert(j.change_id)
            if rollback.status == "reverted":
                self.gate.reverted(
                    j.action.primitive, j.action.target, j.action.value, rollback.after or "", j.change_id
                )
        if j.verdict == "harmful":
            self.gate.quarantine(j.action.primitive)
            # Durable: a restarted agent (or `idletune apply`) keeps the primitive quarantined.
            self.executor.journal.quarantined(j.change_id, j.action.primitive)
        self.audit.write(
            "verdict",
            knob=j.action.knob,
            proposal=j.action.model_dump(mode="json"),
            kpi=j.kpi,
            kpi_before=c.before,
            kpi_after=c.after,
            verdict=j.verdict,
            reason=c.why,
            rollback=rollback.model_dump(mode="json") if rollback is not None else None,
            in_force_after_s=j.in_force_after_s,
        )
        ratio = f" ({c.after / c.before:.2f}x)" if c.before and c.after is not None else ""
        kept = "kept" if j.keep else f"rolled back ({rollback.status if rollback else '?'})"
        waited = j.in_force_after_s
        late = f" (in force after {waited:.0f} s)" if waited else ""
        self._event(
            "verdict", f"{j.action.knob}: {j.verdict}{ratio}{late}, {kept}: {c.why}", verdict=j.verdict
        )

    # -- review ----------------------------------------------------------------------

    def recent(self) -> Window:
        end = self.window.end or 0.0
        return Window(
            horizon_s=self.config.diagnosis_window_s + 1e-6,
            samples=[s for s in self.window if s.t >= end - self.config.diagnosis_window_s],
        )

    def review(self) -> list[Decision]:
        recent = self.recent()
        report = self._report(recent)
        diagnosis = self._diagnose(recent, report)
        self.last_report, self.last_diagnosis = report, diagnosis
        top = diagnosis.top
        self._event("diagnosis", f"{top.category.value} ({top.confidence:.2f}): {top.summary}")
        if self.gate.mode == "observe":
            return []
        proposal = self.proposer.propose(report, diagnosis)
        proposal, pid_knobs = self._with_pid(proposal, report)
        cause = top.category.value if top.category.value != "none" else None
        # From the review to the journal's record no other process moves a knob; what others
        # moved before counts for the cooldown, the rate limit and the flap rule.
        with self.executor.writing():
            self._catch_up()
            decisions = self.gate.review(
                proposal,
                self._current,
                cause=cause,
                job=self.config.job,
                # A PID move serves its setpoint, one at a time per knob, beside the diagnosed cause.
                cause_of=lambda a: f"pid:{a.knob}" if a.knob in pid_knobs else cause,
            )
            for d in decisions:
                self._act(d, diagnosis)
        return decisions

    def _catch_up(self) -> None:
        journal = self.executor.journal
        if isinstance(journal, FileJournal):
            self.gate.catch_up(journal.moves())

    def _current(self, action: Action) -> KnobValue | None:
        p = catalog.get(action.primitive)
        if p is None:
            return None
        try:
            if not p.available(self.executor.host, action.target).ok:
                return None
            return p.read(self.executor.host, action.target)
        except (OSError, LookupError, ValueError):
            return None

    def _act(self, d: Decision, diagnosis: Diagnosis, trigger: Trigger = "diagnosis") -> ExecResult | None:
        a = d.action
        top = diagnosis.top
        diag = {"category": top.category.value, "confidence": top.confidence, "summary": top.summary}
        fields: dict[str, Any] = {
            "knob": a.knob,
            "diagnosis": diag,
            "proposal": a.model_dump(mode="json"),
            "decision": d.decision,
            "rule": d.rule,
        }
        if d.decision == "ask" and d.approval_id is not None:
            if d.approval_id not in self.pending:
                self.pending[d.approval_id] = d
                self.audit.write(trigger, reason=d.reason, **fields)
                self._event("decision", f"{a.knob} -> {a.value} waits: {d.reason}", rule=d.rule)
            return None
        if d.decision != "approve":
            self.audit.write(trigger, reason=d.reason, **fields)
            self._event("decision", f"{a.knob} -> {a.value} not applied ({d.rule}): {d.reason}", rule=d.rule)
            return None
        if d.approval_id is not None:
            self.pending.pop(d.approval_id, None)
        res = self.executor.apply(a)
        self.audit.write(trigger, reason=res.reason, execution=res.model_dump(mode="json"), **fields)
        if res.status not in ("applied", "pending") or res.change_id is None:
            self._event("decision", f"{a.knob} -> {a.value}: {res.status}: {res.reason}", rule=d.rule)
            return res
        self.gate.applied(a, res.before, d.cause, self.config.job, d.approval_id, change_id=res.change_id)
        self._causes[res.change_id] = d.cause
        p = catalog.get(a.primitive)
        device = str(a.target) if p is not None and p.target is TargetKind.BLOCK_DEVICE else None
        kpi = pick_kpi(self.window.names(), self.config.job, device)
        now = self._clock()
        if kpi is not None:
            in_force = self.executor.in_force(res.change_id) is True
            self.tracker.start(res.change_id, a, d.cause, kpi, self.window, now, in_force=in_force)
            judged = f"judged on {kpi.label} in {self.config.effect.window_s:g} s"
            if not in_force:
                deadline = self.config.effect.in_force_deadline_s
                judged += f" once in force (rolled back if not within {deadline:g} s)"
        else:
            self.gate.settled(d.cause)
            judged = "no KPI to judge it by: kept"
        self._event(
            "applied",
            f"{a.knob}: {res.before} -> {res.after} ({d.rule}); {judged}",
            change_id=res.change_id,
            notes=res.notes,
        )
        return res

    def inject(self, action: Action, *, approved_by: str) -> Decision:
        """A person's action through this loop's gate, executor and effect tracker (tests, demos)."""
        diagnosis = self.last_diagnosis or self._diagnose(self.recent(), self._report(self.recent()))
        with self.executor.writing():
            self._catch_up()
            [d] = self.gate.review(
                Proposal(actions=[action]),
                self._current,
                job=self.config.job,
                origin="operator",
                approved_by=approved_by,
            )
            self._act(d, diagnosis, trigger="manual")
        return d

    def _with_pid(self, proposal: Proposal, report: HealthReport) -> tuple[Proposal, set[str]]:
        """PID outputs for configured continuous knobs the proposer left alone, and their knobs."""
        if not self.config.pid:
            return proposal, set()
        actions = list(proposal.actions)
        knobs: set[str] = set()
        now = self._clock()
        for loop in self.config.pid:
            knob = knob_key(loop.primitive, loop.target)
            measured = report.metrics.get(loop.metric)
            cur = self._current(Action(primitive=loop.primitive, target=loop.target, value=0, reason="read"))
            if measured is None or not isinstance(cur, int | float) or any(a.knob == knob for a in actions):
                continue
            pid, last = self._pids.get(knob, (Pid(loop.pid, float(cur)), now))
            pid.output = float(cur)  # the knob may have moved (gate refusal, rollback, operator)
            value = pid.update(measured, max(now - last, self.config.interval_s))
            self._pids[knob] = (pid, now)
            if value != cur:
                reason = (
                    f"PID on {loop.metric}={measured:.3g} toward {loop.pid.setpoint:g}: {cur} -> {value:g}"
                )
                actions.append(
                    Action(primitive=loop.primitive, target=loop.target, value=int(value), reason=reason)
                )
                knobs.add(knob)
        return (Proposal(actions=actions) if actions else proposal), knobs

    def snapshot(self) -> dict[str, Any]:
        """What `idletune status` shows of a running agent: mode, safe mode, what it holds and why."""
        d = self.last_diagnosis
        return {
            "mode": self.gate.mode,
            "safe_mode": self.safe.level.name.lower(),
            "safe_mode_reason": self.safe.reason,
            "diagnosis": None if d is None else f"{d.top.category.value} ({d.top.confidence:.2f})",
            "managed": [
                {
                    "id": c.id,
                    "knob": c.knob,
                    "value": c.value,
                    "before": c.before,
                }
                for c in self.executor.managed
            ],
            "judging": [tr.action.knob for tr in self.tracker.tracked.values()],
            # Of those, the changes not yet in force (a loader's next epoch, files not yet reopened).
            "waiting": [tr.action.knob for tr in self.tracker.waiting()],
            "quarantined": sorted(self.gate.quarantined),
            "frozen": sorted(self.gate.frozen),
            "operator_knobs": dict(self.gate.operator_knobs),
            "verdicts": [
                {
                    "knob": j.action.knob,
                    "verdict": j.verdict,
                    "kpi": j.kpi,
                    "before": j.comparison.before,
                    "after": j.comparison.after,
                    "kept": j.keep,
                }
                for j in self.verdicts
            ],
        }

    # -- running and stopping --------------------------------------------------------

    def run(
        self,
        duration_s: float | None,
        sleep: Callable[[float], object] | None = None,
        after_step: Callable[[], object] | None = None,
    ) -> None:
        """Tick every interval until `duration_s` passes or stop() is called."""
        start = self._clock()
        k = 0
        while not self.stopping.is_set():
            if duration_s is not None and self._clock() - start >= duration_s:
                break
            self.step()
            if after_step is not None:
                after_step()
            k += 1
            wait = start + k * self.config.interval_s - self._clock()
            if sleep is not None:
                sleep(max(0.0, wait))
            elif self.stopping.wait(max(0.0, wait)):
                break

    def stop(self) -> None:
        self.stopping.set()

    def _restore_all(self, trigger: Trigger, why: str) -> list[ExecResult]:
        results = self.executor.revert_all()
        for res in results:
            self.audit.write(trigger, knob=res.primitive, reason=why, rollback=res.model_dump(mode="json"))
            self._event("rollback", f"{res.knob}: {res.status}: {res.reason}")
        self.tracker.tracked.clear()
        for cause in list(self.gate.busy):
            self.gate.settled(cause)
        return results

    def restore(self, change_id: int, trigger: Trigger, why: str) -> ExecResult:
        """Put one held change's originals back (the operator's config no longer allows it)."""
        res = self.executor.revert(change_id)
        self.audit.write(trigger, knob=res.primitive, reason=why, rollback=res.model_dump(mode="json"))
        self._event("rollback", f"{res.knob}: {res.status}: {why}")
        self.tracker.forget(change_id)
        self.gate.settled(self._causes.pop(change_id, None))
        return res

    def shutdown(self) -> list[ExecResult]:
        """Restore every change this loop holds, unless configured to keep them."""
        if self.config.keep_on_exit:
            for c in self.executor.managed:
                if isinstance(self.executor.journal, FileJournal):
                    # Without an owner no later start takes it for a crash's leftover.
                    self.executor.journal.disown(c)
                self._event("info", f"kept on exit: {c.knob} = {c.value} (change {c.id})")
            return []
        return self._restore_all("shutdown", "agent stopping: originals restored")
