"""The cpufreq scaling governor, set and restored CPU by CPU."""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.cpulist import parse_cpulist
from core.knob import KnobValue, Target
from primitives.base import Availability, Loc, Primitive, Write
from primitives.host import Host

_CPU_DIR = "/sys/devices/system/cpu"
MIXED = "mixed"


def _governor_path(cpu: int) -> str:
    return f"{_CPU_DIR}/cpu{cpu}/cpufreq/scaling_governor"


@dataclass(frozen=True, kw_only=True)
class Governor(Primitive):
    """Target: a CPU list, or none for every CPU that has cpufreq."""

    def how(self) -> str:
        return (
            f"read {_CPU_DIR}/cpu<N>/cpufreq/scaling_governor of each CPU; write the governor to each; "
            "revert writes every CPU's own saved governor back (CPUs may have differed)"
        )

    def cpus(self, host: Host, target: Target) -> list[int]:
        """CPUs with cpufreq that the target names (all of them for no target)."""
        have = sorted(
            int(m.group(1))
            for name in host.fs.listdir(_CPU_DIR)
            if (m := re.fullmatch(r"cpu(\d+)", name)) and host.fs.exists(_governor_path(int(m.group(1))))
        )
        if target is None:
            return have
        try:
            wanted = parse_cpulist(str(target))
        except ValueError:
            return []
        return [c for c in have if c in wanted] if wanted <= set(have) else []

    def available(self, host: Host, target: Target) -> Availability:
        if not self.cpus(host, None):
            return Availability(False, "no cpufreq on this host (a virtual machine, or no cpufreq driver)")
        if not self.cpus(host, target):
            return Availability(False, f"CPU list {target} names CPUs without cpufreq")
        return Availability(True)

    def locations(self, host: Host, target: Target) -> list[Loc]:
        return [Loc("file", _governor_path(c)) for c in self.cpus(host, target)]

    def read(self, host: Host, target: Target) -> KnobValue:
        governors = {str(host.read(loc)) for loc in self.locations(host, target)}
        return governors.pop() if len(governors) == 1 else MIXED

    def check(self, host: Host, target: Target, value: KnobValue) -> str | None:
        for c in self.cpus(host, target):
            path = f"{_CPU_DIR}/cpu{c}/cpufreq/scaling_available_governors"
            if host.fs.exists(path) and str(value) not in host.fs.read_text(path).split():
                return f"CPU {c} does not offer the {value} governor"
        return None

    def apply_plan(self, host: Host, target: Target, value: KnobValue) -> list[Write]:
        return [Write(loc, value) for loc in self.locations(host, target)]
