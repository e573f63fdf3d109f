"""What a window measured: which GPUs, block devices and jobs its metric names mention."""

from __future__ import annotations

from dataclasses import dataclass, field

from agent.diagnosis.baseline import Frame
from core.report import HealthReport
from core.vocabulary import parse


@dataclass
class Layout:
    gpus: list[int] = field(default_factory=list)
    devs: list[str] = field(default_factory=list)
    jobs: list[str] = field(default_factory=list)
    families: set[str] = field(default_factory=set)
    cpus: int = 1
    numa_nodes: int = 1
    host_gpus: int = 0
    gpu_model: str | None = None
    loader_workers: dict[str, int] = field(default_factory=dict)
    job_gpus: dict[str, list[int]] = field(default_factory=dict)

    def has_family(self, family: str) -> bool:
        """`family` is a name with its device/GPU/job removed, e.g. `io.lat_p99_us`."""
        return family in self.families

    @property
    def total_workers(self) -> int | None:
        if not self.loader_workers:
            return None
        return sum(self.loader_workers.values())

    @property
    def gpus_in_use(self) -> int:
        """GPUs doing the training: the jobs' own, else what the host reports or the metrics show."""
        in_jobs = {g for gs in self.job_gpus.values() for g in gs}
        return len(in_jobs) or len(self.gpus) or self.host_gpus


def layout_of(frame: Frame, report: HealthReport) -> Layout:
    gpus: set[int] = set()
    devs: set[str] = set()
    jobs: set[str] = set()
    families: set[str] = set()
    for name in frame.names:
        p = parse(name)
        if p is None:
            continue
        families.add(p.definition.family)
        if p.gpu is not None:
            gpus.add(p.gpu)
        if p.dev is not None:
            devs.add(p.dev)
        if p.job is not None:
            jobs.add(p.job)
    workers: dict[str, int] = {}
    job_gpus: dict[str, list[int]] = {}
    for j in report.jobs:
        job_gpus[j.name] = list(j.gpus)
        if j.loader_workers is not None:
            workers[j.name] = j.loader_workers
    # The knob is the operator's setting; it wins over the job header when both exist.
    for key, value in report.knobs.items():
        if key.startswith("loader.workers@") and isinstance(value, int | float):
            workers[key.split("@", 1)[1]] = int(value)
    return Layout(
        gpus=sorted(gpus),
        devs=sorted(devs),
        jobs=sorted(jobs),
        families=families,
        cpus=report.host.cpus,
        numa_nodes=report.host.numa_nodes,
        host_gpus=report.host.gpus,
        gpu_model=report.host.gpu_model,
        loader_workers=workers,
        job_gpus=job_gpus,
    )
