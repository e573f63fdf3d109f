"""Watching only some block devices: which figures and knobs belong to them.

On a shared host other disks belong to other work. A loop or a recording told to
keep to some devices leaves the others' figures, knobs and names out, so that a
diagnosis cannot point at a disk that is not its to tune.
"""

from __future__ import annotations

from collections.abc import Iterable

from core.knob import split_knob_key
from core.report import HealthReport, HostInfo
from core.sample import Sample


class DeviceFilter:
    def __init__(self, devices: Iterable[str]) -> None:
        self.keep = set(devices)

    def metric(self, name: str) -> bool:
        """Whether a metric is ours: every non-block figure is, an `io.<dev>.…` one if its device is."""
        parts = name.split(".")
        return parts[0] != "io" or len(parts) < 3 or parts[1] in self.keep

    def knob(self, key: str) -> bool:
        """Whether a knob is ours: every non-block knob is, a block knob if its device is."""
        primitive, target = split_knob_key(key)
        return not (primitive.startswith("block.") and target and target not in self.keep)

    def sample(self, s: Sample) -> Sample:
        return Sample(
            t=s.t,
            m={k: v for k, v in s.m.items() if self.metric(k)},
            cover={k: v for k, v in s.cover.items() if self.metric(k)},
        )

    def host(self, h: HostInfo) -> HostInfo:
        return h.model_copy(update={"block_devices": [d for d in h.block_devices if d in self.keep]})

    def report(self, r: HealthReport) -> HealthReport:
        return r.model_copy(
            update={
                "host": self.host(r.host),
                "metrics": {k: v for k, v in r.metrics.items() if self.metric(k)},
                "subsystems": {
                    sub: {k: v for k, v in figs.items() if self.metric(k)}
                    for sub, figs in r.subsystems.items()
                },
                "knobs": {k: v for k, v in r.knobs.items() if self.knob(k)},
            }
        )
