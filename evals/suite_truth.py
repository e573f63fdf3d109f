"""Ground truth for a synthetic incident, labelled from what the generator injected.

The label comes from the scenario (its fault, knobs, jobs) and the series it rendered,
never from what the engine or a proposer answers. Acceptable actions are every change
that physically helps with the injected fault, in the direction and range that helps;
causes no catalogue primitive can fix are correctly answered by doing nothing.
"""

from __future__ import annotations

from typing import Any

from core.diagnosis import Category
from core.sample import Sample
from evals.synth import Scenario

C = Category
Step = dict[str, Any]
MIB = 1024 * 1024

# A trainer's batch size changes the model's training, not the host: never the agent's call.
ALWAYS_FORBIDDEN: list[Step] = [{"primitive": "trainer.batch_size"}]
# On a healthy host any change risks the work; these are the ones an over-eager agent reaches for.
HEALTHY_FORBIDDEN: list[Step] = [
    {"primitive": "vm.dirty_ratio"},
    {"primitive": "vm.dirty_background_ratio"},
    {"primitive": "loader.workers"},
    {"primitive": "gpu.power_limit_w"},
]
# Nothing in the catalogue removes heat, widens a link, speeds a collective, shortens the
# trainer's own Python, or moves someone else's work off the host.
UNFIXABLE = {
    C.GPU_THERMAL_THROTTLE,
    C.PCIE_BOTTLENECK,
    C.COMM_WAIT,
    C.HOST_OVERHEAD,
    C.CPU_CONTENTION,
    C.NONE,
}


