"""The KPI the dashboard plots: what the GPUs got done, per sample of the window.

Mean GPU utilisation where NVML measured it; otherwise the jobs' summed training
throughput from the trainer hook; otherwise nothing to plot, said in one line.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

from core.vocabulary import parse
from core.window import Window

MAX_POINTS = 600


class Marker(BaseModel):
    model_config = ConfigDict(extra="forbid")

    t: float
    kind: str = Field(description="applied or rolled_back")
    label: str


class KpiSeries(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(description="gpu_util_pct, samples_per_s, or null when nothing measures it")
    unit: str = ""
    reason: str = ""
    points: list[tuple[float, float]] = Field(default_factory=list, description="(t, value)")
    markers: list[Marker] = Field(default_factory=list)


def _family(name: str) -> str | None:
    p = parse(name)
    return p.definition.family if p is not None else None


def kpi_series(window: Window, markers: Iterable[tuple[float, str, str]] = ()) -> KpiSeries:
    samples = window.samples
    util = [(s.t, [v for k, v in s.m.items() if _family(k) == "gpu.util_pct"]) for s in samples]
    if any(vs for _, vs in util):
        name, unit = "gpu_util_pct", "%"
        points = [(t, statistics.fmean(vs)) for t, vs in util if vs]
    else:
        tput = [(s.t, [v for k, v in s.m.items() if _family(k) == "trainer.samples_per_s"]) for s in samples]
        if not any(vs for _, vs in tput):
            return KpiSeries(name=None, reason="no GPU utilisation or trainer throughput was measured")
        name, unit = "samples_per_s", "1/s"
        points = [(t, sum(vs)) for t, vs in tput if vs]
    # A long window is thinned evenly; the plot has no more pixels than this anyway.
    if len(points) > MAX_POINTS:
        step = len(points) / MAX_POINTS
        points = [points[int(i * step)] for i in range(MAX_POINTS)]
    lo, hi = points[0][0], points[-1][0]
    shown = [Marker(t=t, kind=k, label=lbl) for t, k, lbl in markers if lo <= t <= hi]
    return KpiSeries(name=name, unit=unit, points=points, markers=shown)
