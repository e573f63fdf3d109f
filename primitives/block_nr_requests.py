"""block.nr_requests: how many requests a device's queue may hold."""

from core.diagnosis import Category
from primitives.base import IntRange, StepLimit, TargetKind, Tier
from primitives.kinds.sysfs import BlockQueue

PRIMITIVE = BlockQueue(
    id="block.nr_requests",
    description="Request queue depth of a block device (per hardware queue)",
    tier=Tier.LOW,
    target=TargetKind.BLOCK_DEVICE,
    value=IntRange(16, 2048, "requests"),
    step=StepLimit(factor=4),
    causes=(Category.STORAGE_LATENCY, Category.WRITEBACK_BURST),
    risk="Deeper: more throughput on devices with deep internal queues, but a read waits behind more "
    "queued writes; shallower: reads overtake writeback sooner, less throughput. Reset by a "
    "scheduler change.",
    attr="nr_requests",
)
