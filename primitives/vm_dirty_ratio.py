"""vm.dirty_ratio: share of reclaimable memory that may be dirty before writers are throttled."""

from core.diagnosis import Category
from primitives.base import IntRange, StepLimit, TargetKind, Tier
from primitives.kinds.sysctl import DirtyPair

PRIMITIVE = DirtyPair(
    id="vm.dirty_ratio",
    description="Dirty page cache (% of reclaimable memory) at which writers must write back themselves",
    tier=Tier.LOW,
    target=TargetKind.NONE,
    value=IntRange(2, 60, "%"),
    step=StepLimit(delta=10, factor=4, from_zero=True),
    causes=(Category.WRITEBACK_BURST,),
    risk="Lower: a writer (a checkpoint) is throttled sooner and takes longer; higher: bigger bursts "
    "of dirty pages to flush at once. Setting it zeroes vm.dirty_bytes.",
    path="/proc/sys/vm/dirty_ratio",
    partner="/proc/sys/vm/dirty_bytes",
    ratio_path="/proc/sys/vm/dirty_ratio",
)
