"""Replay recorded incidents through the live pipeline and score them against their truth.

Each incident goes Samples -> Window -> HealthReport -> Diagnosis -> answer -> Proposal,
the same stages a live host runs, on the recording's own timestamps: nothing reads the
wall clock except the latency figure. Only the header's host, knobs and jobs, the series
and the question reach the pipeline; the folder name, title, tags and truth never do.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from jsonschema import Draft202012Validator
from pydantic import BaseModel, ConfigDict

from agent.answer import answer_text, catalogue_remedies
from agent.diagnosis.engine import diagnose
from agent.proposers.base import Proposer
from core.diagnosis import Category, Diagnosis
from core.incident import Incident, IncidentError, load_incident
from core.proposal import Action, Proposal
from core.vocabulary import is_known
from evals.scoring import IncidentScore, Summary, score_incident, summarise
from evals.sources import View, seen
from evals.split import condition_of, split_of

INCIDENT_FILE = "incident.yaml"


@runtime_checkable
class CountsTokens(Protocol):
    """A proposer that spends model tokens says how many its last proposal took."""

    last_tokens: int


@runtime_checkable
class Retrieves(Protocol):
    """A proposer that retrieves recorded incidents as examples can be told which it must not use."""

    def exclude_examples(self, excluded: Callable[[str], bool]) -> None: ...


@runtime_checkable
class Answers(Protocol):
    """A proposer that may hand a decision to another says who answered its last one, and its margin."""

    @property
    def answered_by(self) -> str: ...
    @property
    def margin(self) -> float | None: ...


def excluded_for(incident_id: str) -> Callable[[str], bool]:
    """What an incident's decision may not retrieve: itself, any recording of its condition, and
    every held-out incident (a held-out condition is never an example, whatever is scored)."""
    cond = condition_of(incident_id)

    def excluded(other: str) -> bool:
        return (
            other == incident_id
            or (cond is not None and condition_of(other) == cond)
            or split_of(other) == "held-out"
        )

    return excluded


class Replay(BaseModel):
    """What the pipeline made of one incident."""

    model_config = ConfigDict(extra="forbid")

    id: str
    causes: list[str]
    actions: list[Action]
    evidence: list[str]
    answer: str
    latency_ms: float
    schema_valid: bool
    tokens: int = 0
    noop_reason: str | None = None
    not_judged: list[str] = []  # causes the window held no figures for (a source missing)
    answered_by: str = ""  # which proposer's answer was used (the LLM proposer may hand it to the rules)
    margin: float | None = None  # a ranking LLM's best option's score minus the second's


class Result(BaseModel):
    model_config = ConfigDict(extra="forbid")

    replay: Replay
    truth: list[str]  # the labelled root causes, kept for showing beside the answer
    score: IncidentScore
    tags: list[str] = []  # the incident's tags: for scores per condition, never seen by the pipeline


class Baseline(BaseModel):
    """The constant answer: always the suite's most frequent cause, never an action."""

    model_config = ConfigDict(extra="forbid")

    cause: str
    summary: Summary
    scores: list[IncidentScore]


