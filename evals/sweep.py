"""How the rules' answers move as one of the engine's constants moves, over the bundled suite.

    .venv/bin/python -m evals.sweep agent.diagnosis.rules_cpu.FOREIGN_SHARE 0.35:0.75 0.5:0.9
    .venv/bin/python -m evals.sweep agent.diagnosis.rules_io.CAP_TEST_KB 256 inf --sources no-bpf

Each value (a number, `inf`, or numbers joined by `:` for a tuple) is set on the constant's module
for one replay of every incident (`evals.harness.evaluate`, a fresh rule proposer per incident),
then the constant is put back. One line per value: the incidents named right first, whose actions
match, and rightly left alone; then, against the first value, how many moved each way, and with
`--list` which. The engine reads its constants from their modules when it runs, so setting the
module's attribute is enough; a constant copied into another module by `from ... import` would
not follow. The incidents a sweep runs on were seen, so what it chooses is a fit: the rounds
recorded after a change judge it (evals/split.py).
"""

from __future__ import annotations

import argparse
import importlib
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import get_args

from agent.proposers.rules import RuleProposer, load_policies
from evals.harness import evaluate
from evals.scoring import IncidentScore
from evals.sources import View

SUITE = Path(__file__).resolve().parent / "incidents"

Value = float | tuple[float, ...]


class SweepError(ValueError):
    """A constant or a value that cannot be swept: one line for the user."""


@dataclass(frozen=True)
class Point:
    """The suite's scores at one value of the constant."""

    value: Value
    scores: dict[str, IncidentScore]

    @property
    def named(self) -> int:
        return sum(s.ac1 for s in self.scores.values())

    @property
    def actions(self) -> int:
        return sum(s.action_ok for s in self.scores.values())

    @property
    def restrained(self) -> tuple[int, int]:
        judged = [s.restraint for s in self.scores.values() if s.restraint is not None]
        return sum(judged), len(judged)


def parse_value(text: str) -> Value:
    """`0.5`, `inf` or `0.5:0.9`; a SweepError for anything else."""
    try:
        parts = tuple(float(p) for p in text.split(":"))
    except ValueError:
        raise SweepError(f"not a number or numbers joined by ':': {text!r}") from None
    if any(math.isnan(p) for p in parts):
        raise SweepError(f"not a number: {text!r}")
    return parts[0] if len(parts) == 1 else parts


def resolve(dotted: str) -> tuple[ModuleType, str]:
    """The module and attribute name of `package.module.CONSTANT`, which must hold a number or a
    tuple of numbers; a SweepError otherwise."""
    mod_name, _, attr = dotted.rpartition(".")
    if not mod_name or not attr:
        raise SweepError(
            f"give the constant as module.NAME, e.g. agent.diagnosis.rules_cpu.FOREIGN_SHARE: {dotted!r}"
        )
    try:
        module = importlib.import_module(mod_name)
    except ImportError:
        raise SweepError(f"no module {mod_name!r}") from None
    if not hasattr(module, attr):
        raise SweepError(f"{mod_name} has no constant {attr!r}")
    current = getattr(module, attr)
    numeric = isinstance(current, int | float) and not isinstance(current, bool)
    if not numeric and not (isinstance(current, tuple) and all(isinstance(x, int | float) for x in current)):
        raise SweepError(f"{dotted} is not a number or a tuple of numbers: {current!r}")
    return module, attr


def sweep(dotted: str, values: Sequence[Value], paths: Sequence[Path], view: View = "all") -> list[Point]:
    """Replay `paths` once per value of the constant `dotted`; the constant is restored after."""
    module, attr = resolve(dotted)
    original = getattr(module, attr)
    for v in values:
        if isinstance(original, tuple) != isinstance(v, tuple) or (
            isinstance(v, tuple) and len(v) != len(original)
        ):
            raise SweepError(f"{dotted} is {original!r}: give values of that shape, not {v!r}")
    policies = load_policies([], with_default=True)
    points: list[Point] = []
    try:
        for v in values:
            setattr(module, attr, v)
            run = evaluate(paths, lambda: RuleProposer(policies), view=view)
            points.append(Point(v, {r.replay.id: r.score for r in run.results}))
    finally:
        setattr(module, attr, original)
    return points


def moved(base: Point, other: Point) -> list[tuple[str, str]]:
    """(incident, how it moved) for each incident whose first cause, action or restraint verdict
    differs between the two points: `+`/`-` named first, `A+`/`A-` actions, `R+`/`R-` left alone."""
    out: list[tuple[str, str]] = []
    for i, a in base.scores.items():
        b = other.scores.get(i)
        if b is None:
            continue
        marks = [
            f"{mark}{'+' if getattr(b, field) else '-'}"
            for mark, field in (("", "ac1"), ("A", "action_ok"), ("R", "restraint"))
            if getattr(a, field) != getattr(b, field)
        ]
        if marks:
            out.append((i, " ".join(marks)))
    return out


def _fmt(v: Value) -> str:
    return ":".join(f"{x:g}" for x in v) if isinstance(v, tuple) else f"{v:g}"


def report(points: Sequence[Point], listing: bool) -> list[str]:
    lines: list[str] = []
    base = points[0]
    for p in points:
        kept, judged = p.restrained
        lines.append(
            f"{_fmt(p.value)}: named first {p.named}, actions {p.actions}, left alone {kept} of {judged}"
        )
        if p is base:
            continue
        m = moved(base, p)
        count = {k: sum(k in how.split() for _, how in m) for k in ("+", "-", "A+", "A-", "R+", "R-")}
        lines[-1] += (
            f" ({len(m)} moved: named +{count['+']} -{count['-']}, actions +{count['A+']} -{count['A-']},"
            f" left alone +{count['R+']} -{count['R-']})"
        )
        if listing:
            lines += [f"  {i}: {how}" for i, how in m]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m evals.sweep", description=__doc__.splitlines()[0])
    ap.add_argument(
        "constant", help="module.NAME of the constant, e.g. agent.diagnosis.rules_cpu.FOREIGN_SHARE"
    )
    ap.add_argument("values", nargs="+", help="values to try, the first the reference: 0.5, inf, 0.5:0.9")
    ap.add_argument(
        "--sources", default="all", choices=get_args(View), help="replay as a host with fewer sources"
    )
    ap.add_argument(
        "--incidents", type=Path, default=SUITE, help="incident folder (default: the bundled suite)"
    )
    ap.add_argument("--list", action="store_true", help="name every incident that moved")
    args = ap.parse_args(argv)
    try:
        if not args.incidents.is_dir():
            raise SweepError(f"no incident folder at {args.incidents}")
        values = [parse_value(v) for v in args.values]
        points = sweep(args.constant, values, [args.incidents], args.sources)
    except SweepError as e:
        print(f"evals.sweep: {e}", file=sys.stderr)
        return 2
    print("\n".join(report(points, args.list)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
