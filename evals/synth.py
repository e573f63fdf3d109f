"""Synthetic incidents: a healthy training host plus one physically coherent fault.

Every parameter is drawn from a seed (host size, GPUs, devices, jobs, sampling interval,
onset or a fault present throughout, severity, noise, distractors), so a sweep over
seeds exercises the engine on hosts it was never tuned on. `evals.synth_faults` holds
what each fault does to the metrics; this module holds the healthy host and assembly.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from core.diagnosis import Category
from core.incident import Incident
from core.sample import Sample
from evals.synth_faults import DISTRACTORS, FAULTS, Ctx

GPU_MODELS: dict[str, tuple[float, float]] = {
    # model: (max SM clock MHz, default power limit W)
    "H100": (1980.0, 700.0),
    "H200": (1980.0, 700.0),
    "A100": (1410.0, 400.0),
    "L40S": (2520.0, 350.0),
    "A10": (1695.0, 150.0),
}
JOB_NAMES = ("llama-ft", "resnet50", "sdxl", "bert-ft", "vit-l", "whisper", "gpt-neo", "t5-xl")
DEV_NAMES = (
    "nvme0n1",
    "nvme1n1",
    "nvme2n1",
    "nvme3n1",
    "vdb",
    "vdc",
    "sdb",
    "md0",
    "nvme4n1",
    "nvme5n1",
    "nvme6n1",
    "nvme7n1",
)


@dataclass
class SynthJob:
    name: str
    gpus: list[int]
    workers: int
    pid: int
    step_ms: float
    batch: int


@dataclass
class Scenario:
    category: Category
    seed: int
    cpus: int
    numa_nodes: int
    gpus: int
    gpu_model: str
    devices: list[str]
    jobs: list[SynthJob]
    interval_s: float
    samples: int
    onset_t: float | None  # None: the fault is present for the whole window
    end_t: float | None  # None: the fault lasts to the end
    severity: float
    noise: float
    distractors: list[str] = field(default_factory=list)
    variant: str = ""
    # Parts of metric names the host did not measure (no eBPF, no trainer hook, ...).
    dropped: list[str] = field(default_factory=list)
    knobs: dict[str, float | int | str] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"synth-{self.category.value.replace('_', '-')}-{self.seed}"


# Which faults can stand for the whole window (a setting, a placement) and which are episodes.
_EPISODIC = {
    Category.WRITEBACK_BURST,
    Category.MEMORY_RECLAIM,
    Category.CPU_CONTENTION,
    Category.STORAGE_LATENCY,
}
_NEEDS_GPUS = {
    Category.GPU_POWER_THROTTLE,
    Category.GPU_THERMAL_THROTTLE,
    Category.PCIE_BOTTLENECK,
    Category.COMM_WAIT,
    Category.HOST_OVERHEAD,
}


# What a host misses without one of its sources; `degraded` scenarios lose one of them.
DROPOUTS: dict[str, list[str]] = {
    "no_trainer_hook": ["trainer."],
    "no_ebpf": [".lat_p", "runq_lat", ".offcpu_frac", "mem.direct_reclaim", "mem.dirty_throttle"],
    "no_psi": ["psi."],
    "no_pcie_counters": [".pcie_"],
}


def scenario(category: Category, seed: int, *, degraded: bool = False, **overrides: Any) -> Scenario:
    """Random but coherent parameters for one fault; keyword arguments pin any of them.

    `degraded` also removes one source's metrics at random, as on a host without eBPF,
    without the trainer hook or without PSI."""
    rng = random.Random(f"{category.value}:{seed}")
    cpus = rng.choice([8, 16, 24, 32, 48, 64, 96, 128, 192, 224])
    gpus = rng.choice([0, 1, 1, 2, 4, 4, 8, 8]) if category not in _NEEDS_GPUS else rng.choice([1, 2, 4, 8])
    if category == Category.COMM_WAIT:
        gpus = max(gpus, 2)
    if category == Category.LOADER_OVERSUBSCRIPTION:
        # A crowd of workers costs a trainer that computes on a GPU; where it computes on the same
        # cores the work per sample is the same however it is split (rules_cpu.oversubscribed).
        gpus = max(gpus, 1)
    if category == Category.HOST_OVERHEAD:
        gpus = rng.choice([1, 1, 2])
    numa = rng.choice([1, 2, 2, 4]) if category != Category.NUMA_REMOTE else rng.choice([2, 2, 4, 8])
    numa = min(numa, max(1, cpus // 8))
    model = rng.choice(sorted(GPU_MODELS))
    devices = rng.sample(DEV_NAMES[:8], rng.choice([1, 1, 2, 3]))
    interval = rng.choice([1.0, 1.0, 2.0, 5.0])
    samples = rng.randint(60, 180) if interval < 5 else rng.randint(40, 90)
    n_jobs = 1 if gpus <= 1 else rng.choice([1, 1, 2])
    jobs = _jobs(rng, category, cpus, gpus, n_jobs)
    duration = (samples - 1) * interval
    episodic = category in _EPISODIC or rng.random() < 0.5
    onset: float | None = None
    end: float | None = None
    if episodic and category != Category.NONE:
        onset = round(rng.uniform(0.25, 0.6) * duration / interval) * interval
        if rng.random() < 0.5:
            end = min(duration, onset + round(rng.uniform(0.15, 0.3) * duration / interval) * interval)
    sc = Scenario(
        category=category,
        seed=seed,
        cpus=cpus,
        numa_nodes=numa,
        gpus=gpus,
        gpu_model=model,
        devices=devices,
        jobs=jobs,
        interval_s=interval,
        samples=samples,
        onset_t=onset,
        end_t=end,
        severity=rng.uniform(0.45, 1.0),
        noise=rng.uniform(0.6, 1.4),
        distractors=rng.sample(
            sorted(DISTRACTORS), rng.choice([0, 1, 1, 2] if category != Category.NONE else [1, 2])
        ),
        variant=rng.choice(["small", "small", "large"]) if category == Category.READAHEAD_MISMATCH else "",
    )
    if degraded:
        # Never the source a fault can only be seen with: that incident would be unknowable.
        defining = {Category.PCIE_BOTTLENECK: "no_pcie_counters"}
        sc.dropped = list(DROPOUTS[rng.choice(sorted(k for k in DROPOUTS if k != defining.get(category)))])
    for k, v in overrides.items():
        if not hasattr(sc, k):
            raise TypeError(f"unknown scenario parameter {k!r}")
        setattr(sc, k, v)
    if "jobs" not in overrides and ("cpus" in overrides or "gpus" in overrides):
        sc.jobs = _jobs(rng, category, sc.cpus, sc.gpus, 1 if sc.gpus <= 1 else n_jobs)
    sc.knobs = _knobs(sc, rng)
    return sc


def _jobs(rng: random.Random, category: Category, cpus: int, gpus: int, n: int) -> list[SynthJob]:
    names = rng.sample(JOB_NAMES, n)
    per = max(1, gpus // n) if gpus else 0
    out = []
    for k, name in enumerate(names):
        share = cpus / n
        if category == Category.LOADER_OVERSUBSCRIPTION:
            # From twice the cores up: at one and a half per core the measured cost stays under the
            # 20 % that makes a cause (agent/diagnosis/rules_cpu.py, oversubscribed).
            workers = int(share * rng.uniform(2.0, 4.0))
        elif category == Category.DATALOADER_STARVATION:
            workers = max(1, int(share * rng.uniform(0.02, 0.1)))
        elif category == Category.CPU_CONTENTION:
            workers = max(1, int(share * rng.uniform(0.08, 0.35)))
        else:
            workers = max(2, int(share * rng.uniform(0.15, 0.5)))
        out.append(
            SynthJob(
                name,
                list(range(k * per, (k + 1) * per)),
                workers,
                rng.randint(1000, 99999),
                rng.uniform(120.0, 600.0),
                rng.choice([32, 64, 128, 256, 512]),
            )
        )
    return out


def _knobs(sc: Scenario, rng: random.Random) -> dict[str, float | int | str]:
    knobs: dict[str, float | int | str] = {
        "vm.dirty_ratio": 20,
        "vm.dirty_background_ratio": 10,
        "vm.dirty_bytes": 0,
        "vm.dirty_background_bytes": 0,
        "vm.dirty_writeback_centisecs": 500,
        "vm.dirty_expire_centisecs": 3000,
        "vm.swappiness": 60,
        "vm.min_free_kbytes": 67584,
        "kernel.numa_balancing": rng.choice([0, 1]),
        "kernel.sched_autogroup_enabled": 1,
        "cpufreq.governor": "performance",
        "mm.thp_enabled": "madvise",
        "mm.thp_defrag": "madvise",
    }
    for d in sc.devices:
        ra = (
            4096
            if sc.category != Category.READAHEAD_MISMATCH
            else (rng.choice([8, 16, 32, 64, 128]) if sc.variant == "small" else rng.choice([8192, 16384]))
        )
        knobs[f"block.read_ahead_kb@{d}"] = ra
        knobs[f"block.nr_requests@{d}"] = 256
        knobs[f"block.scheduler@{d}"] = rng.choice(["none", "mq-deadline"])
    for j in sc.jobs:
        knobs[f"loader.workers@{j.name}"] = j.workers
        knobs[f"loader.prefetch_factor@{j.name}"] = 2
    limit = GPU_MODELS[sc.gpu_model][1]
    for g in range(sc.gpus):
        knobs[f"gpu.power_limit_w@{g}"] = limit
    return knobs


def render(sc: Scenario) -> list[Sample]:
    """The series: a healthy host each step, then the fault and distractors applied on top."""
    rng = random.Random(f"render:{sc.category.value}:{sc.seed}")
    ctx = Ctx.build(sc, rng, GPU_MODELS[sc.gpu_model])
    fault = FAULTS[sc.category]
    distractors = [DISTRACTORS[d](ctx) for d in sc.distractors]
    out: list[Sample] = []
    for k in range(sc.samples):
        t = k * sc.interval_s
        m = ctx.healthy(t)
        fault(ctx, m, t)
        for d in distractors:
            d(m, t)
        ctx.finish(m)
        kept = {name: round(v, 3) for name, v in m.items() if not any(part in name for part in sc.dropped)}
        out.append(Sample(t=t, m=kept))
    return out


def incident(
    sc: Scenario,
    *,
    incident_id: str | None = None,
    title: str | None = None,
    tags: list[str] | None = None,
    truth: dict[str, Any] | None = None,
    samples: list[Sample] | None = None,
) -> Incident:
    """The scenario as a v1 incident; the suite builder gives its own id, title, tags and truth."""
    data = {
        "schema_version": 1,
        "id": incident_id or sc.id,
        "title": title or f"Synthetic {sc.category.value} on a {sc.cpus}-core host with {sc.gpus} GPUs",
        "tags": tags
        if tags is not None
        else [
            "synthetic",
            sc.category.value if sc.category != Category.NONE else "no-fault",
            *(["distractor"] if sc.distractors else []),
        ],
        "host": {
            "cpus": sc.cpus,
            "numa_nodes": sc.numa_nodes,
            "gpus": sc.gpus,
            "gpu_model": sc.gpu_model,
            "kernel": "6.8.0",
            "block_devices": list(sc.devices),
        },
        "interval_s": sc.interval_s,
        "knobs": dict(sc.knobs),
        "jobs": [
            {"name": j.name, "pid": j.pid, "gpus": j.gpus, "loader_workers": j.workers} for j in sc.jobs
        ],
        "events": [],
        "question": "Why are my GPUs idle?",
        "truth": truth if truth is not None else actions_for(sc),
    }
    inc = Incident.model_validate(data)
    inc.samples = samples if samples is not None else render(sc)
    return inc


def write_incident(inc: Incident, parent: Path) -> Path:
    """Write an incident folder in the spec's format; returns the folder."""
    folder = parent / inc.id
    folder.mkdir(parents=True, exist_ok=True)
    header = inc.model_dump(mode="json", exclude_none=True, exclude={"samples"})
    (folder / "incident.yaml").write_text(yaml.safe_dump(header, sort_keys=False))
    with open(folder / "series.jsonl", "w") as f:
        for s in inc.samples:
            f.write(json.dumps({"t": s.t, "m": s.m}) + "\n")
    return folder


