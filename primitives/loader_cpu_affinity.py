"""loader.cpu_affinity: the CPUs a job's data loader workers may run on."""

from dataclasses import dataclass

from core.cpulist import parse_cpulist
from core.diagnosis import Category
from core.knob import KnobValue, Target
from primitives.base import CpuList, Reach, TargetKind, Tier
from primitives.host import Host
from primitives.kinds.trainer import TrainerKnob


@dataclass(frozen=True, kw_only=True)
class LoaderAffinity(TrainerKnob):
    def check(self, host: Host, target: Target, value: KnobValue) -> str | None:
        try:
            wanted = parse_cpulist(str(value))
        except ValueError as e:
            return str(e)
        online = host.online_cpus()
        if online is not None and not wanted <= online:
            return f"CPUs {sorted(wanted - online)} are not online"
        return None


PRIMITIVE = LoaderAffinity(
    id="loader.cpu_affinity",
    description="CPUs a job's data loader workers are pinned to",
    tier=Tier.LOW,
    target=TargetKind.JOB,
    value=CpuList(),
    step=None,
    causes=(Category.NUMA_REMOTE, Category.CPU_CONTENTION),
    risk="Pinning to the GPU's NUMA node keeps loader memory local; too few CPUs starves the loader, "
    "and CPUs shared with the trainer's threads contend.",
    reaches=Reach.NEW_WORKERS,
    reaches_note="the hook re-pins running workers, and new ones start pinned",
)
