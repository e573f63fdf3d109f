"""The LLM proposer: the model ranks (or picks) catalogue options; else the rules answer.

A model that can score continuations (agent.llm.backend.Scorer, the embedded GGUF) ranks:
every complete answer the decision allows (each narrowed option's values, the rules' own
proposal, the no-op) is scored by its mean log-probability per token after a short prompt
of the nearest recorded incidents with their accepted answers (agent.proposers.examples)
and this case; the best is taken unless its margin over the second is below a threshold,
when the rules answer (an abstention, not a model failure). Where those nearest incidents
of the same cause disagree on whether to act at all, the rules answer without a call: the
model would only follow whichever example its case resembles more. A 135M model is a poor free
chooser and a fair judge of which of a few lines resembles the worked examples.

A model that cannot score (an OpenAI-compatible server) decodes instead: the options become
a JSON schema (plus the explicit no-op) and the model decodes under it.

Either way the output is validated again in full (agent.proposers.validate). Invalid
output, a backend error or a call past its timeout is counted, and the fallback proposer
(the rules) answers instead. With nothing to choose between, the rules answer without a
call. It changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any, Literal

from agent.llm import prompts
from agent.llm.backend import DEFAULT_TIMEOUT_S, Completion, Message, Model, Scorer
from agent.llm.loader import LLMSettings, open_model
from agent.llm.render import quote, render_brief
from agent.proposers import narrow, rank
from agent.proposers.base import Proposer
from agent.proposers.examples import Example, K, load_examples, nearest, neighbourhood
from agent.proposers.policy import Policy
from agent.proposers.validate import check
from core.diagnosis import Diagnosis
from core.proposal import Proposal
from core.report import HealthReport

Source = Literal["llm", "rules"]


class ModelFailure(StrEnum):
    """Why the model's own proposal could not be used: each is counted against the model."""

    UNAVAILABLE = "unavailable"  # no model could be loaded
    TIMEOUT = "timeout"
    ERROR = "error"  # the backend failed (connection refused, crashed)
    INVALID = "invalid"  # the output failed the schema or the bounds


# A decision is about 25 grammar-forced tokens and a short reason; a reply cut off here is
# invalid and the rules answer, which bounds the worst case on a slow host.
MAX_TOKENS = 72
# Below this margin (mean log-probability per token, best option minus the second) the ranking
# abstains and the rules answer. Fitted by `evals.margin` on the fit split only (evals/split.py),
# from a run of the bundled suite at threshold 0 beside the rules; seen and held-out are only
# reported at it.
MARGIN_THRESHOLD = 0.756


@dataclass
class LLMStats:
    decisions: int = 0
    llm_used: int = 0
    no_choice: int = 0  # no option for the top causes: nothing for the model to pick, the rules answer
    abstained: int = 0  # ranked, but the margin was below the threshold: the rules answer
    contested: int = 0  # the nearest recorded cases disagree on whether to act: the rules answer
    fallback_invalid: int = 0
    fallback_timeout: int = 0
    fallback_error: int = 0  # the backend failed (connection refused, crashed)
    fallback_unavailable: int = 0  # no model could be loaded
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    model_seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class LLMOutcome:
    """One proposal and who made it; a fallback says why, and whether the model failed."""

    proposal: Proposal
    source: Source
    why: str = ""  # for a fallback: what was wrong with the model's answer
    completion: Completion | None = None
    schema: dict[str, Any] = field(default_factory=dict)
    # None when the model answered, or when there was nothing for it to choose (no option).
    failure: ModelFailure | None = None
    margin: float | None = None  # ranking: the best option's score minus the second's


def _shown(value: object) -> str:
    """A knob's value in a prompt: a number as it is, text (read from the host) quoted and cleaned."""
    return str(value) if isinstance(value, int | float) else quote(str(value))


def decision_messages(report: HealthReport, diagnosis: Diagnosis, opts: list[narrow.Option]) -> list[Message]:
    """The constant rules and reply format first (a prefix every decision shares in the model's
    cache), then only what this decision adds: host, top causes, their figures, the options.
    A decision prompt's length is its latency on two cores."""
    system = prompts.fill("system.md") + "\n\n" + prompts.fill("decide.md")
    lines = []
    for o in opts:
        on = f" on {quote(str(o.target))}" if o.target is not None else ""
        values = " or ".join(_shown(v) for v in o.values)
        lines.append(f"- {o.primitive.id}{on}: {_shown(o.current)} -> {values}")
    brief = render_brief(report, diagnosis, narrow.top_causes(diagnosis))
    user = prompts.fill("options.md", brief=brief, options="\n".join(lines))
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


