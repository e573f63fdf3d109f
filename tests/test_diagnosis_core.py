"""Building blocks of the engine: robust statistics, lost-work spans, timing, missing evidence."""

from __future__ import annotations

import math

import pytest

from agent.diagnosis.baseline import Frame, baseline, mad, median, quantile, step_noise
from agent.diagnosis.correlate import onset, timing_weight
from agent.diagnosis.engine import diagnose
from agent.diagnosis.layout import layout_of
from agent.diagnosis.lostwork import Span, find_lost_work
from core.diagnosis import Category
from core.report import HostInfo, JobInfo, build_report
from core.sample import Sample, SourceStatus
from core.window import Window
from evals.synth import SynthJob, incident, scenario
from tests.diag_helpers import run


def _window(rows: list[dict[str, float]], interval: float = 1.0) -> Window:
    return Window(horizon_s=10_000, samples=[Sample(t=i * interval, m=m) for i, m in enumerate(rows)])


def _util_rows(values: list[float]) -> list[dict[str, float]]:
    return [{"gpu.0.util_pct": v, "trainer.j.data_wait_frac": 0.02} for v in values]


def test_robust_statistics() -> None:
    xs = [1.0, 2.0, 3.0, 4.0, 100.0]
    assert median(xs) == 3.0
    assert mad(xs) == 1.0
    assert quantile(xs, 0.0) == 1.0 and quantile(xs, 1.0) == 100.0
    assert math.isnan(median([]))
    b = baseline([10.0, 10.0, 10.0, 11.0, 9.0])
    assert b is not None and b.median == 10.0 and b.z(20.0) > 4
    # A level shift is one big difference, not a wider spread: noise stays small.
    assert step_noise([1.0] * 20 + [5.0] * 20) == 0.0


def test_frame_aligns_missing_values_as_nan() -> None:
    w = _window([{"a": 1.0}, {"b": 2.0}, {"a": 3.0, "b": 4.0}])
    f = Frame.from_window(w)
    assert f.at("a", range(3)) == [1.0, 3.0]
    col = f.column("b")
    assert col is not None and math.isnan(col[0]) and col[1] == 2.0


def _lost(rows: list[dict[str, float]]) -> list[Span]:
    w = _window(rows)
    f = Frame.from_window(w)
    report = build_report(w, HostInfo(cpus=8, gpus=1), jobs=[JobInfo(name="j", gpus=[0])])
    return find_lost_work(f, layout_of(f, report)).spans


def test_util_dip_is_one_span_at_the_right_time() -> None:
    values = [95.0, 94.0, 96.0] * 10 + [50.0] * 10 + [95.0, 94.0, 96.0] * 10
    spans = _lost(_util_rows(values))
    assert len(spans) == 1
    assert spans[0].t_start == 30.0 and spans[0].t_end == 39.0
    assert 0.4 < spans[0].severity < 0.6


def test_single_sample_glitch_is_no_lost_work() -> None:
    values = [95.0, 94.0, 96.0] * 10
    values[12] = 40.0
    assert _lost(_util_rows(values)) == []


def test_chronic_idle_gpu_is_lost_work_without_a_healthy_past() -> None:
    spans = _lost(_util_rows([55.0, 56.0, 54.0] * 10))
    assert len(spans) == 1 and spans[0].t_start == 0.0 and spans[0].t_end == 29.0


def test_onset_and_timing_weight() -> None:
    rows = [{"x": 1.0}] * 10 + [{"x": 10.0}] * 10
    f = Frame.from_window(_window(rows))
    span = Span(12, 20, 12.0, 19.0, 0.5)
    assert onset(f, "x", span, 5.0, lead=5) == 10.0
    assert onset(f, "x", span, 50.0, lead=5) is None
    assert timing_weight(10.0, span, 1.0) == 1.0
    assert timing_weight(18.0, span, 1.0) < 1.0


def test_question_is_kept_and_does_not_change_the_facts() -> None:
    rows = _util_rows([95.0, 94.0, 96.0] * 10)
    w = _window(rows)
    report = build_report(w, HostInfo(cpus=8, gpus=1), jobs=[JobInfo(name="j", gpus=[0])])
    a = diagnose(w, report, "why is training slow?")
    b = diagnose(w, report, None)
    assert a.question == "why is training slow?"
    assert b.question == "Why are my GPUs idle?"
    assert a.causes == b.causes


def test_missing_sources_are_reported() -> None:
    w = _window([{"cpu.util_pct": 40.0}] * 10)
    report = build_report(
        w, HostInfo(cpus=8), sources={"nvml": SourceStatus(live=False, reason="no NVIDIA driver")}
    )
    d = diagnose(w, report)
    assert any("nvml: no NVIDIA driver" in m for m in d.missing)
    assert any(m.startswith("no GPU metrics") for m in d.missing)
    assert any("lost work could not be measured" in m for m in d.missing)
    assert d.top.category == Category.NONE and "not enough evidence" in d.top.summary


def test_empty_window_is_not_enough_evidence() -> None:
    d = diagnose(Window(), build_report(Window(), HostInfo(cpus=4)))
    assert d.top.category == Category.NONE and d.top.confidence == 0.0
    assert "no samples" in d.missing[0]


@pytest.mark.parametrize("cpus", [8, 224])
def test_worker_counts_scale_with_cores(cpus: int) -> None:
    """The same saturated CPU with the same 48 workers: too many for 8 cores, few for 224."""
    sc = scenario(Category.CPU_CONTENTION, 1, cpus=cpus, gpus=1, distractors=[])
    sc.jobs = [SynthJob("j", [0], 48, 1, 300.0, 64)]
    sc.knobs = {k: v for k, v in sc.knobs.items() if not k.startswith("loader.")}
    sc.knobs["loader.workers@j"] = 48
    _, d = run(incident(sc))
    expected = Category.LOADER_OVERSUBSCRIPTION if cpus == 8 else Category.CPU_CONTENTION
    assert d.top.category == expected
