"""The operator's config file, as one typed model: what the daemon does and inside which bounds.

Every field has a default, so an empty file (or none) is a valid config: observe mode,
the bundled rule policy, the guardrails' own defaults. An operator may only narrow what
the catalogue allows: bounds inside the catalogue's, tiers at or above a primitive's own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, field_validator, model_validator

from agent.collection import CollectionConfig
from agent.cost import CostConfig
from agent.llm.loader import LLMSettings
from agent.loop import LoopConfig, PidLoop
from guardrails.effect import EffectConfig
from guardrails.gate import GateConfig, Mode
from guardrails.safemode import SafeModeConfig
from primitives import catalog
from primitives.base import IntRange, Tier

DEFAULT_PORT = 8786

# Settings read once at start: changing them in the file takes a restart. A reload applies
# everything else (the collection level's settings included) and says which of these changed;
# `idletune config show` marks them.
AT_START = (
    "server",
    "bpf",
    "jobs",
    "devices",
    "paths",
    "loop.interval_s",
    "llm",
    "cost",
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ServerSettings(_Strict):
    host: str = Field(default="127.0.0.1", description="address the API and dashboard listen on")
    port: int = Field(default=DEFAULT_PORT, ge=1, le=65535)


class LoopSettings(_Strict):
    interval_s: float = Field(default=1.0, gt=0, le=60, description="seconds between samples")
    review_every_s: float = Field(default=5.0, gt=0, description="seconds between diagnoses")
    diagnosis_window_s: float = Field(default=30.0, gt=0, description="history a diagnosis reads")
    min_samples: int = Field(default=5, ge=1, description="samples before the first diagnosis")


class ProposerSettings(_Strict):
    kind: Literal["rules", "llm"] = Field(
        default="rules", description="llm: the model, the rules when it fails"
    )
    policies: list[Path] = Field(default_factory=list, description="operator policy files, tried first")
    default_policy: bool = Field(default=True, description="also use the bundled rule policy")


class GateSettings(_Strict):
    """The gate's limits; mode, bounds, tiers and priorities have their own sections."""

    consensus: int = Field(default=3, ge=1, description="agreeing reviews before a tier-1 change")
    cooldown_s: float = Field(default=60.0, ge=0, description="per primitive, between changes")
    rate_limit: int = Field(default=5, ge=1, description="changes per rate window, host-wide")
    rate_window_s: float = Field(default=60.0, gt=0)
    flap_window_s: float = Field(default=600.0, ge=0, description="A->B->A inside it freezes the knob")
    quarantine_s: float = Field(default=3600.0, ge=0, description="after a harmful verdict")


class PrimitiveSettings(_Strict):
    enabled: bool = Field(default=True, description="false: the agent never changes it")
    bounds: tuple[float, float] | None = Field(
        default=None, description="[low, high] inside the catalogue's bounds; numeric primitives only"
    )
    tier: int | None = Field(
        default=None, ge=0, le=3, description="a stricter tier than the catalogue's (never a looser one)"
    )
    cooldown_s: float | None = Field(default=None, ge=0, description="between its changes, instead of gate's")


class Paths(_Strict):
    state_dir: Path | None = Field(
        default=None,
        description="journal, audit log, approvals, token, trainer socket (default /var/lib/idletune)",
    )
    audit_log: Path | None = Field(
        default=None, description="the audit log (default: audit.jsonl in the state dir)"
    )


