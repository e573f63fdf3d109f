"""Worked examples for the ranking LLM proposer: recorded incidents, their case and their right answer.

Each example is one bundled incident as the proposer saw it (its case text: top causes with
evidence, the current values of the knobs it could change) and the answer its truth accepts,
in the words of a ranked option. The file is built from the bundled suite by
`evals/build_examples.py`; the product reads it and never the truths themselves.

Retrieval is deterministic: nearest by the top cause, the causes, the evidence metric
names (device, job and GPU left out) and the knobs in play, ties broken by id. The caller
names what must not be retrieved (the incident being scored, its condition): an example
can never be its own answer.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from agent.llm.prompts import PROMPTS_DIR
from core.diagnosis import Diagnosis
from core.knob import KnobValue
from core.vocabulary import parse

EXAMPLES_FILE = PROMPTS_DIR / "examples.jsonl"
K = 3
# How much less similar than the k-th nearest an example may be and still count among a decision's
# nearest cases when they are asked whether they agree on acting (`neighbourhood`): two recordings
# of one condition differ by up to 0.2 in three pairs of four (0.003 in the median pair). Fitted by
# `python -m evals.near --before 114` on the LLM run of 6fceb08 (1907 incidents: the suite, the fit
# conditions and rounds 1-113; the fit split alone holds none of the decisions it moves): from 0 to
# 0.1 the model's actions went from 1585 to 1590 right and its restraint from 0.764 to 0.760, as it
# handed 42 decisions back to the rules (nine it got wrong, four right that the rules did not);
# 0.1 and 0.15 do best (0.4 as many actions with less restraint; wider, fewer). Round 114, not used,
# moved by none.
NEAR = 0.1


class Key(BaseModel):
    """What retrieval compares: the decision's causes, evidence metric patterns and knobs."""

    model_config = ConfigDict(extra="forbid")

    causes: list[str]  # top causes, most likely first
    metrics: list[str]  # evidence metric templates (io.<dev>.lat_p99_us), no names of the host
    knobs: list[str]  # primitive ids of the options
    confidence: float = 0.0  # of the top cause
    now: dict[str, float] = {}  # a numeric current value per primitive id of the options


class Example(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    key: Key
    case: str  # the case text, as the proposer writes it for a decision
    answer: str  # the option text of the accepted answer


def metric_pattern(name: str) -> str:
    """A metric name without the host's own names: `io.vdb.lat_p99_us` -> `io.<dev>.lat_p99_us`."""
    m = parse(name)
    return m.definition.template if m is not None else name


def key_of(diagnosis: Diagnosis, causes: Sequence[str], knobs: Mapping[str, KnobValue]) -> Key:
    """`knobs`: primitive id to its current value, for the options of the decision."""
    wanted = set(causes)
    metrics: list[str] = []
    conf = 0.0
    for c in diagnosis.causes:
        if c.category.value in wanted:
            metrics += [metric_pattern(e.metric) for e in c.evidence]
            conf = conf or c.confidence
    now = {k: float(v) for k, v in knobs.items() if isinstance(v, int | float) and not isinstance(v, bool)}
    return Key(
        causes=list(causes), metrics=sorted(set(metrics)), knobs=sorted(knobs), confidence=conf, now=now
    )


def _jaccard(a: Sequence[str], b: Sequence[str]) -> float:
    sa, sb = set(a), set(b)
    return len(sa & sb) / len(sa | sb) if sa | sb else 1.0


def _value_distance(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    """0 when the shared knobs stand at the same values, toward 1 as they differ by factors of 16."""
    shared = sorted(set(a) & set(b))
    if not shared:
        return 0.0
    d = [min(1.0, abs(math.log2((abs(a[k]) + 1) / (abs(b[k]) + 1))) / 4) for k in shared]
    return sum(d) / len(d)


def similarity(a: Key, b: Key) -> float:
    """Same top cause first, then overlap of causes, knobs and evidence, then near confidence and
    knob values (a readahead of 64 KiB is nearer 128 than 4096)."""
    same_top = 1.0 if a.causes[:1] == b.causes[:1] else 0.0
    overlap = _jaccard(a.causes, b.causes) + _jaccard(a.knobs, b.knobs) + _jaccard(a.metrics, b.metrics)
    return 3.0 * same_top + overlap - abs(a.confidence - b.confidence) - _value_distance(a.now, b.now)


def nearest(
    examples: Sequence[Example], key: Key, k: int = K, exclude: Callable[[str], bool] | None = None
) -> list[Example]:
    """The k most similar examples that `exclude` allows, one of each distinct case and answer (a
    repeated recording teaches nothing new), in id order (so that decisions retrieving the same
    examples share a prompt prefix in the model's cache)."""
    pool = [e for e in examples if exclude is None or not exclude(e.id)]
    chosen: list[Example] = []
    seen: set[tuple[str, str]] = set()
    for e in sorted(pool, key=lambda e: (-similarity(key, e.key), e.id)):
        if (e.case, e.answer) not in seen:
            seen.add((e.case, e.answer))
            chosen.append(e)
        if len(chosen) == k:
            break
    return sorted(chosen, key=lambda e: e.id)


def neighbourhood(
    examples: Sequence[Example],
    key: Key,
    k: int = K,
    exclude: Callable[[str], bool] | None = None,
    near: float = NEAR,
) -> list[Example]:
    """Every example `exclude` allows that is at least as similar as the k-th nearest, less `near`:
    `nearest` breaks ties by id, so which of these it shows is arbitrary, and one a little less
    similar differs from the shown ones by no more than two recordings of one condition often do."""
    shots = nearest(examples, key, k, exclude)
    if not shots:
        return []
    floor = min(similarity(key, e.key) for e in shots) - near - 1e-9
    return [e for e in examples if (exclude is None or not exclude(e.id)) and similarity(key, e.key) >= floor]


@lru_cache(maxsize=4)
def _load(path: Path, _mtime: float) -> tuple[Example, ...]:
    out: list[Example] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            out.append(Example.model_validate(json.loads(line)))
    return tuple(out)


def load_examples(path: Path = EXAMPLES_FILE) -> tuple[list[Example], str]:
    """The worked examples, and one line saying why there are none (empty when they loaded)."""
    try:
        return list(_load(path, path.stat().st_mtime)), ""
    except OSError as e:
        return [], f"no worked examples: {path}: {e.strerror}"
    except (ValueError, ValidationError) as e:
        return [], f"no worked examples: {path}: {str(e).splitlines()[0]}"
