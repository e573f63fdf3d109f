"""The summary of an eval run as rows: one per score, the chosen proposer beside the constant baseline.

The CLI prints these rows as a terminal table and `bench/readme_results.py` writes them as
Markdown, so both always show the same figures with the same words.
"""

from __future__ import annotations

from collections.abc import Callable

from evals.harness import EvalRun
from evals.scoring import Summary

Row = tuple[str, str, str]


def _rate(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.2f}"


def _ms(v: float) -> str:
    return f"{v:.1f} ms"


def _int(v: int) -> str:
    return str(v)


# Figures a constant answer has no value for: it takes no time and reads no model.
_NOT_FOR_BASELINE = {"latency p50", "latency p95", "LLM tokens"}

ROWS: list[tuple[str, Callable[[Summary], str]]] = [
    ("incidents scored", lambda s: _int(s.incidents)),
    ("invalid incidents", lambda s: _int(s.invalid)),
    ("root cause AC@1", lambda s: _rate(s.ac1)),
    ("root cause AC@3", lambda s: _rate(s.ac3)),
    ("actions match an acceptable alternative", lambda s: _rate(s.action_match_rate)),
    ("forbidden actions proposed (target 0)", lambda s: _int(s.forbidden_actions)),
    ("restraint (no action where none is acceptable)", lambda s: _rate(s.restraint)),
    ("schema-valid proposals", lambda s: _rate(s.schema_valid_rate)),
    ("evidence recall", lambda s: _rate(s.evidence_recall)),
    ("latency p50", lambda s: _ms(s.latency_p50_ms)),
    ("latency p95", lambda s: _ms(s.latency_p95_ms)),
    ("LLM tokens", lambda s: _int(s.tokens)),
]


def headers(run: EvalRun) -> tuple[str, str, str]:
    return ("score", f"proposer: {run.proposer}", f"baseline: always {run.baseline.cause}, no action")


def rows(run: EvalRun) -> list[Row]:
    return [
        (label, show(run.summary), "-" if label in _NOT_FOR_BASELINE else show(run.baseline.summary))
        for label, show in ROWS
    ]


def markdown(run: EvalRun, extra: list[Row] | None = None) -> str:
    """A Markdown table of the summary; `extra` rows (bench figures) follow with the baseline blank."""
    head = headers(run)
    lines = [f"| {' | '.join(head)} |", "|---|---:|---:|"]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in [*rows(run), *(extra or [])]]
    return "\n".join(lines)
