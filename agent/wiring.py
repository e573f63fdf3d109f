"""The one place the closed loop is put together: its feed, the guardrails' state, the proposers.

`idletune auto`, the demo (live and replayed), the service and the tests all wire
through these functions, so a loop has the same parts wherever it runs. A feed is
what the loop watches and the host its actions land on: the live host, a recorded
incident on a simulated clock, or a test's simulation.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agent.collection import CollectionConfig
from agent.cost import CostConfig
from agent.devicefilter import DeviceFilter
from agent.diagnosis.engine import diagnose
from agent.jobs import OperatorJob
from agent.live import LiveHost
from agent.llm.loader import LLMSettings
from agent.loop import ControlLoop, LoopConfig, LoopEvent
from agent.proposers.base import Proposer
from agent.proposers.ladder import LadderProposer, StrictLLM
from core.diagnosis import Diagnosis
from core.hostfs import HostFS
from core.incident import Incident
from core.proposal import Action
from core.report import HealthReport
from core.sample import Sample, SourceStatus
from core.statedir import state_dir
from core.window import Window
from guardrails.approvals import ApprovalStore
from guardrails.audit import AUDIT_NAME, AuditLog
from guardrails.executor import Executor
from guardrails.filejournal import FileJournal, Owner, this_process
from guardrails.gate import Gate, GateConfig, Mode
from guardrails.leases import LeaseTable
from guardrails.recovery import adopt_orphans, restore_orphans
from guardrails.safemode import SafeMode, SafeModeConfig
from primitives.catalog import read_knobs
from primitives.channels import REOPEN_FILES, open_nvml_power
from primitives.host import Host

Say = Callable[[str], object]


def _quiet(line: str) -> None:
    pass


@dataclass
class Feed:
    """What a loop watches, and the host its actions land on."""

    sample: Callable[[], Sample]
    report: Callable[[Window], HealthReport]
    host: Host
    clock: Callable[[], float] = time.time
    diagnose: Callable[[Window, HealthReport], Diagnosis] = field(default=lambda w, r: diagnose(w, r))
    statuses: Callable[[], dict[str, SourceStatus]] | None = None
    # Why a tier-3 action cannot run (no hook attached, the hook cannot set it), or None.
    cooperation: Callable[[Action], str | None] | None = None
    close: Callable[[], None] = field(default=lambda: None)
    # A replay or a simulation: the guardrails keep time by `clock`, and the agent's own CPU use
    # (real, unlike the clock) is not held against a budget measured in simulated seconds.
    simulated: bool = False
    # The live sources behind a live feed: per-cgroup features, collectors reloaded in place.
    live: LiveHost | None = None
    # `report`, taken now and made when first wanted (LiveHost.report_later): what the service
    # keeps of each tick, so that a tick nobody reads costs no report.
    report_later: Callable[[Window], Callable[[], HealthReport]] | None = None


@dataclass(frozen=True)
class Guardrails:
    """What the gate and the executor keep in one state directory."""

    dir: Path
    journal: FileJournal
    audit: AuditLog
    approvals: ApprovalStore
    leases: LeaseTable


def open_guardrails(
    directory: str | Path | None = None,
    *,
    owner: Owner | None = None,
    clock: Callable[[], float] = time.time,
    audit_log: Path | None = None,
) -> Guardrails:
    """The journal, audit log, approvals and leases of a state directory (default: the configured one).

    The audit log is `audit_log`, else audit.jsonl in an explicit directory, else the configured
    one. The journal is read when first asked; a damaged or unsafe one raises StateError then."""
    d = Path(directory) if directory is not None else Path(state_dir())
    return Guardrails(
        dir=d,
        journal=FileJournal(d, owner=owner, clock=clock),
        audit=AuditLog(audit_log or (d / AUDIT_NAME if directory is not None else None), clock=clock),
        approvals=ApprovalStore(d / "approvals", clock=clock),
        leases=LeaseTable(d / "leases.json", clock=clock),
    )


def gate_for(
    config: GateConfig,
    guard: Guardrails,
    *,
    clock: Callable[[], float] = time.time,
    cooperation: Callable[[Action], str | None] | None = None,
    fresh_history: bool = False,
) -> Gate:
    """A gate that knows every move and quarantine the journal recorded, by any process:
    cooldowns, rate limits, the flap rule and quarantines hold across commands and restarts.
    `fresh_history` leaves them out: a run on a host set up anew, where the earlier moves
    were on things that no longer exist."""
    return Gate(
        config,
        clock=clock,
        approvals=guard.approvals,
        leases=guard.leases,
        history=[] if fresh_history else guard.journal.moves(),
        quarantines={} if fresh_history else guard.journal.quarantines(),
        cooperation=cooperation,
    )


def live_host(live: LiveHost) -> Host:
    """The live host with the channels this process holds: the hook socket and the GPUs."""
    gpu, _ = open_nvml_power()
    return Host(live.fs, trainer=live.trainer_control, gpu=gpu)


@contextlib.contextmanager
def live_host_opener(live: LiveHost) -> Iterator[Host]:
    yield live_host(live)


def live_feed(
    fs: HostFS,
    *,
    interval_s: float,
    bpf: bool = True,
    jobs: Sequence[OperatorJob] = (),
    devices: Sequence[str] | None = None,
    say: Say = _quiet,
    collection: CollectionConfig | None = None,
    cost: CostConfig | None = None,
) -> Feed:
    """Start the live sources (saying which are off and why) and feed the loop from them.

    With `collection` the hot-path collectors run on its duty cycle; without it, all the time.
    `cost` sets the agent's budget (its CPU and its eBPF programs' run time).
    """
    live = LiveHost(fs, interval_s=interval_s, bpf=bpf, operator_jobs=jobs, collection=collection, cost=cost)
    for name, st in sorted(live.start().items()):
        if not st.live:
            say(f"{name} off: {st.reason}")
    live.collector.tick()  # rates need a previous reading
    live.check_cost()  # the budget's window starts after start-up's compile
    if live.cost is not None and live.cost.programs and not live.cost.bpf_measured:
        say(f"eBPF programs' run time {live.cost.bpf_how}")

    def on_budget(over: str | None) -> None:
        say(f"cost: {over}" if over is not None else "cost: back within budget")

    live.on_budget = on_budget

    def cooperation(action: Action) -> str | None:
        job = str(action.target)
        if job not in live.trainer_control.jobs():
            return f"no trainer hook is attached for job {job}"
        caps = live.trainer_control.capabilities(job)
        return None if action.primitive in caps or REOPEN_FILES in caps else f"job {job}'s hook cannot set it"

    sample: Callable[[], Sample] = live.tick
    report: Callable[[Window], HealthReport] = live.report
    later: Callable[[Window], Callable[[], HealthReport]] = live.report_later
    if devices:
        ours = DeviceFilter(devices)
        tick = live.tick
        sample = lambda: ours.sample(tick())  # noqa: E731
        report = lambda w: ours.report(live.report(w))  # noqa: E731

        def filtered_later(w: Window) -> Callable[[], HealthReport]:
            make = live.report_later(w)
            return lambda: ours.report(make())

        later = filtered_later
    return Feed(
        sample=sample,
        report=report,
        host=live_host(live),
        clock=live.collector.now,
        statuses=lambda: live.collector.statuses,
        cooperation=cooperation,
        close=live.close,
        live=live,
        report_later=later,
    )


def replay_feed(incident: Incident, fs: HostFS) -> Feed:
    """A recorded incident, one sample a tick on its own clock; actions land on `fs`, whose knob
    files the report reads back (a recording cannot respond to a change, so its figures do not)."""
    samples = list(incident.window())
    if not samples:
        raise ValueError(f"incident {incident.id} holds no samples")
    it = iter(samples)
    now = [samples[0].t]

    def sample() -> Sample:
        s = next(it)
        now[0] = s.t
        return s

    def report(w: Window) -> HealthReport:
        r = incident.report(w)
        r.knobs.update(read_knobs(fs, incident.host.block_devices))
        return r

    return Feed(sample=sample, report=report, host=Host(fs), clock=lambda: now[0], simulated=True)


def make_proposers(
    kind: str,
    policies: Sequence[str | Path] = (),
    *,
    with_default: bool = True,
    llm_settings: LLMSettings | None = None,
) -> tuple[Proposer | None, Proposer, str]:
    """(primary, rules, note): the rule proposer on the operator's policies (then the bundled one),
    and for `llm` the model `llm_settings` names (the config file's `llm:` section when None)
    before them; `note` says in one line why the model is not there.
    Raises PolicyError for a policy file that is wrong."""
    from agent.proposers.rules import RuleProposer, load_policies

    pols = load_policies([str(p) for p in policies], with_default=with_default)
    rules = RuleProposer(pols)
    if kind != "llm":
        return None, rules, ""
    try:
        from agent.llm.loader import load_settings
        from agent.proposers.llm import build

        llm, note = build(llm_settings if llm_settings is not None else load_settings(), policies=pols)
    except Exception as e:  # the model stack is optional: the rules answer without it
        return None, rules, f"LLM proposer unavailable ({type(e).__name__}: {e}); the rules answer"
    if note:
        return None, rules, note
    return StrictLLM(llm), rules, ""


def build_loop(
    config: LoopConfig,
    feed: Feed,
    *,
    mode: Mode,
    primary: Proposer | None,
    rules: Proposer,
    state: str | Path | None = None,
    adopt: bool = False,
    fresh_history: bool = False,
    say: Say = _quiet,
    on_event: Callable[[LoopEvent], None] | None = None,
    gate_config: GateConfig | None = None,
    safe_mode: SafeModeConfig | None = None,
) -> ControlLoop:
    """The loop on `feed`, with its guardrails in `state` (default: the configured state dir).

    What a crashed earlier run left changed is restored first (or adopted, with `adopt`). The
    gate keeps `gate_config` (the operator's limits) in `mode`; it starts from the journal's moves
    and quarantines unless `fresh_history`. Raises StateError for a state dir or journal that is
    unsafe or edited; the caller closes the feed.
    """
    clock = feed.clock if feed.simulated else time.time
    guard = open_guardrails(state, owner=this_process(), clock=clock)
    executor = Executor(feed.host, journal=guard.journal)
    if adopt:
        for e in adopt_orphans(executor, guard.journal):
            c = e.change
            say(f"adopted change {c.id}: {c.knob} = {c.value}")
    else:
        for res in restore_orphans(executor, guard.journal, guard.audit):
            say(f"restored after a crash: {res.knob}: {res.status}: {res.reason}")
    gate = gate_for(
        (gate_config or GateConfig()).model_copy(update={"mode": mode}),
        guard,
        clock=clock,
        cooperation=feed.cooperation,
        fresh_history=fresh_history,
    )
    safe = SafeMode(safe_mode, clock=feed.clock, cpu_s=lambda: 0.0) if feed.simulated else SafeMode(safe_mode)
    return ControlLoop(
        config,
        sample=feed.sample,
        report=feed.report,
        diagnose=feed.diagnose,
        proposer=LadderProposer(primary, rules, safe),
        gate=gate,
        executor=executor,
        audit=guard.audit,
        safe=safe,
        clock=feed.clock,
        statuses=feed.statuses,
        on_event=on_event,
    )
