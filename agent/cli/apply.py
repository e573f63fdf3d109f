"""`idletune apply PRIMITIVE[@TARGET]=VALUE`: one manual change, through the gate and the journal.

The person typing the command is the approval tiers 2 and 3 ask for (after a
confirmation, or --yes); every other rule of the gate still holds: bounds, one
step, cooldown, rate limit, flap freeze, quarantine and leases (with --job). The
change outlives the command: it stays in the journal until `idletune rollback`.
"""

from __future__ import annotations

import getpass
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from agent.cli.errors import fail
from agent.cli.guarded import needs, open_host, parse_knob_value
from core.knob import KnobValue, Target
from core.proposal import Action, Proposal
from core.statedir import StateError
from core.text import printable
from guardrails.executor import Executor
from guardrails.gate import GateConfig
from primitives import catalog
from primitives.base import Primitive, TargetKind
from primitives.host import Host

if TYPE_CHECKING:
    from agent.wiring import Guardrails


def apply_command(
    change: Annotated[
        str, typer.Argument(help="PRIMITIVE[@TARGET]=VALUE, e.g. block.read_ahead_kb@sda=1024")
    ],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="do not ask for confirmation")] = False,
    reason: Annotated[str, typer.Option("--reason", help="why, for the journal and the audit")] = "",
    job: Annotated[
        str | None, typer.Option("--job", help="make the change for this job: leases on global knobs hold")
    ] = None,
    priority: Annotated[int, typer.Option("--priority", help="the job's lease priority")] = 0,
) -> None:
    """Make one change by hand, journaled so that `idletune rollback` can undo it."""
    from agent.wiring import open_guardrails

    try:
        primitive, target_text, value_text = parse_knob_value(change)
    except ValueError as e:
        fail(str(e))
    p = catalog.get(primitive)
    if p is None:
        fail(f"{primitive} is not in the catalogue; `idletune catalog` lists them")
    target: str | int | None = target_text
    if p.target is TargetKind.GPU and target_text is not None and target_text.isdigit():
        target = int(target_text)
    value: int | str = int(value_text) if value_text.lstrip("-").isdigit() else value_text
    action = Action(primitive=primitive, target=target, value=value, reason=reason or "manual change")
    try:
        guard = open_guardrails(owner=None)  # no owner: a manual change is kept after this command exits
        guard.journal.lines()  # an unsafe or edited journal is refused before anything else
    except StateError as e:
        fail(str(e))
    want_trainer, want_gpu = needs(p)
    with open_host(trainer=want_trainer, gpu=want_gpu, job=str(target) if want_trainer else None) as host:
        try:
            # Read under the writer lock: every journaled write holds it, so the value shown is
            # never one another apply or the agent is halfway through writing.
            with guard.journal.writing():
                current = _read(p, host, target)
        except StateError as e:
            fail(str(e))
        if current is None:
            fail(f"cannot read {action.knob} on this host: {p.available(host, target).reason or 'no value'}")
        if not yes:
            if not sys.stdin.isatty():
                fail("not a terminal: add --yes to confirm the change")
            typer.confirm(f"set {action.knob}: {current} -> {value}?", abort=True)
        try:
            # The gate reads the journal's history under the writer lock, and the change is recorded
            # before it is let go: two applies at once cannot both pass the cooldown.
            with guard.journal.writing():
                _apply_locked(guard, host, p, action, current, job, priority)
        except StateError as e:
            fail(str(e))


def _read(p: Primitive, host: Host, target: Target) -> KnobValue | None:
    try:
        return p.read(host, target) if p.available(host, target).ok else None
    except (OSError, LookupError, ValueError):
        return None


def _apply_locked(
    guard: Guardrails,
    host: Host,
    p: Primitive,
    action: Action,
    confirmed: KnobValue,
    job: str | None,
    priority: int,
) -> None:
    from agent.wiring import gate_for

    g = gate_for(GateConfig(mode="auto", priorities={job: priority} if job else {}), guard)
    current = _read(p, host, action.target)
    if current is None:
        fail(f"cannot read {action.knob} on this host any more")
    who = f"{getpass.getuser()} (idletune apply)"
    # The gate first: a change another apply recorded while this one waited for the lock is a
    # cooldown, the clearer reason; only then a value moved by something outside the journal.
    [d] = g.review(
        Proposal(actions=[action]), {action.knob: current}, job=job, origin="operator", approved_by=who
    )
    decided = {
        "knob": action.knob,
        "proposal": action.model_dump(mode="json"),
        "decision": d.decision,
        "rule": d.rule,
    }
    if d.decision != "approve":
        guard.audit.write("manual", **decided, reason=d.reason)
        fail(f"the gate said no ({d.rule}): {d.reason}", code=1)
    if str(current) != str(confirmed):
        fail(f"{action.knob} changed from {confirmed} to {current} meanwhile; run the command again")
    res = Executor(host, journal=guard.journal).apply(action)
    guard.audit.write("manual", **decided, reason=res.reason, execution=res.model_dump(mode="json"))
    if res.status in ("applied", "pending"):
        if job is not None and p.target is not TargetKind.JOB:
            g.leases.acquire(action.knob, job, priority)
        typer.echo(
            printable(f"{res.status}: {action.knob} {res.before} -> {res.after} (change {res.change_id})")
        )
        for note in res.notes:
            typer.echo(printable(f"  {note}"))
        typer.echo(f"  undo with: idletune rollback {res.change_id}")
        return
    if res.status == "unchanged":
        typer.echo(printable(f"unchanged: {res.reason}"))
        return
    fail(f"{res.status}: {res.reason}", code=1)


def register(app: typer.Typer) -> None:
    app.command("apply")(apply_command)
