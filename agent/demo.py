"""`idletune demo`: the closed loop, live, on this machine, ending in one result line.

Live (root, eBPF, PyTorch): the testbed's readahead scenario runs a real training
job whose shards sit on a loop device throttled by IOPS through the block cgroup,
with read_ahead_kb at 128. The agent, in auto mode, diagnoses, proposes, passes
the gate (tier 1: three agreeing diagnoses), applies (the hook restarts the
loader's workers so they reopen their files), and judges the effect. Then every
change is restored, and the testbed undoes its loop device, cgroups and knobs,
also after Ctrl-C.

Otherwise it replays a bundled readahead incident through the same loop on a
simulated clock, writing to a scratch copy of the recorded knobs, and says so: a
recording cannot respond to a change, so no effect is claimed.
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from rich.console import Console

from agent.loop import ControlLoop, LoopConfig, LoopEvent
from core.text import printable
from guardrails.effect import EffectConfig, Judgement

SCENARIO = "readahead"
JOB = "testbed"
INCIDENT = "syn-readahead-mismatch-small-192c-0gpu-s502"
LIVE_TIMEOUT_S = 240.0


def live_missing() -> str | None:
    """Why the live demo cannot run here, or None."""
    if os.geteuid() != 0:
        return "not root"
    if importlib.util.find_spec("bcc") is None:
        return "no eBPF (bcc is not installed)"
    if (
        not Path("/sys/kernel/tracing/events").is_dir()
        and not Path("/sys/kernel/debug/tracing/events").is_dir()
    ):
        return "no eBPF tracepoints (tracefs is not mounted)"
    if importlib.util.find_spec("torch") is None:
        return "PyTorch is not installed (the testbed's trainer needs it)"
    if importlib.util.find_spec("evals.testbed") is None:
        return "the testbed (evals/testbed) is not in this installation"
    return None


def result_line(j: Judgement | None, restored: list[str]) -> str:
    tail = "all changes restored" if not restored else "NOT all restored: " + "; ".join(restored)
    if j is None or j.comparison.before is None or j.comparison.after is None:
        return f"result: no verdict reached; {tail}"
    b, a = j.comparison.before, j.comparison.after
    ratio = a / b if b else float("inf")
    return f"result: {j.kpi} before={b:.1f} after={a:.1f} ({ratio:.1f}x); {tail}"


def _printer(console: Console) -> Callable[[LoopEvent], None]:
    def show(ev: LoopEvent) -> None:
        console.print(printable(f"  {ev.kind:9} {ev.text}"), markup=False, highlight=False, soft_wrap=True)

    return show


# -- live ---------------------------------------------------------------------------------


def run_live(console: Console) -> str:
    from agent.proposers.rules import RuleProposer, load_policies
    from agent.wiring import Feed, build_loop, live_feed
    from core.hostfs import host_fs
    from core.statedir import state_dir
    from evals.testbed import runner as tb
    from guardrails.filejournal import FileJournal

    # Its own state dir: the testbed's trainer finds the agent's socket there, and a rerun after a
    # crash finds the journal and undo log the crashed run left.
    state = Path(state_dir()) / "demo"
    state.mkdir(parents=True, exist_ok=True, mode=0o755)  # the trainer reaches its socket
    os.environ["IDLETUNE_STATE_DIR"] = str(state)
    left = tb.stop()
    if left:
        console.print("an earlier demo left things set up; undone: " + "; ".join(left), markup=False)
    judgement: Judgement | None = None
    problems: list[str] = []
    loop: ControlLoop | None = None
    feed: Feed | None = None
    dev = ""
    try:
        console.print("setting up the testbed: loop device, IOPS throttle, read_ahead_kb 128, PyTorch job…")
        fault = tb.run_scenario(SCENARIO, "fault", seconds=6.0, keep=True, lifetime_s=LIVE_TIMEOUT_S + 120)
        dev = Path(str((tb.current() or {}).get("device", ""))).name
        console.print(f"testbed up on {dev}: {fault.line().strip()}", markup=False)
        config = LoopConfig(
            interval_s=1.0,
            review_every_s=4.0,
            diagnosis_window_s=20.0,
            job=JOB,
            effect=EffectConfig(window_s=20.0, settle_s=5.0),
        )

        def say(line: str) -> None:
            console.print(f"  {line}", markup=False)

        # The demo's own device only: other disks on a shared host are not its to tune.
        feed = live_feed(host_fs(), interval_s=config.interval_s, devices=[dev], say=say)
        loop = build_loop(
            config,
            feed,
            mode="auto",
            primary=None,
            rules=RuleProposer(load_policies([])),
            say=say,
            on_event=_printer(console),
            # A new testbed each run: the last run's restore at its end is not a move of this
            # one's knobs, and would read as flapping if the demo is run again within minutes.
            fresh_history=True,
        )
        console.print("agent running in auto mode (Ctrl-C stops and restores everything)…")
        judgement = _until_verdict(loop, LIVE_TIMEOUT_S, "block.read_ahead_kb")
    finally:
        if loop is not None:
            for res in loop.shutdown():
                if res.status not in ("reverted",):
                    problems.append(f"{res.knob}: {res.status}: {res.reason}")
        if feed is not None:
            feed.close()
        open_changes = FileJournal(state).open_changes()
        problems += [f"journal still holds change {c.id} ({c.primitive})" for c in open_changes]
        problems += tb.stop()
        if tb.current() is not None:
            problems.append("the testbed's undo log is still there")
    return result_line(judgement, problems)


def _until_verdict(loop: ControlLoop, timeout_s: float, primitive: str) -> Judgement | None:
    """Run until the effect of a change to `primitive` is judged (or the timeout)."""
    import signal

    def on_signal(signum: int, frame: object) -> None:
        loop.stop()

    old = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    found: list[Judgement] = []

    def check() -> None:
        for j in loop.verdicts:
            if j.action.primitive == primitive:
                found.append(j)
                loop.stop()
                return

    try:
        loop.run(timeout_s, after_step=check)
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)
    return found[0] if found else None


# -- replay -------------------------------------------------------------------------------


def _scratch_root(root: Path, knobs: dict[str, object], devices: list[str]) -> None:
    """The recorded knobs as files under a scratch root, where the executor may write."""

    def put(path: str, text: str) -> None:
        p = root / path.lstrip("/")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text + "\n")

    for dev in devices:
        put(f"/sys/block/{dev}/queue/read_ahead_kb", str(knobs.get(f"block.read_ahead_kb@{dev}", 128)))
        put(f"/sys/block/{dev}/queue/nr_requests", str(knobs.get(f"block.nr_requests@{dev}", 256)))
        put(f"/sys/block/{dev}/size", "1000000")
    for key, value in knobs.items():
        if key.startswith(("vm.", "kernel.")) and "@" not in key:
            put("/proc/sys/" + key.replace(".", "/"), str(value))
    put("/proc/meminfo", "MemTotal:       65536000 kB")
    put("/sys/devices/system/cpu/online", "0-1")


def run_replay(console: Console, why: str) -> str:
    from agent.proposers.rules import RuleProposer, load_policies
    from agent.wiring import build_loop, replay_feed
    from core.hostfs import HostFS
    from core.incident import load_incident
    from guardrails.filejournal import FileJournal

    console.print(
        f"live demo unavailable ({why}): replaying the bundled incident {INCIDENT} instead", markup=False
    )
    inc = load_incident(Path(__file__).resolve().parents[1] / "evals" / "incidents" / INCIDENT)
    with tempfile.TemporaryDirectory(prefix="idletune-demo-") as tmp:
        root, state = Path(tmp) / "root", Path(tmp) / "state"
        _scratch_root(root, dict(inc.knobs), list(inc.host.block_devices))
        feed = replay_feed(inc, HostFS(root))
        loop = build_loop(
            LoopConfig(interval_s=inc.interval_s, review_every_s=10.0, diagnosis_window_s=40.0),
            feed,
            mode="auto",
            primary=None,
            rules=RuleProposer(load_policies([])),
            state=state,
            on_event=_printer(console),
        )
        for _ in range(len(inc.samples)):
            loop.step()
        applied = [e for e in loop.events if e.kind == "applied"]
        results = loop.shutdown()
        problems = [f"{r.primitive}: {r.status}" for r in results if r.status != "reverted"]
        problems += [f"change {c.id} open" for c in FileJournal(state).open_changes()]
    tail = "all changes restored" if not problems else "NOT all restored: " + "; ".join(problems)
    what = applied[0].text.split(";")[0] if applied else "nothing applied"
    return f"result: replay of {INCIDENT} (no live KPI in a recording): {what}; {tail}"


def run_demo(console: Console | None = None) -> str:
    console = console or Console()
    why = live_missing()
    t0 = time.monotonic()
    line = run_live(console) if why is None else run_replay(console, why)
    console.print(f"({time.monotonic() - t0:.0f} s)", markup=False)
    return line
