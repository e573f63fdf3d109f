"""Fit how far a disagreeing worked example may lie and still leave a decision to the rules.

    .venv/bin/python -m evals.near LLM.json RULES.json

The ranking proposer asks the model only where its nearest worked examples agree on whether to
act (`agent.proposers.llm.contested`); "nearest" is every example at least as similar as the k-th
shown, less a tolerance (`agent.proposers.examples.NEAR`). LLM.json is `idletune eval --proposer
llm --json` run at a tolerance of 0, RULES.json the rules on the same incidents. A wider tolerance
only moves decisions from the model to the rules, never the other way, and a decision the model
did not answer keeps the rules' answer, so each tolerance's figures follow from the two runs
exactly, without the model. The fit split (evals/split.py) holds too few decisions where the two differ to
choose from, so the tolerance is chosen, as the engine's thresholds are, on every incident scored
before a round left out (`--before N`: the generator's suite, the fit conditions and rounds 1 to
N-1); the rounds from N on are only reported at it, and judge it. The choice: the most incidents
whose actions match, then the most restraint, then the smallest tolerance.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from agent.proposers.examples import Example, Key, load_examples, neighbourhood
from agent.proposers.llm import contested
from agent.proposers.rules import RuleProposer, load_policies
from evals.build_examples import SUITE, decision
from evals.harness import excluded_for, load_all
from evals.margin import Figures, Row, figures, rows
from evals.split import round_of

# Tolerances tried: similarity is 3 for the same top cause plus three overlaps of 0..1, less the
# gaps in confidence and knob values, so 1 spans from a repeat to another condition altogether.
GRID = tuple(round(0.05 * i, 2) for i in range(21))


def keys(ids: Sequence[str], suite: Path = SUITE) -> dict[str, Key]:
    """Each incident's decision key, as the ranking proposer makes it in the harness: with rules of
    its own, so that no hysteresis crosses from one recorded host to the next."""
    wanted = set(ids)
    incidents, _errors = load_all([suite])
    policies = load_policies([], with_default=True)
    return {inc.id: decision(inc, RuleProposer(policies)).key for inc in incidents if inc.id in wanted}


def kept(rs: Sequence[Row], examples: Sequence[Example], near: float, key: dict[str, Key]) -> set[str]:
    """The ids of the decisions the model answered in the run that it still answers at `near`."""
    out = set()
    for r in rs:
        if r.margin is None:
            continue
        k = key[r.id]
        if not contested(neighbourhood(examples, k, exclude=excluded_for(r.id), near=near), k.causes[:1]):
            out.add(r.id)
    return out


def fit(table: Mapping[float, Figures]) -> float:
    """The tolerance whose figures (`table`: tolerance -> figures on the rows fitted on) do best;
    the smallest among equals."""
    return max(table, key=lambda t: (table[t].actions, table[t].restraint or 0.0, -t))


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("llm", type=Path)
    ap.add_argument("rules", type=Path)
    ap.add_argument("--before", type=int, required=True, help="fit on rounds before this one")
    args = ap.parse_args()
    examples, why = load_examples()
    if not examples:
        raise SystemExit(f"evals.near: {why}")
    rs = rows(json.loads(args.llm.read_text()), json.loads(args.rules.read_text()))
    key = keys([r.id for r in rs])
    missing = [r.id for r in rs if r.id not in key]
    if missing:
        raise SystemExit(f"evals.near: {len(missing)} incidents of the run not in {SUITE}, e.g. {missing[0]}")
    earlier = [r for r in rs if (round_of(r.id) or 0) < args.before]
    later = [r for r in rs if (round_of(r.id) or 0) >= args.before]
    mine = {t: kept(rs, examples, t, key) for t in GRID}  # once per tolerance (GRID starts at 0)
    table = {t: figures(earlier, mine[t]) for t in GRID}
    for t, f in table.items():
        print(f"before round {args.before}, tolerance {t:g}: actions {f.actions:.4f} restraint {f.restraint}")
    t = fit(table)
    print(
        f"tolerance {t:g}, fitted on the rounds before {args.before} (the suite and fit conditions included)"
    )
    for name, part in (("before", earlier), ("from", later), ("all", rs)):
        f, zero = figures(part, mine[t]), figures(part, mine[0.0])
        print(
            f"{name} round {args.before}: {f.incidents} incidents; at {t:g} actions {f.actions:.4f} "
            f"({round(f.actions * f.incidents)}) restraint {f.restraint} (model answered "
            f"{f.answered_by_llm}); at 0 actions {zero.actions:.4f} ({round(zero.actions * zero.incidents)}) "
            f"restraint {zero.restraint} (model answered {zero.answered_by_llm})"
        )


if __name__ == "__main__":
    main()
