"""Effect tracking: once a change is in force, watch the KPI for a window and judge it against the one before.

A change is judged from when it acts, not from when it was requested: a trainer
puts loader changes in force at its next epoch, readahead reaches loaders once they
reopen their files. Until then the change waits; one that is not in force within
`in_force_deadline_s` is reverted (verdict never_in_force), not judged.

The test is noise-aware: it compares medians (robust to the odd slow step), and
calls a difference real only when it is larger than `z` standard errors of the
median difference (from each window's MAD) and at least `min_effect` of the value
before. Guard metrics (memory pressure by default) veto a change the KPI found
beneficial or neutral when they rose past their limit. Beneficial keeps the change;
harmful rolls it back at once and quarantines the primitive; neutral keeps or
reverts it, as configured.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from core.proposal import Action
from core.window import Window

# never_in_force: the change did not act within the deadline; reverted, not held against the primitive.
Verdict = Literal["beneficial", "neutral", "harmful", "unknown", "never_in_force"]
MAD_TO_SIGMA = 1.4826  # MAD of a normal sample, scaled to its standard deviation
MEDIAN_SE = 1.2533  # standard error of a median is sqrt(pi/2) times that of a mean

_SEGMENT = r"(?:\*|[A-Za-z0-9_:-]+)"


class Guard(BaseModel):
    """A metric that must not rise past a limit after a change, whatever the KPI says.

    The rise is the median after minus the median before, over the same windows as the KPI.
    Allowed is the largest of the bounds given and the noise (`z` standard errors): with only
    `max_rise_rel`, a metric that sat at 0 before allows no rise beyond its noise.
    """

    model_config = ConfigDict(extra="forbid")

    metric: str = Field(
        pattern=rf"^{_SEGMENT}(?:\.{_SEGMENT})*$",
        description="a metric of the spec's vocabulary (spec/incident-v1.md); `*` stands for one whole "
        "segment, a job or a device, and the guard then holds for each: `trainer.*.data_wait_frac`",
    )
    max_rise: float | None = Field(
        default=None, ge=0, description="largest rise of the median allowed, in the metric's own unit"
    )
    max_rise_rel: float | None = Field(
        default=None, ge=0, description="largest rise allowed as a share of the median before (0.5: +50%)"
    )

    @model_validator(mode="after")
    def _bounded(self) -> Guard:
        if self.max_rise is None and self.max_rise_rel is None:
            raise ValueError(f"guard on {self.metric}: give max_rise, max_rise_rel or both")
        return self

    def matches(self, name: str) -> bool:
        want, have = self.metric.split("."), name.split(".")
        return len(want) == len(have) and all(w in ("*", h) for w, h in zip(want, have, strict=True))


def default_guards() -> list[Guard]:
    """Memory pressure: what more loader workers, deeper prefetch or larger readahead cost.

    PSI avg10 is the share (%) of the last 10 s in which some task (`some`), or every non-idle
    task at once (`full`), stalled on memory. A training host with memory to spare sits at 0 with
    jitter under a point; `full` stalls stop the trainer too, so 2 points more (or +50% on a host
    already under pressure) already cost throughput the KPI window may not yet show, and `some`
    gets a looser 5 points. No source collects an OOM-kill counter or the jobs' errors yet
    (agent/sources/procfs.py leaves vmstat's oom_kill out; the trainer hook reports none): once
    one does, an operator adds it here, e.g. {metric: <its name>, max_rise: 0}.
    """
    return [
        Guard(metric="psi.mem.full_avg10", max_rise=2.0, max_rise_rel=0.5),
        Guard(metric="psi.mem.some_avg10", max_rise=5.0, max_rise_rel=0.5),
    ]


class EffectConfig(BaseModel):
    """How a change's effect is judged; embedded as-is in the operator's config file."""

    model_config = ConfigDict(extra="forbid")

    window_s: float = Field(default=30.0, gt=0, description="seconds of KPI compared before and after")
    settle_s: float = Field(
        default=2.0,
        ge=0,
        description="seconds skipped once a change is in force: loaders restart, caches warm",
    )
    min_effect: float = Field(default=0.10, ge=0, description="smallest relative change that counts")
    z: float = Field(
        default=2.0,
        ge=0,
        description="standard errors of the median difference a change must exceed to count",
    )
    min_samples: int = Field(
        default=5, ge=2, description="fewest KPI samples in each window for a verdict (fewer: unknown, kept)"
    )
    neutral: Literal["keep", "revert"] = Field(default="keep", description="what a neutral verdict does")
    # Loader changes take effect at the trainer's next epoch and readahead once the loaders reopen
    # their files, also at an epoch boundary: the wait is up to one epoch. The jobs this agent is for
    # have epochs of minutes (an ImageNet-1k epoch, 1.28 M samples at ~2,000-3,000 samples/s, takes
    # 7-10 min), so 15 min covers one whole epoch with room; raise it above your longest epoch.
    in_force_deadline_s: float = Field(
        default=900.0,
        gt=0,
        description="a change not in force this many seconds after it was requested is reverted "
        "(verdict never_in_force)",
    )
    guards: list[Guard] = Field(
        default_factory=default_guards,
        description="metrics that veto keeping a change when they rise too far, whatever the KPI says",
    )


@dataclass(frozen=True)
class Kpi:
    """A figure per sample: one metric, or the mean of several (every GPU's utilization)."""

    label: str
    names: tuple[str, ...]
    higher_is_better: bool

    def value(self, m: dict[str, float]) -> float | None:
        vals = [m[n] for n in self.names if n in m]
        return statistics.fmean(vals) if vals else None

    def series(self, window: Window, start: float, end: float) -> list[float]:
        out: list[float] = []
        for s in window:
            if start < s.t <= end:
                v = self.value(s.m)
                if v is not None:
                    out.append(v)
        return out


_GPU_UTIL = re.compile(r"^gpu\.\d+\.util_pct$")


def pick_kpi(names: Iterable[str], job: str | None = None, device: str | None = None) -> Kpi | None:
    """The KPI that best says whether training got faster: trainer throughput, then GPU
    utilization, then the trainer's data-wait share, the device's p99, memory pressure."""
    have = set(names)
    jobs = sorted({n.split(".")[1] for n in have if n.startswith("trainer.") and n.count(".") == 2})
    js = [job] if job in jobs else jobs
    for j in js:
        if f"trainer.{j}.samples_per_s" in have:
            return Kpi(f"trainer.{j}.samples_per_s", (f"trainer.{j}.samples_per_s",), True)
    gpus = tuple(sorted(n for n in have if _GPU_UTIL.match(n)))
    if gpus:
        return Kpi("gpu util_pct (mean)", gpus, True)
    for j in js:
        if f"trainer.{j}.data_wait_frac" in have:
            return Kpi(f"trainer.{j}.data_wait_frac", (f"trainer.{j}.data_wait_frac",), False)
    if device is not None and f"io.{device}.lat_p99_us" in have:
        return Kpi(f"io.{device}.lat_p99_us", (f"io.{device}.lat_p99_us",), False)
    if "psi.mem.some_avg10" in have:
        return Kpi("psi.mem.some_avg10", ("psi.mem.some_avg10",), False)
    return None


class Comparison(BaseModel):
    model_config = ConfigDict(extra="forbid")

    before: float | None
    after: float | None
    n_before: int
    n_after: int
    rel_change: float | None = Field(description="(after - before) / |before|")
    threshold: float | None = Field(description="the smallest difference the noise lets count")
    verdict: Verdict
    why: str


def _sigma(xs: list[float]) -> float:
    med = statistics.median(xs)
    return MAD_TO_SIGMA * statistics.median(abs(x - med) for x in xs)


def compare(before: list[float], after: list[float], higher_is_better: bool, cfg: EffectConfig) -> Comparison:
    nb, na = len(before), len(after)
    if nb < cfg.min_samples or na < cfg.min_samples:
        return Comparison(
            before=statistics.median(before) if before else None,
            after=statistics.median(after) if after else None,
            n_before=nb,
            n_after=na,
            rel_change=None,
            threshold=None,
            verdict="unknown",
            why=f"too few samples ({nb} before, {na} after; {cfg.min_samples} needed)",
        )
    mb, ma = statistics.median(before), statistics.median(after)
    se = MEDIAN_SE * math.sqrt(_sigma(before) ** 2 / nb + _sigma(after) ** 2 / na)
    threshold = max(cfg.z * se, cfg.min_effect * abs(mb))
    delta = ma - mb
    rel = delta / abs(mb) if mb != 0 else (math.inf if delta > 0 else -math.inf if delta < 0 else 0.0)
    better = delta > 0 if higher_is_better else delta < 0
    if abs(delta) <= threshold or delta == 0:
        verdict: Verdict = "neutral"
        why = f"median {mb:.4g} -> {ma:.4g}: within noise or under {cfg.min_effect:.0%}"
    elif better:
        verdict = "beneficial"
        why = f"median {mb:.4g} -> {ma:.4g} ({rel:+.0%}), beyond noise"
    else:
        verdict = "harmful"
        why = f"median {mb:.4g} -> {ma:.4g} ({rel:+.0%}), worse beyond noise"
    return Comparison(
        before=mb,
        after=ma,
        n_before=nb,
        n_after=na,
        rel_change=rel if math.isfinite(rel) else None,
        threshold=threshold,
        verdict=verdict,
        why=why,
    )


class GuardBreach(BaseModel):
    """A guard metric that rose past its limit after a change."""

    model_config = ConfigDict(extra="forbid")

    metric: str
    before: float = Field(description="median before the change took effect")
    after: float = Field(description="median in the window judged")
    allowed: float = Field(description="the largest rise the guard and the noise allowed")

    def text(self) -> str:
        return (
            f"{self.metric} rose {self.before:.4g} -> {self.after:.4g} "
            f"(+{self.after - self.before:.3g}, {self.allowed:.3g} allowed)"
        )


class Judgement(BaseModel):
    model_config = ConfigDict(extra="forbid")

    change_id: int
    action: Action
    cause: str | None
    kpi: str
    comparison: Comparison
    keep: bool = Field(description="False: the change is to be reverted")
    requested_at: float = Field(description="when the change was requested")
    in_force_at: float | None = Field(default=None, description="when it was seen in force; None: never")
    after_from: float | None = Field(default=None, description="start of the after-window judged")
    vetoed_by: GuardBreach | None = Field(default=None, description="the guard that turned it harmful")

    @property
    def verdict(self) -> Verdict:
        return self.comparison.verdict

    @property
    def in_force_after_s(self) -> float | None:
        return None if self.in_force_at is None else self.in_force_at - self.requested_at


@dataclass
class Tracked:
    change_id: int
    action: Action
    cause: str | None
    kpi: Kpi
    t_requested: float
    t_effect: float | None = None  # None: not in force yet
    before: list[float] = field(default_factory=list)
    guards_before: dict[str, list[float]] = field(default_factory=dict)


def _series(window: Window, name: str, start: float, end: float) -> list[float]:
    return [s.m[name] for s in window if start < s.t <= end and name in s.m]


class EffectTracker:
    def __init__(self, config: EffectConfig | None = None) -> None:
        self.config = config or EffectConfig()
        self.tracked: dict[int, Tracked] = {}

    def start(
        self,
        change_id: int,
        action: Action,
        cause: str | None,
        kpi: Kpi,
        window: Window,
        t_requested: float,
        *,
        in_force: bool = True,
    ) -> Tracked:
        """Track a change requested at `t_requested`; not `in_force` yet, it waits (`took_effect`).

        The before-window ends at the request: from then on the change may already act on part of
        the work (a readahead change reaches every file opened after it, long before the last
        reader reopens its own), so the stretch between request and in force belongs to neither
        window. Taken now, it cannot have left the loop's window by the time the change acts."""
        cfg = self.config
        t0 = t_requested
        tr = Tracked(change_id, action, cause, kpi, t_requested)
        tr.before = kpi.series(window, t0 - cfg.window_s, t0)
        tr.guards_before = {
            n: _series(window, n, t0 - cfg.window_s, t0)
            for n in sorted(window.names())
            if any(g.matches(n) for g in cfg.guards)
        }
        self.tracked[change_id] = tr
        if in_force:
            self.took_effect(change_id, t_requested)
        return tr

    def waiting(self) -> list[Tracked]:
        """Changes requested and not yet in force, oldest first."""
        return [tr for tr in self.tracked.values() if tr.t_effect is None]

    def took_effect(self, change_id: int, t: float) -> Tracked | None:
        """The change acts from `t`: its after-window starts `settle_s` later."""
        tr = self.tracked.get(change_id)
        if tr is None or tr.t_effect is not None:
            return tr
        tr.t_effect = t
        return tr

    def busy(self) -> bool:
        return bool(self.tracked)

    def forget(self, change_id: int) -> None:
        self.tracked.pop(change_id, None)

    def due(self, window: Window, now: float) -> list[Judgement]:
        """Judge every change whose after-window has passed, and give up on those not in force by
        the deadline; either way they are tracked no longer."""
        out: list[Judgement] = []
        cfg = self.config
        for cid, tr in list(self.tracked.items()):
            if tr.t_effect is None:
                if now - tr.t_requested >= cfg.in_force_deadline_s:
                    out.append(self._never(tr, now))
                    del self.tracked[cid]
                continue
            start = tr.t_effect + cfg.settle_s
            if now < start + cfg.window_s:
                continue
            after = tr.kpi.series(window, start, start + cfg.window_s)
            c = compare(tr.before, after, tr.kpi.higher_is_better, cfg)
            breach = None
            if c.verdict in ("beneficial", "neutral"):
                breach = self._breach(tr, window, start)
                if breach is not None:
                    why = f"{c.why}; vetoed by guard {breach.text()}"
                    c = c.model_copy(update={"verdict": "harmful", "why": why})
            keep = c.verdict in ("beneficial", "unknown") or (
                c.verdict == "neutral" and cfg.neutral == "keep"
            )
            out.append(
                Judgement(
                    change_id=cid,
                    action=tr.action,
                    cause=tr.cause,
                    kpi=tr.kpi.label,
                    comparison=c,
                    keep=keep,
                    requested_at=tr.t_requested,
                    in_force_at=tr.t_effect,
                    after_from=start,
                    vetoed_by=breach,
                )
            )
            del self.tracked[cid]
        return out

    def _never(self, tr: Tracked, now: float) -> Judgement:
        waited = now - tr.t_requested
        c = Comparison(
            before=None,
            after=None,
            n_before=0,
            n_after=0,
            rel_change=None,
            threshold=None,
            verdict="never_in_force",
            why=f"not in force {waited:.0f} s after it was requested "
            f"(deadline {self.config.in_force_deadline_s:g} s): never judged",
        )
        return Judgement(
            change_id=tr.change_id,
            action=tr.action,
            cause=tr.cause,
            kpi=tr.kpi.label,
            comparison=c,
            keep=False,
            requested_at=tr.t_requested,
        )

    def _breach(self, tr: Tracked, window: Window, start: float) -> GuardBreach | None:
        """The first guard metric that rose past what its guard and the noise allow."""
        cfg = self.config
        for name, before in tr.guards_before.items():
            after = _series(window, name, start, start + cfg.window_s)
            if len(before) < cfg.min_samples or len(after) < cfg.min_samples:
                continue  # too few to tell: no veto
            mb, ma = statistics.median(before), statistics.median(after)
            noise = (
                cfg.z
                * MEDIAN_SE
                * math.sqrt(_sigma(before) ** 2 / len(before) + _sigma(after) ** 2 / len(after))
            )
            for g in cfg.guards:
                if not g.matches(name):
                    continue
                rel = None if g.max_rise_rel is None else g.max_rise_rel * abs(mb)
                allowed = max([noise, *(b for b in (g.max_rise, rel) if b is not None)])
                if ma - mb > allowed:
                    return GuardBreach(metric=name, before=mb, after=ma, allowed=allowed)
        return None
