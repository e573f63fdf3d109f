"""Columns of a window and robust statistics over them (median, MAD, quantiles).

Diagnosis reads every metric many times; turning the window into aligned columns once
(NaN where a sample did not measure a metric) keeps each later read a list slice.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence

from core.window import Window

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


def mean(values: Sequence[float]) -> float:
    """Mean of already-clean values; NaN when empty."""
    return sum(values) / len(values) if values else NAN


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


class Baseline:
    """Median and MAD of a metric over the healthy past; the MAD is computed when first needed."""

    def __init__(self, values: list[float]) -> None:
        self._values = sorted(values)
        n = len(self._values)
        self.n = n
        mid = n // 2
        self.median = self._values[mid] if n % 2 else 0.5 * (self._values[mid - 1] + self._values[mid])
        self._mad: float | None = None

    @property
    def mad(self) -> float:
        if self._mad is None:
            self._mad = mad(self._values, self.median)
        return self._mad

    def z(self, value: float) -> float:
        """Robust z-score; a flat baseline gets a floor so a tiny wiggle is not infinite."""
        sigma = max(MAD_TO_SIGMA * self.mad, 1e-3 * max(abs(self.median), 1.0))
        return (value - self.median) / sigma


# Median and MAD settle long before this many samples; a longer healthy past is thinned
# evenly, so a 10-minute window costs no more than a 3-minute one.
MAX_BASELINE_SAMPLES = 180


def baseline_stride(n: int) -> int:
    """Every how many samples a healthy past of `n` samples is read."""
    return max(1, -(-n // MAX_BASELINE_SAMPLES))


def baseline(values: Sequence[float]) -> Baseline | None:
    vals = clean(values)
    if not vals:
        return None
    return Baseline(vals[:: baseline_stride(len(vals))])


Index = range | Sequence[range]


class Frame:
    """A window as aligned columns: `ts[i]` and `column(name)[i]` (NaN when not measured).

    Columns are built on first use: a diagnosis reads only the metrics its rules need.
    """

    def __init__(self, ts: list[float], samples: Sequence[dict[str, float]]) -> None:
        self.ts = ts
        self._rows = samples
        self._cols: dict[str, list[float]] = {}
        keys = tuple(samples[0]) if samples else ()
        # A steady set of sources measures the same names, in the same order, every
        # interval; then one transposition builds every column at C speed.
        steady = all(tuple(m) == keys for m in samples)
        self.names: set[str] = set(keys) if steady else set().union(*(m.keys() for m in samples))
        if samples and steady:
            columns = zip(*[tuple(m.values()) for m in samples], strict=True)
            self._cols = {k: list(col) for k, col in zip(keys, columns, strict=True)}

    @classmethod
    def from_window(cls, window: Window) -> Frame:
        samples = window.samples
        return cls([s.t for s in samples], [s.m for s in samples])

    def __len__(self) -> int:
        return len(self.ts)

    def has(self, name: str) -> bool:
        return name in self.names

    def column(self, name: str) -> list[float] | None:
        col = self._cols.get(name)
        if col is None:
            if name not in self.names:
                return None
            col = self._cols[name] = [m.get(name, NAN) for m in self._rows]
        return col

    def at(self, name: str, idx: Index, stride: int = 1) -> list[float]:
        """Measured values of `name` over a range of samples, or over several ranges,
        taking every `stride`-th sample."""
        col = self.column(name)
        if col is None:
            return []
        runs = [idx] if isinstance(idx, range) else idx
        out: list[float] = []
        for r in runs:
            out += [v for v in col[r.start : r.stop : stride] if v == v]
        return out
