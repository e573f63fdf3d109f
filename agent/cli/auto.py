"""`idletune auto`: the closed loop on the live host, with a live terminal view.

On start it restores what a crashed earlier run left changed (or adopts it with
--adopt); on SIGTERM/SIGINT, or when --duration ends, it restores its own changes
unless --keep-on-exit. While it runs, `idletune status` reads the snapshot it
writes each tick, and `idletune approve ID` answers its questions.
"""

from __future__ import annotations

import json
import os
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Annotated, Any, Literal

import typer
from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from agent.cli.common import ROOT_ENV, host_fs, operator_jobs
from agent.cli.errors import fail
from agent.loop import ControlLoop, LoopConfig, LoopEvent
from agent.proposers.base import Proposer
from agent.report import HealthReport
from agent.sample import Sample
from agent.window import Window

SNAPSHOT_NAME = "agent.json"


def snapshot_path() -> Path:
    from agent.hook.protocol import state_dir

    return Path(state_dir()) / SNAPSHOT_NAME


def write_snapshot(loop: ControlLoop) -> None:
    path = snapshot_path()
    data = {"pid": os.getpid(), **loop.snapshot()}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, default=str))
    os.replace(tmp, path)


def render(loop: ControlLoop) -> Group:
    snap = loop.snapshot()
    head = Text(
        f"mode {snap['mode']}  ·  proposer level {snap['safe_mode']}  ·  diagnosis {snap['diagnosis'] or '…'}"
    )
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
    return Group(head, knobs, events)


class _StrictLLM:
    """The LLM proposer, reporting its errors and timeouts as failures so the ladder can count them
    (it would otherwise answer with its own rule fallback, silently)."""

    name = "llm"

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def propose(self, report: Any, diagnosis: Any) -> Any:
        d = self.inner.decide(report, diagnosis)
        if d.source != "llm" and str(d.why).startswith("model"):
            raise RuntimeError(d.why)
        return d.proposal


def _proposers(
    kind: str, policies: list[Path] | None, no_default: bool
) -> tuple[Proposer | None, Proposer, str]:
    from agent.proposers.policy import PolicyError
    from agent.proposers.rules import RuleProposer, load_policies

    try:
        pols = load_policies([str(p) for p in policies or []], with_default=not no_default)
    except PolicyError as e:
        fail(str(e))
    rules = RuleProposer(pols)
    if kind != "llm":
        return None, rules, ""
    try:
        from agent.proposers.llm import build

        llm, note = build(policies=pols)
    except Exception as e:  # the model stack is optional: the rules answer without it
        return None, rules, f"LLM proposer unavailable ({type(e).__name__}: {e}); the rules answer"
    if note:
        return None, rules, note
    return _StrictLLM(llm), rules, ""


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
    view: Annotated[
        bool, typer.Option("--view/--no-view", help="live terminal view (default on a terminal)")
    ] = True,
) -> None:
    """Run the closed loop: diagnose, propose, gate, apply, verify, roll back what hurts."""
    fs = host_fs()
    if not fs.path("/proc").is_dir():
        fail(f"no /proc under {fs.root}: set {ROOT_ENV} to a host root or unset it")
    primary, rules, note = _proposers(proposer, policy, no_default)
    console = Console(stderr=True)
    if note:
        console.print(note, markup=False)
    show = view and console.is_terminal

    def echo(ev: LoopEvent) -> None:
        if not show:
            console.print(f"{ev.kind}: {ev.text}", markup=False, highlight=False, soft_wrap=True)

    loop, close = build_loop(
        LoopConfig.model_validate(
            {
                "interval_s": interval,
                "review_every_s": review_every,
                "job": kpi_job,
                "keep_on_exit": keep_on_exit,
                "effect": {"window_s": effect_window, "neutral": neutral},
            }
        ),
        mode=mode,
        primary=primary,
        rules=rules,
        adopt=adopt,
        bpf=not no_bpf,
        jobs=job,
        say=lambda line: console.print(line, markup=False),
        on_event=echo,
        devices=device,
    )
    run_live(loop, close, duration, view=show, console=console)


