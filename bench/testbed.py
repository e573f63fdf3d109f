"""Each testbed scenario's KPI in its fault phase and in its fix phase, measured live.

    .venv/bin/python bench/testbed.py [--runs 3] [--seconds 5] [--scenario NAME ...]

Every run sets the scenario up (loop device, cgroups, knobs, real PyTorch CPU
trainer), measures samples/s and data-wait in the fault phase, then in the fix
phase, and undoes everything. The median movement over the runs is printed with
each run's figures. Needs root and the testbed extra; prints figures, never fails
on them (the root tests check the 20 % movement).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: make `evals` importable
    sys.path.insert(0, str(ROOT))

from bench.figures import write_figures  # noqa: E402
from evals.testbed.runner import KPI, TestbedError, measure, movement  # noqa: E402
from evals.testbed.scenarios import SCENARIOS  # noqa: E402


def run_scenario(name: str, runs: int, seconds: float) -> dict[str, Any]:
    pairs: list[tuple[KPI, KPI]] = []
    for r in range(runs):
        fault, fix = measure(name, seconds=seconds)
        pairs.append((fault, fix))
        print(
            f"  run {r + 1}: fault {fault.samples_per_s:7.1f} samples/s"
            f" (wait {100 * fault.data_wait_frac:4.1f}%)"
            f"  fix {fix.samples_per_s:7.1f} samples/s (wait {100 * fix.data_wait_frac:4.1f}%)"
            f"  moved {100 * movement(fault, fix):+.0f}%",
            flush=True,
        )
    moved = [movement(a, b) for a, b in pairs]
    return {
        "name": name,
        "cause": SCENARIOS[name].cause,
        "fix": SCENARIOS[name].fix_note,
        "runs": runs,
        "fault_samples_per_s": round(statistics.median(a.samples_per_s for a, _ in pairs), 1),
        "fix_samples_per_s": round(statistics.median(b.samples_per_s for _, b in pairs), 1),
        "fault_data_wait": round(statistics.median(a.data_wait_frac for a, _ in pairs), 3),
        "fix_data_wait": round(statistics.median(b.data_wait_frac for _, b in pairs), 3),
        "moved_median_pct": round(100 * statistics.median(moved), 1),
        "moved_min_pct": round(100 * min(moved), 1),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=5.0, help="measuring window per phase (at least)")
    ap.add_argument("--scenario", action="append", choices=sorted(SCENARIOS), help="default: all")
    ap.add_argument("--json", type=Path, help="also write the figures to this file as JSON")
    a = ap.parse_args()
    names = a.scenario or sorted(SCENARIOS)
    results = []
    for name in names:
        print(f"{name}: {SCENARIOS[name].title}", flush=True)
        try:
            results.append(run_scenario(name, a.runs, a.seconds))
        except TestbedError as e:
            print(f"bench/testbed.py: {name}: {e}", file=sys.stderr)
            return 1
    print("\nscenario      fault samples/s  fix samples/s  moved (median, min)")
    for r in results:
        print(
            f"{r['name']:12s} {r['fault_samples_per_s']:15.1f} {r['fix_samples_per_s']:14.1f}"
            f"  {r['moved_median_pct']:+.0f}% ({r['moved_min_pct']:+.0f}%)"
        )
    write_figures(a.json, "testbed", {"seconds": a.seconds, "scenarios": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