class LLMProposer:
    name = "llm"

    def __init__(
        self,
        model: Model | None,
        fallback: Proposer,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_tokens: int = MAX_TOKENS,
        unavailable: str = "",
        stats: LLMStats | None = None,
        hints: narrow.Hints | None = None,
        examples: Sequence[Example] = (),
        threshold: float = MARGIN_THRESHOLD,
        k: int = K,
    ) -> None:
        self.model = model
        self.fallback = fallback
        self.timeout_s = timeout_s
        self.max_tokens = max_tokens
        self.unavailable = unavailable or ("no model" if model is None else "")
        # Shared when a run makes one proposer per incident and wants the totals.
        self.stats = stats if stats is not None else LLMStats()
        # Without the policy's hints every direction of every primitive for a cause is offered.
        self.hints = hints
        self.examples = list(examples)
        self.threshold = threshold
        self.k = k
        # Examples that must not be retrieved (the incident being scored and its condition).
        self.excluded: Callable[[str], bool] | None = None
        self.last: LLMOutcome | None = None
        self.last_tokens = 0  # prompt and completion tokens of the last proposal

    def exclude_examples(self, excluded: Callable[[str], bool]) -> None:
        """Never retrieve an example whose id `excluded` names: an eval's guard against its own truth."""
        self.excluded = excluded

    @property
    def answered_by(self) -> str:
        return self.last.source if self.last is not None else ""

    @property
    def margin(self) -> float | None:
        return self.last.margin if self.last is not None else None

    def propose(self, report: HealthReport, diagnosis: Diagnosis) -> Proposal:
        return self.decide(report, diagnosis).proposal

    def decide(self, report: HealthReport, diagnosis: Diagnosis) -> LLMOutcome:
        self.stats.decisions += 1
        self.last = self._decide(report, diagnosis)
        done = self.last.completion
        self.last_tokens = done.prompt_tokens + done.completion_tokens if done is not None else 0
        return self.last

    def _decide(self, report: HealthReport, diagnosis: Diagnosis) -> LLMOutcome:
        if self.model is None:
            self.stats.fallback_unavailable += 1
            return self._fall_back(
                report, diagnosis, f"model unavailable: {self.unavailable}", ModelFailure.UNAVAILABLE
            )
        if isinstance(self.model, Scorer):
            return self._rank(self.model, report, diagnosis)
        opts = narrow.options(report, diagnosis, self.hints)
        if not opts:
            self.stats.no_choice += 1
            return self._fall_back(
                report, diagnosis, "no catalogue option for the top causes to decide on", None
            )
        schema = narrow.decision_schema(opts)
        messages = decision_messages(report, diagnosis, opts)
        done = self.model.chat(messages, schema=schema, max_tokens=self.max_tokens, timeout_s=self.timeout_s)
        self._count(done)
        if done.finish == "timeout" or done.seconds > self.timeout_s:
            self.stats.fallback_timeout += 1
            why = f"model past its {self.timeout_s:g} s timeout"
            return self._fall_back(report, diagnosis, why, ModelFailure.TIMEOUT, done, schema)
        if done.finish == "error":
            self.stats.fallback_error += 1
            why = f"model error: {done.error}"
            return self._fall_back(report, diagnosis, why, ModelFailure.ERROR, done, schema)
        checked = check(done.text, schema, opts)
        if checked.proposal is None:
            self.stats.fallback_invalid += 1
            why = f"model output rejected: {checked.problem}"
            return self._fall_back(report, diagnosis, why, ModelFailure.INVALID, done, schema)
        self.stats.llm_used += 1
        return LLMOutcome(checked.proposal, "llm", "", done, schema)

    def _rank(self, model: Scorer, report: HealthReport, diagnosis: Diagnosis) -> LLMOutcome:
        rules = self.fallback.propose(report, diagnosis)  # once: the rules keep hysteresis state
        dec = rank.decision(report, diagnosis, self.hints, rules)
        if len(dec.candidates) < 2:
            self.stats.no_choice += 1
            return LLMOutcome(rules, "rules", "nothing to choose between but the rules' answer")
        shots = nearest(self.examples, dec.key, self.k, self.excluded)
        if contested(neighbourhood(self.examples, dec.key, self.k, self.excluded), dec.key.causes[:1]):
            # The model ranks by resemblance to its worked examples; where the nearest recorded
            # cases of this cause split between acting and not, the host's figures did not tell
            # them apart, and whichever the model resembles more is chance. No model call.
            self.stats.contested += 1
            why = "the nearest recorded cases disagree on whether to act: the rules answer"
            return LLMOutcome(rules, "rules", why)
        scores = model.score(
            rank.prompt(dec.case, shots),
            [rank.continuation(c) for c in dec.candidates],
            timeout_s=self.timeout_s,
        )
        done = Completion(
            "",
            scores.finish,
            prompt_tokens=scores.prompt_tokens + sum(scores.tokens),
            seconds=scores.seconds,
            cached_tokens=scores.cached_tokens,
            error=scores.error,
        )
        self._count(done)
        if scores.finish == "timeout" or scores.seconds > self.timeout_s:
            self.stats.fallback_timeout += 1
            why = f"model past its {self.timeout_s:g} s timeout"
            return LLMOutcome(rules, "rules", why, done, {}, ModelFailure.TIMEOUT)
        if not scores.ok or len(scores.logprobs) != len(dec.candidates):
            self.stats.fallback_error += 1
            why = f"model error: {scores.error or 'scores missing'}"
            return LLMOutcome(rules, "rules", why, done, {}, ModelFailure.ERROR)
        norm = scores.normalised()
        # Ties go to the earlier candidate: the no-op is first, then the rules' proposal.
        order = sorted(range(len(norm)), key=lambda i: (-norm[i], i))
        best, margin = order[0], norm[order[0]] - norm[order[1]]
        chosen = dec.candidates[best]
        done = Completion(chosen.text, "stop", done.prompt_tokens, 0, done.seconds, done.cached_tokens)
        schema = narrow.decision_schema(dec.options, max(1, len(chosen.actions)))
        checked = check(dec.document(best), schema, dec.options)
        if checked.proposal is None:
            self.stats.fallback_invalid += 1
            why = f"model output rejected: {checked.problem}"
            return LLMOutcome(rules, "rules", why, done, schema, ModelFailure.INVALID, margin)
        if margin < self.threshold:
            self.stats.abstained += 1
            why = f"margin {margin:.3f} below {self.threshold:g}: the rules answer"
            return LLMOutcome(rules, "rules", why, done, schema, None, margin)
        self.stats.llm_used += 1
        return LLMOutcome(checked.proposal, "llm", "", done, schema, None, margin)

    def _count(self, done: Completion) -> None:
        self.stats.prompt_tokens += done.prompt_tokens
        self.stats.completion_tokens += done.completion_tokens
        self.stats.cached_tokens += done.cached_tokens
        self.stats.model_seconds += done.seconds

    def _fall_back(
        self,
        report: HealthReport,
        diagnosis: Diagnosis,
        why: str,
        failure: ModelFailure | None,
        done: Completion | None = None,
        schema: dict[str, Any] | None = None,
    ) -> LLMOutcome:
        proposal = self.fallback.propose(report, diagnosis)
        return LLMOutcome(proposal, "rules", why, done, schema or {}, failure)


