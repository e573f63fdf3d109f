"""Where the GPUs lost work: spans in which the training KPIs fell short.

Each KPI becomes a per-sample "loss" in 0..1 (share of work not done). Relative KPIs
(step time, throughput) compare against the window's own healthy quantile; absolute ones
(data-wait share, GPU utilization, SM clock) also compare against what a busy GPU does,
so a fault present for the whole window still shows as lost work. A sample counts only
when its loss clears both a minimum effect and the KPI's own noise, so benign wiggles do
not open a span.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agent.diagnosis.baseline import NAN, Frame, clean, quantile, step_noise
from agent.diagnosis.layout import Layout

# A busy training GPU runs kernels most of the time; below this the GPU is idling.
BUSY_UTIL_PCT = 90.0
# A healthy input pipeline hides almost all loading; this much wait is normal.
NORMAL_DATA_WAIT = 0.03
NOISE_K = 3.5


@dataclass
class Kpi:
    label: str
    metric: str
    loss: list[float]
    flagged: list[bool]
    healthy: float | None = None


@dataclass
class Span:
    i0: int
    i1: int  # exclusive
    t_start: float
    t_end: float
    severity: float
    signals: list[str] = field(default_factory=list)

    @property
    def idx(self) -> range:
        return range(self.i0, self.i1)


@dataclass
class LostWork:
    spans: list[Span]
    ref_idx: list[int]
    kpis: list[Kpi]
    measured: bool  # False when the window has no KPI at all

    @property
    def chronic(self) -> bool:
        """Lost work with no healthy stretch to compare against."""
        return bool(self.spans) and not self.ref_idx


def _mean_across(frame: Frame, names: list[str]) -> list[float]:
    cols = [c for c in (frame.column(n) for n in names) if c is not None]
    out: list[float] = []
    for i in range(len(frame)):
        vals = [c[i] for c in cols if c[i] == c[i]]
        out.append(sum(vals) / len(vals) if vals else NAN)
    return out


def _max_across(frame: Frame, names: list[str]) -> list[float]:
    cols = [c for c in (frame.column(n) for n in names) if c is not None]
    out: list[float] = []
    for i in range(len(frame)):
        vals = [c[i] for c in cols if c[i] == c[i]]
        out.append(max(vals) if vals else NAN)
    return out


def _smooth(xs: list[float]) -> list[float]:
    """Centred median of three: one odd sample neither opens nor splits a span."""
    n = len(xs)
    if n < 3:
        return xs
    out = [xs[0]]
    for i in range(1, n - 1):
        trio = sorted(v for v in xs[i - 1 : i + 2] if v == v)
        out.append(trio[len(trio) // 2] if trio else NAN)
    out.append(xs[-1])
    return out


def _kpi(label: str, metric: str, loss: list[float], min_effect: float, noise: float, healthy: float) -> Kpi:
    thr = max(min_effect, NOISE_K * noise)
    smooth = _smooth(loss)
    return Kpi(label, metric, smooth, [x == x and x >= thr for x in smooth], healthy)


def _higher_better(label: str, metric: str, series: list[float], min_effect: float, floor: float) -> Kpi:
    vals = clean(series)
    ref = max(quantile(vals, 0.9), floor)
    noise = step_noise(vals) / ref if ref > 0 else 0.0
    loss = [max(0.0, (ref - v) / ref) if v == v and ref > 0 else NAN for v in series]
    return _kpi(label, metric, loss, min_effect, noise, ref)


def kpis(frame: Frame, lay: Layout) -> list[Kpi]:
    out: list[Kpi] = []
    util_names = [f"gpu.{g}.util_pct" for g in lay.gpus if frame.has(f"gpu.{g}.util_pct")]
    if util_names:
        util = _mean_across(frame, util_names)
        out.append(_higher_better("GPU utilization", util_names[0], util, 0.10, BUSY_UTIL_PCT))
        # Clocks only mean something while kernels run; an idle GPU drops its clock on purpose.
        ratios: list[int] = []
        for g in lay.gpus:
            if frame.has(f"gpu.{g}.sm_clock_mhz") and frame.has(f"gpu.{g}.sm_clock_max_mhz"):
                ratios.append(g)
        if ratios:
            clock = []
            for i in range(len(frame)):
                vals = []
                for g in ratios:
                    c = frame.cols[f"gpu.{g}.sm_clock_mhz"][i]
                    m = frame.cols[f"gpu.{g}.sm_clock_max_mhz"][i]
                    u = frame.cols.get(f"gpu.{g}.util_pct", [NAN] * len(frame))[i]
                    if c == c and m == m and m > 0 and not (u == u and u < 50.0):
                        vals.append(c / m)
                clock.append(min(vals) if vals else NAN)
            k = _higher_better("SM clock", f"gpu.{ratios[0]}.sm_clock_mhz", clock, 0.08, 0.95)
            k.healthy = None  # a ratio to the maximum, not in the metric's MHz
            out.append(k)
    elif any(frame.has(f"gpu.{g}.power_w") for g in lay.gpus):
        names = [f"gpu.{g}.power_w" for g in lay.gpus if frame.has(f"gpu.{g}.power_w")]
        out.append(_higher_better("GPU power", names[0], _mean_across(frame, names), 0.2, 0.0))
    for job in lay.jobs:
        dw_name = f"trainer.{job}.data_wait_frac"
        if frame.has(dw_name):
            dw = frame.cols[dw_name]
            loss = [max(0.0, v - NORMAL_DATA_WAIT) if v == v else NAN for v in dw]
            out.append(
                _kpi(f"data wait of {job}", dw_name, loss, 0.07, step_noise(clean(dw)), NORMAL_DATA_WAIT)
            )
        st_name = f"trainer.{job}.step_time_ms"
        if frame.has(st_name):
            st = frame.cols[st_name]
            vals = clean(st)
            ref = quantile(vals, 0.1)
            if ref > 0:
                loss = [max(0.0, 1.0 - ref / v) if v == v and v > 0 else NAN for v in st]
                out.append(_kpi(f"step time of {job}", st_name, loss, 0.12, step_noise(vals) / ref, ref))
        sp_name = f"trainer.{job}.samples_per_s"
        if frame.has(sp_name):
            out.append(_higher_better(f"throughput of {job}", sp_name, frame.cols[sp_name], 0.12, 0.0))
    if not out:
        # No GPU or trainer figures: pressure stalls are the closest thing to lost work.
        names = [n for n in ("psi.cpu.some_avg10", "psi.io.some_avg10", "psi.mem.some_avg10") if frame.has(n)]
        if names:
            stall = _max_across(frame, names)
            loss = [max(0.0, v / 100.0 - 0.05) if v == v else NAN for v in stall]
            out.append(_kpi("pressure stall", names[0], loss, 0.10, step_noise(clean(stall)) / 100.0, 0.05))
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


def find_lost_work(frame: Frame, lay: Layout) -> LostWork:
    ks = kpis(frame, lay)
    n = len(frame)
    if not ks or n == 0:
        return LostWork(spans=[], ref_idx=list(range(n)), kpis=ks, measured=bool(ks))
    flags = [any(k.flagged[i] for k in ks) for i in range(n)]
    min_len = 3 if n >= 20 else 2
    spans: list[Span] = []
    for a, b in _runs(flags, max_gap=2, min_len=min_len):
        losses: list[float] = []
        signals: set[str] = set()
        for i in range(a, b):
            step = [k.loss[i] for k in ks if k.flagged[i]]
            losses.append(max(step) if step else 0.0)
            signals.update(k.label for k in ks if k.flagged[i])
        sev = min(1.0, sum(losses) / len(losses))
        t_end = frame.ts[b - 1]
        spans.append(Span(a, b, frame.ts[a], t_end, sev, sorted(signals)))
    # Guard samples around spans: the edges of a fault are neither healthy nor faulty.
    guard = 2
    bad = [False] * n
    for s in spans:
        for i in range(max(0, s.i0 - guard), min(n, s.i1 + guard)):
            bad[i] = True
    ref = [i for i in range(n) if not bad[i]]
    if len(ref) < max(5, n // 10):
        ref = []
    return LostWork(spans=spans, ref_idx=ref, kpis=ks, measured=True)
