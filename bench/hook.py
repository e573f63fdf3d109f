"""Overhead of the trainer hook on a 10 ms training step, with and without an agent listening.

    .venv/bin/python bench/hook.py [--runs 7] [--steps 200]

Two figures, each the median of interleaved runs:
- the step loop: 10 ms of busy compute per batch (spinning, not sleeping, so the
  step length does not carry the scheduler's wake-up jitter), raw loader vs watched;
- the hook alone: a loop with no compute, so only the hook's per-batch cost remains.
The agent runs as a separate process, as on a host. Prints figures; never fails on them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.hook import WatchedLoader, watch
from bench.figures import write_figures

STEP_S = 0.010

_AGENT = textwrap.dedent(
    """
    import json, sys, time
    from agent.sources.trainer import TrainerSource
    src = TrainerSource(sys.argv[1])
    print(json.dumps({"live": src.start().live}), flush=True)
    while True:
        time.sleep(1.0)
        src.collect()
    """
)


def _spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def step_loop(loader: Iterable[Any], steps: int) -> float:
    """Seconds per step over `steps` steps of STEP_S compute each."""
    start = time.perf_counter()
    n = 0
    for _ in loader:
        _spin(STEP_S)
        n += 1
        if n == steps:
            break
    return (time.perf_counter() - start) / n


def bare_loop(loader: Iterable[Any]) -> float:
    """Seconds per batch with no compute at all."""
    start = time.perf_counter()
    n = 0
    for _ in loader:
        n += 1
    return (time.perf_counter() - start) / n


def measure(label: str, make: Any, raw_steps: int, runs: int) -> dict[str, Any]:
    step_deltas: list[float] = []
    bare_deltas: list[float] = []
    for _ in range(runs):
        # Interleaved raw/watched pairs: drift on a shared machine hits both alike.
        raw = step_loop(range(10**9), raw_steps)
        watched = step_loop(make(range(10**9)), raw_steps)
        step_deltas.append(watched - raw)
        n = 200_000
        raw_b = bare_loop(range(n))
        watched_b = bare_loop(make(range(n)))
        bare_deltas.append(watched_b - raw_b)
    step = statistics.median(step_deltas)
    bare = statistics.median(bare_deltas)
    return {
        "label": label,
        "step_loop_overhead_us": step * 1e6,
        "step_loop_overhead_pct": 100 * step / STEP_S,
        "hook_per_batch_us": bare * 1e6,
        "hook_per_batch_pct_of_10ms": 100 * bare / STEP_S,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--json", type=Path, help="also write the figures to this file as JSON")
    args = ap.parse_args()

    made: list[WatchedLoader[Any]] = []

    with tempfile.TemporaryDirectory() as nobody, tempfile.TemporaryDirectory() as state:

        def no_agent(it: Iterable[Any]) -> WatchedLoader[Any]:
            w = watch(it, "bench", batch_size=32, state_dir=nobody)
            made.append(w)
            return w

        def with_agent(it: Iterable[Any]) -> WatchedLoader[Any]:
            w = watch(it, "bench", batch_size=32, state_dir=state)
            made.append(w)
            return w

        results = [measure("no agent", no_agent, args.steps, args.runs)]
        repo = Path(__file__).resolve().parent.parent
        agent = subprocess.Popen(
            [sys.executable, "-c", _AGENT, state], cwd=repo, stdout=subprocess.PIPE, text=True
        )
        try:
            assert agent.stdout is not None and json.loads(agent.stdout.readline())["live"]
            results.append(measure("agent listening", with_agent, args.steps, args.runs))
            connected = sum(1 for w in made if w.link.connects > 0)
        finally:
            agent.kill()
            agent.wait()
        for w in made:
            w.close()

    print(
        f"trainer hook overhead, {STEP_S * 1000:.0f} ms step, "
        f"median of {args.runs} runs, {os.cpu_count()} CPUs"
    )
    for r in results:
        print(
            f"  {r['label']:<16} step loop: {r['step_loop_overhead_us']:+7.1f} µs/step "
            f"({r['step_loop_overhead_pct']:+.3f}% of step)   "
            f"hook alone: {r['hook_per_batch_us']:5.2f} µs/batch "
            f"({r['hook_per_batch_pct_of_10ms']:.3f}% of step)"
        )
    print(f"  watched loaders that reached the agent: {connected} (target: overhead under 1% of the step)")
    write_figures(
        args.json,
        "hook",
        {"step_ms": STEP_S * 1000, "runs": args.runs, "results": results, "connected": connected},
    )


if __name__ == "__main__":
    main()
