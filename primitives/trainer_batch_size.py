"""trainer.batch_size: the per-step batch size of a job."""

from core.diagnosis import Category
from primitives.base import IntRange, Reach, StepLimit, TargetKind, Tier
from primitives.kinds.trainer import TrainerKnob

PRIMITIVE = TrainerKnob(
    id="trainer.batch_size",
    description="Per-step batch size of a job",
    tier=Tier.HIGH,
    target=TargetKind.JOB,
    value=IntRange(1, 65536, "samples"),
    step=StepLimit(factor=2),
    causes=(Category.HOST_OVERHEAD, Category.COMM_WAIT),
    risk="Changes the optimisation itself (learning-rate schedule, convergence) and GPU memory use: "
    "only with the framework's cooperation and a person's approval.",
    reaches=Reach.NEXT_STEP,
    reaches_note="takes effect at the step boundary the trainer chooses",
    proposable=False,
)
