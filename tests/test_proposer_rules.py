"""The rule proposer on hand-built diagnoses: targets from the report, bounded steps, hysteresis, no-ops."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from agent.proposers.base import Proposer
from agent.proposers.policy import parse_policy
from agent.proposers.rules import RuleProposer, load_policies
from core.diagnosis import Category, Cause, Diagnosis, Evidence
from core.knob import KnobValue
from core.proposal import Proposal
from core.report import HealthReport, HostInfo, JobInfo, build_report
from core.sample import Sample
from core.window import Window
from primitives.catalog import proposal_schema

SCHEMA = Draft202012Validator(proposal_schema())
BASE_KNOBS: dict[str, KnobValue] = {
    "vm.dirty_ratio": 20,
    "vm.dirty_background_ratio": 10,
    "vm.dirty_bytes": 0,
    "vm.dirty_background_bytes": 0,
    "vm.swappiness": 60,
    "vm.min_free_kbytes": 67584,
    "kernel.numa_balancing": 0,
    "mm.thp_defrag": "madvise",
}


def report(
    series: dict[str, list[float]],
    *,
    knobs: dict[str, KnobValue] | None = None,
    jobs: list[JobInfo] | None = None,
    cpus: int = 64,
    gpus: int = 2,
    devices: tuple[str, ...] = ("nvme0n1",),
) -> HealthReport:
    n = max(len(v) for v in series.values())
    samples = [Sample(t=float(t), m={k: v[t] for k, v in series.items() if t < len(v)}) for t in range(n)]
    return build_report(
        Window(samples=samples),
        HostInfo(cpus=cpus, gpus=gpus, numa_nodes=2, block_devices=list(devices)),
        knobs={**BASE_KNOBS, **(knobs or {})},
        jobs=jobs if jobs is not None else [JobInfo(name="sdxl", gpus=[0, 1], loader_workers=8)],
    )


def diagnosis(category: str, confidence: float = 0.9, target: str | None = None) -> Diagnosis:
    return Diagnosis(
        causes=[Cause(category=Category(category), confidence=confidence, summary="s", target=target)]
    )


def default() -> RuleProposer:
    return RuleProposer(load_policies([]))


def one(p: Proposal) -> tuple[str, Any, Any]:
    assert len(p.actions) == 1, p
    a = p.actions[0]
    assert SCHEMA.is_valid(p.model_dump()), p
    return a.primitive, a.target, a.value


WAITING = {"trainer.sdxl.data_wait_frac": [0.02, 0.4, 0.5, 0.02], "mem.available_mib": [60000.0] * 4}


def test_rule_proposer_is_a_proposer() -> None:
    assert isinstance(default(), Proposer)


def test_writeback_lowers_background_ratio_with_a_reason() -> None:
    p = default().propose(report(WAITING), diagnosis("writeback_burst", 0.97))
    assert one(p) == ("vm.dirty_background_ratio", None, 5)
    assert p.actions[0].reason.startswith(
        "writeback_burst (0.97): lower vm.dirty_background_ratio from 10 to 5"
    )


def test_writeback_in_bytes_mode_lowers_the_bytes_by_one_step() -> None:
    r = report(WAITING, knobs={"vm.dirty_background_ratio": 0, "vm.dirty_background_bytes": 2 << 30})
    assert one(default().propose(r, diagnosis("writeback_burst"))) == (
        "vm.dirty_background_bytes",
        None,
        512 << 20,
    )


def test_writeback_with_background_already_low_throttles_writers_sooner() -> None:
    r = report(WAITING, knobs={"vm.dirty_background_ratio": 5})
    assert one(default().propose(r, diagnosis("writeback_burst"))) == ("vm.dirty_ratio", None, 10)


def knobs_of(p: Proposal) -> list[tuple[str, Any]]:
    assert SCHEMA.is_valid(p.model_dump()), p
    return [(a.primitive, a.value) for a in p.actions]


MIB = 1 << 20
# A writer streaming to the device that never reaches the dirty limit (no pauses measured).
STREAMING = {**WAITING, "mem.dirty_throttle_ms_per_s": [0.0] * 4}


def test_a_streaming_writer_gets_both_dirty_limits_sized_to_the_devices_write_rate() -> None:
    # 3000 MiB/s of writes: background writeback at 5 ms of them (15 MiB), writers throttled at
    # 10 ms (30 MiB), each rounded up to a power of two.
    r = report({**STREAMING, "io.nvme0n1.write_kbps": [1000.0, 3000.0 * 1024, 10.0, 0.0]})
    p = default().propose(r, diagnosis("writeback_burst", 0.97))
    assert knobs_of(p) == [("vm.dirty_background_bytes", 16 * MIB), ("vm.dirty_bytes", 32 * MIB)]
    assert p.actions[0].reason.startswith("writeback_burst (0.97): a writer streams to the device")


def test_a_slow_streaming_writer_gets_the_measured_fix_as_a_floor() -> None:
    p = default().propose(report(STREAMING), diagnosis("writeback_burst"))
    assert knobs_of(p) == [("vm.dirty_background_bytes", 8 * MIB), ("vm.dirty_bytes", 16 * MIB)]


def test_a_streaming_writer_in_bytes_mode_lowers_only_what_is_above_its_goal() -> None:
    big = {"vm.dirty_background_ratio": 0, "vm.dirty_background_bytes": 2 << 30, "vm.dirty_bytes": 64 * MIB}
    assert knobs_of(default().propose(report(STREAMING, knobs=big), diagnosis("writeback_burst"))) == [
        ("vm.dirty_background_bytes", 512 * MIB),  # one step (a factor of 4) toward 8 MiB
        ("vm.dirty_bytes", 16 * MIB),
    ]
    low = report(STREAMING, knobs={"vm.dirty_background_bytes": 8 * MIB, "vm.dirty_bytes": 16 * MIB})
    p = default().propose(low, diagnosis("writeback_burst"))
    assert p.actions == [] and "already at or past the goal" in (p.noop_reason or "")


def test_a_flood_that_paused_writers_starts_background_writeback_earlier() -> None:
    paused = report({**WAITING, "mem.dirty_throttle_ms_per_s": [0.0, 600.0, 20.0, 0.0]})
    p = default().propose(paused, diagnosis("writeback_burst"))
    assert knobs_of(p) == [("vm.dirty_background_ratio", 5)]


# The same writer seen through procfs alone (no eBPF): no pauses measured, but the dirty pile and
# the kernel's two thresholds (/proc/vmstat) are, and writers run free below their mean.
PROCFS = {**WAITING, "mem.dirty_threshold_mib": [4000.0] * 4, "mem.dirty_bg_threshold_mib": [2000.0] * 4}


def test_without_ebpf_a_pile_below_the_pause_level_stands_in_for_unpaused_writers() -> None:
    # 600 + 200 MiB at most, against writers paused from (4000 + 2000) / 2 = 3000 MiB.
    below = {
        **PROCFS,
        "mem.dirty_mib": [100.0, 600.0, 300.0, 50.0],
        "mem.writeback_mib": [0.0, 200.0, 100.0, 0.0],
    }
    p = default().propose(report(below), diagnosis("writeback_burst"))
    assert knobs_of(p) == [("vm.dirty_background_bytes", 8 * MIB), ("vm.dirty_bytes", 16 * MIB)]


def test_without_ebpf_a_pile_at_the_pause_level_is_a_burst() -> None:
    at = {
        **PROCFS,
        "mem.dirty_mib": [100.0, 2900.0, 300.0, 50.0],
        "mem.writeback_mib": [0.0, 200.0, 100.0, 0.0],
    }
    assert knobs_of(default().propose(report(at), diagnosis("writeback_burst"))) == [
        ("vm.dirty_background_ratio", 5)
    ]


def test_measured_pauses_win_over_the_procfs_stand_in() -> None:
    # Writers paused (eBPF) though the global pile stayed low, as under a cgroup's own dirty limit.
    paused = {**PROCFS, "mem.dirty_mib": [10.0] * 4, "mem.dirty_throttle_ms_per_s": [0.0, 600.0, 20.0, 0.0]}
    assert knobs_of(default().propose(report(paused), diagnosis("writeback_burst"))) == [
        ("vm.dirty_background_ratio", 5)
    ]


def test_without_ebpf_or_the_thresholds_the_burst_change_stays() -> None:
    # A recorder of the spec's names alone gives the pile but not the thresholds: nothing stands in.
    p = default().propose(report({**WAITING, "mem.dirty_mib": [10.0] * 4}), diagnosis("writeback_burst"))
    assert knobs_of(p) == [("vm.dirty_background_ratio", 5)]


def test_hysteresis_acts_above_holds_inside_and_releases_below() -> None:
    rp = default()
    d = diagnosis("writeback_burst")
    inside = report({**WAITING, "trainer.sdxl.data_wait_frac": [0.1, 0.1]})
    p = rp.propose(inside, d)
    assert p.actions == [] and "inside the band, not active" in (p.noop_reason or "")
    assert one(rp.propose(report(WAITING), d))[0] == "vm.dirty_background_ratio"
    assert one(rp.propose(inside, d))[0] == "vm.dirty_background_ratio"  # still active inside the band
    calm = report({**WAITING, "trainer.sdxl.data_wait_frac": [0.02, 0.03]})
    p = rp.propose(calm, d)
    assert p.actions == [] and "released" in (p.noop_reason or "")
    assert rp.propose(inside, d).actions == []


def test_hysteresis_does_not_block_when_its_metric_is_not_measured() -> None:
    r = report({"mem.available_mib": [60000.0]}, jobs=[])
    assert one(default().propose(r, diagnosis("writeback_burst")))[0] == "vm.dirty_background_ratio"


def test_readahead_is_raised_on_the_device_with_the_read_traffic() -> None:
    series = {
        **WAITING,
        "io.nvme0n1.read_kbps": [10.0, 12.0],
        "io.md0.read_kbps": [900000.0, 950000.0],
        "io.md0.avg_req_kb": [128.0, 128.0],
    }
    knobs: dict[str, KnobValue] = {"block.read_ahead_kb@nvme0n1": 128, "block.read_ahead_kb@md0": 128}
    r = report(series, knobs=knobs, devices=("nvme0n1", "md0"))
    p = default().propose(r, diagnosis("readahead_mismatch"))
    assert one(p) == ("block.read_ahead_kb", "md0", 2048)


def test_readahead_named_by_the_cause_wins_and_is_lowered_when_large() -> None:
    knobs: dict[str, KnobValue] = {"block.read_ahead_kb@vdb": 8192, "block.read_ahead_kb@vdc": 128}
    r = report({**WAITING, "io.vdb.avg_req_kb": [1024.0]}, knobs=knobs, devices=("vdb", "vdc"))
    assert one(default().propose(r, diagnosis("readahead_mismatch", target="vdb"))) == (
        "block.read_ahead_kb",
        "vdb",
        256,
    )  # 8192 / 32: the primitive's largest step toward 128


def test_a_device_at_a_cap_with_a_window_below_1_mib_gets_larger_requests_to_try() -> None:
    """A flat rate is a cap on bytes or on requests; below 1 MiB a larger window lifts the second,
    so it is tried where the cap holds requests/s at least as flat as the bytes (and undone by the
    effect tracker where it moves nothing), and where 1 MiB requests would carry a fifth more than
    the window's (below 853 kB): closer to 1 MiB the most it could gain is less than a fix must
    move the job by. The cap's confidence stays low by design, so the rule acts from 0.2."""
    series = {**WAITING, "io.loop0.read_kbps": [40000.0] * 4, "io.loop0.avg_req_kb": [700.0] * 4}

    def cap(confidence: float, held: str) -> Diagnosis:
        d = diagnosis("storage_latency", confidence=confidence, target="loop0")
        d.causes[0].evidence = [
            Evidence(metric=f"io.loop0.{held}", observed=57.0, threshold=0.03, rule="held flat")
        ]
        return d

    small = report(series, knobs={"block.read_ahead_kb@loop0": 768}, devices=("loop0", "vda"))
    assert one(default().propose(small, cap(0.28, "read_iops"))) == ("block.read_ahead_kb", "loop0", 2048)
    line = report(series, knobs={"block.read_ahead_kb@loop0": 848}, devices=("loop0", "vda"))
    assert one(default().propose(line, cap(0.28, "read_iops"))) == ("block.read_ahead_kb", "loop0", 2048)
    for ra in (912, 1024):
        large = report(series, knobs={"block.read_ahead_kb@loop0": ra}, devices=("loop0", "vda"))
        assert not default().propose(large, cap(0.28, "read_iops")).actions, ra
    assert not default().propose(small, cap(0.15, "read_iops")).actions
    # Bytes held flat while the request count moved: a cap on bytes, which no window lifts.
    held_bytes = default().propose(small, cap(0.28, "read_kbps"))
    assert not held_bytes.actions
    assert "storage-cap-try-larger-requests: storage_latency cites no io.loop0.read_iops" in str(
        held_bytes.noop_reason
    )


