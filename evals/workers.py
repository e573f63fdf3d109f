"""Samples/s of a matrix condition's job at several loader-worker counts, on one setup, alternating.

    python -m evals.workers CONDITION COUNTS [--rounds 2] [--seconds 10]

COUNTS is a comma-separated list (`3,2`). The condition's setup (device limits, layout,
preprocessing, noise) is built once; each round runs the job in the condition's fault phase at
every count in turn, so drift on the host falls on all counts alike. This measures what a matrix
label does not (its counterfactual tests the scenario's own fix): whether fewer workers than the
fault's help, as a loader-oversubscription verdict claims. Needs root and PyTorch, and a quiet
host. Prints one line per window and a last line per count: the samples/s of each round and the
change of their mean against the first count's.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys

from evals.matrix import CONDITIONS, Condition
from evals.testbed import runner as tb


def parse_counts(text: str) -> list[int]:
    """`3,2` -> [3, 2]; a clear error for anything else."""
    try:
        counts = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"worker counts must be integers separated by commas, not {text!r}") from None
    if not counts or any(n < 0 for n in counts) or len(set(counts)) != len(counts):
        raise ValueError(f"worker counts must be distinct and 0 or more, not {text!r}")
    return counts


def condition(name: str) -> Condition:
    found = [c for c in CONDITIONS if c.name == name]
    if not found:
        raise ValueError(f"no matrix condition {name!r} (python -m evals.matrix list)")
    return found[0]


def measure(cond: Condition, counts: list[int], rounds: int, seconds: float) -> dict[int, list[float]]:
    sc = cond.built()
    out: dict[int, list[float]] = {n: [] for n in counts}
    tb.stop()  # a run that died left its setup: undo it first
    with tb.session(sc) as bed:
        bed.setup(throttle=True)
        bed.start_noise()
        for r in range(rounds):
            for n in counts:
                phase = dataclasses.replace(sc.fault, workers=n)
                bed.apply(phase)
                bed.start_trainer(phase)
                k = bed.kpi(seconds)
                bed.stop_phase()
                out[n].append(k.samples_per_s)
                print(
                    f"{cond.name} round {r + 1}: {n} workers {k.samples_per_s:.1f} samples/s "
                    f"(data wait {100 * k.data_wait_frac:.0f} %)",
                    flush=True,
                )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m evals.workers", description=__doc__.split("\n\n")[0])
    ap.add_argument("condition")
    ap.add_argument("counts")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=10.0)
    a = ap.parse_args(argv)
    try:
        cond = condition(a.condition)
        counts = parse_counts(a.counts)
        if a.rounds < 1 or a.seconds <= 0:
            raise ValueError("--rounds must be 1 or more and --seconds above 0")
    except ValueError as e:
        print(f"evals.workers: {e}", file=sys.stderr)
        return 2
    try:
        got = measure(cond, counts, a.rounds, a.seconds)
    except (tb.TestbedError, OSError) as e:
        print(f"evals.workers: {e}", file=sys.stderr)
        return 1
    first = statistics.mean(got[counts[0]])
    for n in counts:
        each = ", ".join(f"{x:.1f}" for x in got[n])
        change = 100 * (statistics.mean(got[n]) / first - 1) if first > 0 else float("nan")
        print(f"{cond.name}: {n} workers {each} samples/s ({change:+.0f} % against {counts[0]})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
