"""`idletune status`: managed knobs, pending approvals, the last verdicts, and the running agent.

Read from the state dir only (journal, approvals, audit log, the running agent's
snapshot), so it answers from any shell without disturbing anything.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from agent.cli.errors import fail
from core.statedir import StateError
from core.text import printable
from guardrails.approvals import ApprovalStore
from guardrails.audit import AuditLog
from guardrails.filejournal import FileJournal, Owner


def _running() -> dict[str, Any] | None:
    from agent.cli.auto import snapshot_path

    try:
        snap: dict[str, Any] = json.loads(snapshot_path().read_text())
    except (OSError, ValueError):
        return None
    return snap if Owner(pid=int(snap.get("pid", 0))).alive() else None


def status_doc() -> dict[str, Any]:
    try:
        entries = FileJournal().open_entries()
    except StateError as e:
        fail(str(e))
    verdicts = [r for r in AuditLog().read() if r.verdict is not None][-5:]
    return {
        "agent": _running(),
        "managed": [
            {
                "id": e.change.id,
                "knob": e.change.knob,
                "before": e.change.before,
                "value": e.change.value,
                "state": e.change.state,
                "held_by": "kept until `idletune rollback`" if e.owner is None else str(e.owner),
                "since": e.t_applied,
            }
            for e in entries
        ],
        "pending_approvals": [
            {
                "id": a.id,
                "tier": a.tier,
                "knob": a.action.knob,
                "value": a.action.value,
                "reason": a.action.reason,
            }
            for a in ApprovalStore().pending()
        ],
        "last_verdicts": [
            {"knob": r.knob, "verdict": r.verdict, "kpi": r.kpi, "before": r.kpi_before, "after": r.kpi_after}
            for r in verdicts
        ],
    }


def _echo(line: str) -> None:
    # Knob targets, reasons and the operator's notes are host text: no escape sequence reaches the terminal.
    typer.echo(printable(line))


def _collection(col: dict[str, Any]) -> str:
    """`collection: duty, hot path 1 s in every 10 s (no trigger)`, from the agent's snapshot."""
    cycle = ""
    if col.get("level") == "duty" and col.get("duty_on_s") and col.get("duty_period_s"):
        cycle = f", hot path {col['duty_on_s']:g} s in every {col['duty_period_s']:g} s"
    tail = "" if col.get("hot_path", True) else "; no hot-path collector runs"
    return f"collection: {col.get('level')}{cycle} ({str(col.get('cause', '')).replace('_', ' ')}){tail}"


def status_command(
    as_json: Annotated[bool, typer.Option("--json", help="one JSON object")] = False,
) -> None:
    """What idletune holds changed now, what waits for approval, what its last changes did."""
    doc = status_doc()
    if as_json:
        typer.echo(json.dumps(doc, default=str))  # JSON escapes control characters
        return
    agent = doc["agent"]
    if agent is None:
        _echo("agent: not running")
    else:
        _echo(
            f"agent: pid {agent['pid']}, mode {agent['mode']}, proposer level {agent['safe_mode']}, "
            f"last diagnosis {agent['diagnosis'] or '-'}"
        )
        if (col := agent.get("collection")) is not None:
            _echo(f"  {_collection(col)}")
        for key in ("waiting", "quarantined", "frozen"):
            if agent.get(key):
                label = "waiting to take effect" if key == "waiting" else key
                _echo(f"  {label}: {', '.join(agent[key])}")
        for knob, why in (agent.get("operator_knobs") or {}).items():
            _echo(f"  operator owns {knob}: {why}")
    _echo(f"managed knobs: {len(doc['managed']) or 'none'}")
    for m in doc["managed"]:
        _echo(f"  [{m['id']}] {m['knob']}: {m['before']} -> {m['value']} ({m['state']}, {m['held_by']})")
    _echo(f"pending approvals: {len(doc['pending_approvals']) or 'none'}")
    for a in doc["pending_approvals"]:
        _echo(f"  {a['id']} tier {a['tier']}: {a['knob']} -> {a['value']}  (idletune approve {a['id']})")
    _echo(f"last verdicts: {len(doc['last_verdicts']) or 'none'}")
    for v in doc["last_verdicts"]:
        _echo(f"  {v['knob']}: {v['verdict']} on {v['kpi']} ({v['before']} -> {v['after']})")


def register(app: typer.Typer) -> None:
    app.command("status")(status_command)
