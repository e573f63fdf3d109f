"""`idletune catalog`: the primitives, generated from their descriptors; --json adds the proposal schema."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console

from primitives.base import Availability, Primitive, TargetKind
from primitives.catalog import all_primitives, catalog_json
from primitives.host import Host


def _here(p: Primitive, host: Host, gpu_reason: str) -> Availability:
    """Whether the primitive could be offered on this host, for some target."""
    if p.target is TargetKind.BLOCK_DEVICE:
        devices = host.fs.listdir("/sys/block")
        if any(p.available(host, d).ok for d in devices):
            return Availability(True)
        return Availability(False, "no block device with a request queue")
    if p.target is TargetKind.GPU:
        return Availability(host.gpu is not None, gpu_reason)
    if p.target is TargetKind.JOB:
        return Availability(False, "needs a trainer hook attached to the job")
    return p.available(host, None)


def catalog_command(
    as_json: Annotated[
        bool, typer.Option("--json", help="one object: `primitives` and the `proposal_schema`")
    ] = False,
) -> None:
    """The catalogue of safe primitives: tier, target, bounds, largest step, causes, availability here."""
    if as_json:
        typer.echo(json.dumps(catalog_json(), indent=2))
        return
    from core.hostfs import host_fs
    from primitives.channels import open_nvml_power

    gpu, gpu_reason = open_nvml_power()
    host = Host(host_fs(), gpu=gpu)
    console = Console()
    console.print(
        "tier 0 no risk, 1 low, 2 a person approves, 3 a person approves and the trainer cooperates",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    width = max(len(p.id) for p in all_primitives())
    for p in all_primitives():
        target = p.target.value + ("?" if not p.target_required and p.target is not TargetKind.NONE else "")
        step = p.step.describe() if p.step is not None else "any"
        lines = [
            f"{p.id.ljust(width)}  tier {int(p.tier)}  target {target}  {p.value.describe()}  step {step}",
            f"    {p.description}; for {', '.join(c.value for c in p.causes)}",
        ]
        avail = _here(p, host, gpu_reason)
        if not avail.ok:
            lines.append(f"    not offered here: {avail.reason}")
        if p.reaches_note:
            lines.append(f"    reaches: {p.reaches_note}")
        for line in lines:
            console.print(line, markup=False, highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("catalog")(catalog_command)