def test_starvation_raises_workers_of_the_waiting_job_by_a_bounded_step() -> None:
    jobs = [JobInfo(name="a", gpus=[0], loader_workers=4), JobInfo(name="b", gpus=[1], loader_workers=4)]
    series = {"trainer.a.data_wait_frac": [0.05, 0.1], "trainer.b.data_wait_frac": [0.4, 0.6]}
    r = report(series, knobs={"loader.workers@a": 4, "loader.workers@b": 4}, jobs=jobs)
    assert one(default().propose(r, diagnosis("dataloader_starvation"))) == ("loader.workers", "b", 6)


def test_starvation_at_the_core_budget_deepens_prefetch_instead() -> None:
    jobs = [JobInfo(name="sdxl", gpus=[0, 1], loader_workers=62)]
    knobs: dict[str, KnobValue] = {"loader.workers@sdxl": 62, "loader.prefetch_factor@sdxl": 2}
    r = report(WAITING, knobs=knobs, jobs=jobs)
    assert one(default().propose(r, diagnosis("dataloader_starvation"))) == (
        "loader.prefetch_factor",
        "sdxl",
        4,
    )
    # A weak starvation (a best guess, below 0.3) raises workers below the cores, never prefetch.
    weak = default().propose(r, diagnosis("dataloader_starvation", 0.2))
    assert weak.actions == []
    few = {**knobs, "loader.workers@sdxl": 8}
    assert one(
        default().propose(report(WAITING, knobs=few, jobs=jobs), diagnosis("dataloader_starvation", 0.2))
    )[0] == ("loader.workers")


