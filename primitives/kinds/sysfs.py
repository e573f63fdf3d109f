"""Sysfs knobs: `[selected]` lists such as transparent_hugepage, and per-device block queue files."""

from __future__ import annotations

from dataclasses import dataclass

from core.knob import KnobValue, Target
from primitives.base import Availability, Loc, Primitive, Write, valid_name
from primitives.host import Host


def listed_options(raw: str) -> list[str]:
    """Every entry of a selection file: `always [madvise] never` -> [always, madvise, never]."""
    return raw.replace("[", " ").replace("]", " ").split()


@dataclass(frozen=True, kw_only=True)
class SelectFile(Primitive):
    path: str

    def how(self) -> str:
        return f"read the bracketed entry of {self.path}; write its name; revert writes the saved name"

    def available(self, host: Host, target: Target) -> Availability:
        if host.fs.exists(self.path):
            return Availability(True)
        return Availability(False, f"this kernel has no {self.path}")

    def locations(self, host: Host, target: Target) -> list[Loc]:
        return [Loc("select", self.path)]

    def read(self, host: Host, target: Target) -> KnobValue:
        return host.read(Loc("select", self.path))

    def check(self, host: Host, target: Target, value: KnobValue) -> str | None:
        offered = listed_options(host.fs.read_text(self.path))
        if str(value) not in offered:
            return f"{self.path} offers {', '.join(offered)}, not {value}"
        return None

    def apply_plan(self, host: Host, target: Target, value: KnobValue) -> list[Write]:
        return [Write(Loc("select", self.path), value)]


@dataclass(frozen=True, kw_only=True)
class BlockQueue(Primitive):
    """A file of /sys/block/<dev>/queue. `also_saves` lists files the write resets as a side effect."""

    attr: str
    select: bool = False  # the file is a `[selected]` list (scheduler)
    also_saves: tuple[str, ...] = ()

    def _path(self, dev: Target, attr: str) -> str:
        return f"/sys/block/{dev}/queue/{attr}"

    def _loc(self, dev: Target) -> Loc:
        return Loc("select" if self.select else "file", self._path(dev, self.attr))

    def how(self) -> str:
        text = f"read /sys/block/<dev>/queue/{self.attr}; write the new value"
        if self.also_saves:
            also = ", ".join(self.also_saves)
            text += f"; save {also} too (the write resets it); revert restores {self.attr} first, then {also}"
        else:
            text += "; revert writes the saved value back"
        return text

    def available(self, host: Host, target: Target) -> Availability:
        if not isinstance(target, str) or not valid_name(target):
            return Availability(False, f"{target!r} is not a block device name")
        if not host.fs.exists(self._path(target, self.attr)):
            return Availability(False, f"no request queue for {target} (not a whole disk, or absent)")
        return Availability(True)

    def locations(self, host: Host, target: Target) -> list[Loc]:
        # Restoration follows this order: the file itself first, then what its write resets.
        return [self._loc(target)] + [Loc("file", self._path(target, a)) for a in self.also_saves]

    def read(self, host: Host, target: Target) -> KnobValue:
        return self.value.normalize(host.read(self._loc(target)))

    def check(self, host: Host, target: Target, value: KnobValue) -> str | None:
        if not self.select:
            return None
        offered = listed_options(host.fs.read_text(self._path(target, self.attr)))
        if str(value) not in offered:
            return f"{target} offers {', '.join(offered)}, not {value}"
        return None

    def apply_plan(self, host: Host, target: Target, value: KnobValue) -> list[Write]:
        return [Write(self._loc(target), value)]
