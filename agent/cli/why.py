"""`idletune why`: diagnose the live host (or a recorded incident) and answer in plain words."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from agent.answer import answer_text, catalogue_remedies
from agent.cli.errors import fail
from agent.diagnosis.engine import diagnose
from agent.diagnosis.model import Diagnosis
from agent.hostfs import HostFS
from agent.report import HealthReport, KnobValue
from agent.window import Window


def _live(duration: float, interval: float, no_bpf: bool, as_json: bool) -> tuple[Window, HealthReport]:
    # Imported here: the incident path must work on a machine without the live sources.
    from agent.cli.report import ROOT_ENV, host_fs
    from agent.collector import Collector, default_sources
    from agent.host import detect_host
    from agent.report import build_report

    fs = host_fs()
    if not fs.path("/proc").is_dir():
        fail(f"no /proc under {fs.root}: set {ROOT_ENV} to a host root or unset it")
    host = detect_host(fs)
    collector = Collector(default_sources(fs, bpf=not no_bpf), interval)
    err = Console(stderr=True)
    with collector.stopping_on_signals():
        collector.start()
        if err.is_terminal and not as_json:
            with err.status(f"watching the host for {duration:g} s…"):
                window = collector.run(duration)
        else:
            window = collector.run(duration)
    knobs = _read_knobs(fs, host.block_devices, list(range(host.gpus)))
    report = build_report(window, host, knobs=knobs, sources=collector.statuses, drops=collector.drops())
    if not any(st.live for st in report.sources.values()):
        fail("no source could run: " + "; ".join(report.missing()))
    return window, report


def _read_knobs(fs: HostFS, devices: list[str], gpus: list[int]) -> dict[str, KnobValue]:
    """Current knob values from the catalogue; an empty map when it cannot read them."""
    from primitives.catalog import read_knobs

    try:
        return dict(read_knobs(fs, devices=devices, gpus=gpus))
    except (OSError, LookupError, ValueError):
        return {}


def _incident(path: Path) -> tuple[Window, HealthReport, str]:
    from evals.incident import IncidentError, load_incident

    try:
        inc = load_incident(path)
    except IncidentError as e:
        fail(str(e))
    window = inc.window()
    return window, inc.report(window), inc.question


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
) -> None:
    """Why are my GPUs idle? Ranked causes with their evidence, and what could be done."""
    if incident is not None:
        window, report, asked = _incident(incident)
    else:
        if interval > duration:
            fail("--interval must not exceed --duration")
        window, report = _live(duration, interval, no_bpf, as_json)
        asked = ""
    diagnosis: Diagnosis = diagnose(window, report, question or asked or None)
    if as_json:
        typer.echo(diagnosis.model_dump_json())
        return
    typer.echo(answer_text(report, diagnosis, catalogue_remedies))


def register(app: typer.Typer) -> None:
    app.command("why")(why_command)
