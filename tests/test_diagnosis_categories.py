"""Per category: a positive case ranks it first; its look-alike does not.

Scenarios come from the generator with pinned severity and noise; the look-alike is the
fault that shares its symptom (both stall reads; both saturate the CPU; both clock the
GPU down), so each pair checks the feature that tells them apart.
"""

from __future__ import annotations

import pytest

from core.diagnosis import Category
from tests.diag_helpers import synth

C = Category

# category -> the look-alike that must not be diagnosed as it
LOOK_ALIKES: dict[Category, Category] = {
    C.DATALOADER_STARVATION: C.CPU_CONTENTION,
    C.LOADER_OVERSUBSCRIPTION: C.CPU_CONTENTION,
    C.CPU_CONTENTION: C.LOADER_OVERSUBSCRIPTION,
    C.NUMA_REMOTE: C.HOST_OVERHEAD,
    C.STORAGE_LATENCY: C.WRITEBACK_BURST,
    C.READAHEAD_MISMATCH: C.STORAGE_LATENCY,
    C.WRITEBACK_BURST: C.MEMORY_RECLAIM,
    C.MEMORY_RECLAIM: C.WRITEBACK_BURST,
    C.GPU_POWER_THROTTLE: C.GPU_THERMAL_THROTTLE,
    C.GPU_THERMAL_THROTTLE: C.GPU_POWER_THROTTLE,
    C.PCIE_BOTTLENECK: C.COMM_WAIT,
    C.COMM_WAIT: C.HOST_OVERHEAD,
    C.HOST_OVERHEAD: C.COMM_WAIT,
}


@pytest.mark.parametrize("category", list(LOOK_ALIKES), ids=lambda c: c.value)
def test_positive_case_ranks_first(category: Category) -> None:
    for seed in (1, 2):
        _, d = synth(category, seed, severity=0.8, noise=1.0, distractors=[])
        assert d.top.category == category, (seed, [(c.category.value, c.confidence) for c in d.causes[:3]])
        assert d.top.confidence >= 0.4
        assert d.top.evidence, "a named cause must carry evidence"


@pytest.mark.parametrize("category", list(LOOK_ALIKES), ids=lambda c: c.value)
def test_look_alike_is_not_taken_for_it(category: Category) -> None:
    other = LOOK_ALIKES[category]
    for seed in (3, 4):
        _, d = synth(other, seed, severity=0.8, noise=1.0, distractors=[])
        assert d.top.category == other, (seed, [(c.category.value, c.confidence) for c in d.causes[:3]])
        mine = next(c for c in d.causes if c.category == category)
        assert mine.confidence < d.top.confidence / 2


def test_oversubscription_and_contention_differ_only_by_worker_count() -> None:
    """Same saturated CPU; the worker count against the cores decides."""
    _, over = synth(C.LOADER_OVERSUBSCRIPTION, 5, severity=0.8, cpus=32, gpus=2)
    _, cont = synth(C.CPU_CONTENTION, 5, severity=0.8, cpus=32, gpus=2)
    assert over.top.category == C.LOADER_OVERSUBSCRIPTION
    assert cont.top.category == C.CPU_CONTENTION


def test_readahead_small_requests_name_the_device() -> None:
    _, d = synth(C.READAHEAD_MISMATCH, 6, variant="small", severity=0.9)
    assert d.top.category == C.READAHEAD_MISMATCH
    assert d.top.target is not None and d.top.evidence[0].metric.startswith(f"io.{d.top.target}.")


def test_unfixable_causes_are_still_named() -> None:
    for cat in (C.GPU_THERMAL_THROTTLE, C.PCIE_BOTTLENECK, C.COMM_WAIT, C.HOST_OVERHEAD):
        _, d = synth(cat, 7, severity=0.9, distractors=[])
        assert d.top.category == cat
