"""Does a diagnosis hold when the recording changes in ways that do not change what happened?

Another recorder of the same moment samples at another interval, rounds and jitters its figures
differently, and loses a sample now and then. None of that changes the cause, so none of it
should change the top cause. `python -m evals.perturb [DIR...]` replays every incident as recorded
and under each such change, and lists the incidents whose top cause moved.

Changes (each seeded, so a run is repeatable):
- `noise5`, `noise10`: every figure times (1 ± 5 %, 10 %), shares kept within 0..1;
- `interval2`: pairs of 1 s samples averaged into one 2 s sample (latency percentiles: the larger);
- `gaps10`: one sample in ten dropped, the first and last kept;
- `log2lat`: every latency percentile read off a log2 histogram, as bpftrace's `hist()` buckets
  them: the upper bound of its power-of-two bucket (so up to twice the figure recorded).
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agent.diagnosis.engine import diagnose
from core.incident import Incident
from core.sample import Sample
from evals.harness import load_all

Change = Callable[[Incident], Incident | None]


def _with_samples(inc: Incident, samples: list[Sample], **update: object) -> Incident:
    out = inc.model_copy(update=update)
    out.samples = samples
    return out


def _each_figure(inc: Incident, one: Callable[[str, float], float]) -> Incident:
    """The incident with every figure of every sample replaced by `one(name, figure)`, in order."""
    return _with_samples(inc, [Sample(t=s.t, m={k: one(k, x) for k, x in s.m.items()}) for s in inc.samples])


def noise(share: float, seed: int) -> Change:
    def change(inc: Incident) -> Incident:
        rng = random.Random(f"{seed}:{inc.id}")

        def one(name: str, x: float) -> float:
            y = x * (1.0 + rng.uniform(-share, share))
            return min(1.0, max(0.0, y)) if name.endswith("_frac") else y

        return _each_figure(inc, one)

    return change


def interval2(inc: Incident) -> Incident | None:
    """Pairs of 1 s samples as one 2 s sample; None for an incident not sampled every second."""
    if inc.interval_s != 1.0:
        return None
    out: list[Sample] = []
    for a, b in zip(inc.samples[0::2], inc.samples[1::2], strict=False):
        m: dict[str, float] = {}
        for k in a.m.keys() | b.m.keys():
            xs = [s.m[k] for s in (a, b) if k in s.m]
            m[k] = max(xs) if k.endswith(("_p99_us", "_p50_us")) else sum(xs) / len(xs)
        out.append(Sample(t=b.t, m=m))
    return _with_samples(inc, out, interval_s=2.0)


def gaps(share: float, seed: int) -> Change:
    def change(inc: Incident) -> Incident:
        rng = random.Random(f"{seed}:{inc.id}")
        last = len(inc.samples) - 1
        kept = [s for i, s in enumerate(inc.samples) if i in (0, last) or rng.random() >= share]
        return _with_samples(inc, kept)

    return change


def log2_latency(inc: Incident) -> Incident:
    """Latency percentiles (`..._p50_us`, `..._p99_us`) at the upper bound of their log2 bucket."""

    def one(name: str, x: float) -> float:
        if not name.endswith(("_p50_us", "_p99_us")) or x <= 0.0:
            return x
        return float(2 ** (math.floor(math.log2(x)) + 1))

    return _each_figure(inc, one)


CHANGES: dict[str, Change] = {
    "noise5": noise(0.05, 1),
    "noise10": noise(0.10, 2),
    "interval2": interval2,
    "gaps10": gaps(0.10, 3),
    "log2lat": log2_latency,
}


def top_cause(inc: Incident) -> str:
    window = inc.window()
    d = diagnose(window, inc.report(window), inc.question)
    return d.top.category.value


@dataclass(frozen=True)
class Flip:
    incident: str
    truth: str
    recorded: str
    changed: str


@dataclass(frozen=True)
class Outcome:
    change: str
    incidents: int  # those the change applies to
    right: int  # top cause equal to the truth's first
    flips: list[Flip]


def run(incidents: list[Incident], changes: dict[str, Change] = CHANGES) -> list[Outcome]:
    recorded = {inc.id: top_cause(inc) for inc in incidents}
    out: list[Outcome] = []
    for name, change in changes.items():
        n = right = 0
        flips: list[Flip] = []
        for inc in incidents:
            changed = change(inc)
            if changed is None:
                continue
            n += 1
            truth = inc.truth.root_causes[0].value
            top = top_cause(changed)
            right += top == truth
            if top != recorded[inc.id]:
                flips.append(Flip(inc.id, truth, recorded[inc.id], top))
        out.append(Outcome(name, n, right, flips))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m evals.perturb", description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="*", type=Path, default=[Path(__file__).parent / "incidents"])
    ap.add_argument("--only", default="real-", help="incident ids starting with this (default: real-)")
    a = ap.parse_args(argv)
    incidents, errors = load_all(a.dirs)
    for e in errors:
        print(e, file=sys.stderr)
    chosen = [i for i in incidents if i.id.startswith(a.only)]
    if not chosen:
        print(f"no incident id starts with {a.only!r}", file=sys.stderr)
        return 2
    right = sum(top_cause(i) == i.truth.root_causes[0].value for i in chosen)
    print(f"as recorded: {len(chosen)} incidents, AC@1 {right / len(chosen):.3f}")
    for o in run(chosen):
        ac1 = o.right / max(o.incidents, 1)
        print(f"{o.change}: {o.incidents} incidents, AC@1 {ac1:.3f}, {len(o.flips)} top causes moved")
        for f in o.flips:
            print(f"  {f.incident}: {f.recorded} -> {f.changed} (truth {f.truth})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
