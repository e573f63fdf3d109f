"""The service's state: the latest snapshot, refreshed by a background loop, and the guardrails.

Every read endpoint serves bytes serialised at most once per refresh, so a request costs
a lookup and a write, whatever the number of clients: the host is observed once per
interval, not once per request. A refresh, on the loop's thread, takes what the report is
made of (the window's samples, the sources' states); the report, the diagnosis and the
serialised parts are made from it when first asked for, so an interval nobody reads (most:
Prometheus scrapes every 15 s or so) costs a copy of the window.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from agent.cost import CostReading
from agent.daemon import Daemon
from agent.diagnosis.engine import diagnose
from agent.service.features import FeaturesDoc
from agent.service.guard import Guard
from agent.service.kpi import KpiSeries, kpi_series
from agent.service.metrics import cost_text, gauges_text
from agent.service.observers import Observer
from core.diagnosis import Diagnosis
from core.report import HealthReport
from core.sample import Sample
from core.window import Window

Asker = Callable[[str, HealthReport, Diagnosis], tuple[str, str, str]]


@dataclass(frozen=True)
class Inputs:
    """What the snapshot's lazy parts are made of, fixed at the refresh."""

    horizon_s: float
    samples: list[Sample]  # the window's as of the refresh: the loop's goes on filling
    question: str | None
    markers: Callable[[], Sequence[tuple[float, str, str]]]
    pending: Callable[[], int]
    cost: CostReading | None


class Snapshot:
    """One refresh; its report, its diagnosis and what is served are made when first asked."""

    def __init__(
        self, t: float, make_report: Callable[[], HealthReport], features: FeaturesDoc, inputs: Inputs
    ) -> None:
        self.t = t
        self._make_report = make_report
        self._report_lock = threading.Lock()
        self.features = features
        self._in = inputs

    @cached_property
    def report(self) -> HealthReport:
        # Made once: the knobs it reads could differ between two makings, and every part
        # served from this snapshot must come from the same report.
        with self._report_lock:
            if "report" in self.__dict__:
                return self.__dict__["report"]  # type: ignore[no-any-return]
            return self._make_report()

    # Two requests meeting on a part made from the report may both make it; they make the same thing.

    @cached_property
    def window(self) -> Window:
        return Window(self._in.horizon_s, self._in.samples)

    @cached_property
    def diagnosis(self) -> Diagnosis:
        return diagnose(self.window, self.report, self._in.question)

    @cached_property
    def kpi(self) -> KpiSeries:
        return kpi_series(self.window, self._in.markers())

    @cached_property
    def report_json(self) -> bytes:
        return self.report.model_dump_json().encode()

    @cached_property
    def diagnosis_json(self) -> bytes:
        return self.diagnosis.model_dump_json().encode()

    @cached_property
    def kpi_json(self) -> bytes:
        return self.kpi.model_dump_json().encode()

    @cached_property
    def features_json(self) -> bytes:
        return self.features.model_dump_json().encode()

    @cached_property
    def gauges(self) -> bytes:
        return gauges_text(self.report, self.diagnosis, self._in.pending()) + cost_text(self._in.cost)


class ServiceState:
    def __init__(
        self,
        observer: Observer,
        guard: Guard,
        *,
        interval_s: float = 1.0,
        asker: Asker | None = None,
        clock: Callable[[], float] = time.time,
        control: Daemon | None = None,
    ) -> None:
        self.observer = observer
        # The daemon's closed loop, when one runs here: its mode and reloads are served too.
        self.control = control
        self.guard = guard
        self.interval_s = interval_s
        self.asker = asker
        self._clock = clock
        self._snapshot: Snapshot | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.last_error = ""

    @property
    def state_dir(self) -> Path:
        return self.guard.dir

    def asking(self, who: str) -> None:
        """A person asks (the dashboard, /v1/diagnosis, /v1/ask): the live host's hot-path
        collectors measure without a break for a while. Returns at once."""
        ask = getattr(getattr(self.observer, "live", None), "ask", None)
        if callable(ask):
            ask(who)

    def snapshot(self) -> Snapshot:
        snap = self._snapshot
        if snap is None:
            # Before the loop's first refresh (or without a loop, in tests): build one now.
            snap = self.refresh()
        return snap

    def refresh(self) -> Snapshot:
        obs = self.observer.observe()
        guard = self.guard
        inputs = Inputs(
            horizon_s=obs.window.horizon_s,
            samples=obs.window.samples,
            question=obs.question,
            markers=guard.markers,
            pending=lambda: len(guard.approvals.pending()),
            cost=obs.cost,
        )
        snap = Snapshot(self._clock(), obs.make_report, obs.features, inputs)
        # One reference assignment: readers see the old snapshot or the new, never half of one.
        self._snapshot = snap
        return snap

    # -- the background loop ---------------------------------------------------------

    def start(self) -> None:
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="idletune-snapshot", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        next_due = time.monotonic()
        while not self._stop.is_set():
            try:
                self.refresh()
                self.last_error = ""
            except Exception as exc:  # keep serving the last good snapshot, and say why it is old
                self.last_error = f"{type(exc).__name__}: {exc}"
            next_due += self.interval_s
            self._stop.wait(max(0.0, next_due - time.monotonic()))
            next_due = max(next_due, time.monotonic())

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
        with contextlib.suppress(Exception):
            self.observer.close()
