"""The testbed's scenarios: what each sets up, and how its fault and its fix differ."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

PhaseName = Literal["fault", "fix"]
PHASES: tuple[PhaseName, PhaseName] = ("fault", "fix")


# The background noises a scenario may carry (started by evals.testbed.runner).
NOISES = ("dirty", "rootwrites", "hog-elsewhere", "memhog")


@dataclass(frozen=True)
class Phase:
    """The host and job settings of one phase. Knob values are written before the job starts."""

    workers: int = 2
    read_ahead_kb: int = 128
    scheduler: str | None = None  # the data device's I/O scheduler; None leaves it
    sysctls: dict[str, str] = field(default_factory=dict)
    hogs: int = 0  # busy-looping processes beside the job, each in its own session
    writer: bool = False  # a checkpoint writer on the data device
    mem_headroom_mb: int | None = None  # memory cgroup limit: the job's own memory plus this
    warm: bool = False  # read the data set into the job's memory cgroup before it starts


@dataclass(frozen=True)
class Scenario:
    name: str
    cause: str  # the taxonomy category the fault injects
    title: str
    fault: Phase
    fix: Phase
    fix_note: str  # what the fix changes, in words
    data_mb: int = 256
    shard_mb: int = 16
    image_mb: int = 1024
    preprocess: int = 0
    drop_behind: bool = False
    cold: bool = True  # start each phase with the data set out of the page cache
    read_iops: int | None = None  # blkio throttle of the job's reads from the data device
    read_bps: int | None = None
    settle_s: float = 2.0  # seconds after the first step before measuring
    raw: bool = False  # the data on the block device itself, no file system (readers open the device)
    # Background a host carries beside the job, running through both phases (evals.testbed.load):
    # "dirty" (a data set staged just before, flushing), "rootwrites" (writes to another disk),
    # "hog-elsewhere" (a busy process outside the job's CPU group), "memhog" (memory used elsewhere).
    noise: tuple[str, ...] = ()
    # Shortest window that measures the KPI steadily: a fault that comes in cycles (a
    # checkpoint takes seconds to write and flush) needs several cycles in the window.
    min_window_s: float = 5.0

    def phase(self, name: PhaseName) -> Phase:
        return self.fault if name == "fault" else self.fix


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario(
            name="readahead",
            cause="readahead_mismatch",
            title="Shards streamed from an IOPS-throttled device with read_ahead_kb 128",
            fault=Phase(read_ahead_kb=128),
            fix=Phase(read_ahead_kb=4096),
            fix_note="read_ahead_kb 4096 on the data device, loader workers restarted (files reopened)",
            drop_behind=True,
            read_iops=200,
        ),
        Scenario(
            name="starvation",
            cause="dataloader_starvation",
            title="No loader workers (PyTorch's default) for CPU-heavy preprocessing, a core left idle",
            fault=Phase(workers=0),
            fix=Phase(workers=2),
            fix_note="two loader workers instead of loading in the training process",
            cold=False,
            preprocess=2,
        ),
        Scenario(
            name="contention",
            cause="cpu_contention",
            title="Six CPU hogs beside the job take the cores its two loader workers need",
            fault=Phase(workers=2, hogs=6),
            fix=Phase(workers=6, hogs=6),
            fix_note="six loader workers: the job's share of the contended CPU grows with its runnable tasks",
            cold=False,
            preprocess=2,
        ),
        Scenario(
            name="writeback",
            cause="writeback_burst",
            title="A checkpoint writer floods the data device with dirty pages beside the reader",
            fault=Phase(writer=True, scheduler="none"),
            # Small enough that the writer is throttled to a share of the device, not the
            # device to the writer. Measured on the testbed device (samples/s, 8 s windows,
            # fault vs fix): 32/64 MiB +12-17 %, 16/32 MiB +10-27 %, 8/16 MiB +25-56 %.
            fix=Phase(
                writer=True,
                scheduler="none",
                sysctls={"vm.dirty_background_bytes": "8388608", "vm.dirty_bytes": "16777216"},
            ),
            fix_note="vm.dirty_background_bytes 8 MiB and vm.dirty_bytes 16 MiB: the checkpoint is "
            "written in small steps, throttled, instead of flooding the reader's device",
            drop_behind=True,
            min_window_s=8.0,
            image_mb=4096,
        ),
        Scenario(
            name="reclaim",
            cause="memory_reclaim",
            title="The job under a memory cgroup too small for its data set's page cache",
            # Headroom below the data set's 512 MiB: every epoch is read again, through
            # reclaim. Much less and the job's own growth (batches in shared memory) meets
            # the OOM killer instead.
            fault=Phase(mem_headroom_mb=256),
            fix=Phase(mem_headroom_mb=1536, warm=True),
            fix_note="memory cgroup limit raised by 1.25 GiB, so the data set stays cached",
            data_mb=512,
            image_mb=2048,
            read_bps=48 * 1024 * 1024,
        ),
    )
}
