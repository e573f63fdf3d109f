"""Audit: one JSON line per decision, and Prometheus counters of actions, verdicts and rollbacks.

A line says what triggered it, what the diagnosis and the proposal were, what the
gate decided and by which rule, what the executor did, the KPI before and after,
the verdict and any rollback, so that every change can be explained afterwards
from the file alone. The counters live in their own registry, which the HTTP
service exposes at /metrics; one registry per process.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from prometheus_client import CollectorRegistry, Counter
from pydantic import BaseModel, ConfigDict, Field

from core.statedir import StateError, open_file, read_file, secure_dir, state_dir

AUDIT_NAME = "audit.jsonl"
AUDIT_ENV = "IDLETUNE_AUDIT_LOG"
# config: a config file loaded, refused, or a change restored because the new one disallows it;
# mode: the daemon's mode changed at run time.
Trigger = Literal[
    "diagnosis",
    "manual",
    "verdict",
    "operator",
    "shutdown",
    "recovery",
    "safe_mode",
    "rollback",
    "pid",
    "config",
    "mode",
]

REGISTRY = CollectorRegistry(auto_describe=True)
ACTIONS = Counter(
    "idletune_actions",
    "Changes the executor was asked to make, by result",
    ["primitive", "status"],
    registry=REGISTRY,
)
DECISIONS = Counter(
    "idletune_gate_decisions", "Gate decisions, by outcome and rule", ["decision", "rule"], registry=REGISTRY
)
VERDICTS = Counter(
    "idletune_verdicts",
    "Effect verdicts after a change, by primitive",
    ["primitive", "verdict"],
    registry=REGISTRY,
)
ROLLBACKS = Counter("idletune_rollbacks", "Changes put back, by why", ["reason", "status"], registry=REGISTRY)


class AuditRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    t: float
    trigger: Trigger
    knob: str | None = None
    diagnosis: dict[str, Any] | None = Field(default=None, description="the top cause: category, confidence")
    proposal: dict[str, Any] | None = Field(default=None, description="the action as proposed")
    decision: str | None = None
    rule: str | None = Field(default=None, description="the gate rule that decided")
    reason: str | None = None
    execution: dict[str, Any] | None = Field(default=None, description="the executor's result")
    kpi: str | None = None
    kpi_before: float | None = None
    kpi_after: float | None = None
    verdict: str | None = None
    in_force_after_s: float | None = Field(
        default=None, description="seconds from the request until the change acted (judged from then)"
    )
    rollback: dict[str, Any] | None = None
    notes: list[str] = Field(default_factory=list)


def default_audit_path() -> Path:
    """$IDLETUNE_AUDIT_LOG (the operator's config sets it), else audit.jsonl in the state dir."""
    return Path(os.environ.get(AUDIT_ENV) or Path(state_dir()) / AUDIT_NAME)


class AuditLog:
    def __init__(
        self, path: str | os.PathLike[str] | None = None, *, clock: Callable[[], float] = time.time
    ) -> None:
        self.path = Path(path) if path is not None else default_audit_path()
        self._clock = clock

    def write(self, trigger: Trigger, **fields: Any) -> AuditRecord:
        rec = AuditRecord.model_validate({"t": self._clock(), "trigger": trigger, **fields})
        secure_dir(self.path.parent)  # 0755 when made: trainer hooks reach their socket in it
        # Readable by anyone who may run `idletune status`; written by root alone, through no link.
        fd = open_file(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, (rec.model_dump_json(exclude_none=True) + "\n").encode())
        finally:
            os.close(fd)
        _count(rec)
        return rec

    def read(self) -> list[AuditRecord]:
        try:
            text = read_file(self.path, limit=256 << 20)
        except (OSError, StateError):
            return []
        if text is None:
            return []
        out: list[AuditRecord] = []
        for line in text.splitlines():
            try:
                out.append(AuditRecord.model_validate_json(line))
            except ValueError:
                continue  # a line torn by a crash; the journal, not the audit, is the record of truth
        return out


def _count(rec: AuditRecord) -> None:
    if rec.decision is not None and rec.rule is not None:
        DECISIONS.labels(rec.decision, rec.rule).inc()
    ex = rec.execution or {}
    primitive = str(ex.get("primitive") or (rec.proposal or {}).get("primitive") or "?")
    if rec.execution is not None and rec.rollback is None and rec.trigger in ("diagnosis", "manual", "pid"):
        ACTIONS.labels(primitive, str(ex.get("status", "?"))).inc()
    if rec.verdict is not None:
        VERDICTS.labels(primitive, rec.verdict).inc()
    if rec.rollback is not None:
        ROLLBACKS.labels(rec.trigger, str(rec.rollback.get("status", "?"))).inc()
