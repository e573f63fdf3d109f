"""A fake root whose writes behave as the kernel's do for the knobs the catalogue touches.

Plain files would let a wrong revert pass: the fake rejects what the kernel
rejects (EINVAL) and has the same side effects, measured on a 6.18 kernel:
- dirty_bytes / dirty_ratio zero each other, but only when the written value
  changes; dirty_background_bytes / dirty_background_ratio always do;
- the *_bytes files refuse values under their minimum (2 pages, 1 byte);
- a `[selected]` file accepts only a listed name and rewrites the brackets;
- switching a queue's scheduler resets nr_requests (to 2x the queue depth under
  an elevator, to the depth under none);
- a CPU's governor must be one its cpufreq driver offers.
"""

from __future__ import annotations

import errno
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.hostfs import HostFS
from primitives.channels import Ack, TrainerValue
from primitives.host import Host

VM = "/proc/sys/vm"
THP = "/sys/kernel/mm/transparent_hugepage"
CPU = "/sys/devices/system/cpu"
QUEUE_DEPTH = 128
_PAIRS = {
    f"{VM}/dirty_ratio": (f"{VM}/dirty_bytes", False, 0, 100),
    f"{VM}/dirty_bytes": (f"{VM}/dirty_ratio", False, 8192, 2**62),
    f"{VM}/dirty_background_ratio": (f"{VM}/dirty_background_bytes", True, 0, 100),
    f"{VM}/dirty_background_bytes": (f"{VM}/dirty_background_ratio", True, 1, 2**62),
}


def _einval() -> OSError:
    return OSError(errno.EINVAL, "Invalid argument")


class FakeKernelFS(HostFS):
    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.writes: list[tuple[str, str]] = []

    def _set(self, host_path: str, text: str) -> None:
        self.path(host_path).write_text(text + "\n")

    def write_text(self, host_path: str, text: str) -> None:
        self.writes.append((host_path, text))
        if not self.exists(host_path):
            raise OSError(errno.ENOENT, "No such file or directory")
        text = text.strip()
        if host_path in _PAIRS:
            self._write_pair(host_path, text)
        elif host_path.endswith("/queue/scheduler") or host_path.startswith(THP):
            self._select(host_path, text)
        elif host_path.endswith("/scaling_governor"):
            offered = self.read_text(
                host_path.replace("scaling_governor", "scaling_available_governors")
            ).split()
            if text not in offered:
                raise _einval()
            self._set(host_path, text)
        else:
            if not text.lstrip("-").isdigit():
                raise _einval()
            self._set(host_path, text)

    def _write_pair(self, host_path: str, text: str) -> None:
        partner, always, lo, hi = _PAIRS[host_path]
        if not text.isdigit() or not lo <= int(text) <= hi:
            raise _einval()
        changed = int(self.read_value(host_path)) != int(text)
        self._set(host_path, text)
        if always or changed:
            self._set(partner, "0")

    def _select(self, host_path: str, text: str) -> None:
        raw = self.read_text(host_path)
        options = raw.replace("[", " ").replace("]", " ").split()
        if text not in options:
            raise _einval()
        old = raw[raw.index("[") + 1 : raw.index("]")]
        trail = " " if raw.rstrip("\n").endswith(" ") else ""  # the scheduler file ends in a space
        self.path(host_path).write_text(
            " ".join(f"[{o}]" if o == text else o for o in options) + trail + "\n"
        )
        if host_path.endswith("/queue/scheduler") and old != text:
            nr = QUEUE_DEPTH if text == "none" else 2 * QUEUE_DEPTH
            self._set(host_path.replace("scheduler", "nr_requests"), str(nr))


def make_root(
    root: Path,
    *,
    devices: tuple[str, ...] = ("nvme0n1", "vdb"),
    cpus: int = 4,
    cpufreq: bool = True,
) -> FakeKernelFS:
    """A fake /proc/sys and /sys as a stock host has them."""

    def put(host_path: str, text: str) -> None:
        p = root / host_path.lstrip("/")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)

    for name, v in {
        "dirty_ratio": 20,
        "dirty_background_ratio": 10,
        "dirty_bytes": 0,
        "dirty_background_bytes": 0,
        "dirty_writeback_centisecs": 500,
        "dirty_expire_centisecs": 3000,
        "swappiness": 60,
        "min_free_kbytes": 67584,
    }.items():
        put(f"{VM}/{name}", f"{v}\n")
    put("/proc/sys/kernel/numa_balancing", "1\n")
    put("/proc/sys/kernel/sched_autogroup_enabled", "1\n")
    put("/proc/meminfo", "MemTotal:       65536000 kB\nMemFree:        32768000 kB\n")
    put(f"{THP}/enabled", "always [madvise] never\n")
    put(f"{THP}/defrag", "always defer defer+madvise [madvise] never\n")
    for dev in devices:
        q = f"/sys/block/{dev}/queue"
        put(f"{q}/read_ahead_kb", "128\n")
        put(f"{q}/nr_requests", f"{2 * QUEUE_DEPTH}\n")
        put(f"{q}/scheduler", "[mq-deadline] kyber bfq none \n")
    put(f"{CPU}/online", f"0-{cpus - 1}\n")
    for c in range(cpus):
        put(f"{CPU}/cpu{c}/topology/core_id", f"{c}\n")
        if cpufreq:
            d = f"{CPU}/cpu{c}/cpufreq"
            put(f"{d}/scaling_governor", "schedutil\n")
            put(f"{d}/scaling_available_governors", "performance schedutil powersave\n")
    return FakeKernelFS(root)


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file under the root and its bytes, to compare before and after."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


