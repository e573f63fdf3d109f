"""`idletune config check|schema|show`: the operator's config file, checked before it is used."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from agent.cli.errors import fail

app = typer.Typer(help="The operator's config file: check it, print its schema, show the effective one.")


@app.command("check")
def check_command(
    files: Annotated[list[Path], typer.Argument(help="config files to check")],
) -> None:
    """Say what is wrong with each file, as FILE:LINE: problem; exit 2 if any is wrong."""
    from agent.config.load import ConfigError, load_config

    bad = 0
    for f in files:
        try:
            load_config(f)
        except ConfigError as e:
            bad += 1
            typer.echo(f"idletune: {e}", err=True)
        else:
            typer.echo(f"{f}: ok")
    if bad:
        raise SystemExit(2)


@app.command("schema")
def schema_command() -> None:
    """Print the config file's JSON Schema."""
    from agent.config.model import AgentConfig

    typer.echo(json.dumps(AgentConfig.model_json_schema(), indent=2))


@app.command("show")
def show_command(
    config: Annotated[
        Path | None,
        typer.Option("--config", help="the file (default: $IDLETUNE_CONFIG, /etc/idletune/config.yaml)"),
    ] = None,
) -> None:
    """Print the effective config, each value with where it came from (file:line or default)."""
    from agent.config.load import ConfigError, load_config
    from agent.config.show import effective_lines

    try:
        loaded = load_config(config)
    except ConfigError as e:
        fail(str(e))
    typer.echo(f"# {loaded.path if loaded.path is not None else 'no config file: every value is a default'}")
    for line in effective_lines(loaded):
        typer.echo(line)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="config")
