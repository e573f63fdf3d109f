"""kernel.sched_autogroup_enabled: group tasks by session for CPU fairness."""

from core.diagnosis import Category
from primitives.base import IntRange, TargetKind, Tier
from primitives.kinds.sysctl import Sysctl

PRIMITIVE = Sysctl(
    id="kernel.sched_autogroup_enabled",
    description="Session autogroups in the CFS scheduler: 1 on, 0 off",
    tier=Tier.LOW,
    target=TargetKind.NONE,
    value=IntRange(0, 1, ""),
    step=None,
    causes=(Category.CPU_CONTENTION,),
    risk="With autogroup each session gets an equal CPU share whatever its thread count: a trainer "
    "and its many loader threads in one session can be held to the share of a single shell.",
    path="/proc/sys/kernel/sched_autogroup_enabled",
)
