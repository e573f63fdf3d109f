"""A finding's evidence: each figure once, in the words of the signal that judged it strongest."""

from __future__ import annotations

from agent.diagnosis.signals import Signal, gather
from core.diagnosis import Evidence


def test_evidence_names_each_metric_once_with_the_stronger_line() -> None:
    weak = Signal(0.3, [Evidence(metric="cpu.util_pct", observed=100.0, rule="at or above 80")])
    strong = Signal(0.8, [Evidence(metric="cpu.util_pct", observed=100.0, rule="rose to 100")])
    other = Signal(0.5, [Evidence(metric="psi.cpu.some_avg10", observed=60.0, rule="rose to 60")])
    assert [(e.metric, e.rule) for e in gather(weak, other, strong)] == [
        ("cpu.util_pct", "rose to 100"),
        ("psi.cpu.some_avg10", "rose to 60"),
    ]
