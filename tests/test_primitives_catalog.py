"""The catalogue: every spec id, complete descriptors, lookups, knob keys, and the generated JSON."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from jsonschema import Draft202012Validator

from core.diagnosis import Category
from primitives.base import Choice, CpuList, IntRange, TargetKind, Tier
from primitives.catalog import all_primitives, catalog_json, for_cause, get, read_knobs
from tests.fakes.fake_kernel import FakeGpu, FakeTrainer, make_root

SPEC_IDS = [
    "vm.dirty_ratio",
    "vm.dirty_background_ratio",
    "vm.dirty_bytes",
    "vm.dirty_background_bytes",
    "vm.dirty_writeback_centisecs",
    "vm.dirty_expire_centisecs",
    "vm.swappiness",
    "vm.min_free_kbytes",
    "kernel.numa_balancing",
    "kernel.sched_autogroup_enabled",
    "block.read_ahead_kb",
    "block.nr_requests",
    "block.scheduler",
    "cpufreq.governor",
    "mm.thp_enabled",
    "mm.thp_defrag",
    "loader.workers",
    "loader.prefetch_factor",
    "loader.cpu_affinity",
    "gpu.power_limit_w",
    "trainer.batch_size",
]

SPEC_TARGETS = {
    "block.read_ahead_kb": TargetKind.BLOCK_DEVICE,
    "block.nr_requests": TargetKind.BLOCK_DEVICE,
    "block.scheduler": TargetKind.BLOCK_DEVICE,
    "loader.workers": TargetKind.JOB,
    "loader.prefetch_factor": TargetKind.JOB,
    "loader.cpu_affinity": TargetKind.JOB,
    "trainer.batch_size": TargetKind.JOB,
    "gpu.power_limit_w": TargetKind.GPU,
}

# The spec's example, as bundled with the evaluation suite (a verbatim copy).
EXAMPLE = Path(__file__).resolve().parent.parent / "evals/incidents/checkpoint-writeback-burst/incident.yaml"


def test_every_spec_id_exists_and_nothing_else() -> None:
    assert sorted(p.id for p in all_primitives()) == sorted(SPEC_IDS)


@pytest.mark.parametrize("pid", SPEC_IDS)
def test_descriptor_is_complete(pid: str) -> None:
    p = get(pid)
    assert p is not None
    assert p.description and "\n" not in p.description
    assert p.risk and p.how() and p.causes
    assert p.tier in Tier
    if pid in SPEC_TARGETS:
        assert p.target is SPEC_TARGETS[pid] and p.target_required
    else:
        assert not p.target_required
    if isinstance(p.value, IntRange):
        assert p.value.min < p.value.max
    elif isinstance(p.value, Choice):
        assert len(p.value.options) >= 2
    else:
        assert isinstance(p.value, CpuList)


def test_only_batch_size_needs_explicit_enabling_and_it_is_the_high_tier() -> None:
    assert [p.id for p in all_primitives() if not p.proposable] == ["trainer.batch_size"]
    assert get("trainer.batch_size").tier is Tier.HIGH  # type: ignore[union-attr]
    assert get("gpu.power_limit_w").tier is Tier.MEDIUM  # type: ignore[union-attr]


def test_for_cause() -> None:
    ids = [p.id for p in for_cause(Category.WRITEBACK_BURST)]
    assert "vm.dirty_background_ratio" in ids and "vm.dirty_bytes" in ids
    assert [p.id for p in for_cause("gpu_power_throttle")] == ["gpu.power_limit_w"]
    assert for_cause(Category.NONE) == [] and for_cause(Category.GPU_THERMAL_THROTTLE) == []
    tiers = [p.tier for p in for_cause(Category.MEMORY_RECLAIM)]
    assert tiers == sorted(tiers)


def test_unknown_id_is_none() -> None:
    assert get("vm.overcommit_memory") is None


def test_read_knobs_uses_the_spec_key_form(tmp_path: Path) -> None:
    fs = make_root(tmp_path, devices=("vdb",))
    trainer = FakeTrainer({"sdxl": {"loader.workers": 16, "loader.prefetch_factor": 2}})
    knobs = read_knobs(fs, ["vdb"], ["sdxl"], [0, 1], trainer=trainer, gpu=FakeGpu([700.0, 700.0]))
    example = yaml.safe_load(EXAMPLE.read_text())["knobs"]
    assert set(knobs) == set(example)
    assert knobs["block.scheduler@vdb"] == "mq-deadline"
    assert knobs["mm.thp_enabled"] == "madvise"
    assert knobs["vm.dirty_ratio"] == 20 and knobs["gpu.power_limit_w@1"] == 700


def test_catalog_json_has_the_promised_shape() -> None:
    doc = catalog_json()
    assert set(doc) == {"primitives", "proposal_schema"}
    for entry in doc["primitives"]:
        assert {"id", "tier", "target", "bounds"} <= set(entry)
    by_id = {e["id"]: e for e in doc["primitives"]}
    assert by_id["vm.dirty_background_ratio"]["bounds"] == {"min": 1, "max": 50, "unit": "%"}
    assert by_id["block.read_ahead_kb"]["reaches"] == "new_opens"
    Draft202012Validator.check_schema(doc["proposal_schema"])
    assert doc["proposal_schema"]["$schema"].endswith("2020-12/schema")
    assert len(doc["proposal_schema"]["properties"]["actions"]["items"]["oneOf"]) == len(SPEC_IDS)
