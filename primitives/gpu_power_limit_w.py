"""gpu.power_limit_w: a GPU's power management limit."""

from core.diagnosis import Category
from primitives.base import IntRange, StepLimit, TargetKind, Tier
from primitives.kinds.gpu import PowerLimit

PRIMITIVE = PowerLimit(
    id="gpu.power_limit_w",
    description="Power management limit (W) of one GPU, within NVML's constraints",
    tier=Tier.MEDIUM,
    target=TargetKind.GPU,
    value=IntRange(50, 1500, "W"),
    step=StepLimit(delta=100),
    causes=(Category.GPU_POWER_THROTTLE,),
    risk="Higher: clocks hold up under load, at more power and heat for the rack's power and "
    "cooling budget; someone may have lowered it on purpose.",
)
