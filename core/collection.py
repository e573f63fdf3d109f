"""The collection level: whether the hot-path collectors run on a duty cycle or without a break, and why."""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

Level = Literal["duty", "full"]
# What holds the level, in one word (the reason says it in a line): a one-shot command, the duty
# cycle turned off, the cost budget, an open trigger, one that lingers after it cleared, a
# person who asked, or nothing (a healthy host on its duty cycle).
Cause = Literal["one_shot", "duty_off", "over_budget", "trigger", "linger", "asked", "no_trigger"]
CAUSES: tuple[Cause, ...] = get_args(Cause)


class CollectionLevel(BaseModel):
    """What the agent collects now. Always on at either level: procfs, PSI, NVML, the trainer
    hook and the eBPF programs on rare events; the hot-path programs (scheduler switches and
    wakeups, block requests) measure `duty_on_s` in every `duty_period_s` at "duty", all the
    time at "full"."""

    model_config = ConfigDict(extra="forbid")

    level: Level
    reason: str = Field(
        description="one line: the trigger or request that holds full level, or why none does"
    )
    cause: Cause = Field(description="what holds the level, in one word (the reason's kind)")
    since: float | None = Field(default=None, description="when this level began (the samples' clock)")
    duty_on_s: float | None = Field(default=None, description="at duty level: seconds measured per cycle")
    duty_period_s: float | None = Field(default=None, description="at duty level: seconds per cycle")
    hot_path: bool = Field(
        default=True, description="false when no hot-path collector runs (no eBPF): the level changes nothing"
    )