def test_oversubscription_lowers_every_job_over_its_share_of_the_cores() -> None:
    jobs = [
        JobInfo(name="a", gpus=[0], loader_workers=40),
        JobInfo(name="b", gpus=[1], loader_workers=6),
        JobInfo(name="c", gpus=[2], loader_workers=30),
    ]
    knobs: dict[str, KnobValue] = {"loader.workers@a": 40, "loader.workers@b": 6, "loader.workers@c": 30}
    r = report({"mem.available_mib": [60000.0]}, knobs=knobs, jobs=jobs, cpus=48)
    p = default().propose(r, diagnosis("loader_oversubscription", target="a"))
    assert [(a.target, a.value) for a in p.actions] == [("a", 15), ("c", 15)]
    assert SCHEMA.is_valid(p.model_dump())


def test_oversubscription_lowers_workers_toward_the_cores() -> None:
    jobs = [JobInfo(name="sdxl", gpus=[0], loader_workers=64)]
    r = report(WAITING, knobs={"loader.workers@sdxl": 64}, jobs=jobs, cpus=16)
    primitive, target, value = one(default().propose(r, diagnosis("loader_oversubscription")))
    assert (primitive, target) == ("loader.workers", "sdxl") and 1 <= value <= 16


def test_power_limit_is_raised_only_on_the_gpu_at_its_limit() -> None:
    series = {
        "gpu.0.power_w": [300.0, 310.0],
        "gpu.0.power_limit_w": [700.0, 700.0],
        "gpu.1.power_w": [548.0, 550.0],
        "gpu.1.power_limit_w": [550.0, 550.0],
    }
    r = report(series, knobs={"gpu.power_limit_w@0": 700, "gpu.power_limit_w@1": 550})
    p = default().propose(r, diagnosis("gpu_power_throttle"))
    assert one(p) == ("gpu.power_limit_w", 1, 650)  # toward its peer's 700 W, one 100 W step
    assert "550 W limit, below the 700 W it or its peers had; raise it to 650 W" in p.actions[0].reason


