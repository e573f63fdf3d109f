"""`idletune rollback [ID | --all]`: put original values back from the journal, whoever changed them.

Works after the process that made the change died (kill -9): the journal holds the
originals. A knob the operator changed since is released, not overwritten.
"""

from __future__ import annotations

from typing import Annotated

import typer

from agent.cli.errors import fail
from agent.cli.guarded import needs, open_host
from core.statedir import StateError
from core.text import printable
from guardrails.executor import ExecResult, Executor
from guardrails.filejournal import this_process
from guardrails.recovery import rollback_all, rollback_one


def _say(res: ExecResult) -> None:
    # The knob and the reason come from the journal: data, cleaned before a terminal sees them.
    typer.echo(printable(f"{res.status}: {res.knob} (change {res.change_id}): {res.reason}"))


def rollback_command(
    change_id: Annotated[int | None, typer.Argument(help="one change, by the id apply printed")] = None,
    all_: Annotated[bool, typer.Option("--all", help="every open change in the journal")] = False,
) -> None:
    """Restore the values idletune found before its changes."""
    from agent.wiring import open_guardrails

    if (change_id is None) == (not all_):
        fail("give a change id or --all")
    guard = open_guardrails(owner=this_process())
    j = guard.journal
    try:
        entries = j.open_entries()
    except StateError as e:
        fail(str(e))
    if change_id is not None:
        entries = [e for e in entries if e.change.id == change_id]
        if not entries:
            fail(f"no open change {change_id} in {j.path}")
    if not entries:
        typer.echo("nothing to roll back: the journal holds no open change")
        return
    locs = [w.loc for e in entries for w in e.change.saved]
    want_trainer, want_gpu = needs(None, locs)
    with open_host(trainer=want_trainer, gpu=want_gpu) as host:
        ex = Executor(host, journal=j)
        try:
            if change_id is not None:
                one = rollback_one(ex, j, change_id, guard.audit)
                results = [one] if one is not None else []
            else:
                results = rollback_all(ex, j, guard.audit)
        except StateError as e:
            fail(str(e))
    for res in results:
        _say(res)
    if any(r.status in ("failed", "refused") for r in results):
        fail("some changes could not be restored; they stay in the journal", code=1)


def register(app: typer.Typer) -> None:
    app.command("rollback")(rollback_command)
