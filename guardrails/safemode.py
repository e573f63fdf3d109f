"""Safe mode: a ladder the agent only climbs down while it runs.

Level 0 proposes with the LLM; level 1 with the rule policy, after K LLM errors or
timeouts in a row; level 2 only observes, with every original value restored,
after repeated eBPF faults or when the agent's own CPU use exceeds its budget. The
agent that watches for waste must not become the waste, nor act on blind data.
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable
from enum import IntEnum

from pydantic import BaseModel, ConfigDict, Field


class Level(IntEnum):
    LLM = 0
    RULES = 1
    OBSERVE = 2


class SafeModeConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    llm_errors: int = Field(default=3, ge=1, description="LLM errors or timeouts in a row before rules")
    llm_timeout_s: float = Field(default=20.0, gt=0)
    bpf_faults: int = Field(default=3, ge=1, description="eBPF faults before observe-only")
    cpu_budget: float = Field(default=0.5, gt=0, description="cores the agent may use, averaged")
    cpu_window_s: float = Field(default=60.0, gt=0)


def process_cpu_s() -> float:
    t = os.times()
    return t.user + t.system


class SafeMode:
    def __init__(
        self,
        config: SafeModeConfig | None = None,
        *,
        start: Level = Level.LLM,
        clock: Callable[[], float] = time.monotonic,
        cpu_s: Callable[[], float] = process_cpu_s,
        on_change: Callable[[Level, str], None] | None = None,
    ) -> None:
        self.config = config or SafeModeConfig()
        self.level = start
        self.history: list[tuple[Level, str]] = [(start, "start")]
        self._clock = clock
        self._cpu_s = cpu_s
        self._on_change = on_change
        self._llm_errors = 0
        self._bpf_faults = 0
        self._cpu: deque[tuple[float, float]] = deque([(clock(), cpu_s())])

    def escalate(self, level: Level, why: str) -> bool:
        if level <= self.level:
            return False
        self.level = level
        self.history.append((level, why))
        if self._on_change is not None:
            self._on_change(level, why)
        return True

    @property
    def reason(self) -> str:
        return self.history[-1][1]

    def llm_ok(self) -> None:
        self._llm_errors = 0

    def llm_failed(self, why: str) -> None:
        self._llm_errors += 1
        if self._llm_errors >= self.config.llm_errors:
            self.escalate(Level.RULES, f"{self._llm_errors} LLM failures in a row (last: {why})")

    def bpf_fault(self, why: str) -> None:
        self._bpf_faults += 1
        if self._bpf_faults >= self.config.bpf_faults:
            self.escalate(Level.OBSERVE, f"{self._bpf_faults} eBPF faults (last: {why})")

    def cpu_used(self) -> float | None:
        """Cores used over the last window, or None until a window has passed."""
        now, cpu = self._clock(), self._cpu_s()
        self._cpu.append((now, cpu))
        while len(self._cpu) > 2 and now - self._cpu[1][0] >= self.config.cpu_window_s:
            self._cpu.popleft()
        t0, c0 = self._cpu[0]
        if now - t0 < self.config.cpu_window_s:
            return None
        return (cpu - c0) / (now - t0)

    def check_cpu(self) -> None:
        used = self.cpu_used()
        if used is not None and used > self.config.cpu_budget:
            self.escalate(
                Level.OBSERVE,
                f"the agent used {used:.2f} cores, over its budget of {self.config.cpu_budget:g}",
            )
