"""The interface every proposer implements; the rule proposer and the LLM proposer are interchangeable."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from core.diagnosis import Diagnosis
from core.proposal import Proposal
from core.report import HealthReport


@runtime_checkable
class Proposer(Protocol):
    name: str

    def propose(self, report: HealthReport, diagnosis: Diagnosis) -> Proposal:
        """What to change and why, or an explicit no-op with its reason. Changes nothing."""
        ...
