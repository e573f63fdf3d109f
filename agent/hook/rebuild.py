"""Building a new loader with other worker settings, without importing torch.

A torch DataLoader fixes num_workers and prefetch_factor at construction, so a
change needs a new DataLoader over the same dataset, sampler and options. The
script may instead pass `rebuild(workers=, prefetch_factor=)` to `watch`, which
wins when given (custom loaders, DALI, webdataset pipelines).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any

Rebuild = Callable[..., Iterable[Any]]

# Constructor arguments a torch DataLoader keeps as attributes of the same name.
# Those a given torch version does not take are left out (checked on the signature).
_PASSED_THROUGH = (
    "collate_fn",
    "pin_memory",
    "pin_memory_device",
    "timeout",
    "worker_init_fn",
    "multiprocessing_context",
    "generator",
    "in_order",
)


def is_torch_loader(loader: object) -> bool:
    mro = type(loader).__mro__
    return any(c.__name__ == "DataLoader" and c.__module__.startswith("torch.utils.data") for c in mro)


def loader_settings(loader: object) -> tuple[int | None, int | None]:
    """(num_workers, prefetch_factor) of a loader that has them, else None each."""
    workers = getattr(loader, "num_workers", None)
    prefetch = getattr(loader, "prefetch_factor", None)
    return (
        workers if isinstance(workers, int) else None,
        prefetch if isinstance(prefetch, int) else None,
    )


def clone_torch_loader(loader: Any, workers: int, prefetch_factor: int | None) -> Any:
    """A new DataLoader like `loader` with other worker settings (the class is the loader's own)."""
    cls = type(loader)
    accepted = inspect.signature(cls.__init__).parameters
    kw: dict[str, Any] = {
        name: getattr(loader, name) for name in _PASSED_THROUGH if name in accepted and hasattr(loader, name)
    }
    if _is_iterable_dataset(loader):
        # An IterableDataset refuses an explicit sampler; batching is by batch_size alone.
        kw["batch_size"] = loader.batch_size
        kw["drop_last"] = loader.drop_last
    elif loader.batch_size is not None:
        # The DataLoader built its BatchSampler from sampler + batch_size + drop_last;
        # passing these three rebuilds the same one (shuffle lives in the sampler).
        kw.update(sampler=loader.sampler, batch_size=loader.batch_size, drop_last=loader.drop_last)
    elif loader.batch_sampler is not None:
        kw["batch_sampler"] = loader.batch_sampler
    else:
        kw.update(sampler=loader.sampler, batch_size=None)
    kw["num_workers"] = workers
    # torch refuses prefetch_factor and persistent_workers without worker processes.
    kw["prefetch_factor"] = prefetch_factor if workers > 0 else None
    kw["persistent_workers"] = bool(getattr(loader, "persistent_workers", False)) and workers > 0
    return cls(loader.dataset, **kw)


def _is_iterable_dataset(loader: Any) -> bool:
    return any(c.__name__ == "IterableDataset" for c in type(loader.dataset).__mro__)
