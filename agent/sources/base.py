"""The interface every live source implements."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from core.sample import SourceStatus


@runtime_checkable
class Source(Protocol):
    """A source of metrics in the spec vocabulary.

    `start` never raises for an expected reason (no root, no driver, no BPF); it
    returns `live=False` with a one-line reason. `collect` returns the metrics for
    the interval since the previous call (rates per second, percentiles of that
    interval) and is cheap. `close` detaches and is safe to call twice.
    """

    name: str

    def start(self) -> SourceStatus: ...

    def collect(self) -> dict[str, float]: ...

    def close(self) -> None: ...
