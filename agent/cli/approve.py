"""`idletune approve ID`, `idletune reject ID`, `idletune approvals`: a person answers the gate.

The running agent reads the answer at its next review; the approval covers exactly
the action it was asked for, once.
"""

from __future__ import annotations

import getpass
from typing import Annotated

import typer

from agent.cli.errors import fail
from core.text import printable
from guardrails.approvals import ApprovalStore


def _answer(approval_id: str, approve: bool, by: str | None) -> None:
    who = by or getpass.getuser()
    a, problem = ApprovalStore().decide(approval_id, approve, who)
    if problem:
        fail(problem)
    assert a is not None
    verb = "approved" if approve else "rejected"
    typer.echo(printable(f"{verb}: {a.action.knob} -> {a.action.value} (tier {a.tier}) by {who}"))


def approve_command(
    approval_id: Annotated[str, typer.Argument(help="the id the agent printed")],
    by: Annotated[str | None, typer.Option("--by", help="who approves (default: your user name)")] = None,
) -> None:
    """Approve a change the agent is waiting on."""
    _answer(approval_id, True, by)


def reject_command(
    approval_id: Annotated[str, typer.Argument(help="the id the agent printed")],
    by: Annotated[str | None, typer.Option("--by", help="who rejects (default: your user name)")] = None,
) -> None:
    """Reject a change the agent is waiting on."""
    _answer(approval_id, False, by)


def approvals_command() -> None:
    """Changes waiting for a person's approval."""
    pending = ApprovalStore().pending()
    if not pending:
        typer.echo("no change is waiting for approval")
    for a in pending:
        typer.echo(
            f"{a.id}  tier {a.tier}  {a.action.knob} -> {a.action.value}  "
            f"cause {a.cause or '-'}  because {a.action.reason}"
        )


def register(app: typer.Typer) -> None:
    app.command("approve")(approve_command)
    app.command("reject")(reject_command)
    app.command("approvals")(approvals_command)
