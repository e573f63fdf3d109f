"""Grounding: every number in an answer must trace to the HealthReport or the Diagnosis.

A number is traced when some known value, rounded to the decimals the text shows, gives
it back, or when it is that value as a percentage (a 0..1 share or a confidence), or a
small integer (ranks, counts, GPU indices). Numbers that are part of a name
(`gpu.0.util_pct`, `nvme0n1`) are not figures and are skipped. A caller may add figures
of its own sources: the operator's question, the catalogue's bounds of a setting the
text names (`catalogue_values`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from core.diagnosis import Diagnosis
from core.report import HealthReport

# Digits with an optional fraction, not glued to a name on either side.
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?![\w]|\.\w)")
SMALL_INT = 16


def _report_values(r: HealthReport) -> Iterable[float]:
    h, w = r.host, r.window
    yield from (h.cpus, h.numa_nodes, h.gpus, w.start, w.end, w.samples, w.end - w.start)
    if w.interval_s is not None:
        yield w.interval_s
    yield from r.metrics.values()
    for group in r.subsystems.values():
        for s in group.values():
            yield from (s.value, s.mean, s.median, s.min, s.max, s.last, s.n)
    for v in r.knobs.values():
        if isinstance(v, int | float):
            yield float(v)
    workers = 0
    for j in r.jobs:
        if j.pid is not None:
            yield j.pid
        yield from j.gpus
        yield len(j.gpus)
        if j.loader_workers is not None:
            yield j.loader_workers
            workers += j.loader_workers
    yield workers
    yield from r.drops.values()


def _diagnosis_values(d: Diagnosis, t0: float) -> Iterable[float]:
    """Figures of the diagnosis; times also as seconds into the window (`t0` its start)."""
    for c in d.causes:
        yield c.confidence
        for e in c.evidence:
            for v in (e.observed, e.baseline, e.threshold):
                if v is not None:
                    yield v
            if e.t_start is not None:
                yield from (e.t_start, e.t_start - t0)
            if e.baseline:
                yield e.observed / e.baseline
    for s in d.lost_work:
        yield from (s.t_start, s.t_end, s.t_start - t0, s.t_end - t0, s.severity, s.t_end - s.t_start)
    yield len(d.lost_work)


def known_values(report: HealthReport, diagnosis: Diagnosis) -> list[float]:
    values = (*_report_values(report), *_diagnosis_values(diagnosis, report.window.start))
    vals = [float(v) for v in values]
    vals += [float(m) for m in _NUMBER.findall(diagnosis.question)]
    return vals


def _traced(token: str, values: list[float]) -> bool:
    number = float(token)
    decimals = len(token.split(".", 1)[1]) if "." in token else 0
    if decimals == 0 and number <= SMALL_INT:
        return True
    tol = 0.5 * 10.0**-decimals + 1e-9
    for v in values:
        for candidate in (abs(v), abs(v) * 100.0):
            if abs(candidate - number) <= tol:
                return True
    return False


def numbers_in(text: str) -> list[str]:
    return _NUMBER.findall(text)


def catalogue_values(text: str) -> list[float]:
    """Bounds and step limits of the catalogue settings `text` names by id: the chat cites them."""
    from primitives.base import IntRange
    from primitives.catalog import all_primitives

    out: list[float] = []
    for p in all_primitives():
        if p.id not in text:
            continue
        if isinstance(p.value, IntRange):
            out += [p.value.min, p.value.max]
        if p.step is not None:
            out += [v for v in (p.step.delta, p.step.factor) if v is not None]
    return out


def check_grounded(
    text: str, report: HealthReport, diagnosis: Diagnosis, also: Iterable[float] = ()
) -> list[str]:
    """Numbers in `text` that no figure of the report, diagnosis or `also` explains; empty: grounded."""
    values = [*known_values(report, diagnosis), *(float(v) for v in also)]
    return [tok for tok in numbers_in(text) if not _traced(tok, values)]
