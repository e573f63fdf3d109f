"""Where the GPUs lost work: spans in which the training KPIs fell short.

Each KPI becomes a per-sample "loss" in 0..1 (share of work not done). Relative KPIs
(step time, throughput) compare against the window's own healthy quantile; absolute ones
(data-wait share, GPU utilization, SM clock) also compare against what a busy GPU does,
so a fault present for the whole window still shows as lost work. A sample counts only
when its loss clears both a minimum effect and the KPI's own noise, so benign wiggles do
not open a span.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from agent.diagnosis.baseline import NAN, Baseline, Frame, clean, mean, quantile, step_noise
from agent.diagnosis.layout import Layout

# A busy training GPU runs kernels most of the time; below this the GPU is idling.
BUSY_UTIL_PCT = 90.0
# A healthy input pipeline hides almost all loading; this much wait is normal.
NORMAL_DATA_WAIT = 0.03
NOISE_K = 3.5
# Samples either side that must all have lost work for a noisy KPI's sample to count (see _kpi).
STEADY_REACH = 2


@dataclass
class Kpi:
    label: str
    metric: str
    loss: list[float]
    flagged: list[bool]
    # Loss against the window's own best (throughput, step time, GPU utilization), not against an
    # absolute norm (data wait, pressure stalls): only such a loss shows the work falling further.
    relative: bool = True


@dataclass
class Span:
    i0: int
    i1: int  # exclusive
    t_start: float
    t_end: float
    severity: float
    signals: list[str] = field(default_factory=list)
    # Where the span is the later part of lost work that worsened inside it: the samples before the
    # step, which the span is judged against instead of a healthy past (see _worsened), and the
    # factor by which the work done fell at the step (work before / work after).
    past: range | None = None
    fall: float = 1.0

    @property
    def idx(self) -> range:
        return range(self.i0, self.i1)


@dataclass
class LostWork:
    spans: list[Span]
    ref: list[range]  # the healthy past: samples outside every span and its guard
    kpis: list[Kpi]
    measured: bool  # False when the window has no KPI at all
    base_cache: dict[str, Baseline | None] = field(default_factory=dict)

    @property
    def chronic(self) -> bool:
        """Lost work with no healthy stretch to compare against."""
        return bool(self.spans) and not self.ref

    def judged_against(self, past: list[range]) -> LostWork:
        """The same lost work with `past` as the stretches to compare against (for a span that
        worsened out of the lost work before it: that stretch, or none), with its own baselines."""
        return LostWork(spans=self.spans, ref=past, kpis=self.kpis, measured=self.measured)


def _across(frame: Frame, names: list[str], pick: Callable[[list[float]], float]) -> list[float]:
    """Per sample, `pick` (mean, max, min) over the measured values of several columns."""
    cols = [c for c in (frame.column(n) for n in names) if c is not None]
    out: list[float] = []
    for row in zip(*cols, strict=True):
        total = sum(row)
        if total == total:  # no NaN in the row: the common case, one C-level pass
            out.append(pick(list(row)))
        else:
            vals = [x for x in row if x == x]
            out.append(pick(vals) if vals else NAN)
    return out


def _majority(flags: list[bool]) -> list[bool]:
    """Two of three neighbours (a median of three on the flags): one odd sample neither
    opens nor splits a span."""
    if len(flags) < 3:
        return flags
    mid = [a + b + c >= 2 for a, b, c in zip(flags, flags[1:], flags[2:], strict=False)]
    return [flags[0] and flags[1], *mid, flags[-1] and flags[-2]]


def _kpi(
    label: str, metric: str, loss: list[float], min_effect: float, noise: float, relative: bool = True
) -> Kpi:
    """Samples whose loss stands out of the series' own noise. The noise is taken from successive
    differences, so a KPI that swings fast between bad and worse (a checkpoint every other second)
    reads as noisy; a sample whose every neighbour within STEADY_REACH also lost at least
    `min_effect` lost work however it swings."""
    thr = max(min_effect, NOISE_K * noise)
    n = len(loss)
    flags = []
    for i, x in enumerate(loss):
        near = [y for y in loss[max(0, i - STEADY_REACH) : min(n, i + STEADY_REACH + 1)] if y == y]
        flags.append(x >= thr or (x == x and len(near) > STEADY_REACH and min(near) >= min_effect))
    return Kpi(label, metric, loss, _majority(flags), relative)


def _higher_better(label: str, metric: str, series: list[float], min_effect: float, floor: float) -> Kpi:
    vals = clean(series)
    ref = max(quantile(vals, 0.9), floor)
    noise = step_noise(vals) / ref if ref > 0 else 0.0
    loss = [max(0.0, (ref - v) / ref) if v == v and ref > 0 else NAN for v in series]
    return _kpi(label, metric, loss, min_effect, noise)


def _clock_ratio(frame: Frame, g: int) -> list[float] | None:
    """SM clock over its maximum while the GPU is busy; +inf otherwise, so `min` skips it.

    Clocks only mean something while kernels run; an idle GPU drops its clock on purpose."""
    clk, mx = frame.column(f"gpu.{g}.sm_clock_mhz"), frame.column(f"gpu.{g}.sm_clock_max_mhz")
    if clk is None or mx is None:
        return None
    util = frame.column(f"gpu.{g}.util_pct") or [NAN] * len(frame)
    inf = math.inf
    return [
        c / m if c == c and m == m and m > 0 and not (u == u and u < 50.0) else inf
        for c, m, u in zip(clk, mx, util, strict=True)
    ]


def kpis(frame: Frame, lay: Layout) -> list[Kpi]:
    out: list[Kpi] = []
    util_names = [f"gpu.{g}.util_pct" for g in lay.gpus if frame.has(f"gpu.{g}.util_pct")]
    if util_names:
        util = _across(frame, util_names, mean)
        out.append(_higher_better("GPU utilization", util_names[0], util, 0.10, BUSY_UTIL_PCT))
        ratios = {g: r for g in lay.gpus if (r := _clock_ratio(frame, g)) is not None}
        if ratios:
            lowest = [min(row) for row in zip(*ratios.values(), strict=True)]
            clock = [x if x != math.inf else NAN for x in lowest]
            first = next(iter(ratios))
            out.append(_higher_better("SM clock", f"gpu.{first}.sm_clock_mhz", clock, 0.08, 0.95))
    elif any(frame.has(f"gpu.{g}.power_w") for g in lay.gpus):
        names = [f"gpu.{g}.power_w" for g in lay.gpus if frame.has(f"gpu.{g}.power_w")]
        out.append(_higher_better("GPU power", names[0], _across(frame, names, mean), 0.2, 0.0))
    for job in lay.jobs:
        dw = frame.column(f"trainer.{job}.data_wait_frac")
        if dw is not None:
            loss = [max(0.0, v - NORMAL_DATA_WAIT) if v == v else NAN for v in dw]
            out.append(
                _kpi(
                    f"data wait of {job}",
                    f"trainer.{job}.data_wait_frac",
                    loss,
                    0.07,
                    step_noise(clean(dw)),
                    relative=False,
                )
            )
        st = frame.column(f"trainer.{job}.step_time_ms")
        if st is not None:
            vals = clean(st)
            ref = quantile(vals, 0.1)
            if ref > 0:
                loss = [max(0.0, 1.0 - ref / v) if v == v and v > 0 else NAN for v in st]
                out.append(
                    _kpi(
                        f"step time of {job}",
                        f"trainer.{job}.step_time_ms",
                        loss,
                        0.12,
                        step_noise(vals) / ref,
                    )
                )
        sp = frame.column(f"trainer.{job}.samples_per_s")
        if sp is not None:
            out.append(_higher_better(f"throughput of {job}", f"trainer.{job}.samples_per_s", sp, 0.12, 0.0))
    if not out:
        # No GPU or trainer figures: pressure stalls are the closest thing to lost work.
        names = [n for n in ("psi.cpu.some_avg10", "psi.io.some_avg10", "psi.mem.some_avg10") if frame.has(n)]
        if names:
            stall = _across(frame, names, max)
            loss = [max(0.0, v / 100.0 - 0.05) if v == v else NAN for v in stall]
            out.append(
                _kpi("pressure stall", names[0], loss, 0.10, step_noise(clean(stall)) / 100.0, relative=False)
            )
    return out


def _runs(flags: list[bool], max_gap: int, min_len: int) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    i, n = 0, len(flags)
    while i < n:
        if not flags[i]:
            i += 1
            continue
        j = i
        while j < n and flags[j]:
            j += 1
        if runs and i - runs[-1][1] <= max_gap:
            runs[-1] = (runs[-1][0], j)
        else:
            runs.append((i, j))
        i = j
    return [(a, b) for a, b in runs if b - a >= min_len]


# Lost work that worsens by this share of the work more, and stays worse, had a second fault begin
# inside it: a job that never ran at its best (its loaders short of CPU, its data wait never near
# zero) and then lost half of what it did to a newcomer. On the matrix's real recordings (rounds
# 1-11), the mid-window faults step by 0.38-0.96 of the work at their onset (43 of 44 split there);
# of the 185 with no onset inside the window, 7 split (steps of 0.25-0.64: hogs and starved
# loaders whose throughput moved for a stretch), the rest move by less.
WORSE_STEP = 0.25
# Steps a span is split at, at most: a second newcomer may come after the first.
MAX_STEPS = 3
# Candidate steps tried in a span at most (a long window is searched on a stride).
STEP_CANDIDATES = 60


def _worsened(ks: list[Kpi], a: int, b: int, min_part: int) -> tuple[int, float] | None:
    """The sample from which the work of span [a, b) fell by WORSE_STEP more and stayed down, on
    some relative KPI, and the factor by which the work done fell there; None without one.

    Each KPI's step is where splitting its loss in two fits best (the least absolute deviation from
    each part's median). It counts when the median loss after exceeds the median before by
    WORSE_STEP and the quieter three quarters of the samples after lie above the busier three
    quarters before: a KPI that swings (a checkpoint every few seconds) does not split."""
    stride = max(1, (b - a) // STEP_CANDIDATES)
    best: tuple[int, float] | None = None
    best_gap = 0.0
    for k in (k for k in ks if k.relative):
        fit: tuple[float, int, list[float], list[float], float, float] | None = None
        for c in range(a + min_part, b - min_part + 1, stride):
            before, after = clean(k.loss[a:c]), clean(k.loss[c:b])
            if len(before) < min_part or len(after) < min_part:
                continue
            mb, ma = quantile(before, 0.5), quantile(after, 0.5)
            cost = sum(abs(x - mb) for x in before) + sum(abs(x - ma) for x in after)
            if fit is None or cost < fit[0]:
                fit = (cost, c, before, after, mb, ma)
        if fit is None:
            continue
        _, c, before, after, lb, la = fit
        gap = la - lb
        if gap >= WORSE_STEP and quantile(after, 0.25) > quantile(before, 0.75) and gap > best_gap:
            best, best_gap = (c, (1.0 - lb) / max(1.0 - la, 0.05)), gap
    return best


def find_lost_work(frame: Frame, lay: Layout) -> LostWork:
    ks = kpis(frame, lay)
    n = len(frame)
    if not ks or n == 0:
        return LostWork(spans=[], ref=[range(n)], kpis=ks, measured=bool(ks))
    flags = [any(row) for row in zip(*(k.flagged for k in ks), strict=True)]
    min_len = 3 if n >= 20 else 2
    spans: list[Span] = []
    for a, b in _runs(flags, max_gap=2, min_len=min_len):
        losses: list[float] = []
        signals: set[str] = set()
        for i in range(a, b):
            step = [k.loss[i] for k in ks if k.flagged[i] and k.loss[i] == k.loss[i]]
            losses.append(max(step) if step else 0.0)
            signals.update(k.label for k in ks if k.flagged[i])
        parts: list[tuple[int, int, range | None, float]] = [(a, b, None, 1.0)]
        # Each step splits the stretch after it off, judged against the stretch before it (less the
        # sample of the step itself); the stretch after may worsen again.
        while len(parts) <= MAX_STEPS and (worse := _worsened(ks, parts[-1][0], b, max(5, n // 10))):
            p0, _, past, fall = parts.pop()
            at, drop = worse
            parts += [(p0, at, past, fall), (at, b, range(p0, max(p0 + 1, at - 1)), drop)]
        for p0, p1, past, fall in parts:
            part = losses[p0 - a : p1 - a]
            sev = min(1.0, sum(part) / len(part))
            spans.append(Span(p0, p1, frame.ts[p0], frame.ts[p1 - 1], sev, sorted(signals), past, fall))
    # Guard samples around spans: the edges of a fault are neither healthy nor faulty.
    guard = 2
    bad = [False] * n
    for s in spans:
        for i in range(max(0, s.i0 - guard), min(n, s.i1 + guard)):
            bad[i] = True
    good = [not b for b in bad]
    ref = [range(a, b) for a, b in _runs(good, max_gap=0, min_len=1)]
    if sum(len(r) for r in ref) < max(5, n // 10):
        ref = []
    return LostWork(spans=spans, ref=ref, kpis=ks, measured=True)
