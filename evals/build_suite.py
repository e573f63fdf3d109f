"""Write the bundled synthetic incidents into evals/incidents/, deterministically from seeds.

    .venv/bin/python -m evals.build_suite [--out evals/incidents] [--check]

Each fault of the taxonomy three times on different hosts (size, GPUs, NUMA nodes, devices,
interval, onset, severity drawn by `evals.synth` from the seed), some on hosts missing a
source, healthy hosts with and without distractors. The truth is labelled by
`evals.suite_truth` from what was injected. Folders this script did not write (the spec
examples, recordings from real hosts) are left alone; `--check` only reports whether the
folders on disk match what the seeds give.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.diagnosis import Category
from core.incident import Incident
from evals.suite_truth import truth
from evals.synth import DROPOUTS, Scenario, incident, render, scenario, write_incident

PREFIX = "syn-"
DEFAULT_OUT = Path(__file__).resolve().parent / "incidents"
REPLICAS = 3
# Seeds away from those the engine's own tests sweep, so the suite is not what it was tuned on.
SEED_BASE = 501


@dataclass(frozen=True)
class Entry:
    category: Category
    seed: int
    degraded: bool = False
    overrides: dict[str, Any] = field(default_factory=dict)


def _fault_entries() -> list[Entry]:
    faults = [c for c in Category if c != Category.NONE]
    out: list[Entry] = []
    for i, cat in enumerate(faults):
        for r in range(REPLICAS):
            # About one incident in four comes from a host missing a source (no eBPF, hook or PSI).
            out.append(Entry(cat, SEED_BASE + r, degraded=(i + r) % 4 == 3))
    return out


# Hosts on the edges of the range the generator draws from, so sizes are not all mid-range.
_EDGE_HOSTS: dict[tuple[Category, int], dict[str, Any]] = {
    (Category.DATALOADER_STARVATION, 0): {"cpus": 8, "gpus": 1, "numa_nodes": 1, "devices": ["sda"]},
    (Category.LOADER_OVERSUBSCRIPTION, 1): {"cpus": 224, "gpus": 8, "numa_nodes": 4},
    (Category.WRITEBACK_BURST, 2): {"cpus": 192, "gpus": 8, "devices": ["md0", "nvme0n1"]},
    (Category.MEMORY_RECLAIM, 0): {"gpus": 0},
    (Category.STORAGE_LATENCY, 1): {"devices": ["vdb", "vdc"]},
    # The seed draws 8 cores, one NUMA node: no remote node to read from. A 2-node host keeps it physical.
    (Category.NUMA_REMOTE, 1): {"cpus": 32, "numa_nodes": 2},
}


def _healthy_entries() -> list[Entry]:
    kinds: list[list[str]] = [
        [],
        ["spike"],
        ["busy_cpu"],
        ["small_checkpoint"],
        ["spike", "small_checkpoint"],
    ]
    return [Entry(Category.NONE, SEED_BASE + k, overrides={"distractors": d}) for k, d in enumerate(kinds)]


def entries() -> list[Entry]:
    out = []
    for e in _fault_entries():
        extra = _EDGE_HOSTS.get((e.category, e.seed - SEED_BASE), {})
        out.append(Entry(e.category, e.seed, e.degraded, {**e.overrides, **extra}))
    return out + _healthy_entries()


def _dropped_source(sc: Scenario) -> str | None:
    return next((k for k, parts in DROPOUTS.items() if parts == sc.dropped), None)


def incident_id(sc: Scenario) -> str:
    name = "healthy" if sc.category == Category.NONE else sc.category.value.replace("_", "-")
    if sc.variant:
        name += f"-{sc.variant}"
    if sc.category == Category.NONE and sc.distractors:
        name += "-" + "-".join(d.replace("_", "-") for d in sc.distractors)
    return f"{PREFIX}{name}-{sc.cpus}c-{sc.gpus}gpu-s{sc.seed}"


def title(sc: Scenario) -> str:
    what = "healthy host" if sc.category == Category.NONE else sc.category.value.replace("_", " ")
    when = "throughout" if sc.onset_t is None else f"from t={sc.onset_t:g} s"
    host = f"{sc.cpus} cores, {sc.numa_nodes} NUMA nodes, {sc.gpus} x {sc.gpu_model}, {'/'.join(sc.devices)}"
    parts = [f"Synthetic {what} ({when}, severity {sc.severity:.2f}) on {host}"]
    if sc.distractors:
        parts.append("distractors: " + ", ".join(sc.distractors))
    dropped = _dropped_source(sc)
    if dropped:
        parts.append(dropped.replace("_", " "))
    return "; ".join(parts)


def build(e: Entry) -> Incident:
    sc = scenario(e.category, e.seed, degraded=e.degraded, **e.overrides)
    if sc.category == Category.NUMA_REMOTE and sc.numa_nodes < 2:
        raise ValueError(f"{incident_id(sc)}: a NUMA fault needs a host with two nodes or more")
    samples = render(sc)
    dropped = _dropped_source(sc)
    tags = [
        "synthetic",
        sc.category.value if sc.category != Category.NONE else "no-fault",
        *(["distractor", *(f"distractor:{d}" for d in sc.distractors)] if sc.distractors else []),
        *([f"degraded:{dropped}"] if dropped else []),
    ]
    return incident(
        sc, incident_id=incident_id(sc), title=title(sc), tags=tags, truth=truth(sc, samples), samples=samples
    )


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--check", action="store_true", help="compare with the folders on disk, write nothing")
    args = ap.parse_args(argv)
    incidents = [build(e) for e in entries()]
    ids = [inc.id for inc in incidents]
    if len(set(ids)) != len(ids):
        print("build_suite: two entries give the same id", file=sys.stderr)
        return 1
    if args.check:
        import tempfile

        stale = []
        with tempfile.TemporaryDirectory() as tmp:
            for inc in incidents:
                fresh = write_incident(inc, Path(tmp))
                on_disk = args.out / inc.id
                if not on_disk.is_dir() or _files(on_disk) != _files(fresh):
                    stale.append(inc.id)
        for i in stale:
            print(f"differs from its seed: {i}")
        return 1 if stale else 0
    args.out.mkdir(parents=True, exist_ok=True)
    # Only this script's own folders are replaced: a renamed entry must not leave its old folder.
    for old in args.out.glob(f"{PREFIX}*"):
        if old.is_dir() and old.name not in ids:
            for f in old.iterdir():
                f.unlink()
            old.rmdir()
    for inc in incidents:
        write_incident(inc, args.out)
    print(f"wrote {len(incidents)} incidents to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
