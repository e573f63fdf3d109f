"""vm.dirty_background_ratio: share of reclaimable memory dirty before background writeback starts."""

from core.diagnosis import Category
from primitives.base import IntRange, StepLimit, TargetKind, Tier
from primitives.kinds.sysctl import DirtyPair

PRIMITIVE = DirtyPair(
    id="vm.dirty_background_ratio",
    description="Dirty page cache (% of reclaimable memory) at which background writeback starts",
    tier=Tier.LOW,
    target=TargetKind.NONE,
    value=IntRange(1, 50, "%"),
    step=StepLimit(delta=10, factor=4, from_zero=True),
    causes=(Category.WRITEBACK_BURST,),
    risk="Lower: writeback starts earlier and in smaller pieces, a little more device traffic for "
    "data that would have been rewritten. Setting it zeroes vm.dirty_background_bytes.",
    path="/proc/sys/vm/dirty_background_ratio",
    partner="/proc/sys/vm/dirty_background_bytes",
    ratio_path="/proc/sys/vm/dirty_background_ratio",
)
