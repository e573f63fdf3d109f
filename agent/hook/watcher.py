"""The watched loader: times each batch, and is where pending changes take effect."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from time import perf_counter
from typing import Any, Generic, TypeVar

from agent.hook import procs
from agent.hook.control import BatchSizeCallback, Control
from agent.hook.counters import Counters
from agent.hook.link import Link
from agent.hook.protocol import PROTOCOL_VERSION, safe_job_name, socket_path
from agent.hook.rebuild import Rebuild, loader_settings

T = TypeVar("T")

_WORKERS_EVERY = 5  # ticks between worker listings: /proc reads cost, workers change per epoch


class WatchedLoader(Generic[T]):
    """Iterates like the loader it wraps; other attributes pass through to the current loader."""

    def __init__(
        self,
        loader: Iterable[T],
        job: str | None = None,
        *,
        batch_size: int | None = None,
        rebuild: Rebuild | None = None,
        on_batch_size: BatchSizeCallback | None = None,
        state_dir: str | None = None,
    ) -> None:
        self._loader: Iterable[T] = loader
        self.job = safe_job_name(job or Path(sys.argv[0] or "python").stem)
        self.pid = os.getpid()
        bs = batch_size if batch_size is not None else getattr(loader, "batch_size", None)
        workers, prefetch = loader_settings(loader)
        self._counters = Counters()
        self._counters.batch_size = bs if isinstance(bs, int) else None
        self._explicit_steps = False
        self._control = Control(
            loader,
            rebuild=rebuild,
            on_batch_size=on_batch_size,
            batch_size=self._counters.batch_size,
            workers=workers,
            prefetch_factor=prefetch,
        )
        self._workers: list[int] = []
        self._ticks = 0
        self.link = Link(socket_path(state_dir), self._hello, self._tick, self._control.on_message)
        self._control.send = self.link.send
        self.link.start()

    # -- the training loop ---------------------------------------------------------

    def __iter__(self) -> Iterator[T]:
        if self._control.has_pending:
            self._loader = self._control.apply_pending(self._loader)
            bs = self._control.knobs.get("trainer.batch_size")
            if isinstance(bs, int):
                self._counters.batch_size = bs
        counters = self._counters
        start = perf_counter()
        counters.epoch_start(start)
        # Worker start-up in iter() is data wait of the first step.
        counters.request(start, auto_steps=not self._explicit_steps)
        it = iter(self._loader)
        self._control.repin()
        first = True
        try:
            while True:
                if not first:
                    counters.request(perf_counter(), auto_steps=not self._explicit_steps)
                first = False
                try:
                    batch = next(it)
                except StopIteration:
                    counters.arrived(perf_counter(), batch=False)
                    return
                counters.arrived(perf_counter(), batch=True)
                yield batch
        finally:
            counters.epoch_end(perf_counter())

    def step(self) -> None:
        """Mark the end of a training step (gradient accumulation, several batches a step)."""
        self._explicit_steps = True
        self._counters.step(perf_counter())

    def __len__(self) -> int:
        return len(self._loader)  # type: ignore[arg-type]

    def __getattr__(self, name: str) -> Any:
        # Only reached for names this class lacks: loader.sampler.set_epoch(...) etc.
        return getattr(self.__dict__["_loader"], name)

    @property
    def loader(self) -> Iterable[T]:
        """The loader iterated now (a new one after a rebuild)."""
        return self._loader

    def close(self) -> None:
        self.link.stop()

    # -- the link thread -----------------------------------------------------------

    def _hello(self) -> dict[str, Any]:
        self._workers = procs.worker_pids(self.pid)
        return {
            "type": "hello",
            "v": PROTOCOL_VERSION,
            "job": self.job,
            "pid": self.pid,
            "rank": _rank(),
            "knobs": dict(self._control.knobs),
            "capabilities": self._control.capabilities(),
            "workers": self._workers,
        }

    def _tick(self) -> dict[str, Any]:
        iv = self._counters.snapshot()
        if self._ticks % _WORKERS_EVERY == 0:
            self._workers = procs.worker_pids(self.pid)
        self._ticks += 1
        return {
            "type": "metrics",
            "job": self.job,
            "pid": self.pid,
            "interval_s": iv.interval_s,
            "steps": iv.steps,
            "step_s": iv.step_s,
            "wait_s": iv.wait_s,
            "active_s": iv.active_s,
            "samples": iv.samples,
            "knobs": dict(self._control.knobs),
            "workers": self._workers,
        }


def _rank() -> int | None:
    raw = os.environ.get("RANK")
    return int(raw) if raw is not None and raw.isdigit() else None
