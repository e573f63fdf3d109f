"""mm.thp_defrag: whether a huge page allocation may stall to compact memory."""

from core.diagnosis import Category
from primitives.base import Choice, TargetKind, Tier
from primitives.kinds.sysfs import SelectFile

PRIMITIVE = SelectFile(
    id="mm.thp_defrag",
    description="Transparent huge page defragmentation: who stalls to compact memory",
    tier=Tier.LOW,
    target=TargetKind.NONE,
    value=Choice(("always", "defer", "defer+madvise", "madvise", "never")),
    step=None,
    causes=(Category.MEMORY_RECLAIM,),
    risk="always: allocations stall in direct compaction; defer/never: fewer huge pages, no stalls.",
    path="/sys/kernel/mm/transparent_hugepage/defrag",
)
