"""`idletune auto`: the closed loop on the live host, with a live terminal view.

On start it restores what a crashed earlier run left changed (or adopts it with
--adopt); on SIGTERM/SIGINT, or when --duration ends, it restores its own changes
unless --keep-on-exit. While it runs, `idletune status` reads the snapshot it
writes each tick, and `idletune approve ID` answers its questions.

It collects as the daemon does (agent/collection.py): the hot-path eBPF collectors on
a duty cycle while the host looks healthy, without a break while a trigger is open,
and at the cheaper level while the agent costs more than its budget (agent/cost.py),
with the defaults of the config file's `collection:` and `cost:` sections;
`--collection full` keeps the hot path attached throughout.
"""

from __future__ import annotations

import json
import os
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Annotated, Literal

import typer
from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from agent.cli.common import operator_jobs
from agent.cli.errors import fail
from agent.loop import ControlLoop, LoopConfig, LoopEvent
from core.collection import CollectionLevel
from core.hostfs import ROOT_ENV, host_fs
from core.text import printable

SNAPSHOT_NAME = "agent.json"


def snapshot_path() -> Path:
    from core.statedir import state_dir

    return Path(state_dir()) / SNAPSHOT_NAME


# What this process last wrote to each snapshot file.
_written: dict[Path, str] = {}


def write_snapshot(loop: ControlLoop, level: CollectionLevel | None = None) -> None:
    """What `idletune status` shows, written when it changed (or the file went away): a steady
    agent, ticking every second, does not rewrite and sync a file each time. The collection
    level goes in without its reason, whose "asked 12 s ago" would change at every tick."""
    from core.statedir import write_file

    path = snapshot_path()
    doc = {"pid": os.getpid(), **loop.snapshot()}
    if level is not None:
        doc["collection"] = level.model_dump(mode="json", exclude={"reason"})
    text = json.dumps(doc, default=str)
    if _written.get(path) == text and path.exists():
        return
    write_file(path, text, mode=0o644)
    _written[path] = text


def render(loop: ControlLoop, level: CollectionLevel | None = None) -> Group:
    snap = loop.snapshot()
    head = Text(
        f"mode {snap['mode']}  ·  proposer level {snap['safe_mode']}  ·  diagnosis {snap['diagnosis'] or '…'}"
    )
    lines: list[Text] = [head]
    if level is not None:
        # The reason names host things (jobs, devices): cleaned for the terminal.
        lines.append(Text(printable(f"collection {level.level}: {level.reason}")))
    knobs = Table(title="managed knobs", expand=True)
    for col in ("change", "knob", "before", "now", "judging"):
        knobs.add_column(col)
    for m in snap["managed"]:
        knobs.add_row(
            str(m["id"]), m["knob"], str(m["before"]), str(m["value"]), str(m["knob"] in snap["judging"])
        )
    events = Table(title="last events", expand=True, show_header=False)
    events.add_column("kind", width=10)
    events.add_column("what")
    for ev in list(loop.events)[-10:]:
        events.add_row(ev.kind, ev.text)
    return Group(*lines, knobs, events)


