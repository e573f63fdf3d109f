"""Sample: one timestamp and a flat map of metric name to number (spec vocabulary)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Sample(BaseModel):
    """What every source produces and every later stage consumes."""

    model_config = ConfigDict(extra="forbid")

    t: float = Field(description="seconds (live: monotonic-anchored wall time; replay: from first sample)")
    m: dict[str, float] = Field(default_factory=dict)
    # Metadata of the collection, not data: the incident format (spec/incident-v1.md) has no
    # place for it and the recorder writes `m` alone.
    cover: dict[str, float] = Field(
        default_factory=dict,
        description="metric -> share of the interval it was measured over, for the figures measured "
        "over less than all of it (hot-path figures on a duty cycle); absent: the whole interval",
    )


class SourceStatus(BaseModel):
    """Whether a source produced data, and if not, why (one line)."""

    model_config = ConfigDict(extra="forbid")

    live: bool
    reason: str = ""
