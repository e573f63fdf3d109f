"""loader.workers: the number of data loader worker processes of a job."""

from dataclasses import dataclass

from core.diagnosis import Category
from core.knob import KnobValue, Target
from primitives.base import IntRange, Reach, StepLimit, TargetKind, Tier
from primitives.host import Host
from primitives.kinds.trainer import TrainerKnob


@dataclass(frozen=True, kw_only=True)
class LoaderWorkers(TrainerKnob):
    def check(self, host: Host, target: Target, value: KnobValue) -> str | None:
        cpus = host.online_cpus()
        # More workers than CPUs only queues them behind each other and the trainer.
        if cpus is not None and int(value) > len(cpus):
            return f"{value} workers is more than the {len(cpus)} CPUs online"
        return None


PRIMITIVE = LoaderWorkers(
    id="loader.workers",
    description="Data loader worker processes of a job",
    tier=Tier.LOW,
    target=TargetKind.JOB,
    value=IntRange(0, 256, "workers"),
    step=StepLimit(delta=8, factor=4),
    causes=(Category.DATALOADER_STARVATION, Category.LOADER_OVERSUBSCRIPTION, Category.CPU_CONTENTION),
    risk="More: more CPU and memory (each worker holds prefetched batches); past the cores they "
    "crowd out the trainer's threads. Fewer: batches may come too slowly.",
    reaches=Reach.NEW_WORKERS,
    reaches_note="the hook restarts the loader's workers with the new count",
)
