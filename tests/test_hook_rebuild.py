"""Cloning a torch DataLoader with other worker settings, against a stand-in that keeps torch 2.x's rules.

torch is not a dependency of the project; the stand-in copies the DataLoader
constructor's argument checks and attributes (torch/utils/data/dataloader.py),
which is what clone_torch_loader relies on.
"""

from __future__ import annotations

from typing import Any

from agent.hook.rebuild import clone_torch_loader, is_torch_loader, loader_settings


class IterableDataset:
    def __iter__(self) -> Any:
        return iter(range(10))


class DataLoader:
    def __init__(
        self,
        dataset: Any,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Any = None,
        batch_sampler: Any = None,
        num_workers: int = 0,
        collate_fn: Any = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Any = None,
        multiprocessing_context: Any = None,
        generator: Any = None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
    ) -> None:
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        iterable = isinstance(dataset, IterableDataset)
        if iterable and (shuffle not in (False, None) or sampler is not None or batch_sampler is not None):
            raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle/sampler")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, ...")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive with drop_last"
            )
        if sampler is None:
            sampler = "iterable-sampler" if iterable else ("random" if shuffle else "sequential")
        if batch_size is not None and batch_sampler is None:
            batch_sampler = ("batch", sampler, batch_size, drop_last)
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        self.collate_fn = collate_fn or "default_collate"
        self.persistent_workers = persistent_workers


DataLoader.__module__ = "torch.utils.data.dataloader"


def test_detects_a_torch_loader_and_its_settings() -> None:
    dl = DataLoader([1, 2, 3], batch_size=2, num_workers=4)
    assert is_torch_loader(dl) and not is_torch_loader([1, 2])
    assert loader_settings(dl) == (4, 2)
    assert loader_settings([1]) == (None, None)


def test_clone_keeps_sampling_and_options() -> None:
    dl = DataLoader(
        list(range(100)),
        batch_size=32,
        shuffle=True,
        num_workers=4,
        drop_last=True,
        pin_memory=True,
        persistent_workers=True,
        worker_init_fn=print,
    )
    new = clone_torch_loader(dl, 8, 4)
    assert type(new) is DataLoader and new is not dl
    assert (new.num_workers, new.prefetch_factor, new.persistent_workers) == (8, 4, True)
    assert new.sampler == "random" and new.batch_size == 32 and new.drop_last
    assert new.pin_memory and new.worker_init_fn is print and new.dataset is dl.dataset


def test_clone_to_no_workers_drops_worker_only_options() -> None:
    dl = DataLoader(list(range(10)), batch_size=2, num_workers=4, persistent_workers=True)
    new = clone_torch_loader(dl, 0, 4)
    assert (new.num_workers, new.prefetch_factor, new.persistent_workers) == (0, None, False)


def test_clone_with_a_custom_batch_sampler() -> None:
    dl = DataLoader(list(range(10)), batch_sampler=[[0, 1], [2, 3]], num_workers=2)
    new = clone_torch_loader(dl, 3, 2)
    assert new.batch_sampler == [[0, 1], [2, 3]] and new.batch_size is None


def test_clone_without_auto_batching() -> None:
    dl = DataLoader(list(range(10)), batch_size=None, num_workers=2)
    new = clone_torch_loader(dl, 1, 2)
    assert new.batch_size is None and new.sampler == "sequential"


def test_clone_of_an_iterable_dataset_passes_no_sampler() -> None:
    dl = DataLoader(IterableDataset(), batch_size=4, num_workers=2)
    new = clone_torch_loader(dl, 6, 3)
    assert (new.num_workers, new.batch_size, new.sampler) == (6, 4, "iterable-sampler")
