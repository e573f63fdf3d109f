"""The service's state: the latest snapshot, refreshed by a background loop, and the guardrails.

Every read endpoint serves bytes serialised once per refresh, so a request costs a
lookup and a write, whatever the number of clients: the host is observed once per
interval, not once per request.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agent.daemon import Daemon
from agent.diagnosis.engine import diagnose
from agent.service.features import FeaturesDoc
from agent.service.guard import Guard
from agent.service.kpi import KpiSeries, kpi_series
from agent.service.metrics import cost_text, gauges_text
from agent.service.observers import Observer
from core.diagnosis import Diagnosis
from core.report import HealthReport

Asker = Callable[[str, HealthReport, Diagnosis], tuple[str, str, str]]


@dataclass(frozen=True)
class Snapshot:
    t: float
    report: HealthReport
    diagnosis: Diagnosis
    kpi: KpiSeries
    features: FeaturesDoc
    report_json: bytes
    diagnosis_json: bytes
    kpi_json: bytes
    features_json: bytes
    gauges: bytes


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

    def snapshot(self) -> Snapshot:
        snap = self._snapshot
        if snap is None:
            # Before the loop's first refresh (or without a loop, in tests): build one now.
            snap = self.refresh()
        return snap

    def refresh(self) -> Snapshot:
        obs = self.observer.observe()
        d = diagnose(obs.window, obs.report, obs.question)
        kpi = kpi_series(obs.window, self.guard.markers())
        pending = len(self.guard.approvals.pending())
        snap = Snapshot(
            t=self._clock(),
            report=obs.report,
            diagnosis=d,
            kpi=kpi,
            features=obs.features,
            report_json=obs.report.model_dump_json().encode(),
            diagnosis_json=d.model_dump_json().encode(),
            kpi_json=kpi.model_dump_json().encode(),
            features_json=obs.features.model_dump_json().encode(),
            gauges=gauges_text(obs.report, d, pending) + cost_text(obs.cost),
        )
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
