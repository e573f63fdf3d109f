"""Two levels of collection: the hot-path collectors on a duty cycle while the host looks
healthy, without a break while a trigger is open or a person asks.

Always on at either level: procfs, PSI, diskstats, NVML, the trainer hook and the
eBPF programs on rare events (reclaim, dirty throttling, page-cache misses). The
hot path (scheduler switches and wakeups, block requests) measures `duty_on_s` in
every `duty_period_s` at duty level, so baselines keep filling, and all the time
at full level. LevelPolicy decides the level from each sample; DutyCycle turns the
level into spans of the hot path (agent/sources/bpf_source.py open_span/end_span).
A reload hands both new settings (reconfigure) without touching the collectors.
"""

from __future__ import annotations

import math
import statistics
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, model_validator

from core.collection import Cause, CollectionLevel
from core.sample import Sample

# A "usual level" needs a few samples before a departure from it means anything: as many
# as the loop wants before its first diagnosis (LoopSettings.min_samples).
MIN_BASELINE_SAMPLES = 5
# A data wait this many times CollectionConfig.data_wait_rise above its usual level triggers in one
# sample (see data_wait_samples).
JUMP = 3.0
# A rise past this many of the metric's own standard deviations is unlikely to be its wobble
# (for normal noise, about one sample in 700).
NOISE_Z = 3.0
MAD_TO_SD = 1.4826  # the median absolute deviation of normal noise times this is its standard deviation
PSI_NAMES = {"psi.cpu.some_avg10": "CPU", "psi.io.some_avg10": "I/O", "psi.mem.some_avg10": "memory"}


class CollectionConfig(BaseModel):
    """The `collection:` section of the config file."""

    model_config = ConfigDict(extra="forbid")

    duty: bool = Field(default=True, description="false: the hot-path collectors run all the time")
    # The example, "1 s in 10": one interval of the default 1 s loop in ten.
    duty_on_s: float = Field(
        default=1.0, gt=0, description="hot path measured per cycle while healthy (whole intervals)"
    )
    duty_period_s: float = Field(default=10.0, gt=0, description="seconds per duty cycle")
    # A person who asks tends to ask again (the chat's follow-ups, the dashboard's polling):
    # two diagnosis windows (LoopSettings.diagnosis_window_s, 30 s).
    hold_s: float = Field(default=60.0, ge=0, description="full level held after a person asked")
    # One diagnosis window (LoopSettings.diagnosis_window_s): the diagnosis that follows a
    # trigger reads a window measured at full level.
    linger_s: float = Field(default=30.0, ge=0, description="full level held after the last trigger cleared")
    # Five minutes holds ten diagnosis windows; a median settles long before
    # agent/diagnosis/baseline.MAX_BASELINE_SAMPLES (180) samples.
    baseline_s: float = Field(
        default=300.0, gt=0, description="history a trigger's usual level is the median of"
    )
    # Where the diagnosis starts to call the lost work the trainer's waiting for input
    # (agent/diagnosis/signals.py data_side: a rise of 0.04 over normal) ...
    data_wait_rise: float = Field(
        default=0.04, gt=0, le=1, description="trigger: data-wait share this far above its usual level"
    )
    # ... and the share it takes as normal however low the past (lostwork.NORMAL_DATA_WAIT).
    data_wait_floor: float = Field(default=0.03, ge=0, le=1, description="usual data-wait share at the least")
    # A healthy trainer's data wait wobbles from one sample to the next: over the 14 healthy real
    # recordings (evals/incidents/real-healthy-*, 520 samples) a single sample was more than the
    # rise above its recording's median 50 times, each of which would have held full level for
    # `linger_s`; the mean of the last three was, 11 times. A rise has to last (the mean of the
    # last `data_wait_samples` samples past it), unless one sample is past three times the rise
    # (the largest wobble in those recordings: 0.09 above the median), which triggers at once.
    # Both grow for a job that wobbles more: NOISE_Z of its own standard deviations (LevelPolicy.triggers).
    data_wait_samples: int = Field(
        default=3,
        ge=1,
        le=60,
        description="trigger: the mean of this many latest data-wait samples past the rise",
    )
    # A fifth of the way up the diagnosis's GPU-utilisation ramp (rules_gpu: a relative fall of
    # 0.05 to 0.3): a fall it already weighs, past the sample-to-sample wobble of a busy GPU
    # (a guess, not a measurement: no GPU on the development host).
    gpu_util_fall: float = Field(
        default=0.15, gt=0, lt=1, description="trigger: GPU utilisation this share below its usual level"
    )
    # Below it a GPU is idle, not busy and falling (lostwork.BUSY_UTIL_PCT is 90 for "busy").
    gpu_busy_pct: float = Field(
        default=20.0, ge=0, le=100, description="usual utilisation a GPU needs to be watched"
    )
    # The lowest pressure at which a diagnosis rule starts to score (rules_cpu, rules_io: 2 %).
    psi_some_pct: float = Field(
        default=2.0,
        gt=0,
        le=100,
        description="usual CPU, I/O or memory pressure (some, avg10) at the least",
    )
    # Pressure *up*: the diagnosis's pressure rules start to score a rise of twice the past
    # (rules_cpu.cpu_pressure, v.up(..., (2.0, 6.0), ...)). A host whose cores are always busy
    # (a CPU-bound trainer) lives with pressure; only a rise against that usual level triggers.
    psi_rise: float = Field(
        default=2.0, gt=1, description="trigger: pressure at this many times its usual level (or the floor)"
    )

    @model_validator(mode="after")
    def _cycle(self) -> CollectionConfig:
        if self.duty_on_s > self.duty_period_s:
            raise ValueError(
                f"duty_on_s {self.duty_on_s:g} is longer than duty_period_s {self.duty_period_s:g}"
            )
        return self


