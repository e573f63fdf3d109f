"""`idletune propose`: what the rule policy would change and why. It changes nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from agent.cli.common import load_recorded, observe_live
from agent.cli.errors import fail
from agent.proposers.policy import PolicyError
from agent.proposers.rules import Outcome, RuleProposer, load_policies
from core.diagnosis import Diagnosis
from core.report import HealthReport
from core.text import printable
from primitives.catalog import get


def render(report: HealthReport, diagnosis: Diagnosis, outcome: Outcome, console: Console) -> None:
    def say(line: str) -> None:
        # Summaries, reasons and knob values carry host text (job and device names).
        console.print(printable(line), markup=False, highlight=False, soft_wrap=True)

    for c in diagnosis.causes[:3]:
        say(f"cause: {c.category.value} ({c.confidence:.2f}) {c.summary}")
    proposal = outcome.proposal
    if not proposal.actions:
        say(f"would change nothing: {proposal.noop_reason}")
    for a in proposal.actions:
        p = get(a.primitive)
        tier = f"tier {int(p.tier)}" if p is not None else "?"
        say(f"would set {a.knob}: {report.knobs.get(a.knob, '?')} -> {a.value} [{tier}]")
        say(f"  because {a.reason}")
    if outcome.trace:
        say("rules:")
        for line in outcome.trace:
            say(f"  {line}")
    say("nothing was changed (propose only proposes)")


def propose_command(
    incident: Annotated[
        Path | None, typer.Option("--incident", help="propose for a recorded incident folder")
    ] = None,
    duration: Annotated[
        float, typer.Option("--duration", min=1.0, help="seconds to watch the live host")
    ] = 30.0,
    interval: Annotated[float, typer.Option("--interval", min=0.05, help="seconds between samples")] = 1.0,
    policy: Annotated[
        list[Path] | None, typer.Option("--policy", help="an operator policy file; its rules come first")
    ] = None,
    no_default: Annotated[
        bool, typer.Option("--no-default-policy", help="leave the bundled policy out")
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="one object: proposal, diagnosis and the rules' trace")
    ] = False,
    no_bpf: Annotated[bool, typer.Option("--no-bpf", help="do not load the eBPF collectors")] = False,
    job: Annotated[list[str] | None, typer.Option("--job", help="a training job to watch, NAME=PID")] = None,
) -> None:
    """What would be changed, and why: diagnosis, then the rule policy. Nothing is applied."""
    # Policies first: a bad file is reported before anything is collected.
    try:
        policies = load_policies([str(p) for p in policy or []], with_default=not no_default)
    except PolicyError as e:
        fail(str(e))
    if not policies:
        fail("no policy: give --policy FILE or drop --no-default-policy")
    from agent.diagnosis.engine import diagnose

    if incident is not None:
        window, report, asked = load_recorded(incident)
    else:
        window, report = observe_live(duration, interval, no_bpf=no_bpf, jobs=job, quiet=as_json)
        asked = ""
    diagnosis = diagnose(window, report, asked or None)
    outcome = RuleProposer(policies).explain(report, diagnosis)
    if as_json:
        doc = {
            "proposal": outcome.proposal.model_dump(mode="json"),
            "diagnosis": diagnosis.model_dump(mode="json"),
            "trace": outcome.trace,
        }
        typer.echo(json.dumps(doc))
        return
    render(report, diagnosis, outcome, Console())


def register(app: typer.Typer) -> None:
    app.command("propose")(propose_command)