class FakeTrainer:
    """A trainer hook per job: a dict of key -> value, with refusals and reopen requests counted."""

    def __init__(self, jobs: dict[str, dict[str, TrainerValue]], *, can_reopen: bool = True) -> None:
        self.state = {j: dict(kv) for j, kv in jobs.items()}
        self.can_reopen = can_reopen
        self.refuse: set[str] = set()
        self.reopened: list[str] = []
        # Keys put in force only at the next epoch (`land`), as a rebuilt loader does.
        self.deferred: set[str] = set()
        self.waiting: dict[tuple[str, str], TrainerValue] = {}

    def jobs(self) -> list[str]:
        return sorted(self.state)

    def capabilities(self, job: str) -> frozenset[str]:
        keys = set(self.state.get(job, {}))
        return frozenset(keys | ({"reopen_files"} if self.can_reopen else set()))

    def get(self, job: str, key: str) -> TrainerValue:
        return self.state[job][key]

    def set(self, job: str, key: str, value: TrainerValue) -> Ack:
        if key in self.refuse:
            return Ack(ok=False, reason=f"{key} is locked by the training script")
        if key in self.deferred and value != self.state[job][key]:
            self.waiting[(job, key)] = value
            return Ack(ok=True, value=self.state[job][key], pending=True, reason="takes effect next epoch")
        self.waiting.pop((job, key), None)
        self.state[job][key] = value
        return Ack(ok=True, value=value)

    def land(self) -> None:
        """The next epoch: deferred values go in force, and files asked to be reopened are."""
        for (job, key), value in self.waiting.items():
            if key != "reopen_files":
                self.state[job][key] = value
        self.waiting.clear()

    def reopen_files(self, job: str) -> Ack:
        self.reopened.append(job)
        if "reopen_files" in self.deferred:
            self.waiting[(job, "reopen_files")] = ""
            return Ack(ok=True, pending=True, reason="at the next epoch")
        return Ack(ok=True)

    def awaiting(self, job: str, key: str) -> bool:
        return (job, key) in self.waiting


class FakeGpu:
    """Power limits in watts with NVML-like constraints; out-of-range sets raise as NVML does."""

    def __init__(self, limits: list[float], lo: float = 200.0, hi: float = 700.0) -> None:
        self.limits = list(limits)
        self.lo, self.hi = lo, hi

    def count(self) -> int:
        return len(self.limits)

    def limit_w(self, index: int) -> float:
        return self.limits[index]

    def constraints_w(self, index: int) -> tuple[float, float]:
        return self.lo, self.hi

    def set_limit_w(self, index: int, watts: float) -> None:
        if not self.lo <= watts <= self.hi:
            raise OSError(errno.EINVAL, "NVML: Invalid Argument")
        self.limits[index] = watts


@dataclass
class FakeHost:
    fs: FakeKernelFS
    trainer: FakeTrainer
    gpu: FakeGpu

    @property
    def host(self) -> Host:
        return Host(self.fs, trainer=self.trainer, gpu=self.gpu)

    def state(self) -> tuple[object, ...]:
        """All a primitive can touch: the root's bytes, the hooks' values, the GPU limits."""
        return (
            tree_bytes(self.fs.root),
            {j: dict(kv) for j, kv in self.trainer.state.items()},
            list(self.gpu.limits),
        )


def fake_host(root: Path, **kw: Any) -> FakeHost:
    """A fake root, one job (`resnet`) with a hook attached, and two GPUs at 400 W."""
    trainer = FakeTrainer(
        {
            "resnet": {
                "loader.workers": 4,
                "loader.prefetch_factor": 2,
                "loader.cpu_affinity": "0-3",
                "trainer.batch_size": 256,
            }
        }
    )
    return FakeHost(make_root(root, **kw), trainer, FakeGpu([400.0, 400.0]))
