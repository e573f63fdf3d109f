"""TrainerControl: the agent's end of the hooks' control channel (primitives.channels.TrainerChannel).

A request goes to every rank of the job and is answered when every rank has
answered finally, or at the timeout. Worker count and prefetch take effect at the
trainer's next epoch: when that is further off than the timeout, the answer is
ok and pending, with the value in force now (the old one) and a reason saying so;
`get` shows the new value once the hook reports it applied. Such a request is kept
until every rank's final answer has come (`awaiting`), so that the agent knows when
a deferred change, or a reopening of files, is in force.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field
from typing import Any

from agent.hook.protocol import REOPEN_FILES
from agent.sources.trainer import TrainerSource
from agent.sources.trainer_state import Peer
from primitives.channels import Ack, TrainerValue

DEFAULT_TIMEOUT_S = 5.0


@dataclass
class _Request:
    job: str
    key: str
    waiting: set[int]  # conn ids without a final answer yet
    finals: dict[int, dict[str, Any]] = field(default_factory=dict)
    pendings: dict[int, dict[str, Any]] = field(default_factory=dict)
    done: threading.Event = field(default_factory=threading.Event)


class TrainerControl:
    def __init__(self, source: TrainerSource, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self._source = source
        self.timeout_s = timeout_s
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._requests: dict[str, _Request] = {}
        # Answered pending at the timeout: kept until every rank's final answer (or disconnect).
        self._late: dict[str, _Request] = {}
        source.on_ack = self._on_ack
        source.on_disconnect = self._on_disconnect

    # -- TrainerChannel ------------------------------------------------------------------

    def jobs(self) -> list[str]:
        return [j.name for j in self._source.jobs()]

    def capabilities(self, job: str) -> frozenset[str]:
        peers = self._peers(job)
        if not peers:
            return frozenset()
        # What every rank can do; a key only some ranks can set is not the job's.
        sets = [{k for k, c in p.capabilities.items() if c.get("settable")} for p in peers]
        return frozenset(set.intersection(*sets))

    def get(self, job: str, key: str) -> TrainerValue:
        peers = self._peers(job)
        if not peers:
            raise LookupError(f"no trainer hook is attached for job {job!r}")
        if key not in peers[0].knobs:
            raise LookupError(f"the hook of job {job} does not report {key}")
        value: TrainerValue = peers[0].knobs[key]
        return value

    def set(self, job: str, key: str, value: TrainerValue, *, timeout_s: float | None = None) -> Ack:
        return self._ask(job, key, {"type": "set", "key": key, "value": value}, timeout_s)

    def reopen_files(self, job: str, *, timeout_s: float | None = None) -> Ack:
        return self._ask(job, REOPEN_FILES, {"type": "reopen_files"}, timeout_s)

    def awaiting(self, job: str, key: str) -> bool:
        with self._lock:
            return any(r.job == job and r.key == key and r.waiting for r in self._late.values())

    # -- requests --------------------------------------------------------------------------

    def _peers(self, job: str) -> list[Peer]:
        return sorted(
            self._source.peers(job), key=lambda p: (p.rank if p.rank is not None else 1 << 30, p.pid or 0)
        )

    def _ask(self, job: str, key: str, msg: dict[str, Any], timeout_s: float | None) -> Ack:
        peers = self._peers(job)
        if not peers:
            return Ack(ok=False, reason=f"no trainer hook is attached for job {job!r}")
        rid = f"r{next(self._ids)}"
        req = _Request(job=job, key=key, waiting={p.conn_id for p in peers})
        with self._lock:
            self._requests[rid] = req
        for p in peers:
            if not self._source.send(p.conn_id, {**msg, "id": rid}):
                self._answer(rid, p.conn_id, {"ok": False, "reason": "the hook disconnected"})
        req.done.wait(self.timeout_s if timeout_s is None else timeout_s)
        with self._lock:
            self._requests.pop(rid, None)
            ack = _combine(req, peers)
            if ack.pending:
                self._late[rid] = req
            return ack

    def _on_ack(self, conn_id: int, msg: dict[str, Any]) -> None:
        rid = msg.get("id")
        if isinstance(rid, str):
            self._answer(rid, conn_id, msg)

    def _on_disconnect(self, conn_id: int) -> None:
        with self._lock:
            rids = [rid for rid, r in [*self._requests.items(), *self._late.items()] if conn_id in r.waiting]
        for rid in rids:
            self._answer(rid, conn_id, {"ok": False, "reason": "the hook disconnected before answering"})

    def _answer(self, rid: str, conn_id: int, msg: dict[str, Any]) -> None:
        with self._lock:
            late = self._late.get(rid)
            if late is not None:
                # A final answer after the timeout: in force on that rank now, or refused there.
                if conn_id in late.waiting and msg.get("pending") is not True:
                    late.waiting.discard(conn_id)
                    if not late.waiting:
                        del self._late[rid]
                return
            req = self._requests.get(rid)
            if req is None or conn_id not in req.waiting:
                return
            if msg.get("ok") is True and msg.get("pending") is True:
                req.pendings[conn_id] = msg
                return
            req.waiting.discard(conn_id)
            req.finals[conn_id] = msg
            if not req.waiting:
                req.done.set()


def _combine(req: _Request, peers: list[Peer]) -> Ack:
    """One answer for the job from its ranks' answers (called under the lock)."""
    n = len(peers)
    refusals = [m for m in req.finals.values() if m.get("ok") is not True]
    if refusals:
        reason = str(refusals[0].get("reason") or "refused")
        accepted = n - len(refusals) - len(req.waiting)
        if n > 1:
            reason += f" ({len(refusals)} of {n} ranks refused, {accepted} accepted)"
        return Ack(ok=False, value=_value(refusals[0]), reason=reason)
    silent = [c for c in req.waiting if c not in req.pendings]
    if silent:
        return Ack(ok=False, reason=f"{len(silent)} of {n} trainer hooks did not answer in time")
    if req.waiting:
        first = req.pendings[min(req.pendings)]
        return Ack(
            ok=True,
            value=_value(first),
            reason=f"accepted; {req.key} takes effect at the trainer's next epoch "
            "(the value shown is the one in force now)",
            pending=True,
        )
    values = {repr(_value(m)) for m in req.finals.values()}
    first_final = req.finals[min(req.finals)]
    if len(values) > 1:
        return Ack(ok=True, value=None, reason=f"ranks differ in the value now in force: {sorted(values)}")
    return Ack(ok=True, value=_value(first_final))


def _value(msg: dict[str, Any]) -> TrainerValue | None:
    v = msg.get("value")
    return v if isinstance(v, int | float | str) and not isinstance(v, bool) else None
