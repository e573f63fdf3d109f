"""Shared helpers for diagnosis tests: run the engine on a synthetic scenario or an incident."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from agent.diagnosis.engine import diagnose
from core.diagnosis import Category, Diagnosis
from core.incident import Incident
from core.report import HealthReport, HostInfo, build_report
from core.sample import Sample
from core.window import Window
from evals.synth import incident, scenario


def run(inc: Incident, question: str | None = None) -> tuple[HealthReport, Diagnosis]:
    w = inc.window()
    report = inc.report(w)
    return report, diagnose(w, report, question)


def synth(category: Category, seed: int = 0, **overrides: Any) -> tuple[HealthReport, Diagnosis]:
    return run(incident(scenario(category, seed, **overrides)))


def rank_of(d: Diagnosis, category: Category) -> int:
    return [c.category for c in d.causes].index(category) + 1


Jitter = Callable[[float], float]


def run_jittered(
    n: int, seed: int, metrics: Callable[[int, Jitter], dict[str, float]], host: HostInfo, **report: Any
) -> tuple[HealthReport, Diagnosis]:
    """The report and the engine's diagnosis of `n` one-second samples that `metrics(t, j)` builds,
    `j` adding seeded ±5 % noise."""
    rng = random.Random(seed)

    def j(x: float) -> float:
        return x * (1.0 + rng.uniform(-0.05, 0.05))

    w = Window(samples=[Sample(t=float(t), m=metrics(t, j)) for t in range(n)])
    r = build_report(w, host, **report)
    return r, diagnose(w, r)


def diagnose_jittered(
    n: int, seed: int, metrics: Callable[[int, Jitter], dict[str, float]], host: HostInfo, **report: Any
) -> Diagnosis:
    """The engine on `n` one-second samples that `metrics(t, j)` builds, `j` adding seeded ±5 % noise."""
    return run_jittered(n, seed, metrics, host, **report)[1]
