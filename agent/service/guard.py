"""What the API may change, and only through the guardrails: approvals, rollback, the records.

Approving or rejecting records a person's answer in the approval store, which the
agent's gate reads at its next review; the API never applies an action itself.
Rollback restores originals from the write-ahead journal through the executor, and
says so in the audit log, exactly as `idletune rollback` does.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agent.wiring import open_guardrails
from guardrails.approvals import Approval
from guardrails.audit import AuditRecord
from guardrails.executor import ExecResult, Executor
from guardrails.filejournal import Entry, this_process
from guardrails.recovery import rollback_all, rollback_one
from primitives.host import Host

HostOpener = Callable[[], contextlib.AbstractContextManager[Host]]


class ChangeView(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: int
    knob: str
    primitive: str
    target: str | int | None
    value: Any
    before: Any = None
    reason: str
    state: str
    t_applied: float | None = None
    t_closed: float | None = None


class ActionsDoc(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pending: list[Approval] = Field(description="changes waiting for a person's approval")
    answered: list[Approval] = Field(description="approved, rejected, used or expired requests")
    applied: list[ChangeView] = Field(description="changes in force, from the journal")
    rolled_back: list[ChangeView] = Field(description="changes whose originals were put back")
    closed: list[ChangeView] = Field(description="changes released to the operator or failed")


class TimelineEvent(BaseModel):
    model_config = ConfigDict(extra="forbid")

    t: float
    kind: str = Field(description="an audit trigger, or approval.requested / approval.<answer>")
    knob: str | None = None
    summary: str


def _view(e: Entry) -> ChangeView:
    c = e.change
    return ChangeView(
        id=c.id,
        knob=c.knob,
        primitive=c.primitive,
        target=c.target,
        value=c.value,
        before=c.before,
        reason=c.reason,
        state=c.state,
        t_applied=e.t_applied,
        t_closed=e.t_closed,
    )


def _summary(r: AuditRecord) -> str:
    parts = [p for p in (r.decision, r.rule) if p]
    ex = r.execution or r.rollback or {}
    if ex.get("status"):
        parts.append(str(ex["status"]))
    if r.verdict:
        parts.append(f"verdict {r.verdict}")
    if r.reason:
        parts.append(r.reason)
    return ": ".join(parts) if parts else r.trigger


class Guard:
    def __init__(self, state_dir: Path, open_host: HostOpener, audit_log: Path | None = None) -> None:
        self.dir = state_dir
        guard = open_guardrails(state_dir, owner=this_process(), audit_log=audit_log)
        self.approvals, self.journal, self.audit = guard.approvals, guard.journal, guard.audit
        self._open_host = open_host
        # One rollback at a time: two would race on the same journal entries.
        self._lock = threading.Lock()

    def actions(self) -> ActionsDoc:
        approvals = self.approvals.all()
        entries = list(self.journal.entries().values())
        return ActionsDoc(
            pending=[a for a in approvals if a.status == "pending"],
            answered=[a for a in approvals if a.status != "pending"],
            applied=[_view(e) for e in entries if e.change.state == "applied"],
            rolled_back=[_view(e) for e in entries if e.change.state == "reverted"],
            closed=[_view(e) for e in entries if e.change.state in ("released", "failed")],
        )

    def decide(self, approval_id: str, approve: bool, by: str) -> tuple[Approval | None, str]:
        return self.approvals.decide(approval_id, approve, by)

    def rollback(self, change_id: int | None) -> list[ExecResult] | None:
        """Restore one open change, or all when `change_id` is None; None when that change is not open."""
        with self._lock, self._open_host() as host:
            ex = Executor(host, journal=self.journal)
            if change_id is None:
                return rollback_all(ex, self.journal, self.audit)
            one = rollback_one(ex, self.journal, change_id, self.audit)
            return [one] if one is not None else None

    def timeline(self, since: float | None = None, limit: int = 200) -> list[TimelineEvent]:
        """The audit log and the approval requests and answers, newest last."""
        out = [
            TimelineEvent(t=r.t, kind=r.trigger, knob=r.knob, summary=_summary(r)) for r in self.audit.read()
        ]
        for a in self.approvals.all():
            what = f"{a.action.knob} -> {a.action.value} (tier {a.tier})"
            knob = a.action.knob
            out.append(TimelineEvent(t=a.created, kind="approval.requested", knob=knob, summary=what))
            if a.decided_at is not None:
                out.append(
                    TimelineEvent(
                        t=a.decided_at,
                        kind=f"approval.{a.status}",
                        knob=a.action.knob,
                        summary=f"{what} by {a.decided_by}",
                    )
                )
        out.sort(key=lambda e: e.t)
        if since is not None:
            out = [e for e in out if e.t >= since]
        return out[-limit:]

    def markers(self) -> list[tuple[float, Literal["applied", "rolled_back"], str]]:
        """When changes went into force and when they were put back: the KPI plot's markers."""
        out: list[tuple[float, Literal["applied", "rolled_back"], str]] = []
        for e in self.journal.entries().values():
            v = _view(e)
            if e.t_applied is not None:
                out.append((e.t_applied, "applied", f"{v.knob} -> {v.value}"))
            if e.t_closed is not None and e.change.state == "reverted":
                out.append((e.t_closed, "rolled_back", f"{v.knob} -> {v.before}"))
        return sorted(out)


@contextlib.contextmanager
def fs_host(host: Host) -> Iterator[Host]:
    """A fixed host, for tests and replay: nothing to open or close."""
    yield host