def test_power_limit_lowered_during_the_window_is_raised_from_the_value_in_force() -> None:
    series = {"gpu.0.power_w": [690.0, 450.0, 449.0], "gpu.0.power_limit_w": [700.0, 450.0, 450.0]}
    r = report(series, knobs={"gpu.power_limit_w@0": 700}, gpus=1)
    assert one(default().propose(r, diagnosis("gpu_power_throttle"))) == ("gpu.power_limit_w", 0, 550)


def test_power_limit_at_its_design_value_is_an_explicit_noop() -> None:
    series = {"gpu.0.power_w": [699.0, 700.0], "gpu.0.power_limit_w": [700.0, 700.0]}
    r = report(series, knobs={"gpu.power_limit_w@0": 700}, gpus=1)
    p = default().propose(r, diagnosis("gpu_power_throttle"))
    assert p.actions == [] and "design power" in (p.noop_reason or "")


def test_memory_reclaim_raises_min_free_by_one_step() -> None:
    r = report({"mem.direct_reclaim_ms_per_s": [50.0]})
    assert one(default().propose(r, diagnosis("memory_reclaim"))) == ("vm.min_free_kbytes", None, 135168)


def test_numa_remote_turns_balancing_on_and_says_why_not_when_already_on() -> None:
    r = report({"numa.remote_frac": [0.4]})
    assert one(default().propose(r, diagnosis("numa_remote"))) == ("kernel.numa_balancing", None, 1)
    on = report({"numa.remote_frac": [0.4]}, knobs={"kernel.numa_balancing": 1})
    p = default().propose(on, diagnosis("numa_remote"))
    assert p.actions == [] and "already on" in (p.noop_reason or "")


