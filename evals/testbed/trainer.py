"""The testbed's training job: a small PyTorch CPU model fed by a DataLoader that reads shard files.

Run as `python -m evals.testbed.trainer --data DIR ...`. Workers read whole shards
sequentially with plain read(2), as streaming loaders (webdataset and the like)
do, so readahead, the page cache, reclaim and the device all shape data wait.
It adopts the trainer hook (two lines, marked) and writes its own cumulative
figures to a status file, so the scenario runner measures without the agent.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

from agent.hook import watch  # the hook, line 1 of 2

FEATURES = 4096


Shard = tuple[str, int, int]  # file or block device, offset, length in bytes


class ShardStream(IterableDataset[tuple[Any, int]]):
    """Samples of `sample_kb` bytes read in order from shards, one shard per worker at a time. A shard
    is a whole file, or a region of a raw block device (data with no file system on it)."""

    def __init__(self, shards: list[Shard], sample_kb: int, preprocess: int, drop_behind: bool) -> None:
        self.shards = shards
        self.sample_bytes = sample_kb * 1024
        self.preprocess = preprocess
        self.drop_behind = drop_behind

    def __iter__(self) -> Iterator[tuple[Any, int]]:
        info = get_worker_info()
        wid, n = (info.id, info.num_workers) if info is not None else (0, 1)
        mix = torch.randn(256, 256) / 16.0
        for path, offset, length in self.shards[wid::n]:
            with open(path, "rb", buffering=0) as f:
                f.seek(offset)
                left = length
                while left >= self.sample_bytes:
                    raw = f.read(self.sample_bytes)
                    left -= len(raw)
                    if len(raw) < self.sample_bytes:
                        break
                    x = torch.frombuffer(bytearray(raw), dtype=torch.uint8).float() / 255.0
                    for _ in range(self.preprocess):
                        # CPU-bound augmentation stand-in: real matrix work per sample.
                        x = torch.tanh(x.view(-1, 256) @ mix).flatten()
                    yield x.view(FEATURES, -1).mean(dim=1), int(raw[0]) % 10
                if self.drop_behind:
                    # Stands in for a data set far larger than RAM: every epoch reads the device.
                    os.posix_fadvise(f.fileno(), offset, length, os.POSIX_FADV_DONTNEED)


class Progress:
    """Cumulative figures written atomically about twice a second."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.samples = 0
        self.steps = 0
        self.wait_s = 0.0
        self.busy_s = 0.0
        self.started = time.monotonic()
        self._last = 0.0

    def update(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < 0.5:
            return
        self._last = now
        body = {
            "t": now,
            "pid": os.getpid(),
            "samples": self.samples,
            "steps": self.steps,
            "wait_s": self.wait_s,
            "active_s": self.wait_s + self.busy_s,
        }
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(body))
        os.replace(tmp, self.path)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", required=True, type=Path, help="a folder of shard-*.bin, or a block device")
    ap.add_argument("--raw-shards", type=int, default=0, help="with a block device: how many shards on it")
    ap.add_argument("--shard-mb", type=int, default=16, help="with a block device: the size of one shard")
    ap.add_argument("--status", required=True, type=Path)
    ap.add_argument("--job", default="testbed")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--sample-kb", type=int, default=64)
    ap.add_argument("--preprocess", type=int, default=0, help="matrix passes per sample in the workers")
    ap.add_argument("--drop-behind", action="store_true")
    ap.add_argument("--threads", type=int, default=1, help="torch threads of the training step")
    args = ap.parse_args(argv)

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    if args.raw_shards:
        size = args.shard_mb * 1024 * 1024
        shards = [(str(args.data), i * size, size) for i in range(args.raw_shards)]
    else:
        shards = [(str(p), 0, p.stat().st_size) for p in sorted(args.data.glob("shard-*.bin"))]
    data = ShardStream(shards, args.sample_kb, args.preprocess, args.drop_behind)
    # Persistent workers: an epoch is a few seconds here, and restarting workers each
    # epoch would measure process start-up rather than the scenario's fault.
    loader = DataLoader(
        data,
        batch_size=args.batch,
        num_workers=args.workers,
        prefetch_factor=2 if args.workers else None,
        persistent_workers=args.workers > 0,
    )
    batches = watch(loader, job=args.job)  # the hook, line 2 of 2
    model = torch.nn.Sequential(torch.nn.Linear(FEATURES, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = torch.nn.CrossEntropyLoss()
    status = Progress(args.status)
    status.update(force=True)
    while True:  # epochs until stopped
        t = time.perf_counter()
        for x, y in batches:
            got = time.perf_counter()
            status.wait_s += got - t
            opt.zero_grad()
            loss_fn(model(x), y).backward()
            opt.step()
            t = time.perf_counter()
            status.busy_s += t - got
            status.samples += len(y)
            status.steps += 1
            status.update()


if __name__ == "__main__":
    main()