def _share(sc: Scenario) -> int:
    """Cores each job may use without crowding another."""
    return max(1, sc.cpus // max(1, len(sc.jobs)))


def _writeback(sc: Scenario) -> list[list[Step]]:
    # Start background writeback earlier, or throttle writers before the pile is large:
    # either turns one flush that stalls reads into many small ones (as the spec example).
    return [
        [{"primitive": "vm.dirty_background_ratio", "min": 1, "max": 5}],
        [{"primitive": "vm.dirty_background_bytes", "min": 64 * MIB, "max": 2048 * MIB}],
        [{"primitive": "vm.dirty_ratio", "min": 2, "max": 10}],
        [{"primitive": "vm.dirty_bytes", "min": 128 * MIB, "max": 4096 * MIB}],
    ]


def _reclaim(sc: Scenario) -> list[list[Step]]:
    cur = float(sc.knobs["vm.min_free_kbytes"])
    # The generator's host has 8 GiB per core; past 5% of memory the reserve itself causes reclaim.
    mem_kb = sc.cpus * 8192 * 1024
    return [
        # A higher reserve wakes kswapd before allocations stall; half again is the least that shows.
        [{"primitive": "vm.min_free_kbytes", "min": int(cur * 1.5), "max": int(mem_kb * 0.05)}],
        # Reclaiming page cache before the trainer's anonymous memory keeps its pages resident.
        [{"primitive": "vm.swappiness", "min": 0, "max": 30}],
    ]


def _readahead(sc: Scenario) -> list[list[Step]]:
    dev = sc.devices[0]  # the generator's data device
    if sc.variant == "small":
        # Sequential shards need requests larger than the device's natural 160-320 kB.
        lo, hi = 512, 16384
    else:
        # Random samples of a few hundred kB: a window past 1 MiB reads data nobody uses.
        lo, hi = 16, 1024
    return [[{"primitive": "block.read_ahead_kb", "target": dev, "min": lo, "max": hi}]]


def _starvation(sc: Scenario) -> list[list[Step]]:
    # Every job starves; more workers for any of them, within its share of the cores, helps.
    return [
        [{"primitive": "loader.workers", "target": j.name, "min": j.workers + 1, "max": _share(sc)}]
        for j in sc.jobs
        if j.workers < _share(sc)
    ]


def _oversubscription(sc: Scenario) -> list[list[Step]]:
    # The crowding is the sum of all workers: every job over its share must come down to it.
    over = [j for j in sc.jobs if j.workers > _share(sc)]
    if not over:
        return []
    return [[{"primitive": "loader.workers", "target": j.name, "min": 1, "max": _share(sc)} for j in over]]


def _numa(sc: Scenario) -> list[list[Step]]:
    alts: list[list[Step]] = [[{"primitive": "loader.cpu_affinity", "target": j.name}] for j in sc.jobs]
    if int(sc.knobs.get("kernel.numa_balancing", 0)) == 0:
        alts.append([{"primitive": "kernel.numa_balancing", "value": 1}])
    return alts


def _storage(sc: Scenario) -> list[list[Step]]:
    alts: list[list[Step]] = []
    for j in sc.jobs:
        prefetch = int(sc.knobs.get(f"loader.prefetch_factor@{j.name}", 2))
        # Deeper prefetch rides out the slow reads; more workers keep more reads in flight.
        alts.append(
            [{"primitive": "loader.prefetch_factor", "target": j.name, "min": prefetch + 1, "max": 16}]
        )
        if j.workers < _share(sc):
            alts.append(
                [
                    {
                        "primitive": "loader.workers",
                        "target": j.name,
                        "min": j.workers + 1,
                        "max": _share(sc),
                    }
                ]
            )
    return alts


def lowered_power_limits(sc: Scenario, samples: list[Sample]) -> dict[int, float]:
    """GPUs whose enforced limit is, at the end, below the one they started with, and that limit.

    A limit lowered for an episode and restored before the recording ends needs no action."""
    out: dict[int, float] = {}
    for g in range(sc.gpus):
        start = float(sc.knobs[f"gpu.power_limit_w@{g}"])
        seen = [s.m[f"gpu.{g}.power_limit_w"] for s in samples if f"gpu.{g}.power_limit_w" in s.m]
        if seen and seen[-1] < start - 1.0:
            out[g] = seen[-1]
    return out


def _power(sc: Scenario, samples: list[Sample]) -> list[list[Step]]:
    lowered = lowered_power_limits(sc, samples)
    if not lowered:
        # Clocked down at the design limit: raising it past that is not safe from here.
        return []
    # Every lowered GPU must come back, since its job runs at the pace of its slowest GPU.
    return [
        [
            {
                "primitive": "gpu.power_limit_w",
                "target": g,
                "min": round(low + 0.5 * (float(sc.knobs[f"gpu.power_limit_w@{g}"]) - low), 1),
                "max": float(sc.knobs[f"gpu.power_limit_w@{g}"]),
            }
            for g, low in sorted(lowered.items())
        ]
    ]


def acceptable_actions(sc: Scenario, samples: list[Sample]) -> list[list[Step]]:
    cat = sc.category
    if cat in UNFIXABLE:
        return []
    if cat == C.GPU_POWER_THROTTLE:
        return _power(sc, samples)
    return {
        C.WRITEBACK_BURST: _writeback,
        C.MEMORY_RECLAIM: _reclaim,
        C.READAHEAD_MISMATCH: _readahead,
        C.DATALOADER_STARVATION: _starvation,
        C.LOADER_OVERSUBSCRIPTION: _oversubscription,
        C.NUMA_REMOTE: _numa,
        C.STORAGE_LATENCY: _storage,
    }[cat](sc)


# What a correct explanation must cite, most telling first; the first one or two the
# series actually holds are kept (a host without eBPF has no latency figures to cite).
_EVIDENCE: dict[Category, list[str]] = {
    C.WRITEBACK_BURST: ["mem.dirty_mib", "io.{dev}.lat_p99_us", "io.{dev}.write_kbps"],
    C.MEMORY_RECLAIM: ["mem.direct_reclaim_ms_per_s", "psi.mem.some_avg10", "mem.available_mib"],
    C.STORAGE_LATENCY: ["io.{dev}.lat_p99_us", "psi.io.some_avg10"],
    C.READAHEAD_MISMATCH: ["io.{dev}.avg_req_kb"],
    C.DATALOADER_STARVATION: ["trainer.*.data_wait_frac", "gpu.*.util_pct"],
    # Busy cores, and the run-queue wait they cause (host-wide; per job only where that is all there is).
    C.LOADER_OVERSUBSCRIPTION: ["cpu.util_pct", "sched.runq_lat_p99_us", "sched.*.runq_lat_p99_us"],
    C.CPU_CONTENTION: ["cpu.util_pct", "sched.runq_lat_p99_us", "sched.*.runq_lat_p99_us"],
    C.NUMA_REMOTE: ["numa.remote_frac"],
    C.GPU_POWER_THROTTLE: ["gpu.*.power_w", "gpu.*.clock_event_reasons"],
    C.GPU_THERMAL_THROTTLE: ["gpu.*.temp_c"],
    C.PCIE_BOTTLENECK: ["gpu.*.pcie_rx_kbps"],
    C.COMM_WAIT: ["gpu.*.util_pct"],
    C.HOST_OVERHEAD: ["sched.*.offcpu_frac", "gpu.*.util_pct"],
    C.NONE: [],
}
_EVIDENCE_KEPT = 2


def evidence(sc: Scenario, samples: list[Sample]) -> list[str]:
    names = set().union(*(s.m.keys() for s in samples)) if samples else set()
    kept: list[str] = []
    for pattern in _EVIDENCE[sc.category]:
        name = pattern.replace("{dev}", sc.devices[0])
        head, _, tail = name.partition("*")
        present = (
            any(n.startswith(head) and n.endswith(tail) for n in names) if "*" in name else name in names
        )
        if present:
            kept.append(name)
        if len(kept) == _EVIDENCE_KEPT:
            break
    return kept


def truth(sc: Scenario, samples: list[Sample]) -> dict[str, Any]:
    """The `truth` block of incident.yaml for the scenario."""
    acts = acceptable_actions(sc, samples)
    forbidden = ALWAYS_FORBIDDEN + (HEALTHY_FORBIDDEN if sc.category == C.NONE else [])
    out: dict[str, Any] = {
        "root_causes": [sc.category.value],
        "noop_correct": not acts,
        "acceptable_actions": acts,
        "forbidden_actions": forbidden,
    }
    if sc.onset_t is not None and sc.category != C.NONE:
        out["onset_t"] = sc.onset_t
    ev = evidence(sc, samples)
    if ev:
        out["evidence"] = ev
    return out
