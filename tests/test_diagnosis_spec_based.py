"""Faults written onto the spec's own healthy recording (1 L40S, 224 CPUs, 2 s samples).

A second source of cases besides the generator: the healthy host's real-looking series
with one fault's figures overwritten from a given second on, so the engine is checked
on a baseline it was not built around.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from core.diagnosis import Category
from core.incident import Incident, load_incident
from tests.diag_helpers import run

BUNDLED = Path(__file__).resolve().parent.parent / "evals" / "incidents"
C = Category
Edit = Callable[[dict[str, float]], None]


def _with_fault(edit: Edit, onset: float | None = 40.0, knobs: dict[str, float] | None = None) -> Incident:
    inc = load_incident(BUNDLED / "healthy-host")
    for s in inc.samples:
        if onset is None or s.t >= onset:
            edit(s.m)
    inc.knobs.update(knobs or {})
    return inc


def _data_loss(m: dict[str, float], share: float) -> None:
    m["trainer.bert-ft.data_wait_frac"] += share
    m["trainer.bert-ft.step_time_ms"] /= 1 - share
    m["trainer.bert-ft.samples_per_s"] *= 1 - share
    m["gpu.0.util_pct"] *= 1 - share
    m["sched.bert-ft.offcpu_frac"] = 0.6


def _compute_loss(m: dict[str, float], share: float) -> None:
    m["trainer.bert-ft.step_time_ms"] /= 1 - share
    m["trainer.bert-ft.samples_per_s"] *= 1 - share
    m["gpu.0.util_pct"] *= 1 - share
    m["gpu.0.power_w"] *= 1 - share


def numa(m: dict[str, float]) -> None:
    m["numa.remote_frac"] = 0.45
    _compute_loss(m, 0.3)


def power(m: dict[str, float]) -> None:
    m.update({"gpu.0.clock_event_reasons": 4, "gpu.0.power_w": 348.0, "gpu.0.power_limit_w": 350.0})
    m["gpu.0.sm_clock_mhz"] = 1350.0
    m["trainer.bert-ft.step_time_ms"] *= 1.4


def thermal(m: dict[str, float]) -> None:
    m.update({"gpu.0.clock_event_reasons": 0x40 | 0x8, "gpu.0.temp_c": 91.0, "gpu.0.sm_clock_mhz": 1300.0})
    m["trainer.bert-ft.step_time_ms"] *= 1.45


def oversub(m: dict[str, float]) -> None:
    m.update({"cpu.util_pct": 99.0, "sched.runq_lat_p99_us": 2500.0, "sched.bert-ft.runq_lat_p99_us": 6000.0})
    m["psi.cpu.some_avg10"] = 45.0
    _data_loss(m, 0.3)


def contention(m: dict[str, float]) -> None:
    m.update({"cpu.util_pct": 99.0, "sched.runq_lat_p99_us": 3000.0, "sched.bert-ft.runq_lat_p99_us": 2500.0})
    m["psi.cpu.some_avg10"] = 40.0
    _data_loss(m, 0.35)


def pcie(m: dict[str, float]) -> None:
    m["gpu.0.pcie_rx_kbps"] = 23.5e6
    _compute_loss(m, 0.35)


def host_overhead(m: dict[str, float]) -> None:
    m["sched.bert-ft.offcpu_frac"] = 0.03
    _compute_loss(m, 0.4)


def storage(m: dict[str, float]) -> None:
    m.update({"io.nvme0n1.lat_p99_us": 9000.0, "io.nvme0n1.lat_p50_us": 2500.0, "psi.io.some_avg10": 30.0})
    m["io.nvme0n1.read_iops"] *= 0.6
    _data_loss(m, 0.4)


def reclaim(m: dict[str, float]) -> None:
    m.update({"mem.direct_reclaim_ms_per_s": 180.0, "mem.kswapd_wakeups_per_s": 60.0})
    m["psi.mem.some_avg10"] = 25.0
    m["mem.available_mib"] = 9000.0
    _data_loss(m, 0.35)


def starvation(m: dict[str, float]) -> None:
    _data_loss(m, 0.45)


CASES: list[tuple[Category, Edit, float | None, dict[str, float]]] = [
    (C.NUMA_REMOTE, numa, 40.0, {}),
    (C.GPU_POWER_THROTTLE, power, None, {"gpu.power_limit_w@0": 350}),
    (C.GPU_THERMAL_THROTTLE, thermal, 40.0, {}),
    (C.LOADER_OVERSUBSCRIPTION, oversub, None, {"loader.workers@bert-ft": 600}),
    (C.CPU_CONTENTION, contention, 40.0, {}),
    (C.PCIE_BOTTLENECK, pcie, None, {}),
    (C.HOST_OVERHEAD, host_overhead, 50.0, {}),
    (C.STORAGE_LATENCY, storage, 50.0, {}),
    (C.MEMORY_RECLAIM, reclaim, 50.0, {}),
    (C.DATALOADER_STARVATION, starvation, None, {"loader.workers@bert-ft": 4}),
]


@pytest.mark.parametrize(("category", "edit", "onset", "knobs"), CASES, ids=[c[0].value for c in CASES])
def test_fault_on_the_spec_healthy_host(
    category: Category, edit: Edit, onset: float | None, knobs: dict[str, float]
) -> None:
    _, d = run(_with_fault(edit, onset, knobs))
    assert d.top.category == category, [(c.category.value, c.confidence) for c in d.causes[:3]]


def test_distractors_alone_stay_healthy() -> None:
    def distract(m: dict[str, float]) -> None:
        m["cpu.util_pct"] = 92.0  # busy but healthy CPU, the whole window

    inc = _with_fault(distract, None)
    for s in inc.samples:
        if 60 <= s.t <= 64:  # a benign latency spike, and a small checkpoint
            s.m["io.nvme0n1.lat_p99_us"] *= 15
            s.m["mem.dirty_mib"] += 700
            s.m["io.nvme0n1.write_kbps"] += 150_000
    _, d = run(inc)
    assert d.top.category == C.NONE
    assert d.top.confidence > 0.7
