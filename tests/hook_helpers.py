"""Synthetic loaders and a training loop on a thread, for the trainer hook tests."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

from agent.sources.trainer import TrainerSource


class FakeLoader:
    """A loader with the attributes the hook reads from a DataLoader; batches are (tag, index)."""

    def __init__(
        self,
        n: int,
        *,
        fetch_s: float = 0.0,
        num_workers: int = 4,
        prefetch_factor: int = 2,
        batch_size: int = 4,
        tag: int = 0,
    ) -> None:
        self.n = n
        self.fetch_s = fetch_s
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.batch_size = batch_size
        self.tag = tag

    def __iter__(self) -> Iterator[tuple[int, int]]:
        for i in range(self.n):
            if self.fetch_s:
                time.sleep(self.fetch_s)
            yield (self.tag, i)

    def __len__(self) -> int:
        return self.n


class Rebuilds:
    """A script's rebuild callable: records each call and returns a loader tagged with its number."""

    def __init__(self, n: int, fetch_s: float = 0.0) -> None:
        self.calls: list[dict[str, Any]] = []
        self.n = n
        self.fetch_s = fetch_s

    def __call__(self, *, workers: int | None, prefetch_factor: int | None) -> FakeLoader:
        self.calls.append({"workers": workers, "prefetch_factor": prefetch_factor})
        return FakeLoader(
            self.n,
            fetch_s=self.fetch_s,
            num_workers=workers or 0,
            prefetch_factor=prefetch_factor or 2,
            tag=len(self.calls),
        )


class TrainLoop(threading.Thread):
    """Iterates `epochs` epochs with `step_s` of compute a batch; keeps batches, step times, errors."""

    def __init__(self, loader: Any, epochs: int, step_s: float) -> None:
        super().__init__(daemon=True)
        self.loader = loader
        self.epochs = epochs
        self.step_s = step_s
        self.batches: list[Any] = []
        self.step_times: list[tuple[float, float]] = []  # (when, duration)
        self.error: BaseException | None = None
        self.stop = threading.Event()

    def run(self) -> None:
        try:
            for _ in range(self.epochs):
                last = time.perf_counter()
                for batch in self.loader:
                    time.sleep(self.step_s)
                    self.batches.append(batch)
                    now = time.perf_counter()
                    self.step_times.append((now, now - last))
                    last = now
                    if self.stop.is_set():
                        return
        except BaseException as e:
            self.error = e


def wait_for(cond: Any, timeout: float = 5.0, every: float = 0.02) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(every)
    return bool(cond())


def collect_for(source: TrainerSource, seconds: float) -> list[dict[str, float]]:
    out: list[dict[str, float]] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(0.1)
        m = source.collect()
        if m:
            out.append(m)
    return out
