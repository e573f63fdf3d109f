"""Where the service's snapshots come from: the live host, or a recorded incident.

An observer returns the window, its report and the per-cgroup features each time
the service refreshes; everything after it (diagnosis, KPI, serialisation) is the
same for both, as everywhere in the pipeline.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from agent.cost import CostReading
from agent.live import LiveHost
from agent.service.features import FeaturesDoc, build
from agent.sources.cgroupfs import CgroupPaths
from core.report import HealthReport
from core.window import Window

LIVE_HORIZON_S = 600.0


@dataclass(frozen=True)
class Observation:
    window: Window
    # The report, made when first wanted: a refresh nobody reads costs none (LiveHost.report_later).
    make_report: Callable[[], HealthReport]
    features: FeaturesDoc
    question: str | None = None
    cost: CostReading | None = None  # what the agent costs, where it watches a live host

    @property
    def report(self) -> HealthReport:
        return self.make_report()


class Observer(Protocol):
    def observe(self) -> Observation: ...

    def close(self) -> None: ...


class ReplayObserver:
    """A recorded incident, served as it is: for demos, tests and benchmarks without root."""

    def __init__(self, path: Path) -> None:
        from core.incident import load_incident

        inc = load_incident(path)
        window = inc.window()
        report = inc.report(window)
        self._obs = Observation(
            window=window,
            make_report=lambda: report,
            features=FeaturesDoc(live=False, reason="a recorded incident holds no per-cgroup figures"),
            question=inc.question,
        )

    def observe(self) -> Observation:
        return self._obs

    def close(self) -> None:
        pass


class LiveObserver:
    """The live host: each observe collects one interval and summarises the rolling window."""

    def __init__(self, live: LiveHost, horizon_s: float = LIVE_HORIZON_S) -> None:
        self.live = live
        self.window = Window(horizon_s=horizon_s)
        self._started = False
        self._paths = CgroupPaths(live.fs)

    def observe(self) -> Observation:
        if not self._started:
            self.live.start()
            self._started = True
            self.live.collector.tick()  # rates need a previous reading; this one is discarded
        self.window.add(self.live.tick())
        return Observation(
            self.window, self.live.report_later(self.window), self._features(), cost=self.live.cost
        )

    def _features(self) -> FeaturesDoc:
        bpf = next((s for s in self.live.collector.sources if s.name == "bpf"), None)
        status = self.live.collector.statuses.get("bpf")
        reading_of = getattr(bpf, "cgroups", None)
        reading = reading_of() if callable(reading_of) else None
        if reading is None:
            why = status.reason if status is not None and not status.live else ""
            return FeaturesDoc(live=False, reason=why or "the run-queue collector is not running")
        return build(reading.counts, reading.elapsed_s, reading.t, self._paths)

    def close(self) -> None:
        self.live.close()


class LoopObserver(LiveObserver):
    """The daemon's control loop: the window it keeps, summarised; the loop itself collects."""

    def __init__(
        self, live: LiveHost, window: Window, report_later: Callable[[Window], Callable[[], HealthReport]]
    ) -> None:
        super().__init__(live)
        self.window = window
        self._report_later = report_later

    def observe(self) -> Observation:
        return Observation(
            self.window, self._report_later(self.window), self._features(), cost=self.live.cost
        )

    def close(self) -> None:
        pass  # the daemon closes its feed
