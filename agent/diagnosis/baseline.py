"""Columns of a window and robust statistics over them (median, MAD, quantiles).

Diagnosis reads every metric many times; turning the window into aligned columns once
(NaN where a sample did not measure a metric) keeps each later read a list slice.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from agent.window import Window

NAN = math.nan
# Scales a MAD to the standard deviation of normal noise.
MAD_TO_SIGMA = 1.4826


def clean(values: Iterable[float]) -> list[float]:
    return [v for v in values if v == v]  # NaN is the only value unequal to itself


def quantile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated quantile of already-clean values; NaN when empty."""
    if not values:
        return NAN
    s = sorted(values)
    pos = q * (len(s) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def median(values: Sequence[float]) -> float:
    return quantile(values, 0.5)


def mad(values: Sequence[float], center: float | None = None) -> float:
    if not values:
        return NAN
    c = median(values) if center is None else center
    return median([abs(v - c) for v in values])


def step_noise(values: Sequence[float]) -> float:
    """Noise sigma from successive differences: a level shift is one outlier, not a wider spread."""
    if len(values) < 3:
        return 0.0
    diffs = [abs(b - a) for a, b in itertools.pairwise(values)]
    return MAD_TO_SIGMA * median(diffs) / math.sqrt(2.0)


@dataclass(frozen=True)
class Baseline:
    """Median and MAD of a metric over the healthy past."""

    median: float
    mad: float
    n: int

    def z(self, value: float) -> float:
        """Robust z-score; a flat baseline gets a floor so a tiny wiggle is not infinite."""
        sigma = max(MAD_TO_SIGMA * self.mad, 1e-3 * max(abs(self.median), 1.0))
        return (value - self.median) / sigma


def baseline(values: Sequence[float]) -> Baseline | None:
    vals = clean(values)
    if not vals:
        return None
    m = median(vals)
    return Baseline(median=m, mad=mad(vals, m), n=len(vals))


@dataclass
class Frame:
    """A window as aligned columns: `ts[i]` and `cols[name][i]` (NaN when not measured)."""

    ts: list[float]
    cols: dict[str, list[float]] = field(default_factory=dict)

    @classmethod
    def from_window(cls, window: Window) -> Frame:
        samples = window.samples
        n = len(samples)
        cols: dict[str, list[float]] = {}
        for i, s in enumerate(samples):
            for name, v in s.m.items():
                col = cols.get(name)
                if col is None:
                    col = cols[name] = [NAN] * n
                col[i] = v
        return cls(ts=[s.t for s in samples], cols=cols)

    def __len__(self) -> int:
        return len(self.ts)

    def has(self, name: str) -> bool:
        return name in self.cols

    def at(self, name: str, idx: Iterable[int]) -> list[float]:
        """Measured values of `name` at the given sample indices."""
        col = self.cols.get(name)
        if col is None:
            return []
        return clean(col[i] for i in idx)

    def column(self, name: str) -> list[float] | None:
        return self.cols.get(name)
