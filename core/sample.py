"""Sample: one timestamp and a flat map of metric name to number (spec vocabulary)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Sample(BaseModel):
    """What every source produces and every later stage consumes."""

    model_config = ConfigDict(extra="forbid")

    t: float = Field(description="seconds (live: monotonic-anchored wall time; replay: from first sample)")
    m: dict[str, float] = Field(default_factory=dict)


class SourceStatus(BaseModel):
    """Whether a source produced data, and if not, why (one line)."""

    model_config = ConfigDict(extra="forbid")

    live: bool
    reason: str = ""
