"""The collection level: whether the hot-path collectors run on a duty cycle or without a break, and why."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Level = Literal["duty", "full"]


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
    since: float | None = Field(default=None, description="when this level began (the samples' clock)")
    duty_on_s: float | None = Field(default=None, description="at duty level: seconds measured per cycle")
    duty_period_s: float | None = Field(default=None, description="at duty level: seconds per cycle")
    hot_path: bool = Field(
        default=True, description="false when no hot-path collector runs (no eBPF): the level changes nothing"
    )
