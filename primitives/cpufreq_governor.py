"""cpufreq.governor: the CPU frequency governor."""

from core.diagnosis import Category
from primitives.base import Choice, TargetKind, Tier
from primitives.kinds.cpufreq import Governor

PRIMITIVE = Governor(
    id="cpufreq.governor",
    description="CPU frequency scaling governor, of every CPU or of a CPU list",
    tier=Tier.LOW,
    target=TargetKind.CPUSET,
    # userspace is left out: it needs a frequency written too, which no primitive owns.
    value=Choice(("performance", "schedutil", "ondemand", "conservative", "powersave")),
    step=None,
    causes=(Category.HOST_OVERHEAD, Category.DATALOADER_STARVATION),
    risk="performance: lower latency for the trainer's launch thread and loaders, more power and "
    "heat; the others save power and ramp up late on bursty work.",
)
