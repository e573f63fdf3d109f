"""Host-wide sysctls under /proc/sys, and the dirty-limit pairs whose members zero each other."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from core.knob import KnobValue, Target
from primitives.base import Availability, Loc, Primitive, Write
from primitives.host import Host


@dataclass(frozen=True, kw_only=True)
class Sysctl(Primitive):
    path: str

    def how(self) -> str:
        return f"read {self.path}; write the new value; revert writes the saved value back"

    def available(self, host: Host, target: Target) -> Availability:
        if host.fs.exists(self.path):
            return Availability(True)
        return Availability(False, f"this kernel has no {self.path}")

    def locations(self, host: Host, target: Target) -> list[Loc]:
        return [Loc("file", self.path)]

    def read(self, host: Host, target: Target) -> KnobValue:
        return self.value.normalize(host.read(Loc("file", self.path)))

    def apply_plan(self, host: Host, target: Target, value: KnobValue) -> list[Write]:
        return [Write(Loc("file", self.path), value)]


@dataclass(frozen=True, kw_only=True)
class DirtyPair(Sysctl):
    """One of vm.dirty_{,background_}{ratio,bytes}.

    The kernel keeps one member of each pair in force: writing the bytes file zeroes
    the ratio and the other way round (dirty_ratio/dirty_bytes only when the value
    changes; the background pair always). The bytes files refuse 0 (EINVAL), so the
    way back to "ratio in force" is writing the ratio, never zeroing the bytes.
    """

    partner: str  # the other member's path
    ratio_path: str  # the pair's ratio member (may be `path` itself)

    def how(self) -> str:
        return (
            f"read {self.path}; save it and {self.partner} (writing one zeroes the other); "
            "write the new value; revert writes back whichever member was non-zero"
        )

    def locations(self, host: Host, target: Target) -> list[Loc]:
        return [Loc("file", self.path), Loc("file", self.partner)]

    def setting(self, target: Target) -> str:
        return self.ratio_path  # both members of the pair are one setting

    def revert_plan(self, saved: Mapping[Loc, KnobValue]) -> list[Write]:
        for loc, v in saved.items():
            if int(v) != 0:
                return [Write(loc, v)]
        # Both zero (someone wrote ratio 0). Writing 0 over a 0 ratio is not a change, so the
        # kernel would leave the bytes member set: pass through 1 to make the zeroing happen.
        ratio = Loc("file", self.ratio_path)
        return [Write(ratio, 1), Write(ratio, 0)]
