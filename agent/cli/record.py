"""`idletune record`: write a live window of this host as an unlabelled v1 incident folder."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agent.cli.errors import fail


def record_command(
    out: Annotated[Path, typer.Option("--out", help="folder to write; its name becomes the incident id")],
    duration: Annotated[float, typer.Option("--duration", min=1.0, help="seconds to record")] = 60.0,
    interval: Annotated[float, typer.Option("--interval", min=0.05, help="seconds between samples")] = 1.0,
    job: Annotated[
        list[str] | None, typer.Option("--job", help="a training job as NAME=PID (repeatable)")
    ] = None,
    title: Annotated[str | None, typer.Option("--title", help="one line for people")] = None,
    question: Annotated[str | None, typer.Option("--question", help="the operator's question")] = None,
    no_bpf: Annotated[bool, typer.Option("--no-bpf", help="do not load the eBPF collectors")] = False,
    device: Annotated[
        list[str] | None,
        typer.Option("--device", help="record only this block device (repeatable); others are left out"),
    ] = None,
) -> None:
    """Record the live sources into OUT (incident.yaml + series.jsonl); truth is left for a person."""
    # Imported here: `idletune --help` must not pay for the live sources.
    from agent.cli.common import operator_jobs
    from agent.live import LiveHost
    from agent.recorder import incident_id, only_devices, record, write_incident
    from core.hostfs import ROOT_ENV, host_fs

    if interval > duration:
        fail("--interval must not exceed --duration")
    if incident_id(out.name) != out.name:
        fail(f"--out: the folder name is the incident id; use [a-z0-9-], e.g. {incident_id(out.name)}")
    if (out / "incident.yaml").exists():
        fail(f"{out} already holds an incident; choose another --out")
    named = operator_jobs(job)
    fs = host_fs()
    if not fs.path("/proc").is_dir():
        fail(f"no /proc under {fs.root}: set {ROOT_ENV} to a host root or unset it")
    live = LiveHost(fs, interval_s=interval, bpf=not no_bpf, operator_jobs=named)
    typer.echo(f"recording for {duration:g} s into {out} …", err=True)
    if device:
        from agent.host import block_devices

        found = block_devices(fs) or []
        unknown = [d for d in device if d not in found]
        if unknown:
            have = ", ".join(found) or "none"
            fail(f"--device: no block device {', '.join(unknown)} on this host (found: {have})")
    rec = record(live, duration, interval)
    if device:
        rec = only_devices(rec, device)
    if not any(s.m for s in rec.samples):
        why = "; ".join(f"{n}: {st.reason}" for n, st in rec.sources.items() if st.reason)
        fail(f"no source measured anything: {why}")
    try:
        write_incident(rec, out, title=title, question=question)
    except ValueError as e:
        fail(str(e))
    live_names = ", ".join(sorted(n for n, st in rec.sources.items() if st.live))
    typer.echo(f"wrote {out}: {len(rec.samples)} samples from {live_names}; label its truth before use")


def register(app: typer.Typer) -> None:
    app.command("record")(record_command)
