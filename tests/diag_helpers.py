"""Shared helpers for diagnosis tests: run the engine on a synthetic scenario or an incident."""

from __future__ import annotations

from typing import Any

from agent.diagnosis.engine import diagnose
from agent.diagnosis.model import Category, Diagnosis
from agent.report import HealthReport
from evals.incident import Incident
from evals.synth import incident, scenario


def run(inc: Incident, question: str | None = None) -> tuple[HealthReport, Diagnosis]:
    w = inc.window()
    report = inc.report(w)
    return report, diagnose(w, report, question)


def synth(category: Category, seed: int = 0, **overrides: Any) -> tuple[HealthReport, Diagnosis]:
    return run(incident(scenario(category, seed, **overrides)))


def rank_of(d: Diagnosis, category: Category) -> int:
    return [c.category for c in d.causes].index(category) + 1
