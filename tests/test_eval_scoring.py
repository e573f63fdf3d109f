from __future__ import annotations

from dataclasses import dataclass

import pytest

from core.incident import Truth
from evals.scoring import (
    actions_acceptable,
    evidence_recall,
    score_incident,
    step_matches,
    summarise,
)


@dataclass(frozen=True)
class A:
    primitive: str
    target: str | int | None
    value: float | int | str | list[int]


def truth(**kw: object) -> Truth:
    base: dict[str, object] = {
        "root_causes": ["writeback_burst"],
        "noop_correct": False,
        "acceptable_actions": [
            [{"primitive": "vm.dirty_background_ratio", "min": 1, "max": 5}],
            [{"primitive": "block.read_ahead_kb", "target": "vdb", "value": 4096}],
        ],
        "forbidden_actions": [
            {"primitive": "trainer.batch_size"},
            {"primitive": "loader.workers", "target": "a"},
        ],
        "evidence": ["mem.dirty_mib", "io.*"],
    }
    base.update(kw)
    return Truth.model_validate(base)


def test_step_bounds_are_inclusive_and_target_must_agree() -> None:
    t = truth()
    lo, exact = t.acceptable_actions[0][0], t.acceptable_actions[1][0]
    assert step_matches(A("vm.dirty_background_ratio", None, 1), lo)
    assert step_matches(A("vm.dirty_background_ratio", None, 5), lo)
    assert not step_matches(A("vm.dirty_background_ratio", None, 6), lo)
    assert step_matches(A("block.read_ahead_kb", "vdb", 4096), exact)
    assert not step_matches(A("block.read_ahead_kb", "sda", 4096), exact)
    assert not step_matches(A("block.read_ahead_kb", "vdb", 2048), exact)


def test_forbidden_action_spoils_an_otherwise_good_proposal() -> None:
    t = truth()
    good = A("vm.dirty_background_ratio", None, 3)
    assert actions_acceptable([good], t)
    assert not actions_acceptable([good, A("trainer.batch_size", "a", 64)], t)
    # A forbidden entry with a target only forbids that target.
    assert actions_acceptable([good, A("loader.workers", "b", 4)], t)


def test_noop_counts_only_when_noop_is_correct() -> None:
    assert not actions_acceptable([], truth())
    assert actions_acceptable([], truth(noop_correct=True, acceptable_actions=[]))


def test_multi_step_alternative_needs_every_step() -> None:
    both = [{"primitive": "vm.dirty_ratio", "max": 10}, {"primitive": "vm.swappiness"}]
    t = truth(acceptable_actions=[both])
    assert not actions_acceptable([A("vm.dirty_ratio", None, 5)], t)
    assert actions_acceptable([A("vm.dirty_ratio", None, 5), A("vm.swappiness", None, 10)], t)


def test_evidence_recall_with_wildcards() -> None:
    t = truth()
    assert evidence_recall(["io.vdb.lat_p99_us"], t) == pytest.approx(0.5)
    assert evidence_recall(["io.vdb.lat_p99_us", "mem.dirty_mib"], t) == 1.0
    assert evidence_recall([], truth(evidence=[])) is None


def test_scores_and_summary() -> None:
    t = truth()
    s1 = score_incident(
        "a",
        t,
        ["writeback_burst", "none"],
        [A("vm.dirty_background_ratio", None, 2)],
        ["mem.dirty_mib"],
        schema_valid=True,
        latency_ms=3.0,
    )
    quiet = truth(root_causes=["none"], noop_correct=True, acceptable_actions=[])
    s2 = score_incident(
        "b",
        quiet,
        ["storage_latency", "cpu_contention", "none"],
        [A("vm.swappiness", None, 10)],
        [],
        schema_valid=True,
        latency_ms=9.0,
    )
    assert s1.ac1 and s1.ac3 and s1.action_ok and s1.forbidden == 0 and s1.restraint is None
    assert not s2.ac1 and s2.ac3 and not s2.action_ok and s2.restraint is False
    summary = summarise([s1, s2], invalid=1)
    assert summary.ac1 == 0.5 and summary.ac3 == 1.0
    assert summary.restraint == 0.0 and summary.invalid == 1
    assert summary.latency_p50_ms == 3.0 and summary.latency_p95_ms == 9.0
    # s1 cites one of two patterns, s2 none of them.
    assert summary.evidence_recall == pytest.approx(0.25)
