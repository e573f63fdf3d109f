"""Fit the ranking LLM's abstention threshold on the fit split, from two eval runs on the same incidents.

    .venv/bin/python -m evals.margin LLM.json RULES.json

LLM.json is `idletune eval --proposer llm --json` run with the threshold at 0 (the model answers
every decision it ranks, each with its margin); RULES.json the rules on the same incidents.
For a threshold t a decision keeps the model's answer when its margin is at least t, else
takes the rules' answer. The threshold is chosen on the fit split alone (evals/split.py):
the most incidents whose actions match, then the most restraint; among equals, the middle
of the widest run of equal thresholds (the least sensitive to where a margin falls). The
seen and held-out splits are only reported at that threshold, never used to choose it.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals.split import split_of


@dataclass(frozen=True)
class Row:
    id: str
    split: str
    margin: float | None  # None: the model did not rank this decision (the rules answered anyway)
    llm_ok: bool
    rules_ok: bool
    restraint_case: bool  # no action is acceptable
    llm_restrained: bool
    rules_restrained: bool


def rows(llm: dict[str, Any], rules: dict[str, Any]) -> list[Row]:
    by_id = {i["id"]: i for i in rules["incidents"]}
    out = []
    for i in llm["incidents"]:
        r = by_id[i["id"]]
        ranked = i.get("answered_by") == "llm" and i.get("margin") is not None
        out.append(
            Row(
                id=i["id"],
                split=split_of(i["id"]),
                margin=i["margin"] if ranked else None,
                llm_ok=bool(i["score"]["action_ok"]),
                rules_ok=bool(r["score"]["action_ok"]),
                restraint_case=i["score"]["restraint"] is not None,
                llm_restrained=bool(i["score"]["restraint"]),
                rules_restrained=bool(r["score"]["restraint"]),
            )
        )
    return out


@dataclass(frozen=True)
class Figures:
    incidents: int
    actions: float
    restraint: float | None
    answered_by_llm: int


def figures(rs: Sequence[Row], mine: set[str]) -> Figures:
    """The run's figures when the model answers the decisions in `mine` and the rules the rest."""
    ok = restrained = cases = 0
    for r in rs:
        llm = r.id in mine
        ok += r.llm_ok if llm else r.rules_ok
        if r.restraint_case:
            cases += 1
            restrained += r.llm_restrained if llm else r.rules_restrained
    n = len(rs)
    return Figures(
        n, ok / n if n else 0.0, restrained / cases if cases else None, sum(r.id in mine for r in rs)
    )


def at(rs: list[Row], threshold: float) -> Figures:
    return figures(rs, {r.id for r in rs if r.margin is not None and r.margin >= threshold})


def fit(rs: list[Row]) -> float:
    """The threshold that does best on `rs` (meant: the fit split)."""
    margins = sorted({r.margin for r in rs if r.margin is not None})
    # Candidate thresholds: 0 and just above each observed margin.
    cands = [0.0] + [m + 1e-9 for m in margins]
    scored = [(at(rs, t).actions, at(rs, t).restraint or 0.0) for t in cands]
    best = max(scored)
    # The widest run of consecutive candidates that all score best; its middle, as a margin value.
    runs: list[tuple[int, int]] = []
    start = None
    for k, s in enumerate([*scored, (-1.0, -1.0)]):
        if s == best and start is None:
            start = k
        elif s != best and start is not None:
            runs.append((start, k - 1))
            start = None
    lo, hi = max(runs, key=lambda ab: (ab[1] - ab[0], -ab[0]))
    if hi + 1 < len(cands):
        return round((cands[lo] + (margins[hi] if hi < len(margins) else cands[hi])) / 2, 4)
    return round(cands[lo], 4)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("llm", type=Path)
    ap.add_argument("rules", type=Path)
    args = ap.parse_args()
    rs = rows(json.loads(args.llm.read_text()), json.loads(args.rules.read_text()))
    t = fit([r for r in rs if r.split == "fit"])
    print(f"threshold {t:g}, fitted on the fit split only")
    for name in ("fit", "seen", "held-out", "all"):
        part = rs if name == "all" else [r for r in rs if r.split == name]
        f, zero = at(part, t), at(part, 0.0)
        rules_only = at(part, float("inf"))
        restraint = f.restraint if f.restraint is None else round(f.restraint, 3)
        print(
            f"{name}: {f.incidents} incidents; at the threshold actions {f.actions:.3f} restraint "
            f"{restraint} (model answered {f.answered_by_llm}); "
            f"model always: actions {zero.actions:.3f} restraint {zero.restraint}; rules: actions "
            f"{rules_only.actions:.3f} restraint {rules_only.restraint}"
        )


if __name__ == "__main__":
    main()
