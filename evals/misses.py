"""What the held-out rounds missed, by kind: each wrong decision on a matrix recording put under the
first kind whose test it meets, so a stretch of rounds reads as a few counted kinds rather than a
list of every round's misses (each round's own are in evals/ROUNDS.md).

A decision is missed when its top cause is not the truth, or its actions are not acceptable (an
action where none helps counts against restraint too). The kinds test what the matrix set up (the
condition: its scenario and device cap) against what the engine answered; none of them reads a
figure of the recording, so they describe a miss without judging it again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evals.harness import Result
from evals.matrix import Condition, by_name, cap_on
from evals.scoring import IncidentScore
from evals.split import condition_of


@dataclass(frozen=True)
class Decision:
    """One scored recording: what the engine answered beside the truth and the score."""

    id: str
    truth: str
    causes: tuple[str, ...]
    acted: bool
    score: IncidentScore

    @property
    def missed(self) -> bool:
        return not self.score.ac1 or not self.score.action_ok

    @classmethod
    def from_entry(cls, entry: dict[str, Any]) -> Decision:
        """From one of `idletune eval --json`'s incidents (a round's kept file)."""
        return cls(
            id=entry["id"],
            truth=entry["truth"][0] if entry.get("truth") else "none",
            causes=tuple(entry.get("causes", [])),
            acted=bool(entry.get("actions")),
            score=IncidentScore.model_validate(entry["score"]),
        )

    @classmethod
    def from_result(cls, r: Result) -> Decision:
        """From a result of the current run."""
        return cls(
            id=r.replay.id,
            truth=r.truth[0] if r.truth else "none",
            causes=tuple(r.replay.causes),
            acted=bool(r.replay.actions),
            score=r.score,
        )


@dataclass(frozen=True)
class Kind:
    name: str
    what: str  # the README's words for it
    test: Callable[[Condition, Decision], bool]


def _top(d: Decision) -> str:
    return d.causes[0] if d.causes else ""


def _byte_capped(c: Condition) -> bool:
    """A reader on a device capped on bandwidth."""
    return cap_on(c) == "bytes"


def _uncapped(c: Condition) -> bool:
    return not c.built().read_iops and not c.built().read_bps


# In order: a miss goes under the first kind whose test it meets.
KINDS: tuple[Kind, ...] = (
    Kind(
        "byte cap",
        "a device capped on bandwidth read as capped on requests (the window first, raised)",
        lambda c, d: _byte_capped(c),
    ),
    Kind(
        "checkpoint under 20 %",
        "a checkpoint whose dirty limits gained under 20 % (labelled `none`) named and acted on",
        lambda c, d: c.scenario == "writeback" and d.truth == "none" and d.acted,
    ),
    Kind(
        "contention under 20 %",
        "contention whose six workers gained under 20 % (labelled `none`) still named",
        lambda c, d: c.scenario == "contention" and d.truth == "none",
    ),
    Kind(
        "named after a hog",
        "named `cpu_contention` after a hog beside the job, which was not what the fix measured",
        lambda c, d: _top(d) == "cpu_contention" and d.truth != "cpu_contention",
    ),
    Kind(
        "healthy reader as a request cap",
        "a reader meant as healthy on an uncapped device read as a request cap",
        lambda c, d: _uncapped(c) and d.truth == "none" and _top(d) == "readahead_mismatch",
    ),
    Kind(
        "one fix measured",
        "a reader named starved and given a worker, a fix the matrix did not measure (only the window)",
        lambda c, d: c.scenario == "readahead" and _top(d) == "dataloader_starvation",
    ),
    Kind(
        "gain named none",
        "a cause whose fix gained 20 % or more named `none`",
        lambda c, d: d.truth != "none" and _top(d) == "none",
    ),
    Kind(
        "under the confidence to act",
        "named right, under the confidence its policy acts from, and left alone",
        lambda c, d: d.score.ac1 and not d.acted and d.truth != "none",
    ),
    Kind("other", "anything else", lambda c, d: True),
)


def kind_of(d: Decision) -> str | None:
    """The kind of a missed decision on a matrix recording; None where it was not missed or is no
    matrix recording."""
    cond = by_name().get(condition_of(d.id) or "")
    if cond is None or not d.missed:
        return None
    return next(k.name for k in KINDS if k.test(cond, d))


def on_byte_cap(incident_id: str) -> bool:
    """A matrix recording of a device capped on bandwidth (the kind every round misses)."""
    cond = by_name().get(condition_of(incident_id) or "")
    return cond is not None and _byte_capped(cond)


@dataclass(frozen=True)
class KindCount:
    kind: Kind
    recordings: int
    named_wrong: int  # top cause not the truth
    actions_wrong: int
    unrestrained: int  # acted where nothing helps
    rounds: tuple[int, ...]


def count(by_round: Mapping[int, Sequence[Decision]]) -> list[KindCount]:
    """Per kind (in KINDS' order, those with a miss), the missed decisions of the rounds given."""
    found: dict[str, list[tuple[int, Decision]]] = {}
    for n, decisions in sorted(by_round.items()):
        for d in decisions:
            k = kind_of(d)
            if k is not None:
                found.setdefault(k, []).append((n, d))
    return [
        KindCount(
            kind=k,
            recordings=len(found[k.name]),
            named_wrong=sum(not d.score.ac1 for _, d in found[k.name]),
            actions_wrong=sum(not d.score.action_ok for _, d in found[k.name]),
            unrestrained=sum(d.score.restraint is False for _, d in found[k.name]),
            rounds=tuple(sorted({n for n, _ in found[k.name]})),
        )
        for k in KINDS
        if k.name in found
    ]


def spans(numbers: Iterable[int]) -> str:
    """Round numbers as ranges: 59-61, 64, 70-72."""
    runs: list[list[int]] = []
    for n in sorted(set(numbers)):
        if runs and runs[-1][1] == n - 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)
