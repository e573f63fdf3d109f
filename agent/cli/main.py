"""Entry point of the `idletune` command. Each command group lives in its own module
and exposes `register(app)`; add a module here to add its commands."""

from __future__ import annotations

import importlib

import typer

COMMAND_MODULES: tuple[str, ...] = (
    "agent.cli.report",
    "agent.cli.why",
    "agent.cli.catalog",
    "agent.cli.propose",
    "agent.cli.eval",
    "agent.cli.chat",
    "agent.cli.apply",
    "agent.cli.rollback",
    "agent.cli.approve",
    "agent.cli.status",
    "agent.cli.auto",
    "agent.cli.demo",
    "agent.cli.serve",
    "agent.cli.config",
    "agent.cli.control",
    "agent.cli.testbed",
    "agent.cli.record",
)

app = typer.Typer(
    name="idletune",
    help="Why are my GPUs idle? Host diagnosis and guarded tuning for AI training hosts.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    # A callback makes typer keep subcommands even while only one is registered;
    # without it a lone command would become the top-level one (`idletune --duration`).
    pass


def _register_all() -> None:
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(app)


def main() -> None:
    _register_all()
    app()


if __name__ == "__main__":
    main()
