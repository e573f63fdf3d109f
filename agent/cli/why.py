"""`idletune why`: diagnose the live host (or a recorded incident) and answer in plain words."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agent.answer import answer_text, catalogue_remedies
from agent.cli.common import load_recorded, observe_live
from agent.diagnosis.engine import diagnose
from core.diagnosis import Diagnosis


def why_command(
    incident: Annotated[
        Path | None, typer.Option("--incident", help="diagnose a recorded incident folder instead")
    ] = None,
    question: Annotated[str | None, typer.Option("--question", help="the question, in any words")] = None,
    duration: Annotated[
        float, typer.Option("--duration", min=1.0, help="seconds to watch the live host")
    ] = 30.0,
    interval: Annotated[float, typer.Option("--interval", min=0.05, help="seconds between samples")] = 1.0,
    as_json: Annotated[bool, typer.Option("--json", help="print the Diagnosis as one JSON object")] = False,
    no_bpf: Annotated[bool, typer.Option("--no-bpf", help="do not load the eBPF collectors")] = False,
    job: Annotated[list[str] | None, typer.Option("--job", help="a training job to watch, NAME=PID")] = None,
) -> None:
    """Why are my GPUs idle? Ranked causes with their evidence, and what could be done."""
    if incident is not None:
        window, report, asked = load_recorded(incident)
    else:
        window, report = observe_live(duration, interval, no_bpf=no_bpf, jobs=job, quiet=as_json)
        asked = ""
    diagnosis: Diagnosis = diagnose(window, report, question or asked or None)
    if as_json:
        typer.echo(diagnosis.model_dump_json())
        return
    # answer_text is printable: the question and the incident's strings carry no escape sequence.
    typer.echo(answer_text(report, diagnosis, catalogue_remedies))


def register(app: typer.Typer) -> None:
    app.command("why")(why_command)
