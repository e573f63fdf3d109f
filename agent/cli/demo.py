"""`idletune demo`: the closed loop on this machine (or a replay, where it cannot run live)."""

from __future__ import annotations

import typer


def demo_command(
    replay: bool = typer.Option(False, "--replay", help="replay the bundled incident even where live works"),
) -> None:
    """Testbed job on a throttled loop device → diagnose → gate → apply → verify → restore."""
    from rich.console import Console

    from agent.demo import run_demo, run_replay

    console = Console()
    line = run_replay(console, "asked for a replay") if replay else run_demo(console)
    typer.echo(line)
    if "NOT all restored" in line:
        raise SystemExit(1)


def register(app: typer.Typer) -> None:
    app.command("demo")(demo_command)
