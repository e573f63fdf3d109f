"""vm.dirty_bytes: dirty page cache, in bytes, at which writers are throttled (instead of vm.dirty_ratio)."""

from core.diagnosis import Category
from primitives.base import IntRange, StepLimit, TargetKind, Tier
from primitives.kinds.sysctl import DirtyPair

_MIB = 1024 * 1024

PRIMITIVE = DirtyPair(
    id="vm.dirty_bytes",
    description="Dirty page cache (bytes) at which writers must write back themselves",
    tier=Tier.LOW,
    target=TargetKind.NONE,
    # Floor 16 MiB: the smallest value measured to help (the testbed's writeback fix, 8/16 MiB on a
    # 1.5 GB/s flush, evals/testbed/scenarios.py); the kernel itself accepts two pages.
    value=IntRange(16 * _MIB, 64 * 1024 * _MIB, "bytes"),
    step=StepLimit(factor=4, from_zero=True),
    causes=(Category.WRITEBACK_BURST,),
    risk="Lower: a writer (a checkpoint) is throttled sooner and takes longer. Setting it zeroes "
    "vm.dirty_ratio; an absolute limit does not grow with the memory of a bigger host.",
    path="/proc/sys/vm/dirty_bytes",
    partner="/proc/sys/vm/dirty_ratio",
    ratio_path="/proc/sys/vm/dirty_ratio",
)
