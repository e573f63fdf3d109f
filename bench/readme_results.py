"""Regenerate the results table in README.md from the eval harness and the bench figures.

    .venv/bin/python bench/readme_results.py [BENCH_JSON ...]      (or: make results)

Scores the bundled suite with the rule proposer beside the constant baseline, adds the
throughput of bench/eval.py (from the JSON files given, else measured now), and writes the
table between the README's results markers. Everything else in the README is left as it is;
a README without the markers gets them appended.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.proposers.rules import RuleProposer, load_policies
from evals.harness import EvalRun, evaluate
from evals.results_table import Row, markdown

ROOT = Path(__file__).resolve().parent.parent
START, END = "<!-- results:start -->", "<!-- results:end -->"
README = ROOT / "README.md"
SUITE = ROOT / "evals" / "incidents"


def bench_rows(figures: list[dict[str, Any]]) -> list[Row]:
    rows: list[Row] = []
    for f in figures:
        if f.get("bench") == "eval":
            rows.append(
                (
                    "replay throughput, rules (bench/eval.py)",
                    f"{f['incidents_per_s']:.1f} incidents/s",
                    "-",
                )
            )
    return rows


def section(run: EvalRun, figures: list[dict[str, Any]]) -> str:
    note = (
        f"`idletune eval evals/incidents --proposer rules` on the bundled suite "
        f"({run.summary.incidents} incidents, {run.summary.invalid} invalid). "
        "Regenerate with `make results`."
    )
    return "\n".join([START, "", note, "", markdown(run, bench_rows(figures)), "", END])


def replace_section(text: str, new: str) -> str:
    """`text` with the marked section replaced by `new`; appended when there are no markers."""
    start, end = text.find(START), text.find(END)
    if start == -1 or end == -1 or end < start:
        return text.rstrip("\n") + "\n\n" + new + "\n"
    return text[:start] + new + text[end + len(END) :]


def _run_eval_bench() -> dict[str, Any]:
    """bench/eval.py's figures, from its own JSON output: the table shows what the bench prints."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "eval.json"
        subprocess.run(
            [sys.executable, str(ROOT / "bench" / "eval.py"), "--json", str(out), str(SUITE)],
            check=True,
        )
        figures: dict[str, Any] = json.loads(out.read_text())
    return figures


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("bench_json", nargs="*", type=Path, help="figures written by bench/eval.py --json")
    ap.add_argument("--readme", type=Path, default=README)
    args = ap.parse_args()
    policies = load_policies([], with_default=True)
    run = evaluate([SUITE], lambda: RuleProposer(policies), on_error=lambda e: print(f"invalid: {e}"))
    figures = [json.loads(p.read_text()) for p in args.bench_json] or [_run_eval_bench()]
    text = args.readme.read_text() if args.readme.exists() else "# idletune\n"
    args.readme.write_text(replace_section(text, section(run, figures)))
    print(f"wrote the results table to {args.readme}")


if __name__ == "__main__":
    main()
