"""What every primitive declares, and the generic read/plan/revert contract the executor drives.

A primitive is a descriptor: facts about one knob (tier, target, bounds, step,
causes, risk, when a change takes effect) plus how to reach it on a host. The
executor never knows a knob's quirks; it asks the descriptor which locations to
save, which writes apply a value, and which ordered writes restore the saved
state. Quirks (paired sysctls, a scheduler switch resetting nr_requests) live in
the descriptor's `revert_plan`.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum, StrEnum
from typing import TYPE_CHECKING, Any, Literal

from core.cpulist import format_cpulist, parse_cpulist
from core.diagnosis import Category
from core.knob import KnobValue, Target, knob_key

if TYPE_CHECKING:
    from primitives.host import Host


class Tier(IntEnum):
    NONE = 0  # no risk
    LOW = 1
    MEDIUM = 2  # a person approves
    HIGH = 3  # a person approves and the training framework cooperates


class TargetKind(StrEnum):
    NONE = "none"
    BLOCK_DEVICE = "block_device"
    JOB = "job"
    GPU = "gpu"
    CPUSET = "cpuset"


class Reach(StrEnum):
    """What a change reaches once written."""

    IMMEDIATE = "immediate"
    NEW_OPENS = "new_opens"  # copied into per-file state at open(2): running readers keep the old value
    NEW_WORKERS = "new_workers"  # the loader restarts its workers to take it
    NEXT_STEP = "next_step"  # the trainer takes it at a step boundary it chooses


# Block device and job names end up inside host paths and channel keys: no `/`, no `..`, no `@`.
NAME_PATTERN = r"^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,127}$"
# CPU ids 0..4095 in the kernel's list format ("0-3,8,10-11"). Range order is checked on use.
_CPU = r"(?:[0-9]|[1-9][0-9]{1,2}|[1-3][0-9]{3}|40[0-8][0-9]|409[0-5])"
CPULIST_PATTERN = rf"^{_CPU}(?:-{_CPU})?(?:,{_CPU}(?:-{_CPU})?)*$"


@dataclass(frozen=True)
class IntRange:
    min: int
    max: int
    unit: str

    kind: Literal["int"] = "int"

    def normalize(self, raw: KnobValue) -> int:
        return int(raw)

    def schema(self) -> dict[str, Any]:
        return {"type": "integer", "minimum": self.min, "maximum": self.max}

    def describe(self) -> str:
        return f"{self.min}..{self.max} {self.unit}".rstrip()


@dataclass(frozen=True)
class Choice:
    options: tuple[str, ...]

    kind: Literal["choice"] = "choice"

    def normalize(self, raw: KnobValue) -> str:
        return str(raw).strip()

    def schema(self) -> dict[str, Any]:
        return {"type": "string", "enum": list(self.options)}

    def describe(self) -> str:
        return " | ".join(self.options)


@dataclass(frozen=True)
class CpuList:
    kind: Literal["cpulist"] = "cpulist"

    def normalize(self, raw: KnobValue) -> str:
        """Canonical form, so that `0,1,2,3` read back from a hook equals `0-3` as written."""
        try:
            return format_cpulist(parse_cpulist(str(raw)))
        except ValueError:
            return str(raw)

    def schema(self) -> dict[str, Any]:
        return {"type": "string", "pattern": CPULIST_PATTERN}

    def describe(self) -> str:
        return "CPU list such as 0-15,32-47"


ValueSpec = IntRange | Choice | CpuList


@dataclass(frozen=True)
class StepLimit:
    """The largest move one action may make: within `delta`, or within a `factor` either way."""

    delta: float | None = None
    factor: float | None = None
    # For the *_bytes/*_ratio pairs 0 means "the other one is in force": leaving 0 is a
    # change of mode, not a step, so any in-bounds value may follow it.
    from_zero: bool = False

    def allows(self, old: float, new: float) -> bool:
        if self.delta is not None and abs(new - old) <= self.delta:
            return True
        if self.factor is not None and old > 0 and new > 0 and max(new / old, old / new) <= self.factor:
            return True
        return self.from_zero and old == 0

    def clamp(self, old: float, goal: float) -> float:
        """The value nearest `goal` that one step from `old` may reach."""
        if self.allows(old, goal):
            return goal
        reach: list[float] = []
        up = goal > old
        if self.delta is not None:
            reach.append(old + self.delta if up else old - self.delta)
        if self.factor is not None and old > 0:
            reach.append(old * self.factor if up else old / self.factor)
        if not reach:
            return old
        return max(reach) if up else min(reach)

    def describe(self) -> str:
        parts = []
        if self.delta is not None:
            parts.append(f"±{self.delta:g}")
        if self.factor is not None:
            parts.append(f"×/÷{self.factor:g}")
        text = " or ".join(parts) or "none"
        return text + (" (any from 0)" if self.from_zero else "")


@dataclass(frozen=True)
class Availability:
    ok: bool
    reason: str = ""


@dataclass(frozen=True)
class Loc:
    """One value on the host: a file (plain or a `[selected]` list), a trainer key, or a GPU limit."""

    kind: Literal["file", "select", "trainer", "nvml"]
    where: str  # host path, job name, or GPU index
    key: str = ""

    def __str__(self) -> str:
        if self.kind in ("file", "select"):
            return self.where
        return f"{self.kind}:{self.where}/{self.key}"


@dataclass(frozen=True)
class Write:
    loc: Loc
    value: KnobValue


@dataclass(frozen=True, kw_only=True)
class Primitive(ABC):
    id: str
    description: str
    tier: Tier
    target: TargetKind
    value: ValueSpec
    step: StepLimit | None
    causes: tuple[Category, ...]
    risk: str
    reaches: Reach = Reach.IMMEDIATE
    reaches_note: str = ""
    # False: only a policy that names it under `enable:` may propose it.
    proposable: bool = True

    @property
    def target_required(self) -> bool:
        return self.target not in (TargetKind.NONE, TargetKind.CPUSET)

    @abstractmethod
    def how(self) -> str:
        """How it is read, applied and reverted, in words, for the catalogue."""

    def setting(self, target: Target) -> str:
        """What one change of this knob changes on the host: its knob key, or a name shared with
        the knobs that are the same setting in another form (a ratio and its bytes twin)."""
        return knob_key(self.id, target)

    # -- host contract ---------------------------------------------------------

    @abstractmethod
    def available(self, host: Host, target: Target) -> Availability:
        """Whether the knob exists here; unavailable primitives are never offered."""

    @abstractmethod
    def locations(self, host: Host, target: Target) -> list[Loc]:
        """Every value to save before writing, in the order they are restored."""

    @abstractmethod
    def read(self, host: Host, target: Target) -> KnobValue:
        """The knob's current value in the catalogue's type."""

    @abstractmethod
    def apply_plan(self, host: Host, target: Target, value: KnobValue) -> list[Write]:
        """The writes that set `value`."""

    def revert_plan(self, saved: Mapping[Loc, KnobValue]) -> list[Write]:
        """Writes that restore `saved` exactly; by default each location in save order."""
        return [Write(loc, v) for loc, v in saved.items()]

    def check(self, host: Host, target: Target, value: KnobValue) -> str | None:
        """Host-specific limits beyond the static bounds (NVML constraints, CPUs online)."""
        return None

    def after_write(self, host: Host, target: Target) -> list[str]:
        """Follow-ups once a value is written (or restored); returns what was done, in words."""
        return []

    def in_force(self, host: Host, target: Target, value: KnobValue) -> bool:
        """Whether `value`, written, now acts on the workload; by default at once (the executor
        read it back). Raises OSError or LookupError when that cannot be read now."""
        return True


def valid_name(name: str) -> bool:
    return re.fullmatch(NAME_PATTERN, name) is not None
