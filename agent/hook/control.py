"""Control requests inside the trainer: validate, apply now or at the next safe point, ack.

Affinity applies at once (pinning running processes is safe at any moment).
Worker count, prefetch depth, batch size and reopening files need a new loader
iterator, so they wait for the next epoch boundary, where the watched loader
calls `apply_pending`. Every request is answered: refused with a reason, or
acknowledged with the value in force (first as pending when deferred).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from agent.hook import procs
from agent.hook.protocol import AFFINITY, BATCH_SIZE, PREFETCH, REOPEN_FILES, WORKERS, bounds, check
from agent.hook.rebuild import Rebuild, clone_torch_loader, is_torch_loader
from core.cpulist import format_cpulist, parse_cpulist
from core.knob import KnobValue

log = logging.getLogger("idletune.hook")

Send = Callable[[dict[str, Any]], None]
BatchSizeCallback = Callable[[int], Iterable[Any] | None]


@dataclass
class _Pending:
    id: str
    key: str
    value: KnobValue | None


class Control:
    def __init__(
        self,
        loader: Iterable[Any],
        *,
        rebuild: Rebuild | None,
        on_batch_size: BatchSizeCallback | None,
        batch_size: int | None,
        workers: int | None,
        prefetch_factor: int | None,
    ) -> None:
        self._rebuild = rebuild
        self._on_batch_size = on_batch_size
        self._torch = is_torch_loader(loader)
        self._lock = threading.Lock()
        self._pending: dict[str, _Pending] = {}
        self.usable_cpus = procs.usable_cpus()
        self.knobs: dict[str, KnobValue] = {AFFINITY: format_cpulist(self.usable_cpus)}
        if workers is not None:
            self.knobs[WORKERS] = workers
        if prefetch_factor is not None:
            self.knobs[PREFETCH] = prefetch_factor
        if batch_size is not None:
            self.knobs[BATCH_SIZE] = batch_size
        self.send: Send = lambda msg: None  # set by the watcher once the link exists

    # -- what the agent may ask --------------------------------------------------

    @property
    def can_rebuild(self) -> bool:
        return self._rebuild is not None or self._torch

    def capabilities(self) -> dict[str, dict[str, Any]]:
        cpus = self.usable_cpus
        return {
            WORKERS: {"settable": self.can_rebuild, "applies": "next_epoch", **bounds(WORKERS, cpus)},
            PREFETCH: {"settable": self.can_rebuild, "applies": "next_epoch", **bounds(PREFETCH, cpus)},
            AFFINITY: {"settable": True, "applies": "now", "cpus": format_cpulist(cpus)},
            # Batch size changes the optimisation, not only the speed: the script must
            # opt in with a callback, and the catalogue treats it as tier 3.
            BATCH_SIZE: {
                "settable": self._on_batch_size is not None,
                "applies": "next_epoch",
                "tier": 3,
                **bounds(BATCH_SIZE, cpus),
            },
            REOPEN_FILES: {"settable": self.can_rebuild, "applies": "next_epoch"},
        }

    # -- link thread ---------------------------------------------------------------

    def on_message(self, msg: dict[str, Any]) -> None:
        kind = msg.get("type")
        rid = str(msg.get("id", ""))
        if kind == "reopen_files":
            self._request(rid, REOPEN_FILES, None)
        elif kind == "set":
            self._request(rid, str(msg.get("key", "")), msg.get("value"))

    def _request(self, rid: str, key: str, raw: Any) -> None:
        caps = self.capabilities()
        if key not in caps:
            self._ack(rid, key, ok=False, reason=f"unknown key {key!r}")
            return
        if not caps[key]["settable"]:
            self._ack(rid, key, ok=False, reason=self._why_not_settable(key))
            return
        value: KnobValue | None = None
        if key != REOPEN_FILES:
            value, why = check(key, raw, self.usable_cpus)
            if value is None:
                self._ack(rid, key, ok=False, reason=why)
                return
        if key == AFFINITY:
            self._apply_affinity(rid, str(value))
            return
        with self._lock:
            superseded = self._pending.get(key)
            self._pending[key] = _Pending(rid, key, value)
        if superseded is not None:
            self._ack(superseded.id, key, ok=False, reason=f"superseded by request {rid}")
        self._ack(rid, key, ok=True, pending=True)

    def _why_not_settable(self, key: str) -> str:
        if key == BATCH_SIZE:
            return "the training script gave watch() no on_batch_size callback"
        return "the loader is not a torch DataLoader and watch() got no rebuild callable"

    def _apply_affinity(self, rid: str, cpulist: str) -> None:
        pids = procs.worker_pids()
        try:
            procs.pin(pids, parse_cpulist(cpulist))
        except OSError as e:
            self._ack(rid, AFFINITY, ok=False, reason=f"sched_setaffinity failed: {e}")
            return
        self.knobs[AFFINITY] = cpulist
        self._ack(rid, AFFINITY, ok=True)

    def _ack(self, rid: str, key: str, *, ok: bool, pending: bool = False, reason: str = "") -> None:
        self.send(
            {
                "type": "ack",
                "id": rid,
                "key": key,
                "ok": ok,
                "value": self.knobs.get(key),
                "pending": pending,
                "reason": reason,
            }
        )

    # -- training thread, at the epoch boundary ------------------------------------

    @property
    def has_pending(self) -> bool:
        return bool(self._pending)

    def apply_pending(self, loader: Iterable[Any]) -> Iterable[Any]:
        """The loader to iterate this epoch: a new one when a pending change needs it."""
        with self._lock:
            pending, self._pending = self._pending, {}
        if not pending:
            return loader
        new = loader
        bs = pending.pop(BATCH_SIZE, None)
        if bs is not None:
            new = self._apply_batch_size(new, bs)
        if pending:
            new = self._apply_rebuild(new, pending)
        return new

    def _apply_batch_size(self, loader: Iterable[Any], p: _Pending) -> Iterable[Any]:
        assert self._on_batch_size is not None and isinstance(p.value, int)
        try:
            replaced = self._on_batch_size(p.value)
        except Exception as e:  # the script's own code: report, keep training
            self._ack(p.id, BATCH_SIZE, ok=False, reason=f"on_batch_size failed: {type(e).__name__}: {e}")
            return loader
        self.knobs[BATCH_SIZE] = p.value
        self._ack(p.id, BATCH_SIZE, ok=True)
        return replaced if replaced is not None else loader

    def _apply_rebuild(self, loader: Iterable[Any], pending: dict[str, _Pending]) -> Iterable[Any]:
        # None tells a script's rebuild "keep what you have" for a setting it never reported.
        workers = pending[WORKERS].value if WORKERS in pending else self.knobs.get(WORKERS)
        prefetch = pending[PREFETCH].value if PREFETCH in pending else self.knobs.get(PREFETCH)
        assert workers is None or isinstance(workers, int)
        assert prefetch is None or isinstance(prefetch, int)
        try:
            if self._rebuild is not None:
                new = self._rebuild(workers=workers, prefetch_factor=prefetch)
            else:
                new = clone_torch_loader(loader, workers or 0, prefetch)
        except Exception as e:  # the script's or torch's code: report, keep the old loader
            log.warning("idletune hook: loader rebuild failed, keeping the current loader: %s", e)
            for p in pending.values():
                self._ack(p.id, p.key, ok=False, reason=f"rebuild failed: {type(e).__name__}: {e}")
            return loader
        if workers is not None:
            self.knobs[WORKERS] = workers
        if prefetch is not None:
            self.knobs[PREFETCH] = prefetch
        for p in pending.values():
            self._ack(p.id, p.key, ok=True)
        return new

    def repin(self) -> None:
        """Pin freshly started workers to the affinity in force (called after iter())."""
        cpulist = str(self.knobs[AFFINITY])
        cpus = parse_cpulist(cpulist)
        if cpus != self.usable_cpus:
            try:
                procs.pin(procs.worker_pids(), cpus)
            except OSError as e:
                log.warning("idletune hook: could not pin new loader workers: %s", e)
