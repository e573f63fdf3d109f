"""vm.min_free_kbytes: free memory the kernel keeps, so that kswapd starts before allocations stall."""

from dataclasses import dataclass

from core.diagnosis import Category
from core.knob import KnobValue, Target
from primitives.base import IntRange, StepLimit, TargetKind, Tier
from primitives.host import Host
from primitives.kinds.sysctl import Sysctl

# The reserve is taken from everyone; past a few percent of memory it causes the
# reclaim (or OOM) it is meant to prevent.
MAX_SHARE = 0.05


@dataclass(frozen=True, kw_only=True)
class MinFreeKbytes(Sysctl):
    def check(self, host: Host, target: Target, value: KnobValue) -> str | None:
        total = host.mem_total_kb()
        if total is not None and int(value) > total * MAX_SHARE:
            return f"{value} kB is more than {MAX_SHARE:.0%} of memory ({total} kB)"
        return None


PRIMITIVE = MinFreeKbytes(
    id="vm.min_free_kbytes",
    description="Free memory (kB) the kernel keeps in reserve; raises the kswapd watermarks",
    tier=Tier.MEDIUM,
    target=TargetKind.NONE,
    value=IntRange(16384, 4 * 1024 * 1024, "kB"),
    step=StepLimit(factor=2),
    causes=(Category.MEMORY_RECLAIM,),
    risk="Higher: kswapd reclaims earlier so tasks stall less in direct reclaim, but the reserve is "
    "memory nobody may use; too high brings reclaim storms or the OOM killer. Capped at 5% of memory.",
    path="/proc/sys/vm/min_free_kbytes",
)