def auto_command(
    duration: Annotated[float | None, typer.Option("--duration", min=1.0, help="seconds, then stop")] = None,
    mode: Annotated[
        Literal["observe", "recommend", "auto"], typer.Option("--mode", help="observe, recommend or auto")
    ] = "recommend",
    interval: Annotated[float, typer.Option("--interval", min=0.1, help="seconds between samples")] = 1.0,
    review_every: Annotated[
        float, typer.Option("--review-every", min=1.0, help="seconds between diagnoses")
    ] = 5.0,
    effect_window: Annotated[
        float, typer.Option("--effect-window", min=2.0, help="seconds to judge a change")
    ] = 30.0,
    neutral: Annotated[
        Literal["keep", "revert"], typer.Option("--neutral", help="what to do with a neutral change")
    ] = "keep",
    adopt: Annotated[
        bool, typer.Option("--adopt", help="manage a crashed run's changes instead of restoring")
    ] = False,
    keep_on_exit: Annotated[
        bool, typer.Option("--keep-on-exit", help="leave changes in place at exit")
    ] = False,
    job: Annotated[list[str] | None, typer.Option("--job", help="a training job as NAME=PID")] = None,
    device: Annotated[
        list[str] | None, typer.Option("--device", help="watch and tune only this block device (repeatable)")
    ] = None,
    kpi_job: Annotated[
        str | None, typer.Option("--kpi-job", help="the job whose throughput judges changes")
    ] = None,
    policy: Annotated[list[Path] | None, typer.Option("--policy", help="an operator policy file")] = None,
    no_default: Annotated[
        bool, typer.Option("--no-default-policy", help="leave the bundled policy out")
    ] = False,
    proposer: Annotated[
        Literal["rules", "llm"], typer.Option("--proposer", help="rules, or llm then rules")
    ] = "rules",
    no_bpf: Annotated[bool, typer.Option("--no-bpf", help="do not load the eBPF collectors")] = False,
    collection: Annotated[
        Literal["duty", "full"],
        typer.Option(
            "--collection",
            help="duty: the hot-path eBPF collectors on a duty cycle while the host looks healthy "
            "(the config's collection.duty); full: all the time",
        ),
    ] = "duty",
    view: Annotated[
        bool, typer.Option("--view/--no-view", help="live terminal view (default on a terminal)")
    ] = True,
) -> None:
    """Run the closed loop: diagnose, propose, gate, apply, verify, roll back what hurts."""
    from agent.collection import CollectionConfig
    from agent.cost import CostConfig
    from agent.proposers.policy import PolicyError
    from agent.wiring import build_loop, live_feed, make_proposers
    from core.statedir import StateError

    fs = host_fs()
    if not fs.path("/proc").is_dir():
        fail(f"no /proc under {fs.root}: set {ROOT_ENV} to a host root or unset it")
    try:
        primary, rules, note = make_proposers(proposer, policy or [], with_default=not no_default)
    except PolicyError as e:
        fail(str(e))
    console = Console(stderr=True)
    if note:
        console.print(printable(note), markup=False)
    show = view and console.is_terminal

    def say(line: str) -> None:
        console.print(printable(line), markup=False)

    def echo(ev: LoopEvent) -> None:
        if not show:
            # Events name host things (jobs, devices, values read back): cleaned for the terminal.
            console.print(printable(f"{ev.kind}: {ev.text}"), markup=False, highlight=False, soft_wrap=True)

    config = LoopConfig.model_validate(
        {
            "interval_s": interval,
            "review_every_s": review_every,
            "job": kpi_job,
            "keep_on_exit": keep_on_exit,
            "effect": {"window_s": effect_window, "neutral": neutral},
        }
    )
    feed = live_feed(
        fs,
        interval_s=interval,
        bpf=not no_bpf,
        jobs=operator_jobs(job),
        devices=device,
        say=say,
        collection=CollectionConfig(duty=collection == "duty"),
        cost=CostConfig(),
    )
    try:
        loop = build_loop(
            config, feed, mode=mode, primary=primary, rules=rules, adopt=adopt, say=say, on_event=echo
        )
    except StateError as e:
        feed.close()
        fail(str(e))
    live = feed.live
    run_live(
        loop,
        feed.close,
        duration,
        view=show,
        console=console,
        level=(lambda: live.level) if live is not None else None,
    )


def run_live(
    loop: ControlLoop,
    close: Callable[[], None],
    duration: float | None,
    *,
    view: bool,
    console: Console,
    level: Callable[[], CollectionLevel] | None = None,
) -> None:
    """Run until done or signalled, then restore (unless kept) and close the sources. `level` is
    the collection level now, for the view and the status snapshot."""

    def now() -> CollectionLevel | None:
        return level() if level is not None else None

    def on_signal(signum: int, frame: FrameType | None) -> None:
        loop.stop()

    old = {}
    if threading.current_thread() is threading.main_thread():
        old = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        if view:
            with Live(render(loop, now()), console=console, refresh_per_second=2) as lv:

                def refresh() -> None:
                    lvl = now()
                    lv.update(render(loop, lvl))
                    write_snapshot(loop, lvl)

                loop.run(duration, after_step=refresh)
        else:
            loop.run(duration, after_step=lambda: write_snapshot(loop, now()))
    finally:
        for res in loop.shutdown():
            console.print(printable(f"restored: {res.knob}: {res.status}: {res.reason}"), markup=False)
        close()
        snapshot_path().unlink(missing_ok=True)
        for sig, handler in old.items():
            signal.signal(sig, handler)


def register(app: typer.Typer) -> None:
    app.command("auto")(auto_command)