def actions_for(sc: Scenario) -> dict[str, Any]:
    """Ground truth for the scenario: the cause and what a correct agent may do about it."""
    job = sc.jobs[0].name if sc.jobs else None
    dev = sc.devices[0]
    acts: list[list[dict[str, Any]]] = []
    cat = sc.category
    if cat == Category.WRITEBACK_BURST:
        acts = [
            [{"primitive": "vm.dirty_background_ratio", "min": 1, "max": 5}],
            [{"primitive": "vm.dirty_ratio", "min": 2, "max": 10}],
        ]
    elif cat == Category.MEMORY_RECLAIM:
        acts = [[{"primitive": "vm.min_free_kbytes", "min": 2 * 67584, "max": 16 * 67584}]]
    elif cat == Category.READAHEAD_MISMATCH:
        lo, hi = (1024, 16384) if sc.variant == "small" else (128, 1024)
        acts = [[{"primitive": "block.read_ahead_kb", "target": dev, "min": lo, "max": hi}]]
    elif cat == Category.DATALOADER_STARVATION and job:
        w = sc.jobs[0].workers
        acts = [[{"primitive": "loader.workers", "target": job, "min": w + 1, "max": sc.cpus}]]
    elif cat == Category.LOADER_OVERSUBSCRIPTION and job:
        acts = [
            [{"primitive": "loader.workers", "target": job, "min": 1, "max": max(1, sc.cpus // len(sc.jobs))}]
        ]
    elif cat == Category.NUMA_REMOTE and job:
        acts = [
            [{"primitive": "loader.cpu_affinity", "target": job}],
            [{"primitive": "kernel.numa_balancing", "value": 1}],
        ]
    elif cat == Category.STORAGE_LATENCY and job:
        acts = [[{"primitive": "loader.prefetch_factor", "target": job, "min": 4, "max": 16}]]
    truth: dict[str, Any] = {
        "root_causes": [cat.value],
        "noop_correct": not acts,
        "acceptable_actions": acts,
        "forbidden_actions": [{"primitive": "trainer.batch_size"}],
    }
    if sc.onset_t is not None and cat != Category.NONE:
        truth["onset_t"] = sc.onset_t
    return truth
