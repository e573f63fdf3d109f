"""Eval throughput: incidents replayed per second with the rule proposer (target: 20/s or more).

    .venv/bin/python bench/eval.py [--runs 5] [--json FILE] [DIR ...]

Replays the bundled suite (or the given folders) several times and prints the median rate,
for replay alone (window, report, diagnosis, answer, proposal, scoring) and with reading
the files included. Never fails on the figures.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.proposers.rules import RuleProposer, load_policies
from bench.figures import write_figures
from core.incident import Incident
from evals.harness import load_all, replay, score

SUITE = Path(__file__).resolve().parent.parent / "evals" / "incidents"


def measure(dirs: list[Path], runs: int) -> dict[str, Any]:
    """Median incidents/s over `runs` passes, replay only and with loading."""
    policies = load_policies([], with_default=True)
    replay_rates: list[float] = []
    total_rates: list[float] = []
    incidents: list[Incident] = []
    for _ in range(runs):
        t0 = time.perf_counter()
        incidents, _errors = load_all(dirs)
        t1 = time.perf_counter()
        for inc in incidents:
            score(inc, replay(inc, RuleProposer(policies)))
        t2 = time.perf_counter()
        n = len(incidents)
        replay_rates.append(n / (t2 - t1) if t2 > t1 else 0.0)
        total_rates.append(n / (t2 - t0) if t2 > t0 else 0.0)
    return {
        "incidents": len(incidents),
        "runs": runs,
        "incidents_per_s": round(statistics.median(replay_rates), 1),
        "incidents_per_s_with_loading": round(statistics.median(total_rates), 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("dirs", nargs="*", type=Path, default=[SUITE])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", type=Path, help="also write the figures to this file as JSON")
    args = ap.parse_args()
    figures = measure(args.dirs, max(1, args.runs))
    print(
        f"eval, rules proposer: {figures['incidents_per_s']:.1f} incidents/s replayed "
        f"({figures['incidents_per_s_with_loading']:.1f}/s with reading the files), "
        f"median of {figures['runs']} runs over {figures['incidents']} incidents (target: 20/s or more)"
    )
    write_figures(args.json, "eval", figures)


if __name__ == "__main__":
    main()
