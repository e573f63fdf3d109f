"""GPU power limit through NVML, kept inside the board's constraints."""

from __future__ import annotations

from dataclasses import dataclass

from core.knob import KnobValue, Target
from primitives.base import Availability, Loc, Primitive, Write
from primitives.host import Host


@dataclass(frozen=True, kw_only=True)
class PowerLimit(Primitive):
    def how(self) -> str:
        return (
            "read the GPU's power management limit through NVML; refuse a value outside NVML's "
            "min/max constraints; set it; revert sets the saved limit (to the milliwatt)"
        )

    def available(self, host: Host, target: Target) -> Availability:
        if host.gpu is None:
            return Availability(False, "no GPU here (NVML is not available)")
        if not isinstance(target, int) or isinstance(target, bool) or not 0 <= target < host.gpu.count():
            return Availability(False, f"no GPU {target!r} (this host has {host.gpu.count()})")
        return Availability(True)

    def locations(self, host: Host, target: Target) -> list[Loc]:
        return [Loc("nvml", str(target), "power_limit_w")]

    def read(self, host: Host, target: Target) -> KnobValue:
        # Watts as NVML has them: a board's default may be fractional (milliwatts).
        watts = float(host.read(self.locations(host, target)[0]))
        return int(watts) if watts.is_integer() else watts

    def check(self, host: Host, target: Target, value: KnobValue) -> str | None:
        assert host.gpu is not None and isinstance(target, int)
        lo, hi = host.gpu.constraints_w(target)
        if not lo <= float(value) <= hi:
            return f"GPU {target} accepts {lo:g}..{hi:g} W (NVML constraints), not {value}"
        return None

    def apply_plan(self, host: Host, target: Target, value: KnobValue) -> list[Write]:
        return [Write(self.locations(host, target)[0], value)]
