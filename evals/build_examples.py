"""Write the ranking proposer's worked examples (prompts/examples.jsonl) from the bundled incidents.

    .venv/bin/python -m evals.build_examples [--check] [DIR ...]

Each incident goes through window, report, diagnosis and the rules as in the harness; its
decision's candidates are built as the LLM proposer builds them (agent.proposers.rank), and
the example's answer is the first candidate its truth accepts: the no-op where no action is
acceptable, else the first acceptable action (the rules' own proposal comes first). An
incident none of whose candidates its truth accepts gives no example. Deterministic: the
same suite gives the same file. `--check` only says whether the file on disk is current.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agent.diagnosis.engine import diagnose
from agent.proposers import rank
from agent.proposers.examples import EXAMPLES_FILE, Example
from agent.proposers.narrow import policy_hints
from agent.proposers.rules import RuleProposer, load_policies
from core.incident import Incident
from core.knob import KnobValue
from evals.harness import load_all
from evals.scoring import actions_acceptable

SUITE = Path(__file__).resolve().parent / "incidents"


@dataclass(frozen=True)
class _Act:
    primitive: str
    target: str | int | None
    value: KnobValue


def decision(inc: Incident, rules: RuleProposer) -> rank.Decision:
    """The decision the ranking proposer makes for `inc`: its key, case text and candidates."""
    window = inc.window()
    report = inc.report(window)
    diagnosis = diagnose(window, report, inc.question)
    return rank.decision(report, diagnosis, policy_hints(rules.rules), rules.propose(report, diagnosis))


def example(inc: Incident, rules: RuleProposer) -> Example | None:
    dec = decision(inc, rules)
    truth = inc.truth
    for c in dec.candidates:
        acts = [_Act(p, t, v) for p, t, v in c.actions]
        if (not acts and not truth.acceptable_actions) or (acts and actions_acceptable(acts, truth)):
            return Example(id=inc.id, key=dec.key, case=dec.case, answer=c.text)
    return None


def build(dirs: Sequence[Path]) -> list[Example]:
    incidents, _errors = load_all(dirs)
    policies = load_policies([], with_default=True)
    out = [example(inc, RuleProposer(policies)) for inc in incidents]
    return [e for e in out if e is not None]


def render(examples: Sequence[Example]) -> str:
    return "".join(json.dumps(e.model_dump(mode="json"), sort_keys=True) + "\n" for e in examples)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("dirs", nargs="*", type=Path, default=[SUITE])
    ap.add_argument("--out", type=Path, default=EXAMPLES_FILE)
    ap.add_argument("--check", action="store_true", help="only say whether the file is current")
    args = ap.parse_args()
    text = render(build(args.dirs))
    if args.check:
        current = args.out.is_file() and args.out.read_text(encoding="utf-8") == text
        print(f"{args.out}: {'current' if current else 'out of date (run evals.build_examples)'}")
        sys.exit(0 if current else 1)
    args.out.write_text(text, encoding="utf-8")
    print(f"{args.out}: {text.count(chr(10))} examples")


if __name__ == "__main__":
    main()
