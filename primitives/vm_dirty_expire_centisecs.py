"""vm.dirty_expire_centisecs: age at which dirty data is old enough for periodic writeback."""

from core.diagnosis import Category
from primitives.base import IntRange, StepLimit, TargetKind, Tier
from primitives.kinds.sysctl import Sysctl

PRIMITIVE = Sysctl(
    id="vm.dirty_expire_centisecs",
    description="Age (1/100 s) after which dirty data is written back by the periodic flush",
    tier=Tier.LOW,
    target=TargetKind.NONE,
    value=IntRange(500, 30000, "cs"),
    step=StepLimit(factor=4),
    causes=(Category.WRITEBACK_BURST,),
    risk="Shorter: data rewritten soon after is written more than once; longer: more dirty data "
    "waits, and more is lost in a crash.",
    path="/proc/sys/vm/dirty_expire_centisecs",
)
