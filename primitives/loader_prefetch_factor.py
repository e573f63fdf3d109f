"""loader.prefetch_factor: batches each loader worker prepares ahead."""

from core.diagnosis import Category
from primitives.base import IntRange, Reach, StepLimit, TargetKind, Tier
from primitives.kinds.trainer import TrainerKnob

PRIMITIVE = TrainerKnob(
    id="loader.prefetch_factor",
    description="Batches each data loader worker keeps ready ahead of the trainer",
    tier=Tier.LOW,
    target=TargetKind.JOB,
    value=IntRange(1, 16, "batches"),
    step=StepLimit(delta=4, factor=2),
    causes=(Category.DATALOADER_STARVATION, Category.STORAGE_LATENCY),
    risk="Higher: rides out slow reads, at the cost of host memory (workers × factor batches).",
    reaches=Reach.NEW_WORKERS,
    reaches_note="the hook restarts the loader's workers with the new factor",
)