class EvalRun(BaseModel):
    model_config = ConfigDict(extra="forbid")

    proposer: str
    summary: Summary
    results: list[Result]
    baseline: Baseline
    errors: list[str]  # incidents that could not be read: one line each, left out of the scores
    failures: list[str] = []  # incidents the pipeline crashed on: scored as wrong throughout
    view: View = "all"  # the sources the incidents were seen through (evals.sources)

    def confusion(self) -> dict[str, dict[str, int]]:
        """Truth (first root cause) x the pipeline's top cause: how many incidents of each pair."""
        out: dict[str, dict[str, int]] = {}
        for r in self.results:
            top = r.replay.causes[0] if r.replay.causes else "-"
            row = out.setdefault(r.truth[0], {})
            row[top] = row.get(top, 0) + 1
        return {t: dict(sorted(row.items())) for t, row in sorted(out.items())}

    def subset(self, keep: Callable[[Result], bool]) -> Summary:
        """The summary over the incidents `keep` picks."""
        return summarise([r.score for r in self.results if keep(r)], 0)

    def by_tag(self) -> dict[str, Summary]:
        """The summary over the incidents that carry each tag (a condition, a scenario, `real`)."""

        def tagged(tag: str) -> Callable[[Result], bool]:
            return lambda r: tag in r.tags

        return {t: self.subset(tagged(t)) for t in sorted({t for r in self.results for t in r.tags})}

    def by_split(self) -> dict[str, Summary]:
        """The summary per split of evals.split: the conditions that tuned the engine (`fit`), those
        scored blind once and tuned on since (`seen`), and those never tuned on (`held-out`)."""
        parts: dict[str, list[IncidentScore]] = {"fit": [], "seen": [], "held-out": []}
        for r in self.results:
            parts[split_of(r.replay.id)].append(r.score)
        return {name: summarise(scores, 0) for name, scores in parts.items() if scores}

    def judged(self) -> Summary:
        """The summary over the incidents whose true cause the window held figures for: what a
        view without a source can be asked to name (the rest is ranked, marked not judged)."""
        return self.subset(lambda r: r.truth[0] not in r.replay.not_judged)

    def to_json(self) -> dict[str, Any]:
        """The `idletune eval --json` document."""
        return {
            "proposer": self.proposer,
            "view": self.view,
            "summary": self.summary.model_dump(mode="json"),
            "judged": self.judged().model_dump(mode="json"),
            "by_split": {k: s.model_dump(mode="json") for k, s in self.by_split().items()},
            "confusion": self.confusion(),
            "by_tag": {k: s.model_dump(mode="json") for k, s in self.by_tag().items()},
            "baseline": {
                "cause": self.baseline.cause,
                "summary": self.baseline.summary.model_dump(mode="json"),
            },
            "errors": list(self.errors),
            "failures": list(self.failures),
            "incidents": [
                {
                    "id": r.replay.id,
                    "causes": r.replay.causes,
                    "actions": [
                        {"primitive": a.primitive, "target": a.target, "value": a.value}
                        for a in r.replay.actions
                    ],
                    "evidence": r.replay.evidence,
                    "answer": r.replay.answer,
                    "latency_ms": r.replay.latency_ms,
                    "answered_by": r.replay.answered_by,
                    "margin": r.replay.margin,
                    "truth": r.truth,
                    "score": r.score.model_dump(mode="json"),
                }
                for r in self.results
            ],
        }


def incident_dirs(path: Path) -> list[Path]:
    """`path` itself when it holds an incident, else its sub-folders in name order."""
    header = path / INCIDENT_FILE
    # Any incident.yaml makes `path` one incident, a FIFO or a link to a device included:
    # the loader refuses it with one line, where is_file() would quietly skip the folder.
    if header.is_symlink() or header.exists() or not path.is_dir():
        return [path]
    # Hidden and underscore folders are tool litter (.git, __pycache__), not incidents.
    return sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))


def load_all(paths: Sequence[Path]) -> tuple[list[Incident], list[str]]:
    """Every incident under `paths`; a defective one becomes one error line and is left out."""
    incidents: list[Incident] = []
    errors: list[str] = []
    seen: set[Path] = set()
    for root in paths:
        for folder in incident_dirs(root):
            key = folder.resolve()
            if key in seen:
                continue
            seen.add(key)
            try:
                incidents.append(load_incident(folder))
            except IncidentError as e:
                errors.append(str(e))
            except Exception as e:  # a bug in the loader: this incident is refused, the others still run
                errors.append(str(IncidentError(f"{folder}: the loader failed: {type(e).__name__}: {e}")))
    return incidents, errors


@lru_cache(maxsize=1)
def _proposal_validator() -> Draft202012Validator:
    from primitives.catalog import proposal_schema

    return Draft202012Validator(proposal_schema())


def schema_valid(proposal: Proposal) -> bool:
    """Whether the proposal, as it would cross the wire, validates against the catalogue's schema."""
    return bool(_proposal_validator().is_valid(proposal.model_dump(mode="json")))


def cited_metrics(answer: str, diagnosis: Diagnosis) -> list[str]:
    """Metric names of the diagnosis that the answer's text actually shows, in order of first use.

    Evidence also carries labels ("GPU utilization") and knob ids ("loader.workers"); only
    names of the metric vocabulary count as cited metrics."""
    names: list[str] = []
    for c in diagnosis.causes:
        names += [e.metric for e in c.evidence]
    for span in diagnosis.lost_work:
        names += span.signals
    found: dict[str, int] = {}
    for name in (n for n in dict.fromkeys(names) if is_known(n)):
        m = re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", answer)
        if m is not None:
            found[name] = m.start()
    return sorted(found, key=lambda n: found[n])


