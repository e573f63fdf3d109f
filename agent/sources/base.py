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


@runtime_checkable
class Reloadable(Protocol):
    """A source whose collectors can be replaced while it runs (a new build of its programs).

    `reload` keeps the source collecting throughout: the next `collect` covers
    the whole interval across the swap. It returns whether everything was
    replaced and one line saying what was done; a part that could not be
    replaced keeps running and the line says why.
    """

    name: str

    def reload(self) -> tuple[bool, str]: ...
