"""Knobs of a training job, set through its trainer hook's control channel."""

from __future__ import annotations

from dataclasses import dataclass

from core.knob import KnobValue, Target
from primitives.base import Availability, Loc, Primitive, Write
from primitives.host import Host


@dataclass(frozen=True, kw_only=True)
class TrainerKnob(Primitive):
    """The channel key is the primitive id; the target is the job name."""

    def how(self) -> str:
        return (
            f"ask the job's trainer hook for {self.id}; ask it to set the new value and take the value "
            "it acknowledges as in force; revert asks it to set the saved value"
        )

    def available(self, host: Host, target: Target) -> Availability:
        if host.trainer is None:
            return Availability(False, "no trainer hook is attached on this host")
        if not isinstance(target, str) or target not in host.trainer.jobs():
            return Availability(False, f"no trainer hook is attached for job {target!r}")
        if self.id not in host.trainer.capabilities(target):
            return Availability(False, f"the hook of job {target} cannot set {self.id}")
        return Availability(True)

    def _loc(self, target: Target) -> Loc:
        return Loc("trainer", str(target), self.id)

    def locations(self, host: Host, target: Target) -> list[Loc]:
        return [self._loc(target)]

    def read(self, host: Host, target: Target) -> KnobValue:
        return self.value.normalize(host.read(self._loc(target)))

    def apply_plan(self, host: Host, target: Target, value: KnobValue) -> list[Write]:
        return [Write(self._loc(target), value)]

    def in_force(self, host: Host, target: Target, value: KnobValue) -> bool:
        # The hook reports a value only once its loader runs with it (the final ack, then the
        # metrics' knobs), and every rank has confirmed it when none is still awaited.
        if host.trainer is None:
            raise LookupError("no trainer hook is attached")
        return not host.trainer.awaiting(str(target), self.id) and self.read(host, target) == value