def replay(incident: Incident, proposer: Proposer) -> Replay:
    """One incident through the pipeline; the latency covers window to proposal, not file reading."""
    if isinstance(proposer, Retrieves):
        proposer.exclude_examples(excluded_for(incident.id))
    t0 = time.perf_counter()
    window = incident.window()
    report = incident.report(window)
    diagnosis = diagnose(window, report, incident.question)
    answer = answer_text(report, diagnosis, catalogue_remedies)
    proposal = proposer.propose(report, diagnosis)
    latency_ms = (time.perf_counter() - t0) * 1000.0
    return Replay(
        id=incident.id,
        causes=[c.category.value for c in diagnosis.causes],
        actions=list(proposal.actions),
        evidence=cited_metrics(answer, diagnosis),
        answer=answer,
        latency_ms=round(latency_ms, 3),
        schema_valid=schema_valid(proposal),
        tokens=proposer.last_tokens if isinstance(proposer, CountsTokens) else 0,
        noop_reason=proposal.noop_reason,
        not_judged=[c.category.value for c in diagnosis.causes if not c.judged],
        answered_by=proposer.answered_by if isinstance(proposer, Answers) else proposer.name,
        margin=proposer.margin if isinstance(proposer, Answers) else None,
    )


def score(incident: Incident, r: Replay) -> IncidentScore:
    return score_incident(
        r.id,
        incident.truth,
        r.causes,
        r.actions,
        r.evidence,
        schema_valid=r.schema_valid,
        latency_ms=r.latency_ms,
        tokens=r.tokens,
    )


def most_frequent_cause(incidents: Sequence[Incident]) -> Category:
    """The commonest first root cause; ties go to the taxonomy's order so the choice is stable."""
    if not incidents:
        return Category.NONE
    counts = Counter(inc.truth.root_causes[0] for inc in incidents)
    order = list(Category)
    return min(counts, key=lambda c: (-counts[c], order.index(c)))


def baseline(incidents: Sequence[Incident], invalid: int = 0) -> Baseline:
    cause = most_frequent_cause(incidents)
    scores = [
        score_incident(
            inc.id,
            inc.truth,
            [cause.value],
            [],
            [],
            # Its no-op proposal, with a reason, is valid by construction.
            schema_valid=True,
            latency_ms=0.0,
        )
        for inc in incidents
    ]
    return Baseline(cause=cause.value, summary=summarise(scores, invalid), scores=scores)


def evaluate(
    paths: Sequence[Path],
    make_proposer: Callable[[], Proposer],
    *,
    on_error: Callable[[str], None] | None = None,
    view: View = "all",
) -> EvalRun:
    """Load, replay and score every incident under `paths`, beside the constant baseline.

    `make_proposer` is called once per incident so that state a proposer keeps between calls
    (the rule proposer's hysteresis) never carries from one recorded host to the next; a
    proposer without such state may be returned again each time. `view` replays each incident
    as a host without one source would have recorded it (evals.sources); truths are unchanged."""
    loaded, errors = load_all(paths)
    incidents = [seen(inc, view) for inc in loaded]
    if on_error is not None:
        for e in errors:
            on_error(e)
    first = make_proposer()
    results: list[Result] = []
    failures: list[str] = []
    for k, inc in enumerate(incidents):
        truth = [c.value for c in inc.truth.root_causes]
        t0 = time.perf_counter()
        try:
            r = replay(inc, first if k == 0 else make_proposer())
        except Exception as e:  # a bug in a stage: this incident fails, the others are still scored
            line = f"{inc.id}: the pipeline failed: {type(e).__name__}: {e}".splitlines()[0]
            failures.append(line)
            if on_error is not None:
                on_error(line)
            results.append(
                _failed(inc, line, (time.perf_counter() - t0) * 1000.0).model_copy(
                    update={"tags": list(inc.tags)}
                )
            )
            continue
        results.append(Result(replay=r, truth=truth, score=score(inc, r), tags=list(inc.tags)))
    return EvalRun(
        proposer=first.name,
        summary=summarise([r.score for r in results], len(errors)),
        results=results,
        baseline=baseline(incidents, len(errors)),
        errors=errors,
        failures=failures,
        view=view,
    )


def _failed(inc: Incident, why: str, latency_ms: float) -> Result:
    """A valid incident the pipeline crashed on: counted, and wrong on every score, restraint included."""
    r = Replay(
        id=inc.id,
        causes=[],
        actions=[],
        evidence=[],
        answer=why,
        latency_ms=round(latency_ms, 3),
        schema_valid=False,
    )
    s = IncidentScore(
        id=inc.id,
        ac1=False,
        ac3=False,
        action_ok=False,
        forbidden=0,
        restraint=False if not inc.truth.acceptable_actions else None,
        schema_valid=False,
        evidence_recall=0.0 if inc.truth.evidence else None,
        latency_ms=r.latency_ms,
    )
    return Result(replay=r, truth=[c.value for c in inc.truth.root_causes], score=s)