def contested(near: Sequence[Example], top: Sequence[str]) -> bool:
    """The nearest worked examples (`near`: as similar as the ones shown, or more) whose top cause is
    `top` include both an answer that changes nothing and one that changes something."""
    acts = {e.answer != rank.NOOP for e in near if e.key.causes[:1] == list(top)}
    return len(acts) == 2


def build(
    settings: LLMSettings | None = None,
    *,
    policies: Sequence[Policy] | None = None,
    fallback: Proposer | None = None,
    stats: LLMStats | None = None,
) -> tuple[LLMProposer, str]:
    """An LLM proposer on the configured model (loaded once per process), and one line saying why
    the model is unavailable (empty when it is there). It falls back to `fallback`, else to a rule
    proposer on `policies` (the bundled policy by default); the rules of either narrow its options."""
    from agent.proposers.rules import RuleProposer, load_policies

    s = settings or LLMSettings()
    if fallback is None:
        fallback = RuleProposer(list(policies) if policies is not None else load_policies([]))
    rules = (
        fallback.rules if isinstance(fallback, RuleProposer) else [r for p in policies or [] for r in p.rules]
    )
    opened = open_model(s)
    note = f"LLM unavailable, the rules answer: {opened.why_not}" if opened.model is None else ""
    examples, _ = load_examples()
    proposer = LLMProposer(
        opened.model,
        fallback,
        timeout_s=s.timeout_s,
        unavailable=opened.why_not,
        stats=stats,
        hints=narrow.policy_hints(rules),
        examples=examples,
    )
    return proposer, note


def factory(
    settings: LLMSettings | None = None, policies: Sequence[Policy] | None = None
) -> tuple[Callable[[], LLMProposer], LLMStats, str]:
    """A maker of fresh LLM proposers (one per recorded incident, so the fallback's hysteresis
    never crosses hosts) sharing one loaded model and one tally, and the unavailability line."""
    from agent.proposers.rules import load_policies

    pols = list(policies) if policies is not None else load_policies([])
    stats = LLMStats()
    _, note = build(settings, policies=pols, stats=stats)
    return (lambda: build(settings, policies=pols, stats=stats)[0]), stats, note


def tally(stats: LLMStats) -> str:
    """One line: how often the model's own proposal was used, and why the rules answered otherwise."""
    s = stats
    return (
        f"llm: own proposal used in {s.llm_used} of {s.decisions} decisions; rules answered "
        f"{s.decisions - s.llm_used}: no option to choose {s.no_choice}, margin too small {s.abstained}, "
        f"recorded cases disagree {s.contested}, "
        f"invalid {s.fallback_invalid}, "
        f"timeout {s.fallback_timeout}, error {s.fallback_error}, "
        f"model unavailable {s.fallback_unavailable}; "
        f"tokens {s.prompt_tokens} prompt ({s.cached_tokens} cached) + {s.completion_tokens} generated"
    )