class AgentConfig(_Strict):
    """`/etc/idletune/config.yaml` (or `$IDLETUNE_CONFIG`, or `--config`)."""

    mode: Mode = Field(default="observe", description="observe, recommend or auto")
    job: str | None = Field(default=None, description="the job whose KPI judges changes (default: any)")
    jobs: dict[str, PositiveInt] = Field(
        default_factory=dict, description="training jobs to watch beside those found: name -> pid"
    )
    devices: list[str] | None = Field(default=None, description="watch and tune only these block devices")
    bpf: bool = Field(default=True, description="load the eBPF collectors")
    collection: CollectionConfig = Field(
        default_factory=CollectionConfig,
        description="the hot-path eBPF collectors on a duty cycle while the host is healthy "
        "(a reload applies it to the running collectors)",
    )
    on_exit: Literal["restore", "keep"] = Field(
        default="restore", description="at SIGTERM: put originals back, or leave the changes in place"
    )
    server: ServerSettings = Field(default_factory=ServerSettings)
    loop: LoopSettings = Field(default_factory=LoopSettings)
    proposer: ProposerSettings = Field(default_factory=ProposerSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    primitives: dict[str, PrimitiveSettings] = Field(
        default_factory=dict, description="per catalogue id: enabled, bounds, tier"
    )
    gate: GateSettings = Field(default_factory=GateSettings)
    effect: EffectConfig = Field(default_factory=EffectConfig)
    pid: list[PidLoop] = Field(default_factory=list, description="continuous knobs driven to a setpoint")
    safe_mode: SafeModeConfig = Field(default_factory=SafeModeConfig)
    cost: CostConfig = Field(
        default_factory=CostConfig, description="what the agent and its eBPF programs may cost the host"
    )
    priorities: dict[str, int] = Field(default_factory=dict, description="job -> lease priority")
    paths: Paths = Field(default_factory=Paths)

    @field_validator("primitives")
    @classmethod
    def _known(cls, v: dict[str, PrimitiveSettings]) -> dict[str, PrimitiveSettings]:
        for pid, s in v.items():
            p = catalog.get(pid)
            if p is None:
                raise ValueError(f"{pid}: not in the catalogue (`idletune catalog` lists it)")
            if s.bounds is not None:
                lo, hi = s.bounds
                if not isinstance(p.value, IntRange):
                    raise ValueError(f"{pid}: bounds apply to numeric primitives only")
                if lo > hi:
                    raise ValueError(f"{pid}: bounds low {lo:g} is above high {hi:g}")
                if lo < p.value.min or hi > p.value.max:
                    raise ValueError(
                        f"{pid}: bounds {lo:g}..{hi:g} reach outside the catalogue's "
                        f"{p.value.min}..{p.value.max}; an operator may only narrow them"
                    )
            if s.tier is not None:
                own = int(p.tier)
                if s.tier < own:
                    raise ValueError(f"{pid}: tier {s.tier} is looser than its own tier {own}")
                if s.tier == Tier.HIGH and own < Tier.HIGH:
                    # Tier 3 means the trainer cooperates: only trainer knobs have a hook to ask.
                    raise ValueError(f"{pid}: tier 3 is for knobs set through the trainer hook; use 2")
        return v

    @model_validator(mode="after")
    def _pid_loops(self) -> AgentConfig:
        for i, loop in enumerate(self.pid):
            p = catalog.get(loop.primitive)
            if p is None:
                raise ValueError(f"pid[{i}]: {loop.primitive!r} is not in the catalogue")
            if not isinstance(p.value, IntRange):
                raise ValueError(f"pid[{i}]: {loop.primitive} is not a numeric primitive")
            lo, hi = self.bounds_of(p.id, (p.value.min, p.value.max))
            if loop.pid.lo < lo or loop.pid.hi > hi:
                raise ValueError(
                    f"pid[{i}]: {loop.primitive} range {loop.pid.lo:g}..{loop.pid.hi:g} reaches outside "
                    f"its bounds {lo:g}..{hi:g}"
                )
            if not self.enabled(p.id):
                raise ValueError(f"pid[{i}]: {loop.primitive} is switched off under primitives")
        return self

    def enabled(self, primitive: str) -> bool:
        s = self.primitives.get(primitive)
        return s is None or s.enabled

    def bounds_of(self, primitive: str, default: tuple[float, float]) -> tuple[float, float]:
        s = self.primitives.get(primitive)
        return s.bounds if s is not None and s.bounds is not None else default

    # -- what the guardrails and the loop take from it --------------------------------------

    def gate_config(self, mode: Mode | None = None) -> GateConfig:
        return GateConfig(
            mode=mode or self.mode,
            **self.gate.model_dump(),
            bounds={k: s.bounds for k, s in self.primitives.items() if s.bounds is not None},
            priorities=dict(self.priorities),
            disabled=frozenset(k for k, s in self.primitives.items() if not s.enabled),
            tiers={k: s.tier for k, s in self.primitives.items() if s.tier is not None},
            cooldowns={k: s.cooldown_s for k, s in self.primitives.items() if s.cooldown_s is not None},
        )

    def loop_config(self) -> LoopConfig:
        return LoopConfig(
            **self.loop.model_dump(),
            job=self.job,
            keep_on_exit=self.on_exit == "keep",
            effect=self.effect,
            pid=list(self.pid),
        )
