"""kernel.numa_balancing: automatic NUMA balancing (migrate pages and tasks toward each other)."""

from core.diagnosis import Category
from primitives.base import IntRange, TargetKind, Tier
from primitives.kinds.sysctl import Sysctl

PRIMITIVE = Sysctl(
    id="kernel.numa_balancing",
    description="Automatic NUMA balancing: 1 on, 0 off",
    tier=Tier.LOW,
    target=TargetKind.NONE,
    # 2 and 3 select memory tiering, a different feature: not offered.
    value=IntRange(0, 1, ""),
    step=None,
    causes=(Category.NUMA_REMOTE,),
    risk="On: remote accesses fall over time at the cost of page-fault sampling and migrations; "
    "off: pinned jobs keep their placement without that overhead.",
    path="/proc/sys/kernel/numa_balancing",
)