@pytest.mark.parametrize(
    ("category", "words"),
    [
        ("gpu_thermal_throttle", "heat"),
        ("pcie_bottleneck", "PCIe"),
        ("comm_wait", "NCCL"),
        ("host_overhead", "training code"),
        ("cpu_contention", "other work"),
        ("none", "healthy"),
    ],
)
def test_causes_without_a_safe_primitive_are_explicit_noops(category: str, words: str) -> None:
    p = default().propose(report(WAITING), diagnosis(category))
    assert p.actions == [] and words in (p.noop_reason or "")
    assert SCHEMA.is_valid(p.model_dump())


def test_a_low_confidence_cause_changes_nothing() -> None:
    p = default().propose(report(WAITING), diagnosis("writeback_burst", 0.2))
    assert p.actions == [] and "no rule of the policy acts on writeback_burst" in (p.noop_reason or "")


def test_a_cause_ranked_below_healthy_changes_nothing() -> None:
    d = Diagnosis(
        causes=[
            Cause(category=Category.NONE, confidence=0.9, summary="healthy"),
            Cause(category=Category.WRITEBACK_BURST, confidence=0.6, summary="a small burst"),
        ]
    )
    p = default().propose(report(WAITING), d)
    assert p.actions == [] and "healthy" in (p.noop_reason or "")


def test_a_knob_the_host_lacks_is_never_proposed() -> None:
    r = report(WAITING)
    r.knobs.pop("vm.dirty_background_ratio")
    r.knobs.pop("vm.dirty_ratio")
    p = default().propose(r, diagnosis("writeback_burst"))
    assert p.actions == [] and "unknown" in (p.noop_reason or "")


OPS = """\
version: 1
enable: [trainer.batch_size]
rules:
  - name: ops-bg
    cause: writeback_burst
    action: {primitive: vm.dirty_background_ratio, target: none, value: 3, direction: down}
    reason: our fleet runs at 3
  - name: ops-batch
    cause: host_overhead
    action: {primitive: trainer.batch_size, target: job, value: current * 2, direction: up}
    reason: amortise launch overhead
"""


