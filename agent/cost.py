"""What the agent costs the host, against a budget: its own CPU and memory, and its eBPF programs.

The cost is a share of one core over a sliding window: the process's CPU time
(every thread: collection, the loop, the API) plus the time the kernel spent in
the agent's eBPF programs, on any CPU, over the time elapsed. The programs' time
is not part of the process's, since they run in whatever task hit the
tracepoint. When the cost is over the budget, over_budget() says so and why;
collection asks it each interval and drops to its cheaper level.
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from bpf.stats import ProgramCost

# Over the budget, the cost must come down to this share of it before the budget says it is
# met again: a level switched back as soon as the cost dips would flip at each window.
RESUME_BELOW = 0.8


class CostConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # 1 % of one core, for everything together: the target of a collection that costs nothing
    # on a healthy host (a 1 s loop with the programs on a duty cycle measures under it here;
    # bench/cost.py). Safe mode's cpu_budget (0.5 cores) is the far coarser stop for a runaway.
    budget_cores: float = Field(
        default=0.01, gt=0, le=64, description="cores the agent may use with its eBPF programs, averaged"
    )
    # 60 s: a dozen reviews (every 5 s) and sixty samples, so one slow tick or a burst of
    # context switches does not decide; the same window as safe mode's CPU budget.
    window_s: float = Field(default=60.0, ge=5, le=3600, description="seconds the cost is averaged over")
    bpf_stats: bool = Field(
        default=True,
        description="have the kernel count the eBPF programs' run time while the agent runs "
        "(every BPF program on the host then pays two clock reads a run)",
    )


def process_usage() -> tuple[float, int]:
    """This process's CPU seconds (user + system, every thread) and resident bytes now."""
    t = os.times()
    try:
        with open("/proc/self/statm", "rb") as f:
            resident = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        resident = 0
    return t.user + t.system, resident


@dataclass(frozen=True)
class Share:
    """What the agent cost over `span_s` seconds, in cores (1.0 is one core busy throughout)."""

    span_s: float
    agent: float
    bpf: float

    @property
    def total(self) -> float:
        return self.agent + self.bpf

    def line(self) -> str:
        return (
            f"{self.total * 100:.2f} % of a core over the last {self.span_s:.0f} s "
            f"(its process {self.agent * 100:.2f} %, its eBPF programs {self.bpf * 100:.2f} %)"
        )


class CostBudget:
    """The agent's cost over a sliding window, compared with its budget at each observe()."""

    def __init__(
        self, config: CostConfig | None = None, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.config = config or CostConfig()
        self._clock = clock
        self._points: deque[tuple[float, float, float]] = deque()  # (t, agent cpu s, bpf s)
        self._excluded = 0.0  # CPU seconds not held against the budget (reload compiles)
        self._share: Share | None = None
        self._over: str | None = None
        self._restart = False  # restart() was asked: the next observe() starts a new window

    @property
    def share(self) -> Share | None:
        """The cost over the kept window, once two readings are apart; None before."""
        return self._share

    def observe(self, cpu_s: float, bpf_s: float) -> Share | None:
        """Add this interval's running totals (process CPU seconds, programs' run seconds)."""
        now = self._clock()
        if self._restart:
            self._restart = False
            self._points.clear()
        self._points.append((now, cpu_s - self._excluded, bpf_s))
        # Keep the newest point at least a window old, so the span covers the whole window.
        while len(self._points) > 2 and now - self._points[1][0] >= self.config.window_s:
            self._points.popleft()
        t0, c0, b0 = self._points[0]
        span = now - t0
        if span <= 0:
            return self._share
        self._share = Share(
            span_s=span,
            agent=max(0.0, (cpu_s - self._excluded - c0) / span),
            bpf=max(0.0, (bpf_s - b0) / span),
        )
        self._decide(self._share)
        return self._share

    def _decide(self, share: Share) -> None:
        budget = self.config.budget_cores
        if share.span_s < self.config.window_s:
            return  # too early to judge: start-up is not steady state
        if share.total > budget:
            self._over = f"the agent cost {share.line()}, over its budget of {budget * 100:g} % of a core"
        elif self._over is not None and share.total <= budget * RESUME_BELOW:
            self._over = None

    def over_budget(self) -> str | None:
        """Why collection should drop to its cheaper level (one line), or None while within budget.

        Set when the cost over a full window exceeds the budget; cleared once it is
        back under RESUME_BELOW of the budget.
        """
        return self._over

    def restart(self) -> None:
        """Start the window afresh at the next observe(): what came before (start-up) is not
        the steady cost the budget is about, and is not judged. Safe from another thread."""
        self._restart = True

    def exclude(self, cpu_s: float) -> None:
        """Hold `cpu_s` seconds of the process's CPU out of the budget (a compile the operator asked for)."""
        self._excluded += max(0.0, cpu_s)


@dataclass(frozen=True)
class CostReading:
    """The agent's cost as of one interval: what /metrics exports and the report notes."""

    cpu_s: float
    rss_bytes: int
    programs: dict[str, ProgramCost] = field(default_factory=dict)
    bpf_measured: bool = False
    bpf_how: str = ""
    share: Share | None = None
    budget_cores: float = CostConfig().budget_cores
    over: str | None = None

    @property
    def bpf_s(self) -> float:
        return sum(p.run_ns for p in self.programs.values()) / 1e9
