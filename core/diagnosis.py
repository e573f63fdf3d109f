"""The Diagnosis stage's data: ranked causes from the spec's closed taxonomy, with evidence."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_QUESTION = "Why are my GPUs idle?"
# Below this confidence a cause is a guess: the answer says so, and lost work that no cause
# explains better is left unexplained (agent/diagnosis/engine.py).
CONFIDENT = 0.35


class Category(StrEnum):
    """The closed root-cause taxonomy of spec/incident-v1.md."""

    DATALOADER_STARVATION = "dataloader_starvation"
    LOADER_OVERSUBSCRIPTION = "loader_oversubscription"
    CPU_CONTENTION = "cpu_contention"
    NUMA_REMOTE = "numa_remote"
    STORAGE_LATENCY = "storage_latency"
    READAHEAD_MISMATCH = "readahead_mismatch"
    WRITEBACK_BURST = "writeback_burst"
    MEMORY_RECLAIM = "memory_reclaim"
    GPU_POWER_THROTTLE = "gpu_power_throttle"
    GPU_THERMAL_THROTTLE = "gpu_thermal_throttle"
    PCIE_BOTTLENECK = "pcie_bottleneck"
    COMM_WAIT = "comm_wait"
    HOST_OVERHEAD = "host_overhead"
    NONE = "none"


class Evidence(BaseModel):
    """One figure behind a cause: what was seen, against what, by which rule."""

    model_config = ConfigDict(extra="forbid")

    metric: str
    observed: float
    baseline: float | None = None
    threshold: float | None = None
    rule: str = Field(description="the rule or threshold that fired, in words")
    t_start: float | None = Field(default=None, description="when the anomaly began (window time)")


class Cause(BaseModel):
    model_config = ConfigDict(extra="forbid")

    category: Category
    confidence: float = Field(ge=0.0, le=1.0)
    summary: str = Field(description="one sentence in plain words")
    evidence: list[Evidence] = Field(default_factory=list)
    target: str | None = Field(default=None, description="device, job or GPU the cause is about")
    judged: bool = Field(
        default=True, description="false when the window holds none of the figures this cause is judged by"
    )


class LostWorkWindow(BaseModel):
    """A span in which GPUs lost work: utilization or power fell, data-wait or step time rose."""

    model_config = ConfigDict(extra="forbid")

    t_start: float
    t_end: float
    signals: list[str] = Field(default_factory=list)
    severity: float = Field(ge=0.0, description="KPI loss relative to baseline, 0..1")
    worsened: bool = Field(
        default=False, description="the span follows the one before it without a break: the loss grew there"
    )


class Diagnosis(BaseModel):
    model_config = ConfigDict(extra="forbid")

    causes: list[Cause] = Field(description="ranked, most likely first; never empty")
    lost_work: list[LostWorkWindow] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list, description="evidence not available, and why")
    question: str = DEFAULT_QUESTION

    @property
    def top(self) -> Cause:
        return self.causes[0]
