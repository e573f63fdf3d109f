"""Time of one diagnosis over a 10-minute window of 1 s samples with about 200 metrics.

    .venv/bin/python bench/diagnose.py [--runs 9]

The window comes from the synthetic generator: 8 GPUs, 12 block devices, 4 jobs, a
writeback burst halfway. Prints the median of several runs (report building shown
apart, since a live agent builds the report anyway); never fails on the figures.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.diagnosis.engine import diagnose
from bench.figures import write_figures
from core.diagnosis import Category
from evals.synth import DEV_NAMES, SynthJob, incident, scenario


def _median_ms(fn: Callable[[], object], runs: int) -> tuple[float, float]:
    """(wall, CPU) medians in ms; on a shared machine the CPU time is the steadier figure."""
    wall, cpu = [], []
    for _ in range(runs):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append((time.perf_counter() - t0) * 1000.0)
        cpu.append((time.process_time() - c0) * 1000.0)
    return statistics.median(wall), statistics.median(cpu)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--json", type=Path, help="also write the figures to this file as JSON")
    args = ap.parse_args()
    jobs = [SynthJob(f"job{k}", [2 * k, 2 * k + 1], 16, 1000 + k, 300.0, 64) for k in range(4)]
    sc = scenario(
        Category.WRITEBACK_BURST,
        1,
        cpus=128,
        gpus=8,
        devices=list(DEV_NAMES[:12]),
        jobs=jobs,
        samples=600,
        interval_s=1.0,
        onset_t=300.0,
        end_t=330.0,
        distractors=[],
    )
    inc = incident(sc)
    window = inc.window()
    metrics = len(window.names())
    report_ms = _median_ms(lambda: inc.report(window), args.runs)
    report = inc.report(window)
    diag_ms = _median_ms(lambda: diagnose(window, report), args.runs)
    top = diagnose(window, report).top
    print(f"window: {len(window)} samples x {metrics} metrics")
    print(
        f"diagnose: {diag_ms[0]:.1f} ms wall, {diag_ms[1]:.1f} ms CPU (median of {args.runs}); "
        f"top cause {top.category.value}"
    )
    print(f"build_report (apart): {report_ms[0]:.1f} ms wall, {report_ms[1]:.1f} ms CPU")
    write_figures(
        args.json,
        "diagnose",
        {
            "samples": len(window),
            "metrics": metrics,
            "runs": args.runs,
            "diagnose_ms_wall": round(diag_ms[0], 2),
            "diagnose_ms_cpu": round(diag_ms[1], 2),
            "build_report_ms_wall": round(report_ms[0], 2),
        },
    )


if __name__ == "__main__":
    main()
