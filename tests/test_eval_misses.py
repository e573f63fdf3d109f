"""The held-out rounds' misses by kind (evals/misses.py): each missed decision on a matrix recording
goes under the first kind whose test it meets, right decisions and other incidents under none, and
the counts add up to the misses."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from evals.matrix import CONDITIONS, Condition
from evals.misses import KINDS, Decision, count, kind_of, spans
from evals.scoring import IncidentScore


def _cond(keep: Callable[[Condition], bool]) -> str:
    return next(c.name for c in CONDITIONS if keep(c))


def _decision(
    condition: str,
    truth: str,
    top: str,
    *,
    acted: bool,
    action_ok: bool,
    repeat: int = 1,
) -> Decision:
    ident = f"real-{condition}-{repeat}"
    score = IncidentScore(
        id=ident,
        ac1=top == truth,
        ac3=True,
        action_ok=action_ok,
        forbidden=0,
        restraint=(not acted) if truth in ("none", "storage_latency") else None,  # nothing acceptable
        schema_valid=True,
        evidence_recall=None,
        latency_ms=1.0,
    )
    return Decision(id=ident, truth=truth, causes=(top, "none"), acted=acted, score=score)


BYTE_CAP = _cond(lambda c: c.scenario == "readahead" and bool(c.built().read_bps))
RECLAIM = _cond(lambda c: c.scenario == "reclaim" and bool(c.built().read_bps))
CHECKPOINT = _cond(lambda c: c.scenario == "writeback")
CONTENTION = _cond(lambda c: c.scenario == "contention")
UNCAPPED = _cond(lambda c: c.scenario == "readahead" and not c.built().read_iops and not c.built().read_bps)
REQUEST_CAP = _cond(lambda c: c.scenario == "readahead" and bool(c.built().read_iops))


# (condition, truth, top cause, acted, actions acceptable, the kind it goes under)
CASES = [
    (BYTE_CAP, "storage_latency", "readahead_mismatch", True, False, "byte cap"),
    (CHECKPOINT, "none", "writeback_burst", True, False, "checkpoint under 20 %"),
    (CONTENTION, "none", "cpu_contention", False, True, "contention under 20 %"),
    (CHECKPOINT, "writeback_burst", "cpu_contention", False, False, "named after a hog"),
    (UNCAPPED, "none", "readahead_mismatch", True, False, "healthy reader as a request cap"),
    (UNCAPPED, "readahead_mismatch", "dataloader_starvation", True, False, "one fix measured"),
    (UNCAPPED, "readahead_mismatch", "none", False, False, "gain named none"),
    (REQUEST_CAP, "readahead_mismatch", "readahead_mismatch", False, False, "under the confidence to act"),
    (REQUEST_CAP, "readahead_mismatch", "storage_latency", True, True, "other"),
    # The reclaim scenario caps its device's bandwidth as setup: not a byte cap.
    (RECLAIM, "memory_reclaim", "readahead_mismatch", True, False, "other"),
]


@pytest.mark.parametrize(("condition", "truth", "top", "acted", "action_ok", "kind"), CASES)
def test_each_miss_goes_under_the_first_kind_it_meets(
    condition: str, truth: str, top: str, acted: bool, action_ok: bool, kind: str
) -> None:
    assert kind_of(_decision(condition, truth, top, acted=acted, action_ok=action_ok)) == kind


def test_every_kind_has_a_case() -> None:
    assert {k for *_, k in CASES} == {k.name for k in KINDS}


def test_right_decisions_and_recordings_outside_the_matrix_have_no_kind() -> None:
    right = _decision(REQUEST_CAP, "readahead_mismatch", "readahead_mismatch", acted=True, action_ok=True)
    assert kind_of(right) is None
    stray = _decision(BYTE_CAP, "storage_latency", "readahead_mismatch", acted=True, action_ok=False)
    assert kind_of(Decision("synthetic-readahead-1", stray.truth, stray.causes, True, stray.score)) is None


def test_counts_add_up_per_kind_and_name_the_rounds() -> None:
    cap = [
        _decision(BYTE_CAP, "storage_latency", "readahead_mismatch", acted=True, action_ok=False, repeat=r)
        for r in (1, 2)
    ]
    ckpt = _decision(CHECKPOINT, "none", "writeback_burst", acted=True, action_ok=False)
    right = _decision(REQUEST_CAP, "readahead_mismatch", "readahead_mismatch", acted=True, action_ok=True)
    counts = count({61: [*cap, right], 62: [right], 63: [cap[0], ckpt]})
    assert [(k.kind.name, k.recordings, k.rounds) for k in counts] == [
        ("byte cap", 3, (61, 63)),
        ("checkpoint under 20 %", 1, (63,)),
    ]
    assert [(k.named_wrong, k.actions_wrong, k.unrestrained) for k in counts] == [(3, 3, 3), (1, 1, 1)]
    assert [k.name for k in KINDS][-1] == "other"  # every miss has a kind


def test_round_numbers_read_as_ranges() -> None:
    assert spans([59, 60, 61, 64, 70, 71, 72, 63]) == "59-61, 63-64, 70-72"
    assert spans([5]) == "5" and spans([]) == ""


def test_the_readme_table_gives_each_kind_the_total_and_the_stretch_without_byte_caps() -> None:
    from bench.readme_results import MISSES_MARKS, misses_section

    cap = _decision(BYTE_CAP, "storage_latency", "readahead_mismatch", acted=True, action_ok=False)
    ckpt = _decision(CHECKPOINT, "none", "writeback_burst", acted=True, action_ok=False)
    healthy = _decision(UNCAPPED, "none", "none", acted=False, action_ok=True)
    right = _decision(REQUEST_CAP, "readahead_mismatch", "readahead_mismatch", acted=True, action_ok=True)
    text = misses_section({70: [cap, right], 71: [ckpt, healthy, right]})
    assert text.startswith(MISSES_MARKS[0]) and text.endswith(MISSES_MARKS[1])
    assert "What rounds 70 to 71 missed (5 recordings" in text
    assert f"| {KINDS[0].what} | 1 | 1 | 1 | 1 | 70 |" in text
    assert f"| {KINDS[1].what} | 1 | 1 | 1 | 1 | 71 |" in text
    assert "| every miss | 2 | 2 | 2 | 2 | |" in text
    # Four recordings besides the cap: three named right; two restraint decisions, one held.
    assert "read AC@1 0.75 (3 of 4) and restraint 0.50 (1 of 2)." in text
