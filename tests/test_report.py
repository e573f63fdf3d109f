"""build_report: per-vocabulary aggregation, unknown names, window figures."""

from __future__ import annotations

import pytest

from core.report import HostInfo, build_report, summarise
from core.sample import Sample, SourceStatus
from core.vocabulary import Agg
from core.window import Window

HOST = HostInfo(cpus=2)


def _window(rows: list[tuple[float, dict[str, float]]]) -> Window:
    return Window(samples=[Sample(t=t, m=m) for t, m in rows])


def test_aggregation_follows_the_vocabulary() -> None:
    w = _window(
        [
            (0.0, {"io.vda.read_iops": 10.0, "io.vda.lat_p99_us": 100.0, "gpu.0.power_limit_w": 700.0}),
            (1.0, {"io.vda.read_iops": 20.0, "io.vda.lat_p99_us": 5000.0, "gpu.0.power_limit_w": 700.0}),
            (2.0, {"io.vda.read_iops": 60.0, "io.vda.lat_p99_us": 300.0, "gpu.0.power_limit_w": 400.0}),
        ]
    )
    r = build_report(w, HOST)
    assert r.metrics["io.vda.read_iops"] == pytest.approx(30.0)  # MEAN
    assert r.metrics["io.vda.lat_p99_us"] == 300.0  # MEDIAN: one spike does not set the figure
    assert r.metrics["gpu.0.power_limit_w"] == 400.0  # LAST: the limit now
    s = r.subsystems["io"]["io.vda.lat_p99_us"]
    assert (s.min, s.max, s.last, s.n, s.unit) == (100.0, 5000.0, 300.0, 3, "µs")
    assert set(r.subsystems) == {"io", "gpu"}


def test_extension_names_are_summarised() -> None:
    w = _window([(0.0, {"mem.dirty_threshold_mib": 100.0}), (1.0, {"mem.dirty_threshold_mib": 50.0})])
    r = build_report(w, HOST)
    assert r.metrics == {"mem.dirty_threshold_mib": 50.0}
    assert "mem.dirty_threshold_mib" in r.subsystems["mem"]


def test_max_aggregation() -> None:
    s = summarise([1.0, 9.0, 3.0], Agg.MAX, "ms")
    assert s.value == 9.0 and s.mean == pytest.approx(13 / 3) and s.median == 3.0


def test_unknown_names_are_ignored() -> None:
    w = _window([(0.0, {"bogus.metric": 1.0, "io.vda": 2.0, "cpu.util_pct": 50.0})])
    r = build_report(w, HOST)
    assert r.metrics == {"cpu.util_pct": 50.0}
    assert set(r.subsystems) == {"cpu"}


def test_metric_missing_from_some_samples_counts_only_where_measured() -> None:
    w = _window([(0.0, {"cpu.util_pct": 10.0}), (1.0, {}), (2.0, {"cpu.util_pct": 30.0})])
    s = build_report(w, HOST).subsystems["cpu"]["cpu.util_pct"]
    assert s.n == 2 and s.value == 20.0


def test_window_figures() -> None:
    w = _window([(10.0, {}), (11.0, {}), (12.0, {}), (15.0, {})])
    r = build_report(w, HOST)
    assert (r.window.start, r.window.end, r.window.samples) == (10.0, 15.0, 4)
    assert r.window.interval_s == 1.0  # median gap, not skewed by one late sample


def test_empty_window() -> None:
    r = build_report(Window(), HOST)
    assert r.metrics == {} and r.window.samples == 0 and r.window.interval_s is None


def test_sources_drops_knobs_and_missing() -> None:
    r = build_report(
        _window([(0.0, {})]),
        HOST,
        knobs={"vm.dirty_ratio": 20},
        sources={"bpf": SourceStatus(live=False, reason="not root"), "procfs": SourceStatus(live=True)},
        drops={"bpf.block": 0, "bpf.runqlat": 4},
    )
    assert r.drops == {"bpf.runqlat": 4}  # zero counts are noise
    assert r.knobs == {"vm.dirty_ratio": 20}
    assert r.missing() == ["bpf: not root"]
    dumped = r.model_dump(mode="json")
    assert dumped["sources"]["bpf"] == {"live": False, "reason": "not root"}


def test_coverage_is_the_share_of_the_window_a_figure_was_measured_over() -> None:
    w = Window(
        samples=[
            Sample(
                t=0.0, m={"io.vda.lat_p99_us": 100.0, "cpu.util_pct": 1.0}, cover={"io.vda.lat_p99_us": 0.5}
            ),
            Sample(t=1.0, m={"io.vda.lat_p99_us": 300.0, "cpu.util_pct": 1.0}),
            Sample(t=2.0, m={"cpu.util_pct": 1.0}),
            Sample(t=3.0, m={"cpu.util_pct": 1.0}),
        ]
    )
    r = build_report(w, HOST)
    assert r.subsystems["io"]["io.vda.lat_p99_us"].coverage == pytest.approx(1.5 / 4)
    assert r.subsystems["cpu"]["cpu.util_pct"].coverage == 1.0
    assert r.collection is None  # a recording says nothing of how it was collected
