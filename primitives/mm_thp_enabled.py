"""mm.thp_enabled: when transparent huge pages are used."""

from core.diagnosis import Category
from primitives.base import Choice, TargetKind, Tier
from primitives.kinds.sysfs import SelectFile

PRIMITIVE = SelectFile(
    id="mm.thp_enabled",
    description="Transparent huge pages: always, only for madvise(MADV_HUGEPAGE) regions, or never",
    tier=Tier.MEDIUM,
    target=TargetKind.NONE,
    value=Choice(("always", "madvise", "never")),
    step=None,
    causes=(Category.MEMORY_RECLAIM,),
    risk="always: fewer TLB misses but memory bloat and compaction stalls for every process; "
    "never: no huge pages even for code that asks.",
    path="/sys/kernel/mm/transparent_hugepage/enabled",
)
