"""Signals measured inside one lost-work span against the healthy past, each with its evidence.

A signal is a score in 0..1 ("how clearly does this metric say so") and the Evidence
that backs it. A rise counts only when it clears a ratio over the baseline *and* an
absolute floor, so a metric that triples from almost nothing says nothing. Without a
healthy stretch (a fault present for the whole window) only the absolute floor can
speak; `prior` then stands in for the baseline shown to the user.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from agent.diagnosis.baseline import Baseline, Frame, baseline, baseline_stride, mean, median, quantile
from agent.diagnosis.correlate import onset, timing_weight
from agent.diagnosis.fmt import fmt
from agent.diagnosis.layout import Layout
from agent.diagnosis.lostwork import NORMAL_DATA_WAIT, LostWork, Span
from core.diagnosis import Evidence
from core.report import HealthReport

EPS = 1e-9
# The time constant of the kernel's psi.*_avg10 averages (SpanView.pressure).
PSI_TAU_S = 10.0
T = TypeVar("T")


def ramp(x: float, lo: float, hi: float) -> float:
    """0 at `lo`, 1 at `hi`, linear between; works in either direction."""
    if x != x:
        return 0.0
    if lo == hi:
        return 1.0 if x >= hi else 0.0
    f = (x - lo) / (hi - lo)
    return 0.0 if f < 0.0 else 1.0 if f > 1.0 else f


@dataclass
class Signal:
    score: float
    evidence: list[Evidence] = field(default_factory=list)
    weight: float = 1.0  # timing weight of the anomaly against the span

    @staticmethod
    def zero() -> Signal:
        return Signal(0.0)


def best(signals: Iterable[Signal]) -> Signal:
    out = Signal.zero()
    for s in signals:
        if s.score > out.score:
            out = s
    return out


def own_threads(v: SpanView) -> int | None:
    """The jobs' own busy threads: their loader workers plus one main thread each; None when the
    workers are not known."""
    total = v.lay.total_workers
    return None if total is None else total + max(len(v.lay.jobs), 1)


@dataclass
class SpanView:
    """One span's figures; `ref` empty means no healthy stretch exists."""

    frame: Frame
    lay: Layout
    report: HealthReport
    lost: LostWork
    span: Span
    interval_s: float
    # Rules ask for the same figures many times (every device, every look-alike).
    _levels: dict[tuple[str, float, float], float] = field(default_factory=dict)
    _memo: dict[tuple[str, str], Any] = field(default_factory=dict)

    def memo(self, key: tuple[str, str], compute: Callable[[], T]) -> T:
        """A figure several rules share (a device's request-size verdict, CPU pressure), once."""
        if key not in self._memo:
            self._memo[key] = compute()
        result: T = self._memo[key]
        return result

    @property
    def chronic(self) -> bool:
        return self.lost.chronic

    def lead_samples(self, seconds: float) -> int:
        return round(seconds / self.interval_s) if self.interval_s > 0 else 0

    def level(self, name: str, q: float = 0.5, lead_s: float = 0.0) -> float:
        """Quantile of the metric over the span, optionally reaching back `lead_s` seconds."""
        key = (name, q, lead_s)
        x = self._levels.get(key)
        if x is None:
            lo = max(0, self.span.i0 - self.lead_samples(lead_s))
            x = self._levels[key] = quantile(self.frame.at(name, range(lo, self.span.i1)), q)
        return x

    def pressure(self, name: str) -> float:
        """The stall share (%) a PSI average reports for the span, corrected for its lag.

        `psi.*_avg10` is the kernel's exponential average over PSI_TAU_S = 10 s: it follows
        d(avg)/dt = (stall - avg) / tau. Over a span of T seconds the mean stall is therefore the
        mean average plus tau times its rise over T: a pressure that began with the span reads low in
        its average for the first ten seconds, and this puts that back. Ends are medians of three
        samples, so one noisy reading does not pass for a rise. NaN when not measured."""
        return self.memo(("pressure", name), lambda: self._pressure(name))

    def _pressure(self, name: str) -> float:
        i0, i1 = self.span.i0, self.span.i1
        values = self.frame.at(name, range(i0, i1))
        if not values:
            return math.nan
        before = self.frame.at(name, range(max(0, i0 - 2), i0 + 1))
        after = self.frame.at(name, range(max(i0, i1 - 3), i1))
        length = max(self.frame.ts[i1 - 1] - self.frame.ts[max(0, i0 - 1)], self.interval_s)
        rise = median(after) - median(before) if before and after else 0.0
        return min(100.0, max(0.0, mean(values) + PSI_TAU_S * rise / length))

    def base(self, name: str) -> Baseline | None:
        """Median and MAD over the healthy past; shared by every span of one diagnosis."""
        cache = self.lost.base_cache
        if name not in cache:
            stride = baseline_stride(sum(len(r) for r in self.lost.ref))
            cache[name] = baseline(self.frame.at(name, self.lost.ref, stride)) if self.lost.ref else None
        return cache[name]

    def knob(self, key: str) -> float | None:
        v = self.report.knobs.get(key)
        return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None

    def _evidence(
        self, name: str, observed: float, base: float | None, threshold: float, rule: str, t0: float | None
    ) -> Evidence:
        return Evidence(
            metric=name, observed=observed, baseline=base, threshold=threshold, rule=rule, t_start=t0
        )

    def _eased(self, ratio: tuple[float, float]) -> tuple[float, float]:
        """The rise (ratio > 1) asked of a figure. Against a healthy past, `ratio` as given. A span
        that worsened out of lost work before it (Span.fall) is judged against that stretch, whose
        figures the standing loss already raised: a figure that rose in proportion to the work lost
        at the step explains it, so the rise asked is at most that proportion (from half of it)."""
        fall = self.span.fall
        if fall <= 1.0:
            return ratio
        return min(ratio[0], 1.0 + (fall - 1.0) / 2.0), min(ratio[1], fall)

    def _rise(self, name: str, x: float, base: float) -> float:
        """How many times `x` is its baseline. A share bounded at 100 % (pressure, a busy share) that
        was already high when the span worsened cannot double; there, what is left unstalled
        shrinking by a factor counts as the same rise (57 % -> 84 %: 43 % left -> 16 %, 2.7x)."""
        rise = x / max(base, EPS)
        if self.span.fall > 1.0 and (name.startswith("psi.") or name.endswith("_pct")):
            # Within a percent of the bound, a share is as stalled as a sampled share can show.
            rise = max(rise, (100.0 - base) / max(100.0 - x, 1.0))
        return rise

    def up(
        self,
        name: str,
        ratio: tuple[float, float],
        floor: tuple[float, float] | None,
        rule: str,
        *,
        q: float = 0.5,
        lead_s: float = 0.0,
        prior: float | None = None,
    ) -> Signal:
        """The metric rose: at least `ratio` times its baseline and above `floor`."""
        if not self.frame.has(name):
            return Signal.zero()
        x = self.level(name, q, lead_s)
        if x != x:
            return Signal.zero()
        b = self.base(name)
        floor_score = ramp(x, floor[0], floor[1]) if floor is not None else 1.0
        floor_lo = floor[0] if floor is not None else 0.0
        ratio = self._eased(ratio)
        if b is not None:
            ratio_score = ramp(self._rise(name, x, b.median), ratio[0], ratio[1]) if b.median > EPS else 1.0
            score = min(floor_score, ratio_score)
            # A rise inside the baseline's own noise is no rise, however large the ratio.
            if score > 0.0 and b.z(x) < 4.0:
                score = 0.0
            shown: float | None = b.median
            threshold = max(floor_lo, b.median * ratio[0])
        else:
            # Without a healthy past, a metric with no absolute floor cannot be judged.
            score = floor_score if floor is not None else 0.0
            shown = prior
            threshold = floor_lo
        if score <= 0.0:
            return Signal(0.0)
        t0 = onset(self.frame, name, self.span, threshold, lead=self.lead_samples(lead_s) + 2)
        words = f"{rule}: rose to {_fmt_rule(x)} (threshold {_fmt_rule(threshold)})"
        return Signal(
            score,
            [self._evidence(name, x, shown, threshold, words, t0)],
            timing_weight(t0, self.span, self.interval_s),
        )

    def down(
        self,
        name: str,
        ratio: tuple[float, float],
        ceiling: tuple[float, float] | None,
        rule: str,
        *,
        q: float = 0.5,
        prior: float | None = None,
    ) -> Signal:
        """The metric fell: below `ratio` of its baseline and under `ceiling` (ceiling[0] > ceiling[1])."""
        if not self.frame.has(name):
            return Signal.zero()
        x = self.level(name, q)
        if x != x:
            return Signal.zero()
        b = self.base(name)
        ceil_score = ramp(x, ceiling[0], ceiling[1]) if ceiling is not None else 1.0
        ceil_hi = ceiling[0] if ceiling is not None else math.inf
        r0, r1 = self._eased((1.0 / ratio[0], 1.0 / ratio[1]))
        ratio = (1.0 / r0, 1.0 / r1)
        if b is not None:
            ratio_score = ramp(x / max(b.median, EPS), ratio[0], ratio[1]) if b.median > EPS else 0.0
            score = min(ceil_score, ratio_score)
            if score > 0.0 and b.z(x) > -4.0:
                score = 0.0
            shown: float | None = b.median
            threshold = min(ceil_hi, b.median * ratio[0])
        else:
            score = ceil_score if ceiling is not None else 0.0
            shown = prior
            threshold = ceil_hi
        if score <= 0.0:
            return Signal(0.0)
        t0 = onset(self.frame, name, self.span, threshold, rising=False, lead=2)
        words = f"{rule}: fell to {_fmt_rule(x)} (threshold {_fmt_rule(threshold)})"
        return Signal(
            score,
            [self._evidence(name, x, shown, threshold, words, t0)],
            timing_weight(t0, self.span, self.interval_s),
        )

    def absolute(
        self, name: str, lo: float, hi: float, rule: str, *, q: float = 0.5, prior: float | None = None
    ) -> Signal:
        """The metric's level alone, 0 at `lo` and 1 at `hi` (either direction)."""
        if not self.frame.has(name):
            return Signal.zero()
        x = self.level(name, q)
        score = ramp(x, lo, hi)
        if score <= 0.0:
            return Signal(0.0)
        b = self.base(name)
        shown = b.median if b is not None else prior
        side = "at or above" if hi >= lo else "at or below"
        words = f"{rule}: {_fmt_rule(x)}, {side} {_fmt_rule(lo)}"
        return Signal(score, [self._evidence(name, x, shown, lo, words, self.span.t_start)])

    # -- span-wide figures every rule needs ---------------------------------------------

    def data_wait_excess(self) -> float | None:
        """How far the trainer's data-wait share rose over normal; None without trainer data."""
        out: float | None = None
        for job in self.lay.jobs:
            name = f"trainer.{job}.data_wait_frac"
            if not self.frame.has(name):
                continue
            x = self.level(name)
            b = self.base(name)
            ref = max(b.median if b is not None else 0.0, NORMAL_DATA_WAIT)
            ex = x - ref
            out = ex if out is None else max(out, ex)
        return out

    def data_side(self) -> float:
        """0..1: the lost work is the trainer waiting for input. 0.5 when that is unknown."""
        ex = self.data_wait_excess()
        return 0.5 if ex is None else ramp(ex, 0.04, 0.15)

    def compute_side(self) -> float:
        """0..1: the GPUs lost work while the input was ready (data wait stayed low)."""
        ex = self.data_wait_excess()
        return 0.5 if ex is None else ramp(ex, 0.12, 0.04)

    def util_drop(self) -> float:
        """Relative fall of mean GPU utilization in the span, against the healthy past or a busy GPU."""
        names = [f"gpu.{g}.util_pct" for g in self.lay.gpus if self.frame.has(f"gpu.{g}.util_pct")]
        if not names:
            return 0.0
        drops = []
        for n in names:
            x = self.level(n)
            b = self.base(n)
            ref = b.median if b is not None else 90.0
            drops.append((ref - x) / ref if ref > 0 else 0.0)
        return max(0.0, sum(drops) / len(drops))

    def dev_names(self, template: str) -> list[tuple[str, str]]:
        return [
            (d, template.replace("<dev>", d))
            for d in self.lay.devs
            if self.frame.has(template.replace("<dev>", d))
        ]

    def job_names(self, template: str) -> list[tuple[str, str]]:
        return [
            (j, template.replace("<job>", j))
            for j in self.lay.jobs
            if self.frame.has(template.replace("<job>", j))
        ]

    def gpu_names(self, template: str) -> list[tuple[int, str]]:
        return [
            (g, template.replace("<i>", str(g)))
            for g in self.lay.gpus
            if self.frame.has(template.replace("<i>", str(g)))
        ]


def _fmt_rule(v: float) -> str:
    """Numbers inside rule text: as the answer shows them, so grounding can trace them."""
    return fmt(v)


@dataclass
class Finding:
    """One category's verdict on one span, before ranking."""

    score: float
    summary: str
    evidence: list[Evidence] = field(default_factory=list)
    target: str | None = None
    weight: float = 1.0  # timing weight of its leading signal
    judged: bool = True  # False: the span's figures cannot tell this cause (summary says why)

    @staticmethod
    def none_found(summary: str) -> Finding:
        return Finding(0.0, summary)

    @staticmethod
    def not_judged(summary: str) -> Finding:
        return Finding(0.0, "not judged: " + summary, judged=False)


def gather(*signals: Signal) -> list[Evidence]:
    """Evidence of every signal that said something, strongest first, each metric once (where two
    signals judge the same figure, the stronger one's line stands)."""
    out: dict[str, Evidence] = {}
    for s in sorted(signals, key=lambda s: -s.score):
        if s.score > 0.0:
            for e in s.evidence:
                out.setdefault(e.metric, e)
    return list(out.values())
