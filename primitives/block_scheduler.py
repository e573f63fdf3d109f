"""block.scheduler: the I/O scheduler of one device."""

from core.diagnosis import Category
from primitives.base import Choice, TargetKind, Tier
from primitives.kinds.sysfs import BlockQueue

PRIMITIVE = BlockQueue(
    id="block.scheduler",
    description="I/O scheduler of a block device",
    tier=Tier.MEDIUM,
    target=TargetKind.BLOCK_DEVICE,
    value=Choice(("none", "mq-deadline", "kyber", "bfq")),
    step=None,
    causes=(Category.STORAGE_LATENCY, Category.WRITEBACK_BURST),
    risk="Affects every reader and writer of the device: mq-deadline favours reads over a write "
    "flood, none has the least overhead on fast NVMe; bfq costs CPU. Switching resets nr_requests.",
    attr="scheduler",
    select=True,
    also_saves=("nr_requests",),
)
