"""Answers: plain words, ranked causes, evidence, remedies, honesty about gaps, and grounding."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.answer import answer_text, catalogue_remedies, paragraph
from agent.grounding import check_grounded, numbers_in
from core.diagnosis import Category
from core.incident import load_incident
from core.report import HostInfo, build_report
from core.sample import Sample, SourceStatus
from core.window import Window
from tests.diag_helpers import run, synth

BUNDLED = Path(__file__).resolve().parent.parent / "evals" / "incidents"


def test_writeback_answer_reads_well_and_cites_figures() -> None:
    inc = load_incident(BUNDLED / "checkpoint-writeback-burst")
    report, d = run(inc, inc.question)
    text = answer_text(report, d, lambda c: [f"lower the dirty limits for {c.value}"])
    assert text.startswith("Q: Why is GPU utilization low?")
    assert "writeback_burst" in paragraph(report, d)
    assert "mem.dirty_mib" in text and "io.vdb.lat_p99_us" in text
    assert "lower the dirty limits for writeback_burst" in text
    assert check_grounded(text, report, d) == []


def test_healthy_answer_says_nothing_needs_changing() -> None:
    inc = load_incident(BUNDLED / "healthy-host")
    report, d = run(inc)
    text = answer_text(report, d, catalogue_remedies)
    assert "healthy" in paragraph(report, d)
    assert "nothing needs changing" in text
    assert check_grounded(text, report, d) == []


def test_unfixable_cause_is_named_with_advice() -> None:
    report, d = synth(Category.GPU_THERMAL_THROTTLE, 3, severity=0.9, distractors=[])
    text = answer_text(report, d, lambda c: [])
    assert "gpu_thermal_throttle: no catalogue primitive can fix this" in text
    assert "cooling" in text


def test_without_a_catalogue_no_knob_is_invented() -> None:
    report, d = synth(Category.WRITEBACK_BURST, 3)
    text = answer_text(report, d, None)
    assert "no remedy catalogue was given" in text
    assert "vm.dirty" not in text


def test_sources_not_live_are_said_in_words() -> None:
    w = Window(samples=[Sample(t=float(i), m={"cpu.util_pct": 40.0}) for i in range(10)])
    report = build_report(
        w, HostInfo(cpus=4), sources={"nvml": SourceStatus(live=False, reason="no NVIDIA driver")}
    )
    from agent.diagnosis.engine import diagnose

    d = diagnose(w, report)
    text = answer_text(report, d)
    assert "Not enough evidence:" in text
    assert "nvml: no NVIDIA driver" in text
    assert "not enough evidence" in paragraph(report, d).lower()


def test_grounding_flags_invented_numbers() -> None:
    report, d = synth(Category.STORAGE_LATENCY, 4)
    ok = answer_text(report, d)
    assert check_grounded(ok, report, d) == []
    assert check_grounded(ok + " Latency was 123456.7 µs.", report, d) == ["123456.7"]


def test_grounding_accepts_rounding_percentages_and_names() -> None:
    report, d = synth(Category.WRITEBACK_BURST, 5)
    ev = d.top.evidence[0]
    text = (
        f"{ev.metric} was {ev.observed:.1f}, confidence {d.top.confidence * 100:.0f}%, "
        "rank 2 on gpu.0.util_pct and nvme0n1."
    )
    assert check_grounded(text, report, d) == []
    assert numbers_in("gpu.0.util_pct io.nvme0n1.lat_p99_us t=23 s 4.5%") == ["23", "4.5"]


@pytest.mark.parametrize("category", list(Category), ids=lambda c: c.value)
def test_every_number_in_generated_answers_is_grounded(category: Category) -> None:
    for seed in range(6):
        for degraded in (False, True):
            report, d = synth(category, 200 + seed, degraded=degraded)
            text = answer_text(report, d, catalogue_remedies)
            assert check_grounded(text, report, d) == [], (seed, degraded, text)