def build_loop(
    config: LoopConfig,
    *,
    mode: str,
    primary: Proposer | None,
    rules: Proposer,
    adopt: bool,
    bpf: bool,
    jobs: list[str] | None,
    say: Callable[[str], object],
    on_event: Callable[[LoopEvent], None] | None = None,
    devices: list[str] | None = None,
    fresh_history: bool = False,
) -> tuple[ControlLoop, Callable[[], None]]:
    """The live loop: sources, host channels, journal recovery, gate, ladder. Shared with the demo.

    The gate starts from the journal's moves and quarantines (cooldowns, flaps and quarantines
    hold across restarts), unless `fresh_history`: a run on a host set up anew, where the
    earlier run's moves were on things that no longer exist.
    """
    from agent.diagnosis.engine import diagnose
    from agent.hook.protocol import state_dir
    from agent.live import LiveHost
    from guardrails.approvals import ApprovalStore
    from guardrails.audit import AuditLog
    from guardrails.executor import Executor
    from guardrails.filejournal import FileJournal, JournalError, this_process
    from guardrails.gate import Gate, GateConfig
    from guardrails.leases import LeaseTable
    from guardrails.recovery import adopt_orphans, restore_orphans
    from guardrails.safemode import LadderProposer, SafeMode
    from primitives.channels import REOPEN_FILES, open_nvml_power
    from primitives.host import Host

    fs = host_fs()
    named = operator_jobs(jobs)
    live = LiveHost(fs, interval_s=config.interval_s, bpf=bpf, operator_jobs=named)
    statuses = live.start()
    for name, st in sorted(statuses.items()):
        if not st.live:
            say(f"{name} off: {st.reason}")
    live.collector.tick()  # rates need a previous reading
    gpu = open_nvml_power()[0] if statuses.get("nvml") and statuses["nvml"].live else None
    host = Host(fs, trainer=live.trainer_control, gpu=gpu)
    audit = AuditLog()
    try:
        journal = FileJournal(owner=this_process())
        executor = Executor(host, journal=journal)
        if adopt:
            for e in adopt_orphans(executor, journal):
                say(
                    f"adopted change {e.change.id}: {e.change.primitive}@{e.change.target} = {e.change.value}"
                )
        else:
            for res in restore_orphans(executor, journal, audit):
                say(f"restored after a crash: {res.primitive}@{res.target}: {res.status}: {res.reason}")
        history = [] if fresh_history else journal.moves()
        quarantines = {} if fresh_history else journal.quarantines()
    except JournalError as e:
        live.close()
        fail(str(e))

    def cooperation(action: Any) -> str | None:
        job = str(action.target)
        if job not in live.trainer_control.jobs():
            return f"no trainer hook is attached for job {job}"
        caps = live.trainer_control.capabilities(job)
        return None if action.primitive in caps or REOPEN_FILES in caps else f"job {job}'s hook cannot set it"

    gate = Gate(
        GateConfig.model_validate({"mode": mode}),
        approvals=ApprovalStore(),
        leases=LeaseTable(f"{state_dir()}/leases.json"),
        history=history,
        quarantines=quarantines,
        cooperation=cooperation,
    )
    safe = SafeMode()
    sample: Callable[[], Sample] = live.collector.tick
    report: Callable[[Window], HealthReport] = live.report
    if devices:
        sample, report = only_devices(devices, sample, report)
    loop = ControlLoop(
        config,
        sample=sample,
        report=report,
        diagnose=lambda w, r: diagnose(w, r),
        proposer=LadderProposer(primary, rules, safe),
        gate=gate,
        executor=executor,
        audit=audit,
        safe=safe,
        clock=live.collector.now,
        statuses=lambda: live.collector.statuses,
        on_event=on_event,
    )
    return loop, live.close


def only_devices(
    devices: list[str], sample: Callable[[], Sample], report: Callable[[Window], HealthReport]
) -> tuple[Callable[[], Sample], Callable[[Window], HealthReport]]:
    """Watch and tune only these block devices: other devices' figures and knobs are left out,
    so a diagnosis cannot point at a disk that belongs to someone else."""
    keep = set(devices)

    def ours(name: str) -> bool:
        parts = name.split(".")
        return parts[0] != "io" or len(parts) < 3 or parts[1] in keep

    def knob_ours(key: str) -> bool:
        primitive, _, target = key.partition("@")
        return not (primitive.startswith("block.") and target and target not in keep)

    def filtered_sample() -> Sample:
        s = sample()
        return Sample(t=s.t, m={k: v for k, v in s.m.items() if ours(k)})

    def filtered_report(w: Window) -> HealthReport:
        r = report(w)
        host = r.host.model_copy(update={"block_devices": [d for d in r.host.block_devices if d in keep]})
        return r.model_copy(
            update={
                "host": host,
                "metrics": {k: v for k, v in r.metrics.items() if ours(k)},
                "subsystems": {
                    sub: {k: v for k, v in figs.items() if ours(k)} for sub, figs in r.subsystems.items()
                },
                "knobs": {k: v for k, v in r.knobs.items() if knob_ours(k)},
            }
        )

    return filtered_sample, filtered_report


def run_live(
    loop: ControlLoop, close: Callable[[], None], duration: float | None, *, view: bool, console: Console
) -> None:
    """Run until done or signalled, then restore (unless kept) and close the sources."""

    def on_signal(signum: int, frame: FrameType | None) -> None:
        loop.stop()

    old = {}
    if threading.current_thread() is threading.main_thread():
        old = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        if view:
            with Live(render(loop), console=console, refresh_per_second=2) as lv:

                def refresh() -> None:
                    lv.update(render(loop))
                    write_snapshot(loop)

                loop.run(duration, after_step=refresh)
        else:
            loop.run(duration, after_step=lambda: write_snapshot(loop))
    finally:
        for res in loop.shutdown():
            console.print(f"restored: {res.primitive}@{res.target}: {res.status}: {res.reason}", markup=False)
        close()
        snapshot_path().unlink(missing_ok=True)
        for sig, handler in old.items():
            signal.signal(sig, handler)


def register(app: typer.Typer) -> None:
    app.command("auto")(auto_command)