def test_batch_size_is_never_proposed_by_default_but_an_enabling_policy_may() -> None:
    r = report(WAITING, knobs={"trainer.batch_size@sdxl": 256})
    assert default().propose(r, diagnosis("host_overhead")).actions == []
    rp = RuleProposer([parse_policy(OPS, "ops.yaml"), *load_policies([])])
    assert one(rp.propose(r, diagnosis("host_overhead"))) == ("trainer.batch_size", "sdxl", 512)


def test_operator_rules_come_first_and_a_knob_is_changed_once() -> None:
    rp = RuleProposer([parse_policy(OPS, "ops.yaml"), *load_policies([])])
    out = rp.explain(report(WAITING), diagnosis("writeback_burst"))
    assert one(out.proposal) == ("vm.dirty_background_ratio", None, 3)
    assert any("already changed by an earlier rule" in t for t in out.trace)


def test_every_gpu_at_a_lowered_limit_is_restored_not_only_the_named_one() -> None:
    series = {
        "gpu.0.power_w": [449.0, 450.0],
        "gpu.0.power_limit_w": [450.0, 450.0],
        "gpu.1.power_w": [448.0, 450.0],
        "gpu.1.power_limit_w": [450.0, 450.0],
    }
    r = report(series, knobs={"gpu.power_limit_w@0": 700, "gpu.power_limit_w@1": 700})
    p = default().propose(r, diagnosis("gpu_power_throttle", target="0"))
    assert sorted((a.target, a.value) for a in p.actions) == [(0, 550), (1, 550)]


def test_reclaim_at_a_cgroup_limit_on_a_roomy_host_is_an_explicit_noop() -> None:
    r = report(
        {
            "mem.direct_reclaim_ms_per_s": [40.0, 60.0],
            "mem.memcg_reclaim_ms_per_s": [40.0, 60.0],
            "mem.kswapd_wakeups_per_s": [0.0, 0.0],
        }
    )
    out = default().explain(r, diagnosis("memory_reclaim"))
    assert out.proposal.actions == []
    assert "memory limit" in (out.proposal.noop_reason or "")
    assert any("reclaim-raise-min-free" in t and "group memory already acted" in t for t in out.trace)


def test_global_reclaim_keeps_the_host_memory_actions() -> None:
    # Reclaim that wakes kswapd is the host short of memory, cgroup reclaim or not.
    both = report(
        {
            "mem.direct_reclaim_ms_per_s": [50.0],
            "mem.memcg_reclaim_ms_per_s": [20.0],
            "mem.kswapd_wakeups_per_s": [30.0],
        }
    )
    assert one(default().propose(both, diagnosis("memory_reclaim"))) == ("vm.min_free_kbytes", None, 135168)
    # No cgroup reclaim at all (or no eBPF to tell): the host-wide actions as before.
    for series in (
        {"mem.direct_reclaim_ms_per_s": [50.0], "mem.memcg_reclaim_ms_per_s": [0.0]},
        {"mem.direct_reclaim_ms_per_s": [50.0]},
    ):
        p = default().propose(report(series), diagnosis("memory_reclaim"))
        assert one(p) == ("vm.min_free_kbytes", None, 135168)


def test_a_noop_rule_whose_conditions_fail_leaves_its_group_to_act() -> None:
    text = """
version: 1
rules:
  - name: quiet-when-cold
    cause: writeback_burst
    group: wb
    when:
      - metric: mem.dirty_mib
        stat: max
        below: 10
    noop: nothing to flush
  - name: act
    cause: writeback_burst
    group: wb
    action: {primitive: vm.dirty_background_ratio, target: none, value: 5, direction: down}
    reason: lower it
"""
    prop = RuleProposer([parse_policy(text)])
    hot = report({**WAITING, "mem.dirty_mib": [900.0] * 4})
    assert one(prop.propose(hot, diagnosis("writeback_burst"))) == ("vm.dirty_background_ratio", None, 5)
    cold = report({**WAITING, "mem.dirty_mib": [2.0] * 4})
    p = prop.propose(cold, diagnosis("writeback_burst"))
    assert p.actions == [] and p.noop_reason is not None and "nothing to flush" in p.noop_reason