class _History:
    """One metric's recent values, for its median (its usual level)."""

    def __init__(self) -> None:
        self.points: deque[tuple[float, float]] = deque()

    def add(self, t: float, v: float, horizon_s: float) -> None:
        self.points.append((t, v))
        while self.points and self.points[0][0] < t - horizon_s:
            self.points.popleft()

    def last(self, n: int) -> list[float]:
        """The latest `n` values at most, oldest first."""
        return [v for _, v in list(self.points)[-n:]] if n > 0 else []

    def spread(self, usual: float) -> float:
        """The values' standard deviation around their `usual` level (their median), estimated
        robustly: 1.4826 x the median absolute deviation, which one wild sample does not move."""
        return MAD_TO_SD * statistics.median(abs(v - usual) for _, v in self.points)

    def usual(self) -> float | None:
        if len(self.points) < MIN_BASELINE_SAMPLES:
            return None
        return statistics.median(v for _, v in self.points)


def _pct(v: float) -> str:
    return f"{v * 100:.0f}%"


class LevelPolicy:
    """Decides, at each sample, between duty and full level, and says why in one line.

    Triggers, each against the metric's median over `baseline_s` before this sample:
    a job's data-wait share up, a busy GPU's utilisation down, CPU, I/O or memory
    pressure up (to twice its usual level: a host that always has some is not triggered).
    A trigger holds full level while it is open and `linger_s` after;
    a person asking, `hold_s`. The usual levels take in every sample, so a shift that
    lasts becomes the usual level after half of `baseline_s` and stops triggering.
    """

    def __init__(
        self,
        config: CollectionConfig,
        clock: Callable[[], float] = time.time,
        *,
        fixed: str | None = None,
    ) -> None:
        self.config = config
        self._clock = clock
        self._fixed = fixed  # a reason to stay at full level whatever happens (a one-shot command)
        self._lock = threading.Lock()
        self._history: dict[str, _History] = {}
        self._trigger_t: float | None = None
        self._trigger = ""
        self._asked_until = -math.inf
        self._asked_at = 0.0
        self._asked_by = ""
        self._budget: str | None = None  # why the agent is over its cost budget, or None
        self._level = self._decide(clock(), [])

    @property
    def level(self) -> CollectionLevel:
        return self._level

    def triggers(self, sample: Sample) -> list[str]:
        """What in this sample opens a trigger, one phrase each (against the usual levels so far)."""
        c = self.config
        out: list[str] = []
        for name, v in sorted(sample.m.items()):
            parts = name.split(".")
            hist = self._history.get(name)
            usual = hist.usual() if hist is not None else None
            if len(parts) == 3 and parts[0] == "trainer" and parts[2] == "data_wait_frac":
                ref = max(usual if usual is not None else 0.0, c.data_wait_floor)
                n = c.data_wait_samples
                recent = [*(hist.last(n - 1) if hist is not None else []), v]
                # A job whose data wait wobbles more than most needs a larger rise: NOISE_Z of its
                # own standard deviations (from the median absolute deviation), that of a mean of n.
                sd = hist.spread(usual) if hist is not None and usual is not None else 0.0
                rise = max(c.data_wait_rise, NOISE_Z * sd / math.sqrt(n))
                jump = max(JUMP * c.data_wait_rise, NOISE_Z * sd)
                mean = statistics.fmean(recent)
                if v > ref + jump:
                    out.append(f"job {parts[1]} waits for data {_pct(v)} of its steps, usually {_pct(ref)}")
                elif len(recent) == n and mean > ref + rise:
                    over = f" over the last {n} samples" if n > 1 else ""
                    out.append(
                        f"job {parts[1]} waits for data {_pct(mean)} of its steps{over}, usually {_pct(ref)}"
                    )
            elif len(parts) == 3 and parts[0] == "gpu" and parts[2] == "util_pct":
                if usual is not None and usual >= c.gpu_busy_pct and v < usual * (1 - c.gpu_util_fall):
                    out.append(f"GPU {parts[1]} utilisation {v:.0f}%, usually {usual:.0f}%")
            elif name in PSI_NAMES:
                # Before a usual level is known, any pressure past the floor counts.
                ref = max(usual, c.psi_some_pct) * c.psi_rise if usual is not None else c.psi_some_pct
                if v >= ref:
                    was = f", usually {usual:.1f}%" if usual is not None else ""
                    out.append(f"{PSI_NAMES[name]} pressure {v:.1f}% (some, avg10){was}")
        return out

    def update(self, sample: Sample) -> CollectionLevel:
        """The level for the next interval, from the sample of the last one."""
        with self._lock:
            found = self.triggers(sample)
            for name, v in sample.m.items():
                if _watched(name):
                    self._history.setdefault(name, _History()).add(sample.t, v, self.config.baseline_s)
            self._level = self._decide(sample.t, found)
            return self._level

    def ask(self, who: str) -> CollectionLevel:
        """A person asked (`why`, `ask`, the dashboard): full level for `hold_s` from now."""
        with self._lock:
            now = self._clock()
            self._asked_at = now
            self._asked_until = now + self.config.hold_s
            self._asked_by = who
            self._level = self._decide(now, [])
            return self._level

    def reconfigure(self, config: CollectionConfig) -> CollectionLevel:
        """New settings (a reload), from now on. The usual levels, an open trigger, a person's
        request and the budget carry over: the new thresholds judge the next sample, and a hold
        already under way lasts the new `hold_s` from when the person asked."""
        with self._lock:
            self.config = config
            if math.isfinite(self._asked_until):
                self._asked_until = self._asked_at + config.hold_s
            self._level = self._decide(self._clock(), [])
            return self._level

    def over_budget(self, reason: str | None) -> None:
        """The agent's cost is over its budget (why), or back under it (None); from the next sample
        on, only a person asking holds the full level."""
        with self._lock:
            self._budget = reason

    def _decide(self, now: float, found: list[str]) -> CollectionLevel:
        c = self.config
        if found:
            self._trigger_t, self._trigger = now, "; ".join(found)
        if self._fixed is not None:
            return self._at("full", "one_shot", self._fixed, now)
        if self._budget is not None and now >= self._asked_until:
            # The agent that watches for waste must not become it: a trigger or the operator's
            # duty: false gives way; a person's explicit, time-bounded request does not.
            return self._at("duty", "over_budget", f"over its cost budget: {self._budget}", now)
        if not c.duty:
            return self._at("full", "duty_off", "the duty cycle is turned off (collection.duty: false)", now)
        if found:
            return self._at("full", "trigger", f"trigger: {self._trigger}", now)
        if self._trigger_t is not None and now - self._trigger_t < c.linger_s:
            ago = now - self._trigger_t
            why = f"trigger cleared {ago:.0f} s ago, held {c.linger_s:g} s: {self._trigger}"
            return self._at("full", "linger", why, now)
        if now < self._asked_until:
            why = f"{self._asked_by} asked {now - self._asked_at:.0f} s ago, held {c.hold_s:g} s"
            return self._at("full", "asked", why, now)
        why = "no trigger: data wait, GPU utilisation and pressure at their usual levels"
        return self._at("duty", "no_trigger", why, now)

    def _at(self, level: str, cause: Cause, reason: str, now: float) -> CollectionLevel:
        prev = getattr(self, "_level", None)
        since = prev.since if prev is not None and prev.level == level else now
        duty = level == "duty"
        return CollectionLevel(
            level="duty" if duty else "full",
            reason=reason,
            cause=cause,
            since=since,
            duty_on_s=self.config.duty_on_s if duty else None,
            duty_period_s=self.config.duty_period_s if duty else None,
        )


