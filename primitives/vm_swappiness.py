"""vm.swappiness: how readily reclaim swaps anonymous memory rather than dropping page cache."""

from core.diagnosis import Category
from primitives.base import IntRange, StepLimit, TargetKind, Tier
from primitives.kinds.sysctl import Sysctl

PRIMITIVE = Sysctl(
    id="vm.swappiness",
    description="Relative cost of swapping anonymous pages against dropping page cache in reclaim",
    tier=Tier.LOW,
    target=TargetKind.NONE,
    value=IntRange(0, 200, ""),
    step=StepLimit(delta=40),
    causes=(Category.MEMORY_RECLAIM,),
    risk="Lower: the trainer's and loaders' memory stays resident, page cache is dropped first and "
    "data may be read again; 0 can bring the OOM killer sooner under pressure.",
    path="/proc/sys/vm/swappiness",
)
