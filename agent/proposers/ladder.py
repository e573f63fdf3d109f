"""The ladder: the LLM proposes while safe mode allows, else the rules, else nothing.

Safe mode (guardrails.safemode) decides the level; this proposer follows it, and
reports each model failure to it so that K failures in a row move it down to the
rules. A model failure is typed (`ModelFailure`), never read from a reason's text.
"""

from __future__ import annotations

import concurrent.futures

from agent.proposers.base import Proposer
from agent.proposers.llm import LLMProposer, ModelFailure
from core.diagnosis import Diagnosis
from core.proposal import Proposal
from core.report import HealthReport
from guardrails.safemode import Level, SafeMode


class ModelFailed(Exception):
    """The primary proposer's model failed; the ladder counts it and the rules answer."""

    def __init__(self, kind: ModelFailure, why: str) -> None:
        super().__init__(why)
        self.kind = kind


class StrictLLM:
    """The LLM proposer as the ladder's primary: a model failure raises ModelFailed instead of
    answering with the LLM proposer's own rule fallback, so the ladder can count it."""

    name = "llm"

    def __init__(self, inner: LLMProposer) -> None:
        self.inner = inner

    def propose(self, report: HealthReport, diagnosis: Diagnosis) -> Proposal:
        outcome = self.inner.decide(report, diagnosis)
        if outcome.failure is not None:
            raise ModelFailed(outcome.failure, outcome.why)
        return outcome.proposal


class LadderProposer:
    """The primary proposer (LLM) while safe mode allows, else the fallback (rules), else nothing."""

    name = "ladder"

    def __init__(self, primary: Proposer | None, fallback: Proposer, safe: SafeMode) -> None:
        self.primary = primary
        self.fallback = fallback
        self.safe = safe
        self.last_used = ""
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="idletune-llm")
        self._running: concurrent.futures.Future[Proposal] | None = None
        if primary is None:
            safe.escalate(Level.RULES, "no LLM proposer configured")

    def propose(self, report: HealthReport, diagnosis: Diagnosis) -> Proposal:
        if self.safe.level >= Level.OBSERVE:
            self.last_used = "none"
            return Proposal.noop(f"safe mode: observe only ({self.safe.reason})")
        if self.safe.level == Level.LLM and self.primary is not None:
            got = self._ask_primary(report, diagnosis)
            if got is not None:
                self.last_used = self.primary.name
                return got
        self.last_used = self.fallback.name
        return self.fallback.propose(report, diagnosis)

    def _ask_primary(self, report: HealthReport, diagnosis: Diagnosis) -> Proposal | None:
        assert self.primary is not None
        if self._running is not None and not self._running.done():
            # A call that timed out is still running: a thread cannot be killed, so wait for it.
            self.safe.llm_failed("the previous call is still running")
            return None
        self._running = self._pool.submit(self.primary.propose, report, diagnosis)
        try:
            proposal = self._running.result(timeout=self.safe.config.llm_timeout_s)
        except concurrent.futures.TimeoutError:
            self.safe.llm_failed(f"no answer in {self.safe.config.llm_timeout_s:g} s")
            return None
        except Exception as e:  # any failure of the model or its output is the ladder's business
            self.safe.llm_failed(f"{type(e).__name__}: {e}")
            return None
        self.safe.llm_ok()
        return proposal

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
