"""HealthReport: a window of Samples summarised per subsystem, with knobs, jobs and sources."""

from __future__ import annotations

import statistics
from collections import defaultdict

from pydantic import BaseModel, ConfigDict, Field

from core.collection import CollectionLevel
from core.knob import KnobValue
from core.sample import SourceStatus
from core.vocabulary import Agg, parse
from core.window import Window

# The hot path's share of a window is that of this figure: only the scheduler collector gives it,
# in every interval it measured whatever the load.
HOT_PROBE = "sched.migrations_per_s"


class HostInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    cpus: int = Field(ge=1)
    numa_nodes: int = Field(default=1, ge=1)
    gpus: int = Field(default=0, ge=0)
    gpu_model: str | None = None
    kernel: str | None = None
    block_devices: list[str] = Field(default_factory=list)


class JobInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    pid: int | None = None
    gpus: list[int] = Field(default_factory=list)
    loader_workers: int | None = None
    found_by: str = Field(default="incident", description="nvml, operator, hook or incident")


class MetricSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    value: float = Field(description="the window's figure, aggregated as the vocabulary says")
    mean: float
    median: float
    min: float
    max: float
    last: float
    n: int
    unit: str
    coverage: float = Field(
        default=1.0,
        ge=0.0,
        le=1.0,
        description="share of the window's intervals the figure was measured over (hot-path figures "
        "on a duty cycle measure part of it)",
    )


class WindowInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    start: float
    end: float
    samples: int
    interval_s: float | None


class HealthReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    host: HostInfo
    window: WindowInfo
    metrics: dict[str, float] = Field(description="vocabulary name -> the window's figure")
    subsystems: dict[str, dict[str, MetricSummary]] = Field(default_factory=dict)
    knobs: dict[str, KnobValue] = Field(default_factory=dict)
    jobs: list[JobInfo] = Field(default_factory=list)
    sources: dict[str, SourceStatus] = Field(default_factory=dict)
    drops: dict[str, int] = Field(default_factory=dict, description="events lost to full collector maps")
    notes: list[str] = Field(default_factory=list)
    collection: CollectionLevel | None = Field(
        default=None, description="the collection level the live host runs at, and why (none for a recording)"
    )

    def hot_share(self) -> float | None:
        """The share of the window the hot-path collectors measured; None for a recording, where no
        hot-path collector runs, or where none of the window was measured."""
        if self.collection is None or not self.collection.hot_path:
            return None
        probe = self.subsystems.get("sched", {}).get(HOT_PROBE)
        return probe.coverage if probe is not None else None

    def missing(self) -> list[str]:
        """One line per source that is not live, saying why."""
        return [f"{name}: {st.reason}" for name, st in sorted(self.sources.items()) if not st.live]


def summarise(values: list[float], agg: Agg, unit: str, coverage: float = 1.0) -> MetricSummary:
    mean = statistics.fmean(values)
    median = statistics.median(values)
    value = {Agg.MEAN: mean, Agg.MEDIAN: median, Agg.LAST: values[-1], Agg.MAX: max(values)}[agg]
    return MetricSummary(
        value=value,
        mean=mean,
        median=median,
        min=min(values),
        max=max(values),
        last=values[-1],
        n=len(values),
        unit=unit,
        coverage=min(max(coverage, 0.0), 1.0),
    )


def build_report(
    window: Window,
    host: HostInfo,
    *,
    knobs: dict[str, KnobValue] | None = None,
    jobs: list[JobInfo] | None = None,
    sources: dict[str, SourceStatus] | None = None,
    drops: dict[str, int] | None = None,
    notes: list[str] | None = None,
    collection: CollectionLevel | None = None,
) -> HealthReport:
    """Summarise a window. Names outside the vocabulary are ignored, as replay does.

    A figure's coverage is the share of the window's samples it was measured in, each
    weighted by the share of its interval it was measured over (Sample.cover).
    """
    values: dict[str, list[float]] = defaultdict(list)
    measured: dict[str, float] = defaultdict(float)
    for s in window:
        for name, v in s.m.items():
            values[name].append(v)
            measured[name] += s.cover.get(name, 1.0)
    metrics: dict[str, float] = {}
    subsystems: dict[str, dict[str, MetricSummary]] = defaultdict(dict)
    for name in sorted(values):
        parsed = parse(name)
        if parsed is None:
            continue
        d = parsed.definition
        summary = summarise(values[name], d.agg, d.unit, measured[name] / len(window))
        metrics[name] = summary.value
        subsystems[d.subsystem][name] = summary
    start = window.start if window.start is not None else 0.0
    end = window.end if window.end is not None else start
    return HealthReport(
        host=host,
        window=WindowInfo(start=start, end=end, samples=len(window), interval_s=window.interval_s()),
        metrics=metrics,
        subsystems=dict(subsystems),
        knobs=dict(knobs or {}),
        jobs=list(jobs or []),
        sources=dict(sources or {}),
        drops={k: v for k, v in (drops or {}).items() if v},
        notes=list(notes or []),
        collection=collection,
    )