def _watched(name: str) -> bool:
    parts = name.split(".")
    return (
        name in PSI_NAMES
        or (len(parts) == 3 and parts[0] == "trainer" and parts[2] == "data_wait_frac")
        or (len(parts) == 3 and parts[0] == "gpu" and parts[2] == "util_pct")
    )


def _ticks(c: CollectionConfig, interval_s: float) -> tuple[int, int]:
    """Intervals measured and intervals per duty cycle: whole intervals, at least one measured."""
    on = max(1, math.ceil(c.duty_on_s / interval_s - 1e-9))
    return on, max(on, round(c.duty_period_s / interval_s))


@runtime_checkable
class HotPath(Protocol):
    """The hot-path collectors' spans (BpfSource)."""

    @property
    def span_open(self) -> bool: ...

    def open_span(self) -> bool: ...

    def end_span(self) -> None: ...


class DutyCycle:
    """Turns the level into spans of the hot path, at each collect.

    At duty level the hot path measures `duty_on_s` (rounded up to whole
    intervals) in every `duty_period_s`: a span opens right after a collect and
    ends at a later one. At full level the span stays open. A sample that opens a
    trigger opens the span at once, so the next interval is measured; a person
    asking opens it at once too, off the asking thread.
    """

    def __init__(self, policy: LevelPolicy, interval_s: float) -> None:
        self.policy = policy
        self.interval_s = interval_s
        self.hot: HotPath | None = None
        self.on_ticks, self.period_ticks = _ticks(policy.config, interval_s)
        # Intervals into the duty cycle of the coming interval; None at full level.
        self._phase: int | None = None

    def attach(self, hot: HotPath) -> None:
        """Drive `hot`, whose programs measure from their load: at duty level, the first
        interval is the first cycle's measured part and its span ends at the first collect."""
        self.hot = hot
        if self.policy.level.level == "duty" and self.on_ticks < self.period_ticks:
            self._phase = 1
            hot.end_span()

    @property
    def level(self) -> CollectionLevel:
        lvl = self.policy.level
        return lvl if self.hot is not None else lvl.model_copy(update={"hot_path": False})

    def _measures(self, phase: int) -> bool:
        return phase % self.period_ticks < self.on_ticks

    def on_sample(self, sample: Sample) -> None:
        """After each collect: decide the level and whether the coming interval is measured."""
        lvl = self.policy.update(sample)
        hot = self.hot
        if hot is None:
            return
        if lvl.level == "full":
            self._phase = None
            hot.open_span()
            return
        if self._phase is None:
            # From full level (or the start): the span still open is this cycle's measured part.
            self._phase = 0
        now, after = self._measures(self._phase), self._measures(self._phase + 1)
        self._phase += 1
        if now:
            hot.open_span()
        if hot.span_open and not (now and after):
            hot.end_span()  # at the next collect: the coming interval is the span's last

    def reconfigure(self, config: CollectionConfig) -> CollectionLevel:
        """New settings from a reload, on the collecting thread, with the same programs loaded.

        The duty cycle's new length counts on from where the cycle is; a level that turns
        full (`duty: false`) attaches the hot path now rather than at the next collect, and
        one that turns duty ends the span at the next collect, as after a trigger.
        """
        lvl = self.policy.reconfigure(config)
        self.on_ticks, self.period_ticks = _ticks(config, self.interval_s)
        hot = self.hot
        if hot is not None and lvl.level == "full":
            self._phase = None
            hot.open_span()
        return lvl

    def ask(self, who: str) -> CollectionLevel:
        """A person asked: full level, and the hot path attached now rather than at the next collect."""
        was = self.policy.level.level
        lvl = self.policy.ask(who)
        hot = self.hot
        # Already full: each collect keeps the span open, and a dashboard polling every few
        # seconds starts no thread.
        if hot is not None and lvl.level == "full" and not (was == "full" and hot.span_open):
            # Off the asking thread (a request handler): a span may have to wait for a detach
            # or a reload under way.
            threading.Thread(target=hot.open_span, name="idletune-ask", daemon=True).start()
        return lvl
