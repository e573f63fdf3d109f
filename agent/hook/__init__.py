"""The trainer hook: two lines in a training script.

    from agent.hook import watch
    loader = watch(loader, job="resnet50")      # then iterate it as before

It measures data wait, step time and throughput, sends them to the local agent
at most once a second, and applies the agent's loader changes at the next safe
point. With no agent listening it costs two clock reads per batch and nothing
else. Standard library only: importing it never imports torch or the agent.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from agent.hook.control import BatchSizeCallback
from agent.hook.rebuild import Rebuild
from agent.hook.watcher import WatchedLoader

T = TypeVar("T")

__all__ = ["WatchedLoader", "step", "watch"]

_by_job: dict[str, WatchedLoader[object]] = {}
_last: list[WatchedLoader[object]] = []


def watch(
    loader: Iterable[T],
    job: str | None = None,
    *,
    batch_size: int | None = None,
    rebuild: Rebuild | None = None,
    on_batch_size: BatchSizeCallback | None = None,
    state_dir: str | None = None,
) -> WatchedLoader[T]:
    """Wrap the training loader (any iterable; a torch DataLoader can be rebuilt without help).

    `rebuild(workers=, prefetch_factor=)` returns a new loader (None for a setting
    to keep); `on_batch_size(n)` opts in to batch-size changes and may return a new
    loader. Watch the training loader only: one job per watched loader.
    """
    watched = WatchedLoader(
        loader, job, batch_size=batch_size, rebuild=rebuild, on_batch_size=on_batch_size, state_dir=state_dir
    )
    # A script that wraps its loader again (each epoch, say) replaces the job's hook
    # rather than piling up connections that all claim the same job.
    previous = _by_job.get(watched.job)
    if previous is not None:
        previous.close()
    _by_job[watched.job] = watched  # type: ignore[assignment]
    _last[:] = [watched]  # type: ignore[list-item]
    return watched


def step() -> None:
    """Mark a step end on the most recently watched loader (only needed when a step is not one batch)."""
    if _last:
        _last[-1].step()
