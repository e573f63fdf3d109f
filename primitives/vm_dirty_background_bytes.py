"""vm.dirty_background_bytes: dirty page cache, in bytes, at which background writeback starts."""

from core.diagnosis import Category
from primitives.base import IntRange, StepLimit, TargetKind, Tier
from primitives.kinds.sysctl import DirtyPair

_MIB = 1024 * 1024

PRIMITIVE = DirtyPair(
    id="vm.dirty_background_bytes",
    description="Dirty page cache (bytes) at which background writeback starts",
    tier=Tier.LOW,
    target=TargetKind.NONE,
    # Floor 8 MiB: the smallest value measured to help (the testbed's writeback fix, 8/16 MiB on a
    # 1.5 GB/s flush, evals/testbed/scenarios.py); the kernel itself accepts two pages.
    value=IntRange(8 * _MIB, 32 * 1024 * _MIB, "bytes"),
    step=StepLimit(factor=4, from_zero=True),
    causes=(Category.WRITEBACK_BURST,),
    risk="Lower: writeback starts earlier and in smaller pieces. Setting it zeroes "
    "vm.dirty_background_ratio.",
    path="/proc/sys/vm/dirty_background_bytes",
    partner="/proc/sys/vm/dirty_background_ratio",
    ratio_path="/proc/sys/vm/dirty_background_ratio",
)
