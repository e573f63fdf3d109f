"""Host: the filesystem object plus the optional trainer channel and GPU power interface.

Primitives and the executor reach a location (`Loc`) only through `read` and
`write` here, so a fake root, a fake trainer and a fake GPU replace the whole host.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.cpulist import parse_cpulist
from core.hostfs import HostFS
from core.knob import KnobValue
from primitives.base import Loc
from primitives.channels import GpuPower, TrainerChannel

_SELECTED = re.compile(r"\[([^\]\s]+)\]")


class WriteError(Exception):
    """A write the host refused (EINVAL, a trainer refusal, NVML); the executor turns it into a result."""


def selected(raw: str) -> str:
    """The bracketed entry of a sysfs selection file: `always [madvise] never` -> `madvise`."""
    m = _SELECTED.search(raw)
    return m.group(1) if m else raw.strip()


@dataclass
class Host:
    fs: HostFS
    trainer: TrainerChannel | None = None
    gpu: GpuPower | None = None

    def read(self, loc: Loc) -> KnobValue:
        if loc.kind == "file":
            return self.fs.read_value(loc.where)
        if loc.kind == "select":
            return selected(self.fs.read_text(loc.where))
        if loc.kind == "trainer":
            if self.trainer is None:
                raise LookupError("no trainer hook is attached")
            return self.trainer.get(loc.where, loc.key)
        if self.gpu is None:
            raise LookupError("no GPU")
        return self.gpu.limit_w(int(loc.where))

    def write(self, loc: Loc, value: KnobValue) -> str | None:
        """Write, or raise WriteError. Returns why the value is not in force yet, if it is not."""
        try:
            if loc.kind in ("file", "select"):
                self.fs.write_text(loc.where, str(value))
            elif loc.kind == "trainer":
                if self.trainer is None:
                    raise WriteError("no trainer hook is attached")
                ack = self.trainer.set(loc.where, loc.key, value)
                if not ack.ok:
                    raise WriteError(f"the trainer refused: {ack.reason or 'no reason given'}")
                if ack.pending:
                    return ack.reason or "accepted; takes effect later"
            else:
                if self.gpu is None:
                    raise WriteError("no GPU")
                self.gpu.set_limit_w(int(loc.where), float(value))
        except OSError as e:
            raise WriteError(f"{loc}: {e.strerror or e}") from e
        return None

    def online_cpus(self) -> set[int] | None:
        path = "/sys/devices/system/cpu/online"
        if not self.fs.exists(path):
            return None
        return parse_cpulist(self.fs.read_value(path))

    def mem_total_kb(self) -> int | None:
        if not self.fs.exists("/proc/meminfo"):
            return None
        for line in self.fs.read_text("/proc/meminfo").splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1])
        return None
