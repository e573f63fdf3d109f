"""vm.dirty_writeback_centisecs: how often the flusher threads wake to write old dirty data."""

from core.diagnosis import Category
from primitives.base import IntRange, StepLimit, TargetKind, Tier
from primitives.kinds.sysctl import Sysctl

PRIMITIVE = Sysctl(
    id="vm.dirty_writeback_centisecs",
    description="Interval (1/100 s) between periodic writeback wake-ups",
    tier=Tier.LOW,
    target=TargetKind.NONE,
    # 0 would turn periodic writeback off altogether: not offered.
    value=IntRange(100, 6000, "cs"),
    step=StepLimit(factor=5),
    causes=(Category.WRITEBACK_BURST,),
    risk="Shorter: more frequent, smaller flushes and a little more CPU; longer: larger bursts.",
    path="/proc/sys/vm/dirty_writeback_centisecs",
)
